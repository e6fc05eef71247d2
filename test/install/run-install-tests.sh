#!/usr/bin/env bash
# Install test: `make install prefix=TMP` from this build, then, with PATH
# and LD_LIBRARY_PATH pointing only at the install (and the system), compile
# an MPI program with the INSTALLED mpicc (and once through ddio.pc), run it
# on ddio: through the installed ddio-run (installed servers, installed
# mpiexec and libmpich), check every byte read back, check that nothing
# installed names the build tree or the cache, the man pages render without
# warnings, and `make uninstall` removes every file. With Debian's Open MPI
# installed, the plug-in is built (make ompi-romio, cached) and installed,
# and an Open MPI program run through the installed ddio-run --ompi must
# load it in every rank.
# usage: run-install-tests.sh [BUILD_DIR]   (needs a finished `make`)
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init install
top=$(cd "${1:-$BUILD}" && pwd)
tmp=$T_TMP
P=$tmp/prefix

# Debian's Open MPI present: the plug-in built first (make ompi-romio:
# cached, as the Open MPI tests build it), so make install installs it
ompi=0
if command -v mpirun.openmpi >/dev/null && command -v mpicc.openmpi >/dev/null; then
  ompi=1
  t_step -t "${OMPI_BUILD_LIMIT:-3600}" install/ompi-romio make -C "$top" ompi-romio || ompi=0
fi
files() {
  make -C "$top" install prefix="$P" > "$tmp/install.log" 2>&1 \
    || { tail -30 "$tmp/install.log"; t_why "make install prefix=$P"; return; }
  local f
  for f in bin/ddio-server bin/ddio bin/ddio-run bin/ddio-fuse bin/mpicc bin/mpiexec \
           bin/hydra_pmi_proxy lib/libmpich.so.12 include/mpi.h include/mpio.h \
           lib/pkgconfig/ddio.pc lib/pkgconfig/mpich.pc \
           share/man/man8/ddio-server.8 share/man/man1/ddio-run.1 share/man/man1/ddio.1 \
           share/man/man7/ddio.7 share/man/man1/mpiexec.1 \
           etc/ddio/ddio-server.conf.example etc/ddio/ddio.conf.example \
           lib/systemd/system/ddio-server.service \
           share/doc/ddio/examples/ddio-job.sbatch share/doc/ddio/examples/ddio-patterns.c; do
    [ -e "$P/$f" ] || t_why "not installed: $f" || return
  done
  [ $ompi = 0 ] || [ -e "$P/lib/ddio/openmpi/mca_io_romio321.so" ] \
    || t_why "not installed: lib/ddio/openmpi/mca_io_romio321.so (the Open MPI plug-in)"
}
# every later case needs the install
t_case install/make-install \
  "make install prefix=DIR: server, tools, MPICH (mpicc, mpiexec, libmpich.so.12, mpi.h), man pages, ddio.pc, examples, unit" \
  files || t_done

# nothing installed may name the build tree or the MPICH cache: text files,
# and the RUNPATHs of the ELF files (MPICH's configure line compiled into
# libmpich/mpiexec.hydra is informational and excepted, see install-mpich.sh)
cache=$(cd "$top/mpich" && pwd -P); cache=${cache%/prefix}
no_build_paths() {
  local bad f rp
  bad=$(grep -rIl -e "$top" -e "$cache" "$P" || true)
  [ -z "$bad" ] || t_why "installed files name the build tree or cache: $bad" || return
  while IFS= read -r -d '' f; do
    if head -c 4 "$f" | grep -q ELF; then
      rp=$(patchelf --print-rpath "$f" 2>/dev/null || true)
      case "$rp" in *"$top"*|*"$cache"*) t_why "$f has RUNPATH $rp"; return ;; esac
    fi
  done < <(find "$P" -type f -print0)
  grep -q "^ExecStart=$P/bin/ddio-server --config $P/etc/ddio/ddio-server.conf" \
    "$P/lib/systemd/system/ddio-server.service" || t_why "unit's ExecStart"
}
t_case install/no-build-paths "no installed file or RUNPATH names the build tree or the cache" no_build_paths

