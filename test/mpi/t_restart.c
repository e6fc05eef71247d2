/* A job that rides through a server restart (the restart group of
 * run-mpi-tests.sh restarts a server while it runs): a series of writes in
 * rounds, a pause after each, so a restart ~1 s in lands in the middle of
 * the series; then every byte is read back and checked here, and the file
 * is compared with the ufs: run's by the harness.
 *
 *   t_restart coll  ROUNDS PAUSE_MS FILE   collective writes (write_at_all),
 *                                         a collective read of each round
 *   t_restart indep ROUNDS PAUSE_MS FILE   independent strided writes and
 *                                         reads (MPI_File_write/read under
 *                                         a view), reads paused too
 *   t_restart sync  ROUNDS PAUSE_MS FILE   collective writes, MPI_File_sync
 *                                         after each
 *   t_restart nonblock ROUNDS PAUSE_MS FILE  indep as MPI_File_iwrite_at /
 *                                         iread_at + MPI_Wait (the driver's
 *                                         progress thread, its own connections)
 *   t_restart atomic ROUNDS PAUSE_MS FILE  indep in atomic mode: each write
 *                                         and read under a byte-range lock
 *                                         (held on stripe server 0)
 *   t_restart late  ROUNDS PAUSE_MS FILE   coll as MPI_File_iwrite_at_all /
 *                                         iread_at_all + MPI_Wait (no
 *                                         agreement before the XFERs go), the
 *                                         last rank 1.5 s late for round 8's
 *                                         write: the others wait at the
 *                                         servers' gate; rank 0 then creates
 *                                         the file $LATE_MARK, on which the
 *                                         harness stops a server (it fails
 *                                         the gate: they resend until the
 *                                         restart takes them)
 *   t_restart dup   ROUNDS PAUSE_MS FILE   rank 0 alone writes ROUNDS MiB
 *                                         (the server drops a DONE: the
 *                                         resend must be answered, not done)
 *
 * Views: 64 KiB chunks dealt round robin to the ranks (every rank's part
 * touches every stripe server). Rank 0 prints the longest and the median
 * round (the job's stall across the restart is their difference). */
#include "tutil.h"

#include <time.h>
#include <unistd.h>

#define CH     (64 << 10)
#define PER    8                /* chunks per rank per round */
#define ROUND  ((MPI_Offset) CH * PER * t_size)
#define LATE_ROUND 8
#define LATE_MS    1500

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static unsigned char pat(MPI_Offset off)
{
    return t_byte(0x5e5, (uint64_t) off);
}


/* the bytes of this rank's part of round r, in view order */
static void fill(unsigned char *b, int r)
{
    for (int c = 0; c < PER; c++) {
        MPI_Offset off = r * ROUND + ((MPI_Offset) c * t_size + t_rank) * CH;
        for (int k = 0; k < CH; k++)
            b[(size_t) c * CH + k] = pat(off + k);
    }
}

