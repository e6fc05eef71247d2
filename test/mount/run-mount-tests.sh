#!/usr/bin/env bash
# The ddio mount (tools/ddio-fuse) and the routing of plain paths under it
# to the ddio driver. Each group of cases (test/mount/mount-cases.sh) runs in
# its own `ddio-run -s 2 --mount DIR` session under a time limit; after each
# the mount must be gone. Also: ddio-run unmounts when its command fails and
# when it is interrupted. POSIX results are compared with cmp against the
# originals, MPI results against the same program on ROMIO's ufs:.
# Closes with "mount: N passed, N failed" and the failing tests' names.
# usage: run-mount-tests.sh [posix|mpi|errors|lifecycle]...
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${DDIO_BUILD_DIR:-$(cd "$here/../.." && pwd)}
mpi="$top/mpich"
# what the suite needs; a missing piece is one named failure, not a skip
unusable() { echo "FAIL: mount/$1: $2"; echo; echo "failed: mount/$1"; echo "mount: 0 passed, 1 failed"; exit 1; }
[ -x "$mpi/bin/mpicc" ] || unusable build "$mpi/bin/mpicc missing: run make first"
[ -x "$top/tools/ddio-fuse" ] || unusable build "tools/ddio-fuse missing: run make"
for p in "$top/test/mpi/bin/filecmp" "$top/examples/bin/ddio-patterns"; do
  [ -x "$p" ] || unusable build "$p missing: run make check (or make $p)"
done
command -v fusermount3 >/dev/null && [ -e /dev/fuse ] \
  || unusable fuse "FUSE unavailable (fusermount3 from fuse3, /dev/fuse): scripts/install-deps.sh"
