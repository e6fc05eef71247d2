/* The TCP transport: connections. Each has a reader thread (this file), a
 * writer thread that owns the socket's send side, and short-lived request
 * threads for the requests that may wait (XFER, blocking LOCK, SYNC,
 * PREALLOC). The reader therefore only ever blocks on its socket and short
 * mutexes: it handles quick requests inline, queues replies, and receives
 * DATA straight into the engine's block buffers (engine_get_sink).
 *
 * For the engine a connection is an endpoint (transport.h, tcp_ops below):
 * replies, PUT and GET become queued messages; the GETs waiting for DATA
 * are kept here, matched by (req, tag). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "net.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "cond.h"
#include "fault.h"
#include "engine.h"
#include "locks.h"
#include "transport.h"
#include "ucx.h"

#define PAYLOAD_TIMEOUT_MS 60000
#define DEFAULT_LOCK_TIMEOUT_MS 60000u
/* before AUTH only HELLO and AUTH are allowed: nothing bigger is needed */
#define PREAUTH_MAX_PAYLOAD (DDIO_MAX_STR + 64u)
/* how long a refusal may take to reach the client before the close */
#define FLUSH_TIMEOUT_MS 1000
#define REFUSE_SEND_MS 100

/* ---- connections ------------------------------------------------------------------ */

/* a queued outgoing message; the connection's writer thread sends it */
struct outmsg {
    struct outmsg *next;
    uint8_t hdr[DDIO_HDR_SIZE];
    uint8_t *payload;            /* malloc'd, owned */
    size_t plen;
    int64_t deadline_ms;
    int bounded;                 /* counted against the queue's byte cap */
    size_t sent;                 /* bytes of header + payload already sent */
};

/* A message of at most this many bytes is sent by the thread that queues it
 * when the connection's output is idle: a small reply (DONE, GET, a small
 * PUT, a metadata answer) then costs no wakeup of the writer thread, which
 * on a small VM costs more than the send. What the socket does not take at
 * once goes to the writer. Bulk PUTs always go through the writer, so the
 * engine thread never waits to copy a block into the socket. */
#define DIRECT_SEND_MAX 65536
/* A request thread that finished waits this long for the connection's next
 * request before it exits: a client issuing small calls one after another
 * then costs one thread handoff per call instead of a thread creation. At
 * most IDLE_WORKERS wait per connection. */
#define WORKER_IDLE_MS 2000
#define IDLE_WORKERS 4

struct handle {
    uint64_t id;
    struct ofile *of;
    struct handle *next;
};

struct conn {
    struct xp xp;                /* what the engine holds (transport.h) */
    struct server *srv;
    int fd;
    uint64_t id;                 /* also the lock owner */
    char peer[96];
    atomic_int refs;
    pthread_mutex_t mu;          /* everything below */
    pthread_cond_t cv;           /* CLOCK_MONOTONIC: queue, gets, workers */
    int dead;
    int hello;
    atomic_int authed;           /* AUTH verified (or --insecure); read by the acceptor */
    int pending;                 /* counted in srv->npending (under srv->mu) */
    atomic_int evicted;          /* closed to make room (--max-unauth) */
    int64_t born_ms;             /* accepted at; the authentication deadline runs from here */
    uint8_t snonce[DDIO_NONCE_LEN];  /* this connection's challenge */
    struct outmsg *qhead, *qtail;
    size_t qbytes;               /* bounded messages queued */
    int writing;                 /* the writer is sending a dequeued message */
    struct handle *handles;
    uint64_t next_handle;
    struct xp_get *gets;         /* GETs waiting for their DATA */
    const void *filling;         /* owner of the GET whose DATA the reader receives */
    int workers;                 /* request threads of this conn (running or idle) */
    int idle;                    /* of those, waiting for a request (wq) */
    struct work *wq;             /* requests handed to idle threads, not yet taken */
    pthread_cond_t wcv;          /* CLOCK_MONOTONIC: wq, dead (idle threads wait here) */
    pthread_cond_t ocv;          /* the writer waits here: queue, writing, dead */
    int flushers;                /* threads in conn_flush (waiting on cv) */
    struct work *held;           /* requests counted against --max-inflight: */
    int nheld;                   /* a slot is free once the final reply is queued */
    pthread_t writer;
    int writer_started;
    struct uep *uep;             /* UCX endpoint after UCXADDR (ucx.c), else NULL */
    uint8_t *scratch;            /* DATA receive buffer (reader thread only) */
    size_t scratch_len;
    struct conn *next;           /* server's list */
};

static struct conn *conn_of(const struct xp *ep)
{
    return (struct conn *)((char *)ep - offsetof(struct conn, xp));
}

/* ---- messages and errors ---------------------------------------------------------- */

void srv_errmsg(const struct server *srv, char *out, size_t n, const char *fmt, va_list ap)
{
    int k = snprintf(out, n, "server %s: ", srv->name);
    if (k >= 0 && (size_t)k < n)
        vsnprintf(out + k, n - (size_t)k, fmt, ap);
}

static void conn_ref(struct conn *c)
{
    atomic_fetch_add(&c->refs, 1);
}

static void free_queue(struct conn *c)
{
    while (c->qhead) {
        struct outmsg *m = c->qhead;
        c->qhead = m->next;
        free(m->payload);
        free(m);
    }
    c->qtail = NULL;
    c->qbytes = 0;
}

