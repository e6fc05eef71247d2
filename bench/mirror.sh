#!/usr/bin/env bash
# mirror.sh: what romio_ddio_redundancy=mirror costs. IOR's shared-file
# cases (bench/ior-style.c: collective and independent, 1 MiB transfers) on
# 3 ddio servers, files created `none` and `mirror` in turn in the same
# run, repetition by repetition (the order rotated each time), each
# transport asked for. A third mode, none-srv, is `none` with same-host
# writes off (DDIO_LOCAL_WRITE=0): the servers' write path without copies,
# which mirrored files always take (their writes are never same-host), so
# mirror / none-srv is what the copies cost on that path and mirror / none
# what a user sees. Writes are IOR's -e time (open, writes, sync, close:
# every copy durable inside it); reads are cold (a second launch on fresh
# servers after the store's files were dropped from the page cache).
# Degraded reads: a mirrored file's cold reads again with server 2 SIGKILLed
# and its root deleted first (test/mpi/kill-server.sh) and declared out
# (`ddio member out 2`), its part read from the copies; an erasure-coded
# file's the same, its part decoded from the others (phase read-degraded,
# redundant modes only).
# results.csv, one line per phase; REPORT.md: per case the median MiB/s of
# each mode and the ratios.
# -t MIBPS throttles each server's disk (--throttle-mbps) so the disks, not
# the cores, are the limit; none's same-host writes and reads go around the
# throttle, so there mirror / none-srv is the comparison that means something
# (with -t, none-srv's reads go through the servers too: DDIO_LOCAL_READ=0).
# -M MODES: the modes compared (default none,none-srv,mirror; any
# romio_ddio_redundancy value, e.g. ec:2+1, which needs 3 servers: -s).
# -x XFER: the transfer size (default 1m; 2m with ec:2+1's 1 MiB units
# writes whole groups, whose parity the servers compute in the pass).
# usage: bench/mirror.sh [-n REPS] [-T TRANSPORTS] [-b BLOCK] [-t MIBPS] [-M MODES] [-s SERVERS] [-x XFER] [-o OUT]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"
DDIO_BUILD=${DDIO_BUILD:-$(cd "$here/.." && pwd)}
REPS=3; TRANSPORTS=tcp,auto; BLOCK=32m; SEGS=2; P=4; NSERV=3; OUT=""; THROTTLE=""
MODES=none,none-srv,mirror; XFER=1m
while [ $# -gt 0 ]; do
  case "$1" in
    -n) REPS=$2; shift 2 ;;
    -T) TRANSPORTS=$2; shift 2 ;;
    -b) BLOCK=$2; shift 2 ;;
    -t) THROTTLE=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    -M) MODES=$2; shift 2 ;;
    -s) NSERV=$2; shift 2 ;;
    -x) XFER=$2; shift 2 ;;
    *) echo "usage: bench/mirror.sh [-n REPS] [-T tcp,auto] [-b BLOCK] [-t MIBPS] [-M MODES] [-s SERVERS] [-x XFER] [-o OUT]" >&2; exit 2 ;;
  esac
done
die() { echo "mirror.sh: $*" >&2; exit 2; }
MPICC=$DDIO_BUILD/mpich/bin/mpicc; MPIEXEC=$DDIO_BUILD/mpich/bin/mpiexec
RUN=$DDIO_BUILD/tools/ddio-run
for f in "$MPICC" "$MPIEXEC" "$RUN"; do [ -x "$f" ] || die "$f missing: build ddio first"; done
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-mirror"
mkdir -p "$OUT/raw" "$OUT/tmp" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd)
BIN="$here/bin/ior-style"
mkdir -p "$here/bin"
"$MPICC" -std=c11 -O2 -Wall -Wextra -Werror -o "$BIN" "$here/ior-style.c" || die "cannot build ior-style"
echo "transport,mode,rep,case,phase,P,xfer,block,segments,fpp,coll,random,neighbour,bytes,seconds,MiB_s,status" \
  > "$OUT/results.csv"

