/* Distribution descriptors: construction, compression of flattened types,
 * wire encoding, file-side evaluation and walkers. See ddio_desc.h.
 *
 * Invariants every function below relies on (established by
 * ddio_node_finish / the constructors / the decoder):
 *   - every node has size > 0 and size <= INT64_MAX;
 *   - lo < hi, and every relative offset inside a node fits in int64;
 *   - a VEC's child and a LIST's children are valid nodes;
 *   - LIST before[j] = data bytes of children 0..j-1 (strictly increasing).
 * Descriptor-level arithmetic (tile origins) is done in 128 bits where the
 * inputs are not known to be validated, so no evaluator can overflow.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_desc.h"

typedef __int128 i128;

/* ========================================================================== */
/* construction                                                               */
/* ========================================================================== */

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Derive size/lo/hi/before of one node from its (already derived) children. */
static int node_derive(struct ddio_node *n)
{
    switch (n->kind) {
    case DDIO_N_LEAF:
        if (n->u.leaf.len == 0 || n->u.leaf.len > INT64_MAX)
            return -EINVAL;
        n->size = n->u.leaf.len;
        n->lo = 0;
        n->hi = (int64_t)n->u.leaf.len;
        return 0;
    case DDIO_N_VEC: {
        const struct ddio_node *c = n->u.vec.child;
        uint64_t size;
        int64_t span, lo, hi;
        if (!c || n->u.vec.count == 0 || n->u.vec.count > INT64_MAX)
            return -EINVAL;
        if (__builtin_mul_overflow(c->size, n->u.vec.count, &size) || size > INT64_MAX)
            return -EINVAL;
        if (__builtin_mul_overflow((int64_t)(n->u.vec.count - 1), n->u.vec.stride, &span))
            return -EINVAL;
        if (__builtin_add_overflow(c->lo, min64(0, span), &lo) ||
            __builtin_add_overflow(c->hi, max64(0, span), &hi))
            return -EINVAL;
        n->size = size;
        n->lo = lo;
        n->hi = hi;
        return 0;
    }
    case DDIO_N_LIST: {
        uint64_t size = 0;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        if (n->u.list.n == 0 || !n->u.list.disp || !n->u.list.child || !n->u.list.before)
            return -EINVAL;
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            const struct ddio_node *c = n->u.list.child[j];
            int64_t clo, chi;
            if (!c)
                return -EINVAL;
            n->u.list.before[j] = size;
            if (__builtin_add_overflow(size, c->size, &size) || size > INT64_MAX)
                return -EINVAL;
            if (__builtin_add_overflow(n->u.list.disp[j], c->lo, &clo) ||
                __builtin_add_overflow(n->u.list.disp[j], c->hi, &chi))
                return -EINVAL;
            lo = min64(lo, clo);
            hi = max64(hi, chi);
        }
        n->size = size;
        n->lo = lo;
        n->hi = hi;
        return 0;
    }
    default:
        return -EINVAL;
    }
}

static struct ddio_node *node_alloc(uint8_t kind)
{
    struct ddio_node *n = calloc(1, sizeof(*n));
    if (n)
        n->kind = kind;
    return n;
}

struct ddio_node *ddio_node_leaf(uint64_t len)
{
    struct ddio_node *n = node_alloc(DDIO_N_LEAF);
    if (!n)
        return NULL;
    n->u.leaf.len = len;
    (void)node_derive(n);   /* invalid values are reported by ddio_node_finish */
    return n;
}

/* Takes ownership of `child`, also on failure, so calls can be nested:
 * ddio_node_vec(n, s, ddio_node_leaf(8)) leaks nothing and a NULL child
 * propagates as NULL. */
struct ddio_node *ddio_node_vec(uint64_t count, int64_t stride, struct ddio_node *child)
{
    struct ddio_node *n;
    if (!child)
        return NULL;
    n = node_alloc(DDIO_N_VEC);
    if (!n) {
        ddio_node_free(child);
        return NULL;
    }
    n->u.vec.count = count;
    n->u.vec.stride = stride;
    n->u.vec.child = child;
    (void)node_derive(n);
    return n;
}

