#!/usr/bin/env bash
# mdtest-mount.sh: IOR's mdtest (file only: -F) through the ddio mount
# against the local file system (a directory on the same disk as the
# servers' storage), in the same ddio-run session, alternating, for each
# setting of the mount's caches: the kernel's (DDIO_ATTR_TIMEOUT, -T; the
# mount's default 10 s) and the mount's own, kept coherent by the servers
# (DDIO_CACHE_TIMEOUT, -C; default 60; 0 keeps nothing); for one build or several taking turns
# (-B NAME=DIR); and the requests each mount operation sends (the servers'
# req.* counters). See bench/README.md "mdtest-mount.sh".
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"
DDIO_BUILD=${DDIO_BUILD:-$(cd "$here/.." && pwd)}

usage() {
  cat <<EOF
usage: bench/mdtest-mount.sh [options]

  --ior-src DIR        IOR's source (a clone of github.com/hpc/ior; default
                       \$IOR_SRC): mdtest is built from it with Debian's
                       mpicc.mpich into \$DDIO_BENCH_CACHE/ior-COMMIT
                       (default ~/.cache/ddio-bench), once
  --mdtest PATH        a built mdtest instead
  -n, --launches N     launches of each case (default 3)
  -f, --files LIST     files per rank (default 500; e.g. 500,2000)
  -P, --ranks N        ranks (default 4)
  -s, --servers N      ddio servers (default 2)
  -T, --timeouts LIST  the kernel's attribute timeouts, seconds (default 0,10)
  -C, --cache LIST     the mount's own cache timeouts, seconds (default 60;
                       a build without that cache ignores it)
  -B NAME=DIR          a build to measure (repeatable; default this=\$DDIO_BUILD):
                       the builds take turns within each launch
  -o, --out DIR        results (default bench/results/DATE-mdtest-mount)
      --tmp DIR        scratch: the local directory and the servers' roots
                       (default OUT/tmp; the same disk for both)
  -h, --help

environment: DDIO_BUILD (default: this repository) is the build measured:
\$DDIO_BUILD/tools/ddio-run, tools/ddio, tools/ddio-fuse, ioserver/ddio-server.
EOF
}

IOR_SRC=${IOR_SRC:-}; MDTEST=""; LAUNCHES=3; FILES=500; P=4; NSERV=2; TIMEOUTS=0,10; CACHES=60
BUILDS=()
OUT=""; TMP=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ior-src) IOR_SRC=$2; shift 2 ;;
    --mdtest) MDTEST=$2; shift 2 ;;
    -n|--launches) LAUNCHES=$2; shift 2 ;;
    -f|--files) FILES=$2; shift 2 ;;
    -P|--ranks) P=$2; shift 2 ;;
    -s|--servers) NSERV=$2; shift 2 ;;
    -T|--timeouts) TIMEOUTS=$2; shift 2 ;;
    -C|--cache) CACHES=$2; shift 2 ;;
    -B) BUILDS+=("$2"); shift 2 ;;
    -o|--out) OUT=$2; shift 2 ;;
    --tmp) TMP=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "mdtest-mount.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
