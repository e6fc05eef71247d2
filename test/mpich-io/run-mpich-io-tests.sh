#!/usr/bin/env bash
# MPICH's own MPI-IO suite (test/mpi/io of the MPICH source in the build
# cache) on ddio, with ROMIO's ufs: as the control.
#
# The programs are built by build-mpich-io-tests.sh (MPICH's test tree
# configured against our install, cached outside the clone). Every line of
# the io directory's testlist runs (NAME NP [arg=A] [env=V=X] [timeLimit=S]
# [mem=GB] [xfail=WHY]), each through ../romio/mpirun-wrap.sh on fresh
# storage: on ddio, two new servers per test and a fresh working directory.
# These programs open unprefixed names ("testfile") in their working
# directory, so on ddio each runs with a ddio mount (tools/ddio-fuse, through
# ddio-run --mount) as its working directory: ROMIO routes plain paths on the
# mount to the ddio driver (disk-directed, not through FUSE), and a test that
# cleans up with unlink() (simple_collective) really removes the ddio file.
# zero_count reads its own executable (argv[0]) as its input: it runs as
# ./zero_count with a copy of the executable in its working directory, so
# the input is on the file system under test (on ufs: too).
# Without FUSE, DDIO_MPICH_IO_MOUNT=0 sends plain names to ddio with
# ROMIO_FSTYPE_FORCE=ddio: instead (the driver stores a relative name under
# the servers' storage roots); the two tests that need POSIX access to the
# ddio file (zero_count, simple_collective) are then reported as SKIP.
# Every test that opens a file must show the servers' opens counter above 0,
# and every test whose reads or writes reach the file system (all but
# userioerr, whose one read is refused by MPI) the xfers counter: its files
# and its I/O went to ddio.
#
# Judged as MPICH's runtests judges: exit status 0, a "No Errors" line and no
# other output ("Test Passed" allowed). On ddio every test whose source makes
# a collective read or write (blocking, split or nonblocking) must also show
# the servers' coll_xfers counters above 0: the disk-directed path was taken.
# Prints every failing test by name, then "mpich-io-ufs: N passed, N failed"
# (the control, not added to the total) and last
# "mpich-io: N passed, N failed" (ddio, what scripts/test-summary.sh adds up).
# env: DDIO_TEST_LIMIT seconds per test (default 120, or the testlist's
#      timeLimit when larger); DDIO_MPICH_IO_CONTROL=0 skips the ufs control;
#      DDIO_MPICH_IO_MOUNT=0: no mount (see above)
# usage: run-mpich-io-tests.sh [TEST...]
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init mpich-io
t_mpi_env 30
here=$SRC/test/mpich-io
top=$BUILD
iodir=$("$here/build-mpich-io-tests.sh" "$MPI") || t_unusable mpich-io/build "build-mpich-io-tests.sh failed"
srcio="$(dirname "$(cd "$MPI" && pwd -P)")/src/test/mpi/io"
list="$iodir/testlist"; [ -f "$list" ] || list="$srcio/testlist.in"
limit=${DDIO_TEST_LIMIT:-120}
tmp=$T_TMP
use_mount=${DDIO_MPICH_IO_MOUNT:-1}
if [ "$use_mount" = 1 ] && ! t_have_fuse; then
  echo "run-mpich-io-tests: FUSE unavailable (tools/ddio-fuse, fusermount3, /dev/fuse):" \
    "DDIO_MPICH_IO_MOUNT=0 runs without the mount" >&2
  t_unusable mpich-io/fuse "no FUSE"