static void conn_unref(struct conn *c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    free_queue(c);
    if (c->fd >= 0)
        close(c->fd);
    free(c->scratch);
    pthread_cond_destroy(&c->cv);
    pthread_cond_destroy(&c->wcv);
    pthread_cond_destroy(&c->ocv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* mark dead, shut the socket down (wakes the reader), drop queued output */
static void conn_kill(struct conn *c, const char *why)
{
    pthread_mutex_lock(&c->mu);
    if (!c->dead) {
        c->dead = 1;
        shutdown(c->fd, SHUT_RDWR);   /* wakes the reader and the writer */
        DDIO_DEBUG("connection %" PRIu64 " (%s) closed: %s", c->id, c->peer, why);
    }
    pthread_cond_broadcast(&c->cv);
    pthread_cond_broadcast(&c->wcv);
    pthread_cond_broadcast(&c->ocv);
    pthread_mutex_unlock(&c->mu);
}

static int wait_space(struct conn *c, size_t plen, int64_t deadline_ms)
{
    while (!c->dead && c->qbytes > 0 && c->qbytes + plen > c->srv->queue_cap) {
        if (ddio_now_ms() >= deadline_ms)
            return -ETIMEDOUT;
        struct timespec ts = {.tv_sec = deadline_ms / 1000,
                              .tv_nsec = (deadline_ms % 1000) * 1000000};
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    return c->dead ? -ECONNRESET : 0;
}

struct work {
    struct conn *c;
    struct ddio_hdr h;
    uint8_t *payload;
    struct ofile *of;             /* referenced */
    void (*fn)(struct work *w);
    struct work *next_held;       /* in c->held while it counts as in flight */
    struct work *next_queued;    /* in c->wq, waiting for an idle thread */
    int holding;
    union {
        struct ddio_xfer x;
        struct ddio_lock lk;
        struct ddio_prealloc pa;
    } u;
};

/* Free the --max-inflight slot of w (or, w NULL, of a request of this type
 * and id), c->mu held. A request stops counting when its reply is queued, not
 * when its thread exits: a client that waits for each reply before sending the
 * next request must never be refused because a finished thread is still
 * unwinding. (A client reusing request ids can free slots early; the thread
 * count keeps its own hard cap, see spawn.) */
static void release_slot(struct conn *c, struct work *w, uint16_t type, uint64_t req)
{
    for (struct work **pp = &c->held; *pp; pp = &(*pp)->next_held) {
        struct work *x = *pp;
        if (w ? x == w : x->h.req == req && x->h.type == type) {
            *pp = x->next_held;
            x->holding = 0;
            c->nheld--;
            return;
        }
    }
}

/* Send m on the caller's thread (c->mu held, output idle; unlocked on
 * return). c->writing keeps the writer and other senders off the socket
 * meanwhile; a remainder the socket did not take goes first in the queue. */
static int send_direct(struct conn *c, struct outmsg *m)
{
    c->writing = 1;
    pthread_mutex_unlock(&c->mu);
    struct iovec iov[2] = {{m->hdr, DDIO_HDR_SIZE}, {m->payload, m->plen}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = m->plen ? 2 : 1};
    size_t cap = fault_cut(FAULT_DIRECT_SEND, DDIO_HDR_SIZE, m->plen);   /* tests */
    if (cap < DDIO_HDR_SIZE + m->plen) {
        iov[0].iov_len = cap < DDIO_HDR_SIZE ? cap : DDIO_HDR_SIZE;
        iov[1].iov_len = cap - iov[0].iov_len;
        mh.msg_iovlen = iov[1].iov_len ? 2 : 1;
    }
    ssize_t k;
    do
        k = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (k < 0 && errno == EINTR);
    int err = k < 0 && errno != EAGAIN && errno != EWOULDBLOCK ? errno : 0;
    pthread_mutex_lock(&c->mu);
    c->writing = 0;
    if (!err && (size_t)(k > 0 ? k : 0) < DDIO_HDR_SIZE + m->plen) {
        m->sent = k > 0 ? (size_t)k : 0;
        m->next = c->qhead;
        c->qhead = m;
        if (!c->qtail)
            c->qtail = m;
        if (m->bounded)
            c->qbytes += m->plen;
        m = NULL;
    }
    if (c->qhead)                 /* the writer: the remainder, or what came meanwhile */
        pthread_cond_signal(&c->ocv);
    if (c->flushers)
        pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (m) {
        free(m->payload);
        free(m);
    }
    if (err) {
        conn_kill(c, "send failed");
        return -ECONNRESET;
    }
    return 0;
}

/* Queue a message. payload (may be NULL) is taken over and freed.
 * bounded = 1: wait (until deadline_ms) while the connection's queue holds
 * more than queue_cap bytes. 0, -ETIMEDOUT, -ECONNRESET (dead). */
static int conn_send(struct conn *c, uint16_t type, uint64_t req, int32_t status,
                     uint8_t *payload, size_t plen, int bounded, int64_t deadline_ms)
{
    struct outmsg *m = calloc(1, sizeof(*m));
    if (!m) {
        free(payload);
        return -ENOMEM;
    }
    struct ddio_hdr h;
    ddio_hdr_init(&h, type, req, plen);
    h.status = status;
    ddio_hdr_encode(&h, m->hdr);
    m->payload = payload;
    m->plen = plen;
    m->deadline_ms = deadline_ms;
    m->bounded = bounded;
    pthread_mutex_lock(&c->mu);
    int rc = bounded ? wait_space(c, plen, deadline_ms) : (c->dead ? -ECONNRESET : 0);
    if ((type & DDIO_REPLY) && c->held)
        release_slot(c, NULL, (uint16_t)(type & ~DDIO_REPLY), req);
    if (rc == 0 && !c->qhead && !c->writing && DDIO_HDR_SIZE + plen <= DIRECT_SEND_MAX)
        return send_direct(c, m);   /* unlocks */
    if (rc == 0) {
        if (c->qtail)
            c->qtail->next = m;
        else
            c->qhead = m;
        c->qtail = m;
        if (bounded)
            c->qbytes += plen;
        pthread_cond_signal(&c->ocv);
    }
    pthread_mutex_unlock(&c->mu);
    if (rc) {
        free(payload);
        free(m);
    }
    return rc;
}

/* A heartbeat is only worth sending on an idle connection: anything still
 * queued reaches the client first and proves progress by itself, and
 * skipping keeps a client that stopped reading from collecting them. */
static int conn_send_progress(struct conn *c, uint64_t req, int64_t deadline_ms)
{
    pthread_mutex_lock(&c->mu);
    int idle = !c->dead && !c->qhead;
    pthread_mutex_unlock(&c->mu);
    if (!idle)
        return 0;
    return conn_send(c, DDIO_T_PROGRESS, req, 0, NULL, 0, 0, deadline_ms);
}

/* error reply: "server HOST:PORT: <cause>" */
static int conn_send_err(struct conn *c, uint16_t type, uint64_t req, int err,
                         const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int conn_send_err(struct conn *c, uint16_t type, uint64_t req, int err,
                         const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = xp_vreply_err(&c->xp, type, req, err, fmt, ap);
    va_end(ap);
    return rc;
}

/* reply with an encoded payload (w is consumed) */
static int reply_w(struct conn *c, const struct ddio_hdr *h, struct ddio_wbuf *w)
{
    if (w->err) {
        ddio_wbuf_free(w);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "out of memory");
    }
    return conn_send(c, h->type | DDIO_REPLY, h->req, 0, w->p, w->len, 0,
                     ddio_now_ms() + XP_REPLY_TIMEOUT_MS);
}

static int reply_ok(struct conn *c, const struct ddio_hdr *h)
{
    return conn_send(c, h->type | DDIO_REPLY, h->req, 0, NULL, 0, 0,
                     ddio_now_ms() + XP_REPLY_TIMEOUT_MS);
}

/* ---- writer thread -------------------------------------------------------------------- */

static void *writer_main(void *arg)
{
    struct conn *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while ((!c->qhead || c->writing) && !c->dead)   /* writing: a direct send */
            pthread_cond_wait(&c->ocv, &c->mu);
        if (c->dead)
            break;
        struct outmsg *m = c->qhead;
        c->qhead = m->next;
        if (!c->qhead)
            c->qtail = NULL;
        c->writing = 1;
        pthread_mutex_unlock(&c->mu);
        /* from where a direct send stopped (ddio_sendv_all skips empty pieces) */
        size_t h = m->sent < DDIO_HDR_SIZE ? m->sent : DDIO_HDR_SIZE, p = m->sent - h;
        struct iovec iov[2] = {{m->hdr + h, DDIO_HDR_SIZE - h}, {NULL, 0}};
        if (m->plen > p)
            iov[1] = (struct iovec){m->payload + p, m->plen - p};
        int rc = ddio_sendv_all(c->fd, iov, 2, m->deadline_ms);
        pthread_mutex_lock(&c->mu);
        c->writing = 0;
        if (m->bounded)
            c->qbytes -= m->plen;
        pthread_cond_broadcast(&c->cv);
        free(m->payload);
        free(m);
        if (rc) {
            pthread_mutex_unlock(&c->mu);
            conn_kill(c, rc == -ETIMEDOUT ? "client stopped reading (send timeout)"
                                          : "send failed");
            pthread_mutex_lock(&c->mu);
            break;
        }
    }
    free_queue(c);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Wait (bounded) until everything queued went out: a refusal's reply must
 * reach the client before the connection closes. */
static void conn_flush(struct conn *c, int64_t deadline_ms)
{
    pthread_mutex_lock(&c->mu);
    c->flushers++;
    while (!c->dead && (c->qhead || c->writing) && ddio_now_ms() < deadline_ms) {
        struct timespec ts = {.tv_sec = deadline_ms / 1000,
                              .tv_nsec = (deadline_ms % 1000) * 1000000};
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    c->flushers--;
    pthread_mutex_unlock(&c->mu);
}

/* ---- handles --------------------------------------------------------------------------- */

static struct ofile *handle_get(struct conn *c, uint64_t id)
{
    pthread_mutex_lock(&c->mu);
    struct handle *h = c->handles;
    while (h && h->id != id)
        h = h->next;
    struct ofile *of = h ? h->of : NULL;
    pthread_mutex_unlock(&c->mu);
    return of;
}

/* a handle's file, with a reference the caller releases; replies EBADF */
static struct ofile *handle_retain(struct conn *c, const struct ddio_hdr *h, uint64_t id)
{
    struct ofile *of = handle_get(c, id);
    if (!of) {
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EBADF, "handle %" PRIu64 ": EBADF", id);
        return NULL;
    }
    store_retain(&c->srv->store, of);
    return of;
}

static uint64_t handle_add(struct conn *c, struct ofile *of)
{
    struct handle *h = calloc(1, sizeof(*h));
    if (!h)
        return 0;
    pthread_mutex_lock(&c->mu);
    h->id = ++c->next_handle;
    h->of = of;
    h->next = c->handles;
    c->handles = h;
    pthread_mutex_unlock(&c->mu);
    return h->id;
}

/* remove a handle; drop the connection's locks on the file when it was the
 * connection's last handle of that file (as POSIX close does per process) */
static struct ofile *handle_remove(struct conn *c, uint64_t id, int *last)
{
    pthread_mutex_lock(&c->mu);
    struct ofile *of = NULL;
    for (struct handle **pp = &c->handles; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id) {
            struct handle *h = *pp;
            *pp = h->next;
            of = h->of;
            free(h);
            break;
        }
    *last = 1;
    for (struct handle *h = c->handles; h && of; h = h->next)
        if (h->of == of)
            *last = 0;
    pthread_mutex_unlock(&c->mu);
    return of;
}

/* ---- request threads -------------------------------------------------------------------- */


static void run_work(struct work *w)
{
    struct conn *c = w->c;
    stats_inflight(&c->srv->stats, 1);
    w->fn(w);
    stats_inflight(&c->srv->stats, -1);
    free(w->payload);
    pthread_mutex_lock(&c->mu);
    if (w->holding)
        release_slot(c, w, 0, 0);
    pthread_mutex_unlock(&c->mu);
    free(w);
}

/* The request spawn handed to this idle thread, or NULL: the thread should
 * exit (it waited WORKER_IDLE_MS, enough threads wait already, or the
 * connection died). c->mu held. */
static struct work *next_work(struct conn *c)
{
    if (c->idle >= IDLE_WORKERS)
        return NULL;
    c->idle++;
    int64_t dl = ddio_now_ms() + WORKER_IDLE_MS;
    while (!c->wq && !c->dead && ddio_now_ms() < dl)
        cond_wait_ms(&c->wcv, &c->mu, dl);
    struct work *w = c->wq;
    if (w)                        /* spawn already took this thread off idle */
        c->wq = w->next_queued;
    else
        c->idle--;
    return w;
}

static void *work_main(void *arg)
{
    struct work *w = arg;
    struct conn *c = w->c;
    while (w) {
        run_work(w);
        pthread_mutex_lock(&c->mu);
        w = next_work(c);
        if (!w) {
            c->workers--;
            pthread_cond_broadcast(&c->cv);
        }
        pthread_mutex_unlock(&c->mu);
    }
    conn_unref(c);
    return NULL;
}

/* c->mu held: count w against --max-inflight, or 0 (too many) */
static int hold_slot(struct conn *c, struct work *w)
{
    if (c->nheld >= (int)c->srv->cfg.max_inflight
        || c->workers >= 2 * (int)c->srv->cfg.max_inflight)
        return 0;
    c->nheld++;
    w->holding = 1;
    w->next_held = c->held;
    c->held = w;
    return 1;
}

static void refuse_busy(struct conn *c, struct work *w)
{
    conn_send_err(c, w->h.type | DDIO_REPLY, w->h.req, EBUSY,
                  "too many requests in progress on this connection (limit %u, "
                  "--max-inflight)", c->srv->cfg.max_inflight);
    if (w->of)
        store_release(&c->srv->store, w->of);
    free(w->payload);
    free(w);
}

/* A read by one participant runs on the reader thread itself: it needs
 * nothing more from this connection (no DATA, no lock, no gate), and a
 * client sends one request at a time on a connection, so the reader has
 * nothing else to do meanwhile; the hand-off to a request thread would cost
 * a wakeup per call. It counts as a request in flight like any other. */
static int runs_inline(const struct work *w)
{
    return w->h.type == DDIO_T_XFER && w->u.x.op == DDIO_X_READ
           && w->u.x.nparticipants == 1;
}

static void run_inline(struct conn *c, struct work *w)
{
    pthread_mutex_lock(&c->mu);
    int ok = hold_slot(c, w);
    if (ok)
        c->workers++;
    pthread_mutex_unlock(&c->mu);
    if (!ok) {
        refuse_busy(c, w);
        return;
    }
    run_work(w);
    pthread_mutex_lock(&c->mu);
    c->workers--;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* run fn on a request thread (an idle one, or a new one); takes over
 * payload and the file reference */
static void spawn(struct conn *c, struct work *w)
{
    pthread_mutex_lock(&c->mu);
    int ok = hold_slot(c, w);
    if (ok) {
        if (c->idle > 0) {        /* FIFO, so requests start in arrival order */
            c->idle--;
            w->next_queued = NULL;
            struct work **pp = &c->wq;
            while (*pp)
                pp = &(*pp)->next_queued;
            *pp = w;
            pthread_cond_signal(&c->wcv);
            pthread_mutex_unlock(&c->mu);
            return;
        }
        c->workers++;
    }
    pthread_mutex_unlock(&c->mu);
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    conn_ref(c);
    if (ok && pthread_create(&t, &at, work_main, w) == 0) {
        pthread_attr_destroy(&at);
        return;
    }
    pthread_attr_destroy(&at);
    if (ok) {
        pthread_mutex_lock(&c->mu);
        release_slot(c, w, 0, 0);
        c->workers--;
        pthread_mutex_unlock(&c->mu);
    }
    conn_unref(c);
    refuse_busy(c, w);
}

/* An XFER asking for UCX runs on the connection's UCX endpoint, which keeps
 * its token until the XFER's DONE. */
static void do_xfer(struct work *w)
{
    struct conn *c = w->c;
    struct xp *ep = &c->xp;
    if (w->u.x.flags & DDIO_XF_UCX) {
        char why[256] = "this connection has no UCX endpoint (UCXADDR first)";
        pthread_mutex_lock(&c->mu);
        struct uep *u = c->uep;
        pthread_mutex_unlock(&c->mu);
        int rc = u ? ucx_bind(u, w->h.req, &w->u.x, why, sizeof(why)) : -EPROTO;
        if (rc) {
            conn_send_err(c, DDIO_T_XFER | DDIO_REPLY, w->h.req, -rc, "XFER: %s", why);
            store_release(&c->srv->store, w->of);
            return;
        }
        ep = ucx_xp(u);
    }
    engine_xfer(c->srv, ep, w->h.req, &w->u.x, w->of);   /* takes w->of */
}

static void do_sync(struct work *w)
{
    fault_hit(FAULT_SYNC);
    int rc = store_sync(w->of);
    if (rc)
        conn_send_err(w->c, DDIO_T_SYNC | DDIO_REPLY, w->h.req, -rc, "fdatasync %s: %s",
                      w->of->path, ddio_errno_name(-rc));
    else
        reply_ok(w->c, &w->h);
    store_release(&w->c->srv->store, w->of);
}

static void do_prealloc(struct work *w)
{
    int rc = store_prealloc(w->of, w->u.pa.local_off, w->u.pa.local_len);
    if (rc)
        conn_send_err(w->c, DDIO_T_PREALLOC | DDIO_REPLY, w->h.req, -rc,
                      "preallocate %s: %s", w->of->path, ddio_errno_name(-rc));
    else
        reply_ok(w->c, &w->h);
    store_release(&w->c->srv->store, w->of);
}

static int lock_type(uint32_t t)
{
    return t == DDIO_LK_RD ? LK_RD : t == DDIO_LK_WR ? LK_WR : 0;
}

static void do_lock(struct work *w)
{
    const struct ddio_lock *m = &w->u.lk;
    struct conn *c = w->c;
    uint64_t end = lk_end_of(m->start, m->len);
    int rc;
    if (m->cmd == DDIO_LK_UNLCK) {
        rc = lk_unlock(&w->of->locks, c->id, m->start, end);
    } else {
        uint32_t tmo = m->timeout_ms ? m->timeout_ms : DEFAULT_LOCK_TIMEOUT_MS;
        rc = lk_lock(&w->of->locks, c->id, lock_type(m->type), m->start, end,
                     m->cmd == DDIO_LK_SETLKW, ddio_now_ms() + tmo);
        if (rc == 0)
            stats_bump(&c->srv->stats, &c->srv->stats.locks);
    }
    if (rc)
        conn_send_err(c, DDIO_T_LOCK | DDIO_REPLY, w->h.req, -rc,
                      "lock %s [%" PRIu64 ", +%" PRIu64 "): %s", w->of->path, m->start,
                      m->len, ddio_errno_name(-rc));
    else
        reply_ok(c, &w->h);
    store_release(&c->srv->store, w->of);
}

/* ---- authentication state ------------------------------------------------------------ */

/* the connection no longer counts against --max-unauth */
static void pending_drop_locked(struct server *srv, struct conn *c)
{
    if (c->pending) {
        c->pending = 0;
        srv->npending--;
    }
}

/* 0, or -EBUSY when the connection was just evicted (it closes) */
static int auth_done(struct conn *c)
{
    pthread_mutex_lock(&c->srv->mu);
    int evicted = atomic_load(&c->evicted);
    if (!evicted) {
        pending_drop_locked(c->srv, c);
        atomic_store(&c->authed, 1);
    }
    pthread_mutex_unlock(&c->srv->mu);
    return evicted ? -EBUSY : 0;
}

static int64_t auth_deadline(const struct conn *c)
{
    return c->born_ms + (int64_t)c->srv->cfg.auth_timeout_s * 1000;
}

/* deadline for the rest of a message: before AUTH, the authentication deadline */
static int64_t recv_deadline(const struct conn *c)
{
    return atomic_load(&c->authed) ? ddio_now_ms() + PAYLOAD_TIMEOUT_MS : auth_deadline(c);
}

/* ---- request handlers (reader thread) ------------------------------------------------------ */

static int bad_payload(struct conn *c, const struct ddio_hdr *h)
{
    conn_send_err(c, h->type | DDIO_REPLY, h->req, EPROTO, "malformed %s payload",
                  ddio_type_name(h->type));
    return -EPROTO;
}

static int on_hello(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_hello m = {0};
    if (ddio_dec_hello(p, h->len, &m))
        return bad_payload(c, h);
    snprintf(c->peer + strlen(c->peer), sizeof(c->peer) - strlen(c->peer), " pid %u",
             m.pid);
    free(m.client);
    struct server *srv = c->srv;
    struct ddio_hello_r r = {.ndisks = (uint32_t)srv->ndisks,
                             .flags = (srv->cfg.insecure ? 0 : DDIO_SRV_AUTH_REQUIRED)
                                      | (ucx_offered(srv) ? DDIO_SRV_UCX : 0),
                             .block_size = srv->cfg.block_size, .name = srv->name};
    memcpy(r.server_id, srv->store.id, DDIO_ID_LEN);
    if (ddio_auth_nonce(c->snonce)) {
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EIO, "cannot make a nonce (libcrypto)");
        return -EIO;
    }
    memcpy(r.nonce, c->snonce, DDIO_NONCE_LEN);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_hello_r(&w, &r);
    c->hello = 1;
    if (srv->cfg.insecure && auth_done(c)) {
        ddio_wbuf_free(&w);
        return -EBUSY;
    }
    return reply_w(c, h, &w);
}

/* AUTH: check the client's proof over both nonces, answer with ours */
static int on_auth(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct server *srv = c->srv;
    struct ddio_auth m;
    struct ddio_auth_r r;
    if (atomic_load(&c->authed)) {
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EPROTO, "AUTH on an authenticated "
                      "connection");
        return -EPROTO;
    }
    if (ddio_dec_auth(p, h->len, &m))
        return bad_payload(c, h);
    if (!ddio_auth_verify(&srv->secret, DDIO_AUTH_CLIENT, srv->store.id, c->snonce, m.nonce,
                          m.mac)) {
        DDIO_WARN("connection %" PRIu64 " from %s refused: authentication failed (the client "
                  "does not hold this server's secret, or replayed an old AUTH)", c->id, c->peer);
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EACCES, "authentication failed: this "
                      "client does not hold the server's secret (check DDIO_SECRET_FILE)");
        return -EACCES;
    }
    if (ddio_auth_mac(&srv->secret, DDIO_AUTH_SERVER, srv->store.id, c->snonce, m.nonce, r.mac)) {
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EIO, "cannot compute HMAC (libcrypto)");
        return -EIO;
    }
    if (auth_done(c))
        return -EBUSY;            /* the reader sends the eviction notice */
    DDIO_INFO("connection %" PRIu64 " from %s authenticated", c->id, c->peer);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_auth_r(&w, &r);
    return reply_w(c, h, &w);
}

