/* Hot re-reads (issue #22, docs/DESIGN.md "Hot data: the page cache"):
 * each rank writes its own contiguous part of a shared file in independent
 * calls of CALL bytes, syncs, then reads it back twice in the same calls,
 * every byte checked. Prints MiB/s of the write (sync included) and of each
 * read (the slowest rank's time), so ddio: and ufs: compare in one run.
 *   mpich/bin/mpicc -O2 -o bench/hotread bench/hotread.c
 *   tools/ddio-run -s 2 -- mpiexec -n 4 bench/hotread ddio:/h 256 1048576 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pat(uint64_t i)
{
    uint64_t x = (i / 8 + 1) * 0x9E3779B97F4A7C15ull;
    return (unsigned char)(x >> (8 * (i % 8)));
}

/* seconds of the slowest rank */
static double slowest(double t)
{
    double m;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc != 4) {
        if (r == 0)
            fprintf(stderr, "usage: hotread FILE MIB CALL_BYTES\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int64_t total = atoll(argv[2]) << 20, call = atoll(argv[3]);
    int64_t per = total / p / call * call, at = (int64_t)r * per;
    unsigned char *b = malloc((size_t)per), *back = malloc((size_t)per);
    for (int64_t i = 0; i < per; i++)
        b[i] = pat((uint64_t)(at + i));
    MPI_File fh;
    if (r == 0)
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int64_t o = 0; o < per; o += call)
        MPI_File_write_at(fh, at + o, b + o, (int)call, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    double tw = slowest(MPI_Wtime() - t), tr[2];
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        memset(back, 0, (size_t)per);
        MPI_Barrier(MPI_COMM_WORLD);
        t = MPI_Wtime();
        for (int64_t o = 0; o < per; o += call)
            MPI_File_read_at(fh, at + o, back + o, (int)call, MPI_BYTE, MPI_STATUS_IGNORE);
        tr[k] = slowest(MPI_Wtime() - t);
        bad |= memcmp(back, b, (size_t)per) != 0;
    }
    MPI_File_close(&fh);
    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    double mib = (double)per * p / (1 << 20);
    if (r == 0)
        printf("%-8s call %7lld  write+sync %8.1f MiB/s  read %8.1f MiB/s  re-read %8.1f MiB/s%s\n",
               strncmp(argv[1], "ufs:", 4) ? "ddio" : "ufs", (long long)call, mib / tw,
               mib / tr[0], mib / tr[1], anybad ? "  BYTES WRONG" : "");
    free(b);
    free(back);
    MPI_Finalize();
    return anybad;
}
