/* Distribution trees straight from a datatype's constructor recursion, by
 * MPI's type map, for file views and memory types alike.
 *
 * ADIOI_DDIO_Tree_from_type() reads a type with MPI_Type_get_envelope /
 * MPI_Type_get_contents, so its cost follows the type's constructor
 * description (blocks, fields, dimensions), never the number of pieces.
 * The tree places every data byte where the MPI standard's definition of
 * each constructor puts it (the type map that MPI_Pack, OMPIO and the
 * program see), whatever the type is:
 *   - zero counts and zero block lengths give no data and are skipped,
 *     at any depth, as are parts of size 0 (MPI_LB, MPI_UB, empty types);
 *   - a part is replicated at its extent (MPI_Type_get_extent), so resized
 *     types with any lower bound, negative ones too, move their copies and
 *     never their own data;
 *   - a contiguous part is its size bytes from its true lower bound; a
 *     named type with holes (MPI_SHORT_INT, MPI_DOUBLE_INT, ...) is laid
 *     out by MPI's own engine (ADIOI_DDIO_Type_pieces);
 *   - subarray and darray are expanded here, by their definitions in the
 *     standard (darray: cyclic(darg) per dimension, BLOCK as cyclic with
 *     darg ceil(gsize / psize), NONE as one block; the process grid in
 *     row-major order; the first dimension fastest in Fortran order, the
 *     last in C order), not through ROMIO's ADIO_Type_create_* (ROMIO
 *     3.2.1's misplace nested CYCLIC(k) ones);
 *   - the Fortran-integer forms (hvector, hindexed, struct with integer
 *     displacements) and the F90 types are read like the others.
 * ROMIO's flattening (ADIOI_Flatten) departs from the type map for file
 * views with zero-length blocks, resized parts with a moved lower bound
 * and others (ufs: misplaces them, refuses them or aborts in
 * ADIOI_Optimize_flattened): ddio files never use it, except with
 * romio_ddio_type_desc=disable (the driver then describes types from
 * ROMIO's flattened list, ADIOI_DDIO_Tree_from_flat, as ROMIO would place
 * them) and in ROMIO's own two-phase fallback, which is given a list made
 * from the view's tree (ad_ddio_compat.h).
 *
 * Trees are normalised while they are built: replicated equal nodes at a
 * constant stride become one VEC, adjacent leaves merge, VECs of dense
 * leaves become leaves, and all-leaf lists are recompressed with
 * ddio_node_from_flat (cost: the list's length). A type whose tree would
 * exceed the node budget or the descriptor's depth is described by
 * ADIOI_DDIO_Tree_from_pieces: the same builder without a budget, its
 * pieces then compressed by ddio_node_from_flat (cost: its pieces).
 */
#include "ad_ddio.h"
#include <stdlib.h>
#include <string.h>

#define TYPE_MAX_NODES   (DDIO_DESC_MAX_NODES / 4)
#define TYPE_MAX_NESTING 512    /* constructor nesting we follow */
#define PIECES_MAX_EXTENT (64 << 20)    /* ADIOI_DDIO_Type_pieces: true extents */

typedef struct tctx {
    int64_t budget;             /* nodes we may still create */
    int nesting;
    ADIOI_DDIO_Refusal *why;    /* the first refusal, for the caller's log */
} tctx;

/* Give up on the type (the caller falls back to its pieces), remembering
 * the first reason: the innermost, the one a user can fix.
 * build_combiner() adds the combiner it happened in. */
static int refuse(tctx * c, const char *reason)
{
    if (c->why && !c->why->reason)
        c->why->reason = reason;
    return -1;
}

/* the combiner a refusal happened in: the innermost one, set once */
static void refused_in(tctx * c, int comb)
{
    if (c->why && c->why->reason && c->why->combiner == MPI_COMBINER_NAMED)
        c->why->combiner = comb;
}

/* One type's data: node `n` at offset `off` from the type's origin. */
typedef struct tres {
    struct ddio_node *n;        /* NULL: no data */
    int64_t off;
} tres;

typedef struct trun {
    int64_t off;
    uint64_t cnt;
    int64_t st;
    struct ddio_node *x;
} trun;

typedef struct tseq {
    trun *r;
    size_t n, cap;
} tseq;

static int64_t node_count(const struct ddio_node *n)
{
    int64_t c = 1;
    if (n->kind == DDIO_N_VEC)
        c += node_count(n->u.vec.child);
    else if (n->kind == DDIO_N_LIST)
        for (uint32_t j = 0; j < n->u.list.n; j++)
            c += 1 + node_count(n->u.list.child[j]);
    return c;
}

