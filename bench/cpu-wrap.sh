#!/usr/bin/env bash
# cpu-wrap.sh COMMAND...: runs COMMAND, then prints to stderr the CPU time
# (user + system, seconds) of every descendant it waited for, e.g. mpiexec
# and, through Hydra's proxies, all the ranks: "cpu-wrap: children U S";
# and the peak RSS of the largest of them (GNU time's %M: the children's
# ru_maxrss, i.e. the biggest rank's VmHWM): "cpu-wrap: peak_rss_kB N".
# Exits with COMMAND's status. Used by run-bench.sh for CPU time per GiB
# and memory per rank.
f=$(mktemp)
if [ -x /usr/bin/time ]; then
  /usr/bin/time -q -f "%M" -o "$f.rss" "$@"
else
  "$@"
fi
rc=$?
times > "$f"                  # in this shell: a subshell would see no children
read -r u s < <(tail -n 1 "$f")
sec() { awk -v t="$1" 'BEGIN { split(t, a, "m"); sub("s", "", a[2]); printf "%.3f", a[1] * 60 + a[2] }'; }
echo "cpu-wrap: children $(sec "$u") $(sec "$s")" >&2
[ -s "$f.rss" ] && echo "cpu-wrap: peak_rss_kB $(tail -n 1 "$f.rss")" >&2
rm -f "$f" "$f.rss"
exit $rc
