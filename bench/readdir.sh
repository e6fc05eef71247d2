#!/usr/bin/env bash
# readdir.sh: the time to list one directory of N files, through `ddio ls`
# and through the mount (`ls -f`), for one or more builds of ddio on the
# same stored files (ddio-run servers on one --root), the builds taking
# turns each launch; and the READDIR requests the servers received. See
# bench/README.md "readdir.sh".
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"

usage() {
  cat <<EOF
usage: bench/readdir.sh [options]

  -B, --build LABEL=DIR  a build to measure (repeatable; default
                         this=\$DDIO_BUILD or this repository): DIR's
                         tools/ddio-run, tools/ddio, tools/ddio-fuse,
                         ioserver/ddio-server. The files are made by the
                         first one.
  -N, --sizes LIST       files per directory (default 1000,10000,50000)
  -n, --launches N       launches of each build (default 3)
  -s, --servers N        ddio servers (default 2)
  -o, --out DIR          results (default bench/results/DATE-readdir)
      --root DIR         the servers' storage (default OUT/tmp/srv; kept
                         between runs: directories already full are reused)
  -h, --help
EOF
}

BUILDS=(); SIZES=1000,10000,50000; LAUNCHES=3; NSERV=2; OUT=""; ROOT=""
while [ $# -gt 0 ]; do
  case "$1" in
    -B|--build) BUILDS+=("$2"); shift 2 ;;
    -N|--sizes) SIZES=$2; shift 2 ;;
    -n|--launches) LAUNCHES=$2; shift 2 ;;
    -s|--servers) NSERV=$2; shift 2 ;;
    -o|--out) OUT=$2; shift 2 ;;
    --root) ROOT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "readdir.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
