/* t_h5 FILE: every rank writes its block of rows of a 2-D dataset "grid"
 * (int, 64 rows per rank x 1000 columns, value = row * 1000 + column)
 * collectively with parallel HDF5 (MPI-IO underneath), plus an attribute.
 * The mount harness runs it on a plain path under the mount (so MPI-IO
 * takes the ddio driver) and on a local path, then compares what h5dump
 * prints for the two files. */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 64
#define COLS 1000

#define CHECK(x) do { if ((x) < 0) { fprintf(stderr, "t_h5: %s failed\n", #x); MPI_Abort(MPI_COMM_WORLD, 1); } } while (0)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        fprintf(stderr, "usage: t_h5 FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    hid_t file = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(file);
    hsize_t dims[2] = {(hsize_t) ROWS * size, COLS};
    hid_t fspace = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, "grid", H5T_NATIVE_INT, fspace, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    CHECK(dset);
    hsize_t start[2] = {(hsize_t) ROWS * rank, 0}, count[2] = {ROWS, COLS};
    CHECK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
    hid_t mspace = H5Screate_simple(2, count, NULL);
    int *buf = malloc(sizeof(int) * ROWS * COLS);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            buf[r * COLS + c] = (ROWS * rank + r) * COLS + c;
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    CHECK(H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE));
    CHECK(H5Dwrite(dset, H5T_NATIVE_INT, mspace, fspace, dxpl, buf));
    hid_t aspace = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(dset, "ranks", H5T_NATIVE_INT, aspace, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(attr, H5T_NATIVE_INT, &size));
    H5Aclose(attr);
    H5Sclose(aspace);
    H5Pclose(dxpl);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Dclose(dset);
    CHECK(H5Fclose(file));
    H5Pclose(fapl);
    free(buf);
    MPI_Finalize();
    return 0;
}
