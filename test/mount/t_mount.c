/* t_mount: MPI-IO calls the mount harness needs that no other test program
 * makes (run-mount-tests.sh builds it with the ddio MPICH's mpicc).
 *   t_mount delete FILE    MPI_File_delete(FILE); exit 0 on success
 *   t_mount missing FILE   open FILE without CREATE: exit 0 if MPI says
 *                          MPI_ERR_NO_SUCH_FILE (the error class ENOENT maps to)
 * Prints the MPI error string on any other outcome. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int report(const char *what, const char *file, int err)
{
    char s[MPI_MAX_ERROR_STRING];
    int len = 0, cls;
    MPI_Error_class(err, &cls);
    MPI_Error_string(err, s, &len);
    printf("t_mount: %s %s: class %d: %s\n", what, file, cls, s);
    return cls;
}

int main(int argc, char **argv)
{
    int rc = 2;
    MPI_Init(&argc, &argv);
    if (argc != 3) {
        fprintf(stderr, "usage: t_mount delete|missing FILE\n");
    } else if (!strcmp(argv[1], "delete")) {
        int err = MPI_File_delete(argv[2], MPI_INFO_NULL);
        rc = err == MPI_SUCCESS ? 0 : (report("delete", argv[2], err), 1);
    } else if (!strcmp(argv[1], "missing")) {
        MPI_File fh;
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
        int err = MPI_File_open(MPI_COMM_SELF, argv[2], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        if (err == MPI_SUCCESS) {
            printf("t_mount: open %s succeeded, expected MPI_ERR_NO_SUCH_FILE\n", argv[2]);
            MPI_File_close(&fh);
            rc = 1;
        } else
            rc = report("open", argv[2], err) == MPI_ERR_NO_SUCH_FILE ? 0 : 1;
    } else
        fprintf(stderr, "t_mount: unknown command '%s'\n", argv[1]);
    MPI_Finalize();
    return rc;
}
