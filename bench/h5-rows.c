/* h5-rows: HDF5's everyday parallel case, timed. A 2-D dataset of doubles
 * (ROWS x COLS, contiguous layout) written then read back collectively
 * with hyperslabs, each rank's share either its rows (one contiguous range
 * of the file per rank: HDF5's most common decomposition) or its columns
 * (COLS / P doubles of every row: small strided pieces). The write time
 * covers create, the collective write, H5Fflush (MPI_File_sync) and close;
 * the read time open, the collective read and close, with the bytes
 * checked after the timer stops. One line per phase:
 *   RESULT,shape,phase,P,bytes,seconds,MiB_s,status
 * usage: h5-rows rows|cols ROWS COLS FILE   (FILE: ddio:/x or ufs:/path) */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

static double value(hsize_t r, hsize_t c) { return (double)(r * 1000003u + c); }

/* this rank's hyperslab: start and count */
static void share(int rows, hsize_t R, hsize_t C, hsize_t st[2], hsize_t cnt[2])
{
    if (rows) {
        st[0] = R / nprocs * rank; st[1] = 0;
        cnt[0] = R / nprocs; cnt[1] = C;
    } else {
        st[0] = 0; st[1] = C / nprocs * rank;
        cnt[0] = R; cnt[1] = C / nprocs;
    }
}

static hid_t fapl(void)
{
    hid_t p = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(p, MPI_COMM_WORLD, MPI_INFO_NULL);
    return p;
}

static hid_t xfer_coll(void)
{
    hid_t x = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(x, H5FD_MPIO_COLLECTIVE);
    return x;
}

static void report(const char *shape, const char *phase, double bytes, double t, int ok)
{
    double tmax;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("RESULT,%s,%s,%d,%.0f,%.6f,%.2f,%s\n", shape, phase, nprocs, bytes, tmax,
               bytes / tmax / 1048576.0, ok ? "ok" : "WRONG");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc != 5) {
        if (rank == 0)
            fprintf(stderr, "usage: h5-rows rows|cols ROWS COLS FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rows = strcmp(argv[1], "rows") == 0;
    hsize_t R = strtoull(argv[2], NULL, 10), C = strtoull(argv[3], NULL, 10);
    if ((rows ? R : C) % (hsize_t)nprocs) {
        if (rank == 0)
            fprintf(stderr, "h5-rows: %s must divide by %d ranks\n", rows ? "ROWS" : "COLS", nprocs);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hsize_t dims[2] = {R, C}, st[2], cnt[2];
    share(rows, R, C, st, cnt);
    size_t n = (size_t)(cnt[0] * cnt[1]);
    double *buf = malloc(n * sizeof(double)), *got = malloc(n * sizeof(double));
    if (!buf || !got)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (hsize_t i = 0; i < cnt[0]; i++)
        for (hsize_t j = 0; j < cnt[1]; j++)
            buf[i * cnt[1] + j] = value(st[0] + i, st[1] + j);
    double bytes = (double)R * (double)C * sizeof(double);

    /* write */
    hid_t fa = fapl(), dx = xfer_coll();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    hid_t f = H5Fcreate(argv[4], H5F_ACC_TRUNC, H5P_DEFAULT, fa);
    hid_t fs = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(f, "d", H5T_NATIVE_DOUBLE, fs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t ms = H5Screate_simple(2, cnt, NULL);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, cnt, NULL);
    herr_t w = H5Dwrite(ds, H5T_NATIVE_DOUBLE, ms, fs, dx, buf);
    H5Dclose(ds);
    H5Fflush(f, H5F_SCOPE_GLOBAL);
    H5Sclose(fs);
    H5Fclose(f);
    MPI_Barrier(MPI_COMM_WORLD);
    double tw = MPI_Wtime() - t0;
    int ok = w >= 0, all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    report(argv[1], "write", bytes, tw, all);

    /* read (hot: just written) */
    memset(got, 0, n * sizeof(double));
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    f = H5Fopen(argv[4], H5F_ACC_RDONLY, fa);
    ds = H5Dopen2(f, "d", H5P_DEFAULT);
    fs = H5Dget_space(ds);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, st, NULL, cnt, NULL);
    herr_t r = H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, dx, got);
    H5Dclose(ds);
    H5Sclose(fs);
    H5Fclose(f);
    MPI_Barrier(MPI_COMM_WORLD);
    double tr = MPI_Wtime() - t0;
    ok = r >= 0 && memcmp(buf, got, n * sizeof(double)) == 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    report(argv[1], "read", bytes, tr, all);
    H5Sclose(ms);
    H5Pclose(fa);
    H5Pclose(dx);
    free(buf);
    free(got);
    MPI_Finalize();
    return all ? 0 : 1;
}