/* UCXADDR (only after AUTH, see dispatch; no payload): the reply names this
 * connection's cookie and the server's worker address; a refusal leaves the
 * connection on TCP */
static int on_ucxaddr(struct conn *c, const struct ddio_hdr *h)
{
    if (h->len != 0)
        return bad_payload(c, h);
    pthread_mutex_lock(&c->mu);
    int have = c->uep != NULL;
    pthread_mutex_unlock(&c->mu);
    if (have)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EEXIST, "UCXADDR: this "
                             "connection already has a UCX endpoint"), 0;
    char why[256];
    struct uep *u = ucx_ep_new(c->srv, &c->xp, why, sizeof(why));
    if (!u)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EOPNOTSUPP, "UCXADDR: %s",
                             why), 0;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    if (ucx_ep_reply(u, &w)) {
        ddio_wbuf_free(&w);
        ucx_ep_close(u);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "out of memory"), 0;
    }
    pthread_mutex_lock(&c->mu);
    c->uep = u;
    pthread_mutex_unlock(&c->mu);
    DDIO_INFO("connection %" PRIu64 " from %s: UCX endpoint attached", c->id, c->peer);
    return reply_w(c, h, &w);
}

/* anything but HELLO/AUTH before authentication: refused, logged, closed */
static int refuse_unauth(struct conn *c, const struct ddio_hdr *h)
{
    const char *what = ddio_type_name(h->type);
    DDIO_WARN("connection %" PRIu64 " from %s refused: %s before authentication", c->id,
              c->peer, what);
    conn_send_err(c, h->type | DDIO_REPLY, h->req, EACCES, "%s refused: not authenticated "
                  "(AUTH first)", what);
    return -EACCES;
}

