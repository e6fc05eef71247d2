#!/usr/bin/env bash
# one-copy-cpu.sh: what a hot read through the servers costs the servers'
# CPUs, per build, swapped by bench/ab-swap.sh launch by launch (CPU time
# is far less disturbed by other jobs than a rate is). Each launch: one
# ddio-run session writes a 512 MiB shared file (4 ranks, 1 MiB calls,
# through the servers), then fresh servers on the same root (DDIO_RUN_CPU=1:
# each server's user and system seconds) read it hot with 1 MiB independent
# calls, and fresh servers again read it with one 128 MiB collective call
# per rank (a plain-range collective, as HDF5's contiguous rows); the
# datafiles' pages stay cached between sessions. One line per read:
#   build,round,read,MiB_s,srv_user_s,srv_sys_s,read_mapped_bytes,read_cache_bytes
# usage: bench/one-copy-cpu.sh [-n ROUNDS] -o OUT LABEL=SERVER LABEL=SERVER...
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
B=${DDIO_BUILD:-$(cd "$here/.." && pwd)}
ROUNDS=3 OUT=""
while getopts n:o: o; do
  case $o in n) ROUNDS=$OPTARG ;; o) OUT=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ -n "$OUT" ] && [ $# -ge 2 ] || { sed -n 's/^# usage: //p' "$0"; exit 2; }
mkdir -p "$OUT/tmp"
OUT=$(cd "$OUT" && pwd)
"$B/mpich/bin/mpicc" -O2 -o "$OUT/tmp/ior-style" "$here/ior-style.c" || exit 1
echo "build,round,read,MiB_s,srv_user_s,srv_sys_s,read_mapped_bytes,read_cache_bytes" > "$OUT/cpu.csv"
export B OUT
"$here/ab-swap.sh" -n "$ROUNDS" -f "$B/ioserver/ddio-server" "$@" -- bash -c '
  root="$OUT/tmp/root"; rm -rf "$root"; bin="$OUT/tmp/ior-style"
  export DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0
  "$B/tools/ddio-run" -s 2 --root "$root" -- "$B/mpich/bin/mpiexec" -n 4 "$bin" -b 128m -t 1m \
    -w -k -n f ddio:/ > /dev/null 2>&1
  for what in "ind-1m:-t 1m" "coll-128m:-t 128m -c"; do
    log=$(DDIO_RUN_CPU=1 "$B/tools/ddio-run" -s 2 --root "$root" -- bash -c \
      "\"$B/mpich/bin/mpiexec\" -n 4 \"$bin\" -b 128m ${what#*:} -r -k -n f -T hot ddio:/ &&
       \"$B/tools/ddio\" stats" 2>&1)
    rate=$(grep "^RESULT" <<< "$log" | cut -d, -f14,15 | tr , " ")
    cpu=$(awk "/ddio-run: server [0-9]+ cpu/ {u += \$5; s += \$6} END {print u, s}" <<< "$log")
    st=$(awk "\$2 == \"read_mapped_bytes\" {m += \$3} \$2 == \"read_cache_bytes\" {c += \$3} END {print m+0, c+0}" <<< "$log")
    set -- $rate $cpu $st
    [ "${2:-}" = ok ] || { echo "$AB_LABEL round $AB_ROUND ${what%%:*}: read failed" >&2; echo "$log" | tail -5 >&2; }
    echo "$AB_LABEL,$AB_ROUND,${what%%:*},${1:-},${3:-},${4:-},${5:-},${6:-}" >> "$OUT/cpu.csv"
  done
  rm -rf "$root"'
rm -rf "$OUT/tmp"
python3 - "$OUT/cpu.csv" <<'PY'
import csv, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    if r["MiB_s"]:
        by.setdefault((r["build"], r["read"]), []).append(r)
print("| build | read | MiB/s | servers' CPU s per GiB (user + sys) | mapped / cached bytes |")
print("|---|---|---|---|---|")
for (b, w), v in by.items():
    cpu = [(float(r["srv_user_s"]) + float(r["srv_sys_s"])) / 0.5 for r in v]
    mb = [float(r["MiB_s"]) for r in v]
    frac = sum(float(r["read_mapped_bytes"]) for r in v) / max(1, sum(float(r["read_cache_bytes"]) for r in v))
    print(f"| {b} | {w} | {st.median(mb):.0f} ({min(mb):.0f}-{max(mb):.0f}) | "
          f"{st.median(cpu):.3f} ({min(cpu):.3f}-{max(cpu):.3f}) | {frac:.2f} |")
PY
