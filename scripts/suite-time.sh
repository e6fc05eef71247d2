#!/usr/bin/env bash
# Times test suites, so every full run ends with where its time went.
#   suite-time.sh [--name NAME] CMD ARGS...   run CMD, append "NAME SECONDS EXIT
#                                             CPU_SECONDS START" to the times
#                                             file (START: epoch seconds), exit
#                                             as CMD did (make check's
#                                             LOG_COMPILER: NAME is the test's path)
#   . suite-time.sh --lib                     defines timed NAME CMD... only (the
#                                             same for a step of a shell script,
#                                             shell functions included)
#   suite-time.sh --report [WALL_SECONDS]     print the table, longest first, with
#                                             each suite's start and end after the
#                                             first start (which suites ran
#                                             together, and which one ended last)
# CPU seconds (user + sys of every process the suite waited for) against
# wall seconds say whether a suite keeps both cores busy or leaves them idle.
# The times file: $DDIO_SUITE_TIMES, else $BUILD/test/suite-times.txt, else
# ./test/suite-times.txt.

# suite__cpu FILE: SUITE_CPU = the CPU seconds of this shell's waited-for
# children so far (`times` must run in this shell, not in a $(...) subshell,
# which sees only its own children: hence FILE)
suite__cpu() {
  times > "$1"
  SUITE_CPU=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] }
                             printf "%.1f", n }' "$1")
  rm -f "$1"
}

# timed NAME CMD...: run CMD, record its line in the times file, return its status
timed() {
  local name=$1 f=${DDIO_SUITE_TIMES:-${BUILD:-.}/test/suite-times.txt} t0 c0 rc=0; shift
  export DDIO_CASE_SUITE=$name    # the slowest cases' table names the suite so
  mkdir -p "$(dirname "$f")"
  t0=$(date +%s.%N); suite__cpu "$f.$$"; c0=$SUITE_CPU
  "$@" || rc=$?
  suite__cpu "$f.$$"
  awk -v n="$name" -v a="$t0" -v b="$(date +%s.%N)" -v rc=$rc -v c="$c0" -v d="$SUITE_CPU" \
    'BEGIN { printf "%s %.1f %d %.1f %.1f\n", n, b - a, rc, d - c, a }' >> "$f"
  return $rc
}
if [ "${1:-}" = --lib ]; then return 0 2>/dev/null || exit 0; fi

set -u
times=${DDIO_SUITE_TIMES:-${BUILD:-.}/test/suite-times.txt}
if [ "${1:-}" = --report ]; then
  [ -s "$times" ] || { echo "suite times: none recorded ($times)"; exit 0; }
  echo
  echo "suite times (make check runs several at a time; cpu: user + sys of its processes):"
  printf "  %-44s %7s %7s %7s %7s\n" suite "wall s" "cpu s" "start" "end"
  t0=$(awk 'NF >= 5 && (m == "" || $5 < m) { m = $5 } END { printf "%.1f", m + 0 }' "$times")
  sort -k2,2nr "$times" | awk -v t0="$t0" '{ s = (NF >= 5 ? $5 - t0 : 0)
    printf "  %-44s %7.1f %7.1f %7.0f %7.0f%s\n", $1, $2, $4, s, s + $2, ($3 != 0 ? "  (failed)" : "") }'
  [ -n "${2:-}" ] && printf "  %-44s %7d\n" "whole run" "$2"
  exit 0
fi
name=
if [ "${1:-}" = --name ]; then name=$2; shift 2; fi
[ -n "$name" ] || { name=${1#"${BUILD:-}"/}; name=${name#./}; }
# a suite is not part of the make that runs it: its own makes (the sanitizer
# build, make install) must not join make check's job server
timed "$name" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "$@"