man_pages() {
  local m w
  for m in man8/ddio-server.8 man1/ddio-run.1 man1/ddio.1 man7/ddio.7; do
    w=$(man --warnings -l "$P/share/man/$m" 2>&1 >/dev/null)
    [ -z "$w" ] || t_why "man page $m: $w" || return
  done
  MANPATH=$P/share/man man -w ddio-server >/dev/null || t_why "man -w ddio-server with MANPATH"
}
t_case install/man-pages "man pages render without warnings" man_pages
if command -v systemd-analyze >/dev/null; then
  unit() {
    MANPATH=$P/share/man systemd-analyze verify "$P/lib/systemd/system/ddio-server.service" \
      || t_why "systemd-analyze verify ddio-server.service"
  }
  t_case install/systemd-unit "systemd-analyze verify: the installed unit is valid (ExecStart, Documentation= pages)" unit
else
  t_skip install/systemd-unit "no systemd-analyze"
fi

# From here on only the install (and the system's own directories).
export PATH="$P/bin:/usr/local/bin:/usr/bin:/bin" LD_LIBRARY_PATH="$P/lib"
unset DDIO_SERVERS DDIO_SECRET_FILE DDIO_CONFIG
cd "$tmp" || t_unusable install/cd "$tmp"
installed_mpicc() {
  [ "$(command -v mpicc)" = "$P/bin/mpicc" ] || t_why "mpicc on PATH is $(command -v mpicc)" || return
  mpicc -O2 -o patterns "$P/share/doc/ddio/examples/ddio-patterns.c" || t_why "installed mpicc" || return
  ldd ./patterns | grep -q "libmpich.so.12 => $P/lib/libmpich.so.12" \
    || { ldd ./patterns; t_why "program built with the installed mpicc does not load the installed libmpich"; return; }
  ( env -u LD_LIBRARY_PATH ldd ./patterns ) | grep -q "libmpich.so.12 => $P/lib/" \
    || t_why "installed mpicc gives no RUNPATH to the installed lib"
}
t_case install/mpicc "installed mpicc builds ddio-patterns; it loads $P/lib/libmpich.so.12 (RUNPATH)" installed_mpicc

cat > t_ver.c <<'C'
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n;
    MPI_Init(&argc, &argv);
    MPI_Get_library_version(v, &n);
    printf("%s\n", strstr(v, "ufs+nfs+ddio") ? "ddio-enabled" : "other");
    MPI_Finalize();
    return 0;
}
C
PKG_CONFIG_PATH=$P/lib/pkgconfig
export PKG_CONFIG_PATH
pkgconfig() {
  [ "$(pkg-config --variable=mpicc ddio)" = "$P/bin/mpicc" ] || t_why "ddio.pc mpicc variable" || return
  # shellcheck disable=SC2046
  cc -o t_ver t_ver.c $(pkg-config --cflags --libs ddio) || t_why "cc with pkg-config ddio" || return
  [ "$(timeout 120 mpiexec -n 1 ./t_ver)" = ddio-enabled ] || t_why "pkg-config-built program: wrong library"
}
t_case install/pkg-config "pkg-config ddio builds a program that runs on the ddio-enabled library (installed mpiexec)" \
  pkgconfig

mkdir -p root
# with strace (when present): no program run and no file opened comes from
# the build tree or the cache
trace=()
if command -v strace >/dev/null; then
  trace=(strace -f -qq -e trace=execve,openat -e signal=none -o "$tmp/trace")
fi
run_installed() {
  local out
  out=$(timeout -k 10 "$T_LIMIT" "${trace[@]}" "$P/bin/ddio-run" -s 2 --root "$tmp/root" -- \
    sh -c 'echo "mpiexec=$(command -v mpiexec) ld=$LD_LIBRARY_PATH"; exec mpiexec -n 4 ./patterns -q -r 8192 -m 16 -p wb,wc,rb,rc ddio:/inst' 2>&1) \
    || { echo "$out"; t_why "ddio-run from the install"; return; }
  echo "$out" | grep -q "mpiexec=$P/bin/mpiexec ld=$P/lib" \
    || { echo "$out"; t_why "ddio-run did not put the installed MPICH first"; return; }
  if echo "$out" | grep -Eiq "mismatch|FAIL|error"; then echo "$out"; t_why "ddio-patterns reported an error"; return; fi
  echo "$out" | grep -v "^mpiexec=" | sed 's/^/     /'
}
t_case install/ddio-run \
  "installed ddio-run (installed ddio-server, mpiexec, libmpich): ddio-patterns on 2 servers, 4 ranks, bytes verified" \
  run_installed