static int node_depth(const struct ddio_node *n)
{
    int d = 0;
    if (n->kind == DDIO_N_VEC)
        d = node_depth(n->u.vec.child);
    else if (n->kind == DDIO_N_LIST)
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            int cd = node_depth(n->u.list.child[j]);
            d = cd > d ? cd : d;
        }
    return d + 1;
}

static int spend(tctx * c, int64_t nodes)
{
    c->budget -= nodes;
    return c->budget >= 0 ? 0 : refuse(c, "more nodes than the tree budget");
}

/* cnt copies of x at stride st, with the VEC folded where it adds nothing:
 * a dense run of a leaf is a leaf, a VEC whose copies abut is a longer VEC.
 * Takes ownership of x. */
static struct ddio_node *mk_vec(tctx * c, uint64_t cnt, int64_t st, struct ddio_node *x)
{
    uint64_t len;
    int64_t span;

    if (!x || cnt == 1)
        return x;
    if (x->kind == DDIO_N_LEAF && st == (int64_t) x->u.leaf.len &&
        !__builtin_mul_overflow(cnt, x->u.leaf.len, &len) && len <= INT64_MAX) {
        ddio_node_free(x);
        return ddio_node_leaf(len);
    }
    if (x->kind == DDIO_N_VEC &&
        !__builtin_mul_overflow((int64_t) x->u.vec.count, x->u.vec.stride, &span) &&
        span == st && !__builtin_mul_overflow(cnt, x->u.vec.count, &len) && len <= INT64_MAX) {
        x->u.vec.count = len;
        return ddio_node_finish(x) ? (ddio_node_free(x), NULL) : x;
    }
    if (spend(c, 1)) {
        ddio_node_free(x);
        return NULL;
    }
    return ddio_node_vec(cnt, st, x);
}

static void seq_free(tseq * s)
{
    for (size_t i = 0; i < s->n; i++)
        ddio_node_free(s->r[i].x);
    free(s->r);
    memset(s, 0, sizeof(*s));
}

/* Does run (off, cnt, st) continue run R (same node)? Sets *stp. */
static int run_continues(const trun * R, int64_t off, uint64_t cnt, int64_t st, int64_t * stp)
{
    int64_t s = R->cnt > 1 ? R->st : st, next;
    if (R->cnt == 1 && cnt == 1 && __builtin_sub_overflow(off, R->off, &s))
        return 0;
    if ((cnt > 1 && st != s) || R->cnt > INT64_MAX ||
        __builtin_mul_overflow((int64_t) R->cnt, s, &next) ||
        __builtin_add_overflow(R->off, next, &next) || next != off)
        return 0;
    *stp = s;
    return 1;
}

/* Append cnt copies of x at off + i * st, merging with the last run where
 * the result is the same data in the same order. x is borrowed (cloned
 * when kept). 0, or -1 (out of memory or over budget). */
static int seq_add(tctx * c, tseq * s, int64_t off, uint64_t cnt, int64_t st,
                   const struct ddio_node *x)
{
    trun *R = s->n ? &s->r[s->n - 1] : NULL;
    int64_t ns, gap;

    if (R && ddio_node_equal(R->x, x) && run_continues(R, off, cnt, st, &ns)) {
        R->cnt += cnt;
        R->st = ns;
        return 0;
    }
    if (R && R->cnt == 1 && cnt == 1 && R->x->kind == DDIO_N_LEAF && x->kind == DDIO_N_LEAF &&
        !__builtin_sub_overflow(off, R->off, &gap) && gap == (int64_t) R->x->u.leaf.len &&
        R->x->u.leaf.len + x->u.leaf.len <= INT64_MAX) {
        R->x->u.leaf.len += x->u.leaf.len;
        return ddio_node_finish(R->x);
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 8;
        trun *r = realloc(s->r, cap * sizeof(*r));
        if (!r)
            return -1;
        s->r = r;
        s->cap = cap;
    }
    if (spend(c, node_count(x)))
        return -1;
    s->r[s->n] = (trun) {.off = off,.cnt = cnt,.st = st,.x = ddio_node_clone(x) };
    return s->r[s->n++].x ? 0 : -1;
}

/* All runs single leaves: let ddio_node_from_flat find the regularity
 * (repeating groups of unequal pieces become VECs of LISTs). */
static int seq_all_leaves(const tseq * s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i].cnt != 1 || s->r[i].x->kind != DDIO_N_LEAF)
            return 0;
    return 1;
}

