#!/usr/bin/env bash
# rebuild-beside.sh: what a rebuild takes from a job running beside it.
# 3 ddio servers (ddio-run, --redundancy mirror, each disk throttled to
# -t MiB/s so the disks, not the 2 cores, are the limit); FILES mirrored
# files of SIZE MiB copied in. Per repetition: a job alone (`ddio cp` of
# JOB MiB into a new mirrored file, then back out to /dev/null after the
# store's pages were dropped), timed; then server 1 SIGKILLed, its root
# deleted, a fresh `ddio-server --replacement` started at its address,
# `ddio rebuild --server 1 --rate RATE` started, and once it copies, the
# same job again beside it. The job's MB/s beside the rebuild over its
# MB/s alone is what the rebuild leaves it; the rebuild's own rate shows
# the cap holding. results.csv: one line per repetition; REPORT.md: the
# medians.
# With -M ec:2+1 the files, and the job's, are erasure coded instead.
# usage: bench/rebuild-beside.sh [-n REPS] [-f FILES] [-s SIZE_MiB] [-j JOB_MiB]
#                                [-r RATE_MB/s] [-t MiB/s] [-M MODE] [-o OUT]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/rebuild-lib.sh"
CMDLINE="$0 $*"
DDIO_BUILD=${DDIO_BUILD:-$(cd "$here/.." && pwd)}
REPS=3; FILES=4; SIZE=128; JOB=128; RATE=25; THROTTLE=100; OUT=""; MODE=mirror
while [ $# -gt 0 ]; do
  case "$1" in
    -n) REPS=$2; shift 2 ;;
    -f) FILES=$2; shift 2 ;;
    -s) SIZE=$2; shift 2 ;;
    -j) JOB=$2; shift 2 ;;
    -r) RATE=$2; shift 2 ;;
    -t) THROTTLE=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    -M) MODE=$2; shift 2 ;;
    *) echo "usage: bench/rebuild-beside.sh [-n REPS] [-f FILES] [-s SIZE] [-j JOB] [-r RATE] [-t MiB/s] [-M MODE] [-o OUT]" >&2
       exit 2 ;;
  esac
done
die() { echo "rebuild-beside.sh: $*" >&2; exit 2; }
RUN=$DDIO_BUILD/tools/ddio-run; DDIO=$DDIO_BUILD/tools/ddio
SERVER=$DDIO_BUILD/ioserver/ddio-server
for f in "$RUN" "$DDIO" "$SERVER"; do [ -x "$f" ] || die "$f missing: build it first"; done
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-rebuild-beside"
mkdir -p "$OUT/tmp" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd)
echo "rep,files,MiB_each,rate_MBps,throttle_MiBps,job_MiB,alone_write_MBps,alone_read_MBps,beside_write_MBps,beside_read_MBps,rebuild_MBps,rebuild_seconds,status" \
  >"$OUT/results.csv"

# the job: JOB MiB into ddio:/NAME and back out (pages dropped first);
# prints "WRITE_MBps READ_MBps", or fails
job() {
  local t0 t1 t2 b=$((JOB << 20))
  t0=$(date +%s.%N)
  "$DDIO" cp -r "$MODE" "$OUT/tmp/job.src" "ddio:/$1" >/dev/null || return 1
  t1=$(date +%s.%N)
  "$here/drop-pages.py" "$OUT/tmp/srv" >/dev/null 2>&1 || true
  local t1b; t1b=$(date +%s.%N)
  "$DDIO" cp "ddio:/$1" /dev/null >/dev/null || return 1
  t2=$(date +%s.%N)
  awk -v b="$b" -v a="$t0" -v m="$t1" -v n="$t1b" -v z="$t2" \
    'BEGIN { printf "%.1f %.1f\n", b / (m - a) / 1e6, b / (z - n) / 1e6 }'
}

