/* The TCP transport's endpoint: for the engine a connection is a struct xp
 * (transport.h, tcp_ops below): replies, PUT and GET become queued messages
 * (conn.c); the GETs waiting for DATA are kept here, matched by (req, tag),
 * and DATA is received on the reader thread straight into the engine's
 * block buffers (engine_get_sink). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tcp.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ddio_net.h"
#include "engine.h"
#include "fault.h"

static struct conn *conn_of(const struct xp *ep)
{
    return (struct conn *)((char *)ep - offsetof(struct conn, xp));
}

/* ---- the engine's endpoint (transport.h) ------------------------------------------------ */

static void tcp_ref(struct xp *ep)
{
    conn_ref(conn_of(ep));
}

static void tcp_unref(struct xp *ep)
{
    conn_unref(conn_of(ep));
}

static const char *tcp_name(const struct xp *ep)
{
    return conn_of(ep)->peer;
}

static int tcp_reply(struct xp *ep, uint16_t type, uint64_t req, int32_t status,
                     uint8_t *payload, size_t len, int64_t deadline_ms)
{
    if (type == (DDIO_T_XFER | DDIO_REPLY) && status == 0 && fault_drop(FAULT_DONE)) {
        free(payload);  /* the answer lost with the connection (tests) */
        conn_kill(conn_of(ep), "fault point done");
        return -ECONNRESET;
    }
    if (type == (DDIO_T_XFER | DDIO_REPLY) && status == 0)
        fault_crash(FAULT_DONE);  /* done:N:crash (tests): dies with the answer unsent */
    int rc = conn_send(conn_of(ep), type, req, status, payload, len, 0, deadline_ms);
    if (type == (DDIO_T_XFER | DDIO_REPLY) && status == 0)
        fault_hit(FAULT_DONE);    /* done:N:kill (tests) */
    return rc;
}

static int tcp_progress(struct xp *ep, uint64_t req, int64_t deadline_ms)
{
    return conn_send_progress(conn_of(ep), req, deadline_ms);
}

/* A PUT message. Its bytes in at most CONN_IOV_MAX pieces of the block (or
 * of the page cache's pages, engine_slots.c) go to the socket from there:
 * the socket's copy is the only one the server makes, as a bare TCP send's.
 * More pieces: the engine gathers them into the message's payload. */
static int tcp_put(struct xp *ep, uint64_t req, const struct ddio_seg *seg, uint32_t nseg,
                   uint64_t total, const struct xp_src *src, int64_t deadline_ms)
{
    struct ddio_segs m = {.tag = 0, .nseg = nseg, .seg = (struct ddio_seg *)seg,
                          .total = total};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_put(&w, &m);
    if (w.err) {
        ddio_wbuf_free(&w);
        return -ENOMEM;
    }
    struct iovec v[CONN_IOV_MAX];   /* the head, then the bytes in stream order */
    int nv = 1;
    v[0] = (struct iovec){w.p, w.len};
    if (xp_gather(src->walk, src->arg, v, &nv, CONN_IOV_MAX) == 0) {
        int rc = conn_send_iov(conn_of(ep), DDIO_T_PUT, req, v, nv, 1, deadline_ms);
        ddio_wbuf_free(&w);
        return rc;
    }
    uint8_t *data = ddio_put_space(&w, total);
    if (!data || w.err) {
        ddio_wbuf_free(&w);
        return -ENOMEM;
    }
    src->fill(src->arg, data, total);
    return conn_send(conn_of(ep), DDIO_T_PUT, req, 0, w.p, w.len, 1, deadline_ms);
}

/* Registered before the GET leaves (its DATA may come at once), also on a
 * dead connection: the engine's cancel takes it back either way. */
static int tcp_get(struct xp *ep, struct xp_get *g, int64_t deadline_ms)
{
    struct conn *c = conn_of(ep);
    pthread_mutex_lock(&c->mu);
    int dead = c->dead;
    g->next = c->gets;
    c->gets = g;
    pthread_mutex_unlock(&c->mu);
    if (dead)
        return -ECONNRESET;
    struct ddio_wbuf w;
    if (xp_enc_get(g, &w))
        return -ENOMEM;
    return conn_send(c, DDIO_T_GET, g->req, 0, w.p, w.len, 1, deadline_ms);
}

static struct xp_get *tcp_cancel(struct xp *ep, const void *owner)
{
    struct conn *c = conn_of(ep);
    struct xp_get *out = NULL;
    pthread_mutex_lock(&c->mu);
    while (c->filling == owner)   /* the reader is storing into its block: let it end */
        pthread_cond_wait(&c->cv, &c->mu);
    out = xp_take_owner(&c->gets, owner);
    pthread_mutex_unlock(&c->mu);
    return out;
}

