/* Server errors reach every rank as the right MPI error class.
 *   t_errors nospace FILE   root on a small file system: writes fail with
 *                           MPI_ERR_NO_SPACE on every rank (independent and
 *                           collective), and the server keeps serving
 *   t_errors readonly FILE  root remounted read-only: create fails with
 *                           MPI_ERR_READ_ONLY
 *   t_errors escape FILE    FILE escapes the storage root: MPI_ERR_ACCESS */
#include "tutil.h"

#define BIG (4 << 20)

static void expect_class(int err, int want, const char *what)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int n;
    if (err != MPI_SUCCESS)
        MPI_Error_string(err, s, &n);
    T_ASSERT(t_errclass(err) == want, "%s: class %d, want %d (%s)", what, t_errclass(err), want, s);
    if (t_rank == 0)
        printf("%s: got the expected error: %s\n", what, s);
}

static void nospace(const char *f)
{
    MPI_File fh;
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    char *b = calloc(BIG, 1);
    int err = MPI_File_write_at(fh, (MPI_Offset) t_rank * BIG, b, BIG, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_NO_SPACE, "independent write on a full disk");
    err = MPI_File_write_at_all(fh, (MPI_Offset) t_rank * BIG, b, BIG, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_NO_SPACE, "collective write on a full disk");
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        T_MPI(MPI_File_delete(f, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    /* the server still serves: a small file works */
    char *g = t_name(f, ".small");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, g, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int v = 42 + t_rank, r = 0;
    T_MPI(MPI_File_write_at_all(fh, t_rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_read_at_all(fh, t_rank * 4, &r, 1, MPI_INT, MPI_STATUS_IGNORE));
    T_ASSERT(r == v, "after ENOSPC: read %d, want %d", r, v);
    T_MPI(MPI_File_close(&fh));
    free(g);
    free(b);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 3, "usage: t_errors nospace|readonly|escape FILE");
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    if (strcmp(argv[1], "nospace") == 0) {
        nospace(argv[2]);
    } else if (strcmp(argv[1], "readonly") == 0) {
        int err = MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        expect_class(err, MPI_ERR_READ_ONLY, "create on a read-only root");
    } else if (strcmp(argv[1], "escape") == 0) {
        int err = MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        expect_class(err, MPI_ERR_ACCESS, "a path escaping the storage root");
    } else {
        T_FAIL("unknown mode %s", argv[1]);
    }
    return t_finish();
}
