/* mpicopy SRC DST: copy a file through MPI-IO (any ROMIO prefixes, e.g.
 * ddio:/x to ufs:/tmp/x), so POSIX-only readers (ncmpidiff's and
 * ncvalidator's format check) can read a ddio file when no ddio mount is
 * available. DST is created or truncated. Run on 1 rank. */
#include "tutil.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 3, "usage: mpicopy SRC DST");
    MPI_File fs, fd;
    MPI_Offset size;
    T_MPI(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fs));
    T_MPI(MPI_File_open(MPI_COMM_SELF, argv[2], MPI_MODE_WRONLY | MPI_MODE_CREATE,
                        MPI_INFO_NULL, &fd));
    T_MPI(MPI_File_get_size(fs, &size));
    T_MPI(MPI_File_set_size(fd, 0));
    const int CH = 8 << 20;
    unsigned char *buf = malloc(CH);
    T_ASSERT(buf != NULL, "out of memory");
    for (MPI_Offset off = 0; off < size; off += CH) {
        int n = (int) (size - off < CH ? size - off : CH), got;
        MPI_Status st;
        T_MPI(MPI_File_read_at(fs, off, buf, n, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &got);
        /* a short read means the size changed under us: say so */
        T_ASSERT(got == n, "%s: read %d of %d bytes at %lld", argv[1], got, n, (long long) off);
        T_MPI(MPI_File_write_at(fd, off, buf, n, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    T_MPI(MPI_File_close(&fs));
    T_MPI(MPI_File_close(&fd));
    free(buf);
    printf("mpicopy: %s -> %s (%lld bytes)\n", argv[1], argv[2], (long long) size);
    MPI_Finalize();
    return 0;
}
