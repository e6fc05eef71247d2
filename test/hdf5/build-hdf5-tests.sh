#!/usr/bin/env bash
# Builds HDF5's own parallel test programs (testpar/ and the test library
# test/libh5test) from Debian's hdf5 source, compiled with the ddio MPICH's
# mpicc and linked against Debian's installed libhdf5 mpich flavour, which
# must be the same version as the source (checked). Only the ~25 test files
# are compiled, not the library (~600 files): what is tested is the HDF5
# that users of libhdf5-mpich-dev run, on our libmpich.so.12.
#
# The source and the binaries are cached outside the clone, like MPICH:
# ${DDIO_CACHE_DIR:-~/.cache/ddio}/hdf5-tests-KEY, KEY hashing the source,
# the installed HDF5 version, this script and the MPICH install it is built
# with; a flock serialises builds; built once, reused afterwards.
#
# usage: build-hdf5-tests.sh MPICH_PREFIX
#   prints the directory holding the programs on its last line
set -euo pipefail
mpi=$(cd "${1:?usage: build-hdf5-tests.sh MPICH_PREFIX}" && pwd -P)
cache=${DDIO_CACHE_DIR:-$HOME/.cache/ddio}
h5inc=/usr/include/hdf5/mpich
h5lib=/usr/lib/x86_64-linux-gnu/hdf5/mpich
log() { echo "build-hdf5-tests: $*" >&2; }
die() { echo "build-hdf5-tests: error: $*" >&2; exit 1; }

[ -x "$mpi/bin/mpicc" ] || die "$mpi/bin/mpicc missing: build MPICH first (make)"
ver=$(dpkg-query -W -f='${Version}' libhdf5-mpich-dev 2>/dev/null) \
  || die "libhdf5-mpich-dev is not installed (scripts/install-deps.sh installs it)"
[ -f "$h5inc/H5pubconf.h" ] && [ -e "$h5lib/libhdf5.so" ] || die "no HDF5 mpich flavour under $h5inc, $h5lib"

# --- Debian's source of exactly the installed version -------------------------
dl="$cache/hdf5-source-$ver"
mkdir -p "$dl"
tarball=$(ls "$dl"/hdf5_*.orig.tar.* 2>/dev/null | head -n1 || true)
if [ -z "$tarball" ]; then
  log "fetching Debian's hdf5 $ver source (apt-get source)"
  (cd "$dl" && apt-get source --download-only "hdf5=$ver" >&2) \
    || die "apt-get source hdf5=$ver failed (deb-src entries: scripts/install-deps.sh)"
  tarball=$(ls "$dl"/hdf5_*.orig.tar.* | head -n1)
fi

key=$( { sha256sum "$tarball" | cut -c1-64; echo "$ver $mpi"; cat "$0"; } | sha256sum | cut -c1-16)
base="$cache/hdf5-tests-$key"
mkdir -p "$base"
exec 9>"$base/.lock"
flock 9
if [ -e "$base/.built" ]; then
  echo "$base/bin"
  exit 0
fi

rm -rf "$base/src" "$base/obj" "$base/bin"
mkdir -p "$base/src" "$base/obj" "$base/bin"
log "extracting $(basename "$tarball") (src/ test/ testpar/ headers and sources)"
tar xf "$tarball" -C "$base/src" --strip-components=1 --wildcards '*/src/*.h' '*/test/*' '*/testpar/*'
s="$base/src"
# the installed library and the source are the same release
want=$(sed -n 's/^#define H5_VERS_INFO *"\(.*\)"/\1/p' "$h5inc/H5public.h")
have=$(sed -n 's/^#define H5_VERS_INFO *"\(.*\)"/\1/p' "$s/src/H5public.h")
[ -n "$want" ] && [ "$want" = "$have" ] || die "source is '$have', installed library is '$want'"

# h5test.c's one configure-generated header (srcdir of data files: none used here)
echo 'static const char *const config_srcdir = ".";' > "$base/obj/H5srcdir_str.h"
# Debian's H5_CPPFLAGS (libhdf5.settings): internal structures the tests
# share with the library (t_cache uses the metadata cache's) match its build.
cflags=(-O1 -g -D_GNU_SOURCE -D_POSIX_C_SOURCE=200809L -DNDEBUG -UH5_DEBUG_API
  -I"$base/obj" -I"$s/src" -I"$s/test" -I"$s/testpar" -I"$h5inc")
cc="$mpi/bin/mpicc"
blog="$base/build.log"
: >"$blog"
for f in h5test testframe cache_common swmr_common external_common; do
  "$cc" "${cflags[@]}" -c "$s/test/$f.c" -o "$base/obj/$f.o" >>"$blog" 2>&1 \
    || die "compiling test/$f.c failed; see $blog"
done
ar cr "$base/obj/libh5test.a" "$base/obj"/{h5test,testframe,cache_common,swmr_common,external_common}.o
link() {  # link PROG SOURCES...
  local p=$1; shift
  log "building $p"
  "$cc" "${cflags[@]}" -o "$base/bin/$p" "$@" "$base/obj/libh5test.a" -L"$h5lib" -lhdf5 -lm \
    >>"$blog" 2>&1 || die "building $p failed; see $blog"
}
# testpar/Makefile.am: TEST_PROG_PARA, t_pflush1/2, and testphdf5's sources
for p in t_mpi t_bigio t_cache t_cache_image t_pread t_pshutdown t_prestart t_init_term \
  t_shapesame t_filters_parallel t_pflush1 t_pflush2; do
  link "$p" "$s/testpar/$p.c"
done
link testphdf5 "$s"/testpar/{testphdf5,t_dset,t_file,t_file_image,t_mdset,t_ph5basic,t_coll_chunk}.c \
  "$s"/testpar/{t_span_tree,t_chunk_alloc,t_filter_read,t_prop,t_coll_md_read}.c
touch "$base/.built"
log "built in $base/bin"
echo "$base/bin"