die() { echo "mdtest-mount.sh: $*" >&2; exit 2; }
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=("this=$DDIO_BUILD")
for b in "${BUILDS[@]}"; do
  d=${b#*=}
  for f in "$d/tools/ddio-run" "$d/tools/ddio" "$d/tools/ddio-fuse" "$d/ioserver/ddio-server"; do
    [ -x "$f" ] || die "$f missing: build ddio first or set DDIO_BUILD"
  done
done
command -v mpiexec.mpich >/dev/null || die "mpiexec.mpich missing (Debian's mpich)"
[ -e /dev/fuse ] && command -v fusermount3 >/dev/null || die "FUSE unavailable"

# ---- mdtest: built once from the given source, its commit recorded ----------------
build_mdtest() {
  [ -n "$IOR_SRC" ] || die "no mdtest: pass --ior-src DIR (a clone of github.com/hpc/ior) or --mdtest PATH"
  local commit dest
  commit=$(git -C "$IOR_SRC" rev-parse HEAD) || die "$IOR_SRC is not a git clone"
  dest=${DDIO_BENCH_CACHE:-$HOME/.cache/ddio-bench}/ior-${commit:0:12}
  if [ ! -x "$dest/bin/mdtest" ]; then
    echo "building mdtest $commit into $dest" >&2
    rm -rf "$dest/src" && mkdir -p "$dest" && git clone -q "$IOR_SRC" "$dest/src" \
      && git -C "$dest/src" checkout -q "$commit" \
      && (cd "$dest/src" && ./bootstrap && CC=mpicc.mpich MPICC=mpicc.mpich ./configure --prefix="$dest" \
          && flock /tmp/ddio-make.lock make -j2 && make install) >"$dest/build.log" 2>&1 \
      || die "building mdtest failed: $dest/build.log"
  fi
  MDTEST=$dest/bin/mdtest
  IOR_COMMIT=$commit
}
IOR_COMMIT=unknown
if [ -z "$MDTEST" ]; then build_mdtest; fi
[ -x "$MDTEST" ] || die "$MDTEST is not executable"

[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-mdtest-mount"
[ -n "$TMP" ] || TMP="$OUT/tmp"
mkdir -p "$OUT/logs" "$TMP" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd); TMP=$(cd "$TMP" && pwd)
RAW=$OUT/raw.tsv REQ=$OUT/requests.tsv
printf 'launch\tfiles\ttimeout\tfs\top\trate\n' >"$RAW"
printf 'timeout\top\trequests_per_op\n' >"$REQ"
{
  echo "command: $CMDLINE"
  echo "date: $(date -u +%FT%TZ)"
  for b in "${BUILDS[@]}"; do
    d=${b#*=}
    echo "ddio ${b%%=*}: $d $(git -C "$d" rev-parse --short HEAD 2>/dev/null)$(git -C "$d" diff --quiet 2>/dev/null || echo ' (modified)')"
  done
  echo "mdtest: $MDTEST (IOR commit $IOR_COMMIT)"
  echo "ranks $P, servers $NSERV, files per rank $FILES, kernel timeouts $TIMEOUTS, cache timeouts $CACHES, launches $LAUNCHES"
  echo "host: $(nproc) cores, $(uname -r), local fs: $(df -T "$TMP" | awk 'NR==2 {print $2, $1}')"
} >"$OUT/env.txt"
cat "$OUT/env.txt"

# ---- one session: the requests per operation, then mdtest on both, alternating ----
# (inside ddio-run: DDIO_SERVERS set, the mount on $MNT)
session_script() {
  cat <<'EOS'
set -u
req() { "$DDIO" stats | awk '$2 ~ /^req\./ && $2 != "req.STATS" && $2 != "req.HELLO" && $2 != "req.AUTH" {s[$2] += $3} END {for (k in s) print k, s[k]}' | sort; }
count() {   # requests per create, stat, open-close, remove of 200 files
  mkdir -p "$MNT/count"
  local op code
  for op in create stat open-close remove; do
    case $op in
      create) code='os.close(os.open(p, os.O_CREAT | os.O_WRONLY, 0o644))' ;;
      stat) code='os.stat(p)' ;;
      open-close) code='os.close(os.open(p, os.O_RDONLY))' ;;
      remove) code='os.unlink(p)' ;;
    esac
    req >"$TMPD/req.a"
    python3 -c "import os, sys
