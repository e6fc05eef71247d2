/* Unit tests for the distribution descriptor (common/ddio_desc_*.c).
 *
 * Everything is compared against a brute-force model: a flat (offset, length)
 * list, expanded byte by byte into "stream byte -> address". The flat lists
 * come from test-side generators (MPI-like type constructors, HPF darray
 * patterns) or from a naive expansion of random trees, never from the code
 * under test. Randomness uses fixed seeds.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddio_desc.h"
#include "fast_assert.h"
#include "suite_run.h"

/* ---- helpers ---------------------------------------------------------------- */

static uint64_t rng_s;
static void rng_seed(uint64_t s) { rng_s = s * 0x9E3779B97F4A7C15ull + 1; }
static uint64_t rnd(void)
{
    rng_s ^= rng_s >> 12;
    rng_s ^= rng_s << 25;
    rng_s ^= rng_s >> 27;
    return rng_s * 0x2545F4914F6CDD1Dull;
}
static uint64_t rndn(uint64_t n) { return n ? rnd() % n : 0; }
static int64_t rndr(int64_t lo, int64_t hi) { return lo + (int64_t)rndn((uint64_t)(hi - lo + 1)); }

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct flat {
    int64_t *off, *len;
    size_t n, cap;
};

static void flat_add(struct flat *f, int64_t off, int64_t len)
{
    if (f->n == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 64;
        f->off = realloc(f->off, f->cap * sizeof(int64_t));
        f->len = realloc(f->len, f->cap * sizeof(int64_t));
        FA_TRUE(f->off && f->len);
    }
    f->off[f->n] = off;
    f->len[f->n++] = len;
}

static void flat_free(struct flat *f)
{
    free(f->off);
    free(f->len);
    memset(f, 0, sizeof(*f));
}

static uint64_t flat_bytes(const struct flat *f)
{
    uint64_t s = 0;
    for (size_t i = 0; i < f->n; i++)
        s += (uint64_t)f->len[i];
    return s;
}

/* drop empty pieces, merge contiguous ones (the canonical form) */
static void flat_merge(const struct flat *in, struct flat *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < in->n; i++) {
        if (!in->len[i])
            continue;
        if (out->n && out->off[out->n - 1] + out->len[out->n - 1] == in->off[i])
            out->len[out->n - 1] += in->len[i];
        else
            flat_add(out, in->off[i], in->len[i]);
    }
}

/* naive expansion of a tree into its pieces (no merging) */
static void expand(const struct ddio_node *n, int64_t base, struct flat *f)
{
    switch (n->kind) {
    case DDIO_N_LEAF:
        flat_add(f, base, (int64_t)n->u.leaf.len);
        break;
    case DDIO_N_VEC:
        for (uint64_t i = 0; i < n->u.vec.count; i++)
            expand(n->u.vec.child, base + (int64_t)i * n->u.vec.stride, f);
        break;
    case DDIO_N_LIST:
        for (uint32_t j = 0; j < n->u.list.n; j++)
            expand(n->u.list.child[j], base + n->u.list.disp[j], f);
        break;
    }
}

static void assert_tree_is_flat(const struct ddio_node *t, const struct flat *f)
{
    struct flat a = { 0 }, ma, mf;
    expand(t, 0, &a);
    flat_merge(&a, &ma);
    flat_merge(f, &mf);
    FA_UINT_EQ(ma.n, mf.n);
    for (size_t i = 0; i < ma.n; i++) {
        FA_INT_EQ(ma.off[i], mf.off[i]);
        FA_INT_EQ(ma.len[i], mf.len[i]);
    }
    flat_free(&a);
    flat_free(&ma);
    flat_free(&mf);
}

static size_t enc_size(const struct ddio_desc *d)
{
    struct ddio_wbuf w;
    size_t n;
    ddio_wbuf_init(&w);
    ddio_desc_encode(&w, d);
    FA_INT_EQ(w.err, 0);
    n = w.len;
    FA_UINT_EQ(n, ddio_desc_encoded_size(d));
    ddio_wbuf_free(&w);
    return n;
}

static int tree_depth(const struct ddio_node *n)
{
    int d = 0;
    if (n->kind == DDIO_N_VEC)
        d = tree_depth(n->u.vec.child);
    else if (n->kind == DDIO_N_LIST)
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            int c = tree_depth(n->u.list.child[j]);
            d = c > d ? c : d;
        }
    return d + 1;
}

/* ---- the model ---------------------------------------------------------------- */

struct model {
    int64_t *addr;       /* address of every stream byte */
    uint64_t n;
    bool mono;           /* what ddio_desc_check_monotone must say */
    int64_t amin, amax;  /* address range touched (n > 0) */
};

static void model_build(const struct ddio_desc *d, const struct flat *tile, struct model *m)
{
    uint64_t tsize = flat_bytes(tile), w = 0;
    int64_t *tb = malloc((tsize ? tsize : 1) * sizeof(int64_t)), lo = INT64_MAX, hi = INT64_MIN;
    bool tmono = true;
    ck_assert_ptr_nonnull(tb);
    for (size_t i = 0; i < tile->n; i++)
        for (int64_t b = 0; b < tile->len[i]; b++, w++) {
            tb[w] = tile->off[i] + b;
            if (w && tb[w] <= tb[w - 1])
                tmono = false;
            lo = tb[w] < lo ? tb[w] : lo;
            hi = tb[w] + 1 > hi ? tb[w] + 1 : hi;
        }
    m->n = d->length;
    m->addr = malloc((m->n ? m->n : 1) * sizeof(int64_t));
    ck_assert_ptr_nonnull(m->addr);
    m->amin = INT64_MAX;
    m->amax = INT64_MIN;
    for (uint64_t s = 0; s < m->n; s++) {
        uint64_t v = d->start + s;
        m->addr[s] = d->disp + (int64_t)(v / tsize) * d->extent + tb[v % tsize];
        m->amin = m->addr[s] < m->amin ? m->addr[s] : m->amin;
        m->amax = m->addr[s] > m->amax ? m->addr[s] : m->amax;
    }
    m->mono = true;
    if (m->n) {
        uint64_t t0 = d->start / tsize, t1 = (d->start + d->length - 1) / tsize;
        m->mono = tmono && (t1 == t0 || d->extent >= hi - lo) && m->addr[0] >= 0;
    }
    free(tb);
}

static void model_free(struct model *m) { free(m->addr); }

/* piece collector checking maximality and stream continuity */
struct coll {
    const struct model *m;
    uint64_t next_s;     /* expected stream offset */
    int64_t prev_end;
    bool any;
    int64_t lo, hi;      /* walk_file window, or lo > hi for none */
    int stop_after;      /* stop test: return 7 after this many pieces */
    int pieces;
};

static int coll_fn(void *arg, int64_t addr, uint64_t len, uint64_t soff)
{
    struct coll *c = arg;
    ck_assert_uint_gt(len, 0);
    FA_UINT_EQ(soff, c->next_s);
    if (c->any)
        ck_assert_int_ne(addr, c->prev_end);   /* pieces are maximal */
    for (uint64_t b = 0; b < len; b++)
        FA_INT_EQ(c->m->addr[soff + b], addr + (int64_t)b);
    if (c->lo <= c->hi) {
        ck_assert_int_ge(addr, c->lo);
        ck_assert_int_le(addr + (int64_t)len, c->hi);
    }
    c->next_s = soff + len;
    c->prev_end = addr + (int64_t)len;
    c->any = true;
    return ++c->pieces == c->stop_after ? 7 : 0;
}

