#!/usr/bin/env bash
# The "mpirun" the suite harnesses hand to a test list (ROMIO's runtests calls
# it as `$mpirun -np N ./prog ARGS`; the MPICH io harness calls it the same
# way). Runs ONE test under a time limit on fresh storage and records what
# happened, so the harness can judge every test on its own afterwards:
#   ddio mode: 2 new ddio servers per test (ddio-run, a new storage root, so
#              nothing left by an earlier test is seen: the equivalent of
#              runtests' `rm -f $FILENAME*`, which cannot reach ddio: names),
#              and the servers' coll_xfers counters read before they stop;
#   ufs mode:  $WRAP_CLEAN emptied first (runtests' rm does not match ufs:
#              prefixed names either).
#   ddio mode with a mount (WRAP_MOUNT=1, or WRAP_MOUNT_<name>=1 for one
#              test): the servers' namespace is also mounted (ddio-run
#              --mount) and the test runs with the mount as its working
#              directory, so plain names, and POSIX calls on them, are ddio's.
# The program's own output (stdout+stderr) goes to $WRAP_OUT/NAME.out and to
# our stdout; the exit status to NAME.rc, the wall seconds to NAME.sec, the
# servers' coll_xfers, xfers and opens sums to NAME.coll, NAME.xfers and
# NAME.opens; NAME is appended to $WRAP_OUT/ran.
# env: WRAP_MODE (ddio|ufs) WRAP_OUT WRAP_TOP (project) WRAP_LIMIT (seconds)
#      WRAP_NAME (the test's name when PROG is not named after it)
#      WRAP_CLEAN (directory emptied before each test; optional)
#      WRAP_FORCE_<name>=PREFIX  run test NAME with ROMIO_FSTYPE_FORCE=PREFIX
#      WRAP_PRE_<name>=CMD  shell command run in the test's working directory
#                           (the mount) before it, e.g. to put an input there
#      WRAP_SKIP_<name>=WHY  do not run test NAME: NAME.rc is "skip", NAME.out WHY
#      WRAP_RUN_OPTS  more options for ddio-run (--ompi: Debian's Open MPI)
#      WRAP_MPIEXEC   the ufs mode's mpiexec command (default mpiexec)
set -u
[ "${1:-}" = -np ] && [ $# -ge 3 ] || { echo "mpirun-wrap: usage: -np N PROG [ARGS...]" >&2; exit 2; }
np=$2; prog=$3; shift 3
: "${WRAP_MODE:?}" "${WRAP_OUT:?}" "${WRAP_TOP:?}"
limit=${WRAP_LIMIT:-300}
name=${WRAP_NAME:-$(basename "$prog")}
rec=$name; i=2
while [ -e "$WRAP_OUT/$rec.rc" ]; do rec=$name.$i; i=$((i + 1)); done
out="$WRAP_OUT/$rec.out"
echo "$rec" >>"$WRAP_OUT/ran"
if [ -n "${WRAP_CLEAN:-}" ] && [ -d "$WRAP_CLEAN" ]; then
  find "$WRAP_CLEAN" -mindepth 1 -delete
fi
var=${name//[^A-Za-z0-9_]/_}
force_var="WRAP_FORCE_$var"; mount_var="WRAP_MOUNT_$var"; pre_var="WRAP_PRE_$var"
if [ -n "${!force_var:-}" ]; then export ROMIO_FSTYPE_FORCE=${!force_var}; fi
skip_var="WRAP_SKIP_$var"
if [ -n "${!skip_var:-}" ]; then
  echo "${!skip_var}" >"$out"; echo 0 >"$WRAP_OUT/$rec.sec"; echo skip >"$WRAP_OUT/$rec.rc"
  exit 0
fi
read -ra run_opts <<<"${WRAP_RUN_OPTS:-}"
read -ra mpx <<<"${WRAP_MPIEXEC:-mpiexec}"
mount=${!mount_var:-${WRAP_MOUNT:-0}}
export PRE_CMD=${!pre_var:-}
# the test may run elsewhere (a mount): a program here gets an absolute path
case $prog in /*) ;; */*) [ -e "$prog" ] && prog="$PWD/$prog" ;; esac

start=$(date +%s)
if [ "$WRAP_MODE" = ddio ]; then
  srv="$WRAP_OUT/srv-$rec"
  mkdir -p "$srv"
  # The program's output is kept apart from ddio-run's own messages.
  mnt_opt=(); export RUN_DIR=$PWD
  if [ "$mount" = 1 ]; then
    mkdir -p "$srv/mnt"; mnt_opt=(--mount "$srv/mnt"); RUN_DIR="$srv/mnt"
  fi
  PROG_OUT="$out" STATS_OUT="$WRAP_OUT/$rec.stats" STATS_TOOL="$WRAP_TOP/tools/ddio" \
    timeout -k 10 "$limit" "$WRAP_TOP/tools/ddio-run" "${run_opts[@]}" -s 2 --root "$srv" "${mnt_opt[@]}" -- \
    bash -c 'cd "$RUN_DIR" || exit 2
             if [ -n "$PRE_CMD" ]; then bash -c "$PRE_CMD" >"$PROG_OUT.pre" 2>&1 || exit 3; fi
             mpiexec -n "$0" "$@" </dev/null >"$PROG_OUT" 2>&1; rc=$?
             cd /; "$STATS_TOOL" stats coll_xfers xfers opens local_handovers >"$STATS_OUT" 2>&1; exit $rc' "$np" "$prog" "$@" \
    </dev/null >"$WRAP_OUT/$rec.run" 2>&1
  rc=$?
  [ $rc = 3 ] && cat "$out.pre" "$WRAP_OUT/$rec.run" >>"$out" 2>/dev/null
  awk '$2=="coll_xfers"{s+=$3} END{print s+0}' "$WRAP_OUT/$rec.stats" >"$WRAP_OUT/$rec.coll" 2>/dev/null
  awk '$2=="xfers"{s+=$3} END{print s+0}' "$WRAP_OUT/$rec.stats" >"$WRAP_OUT/$rec.xfers" 2>/dev/null
  awk '$2=="opens"{s+=$3} END{print s+0}' "$WRAP_OUT/$rec.stats" >"$WRAP_OUT/$rec.opens" 2>/dev/null
  # same-host reads: the file's descriptors handed over (reads then reach
  # the servers' files without an XFER)
  awk '$2=="local_handovers"{s+=$3} END{print s+0}' "$WRAP_OUT/$rec.stats" >"$WRAP_OUT/$rec.local" 2>/dev/null
  rm -rf "$srv"
else
  if [ -n "$PRE_CMD" ]; then bash -c "$PRE_CMD" >"$out.pre" 2>&1 || cat "$out.pre" >&2; fi
  timeout -k 10 "$limit" "${mpx[@]}" -n "$np" "$prog" "$@" </dev/null >"$out" 2>&1
  rc=$?
fi
echo $(( $(date +%s) - start )) >"$WRAP_OUT/$rec.sec"
[ $rc = 124 ] || [ $rc = 137 ] && echo "mpirun-wrap: $rec killed after the ${limit}s limit" >>"$out"
echo "$rc" >"$WRAP_OUT/$rec.rc"
cat "$out"
exit "$rc"
