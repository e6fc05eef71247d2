/* The UCX transport (ucx.h, ddio_ucx.h, docs/TRANSPORT.md).
 *
 * PUT (read data): one active message per put, its header naming the
 * client's token and the stream segments, its body the block's bytes: in
 * place when they are one range of the block, else packed into the engine
 * thread's staging area (UCX's zero-copy rendezvous needs a contiguous
 * buffer). Sends are left in flight; the engine calls sync after a block's
 * puts, before it reuses the block, and the thread waits there.
 * GET (write data): the GET message goes on the TCP connection; the client
 * answers with a DATA active message whose body the server receives straight
 * into the block when the GET's bytes are one range of it (else into a
 * staging buffer, then scattered). That happens in whichever thread
 * progresses the worker: the progress thread, which sleeps on the worker's
 * fd between events, or an engine thread in sync.
 *
 * Large bodies travel by UCX's rendezvous: the receiver fetches them from
 * the sender's memory (CMA on one host, RDMA on a fabric), so each byte is
 * copied once. Nothing here holds one of its own mutexes while calling
 * into UCX: callbacks run under UCX's worker lock and take ours. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ucx.h"
#include "cond.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "ddio_ucx.h"
#include "engine.h"
#include "server.h"

#ifndef DDIO_HAVE_UCX

int ucx_start(struct server *srv, char *err, size_t n)
{
    if (srv->cfg.transport == DDIO_XPORT_UCX) {
        snprintf(err, n, "--transport ucx: this server was built without UCX (libucx-dev)");
        return -ENOSYS;
    }
    return 0;
}
void ucx_stop(struct server *srv) { (void)srv; }
void ucx_destroy(struct server *srv) { (void)srv; }
int ucx_offered(const struct server *srv) { (void)srv; return 0; }
struct uep *ucx_ep_new(struct server *srv, struct xp *ctl, char *err, size_t n)
{
    (void)srv; (void)ctl;
    snprintf(err, n, "this server has no UCX");
    return NULL;
}
int ucx_ep_reply(struct uep *u, struct ddio_wbuf *w) { (void)u; (void)w; return -ENOSYS; }
int ucx_bind(struct uep *u, uint64_t req, const struct ddio_xfer *m, char *err, size_t n)
{
    (void)u; (void)req; (void)m;
    snprintf(err, n, "this server has no UCX");
    return -EPROTO;
}
struct xp *ucx_xp(struct uep *u) { (void)u; return NULL; }
void ucx_ep_close(struct uep *u) { (void)u; }

#else

#include <ucs/debug/log_def.h>

/* UCX 1.13's wake-up fd can miss a shared-memory event (ddio leaves the
 * posix/sysv transports out unless UCX_TLS names them, see ddio_ucx.c): the
 * progress thread's sleep is sliced so a missed one costs at most this */
#define PROGRESS_SLICE_MS 1
/* after this long without events the thread sleeps in longer slices (an
 * idle server at 1 ms slices took 3 % of a core); the first event after a
 * quiet spell is noticed by the fd, or at worst after IDLE_SLICE_MS */
#define IDLE_AFTER_MS 2000
#define IDLE_SLICE_MS 50
/* an engine thread waiting for its sends sleeps at most this between its own
 * rounds of progress */
#define SYNC_SLICE_MS 1
/* how long an XFER waits for its connection's ATTACH message */
#define ATTACH_WAIT_MS 5000
/* how long a closing endpoint may take to hand back its operations */
#define CLOSE_WAIT_MS 10000
/* how long a connection's end waits for its endpoint's flushing close (a
 * dead client's may never end: it is then left to UCX) */
#define CLOSE_QUICK_MS 200
/* how long an engine thread waits for its sends once one's endpoint closed */
#define CLOSED_GRACE_MS 200

struct srv_ucx {
    struct ddio_ucx *u;
    const struct ddio_ucx_api *api;
    ucp_worker_h w;
    pthread_t thr;
    atomic_int stop;
    _Atomic int64_t last_op_ms;  /* when a put, a get or an endpoint was last asked for */
    pthread_key_t tkey;          /* per engine thread: struct tput */
    pthread_mutex_t mu;          /* ueps, given_up */
    atomic_int eps_wanted;       /* an ATTACH left an address for make_eps */
    struct uep *ueps;            /* attached endpoints, found by cookie */
    struct opset *given_up;      /* sends that outlived their endpoint (freed at destroy) */
};

/* a request's token and stream length, from its XFER until its DONE */
struct bind {
    uint64_t req, token, len;
    struct bind *next;
};

struct uep {
    struct xp xp;
    struct xp *ctl;              /* the TCP connection (referenced) */
    struct srv_ucx *su;
    ucp_ep_h ep;
    uint64_t cookie;
    atomic_int refs;
    pthread_mutex_t mu;          /* below */
    pthread_cond_t cv;           /* CLOCK_MONOTONIC */
    int dead;                    /* closed: no new operations */
    int users;                   /* threads issuing operations on ep now */
    int closed;                  /* ep released */
    void *peer;                  /* the client's worker address, from its
                                  * ATTACH, until make_eps made ep of it */
    size_t peer_len;
    ucp_ep_h reply_ep;           /* UCX's, from the ATTACH: the way back
                                  * only if ours cannot be made */
    int attach_failed;           /* no endpoint: XFERs fail at once */
    int ep_ours;                 /* ep made by make_eps (else a reply
                                  * endpoint, UCX's to close) */
    struct bind *binds;
    struct xp_get *gets;         /* GETs waiting for their DATA */
    struct fill *fills;          /* DATA being received (cancel waits for them) */
    struct uep *next;            /* su->ueps */
};

