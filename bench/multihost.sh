#!/usr/bin/env bash
# multihost.sh: the server path as a cluster sees it. Two ddio servers and
# four ranks on two "compute nodes", each a network namespace joined to a
# bridge by a veth pair (test/multihost/net.sh), every link shaped by tc
# (htb, both directions) to a rate: by default half of the bare veth stream
# measured first, in the same run (two cores cannot drive more). Then, per
# launch: the shaped links' own stream rate (one stream, and one per server
# at once: the limit of two servers' links), and IOR's shared-file cases
# (bench/ior-style.c) over ddio at each transfer size, independent and
# collective, write then read, each phase's rate against that limit.
# Needs root (ip netns, tc). Writes OUT/multihost.csv, OUT/SUMMARY.md,
# OUT/machine.txt. Usage:
#   bench/multihost.sh [-n LAUNCHES] [-m MIB_PER_RANK] [-t XFERS] [-r MIBPS]
#                      [-T TRANSPORT] [-o OUT]
# (-r: the shaped rate in MiB/s instead of half the bare stream)
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd); top=$(cd "$here/.." && pwd)
N=3 MIB=128 XFERS=64k,1m,4m RATE="" XPORT="" OUT=""
while [ $# -gt 0 ]; do
  case "$1" in
    -n) N=$2; shift 2 ;; -m) MIB=$2; shift 2 ;; -t) XFERS=$2; shift 2 ;;
    -r) RATE=$2; shift 2 ;; -T) XPORT=$2; shift 2 ;; -o) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "multihost: unknown option $1" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "multihost: needs root (ip netns, tc)" >&2; exit 1; }
OUT=${OUT:-$top/bench/results/$(date +%F)-multihost}
mkdir -p "$OUT"
export PATH="$top/mpich/bin:$PATH" LD_LIBRARY_PATH="$top/mpich/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
work=$(mktemp -d "${TMPDIR:-/tmp}/ddio-mh-bench.XXXXXX")
cc -O2 -pthread -o "$work/tcp-stream" "$here/tcp-stream.c" \
  && mpicc -std=c11 -O2 -o "$work/ior-style" "$here/ior-style.c" || { rm -rf "$work"; exit 1; }
TS=$work/tcp-stream IORS=$work/ior-style
{ uname -a; nproc; free -g | head -2; git -C "$top" rev-parse HEAD; date -Is; } >"$OUT/machine.txt"
CSV=$OUT/multihost.csv
echo "launch,what,xfer,phase,MiB_per_s" >"$CSV"