static int seq_from_flat(tseq * s, tres * out)
{
    int64_t *off = malloc(s->n * sizeof(*off)), *len = malloc(s->n * sizeof(*len));
    int64_t lo = INT64_MAX;

    if (off && len) {
        for (size_t i = 0; i < s->n; i++) {
            off[i] = s->r[i].off;
            len[i] = (int64_t) s->r[i].x->u.leaf.len;
            lo = off[i] < lo ? off[i] : lo;
        }
        out->n = ddio_node_from_flat_at(s->n, off, len, lo);
        out->off = lo;
    }
    free(off);
    free(len);
    return out->n ? 0 : -1;
}

/* The sequence as one node (at out->off); consumes s. */
static int seq_finish(tctx * c, tseq * s, tres * out)
{
    struct ddio_node **ch = NULL;
    int64_t *disp = NULL;
    int rc = -1;

    out->n = NULL;
    out->off = 0;
    if (s->n == 0)
        rc = 0;
    else if (s->n == 1) {
        out->off = s->r[0].off;
        out->n = mk_vec(c, s->r[0].cnt, s->r[0].st, s->r[0].x);
        s->r[0].x = NULL;
        rc = out->n ? 0 : -1;
    } else if (seq_all_leaves(s)) {
        rc = seq_from_flat(s, out);
        if (!rc)
            rc = spend(c, node_count(out->n));
    } else if (s->n <= UINT32_MAX && !spend(c, (int64_t) s->n) &&
               (ch = calloc(s->n, sizeof(*ch))) && (disp = malloc(s->n * sizeof(*disp)))) {
        rc = 0;
        for (size_t i = 0; i < s->n; i++) {
            ch[i] = mk_vec(c, s->r[i].cnt, s->r[i].st, s->r[i].x);
            s->r[i].x = NULL;
            rc |= ch[i] && !__builtin_sub_overflow(s->r[i].off, s->r[0].off, &disp[i]) ? 0 : -1;
        }
        out->off = s->r[0].off;
        out->n = rc ? NULL : ddio_node_list((uint32_t) s->n, disp, ch);
        if (rc)
            for (size_t i = 0; i < s->n; i++)
                ddio_node_free(ch[i]);
        rc = out->n ? 0 : -1;
    }
    free(ch);
    free(disp);
    seq_free(s);
    return rc;
}

/* ---- reading one type ---------------------------------------------------- */

typedef struct tdesc {
    int ni, na, nt, comb;
    int *ints;
    MPI_Aint *adds;
    MPI_Datatype *types;
} tdesc;

static int is_named(MPI_Datatype t)
{
    int ni, na, nt, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    return comb == MPI_COMBINER_NAMED;
}

static void tdesc_free(tdesc * d)
{
    for (int i = 0; i < d->nt && d->types; i++)
        if (!is_named(d->types[i]))
            MPI_Type_free(&d->types[i]);
    free(d->ints);
    free(d->adds);
    free(d->types);
}

static int tdesc_get(MPI_Datatype t, tdesc * d, tctx * c)
{
    memset(d, 0, sizeof(*d));
    MPI_Type_get_envelope(t, &d->ni, &d->na, &d->nt, &d->comb);
    /* a description longer than the node budget cannot fit */
    if (d->comb == MPI_COMBINER_NAMED)
        return -1;
    if (d->ni / 2 > c->budget || d->na > c->budget || d->nt > c->budget)
        return refuse(c, "a description longer than the tree budget");
    d->ints = malloc((size_t) (d->ni + 1) * sizeof(int));
    d->adds = malloc((size_t) (d->na + 1) * sizeof(MPI_Aint));
    d->types = malloc((size_t) (d->nt + 1) * sizeof(MPI_Datatype));
    if (!d->ints || !d->adds || !d->types) {
        d->nt = 0;
        return -1;
    }
    MPI_Type_get_contents(t, d->ni, d->na, d->nt, d->ints, d->adds, d->types);
    return 0;
}


static int build(tctx * c, MPI_Datatype t, tres * out);
static int build_combiner(tctx * c, MPI_Datatype t, tres * out);

static void tres_free(tres * r)
{
    ddio_node_free(r->n);
    r->n = NULL;
}

/* MPI's own layout of one element of a committed type t: its pieces in
 * type-map order (adjacent ones merged), addresses relative to t's origin,
 * from MPI_Pack of a buffer whose bytes spell their own addresses. Types
 * whose true extent exceeds PIECES_MAX_EXTENT are not laid out (-1). */
