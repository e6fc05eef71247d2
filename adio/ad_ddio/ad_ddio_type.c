/* Distribution trees straight from a datatype's constructor recursion.
 *
 * ADIOI_DDIO_Tree_from_flat() compresses ROMIO's flattened list, which has one
 * entry per contiguous piece: tens of millions for an 8-byte CYCLIC view of a
 * large file. ADIOI_DDIO_Tree_from_type() reads the same type with
 * MPI_Type_get_envelope / MPI_Type_get_contents instead, so its cost follows
 * the type's constructor description (blocks, fields, dimensions), never the
 * number of pieces.
 *
 * For a file view (typemap = 0) the result must place every byte exactly
 * where ROMIO's flattening (ADIOI_Flatten, adio/common/flatten.c) does,
 * because ROMIO's other drivers (ufs:) and romio_ddio_check_desc use that
 * list. It is built with MPI's
 * typemap rules, and it gives up (NULL: the caller falls back to the
 * flattened list) wherever ROMIO 4.0.2's flattening departs from them:
 *   - "simple" children (named, or ADIOI_Datatype_iscontig) are taken by
 *     ROMIO as size bytes from the child's origin, replicated by size or by
 *     extent depending on the constructor: only children with true lb 0 and
 *     size == extent are accepted;
 *   - zero counts / block lengths over a derived child (ROMIO keeps one copy
 *     of the child), vector counts of 0 (ROMIO emits one block);
 *   - indexed/hindexed of a derived child whose flattening holds zero-length
 *     entries (ROMIO's replication skips them and then misaligns);
 *   - resized with lb != 0 where ROMIO moves the data by lb: the first
 *     resized it meets (the one that sets its lb/ub markers) over a derived
 *     child, or a later one over a simple child.
 * Memory types (typemap = 1) follow MPI's type map instead, which is what
 * MPI_Pack and the program see: none of the refusals above, a resized type
 * moves no data, and a contiguous type is its size bytes from its true lb.
 * ROMIO's flattening misplaces such memory even on ufs: (docs/DESIGN.md
 * 9.5), and there is no file-side agreement to keep with it.
 * Subarray and darray are expanded with ROMIO's own constructors
 * (ADIO_Type_create_subarray / _darray: the ones ADIOI_Flatten uses, ports of
 * MPICH's, including MPICH's CYCLIC(k) placement on non-last dimensions) and
 * the resulting type is read the same way, so their type maps are ROMIO's by
 * construction.
 *
 * Trees are normalised while they are built: replicated equal nodes at a
 * constant stride become one VEC, adjacent leaves merge, VECs of dense
 * leaves become leaves, and all-leaf lists are recompressed with
 * ddio_node_from_flat (cost: the list's length).
 */
#include "ad_ddio.h"
#include <stdlib.h>
#include <string.h>

#define TYPE_MAX_NODES   (DDIO_DESC_MAX_NODES / 4)
#define TYPE_MAX_NESTING 64     /* constructor nesting we follow */

typedef struct tctx {
    int typemap;                /* MPI's type map (memory), not ROMIO's flattening */
    int64_t budget;             /* nodes we may still create */
    int lbub_set;               /* ROMIO's flat->lb_idx/ub_idx are set */
    int nesting;
    ADIOI_DDIO_Refusal *why;    /* the first refusal, for the caller's log */
} tctx;

/* Give up on the type (the caller falls back to ROMIO's flattened list),
 * remembering the first reason: the innermost, the one a user can fix.
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
    int dense;                  /* ROMIO's "simple" branch takes it whole */
    int zl;                     /* its ROMIO flattening has zero-length entries */
} tres;

/* A run: cnt copies of x, the i-th at off + i * st (st unused if cnt 1). */
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

/* A type ROMIO takes whole: size bytes from its origin. */
static int build_dense(tctx * c, MPI_Datatype t, tres * out)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Count size;

    MPI_Type_size_x(t, &size);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    out->dense = 1;
    if (size == 0) {
        /* MPI_LB / MPI_UB and other named empties: not worth the cases */
        if (is_named(t))
            return refuse(c, "an empty named type (MPI_LB, MPI_UB)");
        out->zl = 1;
        return 0;
    }
    if (size != ext || tlb != 0 || size > INT64_MAX)
        return refuse(c, "a part ROMIO takes whole (named or contiguous) has holes or "
                      "a moved lower bound");
    out->n = ddio_node_leaf((uint64_t) size);
    return out->n ? 0 : -1;
}

