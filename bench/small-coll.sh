#!/usr/bin/env bash
# small-coll.sh: small contiguous collective calls against the same bytes
# moved by independent calls (bench/ior-style.c's sf-coll and sf-ind, one
# launch per build, transport and same-host mode, both cases in it), on
# ddio with 4 ranks and 2 servers; builds, transports and modes alternated
# round by round, the builds' order rotated. See bench/README.md.
# Usage: bench/small-coll.sh [options]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
CMDLINE="$0 $*"

usage() {
  cat <<EOF
usage: bench/small-coll.sh [options]

  -n, --rounds N        rounds (default 3)
  -t, --xfers LIST      call sizes (default 8,4k,16k,64k,1m)
  -T, --transports LIST DDIO_TRANSPORT values (default tcp,auto)
  -l, --local LIST      same-host shortcuts: on (the default), off
                        (DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0: every byte
                        through the servers) (default on,off)
  -b, --build LABEL=LIBDIR
                        a build to measure: LIBDIR holds its libmpich.so.12
                        (put first on LD_LIBRARY_PATH); repeatable; default
                        this tree's mpich/lib, labelled "this"
  -P, --ranks N         ranks (default 4)
  -s, --servers N       servers (default 2)
  -o, --out DIR         results (default bench/results/DATE-small-coll)
      --timeout S       limit for one launch (default 300)
  -h, --help

Calls per rank per case: 512 of 8 B, 4 KiB and 16 KiB, 256 of 64 KiB, 32
of 1 MiB, in IOR's layout (4 segments, each rank's block of each segment).
Then, with the same servers, per-call latency (ior-style -L, 200 calls
of each size at random offsets of each rank's 4 MiB): every rank calling
collectively (-c), and every rank calling independently (-A), and the
agreements a collective makes, alone (op agree).
Output: latency.csv (the LATENCY lines, with the same columns in front),
results.csv (one row per phase of a launch: the RESULT line of
ior-style plus build, round, transport, local and the 1-minute load
average before the launch), REPORT.md (bench/
small_coll_report.py), params.txt, machine.txt; raw/ holds each launch.
EOF
}

ROUNDS=3 XFERS=8,4k,16k,64k,1m TRANSPORTS=tcp,auto LOCALS=on,off NP=4 NSERV=2 OUT="" TO=300
BUILDS=()
while [ $# -gt 0 ]; do
  case "$1" in
    -n|--rounds) ROUNDS=$2; shift 2 ;;
    -t|--xfers) XFERS=$2; shift 2 ;;
    -T|--transports) TRANSPORTS=$2; shift 2 ;;
    -l|--local) LOCALS=$2; shift 2 ;;
    -b|--build) BUILDS+=("$2"); shift 2 ;;
    -P|--ranks) NP=$2; shift 2 ;;
    -s|--servers) NSERV=$2; shift 2 ;;
    -o|--out) OUT=$2; shift 2 ;;
    --timeout) TO=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "small-coll.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
[ ${#BUILDS[@]} -gt 0 ] || BUILDS=("this=$top/mpich/lib")
OUT=${OUT:-$here/results/$(date +%Y-%m-%d)-small-coll}
mkdir -p "$OUT/raw" "$OUT/tmp"
OUT=$(cd "$OUT" && pwd)
for b in "${BUILDS[@]}"; do
  [ -e "${b#*=}/libmpich.so.12" ] || { echo "small-coll.sh: no libmpich.so.12 in ${b#*=}" >&2; exit 2; }
done

# the helper, built with this tree's MPICH (the builds differ in libmpich only)
mkdir -p "$here/bin"
"$top/mpich/bin/mpicc" -O2 -o "$here/bin/ior-style" "$here/ior-style.c" || exit 1

size_bytes() {
  case $1 in *k) echo $(( ${1%k} << 10 )) ;; *m) echo $(( ${1%m} << 20 )) ;; *) echo "$1" ;; esac
}
calls_for() {
  local b; b=$(size_bytes "$1")
  if [ "$b" -le 16384 ]; then echo 512; elif [ "$b" -le 65536 ]; then echo 256; else echo 32; fi
}
# one plan: for each size, sf-ind then sf-coll, each written then read back
plan="$OUT/plan.txt"
: > "$plan"
IFS=, read -ra xs <<< "$XFERS"
for x in "${xs[@]}"; do
  b=$(( $(size_bytes "$x") * $(calls_for "$x") / 4 ))
  echo "-b $b -t $(size_bytes "$x") -s 4 -w -r -n sf-ind-$x" >> "$plan"
  echo "-b $b -t $(size_bytes "$x") -s 4 -w -r -c -n sf-coll-$x" >> "$plan"
