/* Protocol test client for ddio-server (no MPI). Talks to a running server:
 *   srv_client HOST:PORT [DATAFILE_ROOT]
 *   srv_client --security HOST:PORT ROOT LOG   authentication (LOG: server's log)
 *   srv_client --limits HOST:PORT              hostile clients vs. the limits
 * The secret comes from $DDIO_SECRET_FILE.
 * With DATAFILE_ROOT (a one-disk server's root) it also checks that the
 * datafile of a one-server, one-stripe file is the file, byte for byte.
 * Every check prints a line; the first failure exits 1. */
#include "srv_harness.h"

int main(int argc, char **argv)
{
    const char *mode = "";
    if (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
        mode = argv[1];
        argv++;
        argc--;
    }
    if (argc < 2 || ddio_parse_hostport(argv[1], g_host, sizeof(g_host), &g_port)) {
        fprintf(stderr, "usage: srv_client [--security|--limits|--ucx|--no-ucx] HOST:PORT "
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
        printf("PASS\n");
        return 0;
    }
    if (strcmp(mode, "--limits") == 0) {
        test_limits();
        printf("PASS\n");
        return 0;
    }
    if (strcmp(mode, "--ucx") == 0 || strcmp(mode, "--no-ucx") == 0) {
        test_ucx(strcmp(mode, "--ucx") == 0);
        printf("PASS\n");
        return 0;
    }
    CHECK(!*mode, "unknown mode %s", mode);
    test_files();
    test_independent(1u << 20, 1, "ind1");
    test_independent(65536, 2, "ind2");       /* index 0 of 2: only its stripes */
    test_independent(4096, 2, "ind3");        /* stripe unit below the block size */
    test_locks();
    test_malformed();
    test_collective();
    test_write_order();
    test_heartbeat();
    test_stats();
    printf("PASS\n");
    return 0;
}
