/* The XFER engine.
 *
 * Threads: the request thread that completes a collective's gate (or the
 * thread of an independent XFER) runs the whole pass: it plans, issues
 * blocks to the disk threads, and reacts to events (disk completions
 * posted by disk threads, GET answers posted by transport threads).
 * It only ever waits on its own condition variable, a disk buffer, a block
 * lock or an endpoint's send space, each with the XFER's timeout, and it
 * only blocks on a buffer or block lock while it has nothing in flight, so
 * two XFERs cannot hold resources the other waits for.
 *
 * Clients are endpoints of a transport (transport.h; TCP in tcp.c): the
 * engine says what to send and where GET answers go, the transport moves
 * the bytes. Its threads never wait for the engine: an answer is stored
 * into the block buffer by the transport's thread itself (engine_get_sink).
 * A client that stops reading blocks nobody but the engine that feeds it
 * (up to the deadline). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine.h"
#include "cond.h"
#include "fault.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddio_desc.h"
#include "ddio_log.h"
#include "ddio_net.h"             /* the clock and errno names only */
#include "pcache.h"
#include "planner.h"
#include "replay.h"

#define MAX_PARTICIPANTS (1u << 16)
/* --max-call-memory: half for the participants' decoded descriptors, half
 * for the block plan; what one node / one collected block entry costs
 * (the node, a list entry's arrays; the entry, its sort and order copies) */
#define DESC_NODE_BYTES  96u
#define PLAN_BLOCK_BYTES 48u
#define SEGS_PER_MSG 1024u
#define DEFAULT_TIMEOUT_MS 60000u
#define MIN_BEAT_MS 250u
/* a resent collective (DDIO_XF_RESENT) runs with the participants that came
 * when no other one came for this long: the rest got their DONE before the
 * server restarted and will never come */
#define RESEND_GRACE_MS 1000

struct part {
    struct xp *ep;               /* referenced */
    uint64_t req;
    uint32_t rank;
    int present, answered;
    struct ddio_desc d;
    int have_desc;
    int64_t first, end;          /* descriptor bounds (logical) */
    uint64_t bytes, to, from;
    int64_t last_ms;             /* last message queued to it (heartbeats) */
    const uint8_t *inl;          /* DDIO_XF_INLINE: its stream, in the request's
                                  * payload (one participant: the payload lives
                                  * until the XFER ends) */
    int once;                    /* DDIO_XF_ONCE: its DONE is remembered (replay.h) */
    uint64_t once_client, once_call;
};

/* a collective failed (or refused) because the server stops (SIGTERM): the
 * clients resend it, to the server's restart (ECONNRESET is recoverable) */
#define STOPPING_MSG "server stopping: a collective is resent to its restart"

enum { S_FREE = 0, S_READ, S_RMW, S_DATA, S_HELD, S_WRITE };
enum { EXACT_RUNS = 2 };         /* slot.exact: several ranges */

struct slot {
    struct xfer *x;
    unsigned idx;
    int state;
    int io_busy;                 /* disk request outstanding */
    int locked;                  /* holds the block lock */
    uint64_t k, a;               /* local block number and first local offset */
    struct disk *disk;
    void *buf;
    uint64_t old_valid;          /* block bytes below the local size at issue */
    uint64_t write_hi;           /* one past the highest byte written in block */
    uint64_t write_lo;           /* first byte written in block */
    uint64_t io_lo;              /* first block byte read or written (4 KiB aligned,
                                  * but for an exact write) */
    int full, overlap;
    int abandon;                 /* a send that never ended may read it: never reuse */
    int cached;                  /* its disk request goes through the page cache */
    int contig;                  /* writes: one writer, one range [write_lo, write_hi) */
    int exact;                   /* writes: only [write_lo, write_hi) goes to the file,
                                  * through the page cache (no read-modify-write);
                                  * EXACT_RUNS: only the bytes written (runs) */
    struct disk_seg *runs;       /* EXACT_RUNS: the block's written ranges */
    size_t nruns, capruns;
    uint32_t pending;            /* GET answers outstanding (x->mu) */
    uint32_t next_part;          /* overlap mode: next participant to pull */
    uint64_t ord;                /* writes: issue order among its disk's blocks */
    int64_t t_pull_us;           /* writes: when the block's first GET went out */
    struct disk_req dr;
};

struct xfer {
    struct server *srv;
    struct ofile *of;
    uint64_t group, seq;
    uint32_t op, flags, n, timeout_ms;
    uint32_t beat_ms;            /* PROGRESS after this much silence */
    int64_t next_beat_ms;        /* no participant is due before this (x->mu) */
    struct part *parts;          /* indexed by rank */
    uint32_t arrived;
    int64_t t_first_us;
    int resent;                  /* some participant's XFER is a resend */
    int64_t last_arrival_ms;     /* the latest participant came then */
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* CLOCK_MONOTONIC */
    int status;
    char msg[512];
    struct xfer *next;
    /* running */
    struct ddio_stripe S;
    uint32_t me;
    uint64_t B;
    uint64_t *blocks;
    size_t nblocks;
    struct slot *slots;
    unsigned nslots, inflight;
    unsigned *ready, nready;
    uint32_t next_tag;
    uint64_t *bitmap;
    uint64_t *w_issued, *w_next; /* per disk: writes issued, next one to submit */
    struct xfer_counters ctr;
};

struct engine {
    pthread_mutex_t mu;
    struct xfer *gates;          /* collectives waiting for participants */
    struct xfer *running;
};

/* A GET in flight: the transport's view (g) and where its bytes go. One
 * allocation, freed by engine_get_done / engine_get_drop or after cancel. */
struct pseg { uint8_t *bufp; int64_t L; };   /* block address of stream byte L */
struct pget {
    struct xp_get g;
    struct xfer *x;
    struct slot *s;
    struct part *p;
    struct pseg *seg;            /* one per g.seg */
};

static struct pget *pget_of(struct xp_get *g)
{
    return (struct pget *)((char *)g - offsetof(struct pget, g));
}

/* a participant's bytes in one stripe-unit piece of a block */
struct bseg { uint64_t s_lo, s_hi, boff; int64_t L; };

/* ---- small helpers ------------------------------------------------------------- */

/* a collective call, also with one participant (MPI_COMM_SELF) */
static int is_collective(const struct xfer *x)
{
    return x->n > 1 || (x->flags & DDIO_XF_COLLECTIVE) != 0;
}

static int64_t deadline_of(const struct xfer *x)
{
    return ddio_now_ms() + x->timeout_ms;
}

/* record the first failure (x->mu held); the message names the server */
static void fail_locked(struct xfer *x, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail_locked(struct xfer *x, int err, const char *fmt, ...)
{
    if (x->status)
        return;
    va_list ap;
    va_start(ap, fmt);
    srv_errmsg(x->srv, x->msg, sizeof(x->msg), fmt, ap);
    va_end(ap);
    x->status = err;
    pthread_cond_broadcast(&x->cv);
}

#define FAIL(x, err, ...) do { \
        pthread_mutex_lock(&(x)->mu); fail_locked((x), (err), __VA_ARGS__); \
        pthread_mutex_unlock(&(x)->mu); } while (0)

static int failed(struct xfer *x)
{
    pthread_mutex_lock(&x->mu);
    int s = x->status;
    pthread_mutex_unlock(&x->mu);
    return s;
}

/* ---- heartbeats ------------------------------------------------------------------ */

/* A client fails the call after a silence of its timeout, but a busy server
 * may legitimately send a participant nothing for much longer (its blocks
 * come last, or the gate waits for late ranks). So every present, not yet
 * answered participant that was sent nothing for beat_ms gets a PROGRESS.
 * It is sent from the engine's own waits: a hung engine stays silent and
 * still trips the client's deadline. x->mu held; dropped while queueing
 * (the progress op never waits for send space). Returns when the next
 * one is due. */