/* Copies disp[] and the child pointer array; takes ownership of the children
 * (also on failure, like ddio_node_vec). */
struct ddio_node *ddio_node_list(uint32_t n, const int64_t *disp, struct ddio_node **child)
{
    struct ddio_node *x = NULL;
    bool ok = n > 0 && disp && child;
    for (uint32_t j = 0; ok && j < n; j++)
        ok = child[j] != NULL;
    if (ok)
        x = node_alloc(DDIO_N_LIST);
    if (x) {
        x->u.list.n = n;
        x->u.list.disp = malloc(n * sizeof(int64_t));
        x->u.list.child = malloc(n * sizeof(struct ddio_node *));
        x->u.list.before = malloc(n * sizeof(uint64_t));
        if (x->u.list.disp && x->u.list.child && x->u.list.before) {
            memcpy(x->u.list.disp, disp, n * sizeof(int64_t));
            memcpy(x->u.list.child, child, n * sizeof(struct ddio_node *));
            (void)node_derive(x);
            return x;
        }
        free(x->u.list.disp);
        free(x->u.list.child);
        free(x->u.list.before);
        free(x);
    }
    for (uint32_t j = 0; child && j < n; j++)
        ddio_node_free(child[j]);
    return NULL;
}

void ddio_node_free(struct ddio_node *n)
{
    if (!n)
        return;
    if (n->kind == DDIO_N_VEC) {
        ddio_node_free(n->u.vec.child);
    } else if (n->kind == DDIO_N_LIST) {
        for (uint32_t j = 0; n->u.list.child && j < n->u.list.n; j++)
            ddio_node_free(n->u.list.child[j]);
        free(n->u.list.disp);
        free(n->u.list.child);
        free(n->u.list.before);
    }
    free(n);
}

int ddio_node_finish(struct ddio_node *n)
{
    if (!n)
        return -EINVAL;
    if (n->kind == DDIO_N_VEC) {
        int rc = ddio_node_finish(n->u.vec.child);
        if (rc)
            return rc;
    } else if (n->kind == DDIO_N_LIST) {
        if (!n->u.list.child)
            return -EINVAL;
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            int rc = ddio_node_finish(n->u.list.child[j]);
            if (rc)
                return rc;
        }
    }
    return node_derive(n);
}

struct ddio_node *ddio_node_clone(const struct ddio_node *n)
{
    if (!n)
        return NULL;
    switch (n->kind) {
    case DDIO_N_LEAF:
        return ddio_node_leaf(n->u.leaf.len);
    case DDIO_N_VEC:
        return ddio_node_vec(n->u.vec.count, n->u.vec.stride, ddio_node_clone(n->u.vec.child));
    case DDIO_N_LIST: {
        struct ddio_node **ch = calloc(n->u.list.n, sizeof(*ch));
        struct ddio_node *x;
        if (!ch)
            return NULL;
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            ch[j] = ddio_node_clone(n->u.list.child[j]);
            if (!ch[j]) {
                for (uint32_t i = 0; i < j; i++)
                    ddio_node_free(ch[i]);
                free(ch);
                return NULL;
            }
        }
        x = ddio_node_list(n->u.list.n, n->u.list.disp, ch);
        free(ch);
        return x;
    }
    default:
        return NULL;
    }
}

int ddio_node_equal(const struct ddio_node *a, const struct ddio_node *b)
{
    if (a == b)
        return 1;
    if (!a || !b || a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case DDIO_N_LEAF:
        return a->u.leaf.len == b->u.leaf.len;
    case DDIO_N_VEC:
        return a->u.vec.count == b->u.vec.count && a->u.vec.stride == b->u.vec.stride &&
               ddio_node_equal(a->u.vec.child, b->u.vec.child);
    case DDIO_N_LIST:
        if (a->u.list.n != b->u.list.n)
            return 0;
        for (uint32_t j = 0; j < a->u.list.n; j++)
            if (a->u.list.disp[j] != b->u.list.disp[j] ||
                !ddio_node_equal(a->u.list.child[j], b->u.list.child[j]))
                return 0;
        return 1;
    default:
        return 0;
    }
}

