/* Planner: enumerate touched local blocks, then order them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "planner.h"

#include <errno.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#define FIEMAP_BATCH 512
#define FIEMAP_MAX_EXTENTS (1u << 20)   /* bound memory on fragmented files */

struct vec { uint64_t *v; size_t n, cap; };

static int vec_push(struct vec *a, uint64_t x)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 256;
        uint64_t *p = realloc(a->v, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

/* first logical offset >= off in a stripe unit of server `me` */
static int64_t next_mine(const struct ddio_stripe *S, uint32_t me, int64_t off)
{
    uint64_t s = (uint64_t)off / S->unit;
    uint64_t r = s % S->count;
    uint64_t add = (me + S->count - r) % S->count;
    if (add == 0)
        return off;
    if (s + add > (uint64_t)INT64_MAX / S->unit)
        return -1;
    return (int64_t)((s + add) * S->unit);
}

static int push_block(const struct plan_in *in, uint32_t v, uint64_t k, struct vec *out)
{
    if (in->max_blocks && out->n >= in->max_blocks)
        return -E2BIG;
    if (k != plan_block_of(k))
        return -EOVERFLOW;        /* no room for the view in the id */
    return vec_push(out, plan_id(v, k));
}

static int in_partial(const struct plan_view *v, uint64_t g)
{
    return plan_sorted_has(v->partial, v->npartial, g);
}

static int push_range(const struct plan_in *in, uint32_t v, uint64_t lo, uint64_t hi,
                      struct vec *out)
{
    const uint64_t B = in->disks.unit;
    for (uint64_t k = lo / B; k * B < hi; k++) {
        int rc = push_block(in, v, k, out);
        if (rc)
            return rc;
    }
    return 0;
}

/* fn(in, v, c, out) for each chunk c (logical bytes [c * size, (c + 1) *
 * size)) that d touches, in order; stops at fn's first non-zero */
typedef int (*chunk_fn)(const struct plan_in *in, uint32_t v, uint64_t c, struct vec *out);
static int each_chunk(const struct plan_in *in, uint32_t v, const struct ddio_desc *d,
                      uint64_t size, chunk_fn fn, struct vec *out)
{
    int64_t first, end;
    ddio_desc_bounds(d, &first, &end);
    for (int64_t pos = first; d->length && pos < end;) {
        int64_t off = ddio_desc_next(d, pos);
        if (off < 0)
            break;
        uint64_t c = (uint64_t)off / size;
        int rc = fn(in, v, c, out);
        if (rc)
            return rc;
        if (c + 1 > (uint64_t)INT64_MAX / size)
            break;
        pos = (int64_t)((c + 1) * size);
    }
    return 0;
}

/* An overlay view: the overlay unit (ddio_ec_ovl_local) of unit u when
 * the call covers its group in part and this server keeps it (its own, or
 * one of a group whose parity it holds) */
static int overlay_unit(const struct plan_in *in, uint32_t v, uint64_t u, struct vec *out)
{
    const struct plan_view *pv = &in->views[v];
    const uint64_t U = in->stripe.unit;
    if (!in_partial(pv, u / pv->ec->k))
        return 0;
    uint64_t j = ddio_ec_ovl_local(pv->ec, U, pv->me, u * U);
    return j == UINT64_MAX ? 0 : push_range(in, v, j, j + U, out);
}

/* A parity view: every block of group g's parity unit when this server
 * holds it, but for a group the call covers in part (the engine checked
 * the rest whole) */
static int parity_unit(const struct plan_in *in, uint32_t v, uint64_t g, struct vec *out)
{
    const struct plan_view *pv = &in->views[v];
    const uint64_t U = in->stripe.unit;
    if (ddio_ec_parity_held(pv->ec, pv->me, g) < 0 || in_partial(pv, g))
        return 0;
    uint64_t i = ddio_ec_parity_local(pv->ec, pv->me, g);
    return push_range(in, v, i * U, (i + 1) * U, out);
}

static int collect_one(const struct plan_in *in, uint32_t v, const struct ddio_desc *d,
                       struct vec *out)
{
    const struct plan_view *pv = &in->views[v];
    if (pv->kind == PLAN_PARITY)
        return each_chunk(in, v, d, in->stripe.unit * pv->ec->k, parity_unit, out);
    if (pv->kind == PLAN_OVERLAY)
        return pv->npartial ? each_chunk(in, v, d, in->stripe.unit, overlay_unit, out) : 0;
    const uint64_t B = in->disks.unit;
    const uint32_t me = in->views[v].me;
    int64_t first, end;
    ddio_desc_bounds(d, &first, &end);
    int64_t pos = first;
    while (d->length && pos < end) {
        int64_t off = ddio_desc_next(d, pos);
        if (off < 0)
            break;
        if (ddio_layout_server(&in->stripe, (uint64_t)off) != me) {
            pos = next_mine(&in->stripe, me, off);
            if (pos < 0)
                break;
            continue;
        }
        uint64_t k = ddio_layout_local(&in->stripe, (uint64_t)off) / B;
        if (k * B >= in->limit)
            break;                /* local offsets only grow from here */
        int rc = push_block(in, v, k, out);
        if (rc)
            return rc;
        if ((k + 1) > UINT64_MAX / B)
            break;
        uint64_t nxt = ddio_layout_logical(&in->stripe, me, (k + 1) * B);
        if (nxt > (uint64_t)INT64_MAX)
            break;
        pos = (int64_t)nxt;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static size_t uniq(uint64_t *v, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || v[m - 1] != v[i])
            v[m++] = v[i];
    return m;
}

/* ---- physical order ----------------------------------------------------------------- */

struct extent { uint64_t lo, len, phys; };
struct keyed { uint64_t key; uint64_t k; int mapped; };

/* extents of fd covering [0, end), only those with a known physical address */
static struct extent *fiemap_all(int fd, uint64_t end, size_t *n)
{
    size_t sz = sizeof(struct fiemap) + FIEMAP_BATCH * sizeof(struct fiemap_extent);
    struct fiemap *fm = malloc(sz);
    struct extent *ex = NULL;
    size_t cnt = 0, cap = 0;
    uint64_t start = 0;
    *n = 0;
    while (fm && start < end && cnt < FIEMAP_MAX_EXTENTS) {
        memset(fm, 0, sz);
        fm->fm_start = start;
        fm->fm_length = end - start;
        fm->fm_extent_count = FIEMAP_BATCH;
        if (ioctl(fd, FS_IOC_FIEMAP, fm) < 0 || fm->fm_mapped_extents == 0)
            break;
        int last = 0;
        for (unsigned i = 0; i < fm->fm_mapped_extents; i++) {
            struct fiemap_extent *e = &fm->fm_extents[i];
            last |= (e->fe_flags & FIEMAP_EXTENT_LAST) != 0;
            start = e->fe_logical + e->fe_length;
            if (e->fe_flags & (FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_DELALLOC
                               | FIEMAP_EXTENT_ENCODED | FIEMAP_EXTENT_NOT_ALIGNED))
                continue;     /* no usable physical address */
            if (cnt == cap) {
                cap = cap ? 2 * cap : 64;
                struct extent *p = realloc(ex, cap * sizeof(*p));
                if (!p)
                    goto out;
                ex = p;
            }
            ex[cnt++] = (struct extent){e->fe_logical, e->fe_length, e->fe_physical};
        }
        if (last)
            break;
    }
out:
    free(fm);
    *n = cnt;
    return ex;
}

static int lookup_phys(const struct extent *ex, size_t n, uint64_t off, uint64_t *phys)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (off < ex[mid].lo)
            hi = mid;
        else if (off >= ex[mid].lo + ex[mid].len)
            lo = mid + 1;
        else {
            *phys = ex[mid].phys + (off - ex[mid].lo);
            return 1;
        }
    }
    return 0;
}

