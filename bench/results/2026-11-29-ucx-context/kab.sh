#!/bin/bash
# Kotz quick on ddio-ucx: the UCX context started at a shared open on a thread (skip) against at first use (nopf), alternating
cd /work/main
P=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix/lib/libmpich.so.12.2.2
cp $P /tmp/pfab/lib-installed2.so
for i in 1 2 3; do
  for v in skip nopf; do
    cp /tmp/pfab/lib-$v.so $P
    bench/run-bench.sh -r 8192 --methods ddio-ucx -n 1 --no-ceiling --no-beside -o /tmp/pfab/k-$v-$i > /tmp/pfab/k-$v-$i.log 2>&1
  done
done
cp /tmp/pfab/lib-installed2.so $P
echo done > /tmp/pfab/KDONE
