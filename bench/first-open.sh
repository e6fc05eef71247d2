#!/usr/bin/env bash
# first-open.sh: a job's first MPI_File_open, on ddio over TCP
# and over UCX against ROMIO's ufs:, one or more ddio builds interleaved
# launch by launch (so a before/after comparison shares the machine's
# conditions). Each launch: fresh servers (ddio-run), the store's and the
# ufs file's pages dropped (fdatasync + posix_fadvise DONTNEED, as ior.sh's
# cold reads), then bench/first-open.c: every rank opens the file read-only
# (the job's first open), closes it, opens it again (the second open).
# See bench/README.md "first-open.sh". Usage: bench/first-open.sh [options]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CMDLINE="$0 $*"

usage() {
  cat <<EOF
usage: bench/first-open.sh [options]

  -b, --build LABEL=DIR  a ddio build to measure (its mpich/, tools/ddio-run,
                         ioserver/ddio-server; a copy of those three will do);
                         repeat to compare builds, launches interleaved
                         (default: this=the repository this script is in)
  -n, --launches N       launches per build, method and rank count (default 10)
  -P, --ranks LIST       rank counts (default 1,4)
  -m, --methods LIST     subset of ufs,ddio-tcp,ddio-ucx (default all three)
  -s, --servers N        ddio servers (default 2)
      --stages           DDIO_TIMING=1 in the ranks: the driver's stage lines
                         (stderr) kept in stages.txt
      --report           no launches: SUMMARY.md and first-open.png again from
                         OUT's first-open.csv
  -o, --out DIR          results (default bench/results/DATE-first-open)
  -h, --help
EOF
}

BUILDS=(); N=10; PLIST=1,4; METHODS=ufs,ddio-tcp,ddio-ucx; NSERV=2; STAGES=0; OUT=""; REPORT=0
while [ $# -gt 0 ]; do
  case "$1" in
    -b|--build) BUILDS+=("$2"); shift 2 ;;
    -n|--launches) N=$2; shift 2 ;;
    -P|--ranks) PLIST=$2; shift 2 ;;
    -m|--methods) METHODS=$2; shift 2 ;;
    -s|--servers) NSERV=$2; shift 2 ;;
    --stages) STAGES=1; shift ;;
    --report) REPORT=1; shift ;;
    -o|--out) OUT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "first-open.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
die() { echo "first-open.sh: $*" >&2; exit 2; }
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=("this=$(cd "$here/.." && pwd)")
[ -n "$OUT" ] || OUT="$here/results/$(date -u +%Y-%m-%d)-first-open"
mkdir -p "$OUT/tmp" "$OUT/logs" "$here/bin" || die "cannot make $OUT"
OUT=$(cd "$OUT" && pwd)

if [ $REPORT = 0 ]; then
declare -A DIR
LABELS=()
for b in "${BUILDS[@]}"; do
  l=${b%%=*}; d=${b#*=}
  [ "$l" != "$b" ] && [ -n "$l" ] || die "--build LABEL=DIR, not '$b'"
  for f in "$d/mpich/bin/mpicc" "$d/mpich/bin/mpiexec" "$d/tools/ddio-run"; do
    [ -x "$f" ] || die "$f missing (build $l)"
  done
  "$d/mpich/bin/mpicc" -std=c11 -O2 -Wall -Wextra -Werror -o "$here/bin/first-open-$l" \
    "$here/first-open.c" || die "cannot build first-open for $l"
  DIR[$l]=$d; LABELS+=("$l")
done

{
  echo "command: $CMDLINE"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%S+00:00)"
  echo "host: $(hostname), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))"
  echo "kernel: $(uname -r)"
  for l in "${LABELS[@]}"; do
    if git -C "${DIR[$l]}" rev-parse --git-dir > /dev/null 2>&1; then
      echo "build $l: ${DIR[$l]} at $(git -C "${DIR[$l]}" rev-parse --short HEAD)$(git -C "${DIR[$l]}" diff --quiet HEAD || echo ' (with uncommitted changes)')"
    else   # a copied build: its COMMIT file, if one was written beside it
      echo "build $l: ${DIR[$l]} (a copy; COMMIT: $(cat "${DIR[$l]}/COMMIT" 2>/dev/null || echo unknown))"
    fi
  done
  echo "labels: ${LABELS[*]}"
  echo "launches: $N; ranks: $PLIST; methods: $METHODS; servers: $NSERV"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$OUT/machine.txt"

drop() {
  "$here/drop-pages.py" "$@" || die "fadvise failed"
}

# run METHOD LABEL P ARGS...: the program on METHOD's file with build LABEL
run() {
  local m=$1 l=$2 p=$3; shift 3
  local d=${DIR[$l]} target cmd=()
  case "$m" in
    ufs) target="ufs:$OUT/tmp/ufs/file" ;;
    ddio-*) target="ddio:/file"
            cmd=("$d/tools/ddio-run" -s "$NSERV" --root "$OUT/tmp/$m" --transport "${m#ddio-}" --) ;;
    *) die "unknown method $m" ;;
  esac
  # the build's own libmpich (a copied build's programs carry the original's
  # RUNPATH, which LD_LIBRARY_PATH overrides)
  PATH="$d/mpich/bin:$PATH" LD_LIBRARY_PATH="$d/mpich/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout -k 10 300 "${cmd[@]}" "$d/mpich/bin/mpiexec" -n "$p" \
    "$here/bin/first-open-$l" "$@" "$target"
}

