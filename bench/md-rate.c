/* md-rate.c: metadata rates of one client process through the client core
 * (what tools/ddio and the mount use), no MPI:
 *
 *   md-rate SERVERS DIR N
 *
 * makes DIR, then N files in it (create: open with CREAT|EXCL, close),
 * stats each, opens each read-only and closes it, removes each; prints
 * one line per phase: MDRATE,PHASE,N,SECONDS,OPS_PER_S. The connections
 * are made before the clock starts (a stat of DIR), so the rates are of
 * the requests, identity checks included, not of the handshakes. The
 * secret or MUNGE socket come from the environment as for tools/ddio. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddio_client.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

enum phase { CREATE, STAT, OPEN, REMOVE, NPHASES };
static const char *const names[NPHASES] = {"create", "stat", "open", "remove"};

static int one(struct ddio_client *cl, enum phase p, const char *path, char *msg, size_t n)
{
    struct ddio_cfile *f = NULL;
    struct ddio_cstat st;
    int rc;
    switch (p) {
    case CREATE:
        rc = ddio_client_open(cl, path, DDIO_CO_CREAT | DDIO_CO_EXCL, &f, msg, n);
        break;
    case STAT:
        return ddio_client_stat(cl, path, &st, msg, n);
    case OPEN:
        rc = ddio_client_open(cl, path, DDIO_CO_RDONLY, &f, msg, n);
        break;
    default:
        return ddio_client_unlink(cl, path, msg, n);
    }
    if (rc == 0)
        ddio_client_close(f);
    return rc;
}

int main(int argc, char **argv)
{
    char msg[DDIO_CLIENT_MSG_LEN], path[4096];
    struct ddio_cstat st;
    if (argc != 4) {
        fprintf(stderr, "usage: md-rate SERVERS DIR N\n");
        return 2;
    }
    long nfiles = atol(argv[3]);
    struct ddio_client *cl = ddio_client_new(argv[1], 60000, 0, NULL, msg, sizeof(msg));
    if (!cl || nfiles < 1) {
        fprintf(stderr, "md-rate: %s\n", cl ? "N must be >= 1" : msg);
        return 1;
    }
    if (ddio_client_mkdir(cl, argv[2], 0755, msg, sizeof(msg))
        || ddio_client_stat(cl, argv[2], &st, msg, sizeof(msg))) {
        fprintf(stderr, "md-rate: %s: %s\n", argv[2], msg);
        return 1;
    }
    for (int p = 0; p < NPHASES; p++) {
        double t0 = now();
        for (long i = 0; i < nfiles; i++) {
            snprintf(path, sizeof(path), "%s/f%ld", argv[2], i);
            if (one(cl, (enum phase)p, path, msg, sizeof(msg))) {
                fprintf(stderr, "md-rate: %s %s: %s\n", names[p], path, msg);
                return 1;
            }
        }
        double dt = now() - t0;
        printf("MDRATE,%s,%ld,%.4f,%.0f\n", names[p], nfiles, dt, (double)nfiles / dt);
    }
    ddio_client_rmdir(cl, argv[2], msg, sizeof(msg));
    ddio_client_free(cl);
    return 0;
}
