#!/bin/bash
# Kotz quick on ddio-ucx: the server of 62e2862 (UCX's reply endpoints back to
# the clients) against 2bd57e8's (its own endpoints), the same client, alternating
cd /work/main
S=/work/main/ioserver/ddio-server
for i in 1 2 3; do
  for v in old new; do
    cp /tmp/srvab/$v $S
    bench/run-bench.sh -r 8192 --methods ddio-ucx -n 1 --no-ceiling --no-beside -o /tmp/srvab/k-$v-$i > /tmp/srvab/k-$v-$i.log 2>&1
  done
done
cp /tmp/srvab/new $S
echo done > /tmp/srvab/DONE
