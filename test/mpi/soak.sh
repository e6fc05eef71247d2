#!/usr/bin/env bash
# Soak body, run inside `ddio-run` (DDIO_SERVERS set, the servers are the
# children of ddio-run = $PPID): JOBS MPI jobs at once against the same
# servers, in rounds of t_soak (own files and disjoint, unaligned regions of
# one shared file, random collective/independent distributions, every byte
# verified). Prints each job's figures and, per server, the heap in use
# (STATS heap_in_use: bytes allocated and not freed) and the resident size
# at start, after round 1 (warm) and after each later round. Fails on any
# error, or if a server's heap in use grew by more than 1 MiB from the warm
# point to the end (RSS is reported, not judged: glibc keeps freed memory
# in per-thread arenas, so RSS creeps while nothing leaks).
# With SOAK_RESTARTS=K, server 1 is restarted K times while the jobs run
# (restart-server.sh: SIGKILL and SIGTERM in turn, 1 s apart, 0.3 s down
# each time; the last one's pid in SOAK_PIDFILE, stopped at exit): every
# byte is still verified, and the heap is reported, not judged (a restarted
# server starts from nothing).
# usage: soak.sh T_SOAK JOBS RANKS OPS1 OPS2 [ROUNDS]   (ROUNDS - 1 rounds of OPS2)
set -u
here=$(cd "$(dirname "$0")" && pwd)
ddio=${DDIO_TOOL:-$here/../../tools/ddio}
prog=$1 jobs=$2 ranks=$3 ops1=$4 ops2=$5 rounds=${6:-2}
srv=$(pgrep -P "$PPID" -x ddio-server | tr '\n' ' ')
[ -n "$srv" ] || { echo "soak: no servers found under ddio-run"; exit 1; }
rss() { local p s=""; for p in $srv; do s="$s $(awk '/^VmRSS/{print $2}' /proc/$p/status 2>/dev/null)"; done; echo $s; }
# the heap once the servers have let go of the jobs' connections (a reader
# thread still tearing one down holds its buffers: 4 MiB seen in a round's
# figure): at most 5 s for every server to count only this query's own
heap() {
  local k
  for ((k = 0; k < 50; k++)); do
    "$ddio" stats connections | awk '$3 > 1 { busy = 1 } END { exit busy }' && break
    sleep 0.1
  done
  "$ddio" stats heap_in_use | awk '{printf " %d", $3 / 1024}'
}
# a failed round with restarts: what the restarted servers logged (a slow
# drain says what held it); the first server's log is ddio-run's to show
failed() {
  echo "soak: round $1 failed"
  [ "$restarts" -gt 0 ] && [ -s "$SOAK_PIDFILE.log" ] && { echo "soak: the restarted servers' logs:"; cat "$SOAK_PIDFILE.log"; }
  exit 1
}
round() {   # round OPS SEED
  local j pids=() rc=0
  for ((j = 0; j < jobs; j++)); do
    mpiexec -n "$ranks" "$prog" "$j" "$jobs" "$1" "$2" ddio:/soak & pids+=($!)
  done
  for j in "${pids[@]}"; do wait "$j" || rc=1; done
  return $rc
}
restarts=${SOAK_RESTARTS:-0} restarter=""
echo "soak: start: heap in use KiB [$(heap) ] RSS KiB [$(rss)]"
if [ "$restarts" -gt 0 ]; then
  { for ((k = 0; k < restarts; k++)); do
      sig=KILL; [ $((k % 2)) = 1 ] && sig=TERM
      "$here/restart-server.sh" 1 "$sig" 0.3 1 "${SOAK_PIDFILE:?}" || exit 1
    done; } & restarter=$!
  # the restarted server is no child of ddio-run: stopped here, also on
  # failure, after the restarts (a few seconds; killing the loop instead
  # could leave a restart-server.sh that starts one more server afterwards)
  trap 'wait "$restarter" 2>/dev/null
        [ -s "$SOAK_PIDFILE" ] && kill "$(cat "$SOAK_PIDFILE")" 2>/dev/null' EXIT
fi
t0=$SECONDS
round "$ops1" 1 || failed 1
warm=$(heap)
echo "soak: warm (after round 1): heap in use KiB [$warm ] RSS KiB [$(rss)]"
for ((k = 2; k <= rounds; k++)); do
  round "$ops2" "$k" || failed "$k"
  end=$(heap)
  echo "soak: after round $k: heap in use KiB [$end ] RSS KiB [$(rss)]"
done
if [ -n "$restarter" ]; then
  wait "$restarter" || { echo "soak: a restart failed"; exit 1; }
  echo "soak: server 1 restarted $restarts times during the rounds; every byte verified"
  exit 0      # the heap: a restarted server's starts over
fi
ops=$((jobs * (ops1 + ops2 * (rounds - 1))))
dt=$((SECONDS - t0))
echo "soak: $jobs jobs x $ranks ranks: $ops operations (a write and a verified read each) in $dt s, $(awk -v o=$ops -v t=$dt 'BEGIN{printf "%.1f", o / (t ? t : 1)}') ops/s, 0 errors"
set -- $warm
for e in $end; do
  [ $((e - $1)) -le 1024 ] || { echo "soak: a server's heap in use grew by $((e - $1)) KiB after warm-up"; exit 1; }
  shift
done
