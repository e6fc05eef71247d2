/* Small contiguous collectives (IOR's collective mode): many write_at_all
 * and read_at_all calls whose parts are one range of the file each, sizes
 * from 1 byte to 64 KiB and one of 1 MiB, ranks' parts side by side (and
 * some ranks with nothing), then every part read back collectively and
 * each rank's neighbour's part independently, checked byte for byte; the
 * harness compares the file with the same run on ufs:.
 *
 *   t_smallcoll FILE                  the calls above
 *   t_smallcoll -f N MAXSEC FILE      up to N collective 4 KiB writes while
 *                                     the harness has a server die or hang:
 *                                     every rank must fail, in the SAME
 *                                     call, within MAXSEC of that call's
 *                                     start (none left waiting)
 * Hints from DDIO_TEST_HINTS. */
#include "tutil.h"

static const int sizes[] = { 8, 1, 4096, 100, 16384, 65536, 4095, 1 << 20, 24 };
#define NSIZES ((int) (sizeof(sizes) / sizeof(sizes[0])))
#define ROUNDS 6
#define SEED 4242

/* call k's size, the file offset where its parts start, and this rank's
 * count (rank k % P moves nothing in every third call) */
static int call_size(int k)
{
    return sizes[k % NSIZES];
}

static MPI_Offset call_base(int k)
{
    MPI_Offset b = 0;
    for (int i = 0; i < k; i++)
        b += (MPI_Offset) call_size(i) * t_size;
    return b;
}

static int call_count(int k, int r)
{
    return k % 3 == 2 && r == k % t_size ? 0 : call_size(k);
}

static void fill(unsigned char *p, MPI_Offset off, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = t_byte(SEED, (uint64_t) (off + i));
}

static void check(const unsigned char *p, MPI_Offset off, int n, const char *what, int k)
{
    for (int i = 0; i < n; i++)
        T_ASSERT(p[i] == t_byte(SEED, (uint64_t) (off + i)),
                 "%s: call %d, byte %lld is %u, want %u", what, k, (long long) (off + i), p[i],
                 t_byte(SEED, (uint64_t) (off + i)));
}

static void calls(const char *path)
{
    MPI_File fh;
    MPI_Info info = tm_hints();
    int ncalls = ROUNDS * NSIZES, nb = t_size > 1 ? 1 : 0;
    unsigned char *b = malloc(1 << 20);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    for (int k = 0; k < ncalls; k++) {
        MPI_Offset off = call_base(k) + (MPI_Offset) t_rank * call_size(k);
        int n = call_count(k, t_rank);
        MPI_Status st;
        int got;
        fill(b, off, n);
        T_MPI(MPI_File_write_at_all(fh, off, b, n, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &got);
        T_ASSERT(got == n, "write call %d moved %d of %d bytes", k, got, n);
    }
    for (int k = 0; k < ncalls; k++) {
        MPI_Offset off = call_base(k) + (MPI_Offset) t_rank * call_size(k);
        int n = call_count(k, t_rank);
        memset(b, 0, (size_t) n);
        T_MPI(MPI_File_read_at_all(fh, off, b, n, MPI_BYTE, MPI_STATUS_IGNORE));
        check(b, off, n, "collective read", k);
    }
    /* a neighbour's part, seen after the collectives alone (ddio's
     * visibility on return; the barrier orders it for ufs: too) */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; nb && k < ncalls; k++) {
        int r = (t_rank + 1) % t_size, n = call_count(k, r);
        MPI_Offset off = call_base(k) + (MPI_Offset) r * call_size(k);
        memset(b, 0, (size_t) n);
        T_MPI(MPI_File_read_at(fh, off, b, n, MPI_BYTE, MPI_STATUS_IGNORE));
        check(b, off, n, "neighbour's part", k);
    }
    T_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    free(b);
    if (t_rank == 0)
        printf("t_smallcoll: %d collective writes and reads checked\n", ncalls);
}

/* -f: the call that met the fault failed on every rank, the same one,
 * within maxsec of its start */
static void fail_together(const char *path, int n, double maxsec)
{
    MPI_File fh;
    MPI_Info info = tm_hints();
    unsigned char b[4096];
    int k, err = MPI_SUCCESS, *all = malloc(sizeof(int) * (size_t) t_size);
    double t0 = 0, took = 0, worst;
    T_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    for (k = 0; k < n && err == MPI_SUCCESS; k++) {
        MPI_Offset off = ((MPI_Offset) k * t_size + t_rank) * (MPI_Offset) sizeof(b);
        fill(b, off, (int) sizeof(b));
        t0 = MPI_Wtime();
        err = MPI_File_write_at_all(fh, off, b, (int) sizeof(b), MPI_BYTE, MPI_STATUS_IGNORE);
        took = MPI_Wtime() - t0;
    }
    T_ASSERT(err != MPI_SUCCESS, "all %d calls succeeded: the fault never met a call", n);
    k--;
    MPI_Allgather(&k, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < t_size; r++)
        T_ASSERT(all[r] == k, "rank %d failed in call %d, rank %d in call %d", t_rank, k, r,
                 all[r]);
    MPI_Allreduce(&took, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    T_ASSERT(worst <= maxsec, "the failed call took up to %.2f s (bound %.1f)", worst, maxsec);
    if (t_rank == 0) {
        char s[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(err, s, &len);
        printf("t_smallcoll: every rank failed call %d within %.2f s: %.200s\n", k, worst, s);
    }
    MPI_File_close(&fh);
    MPI_Info_free(&info);
    free(all);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (argc == 5 && strcmp(argv[1], "-f") == 0)
        fail_together(argv[4], atoi(argv[2]), atof(argv[3]));
    else if (argc == 2)
        calls(argv[1]);
    else
        T_FAIL("usage: t_smallcoll FILE | t_smallcoll -f N MAXSEC FILE");
    MPI_Finalize();
    return 0;
}
