/* --tls (tlsgate.h). The gate runs on the connection's reader thread, before
 * its first message, within the authentication deadline: a slow or silent
 * handshake holds only its own connection. */
#include "tlsgate.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "admit.h"
#include "conn.h"
#include "ddio_log.h"
#include "ddio_net.h"
#include "ddio_proto.h"
#include "ddio_tls.h"
#include "reply.h"
#include "server.h"
#include "stats.h"

#define REFUSE_DRAIN_MS 200

int tlsgate_start(struct server *srv, char *err, size_t n)
{
    if (srv->cfg.tls == DDIO_TLS_OFF)
        return 0;
    srv->tls = ddio_tls_server_new(srv->cfg.tls_cert, srv->cfg.tls_key, err, n);
    return srv->tls ? 0 : -1;
}

void tlsgate_stop(struct server *srv)
{
    ddio_tls_ctx_free(srv->tls);
    srv->tls = NULL;
}

/* Answer the client's first request (HELLO, req 1) with the reason, in the
 * clear: the client reads it as a plain message (ddio_tls_connect returns
 * -ENOPROTOOPT to a TLS client so answered). What the client sent is read
 * away first, so that the close does not reset the answer away. */
static void refuse(struct conn *c, int err, const char *why)
{
    DDIO_WARN("connection %" PRIu64 " from %s refused: %s", c->id, c->peer, why);
    stats_bump(&c->srv->stats, &c->srv->stats.auth_refused);
    conn_send_err(c, DDIO_T_HELLO | DDIO_REPLY, 1, err, "%s", why);
    conn_flush(c, ddio_now_ms() + REFUSE_DRAIN_MS);
    shutdown(c->fd, SHUT_WR);
    char sink[4096];
    int64_t end = ddio_now_ms() + REFUSE_DRAIN_MS;
    for (;;) {
        ssize_t k = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT);
        if (k > 0)
            continue;
        if (k == 0 || (errno != EAGAIN && errno != EINTR) || ddio_now_ms() >= end)
            break;
        struct pollfd p = {c->fd, POLLIN, 0};
        poll(&p, 1, 20);
    }
}

static int handshake(struct conn *c)
{
    char err[512], how[128];
    if (ddio_tls_accept(c->srv->tls, c->fd, auth_deadline(c), err, sizeof(err))) {
        DDIO_WARN("connection %" PRIu64 " from %s closed: %s", c->id, c->peer, err);
        stats_bump(&c->srv->stats, &c->srv->stats.auth_refused);
        return -1;
    }
    ddio_tls_describe(c->fd, how, sizeof(how));
    DDIO_INFO("connection %" PRIu64 " from %s: %s", c->id, c->peer, how);
    return 0;
}

int tlsgate_pass(struct conn *c)
{
    unsigned char b;
    if (recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) != 1)
        return 0;               /* closed or not there after all: the reader sees */
    int mode = c->srv->cfg.tls;
    if (b == DDIO_TLS_FIRST_BYTE) {
        if (!c->srv->tls) {
            refuse(c, EACCES, "this server does not offer TLS (ddio-server --tls)");
            return -1;
        }
        return handshake(c);
    }
    if (mode == DDIO_TLS_REQUIRED) {
        refuse(c, EACCES, "this server requires TLS: set DDIO_TLS=on on the client (and "
               "DDIO_TLS_CA to the CA file that signs the servers' certificates)");
        return -1;
    }
    return 0;
}

int tlsgate_ucx_allowed(const struct conn *c, char *why, size_t n)
{
    if (c->srv->cfg.tls != DDIO_TLS_REQUIRED || ddio_same_host(c->fd))
        return 0;
    snprintf(why, n, "server %s requires TLS and UCX carries no encryption: from another host "
             "the data goes by TCP with TLS", c->srv->name);
    return -1;
}
