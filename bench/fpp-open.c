/* fpp-open.c: file-per-process metadata through MPI-IO, as a checkpoint
 * of one file per rank opens them: each rank creates N files of its own
 * (MPI_File_open on MPI_COMM_SELF, MPI_MODE_CREATE | MPI_MODE_WRONLY,
 * then MPI_File_close), opens each again read-only and closes it, and
 * deletes each (MPI_File_delete).
 *
 *   mpiexec -n P fpp-open PREFIX N
 *
 * PREFIX is a directory with its file system's prefix ("ddio:/fpp",
 * "ufs:/tmp/x"); it must exist. One line per phase, from rank 0:
 * FPP,PHASE,P,N,SECONDS,OPS_PER_S (every rank's N operations; the
 * phase's time is the slowest rank's, between barriers). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { CREATE, OPEN, DELETE, NPHASES };
static const char *const names[NPHASES] = {"create", "open-close", "delete"};

static int one(int phase, const char *path)
{
    MPI_File fh;
    int rc;
    if (phase == DELETE)
        return MPI_File_delete(path, MPI_INFO_NULL);
    rc = MPI_File_open(MPI_COMM_SELF, path, phase == CREATE ?
                       MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    return rc != MPI_SUCCESS ? rc : MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: fpp-open PREFIX N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = atoi(argv[2]);
    char path[4096];
    for (int p = 0; p < NPHASES; p++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            snprintf(path, sizeof(path), "%s/r%d.f%d", argv[1], rank, i);
            int rc = one(p, path), len;
            if (rc != MPI_SUCCESS) {
                char why[MPI_MAX_ERROR_STRING];
                MPI_Error_string(rc, why, &len);
                fprintf(stderr, "rank %d: %s of %s: %s\n", rank, names[p], path, why);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        double dt = MPI_Wtime() - t0, worst;
        MPI_Reduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("FPP,%s,%d,%d,%.6f,%.1f\n", names[p], size, n, worst,
                   (double)size * n / worst);
    }
    MPI_Finalize();
    return 0;
}
