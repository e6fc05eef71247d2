/* Unit tests of an erasure-coded file's overlay extents (ioserver/overlay.c):
 * extents merged and cut byte-exactly; a walk clipped to its range; the
 * log kept across a close and reopen only once flushed; a torn last record
 * ignored and cut before the next append; another datafile's log (a file
 * deleted and made again) ignored; a long log made again from the extents. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "overlay.h"
#include "suite_run.h"

static char dir[64];
static int rootfd = -1, datafd = -1;

static void setup(void)
{
    strcpy(dir, "/tmp/check_overlay.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    rootfd = open(dir, O_PATH | O_DIRECTORY);
    datafd = openat(rootfd, "f", O_RDWR | O_CREAT, 0644);
    ck_assert_int_ge(datafd, 0);
}

static void teardown(void)
{
    close(datafd);
    close(rootfd);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

struct seen { uint64_t v[2048]; int n; };
static int note(void *arg, uint64_t lo, uint64_t hi)
{
    struct seen *s = arg;
    s->v[s->n++] = lo;
    s->v[s->n++] = hi;
    return 0;
}

/* the extents meeting [lo, hi) as "lo-hi lo-hi ..." */
static const char *list(struct ovl *o, uint64_t lo, uint64_t hi)
{
    static char out[512];
    struct seen s = {.n = 0};
    ovl_each(o, lo, hi, note, &s);
    size_t k = 0;
    out[0] = 0;
    for (int i = 0; i < s.n; i += 2)
        k += (size_t)snprintf(out + k, sizeof(out) - k, "%s%llu-%llu", i ? " " : "",
                              (unsigned long long)s.v[i], (unsigned long long)s.v[i + 1]);
    return out;
}

START_TEST(t_merge_and_cut)
{
    struct ovl *o = ovl_open(rootfd, "f", datafd, 1);
    ck_assert_ptr_nonnull(o);
    ovl_add(o, 100, 200);
    ovl_add(o, 300, 400);
    ovl_add(o, 200, 250);                     /* touches: merged */
    ck_assert_str_eq(list(o, 0, 1000), "100-250 300-400");
    ovl_add(o, 240, 310);                     /* bridges both */
    ck_assert_str_eq(list(o, 0, 1000), "100-400");
    ovl_del(o, 150, 160);                     /* a hole in the middle */
    ck_assert_str_eq(list(o, 0, 1000), "100-150 160-400");
    ovl_add(o, 500, 600);
    ovl_del(o, 350, 550);
    ck_assert_str_eq(list(o, 0, 1000), "100-150 160-350 550-600");
    ck_assert_str_eq(list(o, 140, 170), "140-150 160-170");   /* clipped */
    ck_assert(ovl_any(o, 0, 101));
    ck_assert(!ovl_any(o, 350, 550));
    ovl_del(o, 0, 1000);
    ck_assert_str_eq(list(o, 0, 1000), "");
    ovl_add(o, 10, 10);                       /* empty: nothing */
    ck_assert(!ovl_any(o, 0, 100));
    ovl_close(o, 0);
}
END_TEST

static int mark(void *arg, uint64_t lo, uint64_t hi)
{
    unsigned char *m = arg;
    memset(m + lo, 2, hi - lo);
    return 0;
}

/* many adds and cuts in random order against a byte map; the walk gives
 * back exactly the bytes set, as disjoint sorted extents */
START_TEST(t_random_against_map)
{
    enum { SPACE = 20000 };
    static unsigned char want[SPACE], got[SPACE];
    struct ovl *o = ovl_open(rootfd, "f", datafd, 1);
    memset(want, 0, sizeof(want));
    srand(11);
    for (int i = 0; i < 4000; i++) {
        uint64_t lo = (uint64_t)(rand() % SPACE), len = (uint64_t)(rand() % 300);
        uint64_t hi = lo + len > SPACE ? SPACE : lo + len;
        int add = rand() % 3 != 0;
        ck_assert_int_eq(add ? ovl_add(o, lo, hi) : ovl_del(o, lo, hi), 0);
        memset(want + lo, add ? 2 : 0, hi - lo);
        if (i % 500 == 0 || i == 3999) {
            memset(got, 0, sizeof(got));
            ovl_each(o, 0, SPACE, mark, got);
            ck_assert_int_eq(memcmp(got, want, SPACE), 0);
        }
    }
    struct seen s = {.n = 0};
    ovl_each(o, 0, 600, note, &s);
    for (int i = 2; i < s.n; i += 2)
        ck_assert_uint_gt(s.v[i], s.v[i - 1]);   /* sorted, not touching */
    ovl_close(o, 0);
}
END_TEST

