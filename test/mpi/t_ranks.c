/* Many ranks, small data: the collective gate's cost (issue #23).
 *
 * Every rank takes its chunks of C bytes dealt round-robin over the ranks
 * (t_set_dealt_view), then makes N collective writes of K bytes each at its
 * individual pointer, N collective reads of the same bytes back, and checks
 * them. Each call is timed between barriers (the slowest rank's time), so
 * the per-call figures are what the collective costs at this P: on ddio: an
 * allreduce before and after, every rank's XFER to every server, the
 * servers' gate waiting for all P participants.
 *
 * Prints "ranks P=.. calls=.. bytes_per_call=.. write_ms_median=..
 * write_ms_max=.. read_ms_median=.. read_ms_max=..". The harness compares
 * the file with the same run on ufs:.
 * usage: t_ranks [-k BYTES_PER_RANK_PER_CALL] [-c CHUNK] [-n CALLS] FILE */
#include "tutil.h"
#include <unistd.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/* median and max of n per-call times (ms) */
static void summary(double *t, int n, double *med, double *mx)
{
    qsort(t, (size_t) n, sizeof(*t), cmp_double);
    *med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    *mx = t[n - 1];
}

/* one collective call, timed between barriers: the slowest rank's ms */
static double timed(MPI_File fh, unsigned char *b, int k, int wr)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (wr)
        T_MPI(MPI_File_write_all(fh, b, k, MPI_BYTE, MPI_STATUS_IGNORE));
    else
        T_MPI(MPI_File_read_all(fh, b, k, MPI_BYTE, MPI_STATUS_IGNORE));
    double t = (MPI_Wtime() - t0) * 1e3;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return t;
}

int main(int argc, char **argv)
{
    int k = 4096, chunk = 512, calls = 10, opt;
    t_init(&argc, &argv);
    while ((opt = getopt(argc, argv, "k:c:n:")) != -1) {
        if (opt == 'k')
            k = atoi(optarg);
        else if (opt == 'c')
            chunk = atoi(optarg);
        else if (opt == 'n')
            calls = atoi(optarg);
    }
    T_ASSERT(optind == argc - 1 && k > 0 && chunk > 0 && calls > 0,
             "usage: t_ranks [-k BYTES] [-c CHUNK] [-n CALLS] FILE");
    unsigned char *w = malloc((size_t) k * calls), *r = malloc((size_t) k * calls);
    double *tw = malloc(calls * sizeof(double)), *tr = malloc(calls * sizeof(double));
    T_ASSERT(w && r && tw && tr, "out of memory");
    for (size_t i = 0; i < (size_t) k * calls; i++)
        w[i] = t_byte((uint64_t) t_rank, i);
    memset(r, 0, (size_t) k * calls);

    MPI_File fh;
    MPI_Info info = tm_hints();
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[optind], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    t_set_dealt_view(fh, 0, chunk);
    for (int i = 0; i < calls; i++)
        tw[i] = timed(fh, w + (size_t) i * k, k, 1);
    T_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    for (int i = 0; i < calls; i++)
        tr[i] = timed(fh, r + (size_t) i * k, k, 0);
    for (size_t i = 0; i < (size_t) k * calls; i++)
        T_ASSERT(r[i] == w[i], "byte %zu read back as %u, wrote %u", i, r[i], w[i]);
    T_MPI(MPI_File_close(&fh));

    double wm, wx, rm, rx;
    summary(tw, calls, &wm, &wx);
    summary(tr, calls, &rm, &rx);
    if (t_rank == 0)
        printf("ranks P=%d calls=%d bytes_per_call=%lld write_ms_median=%.2f write_ms_max=%.2f "
               "read_ms_median=%.2f read_ms_max=%.2f\n", t_size, calls,
               (long long) k * t_size, wm, wx, rm, rx);
    free(w);
    free(r);
    free(tw);
    free(tr);
    return t_finish();
}
