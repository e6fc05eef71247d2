#!/bin/bash
cd /work/main
NEW=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix
OLD=/root/.cache/ddio/mpich-d35552538961234c/prefix
for i in 1 2 3; do
  for v in new old; do
    [ $v = new ] && ln -sfn $NEW mpich || ln -sfn $OLD mpich
    bench/ior.sh -P 4,8 -n 1 -c fpp-ind,sf-ind,sf-coll -t 8,4k,64k -m ufs,ddio-tcp --no-latency --no-cp -o /tmp/ab/$v-$i > /tmp/ab/$v-$i.log 2>&1
  done
done
ln -sfn $NEW mpich
echo done > /tmp/ab/DONE
