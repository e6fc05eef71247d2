#!/usr/bin/env bash
# Times test suites, so every full run ends with where its time went.
#   suite-time.sh [--name NAME] CMD ARGS...   run CMD, append "NAME SECONDS EXIT
#                                             CPU_SECONDS" to the times file, exit
#                                             as CMD did (make check's
#                                             LOG_COMPILER: NAME is the test's path)
#   . suite-time.sh --cpu                     defines child_cpu and cpu_of only
# CPU seconds (user + sys of every process the suite waited for) against
# wall seconds say whether a suite keeps both cores busy or leaves them idle.
#   suite-time.sh --report [WALL_SECONDS]     print the table, longest first
# The times file: $DDIO_SUITE_TIMES, else $BUILD/test/suite-times.txt, else
# ./test/suite-times.txt.
set -u
# child_cpu FILE: the CPU seconds of this shell's waited-for children so far,
# into FILE (`times` must run in this shell, not in a $(...) subshell, which
# sees only its own children); cpu_of FILE prints them
child_cpu() { times > "$1"; }
cpu_of() {
  awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] }
                 printf "%.1f", n }' "$1"
}
if [ "${1:-}" = --cpu ]; then return 0 2>/dev/null || exit 0; fi
times=${DDIO_SUITE_TIMES:-${BUILD:-.}/test/suite-times.txt}
if [ "${1:-}" = --report ]; then
  [ -s "$times" ] || { echo "suite times: none recorded ($times)"; exit 0; }
  echo
  echo "suite times (make check runs several at a time; cpu: user + sys of its processes):"
  printf "  %-44s %7s %7s\n" suite "wall s" "cpu s"
  sort -k2,2nr "$times" | awk '{ printf "  %-44s %7.1f %7.1f%s\n", $1, $2, $4, ($3 != 0 ? "  (failed)" : "") }'
  [ -n "${2:-}" ] && printf "  %-44s %7d\n" "whole run" "$2"
  exit 0
fi
name=
if [ "${1:-}" = --name ]; then name=$2; shift 2; fi
[ -n "$name" ] || { name=${1#"${BUILD:-}"/}; name=${name#./}; }
start=$(date +%s.%N)
# a suite is not part of the make that runs it: its own makes (the sanitizer
# build, make install) must not join make check's job server
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$@"
rc=$?
mkdir -p "$(dirname "$times")"
child_cpu "$times.$$"; cpu=$(cpu_of "$times.$$"); rm -f "$times.$$"
echo "$name $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') $rc $cpu" >> "$times"
exit $rc