static void check_walk_stream(const struct ddio_desc *d, const struct model *m, uint64_t a,
                              uint64_t b)
{
    struct coll c = { .m = m, .next_s = a, .lo = 1, .hi = 0 };
    uint64_t end = b < m->n ? b : m->n;
    FA_INT_EQ(ddio_desc_walk_stream(d, a, b, coll_fn, &c), 0);
    FA_UINT_EQ(c.next_s, end > a ? end : a);
}

static void check_walk_file(const struct ddio_desc *d, const struct model *m, int64_t lo,
                            int64_t hi)
{
    uint64_t s0 = 0, s1;
    struct coll c = { .m = m, .lo = lo, .hi = hi };
    while (s0 < m->n && m->addr[s0] < lo)
        s0++;
    s1 = s0;
    while (s1 < m->n && m->addr[s1] < hi)
        s1++;
    if (lo >= hi)
        s1 = s0;
    c.next_s = s0;
    FA_INT_EQ(ddio_desc_walk_file(d, lo, hi, coll_fn, &c), 0);
    FA_UINT_EQ(c.next_s, s1);
}

static void check_copy(const struct ddio_desc *d, const struct model *m, uint64_t a, uint64_t b)
{
    int64_t span = m->amax - m->amin + 1;
    uint8_t *buf = malloc(span), *pk = malloc(b - a + 1), *mark = calloc(span, 1);
    bool unique = true;
    FA_TRUE(buf && pk && mark);
    for (int64_t i = 0; i < span; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    ddio_desc_gather(d, buf, m->amin, a, b, pk);
    for (uint64_t s = a; s < b; s++)
        FA_UINT_EQ(pk[s - a], buf[m->addr[s] - m->amin]);
    for (uint64_t s = a; s < b; s++) {
        unique &= !mark[m->addr[s] - m->amin];
        mark[m->addr[s] - m->amin] = 1;
        pk[s - a] = (uint8_t)rnd();
    }
    if (unique) {   /* overlapping memory types: the last write wins, skip */
        memset(buf, 0, span);
        ddio_desc_scatter(d, buf, m->amin, a, b, pk);
        for (uint64_t s = a; s < b; s++)
            FA_UINT_EQ(buf[m->addr[s] - m->amin], pk[s - a]);
        for (int64_t i = 0; i < span; i++)
            if (!mark[i])
                FA_UINT_EQ(buf[i], 0);
    }
    free(buf);
    free(pk);
    free(mark);
}

/* ddio_desc_cover against the model: the bits of the addresses of stream
 * bytes [a, b), the count of distinct ones, and overlap iff one repeats;
 * bits set beforehand (a pre-marked stripe) count as overlap, not as added */
static void check_cover(const struct ddio_desc *d, const struct model *m, uint64_t a, uint64_t b)
{
    int64_t span = m->amax - m->amin + 1, pre = (int64_t)(rnd() % (uint64_t)span);
    size_t words = (size_t)(span + 63) / 64;
    uint64_t *bm = calloc(words, 8);
    uint8_t *mark = calloc(span, 1);
    uint64_t distinct = 0;
    int want_overlap = 0, overlap = 0;
    FA_TRUE(bm && mark);
    bm[pre / 64] |= 1ull << (pre % 64);
    mark[pre] = 1;
    for (uint64_t s = a; s < b; s++) {
        int64_t i = m->addr[s] - m->amin;
        want_overlap |= mark[i];
        distinct += !mark[i];
        mark[i] = 1;
    }
    FA_UINT_EQ(ddio_desc_cover(d, bm, m->amin, a, b, &overlap), distinct);
    FA_INT_EQ(overlap, want_overlap);
    for (int64_t i = 0; i < span; i++)
        FA_UINT_EQ((bm[i / 64] >> (i % 64)) & 1, mark[i]);
    free(bm);
    free(mark);
}

static void check_roundtrip(const struct ddio_desc *d)
{
    struct ddio_wbuf w;
    struct ddio_desc x;
    ddio_wbuf_init(&w);
    ddio_desc_encode(&w, d);
    FA_INT_EQ(w.err, 0);
    FA_UINT_EQ(w.len, ddio_desc_encoded_size(d));
    FA_INT_EQ(ddio_desc_decode(w.p, w.len, DDIO_DESC_MAX_NODES, &x), 0);
    FA_INT_EQ(x.disp, d->disp);
    FA_INT_EQ(x.extent, d->extent);
    FA_UINT_EQ(x.start, d->start);
    FA_UINT_EQ(x.length, d->length);
    FA_TRUE(ddio_node_equal(x.root, d->root));
    FA_UINT_EQ(x.root->size, d->root->size);
    FA_INT_EQ(x.root->lo, d->root->lo);
    FA_INT_EQ(x.root->hi, d->root->hi);
    /* every truncation is rejected */
    for (size_t k = 0; k < w.len; k++) {
        struct ddio_desc y;
        FA_INT_EQ(ddio_desc_decode(w.p, k, DDIO_DESC_MAX_NODES, &y), -EPROTO);
        ck_assert_ptr_null(y.root);
    }
    ddio_desc_free(&x);
    ddio_wbuf_free(&w);
}

/* Compare every evaluator and walker of d against the flat model of one tile. */
static void check_desc(const struct ddio_desc *d, const struct flat *tile)
{
    struct model m;
    model_build(d, tile, &m);
    FA_INT_EQ(ddio_desc_check_monotone(d) == 0, m.mono);
    for (uint64_t s = 0; s < m.n; s++)
        FA_INT_EQ(ddio_desc_addr(d, s), m.addr[s]);
    check_walk_stream(d, &m, 0, m.n);
    check_walk_stream(d, &m, 0, m.n + 5);   /* clipped to length */
    for (int k = 0; k < 6 && m.n; k++) {
        uint64_t a = rndn(m.n + 1), b = a + rndn(m.n - a + 1);
        check_walk_stream(d, &m, a, b);
        if (b > a) {
            check_copy(d, &m, a, b);
            check_cover(d, &m, a, b);
        }
    }
    if (m.n) {   /* a non-zero callback return stops the walk */
        struct coll c = { .m = &m, .lo = 1, .hi = 0, .stop_after = 1 };
        FA_INT_EQ(ddio_desc_walk_stream(d, 0, m.n, coll_fn, &c), 7);
        FA_INT_EQ(c.pieces, 1);
    }
    if (m.mono) {
        int64_t first, end;
        uint64_t s = 0;
        ddio_desc_bounds(d, &first, &end);
        if (m.n == 0) {
            FA_INT_EQ(first, 0);
            FA_INT_EQ(end, 0);
            FA_UINT_EQ(ddio_desc_stream_before(d, 12345), 0);
            FA_INT_EQ(ddio_desc_next(d, 0), -1);
        } else {
            FA_INT_EQ(first, m.addr[0]);
            FA_INT_EQ(end, m.addr[m.n - 1] + 1);
            /* every offset in and around the range (sampled when huge) */
            int64_t step = (end - first) / 20000 + 1;
            for (int64_t off = first - 3; off <= end + 3; off += (off < first + 64 || off > end - 64) ? 1 : step) {
                uint64_t sb;
                while (s < m.n && m.addr[s] < off)
                    s++;
                sb = ddio_desc_stream_before(d, off);
                FA_UINT_EQ(sb, s);
                FA_INT_EQ(ddio_desc_next(d, off), s < m.n ? m.addr[s] : -1);
            }
            FA_UINT_EQ(ddio_desc_stream_before(d, INT64_MIN), 0);
            FA_UINT_EQ(ddio_desc_stream_before(d, INT64_MAX), m.n);
            FA_INT_EQ(ddio_desc_next(d, INT64_MIN), m.addr[0]);
            for (int k = 0; k < 6; k++) {
                int64_t lo = first - 2 + (int64_t)rndn(end - first + 4);
                int64_t hi = lo + (int64_t)rndn(end - lo + 3);
                check_walk_file(d, &m, lo, hi);
            }
            check_walk_file(d, &m, first, end);
            check_walk_file(d, &m, INT64_MIN, INT64_MAX);
        }
    }
    model_free(&m);
    check_roundtrip(d);
}

/* A random descriptor over a tile: extent with holes or resized, start and
 * length anywhere (in the middle of tiles too). */
static void make_desc(struct ddio_desc *d, struct ddio_node *root, bool mono)
{
    uint64_t ts = root->size;
    d->root = root;
    if (mono) {
        d->extent = root->hi - root->lo + (int64_t)(rndn(3) ? rndn(12) : 0);
        d->disp = -root->lo + (int64_t)rndn(50);
        if (rndn(10) == 0)
            d->disp -= 30;   /* may go negative: not monotone */
    } else {
        d->extent = rndr(-60, 60);
        d->disp = rndr(-100, 100);
    }
    d->start = rndn(3) ? rndn(ts * 2 + 1) : 0;
    d->length = rndn(12) ? 1 + rndn(ts * 3) : 0;
}

/* ---- random trees via the constructors ------------------------------------- */

static struct ddio_node *gen_tree(int depth, bool mono)
{
    uint64_t r = rndn(10);
    if (depth == 0 || r < 3)
        return ddio_node_leaf(1 + rndn(rndn(4) ? 8 : 40));
    if (r < 7) {
        struct ddio_node *c = gen_tree(depth - 1, mono);
        uint64_t count = 1 + rndn(5);
        int64_t stride = mono ? c->hi - c->lo + (int64_t)rndn(6) : rndr(-40, 40);
        return ddio_node_vec(count, stride, c);
    }
    uint32_t n = 1 + (uint32_t)rndn(4);
    int64_t disp[4], cur = rndr(-20, 20);
    struct ddio_node *ch[4];
    for (uint32_t j = 0; j < n; j++) {
        ch[j] = gen_tree(depth - 1, mono);
        if (mono) {
            disp[j] = cur - ch[j]->lo + (int64_t)rndn(5);
            cur = disp[j] + ch[j]->hi;
        } else {
            disp[j] = rndr(-60, 60);
        }
    }
    return ddio_node_list(n, disp, ch);
}

START_TEST(test_random_trees)
{
    rng_seed(1);
    for (int it = 0; it < 1500; it++) {
        bool mono = rndn(4) != 0;
        struct ddio_node *t = gen_tree(1 + (int)rndn(4), mono);
        struct ddio_desc d;
        struct flat f = { 0 };
        ck_assert_ptr_nonnull(t);
        FA_INT_EQ(ddio_node_finish(t), 0);
        if (t->size > 3000) {
            ddio_node_free(t);
            continue;
        }
        expand(t, 0, &f);
        FA_UINT_EQ(flat_bytes(&f), t->size);
        make_desc(&d, t, mono);
        check_desc(&d, &f);

        /* from_flat on the expansion reproduces it and evaluates the same */
        struct ddio_node *u = ddio_node_from_flat(f.n, f.off, f.len);
        ck_assert_ptr_nonnull(u);
        assert_tree_is_flat(u, &f);
        ck_assert_int_le(tree_depth(u), DDIO_DESC_MAX_DEPTH);
        d.root = u;
        check_desc(&d, &f);

        ddio_node_free(t);
        ddio_node_free(u);
        flat_free(&f);
    }
}
END_TEST

/* ---- MPI-like type constructors (test-side flattening) ---------------------- */

struct ttype {
    struct flat f;       /* pieces relative to the type's origin, type order */
    int64_t lb, ub;
};

static struct ttype *tt_new(void) { struct ttype *t = calloc(1, sizeof(*t)); ck_assert_ptr_nonnull(t); return t; }
static void tt_free(struct ttype *t) { flat_free(&t->f); free(t); }
static int64_t tt_ext(const struct ttype *t) { return t->ub - t->lb; }

static struct ttype *tt_bytes(int64_t n)
{
    struct ttype *t = tt_new();
    flat_add(&t->f, 0, n);
    t->ub = n;
    return t;
}

/* append `blen` consecutive copies of c at byte displacement `at` */
static void tt_block(struct ttype *t, const struct ttype *c, int64_t at, int64_t blen, bool *first)
{
    for (int64_t b = 0; b < blen; b++) {
        int64_t o = at + b * tt_ext(c);
        for (size_t i = 0; i < c->f.n; i++)
            flat_add(&t->f, o + c->f.off[i], c->f.len[i]);
        if (*first || o + c->lb < t->lb)
            t->lb = o + c->lb;
        if (*first || o + c->ub > t->ub)
            t->ub = o + c->ub;
        *first = false;
    }
}

/* hindexed is the general form: indexed/vector/hvector/indexed_block/
 * contiguous reduce to it */
static struct ttype *tt_hindexed(int n, const int64_t *blen, const int64_t *disp,
                                 const struct ttype *const *c)
{
    struct ttype *t = tt_new();
    bool first = true;
    for (int i = 0; i < n; i++)
        if (blen[i] > 0)
            tt_block(t, c[i], disp[i], blen[i], &first);
    return t;
}

static struct ttype *tt_gen(int depth, bool mono);

static struct ttype *tt_gen_compound(int depth, bool mono)
{
    int kind = (int)rndn(6), n = 1 + (int)rndn(5);
    int64_t blen[6], disp[6];
    const struct ttype *cs[6];
    struct ttype *kids[6] = { 0 }, *t;
    struct ttype *c = tt_gen(depth - 1, mono);
    int64_t e = tt_ext(c) > 0 ? tt_ext(c) : 1;
    int64_t stride = (int64_t)rndn(4) + 1;          /* vector, in elements */
    int64_t hstride = e + (int64_t)rndn(3) + 1;     /* hvector, in bytes */
    int64_t vblen = 1 + (int64_t)rndn(2);
    int64_t cur = 0;
    if (!mono) {
        stride = -stride;
        hstride = rndr(-20, 20);
    }
    for (int i = 0; i < n; i++) {
        cs[i] = c;
        switch (kind) {
        case 0:   /* contiguous */
            blen[i] = 1; disp[i] = i * tt_ext(c); break;
        case 1:   /* vector: stride in elements */
            blen[i] = vblen; disp[i] = i * (vblen - 1 + stride) * e; break;
        case 2:   /* hvector: stride in bytes, not a multiple of the extent */
            blen[i] = 1; disp[i] = i * hstride; break;
        case 3:   /* indexed: varying block lengths, zero-length blocks too */
            blen[i] = (int64_t)rndn(3);
            disp[i] = mono ? cur : rndr(-3, 3) * e;
            cur += (blen[i] + (int64_t)rndn(2)) * e; break;
        case 4:   /* indexed_block */
            blen[i] = 2; disp[i] = mono ? cur : rndr(-5, 5) * e; cur += (2 + (int64_t)rndn(3)) * e; break;
        default:  /* struct: different child types */
            kids[i] = tt_gen(depth - 1, mono);
            cs[i] = kids[i];
            blen[i] = 1 + (int64_t)rndn(2);
            disp[i] = mono ? cur - kids[i]->lb : rndr(-30, 30);
            cur = disp[i] + kids[i]->lb + blen[i] * tt_ext(kids[i]) + (int64_t)rndn(4);
            break;
        }
    }
    t = tt_hindexed(n, blen, disp, cs);
    if (t->f.n == 0) {   /* everything empty: keep one byte */
        tt_free(t);
        t = tt_bytes(1);
    }
    for (int i = 0; i < n; i++)
        if (kids[i])
            tt_free(kids[i]);
    tt_free(c);
    return t;
}

static struct ttype *tt_gen(int depth, bool mono)
{
    struct ttype *t = depth == 0 || rndn(4) == 0 ? tt_bytes(1 + (int64_t)rndn(9))
                                                 : tt_gen_compound(depth, mono);
    if (rndn(5) == 0) {   /* resized: larger extent (holes) or shifted lb */
        int64_t lb = t->lb - (int64_t)rndn(4);
        t->ub = lb + tt_ext(t) + (int64_t)rndn(10) + (t->lb - lb);
        t->lb = lb;
    }
    return t;
}

/* scatter a few zero-length pieces into a flat list, as ROMIO may */
static void add_zero_pieces(struct flat *f)
{
    struct flat g = { 0 };
    for (size_t i = 0; i < f->n; i++) {
        if (rndn(8) == 0)
            flat_add(&g, f->off[i] + (int64_t)rndn(3), 0);
        flat_add(&g, f->off[i], f->len[i]);
    }
    flat_free(f);
    *f = g;
}

/* Vectors of short leaves with strides that are multiples or divisors of 64
 * bytes (the coverage bitmap's word-at-a-time paths: 8-byte cyclic views at
 * P = 8, 4, 2), and strides that are neither, at every alignment against
 * the bitmap's words, against the model. */
START_TEST(test_strided_leaves)
{
    static const int64_t strides[] = { 8, 16, 32, 64, 128, 192, 24, 48, 40 };
    rng_seed(3);
    for (size_t k = 0; k < sizeof(strides) / sizeof(strides[0]); k++) {
        for (int it = 0; it < 60; it++) {
            int64_t st = strides[k];
            uint64_t len = 1 + rndn((uint64_t)(st < 64 ? st : 64) + (rndn(4) ? 0 : 8));
            struct ddio_node *t = ddio_node_vec(2 + rndn(40), st, ddio_node_leaf(len));
            struct ddio_desc d;
            struct flat f = { 0 };
            ck_assert_ptr_nonnull(t);
            FA_INT_EQ(ddio_node_finish(t), 0);
            expand(t, 0, &f);
            make_desc(&d, t, len <= (uint64_t)st);
            check_desc(&d, &f);
            ddio_node_free(t);
            flat_free(&f);
        }
    }
}
END_TEST

START_TEST(test_random_types)
{
    rng_seed(2);
    for (int it = 0; it < 1200; it++) {
        bool mono = rndn(3) != 0;
        struct ttype *t = tt_gen(1 + (int)rndn(4), mono);
        struct ddio_desc d;
        struct ddio_node *u;
        uint64_t bytes = flat_bytes(&t->f);
        if (bytes == 0 || bytes > 4000 || t->f.n > 3000) {
            tt_free(t);
            continue;
        }
        if (rndn(3) == 0)
            add_zero_pieces(&t->f);
        u = ddio_node_from_flat(t->f.n, t->f.off, t->f.len);
        ck_assert_ptr_nonnull(u);
        assert_tree_is_flat(u, &t->f);
        FA_UINT_EQ(u->size, bytes);
        d.root = u;
        d.extent = tt_ext(t);
        d.disp = mono ? (int64_t)rndn(40) + (u->lo < 0 ? -u->lo : 0) : rndr(-50, 50);
        d.start = rndn(3) ? rndn(bytes * 2 + 1) : 0;
        d.length = rndn(10) ? 1 + rndn(bytes * 3) : 0;
        check_desc(&d, &t->f);
        ddio_node_free(u);
        tt_free(t);
    }
}
END_TEST

/* ---- HPF patterns (darray-like) ------------------------------------------- */

enum { D_NONE, D_BLOCK, D_CYCLIC, D_ALL };

/* owned index ranges of one dimension: emits [a, b) runs via callback-free
 * arrays (BLOCK/NONE: one run; CYCLIC: one per index) */
struct dimsel {
    int kind;
    int64_t n, q, Q;     /* size, coordinate, grid extent */
};

static int64_t dim_block(const struct dimsel *s, int64_t *a, int64_t *b)
{
    int64_t bs = (s->n + s->Q - 1) / s->Q;
    *a = s->q * bs < s->n ? s->q * bs : s->n;
    *b = (s->q + 1) * bs < s->n ? (s->q + 1) * bs : s->n;
    return *b - *a;
}

/* Flat list of rank (qr, qc) for a rows x cols file of R-byte records, as
 * ROMIO flattens the darray: one piece per contiguous run within a row. */
static void pattern_flat(int dr, int dc, int64_t rows, int64_t cols, int Qr, int Qc, int qr,
                         int qc, int64_t R, struct flat *f)
{
    struct dimsel sr = { dr, rows, qr, Qr }, sc = { dc, cols, qc, Qc };
    int64_t r0, r1, rstep = 1, c0, c1;
    memset(f, 0, sizeof(*f));
    if (dr == D_CYCLIC) {
        r0 = qr;
        r1 = rows;
        rstep = Qr;
    } else if (dr == D_BLOCK) {
        dim_block(&sr, &r0, &r1);
    } else {
        r0 = 0;
        r1 = rows;
    }
    for (int64_t r = r0; r < r1; r += rstep) {
        int64_t base = r * cols * R;
        if (dc == D_CYCLIC) {
            for (int64_t c = qc; c < cols; c += Qc)
                flat_add(f, base + c * R, R);
        } else {
            if (dc == D_BLOCK)
                dim_block(&sc, &c0, &c1);
            else {
                c0 = 0;
                c1 = cols;
            }
            if (c1 > c0)
                flat_add(f, base + c0 * R, (c1 - c0) * R);
        }
    }
}

struct pat {
    const char *name;
    int twod;
    int dr, dc;
    int grid;            /* 0: 1 x P, 1: P x 1, 2: "square" */
};

static const struct pat pats[] = {
    { "ra", 0, D_ALL, D_ALL, 0 },     { "rn", 0, D_NONE, D_NONE, 0 },
    { "rb", 0, D_NONE, D_BLOCK, 0 },  { "rc", 0, D_NONE, D_CYCLIC, 0 },
    { "rnb", 1, D_NONE, D_BLOCK, 0 }, { "rnc", 1, D_NONE, D_CYCLIC, 0 },
    { "rbn", 1, D_BLOCK, D_NONE, 1 }, { "rbb", 1, D_BLOCK, D_BLOCK, 2 },
    { "rbc", 1, D_BLOCK, D_CYCLIC, 2 }, { "rcn", 1, D_CYCLIC, D_NONE, 1 },
    { "rcb", 1, D_CYCLIC, D_BLOCK, 2 }, { "rcc", 1, D_CYCLIC, D_CYCLIC, 2 },
};

/* grid as MPI_Dims_create would make it */
static void grid_of(int P, int g, int *Qr, int *Qc)
{
    if (g == 0) { *Qr = 1; *Qc = P; }
    else if (g == 1) { *Qr = P; *Qc = 1; }
    else if (P == 4) { *Qr = 2; *Qc = 2; }
    else if (P == 6) { *Qr = 3; *Qc = 2; }
    else { *Qr = P; *Qc = 1; }
}

static void rank_flat(const struct pat *p, int P, int rank, int64_t rows, int64_t cols,
                      int64_t R, struct flat *f)
{
    int Qr, Qc;
    memset(f, 0, sizeof(*f));
    if (p->dr == D_ALL) {
        flat_add(f, 0, rows * cols * R);
        return;
    }
    if (p->dr == D_NONE && p->dc == D_NONE) {   /* rn: rank 0 has it all */
        if (rank == 0)
            flat_add(f, 0, rows * cols * R);
        return;
    }
    grid_of(P, p->grid, &Qr, &Qc);
    pattern_flat(p->dr, p->dc, rows, cols, Qr, Qc, rank / Qc, rank % Qc, R, f);
}

/* same residues mod 12 so that the small and large shapes divide alike */
static int64_t scale(int64_t n, int64_t k)
{
    return n * k + (((n - n * k) % 12) + 12) % 12;
}

/* pattern descriptors evaluate exactly (small sizes, full model) */
START_TEST(test_patterns_model)
{
    static const int Ps[] = { 4, 3, 6 };
    static const int64_t shapes[][2] = { { 1, 48 }, { 1, 47 }, { 12, 12 }, { 7, 11 }, { 5, 13 } };
    rng_seed(3);
    for (size_t pi = 0; pi < sizeof(pats) / sizeof(pats[0]); pi++)
        for (size_t k = 0; k < 3; k++)
            for (size_t sh = 0; sh < 5; sh++) {
                const struct pat *p = &pats[pi];
                int64_t rows = shapes[sh][0], cols = shapes[sh][1], R = 1 + (int64_t)rndn(3);
                if (p->twod != (rows > 1))
                    continue;
                for (int rank = 0; rank < Ps[k]; rank++) {
                    struct flat f;
                    struct ddio_desc d;
                    rank_flat(p, Ps[k], rank, rows, cols, R, &f);
                    if (flat_bytes(&f) == 0) {
                        ck_assert_ptr_null(ddio_node_from_flat(f.n, f.off, f.len));
                        flat_free(&f);
                        continue;
                    }
                    d.root = ddio_node_from_flat(f.n, f.off, f.len);
                    ck_assert_ptr_nonnull(d.root);
                    assert_tree_is_flat(d.root, &f);
                    /* the file holds `reps` copies of the array: tiled view */
                    d.disp = (int64_t)rndn(4) * 16;
                    d.extent = rows * cols * R;
                    d.start = rndn(d.root->size * 2);
                    d.length = 1 + rndn(d.root->size * 2);
                    check_desc(&d, &f);
                    FA_INT_EQ(ddio_desc_check_monotone(&d), 0);
                    ddio_desc_free(&d);
                    flat_free(&f);
                }
            }
}
END_TEST

/* Encoded sizes: < 1 KiB and independent of the file size (1000x apart). */
static void pattern_sizes(int P, int64_t R, const int64_t shape1[2], const int64_t shape2[2],
                          bool print)
{
    for (size_t pi = 0; pi < sizeof(pats) / sizeof(pats[0]); pi++) {
        const struct pat *p = &pats[pi];
        const int64_t *sh = p->twod ? shape2 : shape1;
        size_t maxsz = 0;
        for (int rank = 0; rank < P; rank++) {
            size_t sz[2];
            for (int big = 0; big < 2; big++) {
                int64_t rows = big ? (p->twod ? scale(sh[0], 25) : 1) : sh[0];
                int64_t cols = big ? scale(sh[1], p->twod ? 40 : 1000) : sh[1];
                struct flat f;
                struct ddio_desc d = { 0 };
                rank_flat(p, P, rank, rows, cols, R, &f);
                d.root = ddio_node_from_flat(f.n, f.off, f.len);
                if (!d.root) {
                    FA_UINT_EQ(flat_bytes(&f), 0);
                    sz[big] = 0;
                    flat_free(&f);
                    continue;
                }
                FA_UINT_EQ(d.root->size, flat_bytes(&f));
                d.extent = rows * cols * R;
                d.length = d.root->size;
                FA_INT_EQ(ddio_desc_check_monotone(&d), 0);
                /* spot checks against the flat list */
                for (int k = 0; k < 64; k++) {
                    size_t i = rndn(f.n);
                    uint64_t before = 0;
                    if (f.n < 100000)
                        for (size_t j = 0; j < i; j++)
                            before += (uint64_t)f.len[j];
                    else
                        continue;
                    FA_INT_EQ(ddio_desc_addr(&d, before), f.off[i]);
                    FA_UINT_EQ(ddio_desc_stream_before(&d, f.off[i]), before);
                }
                sz[big] = enc_size(&d);
                ck_assert_uint_lt(sz[big], 1024);
                ddio_desc_free(&d);
                flat_free(&f);
            }
            if (sz[0] != sz[1])
                fprintf(stderr, "size mismatch %s P=%d R=%ld rank %d: %zu vs %zu\n", p->name, P,
                        (long)R, rank, sz[0], sz[1]);
            FA_UINT_EQ(sz[0], sz[1]);
            maxsz = sz[0] > maxsz ? sz[0] : maxsz;
        }
        if (print)
            fprintf(stderr, "  %-4s P=%d R=%-5ld %ldx%ld: max %zu B\n", p->name, P, (long)R,
                    (long)sh[0], (long)sh[1], maxsz);
    }
}

START_TEST(test_pattern_sizes)
{
    static const int Ps[] = { 4, 3, 6 };
    /* ~64 KiB / ~64 MiB of 8-byte records; divisible and not */
    static const int64_t s8_1[][2] = { { 1, 8192 }, { 1, 8189 } };
    static const int64_t s8_2[][2] = { { 64, 128 }, { 61, 131 } };
    /* 8 KiB records: 256 / 256000 records */
    static const int64_t sk_1[][2] = { { 1, 256 }, { 1, 253 } };
    static const int64_t sk_2[][2] = { { 16, 16 }, { 17, 31 } };
    bool print = getenv("DDIO_DESC_SIZES") != NULL;
    rng_seed(4);
    for (int k = 0; k < 3; k++)
        for (int v = 0; v < 2; v++) {
            pattern_sizes(Ps[k], 8, s8_1[v], s8_2[v], print);
            pattern_sizes(Ps[k], 8192, sk_1[v], sk_2[v], print);
        }
}
END_TEST

/* ---- from_flat specifics -------------------------------------------------- */

START_TEST(test_from_flat_basic)
{
    int64_t off[8] = { 0 }, len[8] = { 0 };
    struct ddio_node *t;

    ck_assert_ptr_null(ddio_node_from_flat(0, NULL, NULL));
    ck_assert_ptr_null(ddio_node_from_flat(2, off, len));   /* only empty pieces */
    len[0] = -1;
    ck_assert_ptr_null(ddio_node_from_flat(1, off, len));   /* negative length */

    off[0] = 0, len[0] = 10;
    t = ddio_node_from_flat(1, off, len);
    FA_INT_EQ(t->kind, DDIO_N_LEAF);
    FA_UINT_EQ(t->u.leaf.len, 10);
    ddio_node_free(t);

    off[0] = 100;   /* shifted: a LIST of one */
    t = ddio_node_from_flat(1, off, len);
    FA_INT_EQ(t->kind, DDIO_N_LIST);
    FA_INT_EQ(t->u.list.disp[0], 100);
    ddio_node_free(t);

    /* adjacent pieces merge, zero-length pieces vanish */
    int64_t o2[] = { 0, 4, 4, 8, 20, 24 }, l2[] = { 4, 0, 4, 4, 4, 8 };
    t = ddio_node_from_flat(6, o2, l2);
    FA_INT_EQ(t->kind, DDIO_N_VEC);
    FA_UINT_EQ(t->u.vec.count, 2);
    FA_INT_EQ(t->u.vec.stride, 20);
    FA_UINT_EQ(t->u.vec.child->u.leaf.len, 12);
    ddio_node_free(t);

    /* ordering is kept even when not monotone */
    int64_t o3[] = { 50, 0, 100 }, l3[] = { 5, 5, 5 };
    struct flat f3 = { .off = o3, .len = l3, .n = 3 };
    t = ddio_node_from_flat(3, o3, l3);
    assert_tree_is_flat(t, &f3);
    ddio_node_free(t);
}
END_TEST

START_TEST(test_from_flat_groups)
{
    /* A A B repeated at period 30, then a tail: VEC of a (folded) group */
    struct flat f = { 0 };
    struct ddio_node *t;
    struct ddio_desc d = { 0 };
    for (int i = 0; i < 1000; i++) {
        flat_add(&f, i * 30, 2);
        flat_add(&f, i * 30 + 4, 2);
        flat_add(&f, i * 30 + 10, 7);
    }
    flat_add(&f, 30000, 1);
    t = ddio_node_from_flat(f.n, f.off, f.len);
    assert_tree_is_flat(t, &f);
    d.root = t;
    d.length = t->size;
    ck_assert_uint_le(enc_size(&d), 135);
    ddio_node_free(t);
    flat_free(&f);

    /* rbc with an odd row: pieces of two lengths alternate irregularly */
    int64_t rows = 50, cols = 9;
    pattern_flat(D_BLOCK, D_CYCLIC, rows, cols, 1, 2, 0, 0, 8, &f);
    t = ddio_node_from_flat(f.n, f.off, f.len);
    assert_tree_is_flat(t, &f);
    d.root = t;
    ck_assert_uint_lt(enc_size(&d), 256);
    ddio_node_free(t);
    flat_free(&f);

    /* deep nesting never exceeds the decoder's depth bound */
    for (int64_t i = 0; i < (1 << 17); i++) {
        int64_t o = 0;
        for (int b = 0; b < 17; b++)
            if (i & (1 << b))
                o += (int64_t)3 << (2 * b);
        flat_add(&f, o, 1);
    }
    t = ddio_node_from_flat(f.n, f.off, f.len);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_le(tree_depth(t), DDIO_DESC_MAX_DEPTH);
    assert_tree_is_flat(t, &f);
    d.root = t;
    d.length = t->size;
    check_roundtrip(&d);
    ddio_node_free(t);
    flat_free(&f);
}
END_TEST

/* A darray-like 8-byte CYCLIC list with millions of pieces compresses fast. */
START_TEST(test_from_flat_large)
{
    size_t n = 4u << 20;
    int64_t *off = malloc(n * sizeof(int64_t)), *len = malloc(n * sizeof(int64_t));
    struct ddio_node *t;
    double t0;
    FA_TRUE(off && len);
    for (size_t i = 0; i < n; i++) {
        off[i] = (int64_t)(i * 4 + 1) * 8;
        len[i] = 8;
    }
    t0 = now();
    t = ddio_node_from_flat(n, off, len);
    t0 = now() - t0;
    ck_assert_ptr_nonnull(t);
    FA_INT_EQ(t->kind, DDIO_N_LIST);
    FA_INT_EQ(t->u.list.child[0]->kind, DDIO_N_VEC);
    FA_UINT_EQ(t->size, n * 8);
    if (getenv("DDIO_DESC_SIZES"))
        fprintf(stderr, "  from_flat: %zu pieces in %.3f s\n", n, t0);
    FA_TRUE(t0 < 2.0);
    ddio_node_free(t);

    /* irregular input (a LIST stays) is still linear */
    rng_seed(6);
    for (size_t i = 0, o = 0; i < n; i++, o += 8 + 8 * rndn(4))
        off[i] = (int64_t)o;
    t0 = now();
    t = ddio_node_from_flat(n, off, len);
    t0 = now() - t0;
    ck_assert_ptr_nonnull(t);
    FA_UINT_EQ(t->size, n * 8);
    if (getenv("DDIO_DESC_SIZES"))
        fprintf(stderr, "  from_flat (irregular): %zu pieces in %.3f s\n", n, t0);
    FA_TRUE(t0 < 10.0);
    ddio_node_free(t);
    free(off);
    free(len);
}
END_TEST

/* ---- construction ------------------------------------------------------------ */

START_TEST(test_construct)
{
    struct ddio_node *l = ddio_node_leaf(8), *v, *c, *x;
    int64_t disp[2] = { -16, 100 };
    struct ddio_node *ch[2];

    FA_INT_EQ(ddio_node_finish(l), 0);
    FA_UINT_EQ(l->size, 8);
    FA_INT_EQ(l->hi, 8);
    v = ddio_node_vec(3, -32, l);
    FA_INT_EQ(ddio_node_finish(v), 0);
    FA_UINT_EQ(v->size, 24);
    FA_INT_EQ(v->lo, -64);
    FA_INT_EQ(v->hi, 8);
    ch[0] = v;
    ch[1] = ddio_node_leaf(4);
    x = ddio_node_list(2, disp, ch);
    FA_INT_EQ(ddio_node_finish(x), 0);
    FA_UINT_EQ(x->size, 28);
    FA_INT_EQ(x->lo, -80);
    FA_INT_EQ(x->hi, 104);
    FA_UINT_EQ(x->u.list.before[1], 24);

    c = ddio_node_clone(x);
    FA_TRUE(ddio_node_equal(c, x));
    c->u.list.child[0]->u.vec.stride = 32;
    FA_TRUE(!ddio_node_equal(c, x));
    FA_INT_EQ(ddio_node_finish(c), 0);
    FA_INT_EQ(c->lo, -16);
    ddio_node_free(c);
    ddio_node_free(x);

    /* zero sizes and overflow are rejected */
    x = ddio_node_leaf(0);
    FA_INT_EQ(ddio_node_finish(x), -EINVAL);
    ddio_node_free(x);
    x = ddio_node_vec(0, 8, ddio_node_leaf(8));
    FA_INT_EQ(ddio_node_finish(x), -EINVAL);
    ddio_node_free(x);
    x = ddio_node_vec(1ull << 62, 8, ddio_node_leaf(8));
    FA_INT_EQ(ddio_node_finish(x), -EINVAL);
    ddio_node_free(x);
    x = ddio_node_vec(4, INT64_MAX / 2, ddio_node_leaf(1));
    FA_INT_EQ(ddio_node_finish(x), -EINVAL);
    ddio_node_free(x);
    ch[0] = ddio_node_leaf(1);
    disp[0] = INT64_MAX;
    x = ddio_node_list(1, disp, ch);
    FA_INT_EQ(ddio_node_finish(x), -EINVAL);
    ddio_node_free(x);
    ck_assert_ptr_null(ddio_node_vec(2, 2, NULL));   /* NULL propagates */
    ck_assert_ptr_null(ddio_node_list(0, disp, ch));

    /* an empty descriptor: every evaluator copes without a root */
    struct ddio_desc d = { 0 };
    int64_t a, b;
    FA_INT_EQ(ddio_desc_check_monotone(&d), 0);
    ddio_desc_bounds(&d, &a, &b);
    FA_INT_EQ(a, 0);
    FA_INT_EQ(b, 0);
    FA_INT_EQ(ddio_desc_next(&d, 0), -1);
    FA_INT_EQ(ddio_desc_walk_stream(&d, 0, 10, NULL, NULL), 0);
    FA_INT_EQ(ddio_desc_walk_file(&d, 0, 10, NULL, NULL), 0);
    FA_UINT_EQ(ddio_desc_encoded_size(&d), 41);
}
END_TEST

/* ---- decoder robustness ----------------------------------------------------- */

static void put_hdr(struct ddio_wbuf *w, uint64_t length)
{
    ddio_put_u64(w, 0);
    ddio_put_u64(w, 0);
    ddio_put_u64(w, 0);
    ddio_put_u64(w, length);
}

static int dec(const struct ddio_wbuf *w, uint32_t max_nodes)
{
    struct ddio_desc d;
    int rc = ddio_desc_decode(w->p, w->len, max_nodes, &d);
    if (rc == 0)
        ddio_desc_free(&d);
    else
        ck_assert_ptr_null(d.root);
    return rc;
}

/* an encoded one-byte descriptor nested `depth` levels deep (VECs of 1) */
static void put_deep(struct ddio_wbuf *w, int depth)
{
    ddio_wbuf_init(w);
    put_hdr(w, 1);
    for (int i = 1; i < depth; i++) {
        ddio_put_u8(w, DDIO_N_VEC);
        ddio_put_u64(w, 1);
        ddio_put_u64(w, 0);
    }
    ddio_put_u8(w, DDIO_N_LEAF);
    ddio_put_u64(w, 1);
}

/* a server's tighter limits: well-formed but too deep or too big is E2BIG */
/* the server peeks at a request's length to pick the thread that runs it */
START_TEST(test_peek_length)
{
    struct ddio_desc d = {.disp = 4096,.extent = 1 << 20,.start = 0,.length = 3u << 20,
        .root = ddio_node_leaf(1 << 20)
    };
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_desc_encode(&w, &d);
    FA_UINT_EQ(ddio_desc_peek_length(w.p, w.len), 3u << 20);
    FA_UINT_EQ(ddio_desc_peek_length(w.p, 32), 3u << 20);
    FA_UINT_EQ(ddio_desc_peek_length(w.p, 31), UINT64_MAX);
    FA_UINT_EQ(ddio_desc_peek_length(NULL, 0), UINT64_MAX);
    ddio_wbuf_free(&w);
    ddio_node_free(d.root);
}
END_TEST

START_TEST(test_decode_limits)
{
    struct ddio_wbuf w;
    struct ddio_desc d;
    for (int depth = 1; depth <= 6; depth++) {
        put_deep(&w, depth);
        int rc = ddio_desc_decode_lim(w.p, w.len, 100, 4, &d);
        FA_INT_EQ(rc, depth <= 4 ? 0 : -E2BIG);
        if (rc == 0)
            ddio_desc_free(&d);
        else
            ck_assert_ptr_null(d.root);
        /* nodes: depth nodes fit in a budget of depth, not depth - 1 */
        rc = ddio_desc_decode_lim(w.p, w.len, (uint32_t)depth, 16, &d);
        FA_INT_EQ(rc, 0);
        ddio_desc_free(&d);
        if (depth > 1)
            FA_INT_EQ(ddio_desc_decode_lim(w.p, w.len, (uint32_t)depth - 1, 16, &d),
                             -E2BIG);
        /* malformed within the limits stays EPROTO */
        if (depth <= 4)
            FA_INT_EQ(ddio_desc_decode_lim(w.p, w.len - 1, 100, 4, &d), -EPROTO);
        ddio_wbuf_free(&w);
    }
}
END_TEST

START_TEST(test_decode_bombs)
{
    struct ddio_wbuf w;

    /* depth: 16 levels pass, 17 fail, a million fail at once */
    for (int depth = 15; depth <= 17; depth++) {
        put_deep(&w, depth);
        FA_INT_EQ(dec(&w, 100), depth <= DDIO_DESC_MAX_DEPTH ? 0 : -EPROTO);
        ddio_wbuf_free(&w);
    }
    ddio_wbuf_init(&w);
    put_hdr(&w, 1);
    for (int i = 0; i < 1000000; i++) {
        ddio_put_u8(&w, DDIO_N_LIST);
        ddio_put_u32(&w, 1);
        ddio_put_u64(&w, 0);
    }
    FA_INT_EQ(dec(&w, DDIO_DESC_MAX_NODES), -EPROTO);
    ddio_wbuf_free(&w);

    /* counts: a huge LIST with no bytes behind it, over budget, over the cap */
    uint32_t ns[] = { 0xFFFFFFFFu, DDIO_DESC_MAX_NODES + 1, 1000, 0 };
    for (int k = 0; k < 4; k++) {
        ddio_wbuf_init(&w);
        put_hdr(&w, 1);
        ddio_put_u8(&w, DDIO_N_LIST);
        ddio_put_u32(&w, ns[k]);
        for (uint32_t j = 0; j < 1000 && j < ns[k]; j++) {
            ddio_put_u64(&w, (uint64_t)j * 2);
            ddio_put_u8(&w, DDIO_N_LEAF);
            ddio_put_u64(&w, 1);
        }
        FA_INT_EQ(dec(&w, 100000), ns[k] == 1000 ? 0 : -EPROTO);
        if (ns[k] == 1000) {
            FA_INT_EQ(dec(&w, 2000), -EPROTO);   /* 1 + 1000 + 1000 */
            FA_INT_EQ(dec(&w, 2001), 0);
        }
        ddio_wbuf_free(&w);
    }

    /* bad values: zero len, zero count, unknown kind, size overflow,
     * address overflow, trailing byte */
    struct { uint8_t kind; uint64_t a, b; uint64_t disp; bool trail; } bad[] = {
        { DDIO_N_LEAF, 0, 0, 0, false },     { DDIO_N_VEC, 0, 8, 0, false },
        { 0, 1, 0, 0, false },                { 4, 1, 0, 0, false },
        { DDIO_N_VEC, 1ull << 62, 8, 0, false }, { DDIO_N_VEC, 3, 1ull << 62, 0, false },
        { DDIO_N_LEAF, 8, 0, (uint64_t)INT64_MAX - 4, false }, { DDIO_N_LEAF, 8, 0, 0, true },
        { DDIO_N_LEAF, (uint64_t)INT64_MAX + 1, 0, 0, false },
    };
    for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
        ddio_wbuf_init(&w);
        ddio_put_u64(&w, bad[k].disp);
        ddio_put_u64(&w, 0);
        ddio_put_u64(&w, 0);
        ddio_put_u64(&w, 1);
        ddio_put_u8(&w, bad[k].kind);
        if (bad[k].kind == DDIO_N_VEC) {
            ddio_put_u64(&w, bad[k].a);
            ddio_put_u64(&w, bad[k].b);
            ddio_put_u8(&w, DDIO_N_LEAF);
            ddio_put_u64(&w, 4);
        } else {
            ddio_put_u64(&w, bad[k].a);
        }
        if (bad[k].trail)
            ddio_put_u8(&w, 0);
        FA_INT_EQ(dec(&w, 100), -EPROTO);
        ddio_wbuf_free(&w);
    }

    /* stream end overflowing the last tile's address */
    ddio_wbuf_init(&w);
    ddio_put_u64(&w, 0);
    ddio_put_u64(&w, 1ull << 40);   /* extent */
    ddio_put_u64(&w, 0);
    ddio_put_u64(&w, 1ull << 40);   /* length: 2^40 tiles of 1 byte */
    ddio_put_u8(&w, DDIO_N_LEAF);
    ddio_put_u64(&w, 1);
    FA_INT_EQ(dec(&w, 100), -EPROTO);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(test_decode_garbage)
{
    uint8_t buf[256];
    rng_seed(5);
    for (int it = 0; it < 200000; it++) {
        size_t n = rndn(sizeof(buf));
        struct ddio_desc d;
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)rnd();
        /* make the tree part plausible often enough to go deep */
        for (size_t i = 32; i < n; i++)
            if (rndn(3) == 0)
                buf[i] = (uint8_t)(1 + rndn(3));
            else if (rndn(2) == 0)
                buf[i] = 0;
        if (ddio_desc_decode(buf, n, 64, &d) == 0) {
            FA_INT_EQ(ddio_node_finish(d.root), 0);
            FA_UINT_EQ(ddio_desc_encoded_size(&d), n);
            ddio_desc_free(&d);
        } else {
            ck_assert_ptr_null(d.root);
        }
    }
    /* mutations of valid encodings: accepted ones re-encode identically */
    for (int it = 0; it < 3000; it++) {
        struct ddio_node *t = gen_tree(1 + (int)rndn(4), rndn(2));
        struct ddio_desc d = { .root = t, .length = t ? t->size : 0 }, x;
        struct ddio_wbuf w, w2;
        ck_assert_ptr_nonnull(t);
        ddio_wbuf_init(&w);
        ddio_desc_encode(&w, &d);
        for (int m = 0; m < 20; m++) {
            size_t pos = rndn(w.len);
            uint8_t save = w.p[pos];
            w.p[pos] ^= (uint8_t)(1u << rndn(8));
            if (ddio_desc_decode(w.p, w.len, DDIO_DESC_MAX_NODES, &x) == 0) {
                ddio_wbuf_init(&w2);
                ddio_desc_encode(&w2, &x);
                FA_UINT_EQ(w2.len, w.len);
                FA_TRUE(!memcmp(w2.p, w.p, w.len));
                ddio_wbuf_free(&w2);
                ddio_desc_free(&x);
            }
            w.p[pos] = save;
        }
        ddio_wbuf_free(&w);
        ddio_node_free(t);
    }
}
END_TEST