int ADIOI_DDIO_Type_pieces(MPI_Datatype t, int64_t ** off, int64_t ** len, size_t *n)
{
    MPI_Aint tlb, text;
    MPI_Count size;
    unsigned char *buf = NULL, *pk = NULL;
    int64_t *addr = NULL;
    int passes = 1, rc = -1;

    *off = *len = NULL;
    *n = 0;
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_size_x(t, &size);
    if (size <= 0)
        return size == 0 ? 0 : -1;
    if (text > PIECES_MAX_EXTENT || size > PIECES_MAX_EXTENT || size > INT_MAX)
        return -1;
    for (MPI_Aint r = 256; r < text; r *= 256)
        passes++;
    buf = malloc((size_t) text + 1);
    pk = malloc((size_t) size);
    addr = calloc((size_t) size, sizeof(*addr));
    *off = malloc((size_t) size * sizeof(**off));
    *len = malloc((size_t) size * sizeof(**len));
    if (!buf || !pk || !addr || !*off || !*len)
        goto out;
    for (int p = 0; p < passes; p++) {
        int pos = 0;
        for (MPI_Aint i = 0; i < text; i++)
            buf[i] = (unsigned char) (i >> (8 * p));
        if (MPI_Pack(buf - tlb, 1, t, pk, (int) size, &pos, MPI_COMM_SELF) != MPI_SUCCESS ||
            pos != size)
            goto out;
        for (MPI_Count s = 0; s < size; s++)
            addr[s] |= (int64_t) pk[s] << (8 * p);
    }
    for (MPI_Count s = 0; s < size; s++) {
        int64_t a = tlb + addr[s];
        if (*n && (*off)[*n - 1] + (*len)[*n - 1] == a)
            (*len)[*n - 1]++;
        else {
            (*off)[*n] = a;
            (*len)[(*n)++] = 1;
        }
    }
    rc = 0;
  out:
    free(buf);
    free(pk);
    free(addr);
    if (rc) {
        free(*off);
        free(*len);
        *off = *len = NULL;
        *n = 0;
    }
    return rc;
}

/* A named type: its size bytes from its true lb, or, with holes, its
 * pieces as MPI's engine lays them out. Size 0 (MPI_LB, MPI_UB): no data. */
static int build_named(tctx * c, MPI_Datatype t, tres * out)
{
    MPI_Aint tlb, text;
    MPI_Count size;
    int64_t *off, *len;
    size_t n;
    tseq s = { 0 };

    MPI_Type_size_x(t, &size);
    MPI_Type_get_true_extent(t, &tlb, &text);
    if (size == 0)
        return 0;
    if (size == text && size > 0) {
        out->n = ddio_node_leaf((uint64_t) size);
        out->off = tlb;
        return out->n ? 0 : -1;
    }
    if (ADIOI_DDIO_Type_pieces(t, &off, &len, &n))
        return refuse(c, "a named type with holes MPI_Pack could not lay out");
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        struct ddio_node *l = ddio_node_leaf((uint64_t) len[i]);
        rc = !l || seq_add(c, &s, off[i], 1, 0, l) ? -1 : 0;
        ddio_node_free(l);
    }
    free(off);
    free(len);
    if (rc) {
        seq_free(&s);
        return -1;
    }
    return seq_finish(c, &s, out);
}

/* A contiguous type (ROMIO's ADIOI_Datatype_iscontig): its size bytes from
 * its true lb, whatever its lb and extent */
static int build_contig(MPI_Datatype t, tres * out)
{
    MPI_Aint tlb, text;
    MPI_Count size;

    MPI_Type_size_x(t, &size);
    MPI_Type_get_true_extent(t, &tlb, &text);
    if (size == 0)
        return 0;
    out->n = ddio_node_leaf((uint64_t) size);
    out->off = tlb;
    return out->n ? 0 : -1;
}

