/* Unit tests of the answers table (ioserver/replay.c): the answers found
 * again after the table is unmapped and mapped again (a restart), torn or
 * stale entries dropped, a bad header starting an empty table, the bounds
 * (answers per client, clients) kept across a reload, a second process on
 * the same file refused, and a process SIGKILLed while noting answers
 * leaving only whole ones. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "replay.h"
#include "suite_run.h"

/* the file's format, as replay.c lays it out: a 4 KiB header, 32-byte
 * client slots, then each client's 128-byte entries (client, call, len,
 * pad, sum, answer) */
#define SLOT_OFF(i)     (4096 + (off_t)(i) * 32)
#define ENTRY_OFF(i, k) (4096 + (off_t)REPLAY_CLIENTS * 32 + \
                         ((off_t)(i) * REPLAY_PER_CLIENT + (k)) * 128)

static char path[64];
static char err[512];

static void setup(void)
{
    strcpy(path, "/tmp/check_replay.XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);               /* replay_open makes it */
}

static void teardown(void)
{
    replay_close();
    unlink(path);
}

static void reopen(struct replay_info *in)
{
    replay_close();
    replay_open(path, in, err, sizeof(err));
    ck_assert_msg(in->persistent, "not in the file: %s", err);
}

/* the answer of call k: its bytes say which call they answer */
static void answer_of(uint64_t call, uint8_t *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        a[i] = (uint8_t)(call * 31 + i);
}

static int has(uint64_t client, uint64_t call, size_t n)
{
    uint8_t *p = NULL, want[REPLAY_MAX_ANSWER];
    size_t len = 0;
    if (!replay_find(client, call, &p, &len))
        return 0;
    answer_of(call, want, n);
    ck_assert_uint_eq(len, n);
    ck_assert_msg(!memcmp(p, want, n), "call %llu: answer differs", (unsigned long long)call);
    free(p);
    return 1;
}

static void note(uint64_t client, uint64_t call, size_t n)
{
    uint8_t a[REPLAY_MAX_ANSWER];
    answer_of(call, a, n);
    replay_note(client, call, a, n);
}

static void poke(off_t off, const void *p, size_t n)
{
    int fd = open(path, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, p, n, off), (ssize_t)n);
    close(fd);
}

START_TEST(t_reload)
{
    struct replay_info in;
    replay_open(path, &in, err, sizeof(err));
    ck_assert_msg(in.persistent && in.fresh, "%s", err);
    note(7, 1, 88);
    note(7, 2, 88);
    note(9, 1, 0);              /* a RENAME's empty answer */
    ck_assert(has(7, 2, 88));
    reopen(&in);
    ck_assert_uint_eq(in.fresh, 0);
    ck_assert_uint_eq(in.clients, 2);
    ck_assert_uint_eq(in.answers, 3);
    ck_assert_uint_eq(in.torn, 0);
    ck_assert(has(7, 1, 88) && has(7, 2, 88) && has(9, 1, 0));
    ck_assert(!has(7, 3, 88) && !has(8, 1, 88));
    uint8_t big[REPLAY_MAX_ANSWER + 1] = {0};
    replay_note(7, 4, big, sizeof(big));    /* too long: not kept */
    ck_assert(!has(7, 4, sizeof(big)));
}
END_TEST

/* a kill cuts a note somewhere: answer bytes without their sum, the fields
 * of a new entry over an old one's sum, a sum without its answer */
START_TEST(t_torn)
{
    struct replay_info in;
    replay_open(path, &in, err, sizeof(err));
    for (uint64_t k = 1; k <= 4; k++)
        note(5, k, 88);
    uint8_t x = 0xff;
    uint64_t call = 99, zero = 0;
    poke(ENTRY_OFF(0, 0) + 32 + 40, &x, 1);         /* call 1: a byte of its answer */
    poke(ENTRY_OFF(0, 1) + 8, &call, sizeof(call)); /* call 2: a new call id, old sum */
    poke(ENTRY_OFF(0, 2) + 24, &zero, sizeof(zero));/* call 3: no sum yet */
    reopen(&in);
    ck_assert_uint_eq(in.answers, 1);
    ck_assert_uint_eq(in.torn, 3);
    ck_assert(!has(5, 1, 88) && !has(5, 2, 88) && !has(5, 99, 88) && !has(5, 3, 88));
    ck_assert(has(5, 4, 88));
    /* an entry whose client is not its slot's (a slot retaken when the
     * kill came) is dropped too */
    note(6, 1, 88);
    uint64_t other = 12345;
    poke(SLOT_OFF(1), &other, sizeof(other));
    reopen(&in);
    ck_assert_uint_eq(in.torn, 1);
    ck_assert(!has(6, 1, 88) && !has(12345, 1, 88));
    ck_assert(has(5, 4, 88));
}
END_TEST

