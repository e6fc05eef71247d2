/* Mirrored and erasure-coded files a failed write left in doubt
 * (ioserver/indoubt.h; DESIGN.md 6.1 "A failed write of a mirrored file"),
 * made to agree by ddio scrub (an erasure-coded one's whole groups
 * rewritten, their parity computed again, 6.4):
 * the file fenced on every server (no job has it open), read through the
 * usual path, which serves each unit from its primary, and written back
 * through it, which writes every copy; synced, sized, and settled on every
 * server. Which copy wins does not matter: a failed write leaves its range
 * undefined; what matters is that every copy then says the same. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_cli.h"

#define SETTLE_CHUNK (8u << 20)

int cli_paths_has(const struct cli_paths *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->p[i], path))
            return 1;
    return 0;
}

/* p taken over: 0, or -ENOMEM (p not taken) */
static int paths_add(struct cli_paths *s, char *p)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        char **n = realloc(s->p, cap * sizeof(*n));
        if (!n)
            return -ENOMEM;
        s->p = n;
        s->cap = cap;
    }
    s->p[s->n++] = p;
    return 0;
}

void cli_paths_free(struct cli_paths *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->p[i]);
    free(s->p);
    memset(s, 0, sizeof(*s));
}

int cli_doubt_gather(struct ddio_client *cl, struct cli_paths *out)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_rebuild m = {.op = DDIO_RB_DOUBT};
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < ddio_client_nservers(cl); i++) {
        struct ddio_rebuild_r rr;
        if (ddio_client_rebuild_call(cl, i, &m, &rr, msg, sizeof msg))
            return cli_fail("scrub: files in doubt on server %d (%s): %s", i,
                            ddio_client_server_addr(cl, i), msg);
        for (uint32_t j = 0; j < rr.npaths; j++) {
            char *p;
            if (asprintf(&p, "/%s", rr.paths[j]) < 0)
                break;
            if (cli_paths_has(out, p) || paths_add(out, p))
                free(p);
        }
        ddio_rebuild_r_free(&rr);
    }
    return 0;
}

int cli_on_all(struct ddio_client *cl, const char *path, uint32_t op, char *msg,
               size_t msglen)
{
    struct ddio_rebuild m = {.op = op, .path = (char *)path};
    int rc = 0, i;
    /* a server down and out of the membership is passed by: it takes no
     * write of the file until it is resynced, which fences it itself */
    for (i = 0; i < ddio_client_nservers(cl) && !rc; i++)
        if ((rc = ddio_client_rebuild_op(cl, i, &m, NULL, msg, msglen)) == -DDIO_E_OUT)
            rc = 0;
    if (rc && op == DDIO_RB_FENCE) {
        char other[DDIO_CLIENT_MSG_LEN];
        struct ddio_rebuild u = {.op = DDIO_RB_UNFENCE, .path = (char *)path};
        for (int q = 0; q < i - 1; q++)
            ddio_client_rebuild_op(cl, q, &u, NULL, other, sizeof other);
    }
    return rc;
}

/* the file read and written back whole, synced and sized: *bytes moved,
 * *ec 1 for an erasure-coded file */
static int rewrite(struct ddio_client *cl, const char *path, uint64_t *bytes, int *ec,
                   char *msg, size_t msglen)
{
    struct ddio_cfile *f;
    uint64_t size = 0;
    int rc = ddio_client_open(cl, path, 0, &f, msg, msglen);
    if (rc)
        return rc;
    if ((*ec = ddio_redundancy_ec_k(ddio_client_file_redundancy(f)) != 0)) {
        /* whole groups rewritten: their parity computed again */
        struct ddio_rebuild_opt ro = {.done = bytes};
        *bytes = 0;
        rc = ddio_client_rebuild_copy(f, UINT32_MAX, &ro, &size, msg, msglen);
        ddio_client_close(f);
        return rc;
    }
    char *buf = malloc(SETTLE_CHUNK);
    if (!buf)
        snprintf(msg, msglen, "out of memory");
    rc = buf ? ddio_client_size(f, &size, msg, msglen) : -ENOMEM;
    for (uint64_t off = 0; rc == 0 && off < size; off += SETTLE_CHUNK) {
        size_t len = size - off < SETTLE_CHUNK ? (size_t)(size - off) : SETTLE_CHUNK;
        ssize_t got = ddio_client_pread(f, buf, len, off, msg, msglen);
        if (got >= 0 && (size_t)got != len) {
            snprintf(msg, msglen, "read %zd of %zu bytes at %" PRIu64, got, len, off);
            got = -EIO;
        }
        ssize_t put = got < 0 ? got : ddio_client_pwrite(f, buf, len, off, msg, msglen);
        rc = put < 0 ? (int)put : 0;
    }
    /* the copies sized as the primaries say (a copy longer than its
     * primary would lengthen the file read from it) */
    if (rc == 0)
        rc = ddio_client_truncate(f, size, msg, msglen);
    if (rc == 0)
        rc = ddio_client_sync(f, msg, msglen);
    ddio_client_close(f);
    free(buf);
    *bytes = size;
    return rc;
}

int cli_settle(struct ddio_client *cl, const char *path)
{
    char msg[DDIO_CLIENT_MSG_LEN], other[DDIO_CLIENT_MSG_LEN];
    uint64_t bytes = 0;
    int ec = 0;
    double t0 = cli_now();
    int rc = cli_on_all(cl, path, DDIO_RB_FENCE, msg, sizeof msg);
    if (rc == -EBUSY)
        return cli_fail("scrub: %s: in doubt after a failed write, and open now: run scrub "
                        "again when no job has it open", path);
    if (rc == 0 && (rc = rewrite(cl, path, &bytes, &ec, msg, sizeof msg)) == 0)
        rc = cli_on_all(cl, path, DDIO_RB_SETTLED, msg, sizeof msg);
    cli_on_all(cl, path, DDIO_RB_UNFENCE, other, sizeof other);
    if (rc)
        return cli_fail("scrub: %s: in doubt after a failed write; its copies could not be "
                        "made to agree: %s", path, msg);
    printf("%s: in doubt after a failed write: %s, %" PRIu64 " bytes in %.2f s\n", path,
           ec ? "parity computed again" : "copies made to agree", bytes, cli_now() - t0);
    return 0;
}
