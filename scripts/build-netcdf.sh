#!/usr/bin/env bash
# Builds netCDF-C from Debian's source with the build tree's ddio-enabled
# MPICH (its mpicc) against Debian's libhdf5-mpich-dev, once, into a cache
# directory outside the clone (like MPICH and PnetCDF, see
# scripts/build-pnetcdf.sh): ${DDIO_CACHE_DIR:-~/.cache/ddio}/netcdf-KEY,
# KEY hashing the Debian source package, the configure options, the MPICH
# (version and ABI), the installed HDF5 mpich version and this script. The
# cache holds the patched source (src/), the build tree with netCDF's
# parallel test programs (build/: nc_test4, h5_test and nc_perf, the
# programs their run_par_test*.sh scripts run, which test/netcdf/run-netcdf-
# tests.sh runs) and the install prefix (prefix/: libnetcdf.a, netcdf.h,
# netcdf_par.h, ncdump, nc-config).
#
# Debian builds netcdf with CMake for serial HDF5 only (libnetcdf-dev); its
# MPI flavour is built for Open MPI. So only the source is used: `dpkg-
# source -x` applies Debian's patches (none touches the autotools files),
# then the upstream configure, which detects parallel HDF5 (H5Pset_fapl_mpio)
# and enables netCDF-4 parallel I/O (nc_create_par, nc_open_par). Built
# static (the programs still link Debian's libhdf5.so and our libmpich.so
# dynamically, so a driver rebuild needs no rebuild of this), without DAP,
# byte-range, NCZarr and libxml2 (no libcurl), and with --enable-parallel-
# tests so the parallel test programs and scripts are configured.
#
# Usage: build-netcdf.sh PROJECT_DIR [LINK]
#   env: DDIO_NETCDF_DSC  a netcdf .dsc (default: apt-get source netcdf)
#        DDIO_CACHE_DIR   cache root (default ~/.cache/ddio)
#        DDIO_JOBS        make -j (default: number of cores)
# LINK (optional) becomes a symlink to the cache entry (src/ build/ prefix/).
set -euo pipefail
proj=$(cd "${1:?usage: build-netcdf.sh PROJECT_DIR [LINK]}" && pwd)
link=${2:-}
cache=${DDIO_CACHE_DIR:-$HOME/.cache/ddio}
jobs=${DDIO_JOBS:-$(nproc)}
h5inc=/usr/include/hdf5/mpich
h5lib=/usr/lib/x86_64-linux-gnu/hdf5/mpich
log() { echo "build-netcdf: $*"; }
die() { echo "build-netcdf: error: $*" >&2; exit 1; }
mkdir -p "$cache"

[ -x "$proj/mpich/bin/mpicc" ] || die "$proj/mpich/bin/mpicc missing: build the project (make) first"
mpich_prefix=$(cd "$proj/mpich" && pwd -P)
h5ver=$(dpkg-query -W -f='${Version}' libhdf5-mpich-dev 2>/dev/null) \
  || die "libhdf5-mpich-dev is not installed (scripts/install-deps.sh installs it)"
[ -f "$h5inc/H5pubconf.h" ] && [ -e "$h5lib/libhdf5.so" ] || die "no HDF5 mpich flavour under $h5inc, $h5lib"
grep -q '^#define H5_HAVE_PARALLEL 1' "$h5inc/H5pubconf.h" || die "$h5inc: HDF5 without parallel I/O"

# --- locate Debian's source package ---------------------------------------
dsc=${DDIO_NETCDF_DSC:-}
if [ -z "$dsc" ]; then
  dl="$cache/debian-source"
  dsc=$(ls "$dl"/netcdf_*.dsc 2>/dev/null | head -n1 || true)
  if [ -z "$dsc" ]; then
    command -v apt-get >/dev/null || die "apt-get is unavailable: set DDIO_NETCDF_DSC"
    log "fetching Debian's netCDF-C source (apt-get source netcdf)"
    mkdir -p "$dl"
    (cd "$dl" && apt-get source --download-only netcdf) \
      || die "apt-get source netcdf failed: run scripts/install-deps.sh (it adds deb-src entries)"
    dsc=$(ls "$dl"/netcdf_*.dsc | head -n1)
  fi
