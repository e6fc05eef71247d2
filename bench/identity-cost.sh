#!/usr/bin/env bash
# identity-cost.sh: what proving users costs. The same servers run with the
# shared secret (today's single-user mode) and with --auth munge (MUNGE
# identities, permission checks on every request), launch by launch
# alternated so both share the machine's conditions. Each launch: fresh
# servers (ddio-run, 2 servers, a fresh root), then
#   - bench/md-rate: one client's create, stat, open and remove rates
#     (N files, connections made before the clock starts);
#   - bench/first-open.c at P ranks: the slowest rank's first MPI_File_open
#     (the handshakes: MUNGE encode and decode against the HMAC) and second;
#   - ddio-patterns, Kotz's wb, rb, wc, rc at P ranks (the transfers).
# Writes OUT/identity.csv (mode,launch,metric,value), OUT/SUMMARY.md
# (median and min-max per mode, and the munge/secret ratio of the medians)
# and OUT/machine.txt. Usage:
#   bench/identity-cost.sh [-n LAUNCHES] [-P RANKS] [-f FILES] [-m MIB] [-M] [-o OUT]
# (-M: only md-rate, no MPI)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd); top=$(cd "$here/.." && pwd)
N=5 P=4 FILES=2000 MIB=256 OUT="" MDONLY=0
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N=$2; shift 2 ;; -P) P=$2; shift 2 ;; -f) FILES=$2; shift 2 ;;
    -m) MIB=$2; shift 2 ;; -o) OUT=$2; shift 2 ;; -M) MDONLY=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "identity-cost: unknown option $1" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$top/bench/results/$(date +%F)-identity-cost}
mkdir -p "$OUT"
export PATH="$top/mpich/bin:$PATH" LD_LIBRARY_PATH="$top/mpich/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
MD=$top/bench/md-rate FO=$OUT/first-open PAT=$top/examples/bin/ddio-patterns
[ -x "$MD" ] || { echo "identity-cost: build first (make): $MD" >&2; exit 1; }
[ $MDONLY = 1 ] || mpicc -O2 -o "$FO" "$here/first-open.c" || exit 1
{ uname -a; nproc; free -g | head -2; git -C "$top" rev-parse HEAD; date -Is; } >"$OUT/machine.txt"
CSV=$OUT/identity.csv
echo "mode,launch,metric,value" >"$CSV"

# one_launch MODE I: the three measurements on fresh servers
one_launch() {
  local mode=$1 i=$2 root auth=() log=$OUT/launch-$1-$2.log
  root=$(mktemp -d "${TMPDIR:-/tmp}/idcost.XXXXXX")
  [ "$mode" = munge ] && auth=(--auth munge)
  "$top/tools/ddio-run" "${auth[@]}" -s 2 -r "$root" -- bash -c '
    set -e
    "$1" "$DDIO_SERVERS" /md "$2"
    [ "$7" = 1 ] && exit 0
    mpiexec -n "$3" "$4" -c ddio:/fo >/dev/null
    mpiexec -n "$3" "$4" ddio:/fo
    mpiexec -n "$3" "$5" -C -r 8192 -m "$6" -p wb,rb,wc,rc ddio:/k' \
    _ "$MD" "$FILES" "$P" "$FO" "$PAT" "$MIB" "$MDONLY" >"$log" 2>&1 || { echo "launch $mode $i failed: $log" >&2; rm -rf "$root"; return 1; }
  rm -rf "$root"
  awk -F, -v m="$mode" -v i="$i" '
    $1 == "MDRATE" { print m "," i "," $2 "_ops_per_s," $5 }
    $1 == "FIRSTOPEN_MAX" { print m "," i ",first_open_ms," $2; print m "," i ",second_open_ms," $3 }
    $7 == "ok" { print m "," i "," $1 "_MiB_per_s," $6 }' "$log" >>"$CSV"
}

for ((i = 1; i <= N; i++)); do
  for mode in secret munge; do
    [ $((i % 2)) = 0 ] && mode=$([ "$mode" = secret ] && echo munge || echo secret)
    echo "launch $i: $mode" >&2
    one_launch "$mode" "$i" || exit 1
  done
done

python3 - "$CSV" >"$OUT/SUMMARY.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
metrics = sorted({r["metric"] for r in rows})
def vals(mode, m): return [float(r["value"]) for r in rows if r["mode"] == mode and r["metric"] == m]
print("| metric | secret median (min-max) | munge median (min-max) | munge / secret |")
print("|---|---|---|---|")
for m in metrics:
    a, b = vals("secret", m), vals("munge", m)
    if not a or not b: continue
    ma, mb = statistics.median(a), statistics.median(b)
    fmt = lambda v: f"{v:.3g}" if v < 100 else f"{v:.0f}"
    print(f"| {m} | {fmt(ma)} ({fmt(min(a))}-{fmt(max(a))}) | {fmt(mb)} ({fmt(min(b))}-{fmt(max(b))}) | {mb / ma:.2f} |")
EOF
cat "$OUT/SUMMARY.md"
