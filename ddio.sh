#!/usr/bin/env bash
# The two quick-start commands (see README.md):
#   ./ddio.sh demo   install deps, build everything, run a real MPI-IO workload
#                    on ddio: through ddio-run, and print what it achieved
#   ./ddio.sh test   install deps, build everything, run every test
# Plus:  ./ddio.sh build   (deps + build only)
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$top"
cmd=${1:-}
jobs=$(nproc)

# (each step returns on failure itself: under `timed` set -e does not apply)
build() {
  "$top/scripts/install-deps.sh" || return
  if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
    autoreconf -fi || return
  fi
  if [ ! -f Makefile ] || [ configure -nt config.status ]; then
    ./configure --enable-werror ${DDIO_CONFIGURE_FLAGS:-} || return
  fi
  make -j"$jobs"
}

demo() {
  build
  local mib=${DDIO_DEMO_MIB:-256}
  echo
  echo "== ddio demo: Kotz's access patterns, $mib MiB file, 4 ranks, 2 local ddio servers"
  echo "   (every pattern in ONE collective call; every byte verified)"
  tools/ddio-run -s 2 -- mpiexec -n 4 examples/bin/ddio-patterns -r 8192 -m "$mib" ddio:/demo
  echo
  echo "== 8-byte records (one double per record: the hardest case), $((mib / 8)) MiB, on ddio:"
  tools/ddio-run -s 2 -- mpiexec -n 4 examples/bin/ddio-patterns -q -r 8 -m $((mib / 8)) \
    -p wc,wbc,rc,rcc ddio:/demo8
  echo
  echo "== the same on ROMIO's ufs: with its default two-phase collective buffering (baseline)"
  local tmp; tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-demo.XXXXXX")
  PATH="$top/mpich/bin:$PATH" LD_LIBRARY_PATH="$top/mpich/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    mpiexec -n 4 examples/bin/ddio-patterns -q -r 8 -m $((mib / 8)) -p wc,wbc,rc,rcc "ufs:$tmp/demo8"
  rm -rf "$tmp"
}

# After a failed `make check`: each failing harness's FAIL lines and the
# log lines after them, so a CI transcript says which case failed and why.
failed_logs() {
  local trs log
  # find -exec: with no .trs at all (the build failed) grep must not read stdin
  for trs in $(find test scripts -name '*.trs' -exec grep -l ':test-result: FAIL' {} + 2>/dev/null); do
    log="${trs%.trs}.log"
    echo "== failed: ${log}"
    if grep -qE '^(FAIL|not ok)' "$log"; then
      grep -E -A 40 '^(FAIL|not ok)' "$log" | head -n 300 || true
    else
      tail -n 60 "$log"
    fi
  done
}

# timed NAME CMD...: a step of the test run (shell functions too), its time
# in the closing table
. "$top/scripts/suite-time.sh" --lib

# The tarball's exit status, from the file its job writes: bash's own
# `wait PID` answered 127 once in CI (the status of a job that had ended
# twenty minutes before was gone; pid_max is 32768 on these machines),
# failing a run whose every test and the distcheck itself had passed.
dist_wait() {
  wait "$1" 2>/dev/null
  [ -s distcheck.rc ] || { echo "ddio.sh: make distcheck left no exit status" >&2; return 1; }
  return "$(cat distcheck.rc)"
}

tests() {
  local t0=$SECONDS rc=0
  # (outside test/, which make distcheck copies whole while the suites run:
  # a times file's scratch copy vanishing under it failed the copy)
  export DDIO_SUITE_TIMES="$top/suite-times.txt"
  rm -f "$DDIO_SUITE_TIMES"
  timed build build
  # Every suite is a test of make check (Makefile.am's TESTS, longest first),
  # run DDIO_TEST_JOBS at a time: most of them leave a core idle for much of
  # their time (waiting on servers, deadlines, small synchronous I/O), so
  # one more than the cores keeps both busy. That includes the MPI suite's
  # data groups, the command line and the mount on the other transport, the
  # > 2 GiB test, PnetCDF, netCDF-C's parallel tests, the sanitizer build,
  # a bounded fuzz run and the install into a temporary prefix.
  # the MPI suite's two passes share their ufs: control runs (run-mpi-tests.sh ufs_run)
  DDIO_UFS_REF=$(mktemp -d "${TMPDIR:-/tmp}/ddio-ufsref.XXXXXX")
  export DDIO_UFS_REF
  # the tarball builds in a VPATH tree of its own and passes its quick tests,
  # beside make check (its compiles fill the cores the suites leave idle;
  # its quick tests' times stay out of the table)
  rm -f distcheck.rc
  # the test programs first: distdir copies test/ whole (a program being
  # linked meanwhile failed it once); make check would build them anyway
  timed check-build make -j"$jobs" check-build || rc=$?
  (DDIO_SUITE_TIMES=/dev/null make distcheck > distcheck.log 2>&1; echo $? > distcheck.rc) &
  local dist=$!
  local cases="$top/case-times.txt"; rm -f "$cases"
  DDIO_CASE_TIMES=$cases timed make-check make -j"${DDIO_TEST_JOBS:-$((jobs + 1))}" check \
    || { rc=$?; failed_logs; }
  rm -rf "$DDIO_UFS_REF"
  timed distcheck-wait dist_wait $dist || { rc=$?; echo "== failed: make distcheck"; tail -n 60 distcheck.log; }
  "$top/scripts/suite-time.sh" --report $((SECONDS - t0))
  # where a suite's time went: its slowest cases (test/lib.sh t_case, t_step)
  if [ -s "$cases" ]; then
    # (a case a nested runner timed and its suite relayed is there twice;
    # sed, not head: pipefail would take sort's SIGPIPE for a failure)
    echo; echo "slowest cases (s, suite, case):"; sort -u "$cases" | sort -k1,1nr | sed -n '1,25s/^/  /p'
  fi
  scripts/test-summary.sh || rc=$?
  # docs/CONFORMANCE.md from its claims and these logs: fails when a claim
  # names a test that does not exist, or one its suite passed without running
  scripts/conformance.py --report "$top" || rc=$?
  return $rc
}

case "$cmd" in
  demo) demo ;;
  test) tests ;;
  build) build ;;
  *) echo "usage: ./ddio.sh demo|test|build" >&2; exit 2 ;;
esac
