#!/usr/bin/env bash
# md-rate-ab.sh: the servers' part of a metadata operation (bench/md-rate:
# create, stat, open-close, remove of N files through the client core, 2
# servers, no FUSE) for two or more builds, taking turns in an order that
# rotates every round, so that none always runs right after the others'
# deletes (on ext4 without a journal a create skips over every inode freed
# in the last minutes, so its cost depends on what ran just before).
# Prints, per operation, each round's microseconds per operation and the
# median ratio of each build to the first. See bench/README.md.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"
BUILDS=(); R=6; N=2000; OUT=""; TMP=""
while [ $# -gt 0 ]; do
  case "$1" in
    -b) BUILDS+=("$2"); shift 2 ;;
    -n) R=$2; shift 2 ;;
    -f) N=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    --tmp) TMP=$2; shift 2 ;;
    -h|--help) echo "usage: bench/md-rate-ab.sh -b LABEL=DIR -b LABEL=DIR... [-n ROUNDS] [-f FILES] [-o OUT] [--tmp DIR]"
               echo "  --tmp: the servers' roots (default OUT/tmp): the file system measured"; exit 0 ;;
    *) echo "md-rate-ab.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ ${#BUILDS[@]} -ge 2 ] || { echo "md-rate-ab.sh: give two builds or more (-b LABEL=DIR)" >&2; exit 2; }
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-md-rate-ab"
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd) || exit 2
[ -n "$TMP" ] || TMP="$OUT/tmp"
mkdir -p "$TMP" || exit 2
{ echo "command: $CMDLINE"; echo "date: $(date -u +%FT%TZ)"; echo "files $N, rounds $R"
  for b in "${BUILDS[@]}"; do echo "ddio ${b%%=*}: ${b#*=} $(git -C "${b#*=}" rev-parse --short HEAD 2>/dev/null)"; done
  echo "host: $(nproc) cores, $(uname -r), roots on: $(df -T "$TMP" | awk 'NR==2 {print $1, $2}')"; } > "$OUT/env.txt"
echo "round,build,op,n,seconds,ops_per_s" > "$OUT/rate.csv"
nb=${#BUILDS[@]}
for ((r = 0; r < R; r++)); do
  for ((k = 0; k < nb; k++)); do
    b=${BUILDS[$(((r + k) % nb))]}
    d=${b#*=}
    rm -rf "$TMP/srv"
    timeout -k 10 600 "$d/tools/ddio-run" -s 2 --root "$TMP/srv" -- \
      bash -c "\"$d/bench/md-rate\" \"\$DDIO_SERVERS\" /core $N" > "$TMP/out" 2> "$TMP/err" \
      || { echo "round $((r + 1)) ${b%%=*} failed: $(tail -3 "$TMP/err")" >&2; exit 1; }
    awk -F, -v r=$((r + 1)) -v b="${b%%=*}" '$1 == "MDRATE" {print r "," b "," $2 "," $3 "," $4 "," $5}' \
      "$TMP/out" >> "$OUT/rate.csv"
  done
done
rm -rf "$TMP/srv" "$TMP/out" "$TMP/err"; rmdir "$TMP" 2>/dev/null
python3 - "$OUT/rate.csv" "${BUILDS[@]%%=*}" <<'PY' | tee "$OUT/README.tables.md"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
builds = sys.argv[2:]
print("Microseconds per operation, one column per round (the builds' order rotates each round); "
      "ratio: the median of the build's times over the median of %s's.\n" % builds[0])
print("| op | build | rounds | median | ratio |")
print("|---|---|---|---|---|")
for op in ("create", "stat", "open", "remove"):
    us = {b: [1e6 * float(x["seconds"]) / int(x["n"]) for x in rows if x["op"] == op and x["build"] == b]
          for b in builds}
    base = statistics.median(us[builds[0]])
    for b in builds:
        m = statistics.median(us[b])
        print("| %s | %s | %s | %.0f | %.2f |" % (op if op != "open" else "open-close", b,
              " ".join("%.0f" % v for v in us[b]), m, m / base))
PY
