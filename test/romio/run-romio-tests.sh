#!/usr/bin/env bash
# ROMIO's own tests from the MPICH source, built with the ddio-enabled
# mpicc and run against local ddio servers with a ddio: file name (process
# counts and arguments as in ROMIO's runtests). A test passes when it exits 0
# and prints ROMIO's " No Errors". The collective tests (COLL_TESTS) must also
# have gone through ddio's disk-directed collective: the servers' coll_xfers
# counters, read inside the same ddio-run session, must not all be 0.
# Closes with "N passed, N failed".
# usage: run-romio-tests.sh [TEST...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${DDIO_BUILD_DIR:-$(cd "$here/../.." && pwd)}
mpi="$top/mpich"
[ -x "$mpi/bin/mpicc" ] || { echo "run-romio-tests: $mpi/bin/mpicc missing: run make first" >&2; exit 2; }
base=$(dirname "$(cd "$mpi" && pwd -P)")   # cache entry: src/, build/, prefix/
src="$base/src/src/mpi/romio/test"
gen="$base/build/src/mpi/romio/test"       # configure-generated sources (misc.c, ...)
[ -d "$src" ] || { echo "run-romio-tests: ROMIO test sources not found at $src" >&2; exit 2; }
. "$here/../mpienv.sh" 30
export STATS_TOOL="$top/tools/ddio"
limit=${DDIO_TEST_LIMIT:-300}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-romio.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# name  processes  argument style (f: -fname FILE, F: FILE, a: -h -f FILE)
TESTS_ALL="simple:4:f psimple:4:f async:4:f excl:4:f error:1:f status:1:f file_info:4:f
noncontig:2:f i_noncontig:2:f misc:4:f shared_fp:4:f atomicity:4:f
coll_test:4:f noncontig_coll:2:f noncontig_coll2:4:f split_coll:4:f darray_read:4:F
types_with_zeros:2:F hindexed:4:F aggregation1:4:a aggregation2:4:F"
COLL_TESTS=" coll_test noncontig_coll noncontig_coll2 split_coll darray_read types_with_zeros "
COLL_TESTS+="hindexed aggregation1 aggregation2 "
want=("$@")
pass=0; fail=0; failed=()
for spec in $TESTS_ALL; do
  IFS=: read -r name np style <<<"$spec"
  if [ ${#want[@]} -gt 0 ]; then
    hit=0; for w in "${want[@]}"; do [ "$w" = "$name" ] && hit=1; done
    [ $hit = 1 ] || continue
  fi
  c="$src/$name.c"; [ -f "$gen/$name.c" ] && c="$gen/$name.c"
  if ! mpicc -O1 -I"$gen" -I"$src" -o "$tmp/$name" "$c" >"$tmp/$name.build.log" 2>&1; then
    fail=$((fail + 1)); failed+=("$name"); echo "FAIL: romio/$name (build)"; tail -n 20 "$tmp/$name.build.log"; continue
  fi
  f="ddio:/romio/$name"
  case $style in
    f) args=(-fname "$f") ;; F) args=("$f") ;; a) args=(-h -f "$f") ;;
  esac
  mkdir -p "$tmp/srv"
  out="$tmp/$name.out"
  stats="$tmp/$name.stats"; rm -f "$stats"
  (cd "$tmp" && STATS_OUT="$stats" timeout -k 10 "$limit" "$top/tools/ddio-run" -s 2 --root "$tmp/srv" -- \
      bash -c 'mpiexec -n "$0" "$@"; rc=$?; "$STATS_TOOL" stats coll_xfers > "$STATS_OUT"; exit $rc' \
      "$np" "./$name" "${args[@]}") >"$out" 2>&1
  rc=$?
  coll_ok=1; n=""
  case "$COLL_TESTS" in *" $name "*)
    n=$(awk '$2=="coll_xfers"{s+=$3} END{print s+0}' "$stats" 2>/dev/null)
    echo "coll_xfers (sum over servers): ${n:-none}" >>"$out"
    [ "${n:-0}" -gt 0 ] || coll_ok=0 ;;
  esac
  if [ $rc -eq 0 ] && grep -q "No Errors" "$out" && [ $coll_ok = 1 ]; then
    pass=$((pass + 1)); echo "PASS: romio/$name${n:+ (coll_xfers $n)}"
  else
    fail=$((fail + 1)); failed+=("$name"); echo "FAIL: romio/$name (exit $rc)"; tail -n 25 "$out" | sed 's/^/    /'
  fi
done
echo
[ $fail -gt 0 ] && echo "failed: ${failed[*]}"
echo "romio: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
