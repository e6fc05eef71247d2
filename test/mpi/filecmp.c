/* filecmp A B: compare two files through MPI-IO (any ROMIO prefixes, e.g.
 * ddio:/x and ufs:/tmp/x) byte for byte; prints the first difference.
 * Exit 0 when equal (same size, same bytes), 1 otherwise. Run on 1 rank. */
#include "tutil.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 3, "usage: filecmp A B");
    MPI_File fa, fb;
    MPI_Offset sa, sb;
    T_MPI(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fa));
    T_MPI(MPI_File_open(MPI_COMM_SELF, argv[2], MPI_MODE_RDONLY, MPI_INFO_NULL, &fb));
    T_MPI(MPI_File_get_size(fa, &sa));
    T_MPI(MPI_File_get_size(fb, &sb));
    int rc = 0;
    if (sa != sb) {
        printf("filecmp: sizes differ: %s %lld, %s %lld\n", argv[1], (long long) sa, argv[2], (long long) sb);
        rc = 1;
    }
    const int CH = 8 << 20;
    unsigned char *a = malloc(CH), *b = malloc(CH);
    for (MPI_Offset off = 0; off < (sa < sb ? sa : sb) && !rc; off += CH) {
        int n = (int) ((sa < sb ? sa : sb) - off < CH ? (sa < sb ? sa : sb) - off : CH);
        T_MPI(MPI_File_read_at(fa, off, a, n, MPI_BYTE, MPI_STATUS_IGNORE));
        T_MPI(MPI_File_read_at(fb, off, b, n, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++)
            if (a[i] != b[i]) {
                printf("filecmp: %s and %s differ at byte %lld: %u != %u\n", argv[1], argv[2],
                       (long long) (off + i), a[i], b[i]);
                rc = 1;
                break;
            }
    }
    if (!rc)
        printf("filecmp: %s == %s (%lld bytes)\n", argv[1], argv[2], (long long) sa);
    MPI_File_close(&fa);
    MPI_File_close(&fb);
    free(a);
    free(b);
    MPI_Finalize();
    return rc;
}
