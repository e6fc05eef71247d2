#!/bin/bash
# buffers/block-size tuning: 3 reps per config, 8 KiB and 8 B records, 512 MiB, P=4, 2 servers
cd "$(dirname "$0")/../../.."
for rep in 1 2 3; do
for cfg in "-n 4" "-n 16" "-b 4194304 -n 8"; do
  rm -rf /tmp/tune
  r8k=$(timeout 300 tools/ddio-run -s 2 --root /tmp/tune $cfg -- mpiexec -n 4 examples/bin/ddio-patterns -q -C -r 8192 -m 512 -p wb,wc,wbc,rb,rc,rbc ddio:/t | cut -d, -f1,6 | tr '\n' ' ')
  r8=$(timeout 300 tools/ddio-run -s 2 --root /tmp/tune $cfg -- mpiexec -n 4 examples/bin/ddio-patterns -q -C -r 8 -m 512 -p wc,wbc,rc,rbc ddio:/t8 | cut -d, -f1,6 | tr '\n' ' ')
  echo "rep $rep [$cfg] 8K: $r8k | 8B: $r8"
done; done
