#!/usr/bin/env bash
# identity-cost.sh: what proving users and encrypting cost. The same
# servers run in each mode, launch by launch alternated so all share the
# machine's conditions:
#   secret      the shared secret (the single-user mode), the baseline
#   munge       --auth munge (MUNGE identities, permission checks on every
#               request)
#   tls         the shared secret over TLS 1.3 (ddio-run --tls)
#   munge+tls   both
# Each launch: fresh servers (ddio-run, 2 servers, a fresh root), then
#   - bench/md-rate: one client's create, stat, open and remove rates
#     (N files, connections made before the clock starts);
#   - bench/first-open.c at P ranks: the slowest rank's first MPI_File_open
#     (the handshakes) and second;
#   - ddio-patterns, Kotz's wb, rb, wc, rc at P ranks, and IOR's shared-file
#     cases (bench/ior-style.c: 1 MiB and 64 KiB transfers, independent, and
#     1 MiB collective) - the transfers.
# -T tcp -L: the transfers over TCP with the same-host shortcut off, so that
# every byte crosses a (TLS) socket: TLS's cost on TCP transfers.
# Writes OUT/identity.csv (mode,launch,metric,value), OUT/SUMMARY.md
# (median and min-max per mode, and each mode's ratio to the first one's
# medians) and OUT/machine.txt. Usage:
#   bench/identity-cost.sh [-k MODES] [-n LAUNCHES] [-P RANKS] [-f FILES]
#                          [-m MIB] [-T TRANSPORT] [-L] [-M] [-o OUT]
# (-k: comma-separated, default secret,munge; -M: only md-rate, no MPI)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd); top=$(cd "$here/.." && pwd)
N=5 P=4 FILES=2000 MIB=256 OUT="" MDONLY=0 MODES=secret,munge XPORT="" NOLOCAL=0
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N=$2; shift 2 ;; -P) P=$2; shift 2 ;; -f) FILES=$2; shift 2 ;;
    -m) MIB=$2; shift 2 ;; -o) OUT=$2; shift 2 ;; -M) MDONLY=1; shift ;;
    -k) MODES=$2; shift 2 ;; -T) XPORT=$2; shift 2 ;; -L) NOLOCAL=1; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "identity-cost: unknown option $1" >&2; exit 2 ;;
  esac
done
OUT=${OUT:-$top/bench/results/$(date +%F)-identity-cost}
mkdir -p "$OUT"
export PATH="$top/mpich/bin:$PATH" LD_LIBRARY_PATH="$top/mpich/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
MD=$top/bench/md-rate FO=$OUT/first-open PAT=$top/examples/bin/ddio-patterns
[ -x "$MD" ] || { echo "identity-cost: build first (make): $MD" >&2; exit 1; }
IORS=$OUT/ior-style
[ $MDONLY = 1 ] || { mpicc -O2 -o "$FO" "$here/first-open.c" \
  && mpicc -std=c11 -O2 -o "$IORS" "$here/ior-style.c"; } || exit 1
IFS=, read -r -a modes <<<"$MODES"
for m in "${modes[@]}"; do
  case $m in secret|munge|tls|munge+tls) ;; *) echo "identity-cost: unknown mode $m" >&2; exit 2 ;; esac
done
xenv=()
[ -n "$XPORT" ] && xenv+=(DDIO_TRANSPORT="$XPORT")
[ $NOLOCAL = 1 ] && xenv+=(DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0)
{ uname -a; nproc; free -g | head -2; git -C "$top" rev-parse HEAD; date -Is; } >"$OUT/machine.txt"
CSV=$OUT/identity.csv
echo "mode,launch,metric,value" >"$CSV"

# one_launch MODE I: the measurements on fresh servers
one_launch() {
  local mode=$1 i=$2 root opts=() log=$OUT/launch-${1/+/-}-$2.log
  root=$(mktemp -d "${TMPDIR:-/tmp}/idcost.XXXXXX")
  case $mode in *munge*) opts+=(--auth munge) ;; esac
  case $mode in *tls*) opts+=(--tls) ;; esac
  env "${xenv[@]}" "$top/tools/ddio-run" "${opts[@]}" -s 2 -r "$root" -- bash -c '
    set -e
    "$1" "$DDIO_SERVERS" /md "$2"
    [ "$7" = 1 ] && exit 0
    mpiexec -n "$3" "$4" -c ddio:/fo >/dev/null
    mpiexec -n "$3" "$4" ddio:/fo
    mpiexec -n "$3" "$5" -C -r 8192 -m "$6" -p wb,rb,wc,rc ddio:/k
    b=$(( $6 / $3 ))m
    mpiexec -n "$3" "$8" -b "$b" -t 1m -w -r -n sf-1m ddio:/ior-
    mpiexec -n "$3" "$8" -b "$b" -t 64k -w -r -n sf-64k ddio:/ior-
    mpiexec -n "$3" "$8" -b "$b" -t 1m -c -w -r -n coll-1m ddio:/ior-' \
    _ "$MD" "$FILES" "$P" "$FO" "$PAT" "$MIB" "$MDONLY" "$IORS" >"$log" 2>&1 \
    || { echo "launch $mode $i failed: $log" >&2; rm -rf "$root"; return 1; }
  rm -rf "$root"
  awk -F, -v m="$mode" -v i="$i" '
    $1 == "MDRATE" { print m "," i "," $2 "_ops_per_s," $5 }
    $1 == "FIRSTOPEN_MAX" { print m "," i ",first_open_ms," $2; print m "," i ",second_open_ms," $3 }
    $1 == "RESULT" && $15 == "ok" { print m "," i ",ior-" $2 "-" $3 "_MiB_per_s," $14 }
    $7 == "ok" { print m "," i "," $1 "_MiB_per_s," $6 }' "$log" >>"$CSV"
}

# launch i runs the modes in turn, starting one further along each time
for ((i = 1; i <= N; i++)); do
  k=${#modes[@]}
  for ((j = 0; j < k; j++)); do
    mode=${modes[$(( (i - 1 + j) % k ))]}
    echo "launch $i: $mode" >&2
    one_launch "$mode" "$i" || exit 1
  done
done

python3 - "$CSV" "$MODES" >"$OUT/SUMMARY.md" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
modes = sys.argv[2].split(",")
metrics = sorted({r["metric"] for r in rows})
def vals(mode, m): return [float(r["value"]) for r in rows if r["mode"] == mode and r["metric"] == m]
fmt = lambda v: f"{v:.3g}" if v < 100 else f"{v:.0f}"
base = modes[0]
print("| metric | " + " | ".join(f"{m} median (min-max)" for m in modes) + " | "
      + " | ".join(f"{m} / {base}" for m in modes[1:]) + " |")
print("|---" * (2 * len(modes)) + "|")
for m in metrics:
    v = [vals(x, m) for x in modes]
    if not all(v): continue
    med = [statistics.median(a) for a in v]
    cells = [f"{fmt(md)} ({fmt(min(a))}-{fmt(max(a))})" for md, a in zip(med, v)]
    print(f"| {m} | " + " | ".join(cells) + " | " + " | ".join(f"{x / med[0]:.2f}" for x in med[1:]) + " |")
EOF
cat "$OUT/SUMMARY.md"