/* a DATA being received for a GET of owner */
struct fill {
    const void *owner;
    struct fill *next;
};

/* completion counter of a batch of operations */
struct opset {
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* CLOCK_MONOTONIC; signalled as left drops */
    int left;
    ucs_status_t st;
    struct psend *live;          /* its sends in flight */
    uint8_t *stage;              /* given up: the staging area they read */
    struct opset *next;          /* given up: su->given_up */
};

/* an engine thread's puts in flight since its last sync, and their staging.
 * o (with the staging area) is left to the sends that never ended when a
 * closed endpoint's sends do not end: UCX without peer-failure handling
 * need not complete them, and a late completion must find its opset alive.
 * The thread's next put or sync makes a new one (tput_get). */
struct tput {
    struct srv_ucx *su;
    struct opset *o;
    uint8_t *stage;
    size_t cap, used;
};

/* one send in flight */
struct psend {
    struct opset *o;
    struct psend *prev, *next;   /* o->live */
    struct srv_ucx *su;
    struct uep *u;               /* its endpoint: alive while the send is live
                                  * (the XFER holds it, and syncs every block) */
    struct ddio_wbuf hdr;
    void *buf;                   /* the body: one contiguous range */
    size_t len;
};

static struct opset *opset_new(void)
{
    struct opset *o = calloc(1, sizeof(*o));
    if (o) {
        pthread_mutex_init(&o->mu, NULL);
        cond_init_mono(&o->cv);
    }
    return o;
}

static void psend_free(struct psend *ps)
{
    ddio_wbuf_free(&ps->hdr);
    free(ps);
}

static void opset_free(struct opset *o)
{
    while (o->live) {             /* given up and never completed */
        struct psend *ps = o->live;
        o->live = ps->next;
        psend_free(ps);
    }
    free(o->stage);
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
    free(o);
}

static int opset_left(struct opset *o)
{
    pthread_mutex_lock(&o->mu);
    int left = o->left;
    pthread_mutex_unlock(&o->mu);
    return left;
}

/* ---- the progress thread ------------------------------------------------------------ */

static void make_eps(struct srv_ucx *su);

static void *progress_main(void *arg)
{
    struct srv_ucx *su = arg;
    int efd = ddio_ucx_efd(su->u);
    int64_t busy_until = 0;
    while (!atomic_load(&su->stop)) {
        if (atomic_exchange(&su->eps_wanted, 0))
            make_eps(su);
        if (ddio_ucx_prepare_wait(su->u)) {
            busy_until = ddio_now_ms() + IDLE_AFTER_MS;
            continue;
        }
        struct pollfd pf = {.fd = efd, .events = POLLIN};
        int64_t now = ddio_now_ms();
        int busy = now < busy_until || now < atomic_load(&su->last_op_ms) + IDLE_AFTER_MS;
        int woke = poll(&pf, 1, busy ? PROGRESS_SLICE_MS : IDLE_SLICE_MS);
        if (woke > 0)
            busy_until = ddio_now_ms() + IDLE_AFTER_MS;
    }
    return NULL;
}

/* o->mu held: one of o's sends in flight goes to a closed endpoint */
static int to_closed_locked(const struct opset *o)
{
    for (const struct psend *ps = o->live; ps; ps = ps->next)
        if (ps->u && __atomic_load_n(&ps->u->closed, __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

/* progress until o has nothing left, or the deadline: 0 / -ETIMEDOUT, or
 * -ECONNRESET when a send went to an endpoint closed CLOSED_GRACE_MS ago.
 * Between rounds the thread sleeps on o's condition (the progress thread
 * completes the sends when their acknowledgements arrive) instead of
 * spinning: on a host with fewer cores than processes a spinning server
 * takes the CPU the rank needs to fetch the block. */
static int progress_until(struct srv_ucx *su, struct opset *o, int64_t dl)
{
    int64_t closed_at = 0;
    while (opset_left(o) > 0) {
        if (ddio_ucx_progress(su->u))
            continue;
        int64_t now = ddio_now_ms();
        if (now >= dl)
            return -ETIMEDOUT;
        pthread_mutex_lock(&o->mu);
        /* a send to an endpoint closed meanwhile (its client died) may
         * never end: rather than the XFER's whole deadline, the close gets
         * a moment to hand it back (a rank killed mid-read held both servers
         * for the deadline: rank-killed) */
        if (!closed_at && o->left > 0 && to_closed_locked(o))
            closed_at = now;
        int gone = closed_at && now >= closed_at + CLOSED_GRACE_MS;
        if (o->left > 0 && !gone)
            cond_wait_ms(&o->cv, &o->mu, now + SYNC_SLICE_MS);
        pthread_mutex_unlock(&o->mu);
        if (gone && opset_left(o) > 0)
            return -ECONNRESET;
    }
    return 0;
}

static void give_up(struct tput *t);

/* the thread ends; sends it left in flight (only ever ones given up, as
 * the engine syncs after every block) keep their opset */
static void tput_free(void *p)
{
    struct tput *t = p;
    if (t->o && opset_left(t->o) > 0)
        give_up(t);
    if (t->o)
        opset_free(t->o);
    free(t->stage);
    free(t);
}

static struct tput *tput_get(struct srv_ucx *su)
{
    struct tput *t = pthread_getspecific(su->tkey);
    if (!t && (t = calloc(1, sizeof(*t)))) {
        t->su = su;
        pthread_setspecific(su->tkey, t);
    }
    if (t && !t->o && !(t->o = opset_new()))
        return NULL;              /* new, or its opset was given up */
    return t;
}

int ucx_offered(const struct server *srv)
{
    return srv->ucx != NULL;
}

static ucs_status_t data_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                            const ucp_am_recv_param_t *p);
static ucs_status_t attach_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                              const ucp_am_recv_param_t *p);

static int set_handler(struct srv_ucx *su, unsigned id, ucp_am_recv_callback_t cb, char *err,
                       size_t n)
{
    ucp_am_handler_param_t hp = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                                               UCP_AM_HANDLER_PARAM_FIELD_CB |
                                               UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                 .id = id, .cb = cb, .arg = su};
    ucs_status_t st = su->api->worker_set_am_recv_handler(su->w, &hp);
    if (st != UCS_OK)
        snprintf(err, n, "UCX: active message handler: %s", su->api->status_string(st));
    return st == UCS_OK ? 0 : -EIO;
}

