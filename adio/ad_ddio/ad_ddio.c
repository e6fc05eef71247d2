/* The ddio driver's function table (designated initialisers: the table is
 * positional and grows between ROMIO releases).
 *
 * Collectives (blocking, split and nonblocking) take the disk-directed path
 * of ad_ddio_coll.c (ROMIO's two-phase with romio_ddio_collective=twophase).
 * Nonblocking reads and writes, independent and collective, run on the
 * driver's progress thread (ad_ddio_async.c). */
#include "ad_ddio.h"

struct ADIOI_Fns_struct ADIO_DDIO_operations = {
    .ADIOI_xxx_Open = ADIOI_DDIO_Open,
    .ADIOI_xxx_OpenColl = ADIOI_DDIO_OpenColl,
    .ADIOI_xxx_ReadContig = ADIOI_DDIO_ReadContig,
    .ADIOI_xxx_WriteContig = ADIOI_DDIO_WriteContig,
    .ADIOI_xxx_ReadStridedColl = ADIOI_DDIO_ReadStridedColl,
    .ADIOI_xxx_WriteStridedColl = ADIOI_DDIO_WriteStridedColl,
    .ADIOI_xxx_SeekIndividual = ADIOI_DDIO_SeekIndividual,
    .ADIOI_xxx_Fcntl = ADIOI_DDIO_Fcntl,
    .ADIOI_xxx_SetInfo = ADIOI_DDIO_SetInfo,
    .ADIOI_xxx_ReadStrided = ADIOI_DDIO_ReadStrided,
    .ADIOI_xxx_WriteStrided = ADIOI_DDIO_WriteStrided,
    .ADIOI_xxx_Close = ADIOI_DDIO_Close,
    .ADIOI_xxx_IreadContig = ADIOI_DDIO_IreadContig,
    .ADIOI_xxx_IwriteContig = ADIOI_DDIO_IwriteContig,
    .ADIOI_xxx_ReadDone = ADIOI_FAKE_IODone,
    .ADIOI_xxx_WriteDone = ADIOI_FAKE_IODone,
    .ADIOI_xxx_ReadComplete = ADIOI_FAKE_IOComplete,
    .ADIOI_xxx_WriteComplete = ADIOI_FAKE_IOComplete,
    .ADIOI_xxx_IreadStrided = ADIOI_DDIO_IreadStrided,
    .ADIOI_xxx_IwriteStrided = ADIOI_DDIO_IwriteStrided,
    .ADIOI_xxx_Flush = ADIOI_DDIO_Flush,
    .ADIOI_xxx_Resize = ADIOI_DDIO_Resize,
    .ADIOI_xxx_Delete = ADIOI_DDIO_Delete,
    .ADIOI_xxx_Feature = ADIOI_DDIO_Feature,
    .fsname = "DDIO: disk-directed I/O servers",
    .ADIOI_xxx_IreadStridedColl = ADIOI_DDIO_IreadStridedColl,
    .ADIOI_xxx_IwriteStridedColl = ADIOI_DDIO_IwriteStridedColl,
#if ADIOI_DDIO_HAVE_SETLOCK
    .ADIOI_xxx_SetLock = ADIOI_DDIO_SetLock,
#endif
};
