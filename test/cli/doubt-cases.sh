#!/usr/bin/env bash
# A failed write of a mirrored file (run-cli-tests.sh runs it inside
# `ddio-run -s 3`, servers with --redundancy mirror, DDIO_SERVERS and
# DDIO_SECRET_FILE set): a clean copy leaves nothing in doubt; a writer
# SIGKILLed while server 1 is stopped (at a fault point) leaves copies that differ (server 0's
# units written on server 0 but not on their copy, server 1), every server
# that took a change holding the file in doubt; `ddio scrub` makes the copies agree
# and settles it. Needs: DDIO (tools/ddio), T (scratch dir), ROOT
# (ddio-run's --root). Prints "PASS: name" or "FAIL: name: why" per case.
#   doubt-cases.sh      mirrored files (the servers' --redundancy mirror)
#   doubt-cases.sh ec   ec:2+1 files (ddio cp --redundancy): the torn write
#                       leaves groups whose parity is not their data's
#                       (EC_VERIFY), the scrub computes it again
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
T_TMP=$T
pid_of() { pgrep -P "$PPID" -a ddio-server | awk -v f="/s$1.port" 'index($0, f) { print $1 }'; }
doubt() { "$DDIO" stats indoubt_files | awk '{ s += $3 } END { print s + 0 }'; }
mode=${1:-mirror}
cpr=(); P=cli/doubt; said="copies made to agree"
[ "$mode" = ec ] && { cpr=(-r ec:2+1 -u 65536); P=cli/doubt/ec; said="parity computed again"; }
[ "$mode" != ec ] || [ -x "${EC_VERIFY:-}" ] || { t_fail $P/setup "EC_VERIFY '${EC_VERIFY:-}' is not a program"; exit 1; }
# agree FILE J: server J's datafile and its copy on J + 1 say the same
# (a datafile's end past its last byte reads as zeros, as a hole)
agree() {
  python3 - "$ROOT/s$2/$1" "$ROOT/s$(( ($2 + 1) % 3 ))/.ddio/copy1/$1" <<'PY'
import os, sys
a, b = (open(p, "rb").read() if os.path.exists(p) else b"" for p in sys.argv[1:3])
n = max(len(a), len(b))
if a.ljust(n, b"\0") != b.ljust(n, b"\0"):
    sys.exit("%s and %s differ (%d and %d bytes)" % (sys.argv[1], sys.argv[2], len(a), len(b)))
PY
}
# every_agrees FILE: every copy equals its primary; ec: every group's
# parity is its data's
every_agrees() {
  if [ "$mode" = ec ]; then
    "$EC_VERIFY" 2 1 65536 "$1" "$ROOT/s0" "$ROOT/s1" "$ROOT/s2" >&2 || return 1
    return 0
  fi
  agree "$1" 0 && agree "$1" 1 && agree "$1" 2
}

head -c 3000017 /dev/urandom > "$T/small"
if "$DDIO" cp "${cpr[@]}" "$T/small" ddio:/clean >/dev/null 2>"$T/cp.err" && [ "$(doubt)" = 0 ]; then
  t_pass $P/clean-write-settled
else t_fail $P/clean-write-settled "$(cat "$T/cp.err"; "$DDIO" stats indoubt_files)"; fi

# torn NAME: server 1 stops itself before its 20th independent write
# block (run-cli-tests.sh starts it with --fault 1:indep-write:20:stop), in
# the middle of this copy: the writer goes on with servers 0 and 2, which
# write their parts of the call, until it is SIGKILLed. 0 when the copies
# then differ (server 1 missed its own units and its copy of server 0's)
head -c 300000007 /dev/urandom > "$T/src"
s1=$(pid_of 1)
stopped() { [ "$(awk '{ print $3 }' "/proc/$s1/stat" 2>/dev/null)" = T ]; }
torn() {
  local w
  "$DDIO" cp "${cpr[@]}" "$T/src" "ddio:/$1" >/dev/null 2>&1 &
  w=$!
  for _ in $(seq 600); do stopped && break; sleep 0.05; done
  stopped || { kill -KILL "$w"; echo "server 1 never reached its fault point" >&2; return 1; }
  sleep 2; kill -KILL "$w"; wait "$w" 2>/dev/null
  kill -CONT "$s1"
  sleep 0.5
  ! every_agrees "$1" 2>/dev/null
}
f=""
if torn torn; then f=torn; fi
n=$(doubt)
if [ -n "$f" ] && [ "$n" -ge 2 ]; then
  t_pass $P/killed-writer-in-doubt "in doubt on $n server(s), copies differ"
else t_fail $P/killed-writer-in-doubt "in doubt on $n server(s); ${f:-the copies agree}"; fi
f=${f:-torn}

# (the killed writer's handle is closed on each server once its request
# in flight ends and it reads the connection's end: the scrub refuses a
# file open somewhere until then, and is run again, as an operator would;
# under the sanitizers that took more than 10 s)
scrub_once() {
  for _ in $(seq 120); do
    "$DDIO" scrub "/$f" >"$T/sc.out" 2>"$T/sc.err" && return 0
    grep -q "open now" "$T/sc.err" || return 1
    sleep 0.5
  done
  return 1
}
if scrub_once \
   && grep -q "^/$f: in doubt after a failed write: $said" "$T/sc.out" \
   && every_agrees "$f" 2>"$T/why"; then
  t_pass $P/scrub-makes-copies-agree
else t_fail $P/scrub-makes-copies-agree "$(cat "$T/sc.out" "$T/sc.err" "$T/why")"; fi
# --all settles what is left; then nothing is in doubt, and a second
# scrub has nothing to settle
"$DDIO" scrub --all >/dev/null 2>&1
if [ "$(doubt)" = 0 ] && "$DDIO" scrub --all >"$T/sc2.out" 2>&1 && ! grep -q "in doubt" "$T/sc2.out" \
   && "$DDIO" cp ddio:/clean "$T/back" >/dev/null && cmp -s "$T/small" "$T/back"; then
  t_pass $P/settled-once
else t_fail $P/settled-once "$(cat "$T/sc2.out")"; fi
