#!/bin/bash
# run.sh OUT OLD NEW [ROUNDS]: `ddio cp` of a 300 MiB file, out of ddio with
# the tool OLD (O_DIRECT local writes) and NEW (streamed writeback),
# alternated, each round also into ddio (the same code in both) and
# wout.c's four ways of writing the same 300 MiB locally; TCP and UCX, 2
# local servers. Prints CSV: transport,round,variant,op,seconds.
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/../../.." && pwd)
out=$1 old=$2 new=$3 rounds=${4:-6}
mkdir -p "$out"; out=$(cd "$out" && pwd)
gcc -O2 -o "$out/wout" "$here/wout.c" || exit 2
tmp=${TMPDIR:-/tmp}/cp-stream.$$; mkdir -p "$tmp"
head -c $((300 << 20)) /dev/urandom > "$tmp/src"
t() { local a b; a=$(date +%s.%N); "$@" > /dev/null || return 1; b=$(date +%s.%N); awk -v a="$a" -v b="$b" 'BEGIN{printf "%.3f", b - a}'; }
export -f t
for tr in tcp ucx; do
  rm -rf "$tmp/srv"; mkdir -p "$tmp/srv"
  "$top/tools/ddio-run" -s 2 --root "$tmp/srv" --transport $tr -- bash -c '
    tr=$0 out=$1 tmp=$2 old=$3 new=$4 rounds=$5
    for r in $(seq 1 $rounds); do
      for m in d r; do rm -f $tmp/w; $out/wout $tmp/w $m 4 | sed "s/^/# $tr $r wout /"; done
      for v in old new; do
        [ $v = old ] && b=$old || b=$new
        s=$(t $b cp $tmp/src ddio:/cp) && echo "$tr,$r,$v,in,$s"
        rm -f $tmp/back
        s=$(t $b cp ddio:/cp $tmp/back) && cmp -s $tmp/src $tmp/back && echo "$tr,$r,$v,out,$s"
        rm -f $tmp/back
      done
    done' $tr "$out" "$tmp" "$old" "$new" "$rounds"
done
rm -rf "$tmp"
