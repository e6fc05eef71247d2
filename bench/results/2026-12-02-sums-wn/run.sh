#!/bin/bash
# wn/wb throttled 40 MiB/s: old vs new server, checksums on vs off, servers' path
cd /work/main
export PATH=$PWD/mpich/bin:$PATH DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0
for rep in 1 2 3 4; do
  for srv in old new; do
    for sums in on off; do
      d=$(mktemp -d /tmp/wnb.XXXX)
      out=$(tools/ddio-run --server /tmp/ddio-server.$srv -s 2 --root $d --throttle-mbps 40 --server-opt --checksums=$sums -- mpiexec -n 4 examples/bin/ddio-patterns -C -p wn,wb -r 8192 -m 128 ddio:/kotz 2>&1)
      echo "$out" | awk -F, -v s=$srv -v c=$sums -v r=$rep '$1=="wn"||$1=="wb" {print r, s, c, $1, $6, $7}'
      rm -rf $d
    done
  done
done
