/* Distribution descriptors of a request: its file view and its memory.
 *
 * File side: the file view (disp + tiled filetype) compressed to a
 * nested-strided tree once per view (cached in the fd; every MPI_File_set_view
 * passes through our SetInfo, which bumps view_gen), plus where this call's
 * stream starts in the view and how long it is.
 * Memory side: the memory type's tree, so PUT/GET data moves straight between
 * the socket and the user's buffer.
 *
 * Trees are built with addresses relative to the type's first data byte
 * (`base`), which is folded into the descriptor's disp: the tree then needs no
 * leading offset whatever ddio_node_from_flat does with one. */
#include "ad_ddio.h"
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

void ADIOI_DDIO_View_free(ADIOI_DDIO_View * v)
{
    if (v->root)
        ddio_node_free(v->root);
    memset(v, 0, sizeof(*v));
}

/* ---- types the tree builder refused: counted, logged once per type ---- */

static _Atomic long flat_types;         /* types described from the flat list */
static int seen_keyval = MPI_KEYVAL_INVALID;

long ADIOI_DDIO_Flat_types(void)
{
    return flat_types;
}

static const char *combiner_name(int comb)
{
    static const struct { int c; const char *n; } names[] = {
        {MPI_COMBINER_NAMED, "the type as a whole"}, {MPI_COMBINER_DUP, "dup"},
        {MPI_COMBINER_CONTIGUOUS, "contiguous"}, {MPI_COMBINER_VECTOR, "vector"},
        {MPI_COMBINER_HVECTOR, "hvector"}, {MPI_COMBINER_INDEXED, "indexed"},
        {MPI_COMBINER_HINDEXED, "hindexed"}, {MPI_COMBINER_INDEXED_BLOCK, "indexed_block"},
        {MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block"}, {MPI_COMBINER_STRUCT, "struct"},
        {MPI_COMBINER_SUBARRAY, "subarray"}, {MPI_COMBINER_DARRAY, "darray"},
        {MPI_COMBINER_RESIZED, "resized"}, {MPI_COMBINER_F90_REAL, "f90_real"},
        {MPI_COMBINER_F90_COMPLEX, "f90_complex"}, {MPI_COMBINER_F90_INTEGER, "f90_integer"},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (names[i].c == comb)
            return names[i].n;
    return "a Fortran-integer form";
}

/* The user's type behind set_view's private copies (ad_ddio_pos.c keeps
 * contiguous(1, t)), so a view set again with the same type is not new.
 * Returns a reference the caller frees when *owned. */
static MPI_Datatype user_type(MPI_Datatype t, int *owned)
{
    int ni, na, nt, comb, cnt;
    MPI_Aint a;
    MPI_Datatype child;

    *owned = 0;
    for (;;) {
        MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
        if (comb != MPI_COMBINER_CONTIGUOUS)
            return t;
        MPI_Type_get_contents(t, 1, 0, 1, &cnt, &a, &child);
        MPI_Type_get_envelope(child, &ni, &na, &nt, &comb);
        if (cnt != 1 || comb == MPI_COMBINER_NAMED) {
            if (comb != MPI_COMBINER_NAMED)
                MPI_Type_free(&child);
            return t;
        }
        if (*owned)
            MPI_Type_free(&t);
        t = child;
        *owned = 1;
    }
}

/* One more type described from a flattened list (its pieces, by MPI's type
 * map): counted (per process, reported by get_info as ddio_flat_types), and
 * the first time for this type (an attribute on it, gone with it) a
 * warning saying where the tree builder gave up: the type then costs 16
 * bytes per contiguous piece on this rank while it is described.
 * The warning only with DDIO_VERBOSE=1: a library writing to stderr
 * unasked breaks programs (and test suites, MPICH's among them) that judge
 * their output. */
static void flat_fallback(ADIO_File fd, MPI_Datatype t, const ADIOI_DDIO_Refusal * why)
{
    int owned, flag, ni, na, nt, comb;
    void *val;
    char n[32];
    MPI_Datatype u = user_type(t, &owned);
    MPI_Count size;

    if (seen_keyval == MPI_KEYVAL_INVALID)
        MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &seen_keyval,
                               NULL);
    MPI_Type_get_attr(u, seen_keyval, &val, &flag);
    if (!flag) {
        MPI_Type_set_attr(u, seen_keyval, NULL);
        snprintf(n, sizeof(n), "%ld", ++flat_types);
        MPI_Type_size_x(u, &size);
        MPI_Type_get_envelope(u, &ni, &na, &nt, &comb);
        if (getenv("DDIO_VERBOSE") && atoi(getenv("DDIO_VERBOSE")) > 0)
            fprintf(stderr, "ddio: a datatype (%s, %lld bytes) is described from its flattened "
                "pieces, 16 bytes per contiguous piece: the tree builder gave up in %s: %s\n",
                combiner_name(comb), (long long) size, combiner_name(why->combiner),
                    why->reason ? why->reason : "out of memory");
        ADIOI_Info_set(fd->info, "ddio_flat_types", n);
    }
    if (owned)
        MPI_Type_free(&u);
}

/* The tree of t by MPI's type map: from its constructors, or where the
 * builder gives up (a tree over the node budget or the descriptor's depth)
 * from its pieces; with romio_ddio_type_desc=disable (or a constructor the
 * builder cannot read) from ROMIO's flattened list, as ROMIO places it.
 * *from_type: from its constructors; *by_map: by the type map. */
static struct ddio_node *tree_of(ADIO_File fd, MPI_Datatype t, int64_t * base, int *from_type,
                                 int *by_map)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    ADIOI_DDIO_Refusal why;
    struct ddio_node *root = NULL;
    MPI_Count size;

    *from_type = *by_map = 0;
    if (f->type_desc != ADIOI_HINT_DISABLE) {
        root = ADIOI_DDIO_Tree_from_type(t, base, &why);
        *from_type = root != NULL;
        MPI_Type_size_x(t, &size);
        if (!root && size > 0) {
            flat_fallback(fd, t, &why);
            root = ADIOI_DDIO_Tree_from_pieces(t, base);
        }
        *by_map = root != NULL;
    }
    if (!root) {
        int added;
        root = ADIOI_DDIO_Tree_from_flat(t, ADIOI_DDIO_Flat_find(t, &added), base);
        ADIOI_DDIO_Flat_done(t, added);
    }
    return root;
}