/* ---- overlapping memory pieces (reads placed in stream order) ------------- */

/* a memory descriptor over the flat pieces off/len, count tiles at extent */
static int overlaps_of(int n, const int64_t *off, const int64_t *len, int64_t extent,
                       uint64_t count)
{
    struct ddio_desc d = { 0 };
    int64_t lo = INT64_MAX;
    for (int i = 0; i < n; i++)
        lo = len[i] && off[i] < lo ? off[i] : lo;
    d.root = ddio_node_from_flat_at((uint64_t)n, off, len, lo);
    ck_assert_ptr_nonnull(d.root);
    d.disp = lo;
    d.extent = extent;
    d.length = count * d.root->size;
    int r = ddio_desc_overlaps(&d);
    ddio_desc_free(&d);
    return r;
}

START_TEST(test_overlaps)
{
    /* t_prop seed 768674 case 1's read type as ROMIO flattens it: a struct
     * of a contiguous 12-byte field taken at its displacement 80 (its true
     * lb -64 dropped) and two ints at 0, extent 28: tile k's field lands
     * on tile k+3's ints */
    int64_t o1[] = { 80, 0 }, l1[] = { 12, 8 };
    FA_INT_EQ(overlaps_of(2, o1, l1, 28, 12), 1);
    FA_INT_EQ(overlaps_of(2, o1, l1, 28, 1), 0);     /* one tile: apart */
    FA_INT_EQ(overlaps_of(2, o1, l1, 92, 12), 0);    /* tiles apart */
    FA_INT_EQ(overlaps_of(2, o1, l1, -92, 12), 0);
    /* inside one tile, in any order; touching is not overlapping */
    int64_t o2[] = { 0, 4 }, l2[] = { 8, 8 };
    FA_INT_EQ(overlaps_of(2, o2, l2, 64, 1), 1);
    int64_t o3[] = { 8, 0, 16 }, l3[] = { 8, 8, 8 };
    FA_INT_EQ(overlaps_of(3, o3, l3, 24, 5), 0);
    int64_t o4[] = { 32, 0, 8, 30 }, l4[] = { 4, 8, 8, 4 };
    FA_INT_EQ(overlaps_of(4, o4, l4, 64, 1), 1);
    /* zero extent: every tile on the same bytes */
    int64_t o5[] = { 0 }, l5[] = { 8 };
    FA_INT_EQ(overlaps_of(1, o5, l5, 0, 2), 1);
    FA_INT_EQ(overlaps_of(1, o5, l5, 0, 1), 0);
    /* random single tiles against a byte map */
    rng_s = 0x0ddba11;
    for (int it = 0; it < 2000; it++) {
        int n = 1 + (int)rndn(8);
        int64_t off[8], len[8];
        uint8_t used[128] = { 0 };
        int want = 0;
        for (int i = 0; i < n; i++) {
            len[i] = 1 + (int64_t)rndn(12);
            off[i] = (int64_t)rndn(128 - 12) - 40;
            for (int64_t b = off[i]; b < off[i] + len[i]; b++)
                want |= used[b + 40]++ > 0;
        }
        FA_INT_EQ(overlaps_of(n, off, len, 256, 1), want);
    }
}
END_TEST

