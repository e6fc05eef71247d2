/* What the driver cannot give on Open MPI's ROMIO 3.2.1 is refused cleanly
 * (docs/CONFORMANCE.md), on every rank, and the file stays usable:
 *
 *   t_refuse FILE
 *     MPI_File_set_atomicity(fh, 1) must fail (atomic mode needs byte-range
 *     locks, which ROMIO 3.2.1 takes with fcntl on a local descriptor),
 *     MPI_File_write_shared must fail (the shared pointer needs the same
 *     locks), and a write_at_all and read_at_all afterwards must move every
 *     byte. Exit status 0 only then. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_File fh;
    int rank, rc, bad = 0, all;
    char w[64], r[64];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2 || MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR,
                                   MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "t_refuse: usage: t_refuse FILE, or the open failed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if ((rc = MPI_File_set_atomicity(fh, 1)) == MPI_SUCCESS) {
        fprintf(stderr, "t_refuse rank %d: set_atomicity(1) succeeded\n", rank);
        bad++;
    }
    if ((rc = MPI_File_write_shared(fh, "x", 1, MPI_BYTE, MPI_STATUS_IGNORE)) == MPI_SUCCESS) {
        fprintf(stderr, "t_refuse rank %d: write_shared succeeded\n", rank);
        bad++;
    }
    memset(w, 'a' + rank % 26, sizeof(w));
    memset(r, 0, sizeof(r));
    if (MPI_File_write_at_all(fh, rank * 64, w, 64, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS
        || MPI_File_read_at_all(fh, rank * 64, r, 64, MPI_BYTE, MPI_STATUS_IGNORE) != MPI_SUCCESS
        || memcmp(w, r, sizeof(w))) {
        fprintf(stderr, "t_refuse rank %d: the file is not usable after the refusals\n", rank);
        bad++;
    }
    MPI_File_close(&fh);
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("t_refuse %s: %s\n", argv[1], all ? "FAILED" : "refused, file usable");
    MPI_Finalize();
    return all ? 1 : 0;
}
