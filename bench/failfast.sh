#!/usr/bin/env bash
# Fail-fast series: how long after a server is SIGKILLed in the middle of
# a call (and not restarted) EVERY rank has the error (test/mpi/t_failfast.c
# measures each rank), for calls of several sizes, collective and
# independent, writes and reads, with recovery at its default (the
# timeout) and off. Disks throttled so the kill lands mid-call.
#
# usage: bench/failfast.sh [-o DIR] [-s "256 1024 4096"] [-t SECONDS] [-x tcp|ucx]...
#                          [-m "coll-write coll-read ..."] [-R "default 0"] [-k RECORD]
#   -s  call sizes in MiB (the whole file, one call per rank)
#   -t  DDIO_TIMEOUT for the job (default 5)
#   -x  transports (default: tcp ucx)
#   -m  modes (default: coll-write coll-read indep-write indep-read)
#   -R  recovery: default (DDIO_RECOVER_TIMEOUT unset: the timeout) and/or 0
#   -k  record size (default 65536; records dealt round robin to the ranks)
# The kill comes 2.5 s after every rank is about to call (its buffer
# filled). Writes DIR/failfast.csv (size_mib,transport,mode,recover,exit,max_s,ranks_s)
# and DIR/failfast.md. Needs `./ddio.sh build` and make test/mpi/bin/t_failfast.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/bench/results/$(date +%F)-failfast
sizes="256 1024 4096"; tmo=5; xports=(); modes="coll-write coll-read indep-write indep-read"
recs="default 0"; rec=65536
while getopts "o:s:t:x:m:R:k:" o; do
  case $o in o) out=$OPTARG ;; s) sizes=$OPTARG ;; t) tmo=$OPTARG ;; x) xports+=("$OPTARG") ;;
    m) modes=$OPTARG ;; R) recs=$OPTARG ;; k) rec=$OPTARG ;; *) sed -n 2,17p "$0"; exit 2 ;; esac
done
[ ${#xports[@]} -gt 0 ] || xports=(tcp ucx)
run=$top/tools/ddio-run prog=$top/test/mpi/bin/t_failfast
[ -x "$prog" ] || { echo "failfast: $prog missing: make test/mpi/bin/t_failfast" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-failfast.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
csv=$out/failfast.csv
echo "size_mib,transport,mode,recover,exit,max_s,ranks_s" > "$csv"
for mib in $sizes; do
  for x in "${xports[@]}"; do
    root=$tmp/srv; rm -rf "$root"; mkdir -p "$root"
    # the file the reads need, at full speed
    "$run" -s 2 --transport "$x" --root "$root" -- \
      mpiexec -n 4 "$prog" coll-write "$rec" "$mib" 100 - ddio:/ff > /dev/null
    for rv in $recs; do
      for m in $modes; do
        rm -f "$tmp/kill"
        line=$(env DDIO_TIMEOUT="$tmo" "$run" -s 2 --transport "$x" --throttle-mbps 20 --root "$root" \
          -- bash -c '[ "$5" = 0 ] && export DDIO_RECOVER_TIMEOUT=0; rm -f "$4.started"
          DDIO_FF_STARTED="$4.started" mpiexec -n 4 "$0" "$1" "$2" "$3" 1000 "$4" ddio:/ff & j=$!
          for ((w = 0; w < 6000; w++)); do [ -e "$4.started" ] && break; sleep 0.01; done
          sleep 2.5; srv=$(pgrep -P "$PPID" -x ddio-server | tail -1); kill -KILL $srv
          date +%s%N > "$4"; wait $j; echo "exit $?"' \
          "$prog" "$m" "$rec" "$mib" "$tmp/kill" "$rv" 2>/dev/null | grep -E "after the kill|^exit") || true
        ranks=$(grep -o 'rank [0-9]* [0-9.-]* s' <<< "$line" | awk '{print $3}' | paste -sd' ' || true)
        max=$(tr ' ' '\n' <<< "$ranks" | sort -g | tail -1 || true)
        rc=$(sed -n 's/^exit //p' <<< "$line" || true)
        echo "$mib,$x,$m,$rv,${rc:-?},${max:-?},$ranks" | tee -a "$csv"
      done
    done
  done
done
{
  echo "Every rank's error after the kill (DDIO_TIMEOUT=$tmo; recovery 'default' = the timeout; $rec-byte records, P = 4, 2 servers)."
  echo
  echo "| call size | transport | mode | recovery | slowest rank | every rank |"
  echo "|---|---|---|---|---|---|"
  tail -n +2 "$csv" | awk -F, '{printf "| %d MiB | %s | %s | %s | %s s | %s |\n", $1, $2, $3, $4, $6, $7}'
} | tee "$out/failfast.md"