static int on_open(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_open m;
    memset(&m, 0, sizeof(m));
    if (ddio_dec_open(p, h->len, &m))
        return bad_payload(c, h);
    fault_hit(FAULT_OPEN);
    struct ofile *of;
    int created = 0;
    char msg[768];
    int rc = store_open(&c->srv->store, m.path, m.amode, &m.layout, &of, &created,
                        msg, sizeof(msg));
    free(m.path);
    if (rc)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg), 0;
    stats_bump(&c->srv->stats, &c->srv->stats.opens);
    struct ddio_open_r *r = calloc(1, sizeof(*r));
    uint64_t id = r ? handle_add(c, of) : 0;
    if (!id) {
        free(r);
        store_release(&c->srv->store, of);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "open: out of memory"), 0;
    }
    r->handle = id;
    r->local_size = store_size(of);
    r->created = (uint32_t)created;
    r->layout = of->layout;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_open_r(&w, r);
    free(r);
    return reply_w(c, h, &w);
}

static int on_close(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_handle_req m;
    if (ddio_dec_handle_req(p, h->len, &m))
        return bad_payload(c, h);
    int last;
    struct ofile *of = handle_remove(c, m.handle, &last);
    if (!of)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EBADF,
                             "handle %" PRIu64 ": EBADF", m.handle), 0;
    if (last)
        lk_release_owner(&of->locks, c->id);
    store_release(&c->srv->store, of);
    return reply_ok(c, h);
}

