#!/usr/bin/env bash
# latency.sh: the per-call latency of ddio through its servers against the
# bare transport it runs on, measured in the same run (issue: "per-call
# latency <= 1.3x the bare transport's round trip of the same size").
# Per round, in an order turned every round: the bare round trips
# (bench/rtt.c: an 8-byte request answered by SIZE bytes, and SIZE bytes
# answered by 8, between two processes, over loopback TCP and over UCX
# active messages), then one rank's independent MPI_File_read_at /
# write_at of each size (bench/ior-style.c -L: random size-aligned
# offsets of a written and synced region, so the reads are hot) on ddio
# with the same-host shortcuts off (DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0:
# every byte through a server, as on a cluster), once with
# DDIO_TRANSPORT=tcp and once with ucx, 2 servers, and on ROMIO's ufs:.
# A single-user deployment runs UCX (cross-memory attach between
# same-uid processes); servers under their own uid (the multi-user one)
# settle to TCP, the tcp rows. Writes OUT/raw.csv, OUT/SUMMARY.md,
# OUT/machine.txt. -b LABEL=SERVER adds the same ddio runs with another
# ddio-server binary (a before/after comparison, in the same rounds).
# Usage:
#   bench/latency.sh [-n ROUNDS] [-N CALLS] [-l SIZES] [-b LABEL=SERVER] [-o OUT]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd); top=$(cd "$here/.." && pwd)
R=3 N=2000 SIZES=8,4k,64k,1m OUT="" OTHER=""
while [ $# -gt 0 ]; do
  case "$1" in
    -n) R=$2; shift 2 ;; -N) N=$2; shift 2 ;; -l) SIZES=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;; -b) OTHER=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "latency.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$top/bench/results/$(date -u +%F)-latency}
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ddio-lat.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PATH="$top/mpich/bin:$PATH" LD_LIBRARY_PATH="$top/mpich/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BIN=$work/bin; mkdir -p "$BIN"
cc -std=c11 -O2 -Wall -Wextra -o "$BIN/rtt" "$here/rtt.c" -lucp -lucs \
  && mpicc -std=c11 -O2 -o "$BIN/ior-style" "$here/ior-style.c" || exit 1
{ uname -a; nproc; free -g | head -2; git -C "$top" rev-parse HEAD; git -C "$top" status --short | head;
  date -Is; uptime; [ -n "$OTHER" ] && echo "other server: $OTHER"; } >"$OUT/machine.txt"
CSV=$OUT/raw.csv
echo "round,method,op,size,p50_us,p99_us" >"$CSV"

bare() {    # bare TRANSPORT ROUND
  "$BIN/rtt" "$1" "$N" "$SIZES" >"$work/out" 2>&1 || { cat "$work/out" >&2; exit 1; }
  awk -F, -v r="$2" -v m="bare-$1" '$1 == "RTT" { print r "," m "," $3 "," $4 "," $6 "," $7 }' \
    "$work/out" >>"$CSV"
}
calls() {   # calls METHOD ROUND: ior-style -L on ufs: or on ddio over a transport
  # (METHOD ddio-T@LABEL: with the -b server)
  local m=$1 cmd=(mpiexec -n 1 "$BIN/ior-style" -L -l "$SIZES" -N "$N" -b 64m -n lat) srv=()
  local t=${m#ddio-}; t=${t%@*}
  [ "${m#*@}" != "$m" ] && srv=(--server "${OTHER#*=}")
  rm -rf "$work/root" "$work/ufs"; mkdir -p "$work/ufs"
  case "$m" in
    ufs) "${cmd[@]}" "ufs:$work/ufs/lat" >"$work/out" 2>&1 ;;
    ddio-*) env DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 "$top/tools/ddio-run" -s 2 \
              --transport "$t" "${srv[@]}" --root "$work/root" -- "${cmd[@]}" ddio:/lat >"$work/out" 2>&1 ;;
  esac || { cat "$work/out" >&2; exit 1; }
  awk -F, -v r="$2" -v m="$m" '$1 == "LATENCY" {
      if ($10 != "ok") { print "latency.sh: " $0 > "/dev/stderr"; exit 1 }
      print r "," m "," $2 "," $3 "," $6 "," $7 }' "$work/out" >>"$CSV" || exit 1
}

