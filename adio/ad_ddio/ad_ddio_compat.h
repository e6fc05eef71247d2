/* The two ROMIOs the driver is built into, and what differs between them.
 *
 * MPICH 4.0.x's ROMIO (scripts/build-mpich.sh) and ROMIO 3.2.1, Open MPI
 * 4.1's io component romio321 (scripts/build-ompi-romio.sh), share the
 * driver interface (ADIOI_Fns_struct, ADIO_File, the hint and error helpers)
 * except for the few points below; the driver's sources use these names and
 * never test the version themselves. ROMIO 3.2.1 is told apart by what it
 * lacks: the ADIO_QUOBYTEFS file system constant, new in MPICH 3.4's ROMIO.
 *
 * - Locks: 3.2.1 has no ADIOI_xxx_SetLock entry; its lock macros call
 *   fcntl(2) on fd->fd_sys, which a ddio file does not have. There the
 *   driver claims no locks, so ROMIO takes none (no atomic mode, no shared
 *   file pointer: ROMIO refuses them with its "unsupported" errors).
 * - Flattened types: 3.2.1 keeps one global list by datatype handle, and
 *   its generic code (two-phase, the seek and position walkers) expects the
 *   view's filetype in it after set_view; an entry outlives a freed type,
 *   so a new type with the same handle would find the old list. 4.0 keeps
 *   the list as an attribute of the type, freed with it, and has the
 *   ADIOI_TYPE_* flags of non-monotone types, which 3.2.1 never checks.
 */
#ifndef AD_DDIO_COMPAT_H_INCLUDED
#define AD_DDIO_COMPAT_H_INCLUDED

#include "adio.h"
#include "adioi.h"

#ifdef ADIO_QUOBYTEFS
#define ADIOI_DDIO_ROMIO_321 0
#else
#define ADIOI_DDIO_ROMIO_321 1
#endif

#if ADIOI_DDIO_ROMIO_321

#include "adio_extern.h"       /* ADIOI_Flatlist */

#define ADIOI_DDIO_HAVE_SETLOCK 0
/* ROMIO 3.2.1 checks no type flags: the driver's own checks use these bits,
 * and a flattened list answers 0 (as 3.2.1 itself would accept the type) */
#define ADIOI_TYPE_DECREASE 0x00000001
#define ADIOI_TYPE_OVERLAP  0x00000002
#define ADIOI_TYPE_NEGATIVE 0x00000004

/* the view's filetype in ROMIO's global list, as its ADIO_Set_view leaves
 * it (ROMIO's walkers look it up there); taken out before it is freed */
static inline void ADIOI_DDIO_Flat_view_keep(MPI_Datatype t)
{
    ADIOI_Flatten_datatype(t);  /* nothing for a contiguous type */
}

static inline void ADIOI_DDIO_Flat_view_drop(MPI_Datatype t)
{
    int contig;
    ADIOI_Datatype_iscontig(t, &contig);
    if (!contig)
        ADIOI_Delete_flattened(t);
}

/* ROMIO's list of t for the driver's own use (a refused memory or file
 * type, a check); *added says it was not in the global list before, so
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

static inline int ADIOI_DDIO_Flat_flags(MPI_Datatype t)
{
    (void) t;
    return 0;
}

#else /* MPICH 4.0's ROMIO */

#define ADIOI_DDIO_HAVE_SETLOCK 1
static inline void ADIOI_DDIO_Flat_view_keep(MPI_Datatype t)
{
    (void) t;                   /* flattened lazily, cached on the type */
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

/* ROMIO's ADIOI_TYPE_* flags of t (flattening it) */
static inline int ADIOI_DDIO_Flat_flags(MPI_Datatype t)
{
    return ADIOI_Flatten_and_find(t)->flag;
}

#endif

#endif /* AD_DDIO_COMPAT_H_INCLUDED */
