/* t_h5 FILE: an HDF5 program on MPI-IO (Debian's libhdf5 mpich flavour,
 * unmodified). It writes contiguous and chunked datasets, collectively and
 * independently, with attributes, closes the file, reopens it and reads every
 * dataset back with a different decomposition, checking every value against
 * the formula that wrote it. Object times are off (H5Pset_obj_track_times),
 * so the same run on ddio: and on ufs: leaves byte-identical files, which the
 * harness compares with filecmp.
 *
 * Each collective call must stay collective inside HDF5
 * (H5Pget_mpio_actual_io_mode), so it reaches ROMIO's *_all entry points; the
 * harness checks the servers' coll_xfers counters on top of that. */
#include <hdf5.h>
#include "../mpi/tutil.h"

#define H5CHK(call) do { if ((call) < 0) T_FAIL("%s failed", #call); } while (0)

enum { NY = 37, D_CONTIG_COLL, D_CONTIG_INDEP, D_CHUNK_COLL, D_CHUNK_INDEP, D_CHUNK_NONE };
static const double FILL = -1.0;

static hsize_t nx;   /* rows: not a multiple of the rank count */

/* the value at (i, j) of dataset `ds` (exact in a double and in an int) */
static double val(int ds, hsize_t i, hsize_t j)
{
    return ds * 1000000.0 + (double) i * 1000.0 + (double) j;
}

/* [lo, hi) of n items split as evenly as possible over t_size ranks */
static void share(hsize_t n, int r, hsize_t *lo, hsize_t *hi)
{
    hsize_t q = n / (hsize_t) t_size, rem = n % (hsize_t) t_size, ur = (hsize_t) r;
    *lo = ur * q + (ur < rem ? ur : rem);
    *hi = *lo + q + (ur < rem ? 1 : 0);
}

static hid_t xfer(H5FD_mpio_xfer_t mode)
{
    hid_t dx = H5Pcreate(H5P_DATASET_XFER);
    H5CHK(dx);
    H5CHK(H5Pset_dxpl_mpio(dx, mode));
    return dx;
}

static hid_t fapl(void)
{
    hid_t fa = H5Pcreate(H5P_FILE_ACCESS);
    MPI_Info info = tm_hints();
    H5CHK(fa);
    H5CHK(H5Pset_fapl_mpio(fa, MPI_COMM_WORLD, info));
    MPI_Info_free(&info);
    return fa;
}

/* A selection of the [nx][NY] dataset, kinds of decomposition: */
enum sel { ROW_BLOCK, ROW_CYCLIC, COL_BLOCK, COL_CYCLIC, ALL, NONE };

/* the file-space selection of kind `k` for this rank; *n = elements */
static hid_t select_rows_cols(enum sel k, size_t *n)
{
    hsize_t dims[2] = {nx, NY}, lo, hi;
    hid_t sp = H5Screate_simple(2, dims, NULL);
    H5CHK(sp);
    hsize_t start[2] = {0, 0}, stride[2] = {1, 1}, count[2] = {1, 1}, block[2] = {nx, NY};
    unsigned r = (unsigned) t_rank, p = (unsigned) t_size;
    switch (k) {
    case ROW_BLOCK:
        share(nx, t_rank, &lo, &hi);
        start[0] = lo; block[0] = hi - lo;
        break;
    case ROW_CYCLIC:   /* rows r, r+P, ...: strided in the file */
        start[0] = r; stride[0] = p; count[0] = (nx - r + p - 1) / p; block[0] = 1;
        break;
    case COL_BLOCK:
        share(NY, t_rank, &lo, &hi);
        start[1] = lo; block[1] = hi - lo;
        break;
    case COL_CYCLIC:   /* columns r, r+P, ...: one element per piece */
        start[1] = r; stride[1] = p; count[1] = (NY - r + p - 1) / p; block[1] = 1;
        break;
    case ALL:
        break;
    case NONE:
        H5CHK(H5Sselect_none(sp));
        *n = 0;
        return sp;
    }
    *n = (size_t) (count[0] * block[0] * count[1] * block[1]);
    if (*n == 0)
        H5CHK(H5Sselect_none(sp));
    else
        H5CHK(H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, stride, count, block));
    T_ASSERT(H5Sget_select_npoints(sp) == (hssize_t) *n, "selection %d: %lld elements, want %zu",
             (int) k, (long long) H5Sget_select_npoints(sp), *n);
    return sp;
}

