/* romio_ddio_check_desc=enable (a debugging hint): before every transfer
 * described by the file view, walk the descriptor we are about to send and
 * compare it, byte range by byte range, with the pieces the view holds by
 * MPI's type map: the filetype's pieces, listed here by each constructor's
 * definition in the MPI standard (enum_type), tiled from disp, starting at
 * the call's position, the way ROMIO's ADIOI_Calc_my_off_len walks a
 * flattened list. Every tree built from a type (a view's, memory's) is
 * compared with the same list when it is built (Check_type_tree).
 *
 * The reference is derived independently of ad_ddio_view.c and
 * ad_ddio_type.c (no tree, no compression, no view_bytes_before), and of
 * ROMIO's flattening and MPI's datatype engine (MPICH 4.0.2's own darray
 * departs from the standard for some CYCLIC(k) distributions over more
 * than one dimension: MPI_Pack is no reference there), so a bug in the
 * tree builder, the compression, the stream start for the individual file
 * pointer or the walker fails the call with MPI_ERR_INTERN and names the
 * first stream byte that differs, instead of silently moving the wrong
 * bytes. Cost: the filetype's pieces per call; debug only (a type of more
 * than 2^24 pieces is not checked).
 *
 * ReadContig/WriteContig are not checked: ROMIO hands them an absolute byte
 * offset, which is the descriptor. */
#include "ad_ddio.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ref_list {
    int64_t *indices, *blocklens;
    MPI_Count count, cap;       /* count -1: out of memory, or too many */
} ref_list;

#define REF_MAX_PIECES (1 << 24)        /* longer lists are not checked */

static void ref_free(ref_list * r)
{
    free(r->indices);
    free(r->blocklens);
    memset(r, 0, sizeof(*r));
}

/* one more piece, merged with the last where they abut */
static int ref_add(ref_list * r, int64_t off, int64_t len)
{
    if (len <= 0 || r->count < 0)
        return r->count < 0;
    if (r->count && r->indices[r->count - 1] + r->blocklens[r->count - 1] == off) {
        r->blocklens[r->count - 1] += len;
        return 0;
    }
    if (r->count == r->cap) {
        MPI_Count cap = r->cap ? 2 * r->cap : 64;
        int64_t *a = cap <= REF_MAX_PIECES ? realloc(r->indices, cap * sizeof(*a)) : NULL;
        int64_t *b = a ? realloc(r->blocklens, cap * sizeof(*b)) : NULL;
        if (a)
            r->indices = a;
        if (!b) {
            r->count = -1;
            return 1;
        }
        r->blocklens = b;
        r->cap = cap;
    }
    r->indices[r->count] = off;
    r->blocklens[r->count++] = len;
    return 0;
}

static int list_piece(void *arg, int64_t addr, uint64_t len, uint64_t s)
{
    (void) s;
    return ref_add(arg, addr, (int64_t) len);
}

/* ---- the reference: a type's pieces by the MPI standard's definitions ----
 *
 * Written apart from ad_ddio_type.c's tree builder (no trees, no
 * compression: every piece of the type map in order, each constructor by
 * its definition), so the two check each other; one element of t, the
 * pieces relative to t's origin. */

static MPI_Aint ext_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

static int enum_at(MPI_Datatype t, int64_t at, ref_list * r, int depth);

/* this rank's element indices of one darray dimension, ascending (n: g) */
static int64_t dim_indices(int g, int dist, int darg, int p, int coord, int64_t * out)
{
    int64_t n = 0, b;
    if (dist == MPI_DISTRIBUTE_NONE) {
        for (int64_t i = 0; i < g; i++)
            out[n++] = i;
        return n;
    }
    if (dist == MPI_DISTRIBUTE_BLOCK) {
        b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
        for (int64_t i = coord * b; i < (coord + 1) * b && i < g; i++)
            out[n++] = i;
        return n;
    }
    b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    for (int64_t s = coord * b; s < g; s += p * b)
        for (int64_t i = s; i < s + b && i < g; i++)
            out[n++] = i;
    return n;
}

/* the elements of an nd-array of `sizes` at the index tuples idx (per
 * dimension), the fastest dimension varying fastest */
static int enum_array(MPI_Datatype old, int64_t at, int nd, const int *sizes, int corder,
                      int64_t * const *idx, const int64_t * cnt, ref_list * r, int depth)
{
    int64_t st[32], pos[32] = { 0 }, s = 1, ext = ext_of(old);
    for (int j = 0; j < nd; j++) {
        int k = corder ? nd - 1 - j : j;
        st[k] = s;
        s *= sizes[k];
        if (!cnt[k])
            return 0;
    }
    for (;;) {
        int64_t lin = 0;
        for (int k = 0; k < nd; k++)
            lin += idx[k][pos[k]] * st[k];
        if (enum_at(old, at + lin * ext, r, depth + 1))
            return -1;
        int k = corder ? nd - 1 : 0;
        while (++pos[k] == cnt[k]) {
            pos[k] = 0;
            k += corder ? -1 : 1;
            if (k < 0 || k >= nd)
                return 0;
        }
    }
}

