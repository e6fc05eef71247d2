/* Built with Debian's mpicc.mpich, run with LD_LIBRARY_PATH pointing at the
 * ddio-enabled MPICH: checks that MPI_Get_library_version reports our
 * library (it must contain $DDIO_EXPECT_LIB) and that a ddio: file can be
 * written and read back. usage: t_abi FILE */
#include "tutil.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_abi FILE");
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n;
    MPI_Get_library_version(v, &n);
    const char *want = getenv("DDIO_EXPECT_LIB");
    T_ASSERT(want && strstr(v, want), "library version does not mention '%s':\n%s", want ? want : "(unset)", v);
    if (t_rank == 0)
        printf("library: %.*s\n", (int) (strchr(v, '\n') ? strchr(v, '\n') - v : n), v);
    MPI_File fh;
    int w[256], r[256];
    for (int i = 0; i < 256; i++)
        w[i] = t_rank * 1000 + i;
    /* a failed open (a library without the driver: abi-check-warning looks
     * for its *iofstypeunsupported) ends the program without MPI_Abort,
     * which could tear the ranks down before Hydra forwarded the message */
    int e = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                          &fh);
    if (e != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        MPI_Error_string(e, s, &n);
        fprintf(stderr, "rank %d: MPI_File_open %s: %s\n", t_rank, argv[1], s);
        MPI_Finalize();
        return 1;
    }
    T_MPI(MPI_File_write_at_all(fh, (MPI_Offset) t_rank * sizeof w, w, 256, MPI_INT, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_read_at_all(fh, (MPI_Offset) ((t_rank + 1) % t_size) * sizeof r, r, 256, MPI_INT,
                               MPI_STATUS_IGNORE));
    for (int i = 0; i < 256; i++)
        T_ASSERT(r[i] == ((t_rank + 1) % t_size) * 1000 + i, "read back %d at %d", r[i], i);
    T_MPI(MPI_File_close(&fh));
    return t_finish();
}
