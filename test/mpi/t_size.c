/* set_size (extend, shrink), get_size, preallocate, sync, and reads after a
 * shrink returning short counts. Leaves a file for the ufs: comparison.
 * usage: t_size FILE */
#include "tutil.h"

static MPI_Offset size_of(MPI_File fh)
{
    MPI_Offset s;
    T_MPI(MPI_File_get_size(fh, &s));
    return s;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_size FILE");
    MPI_File fh;
    if (t_rank == 0)
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    T_ASSERT(size_of(fh) == 0, "new file not empty");
    T_MPI(MPI_File_set_size(fh, 3000001));
    T_ASSERT(size_of(fh) == 3000001, "extend: %lld", (long long) size_of(fh));
    unsigned char b[1000];
    MPI_Status st;
    int n;
    T_MPI(MPI_File_read_at(fh, 2999500, b, 1000, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == 501, "read at end of extended file: %d", n);
    for (int i = 0; i < n; i++)
        T_ASSERT(b[i] == 0, "extended region not zero");
    for (int i = 0; i < 1000; i++)
        b[i] = t_byte(7, (uint64_t) t_rank * 1000 + i);
    T_MPI(MPI_File_write_at(fh, (MPI_Offset) t_rank * 777777, b, 1000, MPI_BYTE, &st));
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_set_size(fh, 1500000));
    T_ASSERT(size_of(fh) == 1500000, "shrink: %lld", (long long) size_of(fh));
    MPI_Offset at = (MPI_Offset) t_rank * 777777;
    T_MPI(MPI_File_read_at(fh, at, b, 1000, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    int want = at >= 1500000 ? 0 : (at + 1000 > 1500000 ? (int) (1500000 - at) : 1000);
    T_ASSERT(n == want, "read after shrink at %lld: %d, want %d", (long long) at, n, want);
    for (int i = 0; i < n; i++)
        T_ASSERT(b[i] == t_byte(7, (uint64_t) t_rank * 1000 + i), "data lost by shrink");
    T_MPI(MPI_File_preallocate(fh, 2500000));
    T_ASSERT(size_of(fh) == 2500000, "preallocate: %lld", (long long) size_of(fh));
    T_MPI(MPI_File_preallocate(fh, 1000));   /* never shrinks */
    T_ASSERT(size_of(fh) == 2500000, "preallocate shrank the file");
    T_MPI(MPI_File_sync(fh));
    T_MPI(MPI_File_close(&fh));
    return t_finish();
}
