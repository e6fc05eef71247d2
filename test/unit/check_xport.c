/* Unit tests of common/ddio_xport: transport names, DDIO_TRANSPORT, and
 * what auto settles to for a connection (a real local server of ours over
 * IPv4 and IPv6 loopback, and a socket that is not IP). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ddio_xport.h"
#include "suite_run.h"

static int rdma(void)
{
    return system("ls /sys/class/infiniband/* >/dev/null 2>&1") == 0;
}

/* what auto must give for a server of ours on this host: the same rule,
 * read independently of the code under test */
static int expect_local(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 1;
        fclose(f);
    }
    return scope == 0 || rdma() ? DDIO_XPORT_UCX : DDIO_XPORT_TCP;
}

/* a connected pair on loopback of family af: *cli, *srv; 0 or -1 (no such
 * loopback here) */
static int loop_pair(int af, int *cli, int *srv)
{
    struct sockaddr_storage ss;
    socklen_t len;
    memset(&ss, 0, sizeof(ss));
    if (af == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof(*a);
    } else {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_addr = in6addr_loopback;
        len = sizeof(*a);
    }
    int l = socket(af, SOCK_STREAM, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&ss, len) || listen(l, 1) ||
        getsockname(l, (struct sockaddr *)&ss, &len)) {
        if (l >= 0)
            close(l);
        return -1;
    }
    *cli = socket(af, SOCK_STREAM, 0);
    ck_assert_int_ge(*cli, 0);
    ck_assert_int_eq(connect(*cli, (struct sockaddr *)&ss, len), 0);
    *srv = accept(l, NULL, NULL);
    ck_assert_int_ge(*srv, 0);
    close(l);
    return 0;
}

START_TEST(names)
{
    ck_assert_int_eq(ddio_xport_parse(NULL), DDIO_XPORT_AUTO);
    ck_assert_int_eq(ddio_xport_parse(""), DDIO_XPORT_AUTO);
    ck_assert_int_eq(ddio_xport_parse("Auto"), DDIO_XPORT_AUTO);
    ck_assert_int_eq(ddio_xport_parse("TCP"), DDIO_XPORT_TCP);
    ck_assert_int_eq(ddio_xport_parse("ucx"), DDIO_XPORT_UCX);
    ck_assert_int_eq(ddio_xport_parse("rdma"), -1);
    ck_assert_int_eq(ddio_xport_parse("ucx "), -1);
    char err[128] = "";
    setenv("DDIO_TRANSPORT", "verbs", 1);
    ck_assert_int_eq(ddio_xport_env(err, sizeof(err)), -1);
    ck_assert_ptr_nonnull(strstr(err, "DDIO_TRANSPORT=verbs"));
    setenv("DDIO_TRANSPORT", "tcp", 1);
    ck_assert_int_eq(ddio_xport_env(err, sizeof(err)), DDIO_XPORT_TCP);
    unsetenv("DDIO_TRANSPORT");
    ck_assert_int_eq(ddio_xport_env(err, sizeof(err)), DDIO_XPORT_AUTO);
}
END_TEST

START_TEST(forced_as_given)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    ck_assert_int_eq(ddio_xport_resolve(DDIO_XPORT_TCP, sv[0], NULL, 0), DDIO_XPORT_TCP);
    ck_assert_int_eq(ddio_xport_resolve(DDIO_XPORT_UCX, sv[0], NULL, 0), DDIO_XPORT_UCX);
    ck_assert_int_eq(ddio_xport_resolve(DDIO_XPORT_UCX, -1, NULL, 0), DDIO_XPORT_UCX);
    close(sv[0]);
    close(sv[1]);
}
END_TEST

/* a server deciding whether to offer UCX: where RDMA or CMA may work */
START_TEST(server_offers)
{
    ck_assert_int_eq(ddio_xport_resolve(DDIO_XPORT_AUTO, -1, NULL, 0), expect_local());
}
END_TEST

/* our own server on loopback (v4, and v6 where there is one): its end is
 * found in /proc/net/tcp{,6}, owned by us */
START_TEST(local_server_of_ours)
{
    int families[] = {AF_INET, AF_INET6}, tried = 0;
    for (int i = 0; i < 2; i++) {
        int c, s;
        char why[200] = "";
        if (loop_pair(families[i], &c, &s))
            continue;
        tried++;
        int got = ddio_xport_resolve(DDIO_XPORT_AUTO, c, why, sizeof(why));
        ck_assert_msg(got == expect_local(), "family %d: auto gave %d (%s)", families[i], got,
                      why);
        close(c);
        close(s);
    }
    ck_assert_int_ge(tried, 1);
}
END_TEST

/* not an IP connection: TCP (unless an RDMA device decides first), saying why */
START_TEST(not_ip)
{
    int sv[2];
    char why[200] = "";
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int got = ddio_xport_resolve(DDIO_XPORT_AUTO, sv[0], why, sizeof(why));
    if (rdma()) {
        ck_assert_int_eq(got, DDIO_XPORT_UCX);
    } else {
        ck_assert_int_eq(got, DDIO_XPORT_TCP);
        ck_assert_msg(why[0] != '\0', "no reason given");
    }
    close(sv[0]);
    close(sv[1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("xport");
    TCase *tc = tcase_create("xport");
    tcase_add_test(tc, names);
    tcase_add_test(tc, forced_as_given);
    tcase_add_test(tc, server_offers);
    tcase_add_test(tc, local_server_of_ours);
    tcase_add_test(tc, not_ip);
    suite_add_tcase(s, tc);
    int failed = check_run(s, 1);
    return failed ? 1 : 0;
}