void ddio_desc_free(struct ddio_desc *d)
{
    if (!d)
        return;
    ddio_node_free(d->root);
    d->root = NULL;
}

/* ========================================================================== */
/* compression of flattened types                                             */
/* ========================================================================== */
/*
 * The flattened list can have tens of millions of pieces, so the work is done
 * on a hash-consed DAG of small temporary nodes ("tn"), where two equal
 * subtrees always have the same id and item comparison is an integer compare.
 *
 * Stage A streams over the input once: drops empty pieces, merges contiguous
 * ones and folds runs of equal-length pieces at a constant stride into VECs,
 * so regular inputs never need an item per piece.
 * Stage B repeatedly folds the (offset, id) item array: at each position it
 * tries groups of k = 1..FF_MAX_GROUP consecutive items that repeat at a
 * constant period and takes the k covering the most items; a group of k > 1
 * becomes a (itself folded) LIST, its repeats a VEC. Cost per pass is
 * O(items * k^2) in the worst case, and the item count shrinks every pass.
 * Finally the DAG is expanded into a ddio_node tree.
 */

#define FF_MAX_GROUP  8
#define FF_MAX_PASSES 64

struct tn {
    uint8_t  kind;
    uint8_t  depth;      /* levels including this one (leaf = 1) */
    uint32_t n;          /* LIST entries */
    uint32_t ref;        /* VEC child id / LIST first entry in the pool */
    uint64_t a;          /* LEAF len / VEC count */
    int64_t  stride;     /* VEC */
};

