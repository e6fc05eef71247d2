#!/bin/bash
# A/B: MPI_File_sync as a barrier then one SYNC from rank 0 (rank0) against every rank that wrote syncing itself (rank)
cd /work/main
P=/root/.cache/ddio/mpich-801bcf1db6f622cc/prefix/lib/libmpich.so.12.2.2
for i in 1 2 3; do
  for v in rank0 rank; do
    cp /tmp/syab/lib-$v.so $P
    bench/ior.sh -P 4,8 -n 1 -c sf-ind,fpp-ind,sf-coll -t 8,64k,1m -m ufs,ddio-tcp,ddio-ucx --no-latency --no-cp -o /tmp/syab/x-$v-$i > /tmp/syab/x-$v-$i.log 2>&1
  done
done
cp /tmp/syab/lib-rank.so $P
echo done > /tmp/syab/DONE
