/* MPI_MODE_DELETE_ON_CLOSE removes the file at close; opening a missing file
 * fails with MPI_ERR_NO_SUCH_FILE on every rank. usage: t_delclose FILE */
#include "tutil.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_delclose FILE");
    MPI_File fh;
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1],
                        MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                        MPI_INFO_NULL, &fh));
    int v = t_rank;
    T_MPI(MPI_File_write_at(fh, t_rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    /* another rank's writes are seen after sync-barrier-sync (MPI 4.0
     * §14.6.1; small writes may wait in the writer's client cache) */
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    int r = -1;
    T_MPI(MPI_File_read_at(fh, ((t_rank + 1) % t_size) * 4, &r, 1, MPI_INT, MPI_STATUS_IGNORE));
    T_ASSERT(r == (t_rank + 1) % t_size, "read %d", r);
    T_MPI(MPI_File_close(&fh));
    int err = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    T_ASSERT(t_errclass(err) == MPI_ERR_NO_SUCH_FILE, "file survived DELETE_ON_CLOSE (class %d)",
             t_errclass(err));
    return t_finish();
}
