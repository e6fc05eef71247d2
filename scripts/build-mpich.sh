#!/usr/bin/env bash
# Builds MPICH 4.0.x with the ddio driver in its ROMIO, incrementally.
#
# The MPICH source, build tree and install prefix live in a cache directory
# outside the clone (DDIO_CACHE_DIR, default ~/.cache/ddio), keyed by what goes
# into the configured tree: the MPICH source, the registration script, the
# configure options and this script. The driver sources are NOT part of the
# key: they are overlaid on every run (only changed files are copied), so an
# edit to one driver file rebuilds that file and relinks the library.
#
# Usage: build-mpich.sh PROJECT_DIR [LINK]
#   env: DDIO_MPICH_SOURCE  MPICH source dir or tarball (default: apt-get source mpich)
#        DDIO_MPICH_DEVICE  MPICH device (default ch3:nemesis)
#        DDIO_CACHE_DIR     cache root (default ~/.cache/ddio)
#        DDIO_JOBS          make -j (default: number of cores)
# LINK (optional) becomes a symlink to the install prefix.
# Each phase's wall and CPU seconds are appended to $base/build-times (what
# the cached build costs: docs/ARCHITECTURE.md "How the driver gets into MPICH").
set -euo pipefail
proj=$(cd "${1:?usage: build-mpich.sh PROJECT_DIR [LINK]}" && pwd)
link=${2:-}
cache=${DDIO_CACHE_DIR:-$HOME/.cache/ddio}
device=${DDIO_MPICH_DEVICE:-ch3:nemesis}
jobs=${DDIO_JOBS:-$(nproc)}
log() { echo "build-mpich: $*"; }
die() { echo "build-mpich: error: $*" >&2; exit 1; }
mkdir -p "$cache"

# --- locate the source ----------------------------------------------------
src_arg=${DDIO_MPICH_SOURCE:-}
if [ -z "$src_arg" ]; then
  dl="$cache/debian-source"
  tarball=$(ls "$dl"/mpich_4.0.*.orig.tar.* 2>/dev/null | head -n1 || true)
  if [ -z "$tarball" ]; then
    command -v apt-get >/dev/null || die "no --with-mpich-source given and apt-get is unavailable"
    log "fetching Debian's MPICH source (apt-get source mpich)"
    mkdir -p "$dl"
    (cd "$dl" && apt-get source --download-only mpich) \
      || die "apt-get source mpich failed: run scripts/install-deps.sh (it adds deb-src entries) or pass --with-mpich-source"
    tarball=$(ls "$dl"/mpich_*.orig.tar.* | head -n1)
  fi
  src_arg=$tarball
fi
if [ -d "$src_arg" ]; then
  src_id="dir:$(cd "$src_arg" && pwd):$(sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\([^]]*\)\].*/\1/p' "$src_arg/maint/version.m4" 2>/dev/null)"
elif [ -f "$src_arg" ]; then
  src_id="tar:$(sha256sum "$src_arg" | cut -c1-64)"
else
  die "MPICH source '$src_arg' is neither a directory nor a file"
fi

conf_opts=(--with-device="$device" --with-pm=hydra --with-hwloc=/usr
  --with-datatype-engine=dataloop --with-file-system=ufs+nfs+ddio
  --enable-shared --disable-static --disable-doc
  --enable-fortran=all --enable-cxx   # Debian's ABI: libmpichfort.so.12, libmpichcxx.so.12
  CFLAGS=-O2   # see below
  "FFLAGS=-O2 -fallow-invalid-boz -fallow-argument-mismatch"
  "FCFLAGS=-O2 -fallow-invalid-boz -fallow-argument-mismatch"
  MPILIBNAME=mpich
  --enable-yield=sched_yield   # see below
  LIBS=-lcrypto)   # the shared library's ddio_auth (HMAC-SHA-256) needs libcrypto
