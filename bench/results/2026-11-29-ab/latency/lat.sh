#!/bin/bash
cd /work/main
NEW=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix
OLD=/root/.cache/ddio/mpich-d35552538961234c/prefix
for i in 1 2 3; do
  for v in new old; do
    [ $v = new ] && ln -sfn $NEW mpich || ln -sfn $OLD mpich
    for m in ufs tcp; do
      d=/tmp/ab/latroot-$v; rm -rf $d; mkdir -p $d
      if [ $m = ufs ]; then
        LD_LIBRARY_PATH=$PWD/mpich/lib mpich/bin/mpiexec -n 4 bench/bin/ior-style -L -b 64m -N 2000 -n lat -G $i ufs:$d/ > /tmp/ab/lat-$v-$m-$i.txt 2>&1
      else
        tools/ddio-run -s 2 --root $d --transport tcp -- mpich/bin/mpiexec -n 4 bench/bin/ior-style -L -b 64m -N 2000 -n lat -G $i ddio:/ior- > /tmp/ab/lat-$v-$m-$i.txt 2>&1
      fi
    done
  done
done
ln -sfn $NEW mpich
rm -rf /tmp/ab/latroot-*
echo done > /tmp/ab/LDONE