struct ff {
    struct tn *tn;
    size_t ntn, captn;
    int64_t *edisp;      /* LIST entry pool */
    uint32_t *echild;
    size_t ne, cape;
    uint32_t *ht;        /* open addressing: id + 1, 0 = empty */
    size_t htcap;
    int64_t *ioff;       /* items */
    uint32_t *iid;
    size_t ni, capi;
    int err;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t tn_hash(const struct tn *t, const int64_t *ed, const uint32_t *ec)
{
    uint64_t h = mix(t->kind, t->a);
    h = mix(h, (uint64_t)t->stride);
    if (t->kind == DDIO_N_VEC)
        h = mix(h, t->ref);
    for (uint32_t j = 0; j < t->n; j++)
        h = mix(mix(h, (uint64_t)ed[j]), ec[j]);
    return h ^ (h >> 29);
}

static bool tn_same(const struct ff *f, const struct tn *x, const struct tn *t,
                    const int64_t *ed, const uint32_t *ec)
{
    if (x->kind != t->kind || x->a != t->a || x->stride != t->stride || x->n != t->n)
        return false;
    if (t->kind == DDIO_N_VEC)
        return x->ref == t->ref;
    if (t->kind == DDIO_N_LIST)
        return !memcmp(f->edisp + x->ref, ed, t->n * sizeof(*ed)) &&
               !memcmp(f->echild + x->ref, ec, t->n * sizeof(*ec));
    return true;
}

/* Grow the parallel arrays *a and *b (elements ea / eb bytes) sharing one
 * capacity to hold `need` elements. */
static bool grow2(void **a, size_t ea, void **b, size_t eb, size_t *cap, size_t need)
{
    size_t nc;
    void *q;
    if (need <= *cap)
        return true;
    nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    q = realloc(*a, nc * ea);
    if (!q)
        return false;
    *a = q;
    if (b) {
        q = realloc(*b, nc * eb);
        if (!q)
            return false;   /* *a is larger than needed: harmless */
        *b = q;
    }
    *cap = nc;
    return true;
}

static bool ff_rehash(struct ff *f)
{
    size_t cap = f->htcap ? f->htcap * 2 : 1024;
    uint32_t *ht = calloc(cap, sizeof(*ht));
    if (!ht)
        return false;
    for (size_t id = 0; id < f->ntn; id++) {
        const struct tn *t = &f->tn[id];
        bool l = t->kind == DDIO_N_LIST;
        size_t h = tn_hash(t, l ? f->edisp + t->ref : NULL, l ? f->echild + t->ref : NULL) &
                   (cap - 1);
        while (ht[h])
            h = (h + 1) & (cap - 1);
        ht[h] = (uint32_t)id + 1;
    }
    free(f->ht);
    f->ht = ht;
    f->htcap = cap;
    return true;
}

/* Id of the node t (with LIST entries ed/ec, not pointing into the pool);
 * UINT32_MAX on failure (f->err set). */
static uint32_t ff_intern(struct ff *f, struct tn t, const int64_t *ed, const uint32_t *ec)
{
    size_t h;
    if (f->err)
        return UINT32_MAX;
    if ((f->ntn + 1) * 2 > f->htcap && !ff_rehash(f))
        goto nomem;
    h = tn_hash(&t, ed, ec) & (f->htcap - 1);
    for (; f->ht[h]; h = (h + 1) & (f->htcap - 1))
        if (tn_same(f, &f->tn[f->ht[h] - 1], &t, ed, ec))
            return f->ht[h] - 1;
    if (f->ntn >= UINT32_MAX - 1 || f->ne + t.n >= UINT32_MAX)
        goto nomem;
    if (!grow2((void **)&f->tn, sizeof(*f->tn), NULL, 0, &f->captn, f->ntn + 1))
        goto nomem;
    if (t.kind == DDIO_N_LIST) {
        if (!grow2((void **)&f->edisp, sizeof(*f->edisp), (void **)&f->echild,
                   sizeof(*f->echild), &f->cape, f->ne + t.n))
            goto nomem;
        memcpy(f->edisp + f->ne, ed, t.n * sizeof(*ed));
        memcpy(f->echild + f->ne, ec, t.n * sizeof(*ec));
        t.ref = (uint32_t)f->ne;
        f->ne += t.n;
    }
    f->tn[f->ntn] = t;
    f->ht[h] = (uint32_t)f->ntn + 1;
    return (uint32_t)f->ntn++;
nomem:
    f->err = -ENOMEM;
    return UINT32_MAX;
}

static uint32_t ff_leaf(struct ff *f, uint64_t len)
{
    struct tn t = { .kind = DDIO_N_LEAF, .depth = 1, .a = len };
    return ff_intern(f, t, NULL, NULL);
}

static uint32_t ff_vec(struct ff *f, uint64_t count, int64_t stride, uint32_t child)
{
    struct tn t = { .kind = DDIO_N_VEC, .a = count, .stride = stride, .ref = child };
    if (child == UINT32_MAX)
        return UINT32_MAX;
    t.depth = (uint8_t)(f->tn[child].depth + 1);
    return ff_intern(f, t, NULL, NULL);
}

static uint32_t ff_list(struct ff *f, uint32_t n, const int64_t *disp, const uint32_t *id)
{
    struct tn t = { .kind = DDIO_N_LIST, .n = n };
    uint8_t d = 0;
    for (uint32_t j = 0; j < n; j++)
        if (f->tn[id[j]].depth > d)
            d = f->tn[id[j]].depth;
    t.depth = (uint8_t)(d + 1);
    return ff_intern(f, t, disp, id);
}

static void ff_push(struct ff *f, int64_t off, uint32_t id)
{
    if (f->err || id == UINT32_MAX)
        return;
    if (!grow2((void **)&f->ioff, sizeof(*f->ioff), (void **)&f->iid, sizeof(*f->iid),
               &f->capi, f->ni + 1)) {
        f->err = -ENOMEM;
        return;
    }
    f->ioff[f->ni] = off;
    f->iid[f->ni++] = id;
}

/* ---- stage A: merge and fold equal-length runs while streaming ----------- */

struct run {
    int64_t off, last, stride;
    uint64_t len, count;
};

static void run_flush(struct ff *f, struct run *r)
{
    uint32_t id;
    if (!r->count)
        return;
    id = ff_leaf(f, r->len);
    if (r->count > 1)
        id = ff_vec(f, r->count, r->stride, id);
    ff_push(f, r->off, id);
    r->count = 0;
}

static void run_add(struct ff *f, struct run *r, int64_t off, uint64_t len)
{
    int64_t d;
    if (r->count && len == r->len && !__builtin_sub_overflow(off, r->last, &d) &&
        (r->count == 1 || d == r->stride)) {
        r->stride = d;
        r->last = off;
        r->count++;
        return;
    }
    run_flush(f, r);
    *r = (struct run){ .off = off, .last = off, .len = len, .count = 1 };
}

static void ff_stage_a(struct ff *f, uint64_t count, const int64_t *off, const int64_t *len,
                       int64_t bias)
{
    struct run r = { 0 };
    int64_t po = 0, pl = 0, end, o;
    bool have = false;
    for (uint64_t i = 0; i < count && !f->err; i++) {
        if (len[i] == 0)
            continue;
        if (len[i] < 0 || __builtin_sub_overflow(off[i], bias, &o)
            || __builtin_add_overflow(o, len[i], &end)) {
            f->err = -EINVAL;
            return;
        }
        if (have && po + pl == o) {   /* contiguous: extend the piece */
            pl += len[i];
            continue;
        }
        if (have)
            run_add(f, &r, po, (uint64_t)pl);
        po = o;
        pl = len[i];
        have = true;
    }
    if (have)
        run_add(f, &r, po, (uint64_t)pl);
    run_flush(f, &r);
}

/* ---- stage B: fold repeating groups --------------------------------------- */

static size_t ff_fold(struct ff *f, int64_t *off, uint32_t *id, size_t n);

/* Node for the k items (off, id) taken relative to off[0]; the group is
 * folded itself so a repeated pair inside it does not stay a flat LIST. */
static uint32_t ff_group(struct ff *f, const int64_t *off, const uint32_t *id, size_t k)
{
    int64_t o[FF_MAX_GROUP];
    uint32_t g[FF_MAX_GROUP];
    size_t m;
    if (k == 1)
        return id[0];
    for (size_t j = 0; j < k; j++) {
        o[j] = off[j] - off[0];   /* no overflow: the match checked differences */
        g[j] = id[j];
    }
    m = k;
    for (size_t prev = 0; m != prev && m > 1;) {
        prev = m;
        m = ff_fold(f, o, g, m);
    }
    if (m == 1 && o[0] == 0)
        return g[0];
    return ff_list(f, (uint32_t)m, o, g);
}

/* Length m of the run where item j+k repeats item j at distance `period`. */
static size_t ff_match(const int64_t *off, const uint32_t *id, size_t i, size_t n, size_t k,
                       int64_t period)
{
    size_t m = 0;
    int64_t d;
    while (i + m + k < n && id[i + m] == id[i + m + k] &&
           !__builtin_sub_overflow(off[i + m + k], off[i + m], &d) && d == period)
        m++;
    return m;
}

/* One pass over n items, compacting in place; returns the new count. */
static size_t ff_fold(struct ff *f, int64_t *off, uint32_t *id, size_t n)
{
    size_t w = 0, i = 0;
    while (i < n && !f->err) {
        size_t best_k = 0, best_cov = 1;
        int64_t best_period = 0;
        for (size_t k = 1; k <= FF_MAX_GROUP && i + 2 * k <= n; k++) {
            int64_t period;
            size_t m, cov;
            if (id[i] != id[i + k] || __builtin_sub_overflow(off[i + k], off[i], &period))
                continue;
            m = ff_match(off, id, i, n, k, period);
            cov = (m + k) / k * k;
            if (m >= k && cov > best_cov) {
                best_k = k;
                best_cov = cov;
                best_period = period;
            }
        }
        if (best_k) {
            uint32_t g = ff_group(f, off + i, id + i, best_k);
            /* keep one level free for the root LIST */
            if (g != UINT32_MAX && f->tn[g].depth + 2 <= DDIO_DESC_MAX_DEPTH) {
                uint32_t v = ff_vec(f, best_cov / best_k, best_period, g);
                if (v == UINT32_MAX)
                    return w;
                off[w] = off[i];
                id[w++] = v;
                i += best_cov;
                continue;
            }
        }
        off[w] = off[i];
        id[w++] = id[i++];
    }
    return w;
}

/* ---- expansion of the DAG into a tree ------------------------------------- */

static struct ddio_node *ff_build(const struct ff *f, uint32_t id)
{
    const struct tn *t = &f->tn[id];
    switch (t->kind) {
    case DDIO_N_LEAF:
        return ddio_node_leaf(t->a);
    case DDIO_N_VEC:
        return ddio_node_vec(t->a, t->stride, ff_build(f, t->ref));
    default: {
        struct ddio_node **ch = calloc(t->n, sizeof(*ch));
        struct ddio_node *x;
        if (!ch)
            return NULL;
        for (uint32_t j = 0; j < t->n; j++)
            ch[j] = ff_build(f, f->echild[t->ref + j]);
        x = ddio_node_list(t->n, f->edisp + t->ref, ch);   /* frees ch[] on failure */
        free(ch);
        return x;
    }
    }
}

static struct ddio_node *ff_root(const struct ff *f)
{
    struct ddio_node **ch, *x;
    if (f->ni == 1 && f->ioff[0] == 0)
        return ff_build(f, f->iid[0]);
    if (f->ni > UINT32_MAX)
        return NULL;
    ch = calloc(f->ni, sizeof(*ch));
    if (!ch)
        return NULL;
    for (size_t j = 0; j < f->ni; j++)
        ch[j] = ff_build(f, f->iid[j]);
    x = ddio_node_list((uint32_t)f->ni, f->ioff, ch);
    free(ch);
    return x;
}

struct ddio_node *ddio_node_from_flat(uint64_t count, const int64_t *off, const int64_t *len)
{
    return ddio_node_from_flat_at(count, off, len, 0);
}

struct ddio_node *ddio_node_from_flat_at(uint64_t count, const int64_t *off, const int64_t *len,
                                         int64_t bias)
{
    struct ff f = { 0 };
    struct ddio_node *root = NULL;

    if (count && (!off || !len))
        return NULL;
    ff_stage_a(&f, count, off, len, bias);
    for (int pass = 0; !f.err && f.ni > 1 && pass < FF_MAX_PASSES; pass++) {
        size_t before = f.ni;
        f.ni = ff_fold(&f, f.ioff, f.iid, f.ni);
        if (f.ni == before)
            break;
    }
    if (!f.err && f.ni > 0) {
        root = ff_root(&f);
        if (root && ddio_node_finish(root)) {   /* offsets beyond int64 spans */
            ddio_node_free(root);
            root = NULL;
        }
    }
    free(f.tn);
    free(f.edisp);
    free(f.echild);
    free(f.ht);
    free(f.ioff);
    free(f.iid);
    return root;
}

/* ========================================================================== */
/* wire format                                                                */
/* ========================================================================== */
/* disp, extent, start, length (u64 each), then the tree in prefix order:
 *   LEAF: u8 1, u64 len
 *   VEC:  u8 2, u64 count, i64 stride, child
 *   LIST: u8 3, u32 n, n x (i64 disp, child)
 * A NULL root (only meaningful with length 0) is sent as a 1-byte leaf so the
 * receiver always gets a valid tree. */

#define ENC_LEAF 9u
#define ENC_VEC  17u
#define ENC_LIST 5u
#define ENC_ENTRY 8u
#define ENC_HDR  32u

static void enc_node(struct ddio_wbuf *w, const struct ddio_node *n)
{
    ddio_put_u8(w, n->kind);
    switch (n->kind) {
    case DDIO_N_LEAF:
        ddio_put_u64(w, n->u.leaf.len);
        break;
    case DDIO_N_VEC:
        ddio_put_u64(w, n->u.vec.count);
        ddio_put_u64(w, (uint64_t)n->u.vec.stride);
        enc_node(w, n->u.vec.child);
        break;
    case DDIO_N_LIST:
        ddio_put_u32(w, n->u.list.n);
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            ddio_put_u64(w, (uint64_t)n->u.list.disp[j]);
            enc_node(w, n->u.list.child[j]);
        }
        break;
    }
}

