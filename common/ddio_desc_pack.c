/* Gather / scatter / coverage bitmaps: the per-block copy hot path. */
#include <stdbool.h>
#include <string.h>

#include "ddio_desc_int.h"

/* ---- gather / scatter / cover ----------------------------------------------
 * A dedicated recursion instead of walk_stream + callback: the server runs
 * this per block over many tiny pieces, so VEC-of-LEAF (the common innermost
 * level) is a tight loop with a constant-size case for 8-byte pieces. The
 * same recursion marks coverage bitmaps (the write path's "is this block
 * fully written, do writers overlap"), where a per-piece callback cost 5x
 * the copy itself for 8-byte cyclic views. */

enum copy_mode { COPY_GATHER, COPY_SCATTER, COPY_COVER };

struct copy {
    uint8_t *buf;        /* address a is buf[a - buf_addr] (bit a - buf_addr of bm) */
    int64_t buf_addr;
    uint8_t *pk;         /* next packed byte */
    enum copy_mode mode;
    uint64_t *bm;        /* COVER: bitmap, one bit per byte */
    uint64_t added;      /* COVER: bits newly set */
    int overlap;         /* COVER: some bit was already set */
};

/* set the bits `mask` (nb of them) of word w of c->bm */
static inline void cover_mask(struct copy *c, uint64_t w, uint64_t mask, uint64_t nb)
{
    uint64_t old = c->bm[w];
    if (old & mask) {    /* rare: overlapping writers */
        c->overlap = 1;
        c->added += (uint64_t)__builtin_popcountll(mask & ~old);
    } else {
        c->added += nb;
    }
    c->bm[w] = old | mask;
}

/* set bits [lo, lo + len) of c->bm */
static inline void cover_bits(struct copy *c, uint64_t lo, uint64_t len)
{
    while (len) {
        uint64_t b = lo % 64;
        uint64_t nb = len < 64 - b ? len : 64 - b;
        cover_mask(c, lo / 64, (nb == 64 ? ~0ull : ((1ull << nb) - 1)) << b, nb);
        lo += nb;
        len -= nb;
    }
}

static inline void copy_piece(struct copy *c, int64_t addr, uint64_t len)
{
    switch (c->mode) {
    case COPY_GATHER:
        memcpy(c->pk, c->buf + (addr - c->buf_addr), len);
        c->pk += len;
        break;
    case COPY_SCATTER:
        memcpy(c->buf + (addr - c->buf_addr), c->pk, len);
        c->pk += len;
        break;
    case COPY_COVER:
        cover_bits(c, (uint64_t)(addr - c->buf_addr), len);
        break;
    }
}

/* COVER of n pieces of len bytes, stride bytes apart, the first at bit lo.
 * The write path runs this per block per writer; for 8-byte cyclic views
 * a piece-at-a-time loop cost 3x the scatter itself (1.9 ns a piece), so
 * pieces that never straddle a word, with a stride that is a multiple or a
 * divisor of 64, are set a whole word at a time with one fixed mask. */
static void cover_leaves(struct copy *c, uint64_t lo, int64_t stride, uint64_t len, uint64_t n)
{
    uint64_t lm = len < 64 ? (1ull << len) - 1 : ~0ull, i = 0;
    if (stride > 0 && len < 64 && (uint64_t)stride % 64 == 0 && lo % 64 + len <= 64) {
        uint64_t w = lo / 64, step = (uint64_t)stride / 64, mask = lm << (lo % 64);
        for (; i < n; i++, w += step)
            cover_mask(c, w, mask, len);
        return;
    }
    if (stride > 0 && len < 64 && 64 % stride == 0 && lo % (uint64_t)stride + len <= (uint64_t)stride) {
        uint64_t st = (uint64_t)stride, k = 64 / st, mask = 0;
        for (; i < n && lo % 64 >= st; i++, lo += st)   /* up to the first piece of a word */
            cover_mask(c, lo / 64, lm << (lo % 64), len);
        /* only when a whole word follows: the loop above may have run out
         * of pieces before reaching a word's first (lo % 64 >= st then) */
        for (uint64_t j = 0; i + k <= n && j < k; j++)
            mask |= lm << (lo % 64 + j * st);
        for (; i + k <= n; i += k, lo += 64)
            cover_mask(c, lo / 64, mask, k * len);
    }
    for (; i < n; i++, lo += (uint64_t)stride) {
        if (len < 64 && lo % 64 + len <= 64)   /* one word: no loop */
            cover_mask(c, lo / 64, lm << (lo % 64), len);
        else
            cover_bits(c, lo, len);
    }
}

