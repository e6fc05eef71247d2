/* Descriptor evaluators: stream offset <-> address in O(depth), bounds, walkers. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "ddio_desc_int.h"

static bool node_monotone(const struct ddio_node *n)
{
    switch (n->kind) {
    case DDIO_N_LEAF:
        return true;
    case DDIO_N_VEC: {
        const struct ddio_node *c = n->u.vec.child;
        /* copy i+1 must start after copy i ends (monotone child: first byte
         * at lo, last at hi - 1) */
        if (n->u.vec.count > 1 && (i128)n->u.vec.stride < (i128)c->hi - c->lo)
            return false;
        return node_monotone(c);
    }
    case DDIO_N_LIST:
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            const struct ddio_node *c = n->u.list.child[j];
            if (j > 0) {
                const struct ddio_node *p = n->u.list.child[j - 1];
                if ((i128)n->u.list.disp[j] + c->lo < (i128)n->u.list.disp[j - 1] + p->hi)
                    return false;
            }
            if (!node_monotone(c))
                return false;
        }
        return true;
    default:
        return false;
    }
}

/* first and last tile the stream touches (length > 0) */
static void desc_tiles(const struct ddio_desc *d, uint64_t *t0, uint64_t *t1)
{
    *t0 = d->start / d->root->size;
    *t1 = (d->start + d->length - 1) / d->root->size;
}

/* Intermediate origins may leave int64 on non-monotone (memory-side)
 * descriptors whose final addresses fit; add modulo 2^64 so only the final
 * address matters (the decoder bounds it). */
static inline int64_t wrap_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

/* relative address of data byte w of node n (any descriptor) */
static int64_t node_map(const struct ddio_node *n, uint64_t w)
{
    int64_t a = 0;
    for (;;) {
        if (n->kind == DDIO_N_LEAF)
            return wrap_add(a, (int64_t)w);
        if (n->kind == DDIO_N_VEC) {
            const struct ddio_node *c = n->u.vec.child;
            uint64_t i = w / c->size;
            w -= i * c->size;
            a = wrap_add(a, (int64_t)(i * (uint64_t)n->u.vec.stride));
            n = c;
        } else {
            uint32_t lo = list_child_of_byte(n, w);
            w -= n->u.list.before[lo];
            a = wrap_add(a, n->u.list.disp[lo]);
            n = n->u.list.child[lo];
        }
    }
}

int64_t ddio_desc_addr(const struct ddio_desc *d, uint64_t s)
{
    uint64_t v = d->start + s;
    uint64_t t = v / d->root->size;
    return (int64_t)(tile_origin(d, t) + node_map(d->root, v % d->root->size));
}

/* data bytes of monotone node n at relative addresses < off */
static uint64_t node_before(const struct ddio_node *n, int64_t off)
{
    uint64_t acc = 0;
    for (;;) {
        if (off <= n->lo)
            return acc;
        if (off >= n->hi)
            return acc + n->size;
        if (n->kind == DDIO_N_LEAF)
            return acc + (uint64_t)off;
        if (n->kind == DDIO_N_VEC) {
            const struct ddio_node *c = n->u.vec.child;
            uint64_t i = 0;
            if (n->u.vec.count > 1 && n->u.vec.stride > 0) {
                /* last copy starting at or before off; monotone: stride > 0
                 * and off > lo = c->lo (the stride test only keeps a misuse
                 * on a non-monotone tree from dividing by zero) */
                i = ((uint64_t)off - (uint64_t)c->lo) / (uint64_t)n->u.vec.stride;
                if (i >= n->u.vec.count)
                    i = n->u.vec.count - 1;
            }
            acc += i * c->size;
            off -= (int64_t)i * n->u.vec.stride;
            n = c;
        } else {
            /* last child starting at or before off (exists: off > lo) */
            uint32_t lo = 0, hi = n->u.list.n;
            while (hi - lo > 1) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (n->u.list.disp[mid] + n->u.list.child[mid]->lo <= off)
                    lo = mid;
                else
                    hi = mid;
            }
            acc += n->u.list.before[lo];
            off -= n->u.list.disp[lo];
            n = n->u.list.child[lo];
        }
    }
}