void ddio_desc_encode(struct ddio_wbuf *w, const struct ddio_desc *d)
{
    ddio_put_u64(w, (uint64_t)d->disp);
    ddio_put_u64(w, (uint64_t)d->extent);
    ddio_put_u64(w, d->start);
    ddio_put_u64(w, d->length);
    if (d->root) {
        enc_node(w, d->root);
    } else {
        ddio_put_u8(w, DDIO_N_LEAF);
        ddio_put_u64(w, 1);
    }
}

static size_t node_enc_size(const struct ddio_node *n)
{
    size_t s;
    switch (n->kind) {
    case DDIO_N_LEAF:
        return ENC_LEAF;
    case DDIO_N_VEC:
        return ENC_VEC + node_enc_size(n->u.vec.child);
    default:
        s = ENC_LIST;
        for (uint32_t j = 0; j < n->u.list.n; j++)
            s += ENC_ENTRY + node_enc_size(n->u.list.child[j]);
        return s;
    }
}

size_t ddio_desc_encoded_size(const struct ddio_desc *d)
{
    return ENC_HDR + (d->root ? node_enc_size(d->root) : ENC_LEAF);
}

struct dec {
    struct ddio_rbuf r;
    uint32_t budget;     /* nodes + list entries still allowed */
    int max_depth;
};

