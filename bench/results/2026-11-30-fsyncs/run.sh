#!/bin/bash
# run.sh OUT OLD NEW [ROUNDS]: the server before (OLD) and with its sync's
# fsyncs in one batch (NEW) alternated round by round (bench/ab-swap.sh
# swaps ioserver/ddio-server), each round:
#   fsb      the three ways of syncing a new file, on the file system alone
#   loop     create-loop (1 rank, 2 servers, TCP, 500 new files: open
#            CREATE, one 8-byte write, MPI_File_sync, close; p50 each),
#            ufs: once and each server
#   phases   the close-meta plan (IOR-style write phases, 12 each of f8,
#            s8, f4k; ufs:, ddio TCP and UCX; P = 4 and 8)
# Nothing may rebuild the tree meanwhile. Tables: table.py OUT (fsb,
# loop) and ../2026-11-29-close-meta/table.py OUT/phases old new.
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/../../.." && pwd)
out=$1 old=$2 new=$3 rounds=${4:-6}
[ -n "$new" ] || { echo "usage: run.sh OUT OLD NEW [ROUNDS]" >&2; exit 2; }
mkdir -p "$out"; out=$(cd "$out" && pwd); cd "$top" || exit 2
export PATH=$top/mpich/bin:$PATH
mpicc -O2 -o "$out/create-loop" bench/results/2026-11-29-open-local-w/create-loop.c || exit 2
gcc -O2 -o "$out/fsb" "$here/fsb.c" -laio || exit 2
tmp=${TMPDIR:-/tmp}/fsyncs.$$
bench/ab-swap.sh -n "$rounds" -f ioserver/ddio-server old="$old" new="$new" -- bash -c '
  out='"$out"' tmp='"$tmp"' here='"$here"'
  r=$out/raw/$AB_LABEL-$AB_ROUND; mkdir -p $r $tmp
  $out/fsb $tmp/fsb 300 > $r/fsb.txt 2>&1
  rm -rf $tmp/u; mkdir -p $tmp/u
  timeout 300 mpiexec -n 1 $out/create-loop ufs:$tmp/u/cl 500 > $r/loop-ufs.txt 2>&1
  rm -rf $tmp/d; mkdir -p $tmp/d
  timeout 300 tools/ddio-run -s 2 --root $tmp/d --transport tcp -- \
    mpiexec -n 1 $out/create-loop ddio:/cl 500 > $r/loop-ddio.txt 2>&1
  rm -rf $tmp
  $here/../2026-11-29-close-meta/run.sh $out/phases/$AB_LABEL-$AB_ROUND'
