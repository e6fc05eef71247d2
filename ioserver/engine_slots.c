/* The planner and slots: an XFER's blocks planned in issue order, the
 * slots its blocks in flight take (a disk buffer, the block lock), and
 * their disk requests, through O_DIRECT or the page cache (pcache.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine_slots.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"             /* the clock */
#include "ddio_stream.h"
#include "pcache.h"
#include "planner.h"
#include "sums.h"

/* ---- disk requests --------------------------------------------------------------------------- */

/* A stream the page cache must not take: a disk-directed pass of several
 * ranks, or a collective's plain-range part (one participant) of at least
 * ddio_stream_min() (1/64 of memory). Shorter parts are the everyday
 * contiguous collective (IOR's -c, HDF5's rows): they are cached as the
 * same call made independently is, so they are read back from memory. */
static int stream_is_collective(const struct xfer *x)
{
    return x->n > 1 || ((x->flags & DDIO_XF_COLLECTIVE) && x->parts[0].have_desc
                        && x->parts[0].d.length >= ddio_stream_min());
}

/* O_DIRECT or the page cache for this request (pcache.h has the policy) */
static int use_cache(const struct xfer *x, const struct slot *s, int d, int write, uint64_t off,
                     size_t len)
{
    struct pcache_ask a = {.enabled = x->srv->cfg.page_cache, .twin = s->of->bfds[d] >= 0,
                           .collective = stream_is_collective(x), .write = write, .len = len,
                           .block = x->B, .fd = s->of->bfds[d], .off = off};
    return pcache_choose(&a);
}

/* Would a write of block s's bytes [write_lo, write_hi) go through the
 * page cache? (A write's choice needs no residency check: it is the same
 * for any length above the small-I/O rule's.) */
int slot_write_cached(const struct xfer *x, const struct slot *s)
{
    uint64_t doff;
    int d = store_disk_of(s->of, s->a, &doff);
    return use_cache(x, s, d, 1, doff + s->write_lo, (size_t)(s->write_hi - s->write_lo));
}

static void disk_done_cb(struct disk_req *r)
{
    struct slot *s = r->arg;
    struct xfer *x = s->x;
    pthread_mutex_lock(&x->mu);
    xfer_post_locked(x, s);
    pthread_mutex_unlock(&x->mu);
}

/* ---- one copy: a cached read sent from the page cache's own pages ---------------------------- */

/* below this, a copy costs less than mapping the pages and unmapping them */
#define MAP_MIN_BYTES 65536u

/* Does every participant take its bytes of block s as one range of the
 * block (so each of its puts sends in place, never packed)? */
static int one_range_each(struct xfer *x, const struct slot *s)
{
    struct bseg g[SEGS_PER_MSG];
    for (uint32_t r = 0; r < x->n; r++) {
        const struct part *p = &x->parts[r];
        if (!p->present || !p->ep || !p->ep->ops->sends_in_place)
            return 0;
        uint64_t o = s->a, end = s->a + s->old_valid, at = UINT64_MAX;
        while (o < end) {
            size_t n = xfer_block_segs(x, s, p, &o, end, g, SEGS_PER_MSG);
            for (size_t i = 0; i < n; i++) {
                uint64_t lo = seg_lo(p, &g[i]), hi = seg_hi(p, &g[i]);
                if (hi - lo != g[i].s_hi - g[i].s_lo || (at != UINT64_MAX && lo != at))
                    return 0;     /* a gap in the block, or a piece elsewhere */
                at = hi;
            }
        }
    }
    return 1;
}

/* A read of block bytes [s->io_lo, + len) at datafile offset off that the
 * page cache holds whole is sent from a mapping of those pages (the
 * datafile's long-lived one, store_fmap.c): the rank fetches them straight
 * from the cache (UCX: CMA, RDMA), or the socket copies them (TCP), the one
 * copy a `ufs:` read makes, where a pread would copy them into the block
 * buffer first.
 * Taken only when the block lock is free (a write of the block through the
 * servers holds it: then the bytes are read as before) and kept until the
 * block's sends ended (slot_release), so no write of the servers changes
 * the pages meanwhile; the file's datafiles do not shrink while it is held
 * (store_map_hold), so the server never touches a page cut off. Checksummed
 * datafiles keep the buffer: their sums are checked on the bytes read, and
 * a disagreeing sector is replaced in the buffer (engine_sums.c). 1: s->map
 * is set and the block lock held; 0: read it the usual way. */