# the files, once, with the first build
rm -rf "$OUT/tmp"/*; mkdir -p "$OUT/tmp/ufs"
for m in ${METHODS//,/ }; do
  run "$m" "${LABELS[0]}" 2 -c > /dev/null 2> "$OUT/logs/setup-$m.log" || die "setup $m failed: $OUT/logs/setup-$m.log"
done

echo "build,method,ranks,launch,rank,first_ms,second_ms" > "$OUT/first-open.csv"
[ $STAGES = 1 ] && : > "$OUT/stages.txt"
for i in $(seq 1 "$N"); do
  for p in ${PLIST//,/ }; do
    for m in ${METHODS//,/ }; do
      # the builds' order turns every launch: the one run second gains
      # from what the first left in the caches (ufs:, the same code, was
      # 0.1 against 0.3 ms in 27 of 30 pairs with a fixed order)
      order=()
      for k in "${!LABELS[@]}"; do order+=("${LABELS[$(( (k + i) % ${#LABELS[@]} ))]}"); done
      for l in "${order[@]}"; do
        drop "$OUT/tmp"
        log="$OUT/logs/$l-$m-P$p-$i.log"
        if [ $STAGES = 1 ]; then
          out=$(DDIO_TIMING=1 run "$m" "$l" "$p" 2> "$log")
        else
          out=$(run "$m" "$l" "$p" 2> "$log")
        fi
        rc=$?
        [ $rc = 0 ] || echo "first-open.sh: $l $m P=$p launch $i: exit $rc ($log)" >&2
        echo "$out" | awk -F, -v pre="$l,$m,$p,$i" '$1 == "FIRSTOPEN" {print pre "," $2 "," $3 "," $4}' >> "$OUT/first-open.csv"
        [ $STAGES = 1 ] && grep '^ddio-timing' "$log" | sed "s/^/$l,$m,P$p,$i: /" >> "$OUT/stages.txt"
      done
    done
  done
  echo "[$(date -u +%H:%M:%S)] launch $i of $N done"
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
fi

# the summary: per build, method and P, the slowest rank's first open of each
# launch: median (min-max) over launches; the second open likewise; and
# first-open.png when matplotlib is there
py=python3
/usr/bin/python3 -c 'import matplotlib' 2> /dev/null && py=/usr/bin/python3
"$py" - "$OUT" <<'PY'
import csv, os, statistics, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(os.path.join(out, "first-open.csv"))))
runs = {}
for r in rows:
    k = (r["build"], r["method"], int(r["ranks"]), int(r["launch"]))
    f, s = runs.get(k, (0.0, 0.0))
    runs[k] = (max(f, float(r["first_ms"])), max(s, float(r["second_ms"])))
groups = {}
for (b, m, p, _), v in runs.items():
    groups.setdefault((b, m, p), []).append(v)
# the builds in the order given (machine.txt's labels line), then the methods
labels = []
for line in open(os.path.join(out, "machine.txt")):
    if line.startswith("labels:"):
        labels = line.split()[1:]
for r in rows:
    if r["build"] not in labels:
        labels.append(r["build"])
order = []
for r in rows:
    k = (r["build"], r["method"], int(r["ranks"]))
    if k not in order:
        order.append(k)
seen = list(order)
order.sort(key=lambda k: (labels.index(k[0]), seen.index(k)))
def fmt(v):
    return f"{statistics.median(v):.1f} ({min(v):.1f}-{max(v):.1f})"
with open(os.path.join(out, "SUMMARY.md"), "w") as f:
    f.write("First MPI_File_open of a job, ms: the slowest rank's, median over launches "
            "(min-max); the second open of the same file in the same job beside it.\n\n")
    f.write("| build | method | P | launches | first open | second open |\n|---|---|---|---|---|---|\n")
    meth = list(dict.fromkeys(k[1] for k in order))
    for k in sorted(order, key=lambda k: (k[2], meth.index(k[1]), labels.index(k[0]))):
        v = groups[k]
        f.write(f"| {k[0]} | {k[1]} | {k[2]} | {len(v)} | {fmt([a for a, _ in v])} | "
                f"{fmt([b for _, b in v])} |\n")
print(open(os.path.join(out, "SUMMARY.md")).read())

# BREAKDOWN.md from --stages' lines: each connection's stages, and the
# driver's first open per rank (the lines of opens that made connections)
import collections, re
stages = os.path.join(out, "stages.txt")
if os.path.exists(stages) and os.path.getsize(stages):
    conn, opn = collections.defaultdict(list), collections.defaultdict(list)
    for line in open(stages):
        m = re.match(r"(\w+),(\S+),P(\d+),(\d+): ddio-timing pid \d+ (connect|open) \S+ (.*)", line)
        if not m:
            continue
        b, meth, p, _, kind, rest = m.groups()
        w, kv = rest.split(), {}
        for k, v in zip(w[0::2], w[1::2]):
            try:
                kv[k] = float(v)
            except ValueError:
                pass
        key = (meth, int(p), b)
        if kind == "connect":
            conn[key].append(kv)
        elif kv.get("connect_ms", 0) > 0.05:
            opn[key].append(kv)
    def cell(v):
        return "%.2f (%.1f)" % (statistics.median(v), statistics.quantiles(v, n=10)[-1] if len(v) > 1 else v[0])
    def keyed(d):
        return sorted(d, key=lambda k: (k[0], k[1], labels.index(k[2]) if k[2] in labels else 99))
    cols = ["secret_ms", "connect_ms", "hello_ms", "auth_ms", "ucx_init_ms", "ucxaddr_ms", "endpoint_ms", "total_ms"]
    with open(os.path.join(out, "BREAKDOWN.md"), "w") as f:
        f.write("Per connection made (each rank, each server), ms, median (p90) (a connection "
                "dialled beside another one counts the wait for the UCX context the other builds "
                "in its ucx_init):\n\n")
        f.write("| method | P | build | n | " + " | ".join(c[:-3] for c in cols) + " |\n")
        f.write("|" + "---|" * (4 + len(cols)) + "\n")
        for k in keyed(conn):
            v = conn[k]
            f.write("| %s | %d | %s | %d | " % (k + (len(v),)) +
                    " | ".join(cell([x.get(c, 0) for x in v]) for c in cols) + " |\n")
        f.write("\nThe driver's first open per rank (open_file), ms, median (p90): all "
                "connections, the transport check, OPEN on the servers:\n\n")
        f.write("| method | P | build | n | connections | transport | OPEN |\n|---|---|---|---|---|---|---|\n")
        for k in keyed(opn):
            v = opn[k]
            f.write("| %s | %d | %s | %d | " % (k + (len(v),)) +
                    " | ".join(cell([x.get(c, 0) for x in v]) for c in ["connect_ms", "transport_ms", "open_ms"]) + " |\n")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
builds = [b for b in labels if any(k[0] == b for k in order)]
methods = list(dict.fromkeys(k[1] for k in order))
ranks = sorted(set(k[2] for k in order))
fig, axes = plt.subplots(1, len(ranks), figsize=(4.5 * len(ranks), 4), squeeze=False)
w = 0.8 / len(builds)
for ax, p in zip(axes[0], ranks):
    for j, b in enumerate(builds):
        xs, ys, lo, hi = [], [], [], []
        for i, m in enumerate(methods):
            v = [a for a, _ in groups.get((b, m, p), [])]
            if not v:
                continue
            med = statistics.median(v)
            xs.append(i + (j - (len(builds) - 1) / 2) * w)
            ys.append(med)
            lo.append(med - min(v))
            hi.append(max(v) - med)
        ax.bar(xs, ys, w, yerr=[lo, hi], capsize=3, label=b)
        for x, y in zip(xs, ys):
            ax.annotate(f"{y:.1f}", (x, y), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(methods)))
    ax.set_xticklabels(methods)
    ax.set_title(f"P = {p}")
    ax.set_ylabel("first MPI_File_open, ms (slowest rank)")
    ax.legend(fontsize=8)
fig.suptitle("a job's first open: median over launches, bars min-max", fontsize=10)
fig.tight_layout()
fig.savefig(os.path.join(out, "first-open.png"), dpi=110)
PY
