#!/usr/bin/env bash
# Builds Open MPI's ROMIO io component (mca_io_romio321.so) with the ddio
# driver registered in it, as a plug-in for Debian's INSTALLED Open MPI.
#
# Only the component is built: Open MPI's source (Debian's `openmpi`, the
# version of the installed libopenmpi3) is configured with Debian's own
# choices (external hwloc, libevent and PMIx, UCX), then Debian's installed
# configuration headers (opal_config.h, mpi.h: libopenmpi-dev ships them,
# Debian configures --with-devel-headers) replace the generated ones, so the
# component is compiled against exactly the structures of Debian's libmpi.so.40.
# Then `make` in ompi/mca/io/romio321 alone: ROMIO 3.2.1 and the component's
# glue. Like Debian's own mca_io_romio321.so it links no libmpi (its symbols
# come from the process that loads it) and adds libcrypto (ddio_auth).
# Besides romio-register.sh's edits, one of its own: the lock hook
# (add_lock_hook below), so atomic mode and shared pointers work on ddio.
#
# Cache: DDIO_OMPI_CACHE_DIR (default DDIO_CACHE_DIR, default ~/.cache/ddio)
# /ompi-romio-KEY, KEY hashing what goes into the configured tree: Open MPI's
# source tarball, the installed Open MPI's version, the registration script,
# the configure options and this script. The driver sources are overlaid on
# every run (only changed files copied), like build-mpich.sh.
#
# Usage: build-ompi-romio.sh PROJECT_DIR [LINK]
#   LINK (optional) becomes a symlink to the component directory (the
#   directory to put first in Open MPI's mca_base_component_path).
#   env: DDIO_OMPI_SOURCE  Open MPI source tarball (default: apt-get source openmpi)
#        DDIO_JOBS         make -j (default 2)
set -euo pipefail
proj=$(cd "${1:?usage: build-ompi-romio.sh PROJECT_DIR [LINK]}" && pwd)
link=${2:-}
cache=${DDIO_OMPI_CACHE_DIR:-${DDIO_CACHE_DIR:-$HOME/.cache/ddio}}
jobs=${DDIO_JOBS:-2}
log() { echo "build-ompi-romio: $*"; }
die() { echo "build-ompi-romio: error: $*" >&2; exit 1; }
mkdir -p "$cache"

# --- the installed Open MPI: what the plug-in must match ------------------
command -v ompi_info >/dev/null || die "Debian's Open MPI is not installed (scripts/install-deps.sh: openmpi-bin libopenmpi-dev)"
multi=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
ompi_inc=/usr/lib/$multi/openmpi/include
ompi_dev=$ompi_inc/openmpi
[ -f "$ompi_dev/opal_config.h" ] || die "no $ompi_dev/opal_config.h: install libopenmpi-dev"
inst_ver=$(dpkg-query -W -f='${Version}' libopenmpi3 2>/dev/null || true)
[ -n "$inst_ver" ] || die "libopenmpi3 is not installed"
upstream=${inst_ver%%-*}

# --- locate the source ----------------------------------------------------
src=${DDIO_OMPI_SOURCE:-}
if [ -z "$src" ]; then
  dl="$cache/debian-source"
  src=$(ls "$dl"/openmpi_"$upstream".orig.tar.* 2>/dev/null | head -n1 || true)
  if [ -z "$src" ]; then
    log "fetching Debian's Open MPI source (apt-get source openmpi)"
    mkdir -p "$dl"
    (cd "$dl" && apt-get source --download-only openmpi) \
      || die "apt-get source openmpi failed: run scripts/install-deps.sh (it adds deb-src entries)"
    src=$(ls "$dl"/openmpi_"$upstream".orig.tar.* 2>/dev/null | head -n1 || true)
    [ -n "$src" ] || die "Debian's openmpi source is not version $upstream (the installed libopenmpi3 $inst_ver)"
  fi
fi
[ -f "$src" ] || die "Open MPI source '$src' is not a file"

