/* The UCX transport (ucx.h, docs/TRANSPORT.md).
 *
 * One worker per server (thread mode MULTI). Engine threads issue their
 * operations (ucp_*_nbx) and progress the worker themselves until their own
 * completion counter reaches zero; a progress thread sleeping on the
 * worker's fd serves what arrives between calls (wire-up, peers closing). Nothing here holds a mutex of its
 * own while calling into UCX: completion callbacks run inside the progress
 * thread's ucp_worker_progress (under UCX's worker lock) and take our
 * mutexes, so the other order would deadlock.
 *
 * PUT (read data): pieces of the block at least RMA_DIRECT_AVG bytes long on
 * average are put one by one straight from the block into the rank's
 * buffer (one copy); smaller ones (8-byte records) are packed into a staging
 * buffer first and put per stream segment. The put waits for local
 * completion (the block may then be reused), sends an RPUT notice listing
 * the segments on the control connection, and DONE waits for a flush of
 * the endpoint, so the rank sees every byte before its call returns.
 * GET (write data): the same choice, with the answer delivered from the
 * completion callback like TCP's reader delivers DATA. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ucx.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
int ucx_offered(const struct server *srv) { (void)srv; return 0; }
struct uep *ucx_ep_new(struct server *srv, struct xp *ctl, const uint8_t *addr, size_t len,
                       char *err, size_t n)
{
    (void)srv; (void)ctl; (void)addr; (void)len;
    snprintf(err, n, "this server has no UCX");
    return NULL;
}
int ucx_bind(struct uep *u, uint64_t req, const struct ddio_xfer *m, char *err, size_t n)
{
    (void)u; (void)req; (void)m;
    snprintf(err, n, "this server has no UCX");
    return -EPROTO;
}
struct xp *ucx_xp(struct uep *u) { (void)u; return NULL; }
void ucx_ep_close(struct uep *u) { (void)u; }

#else

/* below this average piece size, pack through a staging buffer */
#define RMA_DIRECT_AVG 4096u
/* how long a closing endpoint may take to hand back its operations */
#define CLOSE_WAIT_MS 10000

struct srv_ucx {
    struct ddio_ucx *u;
    const struct ddio_ucx_api *api;
    ucp_worker_h w;
    pthread_t thr;
    atomic_int stop;
    atomic_int busy;             /* operations in flight (for the closing wait) */
    pthread_key_t stage_key;     /* per engine thread staging buffer */
};

/* a request's buffer and key, from its XFER until its DONE */
struct bind {
    uint64_t req;
    ucp_rkey_h rkey;
    uint64_t base, len;
    struct bind *next;
};

struct uep {
    struct xp xp;
    struct xp *ctl;              /* the TCP connection (referenced) */
    struct srv_ucx *su;
    ucp_ep_h ep;
    atomic_int refs;
    pthread_mutex_t mu;          /* below */
    pthread_cond_t cv;           /* CLOCK_MONOTONIC */
    int dead;                    /* closed or failed: no new operations */
    int users;                   /* threads issuing operations on ep now */
    int closed;                  /* ep released */
    struct bind *binds;
};

/* completion counter of a batch of operations */
struct opset {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int left;
    ucs_status_t st;
    struct srv_ucx *su;
};

/* ---- the progress thread ------------------------------------------------------------ */

static void *progress_main(void *arg)
{
    struct srv_ucx *su = arg;
    int efd = ddio_ucx_efd(su->u);
    while (!atomic_load(&su->stop)) {
        if (ddio_ucx_prepare_wait(su->u))
            continue;
        struct pollfd pf = {.fd = efd, .events = POLLIN};
        poll(&pf, 1, 100);
    }
    return NULL;
}

static void busy_add(struct srv_ucx *su, int n)
{
    atomic_fetch_add(&su->busy, n);
}

static void stage_free(void *p)
{
    free(p);
}

int ucx_offered(const struct server *srv)
{
    return srv->ucx != NULL;
}

