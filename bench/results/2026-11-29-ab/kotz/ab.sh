#!/bin/bash
cd /work/main
NEW=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix
OLD=/root/.cache/ddio/mpich-d35552538961234c/prefix
for i in 1 2; do
  for v in new old; do
    [ $v = new ] && ln -sfn $NEW mpich || ln -sfn $OLD mpich
    bench/run-bench.sh -r 8192 --methods ddio-tcp -n 1 --no-ceiling --no-beside -o /tmp/ab/k-$v-$i > /tmp/ab/k-$v-$i.log 2>&1
  done
done
ln -sfn $NEW mpich
echo done > /tmp/ab/KDONE
