#!/usr/bin/env bash
# Clients that die under the servers, many times over, against servers
# built with AddressSanitizer and UBSan (build-san/, which
# scripts/check-sanitizers.sh makes; -S PATH for another server):
#  - putkill: ROUNDS sessions of JOBS read jobs each, in which one rank
#    SIGKILLs itself on its K-th PUT (DDIO_CLIENT_FAULT, the servers' UCX
#    replies to it in flight; test/mpi/rank-killed.sh putkill), then a whole
#    read, every byte checked;
#  - random: ROUNDS jobs streaming collective writes and reads on fresh
#    servers, one rank SIGKILLed at a random 0.3-1.5 s (rank-killed.sh loop).
# A server that dies of a signal (a sanitizer report aborts it) fails its
# session (ddio-run exits 70 and prints its log).
# usage: bench/kill-stress.sh [-o DIR] [-n JOBS] [-r ROUNDS] [-S SERVER]
# Writes DIR/kill-stress.csv (kind,round,exit,seconds) and DIR/kill-stress.md.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/bench/results/$(date +%F)-kill-stress jobs=20 rounds=5
server=$top/build-san/src/ioserver/ddio-server
while getopts "o:n:r:S:" o; do
  case $o in o) out=$OPTARG ;; n) jobs=$OPTARG ;; r) rounds=$OPTARG ;; S) server=$OPTARG ;;
    *) sed -n 2,16p "$0"; exit 2 ;; esac
done
[ -x "$server" ] || { echo "kill-stress: $server missing (scripts/check-sanitizers.sh builds it)" >&2; exit 1; }
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export UCX_ERROR_SIGNALS= UCX_MEM_EVENTS=no PATH="$top/mpich/bin:$PATH"
mkdir -p "$out/logs"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-kills.XXXXXX"); trap 'rm -rf "$tmp"' EXIT
csv=$out/kill-stress.csv
echo "kind,round,exit,seconds" > "$csv"
for ((r = 1; r <= rounds; r++)); do
  rm -rf "$tmp/srv"; mkdir -p "$tmp/srv"; t0=$SECONDS
  "$top/tools/ddio-run" -s 2 --transport ucx --server "$server" --root "$tmp/srv" -- \
    "$top/test/mpi/rank-killed.sh" putkill "$top/examples/bin/ddio-patterns" "$top/tools/ddio" \
    "$jobs" "$tmp/stats" > "$out/logs/putkill-$r.log" 2>&1
  echo "putkill,$r,$?,$((SECONDS - t0))" | tee -a "$csv"
done
for ((r = 1; r <= rounds; r++)); do
  t0=$SECONDS
  DDIO_KILL_SERVER=$server "$top/test/mpi/rank-killed.sh" loop "$jobs" > "$out/logs/random-$r.log" 2>&1
  echo "random,$r,$?,$((SECONDS - t0))" | tee -a "$csv"
done
{
  echo "Servers: $server (AddressSanitizer + UBSan when build-san's); UCX."
  echo
  echo "| kind | sessions | clients killed | sessions failed |"
  echo "|---|---|---|---|"
  awk -F, -v j="$jobs" 'NR>1{n[$1]++; if($3!=0) f[$1]++}
    END{for(k in n) printf "| %s | %d | %d | %d |\n", k, n[k], n[k]*j, f[k]+0}' "$csv" | sort
} | tee "$out/kill-stress.md"
