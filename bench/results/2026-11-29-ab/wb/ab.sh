#!/bin/bash
cd /work/main
P=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix/lib/libmpich.so.12.2.2
for i in 1 2 3; do
  for v in base wb; do
    cp /tmp/ab/lib-$v.so $P
    bench/ior.sh -P 4,8 -n 1 -c sf-ind,fpp-ind,sf-rand -t 4k,64k,1m -m ufs,ddio-tcp --no-latency --no-cp -o /tmp/ab/w-$v-$i > /tmp/ab/w-$v-$i.log 2>&1
  done
done
cp /tmp/ab/lib-wb.so $P
echo done > /tmp/ab/WDONE
