#!/usr/bin/env bash
# Install test: `make install prefix=TMP` from this build, then, with PATH
# and LD_LIBRARY_PATH pointing only at the install (and the system), compile
# an MPI program with the INSTALLED mpicc (and once through ddio.pc), run it
# on ddio: through the installed ddio-run (installed servers, installed
# mpiexec and libmpich), check every byte read back, check that nothing
# installed names the build tree or the cache, the man pages render without
# warnings, and `make uninstall` removes every file.
# usage: run-install-tests.sh [BUILD_DIR]   (needs a finished `make`)
set -euo pipefail
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
P=$tmp/prefix
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok   $*"; }
start=$(date +%s)

make -C "$top" install prefix="$P" > "$tmp/install.log" 2>&1 \
  || { tail -30 "$tmp/install.log"; fail "make install prefix=$P"; }
for f in bin/ddio-server bin/ddio bin/ddio-run bin/ddio-fuse bin/mpicc bin/mpiexec \
         bin/hydra_pmi_proxy lib/libmpich.so.12 include/mpi.h include/mpio.h \
         lib/pkgconfig/ddio.pc lib/pkgconfig/mpich.pc \
         share/man/man8/ddio-server.8 share/man/man1/ddio-run.1 share/man/man1/ddio.1 \
         share/man/man7/ddio.7 share/man/man1/mpiexec.1 \
         etc/ddio/ddio-server.conf.example etc/ddio/ddio.conf.example \
         lib/systemd/system/ddio-server.service \
         share/doc/ddio/examples/ddio-job.sbatch share/doc/ddio/examples/ddio-patterns.c; do
  [ -e "$P/$f" ] || fail "not installed: $f"
done
ok "make install prefix=DIR: server, tools, MPICH (mpicc, mpiexec, libmpich.so.12, mpi.h), man pages, ddio.pc, examples, unit"

# nothing installed may name the build tree or the MPICH cache: text files,
# and the RUNPATHs of the ELF files (MPICH's configure line compiled into
# libmpich/mpiexec.hydra is informational and excepted, see install-mpich.sh)
cache=$(cd "$top/mpich" && pwd -P); cache=${cache%/prefix}
bad=$(grep -rIl -e "$top" -e "$cache" "$P" || true)
[ -z "$bad" ] || fail "installed files name the build tree or cache: $bad"
while IFS= read -r -d '' f; do
  if head -c 4 "$f" | grep -q ELF; then
    rp=$(patchelf --print-rpath "$f" 2>/dev/null || true)
    case "$rp" in *"$top"*|*"$cache"*) fail "$f has RUNPATH $rp" ;; esac
  fi
done < <(find "$P" -type f -print0)
grep -q "^ExecStart=$P/bin/ddio-server --config $P/etc/ddio/ddio-server.conf" \
  "$P/lib/systemd/system/ddio-server.service" || fail "unit's ExecStart"
ok "no installed file or RUNPATH names the build tree or the cache"

for m in man8/ddio-server.8 man1/ddio-run.1 man1/ddio.1 man7/ddio.7; do
  w=$(man --warnings -l "$P/share/man/$m" 2>&1 >/dev/null)
  [ -z "$w" ] || fail "man page $m: $w"
done
MANPATH=$P/share/man man -w ddio-server >/dev/null || fail "man -w ddio-server with MANPATH"
ok "man pages render without warnings"
if command -v systemd-analyze >/dev/null; then
  MANPATH=$P/share/man systemd-analyze verify "$P/lib/systemd/system/ddio-server.service" \
    || fail "systemd-analyze verify ddio-server.service"
  ok "systemd-analyze verify: the installed unit is valid (ExecStart, Documentation= pages)"
fi

