/* The two ROMIOs the driver is built into, and what differs between them.
 *
 * MPICH 4.0.x's ROMIO (scripts/build-mpich.sh) and ROMIO 3.2.1, Open MPI
 * 4.1's io component romio321 (scripts/build-ompi-romio.sh), share the
 * driver interface (ADIOI_Fns_struct, ADIO_File, the hint and error helpers)
 * except for the few points below; the driver's sources use these names and
 * never test the version themselves. ROMIO 3.2.1 is told apart by what it
 * lacks: the ADIO_QUOBYTEFS file system constant, new in MPICH 3.4's ROMIO.
 *
 * - Locks: 3.2.1 has no ADIOI_xxx_SetLock entry; its lock macros
 *   (ADIOI_WRITE_LOCK, _READ_LOCK, _UNLOCK in adioi.h) call fcntl(2) on
 *   fd->fd_sys, which a ddio file does not have. scripts/build-ompi-romio.sh
 *   (add_lock_hook) redefines the three in the component's adioi.h to
 *   call ADIOI_DDIO_Set_lock_hook (ad_ddio_lock.c): a ddio file's locks go
 *   to ADIOI_DDIO_SetLock as MPICH's table entry sends them, every other
 *   file's to ADIOI_Set_lock as before; it defines ADIOI_DDIO_LOCK_HOOK.
 *   Every lock user of 3.2.1 goes through the three: the atomic contiguous
 *   calls of mpi-io/ (read, write, iread, iwrite, the _sh forms), the
 *   shared pointer's ad_get_sh_fp.c / ad_set_sh_fp.c on the hidden .shfp
 *   file (itself a ddio file), and adio/common's data sieving and atomic
 *   strided code (for ufs:/nfs: files: ddio's strided entries are its own
 *   and lock through ADIOI_DDIO_Lock).
 *   ADIOI_DDIO_HAVE_LOCKS: the driver claims locks, shared pointers and
 *   atomic mode (ad_ddio_features.c, ad_ddio_fcntl.c); a 3.2.1 without the
 *   hook refuses atomic mode, and ROMIO the shared pointer, as before.
 *   ADIOI_DDIO_HAVE_SETLOCK: the function table has the entry (4.0 only).
 * - Nonblocking I/O: MPICH's generalized request classes (MPIX_Grequest_class
 *   with a poll function run by MPI_Test/MPI_Wait) are not in Open MPI's
 *   libmpi (Debian's 4.1.4 exports no ompi_grequestx_*). There a request is
 *   run to its end inside the call (the progress thread still moves the
 *   bytes, the collective agreement is the same) and returned completed,
 *   as ROMIO 3.2.1's own nonblocking entries do: no overlap.
 * - ROMIO 4.0's fd->dirty_write (ADIO_Flush skips a sync when no write was
 *   made) is not in 3.2.1, which always syncs: ADIOI_DDIO_Set_dirty.
 * - ROMIO 3.2.1 built without grequest extensions (Open MPI's) has no
 *   ADIOI_GEN_IreadStridedColl / _IwriteStridedColl (NULL: its own ufs:
 *   driver crashes in MPI_File_iwrite_all); the driver's two-phase fallback
 *   runs the blocking ones and returns a completed request.
 * - Error text: Open MPI's MPIO_Err_create_code formats the message and
 *   drops it (MPI_Error_string says only the class), so on 3.2.1 the driver
 *   writes it to stderr itself (not for ENOENT and EEXIST, which programs
 *   provoke to probe for a file): ADIOI_DDIO_Say_err.
 * - Flattened types: 3.2.1 keeps one global list by datatype handle, and
 *   its generic code (two-phase, the seek and position walkers) expects the
 *   view's filetype in it after set_view; an entry outlives a freed type,
 *   so a new type with the same handle would find the old list. 4.0 keeps
 *   the list as an attribute of the type, freed with it, made on first use
 *   (ADIOI_Flatten_and_find), and has the ADIOI_TYPE_* flags of
 *   non-monotone types, which 3.2.1 never checks. Neither ROMIO's
 *   flattening follows MPI's type map for some views (zero-length blocks,
 *   resized parts: ad_ddio_type.c), so a ddio view's list is never
 *   ROMIO's: it is made from the view's tree (ADIOI_DDIO_View_flat), put
 *   in 3.2.1's global list at set_view (ADIOI_DDIO_Flat_view_keep, as
 *   3.2.1's ADIO_Set_view would), on 4.0 set as the type's attribute just
 *   before ROMIO's two-phase fallback runs (ADIOI_DDIO_Flat_view_install),
 *   so ROMIO never flattens it.
 */
