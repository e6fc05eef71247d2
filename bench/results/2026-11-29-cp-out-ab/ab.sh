#!/bin/bash
# ddio cp of 300 MiB in and out, the sequential-direct tool against the 4-writer one, alternating
cd /work/main
src=/work/main/bench/results/cp-ab-tmp/src; mkdir -p $(dirname $src)
head -c $((300 << 20)) /dev/urandom > $src
t() { local a b; a=$(date +%s.%N); "$@" > /dev/null || return 1; b=$(date +%s.%N); awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", b - a}'; }
for i in 1 2 3 4 5; do
  for v in seq kick; do
    for x in tcp ucx; do
      r=/work/main/bench/results/cp-ab-tmp/srv; rm -rf $r; mkdir -p $r; back=/work/main/bench/results/cp-ab-tmp/back; rm -f $back
      out=$(tools/ddio-run -s 2 --root $r --transport $x -- bash -c '
        t() { local a b; a=$(date +%s.%N); "$@" > /dev/null || return 1; b=$(date +%s.%N); awk -v a="$a" -v b="$b" "BEGIN{printf \"%.3f\", b - a}"; }
        echo "$(t "$0" cp "$1" ddio:/cp) $(t "$0" cp ddio:/cp "$2")"; cmp "$1" "$2" || echo DIFFER' /tmp/ab/ddio-$v $src $back)
      echo "$v,$x,$i,$out"
    done
  done
done
rm -rf /work/main/bench/results/cp-ab-tmp
