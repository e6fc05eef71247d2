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
 * 1-1.9 ms with 1 us naps (the wake-ups starve the others).
 * A collective whose parts the ranks move themselves (same-host plain
 * ranges: no server works for them), or whose plain-range parts are small
 * (up to 64 KiB: the servers have little left to do once a rank has its
 * DONE), spins first (ADIOI_DDIO_Nap_spin, set by ad_ddio_coll.c):
 * IOR-style collective calls, P = 4 and 8, 2 servers, 256 calls, hot
 * reads (MiB/s, 2 runs each): 4 KiB 88-96 -> 558-688 with 200 us of spin
 * (P = 4) and 71-76 -> 204-329 (P = 8); 64 KiB 1186-1446 -> 3725-5059 and
 * 1061-1101 -> 2133-2143; 64 KiB writes 617-720 -> 900-1056 and 508-517
 * -> 765-815; 50 us helped P = 4 only, 500 and 1000 no more than 200.
 * Spinning in every agreement cost the Kotz patterns, whose servers need
 * the CPU, 19 % (geometric mean of 21, 2 runs each): hence only after a
 * part the rank moved itself or a small one. */
#include "ad_ddio.h"
#include <time.h>
#include <sched.h>
#include <sys/prctl.h>

static _Thread_local int spin;

void ADIOI_DDIO_Nap_spin(int us)
{
    spin = us;
}

void ADIOI_DDIO_Nap_wait(MPI_Request * r)
{
    const struct timespec nap = { 0, 20000 };
    int done = 0, slack;
    int64_t until;

    MPI_Test(r, &done, MPI_STATUS_IGNORE);
    for (int i = 0; !done && i < 3; i++) {      /* a partner on the other core */
        sched_yield();
        MPI_Test(r, &done, MPI_STATUS_IGNORE);
    }
    until = ddio_now_us() + spin;
    while (!done && ddio_now_us() < until) {
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