static int map_cached(struct xfer *x, struct slot *s, int d, uint64_t off, size_t len)
{
    long pg = sysconf(_SC_PAGESIZE);
    int bfd = s->of->bfds[d];
    if (bfd < 0 || len < MAP_MIN_BYTES || pg <= 0 || off % (uint64_t)pg || s->disk->throttle_bps ||
        (s->of->sums && s->of->sums[d]) || s->of->layout.ec.k || !one_range_each(x, s))
        return 0;
    if (store_blk_lock(s->of, s->k, 0, 0))
        return 0;
    store_map_hold(s->of);        /* before the check: no shrink from here on */
    void *m = pcache_resident(bfd, off, len) ? store_fmap_get(s->of, d, off, len, &s->fmap)
                                             : NULL;
    if (!m) {
        store_map_drop(s->of);
        store_blk_unlock(s->of, s->k);
        return 0;
    }
    s->map = m;
    s->locked = 1;
    return 1;
}

/* Can the write go from the message in place (s->src): through the page
 * cache (no alignment), without sums (computed from the buffer after the
 * write), and only the bytes it holds. Else they are copied into the
 * buffer now, over what a read-modify-write or zeros put there. */
static void src_or_copy(struct slot *s, int d, int cache, size_t len)
{
    if (!s->src)
        return;
    if (cache && s->exact != EXACT_RUNS && !(s->of->sums && s->of->sums[d])
        && s->io_lo >= s->src_lo && s->io_lo + len <= s->src_hi)
        return;
    memcpy((uint8_t *)s->buf + s->src_lo, s->src, s->src_hi - s->src_lo);
    s->src = NULL;
}

