/* set_view and positions in the view, answered from the view's tree.
 *
 * ROMIO flattens the etype and the filetype in ADIO_Set_view (one 16-byte
 * entry per contiguous piece, held until the view changes: a cyclic 8-byte
 * view of a 16 GiB file is GBs per rank) and walks that list in
 * ADIOI_GEN_SeekIndividual, ADIOI_Get_position, ADIOI_Get_byte_offset and
 * ADIOI_Get_eof_offset. For ddio files scripts/romio-register.sh (step 7)
 * hands those four to the functions below; the seek is our table entry. They
 * use the constructor-built tree of ad_ddio_type.c, whose size follows the
 * type's description, and cost O(tree depth) per call. ROMIO never flattens
 * the view of a ddio file: the tree follows MPI's type map, and ROMIO's
 * two-phase fallback (romio_ddio_collective=twophase) gets a list made
 * from the tree (ad_ddio_compat.h). A view MPI calls erroneous (negative
 * or decreasing displacements, overlapping ones when writing) is refused
 * on every rank. */
#include "ad_ddio.h"
#include <string.h>

static void type_release(MPI_Datatype * t)
{
    int ni, na, nd, combiner;
    MPI_Type_get_envelope(*t, &ni, &na, &nd, &combiner);
    if (combiner != MPI_COMBINER_NAMED)
        MPI_Type_free(t);
}

/* ROMIO keeps its own copy of a derived etype / filetype (ad_set_view.c),
 * and commits it; this one is not committed: nothing moves data with it
 * (the driver reads its constructors, sizes and extents; ROMIO's flattening
 * and MPI_File_get_view, which commits its own contiguous(1, copy), the
 * same), and MPICH 4.0.2's dataloop engine would copy the user type's
 * dataloop into it at commit, 16 bytes a piece for a darray or subarray,
 * which it flattens (bench/README.md, view-memory) */
static MPI_Datatype type_keep(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    MPI_Datatype copy;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner);
    if (combiner == MPI_COMBINER_NAMED)
        return t;
    MPI_Type_contiguous(1, t, &copy);
    return copy;
}

typedef struct order_walk {
    int64_t prev, prev_end;             /* the last piece seen: its start, end */
    int any, flags;
} order_walk;

static int order_piece(void *arg, int64_t addr, uint64_t len, uint64_t s)
{
    order_walk *w = arg;
    (void) s;
    if (addr < 0)
        w->flags |= ADIOI_TYPE_NEGATIVE;
    if (w->any && addr < w->prev)
        w->flags |= ADIOI_TYPE_DECREASE;
    else if (w->any && addr < w->prev_end)
        w->flags |= ADIOI_TYPE_OVERLAP;
    w->prev = addr;
    w->prev_end = addr + (int64_t) len;
    w->any = 1;
    return 0;
}

/* ROMIO's check_type flags (ADIOI_TYPE_NEGATIVE / _DECREASE / _OVERLAP) of t
 * by its type map, from its tree (`root`/`base` may be a tree already built
 * for t): a piece below the origin; a piece starting before the previous
 * one does (MPI: displacements monotonically nondecreasing); a piece
 * starting inside the previous one (erroneous when writing). One tile, as
 * ROMIO: a type's data may lie outside [lb, lb + extent) (Open MPI keeps a
 * subarray's lb in a struct around it, with PnetCDF's header bytes below
 * it), so the next tile may start before this one ends; only a call that
 * reaches it is refused (ad_ddio_view.c). A filetype's extent must still
 * be positive: the tiles' positions are reckoned from it. O(tree depth)
 * for a monotone type; the pieces of one tile otherwise. */
static int type_flags(MPI_Datatype t, const struct ddio_node *root, int64_t base)
{
    int contig;
    MPI_Aint tlb, textent, lb, extent;
    MPI_Count size;
    struct ddio_node *own = NULL;
    struct ddio_desc one;
    order_walk w = { 0 };

    MPI_Type_size_x(t, &size);
    if (size == 0)
        return 0;               /* no data byte: nothing to check (as ROMIO) */
    MPI_Type_get_extent(t, &lb, &extent);
    ADIOI_Datatype_iscontig(t, &contig);
    if (contig) {
        MPI_Type_get_true_extent(t, &tlb, &textent);
        return tlb < 0 ? ADIOI_TYPE_NEGATIVE : extent < size ? ADIOI_TYPE_OVERLAP : 0;
    }
    if (!root && !(root = own = ADIOI_DDIO_Tree_from_type(t, &base, NULL)))
        root = own = ADIOI_DDIO_Tree_from_pieces(t, &base);
    if (!root)
        return ADIOI_TYPE_DECREASE;     /* (out of memory: no view of it) */
    one = (struct ddio_desc) {.disp = base,.extent = 1,.root = (struct ddio_node *) root,
        .start = 0,.length = root->size
    };
    /* (a monotone tree from a non-negative base: no flag) */
    if (base < 0 || ddio_desc_check_monotone(&one))
        ddio_desc_walk_stream(&one, 0, one.length, order_piece, &w);
    if (extent <= 0)
        w.flags |= extent < 0 ? ADIOI_TYPE_DECREASE : ADIOI_TYPE_OVERLAP;
    if (own)
        ddio_node_free(own);
    return w.flags;
}

