/* The write pipeline: which participants write a block and how much of it,
 * the read-modify-write or byte-exact ranges that follow, the block's data
 * pulled from its writers (GETs), and its write in the order the plan
 * chose per disk. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine_write.h"
#include "engine_parity.h"
#include "engine_sums.h"
#include "engine_getput.h"
#include "engine_slots.h"
#include "fault.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_log.h"
#include "ddio_net.h"             /* the clock and errno names only */

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
            size_t n = xfer_block_segs(x, s, p, &o, end, g, SEGS_PER_MSG);
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
            size_t n = xfer_block_segs(x, s, p, &o, end, g, SEGS_PER_MSG);
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

/* GETs for participant p's bytes in the block; returns how many, or -errno */
static int pull_from(struct xfer *x, struct slot *s, struct part *p)
{
    struct bseg g[SEGS_PER_MSG];
    uint64_t o = s->a, end = s->a + x->B;
    int sent = 0;
    while (o < end) {
        size_t n = s->kind == V_PARITY ? eparity_block_segs(x, s, p, &o, end, g, SEGS_PER_MSG)
                             : xfer_block_segs(x, s, p, &o, end, g, SEGS_PER_MSG);
        if (n == 0)
            continue;
        int rc = get_send(x, s, p, g, n);
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
        xfer_post_locked(x, s);
        pthread_mutex_unlock(&x->mu);
        return;
    }
    fault_hit(is_collective(x) ? FAULT_COLL_WRITE : FAULT_INDEP_WRITE);
    if (esums_begin(x, s)) {
        slot_release(x, s);
        return;
    }
    store_note_write(s->of, s->a + s->write_hi);
    s->state = S_WRITE;
    slot_submit_io(x, s, 1, (size_t)len);
}

/* Pull the next participant(s) data; when nothing is left, write. In
 * overlap mode one participant at a time in rank order, so the higher rank's
 * bytes land last; otherwise all at once (disjoint bytes, any order). */
void write_pull_next(struct xfer *x, struct slot *s)
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
            if (s->kind == V_PARITY)
                eparity_encode(x, s);
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
        slot_release(x, s);
        return;
    }
    s->exact = EXACT_RUNS;
    s->io_lo = 0;
    write_pull_next(x, s);
}

/* A partly covered block reads (and later writes) only the sectors around
 * the bytes written: a small independent write costs a sector or two, not
 * a whole block read and written back. One range written through the page
 * cache reads nothing: the kernel fills partial pages itself. */
void write_start(struct xfer *x, struct slot *s)
{
    s->next_part = 0;             /* (a slot is reused block after block) */
    s->exact = 0;
    if (s->kind == V_OVERLAY) {   /* only the bytes written, noted as extents */
        write_coverage(x, s);
        if (s->write_hi > s->write_lo) {
            exact_runs(x, s);
            return;
        }
    } else if (s->kind != V_PARITY)
        write_coverage(x, s);
    else if (eparity_coverage(x, s)) {
        slot_release(x, s);
        return;
    }
    if (s->full || s->write_hi <= s->write_lo) {   /* all of it, or nothing */
        s->io_lo = 0;
        write_pull_next(x, s);
        return;
    }
    int local_writers = __atomic_load_n(&s->of->local_writers, __ATOMIC_ACQUIRE);
    if (local_writers && !s->contig) {
        exact_runs(x, s);
        return;
    }
    if (s->contig && (local_writers || slot_write_cached(x, s))) {
        s->exact = 1;             /* the page cache merges it: no sectors to fill */
        s->io_lo = s->write_lo;
        write_pull_next(x, s);
        return;
    }
    s->io_lo = s->write_lo & ~(uint64_t)4095;
    uint64_t hi = sector_end(x, s->write_hi);
    if (s->old_valid > s->io_lo) {
        uint64_t old_hi = round4k(s->old_valid) < hi ? round4k(s->old_valid) : hi;
        s->state = S_RMW;         /* partly covered, inside the file: read first */
        slot_submit_io(x, s, 0, (size_t)(old_hi - s->io_lo));
        return;
    }
    memset((uint8_t *)s->buf + s->io_lo, 0, hi - s->io_lo);
    write_pull_next(x, s);
}

/* after the read of a read-modify-write: what the datafile did not hold
 * (past its end) is zeros, up to the last sector the write touches */
void write_rmw_zero_tail(struct xfer *x, struct slot *s)
{
    uint64_t hi = sector_end(x, s->write_hi);
    uint64_t got = s->io_lo + s->dr.done;
    if (got < hi)
        memset((uint8_t *)s->buf + got, 0, hi - got);
}
