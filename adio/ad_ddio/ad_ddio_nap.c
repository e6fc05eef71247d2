/* Collectives that wait without spinning. MPICH (ch3:nemesis) busy-polls in
 * MPI_Barrier/MPI_Bcast/MPI_Allreduce; when ranks share cores with I/O
 * servers (or with each other) the waiting ranks steal the CPU from whoever
 * still moves data. Measured with DDIO_TIMING on 2 cores, 4 ranks and 2
 * servers: the MPI_Barrier at the start of MPI_File_sync, right after a
 * collective write that had already synchronised the ranks, took 7-11 ms.
 * Here early ranks sleep in short naps between MPI_Test calls instead;
 * each costs at most one nap (20 us) of latency. */
#include "ad_ddio.h"
#include <time.h>

void ADIOI_DDIO_Nap_wait(MPI_Request * r)
{
    const struct timespec nap = { 0, 20000 };
    int done = 0;

    for (MPI_Test(r, &done, MPI_STATUS_IGNORE); !done; MPI_Test(r, &done, MPI_STATUS_IGNORE))
        nanosleep(&nap, NULL);
}

void ADIOI_DDIO_Nap_barrier(MPI_Comm comm)
{
    MPI_Request r;
    MPI_Ibarrier(comm, &r);
    ADIOI_DDIO_Nap_wait(&r);
}

void ADIOI_DDIO_Nap_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    MPI_Request r;
    MPI_Ibcast(buf, n, t, root, comm, &r);
    ADIOI_DDIO_Nap_wait(&r);
}

void ADIOI_DDIO_Nap_allgather(const void *in, void *out, int n, MPI_Datatype t, MPI_Comm comm)
{
    MPI_Request r;
    MPI_Iallgather(in, n, t, out, n, t, comm, &r);
    ADIOI_DDIO_Nap_wait(&r);
}

void ADIOI_DDIO_Nap_allreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op,
                              MPI_Comm comm)
{
    MPI_Request r;
    MPI_Iallreduce(in, out, n, t, op, comm, &r);
    ADIOI_DDIO_Nap_wait(&r);
}
