/* config.h for netCDF-C's own parallel tests (nc_test4/tst_parallel*.c and
 * friends, from Debian's netcdf source) built outside netCDF's tree against
 * Debian's libnetcdf-mpi-dev by test/ompi/run-ompi-tests.sh (group nctest).
 * netCDF's configure writes this file; here it holds only what those
 * programs read of it, taken from the installed library where it says so
 * (netcdf_meta.h) and from netCDF 4.9.0's configure defaults otherwise
 * (the chunk cache, which tst_parallel5 checks against the library's). */
#ifndef DDIO_NC_TEST4_CONFIG_H
#define DDIO_NC_TEST4_CONFIG_H
#include <stdint.h>      /* netCDF's config.h brings it; tst_quantize_par uses it */
#include <netcdf_meta.h>

#define USE_PARALLEL 1
#define USE_HDF5 1
/* the programs write into their working directory: the runner starts them
 * in a directory under the ddio mount (and, for the control, a local one) */
#define TEMP_LARGE "."

#if NC_HAS_PAR_FILTERS
#define HDF5_SUPPORTS_PAR_FILTERS 1
#endif
#if NC_HAS_SZIP_WRITE
#define HAVE_H5Z_SZIP 1
#endif

#define CHUNK_CACHE_SIZE 16777216
#define CHUNK_CACHE_NELEMS 4133
#define CHUNK_CACHE_PREEMPTION 0.75
#endif