/* UCX logs a failed flush as an error. The server closes an endpoint of
 * its own (a flushing close, ddio_ucx_close_ep) when the client's TCP
 * connection ends, mostly because the client exited: its failed flush is
 * expected there, and kept out of the server's log. */
static ucs_log_func_rc_t quiet_flush(const char *file, unsigned line, const char *fn,
                                     ucs_log_level_t level,
                                     const ucs_log_component_config_t *cc, const char *msg,
                                     va_list ap)
{
    (void)file;
    (void)line;
    (void)fn;
    (void)cc;
    (void)ap;
    return level == UCS_LOG_LEVEL_ERROR && msg && strstr(msg, "error during flush")
               ? UCS_LOG_FUNC_RC_STOP : UCS_LOG_FUNC_RC_CONTINUE;
}

static void quiet_flush_errors(void)
{
    void (*push)(ucs_log_func_t);
    *(void **)&push = dlsym(RTLD_DEFAULT, "ucs_log_push_handler");  /* libucs: ddio_ucx.c */
    if (push)
        push(quiet_flush);
}

static int su_init(struct srv_ucx *su, struct ddio_ucx *u, char *err, size_t n)
{
    su->u = u;
    su->api = ddio_ucx_api();
    su->w = ddio_ucx_worker(u);
    pthread_mutex_init(&su->mu, NULL);
    quiet_flush_errors();
    if (set_handler(su, DDIO_AM_DATA, data_cb, err, n) ||
        set_handler(su, DDIO_AM_ATTACH, attach_cb, err, n))
        return -EIO;
    if (pthread_key_create(&su->tkey, tput_free)) {
        snprintf(err, n, "out of thread keys");
        return -EAGAIN;
    }
    if (pthread_create(&su->thr, NULL, progress_main, su)) {
        pthread_key_delete(su->tkey);
        snprintf(err, n, "cannot start the UCX progress thread");
        return -EAGAIN;
    }
    return 0;
}

int ucx_start(struct server *srv, char *err, size_t n)
{
    char why[256];
    if (ddio_xport_resolve(srv->cfg.transport, -1, why, sizeof(why)) == DDIO_XPORT_TCP) {
        if (srv->cfg.transport == DDIO_XPORT_AUTO)
            DDIO_INFO("UCX not offered (%s): data moves over TCP", why);
        return 0;
    }
    struct ddio_ucx *u = ddio_ucx_open(why, sizeof(why));
    if (!u) {
        if (srv->cfg.transport == DDIO_XPORT_UCX) {
            snprintf(err, n, "--transport ucx: %s", why);
            return -ENOSYS;
        }
        DDIO_WARN("UCX not available (%s): data moves over TCP only", why);
        return 0;
    }
    struct srv_ucx *su = calloc(1, sizeof(*su));
    int rc = su ? su_init(su, u, err, n) : -ENOMEM;
    if (rc) {
        if (!su)
            snprintf(err, n, "out of memory");
        free(su);
        ddio_ucx_close(u);
        return rc;
    }
    srv->ucx = su;
    DDIO_INFO("UCX: data by active messages offered to clients");
    return 0;
}

void ucx_stop(struct server *srv)
{
    struct srv_ucx *su = srv->ucx;
    if (!su)
        return;
    atomic_store(&su->stop, 1);
    su->api->worker_signal(su->w);
    pthread_join(su->thr, NULL);
}

void ucx_destroy(struct server *srv)
{
    struct srv_ucx *su = srv->ucx;
    if (!su)
        return;
    srv->ucx = NULL;
    pthread_key_delete(su->tkey);
    pthread_mutex_destroy(&su->mu);
    ddio_ucx_close(su->u);        /* no callback runs after this */
    while (su->given_up) {
        struct opset *o = su->given_up;
        su->given_up = o->next;
        opset_free(o);
    }
    free(su);
}

/* ---- endpoints ---------------------------------------------------------------------------- */

static struct uep *uep_of(const struct xp *ep)
{
    return (struct uep *)((char *)ep - offsetof(struct uep, xp));
}

static void uep_ref(struct xp *ep)
{
    atomic_fetch_add(&uep_of(ep)->refs, 1);
}