static int build(tctx * c, MPI_Datatype t, tres * out)
{
    int contig;

    memset(out, 0, sizeof(*out));
    if (is_named(t))
        return build_named(c, t, out);
    ADIOI_Datatype_iscontig(t, &contig);
    if (contig)
        return build_contig(t, out);
    return build_combiner(c, t, out);
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* count blocks of bl[i] copies of the child at disp[i] (bytes); bl == NULL:
 * every block has blk copies. Blocks of length 0 give nothing. */
static int build_blocks(tctx * c, const tres * ch, MPI_Aint ext, int count, const int *bl,
                        int blk, const MPI_Aint * disp, tres * out)
{
    tseq s = { 0 };
    int64_t off;

    for (int i = 0; i < count; i++) {
        int b = bl ? bl[i] : blk;
        if (b <= 0 || !ch->n)
            continue;
        if (__builtin_add_overflow((int64_t) disp[i], ch->off, &off) ||
            seq_add(c, &s, off, (uint64_t) b, ext, ch->n)) {
            seq_free(&s);
            return -1;
        }
    }
    return seq_finish(c, &s, out);
}

/* n displacements to bytes: ints scaled by `unit` (indexed: the old type's
 * extent; the Fortran-integer forms: 1) */
static MPI_Aint *scaled(const int *d, int n, MPI_Aint unit)
{
    MPI_Aint *a = malloc((size_t) (n + 1) * sizeof(*a));
    for (int i = 0; a && i < n; i++)
        if (__builtin_mul_overflow((MPI_Aint) d[i], unit, &a[i])) {
            free(a);
            return NULL;
        }
    return a;
}

/* indexed, hindexed, indexed_block, hindexed_block, hindexed_integer */
static int build_indexed(tctx * c, const tdesc * d, const tres * ch, tres * out)
{
    int n = d->ints[0], blockform = d->comb == MPI_COMBINER_INDEXED_BLOCK ||
        d->comb == MPI_COMBINER_HINDEXED_BLOCK;
    const int *bl = blockform ? NULL : &d->ints[1];
    int blk = blockform ? d->ints[1] : 0;
    MPI_Aint ext = extent_of(d->types[0]), *disp;
    int rc;

    if (d->comb == MPI_COMBINER_HINDEXED || d->comb == MPI_COMBINER_HINDEXED_BLOCK)
        disp = d->adds;
    else if (!(disp = scaled(blockform ? &d->ints[2] : &d->ints[n + 1], n,
                             d->comb == MPI_COMBINER_HINDEXED_INTEGER ? 1 : ext)))
        return -1;
    rc = build_blocks(c, ch, ext, n, bl, blk, disp, out);
    if (disp != d->adds)
        free(disp);
    return rc;
}

/* struct and struct_integer: field i is ints[1 + i] copies of types[i] */
static int build_struct(tctx * c, const tdesc * d, tres * out)
{
    int n = d->ints[0], rc = 0;
    tseq s = { 0 };

    for (int i = 0; i < n && !rc; i++) {
        tres f;
        int64_t off, at = d->comb == MPI_COMBINER_STRUCT ? (int64_t) d->adds[i] :
            (int64_t) d->ints[1 + n + i];
        if (d->ints[1 + i] <= 0)
            continue;
        rc = build(c, d->types[i], &f);
        if (!rc && f.n)
            rc = __builtin_add_overflow(at, f.off, &off) ||
                seq_add(c, &s, off, (uint64_t) d->ints[1 + i], extent_of(d->types[i]), f.n);
        tres_free(&f);
    }
    if (rc) {
        seq_free(&s);
        return -1;
    }
    return seq_finish(c, &s, out);
}

/* contiguous, vector, hvector, hvector_integer: cnt x (bl copies at the old
 * type's extent) at stride */
static int build_strided(tctx * c, const tdesc * d, tres * out)
{
    int cnt = d->ints[0], bl = d->comb == MPI_COMBINER_CONTIGUOUS ? 1 : d->ints[1];
    MPI_Aint ext = extent_of(d->types[0]), st;
    tres ch;

    if (d->comb == MPI_COMBINER_CONTIGUOUS)
        st = ext;
    else if (d->comb == MPI_COMBINER_VECTOR) {
        if (__builtin_mul_overflow((MPI_Aint) d->ints[2], ext, &st))
            return -1;
    } else if (d->comb == MPI_COMBINER_HVECTOR)
        st = d->adds[0];
    else
        st = d->ints[2];        /* hvector_integer */
    if (cnt <= 0 || bl <= 0)
        return 0;
    if (build(c, d->types[0], &ch))
        return tres_free(&ch), -1;
    *out = ch;
    if (!ch.n)
        return 0;
    out->n = mk_vec(c, (uint64_t) cnt, st, mk_vec(c, (uint64_t) bl, ext, ch.n));
    return out->n ? 0 : -1;
}

/* element strides (in elements of the old type) of an array of `sizes`:
 * order C: the last dimension's 1; Fortran: the first's. 0, or -1 on
 * overflow. */
static int array_strides(int nd, const int *sizes, int corder, int64_t * st)
{
    int64_t s = 1;
    for (int j = 0; j < nd; j++) {
        int k = corder ? nd - 1 - j : j;
        st[k] = s;
        if (sizes[k] < 0 || __builtin_mul_overflow(s, (int64_t) sizes[k], &s))
            return -1;
    }
    return 0;
}

/* subarray: the selected elements of the array, the fastest dimension
 * innermost: nested VECs */
static int build_subarray(tctx * c, const tdesc * d, tres * out)
{
    int nd = d->ints[0], corder = d->ints[3 * nd + 1] == MPI_ORDER_C;
    const int *sizes = &d->ints[1], *subs = &d->ints[nd + 1], *starts = &d->ints[2 * nd + 1];
    MPI_Aint ext = extent_of(d->types[0]);
    int64_t st[32], es, at;

    if (nd <= 0 || nd > 32 || array_strides(nd, sizes, corder, st))
        return refuse(c, "a subarray of more than 32 dimensions or beyond 2^63 bytes");
    for (int k = 0; k < nd; k++)
        if (subs[k] <= 0)
            return 0;
    if (build(c, d->types[0], out))
        return tres_free(out), -1;
    if (!out->n)
        return 0;
    for (int j = 0; j < nd; j++) {
        int k = corder ? nd - 1 - j : j;
        if (__builtin_mul_overflow(st[k], (int64_t) ext, &es) ||
            __builtin_mul_overflow(es, (int64_t) starts[k], &at) ||
            __builtin_add_overflow(out->off, at, &out->off))
            return tres_free(out), -1;
        out->n = mk_vec(c, (uint64_t) subs[k], es, out->n);
        if (!out->n)
            return -1;
    }
    return 0;
}

/* darray: this rank's blocks in each dimension, the fastest innermost.
 * In one dimension of g elements over p processes at coordinate r, with
 * block b: blocks of b at r * b + i * p * b while below g, the last one
 * cut at g (BLOCK: b = darg or ceil(g / p), one block; NONE: all of g) */
static int build_darray(tctx * c, const tdesc * d, tres * out)
{
    int size = d->ints[0], rank = d->ints[1], nd = d->ints[2];
    const int *g = &d->ints[3], *dist = &d->ints[nd + 3], *darg = &d->ints[2 * nd + 3],
        *ps = &d->ints[3 * nd + 3];
    int corder = d->ints[4 * nd + 3] == MPI_ORDER_C, coord[32];
    MPI_Aint ext = extent_of(d->types[0]);
    int64_t st[32];

    if (nd <= 0 || nd > 32 || array_strides(nd, g, corder, st))
        return refuse(c, "a darray of more than 32 dimensions or beyond 2^63 bytes");
    for (int k = 0, rest = size, rk = rank; k < nd; k++) {      /* row-major grid */
        if (ps[k] <= 0)
            return -1;
        rest /= ps[k];
        coord[k] = rest ? rk / rest : 0;
        rk = rest ? rk % rest : 0;
    }
    if (build(c, d->types[0], out))
        return tres_free(out), -1;
    if (!out->n)
        return 0;
    for (int j = 0; j < nd; j++) {
        int k = corder ? nd - 1 - j : j;
        int64_t b, s0, cnt, full, last, es, bste, bst, at;
        tseq s = { 0 };
        if (dist[k] == MPI_DISTRIBUTE_NONE) {
            b = g[k];
            s0 = 0;
        } else if (dist[k] == MPI_DISTRIBUTE_BLOCK) {
            b = darg[k] == MPI_DISTRIBUTE_DFLT_DARG ? (g[k] + ps[k] - 1) / ps[k] : darg[k];
            s0 = (int64_t) coord[k] * b;
        } else {
            b = darg[k] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg[k];
            s0 = (int64_t) coord[k] * b;
        }
        if (b <= 0 || s0 >= g[k])
            return tres_free(out), 0;   /* nothing of this dimension: no data */
        bste = dist[k] == MPI_DISTRIBUTE_CYCLIC ? (int64_t) ps[k] * b : g[k];
        cnt = (g[k] - 1 - s0) / bste + 1;
        last = g[k] - (s0 + (cnt - 1) * bste);
        last = last < b ? last : b;
        full = last < b ? cnt - 1 : cnt;
        if (__builtin_mul_overflow(st[k], (int64_t) ext, &es) ||
            __builtin_mul_overflow(bste, es, &bst))
            return tres_free(out), -1;
        int rc = 0;
        if (full > 0) {
            struct ddio_node *x = mk_vec(c, (uint64_t) b, es, ddio_node_clone(out->n));
            rc = !x || __builtin_mul_overflow(s0, es, &at) ||
                seq_add(c, &s, out->off + at, (uint64_t) full, bst, x) ? -1 : 0;
            ddio_node_free(x);
        }
        if (!rc && last < b) {
            struct ddio_node *x = mk_vec(c, (uint64_t) last, es, ddio_node_clone(out->n));
            rc = !x || __builtin_mul_overflow(s0 + full * bste, es, &at) ||
                seq_add(c, &s, out->off + at, 1, 0, x) ? -1 : 0;
            ddio_node_free(x);
        }
        tres_free(out);
        if (rc) {
            seq_free(&s);
            return -1;
        }
        if (seq_finish(c, &s, out))
            return -1;
    }
    return 0;
}

/* F90 types: a named type by another name */
static int build_f90(tctx * c, MPI_Datatype t, tres * out)
{
    MPI_Aint tlb, text;
    MPI_Count size;
    MPI_Type_size_x(t, &size);
    MPI_Type_get_true_extent(t, &tlb, &text);
    if (size == 0)
        return 0;
    if (size != text)
        return refuse(c, "an F90 type with holes");
    out->n = ddio_node_leaf((uint64_t) size);
    out->off = tlb;
    return out->n ? 0 : -1;
}

static int build_combiner(tctx * c, MPI_Datatype t, tres * out)
{
    tdesc d;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (c->nesting >= TYPE_MAX_NESTING)
        return refuse(c, "constructors nested deeper than 512");
    if (tdesc_get(t, &d, c)) {
        if (d.comb != MPI_COMBINER_NAMED) {
            refused_in(c, d.comb);
            tdesc_free(&d);
        }
        return -1;
    }
    c->nesting++;
    switch (d.comb) {
        case MPI_COMBINER_DUP:
        case MPI_COMBINER_RESIZED:     /* moves no data: only its copies */
            rc = build(c, d.types[0], out);
            break;
        case MPI_COMBINER_CONTIGUOUS:
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR:
        case MPI_COMBINER_HVECTOR_INTEGER:
            rc = build_strided(c, &d, out);
            break;
        case MPI_COMBINER_INDEXED:
        case MPI_COMBINER_HINDEXED:
        case MPI_COMBINER_HINDEXED_INTEGER:
        case MPI_COMBINER_INDEXED_BLOCK:
        case MPI_COMBINER_HINDEXED_BLOCK:{
                tres ch;
                rc = build(c, d.types[0], &ch);
                if (!rc)
                    rc = build_indexed(c, &d, &ch, out);
                tres_free(&ch);
                break;
            }
        case MPI_COMBINER_STRUCT:
        case MPI_COMBINER_STRUCT_INTEGER:
            rc = build_struct(c, &d, out);
            break;
        case MPI_COMBINER_SUBARRAY:
            rc = build_subarray(c, &d, out);
            break;
        case MPI_COMBINER_DARRAY:
            rc = build_darray(c, &d, out);
            break;
        case MPI_COMBINER_F90_REAL:
        case MPI_COMBINER_F90_COMPLEX:
        case MPI_COMBINER_F90_INTEGER:
            rc = build_f90(c, t, out);
            break;
        default:
            rc = refuse(c, "a constructor the tree builder does not read");
            break;
    }
    if (rc) {
        refused_in(c, d.comb);
        tres_free(out);
    }
    tdesc_free(&d);
    c->nesting--;
    return rc;
}


/* Move every address of n by d (a LIST absorbs it, a VEC passes it down). */
static struct ddio_node *node_shift(struct ddio_node *n, int64_t d)
{
    if (d == 0)
        return n;
    if (n->kind == DDIO_N_LIST) {
        for (uint32_t j = 0; j < n->u.list.n; j++)
            if (__builtin_add_overflow(n->u.list.disp[j], d, &n->u.list.disp[j]))
                return ddio_node_free(n), NULL;
        return n;
    }
    if (n->kind == DDIO_N_VEC) {
        n->u.vec.child = node_shift(n->u.vec.child, d);
        return n->u.vec.child ? n : (ddio_node_free(n), NULL);
    }
    return ddio_node_list(1, &d, &n);
}


/* t's tree relative to its lowest data byte (*base), built with `budget`
 * nodes at most; NULL with *why set where the builder gave up */
static struct ddio_node *tree_of_type(MPI_Datatype t, int64_t budget, int64_t * base,
                                      ADIOI_DDIO_Refusal * why, int limit_shape)
{
    tctx c = {.budget = budget,.why = why };
    tres r;
    MPI_Count size;
    int contig;

    ADIOI_Datatype_iscontig(t, &contig);
    /* contiguous types never reach here (callers) */
    if (contig || build(&c, t, &r) || !r.n)
        return NULL;
    MPI_Type_size_x(t, &size);
    if (ddio_node_finish(r.n) || r.n->size != (uint64_t) size ||
        __builtin_add_overflow(r.off, r.n->lo, base) ||
        !(r.n = node_shift(r.n, -r.n->lo)) || ddio_node_finish(r.n) ||
        (limit_shape && (node_depth(r.n) > DDIO_DESC_MAX_DEPTH ||
                         node_count(r.n) > TYPE_MAX_NODES))) {
        refuse(&c, "a tree that does not fit a descriptor (depth, nodes, size)");
        ddio_node_free(r.n);
        return NULL;
    }
    return r.n;
}

struct ddio_node *ADIOI_DDIO_Tree_from_type(MPI_Datatype t, int64_t * base,
                                            ADIOI_DDIO_Refusal * why)
{
    if (why)
        *why = (ADIOI_DDIO_Refusal) {.combiner = MPI_COMBINER_NAMED };
    return tree_of_type(t, TYPE_MAX_NODES, base, why, 1);
}

typedef struct piece_log {
    int64_t *a, *l;
    size_t n, cap;
    int oom;
} piece_log;

static int log_piece(void *arg, int64_t addr, uint64_t len, uint64_t s)
{
    piece_log *p = arg;
    (void) s;
    if (p->n && p->a[p->n - 1] + p->l[p->n - 1] == addr) {
        p->l[p->n - 1] += (int64_t) len;
        return 0;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        int64_t *a = realloc(p->a, cap * sizeof(*a));
        int64_t *l = a ? realloc(p->l, cap * sizeof(*l)) : NULL;
        if (a)
            p->a = a;
        if (!a || !l)
            return p->oom = 1;
        p->l = l;
        p->cap = cap;
    }
    p->a[p->n] = addr;
    p->l[p->n++] = (int64_t) len;
    return 0;
}

struct ddio_node *ADIOI_DDIO_Tree_from_pieces(MPI_Datatype t, int64_t * base)
{
    struct ddio_node *root = tree_of_type(t, INT64_MAX, base, NULL, 0), *flat = NULL;
    piece_log p = { 0 };

    if (!root)
        return NULL;
    struct ddio_desc d = {.disp = 0,.extent = 1,.root = root,.start = 0,.length = root->size };
    if (!ddio_desc_walk_stream(&d, 0, d.length, log_piece, &p) && !p.oom && p.n)
        flat = ddio_node_from_flat_at(p.n, p.a, p.l, 0);
    ddio_node_free(root);
    free(p.a);
    free(p.l);
    return flat;
}

/* How many of the list's entries hold t's size bytes, and how many bytes
 * the last of them gives (*last). ROMIO's walkers (ADIOI_Calc_my_off_len,
 * data sieving) stop there; ROMIO 3.2.1's flattening of a darray whose
 * CYCLIC(k) blocks do not divide the dimension (ROMIO's test darray_read:
 * 5 x 5, 3 x 3 blocks, 2 x 2 ranks) lists pieces past them again (rank 1's
 * 48 bytes: 120+24, 160+24, 200+24, 120+24, 160+24), which would make the
 * descriptor overlap itself. A correct list ends there anyway. */
static MPI_Count flat_prefix(MPI_Datatype t, const ADIOI_Flatlist_node * flat, int64_t * last)
{
    MPI_Count size, i;
    int64_t have = 0;

    MPI_Type_size_x(t, &size);
    *last = 0;
    for (i = 0; i < flat->count && have < size; i++) {
        *last = flat->blocklens[i] < size - have ? flat->blocklens[i] : size - have;
        have += *last;
    }
    return i;
}

struct ddio_node *ADIOI_DDIO_Tree_from_flat(MPI_Datatype t, const ADIOI_Flatlist_node * flat,
                                            int64_t * base)
{
    int64_t last, lo = INT64_MAX;
    MPI_Count n = flat_prefix(t, flat, &last);
    struct ddio_node *root = NULL;

    for (MPI_Count i = 0; i < n; i++)
        if (flat->blocklens[i] > 0 && flat->indices[i] < lo)
            lo = flat->indices[i];
    if (lo == INT64_MAX)
        return NULL;
    *base = lo;
#if defined(__GNUC__)
    /* ADIO_Offset is int64_t on LP64 systems: build straight from ROMIO's
     * arrays (a flattened 8-byte CYCLIC view has tens of millions of pieces;
     * copying them cost more than compressing them). */
    if (__builtin_types_compatible_p(ADIO_Offset, int64_t) && last == flat->blocklens[n - 1])
        return ddio_node_from_flat_at((uint64_t) n, (const int64_t *) flat->indices,
                                      (const int64_t *) flat->blocklens, lo);
#endif
    int64_t *off = malloc(n * sizeof(*off)), *len = malloc(n * sizeof(*len));
    if (off && len) {
        for (MPI_Count i = 0; i < n; i++) {
            off[i] = flat->indices[i];
            len[i] = flat->blocklens[i];
        }
        len[n - 1] = last;
        root = ddio_node_from_flat_at((uint64_t) n, off, len, lo);
    }
    free(off);
    free(len);
    return root;
}
