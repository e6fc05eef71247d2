/* End-to-end checksums (ddio-server --checksums; run by the sums group of
 * run-mpi-tests.sh, which flips bytes in a server's datafile between the
 * runs, behind the server's back).
 *
 *   t_sums write FILE       every rank writes its CHUNK of pattern
 *                           $T_SUMS_SEED (default 1) collectively, syncs;
 *                           with $T_SUMS_SEED2 it then writes that pattern
 *                           and syncs again, where the harness kills a
 *                           server (--fault sums): that sync and the close
 *                           may fail, and are only reported. The file is
 *                           created with romio_ddio_redundancy=$T_SUMS_MODE
 *                           when set.
 *   t_sums read DUMP FILE   every rank reads its chunk collectively, then
 *                           the whole file independently, each checked
 *                           against the pattern (not with $T_SUMS_NOCHECK);
 *                           rank 0 writes the file to DUMP.
 *   t_sums readerr FILE     a collective read that must fail on every rank
 *                           (a data-integrity error): each rank prints
 *                           its error string.
 *   t_sums readerr-indep FILE  the same with each rank reading the whole
 *                           file independently. Errors are printed and
 *                           counted, never aborted on: hydra can drop a
 *                           rank's last output when another calls
 *                           MPI_Abort, and the harness greps for it.
 */
#include "tutil.h"

#define CHUNK (1 << 20)

static uint64_t seed_of(const char *var, uint64_t dflt)
{
    const char *v = getenv(var);
    return v && *v ? strtoull(v, NULL, 10) : dflt;
}

static void fill(unsigned char *b, uint64_t seed, MPI_Offset off, MPI_Offset n)
{
    for (MPI_Offset i = 0; i < n; i++)
        b[i] = t_byte(seed, (uint64_t) (off + i));
}

static void check(const unsigned char *b, uint64_t seed, MPI_Offset off, MPI_Offset n,
                  const char *what)
{
    if (getenv("T_SUMS_NOCHECK"))
        return;
    for (MPI_Offset i = 0; i < n; i++)
        if (b[i] != t_byte(seed, (uint64_t) (off + i)))
            T_FAIL("%s: byte at %lld is %u, wanted %u", what, (long long) (off + i), b[i],
                   t_byte(seed, (uint64_t) (off + i)));
}

static MPI_File open_file(const char *file, int amode)
{
    MPI_File fh;
    MPI_Info info;
    const char *mode = getenv("T_SUMS_MODE");
    MPI_Info_create(&info);
    if (mode && *mode)
        MPI_Info_set(info, "romio_ddio_redundancy", mode);
    MPI_Info_set(info, "striping_unit", "65536");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, file, amode, info, &fh));
    MPI_Info_free(&info);
    return fh;
}

static int write_pass(MPI_File fh, unsigned char *b, uint64_t seed, int tolerate)
{
    MPI_Status st;
    MPI_Offset off = (MPI_Offset) t_rank * CHUNK;
    fill(b, seed, off, CHUNK);
    int e = MPI_File_write_at_all(fh, off, b, CHUNK, MPI_BYTE, &st);
    if (e == MPI_SUCCESS)
        e = MPI_File_sync(fh);
    if (e != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int n;
        MPI_Error_string(e, s, &n);
        if (!tolerate)
            T_FAIL("write and sync of pattern %llu: %s", (unsigned long long) seed, s);
        printf("t_sums: rank %d: write and sync of pattern %llu failed (expected): %s\n",
               t_rank, (unsigned long long) seed, s);
    }
    return e;
}

static void do_write(const char *file)
{
    unsigned char *b = malloc(CHUNK);
    MPI_File fh = open_file(file, MPI_MODE_CREATE | MPI_MODE_RDWR);
    write_pass(fh, b, seed_of("T_SUMS_SEED", 1), 0);
    int crash = getenv("T_SUMS_SEED2") != NULL;
    if (crash) {
        MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
        write_pass(fh, b, seed_of("T_SUMS_SEED2", 2), 1);
    }
    int e = MPI_File_close(&fh);
    T_ASSERT(e == MPI_SUCCESS || crash, "close failed");
    free(b);
}

static void do_read(const char *dump, const char *file)
{
    uint64_t seed = seed_of("T_SUMS_SEED", 1);
    MPI_Offset size = (MPI_Offset) t_size * CHUNK;
    unsigned char *b = malloc((size_t) size);
    MPI_Status st;
    int got;
    MPI_File fh = open_file(file, MPI_MODE_RDONLY);
    MPI_Offset off = (MPI_Offset) t_rank * CHUNK;
    T_MPI(MPI_File_read_at_all(fh, off, b, CHUNK, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    T_ASSERT(got == CHUNK, "collective read: %d bytes", got);
    check(b, seed, off, CHUNK, "collective read");
    T_MPI(MPI_File_read_at(fh, 0, b, (int) size, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    T_ASSERT(got == (int) size, "independent read: %d bytes", got);
    check(b, seed, 0, size, "independent read");
    T_MPI(MPI_File_close(&fh));
    if (t_rank == 0) {
        FILE *f = fopen(dump, "wb");
        T_ASSERT(f && fwrite(b, 1, (size_t) size, f) == (size_t) size && fclose(f) == 0,
                 "writing %s", dump);
    }
    free(b);
}

static void do_readerr(const char *file, int indep)
{
    size_t len = indep ? (size_t) t_size * CHUNK : CHUNK;
    unsigned char *b = malloc(len);
    MPI_Status st;
    MPI_File fh = open_file(file, MPI_MODE_RDONLY);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    int e = indep ? MPI_File_read_at(fh, 0, b, (int) len, MPI_BYTE, &st)
                  : MPI_File_read_at_all(fh, (MPI_Offset) t_rank * CHUNK, b, CHUNK, MPI_BYTE, &st);
    int failed = e != MPI_SUCCESS, all = 0;
    MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (failed) {
        char s[MPI_MAX_ERROR_STRING];
        int n;
        MPI_Error_string(e, s, &n);
        for (char *c = s; *c; c++)   /* one line per rank, for the harness's grep */
            if (*c == '\n')
                *c = ' ';
        printf("t_sums: rank %d: read failed: %s\n", t_rank, s);
    }
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    T_ASSERT(all == t_size, "the read failed on %d of %d ranks", all, t_size);
    MPI_File_close(&fh);
    free(b);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (argc == 3 && !strcmp(argv[1], "write"))
        do_write(argv[2]);
    else if (argc == 4 && !strcmp(argv[1], "read"))
        do_read(argv[2], argv[3]);
    else if (argc == 3 && !strcmp(argv[1], "readerr"))
        do_readerr(argv[2], 0);
    else if (argc == 3 && !strcmp(argv[1], "readerr-indep"))
        do_readerr(argv[2], 1);
    else
        T_FAIL("usage: t_sums write FILE | read DUMP FILE | readerr[-indep] FILE");
    MPI_Finalize();
    return 0;
}