/* romio_ddio_check_desc: a tree by the type map must have the type map's
 * pieces (ad_ddio_check.c; ROMIO's placement, romio_ddio_type_desc=
 * disable, is not checked) */
static int tree_check(ADIOI_DDIO_File * f, MPI_Datatype t, const struct ddio_node *root,
                      int64_t base, int by_map, ADIOI_DDIO_Err * e)
{
    if (f->check_desc != ADIOI_HINT_ENABLE || !by_map)
        return 0;
    return ADIOI_DDIO_Check_type_tree(t, root, base, e) ? -ADIOI_DDIO_EINTERN : 0;
}

/* The cached tree of the current view. Every set_view bumps view_gen and
 * gives fd->filetype a new copy, so (gen, filetype) identify the view: the
 * type path never needs ROMIO's flattened list. */
int ADIOI_DDIO_View_get(ADIO_File fd, ADIOI_DDIO_View ** out, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    ADIOI_DDIO_View *v = &f->view;
    MPI_Aint lb, extent;
    MPI_Count size;
    int rc;

    *out = v;
    if (v->valid && v->gen == f->view_gen && v->filetype == fd->filetype)
        return 0;
    ADIOI_DDIO_View_free(v);
    MPI_Type_get_extent(fd->filetype, &lb, &extent);
    MPI_Type_size_x(fd->filetype, &size);
    v->root = tree_of(fd, fd->filetype, &v->base, &v->from_type, &v->by_map);
    if (!v->root)
        return -ENOMEM;
    ADIOI_Info_set(fd->info, "ddio_desc_builder", v->from_type ? "type" : "flat");
    if ((rc = tree_check(f, fd->filetype, v->root, v->base, v->by_map, e)))
        return rc;
    v->extent = extent;
    v->size = (uint64_t) size;
    /* a view whose pieces overlap (set_view takes one for reading, as MPI
     * allows): the servers move only monotone descriptors */
    struct ddio_desc one = {.disp = 0,.extent = 1,.root = v->root,.start = 0,
        .length = v->root->size
    };
    v->monotone = extent > 0 && !ddio_desc_check_monotone(&one);
    /* a tile's data may stick out of [lb, lb + extent) (PnetCDF's header
     * bytes below Open MPI's sticky lb): then the next tile's first byte
     * comes before this tile's last, and only calls within a tile are in
     * order (view_call_in_order) */
    v->tiles_apart = v->monotone && v->root->hi - v->root->lo <= extent;
    v->gen = f->view_gen;
    v->filetype = fd->filetype;
    v->valid = 1;
    return 0;
}

typedef struct flat_fill {
    ADIO_Offset *bl, *ix;
    MPI_Count n;
} flat_fill;