int ucx_start(struct server *srv, char *err, size_t n)
{
    if (srv->cfg.transport == DDIO_XPORT_TCP)
        return 0;
    char why[256];
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
    if (!su || pthread_key_create(&su->stage_key, stage_free)) {
        free(su);
        ddio_ucx_close(u);
        snprintf(err, n, "out of memory");
        return -ENOMEM;
    }
    su->u = u;
    su->api = ddio_ucx_api();
    su->w = ddio_ucx_worker(u);
    if (pthread_create(&su->thr, NULL, progress_main, su)) {
        pthread_key_delete(su->stage_key);
        free(su);
        ddio_ucx_close(u);
        snprintf(err, n, "cannot start the UCX progress thread");
        return -EAGAIN;
    }
    srv->ucx = su;
    DDIO_INFO("UCX: RMA data path offered to clients");
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
    /* endpoints still referenced by stuck threads keep the worker: the
     * process is exiting, so it is not released under them */
}

/* ---- completion counters ---------------------------------------------------------------- */

static void opset_init(struct opset *o, struct srv_ucx *su)
{
    pthread_mutex_init(&o->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&o->cv, &ca);
    pthread_condattr_destroy(&ca);
    o->left = 0;
    o->st = UCS_OK;
    o->su = su;
}

static void opset_destroy(struct opset *o)
{
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
}

static void opset_done(struct opset *o, ucs_status_t st)
{
    pthread_mutex_lock(&o->mu);
    if (st != UCS_OK && o->st == UCS_OK)
        o->st = st;
    if (--o->left == 0)
        pthread_cond_broadcast(&o->cv);
    pthread_mutex_unlock(&o->mu);
}

static void opset_cb(void *request, ucs_status_t st, void *user)
{
    struct opset *o = user;
    struct srv_ucx *su = o->su;
    su->api->request_free(request);
    opset_done(o, st);
    busy_add(su, -1);
}

/* an operation was issued with o counted beforehand: settle what it returned */
static void opset_issued(struct opset *o, ucs_status_ptr_t r)
{
    if (r == NULL) {              /* completed at once: no callback */
        opset_done(o, UCS_OK);
        busy_add(o->su, -1);
    } else if (UCS_PTR_IS_ERR(r)) {
        opset_done(o, UCS_PTR_STATUS(r));
        busy_add(o->su, -1);
    }
}

static void opset_count(struct opset *o)
{
    pthread_mutex_lock(&o->mu);
    o->left++;
    pthread_mutex_unlock(&o->mu);
    busy_add(o->su, 1);
}

/* 0, or -ETIMEDOUT when the deadline passed with operations in flight.
 * The waiting thread progresses the worker itself: handing completions
 * over from the progress thread cost a wake-up per operation (measured:
 * 1.7 ms per 1 MiB block, ~600 MiB/s per engine thread, on 2 cores). */
static int opset_wait(struct opset *o, int64_t dl)
{
    for (unsigned spins = 0;; spins++) {
        pthread_mutex_lock(&o->mu);
        int left = o->left;
        pthread_mutex_unlock(&o->mu);
        if (left == 0)
            return 0;
        if ((spins & 255) == 0 && ddio_now_ms() >= dl)
            return -ETIMEDOUT;
        if (!ddio_ucx_progress(o->su->u))
            sched_yield();
    }
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

/* Release the UCX endpoint (once): force-close completes every operation
 * still in flight with an error, so nothing waits on a dead rank forever. */
static void uep_release_ep(struct uep *u)
{
    const struct ddio_ucx_api *api = u->su->api;
    pthread_mutex_lock(&u->mu);
    u->dead = 1;
    while (u->users > 0)
        pthread_cond_wait(&u->cv, &u->mu);
    int first = !u->closed;
    u->closed = 1;
    pthread_mutex_unlock(&u->mu);
    if (!first)
        return;
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                              .flags = UCP_EP_CLOSE_FLAG_FORCE};
    busy_add(u->su, 1);
    ucs_status_ptr_t r = api->ep_close_nbx(u->ep, &rp);
    if (r && !UCS_PTR_IS_ERR(r)) {
        int64_t dl = ddio_now_ms() + CLOSE_WAIT_MS;
        while (api->request_check_status(r) == UCS_INPROGRESS && ddio_now_ms() < dl)
            sched_yield();
        if (api->request_check_status(r) != UCS_INPROGRESS)
            api->request_free(r);
    }
    busy_add(u->su, -1);
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
        u->su->api->rkey_destroy(b->rkey);
        free(b);
    }
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

/* the operations of a batch did not finish in time: close the endpoint so
 * they are handed back, and wait for that (their buffers are ours) */
