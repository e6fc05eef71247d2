#!/usr/bin/env bash
# rebuild.sh: how fast `ddio rebuild` brings a replaced server back,
# against the device's sequential bandwidth measured beside it. 3 ddio
# servers (ddio-run, --redundancy mirror), FILES mirrored files of SIZE MiB
# copied in; per repetition server 1 is SIGKILLed, its root deleted, a
# fresh `ddio-server --replacement` started at its address, the store's
# files dropped from the page cache (cold reads), and `ddio rebuild
# --server 1 --rate RATE` timed. The ceiling: bench/ddio-ceiling reading
# and writing one file of SIZE MiB with O_DIRECT in the same directory,
# right before each repetition. With -t MiB/s the servers' disks are
# throttled (--throttle-mbps), and the ceiling is that figure. With -M
# ec:2+1 the files are erasure coded (ddio cp --redundancy): the rebuild
# folds them, then writes the replacement's units (decoded) and the
# parity it holds (DESIGN.md 6.4).
# results.csv: one line per repetition; REPORT.md: the medians.
# usage: bench/rebuild.sh [-n REPS] [-f FILES] [-s SIZE_MiB] [-r RATE_MB/s]
#                         [-t MiB/s] [-M MODE] [-o OUT]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/rebuild-lib.sh"
CMDLINE="$0 $*"
DDIO_BUILD=${DDIO_BUILD:-$(cd "$here/.." && pwd)}
REPS=3; FILES=4; SIZE=256; RATE=1000000; THROTTLE=""; OUT=""; MODE=mirror
while [ $# -gt 0 ]; do
  case "$1" in
    -M) MODE=$2; shift 2 ;;
    -n) REPS=$2; shift 2 ;;
    -f) FILES=$2; shift 2 ;;
    -s) SIZE=$2; shift 2 ;;
    -r) RATE=$2; shift 2 ;;
    -t) THROTTLE=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    *) echo "usage: bench/rebuild.sh [-n REPS] [-f FILES] [-s SIZE_MiB] [-r RATE] [-t MiB/s] [-M MODE] [-o OUT]" >&2
       exit 2 ;;
  esac
done
die() { echo "rebuild.sh: $*" >&2; exit 2; }
# what the replacement writes, as a share of the file data, with 3
# servers: mirror its own units and one copy (2/3); ec:2+1 its data units
# (1/3) and the parity it holds (1/3 of the groups' parity: 1/6)
case "$MODE" in
  mirror) WSHARE=2/3 ;;
  ec:2+1) WSHARE=1/2 ;;
  *) die "-M: mirror or ec:2+1 (3 servers)" ;;
esac
RUN=$DDIO_BUILD/tools/ddio-run; DDIO=$DDIO_BUILD/tools/ddio
SERVER=$DDIO_BUILD/ioserver/ddio-server; CEIL=$DDIO_BUILD/bench/ddio-ceiling
for f in "$RUN" "$DDIO" "$SERVER" "$CEIL"; do [ -x "$f" ] || die "$f missing: build it first"; done
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-rebuild"
mkdir -p "$OUT/tmp" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd)
echo "rep,files,MiB_each,rate_MBps,throttle_MiBps,bytes,seconds,rebuild_MBps,replacement_write_MBps,ceiling_read_MiBps,ceiling_write_MiBps,status,mode" \
  >"$OUT/results.csv"

