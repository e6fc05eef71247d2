/* GET and PUT: a read block's bytes gathered into PUTs to the
 * participants that want them; a written block's asked of its writers by
 * GETs, and their answers scattered into it on the transport's threads. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine_getput.h"
#include "engine_slots.h"
#include "fault.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_log.h"
#include "ddio_net.h"             /* the clock and errno names only */

/* ---- PUT: a read block's bytes to the participants ---------------------------------------- */

/* where a PUT's bytes come from; filled_us: when they were gathered */
struct put_src {
    const struct part *p;
    const struct slot *s;
    const struct bseg *g;
    size_t n;
    int64_t filled_us;
};

static void put_fill(void *arg, uint8_t *data, uint64_t total)
{
    struct put_src *src = arg;
    for (size_t i = 0; i < src->n; i++) {
        const struct bseg *g = &src->g[i];
        ddio_desc_gather(&src->p->d, slot_bytes(src->s, g->boff), g->L,
                         g->s_lo, g->s_hi, data);
        data += g->s_hi - g->s_lo;
    }
    src->filled_us = ddio_now_us();
}

/* a block piece of a stream walk: addr is a logical file offset */
struct piece_ctx {
    uint8_t *base;               /* block byte of logical offset L */
    int64_t L;
    xp_piece_fn *fn;
    void *cbarg;
};

static int piece_cb(void *arg, int64_t addr, uint64_t len, uint64_t s)
{
    struct piece_ctx *pc = arg;
    return pc->fn(pc->cbarg, pc->base + (addr - pc->L), s, len);
}

static int put_walk(void *arg, xp_piece_fn *fn, void *cbarg)
{
    struct put_src *src = arg;
    int rc = 0;
    for (size_t i = 0; i < src->n && !rc; i++) {
        const struct bseg *g = &src->g[i];
        struct piece_ctx pc = {slot_bytes(src->s, g->boff), g->L, fn, cbarg};
        rc = ddio_desc_walk_stream(&src->p->d, g->s_lo, g->s_hi, piece_cb, &pc);
    }
    src->filled_us = ddio_now_us();
    return rc;
}

static int send_put(struct xfer *x, struct part *p, const struct slot *s,
                    const struct bseg *g, size_t n)
{
    struct ddio_seg segs[SEGS_PER_MSG];
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        segs[i] = (struct ddio_seg){g[i].s_lo, g[i].s_hi - g[i].s_lo};
        total += segs[i].len;
    }
    struct put_src src = {.p = p, .s = s, .g = g, .n = n};
    struct xp_src xs = {.fill = put_fill, .walk = put_walk, .arg = &src};
    int rc = xp_put(p->ep, p->req, segs, (uint32_t)n, total, &xs, deadline_of(x));
    /* net time: from the gathered bytes to their hand-over (it blocks while
     * the client's queue is full) */
    if (src.filled_us)
        x->ctr.net_us += (uint64_t)(ddio_now_us() - src.filled_us);
    if (rc == 0) {
        p->last_ms = ddio_now_ms();
        p->bytes += total;
        p->to += total;
        x->ctr.bytes_sent += total;
    }
    return rc;
}

/* a put's or sync's result for block s: -EBUSY (the transport gave up
 * sends that may still read the block) marks it never to be reused and is
 * the timeout it comes from */
static int send_err(struct slot *s, int rc)
{
    if (rc != -EBUSY)
        return rc;
    s->abandon = 1;
    return -ETIMEDOUT;
}

/* Wait until every put this thread made no longer reads its block (the
 * transport's sync on each participant's endpoint). *busy: some were
 * given up (their blocks must never be reused). The first error. */
static int sync_parts(struct xfer *x, int *busy)
{
    int rc = 0;
    int64_t t0 = ddio_now_us();
    for (uint32_t r = 0; r < x->n; r++) {
        int src = x->parts[r].present ? xp_sync(x->parts[r].ep, deadline_of(x)) : 0;
        if (src == -EBUSY) {
            *busy = 1;
            src = -ETIMEDOUT;
        }
        if (src && !rc)
            FAIL(x, -src, "send to rank %u (%s): %s", r, xp_name(x->parts[r].ep),
                 ddio_errno_name(-src));
        rc = rc ? rc : src;
    }
    x->ctr.net_us += (uint64_t)(ddio_now_us() - t0);
    return rc;
}

