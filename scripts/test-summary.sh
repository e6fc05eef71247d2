#!/usr/bin/env bash
# Adds up every test log of `make check` (Check unit tests, the server, MPI
# and ROMIO harnesses, the repository's checks in scripts/), the sanitizer
# run and the fuzz run, and prints one closing line "tests: N passed, N
# failed". Exit 1 if anything failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
pass=0; fail=0
# (the sanitizer run's own log is left out: build-san/summary.log counts it)
for log in $(find test scripts -name '*.log' ! -name 'test-suite.log' \
             ! -name 'check-sanitizers.sh.log' 2>/dev/null) build-san/summary.log; do
  [ -f "$log" ] || continue
  c=$(grep -aEo 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -n1)
  if [ -n "$c" ]; then
    set -- $(echo "$c" | tr -dc '0-9 ')
    pass=$((pass + $1 - $2 - $3)); fail=$((fail + $2 + $3)); continue
  fi
  c=$(grep -aEo '^([a-z0-9+-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
  if [ -n "$c" ]; then
    p=$(echo "$c" | grep -Eo "[0-9]+ passed" | grep -Eo "[0-9]+")
    f=$(echo "$c" | grep -Eo '[0-9]+ failed' | grep -Eo '[0-9]+')
    pass=$((pass + p)); fail=$((fail + f)); continue
  fi
  # a test script that printed no count: judge by its .trs result
  trs="${log%.log}.trs"
  if [ -f "$trs" ]; then
    if grep -q ':test-result: PASS' "$trs"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
  fi
done
echo
echo "tests: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