/* The type map of a contiguous type: size bytes from its true lb, whatever
 * its lb and extent (ROMIO takes them from the origin: build_dense) */
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
        return build_dense(c, t, out);
    ADIOI_Datatype_iscontig(t, &contig);
    if (contig)
        return c->typemap ? build_contig(t, out) : build_dense(c, t, out);
    return build_combiner(c, t, out);
}

static MPI_Aint extent_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

/* count blocks of bl[i] copies of the child at disp[i] (bytes); bl == NULL:
 * every block has blk copies. Indexed, hindexed and their _block forms. */
static int build_blocks(tctx * c, const tres * ch, MPI_Aint ext, int count, const int *bl,
                        int blk, const MPI_Aint * disp, tres * out)
{
    tseq s = { 0 };
    int64_t off;

    for (int i = 0; i < count; i++) {
        int b = bl ? bl[i] : blk;
        if (b == 0 || !ch->n)
            continue;
        if (__builtin_add_overflow((int64_t) disp[i], ch->off, &off) ||
            seq_add(c, &s, off, (uint64_t) b, ext, ch->n)) {
            seq_free(&s);
            return -1;
        }
    }
    return seq_finish(c, &s, out);
}

/* element displacements (indexed, indexed_block) to bytes */
static MPI_Aint *scaled(const int *d, int n, MPI_Aint ext)
{
    MPI_Aint *a = malloc((size_t) (n + 1) * sizeof(*a));
    for (int i = 0; a && i < n; i++)
        if (__builtin_mul_overflow((MPI_Aint) d[i], ext, &a[i])) {
            free(a);
            return NULL;
        }
    return a;
}

static int any_zero(const int *v, int n)
{
    for (int i = 0; i < n; i++)
        if (v[i] == 0)
            return 1;
    return 0;
}

/* indexed, hindexed, indexed_block, hindexed_block */
static int build_indexed(tctx * c, const tdesc * d, const tres * ch, tres * out)
{
    int n = d->ints[0], blockform = d->comb == MPI_COMBINER_INDEXED_BLOCK ||
        d->comb == MPI_COMBINER_HINDEXED_BLOCK;
    int bytes = d->comb != MPI_COMBINER_INDEXED && d->comb != MPI_COMBINER_INDEXED_BLOCK;
    const int *bl = blockform ? NULL : &d->ints[1];
    int blk = blockform ? d->ints[1] : 0;
    MPI_Aint ext = extent_of(d->types[0]), *disp;
    int rc;

    if (!ch->dense && !c->typemap) {
        /* ROMIO keeps one copy of the child for empty blocks; its
         * indexed/hindexed replication skips zero-length entries and
         * misaligns after them */
        if (n == 0 || (blockform ? blk == 0 : any_zero(bl, n)))
            return refuse(c, "zero blocks of a derived type (ROMIO keeps one copy)");
        if (!blockform && ch->zl)
            return refuse(c, "blocks of a derived type with zero-length pieces (ROMIO "
                          "misplaces what follows them)");
    }
    out->zl = ch->zl || (blockform && blk == 0);
    if (bytes)
        disp = d->adds;
    else if (!(disp = scaled(blockform ? &d->ints[2] : &d->ints[n + 1], n, ext)))
        return -1;
    rc = build_blocks(c, ch, ext, n, bl, blk, disp, out);
    if (!bytes)
        free(disp);
    return rc;
}

static int build_struct(tctx * c, const tdesc * d, tres * out)
{
    int n = d->ints[0], rc = 0;
    tseq s = { 0 };

    for (int i = 0; i < n && !rc; i++) {
        tres f;
        int64_t off;
        rc = build(c, d->types[i], &f);
        if (!rc && !c->typemap && !f.dense && d->ints[1 + i] == 0)
            rc = refuse(c, "a derived field of block length 0 (ROMIO keeps one copy)");
        out->zl |= f.zl;
        if (!rc && f.n && d->ints[1 + i] > 0)
            rc = __builtin_add_overflow((int64_t) d->adds[i], f.off, &off) ||
                seq_add(c, &s, off, (uint64_t) d->ints[1 + i], extent_of(d->types[i]), f.n);
        tres_free(&f);
    }
    if (rc) {
        seq_free(&s);
        return -1;
    }
    return seq_finish(c, &s, out);
}