/* Release the UCX endpoint (once): no new operation starts on it, and ours
 * is closed. The close flushes (UCX 1.13 force-closes only endpoints in
 * peer-failure mode): at once when the client's failure discarded its
 * lanes, else left to UCX after CLOSE_QUICK_MS; a thread still waiting for
 * sends to it gives them up CLOSED_GRACE_MS later (progress_until). */
static void uep_release_ep(struct uep *u)
{
    pthread_mutex_lock(&u->mu);
    u->dead = 1;
    while (u->users > 0)
        pthread_cond_wait(&u->cv, &u->mu);
    int first = !u->closed;
    __atomic_store_n(&u->closed, 1, __ATOMIC_RELEASE);   /* read by progress_until */
    ucp_ep_h ep = u->ep_ours ? u->ep : NULL;
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
    if (!first)
        return;
    pthread_mutex_lock(&u->su->mu);           /* no DATA finds it any more */
    for (struct uep **pp = &u->su->ueps; *pp; pp = &(*pp)->next)
        if (*pp == u) {
            *pp = u->next;
            break;
        }
    pthread_mutex_unlock(&u->su->mu);
    if (ep)                       /* else never attached, or UCX's reply endpoint */
        ddio_ucx_close_ep(u->su->u, ep, ddio_now_ms() + CLOSE_QUICK_MS);
}

static void uep_unref(struct xp *ep)
{
    struct uep *u = uep_of(ep);
    if (atomic_fetch_sub(&u->refs, 1) != 1)
        return;
    uep_release_ep(u);
    while (u->binds) {
        struct bind *b = u->binds;
        u->binds = b->next;
        free(b);
    }
    free(u->peer);
    xp_unref(u->ctl);
    pthread_mutex_destroy(&u->mu);
    pthread_cond_destroy(&u->cv);
    free(u);
}

static const char *uep_name(const struct xp *ep)
{
    return xp_name(uep_of(ep)->ctl);
}

/* a thread starts issuing operations: 0, or -ECONNRESET once closed */
static int uep_enter(struct uep *u)
{
    pthread_mutex_lock(&u->mu);
    int dead = u->dead;
    if (!dead)
        u->users++;
    pthread_mutex_unlock(&u->mu);
    return dead ? -ECONNRESET : 0;
}

static void uep_leave(struct uep *u)
{
    pthread_mutex_lock(&u->mu);
    if (--u->users == 0)
        pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
}

static int bind_find(struct uep *u, uint64_t req, struct bind *out)
{
    pthread_mutex_lock(&u->mu);
    struct bind *b = u->binds;
    while (b && b->req != req)
        b = b->next;
    if (b)
        *out = *b;
    pthread_mutex_unlock(&u->mu);
    return b ? 0 : -1;
}

static void bind_drop(struct uep *u, uint64_t req)
{
    struct bind *found = NULL;
    pthread_mutex_lock(&u->mu);
    for (struct bind **pp = &u->binds; *pp; pp = &(*pp)->next)
        if ((*pp)->req == req) {
            found = *pp;
            *pp = found->next;
            break;
        }
    pthread_mutex_unlock(&u->mu);
    free(found);
}

/* the segments lie inside the rank's stream */
static int segs_inside(uint64_t len, const struct ddio_seg *seg, uint32_t nseg)
{
    for (uint32_t i = 0; i < nseg; i++)
        if (seg[i].off > len || seg[i].len > len - seg[i].off)
            return 0;
    return 1;
}

/* ---- block pieces in place ----------------------------------------------------------- */

/* the block bytes as one range, when the pieces are adjacent */
struct range {
    uint8_t *p;
    uint64_t n;
};

static int extend_range(void *arg, uint8_t *p, uint64_t s, uint64_t n)
{
    struct range *r = arg;
    (void)s;
    if (r->p && r->p + r->n != p)
        return 1;                 /* a gap: not one range (the walk stops) */
    if (!r->p)
        r->p = p;
    r->n += n;
    return 0;
}

/* 1 and *r if the block bytes are one contiguous range, to move in place;
 * else 0: they are packed into (unpacked from) a staging area. UCX 1.13
 * reads a rendezvous body straight from the sender's memory (CMA, RDMA)
 * only when both sides are contiguous; an iovec made it fall back to
 * fragments that both sides must progress, 2-4x slower than packing
 * (docs/TRANSPORT.md). */
static int one_range(xp_walk_fn *walk, void *arg, struct range *r)
{
    *r = (struct range){NULL, 0};
    return walk && walk(arg, extend_range, r) == 0 && r->p;
}

/* ---- PUT ------------------------------------------------------------------------------------ */

/* a send ended (st) or, without a request, never started: off its opset,
 * which counts it done */
static void psend_end(struct psend *ps, ucs_status_t st)
{
    struct opset *o = ps->o;
    pthread_mutex_lock(&o->mu);
    if (ps->prev)
        ps->prev->next = ps->next;
    else
        o->live = ps->next;
    if (ps->next)
        ps->next->prev = ps->prev;
    if (st != UCS_OK && o->st == UCS_OK)
        o->st = st;
    if (--o->left == 0)
        pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
    psend_free(ps);
}

static void psend_cb(void *request, ucs_status_t st, void *user)
{
    struct psend *ps = user;
    ps->su->api->request_free(request);
    psend_end(ps, st);
}

