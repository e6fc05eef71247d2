#!/bin/bash
# sf-coll phases (4 KiB, 64 KiB, 1 MiB) at P=4 and 8, ddio-tcp, for DDIO_NAP_SPIN_US values; prints phase MiB/s
cd /work/main
out=/tmp/napexp; mkdir -p $out
for rep in ${REPS:-1 2}; do
for spin in ${SPINS:-0 50 200}; do
  for P in 4 8; do
    root=$out/root; rm -rf $root; mkdir -p $root
    DDIO_NAP_SPIN_US=$spin tools/ddio-run -s 2 --root $root -- mpich/bin/mpiexec -n $P bench/bin/ior-style \
      -f /tmp/napexp/plan -w -r -T hot ddio:/x- 2>&1 | grep "^RESULT" | awk -F, -v s=$spin -v P=$P '{print "spin", s, "P", P, $2, $3, $14}'
  done
done
done