die() { echo "readdir.sh: $*" >&2; exit 2; }
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=("this=${DDIO_BUILD:-$(cd "$here/.." && pwd)}")
for b in "${BUILDS[@]}"; do
  d=${b#*=}
  [ "$d" != "$b" ] || die "--build wants LABEL=DIR, not $b"
  for f in tools/ddio-run tools/ddio tools/ddio-fuse ioserver/ddio-server; do
    [ -x "$d/$f" ] || die "$d/$f missing: build ddio there first"
  done
done
{ [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; } || die "FUSE unavailable"
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-readdir"
[ -n "$ROOT" ] || ROOT="$OUT/tmp/srv"
mkdir -p "$OUT" "$ROOT" "$OUT/tmp/mnt" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd); ROOT=$(cd "$ROOT" && pwd)   # ddio-run and the mount want them whole
MNT="$OUT/tmp/mnt"
CSV="$OUT/times.csv"

{
  echo "command: $CMDLINE"
  echo "date: $(date -u +%FT%TZ)"
  for b in "${BUILDS[@]}"; do
    d=${b#*=}
    echo "build ${b%%=*}: $d at $(git -C "$d" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$d" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' (modified)')"
  done
  echo "host: $(uname -srm), $(nproc) cores"
  echo "storage: $(df -T "$ROOT" | awk 'NR == 2 { print $1, $2 }')"
  echo "uptime before: $(uptime)"
} >"$OUT/env.txt"

# ---- the directories: /dN with N empty files f000000..., made through the
# mount of the first build (a directory already holding N is kept) ----
populate() {   # (inside ddio-run: the mount on $MNT)
  local n
  for n in ${SIZES//,/ }; do
    python3 - "$MNT/d$n" "$n" <<'PY' || return 1
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
have = set(os.listdir(d))
for i in range(n):
    name = "f%06d" % i
    if name not in have:
        os.close(os.open(os.path.join(d, name), os.O_CREAT | os.O_WRONLY, 0o644))
print("d%d: %d files" % (n, len(os.listdir(d))))
PY
  done
}

# ---- one launch of one build: every size, `ddio ls` then `ls -f`, each
# checked for its count; a line of the CSV per listing ----
now() { echo "${EPOCHREALTIME/./}"; }   # microseconds
readdirs() {   # the servers' READDIR requests so far, summed
  "$DDIO" stats 2>/dev/null | awk '$2 == "req.READDIR" { s += $3 } END { print s + 0 }'
}
one_launch() {  # LABEL LAUNCH (inside ddio-run)
  local label=$1 launch=$2 n t0 t1 got r0 r1
  for n in ${SIZES//,/ }; do
    r0=$(readdirs); t0=$(now)
    got=$("$DDIO" ls "/d$n" | wc -l); t1=$(now); r1=$(readdirs)
    [ "$got" = "$n" ] || { echo "readdir.sh: ddio ls /d$n listed $got, not $n" >&2; return 1; }
    echo "$label,$launch,$n,ddio-ls,$(( t1 - t0 )),$(( r1 - r0 ))" >>"$CSV"
    r0=$(readdirs); t0=$(now)
    # shellcheck disable=SC2012 # ls -f is what is measured (the names are plain)
    got=$(ls -f "$MNT/d$n" | wc -l); t1=$(now); r1=$(readdirs)
    [ "$got" = "$((n + 2))" ] || { echo "readdir.sh: ls -f d$n listed $got, not $n + 2" >&2; return 1; }
    echo "$label,$launch,$n,mount-ls-f,$(( t1 - t0 )),$(( r1 - r0 ))" >>"$CSV"
  done
}

export -f populate one_launch now readdirs
export SIZES MNT CSV
echo "build,launch,entries,how,us,readdir_requests" >"$CSV"

first=${BUILDS[0]#*=}
DDIO=$first/tools/ddio timeout -k 10 3600 "$first/tools/ddio-run" -s "$NSERV" --root "$ROOT" \
  --mount "$MNT" -- bash -c 'DDIO='"$first"'/tools/ddio populate' >"$OUT/populate.log" 2>&1 ||
  die "making the directories failed: $(tail -3 "$OUT/populate.log")"

for L in $(seq 1 "$LAUNCHES"); do
  # the builds take turns, in a rotated order each launch
  k=${#BUILDS[@]}
  for j in $(seq 0 $((k - 1))); do
    b=${BUILDS[$(( (j + L - 1) % k ))]}
    label=${b%%=*}; d=${b#*=}
    DDIO=$d/tools/ddio timeout -k 10 1800 "$d/tools/ddio-run" -s "$NSERV" --root "$ROOT" \
      --mount "$MNT" -- bash -c "DDIO=$d/tools/ddio one_launch $label $L" >>"$OUT/launches.log" 2>&1 ||
      die "launch $L of $label failed: $(tail -3 "$OUT/launches.log")"
    echo "launch $L: $label done"
  done
done
echo "uptime after: $(uptime)" >>"$OUT/env.txt"

# ---- the table: median (min-max) ms per build, size and way; requests ----
python3 - "$CSV" "${BUILDS[@]%%=*}" >"$OUT/table.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
labels = sys.argv[2:]
hows = ["ddio-ls", "mount-ls-f"]
sizes = sorted({int(r["entries"]) for r in rows})
def cell(label, n, how):
    v = [int(r["us"]) / 1000 for r in rows
         if r["build"] == label and int(r["entries"]) == n and r["how"] == how]
    q = {int(r["readdir_requests"]) for r in rows
         if r["build"] == label and int(r["entries"]) == n and r["how"] == how}
    if not v:
        return None, "", ""
    m = statistics.median(v)
    return m, "%.1f (%.1f-%.1f)" % (m, min(v), max(v)), "/".join(str(x) for x in sorted(q))
head = "| entries | how |" + "".join(" %s, ms | %s, READDIRs |" % (l, l) for l in labels)
if len(labels) > 1:
    head += "".join(" %s / %s |" % (labels[0], l) for l in labels[1:])
print(head)
print("|" + "---|" * (head.count("|") - 1))
for n in sizes:
    for how in hows:
        cells = [cell(l, n, how) for l in labels]
        line = "| %d | %s |" % (n, how) + "".join(" %s | %s |" % (c[1], c[2]) for c in cells)
        if len(labels) > 1:
            line += "".join(" %s |" % ("%.1fx" % (cells[0][0] / c[0]) if c[0] and cells[0][0] else "")
                            for c in cells[1:])
        print(line)
PY
cat "$OUT/table.md"