strace_check() {
  local used
  used=$(grep -v ENOENT "$tmp/trace" | grep -e "\"$top" -e "\"$cache" | head -5 || true)
  [ -z "$used" ] || t_why "the run used files of the build tree or cache: $used" || return
  grep -q "execve(\"$P/bin/ddio-server\"" "$tmp/trace" || t_why "installed ddio-server not run" || return
  grep -q "execve(\"$P/bin/hydra_pmi_proxy\"" "$tmp/trace" || t_why "installed hydra_pmi_proxy not run" || return
  grep -q "openat(.*\"$P/lib/libmpich.so.12\"" "$tmp/trace" || t_why "installed libmpich not loaded"
}
if [ ${#trace[@]} -gt 0 ]; then
  t_case install/strace "strace: installed ddio-server, hydra_pmi_proxy and libmpich used; nothing from the build tree or cache" \
    strace_check
else
  t_skip install/strace "no strace"
fi

# the multi-user mode from the install: installed ddio-run --auth munge
# (its own munged), servers proving every rank's user, the data verified
run_installed_munge() {
  local out
  out=$(timeout -k 10 "$T_LIMIT" "$P/bin/ddio-run" --auth munge -s 2 --root "$tmp/root-munge" \
    --keep-logs -l info -- mpiexec -n 4 ./patterns -q -r 8192 -m 16 -p wb,rb ddio:/inst-munge 2>&1) \
    || { echo "$out"; t_why "ddio-run --auth munge from the install"; return; }
  if echo "$out" | grep -Eiq "mismatch|FAIL"; then echo "$out"; t_why "ddio-patterns reported an error"; return; fi
  echo "$out" | grep -q "authenticated as uid .* (MUNGE)" \
    || { echo "$out" | tail -5; t_why "the servers did not prove the ranks by MUNGE"; }
}
t_case install/ddio-run-munge \
  "installed ddio-run --auth munge: ddio-patterns on 2 servers proving every connection by MUNGE, bytes verified" \
  run_installed_munge

# Debian's mpirun and an Open MPI program through the installed ddio-run
# --ompi: every rank loads the installed plug-in (strace), nothing of the
# build tree or cache, bytes verified by ddio-patterns
run_installed_ompi() {
  local out used
  mpicc.openmpi -O2 -o patterns-ompi "$P/share/doc/ddio/examples/ddio-patterns.c" \
    || t_why "mpicc.openmpi ddio-patterns.c" || return
  out=$(env -u DDIO_OMPI_COMPONENT_DIR OMPI_MCA_rmaps_base_oversubscribe=1 timeout -k 10 "$T_LIMIT" \
    strace -f -qq -e trace=execve,openat -e signal=none -o "$tmp/trace-ompi" \
    "$P/bin/ddio-run" --ompi -s 2 --root "$tmp/root" -- \
    mpirun -n 4 ./patterns-ompi -q -r 8192 -m 16 -p wb,wc,rb,rc ddio:/inst-ompi 2>&1) \
    || { echo "$out"; t_why "ddio-run --ompi from the install"; return; }
  if echo "$out" | grep -Eiq "mismatch|FAIL|error"; then echo "$out"; t_why "ddio-patterns reported an error"; return; fi
  # processes that opened it (strace -f: a call may show as "<unfinished ...>")
  [ "$(grep "openat(.*\"$P/lib/ddio/openmpi/mca_io_romio321.so\"" "$tmp/trace-ompi" | grep -v ENOENT \
       | awk '{print $1}' | sort -u | wc -l)" -ge 4 ] \
    || t_why "the 4 ranks did not load the installed plug-in" || return
  used=$(grep -v ENOENT "$tmp/trace-ompi" | grep -e "\"$top" -e "\"$cache" | head -5 || true)
  [ -z "$used" ] || t_why "the run used files of the build tree or cache: $used" || return
  echo "$out" | sed 's/^/     /'
}
if [ $ompi = 1 ] && command -v strace >/dev/null; then
  [ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  t_case install/ompi-plugin \
    "installed ddio-run --ompi: Debian's mpirun, ddio-patterns (mpicc.openmpi) on 2 servers, 4 ranks, the installed plug-in in every rank" \
    run_installed_ompi
else
  t_skip install/ompi-plugin "no Debian Open MPI (or its plug-in build failed), or no strace"
fi

cd "$top" || t_unusable install/cd "$top"
uninstall() {
  local left
  make uninstall prefix="$P" > "$tmp/uninstall.log" 2>&1 || { tail "$tmp/uninstall.log"; t_why "make uninstall"; return; }
  left=$(find "$P" \( -type f -o -type l \) | head)
  [ -z "$left" ] || t_why "left after make uninstall: $left"
}
t_case install/uninstall "make uninstall removes every installed file" uninstall
t_done