static void check(const unsigned char *got, int r)
{
    unsigned char *want = malloc((size_t) CH * PER);
    fill(want, r);
    for (size_t k = 0; k < (size_t) CH * PER; k++)
        T_ASSERT(got[k] == want[k], "round %d: byte %zu of my part differs", r, k);
    free(want);
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void report(double *t, int n, const char *what)
{
    qsort(t, n, sizeof(*t), dbl_cmp);
    if (t_rank == 0)
        printf("%s: %d rounds, median %.1f ms, longest %.1f ms\n", what, n, t[n / 2], t[n - 1]);
}

/* late: the XFERs of the round are at the gate by now (the progress
 * thread sent them); the harness may stop a server */
static void late_mark(void)
{
    const char *p = getenv("LATE_MARK");
    usleep(200 * 1000);
    if (p) {
        FILE *f = fopen(p, "w");
        T_ASSERT(f && fclose(f) == 0, "cannot create %s", p);
    }
}

/* one round of I/O: 1 = write, 0 = read */
static void io_round(MPI_File fh, const char *mode, int r, int write, unsigned char *b)
{
    MPI_Status st;
    MPI_Request rq;
    int n = CH * PER;
    if (!strcmp(mode, "nonblock") || !strcmp(mode, "late")) {
        MPI_Offset at = (MPI_Offset) r * CH * PER;
        if (!strcmp(mode, "late")) {
            T_MPI(write ? MPI_File_iwrite_at_all(fh, at, b, n, MPI_BYTE, &rq)
                  : MPI_File_iread_at_all(fh, at, b, n, MPI_BYTE, &rq));
            if (write && r == LATE_ROUND && t_rank == 0)
                late_mark();
        }
        else
            T_MPI(write ? MPI_File_iwrite_at(fh, at, b, n, MPI_BYTE, &rq)
                  : MPI_File_iread_at(fh, at, b, n, MPI_BYTE, &rq));
        T_MPI(MPI_Wait(&rq, &st));
        return;
    }
    if (!strcmp(mode, "indep") || !strcmp(mode, "atomic")) {
        T_MPI(MPI_File_seek(fh, (MPI_Offset) r * CH * PER, MPI_SEEK_SET));
        T_MPI(write ? MPI_File_write(fh, b, n, MPI_BYTE, &st)
              : MPI_File_read(fh, b, n, MPI_BYTE, &st));
        return;
    }
    MPI_Offset at = (MPI_Offset) r * CH * PER;
    T_MPI(write ? MPI_File_write_at_all(fh, at, b, n, MPI_BYTE, &st)
          : MPI_File_read_at_all(fh, at, b, n, MPI_BYTE, &st));
    if (write && !strcmp(mode, "sync"))
        T_MPI(MPI_File_sync(fh));
}

static void rounds(MPI_File fh, const char *mode, int nr, int pause_ms, int write)
{
    unsigned char *b = malloc((size_t) CH * PER);
    double *t = malloc(nr * sizeof(*t));
    for (int r = 0; r < nr; r++) {
        double t0 = now_ms();
        if (write)
            fill(b, r);
        if (write && r == LATE_ROUND && !strcmp(mode, "late") && t_rank == t_size - 1)
            usleep(LATE_MS * 1000);
        io_round(fh, mode, r, write, b);
        if (!write)
            check(b, r);
        t[r] = now_ms() - t0;
        usleep((useconds_t) pause_ms * 1000);
    }
    report(t, nr, write ? "write" : "read");
    free(b);
    free(t);
}

/* rank 0 writes MiB after MiB (one XFER per server each) and reads back */
static void dup_writes(MPI_File fh, int nr)
{
    size_t n = 1 << 20;
    unsigned char *b = malloc(n), *g = malloc(n);
    MPI_Status st;
    for (int r = 0; r < nr && t_rank == 0; r++) {
        for (size_t k = 0; k < n; k++)
            b[k] = pat((MPI_Offset) r * n + k);
        T_MPI(MPI_File_write_at(fh, (MPI_Offset) r * n, b, (int) n, MPI_BYTE, &st));
        T_MPI(MPI_File_read_at(fh, (MPI_Offset) r * n, g, (int) n, MPI_BYTE, &st));
        T_ASSERT(!memcmp(b, g, n), "MiB %d reads back differently", r);
    }
    free(b);
    free(g);
}

int main(int argc, char **argv)
{
    MPI_File fh;
    t_init(&argc, &argv);
    T_ASSERT(argc == 5, "usage: t_restart coll|late|indep|sync|nonblock|atomic|dup ROUNDS PAUSE_MS FILE");
    const char *mode = argv[1];
    int nr = atoi(argv[2]), pause_ms = atoi(argv[3]);
    T_ASSERT(nr > 0 && pause_ms >= 0, "bad ROUNDS or PAUSE_MS");
    MPI_File_delete(argv[4], MPI_INFO_NULL);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[4], MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh));
    if (!strcmp(mode, "atomic"))
        T_MPI(MPI_File_set_atomicity(fh, 1));
    if (!strcmp(mode, "dup"))
        dup_writes(fh, nr);
    else {
        t_set_dealt_view(fh, 0, CH);
        rounds(fh, mode, nr, pause_ms, 1);
        rounds(fh, mode, nr, strcmp(mode, "coll") && strcmp(mode, "sync") && strcmp(mode, "late")
               ? pause_ms : 0, 0);
    }
    T_MPI(MPI_File_close(&fh));
    return t_finish();
}
