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
#       default transport or DDIO_TRANSPORT; DDIO_KILL_SERVER: the server
#       binary), the kill at a random 0.3-1.5 s:
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
if [ "$mode" = putkill ]; then
  # rank-killed.sh putkill PATTERNS DDIO N SCRATCH: inside ddio-run (UCX):
  # a file written, then N read jobs in which rank 3 SIGKILLs itself on
  # its K-th PUT (DDIO_CLIENT_FAULT=put:K, K = 1..8 in turn: it gets 16 in a
  # whole read), the servers' sends to it in flight, through the servers
  # (no same-host reads). After
  # each, both servers let go of the dead job; after all, a whole job reads
  # the file and checks every byte. ddio-run fails the step if a server
  # died of a signal.
  prog=$1 ddio=$2 n=$3 scratch=$4
  args=(-q -r 65536 -m 64)
  mpiexec -n 4 "$prog" "${args[@]}" -p wb ddio:/putkill > /dev/null || { echo "the write failed"; exit 1; }
  idle='$2 == "inflight" && $3 == 0 { i++ } $2 == "connections" && $3 == 1 { c++ } END { exit !(i == 2 && c == 2) }'
  for ((k = 1; k <= n; k++)); do
    DDIO_LOCAL_READ=0 mpiexec -n 3 "$prog" "${args[@]}" -p rb ddio:/putkill : \
      -n 1 -env DDIO_CLIENT_FAULT "put:$(( (k - 1) % 8 + 1 ))" "$prog" "${args[@]}" -p rb ddio:/putkill > /dev/null 2>&1 \
      && { echo "job $k: the rank did not die"; exit 1; }
    for ((t = 0; t < 100; t++)); do
      "$ddio" stats inflight connections > "$scratch" && awk "$idle" "$scratch" && break; sleep 0.1
    done
    awk "$idle" "$scratch" || { cat "$scratch"; echo "job $k: the servers still hold the dead job"; exit 1; }
  done
  echo "$n jobs killed with a PUT in flight"
  DDIO_LOCAL_READ=0 exec mpiexec -n 4 "$prog" "${args[@]}" -p rb ddio:/putkill
fi
[ "$mode" = loop ] || { echo "rank-killed.sh: job, putkill or loop" >&2; exit 2; }
n=${1:?usage: rank-killed.sh loop N [ROUNDS]} rounds=${2:-400}
top=$(cd "$(dirname "$0")/../.." && pwd)
export PATH=$top/mpich/bin:$PATH
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0 nokill=0
for ((i = 1; i <= n; i++)); do
  delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.3 + r % 121 / 100 }')
  rm -rf "$tmp/srv"; mkdir -p "$tmp/srv"
  timeout -k 10 120 "$top/tools/ddio-run" -s 2 ${DDIO_KILL_SERVER:+--server "$DDIO_KILL_SERVER"} \
    --root "$tmp/srv" -- "$0" job \
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