static int build_resized(tctx * c, const tdesc * d, tres * out)
{
    int first = !c->lbub_set, rc;

    /* ROMIO: the first resized sets the lb/ub markers (zero-length entries)
     * before flattening the child */
    c->lbub_set = 1;
    rc = build(c, d->types[0], out);
    if (!rc && !c->typemap && d->adds[0] != 0 && (first ? !out->dense : out->dense))
        rc = refuse(c, "a lower bound != 0 where ROMIO's flattening moves the data by it");
    out->zl |= first;
    out->dense = 0;
    return rc;
}

/* subarray / darray: ROMIO's own expansion, then that type's combiner (as
 * ADIOI_Flatten, which does not ask whether the expansion is contiguous) */
static int build_array(tctx * c, const tdesc * d, tres * out)
{
    MPI_Datatype t;
    const int *v = d->ints;
    int nd, rc;

    if (d->comb == MPI_COMBINER_SUBARRAY) {
        nd = v[0];
        rc = ADIO_Type_create_subarray(nd, (int *) &v[1], (int *) &v[nd + 1],
                                       (int *) &v[2 * nd + 1], v[3 * nd + 1], d->types[0], &t);
    } else {
        nd = v[2];
        rc = ADIO_Type_create_darray(v[0], v[1], nd, (int *) &v[3], (int *) &v[nd + 3],
                                     (int *) &v[2 * nd + 3], (int *) &v[3 * nd + 3],
                                     v[4 * nd + 3], d->types[0], &t);
    }
    if (rc != MPI_SUCCESS)
        return -1;
    rc = build_combiner(c, t, out);
    MPI_Type_free(&t);
    return rc;
}

/* contiguous, vector, hvector: cnt x (bl copies at extent) at stride */
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
    } else
        st = d->adds[0];
    if (build(c, d->types[0], &ch))
        return tres_free(&ch), -1;
    *out = ch;
    out->dense = 0;
    /* ROMIO: a vector of 0 blocks still emits one; zero copies of a derived
     * child leave one copy */
    if (!c->typemap && ((d->comb != MPI_COMBINER_CONTIGUOUS && cnt == 0) ||
                        (!ch.dense && (cnt == 0 || bl == 0))))
        return tres_free(out), refuse(c, "a count or block length of 0 (ROMIO emits or keeps "
                                      "one block)");
    out->zl |= cnt == 0 || bl == 0;
    if (!ch.n)
        return 0;
    if (cnt == 0 || bl == 0)
        return tres_free(out), 0;
    out->n = mk_vec(c, (uint64_t) cnt, st, mk_vec(c, (uint64_t) bl, ext, ch.n));
    return out->n ? 0 : -1;
}

static int build_combiner(tctx * c, MPI_Datatype t, tres * out)
{
    tdesc d;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (c->nesting >= TYPE_MAX_NESTING)
        return refuse(c, "constructors nested deeper than 64");
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
            rc = build(c, d.types[0], out);
            if (!rc && out->dense && !c->typemap)
                rc = refuse(c, "a dup of a type ROMIO takes whole");
            break;
        case MPI_COMBINER_CONTIGUOUS:
        case MPI_COMBINER_VECTOR:
        case MPI_COMBINER_HVECTOR:
            rc = build_strided(c, &d, out);
            break;
        case MPI_COMBINER_INDEXED:
        case MPI_COMBINER_HINDEXED:
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
            rc = build_struct(c, &d, out);
            break;
        case MPI_COMBINER_RESIZED:
            rc = build_resized(c, &d, out);
            break;
        case MPI_COMBINER_SUBARRAY:
        case MPI_COMBINER_DARRAY:
            rc = build_array(c, &d, out);
            break;
        default:       /* F90 types, Fortran-integer forms: the flat path */
            rc = refuse(c, "a constructor the tree builder does not read");
            break;
    }
    if (rc) {
        refused_in(c, d.comb);
        tres_free(out);
    }
    else
        out->dense = 0;
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

