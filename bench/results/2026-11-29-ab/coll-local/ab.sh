#!/bin/bash
cd /work/main
P=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix/lib/libmpich.so.12.2.2
for i in 1 2 3; do
  for v in base l16; do
    cp /tmp/ab/lib-$v.so $P
    bench/ior.sh -P 4,8 -n 1 -c sf-coll,sf-ind -t 256k,1m,4m -m ufs,ddio-tcp --no-latency --no-cp -o /tmp/ab/c-$v-$i > /tmp/ab/c-$v-$i.log 2>&1
  done
done
cp /tmp/ab/lib-base.so $P
echo done > /tmp/ab/CDONE