# From here on only the install (and the system's own directories).
export PATH="$P/bin:/usr/local/bin:/usr/bin:/bin" LD_LIBRARY_PATH="$P/lib"
unset DDIO_SERVERS DDIO_SECRET_FILE DDIO_CONFIG
cd "$tmp"
[ "$(command -v mpicc)" = "$P/bin/mpicc" ] || fail "mpicc on PATH is $(command -v mpicc)"
mpicc -O2 -o patterns "$P/share/doc/ddio/examples/ddio-patterns.c" || fail "installed mpicc"
ldd ./patterns | grep -q "libmpich.so.12 => $P/lib/libmpich.so.12" \
  || { ldd ./patterns; fail "program built with the installed mpicc does not load the installed libmpich"; }
( env -u LD_LIBRARY_PATH ldd ./patterns ) | grep -q "libmpich.so.12 => $P/lib/" \
  || fail "installed mpicc gives no RUNPATH to the installed lib"
ok "installed mpicc builds ddio-patterns; it loads $P/lib/libmpich.so.12 (RUNPATH)"

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
[ "$(pkg-config --variable=mpicc ddio)" = "$P/bin/mpicc" ] || fail "ddio.pc mpicc variable"
# shellcheck disable=SC2046
cc -o t_ver t_ver.c $(pkg-config --cflags --libs ddio) || fail "cc with pkg-config ddio"
[ "$(mpiexec -n 1 ./t_ver)" = ddio-enabled ] || fail "pkg-config-built program: wrong library"
ok "pkg-config ddio builds a program that runs on the ddio-enabled library (installed mpiexec)"

mkdir -p root
# with strace (when present): no program run and no file opened comes from
# the build tree or the cache
trace=()
if command -v strace >/dev/null; then
  trace=(strace -f -qq -e trace=execve,openat -e signal=none -o "$tmp/trace")
fi
out=$("${trace[@]}" "$P/bin/ddio-run" -s 2 --root "$tmp/root" -- \
  sh -c 'echo "mpiexec=$(command -v mpiexec) ld=$LD_LIBRARY_PATH"; exec mpiexec -n 4 ./patterns -q -r 8192 -m 16 -p wb,wc,rb,rc ddio:/inst' 2>&1) \
  || { echo "$out"; fail "ddio-run from the install"; }
echo "$out" | grep -q "mpiexec=$P/bin/mpiexec ld=$P/lib" \
  || { echo "$out"; fail "ddio-run did not put the installed MPICH first"; }
echo "$out" | grep -Eiq "mismatch|FAIL|error" && { echo "$out"; fail "ddio-patterns reported an error"; }
echo "$out" | grep -v "^mpiexec=" | sed 's/^/     /'
if [ ${#trace[@]} -gt 0 ]; then
  used=$(grep -v ENOENT "$tmp/trace" | grep -e "\"$top" -e "\"$cache" | head -5 || true)
  [ -z "$used" ] || fail "the run used files of the build tree or cache: $used"
  grep -q "execve(\"$P/bin/ddio-server\"" "$tmp/trace" || fail "installed ddio-server not run"
  grep -q "execve(\"$P/bin/hydra_pmi_proxy\"" "$tmp/trace" || fail "installed hydra_pmi_proxy not run"
  grep -q "openat(.*\"$P/lib/libmpich.so.12\"" "$tmp/trace" || fail "installed libmpich not loaded"
  ok "strace: installed ddio-server, hydra_pmi_proxy and libmpich used; nothing from the build tree or cache"
fi
ok "installed ddio-run (installed ddio-server, mpiexec, libmpich): ddio-patterns on 2 servers, 4 ranks, bytes verified"

cd "$top"
make uninstall prefix="$P" > "$tmp/uninstall.log" 2>&1 || { tail "$tmp/uninstall.log"; fail "make uninstall"; }
left=$(find "$P" \( -type f -o -type l \) | head)
[ -z "$left" ] || fail "left after make uninstall: $left"
ok "make uninstall removes every installed file"
echo "install tests: PASS ($(( $(date +%s) - start )) s)"
