#!/usr/bin/env bash
# checksums.sh: what ddio-server --checksums on costs. Kotz's patterns
# (examples/ddio-patterns, collective, every write and read pattern) and
# IOR's shared-file cases (bench/ior-style.c: collective and independent,
# 1 MiB transfers, writes with their sync, reads cold) on 2 ddio servers and
# 4 ranks, with the servers' checksums on and off in turn in the same run,
# repetition by repetition (the order rotated each time), once with the
# servers' disks unthrottled (this machine's cores are the limit) and once
# throttled (--throttle-mbps: each disk an emulated device, the disks the
# limit). A third mode, off-srv, is off with the same-host shortcuts off
# (DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0): the servers' path, which files
# with checksums always take (the servers refuse the handovers), so on /
# off-srv is what the sums cost on that path and on / off what a user sees.
# The throttle emulates the servers' disks: off's same-host I/O goes
# around it, so throttled only on / off-srv meets the same disks.
# results.csv, one line per pattern or phase; REPORT.md: per case the
# median MiB/s of each mode and the ratios.
# usage: bench/checksums.sh [-n REPS] [-m MIB] [-t MIBPS] [-T TRANSPORT] [-o OUT]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"
DDIO_BUILD=${DDIO_BUILD:-$(cd "$here/.." && pwd)}
REPS=3; MIB=128; THROTTLE=60; TRANSPORT=auto; P=4; NSERV=2; OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    -n) REPS=$2; shift 2 ;;
    -m) MIB=$2; shift 2 ;;
    -t) THROTTLE=$2; shift 2 ;;
    -T) TRANSPORT=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    *) echo "usage: bench/checksums.sh [-n REPS] [-m MIB] [-t MIBPS] [-T TRANSPORT] [-o OUT]" >&2
       exit 2 ;;
  esac
done
die() { echo "checksums.sh: $*" >&2; exit 2; }
MPICC=$DDIO_BUILD/mpich/bin/mpicc; MPIEXEC=$DDIO_BUILD/mpich/bin/mpiexec
RUN=$DDIO_BUILD/tools/ddio-run; PAT=$DDIO_BUILD/examples/bin/ddio-patterns
for f in "$MPICC" "$MPIEXEC" "$RUN" "$PAT"; do [ -x "$f" ] || die "$f missing: build ddio first"; done
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-checksums"
mkdir -p "$OUT/raw" "$OUT/tmp" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd)
BIN="$here/bin/ior-style"
mkdir -p "$here/bin"
"$MPICC" -std=c11 -O2 -Wall -Wextra -Werror -o "$BIN" "$here/ior-style.c" || die "cannot build ior-style"
echo "disks,mode,rep,bench,case,phase,MiB,seconds,MiB_s,status" > "$OUT/results.csv"

# srv MODE THROTTLE DIR: the ddio-run arguments and environment of a mode
srv_env() {
  case $1 in
    off-srv) echo "DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0" ;;
    *) echo "DDIO_LOCAL_READ=1 DDIO_LOCAL_WRITE=1" ;;
  esac
}

launch() {   # launch DISKS MODE REP DIR WHAT CMD...: one launch on fresh servers
  local dk=$1 mode=$2 rep=$3 dir=$4 what=$5; shift 5
  local raw="$OUT/raw/$dk-$mode-rep$rep-$what.txt" sums=on thr=()
  [ "$mode" = on ] || sums=off
  [ "$dk" = throttled ] && thr=(--throttle-mbps "$THROTTLE")
  # shellcheck disable=SC2046  # the mode's variables, one word each
  timeout -k 15 1800 env $(srv_env "$mode") "$RUN" -s "$NSERV" --root "$dir" \
    --transport "$TRANSPORT" "${thr[@]}" --server-opt "--checksums=$sums" -- "$@" \
    > "$raw" 2>&1 || echo "checksums.sh: $dk $mode rep $rep $what failed (see $raw)" >&2
  echo "$raw"
}

kotz() {   # kotz DISKS MODE REP DIR: every pattern, writes then reads, one launch
  local raw
  raw=$(launch "$1" "$2" "$3" "$4" kotz "$MPIEXEC" -n "$P" "$PAT" -C -p all -r 8192 \
        -m "$MIB" ddio:/kotz)
  # pattern,recsize,P,MiB,seconds,MiB/s,status
  awk -F, -v d="$1" -v m="$2" -v r="$3" \
    'NF >= 7 && $3 ~ /^[0-9]+$/ { ph = substr($1, 1, 1) == "w" ? "write" : "read"
      print d "," m "," r ",kotz," $1 "," ph "," $4 "," $5 "," $6 "," $7 }' \
    "$raw" >> "$OUT/results.csv"
}

