/* A server that is down or does not answer: MPI_File_open fails on every
 * rank with a clear error naming the server, within a bounded time.
 * usage: t_missing FILE MAX_SECONDS   (DDIO_SERVERS/DDIO_TIMEOUT set by the caller) */
#include "tutil.h"

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 3, "usage: t_missing FILE MAX_SECONDS");
    double max = atof(argv[2]);
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    double t0 = MPI_Wtime();
    int err = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    double dt = MPI_Wtime() - t0;
    T_ASSERT(err != MPI_SUCCESS, "open succeeded with a missing server");
    char s[MPI_MAX_ERROR_STRING];
    int n;
    MPI_Error_string(err, s, &n);
    T_ASSERT(dt <= max, "open took %.1f s (bound %.1f s)", dt, max);
    const char *srv = getenv("DDIO_SERVERS");
#ifdef OPEN_MPI
    /* Open MPI's MPI_Error_string gives only the class: the driver's message,
     * which names the server, is on stderr, where the harness looks for it */
    T_ASSERT(srv, "DDIO_SERVERS is not set");
#else
    T_ASSERT(srv && (strstr(s, "127.0.0.1") || strstr(s, "server")), "error does not name the server: %s", s);
#endif
    if (t_rank == 0)
        printf("open failed after %.2f s as expected: %s\n", dt, s);
    return t_finish();
}