/* is (i, j) in this rank's selection of kind `k`? */
static int in_sel(enum sel k, hsize_t i, hsize_t j)
{
    hsize_t lo, hi, r = (hsize_t) t_rank, p = (hsize_t) t_size;
    switch (k) {
    case ROW_BLOCK: share(nx, t_rank, &lo, &hi); return i >= lo && i < hi;
    case ROW_CYCLIC: return i % p == r;
    case COL_BLOCK: share(NY, t_rank, &lo, &hi); return j >= lo && j < hi;
    case COL_CYCLIC: return j % p == r;
    case ALL: return 1;
    case NONE: return 0;
    }
    return 0;
}

/* the (i, j) coordinates of the n selected elements, in HDF5's selection
 * order (row-major for a hyperslab) */
static hsize_t *coords(enum sel k, size_t n)
{
    hsize_t *c = malloc(2 * n * sizeof *c + 1);
    size_t got = 0;
    T_ASSERT(c, "out of memory");
    for (hsize_t i = 0; i < nx; i++)
        for (hsize_t j = 0; j < NY; j++)
            if (in_sel(k, i, j)) {
                T_ASSERT(got < n, "selection larger than its %zu elements", n);
                c[2 * got] = i;
                c[2 * got + 1] = j;
                got++;
            }
    T_ASSERT(got == n, "selection has %zu elements, HDF5 says %zu", got, n);
    return c;
}

/* the value (i, j) of dataset `ds` must hold after the writes: D_CHUNK_NONE
 * holds FILL in the rows of odd ranks, which wrote nothing */
static double expected(int ds, hsize_t i, hsize_t j)
{
    if (ds == D_CHUNK_NONE)
        for (int r = 1; r < t_size; r += 2) {
            hsize_t lo, hi;
            share(nx, r, &lo, &hi);
            if (i >= lo && i < hi)
                return FILL;
        }
    return val(ds, i, j);
}

/* Write (writing = 1) or read and check every value of dataset `ds` (double
 * or int) through this rank's selection `k`, with transfer mode `mode`. */
static void xfer_ds(hid_t d, int ds, hid_t type, enum sel k, H5FD_mpio_xfer_t mode, int writing)
{
    size_t n;
    hid_t fs = select_rows_cols(k, &n);
    hsize_t mn = n, *c = coords(k, n);
    hid_t ms = H5Screate_simple(1, &mn, NULL);
    int isd = H5Tequal(type, H5T_NATIVE_DOUBLE) > 0;
    const char *what = mode == H5FD_MPIO_COLLECTIVE ? "collective" : "independent";
    void *buf = malloc(n * 8 + 1);
    T_ASSERT(buf, "out of memory");
    memset(buf, 0x5a, n * 8 + 1);
    for (size_t e = 0; writing && e < n; e++) {
        double v = val(ds, c[2 * e], c[2 * e + 1]);
        if (isd)
            ((double *) buf)[e] = v;
        else
            ((int *) buf)[e] = (int) v;
    }
    if (n == 0)
        H5CHK(H5Sselect_none(ms));
    hid_t dx = xfer(mode);
    if (writing)
        H5CHK(H5Dwrite(d, type, ms, fs, dx, buf));
    else
        H5CHK(H5Dread(d, type, ms, fs, dx, buf));
    for (size_t e = 0; !writing && e < n; e++) {
        hsize_t i = c[2 * e], j = c[2 * e + 1];
        double want = expected(ds, i, j);
        double got = isd ? ((double *) buf)[e] : (double) ((int *) buf)[e];
        T_ASSERT(got == want, "dataset %d (%s read) at (%llu, %llu): %.1f, want %.1f", ds, what,
                 (unsigned long long) i, (unsigned long long) j, got, want);
    }
    if (mode == H5FD_MPIO_COLLECTIVE) {
        H5D_mpio_actual_io_mode_t io;
        H5CHK(H5Pget_mpio_actual_io_mode(dx, &io));
        T_ASSERT(io != H5D_MPIO_NO_COLLECTIVE, "dataset %d: HDF5 did not %s collectively", ds,
                 writing ? "write" : "read");
    }
    H5Pclose(dx);
    H5Sclose(ms);
    H5Sclose(fs);
    free(buf);
    free(c);
}

static void write_ds(hid_t d, int ds, hid_t type, enum sel k, H5FD_mpio_xfer_t mode)
{
    xfer_ds(d, ds, type, k, mode, 1);
}

static void read_ds(hid_t d, int ds, hid_t type, enum sel k, H5FD_mpio_xfer_t mode)
{
    xfer_ds(d, ds, type, k, mode, 0);
}

