/* The UCX transport's data path (ucx_data.h, docs/TRANSPORT.md).
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
 * fd between events, or an engine thread in sync. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ucx_data.h"

#ifdef DDIO_HAVE_UCX

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cond.h"
#include "ddio_log.h"
#include "ddio_net.h"
#include "engine.h"
#include "server.h"

/* an engine thread waiting for its sends sleeps at most this between its own
 * rounds of progress */
#define SYNC_SLICE_MS 1
/* how long a closing endpoint may take to hand back its operations */
#define CLOSE_WAIT_MS 10000
/* how long an engine thread waits for its sends once one's endpoint closed */
#define CLOSED_GRACE_MS 200

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

void opset_free(struct opset *o)
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
void tput_free(void *p)
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

/* 1 and *r if the block bytes are one contiguous range, to move in place;
 * else 0: they are packed into (unpacked from) a staging area. UCX 1.13
 * reads a rendezvous body straight from the sender's memory (CMA, RDMA)
 * only when both sides are contiguous; an iovec made it fall back to
 * fragments that both sides must progress, 2-4x slower than packing
 * (docs/TRANSPORT.md). */
static int one_range(xp_walk_fn *walk, void *arg, struct range *r)
{
    struct iovec v;
    int n = 0;
    if (xp_gather(walk, arg, &v, &n, 1) || n != 1)
        return 0;
    *r = (struct range){v.iov_base, v.iov_len};
    return 1;
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
int ux_sync(struct xp *ep, int64_t dl)
{
    struct uep *u = uep_of(ep);
    struct tput *t = tput_get(u->su);
    if (!t)
        return -ENOMEM;
    int rc = progress_until(u->su, t->o, dl);
    if (rc == -ECONNRESET)
        return abandon_sends(t, xp_name(u->ctl));
    if (rc) {
        DDIO_WARN("UCX: sends to %s did not complete in time (%lu rounds of sends "
                  "completed on its %s endpoint before): endpoint closed", xp_name(u->ctl),
                  atomic_load(&u->syncs_done), u->ep_ours ? "own" : "reply");
        uep_release_ep(u);        /* then given CLOSED_GRACE_MS to end */
        if (progress_until(u->su, t->o, ddio_now_ms() + CLOSE_WAIT_MS))
            return abandon_sends(t, xp_name(u->ctl));
    }
    pthread_mutex_lock(&t->o->mu);
    if (!rc)
        rc = ucs_errno(t->o->st);
    if (!rc)
        atomic_fetch_add(&u->syncs_done, 1);
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

int ux_put(struct xp *ep, uint64_t req, const struct ddio_seg *seg, uint32_t nseg,
           uint64_t total, const struct xp_src *src, int64_t dl)
{
    struct uep *u = uep_of(ep);
    atomic_store(&u->su->last_op_ms, ddio_now_ms());
    struct tput *t = tput_get(u->su);
    struct bind b;
    if (uep_bind_find(u, req, &b) || !segs_inside(b.len, seg, nseg))
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
 * active message (ucx_data_cb). Registered before the GET leaves. */
int ux_get(struct xp *ep, struct xp_get *g, int64_t dl)
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
    if (uep_bind_find(u, g->req, &b) || !segs_inside(b.len, g->seg, g->nseg))
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
    int ending;                  /* u->mu: its end is handing the GET back */
    int orphan;                  /* u->mu: given up by ux_cancel: its GET is gone */
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
    pthread_mutex_lock(&u->mu);
    int orphan = d->orphan;
    d->ending = 1;
    pthread_mutex_unlock(&u->mu);
    if (orphan) {                 /* its XFER is gone (ux_cancel): nothing to hand back */
        free(d->stage);
        free(d);
        xp_unref(&u->xp);
        return;
    }
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
    d->fill.recv = d;
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

/* the GET is not answered by this DATA: the XFER fails */
static void refuse(struct uep *u, struct xp_get *g, struct fill *f, int err, const char *why)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "DATA from %s: %s", xp_name(u->ctl), why);
    engine_get_drop(g, err, msg);
    unfill(u, f, NULL);
}

ucs_status_t ucx_data_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                         const ucp_am_recv_param_t *p)
{
    struct srv_ucx *su = arg;
    uint64_t cookie, req;
    uint32_t tag;
    struct fill tmp = {0};
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

/* u->mu held: owner's receives still in flight after the endpoint closed
 * (a rendezvous from a client that died may never end: UCX 1.13 neither
 * fails it without peer-failure mode nor cancels it) given up: taken off
 * the fills, their GETs put on *out (marked abandoned when the receive
 * goes straight into the block's buffer, so the engine never reuses it,
 * as for sends: abandon_sends); a late end frees only the receive and
 * its staging area. */
static void orphan_recvs(struct uep *u, const void *owner, struct xp_get **out)
{
    for (struct fill **pp = &u->fills; *pp;) {
        struct fill *f = *pp;
        struct drecv *d = f->recv;
        if (f->owner != owner || !d || d->ending) {
            pp = &f->next;
            continue;
        }
        *pp = f->next;
        d->orphan = 1;
        d->g->abandoned = d->stage == NULL;   /* in place: the block's own buffer */
        d->g->next = *out;
        *out = d->g;
        DDIO_WARN("UCX: a receive of %" PRIu64 " bytes from %s never ended after its endpoint "
                  "closed: given up, its buffer never reused", d->g->total, xp_name(u->ctl));
    }
}

/* Stop matching owner's GETs, wait until none of their DATA is still being
 * received, return them (those given up marked abandoned). Taking too
 * long, the endpoint is closed (no more DATA finds it); longer still, the
 * receives left are given up (orphan_recvs). */
struct xp_get *ux_cancel(struct xp *ep, const void *owner)
{
    struct uep *u = uep_of(ep);
    struct xp_get *out = NULL;
    int64_t dl = ddio_now_ms() + CLOSE_WAIT_MS;
    int closed = 0;
    pthread_mutex_lock(&u->mu);
    for (;;) {
        int busy = 0;
        for (struct fill *f = u->fills; f; f = f->next)
            busy |= f->owner == owner;
        if (!busy)
            break;
        if (cond_wait_ms(&u->cv, &u->mu, dl) == ETIMEDOUT && closed) {
            orphan_recvs(u, owner, &out);
        } else if (ddio_now_ms() >= dl) {
            pthread_mutex_unlock(&u->mu);
            uep_release_ep(u);    /* no more DATA finds it */
            closed = 1;
            dl = ddio_now_ms() + CLOSE_WAIT_MS;
            pthread_mutex_lock(&u->mu);
        }
    }
    struct xp_get *taken = xp_take_owner(&u->gets, owner);
    while (taken) {
        struct xp_get *next = taken->next;
        taken->next = out;
        out = taken;
        taken = next;
    }
    pthread_mutex_unlock(&u->mu);
    return out;
}

#endif
