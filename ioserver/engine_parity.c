/* An erasure-coded file's write: whole groups checked, parity blocks
 * pulled and computed (engine_parity.h; DESIGN.md 6.4). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine_parity.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_net.h"             /* errno names */
#include "fault.h"
#include "overlay.h"

static const struct ddio_ec *ec_of(const struct xfer *x)
{
    return &x->of->layout.ec;
}

/* participant p's stream bytes at logical [lo, hi) */
static uint64_t part_bytes(const struct part *p, uint64_t lo, uint64_t hi)
{
    if (!p->have_desc || !p->d.length || (int64_t)lo >= p->end || (int64_t)hi <= p->first)
        return 0;
    return ddio_desc_stream_before(&p->d, (int64_t)hi) - ddio_desc_stream_before(&p->d, (int64_t)lo);
}

/* Do the participants together write every byte of logical [lo, hi)? By
 * their counts first (one monotone participant never writes a byte twice),
 * then, when several could overlap, by a bitmap. 1, 0, or -ENOMEM. */
static int covered_whole(const struct xfer *x, uint64_t lo, uint64_t hi)
{
    uint64_t sum = 0;
    for (uint32_t r = 0; r < x->n; r++)
        sum += part_bytes(&x->parts[r], lo, hi);
    if (sum < hi - lo)
        return 0;
    if (x->n == 1)
        return 1;
    uint64_t words = (hi - lo + 63) / 64, set = 0;
    uint64_t *bm = calloc(words, sizeof(uint64_t));
    if (!bm)
        return -ENOMEM;
    for (uint32_t r = 0; r < x->n; r++) {
        const struct part *p = &x->parts[r];
        if (!part_bytes(p, lo, hi))
            continue;
        int overlap = 0;
        set += ddio_desc_cover(&p->d, bm, (int64_t)lo, ddio_desc_stream_before(&p->d, (int64_t)lo),
                               ddio_desc_stream_before(&p->d, (int64_t)hi), &overlap);
    }
    free(bm);
    return set == hi - lo;
}

/* groups come in ascending order (eparity_check): appended */
static int note_partial(struct xfer *x, uint64_t g)
{
    uint64_t *p = realloc(x->partial, (x->npartial + 1) * sizeof(*p));
    if (!p)
        return -ENOMEM;
    x->partial = p;
    p[x->npartial++] = g;
    return 0;
}

/* A group written whole: its older partial writes, in the overlays of its
 * data servers and parity servers, are older than the bytes now written
 * in place, and its parity (if held here) is its data's in place. A fold
 * does it in two steps: its parity step drops the copies (the new parity
 * holds them) and leaves the parity's state to eparity_done, its data
 * step drops this server's own units' extents as it writes them in place. */
static int drop_overlay(struct xfer *x, uint64_t g)
{
    struct ofile *ov = x->of->copy[STORE_OVERLAY];
    const uint64_t U = x->S.unit, N = ec_of(x)->k + ec_of(x)->m;
    const int fold = x->flags & (DDIO_XF_FOLD_PARITY | DDIO_XF_FOLD_DATA);
    if (!ov || !ov->ovl)
        return 0;
    for (uint32_t d = 0; d < ec_of(x)->k; d++) {
        uint64_t j = ddio_ec_ovl_local(ec_of(x), U, x->me, (g * ec_of(x)->k + d) * U);
        int own = j != UINT64_MAX && (j / U) % N == 0;
        if (j == UINT64_MAX || (own && (x->flags & DDIO_XF_FOLD_PARITY))
            || (!own && (x->flags & DDIO_XF_FOLD_DATA)))
            continue;
        int rc = ovl_del(ov->ovl, j, j + U);
        if (rc)
            return rc;
    }
    if (!fold && ddio_ec_parity_held(ec_of(x), x->me, g) >= 0)
        return ovl_pstate_set(ov->ovl, g, OVL_PS_INPLACE);
    return 0;
}

/* the first logical offset >= pos any participant writes, or -1 */
static int64_t next_written(const struct xfer *x, int64_t pos)
{
    int64_t best = -1;
    for (uint32_t r = 0; r < x->n; r++) {
        const struct part *p = &x->parts[r];
        if (!p->have_desc || !p->d.length || pos >= p->end)
            continue;
        int64_t o = ddio_desc_next(&p->d, pos < p->first ? p->first : pos);
        if (o >= 0 && (best < 0 || o < best))
            best = o;
    }
    return best;
}

