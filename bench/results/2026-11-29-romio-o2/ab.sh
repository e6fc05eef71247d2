#!/bin/bash
# ROMIO's own methods on the MPICH built before (ROMIO at -O0) and after (-O2), alternating;
# Kotz's cyclic patterns, 8-byte records (32 MiB) and 8 KiB records (256 MiB), P = 4
cd /work/main
for i in 1 2; do
  for v in O2 O0; do
    [ $v = O2 ] && m=/work/main/mpich || m=/tmp/oldmpich
    bench/run-bench.sh --mpich $m -r 8 -m 32 -p wc,wbc,rc,rcc --methods ufs-2ph,ddio-tcp -n 1 --no-ceiling --no-beside -o /tmp/ab/r8-$v-$i > /tmp/ab/r8-$v-$i.log 2>&1
    bench/run-bench.sh --mpich $m -r 8192 -m 256 -p wc,wbc,rc,rcc --methods ufs-2ph,ufs-indep,ddio-tcp -n 1 --no-ceiling --no-beside -o /tmp/ab/r8k-$v-$i > /tmp/ab/r8k-$v-$i.log 2>&1
  done
done
echo done > /tmp/ab/RDONE
