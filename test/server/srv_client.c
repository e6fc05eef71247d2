/* Protocol test client for ddio-server (no MPI). Talks to a running server:
 *   srv_client HOST:PORT [DATAFILE_ROOT]
 *   srv_client --security HOST:PORT ROOT LOG   authentication (LOG: server's log)
 *   srv_client --limits HOST:PORT              hostile clients vs. the limits
 *   srv_client --replay-before|--replay-after HOST:PORT   the requests a
 *                                   restarted server must answer as before
 *                                   (srv_t_replay.c; $SRV_REPLAY_ID)
 *   srv_client --lock-grace-before|--lock-grace-after HOST:PORT   locks
 *                                   across a drop and a restart
 *                                   (srv_t_locks.c; $SRV_REPLAY_ID)
 *   srv_client --ucx|--no-ucx HOST:PORT   the UCX transport offered or not
 * The secret comes from $DDIO_SECRET_FILE.
 * With DATAFILE_ROOT (a one-disk server's root) it also checks that the
 * datafile of a one-server, one-stripe file is the file, byte for byte.
 * Runs its cases one after the other: each prints its checks' lines and
 * "PASS: CASE", or "FAIL: CASE: why" at its first failed check, after which
 * its connections are closed and the next case runs (srv_harness.c,
 * run_case). Ends with "srv-client: N passed, N failed"; exit 1 if any
 * case failed. */
#include "srv_harness.h"

/* the modes that run one case (a run before or after a restart, one
 * transport): mode, case name, case */
static const struct {
    const char *mode, *name;
    void (*fn)(void);
} single[] = {
    {"--replay-before", "replay/before", test_replay_before},
    {"--replay-after", "replay/after-restart", test_replay_after},
    {"--lock-grace-before", "locks/grace-after-drop", test_lock_grace_before},
    {"--lock-grace-after", "locks/grace-after-restart", test_lock_grace_after},
    {"--ucx", "ucx/offered", test_ucx_offered},
    {"--no-ucx", "ucx/not-offered", test_ucx_not_offered},
    {"--ucx-tls-refused", "ucx/refused-tls", test_ucx_refused_tls},
    {"--rebuild", "xfer/rebuild", test_rebuild},
};

int main(int argc, char **argv)
{
    const char *mode = "";
    if (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
        mode = argv[1];
        argv++;
        argc--;
    }
    if (argc < 2 || ddio_parse_hostport(argv[1], g_host, sizeof(g_host), &g_port)) {
        fprintf(stderr, "usage: srv_client [--security|--limits|--ucx|--no-ucx|--replay-before|"
                "--replay-after|--lock-grace-before|--lock-grace-after] HOST:PORT "
                "[ROOT [LOG]]\n");
        return 2;
    }
    snprintf(g_addr, sizeof(g_addr), "%s", argv[1]);
    g_root = argc > 2 ? argv[2] : NULL;
    g_log = argc > 3 ? argv[3] : NULL;
    g_run = (unsigned)getpid();
    char path[4096], err[1024];
    if (ddio_secret_path(NULL, path, sizeof(path))) {
        CHECK(ddio_secret_load(path, &g_secret, err, sizeof(err)) == 0, "%s", err);
        g_have_secret = 1;
    }
    if (strcmp(mode, "--security") == 0) {
        test_security();
        return case_summary();
    }
    if (strcmp(mode, "--limits") == 0) {
        test_limits();
        return case_summary();
    }
    for (size_t i = 0; i < sizeof(single) / sizeof(single[0]); i++)
        if (strcmp(mode, single[i].mode) == 0) {
            run_case(single[i].name, single[i].fn);
            return case_summary();
        }
    CHECK(!*mode, "unknown mode %s", mode);
    run_case("ns/files", test_files);
    run_case("xfer/independent-1m", test_independent_1m);
    run_case("xfer/independent-64k-of-2", test_independent_64k_of_2);
    run_case("xfer/independent-4k-of-2", test_independent_4k_of_2);
    run_case("xfer/inline", test_inline);
    run_case("xfer/inline-own", test_inline_own);
    run_case("xfer/once", test_once);
    run_case("xfer/local", test_local);
    run_case("xfer/localstat", test_localstat);
    run_case("xfer/mirror", test_mirror);
    run_case("xfer/ec-whole-groups", test_ec);
    run_case("xfer/scrub", test_scrub);
    run_case("xfer/rebuild", test_rebuild);
    run_case("member/acceptor-and-epochs", test_member);
    run_case("locks/byte-range", test_locks);
    run_case("errors/before-auth", test_malformed_before_auth);
    run_case("errors/after-auth", test_malformed_after_auth);
    run_case("errors/truncated", test_malformed_truncated);
    run_case("errors/garbage-descriptor", test_malformed_descriptor);
    run_case("xfer/collective", test_collective);
    run_case("xfer/resent-gate", test_resent_gate);
    run_case("xfer/write-order", test_write_order);
    run_case("xfer/heartbeat", test_heartbeat);
    run_case("xfer/unanswered-get", test_unanswered_get);
    run_case("ns/stats", test_stats);
    run_case("ns/readdir-big", test_readdir_big);
    run_case("ns/watch", test_watch);
    run_case("xfer/page-cache", test_page_cache);
    return case_summary();
}
