#!/usr/bin/env bash
# Builds the shared library, the server and the unit/server tests with
# AddressSanitizer + UndefinedBehaviorSanitizer in a copy of the sources
# (build-san/, a link into the cache; an in-tree configured source dir
# cannot also host a VPATH build) and runs them. Writes
# build-san/summary.log ("N passed, N failed").
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The build lives in the cache (DDIO_CACHE_DIR), one per checkout path, so
# a fresh clone at the same path (CI's) recompiles only what changed;
# build-san in the checkout is a link to it.
san="${DDIO_CACHE_DIR:-$HOME/.cache/ddio}/san-$(printf '%s' "$top" | sha256sum | cut -c1-12)"
mkdir -p "$san/src" || { echo "sanitizers: cannot make $san"; exit 1; }
if [ ! -L "$top/build-san" ] || [ "$(readlink "$top/build-san")" != "$san" ]; then
  rm -rf "$top/build-san" && ln -s "$san" "$top/build-san"
fi
# Copy only what the server/unit build needs; cmp keeps timestamps of
# unchanged files so rebuilds stay incremental.
cd "$top"
for f in configure.ac Makefile.am $(find common ioserver test/lib.sh test/unit test/server tools scripts -type f \
         \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o -name 'ddio-run' \) 2>/dev/null); do
  mkdir -p "$san/src/$(dirname "$f")"
  cmp -s "$f" "$san/src/$f" || cp -p "$f" "$san/src/$f"
done
mkdir -p "$san/src/m4"
cd "$san/src"
[ -x configure ] && [ configure -nt configure.ac ] && [ Makefile.in -nt Makefile.am ] || autoreconf -fi >/dev/null 2>&1 || { echo "sanitizers: autoreconf failed"; exit 1; }
[ -f Makefile ] && [ config.status -nt configure ] || ./configure --enable-sanitizers --enable-werror >/dev/null \
  || { echo "sanitizers: configure failed"; exit 1; }
targets="ioserver/ddio-server $(awk '/^UNIT_TESTS =/{f=1} f{print} f && !/\\$/{exit}' Makefile.am | sed 's/UNIT_TESTS =//; s/\\//g')"
[ -f test/server/srv_client.c ] && targets="$targets test/server/srv_client test/server/ec_verify tools/ddio"
make -j"$(nproc)" $targets >make.log 2>&1 || { tail -n 30 make.log; echo "sanitizers: build failed"; echo "sanitizers: 0 passed, 1 failed" >"$san/summary.log"; exit 1; }
# intercept_tls_get_addr=0: GCC 12's runtime (as LLVM's before 17) takes a
# dynamic TLS block whose address happens to be 16 bytes into a page for a
# pre-2.25 glibc header and reads the words before it; LeakSanitizer's
# tracer then dies at exit ("Tracer caught signal 11", exit 134). Dynamic TLS
# is what the dlopen'd libucp threads use, hence only the UCX-loaded
# processes and only now and then (llvm D147459; seen in CI, twice).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The UCX modes of the server tests load libucp in the server and in
# srv_client: UCX's own allocations kept until exit are suppressed, and its
# fatal-signal handlers and memory hooks (with them LeakSanitizer's
# stop-the-world tracer crashed at exit) are left out; ASan and UBSan check
# the rest as everywhere else. tools/ddio loads UCX too (common/ddio_client.c);
# the cli tests want its stderr empty, so the list of suppressions used is
# not printed at exit (a leak report still is).
export LSAN_OPTIONS=suppressions=$top/scripts/lsan-ucx.supp:print_suppressions=0 UCX_ERROR_SIGNALS= UCX_MEM_EVENTS=no
# the failing checks and sanitizer reports first: CI shows only part of a long log
# (and the servers' own errors from the log tails the suites print)
why() {
  grep -E '^FAIL|^ +FAIL|ERROR: AddressSanitizer|runtime error|SUMMARY' "$1" | head -n 20
  grep -E 'ddio-server\[[0-9]+\] ERROR' "$1" | head -n 5; tail -n 15 "$1"
}
# one_suite NAME LOG CMD...: "PASS: asan+ubsan NAME", or FAIL and why
one_suite() {
  local name=$1 log=$2; shift 2
  if "$@" >"$log" 2>&1; then echo "PASS: asan+ubsan $name"
  else echo "FAIL: asan+ubsan $name"; why "$log"; fi
}
# Two lanes at once (each mostly waits on servers, deadlines and the
# disk: the suite took 450 s one after another, 185 s of it CPU); each
# suite has its own servers, ports and directories.
lane_a() {
  for t in $targets; do
    case "$t" in test/unit/*) ;; *) continue ;; esac
    if ./"$t" >"$t.san.log" 2>&1; then echo "PASS: asan+ubsan $t"
    else echo "FAIL: asan+ubsan $t"; tail -n 30 "$t.san.log"; fi
  done
  if [ -x test/server/run-server-tests.sh ] && [ -x test/server/srv_client ]; then
    one_suite "server tests" server.san.log env DDIO_BUILD_DIR="$san/src" test/server/run-server-tests.sh
  fi
}
lane_b() {
  if [ -x test/server/run-security-tests.sh ] && [ -x test/server/srv_client ]; then
    one_suite "security tests" security.san.log test/server/run-security-tests.sh
  fi
  # tools/ddio and the server under the command-line tests (test/cli)
  if [ -x "$top/test/cli/run-cli-tests.sh" ] && [ -x tools/ddio ]; then
    if DDIO_BUILD_DIR="$san/src" "$top/test/cli/run-cli-tests.sh" >cli.san.log 2>&1; then
      echo "PASS: asan+ubsan cli tests"
    else echo "FAIL: asan+ubsan cli tests"; grep -E '^FAIL|ERROR: AddressSanitizer|runtime error' cli.san.log | head -n 40; fi
  fi
  # the server's identity and permission code (--auth munge) under the
  # sanitizers: the identity suite with this server, the rest from the build
  if [ -x "$top/test/server/run-identity-tests.sh" ] && [ -x "${BUILD:-$top}/test/server/munge_probe" ]; then
    one_suite "identity tests" identity.san.log env DDIO_SERVER="$san/src/ioserver/ddio-server" \
      BUILD="${BUILD:-$top}" "$top/test/server/run-identity-tests.sh"
  fi
  # TLS (ddio_tls.c in the server and in srv_client) under the sanitizers:
  # the TLS suite with this build's server and srv_client, MPI from the build
  if [ -x "$top/test/server/run-tls-tests.sh" ] && [ -x test/server/srv_client ]; then
    one_suite "tls tests" tls.san.log env DDIO_SERVER="$san/src/ioserver/ddio-server" \
      SRV_CLIENT="$san/src/test/server/srv_client" DDIO_TLS_TEST_MPI=0 BUILD="${BUILD:-$top}" \
      "$top/test/server/run-tls-tests.sh"
  fi
}
# (their cases' times would read as the plain suites' in ./ddio.sh test's table)
unset DDIO_CASE_TIMES
lane_a >lane-a.out 2>&1 &
lane_b >lane-b.out 2>&1
wait
cat lane-a.out lane-b.out
pass=$(cat lane-a.out lane-b.out | grep -c '^PASS: asan+ubsan ')
fail=$(cat lane-a.out lane-b.out | grep -c '^FAIL: asan+ubsan ')
echo "sanitizers: $pass passed, $fail failed" | tee "$san/summary.log"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