int eparity_check(struct xfer *x)
{
    if (x->op != DDIO_X_WRITE || !ec_of(x)->k)
        return 0;
    char err[200];
    if (!x->codec && !(x->codec = ddio_ec_codec_new(ec_of(x), err, sizeof(err)))) {
        FAIL(x, ENOTSUP, "write of %s: %s", x->of->path, err);
        return -ENOTSUP;
    }
    const int fold = x->flags & (DDIO_XF_FOLD_PARITY | DDIO_XF_FOLD_DATA);
    if (fold)
        fault_hit(FAULT_FOLD);
    /* each group the participants touch, once, in ascending order */
    const uint64_t gsz = x->S.unit * ec_of(x)->k;
    for (int64_t off = next_written(x, 0); off >= 0;) {
        uint64_t g = (uint64_t)off / gsz;
        int whole = covered_whole(x, g * gsz, (g + 1) * gsz);
        if (fold && whole == 0) {
            FAIL(x, EINVAL, "fold of %s: group %" PRIu64 " not written whole", x->of->path, g);
            return -EINVAL;
        }
        int rc = whole < 0 ? whole : whole ? drop_overlay(x, g) : note_partial(x, g);
        if (rc) {
            FAIL(x, -rc, "write of %s: %s", x->of->path, ddio_errno_name(-rc));
            return rc;
        }
        if (g + 1 > (uint64_t)INT64_MAX / gsz)
            break;
        off = next_written(x, (int64_t)((g + 1) * gsz));
    }
    return 0;
}

/* the group behind parity local offset off of this server, and the piece's
 * end (the unit's end, at most end) */
static uint64_t piece_of(const struct xfer *x, uint64_t off, uint64_t end, uint64_t *pend)
{
    uint64_t U = x->S.unit, i = off / U;
    *pend = (i + 1) * U < end ? (i + 1) * U : end;
    return ddio_ec_parity_group(ec_of(x), x->me, i);
}

size_t eparity_block_segs(const struct xfer *x, const struct slot *s, const struct part *p,
                          uint64_t *o, uint64_t end, struct bseg *out, size_t cap)
{
    const uint32_t K = ec_of(x)->k;
    const uint64_t U = x->S.unit;
    size_t n = 0;
    while (*o < end && n + K <= cap) {
        uint64_t e, g = piece_of(x, *o, end, &e);
        if (ec_partial(x, g))
            g = UINT64_MAX;       /* its bytes go to the overlays; its parity stays */
        for (uint32_t d = 0; g != UINT64_MAX && d < K && p->have_desc && p->d.length; d++) {
            uint64_t L = (g * K + d) * U + *o % U, Lend = L + (e - *o);
            if ((int64_t)L >= p->end || (int64_t)Lend <= p->first)
                continue;
            uint64_t s_lo = ddio_desc_stream_before(&p->d, (int64_t)L);
            uint64_t s_hi = ddio_desc_stream_before(&p->d, (int64_t)Lend);
            if (s_hi > s_lo)
                out[n++] = (struct bseg){s_lo, s_hi, d * x->B + (*o - s->a), (int64_t)L};
        }
        *o = e;
    }
    return n;
}

/* Does the call write any byte behind the parity piece [off, e) of group
 * g, written whole (then it writes all of them)? */
static int piece_touched(const struct xfer *x, uint64_t g, uint64_t off, uint64_t e)
{
    const uint64_t U = x->S.unit;
    if (ec_partial(x, g))
        return 0;
    for (uint32_t d = 0; g != UINT64_MAX && d < ec_of(x)->k; d++) {
        uint64_t L = (g * ec_of(x)->k + d) * U + off % U;
        for (uint32_t r = 0; r < x->n; r++)
            if (part_bytes(&x->parts[r], L, L + (e - off)))
                return 1;
    }
    return 0;
}

/* two participants writing one data byte: pulled in rank order, so the
 * parity sees the byte the data server keeps (the higher rank's) */
static int parity_overlap(struct xfer *x, struct slot *s, uint64_t *bm)
{
    struct bseg g[SEGS_PER_MSG];
    int overlap = 0;
    for (uint32_t r = 0; r < x->n; r++) {
        struct part *p = &x->parts[r];
        uint64_t o = s->a, end = s->a + x->B;
        while (o < end) {
            size_t n = eparity_block_segs(x, s, p, &o, end, g, SEGS_PER_MSG);
            for (size_t i = 0; i < n; i++)
                ddio_desc_cover(&p->d, bm, g[i].L - (int64_t)g[i].boff, g[i].s_lo, g[i].s_hi,
                                &overlap);
        }
    }
    return overlap;
}

int eparity_coverage(struct xfer *x, struct slot *s)
{
    size_t scratch = (size_t)x->B * ec_of(x)->k;
    if (!s->scratch && !(s->scratch = malloc(scratch))) {
        FAIL(x, ENOMEM, "parity of %s: ENOMEM", x->of->path);
        return -ENOMEM;
    }
    uint64_t lo = x->B, hi = 0, untouched = 0;
    for (uint64_t off = s->a, e; off < s->a + x->B; off = e) {
        uint64_t g = piece_of(x, off, s->a + x->B, &e);
        if (!piece_touched(x, g, off, e)) {
            untouched++;          /* its old parity stays (read first) */
            continue;
        }
        if (off - s->a < lo)
            lo = off - s->a;
        hi = e - s->a;
    }
    s->write_lo = lo < hi ? lo : 0;
    s->write_hi = hi;
    s->full = untouched == 0;
    s->contig = 0;
    s->overlap = 0;
    if (x->n > 1 && hi > lo) {
        uint64_t *bm = calloc(scratch / 64 + 1, sizeof(uint64_t));
        if (!bm) {
            FAIL(x, ENOMEM, "parity of %s: ENOMEM", x->of->path);
            return -ENOMEM;
        }
        s->overlap = parity_overlap(x, s, bm);
        free(bm);
    }
    return 0;
}