static int flat_piece(void *arg, int64_t addr, uint64_t len, uint64_t s)
{
    flat_fill *f = arg;
    (void) s;
    if (f->bl) {
        f->ix[f->n] = addr;
        f->bl[f->n] = (ADIO_Offset) len;
    }
    f->n++;
    return 0;
}

int ADIOI_DDIO_View_flat(ADIO_File fd, ADIO_Offset ** blocklens, ADIO_Offset ** indices,
                         MPI_Count * count, int one_alloc)
{
    ADIOI_DDIO_Err e = { 0 };
    ADIOI_DDIO_View *v;
    MPI_Count size;
    int contig;
    flat_fill f = { 0 };

    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    MPI_Type_size_x(fd->filetype, &size);
    if (contig || size == 0 || ADIOI_DDIO_View_get(fd, &v, &e))
        return -1;
    struct ddio_desc tile = {.disp = v->base,.extent = 1,.root = v->root,.start = 0,
        .length = v->size
    };
    ddio_desc_walk_stream(&tile, 0, tile.length, flat_piece, &f);
    if (one_alloc) {
        f.bl = ADIOI_Calloc(2 * f.n, sizeof(ADIO_Offset));
        f.ix = f.bl + f.n;
    } else {
        f.bl = ADIOI_Calloc(f.n, sizeof(ADIO_Offset));
        f.ix = ADIOI_Calloc(f.n, sizeof(ADIO_Offset));
    }
    *count = f.n;
    f.n = 0;
    ddio_desc_walk_stream(&tile, 0, tile.length, flat_piece, &f);
    *blocklens = f.bl;
    *indices = f.ix;
    return 0;
}

/* The tile is the first whose data end at or after rel, as ROMIO's
 * ADIOI_Get_position walks its list: where tiles stick out of the extent
 * (their data overlap the next tile's span), a position just past a tile's
 * last byte is the end of that tile, not a place inside the next. For
 * tiles apart it is the tile rel falls in, or the next one's start. */
uint64_t ADIOI_DDIO_View_bytes_before(const ADIOI_DDIO_View * v, int64_t rel)
{
    int64_t t;
    struct ddio_desc tile = {.disp = 0,.extent = v->extent,.root = v->root,
        .start = 0,.length = v->size
    };
    if (rel <= 0)
        return 0;
    t = rel <= v->root->hi ? 0 : (rel - v->root->hi + v->extent - 1) / v->extent;
    return (uint64_t) t * v->size + ddio_desc_stream_before(&tile, rel - t * v->extent);
}

/* Whether a call's stream through view v is in file order: always where
 * the tiles are apart; else only within one tile (its pieces are in order,
 * but the next tile's first byte lies before its last). */
static int view_call_in_order(const ADIOI_DDIO_View * v, const struct ddio_desc *d)
{
    if (v->tiles_apart || d->length == 0)
        return 1;
    return d->start / v->size == (d->start + d->length - 1) / v->size;
}

static int leaf_desc(struct ddio_desc *d, int64_t off, uint64_t len)
{
    d->disp = off;
    d->extent = (int64_t) len;
    d->root = ddio_node_leaf(len);
    d->start = 0;
    d->length = len;
    return d->root ? 0 : -ENOMEM;
}

int ADIOI_DDIO_File_desc(ADIO_File fd, int file_ptr_type, ADIO_Offset offset, uint64_t len,
                         struct ddio_desc *d, int *owns_root, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_View *v;
    int contig, rc;

    memset(d, 0, sizeof(*d));
    *owns_root = 0;
    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    if (contig) {
        /* ROMIO's convention: a contiguous filetype is the bytes from disp */
        int64_t off = file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind
            : fd->disp + (ADIO_Offset) fd->etype_size * offset;
        *owns_root = 1;
        return leaf_desc(d, off, len);
    }
    if ((rc = ADIOI_DDIO_View_get(fd, &v, e)))
        return rc;
    if (!v->monotone) {
        ddio_err_set(e, EOPNOTSUPP, "ddio: the file view's filetype overlaps itself (MPI "
                     "allows that for reading): ddio reads only through views whose pieces "
                     "do not overlap");
        return -EOPNOTSUPP;
    }
    d->disp = fd->disp + v->base;
    d->extent = v->extent;
    d->root = v->root;
    d->length = len;
    d->start = file_ptr_type == ADIO_INDIVIDUAL ? ADIOI_DDIO_View_bytes_before(v, fd->fp_ind - d->disp)
        : (uint64_t) offset *(uint64_t) fd->etype_size;
    if (!view_call_in_order(v, d)) {
        /* MPI asks the view's displacements to increase; set_view took
         * the view because each tile's do (as ROMIO does) */
        ddio_err_set(e, EINVAL, "ddio: the call reaches into the next tile of the "
                     "filetype, whose data start before this tile's end (the filetype's "
                     "data lie outside its [lb, lb + extent)): the view's displacements "
                     "would decrease; calls within one tile are taken");
        return -EINVAL;
    }
    return 0;
}

