#!/bin/bash
# A/B of 6cfd00b (base) against lazy UCX + posted read-only CLOSE (after):
# the installed libmpich swapped between alternating ior.sh launches
cd /work/main
P=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix/lib/libmpich.so.12.2.2
for i in 1 2 3; do
  for v in base after; do
    cp /tmp/lz/lib-$v.so $P
    bench/ior.sh -P 4,8 -n 1 -c fpp-ind,sf-ind -t 8,4k,64k -m ufs,ddio-tcp,ddio-ucx --no-latency --no-cp -o /tmp/lz/x-$v-$i > /tmp/lz/x-$v-$i.log 2>&1
  done
done
cp /tmp/lz/lib-after.so $P
echo done > /tmp/lz/XDONE
# then the same for i in 4..9 (ab2.sh)