fi
NEEDS_MOUNT=" zero_count simple_collective "
t_select "$@"
# testlist lines: skip comments and blanks
tests() { sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list"; }

# run_mode MODE: every t_selected testlist line on one file system
run_mode() {
  local mode=$1 line n np opt lim args envs cwd
  mkdir -p "$tmp/res-$mode"
  export WRAP_MODE=$mode WRAP_OUT="$tmp/res-$mode" WRAP_TOP="$top"
  while read -r line; do
    set -- $line; n=$1; np=${2:-1}; shift 2 2>/dev/null || shift $#
    t_selected "$n" || continue
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
    [ "$mode" = ddio ] && [ "$use_mount" != 1 ] && [[ $NEEDS_MOUNT == *" $n "* ]] && continue
    prog=("$iodir/$n")
    if [ "$n" = zero_count ]; then
      # its input is argv[0]: a copy of itself in the working directory
      prog=(bash -c 'exec -a ./zero_count "$0" "$@"' "$iodir/$n")
      export WRAP_PRE_zero_count="cp '$iodir/$n' zero_count"
    fi
    cwd="$tmp/cwd-$mode"; mkdir -p "$cwd"
    (
      cd "$cwd" || exit 2
      for e in "${envs[@]}"; do export "${e?}"; done
      if [ "$mode" = ufs ]; then export ROMIO_FSTYPE_FORCE=ufs:
      elif [ "$use_mount" = 1 ]; then export WRAP_MOUNT=1
      else export ROMIO_FSTYPE_FORCE=ddio:; fi
      WRAP_NAME=$n WRAP_CLEAN=$cwd WRAP_LIMIT=$lim "$top/test/romio/mpirun-wrap.sh" -np "$np" "${prog[@]}" "${args[@]}"
    ) </dev/null >>"$tmp/run-$mode.log" 2>&1
  done < <(tests)
}

is_coll() { grep -qE 'MPI_File_i?(read|write)(_at)?_all' "$srcio/$1.c" 2>/dev/null; }
is_open() { grep -qE 'MPI_File_open' "$srcio/$1.c" 2>/dev/null; }
# userioerr's only read is refused by MPI (the file is write-only): no transfer
is_io() { [ "$1" != userioerr ] && grep -qE 'MPI_File_i?(read|write)' "$srcio/$1.c" 2>/dev/null; }

# judge MODE NAME: MPICH's rule (plus coll_xfers on ddio); prints why not
judge() {
  local mode=$1 n=$2 r="$tmp/res-$1" rc k l
  rc=$(cat "$r/$n.rc" 2>/dev/null || echo none)
  [ "$rc" = 0 ] || { echo "exit status $rc"; return 1; }
  grep -qE '^\s*No [Ee]rrors\s*$' "$r/$n.out" || { echo "no 'No Errors' line"; return 1; }
  if grep -vqE '^\s*(No [Ee]rrors|Test Passed)\s*$' "$r/$n.out"; then
    echo "unexpected output"; return 1
  fi
  if [ "$mode" = ddio ] && is_open "$n"; then
    k=$(cat "$r/$n.opens" 2>/dev/null || echo 0)
    [ "${k:-0}" -gt 0 ] || { echo "opens 0: its file was not opened on the ddio servers"; return 1; }
  fi
  if [ "$mode" = ddio ] && is_io "$n"; then
    k=$(cat "$r/$n.xfers" 2>/dev/null || echo 0); l=$(cat "$r/$n.local" 2>/dev/null || echo 0)
    [ "${k:-0}" -gt 0 ] || [ "${l:-0}" -gt 0 ] || { echo "xfers 0: its I/O did not go to the ddio servers"; return 1; }
  fi
  if [ "$mode" = ddio ] && is_coll "$n"; then
    # a collective of plain ranges that only reads may be all same-host reads
    k=$(cat "$r/$n.coll" 2>/dev/null || echo 0); l=$(cat "$r/$n.local" 2>/dev/null || echo 0)
    [ "${k:-0}" -gt 0 ] || [ "${l:-0}" -gt 0 ] || { echo "coll_xfers 0: the collective did not take the disk-directed path"; return 1; }
    echo "coll_xfers $k${l:+, same-host handovers $l}"
  fi
}

report() {
  local mode=$1 label=$2 n sec
  t_section "$label"
  for n in $(tests | awk '{print $1}'); do
    t_selected "$n" || continue
    if [ "$mode" = ddio ] && [ "$use_mount" != 1 ] && [[ $NEEDS_MOUNT == *" $n "* ]]; then
      t_skip "$label/$n" "needs POSIX access to the ddio file: a ddio mount"; continue
    fi
    sec=$(cat "$tmp/res-$mode/$n.sec" 2>/dev/null || echo "-")
    t_judge "$label/$n" "$sec" "$tmp/res-$mode/$n.out" judge "$mode" "$n"
  done
}

# the ufs: control first (its line is printed before the closing line, which counts ddio)
if [ "${DDIO_MPICH_IO_CONTROL:-1}" != 0 ]; then
  run_mode ufs; report ufs mpich-io-ufs
fi
run_mode ddio; report ddio mpich-io
t_done
