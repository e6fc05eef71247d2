#!/bin/bash
cd /work/main
P=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix/lib/libmpich.so.12.2.2
for i in 1 2 3; do
  for v in cur cur16; do
    cp /tmp/ab/lib-$v.so $P
    bench/ior.sh -P 4,8 -n 1 -c sf-coll,sf-ind -t 1m,4m -m ufs,ddio-tcp,ddio-ucx --no-latency --no-cp -o /tmp/ab/d-$v-$i > /tmp/ab/d-$v-$i.log 2>&1
  done
done
cp /tmp/ab/lib-cur.so $P
echo done > /tmp/ab/DDONE