static int enum_at(MPI_Datatype t, int64_t at, ref_list * r, int depth)
{
    int ni, na, nt, comb, contig, rc = 0;
    MPI_Aint tlb, text;
    MPI_Count size;

    MPI_Type_size_x(t, &size);
    if (size == 0 || r->count < 0)
        return r->count < 0;
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    MPI_Type_get_true_extent(t, &tlb, &text);
    if (comb == MPI_COMBINER_NAMED || comb == MPI_COMBINER_F90_REAL ||
        comb == MPI_COMBINER_F90_COMPLEX || comb == MPI_COMBINER_F90_INTEGER) {
        int64_t *o, *l;
        size_t n;
        if (size == text)
            return ref_add(r, at + tlb, size);
        if (ADIOI_DDIO_Type_pieces(t, &o, &l, &n))
            return r->count = -1, 1;
        for (size_t i = 0; i < n; i++)
            ref_add(r, at + o[i], l[i]);
        free(o);
        free(l);
        return r->count < 0;
    }
    ADIOI_Datatype_iscontig(t, &contig);
    if (contig)
        return ref_add(r, at + tlb, size);
    if (depth > 1024)
        return r->count = -1, 1;
    int *ints = malloc((size_t) (ni + 1) * sizeof(int));
    MPI_Aint *adds = malloc((size_t) (na + 1) * sizeof(MPI_Aint));
    MPI_Datatype *types = malloc((size_t) (nt + 1) * sizeof(MPI_Datatype));
    if (!ints || !adds || !types) {
        free(ints);
        free(adds);
        free(types);
        return r->count = -1, 1;
    }
    MPI_Type_get_contents(t, ni, na, nt, ints, adds, types);
    int64_t e0 = nt ? ext_of(types[0]) : 0;
    switch (comb) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        rc = enum_at(types[0], at, r, depth + 1);
        break;
    case MPI_COMBINER_CONTIGUOUS:
        for (int i = 0; i < ints[0] && !rc; i++)
            rc = enum_at(types[0], at + i * e0, r, depth + 1);
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_HVECTOR_INTEGER:{
            int64_t st = comb == MPI_COMBINER_VECTOR ? ints[2] * e0 :
                comb == MPI_COMBINER_HVECTOR ? adds[0] : ints[2];
            for (int i = 0; i < ints[0] && !rc; i++)
                for (int j = 0; j < ints[1] && !rc; j++)
                    rc = enum_at(types[0], at + i * st + j * e0, r, depth + 1);
            break;
        }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_HINDEXED_INTEGER:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:{
            int n = ints[0], blockform = comb == MPI_COMBINER_INDEXED_BLOCK ||
                comb == MPI_COMBINER_HINDEXED_BLOCK;
            for (int i = 0; i < n && !rc; i++) {
                int bl = blockform ? ints[1] : ints[1 + i];
                int64_t d = comb == MPI_COMBINER_INDEXED ? ints[n + 1 + i] * e0 :
                    comb == MPI_COMBINER_INDEXED_BLOCK ? ints[2 + i] * e0 :
                    comb == MPI_COMBINER_HINDEXED_INTEGER ? ints[n + 1 + i] : adds[i];
                for (int j = 0; j < bl && !rc; j++)
                    rc = enum_at(types[0], at + d + j * e0, r, depth + 1);
            }
            break;
        }
    case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_STRUCT_INTEGER:{
            int n = ints[0];
            for (int i = 0; i < n && !rc; i++) {
                int64_t d = comb == MPI_COMBINER_STRUCT ? adds[i] : ints[n + 1 + i];
                for (int j = 0; j < ints[1 + i] && !rc; j++)
                    rc = enum_at(types[i], at + d + j * ext_of(types[i]), r, depth + 1);
            }
            break;
        }
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_DARRAY:{
            int sub = comb == MPI_COMBINER_SUBARRAY, nd = sub ? ints[0] : ints[2];
            const int *sizes = sub ? &ints[1] : &ints[3];
            int corder = (sub ? ints[3 * nd + 1] : ints[4 * nd + 3]) == MPI_ORDER_C;
            int64_t *idx[32] = { 0 }, cnt[32];
            int rest = sub ? 1 : ints[0], rk = sub ? 0 : ints[1];
            if (nd <= 0 || nd > 32) {
                rc = 1;
                r->count = -1;
                break;
            }
            for (int k = 0; k < nd && !rc; k++) {
                idx[k] = malloc(((size_t) sizes[k] + 1) * sizeof(int64_t));
                if (!idx[k]) {
                    rc = 1;
                    r->count = -1;
                    break;
                }
                if (sub) {
                    for (cnt[k] = 0; cnt[k] < ints[nd + 1 + k]; cnt[k]++)
                        idx[k][cnt[k]] = ints[2 * nd + 1 + k] + cnt[k];
                } else {        /* the process grid in row-major order */
                    int ps = ints[3 * nd + 3 + k];
                    rest /= ps;
                    int coord = rk / rest;
                    rk %= rest;
                    cnt[k] = dim_indices(sizes[k], ints[nd + 3 + k], ints[2 * nd + 3 + k], ps,
                                         coord, idx[k]);
                }
            }
            if (!rc)
                rc = enum_array(types[0], at, nd, sizes, corder, idx, cnt, r, depth);
            for (int k = 0; k < nd; k++)
                free(idx[k]);
            break;
        }
    default:
        r->count = -1;
        rc = 1;
        break;
    }
    for (int i = 0; i < nt; i++) {
        int a, b, c, cb;
        MPI_Type_get_envelope(types[i], &a, &b, &c, &cb);
        if (cb != MPI_COMBINER_NAMED)
            MPI_Type_free(&types[i]);
    }
    free(ints);
    free(adds);
    free(types);
    return rc || r->count < 0;
}