launch() {   # launch T MODE REP DIR WHAT ARGS...: one ior-style launch, RESULT lines kept
  local t=$1 mode=$2 rep=$3 dir=$4 what=$5; shift 5
  local raw="$OUT/raw/$t-${mode/:/_}-rep$rep-$what.txt" lw=1 lr=1 thr=() lose=()
  [ "$mode" = none-srv ] && lw=0
  # throttled, none-srv reads through the servers too: the throttled disks
  [ -n "$THROTTLE" ] && { thr=(--throttle-mbps "$THROTTLE"); [ "$mode" = none-srv ] && lr=0; }
  # degraded: server 2 lost for good and declared out before the launch
  # (the membership's epoch named first, while every server answers: a
  # session that opened no mirrored file has none yet; a later launch on
  # the same roots has one, naming the earlier session's addresses)
  [ "${LOSE:-}" ] && lose=(bash -c '"$3" member >/dev/null 2>&1; "$1" 2 "$2" >/dev/null &&
    "$3" member out 2 >/dev/null && shift 3 && exec "$@"'
    lose "$DDIO_BUILD/test/mpi/kill-server.sh" "$dir" "$DDIO_BUILD/tools/ddio")
  timeout -k 15 900 env DDIO_LOCAL_WRITE=$lw DDIO_LOCAL_READ=$lr "$RUN" -s "$NSERV" --root "$dir" --transport "$t" "${thr[@]}" -- \
    "${lose[@]}" "$MPIEXEC" -n "$P" "$BIN" -H "romio_ddio_redundancy=${mode%-srv}" -G "$rep" "$@" "ddio:/m-" \
    > "$raw" 2>&1 || echo "mirror.sh: $t $mode rep $rep $what failed (see $raw)" >&2
  grep '^RESULT,' "$raw" | sed "s/^RESULT,/$t,$mode,$rep,/" >> "$OUT/results.csv"
}

one() {   # one T MODE REP: write both cases, drop, read them cold
  local t=$1 mode=$2 rep=$3 dir="$OUT/tmp/$1-${2/:/_}"
  rm -rf "$dir"; mkdir -p "$dir"
  launch "$t" "$mode" "$rep" "$dir" write-coll -b "$BLOCK" -t "$XFER" -s "$SEGS" -c -w -k -n coll
  launch "$t" "$mode" "$rep" "$dir" write-ind -b "$BLOCK" -t "$XFER" -s "$SEGS" -w -k -n ind
  "$here/drop-pages.py" "$dir" || die "dropping pages failed"
  launch "$t" "$mode" "$rep" "$dir" read-coll -b "$BLOCK" -t "$XFER" -s "$SEGS" -c -r -k -T cold -n coll
  launch "$t" "$mode" "$rep" "$dir" read-ind -b "$BLOCK" -t "$XFER" -s "$SEGS" -r -k -T cold -n ind
  if [ "${mode%%:*}" = mirror ] || [ "${mode%%:*}" = ec ]; then
    "$here/drop-pages.py" "$dir" || die "dropping pages failed"
    LOSE=1 launch "$t" "$mode" "$rep" "$dir" degraded-coll -b "$BLOCK" -t "$XFER" -s "$SEGS" -c -r -T degraded -n coll
    "$here/drop-pages.py" "$dir" || die "dropping pages failed"
    LOSE=1 launch "$t" "$mode" "$rep" "$dir" degraded-ind -b "$BLOCK" -t "$XFER" -s "$SEGS" -r -T degraded -n ind
  fi
  rm -rf "$dir"
}

