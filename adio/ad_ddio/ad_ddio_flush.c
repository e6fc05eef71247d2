/* Flush (MPI_File_sync, collective): each rank sends its buffered writes
 * (the client cache, ad_ddio_cache.c); then the servers hold every byte, so
 * one SYNC per server makes the whole file durable. The barrier makes sure
 * every rank's writes have completed before rank 0 asks; an error on any
 * rank fails the call on every rank; MPI_File_sync returns on every rank only after every server's
 * fdatasync did. Both waits nap (ad_ddio_nap.c): with MPI_Barrier the
 * spinning ranks slowed the servers' sync from 0.2 ms to 8-35 ms. */
#include "ad_ddio.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ADIOI_DDIO_Flush(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_FLUSH";
    ADIOI_DDIO_Err e;
    int rank;
    double t[3];

    memset(&e, 0, sizeof(e));
    MPI_Comm_rank(fd->comm, &rank);
    t[0] = MPI_Wtime();
    /* this rank's buffered writes, then the barrier: when rank 0 syncs,
     * every rank's bytes are on the servers. What was read ahead goes:
     * after sync-barrier-sync others' writes must be seen. */
    ADIOI_DDIO_Cache_flush(fd, 1, &e);
    ADIOI_DDIO_Nap_barrier(fd->comm);
    t[1] = MPI_Wtime();
    if (rank == 0 && !e.errnum)
        ddio_fh_sync(&((ADIOI_DDIO_File *) fd->fs_ptr)->fh, &e);
    t[2] = MPI_Wtime();
    ADIOI_DDIO_Agree_err(fd, &e);
    if (ADIOI_DDIO_Timing_on())
        fprintf(stderr, "ddio-timing rank %d sync barrier_ms %.2f sync_ms %.2f bcast_ms %.2f\n",
                rank, (t[1] - t[0]) * 1e3, (t[2] - t[1]) * 1e3, (MPI_Wtime() - t[2]) * 1e3);
    if (!e.errnum)
        ADIOI_DDIO_Set_dirty(fd, 0);
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}
