#!/usr/bin/env bash
# client-transport.sh: the tools' and the mount's data path
# (common/ddio_client.c) on each transport, in the same run: `ddio cp` in
# and out, and dd through the mount (tools/ddio-fuse) in and out, of one
# file, against local servers started by tools/ddio-run --transport T.
# The local side of every copy is in /dev/shm, so the servers' disks and
# the transport are what is measured. Writes: results.csv and REPORT.md
# (medians) in OUT.
# usage: bench/client-transport.sh [-m MIB] [-n REPS] [-s SERVERS] [-o OUT]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
MIB=1024; REPS=3; NSERV=2; OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    -m) MIB=$2; shift 2 ;;
    -n) REPS=$2; shift 2 ;;
    -s) NSERV=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "client-transport: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -n "$OUT" ] || OUT="$here/results/$(date +%Y-%m-%d)-client-transport"
mkdir -p "$OUT"
RUN="$top/tools/ddio-run"; DDIO="$top/tools/ddio"
for p in "$RUN" "$DDIO" "$top/tools/ddio-fuse"; do
  [ -x "$p" ] || { echo "client-transport: $p missing: run make" >&2; exit 2; }
done
shm=$(mktemp -d /dev/shm/ddio-ct.XXXXXX)
tmp=$(mktemp -d "$OUT/tmp.XXXXXX")
trap 'rm -rf "$shm" "$tmp"' EXIT
head -c $((MIB << 20)) /dev/urandom > "$shm/src"
echo "transport,op,rep,MiB,seconds,MiB_s" > "$OUT/results.csv"
{ echo "command: $0 -m $MIB -n $REPS -s $NSERV"; echo "date: $(date -Is)"
  echo "host: $(hostname), $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
  echo "ucx: $(ucx_info -v 2>/dev/null | head -n 1 || echo none)"; } > "$OUT/params.txt"

# one round: the four copies, each timed, the data compared after each
copies() {   # copies TRANSPORT REP
  rm -rf "$tmp/srv"; mkdir -p "$tmp/srv" "$tmp/mnt"
  timeout -k 10 1200 "$RUN" -s "$NSERV" --root "$tmp/srv" --transport "$1" --mount "$tmp/mnt" -- \
    bash -c '
      set -eu
      t() { local a b; a=$(date +%s.%N); "$@" >/dev/null; b=$(date +%s.%N); awk -v a="$a" -v b="$b" "BEGIN{printf \"%.3f\", b - a}"; }
      s=$(t "$0" cp "$1/src" ddio:/cp); echo "cp-in $s"
      s=$(t "$0" cp ddio:/cp "$1/back"); echo "cp-out $s"
      cmp "$1/src" "$1/back"; rm -f "$1/back"
      s=$(t dd if="$1/src" of="$2/mnt/dd" bs=1M status=none); echo "mount-in $s"
      s=$(t dd if="$2/mnt/dd" of="$1/back" bs=1M status=none); echo "mount-out $s"
      cmp "$1/src" "$1/back"; rm -f "$1/back"
      "$0" stats ucx_put_bytes ucx_get_bytes | awk "{u+=\$3} END{print \"ucx-bytes\", u+0}"
    ' "$DDIO" "$shm" "$tmp" > "$tmp/s.out" 2> "$tmp/s.err" \
    || { echo "client-transport: $1 rep $2 failed:" >&2; cat "$tmp/s.out" "$tmp/s.err" >&2; return 1; }
  while read -r op secs; do
    if [ "$op" = ucx-bytes ]; then echo "  $1 rep $2: $secs bytes by UCX"; continue; fi
    local rate; rate=$(awk -v m="$MIB" -v s="$secs" 'BEGIN{printf "%.1f", m / s}')
    echo "$1,$op,$2,$MIB,$secs,$rate" >> "$OUT/results.csv"
    printf '  %-4s rep %s %-9s %8s MiB/s\n' "$1" "$2" "$op" "$rate"
  done < "$tmp/s.out"
}
rc=0
for ((r = 1; r <= REPS; r++)); do
  for x in tcp ucx; do copies "$x" "$r" || rc=1; done
done
python3 - "$OUT/results.csv" > "$OUT/REPORT.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ops = ["cp-in", "cp-out", "mount-in", "mount-out"]
med = {(r["transport"], o): statistics.median(float(x["MiB_s"]) for x in rows
        if x["transport"] == r["transport"] and x["op"] == o) for r in rows for o in ops
       if any(x["transport"] == r["transport"] and x["op"] == o for x in rows)}
print("# ddio_client on each transport (medians, MiB/s)\n")
print("| copy | tcp | ucx | ucx / tcp |")
print("|---|---|---|---|")
for o in ops:
    t, u = med.get(("tcp", o)), med.get(("ucx", o))
    if t and u:
        print(f"| {o} | {t:.0f} | {u:.0f} | {u / t:.2f} |")
print("\ncp-in / cp-out: `ddio cp` from / to /dev/shm (one thread per stripe server);")
print("mount-in / mount-out: `dd bs=1M` through tools/ddio-fuse from / to /dev/shm.")
PY
cat "$OUT/REPORT.md"
exit $rc
