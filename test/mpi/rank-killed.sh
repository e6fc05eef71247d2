#!/usr/bin/env bash
# A dead job never takes a server down. A rank of a job streaming collective
# writes (2 MiB per call, no pause), then reading them back, is SIGKILLed
# DELAY seconds in, so Hydra tears down the other three mid-call (with UCX,
# servers pulling from or putting into their memory). Within 10 s both
# servers must have let go of the dead job (no XFER in flight, no
# connection but STATS' own) and serve the next job, which writes FILE.
#
#   rank-killed.sh job T_RESTART DDIO ROUNDS DELAY SCRATCH FILE
#       inside ddio-run (DDIO_SERVERS set): the check itself, as
#       run-mpi-tests.sh's step rank-killed runs it
#   rank-killed.sh loop N [ROUNDS]
#       N runs, each against fresh servers (tools/ddio-run, this host's
#       default transport or DDIO_TRANSPORT), the kill at a random 0.3-1.5 s:
#       the crash this once had (a freed UCX endpoint) was 1 in ~35
set -u
mode=${1:?usage: rank-killed.sh job|loop ...}; shift
if [ "$mode" = job ]; then
  prog=$1 ddio=$2 rounds=$3 delay=$4 scratch=$5 file=$6
  mpiexec -n 4 "$prog" coll "$rounds" 0 ddio:/killed > /dev/null 2>&1 & j=$!
  sleep "$delay"
  pkill -KILL -n -f "^$prog coll $rounds 0" || { echo "no rank to kill (the job ended first)"; exit 1; }
  wait $j && { echo "the job did not fail"; exit 1; }
  idle='$2 == "inflight" && $3 == 0 { i++ } $2 == "connections" && $3 == 1 { c++ } END { exit !(i == 2 && c == 2) }'
  for ((k = 0; k < 100; k++)); do
    "$ddio" stats inflight connections > "$scratch" && awk "$idle" "$scratch" && break; sleep 0.1
  done
  cat "$scratch"; awk "$idle" "$scratch" || { echo "the servers still hold the dead job"; exit 1; }
  exec mpiexec -n 4 "$prog" coll 5 0 "$file"
fi
[ "$mode" = loop ] || { echo "rank-killed.sh: job or loop" >&2; exit 2; }
n=${1:?usage: rank-killed.sh loop N [ROUNDS]} rounds=${2:-400}
top=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=$top/mpich/bin:$PATH
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0 nokill=0
for ((i = 1; i <= n; i++)); do
  delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.3 + r % 121 / 100 }')
  rm -rf "$tmp/srv"; mkdir -p "$tmp/srv"
  timeout -k 10 120 "$top/tools/ddio-run" -s 2 --root "$tmp/srv" -- "$0" job \
    "$top/test/mpi/bin/t_restart" "$top/tools/ddio" "$rounds" "$delay" "$tmp/stats" \
    ddio:/rank-killed > "$tmp/out" 2>&1
  rc=$?
  if grep -q "no rank to kill" "$tmp/out"; then nokill=$((nokill + 1)); rc=0; fi
  if [ $rc != 0 ] || grep -qi "segmentation\|signal 11\|core dumped" "$tmp/out"; then
    fail=$((fail + 1)); echo "run $i (kill at $delay s): FAILED"; tail -5 "$tmp/out"
  fi
done
echo "rank-killed: $n runs ($rounds rounds, kill at 0.3-1.5 s): $fail failed, $nokill ended before the kill"
[ $fail = 0 ]
