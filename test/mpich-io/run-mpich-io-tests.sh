#!/usr/bin/env bash
# MPICH's own MPI-IO suite (test/mpi/io of the MPICH source in the build
# cache) on ddio, with ROMIO's ufs: as the control.
#
# The programs are built by build-mpich-io-tests.sh (MPICH's test tree
# configured against our install, cached outside the clone). Every line of
# the io directory's testlist runs (NAME NP [arg=A] [env=V=X] [timeLimit=S]
# [mem=GB] [xfail=WHY]), each through ../romio/mpirun-wrap.sh on fresh
# storage: on ddio, two new servers per test and a fresh working directory.
# These programs open unprefixed names ("testfile"), so plain names are sent
# to the file system under test with ROMIO_FSTYPE_FORCE=ddio: (ufs: for the
# control); the driver stores a relative name relative to the servers'
# storage roots. One program (simple_collective) also unlink()s its files,
# which only reaches a ddio file where the ddio store is mounted
# (DDIO_MPICH_IO_CWD: run with that directory, inside a ddio mount, as the
# working directory, and with the mount's servers, instead of FORCE).
#
# Judged as MPICH's runtests judges: exit status 0, a "No Errors" line and no
# other output ("Test Passed" allowed). On ddio every test whose source makes
# a collective read or write (blocking, split or nonblocking) must also show
# the servers' coll_xfers counters above 0: the disk-directed path was taken.
# Prints every failing test by name, then "mpich-io-ufs: N passed, N failed"
# (the control, not added to the total) and last
# "mpich-io: N passed, N failed" (ddio, what scripts/test-summary.sh adds up).
# env: DDIO_TEST_LIMIT seconds per test (default 120, or the testlist's
#      timeLimit when larger); DDIO_MPICH_IO_CONTROL=0 skips the ufs control
# usage: run-mpich-io-tests.sh [TEST...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${DDIO_BUILD_DIR:-$(cd "$here/../.." && pwd)}
mpi="$top/mpich"
[ -x "$mpi/bin/mpicc" ] || { echo "run-mpich-io-tests: $mpi/bin/mpicc missing: run make first" >&2; exit 2; }
. "$here/../mpienv.sh" 30
t0=$(date +%s)
iodir=$("$here/build-mpich-io-tests.sh" "$mpi") || { echo "mpich-io: 0 passed, 1 failed (build)"; exit 1; }
srcio="$(dirname "$(cd "$mpi" && pwd -P)")/src/test/mpi/io"
list="$iodir/testlist"; [ -f "$list" ] || list="$srcio/testlist.in"
limit=${DDIO_TEST_LIMIT:-120}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-mpich-io.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
want=("$@")
wanted() {
  [ ${#want[@]} -eq 0 ] && return 0
  local w; for w in "${want[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1
}
# testlist lines: skip comments and blanks
tests() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list"; }

# run_mode MODE: every wanted testlist line on one file system
run_mode() {
  local mode=$1 line n np opt lim args envs cwd
  mkdir -p "$tmp/res-$mode"
  export WRAP_MODE=$mode WRAP_OUT="$tmp/res-$mode" WRAP_TOP="$top"
  while read -r line; do
    set -- $line; n=$1; np=${2:-1}; shift 2 2>/dev/null || shift $#
    wanted "$n" || continue
    lim=$limit; args=(); envs=()
    for opt in "$@"; do
      case $opt in
        arg=*) args+=("${opt#arg=}") ;;
        env=*) envs+=("${opt#env=}") ;;
        timeLimit=*) [ "${opt#timeLimit=}" -gt "$lim" ] && lim=${opt#timeLimit=} ;;
        mem=*|xfail=*|strict=*|mpiversion=*) ;;    # noted in the report
        *) echo "run-mpich-io-tests: $n: testlist option '$opt' not understood" >&2 ;;
      esac
    done
    if [ "$mode" = ddio ] && [ -n "${DDIO_MPICH_IO_CWD:-}" ]; then
      cwd="$DDIO_MPICH_IO_CWD/mpich-io-$n"; mkdir -p "$cwd"
    else
      cwd="$tmp/cwd-$mode"; mkdir -p "$cwd"
    fi
    (
      cd "$cwd" || exit 2
      for e in "${envs[@]}"; do export "${e?}"; done
      [ "$mode" = ddio ] && [ -n "${DDIO_MPICH_IO_CWD:-}" ] || export ROMIO_FSTYPE_FORCE=$mode:
      WRAP_CLEAN=$cwd WRAP_LIMIT=$lim "$top/test/romio/mpirun-wrap.sh" -np "$np" "$iodir/$n" "${args[@]}"
    ) </dev/null >>"$tmp/run-$mode.log" 2>&1
    [ "$mode" = ddio ] && [ -n "${DDIO_MPICH_IO_CWD:-}" ] && rm -rf "$cwd"
  done < <(tests)
}

is_coll() { grep -qE 'MPI_File_i?(read|write)(_at)?_all' "$srcio/$1.c" 2>/dev/null; }

# judge MODE NAME: MPICH's rule (plus coll_xfers on ddio); prints why not
judge() {
  local mode=$1 n=$2 r="$tmp/res-$1" rc k
  rc=$(cat "$r/$n.rc" 2>/dev/null || echo none)
  [ "$rc" = 0 ] || { echo "exit status $rc"; return 1; }
  grep -qE '^\s*No [Ee]rrors\s*$' "$r/$n.out" || { echo "no 'No Errors' line"; return 1; }
  if grep -vqE '^\s*(No [Ee]rrors|Test Passed)\s*$' "$r/$n.out"; then
    echo "unexpected output"; return 1
  fi
  if [ "$mode" = ddio ] && is_coll "$n"; then
    k=$(cat "$r/$n.coll" 2>/dev/null || echo 0)
    [ "${k:-0}" -gt 0 ] || { echo "coll_xfers 0: the collective did not take the disk-directed path"; return 1; }
    echo "coll_xfers $k"
  fi
}

report() {
  local mode=$1 label=$2 pass=0 fail=0 failed=() n why sec
  for n in $(tests | awk '{print $1}'); do
    wanted "$n" || continue
    sec=$(cat "$tmp/res-$mode/$n.sec" 2>/dev/null || echo "-")
    if why=$(judge "$mode" "$n"); then
      pass=$((pass + 1)); echo "PASS: $label/$n (${sec}s${why:+, $why})"
    else
      fail=$((fail + 1)); failed+=("$n"); echo "FAIL: $label/$n (${sec}s, $why)"
      tail -n 25 "$tmp/res-$mode/$n.out" 2>/dev/null | sed 's/^/    /'
    fi
  done
  [ $fail -gt 0 ] && echo "$label failed: ${failed[*]}"
  eval "${mode}_line=\"$label: $pass passed, $fail failed\"; ${mode}_fail=$fail; ${mode}_pass=$pass"
}

ufs_line=""; ufs_fail=0
if [ "${DDIO_MPICH_IO_CONTROL:-1}" != 0 ]; then
  run_mode ufs; report ufs mpich-io-ufs
fi
run_mode ddio; report ddio mpich-io
echo
echo "run-mpich-io-tests: wall time $(( $(date +%s) - t0 ))s"
[ -n "$ufs_line" ] && echo "$ufs_line"
echo "$ddio_line"
[ "$ddio_fail" -eq 0 ] && [ "$ddio_pass" -gt 0 ] && [ "$ufs_fail" -eq 0 ]