/* the blocks sent without a sync: their puts end (one sync for them all),
 * then they are released */
static void release_sent(struct xfer *x, int busy)
{
    for (unsigned i = 0; i < x->nslots && x->nsent; i++) {
        struct slot *s = &x->slots[i];
        if (s->state != S_SENT)
            continue;
        s->abandon |= busy;
        x->nsent--;
        slot_release(x, s);
    }
}

void put_flush_sent(struct xfer *x)
{
    if (!x->nsent)
        return;
    int busy = 0;
    sync_parts(x, &busy);
    release_sent(x, busy);
}

int put_read_block(struct xfer *x, struct slot *s)
{
    if (s->dr.res < 0) {
        FAIL(x, -s->dr.res, "read of %s on disk %d: %s", x->of->path, s->disk->idx,
             ddio_errno_name(-s->dr.res));
        return 0;
    }
    x->ctr.blocks_read++;
    x->ctr.nonconsec += (uint64_t)s->dr.nonconsec;
    fault_hit(is_collective(x) ? FAULT_COLL_READ : FAULT_INDEP_READ);
    uint64_t got = s->io_lo + s->dr.done, want = s->io_lo + s->dr.len;
    if (want > s->old_valid)
        want = s->old_valid;
    if (got < want)               /* datafile shorter than the size: a hole */
        memset((uint8_t *)s->buf + got, 0, want - got);
    struct bseg g[SEGS_PER_MSG];
    int rc = 0;
    for (uint32_t r = 0; r < x->n && !rc; r++) {
        struct part *p = &x->parts[r];
        uint64_t o = s->a, end = s->a + s->old_valid;
        while (o < end && !rc) {
            size_t n = xfer_block_segs(x, s, p, &o, end, g, SEGS_PER_MSG);
            rc = n ? send_err(s, send_put(x, p, s, g, n)) : 0;
            if (rc)
                FAIL(x, -rc, "send to rank %u (%s): %s", r, xp_name(p->ep),
                     ddio_errno_name(-rc));
        }
    }
    /* A mapped block's puts go on while the next blocks are mapped and
     * sent: the rank fetches them back to back (UCX), and one sync ends a
     * batch (put_flush_sent, when the pass runs out of slots or events);
     * the call's DONE may leave before that (answer_early). Over TCP too:
     * the blocks' release waits for the batch, off the call's path. */
    if (s->map && !rc)
        return 1;
    /* puts still reading the block (UCX) end before it is reused, also
     * after a failure; the sync covers the blocks sent before it too */
    int busy = 0;
    sync_parts(x, &busy);
    s->abandon |= busy;
    release_sent(x, busy);
    return 0;
}

/* ---- GET: a written block's bytes from its writers ----------------------------------------- */

static int get_walk(void *arg, xp_piece_fn *fn, void *cbarg)
{
    struct pget *pg = pget_of(arg);
    int rc = 0;
    for (uint32_t i = 0; i < pg->g.nseg && !rc; i++) {
        struct piece_ctx pc = {pg->seg[i].bufp, pg->seg[i].L, fn, cbarg};
        rc = ddio_desc_walk_stream(&pg->p->d, pg->g.seg[i].off,
                                   pg->g.seg[i].off + pg->g.seg[i].len, piece_cb, &pc);
    }
    return rc;
}

/* where the stream bytes of segment g (of p, in block s) are in p's inline
 * bytes: the stream itself, or with DDIO_XF_INLINE_OWN this server's bytes
 * in local order (a V_DATA block: s->a is a local offset) */
static const uint8_t *inline_at(const struct slot *s, const struct part *p, const struct bseg *g)
{
    return p->inl_own ? p->inl + (s->a + seg_lo(p, g) - p->inl_lo) : p->inl + g->s_lo;
}

/* An inline write whose bytes for the block are one range of its inline
 * bytes, laid in the block as they are there, is written from the message
 * itself (slot_submit_io), not copied into the block's buffer first: a copy
 * of the whole call less on the server. A block pulled in several steps
 * keeps its first in place; slot_submit_io copies it when the write
 * reaches past it. */