inner() {
  set -u
  IFS=, read -r -a addr <<<"$DDIO_SERVERS"
  local root=$OUT/tmp/srv pids=()
  rb_fill || return 1
  head -c $((JOB << 20)) /dev/urandom >"$OUT/tmp/job.src"
  for ((rep = 1; rep <= REPS; rep++)); do
    local alone beside rc=0
    alone=$(job "alone-$rep") || { echo "the job alone failed" >&2; return 1; }
    pids+=("$(rb_replace "$root" "${addr[1]}")")
    "$here/drop-pages.py" "$root" >/dev/null 2>&1 || true
    local t0 t1
    t0=$(date +%s.%N)
    "$DDIO" rebuild --server 1 --rate "$RATE" >"$OUT/tmp/rebuild-$rep.out" 2>"$OUT/tmp/rebuild-$rep.err" &
    local rb=$!
    # beside it once it copies (the replacement has taken the lost id)
    for _ in $(seq 200); do
      [ "$("$DDIO" stats -s "${addr[1]}" rebuild_bytes_done 2>/dev/null | awk '{ print $3 }')" -gt 0 ] 2>/dev/null && break
      sleep 0.05
    done
    beside=$(job "beside-$rep") || rc=1
    wait "$rb" || rc=$?
    t1=$(date +%s.%N)
    local bytes
    bytes=$(sed -n 's/.*; \([0-9]*\) bytes in .*/\1/p' "$OUT/tmp/rebuild-$rep.out")
    # (the job files beside and alone exist on the replacement too: the
    # next rebuild copies them; drop them so every repetition is the same)
    "$DDIO" rm "/alone-$rep" >/dev/null 2>&1; "$DDIO" rm "/beside-$rep" >/dev/null 2>&1
    set -- $alone ${beside:-0 0}
    awk -v r="$rep" -v f="$FILES" -v s="$SIZE" -v rt="$RATE" -v th="$THROTTLE" -v j="$JOB" \
        -v aw="$1" -v ar="$2" -v bw="$3" -v br="$4" -v b="${bytes:-0}" -v a="$t0" -v z="$t1" -v st="$rc" \
      'BEGIN { d = z - a; printf "%d,%d,%d,%s,%s,%d,%s,%s,%s,%s,%.1f,%.3f,%d\n", r, f, s, rt, th, j, aw, ar, bw, br, b / d / 1e6, d, st }' \
      >>"$OUT/results.csv"
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
}
export -f inner job rb_fill rb_replace
export OUT FILES SIZE REPS RATE THROTTLE JOB DDIO SERVER here MODE
rm -rf "$OUT/tmp/srv"; mkdir -p "$OUT/tmp/srv"
timeout -k 15 3600 "$RUN" -s 3 --root "$OUT/tmp/srv" --server-opt --redundancy=mirror \
  --throttle-mbps "$THROTTLE" -- bash -c inner || die "the run failed (see $OUT/tmp)"

python3 - "$OUT/results.csv" "$CMDLINE" "$MODE" >"$OUT/REPORT.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
med = lambda k: statistics.median(float(r[k]) for r in rows)
r0 = rows[0]
print("# A job beside a rebuild\n")
print("`%s`\n" % sys.argv[2])
print("3 servers, `%s`, each disk throttled to %s MiB/s; %s files of %s MiB rebuilt"
      % (sys.argv[3], r0["throttle_MiBps"], r0["files"], r0["MiB_each"]))
print("onto a replacement at `--rate %s` (MB/s) while a job copies %s MiB into a new"
      % (r0["rate_MBps"], r0["job_MiB"]))
print("`%s` file and back out (cold). Medians of %d repetitions.\n" % (sys.argv[3], len(rows)))
print("| job | alone MB/s | beside the rebuild MB/s | beside / alone |")
print("|---|---|---|---|")
for k in ("write", "read"):
    a, b = med("alone_%s_MBps" % k), med("beside_%s_MBps" % k)
    print("| %s | %.1f | %.1f | %.2f |" % (k, a, b, b / a if a else 0))
print("\nThe rebuild beside the job: %.1f MB/s of file data (cap %s), %.2f s."
      % (med("rebuild_MBps"), r0["rate_MBps"], med("rebuild_seconds")))
bad = [r for r in rows if r["status"] != "0"]
if bad:
    print("\n%d repetition(s) exited non-zero." % len(bad))
PY
rm -rf "$OUT/tmp/srv" "$OUT/tmp/job.src"
cat "$OUT/REPORT.md"
