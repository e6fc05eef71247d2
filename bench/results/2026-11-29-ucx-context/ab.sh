#!/bin/bash
# A/B: the UCX context started at a shared open on its own thread (skip) against at first use (nopf);
# both with UCX's verbs modules skipped; the installed libmpich swapped between alternating launches
cd /work/main
P=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix/lib/libmpich.so.12.2.2
cp $P /tmp/pfab/lib-installed.so
for i in 1 2 3 4; do
  for v in skip nopf; do
    cp /tmp/pfab/lib-$v.so $P
    bench/ior.sh -P 4,8 -n 1 -c sf-ind,fpp-ind -t 8,64k,1m -m ufs,ddio-ucx --no-latency --no-cp -o /tmp/pfab/x-$v-$i > /tmp/pfab/x-$v-$i.log 2>&1
  done
done
cp /tmp/pfab/lib-installed.so $P
echo done > /tmp/pfab/DONE
