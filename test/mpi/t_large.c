/* More than 2 GiB on one rank in one collective: rank 0 writes MIB MiB
 * (default 2100) with ONE write_at_all_c of count MIB of a 1 MiB contiguous
 * type (MPI-3 libraries, Open MPI 4.1: write_at_all, the same int count),
 * the other ranks a small piece after it; then everyone reads its part
 * back with ONE read_at_all_c into the same buffer (cleared) and checks every
 * 8-byte word against the pattern, and the status counts (> INT_MAX bytes).
 * usage: t_large [MIB] FILE   (hints from DDIO_TEST_HINTS) */
#include "tmodel.h"

#define MB (1 << 20)

static inline uint64_t word(uint64_t i)
{
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    return x * 0xBF58476D1CE4E5B9ull;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2 || argc == 3, "usage: t_large [MIB] FILE");
    long mib = argc == 3 ? atol(argv[1]) : 2100;
    const char *fname = argv[argc - 1];
    MPI_Info info = tm_hints();
    MPI_Datatype mb;
    MPI_Type_contiguous(MB, MPI_BYTE, &mb);
    MPI_Type_commit(&mb);
    int count = t_rank == 0 ? (int) mib : 1;
    MPI_Offset off = t_rank == 0 ? 0 : (MPI_Offset) (mib + t_rank - 1) * MB;
    size_t bytes = (size_t) count * MB, nw = bytes / 8;
    uint64_t *buf = malloc(bytes), first = (uint64_t) off / 8;
    T_ASSERT(buf, "cannot allocate %zu bytes", bytes);
    for (size_t i = 0; i < nw; i++)
        buf[i] = word(first + i);

    MPI_File fh;
    MPI_Status st;
    MPI_Count n;
    double t0 = MPI_Wtime();
    T_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    /* the MPI 4 large-count binding (the count itself fits in an int:
     * MPICH 4.0.2's ROMIO asserts that; the bytes do not) */
#if MPI_VERSION >= 4
    T_MPI(MPI_File_write_at_all_c(fh, off, buf, (MPI_Count) count, mb, &st));
#else   /* Open MPI 4.1: the int form, the same int count of a 1 MiB type */
    T_MPI(MPI_File_write_at_all(fh, off, buf, count, mb, &st));
#endif
    MPI_Get_elements_x(&st, MPI_BYTE, &n);
    T_ASSERT(n == (MPI_Count) bytes, "write_at_all: %lld of %zu bytes", (long long) n, bytes);
    double t1 = MPI_Wtime();
    memset(buf, 0, bytes);
#if MPI_VERSION >= 4
    T_MPI(MPI_File_read_at_all_c(fh, off, buf, (MPI_Count) count, mb, &st));
#else
    T_MPI(MPI_File_read_at_all(fh, off, buf, count, mb, &st));
#endif
    double t2 = MPI_Wtime();
    MPI_Get_elements_x(&st, MPI_BYTE, &n);
    T_ASSERT(n == (MPI_Count) bytes, "read_at_all: %lld of %zu bytes", (long long) n, bytes);
    MPI_Count nc;
#if MPI_VERSION >= 4
    MPI_Get_count_c(&st, MPI_BYTE, &nc);
#else
    nc = n;
#endif
    T_ASSERT(nc == (MPI_Count) bytes, "MPI_Get_count_c: %lld of %zu bytes", (long long) nc,
             bytes);
    for (size_t i = 0; i < nw; i++)
        T_ASSERT(buf[i] == word(first + i), "word %zu (file offset %lld) is wrong", i,
                 (long long) (off + 8 * (MPI_Offset) i));
    MPI_Offset size;
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == (MPI_Offset) (mib + t_size - 1) * MB, "file size %lld", (long long) size);
    T_MPI(MPI_File_close(&fh));
    if (t_rank == 0)
        printf("rank 0: %zu bytes written in %.2f s, read in %.2f s\n", bytes, t1 - t0, t2 - t1);
    MPI_Type_free(&mb);
    MPI_Info_free(&info);
    free(buf);
    return t_finish();
}