static int ucs_errno(ucs_status_t st)
{
    return st == UCS_OK ? 0 : st == UCS_ERR_CANCELED ? -ECONNRESET : -EIO;
}

/* the thread's opset and staging area go to su->given_up with their sends;
 * t is left with neither (tput_get makes the next opset) */
static void give_up(struct tput *t)
{
    t->o->stage = t->stage;       /* the stuck sends keep both until the server ends */
    pthread_mutex_lock(&t->su->mu);
    t->o->next = t->su->given_up;
    t->su->given_up = t->o;
    pthread_mutex_unlock(&t->su->mu);
    t->o = NULL;
    t->stage = NULL;
    t->cap = t->used = 0;
}

/* Sends that outlived their endpoint's close (seen with UCX 1.13 and no
 * peer-failure handling: a rendezvous send whose receiver never fetches
 * stays in flight): leave them the opset and staging area they use, so a
 * late completion or fetch finds them, and start fresh ones. -EBUSY: the
 * caller must not reuse the blocks they read either. */
static int abandon_sends(struct tput *t, const char *peer)
{
    DDIO_WARN("UCX: %d send(s) to %s still in flight after the endpoint closed: their "
              "buffers are given up", opset_left(t->o), peer);
    give_up(t);
    return -EBUSY;
}

/* Wait for the calling thread's sends (all endpoints): the blocks and the
 * staging area they read from are free again. Past the deadline the
 * endpoint is closed; -EBUSY when even then some send did not end. */
static int ux_sync(struct xp *ep, int64_t dl)
{
    struct uep *u = uep_of(ep);
    struct tput *t = tput_get(u->su);
    if (!t)
        return -ENOMEM;
    int rc = progress_until(u->su, t->o, dl);
    if (rc == -ECONNRESET)
        return abandon_sends(t, xp_name(u->ctl));
    if (rc) {
        DDIO_WARN("UCX: sends to %s did not complete in time: endpoint closed", xp_name(u->ctl));
        uep_release_ep(u);        /* then given CLOSED_GRACE_MS to end */
        if (progress_until(u->su, t->o, ddio_now_ms() + CLOSE_WAIT_MS))
            return abandon_sends(t, xp_name(u->ctl));
    }
    pthread_mutex_lock(&t->o->mu);
    if (!rc)
        rc = ucs_errno(t->o->st);
    t->o->st = UCS_OK;
    pthread_mutex_unlock(&t->o->mu);
    t->used = 0;
    return rc;
}

/* room for n staged bytes in the thread's area (syncing first when full) */
static uint8_t *stage_room(struct xp *ep, struct tput *t, uint64_t n, int64_t dl, int *rc)
{
    if (t->used + n > t->cap && opset_left(t->o) > 0 && (*rc = ux_sync(ep, dl)))
        return NULL;
    if (opset_left(t->o) == 0)
        t->used = 0;              /* no send reads the area any more */
    if (t->used + n > t->cap) {
        size_t cap = n > (4u << 20) ? n : (4u << 20);
        uint8_t *p = t->used == 0 ? realloc(t->stage, cap) : NULL;
        if (!p) {
            *rc = -ENOMEM;
            return NULL;
        }
        t->stage = p;
        t->cap = cap;
    }
    uint8_t *p = t->stage + t->used;
    t->used += n;
    return p;
}

static struct psend *psend_new(struct srv_ucx *su, struct tput *t)
{
    struct psend *ps = calloc(1, sizeof(*ps));
    if (ps) {
        ps->su = su;
        ddio_wbuf_init(&ps->hdr);
    }
    return ps;
}

static int ux_put(struct xp *ep, uint64_t req, const struct ddio_seg *seg, uint32_t nseg,
                  uint64_t total, const struct xp_src *src, int64_t dl)
{
    struct uep *u = uep_of(ep);
    atomic_store(&u->su->last_op_ms, ddio_now_ms());
    struct tput *t = tput_get(u->su);
    struct bind b;
    if (bind_find(u, req, &b) || !segs_inside(b.len, seg, nseg))
        return -EFAULT;           /* the rank's buffer is shorter than its stream */
    struct range in_place;
    int direct = one_range(src->walk, src->arg, &in_place);
    struct psend *ps = t ? psend_new(u->su, t) : NULL;
    if (!ps)
        return -ENOMEM;
    int rc = 0;
    if (direct) {
        ps->buf = in_place.p;
        ps->len = in_place.n;
    } else {
        uint8_t *p = stage_room(ep, t, total, dl, &rc);
        if (p)
            src->fill(src->arg, p, total);
        ps->buf = p;
        ps->len = total;
    }
    struct ddio_segs m = {.tag = 0, .nseg = nseg, .seg = (struct ddio_seg *)seg, .total = total};
    ddio_enc_am_put(&ps->hdr, b.token, &m);
    if (!rc && ps->hdr.err)
        rc = -ENOMEM;
    if (!rc)
        rc = uep_enter(u);
    if (rc) {
        psend_free(ps);
        return rc;
    }
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                              UCP_OP_ATTR_FIELD_USER_DATA,
                              .cb.send = psend_cb, .user_data = ps};
    ps->o = t->o;                 /* after stage_room: a sync there may replace it */
    ps->u = u;
    pthread_mutex_lock(&ps->o->mu);
    ps->o->left++;
    ps->next = ps->o->live;
    if (ps->next)
        ps->next->prev = ps;
    ps->o->live = ps;
    pthread_mutex_unlock(&ps->o->mu);
    ucs_status_ptr_t r = u->su->api->am_send_nbx(u->ep, DDIO_AM_PUT, ps->hdr.p, ps->hdr.len,
                                                 ps->buf, ps->len, &rp);
    uep_leave(u);
    if (r == NULL || UCS_PTR_IS_ERR(r)) {          /* done at once: no callback */
        psend_end(ps, r ? UCS_PTR_STATUS(r) : UCS_OK);
        if (r)
            return -EIO;
    }
    stats_ucx(&ep->srv->stats, total, 0, direct ? 0 : total);
    return 0;
}

