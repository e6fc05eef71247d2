/* first-open.c: what a job's first MPI_File_open costs, per
 * rank, against a second open of the same file in the same job.
 *
 *   first-open [-c] [-s BYTES] FILE
 *
 * -c: create FILE (MPI_MODE_CREATE | MPI_MODE_WRONLY) and write -s bytes
 * (default 1 MiB) collectively, untimed: the setup launch. Without -c:
 * after an MPI_Barrier every rank opens FILE read-only (the job's first
 * MPI_File_open, timed per rank with MPI_Wtime), closes it, and after
 * another barrier opens and closes it again (timed: the same open on
 * connections and libraries already set up). Rank 0 prints one line per
 * rank: FIRSTOPEN,RANK,FIRST_MS,SECOND_MS and then
 * FIRSTOPEN_MAX,FIRST_MS,SECOND_MS (the slowest rank's, which is what a
 * program waiting at its next collective sees). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void die(const char *what, int err)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(err, msg, &len);
    fprintf(stderr, "first-open: %s: %s\n", what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static double timed_open(const char *name)
{
    MPI_File fh;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int err = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    double t = MPI_Wtime() - t0;
    if (err != MPI_SUCCESS)
        die("open", err);
    if ((err = MPI_File_close(&fh)) != MPI_SUCCESS)
        die("close", err);
    return t * 1e3;
}

int main(int argc, char **argv)
{
    int rank, np, create = 0, opt;
    long long size = 1 << 20;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    while ((opt = getopt(argc, argv, "cs:")) != -1) {
        if (opt == 'c')
            create = 1;
        else if (opt == 's')
            size = atoll(optarg);
        else
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (optind != argc - 1) {
        if (rank == 0)
            fprintf(stderr, "usage: first-open [-c] [-s BYTES] FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *name = argv[optind];
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    if (create) {
        MPI_File fh;
        long long part = size / np, off = part * rank;
        char *buf = malloc(part ? part : 1);
        for (long long i = 0; i < part; i++)
            buf[i] = (char)(off + i);
        int err = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                MPI_INFO_NULL, &fh);
        if (err != MPI_SUCCESS)
            die("create", err);
        err = MPI_File_write_at_all(fh, off, buf, (int)part, MPI_BYTE, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS)
            die("write", err);
        if ((err = MPI_File_close(&fh)) != MPI_SUCCESS)
            die("close", err);
        free(buf);
        MPI_Finalize();
        return 0;
    }

    double t[2];
    t[0] = timed_open(name);
    t[1] = timed_open(name);
    double *all = rank == 0 ? malloc(2 * sizeof(double) * np) : NULL;
    MPI_Gather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double m0 = 0, m1 = 0;
        for (int r = 0; r < np; r++) {
            printf("FIRSTOPEN,%d,%.3f,%.3f\n", r, all[2 * r], all[2 * r + 1]);
            m0 = all[2 * r] > m0 ? all[2 * r] : m0;
            m1 = all[2 * r + 1] > m1 ? all[2 * r + 1] : m1;
        }
        printf("FIRSTOPEN_MAX,%.3f,%.3f\n", m0, m1);
        free(all);
    }
    MPI_Finalize();
    return 0;
}
