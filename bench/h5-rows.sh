#!/usr/bin/env bash
# h5-rows.sh: HDF5's contiguous rows and strided columns (bench/h5-rows.c),
# collective write then hot read of one dataset, on ddio and on ROMIO's
# ufs: in the same run, launches alternated. ddio methods: "ddio" (the
# defaults: same-host shortcuts on), "ddio-srv" (every byte through the
# servers: DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0, as on a cluster), and
# with -S LEN the same two with DDIO_STREAM_MIN=LEN ("-s16m": the stream
# length before it followed the node's memory). Writes include H5Fflush
# (MPI_File_sync) and close; every read is checked.
# usage: bench/h5-rows.sh [-n REPS] [-r ROWS] [-c COLS] [-P RANKS] [-S LEN]
#                         [-x SHAPES] [-m METHODS] [-o OUT]
# -x rows,cols (default both), -m a subset of the methods (default all:
# ufs,ddio,ddio-srv and with -S the two -sLEN ones).
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
B=${DDIO_BUILD:-$(cd "$here/.." && pwd)}
REPS=3 ROWS=8192 COLS=8192 P=4 OLD="" OUT="" SHAPES=rows,cols ONLY=""
while getopts n:r:c:P:S:x:m:o: o; do
  case $o in
    n) REPS=$OPTARG ;; r) ROWS=$OPTARG ;; c) COLS=$OPTARG ;; P) P=$OPTARG ;;
    S) OLD=$OPTARG ;; x) SHAPES=$OPTARG ;; m) ONLY=$OPTARG ;; o) OUT=$OPTARG ;; *) exit 2 ;;
  esac
done
OUT=${OUT:-$here/results/$(date +%F)-h5-rows}
mkdir -p "$OUT/tmp"
bin="$OUT/tmp/h5-rows"
"$B/mpich/bin/mpicc" -O2 -Wall -Wextra -Werror -I/usr/include/hdf5/mpich -o "$bin" "$here/h5-rows.c" \
  -L/usr/lib/x86_64-linux-gnu/hdf5/mpich -lhdf5 || { echo "h5-rows.sh: cannot build (libhdf5-mpich-dev?)"; exit 1; }
csv="$OUT/results.csv"
echo "method,shape,phase,rep,P,bytes,seconds,MiB_s,status" > "$csv"
methods=(ufs ddio ddio-srv)
[ -n "$OLD" ] && methods+=("ddio-s$OLD" "ddio-srv-s$OLD")
[ -n "$ONLY" ] && IFS=, read -r -a methods <<< "$ONLY"
run() {   # run METHOD SHAPE REP
  local m=$1 shape=$2 rep=$3 envs=() line
  case $m in *-srv*) envs+=(DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0) ;; esac
  case $m in *-s[0-9]*) envs+=(DDIO_STREAM_MIN="${m##*-s}") ;; esac
  if [ "$m" = ufs ]; then
    rm -f "$OUT/tmp/f.h5"
    out=$(timeout 600 "$B/mpich/bin/mpiexec" -n "$P" "$bin" "$shape" "$ROWS" "$COLS" "ufs:$OUT/tmp/f.h5" 2>&1)
  else
    out=$(env "${envs[@]}" timeout 600 "$B/tools/ddio-run" -s 2 --root "$OUT/tmp/srv" -- \
          mpiexec -n "$P" "$bin" "$shape" "$ROWS" "$COLS" ddio:/f.h5 2>&1)
    rm -rf "$OUT/tmp/srv"
  fi
  echo "$out" | grep '^RESULT' | while IFS=, read -r _ sh ph np by se mb st; do
    echo "$m,$sh,$ph,$rep,$np,$by,$se,$mb,$st"
  done >> "$csv"
  echo "$out" | grep -q '^RESULT' || { echo "h5-rows.sh: $m $shape failed:"; echo "$out" | tail -5; }
}
for shape in ${SHAPES//,/ }; do
  for ((k = 1; k <= REPS; k++)); do
    for m in "${methods[@]}"; do run "$m" "$shape" "$k"; done
  done
done
rm -rf "$OUT/tmp"
python3 - "$csv" "$OUT/README.md" "$ROWS" "$COLS" "$P" "$REPS" "$*" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
R, C, P, reps, args = sys.argv[3:8]
bad = [r for r in rows if r["status"] != "ok"]
by = {}
for r in rows:
    by.setdefault((r["method"], r["shape"], r["phase"]), []).append(float(r["MiB_s"]))
methods = []
for r in rows:
    if r["method"] not in methods: methods.append(r["method"])
out = [f"# HDF5 rows and columns: ddio against ufs:",
       "",
       f"`bench/h5-rows.sh {args}`: a {R} x {C} dataset of doubles "
       f"({int(R)*int(C)*8 >> 20} MiB, contiguous layout), {P} ranks, 2 ddio servers, "
       f"collective hyperslab write (with H5Fflush and close) then hot read, "
       f"{reps} launches per method alternated; MiB/s median (min-max); "
       f"ratio = median / ufs median of the same shape and phase. "
       f"Every read checked: {'all ok' if not bad else str(len(bad)) + ' WRONG'}.",
       "", "| shape | phase | method | MiB/s | / ufs |", "|---|---|---|---|---|"]
for shape in ("rows", "cols"):
    for phase in ("write", "read"):
        u = by.get(("ufs", shape, phase))
        um = statistics.median(u) if u else None
        for m in methods:
            v = by.get((m, shape, phase))
            if not v: continue
            med = statistics.median(v)
            ratio = f"{med/um:.2f}" if um and m != "ufs" else ""
            out.append(f"| {shape} | {phase} | {m} | {med:.0f} ({min(v):.0f}-{max(v):.0f}) | {ratio} |")
out.append("")
out.append("Methods: `ddio` the defaults (same-host shortcuts on); `ddio-srv` every byte "
           "through the servers (`DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0`); `-sLEN` with "
           "`DDIO_STREAM_MIN=LEN`. Raw launches: `results.csv`.")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
PY