static int on_stat(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_handle_req m;
    if (ddio_dec_handle_req(p, h->len, &m))
        return bad_payload(c, h);
    struct ofile *of = handle_get(c, m.handle);
    if (!of)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EBADF,
                             "handle %" PRIu64 ": EBADF", m.handle), 0;
    struct ddio_u64_r r = {.value = store_size(of)};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_u64_r(&w, &r);
    return reply_w(c, h, &w);
}

static int on_setsize(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_setsize m;
    if (ddio_dec_setsize(p, h->len, &m))
        return bad_payload(c, h);
    struct ofile *of = handle_get(c, m.handle);
    if (!of)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EBADF,
                             "handle %" PRIu64 ": EBADF", m.handle), 0;
    int rc = store_setsize(of, m.local_size);
    if (rc)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "set size of %s: %s",
                             of->path, ddio_errno_name(-rc)), 0;
    return reply_ok(c, h);
}

static int on_delete(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_path_req m = {0};
    if (ddio_dec_path_req(p, h->len, &m))
        return bad_payload(c, h);
    char msg[768];
    int rc = store_delete(&c->srv->store, m.path, msg, sizeof(msg));
    free(m.path);
    if (rc)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg), 0;
    return reply_ok(c, h);
}

/* ---- namespace ---- */