static int dec_node(struct dec *x, int depth, struct ddio_node **out);

static int dec_list(struct dec *x, int depth, struct ddio_node *n)
{
    uint32_t cnt = ddio_get_u32(&x->r);
    size_t left = x->r.len - x->r.off;
    if (x->r.err || cnt == 0 || (uint64_t)cnt * (ENC_ENTRY + ENC_LEAF) > left)
        return -EPROTO;                                   /* before allocating */
    if (cnt > x->budget)
        return -E2BIG;
    x->budget -= cnt;
    n->u.list.disp = malloc(cnt * sizeof(int64_t));
    n->u.list.child = calloc(cnt, sizeof(struct ddio_node *));
    n->u.list.before = malloc(cnt * sizeof(uint64_t));
    if (!n->u.list.disp || !n->u.list.child || !n->u.list.before)
        return -ENOMEM;
    n->u.list.n = cnt;   /* children are NULL until decoded: free copes */
    for (uint32_t j = 0; j < cnt; j++) {
        int rc;
        n->u.list.disp[j] = (int64_t)ddio_get_u64(&x->r);
        rc = dec_node(x, depth + 1, &n->u.list.child[j]);
        if (rc)
            return rc;
    }
    return 0;
}

static int dec_node(struct dec *x, int depth, struct ddio_node **out)
{
    struct ddio_node *n;
    uint8_t kind;
    int rc = 0;

    if (depth > x->max_depth || x->budget == 0)
        return -E2BIG;
    kind = ddio_get_u8(&x->r);
    if (x->r.err || kind < DDIO_N_LEAF || kind > DDIO_N_LIST)
        return -EPROTO;
    x->budget--;
    n = node_alloc(kind);
    if (!n)
        return -ENOMEM;
    *out = n;   /* the caller frees the partial tree on error */
    if (kind == DDIO_N_LEAF) {
        n->u.leaf.len = ddio_get_u64(&x->r);
    } else if (kind == DDIO_N_VEC) {
        n->u.vec.count = ddio_get_u64(&x->r);
        n->u.vec.stride = (int64_t)ddio_get_u64(&x->r);
        if (x->r.err)
            return -EPROTO;
        rc = dec_node(x, depth + 1, &n->u.vec.child);
    } else {
        rc = dec_list(x, depth, n);
    }
    if (rc)
        return rc;
    if (x->r.err || node_derive(n))
        return -EPROTO;
    return 0;
}