START_TEST(t_kept_once_flushed)
{
    struct ovl *o = ovl_open(rootfd, "f", datafd, 1);
    ovl_add(o, 0, 4096);
    ovl_add(o, 10000, 10007);
    ovl_close(o, 0);                          /* never flushed: gone */
    o = ovl_open(rootfd, "f", datafd, 0);
    ck_assert_str_eq(list(o, 0, UINT64_MAX), "");
    ovl_add(o, 0, 4096);
    ovl_add(o, 10000, 10007);
    ck_assert_int_eq(ovl_flush(o), 0);
    ovl_del(o, 1000, 2000);
    ovl_close(o, 1);                          /* flushed at close */
    o = ovl_open(rootfd, "f", datafd, 0);
    ck_assert_str_eq(list(o, 0, UINT64_MAX), "0-1000 2000-4096 10000-10007");
    ovl_close(o, 0);
    /* a torn last record: ignored, and cut before the next append */
    int fd = openat(rootfd, ".ddio/ovx/f", O_WRONLY | O_APPEND);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "\1\0\0\0\0\0", 6), 6);
    close(fd);
    o = ovl_open(rootfd, "f", datafd, 0);
    ck_assert_str_eq(list(o, 0, UINT64_MAX), "0-1000 2000-4096 10000-10007");
    ovl_add(o, 20000, 20001);
    ck_assert_int_eq(ovl_flush(o), 0);
    ovl_close(o, 0);
    o = ovl_open(rootfd, "f", datafd, 0);
    ck_assert_str_eq(list(o, 0, UINT64_MAX), "0-1000 2000-4096 10000-10007 20000-20001");
    ovl_close(o, 0);
}
END_TEST

START_TEST(t_foreign_and_fresh)
{
    struct ovl *o = ovl_open(rootfd, "f", datafd, 1);
    ovl_add(o, 5, 9);
    ck_assert_int_eq(ovl_flush(o), 0);
    ovl_close(o, 0);
    /* the datafile deleted and made again: the old log names another inode */
    int other = openat(rootfd, "g", O_RDWR | O_CREAT, 0644);
    o = ovl_open(rootfd, "f", other, 0);
    ck_assert_str_eq(list(o, 0, 100), "");
    ovl_add(o, 50, 60);                       /* its first flush replaces the log */
    ck_assert_int_eq(ovl_flush(o), 0);
    ovl_close(o, 0);
    o = ovl_open(rootfd, "f", other, 0);
    ck_assert_str_eq(list(o, 0, 100), "50-60");
    ovl_close(o, 0);
    o = ovl_open(rootfd, "f", other, 1);      /* a create starts empty */
    ck_assert_str_eq(list(o, 0, 100), "");
    ovl_close(o, 0);
    close(other);
}
END_TEST

START_TEST(t_long_log_rewritten)
{
    struct ovl *o = ovl_open(rootfd, "f", datafd, 1);
    for (int round = 0; round < 5; round++) {
        for (uint64_t i = 0; i < 500; i++)
            ovl_add(o, i * 10, i * 10 + 5);
        ovl_del(o, 0, 4000);
        ck_assert_int_eq(ovl_flush(o), 0);
    }
    ovl_close(o, 0);
    struct stat sb;
    ck_assert_int_eq(fstatat(rootfd, ".ddio/ovx/f", &sb, 0), 0);
    ck_assert_int_lt(sb.st_size, 16 + 1500 * 24);   /* not 2505 records */
    o = ovl_open(rootfd, "f", datafd, 0);
    ck_assert_str_eq(list(o, 3990, 4030), "4000-4005 4010-4015 4020-4025");
    ck_assert(!ovl_any(o, 0, 4000));
    ck_assert(ovl_any(o, 4990, 4995));
    ovl_close(o, 0);
}
END_TEST