/* t's pieces (one element, relative to its origin); 0, or -1 (too many,
 * out of memory, a constructor not read) */
static int enum_type(MPI_Datatype t, ref_list * r)
{
    memset(r, 0, sizeof(*r));
    if (enum_at(t, 0, r, 0) || r->count < 0) {
        ref_free(r);
        return -1;
    }
    return 0;
}

typedef struct ref_iter {
    const ref_list *flat;
    int64_t disp, extent;
    MPI_Count j;                /* current piece */
    int64_t tile;               /* current filetype instance */
    int64_t off;                /* next file offset the view holds */
    int64_t left;               /* bytes left in the current block */
} ref_iter;

/* position at the start of block j of the current tile, skipping empty
 * blocks (the filetype has data, so this ends) */
static void ref_load(ref_iter * r)
{
    while (r->flat->blocklens[r->j] == 0) {
        if (++r->j == r->flat->count) {
            r->j = 0;
            r->tile++;
        }
    }
    r->off = r->disp + r->tile * r->extent + r->flat->indices[r->j];
    r->left = r->flat->blocklens[r->j];
}

static void ref_next_block(ref_iter * r)
{
    if (++r->j == r->flat->count) {
        r->j = 0;
        r->tile++;
    }
    ref_load(r);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* explicit offset: `bytes` view data bytes precede the first one accessed */
static void ref_seek_bytes(ref_iter * r, uint64_t bytes, uint64_t ftsize)
{
    uint64_t within = bytes % ftsize, sum = 0;
    r->tile = (int64_t) (bytes / ftsize);
    for (r->j = 0; r->j < r->flat->count; r->j++) {
        uint64_t bl = (uint64_t) r->flat->blocklens[r->j];
        if (sum + bl > within)
            break;
        sum += bl;
    }
    r->off = r->disp + r->tile * r->extent + r->flat->indices[r->j] + (int64_t) (within - sum);
    r->left = r->flat->blocklens[r->j] - (int64_t) (within - sum);
}

/* individual pointer: the first view byte at or after file offset fp */
static void ref_seek_offset(ref_iter * r, int64_t fp)
{
    const ref_list *fl = r->flat;
    MPI_Count first = 0;
    while (fl->blocklens[first] == 0)
        first++;
    r->tile = floor_div(fp - r->disp - fl->indices[first], r->extent);
    int64_t w = fp - r->disp - r->tile * r->extent;
    for (r->j = first; r->j < fl->count; r->j++) {
        if (fl->blocklens[r->j] == 0 || fl->indices[r->j] + fl->blocklens[r->j] <= w)
            continue;
        int64_t skip = w > fl->indices[r->j] ? w - fl->indices[r->j] : 0;
        r->off = r->disp + r->tile * r->extent + fl->indices[r->j] + skip;
        r->left = fl->blocklens[r->j] - skip;
        return;
    }
    r->j = 0;
    r->tile++;
    ref_load(r);
}

typedef struct cmp_state {
    ref_iter r;
    uint64_t bad_stream;
    int64_t bad_addr, want;
} cmp_state;

static int cmp_piece(void *arg, int64_t addr, uint64_t len, uint64_t stream_off)
{
    cmp_state *c = arg;
    while (len > 0) {
        if (c->r.left == 0)
            ref_next_block(&c->r);
        if (c->r.off != addr) {
            c->bad_stream = stream_off;
            c->bad_addr = addr;
            c->want = c->r.off;
            return 1;
        }
        uint64_t n = len < (uint64_t) c->r.left ? len : (uint64_t) c->r.left;
        c->r.off += (int64_t) n;
        c->r.left -= (int64_t) n;
        addr += (int64_t) n;
        stream_off += n;
        len -= n;
    }
    return 0;
}

int ADIOI_DDIO_Check_desc(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
                          const struct ddio_desc *d, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    cmp_state c;
    MPI_Aint lb, extent;
    MPI_Count ftsize;
    int contig;
    ref_list ref = { 0 };

    if (f->check_desc != ADIOI_HINT_ENABLE || d->length == 0)
        return 0;
    memset(&c, 0, sizeof(c));
    MPI_Type_size_x(fd->filetype, &ftsize);
    MPI_Type_get_extent(fd->filetype, &lb, &extent);
    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    if (contig) {
        /* ROMIO: a contiguous filetype is one piece from disp (+ offset),
         * as long as the request: the descriptor never walks past it */
        c.r.off = file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind
            : fd->disp + (ADIO_Offset) fd->etype_size * offset;
        c.r.left = (int64_t) d->length;
    } else {
        if (enum_type(fd->filetype, &ref) || ref.count == 0)
            return 0;           /* (too many pieces to list: not checked) */
        c.r.flat = &ref;
        c.r.disp = fd->disp;
        c.r.extent = extent;
        if (file_ptr_type == ADIO_INDIVIDUAL)
            ref_seek_offset(&c.r, fd->fp_ind);
        else
            ref_seek_bytes(&c.r, (uint64_t) offset * (uint64_t) fd->etype_size,
                           (uint64_t) ftsize);
    }
    /* Fault injection for the test that proves this check fires:
     * DDIO_TEST_DESC_SKEW=N compares a descriptor shifted by N bytes. */
    struct ddio_desc dd = *d;
    const char *skew = getenv("DDIO_TEST_DESC_SKEW");
    if (skew)
        dd.disp += atoll(skew);
    int bad = ddio_desc_walk_stream(&dd, 0, dd.length, cmp_piece, &c);
    ref_free(&ref);
    if (!bad)
        return 0;
    ddio_err_set(e, ADIOI_DDIO_EINTERN, "ddio: romio_ddio_check_desc: stream byte %llu "
                       "of %llu is at file offset %lld in the descriptor, the view's type "
                       "map says %lld", (unsigned long long) c.bad_stream,
                       (unsigned long long) d->length, (long long) c.bad_addr,
                       (long long) c.want);
    return -1;
}

/* ---- trees of types (views, memory): against their pieces ---- */

int ADIOI_DDIO_Check_type_tree(MPI_Datatype t, const struct ddio_node *root, int64_t base,
                               ADIOI_DDIO_Err * e)
{
    ref_list ref = { 0 }, got = { 0 };
    /* fault injection for the tests proving this check fires:
     * DDIO_TEST_TREE_SKEW=N compares a tree shifted by N bytes */
    const char *skew = getenv("DDIO_TEST_TREE_SKEW");
    MPI_Count i = 0;
    int64_t at = 0;

    if (enum_type(t, &ref))
        return 0;               /* (too many pieces to list: not checked) */
    if (skew)
        base += atoll(skew);
    struct ddio_desc d = {.disp = base,.extent = 1,.root = (struct ddio_node *) root,
        .start = 0,.length = root->size
    };
    if (ddio_desc_walk_stream(&d, 0, d.length, list_piece, &got))
        got.count = -1;
    if (got.count < 0 || ref.count < 0)
        ddio_err_set(e, ENOMEM, "ddio: romio_ddio_check_desc: out of memory");
    else {
        while (i < ref.count && i < got.count && ref.indices[i] == got.indices[i] &&
               ref.blocklens[i] == got.blocklens[i])
            at += ref.blocklens[i++];
        if (i < ref.count || i < got.count)
            ddio_err_set(e, ADIOI_DDIO_EINTERN, "ddio: romio_ddio_check_desc: the datatype's "
                         "tree differs from its type map at stream byte %lld, piece %lld: "
                         "[%lld, +%lld) vs [%lld, +%lld)", (long long) at, (long long) i,
                         i < got.count ? (long long) got.indices[i] : -1LL,
                         i < got.count ? (long long) got.blocklens[i] : 0LL,
                         i < ref.count ? (long long) ref.indices[i] : -1LL,
                         i < ref.count ? (long long) ref.blocklens[i] : 0LL);
    }
    ref_free(&ref);
    ref_free(&got);
    return e->errnum ? -1 : 0;
}