struct ddio_node *ADIOI_DDIO_Tree_from_type(MPI_Datatype t, int typemap, int64_t * base,
                                            ADIOI_DDIO_Refusal * why)
{
    tctx c = {.typemap = typemap,.budget = TYPE_MAX_NODES,.why = why };
    tres r;
    MPI_Count size;
    int contig;

    ADIOI_Datatype_iscontig(t, &contig);
    /* contiguous types never reach the flattening either (callers) */
    if (why)
        *why = (ADIOI_DDIO_Refusal) {.combiner = MPI_COMBINER_NAMED };
    if (contig || build_combiner(&c, t, &r) || !r.n)
        return NULL;
    MPI_Type_size_x(t, &size);
    if (ddio_node_finish(r.n) || r.n->size != (uint64_t) size ||
        __builtin_add_overflow(r.off, r.n->lo, base) ||
        !(r.n = node_shift(r.n, -r.n->lo)) || ddio_node_finish(r.n) ||
        node_depth(r.n) > DDIO_DESC_MAX_DEPTH || node_count(r.n) > TYPE_MAX_NODES) {
        refuse(&c, "a tree that does not fit a descriptor (depth, nodes, size)");
        ddio_node_free(r.n);
        return NULL;
    }
    return r.n;
}

/* ---- romio_ddio_check_desc: the type-built tree against the flat one ----- */

typedef struct piece_log {
    int64_t *a;
    uint64_t *l;
    size_t n, cap;
    int oom;
} piece_log;

static int log_piece(void *arg, int64_t addr, uint64_t len, uint64_t s)
{
    piece_log *p = arg;
    if (p->n && p->a[p->n - 1] + (int64_t) p->l[p->n - 1] == addr) {
        p->l[p->n - 1] += len;  /* merged: trees may cut pieces differently */
        return 0;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 64;
        int64_t *a = realloc(p->a, cap * sizeof(*a));
        uint64_t *l = a ? realloc(p->l, cap * sizeof(*l)) : NULL;
        if (a)
            p->a = a;
        if (!a || !l)
            return p->oom = 1;
        p->l = l;
        p->cap = cap;
    }
    p->a[p->n] = addr;
    p->l[p->n++] = len;
    return 0;
}

static void log_tree(piece_log * p, const struct ddio_node *root, int64_t base)
{
    struct ddio_desc d = {.disp = base,.extent = 1,.root = (struct ddio_node *) root,
        .start = 0,.length = root->size
    };
    ddio_desc_walk_stream(&d, 0, d.length, log_piece, p);
}

int ADIOI_DDIO_Check_tree(MPI_Datatype t, const struct ddio_node *root, int64_t base,
                          ADIOI_DDIO_Err * e)
{
    piece_log a = { 0 }, b = { 0 };
    int64_t fbase;
    int added;
    struct ddio_node *flat = ADIOI_DDIO_Tree_from_flat(t, ADIOI_DDIO_Flat_find(t, &added),
                                                        &fbase);
    size_t i = 0;
    int rc = 0;

    /* fault injection for the test proving this check fires:
     * DDIO_TEST_TREE_SKEW=N compares a tree shifted by N bytes */
    const char *skew = getenv("DDIO_TEST_TREE_SKEW");
    if (skew)
        base += atoll(skew);
    if (flat) {
        log_tree(&a, root, base);
        log_tree(&b, flat, fbase);
        while (i < a.n && i < b.n && a.a[i] == b.a[i] && a.l[i] == b.l[i])
            i++;
    }
    if (!flat || a.oom || b.oom)
        rc = -1, ddio_err_set(e, ENOMEM, "ddio: romio_ddio_check_desc: out of memory");
    else if (i < a.n || i < b.n) {
        rc = -1;
        ddio_err_set(e, ADIOI_DDIO_EINTERN, "ddio: romio_ddio_check_desc: the datatype's "
                           "tree differs from ROMIO's flattening at piece %zu of %zu: "
                           "[%lld, +%llu) vs [%lld, +%llu)", i, b.n,
                           i < a.n ? (long long) a.a[i] : -1LL,
                           i < a.n ? (unsigned long long) a.l[i] : 0ULL,
                           i < b.n ? (long long) b.a[i] : -1LL,
                           i < b.n ? (unsigned long long) b.l[i] : 0ULL);
    }
    ADIOI_DDIO_Flat_done(t, added);
    ddio_node_free(flat);
    free(a.a);
    free(a.l);
    free(b.a);
    free(b.l);
    return rc;
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