done
{
  echo "command: $CMDLINE"
  echo "rounds=$ROUNDS xfers=$XFERS transports=$TRANSPORTS local=$LOCALS ranks=$NP servers=$NSERV"
  for b in "${BUILDS[@]}"; do echo "build ${b%%=*}: ${b#*=} ($(sha256sum "${b#*=}/libmpich.so.12" | cut -c1-16))"; done
  echo "tree: $(git -C "$top" rev-parse --short HEAD 2>/dev/null)$(git -C "$top" diff --quiet 2>/dev/null || echo +changes)"
} > "$OUT/params.txt"
{ uname -a; nproc; grep -m1 'model name' /proc/cpuinfo; free -m | sed -n 2p; date -u; } > "$OUT/machine.txt"

csv="$OUT/results.csv"
echo "build,round,transport,local,load1,op,size,calls,callers,p50_us,p99_us,mean_us,max_us,status" > "$OUT/latency.csv"
echo "build,round,transport,local,load1,case,phase,P,xfer,block,segments,fpp,coll,random,neighbour,bytes,seconds,MiB_s,status,open_s,io_s,sync_s,close_s" > "$csv"
IFS=, read -ra trs <<< "$TRANSPORTS"
IFS=, read -ra locs <<< "$LOCALS"
nb=${#BUILDS[@]}
for ((r = 1; r <= ROUNDS; r++)); do
  for tr in "${trs[@]}"; do
    for loc in "${locs[@]}"; do
      for ((i = 0; i < nb; i++)); do
        b=${BUILDS[$(( (i + r - 1) % nb ))]}
        label=${b%%=*} lib=${b#*=}
        raw="$OUT/raw/$label-$tr-local$loc-r$r.txt"
        lw=1; [ "$loc" = off ] && lw=0
        root="$OUT/tmp/srv"; rm -rf "$root"; mkdir -p "$root"
        load=$(cut -d' ' -f1 /proc/loadavg)   # the machine may be shared
        echo "round $r: $label $tr local=$loc (load $load)"
        LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" DDIO_LOCAL_READ=$lw DDIO_LOCAL_WRITE=$lw \
          timeout "$TO" "$top/tools/ddio-run" -s "$NSERV" --transport "$tr" --root "$root" -- \
          bash -c '"$0" -n "$1" "$2" -f "$3" ddio:/sc- &&
            "$0" -n "$1" "$2" -L -c -l "$4" -N 200 -b 4m ddio:/lat- &&
            "$0" -n "$1" "$2" -L -A -l "$4" -N 200 -b 4m ddio:/lat-' \
          "$top/mpich/bin/mpiexec" "$NP" "$here/bin/ior-style" "$plan" "$XFERS" > "$raw" 2>&1 ||
          echo "  launch failed (rc $?): $raw"
        sed -n "s/^RESULT,/$label,$r,$tr,$loc,$load,/p" "$raw" >> "$csv"
        sed -n "s/^LATENCY,/$label,$r,$tr,$loc,$load,/p" "$raw" >> "$OUT/latency.csv"
      done
    done
  done
done
rm -rf "$OUT/tmp"
python3 "$here/small_coll_report.py" "$OUT"
