/* Feature: what this driver really provides. */
#include "ad_ddio.h"

int ADIOI_DDIO_Feature(ADIO_File fd, int flag)
{
    (void) fd;
    switch (flag) {
        case ADIO_LOCKS:       /* byte-range locks on stripe server 0 */
        case ADIO_SHARED_FP:   /* ROMIO's .shfp file, guarded by those locks */
        case ADIO_ATOMIC_MODE: /* SetLock around each access */
        case ADIO_DATA_SIEVING_WRITES: /* real locks make read-modify-write safe */
            return ADIOI_DDIO_HAVE_LOCKS;       /* ROMIO 3.2.1: with the hook (compat.h) */
        case ADIO_UNLINK_AFTER_CLOSE:  /* servers keep open datafiles after unlink */
        case ADIO_TWO_PHASE:   /* romio_ddio_collective=twophase: ROMIO's generic
                                * two-phase runs on our entries */
        case ADIO_SCALABLE_OPEN:       /* our OpenColl: one rank creates, all open */
        case ADIO_SCALABLE_RESIZE:     /* one rank sets every server's size */
#ifdef ADIO_IMMEDIATELY_VISIBLE        /* (not in ROMIO 3.2.1) */
        case ADIO_IMMEDIATELY_VISIBLE: /* no client cache: data is at the servers */
#endif
            return 1;
        default:
            return 0;
    }
}