fi
[ -f "$dsc" ] || die "netCDF source package '$dsc' not found"
dsc=$(cd "$(dirname "$dsc")" && pwd)/$(basename "$dsc")
# The .dsc lists the tarballs with their checksums: hashing all of them
# identifies the source exactly.
src_id=$(cd "$(dirname "$dsc")" && sha256sum "$(basename "$dsc")" \
  $(awk '/^Files:/{f=1;next} /^[^ ]/{f=0} f{print $3}' "$(basename "$dsc")") | cut -c1-64)

conf_opts=(--disable-shared --enable-static --enable-parallel4 --enable-parallel-tests
  --with-mpiexec=mpiexec --disable-dap --disable-byterange --disable-nczarr --disable-libxml2
  --disable-doxygen --disable-examples --disable-unit-tests --disable-plugins
  --disable-filter-testing)
# netCDF's configure sets CFLAGS to -fno-strict-aliasing alone when none is
# given: optimise as Debian's build does (dpkg-buildflags: -g -O2).
nc_cflags="-g -O2"
# As for PnetCDF, the key names the MPICH by version and ABI (mpi.h) and by
# the cache entry it is installed in: the build tree's Makefiles name that
# entry's mpicc (the test programs run from the tree find the library by
# LD_LIBRARY_PATH, test/lib.sh's t_mpi_env, but a rebuild in the tree would
# fail once the entry is gone). A driver change alone keeps the entry.
mpich_id=$(grep -E '^#define (MPI_VERSION|MPI_SUBVERSION|MPICH_VERSION|MPICH_NUMVERSION) ' \
  "$mpich_prefix/include/mpi.h"; readlink -f "$mpich_prefix")
key=$( { echo "$src_id"; echo "${conf_opts[*]} CFLAGS=$nc_cflags"; echo "$mpich_id"; echo "hdf5 $h5ver"; cat "$0"; } \
  | sha256sum | cut -c1-16)
base="$cache/netcdf-$key"; srcdir="$base/src"; bld="$base/build"; prefix="$base/prefix"
mkdir -p "$base"
# One build at a time per cached tree; the test harness takes the same lock.
exec 9>"$base/.lock"
flock 9
log "cache $base"

# The parallel test programs: those netCDF's parallel test scripts run.
PAR_DIRS="nc_test4 h5_test nc_perf"
par_progs() {  # DIR: the programs DIR's run_par*/run_gfs scripts launch
  sed -n 's|^[[:space:]]*@MPIEXEC@ -n [0-9]* \./\([A-Za-z0-9_]*\).*|\1|p' \
    "$srcdir/$1"/run_par_test*.sh.in "$srcdir/$1"/run_gfs_test.sh.in 2>/dev/null | sort -u
}

if [ ! -e "$base/.built" ]; then
  start=$(date +%s)
  rm -rf "$srcdir" "$bld" "$prefix"
  log "extracting $(basename "$dsc") with Debian's patches (dpkg-source -x)"
  dpkg-source --no-check -x "$dsc" "$srcdir" > "$base/extract.log" 2>&1 \
    || die "dpkg-source -x failed; see $base/extract.log"
  mkdir -p "$bld"
  log "configuring (${conf_opts[*]}); log: $base/configure.log"
  (cd "$bld" && CC="$mpich_prefix/bin/mpicc" CFLAGS="$nc_cflags" CPPFLAGS="-I$h5inc" LDFLAGS="-L$h5lib" \
    "$srcdir/configure" --prefix="$prefix" "${conf_opts[@]}") > "$base/configure.log" 2>&1 \
    || die "netCDF configure failed; see $base/configure.log"
  # configure turns parallel I/O off silently when HDF5 lacks it: fail here
  grep -q '^NC-4 Parallel Support:[[:space:]]*yes' "$bld/libnetcdf.settings" \
    || die "netCDF configured without parallel I/O; see $bld/libnetcdf.settings"
  log "make -j$jobs, install and the parallel test programs (log: $base/make.log)"
  if ! ( cd "$bld" && make -j"$jobs" && make install &&
         for d in $PAR_DIRS; do progs=$(par_progs "$d"); [ -z "$progs" ] || make -C "$d" -j"$jobs" $progs || exit 1; done
       ) > "$base/make.log" 2>&1; then
    grep -E "error|Error" "$base/make.log" | head -n 30 >&2 || true
    die "netCDF build failed; see $base/make.log"
  fi
  touch "$base/.built"
  log "built in $(( $(date +%s) - start ))s: $prefix"
fi
[ -x "$prefix/bin/ncdump" ] || die "$prefix/bin/ncdump missing"
if [ -n "$link" ]; then ln -sfn "$base" "$link"; fi
