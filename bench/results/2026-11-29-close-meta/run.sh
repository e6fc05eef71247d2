#!/bin/bash
# run.sh OUT: the plan's write phases (12 x each of: file per process 8 B,
# shared file 8 B, file per process 4 KiB; each phase a new file: open,
# writes, MPI_File_sync, close) in one launch per method and P: ufs:, ddio
# over TCP and over UCX (2 local servers). RESULT lines as bench/ior-style.c.
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/../../.." && pwd)
out=$1; mkdir -p "$out"; export PATH=$top/mpich/bin:$PATH
tmp=${TMPDIR:-/tmp}/close-meta.$$
for P in 4 8; do
  d=$tmp/P$P; rm -rf "$d"; mkdir -p "$d"
  timeout 300 mpiexec -n $P "$top/bench/bin/ior-style" -w -f "$here/plan" "ufs:$d/" > "$out/ufs-P$P.txt" 2>&1
  for tr in tcp ucx; do
    rm -rf "$d"; mkdir -p "$d"
    timeout 300 "$top/tools/ddio-run" -s 2 --root "$d" --transport $tr -- \
      mpiexec -n $P "$top/bench/bin/ior-style" -w -f "$here/plan" ddio:/ior- > "$out/$tr-P$P.txt" 2>&1
  done
  rm -rf "$d"
done
rm -rf "$tmp"