void slot_submit_io(struct xfer *x, struct slot *s, int write, size_t len)
{
    uint64_t doff;
    int d = store_disk_of(s->of, s->a, &doff);
    /* an exact write is not sector-aligned: it can only go through the cache */
    int cache = (write && s->exact) || use_cache(x, s, d, write, doff + s->io_lo, len);
    if (!write && cache && map_cached(x, s, d, doff + s->io_lo, len)) {
        s->cached = 1;
        s->dr = (struct disk_req){.fd = s->of->bfds[d], .off = doff + s->io_lo, .len = len,
                                  .done = len, .cb = disk_done_cb, .arg = s};
        x->ctr.read_mapped_bytes += len;
        disk_buf_put(s->disk, s->buf);   /* not needed: other XFERs may use it */
        s->buf = NULL;
        s->io_busy = 1;
        disk_done_cb(&s->dr);
        return;
    }
    /* a root without O_DIRECT (tmpfs) has one descriptor, through the cache */
    s->cached = cache || !x->srv->store.direct[d];
    int fd = cache && s->of->bfds[d] >= 0 ? s->of->bfds[d] : s->of->fds[d];
    if (write)
        src_or_copy(s, d, s->cached, len);
    uint8_t *buf = s->src ? (uint8_t *)(uintptr_t)s->src + (s->io_lo - s->src_lo)
                          : (uint8_t *)s->buf + s->io_lo;
    s->dr = (struct disk_req){.fd = fd, .write = write, .buf = buf, .off = doff + s->io_lo,
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
void slot_count_io(struct xfer *x, const struct slot *s)
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
    struct store_kick k;
    if (!(s->dr.write && s->cached && s->dr.res == 0 && s->of->bfds[s->disk->idx] >= 0)
        || !store_note_cached_write(s->of, s->disk->idx, s->dr.off, n, &k))
        return;
    /* The call's last writeback start waits until its DONE has left
     * (finish, engine_pass.c): submitting a megabyte's pages to the device
     * was on every 1 MiB write's path (0.90x the time without it). An
     * earlier one goes at once, so a long pass streams its writeback as
     * before; a copy's file (another view) may be let go before the DONE:
     * at once too. */
    if (s->of != x->of) {
        store_kick(&k);
        return;
    }
    if (x->kick_due)
        store_kick(&x->kick);
    x->kick = k;
    x->kick_due = 1;
}

void slot_release(struct xfer *x, struct slot *s)
{
    if (s->sums_begun)            /* its sums are in (or it failed): the
                                   * sidecar may say CLEAN again */
        sums_end_write(s->sums_begun);
    s->sums_begun = NULL;
    if (s->map && !s->abandon) {
        store_fmap_put(s->of, s->fmap);
        store_map_drop(s->of);
    } else if (s->map) {          /* sends that never ended may still read it: it
                                   * stays mapped, and the file never shrinks */
        DDIO_WARN("%s: a mapping of block %" PRIu64 " is kept for sends "
                 "still in flight; the file cannot shrink while it is open", s->of->path, s->k);
    }
    s->map = NULL;
    s->fmap = NULL;
    if (s->buf && s->abandon)
        disk_buf_abandon(s->disk, s->buf);
    else if (s->buf)
        disk_buf_put(s->disk, s->buf);
    s->abandon = 0;
    if (s->locked)
        store_blk_unlock(s->of, s->k);
    s->state = S_FREE;
    s->locked = 0;
    s->buf = NULL;
    s->src = NULL;
    x->inflight--;
}

/* ---- issuing blocks ---------------------------------------------------------------------- */

struct slot *slot_find_free(struct xfer *x)
{
    for (unsigned i = 0; i < x->nslots; i++)
        if (x->slots[i].state == S_FREE)
            return &x->slots[i];
    return NULL;
}

/* The blocking waits for another XFER's block lock or disk buffer go in
 * heartbeat-sized slices up to the deadline: waiting for a busy disk is
 * progress as far as the participants are concerned. */
int slot_lock_block(struct xfer *x, struct ofile *of, uint64_t k, int wait, int64_t dl)
{
    int rc;
    do
        rc = store_blk_lock(of, k, wait, wait ? xfer_beat_slice(x, dl) : dl);
    while (rc == -ETIMEDOUT && ddio_now_ms() < dl);
    return rc;
}

void *slot_get_buffer(struct xfer *x, struct disk *disk, int wait, int64_t dl)
{
    void *buf;
    do
        buf = disk_buf_get(disk, wait, wait ? xfer_beat_slice(x, dl) : dl);
    while (!buf && wait && ddio_now_ms() < dl);
    return buf;
}

/* The part of a block a read needs, as whole 4 KiB sectors [*lo, *hi) below
 * s->old_valid: a few bytes of independent I/O read one sector, not the
 * whole block (a 1 MiB read per 8-byte request on a disk). */
void slot_read_range(struct xfer *x, const struct slot *s, uint64_t *lo, uint64_t *hi)
{
    struct bseg g[SEGS_PER_MSG];
    uint64_t l = s->old_valid, h = 0;
    for (uint32_t r = 0; r < x->n && (l > 0 || h < s->old_valid); r++) {
        const struct part *p = &x->parts[r];
        uint64_t o = s->a, end = s->a + s->old_valid;
        while (o < end) {
            size_t n = xfer_block_segs(x, s, p, &o, end, g, SEGS_PER_MSG);
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

/* ---- the plan -------------------------------------------------------------------------------- */

int slots_alloc(struct xfer *x)
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


int slots_plan(struct xfer *x)
{
    const struct ddio_desc **descs = calloc(x->n, sizeof(*descs));
    if (!descs)
        return -ENOMEM;
    for (uint32_t r = 0; r < x->n; r++)
        descs[r] = x->parts[r].have_desc ? &x->parts[r].d : NULL;
    struct plan_view views[PLAN_MAX_VIEWS];
    for (uint32_t v = 0; v < x->nviews; v++)
        views[v] = (struct plan_view){.me = x->views[v].me, .fds = x->views[v].of->fds,
                                      .kind = x->views[v].kind, .ec = &x->of->layout.ec,
                                      .partial = x->partial, .npartial = x->npartial};
    struct plan_in in = {
        .descs = descs, .n = x->n, .stripe = x->S, .views = views, .nviews = x->nviews,
        .disks = x->of->disks,
        .limit = x->op == DDIO_X_READ ? store_size(x->views[0].of) : UINT64_MAX,
        .nosort = (x->flags & DDIO_XF_NOSORT) != 0,
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
