/* ddio: administration tool. For now one command:
 *   ddio stats [-s HOST:PORT,...] [-t SECONDS] [KEY...]
 * prints every server's counters ("HOST:PORT KEY VALUE" per line), or only
 * the named keys. The server list defaults to $DDIO_SERVERS. Tests and the
 * benchmark use it to prove which path a call took and what it cost. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddio_net.h"
#include "ddio_proto.h"

static int fail(const char *server, const char *what, int err)
{
    fprintf(stderr, "ddio: %s: %s: %s\n", server, what, strerror(err < 0 ? -err : err));
    return 1;
}

/* Receive the reply to `req` of `type`; returns payload (malloc'd) or NULL. */
static uint8_t *recv_reply(int fd, uint16_t type, uint64_t req, int64_t dl, size_t *n, int *status)
{
    struct ddio_hdr h;
    int rc = ddio_recv_hdr(fd, &h, dl);
    if (rc != 0 || h.type != (type | DDIO_REPLY) || h.req != req) {
        *status = rc ? rc : -EPROTO;
        return NULL;
    }
    uint8_t *p = malloc(h.len ? h.len : 1);
    if (!p || ddio_recv_all(fd, p, h.len, dl) != 0) {
        free(p);
        *status = -EIO;
        return NULL;
    }
    *n = h.len;
    *status = h.status;
    return p;
}

static int want_key(const char *k, int nkeys, char **keys)
{
    if (nkeys == 0)
        return 1;
    for (int i = 0; i < nkeys; i++)
        if (strcmp(k, keys[i]) == 0)
            return 1;
    return 0;
}

static int stats_one(const char *server, int64_t dl, int nkeys, char **keys)
{
    char host[256];
    int port, rc, st;
    if (ddio_parse_hostport(server, host, sizeof host, &port) != 0)
        return fail(server, "bad host:port", EINVAL);
    int fd = ddio_connect(host, port, dl);
    if (fd < 0)
        return fail(server, "connect", fd);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    struct ddio_hello hello = { .pid = (uint32_t) getpid(), .client = "ddio-admin" };
    ddio_enc_hello(&w, &hello);
    size_t n = 0;
    uint8_t *p = NULL;
    rc = ddio_send_msg(fd, DDIO_T_HELLO, 1, 0, w.p, w.len, NULL, 0, dl);
    if (rc == 0)
        p = recv_reply(fd, DDIO_T_HELLO, 1, dl, &n, &st);
    ddio_wbuf_free(&w);
    if (!p || st != 0) {
        free(p);
        close(fd);
        return fail(server, "hello", p ? st : rc ? rc : st);
    }
    free(p);
    rc = ddio_send_msg(fd, DDIO_T_STATS, 2, 0, NULL, 0, NULL, 0, dl);
    p = rc == 0 ? recv_reply(fd, DDIO_T_STATS, 2, dl, &n, &st) : NULL;
    close(fd);
    struct ddio_stats_r r;
    if (!p || st != 0 || ddio_dec_stats_r(p, n, &r) != 0) {
        free(p);
        return fail(server, "stats", p ? (st ? st : EPROTO) : (rc ? rc : st));
    }
    for (uint32_t i = 0; i < r.n; i++)
        if (want_key(r.kv[i].key, nkeys, keys))
            printf("%s %s %llu\n", server, r.kv[i].key, (unsigned long long) r.kv[i].val);
    ddio_stats_r_free(&r);
    free(p);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: ddio stats [-s HOST:PORT,...] [-t SECONDS] [KEY...]\n"
                    "  prints each server's counters (default servers: $DDIO_SERVERS)\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "stats") != 0) {
        usage();
        return 2;
    }
    const char *servers = getenv("DDIO_SERVERS");
    double timeout = 10;
    int c;
    optind = 2;
    while ((c = getopt(argc, argv, "s:t:h")) != -1) {
        switch (c) {
        case 's': servers = optarg; break;
        case 't': timeout = atof(optarg); break;
        default: usage(); return 2;
        }
    }
    if (!servers || !*servers || timeout <= 0) {
        fprintf(stderr, "ddio: no servers: set DDIO_SERVERS or pass -s\n");
        return 2;
    }
    int64_t dl = ddio_now_ms() + (int64_t) (timeout * 1000);
    char *list = strdup(servers), *save = NULL;
    int rc = 0;
    for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save))
        rc |= stats_one(s, dl, argc - optind, argv + optind);
    free(list);
    return rc;
}
