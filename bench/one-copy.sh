#!/usr/bin/env bash
# one-copy.sh: hot reads through the servers (the same-host shortcuts off:
# DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0) for two or more ddio-server builds,
# swapped by bench/ab-swap.sh launch by launch, with ROMIO's ufs: measured
# beside in every launch: HDF5's contiguous rows (bench/h5-rows.sh -x rows,
# methods ufs and ddio-srv) and IOR's shared-file 64 KiB and 1 MiB cases,
# independent and collective (bench/ior.sh, UCX). Give the first build
# twice (e.g. old=A new=B old2=A) to see the noise as A against A. Then
# bench/one_copy_report.py writes OUT/README.md. -t tcp: ddio over TCP
# (what auto settles to where CMA is not permitted: servers under their
# own uid); -m: the servers and clients prove users with MUNGE (ddio-run
# --auth munge), the multi-user mode.
# usage: bench/one-copy.sh [-n ROUNDS] [-t ucx|tcp] [-m] -o OUT LABEL=SERVER LABEL=SERVER...
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
B=${DDIO_BUILD:-$(cd "$here/.." && pwd)}
ROUNDS=3 OUT="" XP=ucx MUNGE=0
while getopts n:t:mo: o; do
  case $o in n) ROUNDS=$OPTARG ;; t) XP=$OPTARG ;; m) MUNGE=1 ;; o) OUT=$OPTARG ;; *) exit 2 ;; esac
done
shift $((OPTIND - 1))
[ -n "$OUT" ] && [ $# -ge 2 ] || { sed -n 's/^# usage: //p' "$0"; exit 2; }
mkdir -p "$OUT/raw"
OUT=$(cd "$OUT" && pwd)
{ echo "date: $(date -u +%FT%TZ)"; echo "commit: $(git -C "$here" rev-parse --short HEAD 2>/dev/null)"
  echo "kernel: $(uname -r)"; echo "cpus: $(nproc)"; echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  for v in "$@"; do echo "build ${v%%=*}: $(sha256sum "${v#*=}" | cut -c1-16)"; done
  echo "rounds: $ROUNDS"; echo "transport: $XP"; echo "munge: $MUNGE"; } > "$OUT/machine.txt"
# -m: a build directory whose ddio-run starts every launch with --auth
# munge (the scripts call $DDIO_BUILD/tools/ddio-run); the servers are B's
if [ $MUNGE = 1 ]; then
  W="$OUT/build-munge"
  mkdir -p "$W/tools"
  ln -sfn "$B/mpich" "$W/mpich"; ln -sfn "$B/tools/ddio" "$W/tools/ddio"
  printf '#!/bin/sh\nexec "%s" --auth munge "$@"\n' "$B/tools/ddio-run" > "$W/tools/ddio-run"
  chmod +x "$W/tools/ddio-run"
  RB=$W
else
  RB=$B
fi
export B RB OUT here XP
"$here/ab-swap.sh" -n "$ROUNDS" -f "$B/ioserver/ddio-server" "$@" -- bash -c '
  d="$OUT/raw/$AB_LABEL-$AB_ROUND"
  DDIO_BUILD=$RB DDIO_TRANSPORT=$XP "$here/h5-rows.sh" -n 1 -x rows -m ufs,ddio-srv -o "$d-h5" \
    > "$d-h5.out" 2>&1
  DDIO_BUILD=$RB DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 "$here/ior.sh" -P 4 -t 64k,1m \
    -c sf-ind,sf-coll -m ufs,ddio-$XP --no-latency --no-cp -n 1 -o "$d-ior" > "$d-ior.out" 2>&1
  echo "$AB_LABEL,$AB_ROUND,$(cut -d" " -f1 /proc/loadavg)" >> "$OUT/load.csv"'
echo "load at end: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT/machine.txt"
python3 "$here/one_copy_report.py" "$OUT" "$0 $*"