/* a parity's fold states: set, cleared, kept once flushed (not before),
 * kept through a rewritten log, all cleared at once; walked by group */
START_TEST(t_fold_states)
{
    struct ovl *o = ovl_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(ovl_pstate(o, 7), OVL_PS_INPLACE);
    ovl_pstate_set(o, 7, OVL_PS_WRITING);
    ovl_pstate_set(o, 9, OVL_PS_WRITING);
    ovl_close(o, 0);                          /* never flushed: gone */
    o = ovl_open(rootfd, "f", datafd, 0);
    ck_assert_int_eq(ovl_pstate_count(o), 0);
    ovl_pstate_set(o, 7, OVL_PS_WRITING);
    ovl_pstate_set(o, 9, OVL_PS_WRITING);
    ovl_pstate_set(o, 7, OVL_PS_NEW);
    ovl_pstate_set(o, 9, OVL_PS_INPLACE);
    ck_assert_int_eq(ovl_flush(o), 0);
    ovl_close(o, 0);
    o = ovl_open(rootfd, "f", datafd, 0);
    ck_assert_int_eq(ovl_pstate(o, 7), OVL_PS_NEW);
    ck_assert_int_eq(ovl_pstate(o, 9), OVL_PS_INPLACE);
    ck_assert_int_eq(ovl_pstate_count(o), 1);
    struct seen s = {.n = 0};
    ovl_pstate_set(o, 3, OVL_PS_WRITING);
    ovl_pstate_each(o, 5, 100, note, &s);     /* group 3 is below 5 */
    ck_assert(s.n == 2 && s.v[0] == 7 && s.v[1] == 8);
    ovl_pstate_set(o, 12, OVL_PS_NEW);         /* walked in group order */
    ovl_pstate_set(o, 6, OVL_PS_NEW);
    s.n = 0;
    ovl_pstate_each(o, 5, 100, note, &s);
    ck_assert(s.n == 6 && s.v[0] == 6 && s.v[2] == 7 && s.v[4] == 12);
    ovl_pstate_set(o, 12, OVL_PS_INPLACE);
    ovl_pstate_set(o, 6, OVL_PS_INPLACE);
    /* a log long enough to be rewritten keeps them */
    for (int round = 0; round < 3; round++) {
        for (uint64_t i = 0; i < 500; i++)
            ovl_add(o, i * 10, i * 10 + 5);
        ovl_del(o, 0, UINT64_MAX);
        ck_assert_int_eq(ovl_flush(o), 0);
    }
    ovl_close(o, 0);
    struct stat sb;
    ck_assert_int_eq(fstatat(rootfd, ".ddio/ovx/f", &sb, 0), 0);
    ck_assert_int_lt(sb.st_size, 16 + 1500 * 24);
    o = ovl_open(rootfd, "f", datafd, 0);
    ck_assert_int_eq(ovl_pstate(o, 7), OVL_PS_NEW);
    ck_assert_int_eq(ovl_pstate(o, 3), OVL_PS_WRITING);
    ovl_pstate_set(o, UINT64_MAX, OVL_PS_INPLACE);   /* every one cleared */
    ck_assert_int_eq(ovl_pstate_count(o), 0);
    ck_assert_int_eq(ovl_flush(o), 0);
    ovl_close(o, 0);
    o = ovl_open(rootfd, "f", datafd, 0);
    ck_assert_int_eq(ovl_pstate_count(o), 0);
    ovl_close(o, 0);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("overlay");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, t_merge_and_cut);
    tcase_add_test(tc, t_random_against_map);
    tcase_add_test(tc, t_kept_once_flushed);
    tcase_add_test(tc, t_foreign_and_fresh);
    tcase_add_test(tc, t_long_log_rewritten);
    tcase_add_test(tc, t_fold_states);
    suite_add_tcase(su, tc);
    int failed = check_run(su, 0);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