. "$here/../mpienv.sh" 30
limit=${DDIO_TEST_LIMIT:-300}        # per group session
export CASE_LIMIT=${DDIO_CASE_LIMIT:-120}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-mount.XXXXXX")
M="$tmp/mnt"; mkdir -p "$M"
# mounted, also when its daemon died ("transport endpoint is not connected",
# where `mountpoint` says no)
is_mounted() { grep -q " $1 fuse" /proc/self/mounts; }
cleanup() {
  is_mounted "$M" && { fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M"; }
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
pass=0; fail=0; failed=()
ok() { pass=$((pass + 1)); echo "PASS: $1"; }
ko() { fail=$((fail + 1)); failed+=("$1"); echo "FAIL: $1${2:+: $2}"; }
unmounted() {   # after every session: no stale mount
  if is_mounted "$M"; then ko "$1/unmounted" "still mounted"; fusermount3 -uz "$M"; else ok "$1/unmounted"; fi
}

export M T="$tmp" TOP="$top" PAT="$top/examples/bin/ddio-patterns" FILECMP="$top/test/mpi/bin/filecmp"
# the transport the mount's data must take (DDIO_TRANSPORT; auto: this host's rule)
XPORT=$("$here/../../scripts/auto-transport.sh" --expected)
echo "mount: data by $XPORT (DDIO_TRANSPORT=${DDIO_TRANSPORT:-auto})"
export XPORT TMOUNT="$tmp/t_mount"
if ! mpicc -O1 -o "$TMOUNT" "$here/t_mount.c" >"$tmp/t_mount.build.log" 2>&1; then
  cat "$tmp/t_mount.build.log"; ko "build/t_mount"
fi
# parallel HDF5 (Debian's, static) over our libmpich.so.12: h5dump reads the
# result through the mount
export TH5="$tmp/t_h5"
if ! h5pcc.mpich -o "$TH5" "$here/t_h5.c" >"$tmp/t_h5.build.log" 2>&1; then
  cat "$tmp/t_h5.build.log"; ko "build/t_h5" "h5pcc.mpich (libhdf5-mpich-dev) failed"
fi
head -c 3000017 /dev/urandom > "$tmp/rand"

group() {  # group NAME: one ddio-run --mount session running that group's cases
  local g=$1 log="$tmp/$1.log" rc
  rm -rf "$tmp/srv-$g"; mkdir -p "$tmp/srv-$g"
  timeout -k 10 "$limit" "$top/tools/ddio-run" -s 2 --root "$tmp/srv-$g" --mount "$M" -- \
    bash "$here/mount-cases.sh" "$g" >"$log" 2>&1
  rc=$?
  local line
  while IFS= read -r line; do
    case "$line" in
      PASS:\ *) ok "${line#PASS: }" ;;
      FAIL:\ *) local r=${line#FAIL: }; ko "${r%%: *}" "${r#*: }" ;;
    esac
  done < "$log"
  if ! grep -q '^\(PASS\|FAIL\): ' "$log" || { [ $rc -ne 0 ] && ! grep -q '^FAIL: ' "$log"; }; then
    ko "mount/$g/session" "exit $rc"; tail -n 20 "$log" | sed 's/^/    /'
  fi
  unmounted "mount/$g"
}

lifecycle() {  # ddio-run unmounts after a failing command and on an interrupt
  "$top/tools/ddio-run" -s 1 --root "$tmp/srv-lc" --mount "$M" -- \
    bash -c 'mountpoint -q "$0" && exit 3' "$M" >"$tmp/lc1.log" 2>&1
  local rc=$?
  [ $rc -eq 3 ] && ok "mount/lifecycle/failing-command-status" \
    || ko "mount/lifecycle/failing-command-status" "exit $rc, expected 3 (mounted during the command)"
  unmounted "mount/lifecycle/failing-command"
  # Ctrl-C: SIGINT to ddio-run's process group while its command runs. A
  # background job of this script has SIGINT ignored, which bash cannot
  # undo, so python restores the default before exec'ing ddio-run in a
  # session of its own.
  python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.setsid()
os.execvp(sys.argv[1], sys.argv[1:])' "$top/tools/ddio-run" -s 1 --root "$tmp/srv-lc" --mount "$M" -- sleep 60 \
    >"$tmp/lc2.log" 2>&1 &
  local pid=$! t=0
  while ! mountpoint -q "$M" && [ $t -lt 200 ]; do sleep 0.1; t=$((t + 1)); done
  kill -INT -- -"$pid" 2>/dev/null
  t=0; while kill -0 "$pid" 2>/dev/null && [ $t -lt 300 ]; do sleep 0.1; t=$((t + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    ko "mount/lifecycle/interrupt" "ddio-run still running 30 s after SIGINT"; kill -KILL -- -"$pid"
  else
    wait "$pid"; local st=$?
    [ $st -eq 130 ] && ok "mount/lifecycle/interrupt" || ko "mount/lifecycle/interrupt" "exit $st, expected 130"
  fi
  wait "$pid" 2>/dev/null
  unmounted "mount/lifecycle/interrupt"
  # a mount point that is already mounted is refused, not stacked
  "$top/tools/ddio-run" -s 1 --root "$tmp/srv-lc" --mount "$tmp/nonexistent" -- true >"$tmp/lc3.log" 2>&1 \
    && ko "mount/lifecycle/bad-mountpoint" "accepted a missing directory" \
    || ok "mount/lifecycle/bad-mountpoint"
}

start=$(date +%s)
groups=("$@"); [ ${#groups[@]} -gt 0 ] || groups=(posix mpi errors lifecycle)
for g in "${groups[@]}"; do
  case "$g" in
    lifecycle) lifecycle ;;
    errors) DDIO_TIMEOUT=3 group errors ;;     # the hung-server case waits for it
    posix|mpi) group "$g" ;;
    *) echo "run-mount-tests: unknown group '$g'" >&2; exit 2 ;;
  esac
done
echo
echo "mount: wall time $(( $(date +%s) - start ))s"
[ $fail -gt 0 ] && echo "failed: ${failed[*]}"
echo "mount: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