static const struct xport_ops tcp_ops = {
    .ref = tcp_ref, .unref = tcp_unref, .name = tcp_name, .reply = tcp_reply,
    .progress = tcp_progress, .put = tcp_put, .get = tcp_get, .cancel = tcp_cancel,
    .sends_in_place = 1,
};

/* ---- DATA (reader thread) ------------------------------------------------------------------- */

/* the GET a DATA answers, taken off the list; c->filling marks it until
 * fill_end, so the engine's cancel waits while its block is being written */
static struct xp_get *claim_get(struct conn *c, uint64_t req, uint32_t tag)
{
    pthread_mutex_lock(&c->mu);
    struct xp_get **pp = &c->gets;
    while (*pp && !((*pp)->req == req && (*pp)->tag == tag))
        pp = &(*pp)->next;
    struct xp_get *g = *pp;
    if (g) {
        *pp = g->next;
        c->filling = g->owner;
    }
    pthread_mutex_unlock(&c->mu);
    return g;
}

static void fill_end(struct conn *c)
{
    pthread_mutex_lock(&c->mu);
    c->filling = NULL;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* at most this many pieces of a block received in place by one recvmsg */
#define RECV_PIECES_MAX 64

static int ensure_scratch(struct conn *c)
{
    if (c->scratch)
        return 0;
    c->scratch_len = 256u << 10;
    c->scratch = malloc(c->scratch_len);
    return c->scratch ? 0 : -ENOMEM;
}

/* The GET's bytes straight into the block when they are a few pieces of it
 * (one contiguous range, as a contiguous write's are): one recvmsg, no copy
 * through scratch. 1: not so (nothing received); else 0 or -errno. */
static int recv_get_in_place(struct conn *c, struct xp_get *g, int64_t dl)
{
    struct iovec v[RECV_PIECES_MAX];
    int n = 0;
    if (!g->walk || xp_gather(g->walk, g, v, &n, RECV_PIECES_MAX))
        return 1;
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i].iov_len;
    return sum == g->total ? ddio_recvv_all(c->fd, v, n, dl) : 1;
}

/* receive the GET's bytes in place, or in scratch-sized chunks, each
 * stored by the engine */
static int recv_get(struct conn *c, struct xp_get *g, int64_t dl)
{
    int rc = recv_get_in_place(c, g, dl);
    if (rc != 1)
        return rc;
    rc = ensure_scratch(c);
    for (uint32_t i = 0; rc == 0 && i < g->nseg; i++) {
        uint64_t s = g->seg[i].off, end = s + g->seg[i].len;
        while (rc == 0 && s < end) {
            uint64_t n = end - s < c->scratch_len ? end - s : c->scratch_len;
            rc = ddio_recv_all(c->fd, c->scratch, (size_t)n, dl);
            if (rc == 0)
                engine_get_sink(g, i, s, c->scratch, (size_t)n);
            s += n;
        }
    }
    return rc;
}

/* DATA: a 4-byte tag, then the bytes of the GET (req, tag) asked for */
int on_data(struct conn *c, const struct ddio_hdr *h)
{
    uint8_t tb[4];
    char why[256];
    if (h->len < 4)
        return -EPROTO;
    int64_t dl = ddio_now_ms() + PAYLOAD_TIMEOUT_MS;
    int rc = ddio_recv_all(c->fd, tb, 4, dl);
    if (rc)
        return rc;
    uint32_t tag = (uint32_t)tb[0] | (uint32_t)tb[1] << 8 | (uint32_t)tb[2] << 16
                 | (uint32_t)tb[3] << 24;
    struct xp_get *g = claim_get(c, h->req, tag);
    if (!g)                       /* late answer to a failed XFER: harmless */
        return ddio_discard(c->fd, (size_t)(h->len - 4), dl);
    if (h->len - 4 != g->total) {
        snprintf(why, sizeof(why), "DATA from %s: %" PRIu64 " bytes for a GET of %" PRIu64,
                 c->peer, h->len - 4, g->total);
        engine_get_drop(g, EPROTO, why);
        fill_end(c);
        return -EPROTO;
    }
    rc = recv_get(c, g, ddio_now_ms() + g->timeout_ms);
    if (rc)
        snprintf(why, sizeof(why), "receiving DATA from %s: %s", c->peer,
                 ddio_errno_name(-rc));
    engine_get_done(g, -rc, rc ? why : NULL);
    fill_end(c);
    return rc;
}

struct conn *conn_new(struct server *srv, int fd)
{
    struct conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->xp = (struct xp){.ops = &tcp_ops, .srv = srv};
    c->srv = srv;
    c->fd = fd;
    atomic_init(&c->refs, 1);
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cv, &ca);
    pthread_cond_init(&c->wcv, &ca);
    pthread_cond_init(&c->ocv, &ca);
    pthread_condattr_destroy(&ca);
    peer_name(fd, c->peer, sizeof(c->peer));
    return c;
}