static hid_t create_ds(hid_t loc, const char *name, hid_t type, const hsize_t *chunk)
{
    hsize_t dims[2] = {nx, NY};
    hid_t sp = H5Screate_simple(2, dims, NULL), dc = H5Pcreate(H5P_DATASET_CREATE);
    H5CHK(sp);
    H5CHK(dc);
    H5CHK(H5Pset_obj_track_times(dc, 0));
    if (chunk) {
        H5CHK(H5Pset_chunk(dc, 2, chunk));
        H5CHK(H5Pset_fill_value(dc, H5T_NATIVE_DOUBLE, &FILL));
        H5CHK(H5Pset_fill_time(dc, H5D_FILL_TIME_ALLOC));
    }
    hid_t d = H5Dcreate2(loc, name, H5Tequal(type, H5T_NATIVE_DOUBLE) > 0 ? H5T_IEEE_F64LE
                         : H5T_STD_I32LE, sp, H5P_DEFAULT, dc, H5P_DEFAULT);
    H5CHK(d);
    H5Pclose(dc);
    H5Sclose(sp);
    return d;
}

static const char TITLE[] = "ddio HDF5 test file";
static const double SCALE[3] = {0.5, 2.0, 1e-3};

static void write_attrs(hid_t f, hid_t d)
{
    hid_t s = H5Screate(H5S_SCALAR), st = H5Tcopy(H5T_C_S1);
    H5CHK(H5Tset_size(st, sizeof TITLE));
    hid_t a = H5Acreate2(f, "title", st, s, H5P_DEFAULT, H5P_DEFAULT);
    H5CHK(a);
    H5CHK(H5Awrite(a, st, TITLE));
    H5Aclose(a);
    a = H5Acreate2(f, "nranks", H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT);
    H5CHK(a);
    H5CHK(H5Awrite(a, H5T_NATIVE_INT, &t_size));
    H5Aclose(a);
    hsize_t three = 3;
    hid_t s3 = H5Screate_simple(1, &three, NULL);
    a = H5Acreate2(d, "scale", H5T_IEEE_F64LE, s3, H5P_DEFAULT, H5P_DEFAULT);
    H5CHK(a);
    H5CHK(H5Awrite(a, H5T_NATIVE_DOUBLE, SCALE));
    H5Aclose(a);
    H5Sclose(s3);
    H5Tclose(st);
    H5Sclose(s);
}

static void check_attrs(hid_t f, hid_t d)
{
    char title[sizeof TITLE];
    int np = -1;
    double scale[3] = {0, 0, 0};
    hid_t st = H5Tcopy(H5T_C_S1), a;
    H5CHK(H5Tset_size(st, sizeof TITLE));
    H5CHK(a = H5Aopen(f, "title", H5P_DEFAULT));
    H5CHK(H5Aread(a, st, title));
    H5Aclose(a);
    H5CHK(a = H5Aopen(f, "nranks", H5P_DEFAULT));
    H5CHK(H5Aread(a, H5T_NATIVE_INT, &np));
    H5Aclose(a);
    H5CHK(a = H5Aopen(d, "scale", H5P_DEFAULT));
    H5CHK(H5Aread(a, H5T_NATIVE_DOUBLE, scale));
    H5Aclose(a);
    H5Tclose(st);
    T_ASSERT(strcmp(title, TITLE) == 0, "attribute title: '%s'", title);
    T_ASSERT(np == t_size, "attribute nranks: %d, want %d", np, t_size);
    T_ASSERT(memcmp(scale, SCALE, sizeof SCALE) == 0, "attribute scale: %g %g %g", scale[0],
             scale[1], scale[2]);
}

static const hsize_t CHUNK_A[2] = {5, 8}, CHUNK_B[2] = {4, 16};