static void abandon(struct uep *u, struct opset *o)
{
    DDIO_WARN("UCX: RMA to %s did not complete in time: endpoint closed", xp_name(u->ctl));
    uep_release_ep(u);
    opset_wait(o, ddio_now_ms() + CLOSE_WAIT_MS);
}

static struct bind *bind_find(struct uep *u, uint64_t req)
{
    pthread_mutex_lock(&u->mu);
    struct bind *b = u->binds;
    while (b && b->req != req)
        b = b->next;
    pthread_mutex_unlock(&u->mu);
    return b;
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
    if (found) {
        u->su->api->rkey_destroy(found->rkey);
        free(found);
    }
}

/* the segments lie inside the rank's declared buffer */
static int segs_inside(const struct bind *b, const struct ddio_seg *seg, uint32_t nseg)
{
    for (uint32_t i = 0; i < nseg; i++)
        if (seg[i].off > b->len || seg[i].len > b->len - seg[i].off)
            return 0;
    return 1;
}

/* ---- choosing direct or staged ------------------------------------------------------------ */

static int count_piece(void *arg, uint8_t *p, uint64_t s, uint64_t n)
{
    (void)p; (void)s; (void)n;
    (*(uint64_t *)arg)++;
    return 0;
}

static int direct_worth_it(xp_walk_fn *walk, void *arg, uint64_t total)
{
    uint64_t pieces = 0;
    if (!walk || walk(arg, count_piece, &pieces) || pieces == 0)
        return 0;
    return total / pieces >= RMA_DIRECT_AVG;
}

static uint8_t *stage_get(struct srv_ucx *su, uint64_t n)
{
    struct { size_t cap; uint8_t b[]; } *s = pthread_getspecific(su->stage_key);
    if (s && s->cap >= n)
        return s->b;
    free(s);
    pthread_setspecific(su->stage_key, NULL);
    s = malloc(sizeof(*s) + n);
    if (!s)
        return NULL;
    s->cap = n;
    pthread_setspecific(su->stage_key, s);
    return s->b;
}

/* ---- PUT ------------------------------------------------------------------------------------ */

struct put_ctx {
    struct uep *u;
    struct bind *b;
    struct opset *o;
    ucp_request_param_t rp;
};

static void put_one(struct put_ctx *pc, const void *p, uint64_t s, uint64_t n)
{
    opset_count(pc->o);
    opset_issued(pc->o, pc->u->su->api->put_nbx(pc->u->ep, p, n, pc->b->base + s, pc->b->rkey,
                                                &pc->rp));
}

static int put_piece(void *arg, uint8_t *p, uint64_t s, uint64_t n)
{
    put_one(arg, p, s, n);
    return 0;
}

static int notice(struct uep *u, uint64_t req, const struct ddio_seg *seg, uint32_t nseg,
                  uint64_t total, int64_t dl)
{
    struct ddio_segs m = {.tag = 0, .nseg = nseg, .seg = (struct ddio_seg *)seg, .total = total};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_get(&w, &m);
    if (w.err) {
        ddio_wbuf_free(&w);
        return -ENOMEM;
    }
    return xp_reply(u->ctl, DDIO_T_RPUT, req, 0, w.p, w.len, dl);
}

static int rma_status(ucs_status_t st)
{
    return st == UCS_OK ? 0 : st == UCS_ERR_CANCELED ? -ECONNRESET : -EIO;
}