ior() {   # ior DISKS MODE REP DIR: collective and independent, write then cold read
  local raw what
  for what in write-coll write-ind read-coll read-ind; do
    local args=(-b "$((MIB / P / 2))m" -t 1m -s 2 -G "$3")
    case $what in
      write-*) args+=(-w -k) ;; read-*) args+=(-r -T cold) ;;
    esac
    case $what in *-coll) args+=(-c -n coll) ;; *) args+=(-n ind) ;; esac
    [ "${what%%-*}" = read ] && { "$here/drop-pages.py" "$4" || die "dropping pages failed"; }
    raw=$(launch "$1" "$2" "$3" "$4" "ior-$what" "$MPIEXEC" -n "$P" "$BIN" "${args[@]}" ddio:/ior-)
    # RESULT,case,phase,P,xfer,block,segments,fpp,coll,random,neighbour,bytes,seconds,MiB_s,status
    awk -F, -v d="$1" -v m="$2" -v r="$3" \
      '$1 == "RESULT" { printf "%s,%s,%s,ior,%s,%s,%.0f,%s,%s,%s\n", d, m, r, $2, $3,
        $12 / 1048576, $13, $14, $15 }' "$raw" >> "$OUT/results.csv"
  done
}

for ((rep = 1; rep <= REPS; rep++)); do
  for dk in unthrottled throttled; do
    case $((rep % 3)) in
      1) order=(on off off-srv) ;; 2) order=(off-srv on off) ;; *) order=(off off-srv on) ;;
    esac
    for mode in "${order[@]}"; do
      echo "checksums.sh: rep $rep $dk $mode"
      dir="$OUT/tmp/$dk-$mode"
      rm -rf "$dir"; mkdir -p "$dir"
      kotz "$dk" "$mode" "$rep" "$dir"
      ior "$dk" "$mode" "$rep" "$dir"
      rm -rf "$dir"
    done
  done
done
rm -rf "$OUT/tmp"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT" "$CMDLINE" "$(nproc)" "$LOAD" "$THROTTLE" <<'EOF'
import csv, statistics, sys
out, cmd, ncpu, load, thr = sys.argv[1:6]
rows = list(csv.DictReader(open(out + "/results.csv")))
bad = [r for r in rows if r["status"] != "ok"]
g = {}
for r in rows:
    if r["status"] == "ok":
        g.setdefault((r["disks"], r["bench"], r["case"], r["phase"], r["mode"]), []).append(
            float(r["MiB_s"]))
med = lambda v: statistics.median(v) if v else float("nan")
lines = ["# checksums on vs off: Kotz's patterns and IOR's shared file, 2 servers, 4 ranks", "",
         "Command: `%s` (%s CPUs shared by ranks and servers; load average at the end %s;"
         % (cmd, ncpu, load), "throttled: each server's disk at %s MiB/s)." % thr, "",
         "Median MiB/s over the repetitions. off-srv: off with the same-host shortcuts off,",
         "the servers' path that files with checksums always take (the servers refuse the",
         "handovers): on / off-srv is the sums' own cost, on / off what a user sees.",
         "Throttled, the emulated disks are inside the servers: `off`'s same-host reads",
         "and writes go around them (to the real disk's page cache), so there only",
         "on / off-srv compares two runs that both meet the throttled disks.", ""]
summary = []
for dk in ("unthrottled", "throttled"):
    lines += ["## %s" % dk, "",
              "| bench | case | phase | on | off | off-srv | on / off | on / off-srv | runs |",
              "|---|---|---|---|---|---|---|---|---|"]
    ratios = {}
    for key in sorted({k[:4] for k in g if k[0] == dk}):
        on, off, srv = (g.get(key + (m,), []) for m in ("on", "off", "off-srv"))
        if not on or not off:
            continue
        a, b, c = med(on), med(off), med(srv)
        lines.append("| %s | %s | %s | %.0f | %.0f | %.0f | %.2f | %.2f | %d |"
                     % (key[1], key[2], key[3], a, b, c, a / b, a / c if srv else float("nan"),
                        min(len(on), len(off))))
        ratios.setdefault(key[1], []).append((a / b, a / c if srv else float("nan")))
    for bench, v in sorted(ratios.items()):
        summary.append("| %s | %s | %.2f-%.2f (median %.2f) | %.2f-%.2f (median %.2f) |" % (
            dk, bench, min(x for x, _ in v), max(x for x, _ in v), med([x for x, _ in v]),
            min(y for _, y in v), max(y for _, y in v), med([y for _, y in v])))
    lines.append("")
lines += ["## Summary", "", "| disks | bench | on / off | on / off-srv |", "|---|---|---|---|"]
lines += summary + ["", "%d rows, %d not ok." % (len(rows), len(bad)), ""]
open(out + "/REPORT.md", "w").write("\n".join(lines))
print("\n".join(lines))
EOF
