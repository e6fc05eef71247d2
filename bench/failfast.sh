#!/usr/bin/env bash
# Fail-fast series: how long after a server is SIGKILLed in the
# middle of a collective call (and not restarted) every rank has the error,
# for calls of several sizes. Disks throttled so the kill lands mid-call.
#
# usage: bench/failfast.sh [-o DIR] [-s "256 1024 4096"] [-t SECONDS] [-x tcp|ucx]...
#   -s  call sizes in MiB (the whole file, one collective call per pattern)
#   -t  DDIO_TIMEOUT for the job (default 10)
#   -x  transports (default: tcp ucx)
# Writes DIR/failfast.csv (size_mib,transport,pattern,exit,ms_after_kill)
# and prints a table. Needs `./ddio.sh build` first.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/bench/results/$(date +%F)-failfast
sizes="256 1024 4096"; tmo=10; xports=()
while getopts "o:s:t:x:" o; do
  case $o in o) out=$OPTARG ;; s) sizes=$OPTARG ;; t) tmo=$OPTARG ;; x) xports+=("$OPTARG") ;;
    *) sed -n 2,12p "$0"; exit 2 ;; esac
done
[ ${#xports[@]} -gt 0 ] || xports=(tcp ucx)
run=$top/tools/ddio-run pat=$top/examples/bin/ddio-patterns
[ -x "$pat" ] || { echo "failfast: $pat missing: run ./ddio.sh build" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-failfast.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
csv=$out/failfast.csv
echo "size_mib,transport,pattern,exit,ms_after_kill" > "$csv"
for mib in $sizes; do
  for x in "${xports[@]}"; do
    root=$tmp/srv; rm -rf "$root"; mkdir -p "$root"
    # the file the reads need, at full speed
    "$run" -s 2 --transport "$x" --root "$root" -- \
      mpiexec -n 4 "$pat" -q -r 65536 -m "$mib" -p wb ddio:/ff > /dev/null
    for p in wb rb; do
      line=$(DDIO_TIMEOUT=$tmo "$run" -s 2 --transport "$x" --throttle-mbps 20 --root "$root" \
        -- bash -c 'mpiexec -n 4 "$0" -q -r 65536 -m "$1" -p "$2" ddio:/ff >/dev/null 2>&1 & m=$!
        sleep 2.5; srv=$(pgrep -P "$PPID" -x ddio-server | tail -1); kill -KILL $srv
        t0=$(date +%s%N); wait $m; rc=$?; echo "$rc $(( ($(date +%s%N) - t0) / 1000000 ))"' \
        "$pat" "$mib" "$p" 2>/dev/null | tail -1) || true
      set -- $line
      echo "$mib,$x,$p,${1:-?},${2:-?}" | tee -a "$csv"
    done
  done
done
echo
echo "| call size | transport | pattern | exit | error after the kill |"
echo "|---|---|---|---|---|"
tail -n +2 "$csv" | awk -F, '{printf "| %d MiB | %s | %s | %s | %.2f s |\n", $1, $2, $3, $4, $5/1000}' \
  | tee "$out/failfast.md"
