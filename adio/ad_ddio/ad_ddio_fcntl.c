/* Fcntl: file size (STAT on every server), preallocation (PREALLOC of each
 * server's local share, then extension to the requested size: the client
 * core's ddio_xfer_file_size / ddio_fh_prealloc), atomicity (and with it the client
 * cache, ad_ddio_cache.c: flushed first for all three).
 * Independent: ROMIO calls SET_DISKSPACE on one rank only. */
#include "ad_ddio.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void ADIOI_DDIO_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_FCNTL";
    ADIOI_DDIO_File *f = fd->fs_ptr;
    ADIOI_DDIO_Err e;
    uint64_t size = 0;

    memset(&e, 0, sizeof(e));
    switch (flag) {
        case ADIO_FCNTL_GET_FSIZE:     /* this process's buffered writes count */
            if (!ADIOI_DDIO_Cache_flush(fd, 0, &e) && !ddio_xfer_file_size(&f->fh, &size, &e))
                fcntl_struct->fsize = (ADIO_Offset) size;
            break;
        case ADIO_FCNTL_SET_DISKSPACE:
            /* ROMIO's MPI_File_preallocate does not check the amode, and
             * the servers' PREALLOC does not either: a read-only file must
             * not grow (MPI_ERR_READ_ONLY, as Open MPI's OMPIO answers;
             * ROMIO's own drivers fail their write-back with EBADF) */
            if (fd->access_mode & ADIO_RDONLY) {
                ddio_err_set(&e, EROFS, "ddio: preallocate of a file opened MPI_MODE_RDONLY");
                break;
            }
            if (fcntl_struct->diskspace > 0 && !ADIOI_DDIO_Cache_flush(fd, 1, &e))
                ddio_fh_prealloc(&f->fh, (uint64_t) fcntl_struct->diskspace, &e);
            break;
        case ADIO_FCNTL_SET_ATOMICITY:  /* atomic mode has no cache */
            if (fcntl_struct->atomicity && !ADIOI_DDIO_HAVE_LOCKS) {
                ddio_err_set(&e, ENOTSUP, "ddio: atomic mode needs byte-range locks, which "
                             "this ROMIO (3.2.1 without ddio's lock hook: scripts/"
                             "build-ompi-romio.sh) takes with fcntl(2) on a local "
                             "file descriptor: a ddio file has none");
                break;
            }
            fd->atomicity = (fcntl_struct->atomicity == 0) ? 0 : 1;
            ADIOI_DDIO_Cache_setup(fd, ADIOI_DDIO_Xfer_flags(f), &e);
            break;
        default:
            *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                               __LINE__, MPI_ERR_ARG, "**flag", "**flag %d",
                                               flag);
            return;
    }
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}
