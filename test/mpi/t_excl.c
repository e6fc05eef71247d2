/* CREATE|EXCL across ranks and servers: a collective EXCL create of a new
 * file succeeds on every rank; repeating it fails on every rank with
 * MPI_ERR_FILE_EXISTS; EXCL opens of one name on MPI_COMM_SELF from every
 * rank at once: exactly one wins. usage: t_excl FILE */
#include "tutil.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_excl FILE");
    const char *f = argv[1];
    MPI_File fh;
    if (t_rank == 0)
        MPI_File_delete(f, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh));
    T_MPI(MPI_File_close(&fh));
    int err = MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh);
    T_ASSERT(t_errclass(err) == MPI_ERR_FILE_EXISTS, "second EXCL create: class %d", t_errclass(err));

    char *g = t_name(f, ".self");
    if (t_rank == 0)
        MPI_File_delete(g, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    err = MPI_File_open(MPI_COMM_SELF, g, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                        MPI_INFO_NULL, &fh);
    int won = err == MPI_SUCCESS, total;
    T_ASSERT(won || t_errclass(err) == MPI_ERR_FILE_EXISTS, "EXCL race: unexpected class %d",
             t_errclass(err));
    if (won) {
        char b = (char) t_rank;
        T_MPI(MPI_File_write_at(fh, 0, &b, 1, MPI_BYTE, MPI_STATUS_IGNORE));
        T_MPI(MPI_File_close(&fh));
    }
    MPI_Allreduce(&won, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    T_ASSERT(total == 1, "%d ranks won the EXCL create", total);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        T_MPI(MPI_File_delete(g, MPI_INFO_NULL));
        err = MPI_File_delete(g, MPI_INFO_NULL);
        T_ASSERT(t_errclass(err) == MPI_ERR_NO_SUCH_FILE, "delete of a deleted file: class %d",
                 t_errclass(err));
    }
    free(g);
    return t_finish();
}