static int cmp_keyed(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    if (x->mapped != y->mapped)
        return y->mapped - x->mapped;         /* mapped first */
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->k > y->k) - (x->k < y->k);
}

/* the extents of every view's datafile on disk d up to the blocks' end
 * (ex[v] NULL where FIEMAP gave nothing) */
static void fiemap_views(const struct plan_in *in, uint32_t d, const uint64_t *blk, size_t n,
                         struct extent **ex, size_t *nex)
{
    const uint64_t B = in->disks.unit, D = in->disks.count;
    uint64_t end[PLAN_MAX_VIEWS] = {0};
    for (size_t i = 0; i < n; i++) {
        uint64_t e = (plan_block_of(blk[i]) / D + 1) * B;
        uint32_t v = plan_view_of(blk[i]);
        if (e > end[v])
            end[v] = e;
    }
    for (uint32_t v = 0; v < in->nviews; v++)
        ex[v] = end[v] ? fiemap_all(in->views[v].fds[d], end[v], &nex[v]) : NULL;
}

static void fiemap_free(struct extent **ex, uint32_t nviews)
{
    for (uint32_t v = 0; v < nviews; v++)
        free(ex[v]);
}

/* block id's physical address on its disk, from its view's extents */
static int phys_of(const struct plan_in *in, struct extent *const *ex, const size_t *nex,
                   uint64_t id, uint64_t *phys)
{
    uint32_t v = plan_view_of(id);
    uint64_t k = plan_block_of(id);
    return ex[v] && lookup_phys(ex[v], nex[v], (k / in->disks.count) * in->disks.unit, phys);
}

/* order one disk's blocks (given in logical order) in place; returns the
 * number that had a physical address. The views' datafiles on one disk
 * share its device, so their addresses sort together: a mirrored write is
 * one sweep, not one per copy. */