/* ---- gather speed (informational, asserts only correctness) --------------- */

START_TEST(test_gather_speed)
{
    /* one 1 MiB server block of an 8-byte cyclic view over 4 ranks */
    struct ddio_desc d = { 0 };
    size_t blk = 1u << 20, n = blk / 32;
    uint8_t *buf = malloc(blk), *pk = malloc(blk / 4);
    double t0;
    int reps = 200;
    d.root = ddio_node_vec(1u << 30, 32, ddio_node_leaf(8));
    FA_INT_EQ(ddio_node_finish(d.root), 0);
    d.disp = 8;
    d.extent = (int64_t)d.root->hi;
    d.length = d.root->size;
    for (size_t i = 0; i < blk; i++)
        buf[i] = (uint8_t)i;
    t0 = now();
    for (int r = 0; r < reps; r++)
        ddio_desc_gather(&d, buf, 0, 0, n * 8 - 4, pk);
    t0 = now() - t0;
    for (size_t i = 0; i < n * 8 - 4; i++)
        FA_UINT_EQ(pk[i], buf[8 + (i / 8) * 32 + i % 8]);
    if (getenv("DDIO_DESC_SIZES"))
        fprintf(stderr, "  gather 8-byte pieces: %.0f MB/s packed\n",
                reps * (double)(n * 8) / t0 / 1e6);
    ddio_desc_free(&d);
    free(buf);
    free(pk);
}
END_TEST

static Suite *desc_suite(void)
{
    Suite *s = suite_create("desc");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_construct);
    tcase_add_test(tc, test_peek_length);
    tcase_add_test(tc, test_from_flat_basic);
    tcase_add_test(tc, test_from_flat_groups);
    tcase_add_test(tc, test_random_trees);
    tcase_add_test(tc, test_strided_leaves);
    tcase_add_test(tc, test_random_types);
    tcase_add_test(tc, test_patterns_model);
    tcase_add_test(tc, test_pattern_sizes);
    tcase_add_test(tc, test_from_flat_large);
    tcase_add_test(tc, test_decode_bombs);
    tcase_add_test(tc, test_decode_limits);
    tcase_add_test(tc, test_decode_garbage);
    tcase_add_test(tc, test_gather_speed);
    tcase_add_test(tc, test_overlaps);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int failed = check_run(desc_suite(), 0);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
