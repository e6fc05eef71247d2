/* ddio: administration tool. For now one command:
 *   ddio stats [-s HOST:PORT,...] [-t SECONDS] [KEY...]
 * prints every server's counters ("HOST:PORT KEY VALUE" per line), or only
 * the named keys. The server list defaults to $DDIO_SERVERS, the secret file
 * to $DDIO_SECRET_FILE (or DDIO_CONFIG's secret_file). Tests and the
 * benchmark use it to prove which path a call took and what it cost. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddio_auth.h"
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

static int stats_one(const char *server, const struct ddio_secret *secret, int64_t dl,
                     int nkeys, char **keys)
{
    char host[256];
    int port, rc, st;
    if (ddio_parse_hostport(server, host, sizeof host, &port) != 0)
        return fail(server, "bad host:port", EINVAL);
    int fd = ddio_connect(host, port, dl);
    if (fd < 0)
        return fail(server, "connect", fd);
    char msg[1024];
    struct ddio_hello_r hr;
    rc = ddio_handshake(fd, server, "ddio-admin", secret, dl, &hr, msg, sizeof msg);
    if (rc) {
        close(fd);
        fprintf(stderr, "ddio: %s\n", msg);
        return 1;
    }
    free(hr.name);
    size_t n = 0;
    uint8_t *p = NULL;
    const uint64_t req = DDIO_HANDSHAKE_REQS + 1;
    rc = ddio_send_msg(fd, DDIO_T_STATS, req, 0, NULL, 0, NULL, 0, dl);
    p = rc == 0 ? recv_reply(fd, DDIO_T_STATS, req, dl, &n, &st) : NULL;
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
    static struct ddio_secret secret;
    char path[4096], msg[1024];
    int have = ddio_secret_path(NULL, path, sizeof path);
    if (have && ddio_secret_load(path, &secret, msg, sizeof msg) != 0) {
        fprintf(stderr, "ddio: %s\n", msg);
        return 1;
    }
    int64_t dl = ddio_now_ms() + (int64_t) (timeout * 1000);
    char *list = strdup(servers), *save = NULL;
    int rc = 0;
    for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save))
        rc |= stats_one(s, have ? &secret : NULL, dl, argc - optind, argv + optind);
    free(list);
    ddio_secret_clear(&secret);
    return rc;
}