void eparity_encode(struct xfer *x, struct slot *s)
{
    const uint32_t K = ec_of(x)->k;
    for (uint64_t off = s->a + s->write_lo, e; off < s->a + s->write_hi; off = e) {
        uint64_t g = piece_of(x, off, s->a + s->write_hi, &e);
        if (!piece_touched(x, g, off, e))
            continue;
        uint8_t *data[DDIO_EC_MAX_K], *out = (uint8_t *)s->buf + (off - s->a);
        for (uint32_t d = 0; d < K; d++)
            data[d] = s->scratch + d * x->B + (off - s->a);
        uint32_t row = (uint32_t)ddio_ec_parity_held(ec_of(x), x->me, g);
        ddio_ec_encode(x->codec, (size_t)(e - off), data, 1, &row, &out);
    }
}

/* ---- the overlay ---- */

void eparity_done(struct xfer *x)
{
    struct ofile *ov = x->of->copy[STORE_OVERLAY];
    if (x->op != DDIO_X_WRITE || !ec_of(x)->k || !ov || !ov->ovl)
        return;
    uint64_t end = 0;
    for (uint32_t r = 0; r < x->n; r++)
        if (x->parts[r].have_desc && x->parts[r].d.length && (uint64_t)x->parts[r].end > end)
            end = (uint64_t)x->parts[r].end;
    if (ovl_note_size(ov->ovl, end))
        FAIL(x, ENOMEM, "write of %s: ENOMEM", x->of->path);
    /* a fold's parity written: it matches the merged data (noted in the
     * log with the copies' drop, after the parity is durable: SYNC) */
    const uint64_t gsz = x->S.unit * ec_of(x)->k;
    for (uint32_t r = 0; (x->flags & DDIO_XF_FOLD_PARITY) && r < x->n; r++) {
        const struct part *p = &x->parts[r];
        if (!p->have_desc || !p->d.length)
            continue;
        for (uint64_t g = (uint64_t)p->first / gsz; g * gsz < (uint64_t)p->end; g++)
            if (ddio_ec_parity_held(ec_of(x), x->me, g) >= 0
                && ovl_pstate_set(ov->ovl, g, OVL_PS_NEW))
                FAIL(x, ENOMEM, "fold of %s: ENOMEM", x->of->path);
    }
}

int eparity_written(struct xfer *x, struct slot *s)
{
    const uint64_t U = x->S.unit, N = ec_of(x)->k + ec_of(x)->m;
    uint64_t grow = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        uint64_t lo = s->a + s->runs[i].lo, hi = s->a + s->runs[i].hi;
        int rc = ovl_add(s->of->ovl, lo, hi);
        if (rc)
            return rc;
        for (uint64_t o = lo, e; o < hi; o = e) {
            uint64_t j = o / U;
            e = (j + 1) * U < hi ? (j + 1) * U : hi;
            if (j % N == 0)       /* its own unit (j / N)-th: the data's end */
                grow = (j / N) * U + (e - j * U) > grow ? (j / N) * U + (e - j * U) : grow;
        }
    }
    /* a partial write past the end: the data file as long as the file now
     * is (holes, never read: the overlay has those bytes), since a file's
     * size is its servers' data sizes */
    return grow ? store_grow(x->of, grow) : 0;
}

struct merge { struct ofile *ov; uint8_t *dst; uint64_t base; int rc; };

/* overlay bytes [lo, hi) over the block buffer (dst holds overlay offset base) */
static int merge_one(void *arg, uint64_t lo, uint64_t hi)
{
    struct merge *m = arg;
    return m->rc = store_pread(m->ov, lo, m->dst + (lo - m->base), (size_t)(hi - lo));
}

int eparity_merge(struct xfer *x, struct slot *s)
{
    struct ofile *ov = x->of->copy[STORE_OVERLAY];
    if (!ec_of(x)->k || s->kind != V_DATA || !ov || !ov->ovl)
        return 0;
    const uint64_t U = x->S.unit, N = ec_of(x)->k + ec_of(x)->m;
    uint64_t lo = s->a + s->io_lo, hi = lo + s->dr.done;
    for (uint64_t off = lo, e; off < hi; off = e) {
        e = (off / U + 1) * U < hi ? (off / U + 1) * U : hi;
        uint64_t ob = (off / U) * N * U + off % U;   /* own unit: c = 0 */
        struct merge m = {ov, (uint8_t *)s->buf + (off - s->a), ob, 0};
        ovl_each(ov->ovl, ob, ob + (e - off), merge_one, &m);
        if (m.rc) {
            FAIL(x, -m.rc, "read of the overlay of %s: %s", x->of->path, ddio_errno_name(-m.rc));
            return m.rc;
        }
    }
    return 0;
}
