#!/bin/bash
cd /work/main
P=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix/lib/libmpich.so.12.2.2
for i in 1 2 3; do
  for v in base wbd; do
    cp /tmp/ab/lib-$v.so $P
    bench/ior.sh -P 4,8 -n 1 -c sf-ind,sf-rand,sf-nbr -t 4k,64k,1m -m ufs,ddio-tcp --no-latency --no-cp -o /tmp/ab/x-$v-$i > /tmp/ab/x-$v-$i.log 2>&1
  done
done
cp /tmp/ab/lib-wbd.so $P
echo done > /tmp/ab/XDONE