# Debian's configuration where it changes headers the component sees
# (ompi_info's "Configure command line"), without the transports and the
# Java and Fortran bindings the component never includes.
conf_opts=(--prefix=/usr --sysconfdir=/etc/openmpi
  "--libdir=/usr/lib/$multi/openmpi/lib" "--includedir=/usr/lib/$multi/openmpi/include"
  "--with-package-string=Debian OpenMPI" --disable-wrapper-runpath
  --with-ucx "--with-pmix=/usr/lib/$multi/pmix2" --with-libevent=external
  --with-hwloc=external --enable-mpi-cxx --enable-ipv6 --with-devel-headers
  --with-slurm --with-sge --without-tm --disable-mpi-fortran --disable-mpi-java
  --enable-shared --disable-static --disable-dependency-tracking
  "--with-io-romio-flags=--with-file-system=ufs+nfs+ddio"
  "CFLAGS=-O2 -g" LIBS=-lcrypto)   # the driver's ddio_auth (HMAC-SHA-256) needs libcrypto
key=$( { sha256sum "$src" | cut -c1-64; echo "$inst_ver"; echo "${conf_opts[*]}";
         cat "$proj/scripts/romio-register.sh" "$0"; } | sha256sum | cut -c1-16)
base="$cache/ompi-romio-$key"; srcdir="$base/src"; bld="$base/build"; out="$base/lib"
mkdir -p "$base"
exec 9>"$base/.lock"
flock 9
log "cache $base"

# --- the lock hook ----------------------------------------------------------
# ROMIO 3.2.1 has no ADIOI_xxx_SetLock table entry (MPICH 4.0's has): its
# ADIOI_WRITE_LOCK / _READ_LOCK / _UNLOCK macros (adioi.h) fcntl fd->fd_sys,
# which a ddio file does not have. After them, with ddio built in, the
# three are redefined to call the driver's ADIOI_DDIO_Set_lock_hook
# (adio/ad_ddio/ad_ddio_lock.c): a ddio file's lock goes to its SetLock
# (the servers' byte-range locks), any other file's to ADIOI_Set_lock with
# the generic branch's commands, as before. So every lock user (atomic
# contiguous calls, the shared pointer's ad_get_sh_fp.c / ad_set_sh_fp.c on
# the hidden .shfp file, itself a ddio file; data sieving and atomic strided
# code of adio/common for other files) goes through it. Only where that
# generic branch is in force (no XFS/HFS/NTFS, no MPE logging: this
# component is ufs+nfs+ddio); ADIOI_DDIO_LOCK_HOOK tells the driver
# (ad_ddio_compat.h), which without it refuses atomic mode. Here, not in
# romio-register.sh: MPICH's cache key hashes that script, and MPICH needs
# no hook. Idempotent.
add_lock_hook() {  # adioi.h
  local ah=$1 anchor
  anchor='^int ADIOI_Set_lock64(FDTYPE fd_sys, int cmd, int type, ADIO_Offset offset, int whence, ADIO_Offset len);$'
  grep -q 'ADIOI_DDIO_Set_lock_hook' "$ah" && return 0
  grep -q "$anchor" "$ah" || die "no ADIOI_Set_lock64 prototype in $ah: ROMIO 3.2.1's lock macros differ"
  sed -i "/$anchor/a\\
\\
#if defined(ROMIO_DDIO) \\&\\& !defined(ROMIO_XFS) \\&\\& !defined(ROMIO_HFS) \\&\\& !defined(ROMIO_NTFS) \\&\\& !defined(ADIOI_MPE_LOGGING)\\
/* ddio: a ddio file's locks go to its driver, others' to ADIOI_Set_lock (build-ompi-romio.sh) */\\
#define ADIOI_DDIO_LOCK_HOOK 1\\
int ADIOI_DDIO_Set_lock_hook(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,\\
                             ADIO_Offset len);\\
#undef ADIOI_WRITE_LOCK\\
#undef ADIOI_READ_LOCK\\
#undef ADIOI_UNLOCK\\
#define ADIOI_WRITE_LOCK(fd, offset, whence, len) \\\\\\
        ADIOI_DDIO_Set_lock_hook(fd, F_SETLKW, F_WRLCK, offset, whence, len)\\
#define ADIOI_READ_LOCK(fd, offset, whence, len) \\\\\\
        ADIOI_DDIO_Set_lock_hook(fd, F_SETLKW, F_RDLCK, offset, whence, len)\\
#define ADIOI_UNLOCK(fd, offset, whence, len) \\\\\\
        ADIOI_DDIO_Set_lock_hook(fd, F_SETLK, F_UNLCK, offset, whence, len)\\
#endif" "$ah"
  grep -q 'ADIOI_DDIO_Set_lock_hook' "$ah" || die "could not add the ddio lock hook to $ah"
}

