#!/bin/bash
# ddio cp of 300 MiB in and out: out of ddio written O_DIRECT (0), fallocated then O_DIRECT (1),
# buffered with each window's writeback started and the window before waited for and dropped (2); alternating
cd /work/main
tmp=/work/main/bench/results/cp-ab-tmp
src=$tmp/src; mkdir -p $tmp
head -c $((300 << 20)) /dev/urandom > $src
for i in $(seq 1 ${ROUNDS:-6}); do
  for m in ${MODES:-0 1 2}; do
    for x in tcp ucx; do
      r=$tmp/srv; rm -rf $r; mkdir -p $r; back=$tmp/back; rm -f $back
      out=$(DDIO_CP_OUT_MODE=$m tools/ddio-run -s 2 --root $r --transport $x -- bash -c '
        t() { local a b; a=$(date +%s.%N); "$@" > /dev/null || return 1; b=$(date +%s.%N); awk -v a="$a" -v b="$b" "BEGIN{printf \"%.3f\", b - a}"; }
        echo "$(t "$0" cp "$1" ddio:/cp),$(t "$0" cp ddio:/cp "$2")"; cmp "$1" "$2" || echo DIFFER' /tmp/ab/ddio-x $src $back)
      echo "$m,$x,$i,$out"
    done
  done
done
rm -rf $tmp