static int on_pstat(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_path_req m = {0};
    if (ddio_dec_path_req(p, h->len, &m))
        return bad_payload(c, h);
    char msg[768];
    struct ddio_pstat_r *r = malloc(sizeof(*r));   /* a layout is 4 KiB */
    int rc = r ? store_pstat(&c->srv->store, m.path, r, msg, sizeof(msg)) : -ENOMEM;
    free(m.path);
    if (rc) {
        free(r);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s",
                             r ? msg : "pstat: out of memory"), 0;
    }
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_pstat_r(&w, r);
    free(r);
    return reply_w(c, h, &w);
}

static int on_readdir(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_readdir m;
    struct ddio_readdir_r r;
    char msg[768];
    if (ddio_dec_readdir(p, h->len, &m))
        return bad_payload(c, h);
    int rc = store_readdir(&c->srv->store, m.path, m.cookie, m.max, &r, msg, sizeof(msg));
    free(m.path);
    if (rc)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg), 0;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_readdir_r(&w, &r);
    ddio_readdir_r_free(&r);
    return reply_w(c, h, &w);
}

static int on_mkdir(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_mkdir m;
    char msg[768];
    if (ddio_dec_mkdir(p, h->len, &m))
        return bad_payload(c, h);
    int rc = store_mkdir(&c->srv->store, m.path, m.mode, msg, sizeof(msg));
    free(m.path);
    if (rc)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg), 0;
    return reply_ok(c, h);
}

static int on_rmdir(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_path_req m = {0};
    char msg[768];
    if (ddio_dec_path_req(p, h->len, &m))
        return bad_payload(c, h);
    int rc = store_rmdir(&c->srv->store, m.path, msg, sizeof(msg));
    free(m.path);
    if (rc)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg), 0;
    return reply_ok(c, h);
}

static int on_rename(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_rename m;
    char msg[768];
    if (ddio_dec_rename(p, h->len, &m))
        return bad_payload(c, h);
    int rc = store_rename(&c->srv->store, m.from, m.to, msg, sizeof(msg));
    free(m.from);
    free(m.to);
    if (rc)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg), 0;
    return reply_ok(c, h);
}

static int on_stats(struct conn *c, const struct ddio_hdr *h)
{
    struct server *srv = c->srv;
    struct ddio_stats_r r;
    struct stats_disk dk[DDIO_MAX_ROOTS];
    int nd = srv->ndisks < DDIO_MAX_ROOTS ? srv->ndisks : DDIO_MAX_ROOTS;
    for (int d = 0; d < nd; d++) {
        struct disk_counters dc;
        disk_get_counters(&srv->disks[d], &dc);
        dk[d] = (struct stats_disk){dc.bytes_read, dc.bytes_written, dc.ops, dc.busy_us,
                                    dc.depth};
    }
    struct stats_env env = {.ndisks = nd, .disks = dk, .nroots = srv->cfg.nroots,
                            .roots = srv->cfg.roots, .block_size = srv->cfg.block_size};
    if (stats_snapshot(&srv->stats, &env, &r)) {
        ddio_stats_r_free(&r);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "stats: out of memory"), 0;
    }
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_stats_r(&w, &r);
    ddio_stats_r_free(&r);
    return reply_w(c, h, &w);
}

static struct work *work_new(struct conn *c, const struct ddio_hdr *h, uint8_t **payload,
                             void (*fn)(struct work *))
{
    struct work *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->c = c;
    w->h = *h;
    w->payload = *payload;
    *payload = NULL;              /* the request thread owns it now */
    w->fn = fn;
    return w;
}

/* requests that may wait run on their own thread */
static int on_slow(struct conn *c, const struct ddio_hdr *h, uint8_t **payload)
{
    static void (*const fns[])(struct work *) = {
        [DDIO_T_XFER] = do_xfer, [DDIO_T_SYNC] = do_sync,
        [DDIO_T_PREALLOC] = do_prealloc, [DDIO_T_LOCK] = do_lock,
    };
    struct work *w = work_new(c, h, payload, fns[h->type]);
    if (!w)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "out of memory"), 0;
    uint64_t handle;
    int rc;
    if (h->type == DDIO_T_XFER) {
        rc = ddio_dec_xfer(w->payload, h->len, &w->u.x);
        handle = w->u.x.handle;
    } else if (h->type == DDIO_T_LOCK) {
        rc = ddio_dec_lock(w->payload, h->len, &w->u.lk);
        handle = w->u.lk.handle;
        if (rc == 0 && (w->u.lk.cmd < DDIO_LK_SETLK || w->u.lk.cmd > DDIO_LK_UNLCK
                        || (w->u.lk.cmd != DDIO_LK_UNLCK && !lock_type(w->u.lk.type))))
            rc = -EINVAL;
    } else if (h->type == DDIO_T_PREALLOC) {
        rc = ddio_dec_prealloc(w->payload, h->len, &w->u.pa);
        handle = w->u.pa.handle;
    } else {
        struct ddio_handle_req m;
        rc = ddio_dec_handle_req(w->payload, h->len, &m);
        handle = m.handle;
    }
    if (rc == -EINVAL) {
        free(w->payload);
        free(w);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EINVAL,
                             "lock: bad command or type"), 0;
    }
    if (rc == 0 && h->type == DDIO_T_XFER && w->u.x.desc_len > c->srv->cfg.max_desc) {
        uint32_t len = w->u.x.desc_len;
        free(w->payload);
        free(w);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EMSGSIZE, "descriptor of %u "
                             "bytes exceeds the limit of %" PRIu64 " bytes (--max-desc)", len,
                             c->srv->cfg.max_desc), 0;
    }
    if (rc || !(w->of = handle_retain(c, h, handle))) {
        free(w->payload);
        free(w);
        return rc ? bad_payload(c, h) : 0;
    }
    /* a lock that never waits is answered here, in order with other replies */
    if (h->type == DDIO_T_LOCK && w->u.lk.cmd != DDIO_LK_SETLKW) {
        do_lock(w);
        free(w->payload);
        free(w);
        return 0;
    }
    if (runs_inline(w))
        run_inline(c, w);
    else
        spawn(c, w);
    return 0;
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
    return conn_send(conn_of(ep), type, req, status, payload, len, 0, deadline_ms);
}