static size_t sort_disk(const struct plan_in *in, uint32_t d, uint64_t *blk, size_t n)
{
    struct extent *ex[PLAN_MAX_VIEWS] = {0};
    size_t nex[PLAN_MAX_VIEWS] = {0}, mapped = 0;
    fiemap_views(in, d, blk, n, ex, nex);
    struct keyed *k = malloc(n * sizeof(*k));
    for (size_t i = 0; k && i < n; i++) {
        uint64_t phys;
        k[i].k = blk[i];
        k[i].mapped = phys_of(in, ex, nex, blk[i], &phys);
        k[i].key = k[i].mapped ? phys : blk[i];
        mapped += (size_t)k[i].mapped;
    }
    if (k) {
        qsort(k, n, sizeof(*k), cmp_keyed);
        for (size_t i = 0; i < n; i++)
            blk[i] = k[i].k;
    }
    free(k);
    fiemap_free(ex, in->nviews);
    return k ? mapped : 0;
}

/* split by disk, sort each, interleave round-robin back into v */
static int order_physical(const struct plan_in *in, uint64_t *v, size_t n, int *sorted)
{
    const uint32_t D = in->disks.count;
    uint64_t *tmp = malloc(n * sizeof(*tmp));
    size_t *cnt = calloc(D, sizeof(size_t)), *base = calloc(D, sizeof(size_t));
    int rc = (!tmp || !cnt || !base) ? -ENOMEM : 0;
    size_t mapped = 0;
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            cnt[plan_block_of(v[i]) % D]++;
        for (uint32_t d = 1; d < D; d++)
            base[d] = base[d - 1] + cnt[d - 1];
        size_t *fill = calloc(D, sizeof(size_t));
        rc = fill ? 0 : -ENOMEM;
        for (size_t i = 0; fill && i < n; i++) {
            uint32_t d = (uint32_t)(plan_block_of(v[i]) % D);
            tmp[base[d] + fill[d]++] = v[i];
        }
        free(fill);
    }
    for (uint32_t d = 0; rc == 0 && d < D; d++)
        if (cnt[d] > 1)           /* one block has no order: spare the FIEMAP */
            mapped += sort_disk(in, d, tmp + base[d], cnt[d]);
    for (size_t i = 0, round = 0; rc == 0 && i < n; round++)
        for (uint32_t d = 0; d < D; d++)
            if (round < cnt[d])
                v[i++] = tmp[base[d] + round];
    *sorted = rc == 0 && mapped > 0;
    free(tmp);
    free(cnt);
    free(base);
    return rc;
}

static int rotate_list(uint64_t *v, size_t n, uint32_t me, uint32_t count)
{
    if (n < 2 || count < 2)
        return 0;
    size_t start = (size_t)(((unsigned __int128)me * n) / count);
    if (start == 0)
        return 0;
    uint64_t *tmp = malloc(n * sizeof(*tmp));
    if (!tmp)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        tmp[i] = v[(start + i) % n];
    memcpy(v, tmp, n * sizeof(*tmp));
    free(tmp);
    return 0;
}

int plan_blocks(const struct plan_in *in, uint64_t **blocks, size_t *n, int *sorted)
{
    struct vec a = {0};
    *sorted = 0;
    for (uint32_t v = 0; v < in->nviews; v++)
        for (uint32_t i = 0; i < in->n; i++) {
            int rc = in->descs[i] ? collect_one(in, v, in->descs[i], &a) : 0;
            if (rc) {
                free(a.v);
                return rc;
            }
        }
    if (a.n)
        qsort(a.v, a.n, sizeof(*a.v), cmp_u64);
    a.n = uniq(a.v, a.n);
    int rc = 0;
    if (a.n && !in->nosort)
        rc = order_physical(in, a.v, a.n, sorted);
    if (rc == 0 && in->rotate)
        rc = rotate_list(a.v, a.n, in->views[0].me, in->stripe.count);
    if (rc) {
        free(a.v);
        return rc;
    }
    *blocks = a.v;
    *n = a.n;
    return 0;
}

uint64_t plan_out_of_order(const struct plan_in *in, const uint64_t *blocks, size_t n)
{
    const uint64_t D = in->disks.count;
    uint64_t bad = 0;
    uint64_t *mine = n ? malloc(n * sizeof(*mine)) : NULL;
    for (uint64_t d = 0; d < D && mine; d++) {
        size_t here = 0;
        for (size_t i = 0; i < n; i++)
            if (plan_block_of(blocks[i]) % D == d)
                mine[here++] = blocks[i];
        if (here < 2)             /* one block cannot be out of order: no FIEMAP */
            continue;
        struct extent *ex[PLAN_MAX_VIEWS] = {0};
        size_t nex[PLAN_MAX_VIEWS] = {0};
        uint64_t prev = 0, phys;
        int have_prev = 0;
        fiemap_views(in, (uint32_t)d, mine, here, ex, nex);
        for (size_t i = 0; i < here; i++) {
            if (!phys_of(in, ex, nex, mine[i], &phys))
                continue;
            bad += have_prev && phys < prev;
            prev = phys;
            have_prev = 1;
        }
        fiemap_free(ex, in->nviews);
    }
    free(mine);
    return bad;
}
