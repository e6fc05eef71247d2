/* A name that cannot be opened as asked fails MPI_File_open on every rank
 * at once, with the error class and the reason: a directory ("is a
 * directory", MPI_ERR_BAD_FILE), a create under a missing parent ("does
 * not exist", MPI_ERR_NO_SUCH_FILE: a create makes no directories, as on
 * ufs:), a name too long ("name too long", MPI_ERR_BAD_FILE), a file the
 * caller may not open ("permission denied", MPI_ERR_ACCESS: --auth munge).
 * usage: t_badname FILE r|c BAD_FILE|NO_SUCH_FILE|ACCESS TEXT MAX_SECONDS
 *   r: read-only open; c: create (MPI_MODE_CREATE | MPI_MODE_RDWR)
 *   FILE @N: "ddio:/" and N bytes of 'a' */
#include "tutil.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 6, "usage: t_badname FILE r|c BAD_FILE|NO_SUCH_FILE|ACCESS TEXT MAX_SECONDS");
    char *name = argv[1];
    if (name[0] == '@') {
        size_t n = (size_t)atol(name + 1);
        name = malloc(n + 7);
        T_ASSERT(name, "out of memory");
        memcpy(name, "ddio:/", 6);
        memset(name + 6, 'a', n);
        name[n + 6] = '\0';
    }
    int amode = argv[2][0] == 'c' ? MPI_MODE_CREATE | MPI_MODE_RDWR : MPI_MODE_RDONLY;
    int want = !strcmp(argv[3], "BAD_FILE") ? MPI_ERR_BAD_FILE
               : !strcmp(argv[3], "ACCESS") ? MPI_ERR_ACCESS : MPI_ERR_NO_SUCH_FILE;
    double max = atof(argv[5]);
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    double t0 = MPI_Wtime();
    int err = MPI_File_open(MPI_COMM_WORLD, name, amode, MPI_INFO_NULL, &fh);
    double dt = MPI_Wtime() - t0;
    T_ASSERT(err != MPI_SUCCESS, "open of %.80s succeeded", name);
    char s[MPI_MAX_ERROR_STRING];
    int n, cls;
    MPI_Error_string(err, s, &n);
    MPI_Error_class(err, &cls);
    T_ASSERT(cls == want, "error class %d, expected %d (%s): %s", cls, want, argv[3], s);
    T_ASSERT(dt <= max, "open took %.2f s (bound %.1f s)", dt, max);
#ifndef OPEN_MPI  /* Open MPI's MPI_Error_string gives only the class */
    T_ASSERT(strstr(s, argv[4]), "the error does not say '%s': %s", argv[4], s);
#endif
    if (t_rank == 0)
        printf("open failed after %.2f s as expected: %.300s\n", dt, s);
    return t_finish();
}