methods=(bare-tcp bare-ucx ufs ddio-tcp ddio-ucx)
[ -n "$OTHER" ] && methods+=("ddio-tcp@${OTHER%%=*}" "ddio-ucx@${OTHER%%=*}")
for ((r = 1; r <= R; r++)); do
  echo "round $r" >&2
  k=$(( (r - 1) % ${#methods[@]} ))
  for ((i = 0; i < ${#methods[@]}; i++)); do
    m=${methods[$(( (i + k) % ${#methods[@]} ))]}
    case "$m" in bare-*) bare "${m#bare-}" "$r" ;; *) calls "$m" "$r" ;; esac
  done
done

python3 - "$CSV" "$OUT/machine.txt" >"$OUT/SUMMARY.md" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
rounds = sorted({r["round"] for r in rows})
def p50(m, op, size):
    v = [float(r["p50_us"]) for r in rows if (r["method"], r["op"], r["size"]) == (m, op, size)]
    return st.median(v) if v else None
def ratio(a, b, op, size):
    # per round, then the median: the two ran next to each other
    q = []
    for rd in rounds:
        x = [float(r["p50_us"]) for r in rows if (r["round"], r["method"], r["op"], r["size"]) == (rd, a, op, size)]
        y = [float(r["p50_us"]) for r in rows if (r["round"], r["method"], r["op"], r["size"]) == (rd, b, op, size)]
        if x and y and y[0] > 0:
            q.append(x[0] / y[0])
    return "%.2f (%.2f-%.2f)" % (st.median(q), min(q), max(q)) if q else "-"
print("# Per-call latency through the servers against the bare transport\n")
print("p50 of one rank's calls in microseconds, the median over %d rounds; "
      "ratios per round, median (min-max). ddio: 2 servers, the same-host "
      "shortcuts off (every byte through a server). Target: ddio <= 1.3x the "
      "bare round trip of the same size.\n" % len(rounds))
print("```\n" + open(sys.argv[2]).read().rstrip() + "\n```\n")
print("| op | size | ufs: | bare TCP | ddio TCP | ddio / bare (TCP) | bare UCX | ddio UCX | ddio / bare (UCX) |")
print("|---|---|---|---|---|---|---|---|---|")
keys = []
for r in rows:
    k = (r["op"], r["size"])
    if k not in keys:
        keys.append(k)
f = lambda v: "%.1f" % v if v is not None else "-"
keys.sort(key=lambda k: (k[0], int(k[1])))
for op, size in keys:
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        op, size, f(p50("ufs", op, size)), f(p50("bare-tcp", op, size)), f(p50("ddio-tcp", op, size)),
        ratio("ddio-tcp", "bare-tcp", op, size), f(p50("bare-ucx", op, size)),
        f(p50("ddio-ucx", op, size)), ratio("ddio-ucx", "bare-ucx", op, size)))
others = sorted({r["method"].split("@")[1] for r in rows if "@" in r["method"]})
for o in others:
    print("\nAgainst the servers of `%s` (its p50; this build's time over its, per round):\n" % o)
    print("| op | size | %s TCP | this / %s (TCP) | %s UCX | this / %s (UCX) |" % (o, o, o, o))
    print("|---|---|---|---|---|---|")
    for op, size in keys:
        print("| %s | %s | %s | %s | %s | %s |" % (
            op, size, f(p50("ddio-tcp@" + o, op, size)), ratio("ddio-tcp", "ddio-tcp@" + o, op, size),
            f(p50("ddio-ucx@" + o, op, size)), ratio("ddio-ucx", "ddio-ucx@" + o, op, size)))
PY
cat "$OUT/SUMMARY.md"
