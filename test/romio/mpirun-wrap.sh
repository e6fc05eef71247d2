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
# The program's own output (stdout+stderr) goes to $WRAP_OUT/NAME.out and to
# our stdout; the exit status to NAME.rc, the wall seconds to NAME.sec, the
# coll_xfers sum to NAME.coll; NAME is appended to $WRAP_OUT/ran.
# env: WRAP_MODE (ddio|ufs) WRAP_OUT WRAP_TOP (project) WRAP_LIMIT (seconds)
#      WRAP_CLEAN (directory emptied before each test; optional)
#      WRAP_FORCE_<name>=PREFIX  run test NAME with ROMIO_FSTYPE_FORCE=PREFIX
set -u
[ "${1:-}" = -np ] && [ $# -ge 3 ] || { echo "mpirun-wrap: usage: -np N PROG [ARGS...]" >&2; exit 2; }
np=$2; prog=$3; shift 3
: "${WRAP_MODE:?}" "${WRAP_OUT:?}" "${WRAP_TOP:?}"
limit=${WRAP_LIMIT:-300}
name=$(basename "$prog")
rec=$name; i=2
while [ -e "$WRAP_OUT/$rec.rc" ]; do rec=$name.$i; i=$((i + 1)); done
out="$WRAP_OUT/$rec.out"
echo "$rec" >>"$WRAP_OUT/ran"
if [ -n "${WRAP_CLEAN:-}" ] && [ -d "$WRAP_CLEAN" ]; then
  find "$WRAP_CLEAN" -mindepth 1 -delete
fi
force_var="WRAP_FORCE_${name//[^A-Za-z0-9_]/_}"
if [ -n "${!force_var:-}" ]; then export ROMIO_FSTYPE_FORCE=${!force_var}; fi

start=$(date +%s)
if [ "$WRAP_MODE" = ddio ]; then
  srv="$WRAP_OUT/srv-$rec"
  mkdir -p "$srv"
  # The program's output is kept apart from ddio-run's own messages.
  PROG_OUT="$out" STATS_OUT="$WRAP_OUT/$rec.stats" STATS_TOOL="$WRAP_TOP/tools/ddio" \
    timeout -k 10 "$limit" "$WRAP_TOP/tools/ddio-run" -s 2 --root "$srv" -- \
    bash -c 'mpiexec -n "$0" "$@" </dev/null >"$PROG_OUT" 2>&1; rc=$?
             "$STATS_TOOL" stats coll_xfers >"$STATS_OUT" 2>&1; exit $rc' "$np" "$prog" "$@" \
    </dev/null >"$WRAP_OUT/$rec.run" 2>&1
  rc=$?
  awk '$2=="coll_xfers"{s+=$3} END{print s+0}' "$WRAP_OUT/$rec.stats" >"$WRAP_OUT/$rec.coll" 2>/dev/null
  rm -rf "$srv"
else
  timeout -k 10 "$limit" mpiexec -n "$np" "$prog" "$@" </dev/null >"$out" 2>&1
  rc=$?
fi
echo $(( $(date +%s) - start )) >"$WRAP_OUT/$rec.sec"
[ $rc = 124 ] || [ $rc = 137 ] && echo "mpirun-wrap: $rec killed after the ${limit}s limit" >>"$out"
echo "$rc" >"$WRAP_OUT/$rec.rc"
cat "$out"
exit "$rc"