/* copies i0..i1 (whole) of a VEC of `len`-byte leaves at base */
static void copy_leaves(struct copy *c, int64_t base, int64_t stride, uint64_t len,
                        uint64_t i0, uint64_t i1)
{
    uint64_t n = i1 - i0;
    if (c->mode == COPY_COVER) {
        cover_leaves(c, (uint64_t)(base - c->buf_addr + (int64_t)i0 * stride), stride, len, n);
        return;
    }
    uint8_t *p = c->buf + (base - c->buf_addr) + (int64_t)i0 * stride;
    uint8_t *pk = c->pk;
    bool to_packed = c->mode == COPY_GATHER;
    if (len == 8 && to_packed) {
        for (uint64_t i = 0; i < n; i++, p += stride, pk += 8)
            memcpy(pk, p, 8);
    } else if (len == 8) {
        for (uint64_t i = 0; i < n; i++, p += stride, pk += 8)
            memcpy(p, pk, 8);
    } else if (to_packed) {
        for (uint64_t i = 0; i < n; i++, p += stride, pk += len)
            memcpy(pk, p, len);
    } else {
        for (uint64_t i = 0; i < n; i++, p += stride, pk += len)
            memcpy(p, pk, len);
    }
    c->pk = pk;
}

static void copy_node(struct copy *c, const struct ddio_node *n, int64_t base, uint64_t lo,
                      uint64_t hi)
{
    if (n->kind == DDIO_N_LEAF) {
        copy_piece(c, base + (int64_t)lo, hi - lo);
        return;
    }
    if (n->kind == DDIO_N_VEC) {
        const struct ddio_node *ch = n->u.vec.child;
        uint64_t cs = ch->size, i0 = lo / cs, i1 = (hi - 1) / cs;
        int64_t st = n->u.vec.stride;
        if (ch->kind == DDIO_N_LEAF) {
            if (st == (int64_t)cs) {   /* contiguous vector */
                copy_piece(c, base + (int64_t)lo, hi - lo);
                return;
            }
            uint64_t a = lo - i0 * cs, b = hi - i1 * cs;
            if (i0 == i1) {
                copy_piece(c, base + (int64_t)i0 * st + (int64_t)a, b - a);
                return;
            }
            copy_piece(c, base + (int64_t)i0 * st + (int64_t)a, cs - a);
            copy_leaves(c, base, st, cs, i0 + 1, i1);
            copy_piece(c, base + (int64_t)i1 * st, b);
            return;
        }
        for (uint64_t i = i0; i <= i1; i++)
            copy_node(c, ch, base + (int64_t)i * st, i == i0 ? lo - i * cs : 0,
                      i == i1 ? hi - i * cs : cs);
        return;
    }
    uint32_t j = list_child_of_byte(n, lo);
    for (; j < n->u.list.n && n->u.list.before[j] < hi; j++) {
        uint64_t b = n->u.list.before[j], cs = n->u.list.child[j]->size;
        copy_node(c, n->u.list.child[j], base + n->u.list.disp[j], lo > b ? lo - b : 0,
                  hi - b < cs ? hi - b : cs);
    }
}

static void desc_copy(const struct ddio_desc *d, struct copy *c, uint64_t s_lo, uint64_t s_hi)
{
    uint64_t size, v, vend;
    if (s_hi > d->length)
        s_hi = d->length;
    if (s_lo >= s_hi)
        return;
    size = d->root->size;
    v = d->start + s_lo;
    vend = d->start + s_hi;
    while (v < vend) {
        uint64_t t = v / size, w = v - t * size;
        uint64_t whi = vend - t * size < size ? vend - t * size : size;
        copy_node(c, d->root, (int64_t)tile_origin(d, t), w, whi);
        v = t * size + whi;
    }
}

void ddio_desc_gather(const struct ddio_desc *d, const void *buf, int64_t buf_addr,
                      uint64_t s_lo, uint64_t s_hi, void *packed)
{
    struct copy c = { .buf = (uint8_t *)(uintptr_t)buf, .buf_addr = buf_addr,
                      .pk = packed, .mode = COPY_GATHER };
    desc_copy(d, &c, s_lo, s_hi);
}

void ddio_desc_scatter(const struct ddio_desc *d, void *buf, int64_t buf_addr,
                       uint64_t s_lo, uint64_t s_hi, const void *packed)
{
    struct copy c = { .buf = buf, .buf_addr = buf_addr,
                      .pk = (uint8_t *)(uintptr_t)packed, .mode = COPY_SCATTER };
    desc_copy(d, &c, s_lo, s_hi);
}

uint64_t ddio_desc_cover(const struct ddio_desc *d, uint64_t *bm, int64_t bm_addr,
                         uint64_t s_lo, uint64_t s_hi, int *overlap)
{
    struct copy c = { .buf = NULL, .buf_addr = bm_addr, .mode = COPY_COVER, .bm = bm };
    desc_copy(d, &c, s_lo, s_hi);
    if (c.overlap)
        *overlap = 1;
    return c.added;
}