static int tcp_progress(struct xp *ep, uint64_t req, int64_t deadline_ms)
{
    return conn_send_progress(conn_of(ep), req, deadline_ms);
}

/* a PUT message: the engine gathers the data straight into its payload */
static int tcp_put(struct xp *ep, uint64_t req, const struct ddio_seg *seg, uint32_t nseg,
                   uint64_t total, const struct xp_src *src, int64_t deadline_ms)
{
    struct ddio_segs m = {.tag = 0, .nseg = nseg, .seg = (struct ddio_seg *)seg,
                          .total = total};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_put(&w, &m);
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

static int ensure_scratch(struct conn *c)
{
    if (c->scratch)
        return 0;
    c->scratch_len = 256u << 10;
    c->scratch = malloc(c->scratch_len);
    return c->scratch ? 0 : -ENOMEM;
}

/* receive the GET's bytes in scratch-sized chunks, each stored by the engine */
static int recv_get(struct conn *c, struct xp_get *g, int64_t dl)
{
    int rc = ensure_scratch(c);
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
static int on_data(struct conn *c, const struct ddio_hdr *h)
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

/* ---- reader --------------------------------------------------------------------------------- */

static int dispatch(struct conn *c, const struct ddio_hdr *h, uint8_t **payload)
{
    const uint8_t *p = *payload;
    if (!c->hello && h->type != DDIO_T_HELLO) {
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EPROTO,
                      "expected HELLO as first message, got %s", ddio_type_name(h->type));
        return -EPROTO;
    }
    if (!atomic_load(&c->authed) && h->type != DDIO_T_HELLO && h->type != DDIO_T_AUTH)
        return refuse_unauth(c, h);
    switch (h->type) {
    case DDIO_T_HELLO:
        if (c->hello) {
            conn_send_err(c, h->type | DDIO_REPLY, h->req, EPROTO, "second HELLO");
            return -EPROTO;
        }
        return on_hello(c, h, p);
    case DDIO_T_AUTH:    return on_auth(c, h, p);
    case DDIO_T_OPEN:    return on_open(c, h, p);
    case DDIO_T_CLOSE:   return on_close(c, h, p);
    case DDIO_T_STAT:    return on_stat(c, h, p);
    case DDIO_T_SETSIZE: return on_setsize(c, h, p);
    case DDIO_T_DELETE:  return on_delete(c, h, p);
    case DDIO_T_STATS:   return on_stats(c, h);
    case DDIO_T_PSTAT:   return on_pstat(c, h, p);
    case DDIO_T_READDIR: return on_readdir(c, h, p);
    case DDIO_T_MKDIR:   return on_mkdir(c, h, p);
    case DDIO_T_RMDIR:   return on_rmdir(c, h, p);
    case DDIO_T_RENAME:  return on_rename(c, h, p);
    case DDIO_T_UCXADDR: return on_ucxaddr(c, h);
    case DDIO_T_XFER:
    case DDIO_T_SYNC:
    case DDIO_T_PREALLOC:
    case DDIO_T_LOCK:    return on_slow(c, h, payload);
    default:
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EPROTO, "unexpected message type %u",
                      h->type);
        return -EPROTO;
    }
}

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
        int n = poll(&pf, 1, wait);
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

static void teardown(struct conn *c)
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
    pthread_mutex_lock(&c->mu);
    for (struct handle *h = c->handles; h; h = h->next)
        lk_release_owner(&h->of->locks, c->id);   /* also cancels its lock waits */
    while (c->workers > 0)
        pthread_cond_wait(&c->cv, &c->mu);
    struct handle *hs = c->handles;
    c->handles = NULL;
    pthread_mutex_unlock(&c->mu);
    while (hs) {
        struct handle *n = hs->next;
        lk_release_owner(&hs->of->locks, c->id);
        store_release(&srv->store, hs->of);
        free(hs);
        hs = n;
    }
    if (c->writer_started)
        pthread_join(c->writer, NULL);
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
    stats_conn(&srv->stats, -1);
    if (atomic_load(&c->authed))
        DDIO_INFO("connection %" PRIu64 " from %s closed", c->id, c->peer);
    else
        DDIO_WARN("connection %" PRIu64 " from %s closed before authenticating", c->id, c->peer);
    conn_unref(c);
}

/* Closing a connection that has not authenticated: the refusal goes where
 * its handshake waits for a reply (HELLO's req 1, AUTH's req 2). */
static void refuse_pending(struct conn *c, int err, const char *why)
{
    DDIO_WARN("connection %" PRIu64 " from %s closed: %s", c->id, c->peer, why);
    conn_send_err(c, (c->hello ? DDIO_T_AUTH : DDIO_T_HELLO) | DDIO_REPLY, c->hello ? 2 : 1,
                  err, "connection closed: %s", why);
    conn_flush(c, ddio_now_ms() + FLUSH_TIMEOUT_MS);
}

static void *reader_main(void *arg)
{
    struct conn *c = arg;
    char why[160];
    int w, rc = 0;
    while ((w = wait_readable(c)) == 0 && !atomic_load(&c->evicted)) {
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
    teardown(c);
    return NULL;
}

/* ---- listener ----------------------------------------------------------------------------- */

int net_listen(struct server *srv, char *err, size_t errlen)
{
    int port = 0;
    int fd = ddio_listen(srv->cfg.listen_host, srv->cfg.listen_port, &port);
    if (fd < 0) {
        snprintf(err, errlen, "listen on %s:%d: %s", srv->cfg.listen_host,
                 srv->cfg.listen_port, strerror(-fd));
        return fd;
    }
    srv->lfd = fd;
    srv->port = port;
    if (strchr(srv->cfg.listen_host, ':'))
        snprintf(srv->name, sizeof(srv->name), "[%s]:%d", srv->cfg.listen_host, port);
    else
        snprintf(srv->name, sizeof(srv->name), "%s:%d", srv->cfg.listen_host, port);
    return 0;
}

static void peer_name(int fd, char *out, size_t n)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
            port = ntohs(a->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
            port = ntohs(a->sin6_port);
        }
    }
    snprintf(out, n, "%s:%d", host, port);
}

