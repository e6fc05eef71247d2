/* Opens on MPI_COMM_SELF: each rank its own file, plus all ranks opening the
 * same file on MPI_COMM_SELF and writing disjoint parts. usage: t_self FILE */
#include "tutil.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_self FILE");
    char suffix[32];
    snprintf(suffix, sizeof suffix, ".%d", t_rank);
    char *mine = t_name(argv[1], suffix);
    MPI_File fh;
    unsigned char b[5000], r[5000];
    for (int i = 0; i < 5000; i++)
        b[i] = t_byte(11 + t_rank, i);
    T_MPI(MPI_File_open(MPI_COMM_SELF, mine, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    T_MPI(MPI_File_write(fh, b, 5000, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    T_MPI(MPI_File_read(fh, r, 5000, MPI_BYTE, MPI_STATUS_IGNORE));
    T_ASSERT(memcmp(b, r, 5000) == 0, "own file mismatch");
    T_MPI(MPI_File_close(&fh));
    T_MPI(MPI_File_delete(mine, MPI_INFO_NULL));

    T_MPI(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    T_MPI(MPI_File_write_at(fh, (MPI_Offset) t_rank * 5000, b, 5000, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    for (int p = 0; p < t_size; p++) {
        T_MPI(MPI_File_read_at(fh, (MPI_Offset) p * 5000, r, 5000, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int i = 0; i < 5000; i++)
            T_ASSERT(r[i] == t_byte(11 + p, i), "shared file: rank %d's part wrong", p);
    }
    T_MPI(MPI_File_close(&fh));
    free(mine);
    return t_finish();
}