void ddio_desc_bounds(const struct ddio_desc *d, int64_t *first, int64_t *end)
{
    if (d->length == 0) {
        *first = *end = 0;
        return;
    }
    *first = ddio_desc_addr(d, 0);
    *end = ddio_desc_addr(d, d->length - 1) + 1;
}

int ddio_desc_check_monotone(const struct ddio_desc *d)
{
    uint64_t t0, t1;
    if (d->length == 0)
        return 0;
    if (!d->root || !node_monotone(d->root))
        return -EINVAL;
    desc_tiles(d, &t0, &t1);
    if (t1 > t0 && (i128)d->extent < (i128)d->root->hi - d->root->lo)
        return -EINVAL;
    return ddio_desc_addr(d, 0) >= 0 ? 0 : -EINVAL;
}

static i128 floor_div(i128 a, i128 b)   /* b > 0 */
{
    i128 q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

uint64_t ddio_desc_stream_before(const struct ddio_desc *d, int64_t off)
{
    int64_t first, end;
    uint64_t t0, t1, t, v;
    i128 rel;

    if (d->length == 0)
        return 0;
    ddio_desc_bounds(d, &first, &end);
    if (off <= first)
        return 0;
    if (off >= end)
        return d->length;
    desc_tiles(d, &t0, &t1);
    t = t0;
    if (t1 > t0 && d->extent > 0) {   /* monotone: extent >= hi - lo > 0 */
        i128 q = floor_div((i128)off - d->disp - d->root->lo, d->extent);
        t = q < (i128)t0 ? t0 : q > (i128)t1 ? t1 : (uint64_t)q;
    }
    /* off is inside the stream's address range, so rel fits in int64 */
    rel = (i128)off - tile_origin(d, t);
    v = t * d->root->size + node_before(d->root, (int64_t)rel);
    if (v <= d->start)
        return 0;
    return v - d->start >= d->length ? d->length : v - d->start;
}

int64_t ddio_desc_next(const struct ddio_desc *d, int64_t off)
{
    uint64_t s = ddio_desc_stream_before(d, off);
    return s < d->length ? ddio_desc_addr(d, s) : -1;
}

/* ========================================================================== */
/* walkers                                                                    */
/* ========================================================================== */

/* Stream walker: pieces are coalesced when they touch, so the callback sees
 * maximal contiguous pieces. */
struct walk {
    ddio_piece_fn fn;
    void *arg;
    int64_t paddr;
    uint64_t plen, psoff;
    uint64_t soff;       /* stream offset of the next byte emitted */
};

static int walk_emit(struct walk *k, int64_t addr, uint64_t len)
{
    int rc = 0;
    if (k->plen && k->paddr + (int64_t)k->plen == addr) {
        k->plen += len;
    } else {
        if (k->plen)
            rc = k->fn(k->arg, k->paddr, k->plen, k->psoff);
        k->paddr = addr;
        k->plen = len;
        k->psoff = k->soff;
    }
    k->soff += len;
    return rc;
}

/* data bytes [lo, hi) of n, whose origin is at address base */
static int walk_node(struct walk *k, const struct ddio_node *n, int64_t base, uint64_t lo,
                     uint64_t hi)
{
    int rc = 0;
    if (n->kind == DDIO_N_LEAF)
        return walk_emit(k, wrap_add(base, (int64_t)lo), hi - lo);
    if (n->kind == DDIO_N_VEC) {
        const struct ddio_node *c = n->u.vec.child;
        uint64_t cs = c->size, i = lo / cs, i1 = (hi - 1) / cs;
        for (; i <= i1 && !rc; i++) {
            uint64_t clo = i == lo / cs ? lo - i * cs : 0;
            uint64_t chi = i == i1 ? hi - i * cs : cs;
            rc = walk_node(k, c, wrap_add(base, (int64_t)(i * (uint64_t)n->u.vec.stride)), clo, chi);
        }
        return rc;
    }
    uint32_t j = list_child_of_byte(n, lo);
    for (; j < n->u.list.n && n->u.list.before[j] < hi && !rc; j++) {
        uint64_t b = n->u.list.before[j], cs = n->u.list.child[j]->size;
        uint64_t clo = lo > b ? lo - b : 0;
        uint64_t chi = hi - b < cs ? hi - b : cs;
        rc = walk_node(k, n->u.list.child[j], wrap_add(base, n->u.list.disp[j]), clo, chi);
    }
    return rc;
}

int ddio_desc_walk_stream(const struct ddio_desc *d, uint64_t s_lo, uint64_t s_hi,
                          ddio_piece_fn fn, void *arg)
{
    struct walk k = { .fn = fn, .arg = arg, .soff = s_lo };
    uint64_t size, v, vend;
    int rc = 0;

    if (s_hi > d->length)
        s_hi = d->length;
    if (s_lo >= s_hi)
        return 0;
    size = d->root->size;
    v = d->start + s_lo;
    vend = d->start + s_hi;
    while (v < vend && !rc) {   /* one tile per iteration */
        uint64_t t = v / size, w = v - t * size;
        uint64_t whi = vend - t * size < size ? vend - t * size : size;
        rc = walk_node(&k, d->root, (int64_t)tile_origin(d, t), w, whi);
        v = t * size + whi;
    }
    if (!rc && k.plen)
        rc = fn(arg, k.paddr, k.plen, k.psoff);
    return rc;
}

int ddio_desc_walk_file(const struct ddio_desc *d, int64_t lo, int64_t hi,
                        ddio_piece_fn fn, void *arg)
{
    if (lo >= hi || d->length == 0)
        return 0;
    return ddio_desc_walk_stream(d, ddio_desc_stream_before(d, lo),
                                 ddio_desc_stream_before(d, hi), fn, arg);
}

/* ---- overlap (memory side) ----------------------------------------------- */

struct pieces {
    int64_t *lo, *hi;           /* [lo, hi) of each piece */
    size_t n, cap;
};

static int add_piece(void *arg, int64_t addr, uint64_t len, uint64_t stream_off)
{
    struct pieces *p = arg;
    (void)stream_off;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        int64_t *lo = realloc(p->lo, cap * sizeof(*lo)), *hi;
        if (lo)
            p->lo = lo;
        hi = lo ? realloc(p->hi, cap * sizeof(*hi)) : NULL;
        if (!hi)
            return -ENOMEM;
        p->hi = hi;
        p->cap = cap;
    }
    p->lo[p->n] = addr;
    p->hi[p->n++] = wrap_add(addr, (int64_t)len);
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* two pieces of one tile share a byte: with both ends sorted apart, the
 * k-th piece by start must begin at or after the (k-1)-th end (pieces are
 * non-empty, so this holds exactly when no two intersect) */
static int tile_overlaps(const struct ddio_desc *d)
{
    struct ddio_desc t = *d;
    struct pieces p = { 0 };
    int rc;

    t.start = 0;
    t.length = d->root->size;
    rc = ddio_desc_walk_stream(&t, 0, t.length, add_piece, &p);
    if (!rc) {
        qsort(p.lo, p.n, sizeof(*p.lo), cmp_i64);
        qsort(p.hi, p.n, sizeof(*p.hi), cmp_i64);
        for (size_t k = 1; k < p.n && !rc; k++)
            rc = p.lo[k] < p.hi[k - 1];
    }
    free(p.lo);
    free(p.hi);
    return rc != 0;
}

int ddio_desc_overlaps(const struct ddio_desc *d)
{
    uint64_t t0, t1;
    if (d->length == 0)
        return 0;
    desc_tiles(d, &t0, &t1);
    if (t1 > t0 && (i128)d->root->hi - d->root->lo >
        (d->extent < 0 ? -(i128)d->extent : (i128)d->extent))
        return 1;
    return tile_overlaps(d);
}