/* Every address the stream can touch must fit in int64: the tile origin is
 * linear in the tile number, so checking the first and last tile suffices. */
static bool desc_fits(const struct ddio_desc *d)
{
    uint64_t last, end, t[2];
    if (d->length == 0)
        return true;
    /* the walkers use start + length as the stream's end: it must exist */
    if (__builtin_add_overflow(d->start, d->length, &end))
        return false;
    last = end - 1;
    t[0] = d->start / d->root->size;
    t[1] = last / d->root->size;
    for (int k = 0; k < 2; k++) {
        i128 base = (i128)d->disp + (i128)t[k] * d->extent;
        if (base + d->root->lo < INT64_MIN || base + d->root->hi > INT64_MAX)
            return false;
    }
    return true;
}

int ddio_desc_decode(const void *p, size_t n, uint32_t max_nodes, struct ddio_desc *d)
{
    int rc = ddio_desc_decode_lim(p, n, max_nodes, DDIO_DESC_MAX_DEPTH, d);
    return rc == -E2BIG ? -EPROTO : rc;
}

int ddio_desc_decode_lim(const void *p, size_t n, uint32_t max_nodes, unsigned max_depth,
                         struct ddio_desc *d)
{
    struct dec x;
    int rc;

    memset(d, 0, sizeof(*d));
    ddio_rbuf_init(&x.r, p, n);
    /* DDIO_DESC_MAX_NODES / _DEPTH are hard caps whatever the caller asks for */
    x.budget = max_nodes < DDIO_DESC_MAX_NODES ? max_nodes : DDIO_DESC_MAX_NODES;
    x.max_depth = max_depth < DDIO_DESC_MAX_DEPTH ? (int)max_depth : DDIO_DESC_MAX_DEPTH;
    d->disp = (int64_t)ddio_get_u64(&x.r);
    d->extent = (int64_t)ddio_get_u64(&x.r);
    d->start = ddio_get_u64(&x.r);
    d->length = ddio_get_u64(&x.r);
    if (x.r.err)
        return -EPROTO;
    rc = dec_node(&x, 1, &d->root);
    if (!rc && (ddio_rbuf_done(&x.r) || !desc_fits(d)))
        rc = -EPROTO;
    if (rc) {
        ddio_desc_free(d);
        memset(d, 0, sizeof(*d));
    }
    return rc;
}