#ifndef AD_DDIO_COMPAT_H_INCLUDED
#define AD_DDIO_COMPAT_H_INCLUDED

#include "adio.h"
#include "adioi.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef ADIO_QUOBYTEFS
#define ADIOI_DDIO_ROMIO_321 0
#else
#define ADIOI_DDIO_ROMIO_321 1
#endif

/* one tile of fd's (non-contiguous) view as a flattened list, by its tree:
 * *count pieces relative to the filetype's origin; one allocation
 * (ADIOI_Malloc'd: indices = blocklens + count) or two. 0, or -1 (no data,
 * no tree, out of memory). ad_ddio_view.c */
int ADIOI_DDIO_View_flat(ADIO_File fd, ADIO_Offset ** blocklens, ADIO_Offset ** indices,
                         MPI_Count * count, int one_alloc);

#if ADIOI_DDIO_ROMIO_321

#include "adio_extern.h"       /* ADIOI_Flatlist */

#define ADIOI_DDIO_HAVE_SETLOCK 0
#ifdef ADIOI_DDIO_LOCK_HOOK     /* adioi.h: build-ompi-romio.sh's add_lock_hook */
#define ADIOI_DDIO_HAVE_LOCKS 1
#else
#define ADIOI_DDIO_HAVE_LOCKS 0
#endif
#define ADIOI_DDIO_HAVE_GREQX 0
#define ADIOI_DDIO_Set_dirty(fd, v) ((void) (fd), (void) (v))

/* a failure on stderr as it is made; a missing or existing file is an
 * answer programs ask for (PnetCDF's tests, HDF5's probes), said only with
 * DDIO_VERBOSE=1 */
static inline void ADIOI_DDIO_Say_err(const char *myname, int errnum, const char *msg)
{
    const char *v = getenv("DDIO_VERBOSE");
    if ((errnum != ENOENT && errnum != EEXIST) || (v && atoi(v) > 0))
        fprintf(stderr, "%s: %s\n", myname, msg);
}

/* a completed request for a blocking collective's outcome (as ROMIO's
 * ADIOI_FAKE_* entries: the whole count on success) */
static inline void ADIOI_DDIO_Done_request(ADIO_File fd, int count, MPI_Datatype datatype,
                                           ADIO_Request * request, int *error_code)
{
    MPI_Count size;
    MPI_Type_size_x(datatype, &size);
    if (*error_code == MPI_SUCCESS)
        MPIO_Completed_request_create(&fd, (MPI_Offset) count * size, error_code, request);
    else
        *request = MPI_REQUEST_NULL;
}

static inline void ADIOI_DDIO_GEN_IreadStridedColl(ADIO_File fd, void *buf, int count,
                                                   MPI_Datatype datatype, int file_ptr_type,
                                                   ADIO_Offset offset, ADIO_Request * request,
                                                   int *error_code)
{
    ADIO_Status status;
    ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                              error_code);
    ADIOI_DDIO_Done_request(fd, count, datatype, request, error_code);
}

static inline void ADIOI_DDIO_GEN_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                                    MPI_Datatype datatype, int file_ptr_type,
                                                    ADIO_Offset offset, ADIO_Request * request,
                                                    int *error_code)
{
    ADIO_Status status;
    ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, &status,
                               error_code);
    ADIOI_DDIO_Done_request(fd, count, datatype, request, error_code);
}
/* ROMIO 3.2.1 checks no type flags: the driver's own checks use these bits,
 * and a flattened list answers 0 (as 3.2.1 itself would accept the type) */
#define ADIOI_TYPE_DECREASE 0x00000001
#define ADIOI_TYPE_OVERLAP  0x00000002
#define ADIOI_TYPE_NEGATIVE 0x00000004

/* the view's filetype in ROMIO's global list, as its ADIO_Set_view leaves
 * it (ROMIO's walkers look it up there), listed from the view's tree;
 * taken out before it is freed */
static inline void ADIOI_DDIO_Flat_view_keep(ADIO_File fd)
{
    ADIOI_Flatlist_node *n = ADIOI_Flatlist, *prev = NULL;
    ADIO_Offset *bl, *ix;
    MPI_Count count;
    while (n && n->type != fd->filetype) {
        prev = n;
        n = n->next;
    }
    if (n || !prev || ADIOI_DDIO_View_flat(fd, &bl, &ix, &count, 0))
        return;                 /* listed, or contiguous, or without data */
    n = (ADIOI_Flatlist_node *) ADIOI_Malloc(sizeof(*n));
    n->type = fd->filetype;
    n->count = count;
    n->blocklens = bl;
    n->indices = ix;
    n->lb_idx = n->ub_idx = -1;
    n->next = NULL;
    prev->next = n;
}

