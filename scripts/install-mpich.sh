#!/usr/bin/env bash
# Installs (or uninstalls) the ddio-enabled MPICH into ddio's install prefix,
# from the cached MPICH install tree (scripts/build-mpich.sh), for
# `make install` / `make uninstall`.
#
# The cached tree was configured with its own prefix in ~/.cache/ddio, which
# MPICH hard-codes in a few places. It is copied, not rebuilt (the cache is
# shared and locked by builds), and relocated:
#   - text files naming the cache prefix (bin/mpicc, lib/pkgconfig/mpich.pc,
#     lib/libmpich.la) get the install directories instead, so the installed
#     mpicc compiles against the installed mpi.h, links the installed
#     libmpich and gives programs a RUNPATH to the installed lib directory;
#   - ELF files whose RUNPATH names the cache (mpichversion, mpivars) get the
#     installed lib directory (patchelf);
#   - the configure options compiled into libmpich.so and mpiexec.hydra
#     (MPI_Get_library_version, mpiexec -info) still name the cache prefix:
#     text only. Hydra's default configuration file is looked up there as
#     well (PREFIX/etc/mpiexec.hydra.conf: none exists; HYDRA_CONFIG_FILE
#     names another).
# Nothing installed refers to the build tree or the cache otherwise; the
# install test (test/install/run-install-tests.sh) checks that.
#
# usage: install-mpich.sh install|uninstall MPICH_PREFIX
#   env (make passes them): DESTDIR prefix bindir libdir includedir
#   datarootdir mandir docdir_mpich
# A manifest of the installed files, $libdir/ddio/mpich-files, lets
# uninstall remove exactly them.
set -euo pipefail
action=${1:?usage: install-mpich.sh install|uninstall MPICH_PREFIX}
src=${2:?usage: install-mpich.sh install|uninstall MPICH_PREFIX}
: "${prefix:?}" "${bindir:?}" "${libdir:?}" "${includedir:?}" "${datarootdir:?}" "${mandir:?}"
D=${DESTDIR:-}
manifest="$libdir/ddio/mpich-files"
die() { echo "install-mpich: error: $*" >&2; exit 1; }

if [ "$action" = uninstall ]; then
  [ -f "$D$manifest" ] || exit 0
  while IFS= read -r f; do rm -f "$D$f"; done < "$D$manifest"
  rm -f "$D$manifest"
  rmdir "$D$libdir/ddio" 2>/dev/null || true
  exit 0
fi
[ "$action" = install ] || die "unknown action '$action'"
src=$(cd "$src" && pwd -P)
[ -x "$src/bin/mpicc" ] && [ -e "$src/lib/libmpich.so.12" ] \
  || die "$src is not an MPICH install tree (build it first: make)"
command -v patchelf >/dev/null || die "patchelf not found: run scripts/install-deps.sh"
# build-mpich.sh installs into the cached tree under this lock: copy a
# consistent tree, not one half rewritten by another checkout's build
if [ -e "$src/../.lock" ]; then
  exec 9>"$src/../.lock"
  flock 9
fi

# where each top-level part of the MPICH tree goes (share/man before share)
parts=("bin:$bindir" "lib:$libdir" "include:$includedir" "share/man:$mandir")
relocate_sed="s|$src/bin|$bindir|g; s|$src/lib|$libdir|g; s|$src/include|$includedir|g;
  s|$src/etc|$prefix/etc|g; s|$src/share/man|$mandir|g; s|$src/share|$datarootdir|g; s|$src|$prefix|g"

mkdir -p "$D$libdir/ddio"
tmpm=$(mktemp)
trap 'rm -f "$tmpm"' EXIT
cd "$src"
# copy each part whole (symlinks kept), then the manifest of what went where
copy_part() {   # copy_part SRC_SUBDIR DEST_DIR [EXCLUDE_SUBDIR]
  [ -d "$1" ] || return 0
  mkdir -p "$D$2"
  tar -C "$1" ${3:+--exclude=./$3} -cf - . | tar -C "$D$2" --no-same-owner -xpf -
  (cd "$1" && find . \( -type f -o -type l \) ${3:+-not -path "./$3/*"}) \
    | sed "s|^\./|$2/|" >> "$tmpm"
}
for p in "${parts[@]}"; do copy_part "${p%%:*}" "${p#*:}"; done
copy_part share "$datarootdir" man
# relocate: text files naming the cache, ELF RUNPATHs naming it
while IFS= read -r -d '' f; do
  rel=${f#./}
  case $rel in
    bin/*) to=$bindir/${rel#bin/} ;;
    lib/*) to=$libdir/${rel#lib/} ;;
    include/*) to=$includedir/${rel#include/} ;;
    share/man/*) to=$mandir/${rel#share/man/} ;;
    share/*) to=$datarootdir/${rel#share/} ;;
    *) continue ;;
  esac
  sed "$relocate_sed" "$f" > "$D$to"
done < <(grep -rlIZ "$src" .)
for f in bin/* lib/*.so*; do
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  head -c 4 "$f" | grep -q ELF || continue
  if patchelf --print-rpath "$f" 2>/dev/null | grep -q "$src"; then
    case $f in bin/*) to=$bindir/${f#bin/} ;; *) to=$libdir/${f#lib/} ;; esac
    patchelf --set-rpath "$libdir" "$D$to"
  fi
done
cp "$tmpm" "$D$manifest"
echo "install-mpich: $(wc -l < "$tmpm") files of the ddio-enabled MPICH in $D$prefix"