/* ========================================================================== */
/* file-side evaluation                                                       */
/* ========================================================================== */

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

/* index of the LIST child holding data byte w: the last j with before[j] <= w */
static uint32_t list_child_of_byte(const struct ddio_node *n, uint64_t w)
{
    uint32_t lo = 0, hi = n->u.list.n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (n->u.list.before[mid] <= w)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
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

static i128 tile_origin(const struct ddio_desc *d, uint64_t t)
{
    return (i128)d->disp + (i128)t * d->extent;
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

/* set bits [lo, lo + len) of c->bm */
static inline void cover_bits(struct copy *c, uint64_t lo, uint64_t len)
{
    uint64_t *bm = c->bm;
    while (len) {
        uint64_t w = lo / 64, b = lo % 64;
        uint64_t nb = len < 64 - b ? len : 64 - b;
        uint64_t mask = (nb == 64 ? ~0ull : ((1ull << nb) - 1)) << b;
        uint64_t old = bm[w];
        if (old & mask) {    /* rare: overlapping writers */
            c->overlap = 1;
            c->added += (uint64_t)__builtin_popcountll(mask & ~old);
        } else {
            c->added += nb;
        }
        bm[w] = old | mask;
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

/* copies i0..i1 (whole) of a VEC of `len`-byte leaves at base */
static void copy_leaves(struct copy *c, int64_t base, int64_t stride, uint64_t len,
                        uint64_t i0, uint64_t i1)
{
    uint64_t n = i1 - i0;
    if (c->mode == COPY_COVER) {
        uint64_t lo = (uint64_t)(base - c->buf_addr + (int64_t)i0 * stride);
        for (uint64_t i = 0; i < n; i++, lo += (uint64_t)stride)
            cover_bits(c, lo, len);
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