static int inline_in_place(struct slot *s, const struct part *p, const struct bseg *g, size_t n)
{
    if (s->src || (s->kind != V_DATA && s->kind != V_COPY) || s->exact == EXACT_RUNS)
        return 0;
    const uint8_t *src = NULL;
    uint64_t lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = seg_lo(p, &g[i]), b = seg_hi(p, &g[i]);
        const uint8_t *at = inline_at(s, p, &g[i]);
        if (b - a != g[i].s_hi - g[i].s_lo || (i && (a != hi || at != src + (hi - lo))))
            return 0;
        if (i == 0) {
            src = at;
            lo = a;
        }
        hi = b;
    }
    s->src = src;
    s->src_lo = lo;
    s->src_hi = hi;
    return n > 0;
}

/* ask participant p for its segments g of the block (one GET) */
int get_send(struct xfer *x, struct slot *s, struct part *p, const struct bseg *g, size_t n)
{
    struct pget *pg = calloc(1, sizeof(*pg) + n * (sizeof(struct ddio_seg) + sizeof(struct pseg)));
    if (!pg)
        return -ENOMEM;
    struct ddio_seg *segs = (struct ddio_seg *)(pg + 1);
    pg->seg = (struct pseg *)(segs + n);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        segs[i] = (struct ddio_seg){g[i].s_lo, g[i].s_hi - g[i].s_lo};
        pg->seg[i] = (struct pseg){(s->kind == V_PARITY ? s->scratch : (uint8_t *)s->buf) + g[i].boff,
                                   g[i].L};
        total += segs[i].len;
    }
    pg->g = (struct xp_get){.req = p->req, .nseg = (uint32_t)n, .seg = segs, .total = total,
                            .timeout_ms = x->timeout_ms, .owner = x, .walk = get_walk};
    pg->x = x;
    pg->s = s;
    pg->p = p;
    pthread_mutex_lock(&x->mu);
    pg->g.tag = ++x->next_tag;
    s->pending++;                 /* before the GET leaves: DATA may be quick */
    p->gets_out++;
    pthread_mutex_unlock(&x->mu);
    if (p->inl) {                 /* the bytes came with the XFER: no round trip */
        if (!inline_in_place(s, p, g, n))
            for (uint32_t i = 0; i < pg->g.nseg; i++)
                engine_get_sink(&pg->g, i, segs[i].off, inline_at(s, p, &g[i]),
                                (size_t)segs[i].len);
        engine_get_done(&pg->g, 0, NULL);
        return 0;
    }
    int rc = xp_get(p->ep, &pg->g, deadline_of(x));   /* pg is the transport's */
    if (rc == 0)
        p->last_ms = ddio_now_ms();
    return rc;
}

/* take back the GETs still out (the transport waits for answers arriving) */
void get_cancel_all(struct xfer *x)
{
    for (uint32_t r = 0; r < x->n; r++) {
        struct xp *ep = x->parts[r].ep;
        if (!ep || (r > 0 && ep == x->parts[r - 1].ep))
            continue;
        struct xp_get *g = xp_cancel(ep, x);
        while (g) {
            struct xp_get *next = g->next;
            struct pget *pg = pget_of(g);
            /* its answer may still land in the block (UCX, a dead client):
             * the buffer is never reused, a parity block's scratch kept */
            if (g->abandoned && pg->s->kind == V_PARITY)
                pg->s->scratch = NULL;
            else if (g->abandoned)
                pg->s->abandon = 1;
            free(pg);
            g = next;
        }
    }
}

/* ---- GET answers (transport threads) -------------------------------------------------------- */

void engine_get_sink(struct xp_get *g, uint32_t i, uint64_t s, const void *data, size_t n)
{
    struct pget *pg = pget_of(g);
    ddio_desc_scatter(&pg->p->d, pg->seg[i].bufp, pg->seg[i].L, s, s + n, data);
}

void engine_get_done(struct xp_get *g, int err, const char *why)
{
    struct pget *pg = pget_of(g);
    struct xfer *x = pg->x;
    pthread_mutex_lock(&x->mu);
    if (err)
        xfer_fail_locked(x, err, "%s", why);
    pg->p->from += g->total;
    pg->p->bytes += g->total;
    pg->p->gets_out--;
    if (--pg->s->pending == 0 && !err)
        xfer_post_locked(x, pg->s);
    pthread_mutex_unlock(&x->mu);
    free(pg);
}

void engine_get_drop(struct xp_get *g, int err, const char *why)
{
    struct pget *pg = pget_of(g);
    FAIL(pg->x, err, "%s", why);
    free(pg);
}