static int ux_put(struct xp *ep, uint64_t req, const struct ddio_seg *seg, uint32_t nseg,
                  uint64_t total, const struct xp_src *src, int64_t dl)
{
    struct uep *u = uep_of(ep);
    struct bind *b = bind_find(u, req);
    if (!b || !segs_inside(b, seg, nseg))
        return -EFAULT;           /* the rank's buffer is shorter than its stream */
    int direct = direct_worth_it(src->walk, src->arg, total);
    uint8_t *stage = direct ? NULL : stage_get(u->su, total);
    if (!direct && !stage)
        return -ENOMEM;
    struct opset o;
    opset_init(&o, u->su);
    struct put_ctx pc = {.u = u, .b = b, .o = &o,
                         .rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                                UCP_OP_ATTR_FIELD_USER_DATA,
                                .cb.send = opset_cb, .user_data = &o}};
    int rc = uep_enter(u);
    if (!rc) {
        if (direct) {
            src->walk(src->arg, put_piece, &pc);
        } else {
            src->fill(src->arg, stage, total);
            uint64_t off = 0;
            for (uint32_t i = 0; i < nseg; off += seg[i].len, i++)
                put_one(&pc, stage + off, seg[i].off, seg[i].len);
        }
        uep_leave(u);
        if (opset_wait(&o, dl)) {
            abandon(u, &o);
            rc = -ETIMEDOUT;
        } else {
            rc = rma_status(o.st);
        }
    }
    opset_destroy(&o);
    if (!rc) {
        stats_rma(&ep->srv->stats, total, 0, direct ? 0 : total);
        rc = notice(u, req, seg, nseg, total, dl);
    }
    return rc;
}

/* ---- GET ------------------------------------------------------------------------------------ */

/* Synchronous, like PUT: the engine thread issues the reads and progresses
 * them itself, then stores the answer (staged: scattered into the block)
 * and hands the GET back with engine_get_done before returning, so no
 * answer is ever left arriving for cancel to wait on. */
struct get_ctx {
    struct uep *u;
    struct bind *b;
    struct opset *o;
    ucp_request_param_t rp;
};

static void get_one(struct get_ctx *gc, void *p, uint64_t s, uint64_t n)
{
    opset_count(gc->o);
    opset_issued(gc->o, gc->u->su->api->get_nbx(gc->u->ep, p, n, gc->b->base + s, gc->b->rkey,
                                                &gc->rp));
}

static int get_piece(void *arg, uint8_t *p, uint64_t s, uint64_t n)
{
    get_one(arg, p, s, n);
    return 0;
}

static int get_run(struct uep *u, struct bind *b, struct xp_get *g, uint8_t *stage, int64_t dl)
{
    struct opset o;
    opset_init(&o, u->su);
    struct get_ctx gc = {.u = u, .b = b, .o = &o,
                         .rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                                UCP_OP_ATTR_FIELD_USER_DATA,
                                .cb.send = opset_cb, .user_data = &o}};
    int rc = uep_enter(u);
    if (!rc) {
        if (!stage) {
            g->walk(g, get_piece, &gc);
        } else {
            uint64_t off = 0;
            for (uint32_t i = 0; i < g->nseg; off += g->seg[i].len, i++)
                get_one(&gc, stage + off, g->seg[i].off, g->seg[i].len);
        }
        uep_leave(u);
        if (opset_wait(&o, dl)) {
            abandon(u, &o);
            rc = -ETIMEDOUT;
        } else {
            rc = rma_status(o.st);
        }
    }
    opset_destroy(&o);
    return rc;
}

/* Errors are answers too (engine_get_done with the cause): g always goes
 * back through the engine. */
static int ux_get(struct xp *ep, struct xp_get *g, int64_t dl)
{
    struct uep *u = uep_of(ep);
    struct bind *b = bind_find(u, g->req);
    if (!b || !segs_inside(b, g->seg, g->nseg)) {
        engine_get_done(g, EFAULT, "the rank's RMA buffer does not hold its stream");
        return 0;
    }
    int64_t gdl = ddio_now_ms() + g->timeout_ms;
    if (gdl > dl)
        dl = gdl;
    int direct = direct_worth_it(g->walk, g, g->total);
    uint8_t *stage = direct ? NULL : stage_get(u->su, g->total);
    if (!direct && !stage) {
        engine_get_done(g, ENOMEM, "out of memory for an RMA read");
        return 0;
    }
    int rc = get_run(u, b, g, stage, dl);
    if (rc) {
        char why[256];
        snprintf(why, sizeof(why), "RMA read of rank data from %s failed: %s", xp_name(u->ctl),
                 ddio_errno_name(-rc));
        engine_get_done(g, -rc, why);
        return 0;
    }
    if (stage) {
        uint64_t off = 0;
        for (uint32_t i = 0; i < g->nseg; off += g->seg[i].len, i++)
            engine_get_sink(g, i, g->seg[i].off, stage + off, g->seg[i].len);
    }
    stats_rma(&ep->srv->stats, 0, g->total, stage ? g->total : 0);
    engine_get_done(g, 0, NULL);
    return 0;
}