# CFLAGS=-O2: MPICH's --enable-fast=O2 (its default) optimizes MPICH's own
# code only; ROMIO's configure gets the user's CFLAGS, none, so ROMIO, and
# the ddio driver and client core built inside it, were compiled at -O0
# (Debian's libmpich12 passes dpkg-buildflags' -O2). Measured (callgrind,
# one rank, 16384 calls of 8 B, same-host path): see docs/CONFORMANCE.md.
# --enable-yield=sched_yield: a rank busy-waiting in MPI calls sched_yield()
# every MPIR_CVAR_POLLS_BEFORE_YIELD polls (default 1000). MPICH's configure
# picks "nothing" on Linux, so with more ranks than cores a waiting rank
# spins through its whole time slice while the rank it waits for is not
# running: 2000 MPI_Barrier + 200 MPI_Allreduce took 17.4 s with 4 ranks
# on 2 cores and 74 s with 8; with the yield 0.08 s and 0.38 s (0.02 s and
# 0.09 s at MPIR_CVAR_POLLS_BEFORE_YIELD=10). On a core of its own a rank
# yields to nobody, so nothing changes there.
key=$( { echo "$src_id"; echo "${conf_opts[*]}"; cat "$proj/scripts/romio-register.sh" "$0"; } | sha256sum | cut -c1-16)
base="$cache/mpich-$key"; srcdir="$base/src"; bld="$base/build"; prefix="$base/prefix"
mkdir -p "$base"
# One build at a time per cached tree (parallel makes would corrupt it).
exec 9>"$base/.lock"
flock 9
log "cache $base"
# timed PHASE LOG DIR CMD...: run CMD in DIR with its output in LOG, and
# append the phase's wall and CPU (user + system, with its children's)
# seconds to build-times; the status is CMD's
timed() {
  local phase=$1 out=$2 dir=$3 TIMEFORMAT; shift 3
  TIMEFORMAT="$(date -u +%FT%TZ) $phase: %0R s wall, %0U s user, %0S s sys (-j$jobs)"
  { time (cd "$dir" && "$@" > "$out" 2>&1) ; } 2>> "$base/build-times"
}

# --- extract + register + regenerate ROMIO (once per key) -----------------
if [ ! -e "$base/.registered" ]; then
  rm -rf "$srcdir" "$bld" "$prefix" "$base"/.configured
  if [ -d "$src_arg" ]; then
    log "copying source tree $src_arg"; cp -a "$src_arg" "$srcdir"
  else
    log "extracting $src_arg"; mkdir -p "$srcdir"
    tar xf "$src_arg" -C "$srcdir" --strip-components=1
  fi
  "$proj/scripts/romio-register.sh" "$srcdir"
  "$proj/scripts/overlay-driver.sh" "$proj" "$srcdir" >/dev/null
  log "regenerating ROMIO build files (autoreconf)"
  timed romio-autoreconf "$base/autoreconf.log" "$srcdir/src/mpi/romio" autoreconf -if -I confdb \
    || die "ROMIO autoreconf failed; see $base/autoreconf.log"
  touch "$base/.registered"
fi

# --- configure (once per key) ---------------------------------------------
if [ ! -e "$base/.configured" ]; then
  mkdir -p "$bld"
  log "configuring MPICH (${conf_opts[*]}); log: $base/configure.log"
  timed configure "$base/configure.log" "$bld" "$srcdir/configure" --prefix="$prefix" "${conf_opts[@]}" \
    || die "MPICH configure failed; see $base/configure.log"
  touch "$base/.configured"
fi

# --- overlay the current driver and build incrementally -------------------
"$proj/scripts/overlay-driver.sh" "$proj" "$srcdir"
log "make -j$jobs (log: $base/make.log)"
start=$(date +%s)
phase=make; [ -e "$prefix/lib/libmpich.so.12" ] || phase=first-make
if ! timed "$phase" "$base/make.log" "$bld" sh -c 'make -j"$1" && make install' _ "$jobs"; then
  grep -E "error|Error" "$base/make.log" | head -n 30 >&2 || true
  die "MPICH build failed; see $base/make.log"
fi
log "built and installed in $(( $(date +%s) - start ))s: $prefix ($(tail -n1 "$base/build-times"))"
# Debian's applications link libmpich.so.12; MPILIBNAME=mpich gives exactly that.
[ -e "$prefix/lib/libmpich.so.12" ] || die "libmpich.so.12 missing from $prefix/lib"
if [ -n "$link" ]; then ln -sfn "$prefix" "$link"; fi
