#!/usr/bin/env bash
# md-stages.sh: where one metadata operation's time goes, for one or more
# builds taking turns (-b LABEL=DIR): one process's create, stat,
# open-close and remove of N files (a) on the local file system, (b)
# through the ddio mount, (c) through the client core alone
# (bench/md-rate: the servers' round trips, no FUSE), and the requests
# the mount sent per operation (the servers' req.* counters). (b) - (c) is
# what the kernel and FUSE add; (c) is the servers' part. See
# bench/README.md "md-stages.sh".
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"
BUILDS=(); N=1000; L=3; OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    -b) BUILDS+=("$2"); shift 2 ;;
    -n) L=$2; shift 2 ;;
    -f) N=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    -h|--help) echo "usage: bench/md-stages.sh [-b LABEL=DIR]... [-n LAUNCHES] [-f FILES] [-o OUT]"; exit 0 ;;
    *) echo "md-stages.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=("this=$(cd "$here/.." && pwd)")
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-md-stages"
mkdir -p "$OUT/tmp" && OUT=$(cd "$OUT" && pwd) || exit 2
echo "build,launch,path,op,us_per_op" > "$OUT/stages.csv"
{ echo "command: $CMDLINE"; echo "date: $(date -u +%FT%TZ)"; echo "files $N, launches $L"
  for b in "${BUILDS[@]}"; do echo "ddio ${b%%=*}: ${b#*=} $(git -C "${b#*=}" rev-parse --short HEAD 2>/dev/null)"; done
  echo "host: $(nproc) cores, $(uname -r), local fs: $(df -T "$OUT/tmp" | awk 'NR==2 {print $2}')"; } > "$OUT/env.txt"
# one process's loop over N files, printing "op us_per_op" (python: as a
# tool would; the same loop for the local directory and the mount)
loop() {
  python3 - "$1" "$N" <<'PY'
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
ops = [("create", lambda p: os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))),
       ("stat", os.stat), ("open-close", lambda p: os.close(os.open(p, os.O_RDONLY))),
       ("remove", os.unlink)]
for name, fn in ops:
    t = time.perf_counter()
    for i in range(n):
        fn("%s/f%d" % (d, i))
    print(name, "%.1f" % ((time.perf_counter() - t) / n * 1e6))
PY
}
export -f loop
# the builds' order rotates every launch: none always runs right after
# the others' deletes (on ext4 without a journal a create's cost depends
# on the inodes freed in the minutes before it)
nb=${#BUILDS[@]}
for ((l = 1; l <= L; l++)); do
  for ((k = 0; k < nb; k++)); do
    b=${BUILDS[$(((l - 1 + k) % nb))]}
    d=${b#*=} lab=${b%%=*}
    rm -rf "$OUT/tmp/srv" "$OUT/tmp/local"; mkdir -p "$OUT/tmp/mnt" "$OUT/tmp/local"
    timeout -k 10 900 "$d/tools/ddio-run" -s 2 --root "$OUT/tmp/srv" --mount "$OUT/tmp/mnt" -- \
      env N="$N" D="$d" MNT="$OUT/tmp/mnt" LOC="$OUT/tmp/local" bash -c '
        req() { "$D/tools/ddio" stats | awk '\''$2 ~ /^req\./ && $2 != "req.STATS" {s[$2] += $3} END {for (k in s) printf "%s=%d ", substr(k, 5), s[k]}'\''; }
        loop "$LOC" | sed "s/^/local /"
        mkdir "$MNT/st"; r0=$(req); loop "$MNT/st" | sed "s/^/mount /"; r1=$(req)
        echo "requests $r0 | $r1"
        "$D/bench/md-rate" "$DDIO_SERVERS" /core "$N" | awk -F, '\''$1 == "MDRATE" {printf "core %s %.1f\n", ($2 == "open" ? "open-close" : $2), $4 / $3 * 1e6}'\''
      ' > "$OUT/tmp/out" 2> "$OUT/tmp/err" || { echo "launch $l $lab failed: $(tail -3 "$OUT/tmp/err")" >&2; exit 1; }
    awk -v b="$lab" -v l="$l" '$1 ~ /^(local|mount|core)$/ {print b "," l "," $1 "," $2 "," $3}' "$OUT/tmp/out" >> "$OUT/stages.csv"
    grep '^requests' "$OUT/tmp/out" | sed "s/^/$lab launch $l: /" >> "$OUT/requests.txt"
  done
done
rm -rf "$OUT/tmp"
python3 - "$OUT/stages.csv" "$OUT/env.txt" > "$OUT/README.md" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("# One process's metadata operations: local, through the mount, through the client core\n")
print("```\n" + open(sys.argv[2]).read().rstrip() + "\n```\n")
print("Microseconds per operation, median over the launches (range). core: "
      "bench/md-rate, the client core's requests alone (the servers' round "
      "trips); mount - core: what the kernel and FUSE add.\n")
ops = ["create", "stat", "open-close", "remove"]
print("| build | op | local | mount | core | mount - core |\n|---|---|---|---|---|---|")
for b in dict.fromkeys(r["build"] for r in rows):
    for op in ops:
        v = {p: [float(r["us_per_op"]) for r in rows if r["build"] == b and r["op"] == op and r["path"] == p]
             for p in ("local", "mount", "core")}
        f = lambda x: "%.1f (%.1f-%.1f)" % (st.median(x), min(x), max(x)) if x else "-"
        d = "%.1f" % (st.median(v["mount"]) - st.median(v["core"])) if v["mount"] and v["core"] else "-"
        print("| %s | %s | %s | %s | %s | %s |" % (b, op, f(v["local"]), f(v["mount"]), f(v["core"]), d))
PY
cat "$OUT/README.md"
