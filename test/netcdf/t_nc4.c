/* t_nc4 FILE: a netCDF-4 parallel program (netCDF-C over parallel HDF5 on
 * MPI-IO) given a file name that netCDF passes through to MPI_File_open, so
 * a `ddio:` name reaches the ddio driver. It creates FILE with nc_create_par,
 * writes a contiguous variable collectively by row blocks, a chunked one
 * independently by column cycles, a deflated one collectively (HDF5 filters
 * in parallel need collective writes), an unlimited record variable and
 * attributes, closes, reopens with nc_open_par and reads every variable
 * back with another decomposition, checking every value against the formula
 * that wrote it. The harness runs it on ddio: and on ufs: and compares the
 * two files byte for byte (filecmp). */
#include <netcdf.h>
#include <netcdf_par.h>
#include "../mpi/tutil.h"

#define NCCHK(call) do { int e_ = (call); \
    if (e_ != NC_NOERR) T_FAIL("%s: %s", #call, nc_strerror(e_)); } while (0)

enum { NY = 29, NREC = 3 };
static size_t nx;   /* rows: not a multiple of the rank count */

static double val(int var, size_t i, size_t j)
{
    return var * 1000000.0 + (double) i * 1000.0 + (double) j;
}

/* [lo, hi) of n items split as evenly as possible over the ranks */
static void share(size_t n, size_t *lo, size_t *hi)
{
    size_t q = n / (size_t) t_size, rem = n % (size_t) t_size, r = (size_t) t_rank;
    *lo = r * q + (r < rem ? r : rem);
    *hi = *lo + q + (r < rem ? 1 : 0);
}

struct ids { int ncid, vc, vi, vz, vt; };

static void define(const char *path, struct ids *d)
{
    int dx, dy, dt, dims[2];
    NCCHK(nc_create_par(path, NC_NETCDF4 | NC_CLOBBER, MPI_COMM_WORLD, MPI_INFO_NULL, &d->ncid));
    NCCHK(nc_def_dim(d->ncid, "x", nx, &dx));
    NCCHK(nc_def_dim(d->ncid, "y", NY, &dy));
    NCCHK(nc_def_dim(d->ncid, "t", NC_UNLIMITED, &dt));
    dims[0] = dx; dims[1] = dy;
    NCCHK(nc_def_var(d->ncid, "contig", NC_DOUBLE, 2, dims, &d->vc));
    NCCHK(nc_def_var_chunking(d->ncid, d->vc, NC_CONTIGUOUS, NULL));
    size_t chunk[2] = {7, 5};
    NCCHK(nc_def_var(d->ncid, "chunked", NC_INT, 2, dims, &d->vi));
    NCCHK(nc_def_var_chunking(d->ncid, d->vi, NC_CHUNKED, chunk));
    NCCHK(nc_def_var(d->ncid, "deflated", NC_FLOAT, 2, dims, &d->vz));
    NCCHK(nc_def_var_chunking(d->ncid, d->vz, NC_CHUNKED, chunk));
    NCCHK(nc_def_var_deflate(d->ncid, d->vz, 1, 1, 1));
    dims[0] = dt; dims[1] = dy;
    NCCHK(nc_def_var(d->ncid, "record", NC_DOUBLE, 2, dims, &d->vt));
    NCCHK(nc_put_att_text(d->ncid, NC_GLOBAL, "title", 13, "ddio t_nc4.c"));
    NCCHK(nc_put_att_double(d->ncid, d->vc, "scale", NC_DOUBLE, 1, &(double){0.5}));
    NCCHK(nc_enddef(d->ncid));
}

/* VAR's rows [r0, r1): columns [c0, c1) in one call when cs is 1 (a
 * collective variable: one call on every rank), else every cs-th column
 * from c0 to the end, a call per column */
static void put(const struct ids *d, int var, int varid, size_t r0, size_t r1,
                size_t c0, size_t c1, size_t cs)
{
    size_t w = cs == 1 ? c1 - c0 : 1, n = (r1 - r0) * w;
    double *v = malloc((n ? n : 1) * sizeof *v);
    T_ASSERT(v, "malloc");
    for (size_t j = c0; j < (cs == 1 ? c0 + 1 : NY); j += cs) {
        size_t start[2] = {r0, j}, count[2] = {r1 - r0, w};
        for (size_t i = 0; i < n; i++) v[i] = val(var, r0 + i / w, j + i % w);
        NCCHK(nc_put_vara_double(d->ncid, varid, start, count, v));
    }
    free(v);
}

static void write_file(const char *path)
{
    struct ids d;
    size_t lo, hi;
    define(path, &d);
    share(nx, &lo, &hi);
    NCCHK(nc_var_par_access(d.ncid, d.vc, NC_COLLECTIVE));
    put(&d, 1, d.vc, lo, hi, 0, NY, 1);
    /* independent: each rank every t_size-th column, all rows */
    NCCHK(nc_var_par_access(d.ncid, d.vi, NC_INDEPENDENT));
    put(&d, 2, d.vi, 0, nx, (size_t) t_rank, NY, (size_t) t_size);
    NCCHK(nc_var_par_access(d.ncid, d.vz, NC_COLLECTIVE));
    put(&d, 3, d.vz, lo, hi, 0, NY, 1);
    /* the record variable grows collectively: rank r writes column block r */
    NCCHK(nc_var_par_access(d.ncid, d.vt, NC_COLLECTIVE));
    size_t c0, c1;
    share(NY, &c0, &c1);
    put(&d, 4, d.vt, 0, NREC, c0, c1, 1);
    NCCHK(nc_close(d.ncid));
}

/* VAR's columns [c0, c1) (all rows) read collectively and checked */
static void check(int ncid, const char *name, int var, size_t rows, size_t c0, size_t c1)
{
    int varid;
    size_t n = rows * (c1 - c0), start[2] = {0, c0}, count[2] = {rows, c1 - c0};
    NCCHK(nc_inq_varid(ncid, name, &varid));
    NCCHK(nc_var_par_access(ncid, varid, NC_COLLECTIVE));
    double *v = malloc((n ? n : 1) * sizeof *v);
    T_ASSERT(v, "malloc");
    NCCHK(nc_get_vara_double(ncid, varid, start, count, v));
    for (size_t i = 0; i < rows; i++)
        for (size_t j = c0; j < c1; j++) {
            double want = val(var, i, j), got = v[i * (c1 - c0) + j - c0];
            if (var == 3) want = (float) want;
            T_ASSERT(got == want, "%s[%zu][%zu] = %.1f, expected %.1f", name, i, j, got, want);
        }
    free(v);
}

static void read_file(const char *path)
{
    int ncid;
    size_t c0, c1, len;
    char title[32] = "";
    NCCHK(nc_open_par(path, NC_NOWRITE, MPI_COMM_WORLD, MPI_INFO_NULL, &ncid));
    NCCHK(nc_inq_dimlen(ncid, 2, &len));
    T_ASSERT(len == NREC, "%zu records, expected %d", len, NREC);
    NCCHK(nc_get_att_text(ncid, NC_GLOBAL, "title", title));
    T_ASSERT(strcmp(title, "ddio t_nc4.c") == 0, "title '%s'", title);
    share(NY, &c0, &c1);   /* by columns: another decomposition than the writes */
    check(ncid, "contig", 1, nx, c0, c1);
    check(ncid, "chunked", 2, nx, c0, c1);
    check(ncid, "deflated", 3, nx, c0, c1);
    check(ncid, "record", 4, NREC, c0, c1);
    NCCHK(nc_close(ncid));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_nc4 FILE");
    nx = 10 * (size_t) t_size + 3;
    if (t_rank == 0) printf("netCDF %s\n", nc_inq_libvers());
    write_file(argv[1]);
    read_file(argv[1]);
    return t_finish();
}