/* (the view is listed since its set_view) */
static inline void ADIOI_DDIO_Flat_view_install(ADIO_File fd)
{
    (void) fd;
}

static inline void ADIOI_DDIO_Flat_view_drop(MPI_Datatype t)
{
    int contig;
    ADIOI_Datatype_iscontig(t, &contig);
    if (!contig)
        ADIOI_Delete_flattened(t);
}

/* ROMIO's list of t for the driver's own use (romio_ddio_type_desc=
 * disable); *added says it was not in the global list before, so
 * ADIOI_DDIO_Flat_done takes it out again (ROMIO's own entries, the view's
 * filetype above, stay) */
static inline ADIOI_Flatlist_node *ADIOI_DDIO_Flat_find(MPI_Datatype t, int *added)
{
    ADIOI_Flatlist_node *n = ADIOI_Flatlist;
    while (n && n->type != t)
        n = n->next;
    *added = n == NULL;
    return n ? n : ADIOI_Flatten_and_find(t);
}

static inline void ADIOI_DDIO_Flat_done(MPI_Datatype t, int added)
{
    if (added)
        ADIOI_Delete_flattened(t);
}

#else /* MPICH 4.0's ROMIO */

#include "adio_extern.h"       /* ADIOI_Flattened_type_keyval */

#define ADIOI_DDIO_HAVE_SETLOCK 1
#define ADIOI_DDIO_HAVE_LOCKS 1
#define ADIOI_DDIO_HAVE_GREQX 1
#define ADIOI_DDIO_Set_dirty(fd, v) ((fd)->dirty_write = (v))
#define ADIOI_DDIO_Say_err(myname, errnum, msg) ((void) (myname), (void) (errnum), (void) (msg))
#define ADIOI_DDIO_GEN_IreadStridedColl ADIOI_GEN_IreadStridedColl
#define ADIOI_DDIO_GEN_IwriteStridedColl ADIOI_GEN_IwriteStridedColl
static inline void ADIOI_DDIO_Flat_view_keep(ADIO_File fd)
{
    (void) fd;                  /* listed on first use: Flat_view_install */
}

/* Before ROMIO's own code walks the view (its two-phase fallback): the
 * view's list, made from its tree, as the filetype's attribute, where
 * ADIOI_Flatten_and_find finds it instead of flattening the type itself
 * (freed with the type by ROMIO's delete callback: one allocation) */
static inline void ADIOI_DDIO_Flat_view_install(ADIO_File fd)
{
    ADIOI_Flatlist_node *n;
    ADIO_Offset *bl, *ix;
    MPI_Count count;
    int flag, contig;
    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    if (contig)
        return;
    if (ADIOI_Flattened_type_keyval == MPI_KEYVAL_INVALID)
        MPI_Type_create_keyval(ADIOI_Flattened_type_copy, ADIOI_Flattened_type_delete,
                               &ADIOI_Flattened_type_keyval, NULL);
    MPI_Type_get_attr(fd->filetype, ADIOI_Flattened_type_keyval, &n, &flag);
    if (flag || ADIOI_DDIO_View_flat(fd, &bl, &ix, &count, 1))
        return;
    n = (ADIOI_Flatlist_node *) ADIOI_Malloc(sizeof(*n));
    n->type = fd->filetype;
    n->count = count;
    n->blocklens = bl;
    n->indices = ix;
    n->lb_idx = n->ub_idx = -1;
    n->refct = 1;
    n->flag = 0;
    MPI_Type_set_attr(fd->filetype, ADIOI_Flattened_type_keyval, n);
}

static inline void ADIOI_DDIO_Flat_view_drop(MPI_Datatype t)
{
    (void) t;                   /* freed with the type */
}

static inline ADIOI_Flatlist_node *ADIOI_DDIO_Flat_find(MPI_Datatype t, int *added)
{
    *added = 0;                 /* cached on the type, freed with it */
    return ADIOI_Flatten_and_find(t);
}

static inline void ADIOI_DDIO_Flat_done(MPI_Datatype t, int added)
{
    (void) t;
    (void) added;
}

#endif

#endif /* AD_DDIO_COMPAT_H_INCLUDED */