static void write_file(const char *name)
{
    hid_t fc = H5Pcreate(H5P_FILE_CREATE), fa = fapl();
    H5CHK(H5Pset_obj_track_times(fc, 0));   /* the root group: no times */
    hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, fc, fa);
    H5CHK(f);
    hid_t gc = H5Pcreate(H5P_GROUP_CREATE);
    H5CHK(H5Pset_obj_track_times(gc, 0));
    hid_t g = H5Gcreate2(f, "g", H5P_DEFAULT, gc, H5P_DEFAULT);
    H5CHK(g);

    hid_t d0 = create_ds(f, "contig_coll", H5T_NATIVE_DOUBLE, NULL);
    write_ds(d0, D_CONTIG_COLL, H5T_NATIVE_DOUBLE, ROW_BLOCK, H5FD_MPIO_COLLECTIVE);
    write_attrs(f, d0);
    hid_t d1 = create_ds(g, "contig_indep", H5T_NATIVE_INT, NULL);
    write_ds(d1, D_CONTIG_INDEP, H5T_NATIVE_INT, COL_CYCLIC, H5FD_MPIO_INDEPENDENT);
    hid_t d2 = create_ds(f, "chunk_coll", H5T_NATIVE_DOUBLE, CHUNK_A);
    write_ds(d2, D_CHUNK_COLL, H5T_NATIVE_DOUBLE, ROW_CYCLIC, H5FD_MPIO_COLLECTIVE);
    hid_t d3 = create_ds(g, "chunk_indep", H5T_NATIVE_INT, CHUNK_B);
    write_ds(d3, D_CHUNK_INDEP, H5T_NATIVE_INT, COL_BLOCK, H5FD_MPIO_INDEPENDENT);
    /* odd ranks take part with an empty selection: their rows keep FILL */
    hid_t d4 = create_ds(f, "chunk_none", H5T_NATIVE_DOUBLE, CHUNK_A);
    write_ds(d4, D_CHUNK_NONE, H5T_NATIVE_DOUBLE, t_rank % 2 ? NONE : ROW_BLOCK,
             H5FD_MPIO_COLLECTIVE);

    hid_t ds[] = {d0, d1, d2, d3, d4};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++)
        H5CHK(H5Dclose(ds[i]));
    H5CHK(H5Gclose(g));
    H5CHK(H5Fclose(f));
    H5Pclose(gc);
    H5Pclose(fc);
    H5Pclose(fa);
}

/* read back with other decompositions than the writes used */
static void read_file(const char *name)
{
    hid_t fa = fapl();
    hid_t f = H5Fopen(name, H5F_ACC_RDONLY, fa);
    H5CHK(f);
    hid_t d0, d1, d2, d3, d4;
    H5CHK(d0 = H5Dopen2(f, "contig_coll", H5P_DEFAULT));
    H5CHK(d1 = H5Dopen2(f, "g/contig_indep", H5P_DEFAULT));
    H5CHK(d2 = H5Dopen2(f, "chunk_coll", H5P_DEFAULT));
    H5CHK(d3 = H5Dopen2(f, "g/chunk_indep", H5P_DEFAULT));
    H5CHK(d4 = H5Dopen2(f, "chunk_none", H5P_DEFAULT));
    check_attrs(f, d0);
    read_ds(d0, D_CONTIG_COLL, H5T_NATIVE_DOUBLE, COL_BLOCK, H5FD_MPIO_COLLECTIVE);
    read_ds(d0, D_CONTIG_COLL, H5T_NATIVE_DOUBLE, ROW_CYCLIC, H5FD_MPIO_INDEPENDENT);
    read_ds(d1, D_CONTIG_INDEP, H5T_NATIVE_INT, ALL, H5FD_MPIO_INDEPENDENT);
    read_ds(d1, D_CONTIG_INDEP, H5T_NATIVE_INT, ROW_CYCLIC, H5FD_MPIO_COLLECTIVE);
    read_ds(d2, D_CHUNK_COLL, H5T_NATIVE_DOUBLE, ROW_BLOCK, H5FD_MPIO_COLLECTIVE);
    read_ds(d2, D_CHUNK_COLL, H5T_NATIVE_DOUBLE, COL_CYCLIC, H5FD_MPIO_INDEPENDENT);
    read_ds(d3, D_CHUNK_INDEP, H5T_NATIVE_INT, ROW_CYCLIC, H5FD_MPIO_INDEPENDENT);
    read_ds(d3, D_CHUNK_INDEP, H5T_NATIVE_INT, COL_CYCLIC, H5FD_MPIO_COLLECTIVE);
    read_ds(d4, D_CHUNK_NONE, H5T_NATIVE_DOUBLE, ALL, H5FD_MPIO_COLLECTIVE);
    hid_t ds[] = {d0, d1, d2, d3, d4};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++)
        H5CHK(H5Dclose(ds[i]));
    H5CHK(H5Fclose(f));
    H5Pclose(fa);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_h5 FILE");
    nx = 12 * (hsize_t) t_size + 5;
    if (t_rank == 0) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int n;
        MPI_Get_library_version(v, &n);
        const char *dev = strstr(v, "Device:");   /* ours: ch3:nemesis, Debian's: ch4:ucx */
        printf("MPI library: %.*s, %.*s\n", (int) strcspn(v, "\n"), v,
               dev ? (int) strcspn(dev, "\n") : 7, dev ? dev : "Device?");
    }
    write_file(argv[1]);
    read_file(argv[1]);
    return t_finish();
}
