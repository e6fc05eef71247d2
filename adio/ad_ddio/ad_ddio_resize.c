/* Resize (MPI_File_set_size, collective): every rank flushes its buffered
 * writes (an error anywhere fails the call everywhere), then rank 0 sets
 * every server's local size to its share of the new logical size and
 * broadcasts the outcome with the server's message, so every rank returns
 * the same error. */
#include "ad_ddio.h"
#include <stdio.h>
#include <string.h>

void ADIOI_DDIO_Resize(ADIO_File fd, ADIO_Offset size, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_RESIZE";
    ADIOI_DDIO_Err e;
    int rank;

    memset(&e, 0, sizeof(e));
    MPI_Comm_rank(fd->comm, &rank);
    /* every rank's buffered writes land before the size is set */
    ADIOI_DDIO_Cache_flush(fd, 1, &e);
    if (!ADIOI_DDIO_Agree_err(fd, &e)) {
        if (rank == 0 && size < 0)
            ddio_err_set(&e, EINVAL, "ddio: negative file size %lld", (long long) size);
        else if (rank == 0)
            ddio_fh_resize(&((ADIOI_DDIO_File *) fd->fs_ptr)->fh, (uint64_t) size, &e);
        ADIOI_DDIO_Bcast_err(fd, &e);
    }
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}
