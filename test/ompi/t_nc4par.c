/* netCDF-4 parallel (Debian's libnetcdf-mpi-dev: netCDF-C over parallel
 * HDF5 over MPI-IO) on one file name.
 *
 *   t_nc4par FILE
 *     creates FILE (NC_NETCDF4) with a (P*10, 24) double variable written
 *     collectively, each rank its 10 rows; a (P*16,) int variable written
 *     independently, each rank its slice; and a (P*12, 20) int variable
 *     chunked 5 x 8 (chunks crossing ranks' parts), each rank writing every
 *     P-th row collectively. Then it reopens FILE read-only in parallel and
 *     every rank checks every element of the three variables. Exit status
 *     1 on every rank when any call fails or any element differs; the
 *     harness compares the file with the same run on the control. */
#include <mpi.h>
#include <netcdf.h>
#include <netcdf_par.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, np, bad;

#define NC(call)                                                             \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != NC_NOERR) {                                               \
            fprintf(stderr, "t_nc4par rank %d line %d: %s: %s\n", rank,      \
                    __LINE__, #call, nc_strerror(rc_));                      \
            bad++;                                                           \
            goto out;                                                        \
        }                                                                    \
    } while (0)

static double dval(size_t i, size_t j) { return (double) (i * 24 + j) * 0.25 - 3; }
static int ival(size_t i) { return (int) (i * 7919 % 100003) - 50; }
static int cval(size_t i, size_t j) { return (int) (i * 20 + j) * 3 + 1; }

static void write_file(const char *name)
{
    int nc, d[5], vd, vi, vc;
    size_t P = (size_t) np, r = (size_t) rank;
    double dbuf[10 * 24];
    int ibuf[16], cbuf[20];
    size_t chunks[2] = { 5, 8 };

    NC(nc_create_par(name, NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &nc));
    NC(nc_def_dim(nc, "row", P * 10, &d[0]));
    NC(nc_def_dim(nc, "col", 24, &d[1]));
    NC(nc_def_dim(nc, "n", P * 16, &d[2]));
    NC(nc_def_dim(nc, "crow", P * 12, &d[3]));
    NC(nc_def_dim(nc, "ccol", 20, &d[4]));
    NC(nc_def_var(nc, "coll", NC_DOUBLE, 2, d, &vd));
    NC(nc_def_var(nc, "indep", NC_INT, 1, &d[2], &vi));
    NC(nc_def_var(nc, "chunk", NC_INT, 2, &d[3], &vc));
    NC(nc_def_var_chunking(nc, vc, NC_CHUNKED, chunks));
    NC(nc_enddef(nc));
    NC(nc_var_par_access(nc, vd, NC_COLLECTIVE));
    NC(nc_var_par_access(nc, vi, NC_INDEPENDENT));
    NC(nc_var_par_access(nc, vc, NC_COLLECTIVE));
    for (size_t i = 0; i < 10; i++)
        for (size_t j = 0; j < 24; j++)
            dbuf[i * 24 + j] = dval(r * 10 + i, j);
    size_t st[2] = { r * 10, 0 }, ct[2] = { 10, 24 };
    NC(nc_put_vara_double(nc, vd, st, ct, dbuf));
    for (size_t i = 0; i < 16; i++)
        ibuf[i] = ival(r * 16 + i);
    size_t s1 = r * 16, c1 = 16;
    NC(nc_put_vara_int(nc, vi, &s1, &c1, ibuf));
    for (size_t row = r; row < P * 12; row += P) {      /* 12 rows each: same count on every rank */
        for (size_t j = 0; j < 20; j++)
            cbuf[j] = cval(row, j);
        size_t s2[2] = { row, 0 }, c2[2] = { 1, 20 };
        NC(nc_put_vara_int(nc, vc, s2, c2, cbuf));
    }
    NC(nc_close(nc));
  out:;
}

static void check_file(const char *name)
{
    int nc, vd, vi, vc;
    size_t P = (size_t) np;
    double *dbuf = malloc(P * 10 * 24 * sizeof(double));
    int *ibuf = malloc(P * 16 * sizeof(int)), *cbuf = malloc(P * 12 * 20 * sizeof(int));

    if (!dbuf || !ibuf || !cbuf) {
        bad++;
        goto out;
    }
    NC(nc_open_par(name, NC_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &nc));
    NC(nc_inq_varid(nc, "coll", &vd));
    NC(nc_inq_varid(nc, "indep", &vi));
    NC(nc_inq_varid(nc, "chunk", &vc));
    NC(nc_get_var_double(nc, vd, dbuf));
    NC(nc_get_var_int(nc, vi, ibuf));
    NC(nc_get_var_int(nc, vc, cbuf));
    NC(nc_close(nc));
    for (size_t i = 0; i < P * 10 * 24; i++)
        if (dbuf[i] != dval(i / 24, i % 24) && bad++ < 5)
            fprintf(stderr, "t_nc4par rank %d: coll[%zu] = %g\n", rank, i, dbuf[i]);
    for (size_t i = 0; i < P * 16; i++)
        if (ibuf[i] != ival(i) && bad++ < 5)
            fprintf(stderr, "t_nc4par rank %d: indep[%zu] = %d\n", rank, i, ibuf[i]);
    for (size_t i = 0; i < P * 12 * 20; i++)
        if (cbuf[i] != cval(i / 20, i % 20) && bad++ < 5)
            fprintf(stderr, "t_nc4par rank %d: chunk[%zu] = %d\n", rank, i, cbuf[i]);
  out:
    free(dbuf);
    free(ibuf);
    free(cbuf);
}

int main(int argc, char **argv)
{
    int all;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: t_nc4par FILE\n");
        MPI_Finalize();
        return 2;
    }
    write_file(argv[1]);
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!all)
        check_file(argv[1]);
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("t_nc4par %s: %d ranks, %s\n", argv[1], np, all ? "FAILED" : "OK");
    MPI_Finalize();
    return all ? 1 : 0;
}
