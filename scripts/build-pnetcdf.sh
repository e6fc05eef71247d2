#!/usr/bin/env bash
# Builds PnetCDF from Debian's source against the build tree's ddio-enabled
# MPICH, once, into a cache directory outside the clone (like MPICH, see
# scripts/build-mpich.sh): ${DDIO_CACHE_DIR:-~/.cache/ddio}/pnetcdf-KEY, where
# KEY hashes the Debian source package, the configure options, the MPICH
# prefix it is built with and this script. The cache holds the patched
# source (src/), the build tree with the test programs (build/, the test
# harness runs PnetCDF's own `make check`/`make ptest` there) and the install
# prefix (prefix/: libpnetcdf.a, pnetcdf.h, ncmpidiff, ncvalidator...).
#
# Debian's package (1.12.3-1) is built for Open MPI only, so only its source
# is used: `dpkg-source -x` applies Debian's patches (one disables the
# erange_fill test, which Debian found wrong), then autoreconf (the upstream
# tarball ships no configure; Debian's build runs dh_autoreconf too).
# PnetCDF is built static (its default; the programs still link our
# libmpich.so dynamically, so driver rebuilds apply without rebuilding this),
# with its Fortran 77 and 90 APIs (our MPICH's mpif77/mpif90, gfortran) and
# without C++.
#
# Usage: build-pnetcdf.sh PROJECT_DIR [LINK]
#   env: DDIO_PNETCDF_DSC  a pnetcdf .dsc (default: apt-get source pnetcdf)
#        DDIO_CACHE_DIR    cache root (default ~/.cache/ddio)
#        DDIO_JOBS         make -j (default: number of cores)
# LINK (optional) becomes a symlink to the cache entry (src/ build/ prefix/).
set -euo pipefail
proj=$(cd "${1:?usage: build-pnetcdf.sh PROJECT_DIR [LINK]}" && pwd)
link=${2:-}
cache=${DDIO_CACHE_DIR:-$HOME/.cache/ddio}
jobs=${DDIO_JOBS:-$(nproc)}
log() { echo "build-pnetcdf: $*"; }
die() { echo "build-pnetcdf: error: $*" >&2; exit 1; }
mkdir -p "$cache"

[ -x "$proj/mpich/bin/mpicc" ] || die "$proj/mpich/bin/mpicc missing: build the project (make) first"
mpich_prefix=$(cd "$proj/mpich" && pwd -P)

# --- locate Debian's source package ---------------------------------------
dsc=${DDIO_PNETCDF_DSC:-}
if [ -z "$dsc" ]; then
  dl="$cache/debian-source"
  dsc=$(ls "$dl"/pnetcdf_*.dsc 2>/dev/null | head -n1 || true)
  if [ -z "$dsc" ]; then
    command -v apt-get >/dev/null || die "apt-get is unavailable: set DDIO_PNETCDF_DSC"
    log "fetching Debian's PnetCDF source (apt-get source pnetcdf)"
    mkdir -p "$dl"
    (cd "$dl" && apt-get source --download-only pnetcdf) \
      || die "apt-get source pnetcdf failed: run scripts/install-deps.sh (it adds deb-src entries)"
    dsc=$(ls "$dl"/pnetcdf_*.dsc | head -n1)
  fi
fi
[ -f "$dsc" ] || die "PnetCDF source package '$dsc' not found"
dsc=$(cd "$(dirname "$dsc")" && pwd)/$(basename "$dsc")
# The .dsc lists the tarballs with their checksums: hashing all of them
# identifies the source exactly.
src_id=$(cd "$(dirname "$dsc")" && sha256sum "$(basename "$dsc")" \
  $(awk '/^Files:/{f=1;next} /^[^ ]/{f=0} f{print $3}' "$(basename "$dsc")") | cut -c1-64)

conf_opts=(--with-mpi="$mpich_prefix" --enable-fortran --disable-cxx
  --disable-shared --enable-static)
# The key names the MPICH by its version and ABI (mpi.h) and by the cache
# entry it is installed in: the programs link libmpich.so.12 with a RUNPATH
# that LD_LIBRARY_PATH (test/lib.sh's t_mpi_env) overrides, but the build
# tree's Makefiles and libtool files name that entry's mpicc and
# libmpichfort.la, and its test suite is built from them: with the entry
# gone (a new MPICH key, the old one removed) every test directory failed
# to build. A driver change alone keeps the entry, and this build.
mpich_id=$(grep -E '^#define (MPI_VERSION|MPI_SUBVERSION|MPICH_VERSION|MPICH_NUMVERSION) ' \
  "$mpich_prefix/include/mpi.h"; readlink -f "$mpich_prefix")
key=$( { echo "$src_id"; echo "${conf_opts[*]/#--with-mpi=*/--with-mpi}"; echo "$mpich_id"; cat "$0"; } \
  | sha256sum | cut -c1-16)
base="$cache/pnetcdf-$key"; srcdir="$base/src"; bld="$base/build"; prefix="$base/prefix"
mkdir -p "$base"
# One build at a time per cached tree; the test harness takes the same lock.
exec 9>"$base/.lock"
flock 9
log "cache $base"

if [ ! -e "$base/.built" ]; then
  start=$(date +%s)
  rm -rf "$srcdir" "$bld" "$prefix"
  log "extracting $(basename "$dsc") with Debian's patches (dpkg-source -x)"
  dpkg-source --no-check -x "$dsc" "$srcdir" > "$base/extract.log" 2>&1 \
    || die "dpkg-source -x failed; see $base/extract.log"
  log "autoreconf (log: $base/autoreconf.log)"
  (cd "$srcdir" && autoreconf -fi) > "$base/autoreconf.log" 2>&1 \
    || die "PnetCDF autoreconf failed; see $base/autoreconf.log"
  mkdir -p "$bld"
  log "configuring (${conf_opts[*]}); log: $base/configure.log"
  (cd "$bld" && "$srcdir/configure" --prefix="$prefix" "${conf_opts[@]}") > "$base/configure.log" 2>&1 \
    || die "PnetCDF configure failed; see $base/configure.log"
  log "make -j$jobs, install and the test programs (log: $base/make.log)"
  if ! (cd "$bld" && make -j"$jobs" && make install && make -j"$jobs" tests) > "$base/make.log" 2>&1; then
    grep -E "error|Error" "$base/make.log" | head -n 30 >&2 || true
    die "PnetCDF build failed; see $base/make.log"
  fi
  touch "$base/.built"
  log "built in $(( $(date +%s) - start ))s: $prefix"
fi
[ -x "$prefix/bin/ncmpidiff" ] || die "$prefix/bin/ncmpidiff missing"
if [ -n "$link" ]; then ln -sfn "$base" "$link"; fi
