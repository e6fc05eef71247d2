#!/usr/bin/env bash
# fpp-open.sh: file-per-process metadata through MPI-IO (bench/fpp-open.c:
# each rank creates, opens again and deletes N files of its own) on ddio
# and on ROMIO's ufs: (a directory on the same disk as the servers'
# stores), one or more ddio builds, launch by launch in turn (so a
# before/after comparison shares the machine's conditions), the order
# turned around every launch. See bench/README.md "fpp-open.sh".
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"

usage() {
  cat <<EOF2
usage: bench/fpp-open.sh [options]

  -b, --build LABEL=DIR  a ddio build (its mpich/, tools/ddio-run,
                         ioserver/ddio-server; a copy of those will do);
                         repeat to compare builds (default: this=this repository)
  -n, --launches N       launches (default 3)
  -P, --ranks N          ranks (default 4)
  -f, --files N          files per rank (default 500)
  -s, --servers N        ddio servers (default 2)
  -o, --out DIR          results (default bench/results/DATE-fpp-open)
  -h, --help
EOF2
}
BUILDS=(); N=3; P=4; F=500; NSERV=2; OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    -b|--build) BUILDS+=("$2"); shift 2 ;;
    -n|--launches) N=$2; shift 2 ;;
    -P|--ranks) P=$2; shift 2 ;;
    -f|--files) F=$2; shift 2 ;;
    -s|--servers) NSERV=$2; shift 2 ;;
    -o|--out) OUT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "fpp-open.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
die() { echo "fpp-open.sh: $*" >&2; exit 2; }
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=("this=$(cd "$here/.." && pwd)")
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-fpp-open"
mkdir -p "$OUT/logs" "$OUT/tmp" "$here/bin" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd)
for b in "${BUILDS[@]}"; do
  d=${b#*=}
  for f in "$d/mpich/bin/mpiexec" "$d/tools/ddio-run"; do [ -x "$f" ] || die "$f missing"; done
done
# one program for every build (the same libmpich.so.12 ABI), run on each
# build's own library
d0=${BUILDS[0]#*=}
"$d0/mpich/bin/mpicc" -std=c11 -O2 -Wall -Wextra -Werror -o "$here/bin/fpp-open" "$here/fpp-open.c" \
  || die "building fpp-open.c failed"
{
  echo "command: $CMDLINE"
  echo "date: $(date -u +%FT%TZ)"
  for b in "${BUILDS[@]}"; do
    d=${b#*=}; echo "ddio ${b%%=*}: $d $(git -C "$d" rev-parse --short HEAD 2>/dev/null)"
  done
  echo "ranks $P, files per rank $F, servers $NSERV, launches $N"
  echo "host: $(nproc) cores, $(uname -r), local fs: $(df -T "$OUT/tmp" | awk 'NR==2 {print $2, $1}')"
} > "$OUT/env.txt"
cat "$OUT/env.txt"

# one: METHOD BUILD LAUNCH -> rows of raw.csv
one() {
  local m=$1 b=$2 l=$3 d=${2#*=} target cmd=()
  rm -rf "$OUT/tmp/srv" "$OUT/tmp/ufs"; mkdir -p "$OUT/tmp/ufs"
  case "$m" in
    ufs) target="ufs:$OUT/tmp/ufs" ;;
    ddio) target="ddio:/fpp"
          cmd=("$d/tools/ddio-run" -s "$NSERV" --root "$OUT/tmp/srv" -- bash -c
               '"$0" mkdir /fpp && exec "$@"' "$d/tools/ddio") ;;
  esac
  PATH="$d/mpich/bin:$PATH" LD_LIBRARY_PATH="$d/mpich/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    timeout -k 10 900 "${cmd[@]}" "$d/mpich/bin/mpiexec" -n "$P" "$here/bin/fpp-open" "$target" "$F" \
    > "$OUT/logs/$l-${b%%=*}-$m.log" 2>&1 || die "launch $l ${b%%=*} $m failed: $OUT/logs/$l-${b%%=*}-$m.log"
  awk -F, -v b="${b%%=*}" -v m="$m" -v l="$l" '$1 == "FPP" {print b "," m "," l "," $2 "," $6}' \
    "$OUT/logs/$l-${b%%=*}-$m.log" >> "$OUT/raw.csv"
}
echo "build,method,launch,phase,ops_per_s" > "$OUT/raw.csv"
for ((l = 1; l <= N; l++)); do
  order=("${BUILDS[@]}")
  if [ $((l % 2)) = 0 ]; then
    order=(); for ((i = ${#BUILDS[@]} - 1; i >= 0; i--)); do order+=("${BUILDS[$i]}"); done
  fi
  for b in "${order[@]}"; do
    echo "launch $l, ${b%%=*}" >&2
    if [ $((l % 2)) = 1 ]; then one ufs "$b" "$l"; one ddio "$b" "$l"
    else one ddio "$b" "$l"; one ufs "$b" "$l"; fi
  done
done
rm -rf "$OUT/tmp"

python3 - "$OUT/raw.csv" "$OUT/env.txt" > "$OUT/README.md" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("# File-per-process opens through MPI-IO: ddio against ufs:\n")
print("```\n" + open(sys.argv[2]).read().rstrip() + "\n```\n")
print("Rates in operations per second over all ranks (median over the launches, "
      "range); ratio: ddio's rate over ufs:'s of the same build and launch "
      "(ufs: runs next to it), median and range. Open-close and delete of "
      "ddio at or above 0.5 of ufs: meets the issue's target of opens "
      "at most 2x ufs:'s time.\n")
builds = list(dict.fromkeys(r["build"] for r in rows))
phases = list(dict.fromkeys(r["phase"] for r in rows))
print("| phase | build | ufs: | ddio | ddio / ufs: |\n|---|---|---|---|---|")
for ph in phases:
    for b in builds:
        get = lambda m: {r["launch"]: float(r["ops_per_s"]) for r in rows
                         if r["build"] == b and r["phase"] == ph and r["method"] == m}
        u, d = get("ufs"), get("ddio")
        q = [d[l] / u[l] for l in d if l in u and u[l]]
        f = lambda v: "%.0f (%.0f-%.0f)" % (st.median(v), min(v), max(v)) if v else "-"
        print("| %s | %s | %s | %s | %s |" % (ph, b, f(list(u.values())), f(list(d.values())),
              "%.2f (%.2f-%.2f)" % (st.median(q), min(q), max(q)) if q else "-"))
PY
cat "$OUT/README.md"