IFS=, read -ra tlist <<< "$TRANSPORTS"
IFS=, read -ra mlist <<< "$MODES"
for ((rep = 1; rep <= REPS; rep++)); do
  for t in "${tlist[@]}"; do
    # the order rotated each repetition
    k=$(( (rep - 1) % ${#mlist[@]} ))
    order=("${mlist[@]:$k}" "${mlist[@]:0:$k}")
    for mode in "${order[@]}"; do
      echo "mirror.sh: rep $rep $t $mode"
      one "$t" "$mode" "$rep"
    done
  done
done
rm -rf "$OUT/tmp"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT" "$CMDLINE" "$(nproc)" "$LOAD" "$MODES" <<'EOF'
import csv, statistics, sys
out, cmd, ncpu, load, modes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
modes = modes.split(",")
red = [m for m in modes if m.split(":")[0] in ("mirror", "ec")]
rows = list(csv.DictReader(open(out + "/results.csv")))
bad = [r for r in rows if r["status"] != "ok"]
groups = {}
for r in rows:
    if r["status"] != "ok":
        continue
    groups.setdefault((r["transport"], r["case"], r["phase"], r["mode"]), []).append(float(r["MiB_s"]))
med = lambda v: statistics.median(v) if v else None
fmt = lambda v: "%.0f" % v if v is not None else "-"
ratio = lambda a, b: "%.2f" % (a / b) if a is not None and b else "-"
lines = ["# %s: IOR's shared file, 4 ranks" % " vs ".join(modes), "",
         "Command: `%s` (%s CPUs shared by ranks and servers; load average at the end %s)."
         % (cmd, ncpu, load), "",
         ("Each server's disk throttled (`--throttle-mbps`, the `-t` above): the disks are the "
          "limit for the servers' path; none's same-host I/O goes around the throttle, so "
          "compare the redundant modes with none-srv (which then reads through the servers too)."
          if " -t " in cmd + " " else "Disks not throttled."), "",
         "Median MiB/s over the repetitions (each figure is one launch's bytes over its time;",
         "writes include MPI_File_sync, so every copy or parity is durable inside the time).",
         "none-srv: `none` with same-host writes off (DDIO_LOCAL_WRITE=0), the servers' path",
         "that mirrored and erasure-coded writes always take. Against none-srv, the bytes",
         "alone predict 0.5 for mirror (2 copies) and K/(K+M) for ec:K+M groups written",
         "whole when the servers' disks are the limit.", "",
         "| transport | case | phase | " + " | ".join(modes) + " | "
         + " | ".join("%s / none-srv" % m for m in red) + " | runs |",
         "|" + "---|" * (4 + len(modes) + len(red))]
spread = ["", "The spread (lowest-highest MiB/s of the runs):", "",
          "| transport | case | phase | " + " | ".join(modes) + " |",
          "|" + "---|" * (3 + len(modes))]
for t, c, ph in sorted({k[:3] for k in groups}):
    if ph == "read-degraded":
        continue
    vals = [groups.get((t, c, ph, m), []) for m in modes]
    meds = [med(v) for v in vals]
    srv = meds[modes.index("none-srv")] if "none-srv" in modes else None
    lines.append("| %s | %s | %s | %s | %s | %d |" % (t, c, ph, " | ".join(fmt(v) for v in meds),
                 " | ".join(ratio(meds[modes.index(m)], srv) for m in red),
                 min(len(v) for v in vals)))
    spread.append("| %s | %s | %s | %s |" % (t, c, ph, " | ".join(
        "%.0f-%.0f" % (min(v), max(v)) if v else "-" for v in vals)))
deg = ["", "Degraded reads: each redundant mode's file read cold again with server 2 SIGKILLed,",
       "its root deleted and declared out before the launch (its part from the copies, or",
       "decoded from the others), against the same file's cold read with every server and",
       "none-srv's cold read.", "",
       "| transport | case | mode | read-degraded | read-cold | none-srv read-cold | degraded / cold | degraded / none-srv | runs |",
       "|---|---|---|---|---|---|---|---|---|"]
for t, c in sorted({k[:2] for k in groups}):
    for m in red:
        d = groups.get((t, c, "read-degraded", m), [])
        h = groups.get((t, c, "read-cold", m), [])
        s = groups.get((t, c, "read-cold", "none-srv"), [])
        if d and h and s:
            md, mh, ms = statistics.median(d), statistics.median(h), statistics.median(s)
            deg.append("| %s | %s | %s | %.0f (%.0f-%.0f) | %.0f | %.0f | %.2f | %.2f | %d |"
                       % (t, c, m, md, min(d), max(d), mh, ms, md / mh, md / ms, len(d)))
lines += spread + deg + ["", "%d phases, %d not ok." % (len(rows), len(bad)), ""]
open(out + "/REPORT.md", "w").write("\n".join(lines))
print("\n".join(lines))
EOF
