/* Unit tests of the client core's process identity (common/ddio_core_conn.c,
 * ddio_core_recover.c): a forked child never speaks on its parent's
 * connections and never uses its parent's client id, whose call numbers
 * would have the servers answer the child's writes from the parent's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ddio_core.h"
#include "ddio_net.h"
#include "suite_run.h"

/* run fn in a forked child; its exit status (0: its checks held) */
static int in_child(int (*fn)(void *), void *arg)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        _exit(fn(arg));
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

static int child_id(void *arg)
{
    const uint64_t *parent = arg;
    uint64_t a = ddio_client_id(), b = ddio_client_id();
    return a == *parent ? 1 : a != b ? 2 : a == 0 ? 3 : 0;
}

START_TEST(child_draws_its_own_id)
{
    uint64_t id = ddio_client_id();
    ck_assert_uint_ne(id, 0);
    ck_assert_int_eq(in_child(child_id, &id), 0);     /* 1: the parent's id */
    ck_assert_uint_eq(ddio_client_id(), id);          /* the parent keeps its own */
}
END_TEST

/* a connection whose socket is one end of a socketpair */
static struct ddio_conn *fake_conn(int fd)
{
    static struct ddio_pool pool = DDIO_POOL_INIT;
    struct ddio_conn *c = calloc(1, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    c->pool = &pool;
    snprintf(c->name, sizeof(c->name), "fake");
    c->sock = fd;
    c->next_req = 4;
    c->fork_gen = ddio_fork_gen();
    return c;
}

static int child_send(void *arg)
{
    struct ddio_conn *c = arg;
    struct ddio_err e;
    uint64_t req;
    memset(&e, 0, sizeof(e));
    int rc = ddio_conn_send(c, DDIO_T_STAT, "12345678", 8, &req, ddio_now_ms() + 1000, &e);
    /* refused, as a lost connection (the caller reconnects), socket let go */
    return rc != -1 ? 1 : !e.transport ? 2 : c->sock != -1 ? 3 : 0;
}

START_TEST(child_leaves_parents_connection)
{
    int sv[2];
    char b[64];
    struct ddio_err e;
    uint64_t req;
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    struct ddio_conn *c = fake_conn(sv[0]);
    ck_assert_int_eq(in_child(child_send, c), 0);
    /* not a byte of the child's on the parent's conversation */
    ck_assert_int_eq(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), -1);
    ck_assert_int_eq(errno, EAGAIN);
    /* and the parent's connection still works */
    memset(&e, 0, sizeof(e));
    ck_assert_int_eq(ddio_conn_send(c, DDIO_T_STAT, "12345678", 8, &req, ddio_now_ms() + 1000,
                                    &e), 0);
    ck_assert_int_eq(recv(sv[1], b, sizeof(b), MSG_DONTWAIT), DDIO_HDR_SIZE + 8);
    close(sv[0]);
    close(sv[1]);
    free(c);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("fork");
    tcase_add_test(tc, child_draws_its_own_id);
    tcase_add_test(tc, child_leaves_parents_connection);
    suite_add_tcase(s, tc);
    return check_run(s, 0) ? 1 : 0;
}