/* nothing to take back: every GET was answered before ux_get returned */
static struct xp_get *ux_cancel(struct xp *ep, const void *owner)
{
    (void)ep;
    (void)owner;
    return NULL;
}

/* ---- replies: through the control connection -------------------------------------------- */

static int flush(struct uep *u, int64_t dl)
{
    struct opset o;
    opset_init(&o, u->su);
    int rc = uep_enter(u);
    if (!rc) {
        ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                                  UCP_OP_ATTR_FIELD_USER_DATA,
                                  .cb.send = opset_cb, .user_data = &o};
        opset_count(&o);
        opset_issued(&o, u->su->api->ep_flush_nbx(u->ep, &rp));
        uep_leave(u);
        if (opset_wait(&o, dl)) {
            abandon(u, &o);
            rc = -ETIMEDOUT;
        } else {
            rc = rma_status(o.st);
        }
    }
    opset_destroy(&o);
    return rc;
}

static int uep_reply(struct xp *ep, uint16_t type, uint64_t req, int32_t status,
                     uint8_t *payload, size_t len, int64_t dl)
{
    struct uep *u = uep_of(ep);
    if (type == (DDIO_T_XFER | DDIO_REPLY)) {
        /* DONE: every byte put must have landed before the rank hears it */
        int rc = status == 0 ? flush(u, dl) : 0;
        bind_drop(u, req);
        if (rc) {
            free(payload);
            return xp_reply_err(u->ctl, type, req, -rc, "RMA to %s did not complete: %s",
                                xp_name(u->ctl), ddio_errno_name(-rc));
        }
    }
    return xp_reply(u->ctl, type, req, status, payload, len, dl);
}

static int uep_progress(struct xp *ep, uint64_t req, int64_t dl)
{
    return xp_progress(uep_of(ep)->ctl, req, dl);
}

static const struct xport_ops ucx_ops = {
    .ref = uep_ref, .unref = uep_unref, .name = uep_name, .reply = uep_reply,
    .progress = uep_progress, .put = ux_put, .get = ux_get, .cancel = ux_cancel,
};

struct uep *ucx_ep_new(struct server *srv, struct xp *ctl, const uint8_t *addr, size_t len,
                       char *err, size_t n)
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
    (void)len;
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                          .address = (const ucp_address_t *)addr};
    ucs_status_t st = su->api->ep_create(su->w, &ep, &u->ep);
    if (st != UCS_OK) {
        snprintf(err, n, "UCX endpoint to the client's worker: %s", su->api->status_string(st));
        free(u);
        return NULL;
    }
    u->xp = (struct xp){.ops = &ucx_ops, .srv = srv};
    u->ctl = ctl;
    xp_ref(ctl);
    u->su = su;
    atomic_init(&u->refs, 1);     /* the connection's */
    pthread_mutex_init(&u->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&u->cv, &ca);
    pthread_condattr_destroy(&ca);
    stats_bump(&srv->stats, &srv->stats.rma_eps);
    return u;
}

int ucx_bind(struct uep *u, uint64_t req, const struct ddio_xfer *m, char *err, size_t n)
{
    struct bind *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, n, "out of memory");
        return -ENOMEM;
    }
    int rc = uep_enter(u);
    if (rc) {
        free(b);
        snprintf(err, n, "the connection's UCX endpoint is closed");
        return rc;
    }
    ucs_status_t st = u->su->api->ep_rkey_unpack(u->ep, m->rkey, &b->rkey);
    uep_leave(u);
    if (st != UCS_OK) {
        free(b);
        snprintf(err, n, "XFER's remote key rejected by UCX: %s", u->su->api->status_string(st));
        return -EPROTO;
    }
    b->req = req;
    b->base = m->rma_addr;
    b->len = m->rma_len;
    pthread_mutex_lock(&u->mu);
    int dup = 0;
    for (struct bind *o = u->binds; o; o = o->next)
        dup |= o->req == req;
    if (!dup) {
        b->next = u->binds;
        u->binds = b;
    }
    pthread_mutex_unlock(&u->mu);
    if (dup) {
        u->su->api->rkey_destroy(b->rkey);
        free(b);
        snprintf(err, n, "XFER request id %llu is already in progress",
                 (unsigned long long)req);
        return -EPROTO;
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
