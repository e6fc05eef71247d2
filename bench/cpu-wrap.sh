#!/usr/bin/env bash
# cpu-wrap.sh COMMAND...: runs COMMAND, then prints to stderr the CPU time
# (user + system, seconds) of every descendant it waited for, e.g. mpiexec
# and, through Hydra's proxies, all the ranks: "cpu-wrap: children U S".
# Exits with COMMAND's status. Used by run-bench.sh for CPU time per GiB.
"$@"
rc=$?
f=$(mktemp)
times > "$f"                  # in this shell: a subshell would see no children
read -r u s < <(tail -n 1 "$f")
rm -f "$f"
sec() { awk -v t="$1" 'BEGIN { split(t, a, "m"); sub("s", "", a[2]); printf "%.3f", a[1] * 60 + a[2] }'; }
echo "cpu-wrap: children $(sec "$u") $(sec "$s")" >&2
exit $rc