/* ---- GET ------------------------------------------------------------------------------------ */

/* The GET message goes on the control connection; the answer is a DATA
 * active message (data_cb). Registered before the GET leaves. */
static int ux_get(struct xp *ep, struct xp_get *g, int64_t dl)
{
    struct uep *u = uep_of(ep);
    atomic_store(&u->su->last_op_ms, ddio_now_ms());
    struct bind b;
    pthread_mutex_lock(&u->mu);
    int dead = u->dead;
    g->next = u->gets;
    u->gets = g;
    pthread_mutex_unlock(&u->mu);
    if (dead)
        return -ECONNRESET;
    if (bind_find(u, g->req, &b) || !segs_inside(b.len, g->seg, g->nseg))
        return -EFAULT;
    struct ddio_wbuf w;
    if (xp_enc_get(g, &w))
        return -ENOMEM;
    return xp_reply(u->ctl, DDIO_T_GET, g->req, 0, w.p, w.len, dl);
}

/* one DATA body being received */
struct drecv {
    struct fill fill;
    struct uep *u;
    struct xp_get *g;
    uint8_t *stage;              /* staged: the GET's bytes in stream order */
    void *buf;                   /* the body: one contiguous range */
    size_t len;
};

/* the GET whose DATA this is, taken off the list; f marks the receive until
 * unfill, so cancel waits for it */
static struct xp_get *claim(struct uep *u, uint64_t req, uint32_t tag, struct fill *f)
{
    pthread_mutex_lock(&u->mu);
    struct xp_get *g = NULL;
    for (struct xp_get **pp = &u->gets; *pp; pp = &(*pp)->next)
        if ((*pp)->req == req && (*pp)->tag == tag) {
            g = *pp;
            *pp = g->next;
            f->owner = g->owner;
            f->next = u->fills;
            u->fills = f;
            break;
        }
    pthread_mutex_unlock(&u->mu);
    return g;
}

/* f stops marking a receive (replaced by by, when given) */
static void unfill(struct uep *u, struct fill *f, struct fill *by)
{
    pthread_mutex_lock(&u->mu);
    for (struct fill **pp = &u->fills; *pp; pp = &(*pp)->next)
        if (*pp == f) {
            *pp = f->next;
            break;
        }
    if (by) {
        by->next = u->fills;
        u->fills = by;
    }
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
}

/* the bytes are in place (or failed): hand the GET back to the engine */
static void drecv_end(struct drecv *d, ucs_status_t st)
{
    struct xp_get *g = d->g;
    struct uep *u = d->u;
    if (st == UCS_OK && d->stage) {
        uint64_t off = 0;
        for (uint32_t i = 0; i < g->nseg; off += g->seg[i].len, i++)
            engine_get_sink(g, i, g->seg[i].off, d->stage + off, g->seg[i].len);
    }
    if (st == UCS_OK)
        stats_ucx(&u->xp.srv->stats, 0, g->total, d->stage ? g->total : 0);
    char why[256] = "";
    if (st != UCS_OK)
        snprintf(why, sizeof(why), "receiving DATA from %s: %s", xp_name(u->ctl),
                 u->su->api->status_string(st));
    engine_get_done(g, -ucs_errno(st), st == UCS_OK ? NULL : why);
    unfill(u, &d->fill, NULL);
    free(d->stage);
    free(d);
    xp_unref(&u->xp);
}

static void drecv_cb(void *req, ucs_status_t st, size_t len, void *arg)
{
    struct drecv *d = arg;
    (void)len;
    d->u->su->api->request_free(req);
    drecv_end(d, st);
}

static struct drecv *drecv_new(struct uep *u, struct xp_get *g)
{
    struct range in_place;
    struct drecv *d = calloc(1, sizeof(*d));
    if (!d)
        return NULL;
    d->u = u;
    d->g = g;
    d->fill.owner = g->owner;
    if (one_range(g->walk, g, &in_place)) {
        d->buf = in_place.p;
        d->len = in_place.n;
    } else if ((d->stage = malloc(g->total))) {
        d->buf = d->stage;
        d->len = g->total;
    } else {
        free(d);
        return NULL;
    }
    return d;
}

static struct uep *uep_by_cookie(struct srv_ucx *su, uint64_t cookie)
{
    pthread_mutex_lock(&su->mu);
    struct uep *u = su->ueps;
    while (u && u->cookie != cookie)
        u = u->next;
    if (u)
        atomic_fetch_add(&u->refs, 1);
    pthread_mutex_unlock(&su->mu);
    return u;
}

/* the GET is not answered by this DATA: the XFER fails */
static void refuse(struct uep *u, struct xp_get *g, struct fill *f, int err, const char *why)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "DATA from %s: %s", xp_name(u->ctl), why);
    engine_get_drop(g, err, msg);
    unfill(u, f, NULL);
}