# --- extract + register + regenerate ROMIO (once per key) -----------------
romio_rel=ompi/mca/io/romio321/romio
if [ ! -e "$base/.registered" ]; then
  rm -rf "$srcdir" "$bld" "$out" "$base"/.configured
  log "extracting $src"; mkdir -p "$srcdir"
  tar xf "$src" -C "$srcdir" --strip-components=1
  "$proj/scripts/romio-register.sh" "$srcdir"
  add_lock_hook "$srcdir/$romio_rel/adio/include/adioi.h"
  "$proj/scripts/overlay-driver.sh" "$proj" "$srcdir/$romio_rel" >/dev/null
  log "regenerating ROMIO's build files (autoreconf)"
  (cd "$srcdir/$romio_rel" && autoreconf -if -I confdb) > "$base/autoreconf.log" 2>&1 \
    || die "ROMIO autoreconf failed; see $base/autoreconf.log"
  touch "$base/.registered"
fi

# --- configure (once per key), then Debian's headers ----------------------
# The generated headers the component includes are replaced by Debian's
# installed ones (the same version's, so the same templates); what differs
# is logged to headers.diff (our configure lacks e.g. Fortran and verbs).
if [ ! -e "$base/.configured" ]; then
  mkdir -p "$bld"
  log "configuring Open MPI (log: $base/configure.log)"
  (cd "$bld" && "$srcdir/configure" "${conf_opts[@]}") > "$base/configure.log" 2>&1 \
    || die "Open MPI configure failed; see $base/configure.log"
  : > "$base/headers.diff"
  for h in opal/include/opal_config.h ompi/include/mpi.h ompi/include/mpi_portable_platform.h; do
    installed=$ompi_dev/$(basename "$h"); [ "$h" = ompi/include/mpi.h ] && installed=$ompi_inc/mpi.h
    [ "$h" = ompi/include/mpi_portable_platform.h ] && installed=$ompi_inc/mpi_portable_platform.h
    [ -f "$installed" ] || die "missing $installed (libopenmpi-dev)"
    diff "$bld/$h" "$installed" >> "$base/headers.diff" || true
    cp "$installed" "$bld/$h"
  done
  touch "$base/.configured"
fi

# --- overlay the current driver and build the component -------------------
"$proj/scripts/overlay-driver.sh" "$proj" "$srcdir/$romio_rel"
comp="$bld/ompi/mca/io/romio321"
log "make -j$jobs in ompi/mca/io/romio321 (log: $base/make.log)"
start=$(date +%s)
if ! make -C "$comp" -j"$jobs" > "$base/make.log" 2>&1; then
  grep -E "error|Error" "$base/make.log" | head -n 30 >&2 || true
  die "component build failed; see $base/make.log"
fi
so="$comp/.libs/mca_io_romio321.so"
[ -f "$so" ] || die "no $so after make"
# Open MPI opens components with lazy binding: a symbol no library of the
# process defines (an MPICH-only macro taken for a function, say) would
# fail only when first called. Every undefined symbol must be defined by
# Debian's Open MPI libraries, libc, libm, libcrypto or the dynamic loader
# (__tls_get_addr: the client core's thread-local connection timing).
defined=$(for l in libmpi.so.40 libopen-rte.so.40 libopen-pal.so.40 libc.so.6 libm.so.6 libcrypto.so.3 \
                   ld-linux-x86-64.so.2; do
            p=$(ldconfig -p | awk -v l="$l" '$1==l && /x86-64|x86_64/{print $NF; exit}')
            [ -n "$p" ] && nm -D --defined-only "$p" | awk '{print $3}'
          done | sed 's/@.*//' | sort -u)
missing=$(nm -D --undefined-only "$so" | awk '{print $2}' | sed 's/@.*//' | sort -u \
          | grep -v -e '^_ITM_' -e '^__gmon_start__$' | comm -23 - <(echo "$defined"))
[ -z "$missing" ] || die "$so needs symbols Debian's Open MPI does not define: $(echo $missing)"
mkdir -p "$out"
# a new file renamed into place: a job running meanwhile keeps the old one
if ! cmp -s "$so" "$out/mca_io_romio321.so"; then
  cp "$so" "$out/.mca_io_romio321.so.$$" && mv -f "$out/.mca_io_romio321.so.$$" "$out/mca_io_romio321.so" \
    || die "cannot install $out/mca_io_romio321.so"
fi
log "built in $(( $(date +%s) - start ))s: $out/mca_io_romio321.so"
if [ -n "$link" ]; then ln -sfn "$out" "$link"; fi