/* ROMIO's check_type (ad_set_view.c): 0, or -1 with msg set. (A filetype
 * whose pieces overlap is taken in a file opened read-only, as MPI allows;
 * reading through it is refused, ADIOI_DDIO_File_desc.) */
static int type_check(ADIO_File fd, int flags, const char *kind, char *msg, size_t n)
{
    if (flags & ADIOI_TYPE_NEGATIVE)
        snprintf(msg, n, "displacements of %s must be non-negative", kind);
    else if (flags & ADIOI_TYPE_DECREASE)
        snprintf(msg, n, "displacements of %s must be in a monotonically "
                 "nondecreasing order", kind);
    else if ((fd->orig_access_mode & (ADIO_WRONLY | ADIO_RDWR)) && (flags & ADIOI_TYPE_OVERLAP))
        snprintf(msg, n, "%s is not permitted to contain overlapping regions", kind);
    else
        return 0;
    return -1;
}

/* the view's tree for fd's non-contiguous filetype, checked; then the first
 * byte the view can access (ROMIO's initial fp_ind). 0, or -1 with e set */
static int view_set(ADIO_File fd, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_View *v;
    char msg[160];
    int rc;

    if ((rc = ADIOI_DDIO_View_get(fd, &v, e))) {
        if (!e->errnum)
            ddio_err_set(e, -rc, "ddio: cannot describe the file view (%s)", strerror(-rc));
        return -1;
    }
    if (type_check(fd, type_flags(fd->filetype, v->root, v->base), "filetype", msg,
                   sizeof(msg))) {
        ddio_err_set(e, EINVAL, "%s", msg);
        return -1;
    }
    struct ddio_desc tile = {.disp = fd->disp + v->base,.extent = v->extent,.root = v->root,
        .start = 0,.length = v->size
    };
    fd->fp_ind = ddio_desc_addr(&tile, 0);
    return 0;
}

/* set_view is collective: a view refused on one rank fails it on every
 * rank (ROMIO's checks are each rank's own: the others would go on with a
 * view the file does not have, into the barrier that ends set_view), with
 * the first refusing rank's reason. MPI_SUCCESS or the error code. */
static int view_agree(ADIO_File fd, const ADIOI_DDIO_Err * e)
{
    static char myname[] = "ADIOI_DDIO_SET_VIEW";
    int rank, size, bad;
    char why[DDIO_ERR_LEN];

    MPI_Comm_rank(fd->comm, &rank);
    MPI_Comm_size(fd->comm, &size);
    bad = e->errnum ? rank : size;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MIN, fd->comm);
    if (bad == size)
        return MPI_SUCCESS;
    snprintf(why, sizeof(why), "%s", e->msg);
    MPI_Bcast(why, (int) sizeof(why), MPI_CHAR, bad, fd->comm);
    if (e->errnum && e->errnum != EINVAL)
        return ADIOI_DDIO_Err_code(myname, e);
    char msg[DDIO_ERR_LEN + 64];
    if (bad == rank)
        snprintf(msg, sizeof(msg), "%s", why);
    else
        snprintf(msg, sizeof(msg), "the file view of rank %d: %s", bad, why);
    ADIOI_DDIO_Say_err(myname, EINVAL, msg);
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                MPI_ERR_IO, "**io", "**io %s", msg);
}

/* The view a set_view replaces: a refused one leaves it in force. */
typedef struct view_was {
    MPI_Datatype etype, filetype;
    MPI_Count etype_size;
    ADIO_Offset disp, fp_ind;
} view_was;

/* The new view in fd, checked, e set when this rank refuses it; returns
 * the filetype's data bytes when a tree describes it (not contiguous). Both types are kept before any check, as ROMIO's
 * ADIO_Set_view does (a refused etype once left a released type in fd,
 * which the next set_view released again: under Open MPI's ROMIO 3.2.1 a
 * double free in MPI_Finalize, t_errors classes) */
static MPI_Count view_take(ADIO_File fd, ADIO_Offset disp, MPI_Datatype etype,
                           MPI_Datatype filetype, ADIOI_DDIO_Err * e)
{
    int contig;
    MPI_Count ftsize;
    char msg[160];

    fd->etype = type_keep(etype);
    fd->filetype = type_keep(filetype);
    MPI_Type_size_x(fd->etype, &fd->etype_size);
    fd->disp = disp;
    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    MPI_Type_size_x(fd->filetype, &ftsize);
    if (type_check(fd, type_flags(fd->etype, NULL, 0), "etype", msg, sizeof(msg)))
        ddio_err_set(e, EINVAL, "%s", msg);
    else if (contig) {
        if (type_check(fd, type_flags(fd->filetype, NULL, 0), "filetype", msg, sizeof(msg)))
            ddio_err_set(e, EINVAL, "%s", msg);
        else
            fd->fp_ind = disp;
    } else if (ftsize > 0)
        view_set(fd, e);
    /* (a filetype without data leaves fp_ind where it was, as in ROMIO) */
    return contig ? 0 : ftsize;
}