START_TEST(t_header)
{
    struct replay_info in;
    replay_open(path, &in, err, sizeof(err));
    note(3, 1, 88);
    poke(8, "\x02", 1);         /* another version */
    reopen(&in);
    ck_assert(in.fresh);
    ck_assert_uint_eq(in.answers, 0);
    ck_assert(!has(3, 1, 88));
    note(3, 2, 88);
    reopen(&in);                /* and the remade table is kept */
    ck_assert(!in.fresh && has(3, 2, 88));
    int fd = open(path, O_WRONLY | O_TRUNC);  /* cut short */
    close(fd);
    reopen(&in);
    ck_assert(in.fresh && !has(3, 2, 88));
}
END_TEST

/* 64 answers a client, 1024 clients, the least recently used forgotten;
 * use across a reload counts */
START_TEST(t_bounds)
{
    struct replay_info in;
    replay_open(path, &in, err, sizeof(err));
    for (uint64_t k = 1; k <= REPLAY_PER_CLIENT + 1; k++)
        note(1, k, 16);
    ck_assert(!has(1, 1, 16) && has(1, 2, 16) && has(1, REPLAY_PER_CLIENT + 1, 16));
    for (uint64_t c = 2; c <= REPLAY_CLIENTS; c++)
        note(c, 1, 16);
    reopen(&in);
    ck_assert_uint_eq(in.clients, REPLAY_CLIENTS);
    ck_assert(has(1, 2, 16) && has(2, 1, 16));  /* client 3 least recently used now */
    note(REPLAY_CLIENTS + 1, 1, 16);
    ck_assert(!has(3, 1, 16));
    ck_assert(has(2, 1, 16) && has(1, 2, 16) && has(REPLAY_CLIENTS + 1, 1, 16));
}
END_TEST

/* a second server on the same roots keeps its answers in memory */
START_TEST(t_second_process)
{
    struct replay_info in;
    replay_open(path, &in, err, sizeof(err));
    ck_assert(in.persistent);
    pid_t pid = fork();
    if (pid == 0) {
        replay_open(path, &in, err, sizeof(err));
        _exit(!in.persistent && strstr(err, "another server") ? 0 : 1);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a second process shared the file");
}
END_TEST

/* SIGKILLed while noting: whatever it left reads back whole (each answer
 * the one of its call), and every answer of the last 40 x 64 calls but the
 * one the kill cut is there */
START_TEST(t_killed)
{
    struct replay_info in;
    replay_close();
    volatile uint64_t *last = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert(last != MAP_FAILED);
    pid_t pid = fork();
    if (pid == 0) {
        replay_open(path, &in, err, sizeof(err));
        for (uint64_t k = 1;; k++) {
            *last = k;          /* the call being noted */
            note(1 + k % 40, k, 1 + k % REPLAY_MAX_ANSWER);
        }
    }
    while (*last < 5000)
        usleep(1000);
    kill(pid, SIGKILL);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    uint64_t kmax = *last;
    replay_open(path, &in, err, sizeof(err));
    ck_assert(in.persistent && !in.fresh);
    ck_assert_uint_eq(in.clients, 40);
    ck_assert_uint_le(in.torn, 1);
    unsigned found = 0;
    /* kmax itself may not have been started: its ring slot then still
     * holds kmax - 40 x 64 */
    for (uint64_t k = kmax - 40 * REPLAY_PER_CLIENT; k <= kmax; k++)
        found += (unsigned)has(1 + k % 40, k, 1 + k % REPLAY_MAX_ANSWER);
    ck_assert_uint_eq(found, in.answers);
    ck_assert_uint_ge(found, 40 * REPLAY_PER_CLIENT - 1);
    printf("killed at call %llu: %u answers of %u clients reloaded, %u torn\n",
           (unsigned long long)kmax, in.answers, in.clients, in.torn);
    munmap((void *)last, 4096);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_reload);
    tcase_add_test(tc, t_torn);
    tcase_add_test(tc, t_header);
    tcase_add_test(tc, t_bounds);
    tcase_add_test(tc, t_second_process);
    tcase_add_test(tc, t_killed);
    suite_add_tcase(s, tc);
    int failed = check_run(s, 0);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
