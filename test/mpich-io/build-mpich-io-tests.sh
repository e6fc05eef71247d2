#!/usr/bin/env bash
# Builds MPICH's own test/mpi/io programs (the suite run-mpich-io-tests.sh
# runs) with the ddio-enabled MPICH, cached like MPICH itself: MPICH's test
# tree is configured once against our install prefix (its configure takes
# minutes), in a cache entry next to the MPICH one, keyed by that MPICH entry
# and this script; later runs only `make` (a no-op when nothing changed).
# The programs link libmpich.so dynamically, so a rebuilt driver needs no
# rebuild here.
# usage: build-mpich-io-tests.sh MPICH_PREFIX   (the build tree's mpich/ link)
# prints the directory holding the built io programs and testlist
set -euo pipefail
prefix=$(cd "${1:?usage: build-mpich-io-tests.sh MPICH_PREFIX}" && pwd -P)
base=$(dirname "$prefix")                   # cache entry mpich-KEY: src/, build/, prefix/
srcdir="$base/src/test/mpi"
[ -f "$srcdir/configure" ] && [ -f "$srcdir/io/testlist.in" ] \
  || { echo "build-mpich-io-tests: MPICH's test/mpi not found at $srcdir" >&2; exit 2; }
key=$( { echo "$base"; cat "$0"; } | sha256sum | cut -c1-16)
tb="$(dirname "$base")/mpich-tests-$key"
mkdir -p "$tb"
exec 9>"$tb/.lock"
flock -w 1800 9 || { echo "build-mpich-io-tests: $tb is locked by another build for 30 min" >&2; exit 2; }
if [ ! -e "$tb/.configured" ]; then
  rm -rf "$tb/build"; mkdir -p "$tb/build"
  echo "build-mpich-io-tests: configuring MPICH's test/mpi against $prefix (log: $tb/configure.log)" >&2
  # Only what the io directory needs: no Fortran/C++ (MPICH is built
  # without them), no spawn/RMA/dtpools/partitioned tests.
  (cd "$tb/build" && "$srcdir/configure" --with-mpi="$prefix" --enable-romio \
      --disable-fortran --disable-cxx --disable-spawn --disable-rma --disable-part \
      --disable-dtpools --disable-perftest --disable-ft-tests CC="$prefix/bin/mpicc") \
    >"$tb/configure.log" 2>&1 \
    || { tail -n 30 "$tb/configure.log" >&2; echo "build-mpich-io-tests: configure failed" >&2; exit 1; }
  touch "$tb/.configured"
fi
(cd "$tb/build/util" && make libmtest_single.la && cd ../io && make) >"$tb/make.log" 2>&1 \
  || { grep -E "error" "$tb/make.log" | head -n 30 >&2; echo "build-mpich-io-tests: make failed; see $tb/make.log" >&2; exit 1; }
echo "$tb/build/io"
