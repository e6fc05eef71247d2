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
# usage: soak.sh T_SOAK JOBS RANKS OPS1 OPS2 [ROUNDS]   (ROUNDS - 1 rounds of OPS2)
set -u
here=$(cd "$(dirname "$0")" && pwd)
ddio=${DDIO_TOOL:-$here/../../tools/ddio}
prog=$1 jobs=$2 ranks=$3 ops1=$4 ops2=$5 rounds=${6:-2}
srv=$(pgrep -P "$PPID" -x ddio-server | tr '\n' ' ')
[ -n "$srv" ] || { echo "soak: no servers found under ddio-run"; exit 1; }
rss() { local p s=""; for p in $srv; do s="$s $(awk '/^VmRSS/{print $2}' /proc/$p/status)"; done; echo $s; }
heap() { "$ddio" stats heap_in_use | awk '{printf " %d", $3 / 1024}'; }
round() {   # round OPS SEED
  local j pids=() rc=0
  for ((j = 0; j < jobs; j++)); do
    mpiexec -n "$ranks" "$prog" "$j" "$jobs" "$1" "$2" ddio:/soak & pids+=($!)
  done
  for j in "${pids[@]}"; do wait "$j" || rc=1; done
  return $rc
}
echo "soak: start: heap in use KiB [$(heap) ] RSS KiB [$(rss)]"
t0=$SECONDS
round "$ops1" 1 || { echo "soak: round 1 failed"; exit 1; }
warm=$(heap)
echo "soak: warm (after round 1): heap in use KiB [$warm ] RSS KiB [$(rss)]"
for ((k = 2; k <= rounds; k++)); do
  round "$ops2" "$k" || { echo "soak: round $k failed"; exit 1; }
  end=$(heap)
  echo "soak: after round $k: heap in use KiB [$end ] RSS KiB [$(rss)]"
done
ops=$((jobs * (ops1 + ops2 * (rounds - 1))))
dt=$((SECONDS - t0))
echo "soak: $jobs jobs x $ranks ranks: $ops operations (a write and a verified read each) in $dt s, $(awk -v o=$ops -v t=$dt 'BEGIN{printf "%.1f", o / (t ? t : 1)}') ops/s, 0 errors"
set -- $warm
for e in $end; do
  [ $((e - $1)) -le 1024 ] || { echo "soak: a server's heap in use grew by $((e - $1)) KiB after warm-up"; exit 1; }
  shift
done
