#!/usr/bin/env bash
# Times test suites, so every full run ends with where its time went.
#   suite-time.sh [--name NAME] CMD ARGS...   run CMD, append "NAME SECONDS EXIT"
#                                             to the times file, exit as CMD did
#                                             (make check's LOG_COMPILER: NAME is
#                                             the test's path)
#   suite-time.sh --report [WALL_SECONDS]     print the table, longest first
# The times file: $DDIO_SUITE_TIMES, else $BUILD/test/suite-times.txt, else
# ./test/suite-times.txt.
set -u
times=${DDIO_SUITE_TIMES:-${BUILD:-.}/test/suite-times.txt}
if [ "${1:-}" = --report ]; then
  [ -s "$times" ] || { echo "suite times: none recorded ($times)"; exit 0; }
  echo
  echo "suite times (wall seconds; make check runs two suites at a time):"
  sort -k2,2nr "$times" | awk '{ printf "  %-44s %7.1f%s\n", $1, $2, ($3 != 0 ? "  (failed)" : "") }'
  [ -n "${2:-}" ] && printf "  %-44s %7d\n" "whole run" "$2"
  exit 0
fi
name=
if [ "${1:-}" = --name ]; then name=$2; shift 2; fi
[ -n "$name" ] || { name=${1#"${BUILD:-}"/}; name=${name#./}; }
start=$(date +%s.%N)
"$@"
rc=$?
mkdir -p "$(dirname "$times")"
echo "$name $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') $rc" >> "$times"
exit $rc