# shellcheck source=test/multihost/net.sh
. "$top/test/multihost/net.sh"
pids=()
cleanup() {
  local p; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  mh_net_down; rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mh_net_up $(( $$ % 200 + 20 )) || { echo "multihost: cannot make the namespaces" >&2; exit 1; }
in_ns() { local h=$1; shift; ip netns exec "$(mh_nsname "$h")" "$@"; }

# a stream receiver on every host; stream SECONDS SRC:DST...: streams at
# once, each SRC host to DST's receiver; prints their summed MiB/s
# (ip netns exec itself in the background, not a function: $! is then the
# receiver, which the cleanup's kill reaches)
for h in "${MH_NS[@]}"; do ip netns exec "$(mh_nsname "$h")" "$TS" -l 5999 & pids+=($!); done
sleep 0.3
stream() {
  local s=$1 p sum=0 outs=(); shift
  for p in "$@"; do
    in_ns "${p%%:*}" "$TS" "$(mh_ip "${p#*:}")" 5999 "$s" >"$work/st.${p/:/-}" &
    outs+=("$work/st.${p/:/-}")
  done
  wait_streams "${#outs[@]}"
  awk -F, '{ s += $4 } END { printf "%.1f\n", s }' "${outs[@]}"
}
wait_streams() { local j; for ((j = 0; j < $1; j++)); do wait -n 2>/dev/null; done; }

# shape HOST MIBPS: htb at that rate on both ends of HOST's link
shape() {
  local mbit; mbit=$(awk -v r="$2" 'BEGIN { printf "%d", r * 8.388608 }')
  local ns dev
  for ns in "$(mh_nsname "$1")" "$MH_SW"; do
    dev=$MH_BR; [ "$ns" = "$MH_SW" ] && dev=$(mh_veth "$1")
    ip netns exec "$ns" tc qdisc replace dev "$dev" root handle 1: htb default 10 \
      && ip netns exec "$ns" tc class replace dev "$dev" parent 1: classid 1:10 htb \
         rate "${mbit}mbit" ceil "${mbit}mbit" burst 256k cburst 256k || return 1
  done
}

bare=$(stream 3 cn0:srv0)
echo "0,bare-stream,,,$bare" >>"$CSV"
[ -n "$RATE" ] || RATE=$(awk -v b="$bare" 'BEGIN { printf "%d", b / 2 }')
echo "bare veth stream: $bare MiB/s; links shaped to $RATE MiB/s" >&2
for h in "${MH_NS[@]}"; do shape "$h" "$RATE" || { echo "multihost: tc failed" >&2; exit 1; }; done
echo "0,shaped-rate,,,$RATE" >>"$CSV"

# the servers, each in its namespace, with a fresh secret
( umask 077 && head -c 32 /dev/urandom | base64 >"$work/secret" )
servers=""
for i in 0 1; do
  mkdir -p "$work/root$i"
  ip netns exec "$(mh_nsname "srv$i")" "$top/ioserver/ddio-server" --listen "$(mh_ip "srv$i"):0" \
    --port-file "$work/port$i" --root "$work/root$i" --log-level warn \
    --secret-file "$work/secret" ${XPORT:+--transport "$XPORT"} 2>"$work/srv$i.log" &
  pids+=($!)
  for ((t = 0; t < 500; t++)); do [ -s "$work/port$i" ] && break; sleep 0.02; done
  [ -s "$work/port$i" ] || { cat "$work/srv$i.log" >&2; exit 1; }
  servers="$servers${servers:+,}$(mh_ip "srv$i"):$(cat "$work/port$i")"
done
MPIRUN=(ip netns exec "$(mh_nsname cn0)" mpiexec -launcher ssh
        -launcher-exec "$top/test/multihost/ns-launch" -iface "$MH_BR"
        -hosts "$(mh_nsname cn0):2,$(mh_nsname cn1):2" -n 4
        -genv DDIO_SERVERS "$servers" -genv DDIO_SECRET_FILE "$work/secret"
        -genv PATH "$PATH" -genv LD_LIBRARY_PATH "$LD_LIBRARY_PATH")
[ -n "$XPORT" ] && MPIRUN+=(-genv DDIO_TRANSPORT "$XPORT")

IFS=, read -r -a xfers <<<"$XFERS"
for ((i = 1; i <= N; i++)); do
  echo "launch $i" >&2
  echo "$i,link-1-stream,,,$(stream 3 cn0:srv0)" >>"$CSV"
  echo "$i,link-limit,,,$(stream 3 cn0:srv0 cn1:srv1)" >>"$CSV"
  for x in "${xfers[@]}"; do
    for mode in ind coll; do
      c=(); [ $mode = coll ] && c=(-c)
      "${MPIRUN[@]}" "$IORS" -b "${MIB}m" -t "$x" "${c[@]}" -w -r -n "$mode-$x" "ddio:/mh-" \
        >"$work/ior.out" 2>&1 || { cat "$work/ior.out" >&2; exit 1; }
      awk -F, -v i="$i" -v m="$mode" -v x="$x" '$1 == "RESULT" {
        if ($15 != "ok") { print "multihost: " $0 > "/dev/stderr"; exit 1 }
        print i ",ddio-" m "," x "," $3 "," $14 }' "$work/ior.out" >>"$CSV" || exit 1
    done
  done
done

python3 - "$CSV" >"$OUT/SUMMARY.md" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
get = lambda w: [float(r["MiB_per_s"]) for r in rows if r["what"] == w]
lim = statistics.median(get("link-limit"))
print(f"bare veth stream {get('bare-stream')[0]:.0f} MiB/s; links shaped to "
      f"{get('shaped-rate')[0]:.0f} MiB/s; one shaped stream "
      f"{statistics.median(get('link-1-stream')):.0f} MiB/s; two servers' links at once "
      f"(the limit) {lim:.0f} MiB/s (medians)\n")
print("| case | transfer | phase | MiB/s median (min-max) | of the limit |")
print("|---|---|---|---|---|")
seen = []
for r in rows:
    k = (r["what"], r["xfer"], r["phase"])
    if not r["what"].startswith("ddio-") or k in seen: continue
    seen.append(k)
    v = [float(x["MiB_per_s"]) for x in rows if (x["what"], x["xfer"], x["phase"]) == k]
    m = statistics.median(v)
    print(f"| {k[0]} | {k[1]} | {k[2]} | {m:.0f} ({min(v):.0f}-{max(v):.0f}) | {m / lim:.2f} |")
PY
cat "$OUT/SUMMARY.md"