static struct conn *conn_new(struct server *srv, int fd)
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

/* Over --max-connections: say so in place of the HELLO reply (the client's
 * first request is HELLO, req 1), then close. Whatever the client already
 * sent is read first, so the close does not reset the refusal away. */
static void refuse_conn(struct server *srv, int fd, uint64_t nrefused)
{
    char msg[512], peer[96];
    peer_name(fd, peer, sizeof(peer));
    snprintf(msg, sizeof(msg), "server %s: too many connections (limit %u, "
             "--max-connections); try again later", srv->name, srv->cfg.max_conns);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_err(&w, msg);
    if (!w.err)
        ddio_send_msg(fd, DDIO_T_HELLO | DDIO_REPLY, 1, EBUSY, w.p, w.len, NULL, 0,
                      ddio_now_ms() + REFUSE_SEND_MS);
    ddio_wbuf_free(&w);
    shutdown(fd, SHUT_WR);
    char sink[512];
    while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
        ;
    close(fd);
    if (nrefused == 1 || nrefused % 100 == 0)   /* a flood must not flood the log */
        DDIO_WARN("connection from %s refused: %u connections open (--max-connections); "
                  "%" PRIu64 " refused so far", peer, srv->cfg.max_conns, nrefused);
}

/* the oldest connection still authenticating (the list is newest first) */
static struct conn *oldest_pending_locked(struct server *srv)
{
    struct conn *old = NULL;
    for (struct conn *c = srv->conns; c; c = c->next)
        if (c->pending)
            old = c;
    return old;
}

static void start_conn(struct server *srv, int fd)
{
    pthread_mutex_lock(&srv->mu);
    if (srv->nconns >= (int)srv->cfg.max_conns) {
        uint64_t k = ++srv->refused;
        pthread_mutex_unlock(&srv->mu);
        refuse_conn(srv, fd, k);
        return;
    }
    pthread_mutex_unlock(&srv->mu);
    struct conn *c = conn_new(srv, fd);
    if (!c) {
        close(fd);
        return;
    }
    struct conn *victim = NULL;
    pthread_mutex_lock(&srv->mu);
    if (srv->npending >= (int)srv->cfg.max_unauth && (victim = oldest_pending_locked(srv))) {
        pending_drop_locked(srv, victim);
        atomic_store(&victim->evicted, 1);   /* under srv->mu: auth_done checks it */
        shutdown(victim->fd, SHUT_RD);       /* its reader sends the notice, closes */
    }
    c->id = ++srv->next_conn_id;
    c->born_ms = ddio_now_ms();
    c->pending = 1;
    srv->npending++;
    c->next = srv->conns;
    srv->conns = c;
    srv->nconns++;
    pthread_mutex_unlock(&srv->mu);
    stats_conn(&srv->stats, 1);
    if (srv->cfg.insecure)
        DDIO_WARN("connection %" PRIu64 " from %s accepted WITHOUT authentication "
                  "(--insecure): it may read and write every file", c->id, c->peer);
    else
        DDIO_INFO("connection %" PRIu64 " from %s", c->id, c->peer);
    if (pthread_create(&c->writer, NULL, writer_main, c) == 0)
        c->writer_started = 1;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (!c->writer_started || pthread_create(&t, &at, reader_main, c) != 0) {
        DDIO_ERR("connection %" PRIu64 ": cannot start threads", c->id);
        teardown(c);
    }
    pthread_attr_destroy(&at);
}

void net_serve(struct server *srv)
{
    while (!atomic_load(&srv->stopping)) {
        struct pollfd pf = {srv->lfd, POLLIN, 0};
        int n = poll(&pf, 1, 250);
        if (n <= 0)
            continue;
        int fd = accept4(srv->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
                DDIO_WARN("accept: %s", strerror(errno));
            if (errno == EMFILE || errno == ENFILE)
                usleep(100000);   /* let connections close before retrying */
            continue;
        }
        ddio_nodelay(fd);
        start_conn(srv, fd);
    }
}

static int busy_conns(struct server *srv)
{
    int busy = 0;
    pthread_mutex_lock(&srv->mu);
    for (struct conn *c = srv->conns; c; c = c->next) {
        pthread_mutex_lock(&c->mu);
        busy += !c->dead && (c->workers > c->idle || c->qhead || c->writing);
        pthread_mutex_unlock(&c->mu);
    }
    pthread_mutex_unlock(&srv->mu);
    return busy;
}

int net_drain(struct server *srv, int wait_ms)
{
    if (srv->lfd >= 0) {
        close(srv->lfd);
        srv->lfd = -1;
    }
    int64_t dl = ddio_now_ms() + wait_ms;
    int busy, idle = 0;
    while ((busy = busy_conns(srv)) > 0 || ++idle < 2) {
        if (busy)
            idle = 0;
        if (ddio_now_ms() >= dl || atomic_load(&srv->signals) > 1)
            break;
        usleep(50000);
    }
    return busy;
}

void net_stop(struct server *srv, int wait_ms)
{
    atomic_store(&srv->closing, 1);
    if (srv->lfd >= 0) {
        close(srv->lfd);
        srv->lfd = -1;
    }
    engine_shutdown(srv);
    pthread_mutex_lock(&srv->mu);
    for (struct conn *c = srv->conns; c; c = c->next)
        conn_kill(c, "server shutting down");
    int64_t dl = ddio_now_ms() + wait_ms;
    while (srv->nconns > 0 && ddio_now_ms() < dl) {
        struct timespec ts = {.tv_sec = dl / 1000, .tv_nsec = (dl % 1000) * 1000000};
        pthread_cond_timedwait(&srv->cv, &srv->mu, &ts);
    }
    int left = srv->nconns;
    pthread_mutex_unlock(&srv->mu);
    if (left)
        DDIO_WARN("%d connection(s) still closing at exit", left);
}
