/* Collectives that wait without spinning. MPICH (ch3:nemesis) busy-polls in
 * MPI_Barrier/MPI_Bcast/MPI_Allreduce; when ranks share cores with I/O
 * servers (or with each other) the waiting ranks steal the CPU from whoever
 * still moves data. Measured with DDIO_TIMING on 2 cores, 4 ranks and 2
 * servers: the MPI_Barrier at the start of MPI_File_sync, right after a
 * collective write that had already synchronised the ranks, took 7-11 ms.
 * Here early ranks sleep in short naps between MPI_Test calls instead;
 * each costs at most one nap (20 us) of latency. Measured (DDIO_TIMING,
 * IOR-style collective 64 KiB writes, P = 4, 2 servers, 3 runs each): the
 * two agreements of a call took 0.27-0.28 ms with 20 us naps at the
 * default timer slack, 0.13-0.16 ms with the slack at 1 us during the nap
 * and three sched_yield polls first, 7.5 ms with MPI_Wait's busy poll,
 * 1-1.9 ms with 1 us naps (the wake-ups starve the others). */
#include "ad_ddio.h"
#include <time.h>
#include <sched.h>
#include <sys/prctl.h>

void ADIOI_DDIO_Nap_wait(MPI_Request * r)
{
    const struct timespec nap = { 0, 20000 };
    int done = 0, slack;

    MPI_Test(r, &done, MPI_STATUS_IGNORE);
    for (int i = 0; !done && i < 3; i++) {      /* a partner on the other core */
        sched_yield();
        MPI_Test(r, &done, MPI_STATUS_IGNORE);
    }
    if (done)
        return;
    /* the kernel's default 50 us of timer slack tripled each nap */
    slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    while (!done) {
        nanosleep(&nap, NULL);
        MPI_Test(r, &done, MPI_STATUS_IGNORE);
    }
    if (slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long) slack, 0, 0, 0);
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
