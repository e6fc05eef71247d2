/* Compression of ROMIO's flattened types into descriptor trees (ddio_node_from_flat*). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_desc.h"

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
