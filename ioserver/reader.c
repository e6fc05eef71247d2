/* A connection's reader thread: it waits for each message, checks its
 * header and size against the limits, reads the payload and hands it to
 * dispatch (DATA goes to tcp.c); at the end it tears the connection down. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "reader.h"
#include "grace.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>

#include "admit.h"
#include "ddio_log.h"
#include "ddio_net.h"
#include "dispatch.h"
#include "indoubt.h"
#include "engine.h"
#include "handlers.h"
#include "locks.h"
#include "rebuild.h"
#include "reply.h"
#include "tcp.h"
#include "tlsgate.h"
#include "ucx.h"
#include "watch.h"

/* before AUTH only HELLO and AUTH are allowed: nothing bigger is needed */
#define PREAUTH_MAX_PAYLOAD (DDIO_MAX_STR + 64u)

/* ---- reader --------------------------------------------------------------------------------- */

/* wait until the socket is readable; 0, -1 when stopping or dead, or
 * -ETIMEDOUT past the authentication deadline */
static int wait_readable(struct conn *c)
{
    for (;;) {
        if (atomic_load(&c->srv->closing))
            return -1;
        int wait = 500;
        if (!atomic_load(&c->authed)) {
            int64_t left = auth_deadline(c) - ddio_now_ms();
            if (left <= 0)
                return -ETIMEDOUT;
            wait = left < wait ? (int)left : wait;
        }
        struct pollfd pf = {c->fd, POLLIN, 0};
        int n = ddio_poll(&pf, 1, wait);     /* TLS may hold bytes already */
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

/* read one header; a bad one is answered (when we can tell what it was) */
static int read_header(struct conn *c, struct ddio_hdr *h)
{
    uint8_t raw[DDIO_HDR_SIZE];
    int rc = ddio_recv_all(c->fd, raw, sizeof(raw), recv_deadline(c));
    if (rc)
        return rc;
    rc = ddio_hdr_decode(raw, h, DDIO_MAX_PAYLOAD);
    if (rc == 0)
        return 0;
    uint16_t type = (uint16_t)(raw[6] | raw[7] << 8);
    uint64_t req = 0;
    for (int i = 7; i >= 0; i--)
        req = req << 8 | raw[16 + i];
    if (rc == -EPROTONOSUPPORT)
        conn_send_err(c, (uint16_t)(type | DDIO_REPLY), req, -rc, "protocol version %u not "
                      "supported (expected %u)", (unsigned)(raw[4] | raw[5] << 8), DDIO_VERSION);
    else
        conn_send_err(c, (uint16_t)(type | DDIO_REPLY), req, -rc, "malformed message header");
    return rc;
}

static int serve_one(struct conn *c)
{
    struct ddio_hdr h;
    int rc = read_header(c, &h);
    if (rc)
        return rc;
    int authed = atomic_load(&c->authed);
    if (h.type == DDIO_T_DATA && !authed)
        return refuse_unauth(c, &h);
    if (h.type == DDIO_T_DATA)
        return on_data(c, &h);
    if (h.type == (DDIO_T_INVAL | DDIO_REPLY) && authed && h.len == 0) {
        watch_ack(c, h.req);    /* a watcher's answer (watch.h) */
        return 0;
    }
    if (h.type & DDIO_REPLY || h.type == DDIO_T_PUT || h.type == DDIO_T_GET
        || h.type == DDIO_T_DATA) {
        conn_send_err(c, h.type | DDIO_REPLY, h.req, EPROTO, "unexpected %s from a client",
                      ddio_type_name(h.type & ~DDIO_REPLY));
        return -EPROTO;
    }
    uint64_t cap = authed ? c->srv->cfg.max_msg : PREAUTH_MAX_PAYLOAD;
    if (h.len > cap) {
        DDIO_WARN("connection %" PRIu64 " from %s: %s of %" PRIu64 " bytes refused", c->id,
                  c->peer, ddio_type_name(h.type), h.len);
        conn_send_err(c, h.type | DDIO_REPLY, h.req, EMSGSIZE, "%s of %" PRIu64 " bytes "
                      "exceeds the limit of %" PRIu64 " bytes%s", ddio_type_name(h.type), h.len,
                      cap, authed ? " (--max-message)" : " before authentication");
        return -EMSGSIZE;
    }
    uint8_t *payload = h.len ? malloc(h.len) : NULL;
    if (h.len && !payload)
        return -ENOMEM;
    rc = ddio_recv_all(c->fd, payload, h.len, recv_deadline(c));
    if (rc == 0)
        rc = dispatch(c, &h, &payload);
    free(payload);
    return rc;
}

/* the connection's XFERs fail, on TCP and on its UCX endpoint */
static void drop_endpoints(struct conn *c)
{
    struct server *srv = c->srv;
    conn_kill(c, "reader finished");
    engine_conn_dropped(srv, &c->xp);
    pthread_mutex_lock(&c->mu);
    struct uep *u = c->uep;
    c->uep = NULL;
    pthread_mutex_unlock(&c->mu);
    if (u) {
        engine_conn_dropped(srv, ucx_xp(u));
        ucx_ep_close(u);
    }
}

/* its locks go first (which ends its waits for locks: request threads
 * blocked in LOCK return), then, once no request thread is left, its files */
static void drop_files(struct conn *c)
{
    struct server *srv = c->srv;
    unsigned held = 0;
    rebuild_conn_gone(c);
    pthread_mutex_lock(&c->mu);
    for (struct handle *h = c->handles; h; h = h->next)
        held += lk_release_owner(&h->of->locks, c->id);   /* also cancels its lock waits */
    while (c->workers > 0)
        pthread_cond_wait(&c->cv, &c->mu);
    struct handle *hs = c->handles;
    c->handles = NULL;
    pthread_mutex_unlock(&c->mu);
    if (held)               /* a client that reconnects takes them again */
        srv_lock_grace(srv, "a connection holding locks dropped");
    while (hs) {
        struct handle *n = hs->next;
        lk_release_owner(&hs->of->locks, c->id);
        indoubt_dropped(srv, hs->of, atomic_load(&hs->changed));
        store_release(&srv->store, hs->of);
        free(hs);
        hs = n;
    }
}

/* off the server's list and its count of pending connections */
static void unlist(struct conn *c)
{
    struct server *srv = c->srv;
    pthread_mutex_lock(&srv->mu);
    for (struct conn **pp = &srv->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    pending_drop_locked(srv, c);
    srv->nconns--;
    pthread_cond_broadcast(&srv->cv);
    pthread_mutex_unlock(&srv->mu);
}

void reader_teardown(struct conn *c)
{
    watch_drop(c);
    drop_endpoints(c);
    drop_files(c);
    if (c->writer_started)
        pthread_join(c->writer, NULL);
    unlist(c);
    stats_conn(&c->srv->stats, -1);
    if (atomic_load(&c->authed))
        DDIO_INFO("connection %" PRIu64 " from %s closed", c->id, c->peer);
    else
        DDIO_WARN("connection %" PRIu64 " from %s closed before authenticating", c->id, c->peer);
    conn_unref(c);
}

void *reader_main(void *arg)
{
    struct conn *c = arg;
    char why[160];
    int w = wait_readable(c), rc = 0;
    if (w == 0 && tlsgate_pass(c)) {        /* TLS set up, or refused */
        reader_teardown(c);
        return NULL;
    }
    for (; w == 0 && !atomic_load(&c->evicted); w = wait_readable(c)) {
        rc = serve_one(c);
        if (rc) {
            if (rc != -ECONNRESET)
                DDIO_DEBUG("connection %" PRIu64 " (%s): %s", c->id, c->peer,
                           ddio_errno_name(-rc));
            if (rc != -ECONNRESET && rc != -ETIMEDOUT)
                conn_flush(c, ddio_now_ms() + FLUSH_TIMEOUT_MS);   /* the refusal */
            break;
        }
    }
    if (atomic_load(&c->evicted) && !atomic_load(&c->authed)) {
        snprintf(why, sizeof(why), "not authenticated while %u newer connections wait "
                 "(--max-unauth)", c->srv->cfg.max_unauth);
        refuse_pending(c, EBUSY, why);
    } else if (w == -ETIMEDOUT || (rc == -ETIMEDOUT && !atomic_load(&c->authed))) {
        snprintf(why, sizeof(why), "not authenticated within %u s (--auth-timeout)",
                 c->srv->cfg.auth_timeout_s);
        refuse_pending(c, ETIMEDOUT, why);
    }
    reader_teardown(c);
    return NULL;
}