int ADIOI_DDIO_Contig_desc(struct ddio_desc *d, int64_t off, uint64_t len)
{
    memset(d, 0, sizeof(*d));
    return leaf_desc(d, off, len);
}

char *ADIOI_DDIO_Contig_mem(ADIO_File fd, const void *buf, MPI_Datatype t)
{
    MPI_Aint tlb, text;
    if (((ADIOI_DDIO_File *) fd->fs_ptr)->type_desc == ADIOI_HINT_DISABLE)
        return (char *) buf;
    /* the usual named types start at 0 (asking costs an 8-byte call 6 %) */
    if (t == MPI_BYTE || t == MPI_CHAR || t == MPI_INT || t == MPI_DOUBLE || t == MPI_FLOAT
        || t == MPI_LONG || t == MPI_LONG_LONG || t == MPI_UNSIGNED_CHAR)
        return (char *) buf;
    MPI_Type_get_true_extent(t, &tlb, &text);
    return (char *) buf + tlb;
}

int ADIOI_DDIO_Mem_init(ADIO_File fd, ADIOI_DDIO_Mem * m, const void *buf, int count,
                        MPI_Datatype datatype, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    MPI_Aint lb, extent;
    MPI_Count size;
    int64_t base = 0;
    int from_type, by_map, rc;

    memset(m, 0, sizeof(*m));
    m->buf = (char *) buf;
    ADIOI_Datatype_iscontig(datatype, &m->contig);
    if (m->contig) {
        m->buf = ADIOI_DDIO_Contig_mem(fd, buf, datatype);
        return 0;
    }
    MPI_Type_get_extent(datatype, &lb, &extent);
    MPI_Type_size_x(datatype, &size);
    /* per call, but the type path costs the type's description, not its
     * pieces (and ROMIO caches the flattened list on the type) */
    m->desc.root = tree_of(fd, datatype, &base, &from_type, &by_map);
    if (!m->desc.root)
        return -ENOMEM;
    if (f->mem_builder != 1 + from_type) {      /* an info update per call is not free */
        f->mem_builder = 1 + from_type;
        ADIOI_Info_set(fd->info, "ddio_mem_builder", from_type ? "type" : "flat");
    }
    if ((rc = tree_check(f, datatype, m->desc.root, base, by_map, e)))
        return rc;
    m->desc.disp = base;
    /* any extent MPI allows: zero (count copies of the same bytes, e.g. IOR's
     * resized(contig, 0, 0) for writes) or negative; the memory walkers
     * (ddio_desc_gather / _scatter) place tile t at disp + t * extent */
    m->desc.extent = extent;
    m->desc.start = 0;
    m->desc.length = (uint64_t) count *(uint64_t) size;
    /* ROMIO's flattening of some types places two pieces on the same bytes
     * where the type map has none (a contiguous struct field with a moved
     * true lb is taken from its displacement: t_prop); with a tree from
     * that list (romio_ddio_type_desc=disable) ufs: keeps the later piece,
     * and so must a read here (ddio_xfer_run). Trees by the type map
     * follow it, which a read type may not overlap in. */
    m->ordered = !by_map && ddio_desc_overlaps(&m->desc);
    return 0;
}

void ADIOI_DDIO_Mem_free(ADIOI_DDIO_Mem * m)
{
    if (!m->contig && m->desc.root)
        ddio_node_free(m->desc.root);
    m->desc.root = NULL;
}

/* ROMIO keeps fp_ind as an absolute byte offset: just past the last byte
 * accessed (ADIOI_Get_position maps it back to etypes) */
void ADIOI_DDIO_Advance_fp(ADIO_File fd, int file_ptr_type, const struct ddio_desc *d,
                           uint64_t bytes)
{
    if (bytes == 0)
        return;
    if (file_ptr_type == ADIO_INDIVIDUAL) {
        struct ddio_desc t = *d;
        t.length = bytes;
        fd->fp_ind = ddio_desc_addr(&t, bytes - 1) + 1;
    }
}