/* A view refused on any rank leaves every rank's previous view in force,
 * so the calls that follow see the same view everywhere (HDF5 goes on
 * writing at byte offsets through the view it had: a rank left with a
 * refused one failed alone and the job hung) */
static void view_restore(ADIO_File fd, const view_was * w)
{
    type_release(&fd->etype);
    type_release(&fd->filetype);
    fd->etype = w->etype;
    fd->filetype = w->filetype;
    fd->etype_size = w->etype_size;
    fd->disp = w->disp;
    fd->fp_ind = w->fp_ind;
}

void ADIOI_DDIO_Set_view(ADIO_File fd, ADIO_Offset disp, MPI_Datatype etype,
                         MPI_Datatype filetype, MPI_Info info, int *error_code)
{
    int err;
    MPI_Count described;
    ADIOI_DDIO_Err e = { 0 };
    view_was w = {.etype = fd->etype,.filetype = fd->filetype,.etype_size = fd->etype_size,
        .disp = fd->disp,.fp_ind = fd->fp_ind
    };

    ADIO_SetInfo(fd, info, &err);       /* bumps view_gen: the cached tree is stale */
    described = view_take(fd, disp, etype, filetype, &e);
    if ((*error_code = view_agree(fd, &e)) != MPI_SUCCESS) {
        view_restore(fd, &w);
        return;
    }
    ADIOI_DDIO_Flat_view_drop(w.filetype);
    type_release(&w.etype);
    type_release(&w.filetype);
    ADIOI_DDIO_Flat_view_keep(fd);
    if (described > 0 && ADIOI_DDIO_File_get(fd)->fh.srv)
        /* a described view: the calls to come move strided data, which UCX
         * moves where this process reaches the servers by it; their
         * connections are attached here (once per process and server,
         * 10-100 ms on a busy host), not inside the first data call */
        ddio_fh_ucx_attach(&ADIOI_DDIO_File_get(fd)->fh);
}

/* absolute byte offset of view data byte `bytes` (ROMIO's seek arithmetic) */
static int view_byte_addr(ADIO_File fd, ADIO_Offset bytes, ADIO_Offset * addr)
{
    ADIOI_DDIO_Err e = { 0 };
    ADIOI_DDIO_View *v;
    if (ADIOI_DDIO_View_get(fd, &v, &e))
        return -1;
    struct ddio_desc view = {.disp = fd->disp + v->base,.extent = v->extent,.root = v->root,
        .start = 0,.length = UINT64_MAX
    };
    *addr = ddio_desc_addr(&view, (uint64_t) bytes);
    return 0;
}

/* view data bytes below the absolute byte offset `off` (0 when the view
 * cannot be described: only a zero-size filetype, whose positions are 0) */
static ADIO_Offset view_bytes_below(ADIO_File fd, ADIO_Offset off)
{
    ADIOI_DDIO_Err e = { 0 };
    ADIOI_DDIO_View *v;
    if (ADIOI_DDIO_View_get(fd, &v, &e))
        return 0;
    return (ADIO_Offset) ADIOI_DDIO_View_bytes_before(v, off - (fd->disp + v->base));
}

static int view_contig(ADIO_File fd)
{
    int contig;
    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    return contig;
}

void ADIOI_DDIO_Get_byte_offset(ADIO_File fd, ADIO_Offset offset, ADIO_Offset * disp)
{
    if (view_contig(fd) || view_byte_addr(fd, offset * fd->etype_size, disp))
        *disp = fd->disp + fd->etype_size * offset;
}

ADIO_Offset ADIOI_DDIO_SeekIndividual(ADIO_File fd, ADIO_Offset offset, int whence,
                                      int *error_code)
{
    MPI_Count ftsize;
    ADIO_Offset off;

    (void) whence;              /* ROMIO converts to SEEK_SET first */
    *error_code = MPI_SUCCESS;
    MPI_Type_size_x(fd->filetype, &ftsize);
    if (ftsize == 0)
        return 0;               /* as ADIOI_GEN_SeekIndividual: no position to map */
    ADIOI_DDIO_Get_byte_offset(fd, offset, &off);
    fd->fp_ind = off;
    return off;
}

void ADIOI_DDIO_Get_position(ADIO_File fd, ADIO_Offset * offset)
{
    if (view_contig(fd))
        *offset = (fd->fp_ind - fd->disp) / fd->etype_size;
    else
        *offset = view_bytes_below(fd, fd->fp_ind) / fd->etype_size;
}

/* the end of file in etypes of the view: the next etype at or after it */
void ADIOI_DDIO_Get_eof_offset(ADIO_File fd, ADIO_Offset * eof_offset)
{
    ADIO_Fcntl_t fc;
    int err;
    ADIO_Offset bytes;

    ADIO_Fcntl(fd, ADIO_FCNTL_GET_FSIZE, &fc, &err);
    bytes = view_contig(fd) ? fc.fsize - fd->disp : view_bytes_below(fd, fc.fsize);
    *eof_offset = (bytes + fd->etype_size - 1) / fd->etype_size;
}