for i in range(200):
    p = '%s/count/f%d' % (sys.argv[1], i)
    $code" "$MNT"
    req >"$TMPD/req.b"
    printf '%s\t%s\t%s\n' "$T" "$op" "$(join -a2 -e0 -o 0,1.2,2.2 "$TMPD/req.a" "$TMPD/req.b" \
      | awk '$3 > $2 {printf "%s%s %.2f", sep, substr($1, 5), ($3 - $2) / 200; sep = ", "}')"
  done
  rmdir "$MNT/count"
}
md() {   # md FS DIR N
  rm -rf "$2/md"
  mpiexec.mpich -n "$P" "$MDTEST" -n "$3" -F -d "$2/md" >"$LOGS/$L-n$3-T$T-$1.log" 2>&1 || return 1
  awk -v l="$L" -v n="$3" -v t="$T" -v fs="$1" '/^ +File (creation|stat|read|removal) / {
      op = $2 == "read" ? "open-close" : ($2 == "creation" ? "create" : ($2 == "removal" ? "remove" : $2));
      printf "%s\t%s\t%s\t%s\t%s\t%s\n", l, n, t, fs, op, $4 }' "$LOGS/$L-n$3-T$T-$1.log" >>"$RAW"
  rm -rf "$2/md"
}
[ "$L" != 1 ] || count >>"$REQ"
for n in ${FILES//,/ }; do
  if [ $((L % 2)) = 1 ]; then md mount "$MNT" "$n" && md local "$LOCAL" "$n"
  else md local "$LOCAL" "$n" && md mount "$MNT" "$n"; fi || exit 1
done
EOS
}
mkdir -p "$TMP/mnt" "$TMP/local" "$TMP/s"
session_script >"$TMP/session.sh"
# one configuration's label: build, kernel timeout, cache timeout (the
# builds' order turns around every launch, so none always goes first)
for ((L = 1; L <= LAUNCHES; L++)); do
  order=("${BUILDS[@]}")
  if [ $((L % 2)) = 0 ]; then
    order=(); for ((i = ${#BUILDS[@]} - 1; i >= 0; i--)); do order+=("${BUILDS[$i]}"); done
  fi
  for b in "${order[@]}"; do
    d=${b#*=}; RUN=$d/tools/ddio-run; DDIO=$d/tools/ddio
    for T in ${TIMEOUTS//,/ }; do
      for C in ${CACHES//,/ }; do
        K="${b%%=*}-k$T-c$C"
        echo "launch $L, $K" >&2
        rm -rf "$TMP/srv"
        DDIO_ATTR_TIMEOUT=$T DDIO_CACHE_TIMEOUT=$C timeout -k 10 3600 "$RUN" -s "$NSERV" --root "$TMP/srv" --mount "$TMP/mnt" -- \
          env L="$L" T="$K" P="$P" FILES="$FILES" MDTEST="$MDTEST" DDIO="$DDIO" MNT="$TMP/mnt" \
          LOCAL="$TMP/local" RAW="$RAW" REQ="$REQ" LOGS="$OUT/logs" TMPD="$TMP/s" bash "$TMP/session.sh" \
          >"$OUT/logs/session-$L-$K.log" 2>&1 || die "launch $L ($K) failed: $OUT/logs/session-$L-$K.log"
      done
    done
  done
done
rm -rf "$TMP"

# ---- the table: rates (median, range) and the mount / local ratio per launch pair ----
python3 - "$RAW" "$REQ" "$OUT/env.txt" >"$OUT/README.md" <<'PY'
import csv, statistics as st, sys
raw = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
req = list(csv.DictReader(open(sys.argv[2]), delimiter="\t"))
env = open(sys.argv[3]).read()
ops = ["create", "stat", "open-close", "remove"]
print("# mdtest through the ddio mount against the local file system\n")
print("```\n" + env.rstrip() + "\n```\n")
print("Rates in ops/s (mdtest's, one iteration per launch): median over the "
      "launches and the range. Ratio: the mount's rate over the local rate of "
      "the same launch (same session, run next to it), median and range. "
      "A column is BUILD-kT-cC: the build, the kernel's attribute and entry "
      "timeout T (DDIO_ATTR_TIMEOUT) and the mount's own cache timeout C "
      "(DDIO_CACHE_TIMEOUT; a build without that cache ignores it).\n")
def fmt(v):
    return "%.0f" % v if v >= 100 else "%.1f" % v
for n in sorted({r["files"] for r in raw}, key=int):
    touts = list(dict.fromkeys(r["timeout"] for r in raw))
    print("## %s files per rank\n" % n)
    head = "| op | local |" + "".join(" mount %s | ratio |" % t for t in touts)
    print(head)
    print("|" + "---|" * (2 + 2 * len(touts)))
    for op in ops:
        loc = [float(r["rate"]) for r in raw if r["files"] == n and r["op"] == op and r["fs"] == "local"]
        row = "| %s | %s (%s-%s) |" % (op, fmt(st.median(loc)), fmt(min(loc)), fmt(max(loc))) if loc else "| %s | - |" % op
        for t in touts:
            pairs = {}
            for r in raw:
                if r["files"] == n and r["op"] == op and r["timeout"] == t:
                    pairs.setdefault(r["launch"], {})[r["fs"]] = float(r["rate"])
            m = [p["mount"] for p in pairs.values() if "mount" in p]
            q = [p["mount"] / p["local"] for p in pairs.values() if "mount" in p and p.get("local")]
            row += " %s (%s-%s) | %.3f (%.3f-%.3f) |" % (fmt(st.median(m)), fmt(min(m)), fmt(max(m)),
                                                        st.median(q), min(q), max(q)) if m and q else " - | - |"
        print(row)
    print()
print("## Requests per operation\n")
print("Requests the servers received per operation through the mount (the "
      "servers' `req.*` counters around 200 operations by one process, "
      "summed over the servers; HELLO and AUTH of the counting tool left out).\n")
print("| configuration | op | requests per operation |\n|---|---|---|")
for r in req:
    print("| %s | %s | %s |" % (r["timeout"], r["op"], r["requests_per_op"] or "none"))
PY
cat "$OUT/README.md"