static int64_t beat_locked(struct xfer *x)
{
    int64_t now = ddio_now_ms();
    if (now < x->next_beat_ms)
        return x->next_beat_ms;
    int64_t next = now + x->beat_ms;
    for (uint32_t r = 0; r < x->n; r++) {
        struct part *p = &x->parts[r];
        if (!p->present || p->answered)
            continue;
        if (now - p->last_ms >= (int64_t)x->beat_ms) {
            p->last_ms = now;
            pthread_mutex_unlock(&x->mu);
            xp_progress(p->ep, p->req, now + x->timeout_ms);
            pthread_mutex_lock(&x->mu);
        }
        if (p->last_ms + x->beat_ms < next)
            next = p->last_ms + x->beat_ms;
    }
    x->next_beat_ms = next;
    return next;
}

/* the end of the next wait slice: the next heartbeat or the deadline */
static int64_t beat_slice(struct xfer *x, int64_t deadline_ms)
{
    pthread_mutex_lock(&x->mu);
    int64_t next = beat_locked(x);
    pthread_mutex_unlock(&x->mu);
    return next < deadline_ms ? next : deadline_ms;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static const char *op_name(uint32_t op)
{
    return op == DDIO_X_READ ? "read" : "write";
}

/* ---- xfer lifetime ---------------------------------------------------------------- */

static struct xfer *xfer_new(struct server *srv, const struct ddio_xfer *m, struct ofile *of)
{
    struct xfer *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    x->parts = calloc(m->nparticipants, sizeof(*x->parts));
    if (!x->parts) {
        free(x);
        return NULL;
    }
    x->srv = srv;
    x->of = of;
    x->group = m->group;
    x->seq = m->seq;
    x->op = m->op;
    x->flags = m->flags;
    x->n = m->nparticipants;
    x->timeout_ms = m->timeout_ms ? m->timeout_ms : DEFAULT_TIMEOUT_MS;
    x->t_first_us = ddio_now_us();
    x->beat_ms = x->timeout_ms / 4 > MIN_BEAT_MS ? x->timeout_ms / 4 : MIN_BEAT_MS;
    x->next_beat_ms = ddio_now_ms() + x->beat_ms;
    pthread_mutex_init(&x->mu, NULL);
    cond_init_mono(&x->cv);
    return x;
}

static void xfer_free(struct xfer *x)
{
    for (uint32_t i = 0; i < x->n; i++) {
        struct part *p = &x->parts[i];
        if (p->have_desc)
            ddio_desc_free(&p->d);
        if (p->ep)
            xp_unref(p->ep);
    }
    store_release(&x->srv->store, x->of);
    free(x->parts);
    free(x->blocks);
    for (unsigned i = 0; x->slots && i < x->nslots; i++)
        free(x->slots[i].runs);
    free(x->slots);
    free(x->ready);
    free(x->bitmap);
    free(x->w_issued);
    free(x->w_next);
    pthread_cond_destroy(&x->cv);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

static void list_remove(struct xfer **head, struct xfer *x)
{
    for (struct xfer **pp = head; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            return;
        }
}

/* ---- per-block segments --------------------------------------------------------------- */

/* Fill up to cap segments of participant p in local [*o, end) (one per
 * stripe-unit piece holding p's bytes); advances *o. */
static size_t block_segs(const struct xfer *x, const struct part *p, uint64_t *o,
                         uint64_t end, uint64_t a, struct bseg *out, size_t cap)
{
    size_t n = 0;
    while (*o < end && n < cap) {
        uint64_t uend = (*o / x->S.unit + 1) * x->S.unit;
        uint64_t e = uend < end ? uend : end;
        int64_t L = (int64_t)ddio_layout_logical(&x->S, x->me, *o);
        int64_t Lend = L + (int64_t)(e - *o);
        if (p->have_desc && p->d.length && L < p->end && Lend > p->first) {
            uint64_t s_lo = ddio_desc_stream_before(&p->d, L);
            uint64_t s_hi = ddio_desc_stream_before(&p->d, Lend);
            if (s_hi > s_lo)
                out[n++] = (struct bseg){s_lo, s_hi, *o - a, L};
        }
        *o = e;
    }
    return n;
}

/* offset in the block of p's first byte in segment g */
static uint64_t seg_lo(const struct part *p, const struct bseg *g)
{
    return g->boff + (uint64_t)(ddio_desc_addr(&p->d, g->s_lo) - g->L);
}

/* offset in the block one past p's last byte in segment g */
static uint64_t seg_hi(const struct part *p, const struct bseg *g)
{
    int64_t last = ddio_desc_addr(&p->d, g->s_hi - 1);
    return g->boff + (uint64_t)(last - g->L) + 1;
}

/* ---- events --------------------------------------------------------------------------- */

static void post_locked(struct xfer *x, struct slot *s)
{
    x->ready[x->nready++] = s->idx;
    pthread_cond_broadcast(&x->cv);
}

static void disk_done_cb(struct disk_req *r)
{
    struct slot *s = r->arg;
    struct xfer *x = s->x;
    pthread_mutex_lock(&x->mu);
    post_locked(x, s);
    pthread_mutex_unlock(&x->mu);
}

/* next event, or NULL when the XFER failed (or drain = 1 and nothing is
 * left on disk) */
static struct slot *wait_event(struct xfer *x, int drain)
{
    pthread_mutex_lock(&x->mu);
    int64_t dl = deadline_of(x);
    for (;;) {
        /* also when an event is ready: a pipeline that never waits still
         * owes the participants without data their heartbeats */
        int64_t wake = beat_locked(x);
        if (x->nready || (!drain && x->status))
            break;
        if (drain) {              /* disk I/O always completes: no deadline */
            cond_wait_ms(&x->cv, &x->mu, wake);
            continue;
        }
        if (cond_wait_ms(&x->cv, &x->mu, min64(wake, dl)) == ETIMEDOUT && x->nready == 0
            && ddio_now_ms() >= dl)
            fail_locked(x, ETIMEDOUT, "%s timed out after %u ms waiting for client data or disk",
                        op_name(x->op), x->timeout_ms);
    }
    struct slot *s = NULL;
    if (x->nready && (drain || !x->status))
        s = &x->slots[x->ready[--x->nready]];
    pthread_mutex_unlock(&x->mu);
    return s;
}

/* A stream the page cache must not take: a disk-directed pass of several
 * ranks, or a collective's plain-range part (one participant) longer than
 * PCACHE_RANGE_MAX. Shorter parts are the everyday contiguous collective
 * (IOR's -c): they are cached as the same call made independently is. */
static int stream_is_collective(const struct xfer *x)
{
    return x->n > 1 || ((x->flags & DDIO_XF_COLLECTIVE) && x->parts[0].have_desc
                        && x->parts[0].d.length > PCACHE_RANGE_MAX);
}

/* O_DIRECT or the page cache for this request (pcache.h has the policy) */
static int use_cache(const struct xfer *x, int d, int write, uint64_t off, size_t len)
{
    struct pcache_ask a = {.enabled = x->srv->cfg.page_cache, .twin = x->of->bfds[d] >= 0,
                           .collective = stream_is_collective(x), .write = write, .len = len,
                           .block = x->B, .fd = x->of->bfds[d], .off = off};
    return pcache_choose(&a);
}

/* Would a write of block s's bytes [write_lo, write_hi) go through the
 * page cache? (A write's choice needs no residency check: it is the same
 * for any length above the small-I/O rule's.) */
static int write_cached(const struct xfer *x, const struct slot *s)
{
    uint64_t doff;
    int d = store_disk_of(x->of, s->a, &doff);
    return use_cache(x, d, 1, doff + s->write_lo, (size_t)(s->write_hi - s->write_lo));
}

static void submit_io(struct xfer *x, struct slot *s, int write, size_t len)
{
    uint64_t doff;
    int d = store_disk_of(x->of, s->a, &doff);
    /* an exact write is not sector-aligned: it can only go through the cache */
    int cache = (write && s->exact) || use_cache(x, d, write, doff + s->io_lo, len);
    /* a root without O_DIRECT (tmpfs) has one descriptor, through the cache */
    s->cached = cache || !x->srv->store.direct[d];
    int fd = cache && x->of->bfds[d] >= 0 ? x->of->bfds[d] : x->of->fds[d];
    s->dr = (struct disk_req){.fd = fd, .write = write,
                              .buf = (uint8_t *)s->buf + s->io_lo, .off = doff + s->io_lo,
                              .len = len, .cb = disk_done_cb, .arg = s};
    if (write && s->exact == EXACT_RUNS) {
        s->dr.segs = s->runs;
        s->dr.nsegs = s->nruns;
    }
    s->io_busy = 1;
    if (cache)                    /* a memory copy: not worth two thread wakeups */
        disk_run_now(s->disk, &s->dr);
    else
        disk_submit(s->disk, &s->dr);
}

/* what a finished disk request moved, by path (STATS read_cache_bytes ...) */
static void count_io(struct xfer *x, const struct slot *s)
{
    uint64_t n = s->dr.done;
    if (s->dr.write && s->cached)
        x->ctr.write_cache_bytes += n;
    else if (s->dr.write)
        x->ctr.write_direct_bytes += n;
    else if (s->cached)
        x->ctr.read_cache_bytes += n;
    else
        x->ctr.read_disk_bytes += n;
    if (s->dr.write && s->cached && s->dr.res == 0 && x->of->bfds[s->disk->idx] >= 0)
        store_note_cached_write(x->of, s->disk->idx, s->dr.off, n);
}

static size_t round4k(uint64_t n)
{
    return (size_t)((n + 4095) & ~(uint64_t)4095);
}

/* end of the sector holding byte n-1 of a block, at most the block's end */
static uint64_t sector_end(const struct xfer *x, uint64_t n)
{
    return round4k(n) < x->B ? round4k(n) : x->B;
}

static void release_slot(struct xfer *x, struct slot *s)
{
    if (s->abandon)
        disk_buf_abandon(s->disk, s->buf);
    else
        disk_buf_put(s->disk, s->buf);
    s->abandon = 0;
    if (s->locked)
        store_blk_unlock(x->of, s->k);
    s->state = S_FREE;
    s->locked = 0;
    s->buf = NULL;
    x->inflight--;
}

/* ---- read pipeline ------------------------------------------------------------------------- */

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
        ddio_desc_gather(&src->p->d, (const uint8_t *)src->s->buf + g->boff, g->L,
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
        struct piece_ctx pc = {(uint8_t *)src->s->buf + g->boff, g->L, fn, cbarg};
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

static void read_done(struct xfer *x, struct slot *s)
{
    if (s->dr.res < 0) {
        FAIL(x, -s->dr.res, "read of %s on disk %d: %s", x->of->path, s->disk->idx,
             ddio_errno_name(-s->dr.res));
        return;
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
            size_t n = block_segs(x, p, &o, end, s->a, g, SEGS_PER_MSG);
            rc = n ? send_err(s, send_put(x, p, s, g, n)) : 0;
            if (rc)
                FAIL(x, -rc, "send to rank %u (%s): %s", r, xp_name(p->ep),
                     ddio_errno_name(-rc));
        }
    }
    /* puts still reading the block (UCX) end before it is reused, also
     * after a failure */
    int64_t t0 = ddio_now_us();
    for (uint32_t r = 0; r < x->n; r++) {
        int src = x->parts[r].present ? send_err(s, xp_sync(x->parts[r].ep, deadline_of(x)))
                                      : 0;
        if (src && !rc)
            FAIL(x, -src, "send to rank %u (%s): %s", r, xp_name(x->parts[r].ep),
                 ddio_errno_name(-src));
        rc |= src;
    }
    x->ctr.net_us += (uint64_t)(ddio_now_us() - t0);
}

/* ---- write pipeline ------------------------------------------------------------------------- */

/* x->bitmap: bit i set when byte i of block s is written by a participant;
 * returns how many are; *overlap = 1 when two write one byte */
static uint64_t cover_bitmap(struct xfer *x, const struct slot *s, int *overlap)
{
    struct bseg g[SEGS_PER_MSG];
    uint64_t added = 0;
    memset(x->bitmap, 0, x->B / 8);
    for (uint32_t r = 0; r < x->n; r++) {
        struct part *p = &x->parts[r];
        uint64_t o = s->a, end = s->a + x->B;
        while (o < end) {
            size_t n = block_segs(x, p, &o, end, s->a, g, SEGS_PER_MSG);
            for (size_t i = 0; i < n; i++)   /* bit boff is address L */
                added += ddio_desc_cover(&p->d, x->bitmap, g[i].L - (int64_t)g[i].boff,
                                         g[i].s_lo, g[i].s_hi, overlap);
        }
    }
    return added;
}

/* Which participants write this block, how much of it, up to where, and
 * whether two of them overlap. With one writer the count of its bytes
 * decides full coverage (a monotone stream never repeats a byte); with
 * several, a bitmap of the block does. */
static void write_coverage(struct xfer *x, struct slot *s)
{
    struct bseg g[SEGS_PER_MSG];
    uint64_t bytes = 0;
    uint32_t writers = 0;
    s->write_hi = 0;
    s->write_lo = x->B;
    for (uint32_t r = 0; r < x->n; r++) {
        struct part *p = &x->parts[r];
        uint64_t o = s->a, end = s->a + x->B, mine = 0;
        while (o < end) {
            size_t n = block_segs(x, p, &o, end, s->a, g, SEGS_PER_MSG);
            for (size_t i = 0; i < n; i++) {
                mine += g[i].s_hi - g[i].s_lo;
                uint64_t lo = seg_lo(p, &g[i]), hi = seg_hi(p, &g[i]);
                if (hi > s->write_hi)
                    s->write_hi = hi;
                if (lo < s->write_lo)
                    s->write_lo = lo;
            }
        }
        writers += mine > 0;
        bytes += mine;
    }
    s->overlap = 0;
    if (writers < 2) {
        s->full = bytes == x->B;
        s->contig = writers == 1 && bytes == s->write_hi - s->write_lo;
        return;
    }
    s->contig = 0;
    int overlap = 0;
    uint64_t added = cover_bitmap(x, s, &overlap);
    s->overlap = overlap;
    s->full = added == x->B;
}

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

/* ask participant p for its segments g of the block (one GET) */
static int send_get(struct xfer *x, struct slot *s, struct part *p, const struct bseg *g, size_t n)
{
    struct pget *pg = calloc(1, sizeof(*pg) + n * (sizeof(struct ddio_seg) + sizeof(struct pseg)));
    if (!pg)
        return -ENOMEM;
    struct ddio_seg *segs = (struct ddio_seg *)(pg + 1);
    pg->seg = (struct pseg *)(segs + n);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        segs[i] = (struct ddio_seg){g[i].s_lo, g[i].s_hi - g[i].s_lo};
        pg->seg[i] = (struct pseg){(uint8_t *)s->buf + g[i].boff, g[i].L};
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
    pthread_mutex_unlock(&x->mu);
    if (p->inl) {                 /* the bytes came with the XFER: no round trip */
        for (uint32_t i = 0; i < pg->g.nseg; i++)
            engine_get_sink(&pg->g, i, segs[i].off, p->inl + segs[i].off, (size_t)segs[i].len);
        engine_get_done(&pg->g, 0, NULL);
        return 0;
    }
    int rc = xp_get(p->ep, &pg->g, deadline_of(x));   /* pg is the transport's */
    if (rc == 0)
        p->last_ms = ddio_now_ms();
    return rc;
}

/* GETs for participant p's bytes in the block; returns how many, or -errno */
static int pull_from(struct xfer *x, struct slot *s, struct part *p)
{
    struct bseg g[SEGS_PER_MSG];
    uint64_t o = s->a, end = s->a + x->B;
    int sent = 0;
    while (o < end) {
        size_t n = block_segs(x, p, &o, end, s->a, g, SEGS_PER_MSG);
        if (n == 0)
            continue;
        int rc = send_get(x, s, p, g, n);
        if (rc)
            return rc;
        sent++;
    }
    return sent;
}

static void submit_write(struct xfer *x, struct slot *s);

/* A block whose data is complete is written only after every block planned
 * before it on the same disk: the pulls finish in whatever order the ranks
 * answer, but the disk sees the sorted order the plan chose (Kotz's point;
 * the nonconsec counter showed 62-192 of 256 blocks out of order before).
 * A held buffer waits at most for the blocks ahead of it, which are all
 * already issued, so this cannot deadlock. Engine thread only. */
static void write_in_order(struct xfer *x, struct slot *s)
{
    int d = s->disk->idx;
    s->state = S_HELD;
    for (int found = 1; found;) {
        found = 0;
        for (unsigned i = 0; i < x->nslots; i++) {
            struct slot *h = &x->slots[i];
            if (h->state == S_HELD && h->disk->idx == d && h->ord == x->w_next[d]) {
                x->w_next[d]++;
                submit_write(x, h);
                found = 1;
            }
        }
    }
}

/* Writes [io_lo, write_hi): only the sectors the call changed (old bytes
 * around them came from the read-modify-write, or are zeros past the end). */
static void submit_write(struct xfer *x, struct slot *s)
{
    uint64_t end = s->write_hi;
    if (x->srv->store.direct[s->disk->idx] && !s->exact)
        end = round4k(end);       /* O_DIRECT: whole 4 KiB sectors; trimmed later */
    if (end > x->B)
        end = x->B;
    uint64_t len = end - s->io_lo;
    if (s->exact == EXACT_RUNS) {
        len = 0;
        for (size_t i = 0; i < s->nruns; i++)
            len += s->runs[i].hi - s->runs[i].lo;
    }
    if (len == 0) {               /* no byte of this block was written */
        s->state = S_WRITE;
        s->dr.res = 0;
        pthread_mutex_lock(&x->mu);
        post_locked(x, s);
        pthread_mutex_unlock(&x->mu);
        return;
    }
    fault_hit(is_collective(x) ? FAULT_COLL_WRITE : FAULT_INDEP_WRITE);
    store_note_write(x->of, s->a + s->write_hi);
    s->state = S_WRITE;
    submit_io(x, s, 1, (size_t)len);
}

/* Pull the next participant(s) data; when nothing is left, write. In
 * overlap mode one participant at a time in rank order, so the higher rank's
 * bytes land last; otherwise all at once (disjoint bytes, any order). */
static void pull_next(struct xfer *x, struct slot *s)
{
    if (s->state != S_DATA)       /* the block's first step: its pull starts */
        s->t_pull_us = ddio_now_us();
    s->state = S_DATA;
    for (;;) {
        /* hold one count while sending, so a quick DATA answer cannot bring
         * pending to 0 (and post an event) before this step's GETs are out */
        pthread_mutex_lock(&x->mu);
        s->pending++;
        pthread_mutex_unlock(&x->mu);
        while (s->next_part < x->n) {
            struct part *p = &x->parts[s->next_part++];
            int rc = pull_from(x, s, p);
            if (rc < 0) {
                FAIL(x, -rc, "GET to rank %u (%s): %s", p->rank, xp_name(p->ep),
                     ddio_errno_name(-rc));
                break;
            }
            if (rc > 0 && s->overlap)
                break;            /* this rank's DATA must land before the next's */
        }
        pthread_mutex_lock(&x->mu);
        int waiting = --s->pending > 0;
        int bad = x->status;
        pthread_mutex_unlock(&x->mu);
        if (waiting || bad)
            return;               /* the last DATA posts the slot again */
        if (s->next_part >= x->n) {
            x->ctr.net_us += (uint64_t)(ddio_now_us() - s->t_pull_us);
            write_in_order(x, s);
            return;
        }
        /* overlap mode and the answer already came: pull the next rank */
    }
}

/* The ranges of block s the call writes, into s->runs (block offsets),
 * from a bitmap of the block's coverage by every participant. 0 or -ENOMEM. */
static int written_runs(struct xfer *x, struct slot *s)
{
    int overlap = 0;
    if (!x->bitmap && !(x->bitmap = calloc(x->B / 64, sizeof(uint64_t))))
        return -ENOMEM;
    cover_bitmap(x, s, &overlap);
    s->nruns = 0;
    for (uint64_t b = s->write_lo; b < s->write_hi;) {
        if (!(x->bitmap[b / 64] >> (b % 64) & 1)) {
            b++;
            continue;
        }
        uint64_t e = b;
        while (e < s->write_hi && (x->bitmap[e / 64] >> (e % 64) & 1))
            e++;
        if (s->nruns == s->capruns) {
            size_t cap = s->capruns ? 2 * s->capruns : 16;
            struct disk_seg *v = realloc(s->runs, cap * sizeof(*v));
            if (!v)
                return -ENOMEM;
            s->runs = v;
            s->capruns = cap;
        }
        s->runs[s->nruns++] = (struct disk_seg){b, e};
        b = e;
    }
    return 0;
}

/* A file a same-host client writes itself (store.h local_writers): a partly
 * covered block goes to the page cache byte-exact, one pwrite per written
 * range, never read and written back whole sectors: those would put old
 * bytes back over what the client wrote meanwhile to the same sectors. */
static void exact_runs(struct xfer *x, struct slot *s)
{
    int rc = written_runs(x, s);
    if (rc) {
        FAIL(x, -rc, "write of %s: %s", x->of->path, ddio_errno_name(-rc));
        release_slot(x, s);
        return;
    }
    s->exact = EXACT_RUNS;
    s->io_lo = 0;
    pull_next(x, s);
}

/* A partly covered block reads (and later writes) only the sectors around
 * the bytes written: a small independent write costs a sector or two, not
 * a whole block read and written back. One range written through the page
 * cache reads nothing: the kernel fills partial pages itself. */
static void start_write(struct xfer *x, struct slot *s)
{
    write_coverage(x, s);
    s->next_part = 0;
    s->exact = 0;
    if (s->full || s->write_hi <= s->write_lo) {   /* all of it, or nothing */
        s->io_lo = 0;
        pull_next(x, s);
        return;
    }
    int local_writers = __atomic_load_n(&x->of->local_writers, __ATOMIC_ACQUIRE);
    if (local_writers && !s->contig) {
        exact_runs(x, s);
        return;
    }
    if (s->contig && (local_writers || write_cached(x, s))) {
        s->exact = 1;             /* the page cache merges it: no sectors to fill */
        s->io_lo = s->write_lo;
        pull_next(x, s);
        return;
    }
    s->io_lo = s->write_lo & ~(uint64_t)4095;
    uint64_t hi = sector_end(x, s->write_hi);
    if (s->old_valid > s->io_lo) {
        uint64_t old_hi = round4k(s->old_valid) < hi ? round4k(s->old_valid) : hi;
        s->state = S_RMW;         /* partly covered, inside the file: read first */
        submit_io(x, s, 0, (size_t)(old_hi - s->io_lo));
        return;
    }
    memset((uint8_t *)s->buf + s->io_lo, 0, hi - s->io_lo);
    pull_next(x, s);
}

/* after the read of a read-modify-write: what the datafile did not hold
 * (past its end) is zeros, up to the last sector the write touches */
static void rmw_zero_tail(struct xfer *x, struct slot *s)
{
    uint64_t hi = sector_end(x, s->write_hi);
    uint64_t got = s->io_lo + s->dr.done;
    if (got < hi)
        memset((uint8_t *)s->buf + got, 0, hi - got);
}

static int io_error(struct xfer *x, struct slot *s, const char *what)
{
    if (s->dr.res >= 0)
        return 0;
    FAIL(x, -s->dr.res, "%s of %s on disk %d: %s", what, x->of->path, s->disk->idx,
         ddio_errno_name(-s->dr.res));
    return 1;
}

static void process(struct xfer *x, struct slot *s)
{
    if (s->io_busy) {             /* S_READ, S_RMW, or S_WRITE of a byte or more */
        x->ctr.disk_us += s->dr.us;
        count_io(x, s);
    }
    s->io_busy = 0;
    switch (s->state) {
    case S_READ:
        read_done(x, s);
        release_slot(x, s);
        break;
    case S_RMW:
        if (io_error(x, s, "read"))
            break;
        x->ctr.blocks_read++;
        x->ctr.nonconsec += (uint64_t)s->dr.nonconsec;
        rmw_zero_tail(x, s);
        pull_next(x, s);
        break;
    case S_DATA:                  /* every GET of the step was answered */
        pull_next(x, s);
        break;
    case S_WRITE:
        if (io_error(x, s, "write"))
            break;
        x->ctr.blocks_written++;
        x->ctr.nonconsec += (uint64_t)s->dr.nonconsec;
        release_slot(x, s);
        break;
    }
}

/* ---- issuing blocks ---------------------------------------------------------------------- */

static struct slot *free_slot(struct xfer *x)
{
    for (unsigned i = 0; i < x->nslots; i++)
        if (x->slots[i].state == S_FREE)
            return &x->slots[i];
    return NULL;
}

/* The blocking waits for another XFER's block lock or disk buffer go in
 * heartbeat-sized slices up to the deadline: waiting for a busy disk is
 * progress as far as the participants are concerned. */
static int lock_block(struct xfer *x, uint64_t k, int wait, int64_t dl)
{
    int rc;
    do
        rc = store_blk_lock(x->of, k, wait, wait ? beat_slice(x, dl) : dl);
    while (rc == -ETIMEDOUT && ddio_now_ms() < dl);
    return rc;
}

static void *get_buffer(struct xfer *x, struct disk *disk, int wait, int64_t dl)
{
    void *buf;
    do
        buf = disk_buf_get(disk, wait, wait ? beat_slice(x, dl) : dl);
    while (!buf && wait && ddio_now_ms() < dl);
    return buf;
}

/* The part of a block a read needs, as whole 4 KiB sectors [*lo, *hi) below
 * s->old_valid: a few bytes of independent I/O read one sector, not the
 * whole block (a 1 MiB read per 8-byte request on a disk). */
static void read_range(struct xfer *x, const struct slot *s, uint64_t *lo, uint64_t *hi)
{
    struct bseg g[SEGS_PER_MSG];
    uint64_t l = s->old_valid, h = 0;
    for (uint32_t r = 0; r < x->n && (l > 0 || h < s->old_valid); r++) {
        const struct part *p = &x->parts[r];
        uint64_t o = s->a, end = s->a + s->old_valid;
        while (o < end) {
            size_t n = block_segs(x, p, &o, end, s->a, g, SEGS_PER_MSG);
            for (size_t i = 0; i < n; i++) {
                uint64_t first = seg_lo(p, &g[i]), past = seg_hi(p, &g[i]);
                l = first < l ? first : l;
                h = past > h ? past : h;
            }
        }
    }
    if (h <= l) {                 /* nobody needs it (cannot happen for a planned block) */
        *lo = *hi = 0;
        return;
    }
    *lo = l & ~(uint64_t)4095;
    *hi = round4k(h < s->old_valid ? h : s->old_valid);
}

/* Start block k. wait = 0: -EAGAIN when a buffer or the block lock is busy
 * (the caller first finishes its own in-flight blocks). */
static int issue_block(struct xfer *x, uint64_t k, int wait)
{
    struct slot *s = free_slot(x);
    if (!s)
        return -EAGAIN;
    uint64_t doff;
    int d = store_disk_of(x->of, k * x->B, &doff);
    struct disk *disk = &x->srv->disks[d];
    int64_t dl = deadline_of(x);
    int write = x->op == DDIO_X_WRITE;
    if (write) {
        int rc = lock_block(x, k, wait, dl);
        if (rc == -ETIMEDOUT)
            FAIL(x, ETIMEDOUT, "block %" PRIu64 " of %s stayed locked for %u ms",
                 k, x->of->path, x->timeout_ms);
        if (rc)
            return rc;
    }
    void *buf = get_buffer(x, disk, wait, dl);
    if (!buf) {
        if (write)
            store_blk_unlock(x->of, k);
        if (!wait)
            return -EAGAIN;
        FAIL(x, ETIMEDOUT, "no free buffer on disk %d for %u ms", d, x->timeout_ms);
        return -ETIMEDOUT;
    }
    uint64_t size = store_size(x->of), a = k * x->B;
    s->k = k;
    s->a = a;
    s->disk = disk;
    s->buf = buf;
    s->locked = write;
    s->io_lo = 0;
    s->old_valid = size > a ? (size - a < x->B ? size - a : x->B) : 0;
    x->inflight++;
    if (write) {
        s->ord = x->w_issued[d]++;
        start_write(x, s);
    } else if (s->old_valid == 0) {
        release_slot(x, s);       /* truncated meanwhile: nothing to send */
    } else {
        uint64_t lo, hi;
        read_range(x, s, &lo, &hi);
        if (hi == lo) {
            release_slot(x, s);
            return 0;
        }
        s->state = S_READ;
        s->io_lo = lo;
        submit_io(x, s, 0, (size_t)(hi - lo));
    }
    return 0;
}

/* ---- the pass ----------------------------------------------------------------------------- */

/* take back the GETs still out (the transport waits for answers arriving) */
static void cancel_pgets(struct xfer *x)
{
    for (uint32_t r = 0; r < x->n; r++) {
        struct xp *ep = x->parts[r].ep;
        if (!ep || (r > 0 && ep == x->parts[r - 1].ep))
            continue;
        struct xp_get *g = xp_cancel(ep, x);
        while (g) {
            struct xp_get *next = g->next;
            free(pget_of(g));
            g = next;
        }
    }
}

/* after a failure: let disk I/O finish, then give everything back */
static void drain(struct xfer *x)
{
    cancel_pgets(x);
    for (;;) {
        unsigned busy = 0;
        for (unsigned i = 0; i < x->nslots; i++)
            busy += (unsigned)x->slots[i].io_busy;
        if (!busy)
            break;
        struct slot *s = wait_event(x, 1);
        if (s)
            s->io_busy = 0;
    }
    for (unsigned i = 0; i < x->nslots; i++)
        if (x->slots[i].state != S_FREE)
            release_slot(x, &x->slots[i]);
}

static int alloc_run(struct xfer *x)
{
    x->nslots = (unsigned)x->srv->ndisks * x->srv->cfg.buffers;
    x->slots = calloc(x->nslots, sizeof(*x->slots));
    x->ready = calloc(x->nslots * 2, sizeof(*x->ready));
    x->bitmap = (x->op == DDIO_X_WRITE && x->n > 1) ? calloc(x->B / 64, sizeof(uint64_t)) : NULL;
    x->w_issued = calloc((size_t)x->srv->ndisks, sizeof(uint64_t));
    x->w_next = calloc((size_t)x->srv->ndisks, sizeof(uint64_t));
    if (!x->slots || !x->ready || (x->op == DDIO_X_WRITE && x->n > 1 && !x->bitmap) ||
        !x->w_issued || !x->w_next)
        return -ENOMEM;
    for (unsigned i = 0; i < x->nslots; i++) {
        x->slots[i].x = x;
        x->slots[i].idx = i;
    }
    return 0;
}


static int plan(struct xfer *x)
{
    const struct ddio_desc **descs = calloc(x->n, sizeof(*descs));
    if (!descs)
        return -ENOMEM;
    for (uint32_t r = 0; r < x->n; r++)
        descs[r] = x->parts[r].have_desc ? &x->parts[r].d : NULL;
    struct plan_in in = {
        .descs = descs, .n = x->n, .stripe = x->S, .me = x->me, .disks = x->of->disks,
        .limit = x->op == DDIO_X_READ ? store_size(x->of) : UINT64_MAX,
        .fds = x->of->fds, .nosort = (x->flags & DDIO_XF_NOSORT) != 0,
        .rotate = x->srv->cfg.rotate,
        .max_blocks = x->srv->cfg.max_call_mem / 2 / PLAN_BLOCK_BYTES,
    };
    int sorted = 0;
    int rc = plan_blocks(&in, &x->blocks, &x->nblocks, &sorted);
    if (rc == 0 && is_collective(x))     /* costs a FIEMAP per disk: only here */
        x->ctr.out_of_order = plan_out_of_order(&in, x->blocks, x->nblocks);
    free(descs);
    x->ctr.sorted = (uint64_t)sorted;
    x->ctr.blocks = x->nblocks;
    return rc;
}

static void pipeline(struct xfer *x)
{
    size_t next = 0;
    while (!failed(x)) {
        while (next < x->nblocks) {
            int rc = issue_block(x, x->blocks[next], x->inflight == 0);
            if (rc == -EAGAIN)
                break;
            if (rc) {
                FAIL(x, -rc, "%s block %" PRIu64 ": %s", op_name(x->op), x->blocks[next],
                     ddio_errno_name(-rc));
                break;
            }
            next++;
        }
        if (failed(x) || (next == x->nblocks && x->inflight == 0))
            break;
        struct slot *s = wait_event(x, 0);
        if (s)
            process(x, s);
    }
}

static void run(struct xfer *x)
{
    x->S.unit = x->of->layout.stripe_unit;
    x->S.count = x->of->layout.stripe_count;
    x->me = x->of->layout.server_index;
    x->B = x->of->block_size;
    int64_t t0 = ddio_now_us();
    int rc = alloc_run(x);
    if (rc == 0)
        rc = plan(x);
    if (rc == -E2BIG)
        FAIL(x, E2BIG, "planning %s: the call touches more than %" PRIu64 " blocks here "
             "(server limit --max-call-memory %" PRIu64 " bytes)", op_name(x->op),
             x->srv->cfg.max_call_mem / 2 / PLAN_BLOCK_BYTES, x->srv->cfg.max_call_mem);
    else if (rc)
        FAIL(x, -rc, "planning %s: %s", op_name(x->op), ddio_errno_name(-rc));
    else
        pipeline(x);
    if (failed(x))
        drain(x);
    if (x->op == DDIO_X_WRITE && (rc = store_trim(x->of)) != 0)
        FAIL(x, -rc, "truncate %s after write: %s", x->of->path, ddio_errno_name(-rc));
    x->ctr.io_us = (uint64_t)(ddio_now_us() - t0);
}

/* ---- DONE ------------------------------------------------------------------------------------ */

static void send_done(struct xfer *x, struct part *p)
{
    if (!p->present || p->answered)
        return;
    p->answered = 1;
    if (x->status) {              /* x->msg already names the server */
        struct ddio_wbuf e;
        ddio_wbuf_init(&e);
        ddio_enc_err(&e, x->msg);
        if (!e.err)
            xp_reply(p->ep, DDIO_T_XFER | DDIO_REPLY, p->req, x->status, e.p, e.len,
                     deadline_of(x));
        else
            ddio_wbuf_free(&e);
        return;
    }
    struct ddio_xfer_r r = {
        .bytes = p->bytes, .local_size = store_size(x->of),
        .desc_bytes = x->ctr.desc_bytes, .blocks_read = x->ctr.blocks_read,
        .blocks_written = x->ctr.blocks_written, .nonconsec = x->ctr.nonconsec,
        .bytes_to_rank = p->to, .bytes_from_rank = p->from,
        .wait_us = x->ctr.wait_us, .io_us = x->ctr.io_us, .sorted = x->ctr.sorted,
    };
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_xfer_r(&w, &r);
    if (w.err) {
        ddio_wbuf_free(&w);
        xp_reply_err(p->ep, DDIO_T_XFER | DDIO_REPLY, p->req, ENOMEM, "DONE: out of memory");
        return;
    }
    if (p->once)
        replay_note(p->once_client, p->once_call, w.p, w.len);
    xp_reply(p->ep, DDIO_T_XFER | DDIO_REPLY, p->req, 0, w.p, w.len, deadline_of(x));
}

static void finish(struct xfer *x)
{
    /* counted before DONE: a client that reads STATS after its call sees it */
    x->ctr.nparticipants = x->n;
    stats_xfer(&x->srv->stats, &x->ctr, is_collective(x), x->status != 0);
    for (uint32_t r = 0; r < x->n; r++)
        send_done(x, &x->parts[r]);
    DDIO_DEBUG("xfer %s %s group %" PRIx64 " seq %" PRIu64 " P=%u: status %s blocks %" PRIu64
               " read %" PRIu64 " written %" PRIu64 " nonconsec %" PRIu64 " sent %" PRIu64
               " recv %" PRIu64 " desc %" PRIu64 " wait %" PRIu64 "us io %" PRIu64 "us disk %"
               PRIu64 "us net %" PRIu64 "us sorted %"
               PRIu64 " out_of_order %" PRIu64, op_name(x->op), x->of->path, x->group, x->seq,
               x->n, x->status ? ddio_errno_name(x->status) : "ok", x->ctr.blocks,
               x->ctr.blocks_read, x->ctr.blocks_written, x->ctr.nonconsec, x->ctr.bytes_sent,
               x->ctr.bytes_recv, x->ctr.desc_bytes, x->ctr.wait_us, x->ctr.io_us,
               x->ctr.disk_us, x->ctr.net_us, x->ctr.sorted, x->ctr.out_of_order);
}

/* a participant whose endpoint engine_conn_dropped saw go */
static int part_dropped(const struct part *p)
{
    return p->present && __atomic_load_n(&p->ep->dropped, __ATOMIC_ACQUIRE);
}

/* An XFER whose participant's endpoint was dropped before the XFER was
 * listed (its request thread was between reading it and joining when the
 * client died) fails now instead of at the gate's deadline: the drop's scan
 * of the lists did not see it. x->mu held (and e->mu, or the XFER is
 * not listed yet). */
static void fail_if_dropped_locked(struct xfer *x)
{
    for (uint32_t r = 0; r < x->n; r++)
        if (part_dropped(&x->parts[r])) {
            fail_locked(x, ECONNRESET, "rank %u (%s) disconnected", r, xp_name(x->parts[r].ep));
            break;
        }
}

static void fail_if_dropped(struct xfer *x)
{
    pthread_mutex_lock(&x->mu);
    fail_if_dropped_locked(x);
    pthread_mutex_unlock(&x->mu);
}

/* run an XFER (all participants present, or those of a re-formed resend)
 * and answer everyone */
static void execute(struct server *srv, struct xfer *x)
{
    struct engine *e = srv->eng;
    pthread_mutex_lock(&e->mu);
    x->next = e->running;
    e->running = x;
    fail_if_dropped(x);
    pthread_mutex_unlock(&e->mu);
    x->ctr.wait_us = (uint64_t)(ddio_now_us() - x->t_first_us);
    if (!failed(x))
        run(x);
    for (uint32_t r = 0; r < x->n; r++)
        x->ctr.bytes_recv += x->parts[r].from;
    pthread_mutex_lock(&e->mu);
    list_remove(&e->running, x);
    pthread_mutex_unlock(&e->mu);
    finish(x);
    xfer_free(x);
}

/* ---- arrival and the collective gate ------------------------------------------------------- */

/* decode one participant's descriptor; on failure the message says why */
static int load_desc(const struct srv_config *cfg, struct part *p, const struct ddio_xfer *m,
                     char *why, size_t n)
{
    uint64_t nodes = cfg->max_call_mem / 2 / DESC_NODE_BYTES / m->nparticipants;
    int rc = ddio_desc_decode_lim(m->desc, m->desc_len,
                                  (uint32_t)(nodes < DDIO_DESC_MAX_NODES ? nodes : DDIO_DESC_MAX_NODES),
                                  cfg->max_depth, &p->d);
    if (rc == -E2BIG) {
        snprintf(why, n, "rank %u: descriptor deeper than %u levels or larger than "
                 "%" PRIu64 " nodes (server limits --max-desc-depth, --max-call-memory)",
                 m->rank, cfg->max_depth, nodes);
        return -E2BIG;
    }
    if (rc) {
        snprintf(why, n, "rank %u: malformed descriptor (%s)", m->rank, ddio_errno_name(-rc));
        return -EPROTO;
    }
    p->have_desc = 1;
    if (ddio_desc_check_monotone(&p->d)) {
        snprintf(why, n, "rank %u: descriptor is not monotone in the file", m->rank);
        return -EINVAL;
    }
    ddio_desc_bounds(&p->d, &p->first, &p->end);
    return 0;
}

static void add_part(struct xfer *x, struct xp *ep, uint64_t req, const struct ddio_xfer *m,
                     int *bad, char *why, size_t whylen)
{
    struct part *p = &x->parts[m->rank];
    xp_ref(ep);
    p->ep = ep;
    p->req = req;
    p->rank = m->rank;
    p->present = 1;
    p->last_ms = ddio_now_ms();   /* its client's deadline starts now */
    p->once = (m->flags & DDIO_XF_ONCE) != 0;
    p->once_client = m->once_client;
    p->once_call = m->once_call;
    x->arrived++;
    x->resent |= (m->flags & DDIO_XF_RESENT) != 0;
    x->last_arrival_ms = p->last_ms;
    x->ctr.desc_bytes += m->desc_len;
    *bad = load_desc(&x->srv->cfg, p, m, why, whylen);
    if (!*bad && (m->flags & DDIO_XF_INLINE)) {
        if (m->inline_len == p->d.length)
            p->inl = m->inline_data;
        else {
            snprintf(why, whylen, "rank %u: %u inline bytes for a stream of %" PRIu64,
                     m->rank, m->inline_len, p->d.length);
            *bad = -EPROTO;
        }
    }
}

/* the gate this XFER joins (e->mu held); a resend passes by a failed one
 * (its first attempt's, still waiting for late participants) */
static struct xfer *find_gate(struct engine *e, const struct ofile *of, const struct ddio_xfer *m)
{
    for (struct xfer *x = e->gates; x; x = x->next) {
        if (x->of != of || x->group != m->group || x->seq != m->seq)
            continue;
        if (!(m->flags & DDIO_XF_RESENT) || !failed(x))
            return x;
    }
    return NULL;
}

/* Until when the gate waits: the deadline, or for a resent call (x->mu
 * held) RESEND_GRACE_MS after the latest arrival. A collective's parts are
 * independent (each rank's bytes are its own; the gate only buys one sorted
 * sweep), so a resent call runs with the participants that came: the others
 * were answered before a restart, or come later and run on their own. */
static int64_t gate_until(const struct xfer *x, int64_t dl)
{
    return x->resent ? min64(dl, x->last_arrival_ms + RESEND_GRACE_MS) : dl;
}

/* nobody else came in time: a resent call runs with those present, another
 * fails; x->mu held */
static void gate_expired(struct xfer *x)
{
    if (x->resent) {
        DDIO_INFO("collective %s seq %" PRIu64 " resent: running %u of %u participants "
                  "(the others were answered before, or run on their own)", op_name(x->op),
                  x->seq, x->arrived, x->n);
        return;
    }
    fail_locked(x, ETIMEDOUT, "collective %s seq %" PRIu64 ": %u of %u participants "
                "arrived within %u ms", op_name(x->op), x->seq, x->arrived, x->n,
                x->timeout_ms);
}

/* every participant that came has lost its connection (a job that died):
 * x->mu held */
static int arrived_all_dropped(const struct xfer *x)
{
    for (uint32_t r = 0; r < x->n; r++)
        if (x->parts[r].present && !part_dropped(&x->parts[r]))
            return 0;
    return 1;
}

/* The creator waits for the others (or the deadline) and runs the pass.
 * After a failure the gate stays until everyone arrived or the deadline, so
 * late participants get the error at once instead of waiting in vain; but
 * not once every participant that came is gone (the job died: its request
 * threads and connections are let go now, and a late rank, if any, meets
 * a gate of its own and its deadline). */
static void gate_wait(struct server *srv, struct xfer *x)
{
    int64_t dl = x->t_first_us / 1000 + x->timeout_ms;
    pthread_mutex_lock(&x->mu);
    while (x->arrived < x->n) {
        if (x->status) {
            pthread_mutex_unlock(&x->mu);
            for (uint32_t r = 0; r < x->n; r++)
                send_done(x, &x->parts[r]);   /* parts are stable: only added */
            pthread_mutex_lock(&x->mu);
            if (atomic_load(&srv->stopping))
                break;            /* nobody waits for late ones: they resend */
            if (arrived_all_dropped(x))
                break;
        }
        int64_t wake = beat_locked(x);
        if (x->arrived >= x->n)
            break;                /* the last one came while the lock was dropped */
        if (cond_wait_ms(&x->cv, &x->mu, min64(wake, gate_until(x, dl))) == ETIMEDOUT
            && x->arrived < x->n && ddio_now_ms() >= gate_until(x, dl)) {
            gate_expired(x);
            break;
        }
    }
    pthread_mutex_unlock(&x->mu);
    pthread_mutex_lock(&srv->eng->mu);
    list_remove(&srv->eng->gates, x);
    pthread_mutex_unlock(&srv->eng->mu);
    execute(srv, x);
}

static int same_op(const struct xfer *x, const struct ddio_xfer *m)
{
    return x->op == m->op && x->n == m->nparticipants
        && (x->flags & DDIO_XF_NOSORT) == (m->flags & DDIO_XF_NOSORT);
}

static void join(struct server *srv, struct xp *ep, uint64_t req, const struct ddio_xfer *m,
                 struct ofile *of)
{
    struct engine *e = srv->eng;
    char why[256];
    int bad = 0;
    pthread_mutex_lock(&e->mu);
    if (atomic_load(&srv->stopping)) {
        /* a gate now could wait for ranks that cannot connect any more.
         * Checked under e->mu: engine_stopping fails the gates under it
         * after the flag is set, so a join racing the signal either sees
         * the flag here or its gate is failed there (CI: a gate made in
         * that window held the drain for the whole timeout) */
        pthread_mutex_unlock(&e->mu);
        store_release(&srv->store, of);
        atomic_fetch_add(&srv->stop_refused, 1);
        xp_reply_err(ep, DDIO_T_XFER | DDIO_REPLY, req, ECONNRESET, "%s", STOPPING_MSG);
        return;
    }
    struct xfer *x = find_gate(e, of, m);
    if (x) {
        store_release(&srv->store, of);   /* the gate holds the file already */
        pthread_mutex_lock(&x->mu);
        if (!same_op(x, m) || x->parts[m->rank].present) {
            fail_locked(x, EINVAL, "collective seq %" PRIu64 ": rank %u disagrees (op, count "
                        "or duplicate rank)", m->seq, m->rank);
            pthread_mutex_unlock(&x->mu);
            pthread_mutex_unlock(&e->mu);
            xp_reply_err(ep, DDIO_T_XFER | DDIO_REPLY, req, EINVAL,
                         "collective seq %" PRIu64 ": participant mismatch (rank %u)",
                         m->seq, m->rank);
            return;
        }
        add_part(x, ep, req, m, &bad, why, sizeof(why));
        if (bad)
            fail_locked(x, -bad, "%s", why);
        else
            fail_if_dropped_locked(x);
        pthread_cond_broadcast(&x->cv);
        pthread_mutex_unlock(&x->mu);
        pthread_mutex_unlock(&e->mu);
        return;                   /* the creator runs it */
    }
    x = xfer_new(srv, m, of);
    if (!x) {
        pthread_mutex_unlock(&e->mu);
        store_release(&srv->store, of);
        xp_reply_err(ep, DDIO_T_XFER | DDIO_REPLY, req, ENOMEM, "xfer: out of memory");
        return;
    }
    add_part(x, ep, req, m, &bad, why, sizeof(why));
    if (bad)
        FAIL(x, -bad, "%s", why);
    x->next = e->gates;
    e->gates = x;
    fail_if_dropped(x);
    pthread_mutex_unlock(&e->mu);
    gate_wait(srv, x);
}

static int check_header(const struct ddio_xfer *m, char *why, size_t n)
{
    if (m->op != DDIO_X_READ && m->op != DDIO_X_WRITE)
        snprintf(why, n, "xfer: unknown op %u", m->op);
    else if (m->nparticipants == 0 || m->nparticipants > MAX_PARTICIPANTS)
        snprintf(why, n, "xfer: %u participants (1..%u)", m->nparticipants, MAX_PARTICIPANTS);
    else if (m->rank >= m->nparticipants)
        snprintf(why, n, "xfer: rank %u of %u", m->rank, m->nparticipants);
    else
        return 0;
    return -EINVAL;
}

void engine_xfer(struct server *srv, struct xp *ep, uint64_t req,
                 const struct ddio_xfer *m, struct ofile *of)
{
    char why[256];
    uint8_t *done;
    size_t n;
    if (check_header(m, why, sizeof(why))) {
        store_release(&srv->store, of);
        xp_reply_err(ep, DDIO_T_XFER | DDIO_REPLY, req, EINVAL, "%s", why);
        return;
    }
    if ((m->flags & DDIO_XF_ONCE) && replay_find(m->once_client, m->once_call, &done, &n)) {
        /* a resend of a write done here already: its first answer */
        store_release(&srv->store, of);
        stats_bump(&srv->stats, &srv->stats.replayed);
        xp_reply(ep, DDIO_T_XFER | DDIO_REPLY, req, 0, done, n, ddio_now_ms() + XP_REPLY_TIMEOUT_MS);
        return;
    }
    if (m->nparticipants > 1) {
        join(srv, ep, req, m, of);
        return;
    }
    struct xfer *x = xfer_new(srv, m, of);
    if (!x) {
        store_release(&srv->store, of);
        xp_reply_err(ep, DDIO_T_XFER | DDIO_REPLY, req, ENOMEM, "xfer: out of memory");
        return;
    }
    int bad = 0;
    add_part(x, ep, req, m, &bad, why, sizeof(why));
    if (bad)
        FAIL(x, -bad, "%s", why);
    execute(srv, x);
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
        fail_locked(x, err, "%s", why);
    pg->p->from += g->total;
    pg->p->bytes += g->total;
    if (--pg->s->pending == 0 && !err)
        post_locked(x, pg->s);
    pthread_mutex_unlock(&x->mu);
    free(pg);
}

void engine_get_drop(struct xp_get *g, int err, const char *why)
{
    struct pget *pg = pget_of(g);
    FAIL(pg->x, err, "%s", why);
    free(pg);
}

/* ---- connection drops, shutdown ---------------------------------------------------------------- */

static void fail_if_member(struct xfer *x, struct xp *ep)
{
    pthread_mutex_lock(&x->mu);
    for (uint32_t r = 0; r < x->n; r++)
        if (x->parts[r].present && x->parts[r].ep == ep) {
            fail_locked(x, ECONNRESET, "rank %u (%s) disconnected", r, xp_name(ep));
            pthread_cond_broadcast(&x->cv);   /* a failed gate rechecks who is left */
            break;
        }
    pthread_mutex_unlock(&x->mu);
}

void engine_conn_dropped(struct server *srv, struct xp *ep)
{
    struct engine *e = srv->eng;
    pthread_mutex_lock(&e->mu);
    __atomic_store_n(&ep->dropped, 1, __ATOMIC_RELEASE);
    for (struct xfer *x = e->gates; x; x = x->next)
        fail_if_member(x, ep);
    for (struct xfer *x = e->running; x; x = x->next)
        fail_if_member(x, ep);
    pthread_mutex_unlock(&e->mu);
}

static int cancel_if_member(struct xfer *x, struct xp *a, struct xp *b, uint64_t req,
                            const char *why)
{
    int hit = 0;
    pthread_mutex_lock(&x->mu);
    for (uint32_t r = 0; r < x->n && !hit; r++) {
        const struct part *p = &x->parts[r];
        if (p->present && p->req == req && (p->ep == a || (b && p->ep == b))) {
            fail_locked(x, ECANCELED, "cancelled by rank %u (%s): %s", r, xp_name(p->ep), why);
            hit = 1;
        }
    }
    pthread_mutex_unlock(&x->mu);
    return hit;
}

/* every XFER of collective call (group, seq), whichever rank sent it: the
 * plain-range parts of a collective run as separate one-participant XFERs */
static int cancel_if_call(struct xfer *x, uint64_t group, uint64_t seq, const char *why)
{
    if (!group || x->group != group || x->seq != seq)
        return 0;
    FAIL(x, ECANCELED, "collective seq %" PRIu64 " cancelled: %s", seq, why);
    return 1;
}

int engine_cancel(struct server *srv, struct xp *a, struct xp *b, uint64_t req, uint64_t group,
                  uint64_t seq, const char *why)
{
    struct engine *e = srv->eng;
    int hit = 0;
    pthread_mutex_lock(&e->mu);
    for (int list = 0; list < 2; list++)
        for (struct xfer *x = list ? e->running : e->gates; x; x = x->next)
            hit += cancel_if_call(x, group, seq, why) || cancel_if_member(x, a, b, req, why);
    pthread_mutex_unlock(&e->mu);
    return hit;
}

void engine_stopping(struct server *srv)
{
    struct engine *e = srv->eng;
    pthread_mutex_lock(&e->mu);
    for (struct xfer *x = e->gates; x; x = x->next)
        FAIL(x, ECONNRESET, "%s", STOPPING_MSG);
    pthread_mutex_unlock(&e->mu);
}

/* what the drain waits for, in the log (listener_drain): each collective
 * still at the gate or running, how far it got */
void engine_report(struct server *srv)
{
    struct engine *e = srv->eng;
    pthread_mutex_lock(&e->mu);
    for (int list = 0; list < 2; list++)
        for (struct xfer *x = list ? e->running : e->gates; x; x = x->next) {
            pthread_mutex_lock(&x->mu);
            DDIO_WARN("  %s: %s%s seq %" PRIu64 ", %u of %u participants arrived, "
                      "%" PRId64 " ms since the first, status %d%s%s",
                      list ? "running" : "at the gate", is_collective(x) ? "collective " : "",
                      x->op == DDIO_X_READ ? "read" : "write", x->seq, x->arrived, x->n,
                      (ddio_now_us() - x->t_first_us) / 1000, x->status,
                      x->status ? ": " : "", x->status ? x->msg : "");
            pthread_mutex_unlock(&x->mu);
        }
    pthread_mutex_unlock(&e->mu);
}

void engine_shutdown(struct server *srv)
{
    struct engine *e = srv->eng;
    if (!e)
        return;                   /* start-up failed before the engine existed */
    pthread_mutex_lock(&e->mu);
    for (struct xfer *x = e->gates; x; x = x->next)
        FAIL(x, ESHUTDOWN, "server shutting down");
    for (struct xfer *x = e->running; x; x = x->next)
        FAIL(x, ESHUTDOWN, "server shutting down");
    pthread_mutex_unlock(&e->mu);
}

int engine_create(struct server *srv)
{
    struct engine *e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    pthread_mutex_init(&e->mu, NULL);
    srv->eng = e;
    return 0;
}

void engine_destroy(struct server *srv)
{
    if (!srv->eng)
        return;
    pthread_mutex_destroy(&srv->eng->mu);
    free(srv->eng);
    srv->eng = NULL;
}
