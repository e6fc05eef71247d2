#!/bin/bash
# Kotz quick on ddio-ucx: 6cfd00b (base) against lazy UCX (after), alternating
cd /work/main
P=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix/lib/libmpich.so.12.2.2
for i in 3 4; do
  for v in base after2; do
    cp /tmp/lz/lib-$v.so $P
    bench/run-bench.sh -r 8192 --methods ddio-ucx -n 1 --no-ceiling --no-beside -o /tmp/lz/k-$v-$i > /tmp/lz/k-$v-$i.log 2>&1
  done
done
cp /tmp/lz/lib-after2.so $P
echo done > /tmp/lz/K2DONE