# the part run inside ddio-run: exported by it DDIO_SERVERS, DDIO_SECRET_FILE
inner() {
  set -u
  IFS=, read -r -a addr <<<"$DDIO_SERVERS"
  local root=$OUT/tmp/srv pids=()
  rb_fill || return 1
  for ((rep = 1; rep <= REPS; rep++)); do
    # the ceiling, beside the servers' root
    local cr cw
    cw=$("$CEIL" -s "$SIZE" -w "$root/ceiling.dat" | awk -F, '/^ceiling,/ { print $7 }')
    cr=$("$CEIL" -s "$SIZE" -r "$root/ceiling.dat" | awk -F, '/^ceiling,/ { print $7 }')
    rm -f "$root/ceiling.dat"
    pids+=("$(rb_replace "$root" "${addr[1]}")")
    "$here/drop-pages.py" "$root" >/dev/null 2>&1 || true
    local t0 t1 rc=0
    t0=$(date +%s.%N)
    "$DDIO" rebuild --server 1 --rate "$RATE" >"$OUT/tmp/rebuild-$rep.out" 2>"$OUT/tmp/rebuild-$rep.err" || rc=$?
    t1=$(date +%s.%N)
    local bytes
    bytes=$(sed -n 's/.*; \([0-9]*\) bytes in .*/\1/p' "$OUT/tmp/rebuild-$rep.out")
    awk -v r="$rep" -v f="$FILES" -v s="$SIZE" -v rt="$RATE" -v th="${THROTTLE:-0}" -v b="${bytes:-0}" \
        -v a="$t0" -v z="$t1" -v cr="$cr" -v cw="$cw" -v st="$rc" -v w="$WSHARE" -v m="$MODE" \
      'BEGIN { split(w, q, "/"); d = z - a; printf "%d,%d,%d,%s,%s,%d,%.3f,%.1f,%.1f,%s,%s,%d,%s\n", r, f, s, rt, th, b, d, b / d / 1e6, b * q[1] / q[2] / d / 1e6, cr, cw, st, m }' \
      >>"$OUT/results.csv"
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
}
export -f inner rb_fill rb_replace
export OUT FILES SIZE REPS RATE THROTTLE DDIO SERVER CEIL here MODE WSHARE
rm -rf "$OUT/tmp/srv"; mkdir -p "$OUT/tmp/srv"
timeout -k 15 3600 "$RUN" -s 3 --root "$OUT/tmp/srv" --server-opt --redundancy=mirror \
  ${THROTTLE:+--throttle-mbps "$THROTTLE"} -- bash -c inner || die "the run failed (see $OUT/tmp)"

python3 - "$OUT/results.csv" "$CMDLINE" >"$OUT/REPORT.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = lambda k: statistics.median(float(r[k]) for r in rows if r[k])
print("# ddio rebuild against the device\n")
print("`%s`\n" % sys.argv[2])
mode = rows[0].get("mode") or "mirror"
print("File data MB/s: the rebuilt files' bytes over the rebuild's wall time;")
print("written: what the replacement wrote (`mirror`: its own units and one")
print("copy, 2/3 of that with 3 servers; `ec:2+1`: its data units and the")
print("parity it holds, 1/2 of it). Files: `%s`. Ceilings: bench/ddio-ceiling, O_DIRECT," % mode)
print("one file of the same size beside the servers' roots.\n")
print("| reps | files x MiB | rate cap MB/s | file data MB/s | written MB/s | ceiling read MiB/s | ceiling write MiB/s | written / write ceiling |")
print("|---|---|---|---|---|---|---|---|")
rb, rw = med("rebuild_MBps"), med("replacement_write_MBps")
cr, cw = med("ceiling_read_MiBps"), med("ceiling_write_MiBps")
r0 = rows[0]
# throttled disks: the ceiling is the throttle (what each server's disk may move)
th = float(r0["throttle_MiBps"] or 0)
limit = th if th > 0 else cw
print("| %d | %s x %s | %s | %.1f | %.1f | %.1f | %.1f | %.2f%s |" % (len(rows), r0["files"],
      r0["MiB_each"], r0["rate_MBps"], rb, rw, cr, cw, rw / (limit * 1.048576),
      " (of the %g MiB/s throttle)" % th if th > 0 else ""))
bad = [r for r in rows if r["status"] != "0"]
if bad:
    print("\n%d repetition(s) exited non-zero." % len(bad))
PY
rm -rf "$OUT/tmp/srv"
cat "$OUT/REPORT.md"
