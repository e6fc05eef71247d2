/* Test client for the operations tests (run-ops-tests.sh), no MPI:
 *   ops_client write SERVERS PATH MIB   create PATH, write MIB MiB of a known
 *                                       pattern in ONE call (one XFER per
 *                                       server), print "writing" before it
 *                                       and "written N" after it
 *   ops_client verify SERVERS PATH MIB  read PATH back and compare
 * The secret comes from $DDIO_SECRET_FILE (common/ddio_client). Exit 0 on
 * success, 1 with one line on stderr otherwise. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_client.h"

static unsigned char pat(uint64_t i)
{
    return (unsigned char)(i * 2654435761u >> 13);
}

int main(int argc, char **argv)
{
    char msg[DDIO_CLIENT_MSG_LEN] = "";
    if (argc != 5 || (strcmp(argv[1], "write") && strcmp(argv[1], "verify"))) {
        fprintf(stderr, "usage: ops_client write|verify SERVERS PATH MIB\n");
        return 2;
    }
    int writing = !strcmp(argv[1], "write");
    size_t len = (size_t)strtoul(argv[4], NULL, 10) << 20;
    unsigned char *buf = malloc(len ? len : 1);
    struct ddio_client *cl = ddio_client_new(argv[2], 60000, 0, NULL, msg, sizeof(msg));
    struct ddio_cfile *f = NULL;
    if (!buf || !cl) {
        fprintf(stderr, "ops_client: %s\n", cl ? "out of memory" : msg);
        return 1;
    }
    int rc = ddio_client_open(cl, argv[3], writing ? DDIO_CO_CREAT | DDIO_CO_TRUNC : 0, &f,
                              msg, sizeof(msg));
    if (rc) {
        fprintf(stderr, "ops_client: open %s: %s\n", argv[3], msg);
        return 1;
    }
    ssize_t n;
    if (writing) {
        for (size_t i = 0; i < len; i++)
            buf[i] = pat(i);
        printf("writing\n");
        fflush(stdout);
        n = ddio_client_pwrite(f, buf, len, 0, msg, sizeof(msg));
        if (n == (ssize_t)len)
            printf("written %zd\n", n);
    } else {
        n = ddio_client_pread(f, buf, len, 0, msg, sizeof(msg));
        for (size_t i = 0; n == (ssize_t)len && i < len; i++)
            if (buf[i] != pat(i)) {
                fprintf(stderr, "ops_client: byte %zu differs\n", i);
                return 1;
            }
        if (n == (ssize_t)len)
            printf("verified %zd\n", n);
    }
    if (n != (ssize_t)len) {
        fprintf(stderr, "ops_client: %s: %zd of %zu bytes: %s\n", argv[1], n, len, msg);
        return 1;
    }
    ddio_client_close(f);
    ddio_client_free(cl);
    free(buf);
    return 0;
}