static ucs_status_t data_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                            const ucp_am_recv_param_t *p)
{
    struct srv_ucx *su = arg;
    uint64_t cookie, req;
    uint32_t tag;
    struct fill tmp;
    struct uep *u = ddio_dec_am_data(hdr, hlen, &cookie, &req, &tag) ? NULL
                  : uep_by_cookie(su, cookie);
    struct xp_get *g = u ? claim(u, req, tag, &tmp) : NULL;
    struct drecv *d = NULL;
    if (g && len != g->total)
        refuse(u, g, &tmp, EPROTO, "its length does not match its GET's");
    else if (g && !(d = drecv_new(u, g)))
        refuse(u, g, &tmp, ENOMEM, "out of memory");
    if (!d) {                     /* unknown, late (cancelled) or refused: dropped */
        if (u)
            xp_unref(&u->xp);
        return UCS_OK;
    }
    unfill(u, &tmp, &d->fill);
    if (!(p->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {   /* eager: the bytes are here */
        memcpy(d->buf, data, d->len);
        drecv_end(d, UCS_OK);
        return UCS_OK;
    }
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                              UCP_OP_ATTR_FIELD_USER_DATA,
                              .cb.recv_am = drecv_cb, .user_data = d};
    ucs_status_ptr_t r = su->api->am_recv_data_nbx(su->w, data, d->buf, d->len, &rp);
    if (r == NULL || UCS_PTR_IS_ERR(r))
        drecv_end(d, r ? UCS_PTR_STATUS(r) : UCS_OK);
    return UCS_INPROGRESS;
}

/* ATTACH (the first one of a cookie; an unknown cookie is dropped): the
 * client's worker address, from which make_eps makes the server's own
 * endpoint back to it, outside this callback. A client of before sends no
 * address: its reply endpoint is used, as then. */
static ucs_status_t attach_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                              const ucp_am_recv_param_t *p)
{
    struct srv_ucx *su = arg;
    uint64_t cookie = 0;
    ucp_ep_h reply = (p->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? p->reply_ep : NULL;
    /* an address is here now (eager), never fetched */
    if (hlen != 8 || len > DDIO_MAX_UCXADDR || (p->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ||
        (len && !data) || (!len && !reply))
        return UCS_OK;
    for (int i = 0; i < 8; i++)
        cookie |= (uint64_t)((const uint8_t *)hdr)[i] << (8 * i);
    struct uep *u = uep_by_cookie(su, cookie);
    if (!u)
        return UCS_OK;
    void *peer = len ? malloc(len) : NULL;
    if (peer)
        memcpy(peer, data, len);
    pthread_mutex_lock(&u->mu);
    if (!u->ep && !u->peer && !u->dead) {
        if (peer) {
            u->peer = peer;
            u->peer_len = len;
            u->reply_ep = reply;
            peer = NULL;
            atomic_store(&su->eps_wanted, 1);   /* this thread, once back from progress */
        } else if (!len)
            u->ep = reply;
        else
            u->attach_failed = 1;               /* out of memory */
    }
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
    free(peer);
    xp_unref(&u->xp);
    return UCS_OK;
}

/* the next endpoint an ATTACH asked for (a reference taken), or NULL; only
 * the progress thread makes endpoints, so none is picked twice */
static struct uep *eps_next(struct srv_ucx *su)
{
    struct uep *u = NULL;
    pthread_mutex_lock(&su->mu);
    for (struct uep *x = su->ueps; x && !u; x = x->next) {
        pthread_mutex_lock(&x->mu);
        if (x->peer && !x->ep && !x->dead && !x->attach_failed) {
            u = x;
            atomic_fetch_add(&u->refs, 1);
        }
        pthread_mutex_unlock(&x->mu);
    }
    pthread_mutex_unlock(&su->mu);
    return u;
}

/* The server's own endpoints to the clients that ATTACHed (progress thread,
 * outside UCX's callbacks). Made as the clients' are (ddio_ucx_ep_create),
 * so UCX counts them as the user's: a dead peer fails their sends, where
 * UCX 1.13 destroys a reply endpoint outright, under whichever thread is
 * sending on it (a crash in ucp_am_send_nbx, once in ~35 rank-killed runs). */
static void make_eps(struct srv_ucx *su)
{
    struct uep *u;
    while ((u = eps_next(su)) != NULL) {
        ucp_ep_h ep = NULL;
        ucs_status_t st = ddio_ucx_ep_create(su->u, u->peer, &ep);
        if (st != UCS_OK)
            DDIO_WARN("UCX endpoint to %s: %s; its reply endpoint is used instead",
                      xp_name(u->ctl), su->api->status_string(st));
        pthread_mutex_lock(&u->mu);
        int keep = st == UCS_OK && !u->dead;
        if (keep) {
            u->ep = ep;
            u->ep_ours = 1;
        }
        else if (st != UCS_OK && u->reply_ep && !u->dead)
            u->ep = u->reply_ep;
        else
            u->attach_failed = 1;
        free(u->peer);
        u->peer = NULL;
        pthread_cond_broadcast(&u->cv);
        pthread_mutex_unlock(&u->mu);
        if (st == UCS_OK && !keep)
            ddio_ucx_close_ep(su->u, ep, ddio_now_ms() + CLOSE_QUICK_MS);
        uep_unref(&u->xp);
    }
}

/* Stop matching owner's GETs, wait until none of their DATA is still being
 * received (closing the endpoint if that takes too long), return them. */
static struct xp_get *ux_cancel(struct xp *ep, const void *owner)
{
    struct uep *u = uep_of(ep);
    struct xp_get *out = NULL;
    int64_t dl = ddio_now_ms() + CLOSE_WAIT_MS;
    pthread_mutex_lock(&u->mu);
    for (;;) {
        int busy = 0;
        for (struct fill *f = u->fills; f; f = f->next)
            busy |= f->owner == owner;
        if (!busy)
            break;
        if (cond_wait_ms(&u->cv, &u->mu, dl) == ETIMEDOUT) {
            pthread_mutex_unlock(&u->mu);
            uep_release_ep(u);    /* no more DATA finds it */
            dl = ddio_now_ms() + CLOSE_WAIT_MS;
            pthread_mutex_lock(&u->mu);
        }
    }
    out = xp_take_owner(&u->gets, owner);
    pthread_mutex_unlock(&u->mu);
    return out;
}

/* ---- replies: through the control connection -------------------------------------------- */

static int uep_reply(struct xp *ep, uint16_t type, uint64_t req, int32_t status,
                     uint8_t *payload, size_t len, int64_t dl)
{
    struct uep *u = uep_of(ep);
    if (type == (DDIO_T_XFER | DDIO_REPLY))
        bind_drop(u, req);        /* its sends were synced with their blocks */
    return xp_reply(u->ctl, type, req, status, payload, len, dl);
}

static int uep_progress(struct xp *ep, uint64_t req, int64_t dl)
{
    return xp_progress(uep_of(ep)->ctl, req, dl);
}

static const struct xport_ops ucx_ops = {
    .ref = uep_ref, .unref = uep_unref, .name = uep_name, .reply = uep_reply,
    .progress = uep_progress, .put = ux_put, .get = ux_get, .cancel = ux_cancel,
    .sync = ux_sync,
};

/* a cookie nobody can guess: DATA and ATTACH messages name their
 * connection by it */
static uint64_t new_cookie(void)
{
    uint64_t c = 0;
    while (c == 0 && getrandom(&c, sizeof(c), 0) != (ssize_t)sizeof(c))
        ;
    return c;
}

struct uep *ucx_ep_new(struct server *srv, struct xp *ctl, char *err, size_t n)
{
    struct srv_ucx *su = srv->ucx;
    if (!su) {
        snprintf(err, n, "this server does not offer UCX");
        return NULL;
    }
    struct uep *u = calloc(1, sizeof(*u));
    if (!u) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    u->xp = (struct xp){.ops = &ucx_ops, .srv = srv};
    u->ctl = ctl;
    xp_ref(ctl);
    u->su = su;
    u->cookie = new_cookie();
    atomic_init(&u->refs, 1);     /* the connection's */
    pthread_mutex_init(&u->mu, NULL);
    cond_init_mono(&u->cv);
    pthread_mutex_lock(&su->mu);
    u->next = su->ueps;
    su->ueps = u;
    pthread_mutex_unlock(&su->mu);
    stats_bump(&srv->stats, &srv->stats.ucx_eps);
    /* the client wires up an endpoint to our worker next (UCX's own
     * messages, then ATTACH): count it as activity and wake the progress
     * thread, so that it polls in 1 ms slices, not an idle server's 50 ms
     * ones (a job's first open against fresh servers, 4 ranks: some
     * endpoints took 50-67 ms before, against 1-3 ms to a busy server) */
    atomic_store(&su->last_op_ms, ddio_now_ms());
    su->api->worker_signal(su->w);
    return u;
}

/* the UCXADDR reply: this connection's cookie and the server's address */
int ucx_ep_reply(struct uep *u, struct ddio_wbuf *w)
{
    size_t alen;
    const void *addr = ddio_ucx_address(u->su->u, &alen);
    ddio_enc_ucxaddr_r(w, u->cookie, addr, (uint32_t)alen);
    return w->err;
}

int ucx_bind(struct uep *u, uint64_t req, const struct ddio_xfer *m, char *err, size_t n)
{
    struct bind *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, n, "out of memory");
        return -ENOMEM;
    }
    *b = (struct bind){.req = req, .token = m->ucx_token, .len = m->ucx_len};
    pthread_mutex_lock(&u->mu);
    int64_t dl = ddio_now_ms() + ATTACH_WAIT_MS;   /* the ATTACH may still be on its way */
    while (!u->ep && !u->dead && !u->attach_failed &&
           cond_wait_ms(&u->cv, &u->mu, dl) != ETIMEDOUT)
        ;
    int dup = 0, dead = u->dead || !u->ep;
    for (struct bind *o = u->binds; o; o = o->next)
        dup |= o->req == req;
    if (!dup && !dead) {
        b->next = u->binds;
        u->binds = b;
    }
    pthread_mutex_unlock(&u->mu);
    if (dup || dead) {
        free(b);
        snprintf(err, n, dead ? "the connection's UCX endpoint is closed or was never attached"
                              : "XFER request id %llu is already in progress",
                 (unsigned long long)req);
        return dead ? -ECONNRESET : -EPROTO;
    }
    return 0;
}

struct xp *ucx_xp(struct uep *u)
{
    return &u->xp;
}

void ucx_ep_close(struct uep *u)
{
    uep_release_ep(u);
    uep_unref(&u->xp);
}

#endif
