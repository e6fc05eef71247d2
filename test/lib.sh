# shellcheck shell=bash
# test/lib.sh: the one library every test runner (test/*/run-*.sh) sources.
#
#   . "$(dirname "$0")/../lib.sh"
#   t_init NAME            # closing line "NAME: N passed, N failed[, N skipped]"
#   t_step NAME CMD...     # or t_pass / t_fail / t_skip / t_expect_fail ...
#   t_done                 # failed names, the closing line; exit 0 iff none failed
#
# Results: one line per test, "PASS: NAME [(NOTE)]", "FAIL: NAME: WHY",
# "SKIP: NAME: WHY"; then "failed: NAME" per failed test and the closing line,
# which scripts/test-summary.sh and CI read. A runner that stops before
# t_done (an error, a signal) still closes with that line, with one more
# failure, NAME/incomplete.
# Cleanup: t_defer registers a command, run at EXIT/INT/TERM in reverse
# order of registration (T_TMP, the runner's temp dir, is the first one
# registered, so it goes last; servers started here are stopped before it).
# Every wait has a deadline: steps T_LIMIT (DDIO_TEST_LIMIT, default 300 s),
# server start T_START_LIMIT (30 s), server stop T_STOP_LIMIT (30 s).
# Runners do not use `set -e`: the functions here return non-zero to report.
#
# Paths: SRC is the source tree, BUILD the build tree (DDIO_BUILD_DIR, else
# BUILD as make check sets it, else the source tree); T_SERVER_BIN
# ($DDIO_SERVER), T_DDIO ($DDIO_TOOL), T_RUN (tools/ddio-run) the programs.

# shellcheck disable=SC2034  # the variables set here are the runners'
[ -n "${T_LIB_LOADED:-}" ] && return 0
T_LIB_LOADED=1
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${DDIO_BUILD_DIR:-${BUILD:-$SRC}}
BUILD=$(cd "$BUILD" && pwd)
T_SERVER_BIN=${DDIO_SERVER:-$BUILD/ioserver/ddio-server}
T_DDIO=${DDIO_TOOL:-$BUILD/tools/ddio}
T_RUN=$BUILD/tools/ddio-run
T_LIMIT=${DDIO_TEST_LIMIT:-300}
T_START_LIMIT=${T_START_LIMIT:-30}
T_STOP_LIMIT=${T_STOP_LIMIT:-30}
T_TAIL=${T_TAIL:-40}
T_SUITE='test'
T_PASS=0 T_FAIL=0 T_SKIP=0 T_FAIL_ALL=0
T_FAILED=() T_SECTIONS=() T_CLEANUP=() T_SELECT=()
T__SUM_PASS=0 T__SUM_FAIL=0 T__SUM_SKIP=0 T__NAME=
T_TMP="" T_TEE="" T__DONE="" T__MAIN=""
T__T0=$SECONDS

# ---- results ---------------------------------------------------------------------

# t_say LINE...: print (and append to $T_TEE, when set)
t_say() {
  printf '%s\n' "$*"
  if [ -n "$T_TEE" ]; then printf '%s\n' "$*" >>"$T_TEE"; fi
}

# t_pass [-q] NAME [NOTE]: one passed test (-q: counted, not printed)
t_pass() {
  local quiet=0; [ "$1" = -q ] && { quiet=1; shift; }
  T_PASS=$((T_PASS + 1))
  [ $quiet = 1 ] || t_say "PASS: $1${2:+ ($2)}"
}

# t_fail NAME [WHY [LOG]]: one failed test (and LOG's last T_TAIL lines, indented)
t_fail() {
  T_FAIL=$((T_FAIL + 1)); T_FAIL_ALL=$((T_FAIL_ALL + 1)); T_FAILED+=("$1")
  t_say "FAIL: $1${2:+: $2}"
  [ -z "${3:-}" ] || t_indent "$3" "$T_TAIL"
}

# t_skip NAME [WHY]: a test that could not run here (counted as skipped)
t_skip() {
  T_SKIP=$((T_SKIP + 1))
  t_say "SKIP: $1${2:+: $2}"
}

# t_result NAME STATUS [WHY] [NOTE]: pass when STATUS is 0, else fail with WHY
t_result() {
  if [ "$2" = 0 ]; then t_pass "$1" "${4:-}"; else t_fail "$1" "${3:-exit $2}"; fi
}

# t_judge NAME SECS OUT JUDGE...: a recorded run judged by the command
# JUDGE (it prints notes, or why not, and fails): PASS NAME (SECSs, notes),
# or FAIL NAME: SECSs, why, and OUT's last 25 lines (the run's output)
t_judge() {
  local name=$1 sec=$2 out=$3 why; shift 3
  if why=$("$@"); then t_pass "$name" "${sec}s${why:+, $why}"
  else t_fail "$name" "${sec}s, $why"; t_indent "$out" 25; fi
}

# t_indent FILE [LINES]: FILE (its last LINES lines), indented, for a failure's context
t_indent() {
  [ -f "$1" ] || return 0
  if [ -n "${2:-}" ]; then tail -n "$2" "$1"; else cat "$1"; fi | sed 's/^/    /'
}

# t_section LABEL: later results count under LABEL. The lines of earlier
# sections (a control run, e.g. "romio-ufs: ...") are printed by t_done
# before the closing line, which counts the last section; a failure in any
# section fails the runner.
t_section() {
  if [ $((T_PASS + T_FAIL + T_SKIP)) -gt 0 ]; then T_SECTIONS+=("$(t__line)"); fi
  T__SUM_PASS=$((T__SUM_PASS + T_PASS)) T__SUM_FAIL=$((T__SUM_FAIL + T_FAIL))
  T__SUM_SKIP=$((T__SUM_SKIP + T_SKIP))
  T_SUITE=$1 T_PASS=0 T_FAIL=0 T_SKIP=0
}

t__line() {
  local s=""; [ "$T_SKIP" -gt 0 ] && s=", $T_SKIP skipped"
  echo "$T_SUITE: $T_PASS passed, $T_FAIL failed$s"
}

# t_relay [-p PREFIX] FILE: the PASS/FAIL/SKIP lines an inner program (a
# case script inside ddio-run, srv_client) wrote to FILE, printed and
# counted as this runner's, their names prefixed with PREFIX. Sets
# T_RELAYED (result lines) and T_RELAYED_FAIL (FAIL lines); returns 1 when
# FILE had no result line.
t_relay() {
  local line r pre=""
  [ "$1" = -p ] && { pre=$2; shift 2; }
  T_RELAYED=0 T_RELAYED_FAIL=0
  while IFS= read -r line; do
    case $line in
      "PASS: "*) T_PASS=$((T_PASS + 1)); line="PASS: $pre${line#PASS: }"
                 # a program's own time for the case, "NAME (S s)": noted
                 [[ $line =~ ^PASS:\ ([^ ]+).*\(([0-9]+)(\.[0-9]+)?\ s\)$ ]] \
                   && t__case_time "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" ;;
      "FAIL: "*) r=$pre${line#FAIL: }; T_FAIL=$((T_FAIL + 1)); T_FAIL_ALL=$((T_FAIL_ALL + 1))
                 T_FAILED+=("${r%%: *}"); T_RELAYED_FAIL=$((T_RELAYED_FAIL + 1)); line="FAIL: $r" ;;
      "SKIP: "*) T_SKIP=$((T_SKIP + 1)); line="SKIP: $pre${line#SKIP: }" ;;
      *) continue ;;
    esac
    T_RELAYED=$((T_RELAYED + 1)); t_say "$line"
  done <"$1"
  [ $T_RELAYED -gt 0 ]
}

# t_done: the failed tests' names, the wall time, earlier sections' lines and
# the closing line; exits 0 when nothing failed and something passed
t_done() {
  T__DONE=1
  t_say ""
  t_say "${T__NAME:-$T_SUITE}: wall time $((SECONDS - T__T0))s"
  t__close
  [ "$T_FAIL_ALL" -eq 0 ] && [ "$T_PASS" -gt 0 ] && exit 0
  exit 1
}

t__close() {   # the failed tests' names, earlier sections, the closing line
  local f l s=""
  for f in "${T_FAILED[@]}"; do t_say "failed: $f"; done
  for l in "${T_SECTIONS[@]}"; do t_say "$l"; done
  t_say "$(t__line)"
  # with sections, the runner's total last (scripts/test-summary.sh reads it)
  if [ ${#T_SECTIONS[@]} -gt 0 ]; then
    [ $((T__SUM_SKIP + T_SKIP)) -gt 0 ] && s=", $((T__SUM_SKIP + T_SKIP)) skipped"
    t_say "$T__NAME: $((T__SUM_PASS + T_PASS)) passed, $((T__SUM_FAIL + T_FAIL)) failed$s (all sections)"
  fi
}

# t_unusable NAME WHY: what the suite needs is missing: one named failure, the end
t_unusable() {
  t_fail "$1" "$2"
  t_done
}

# ---- start, temp dir, cleanup ------------------------------------------------------

# t_init NAME: the closing line's name; T_TMP (removed at exit unless
# T_KEEP=1); traps. T_TEE=FILE (set before) also writes the results there.
t_init() {
  T_SUITE=$1 T__NAME=$1
  T__MAIN=$BASHPID
  [ -n "$T_TEE" ] && : >"$T_TEE"
  trap 't__exit' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ddio-$1.XXXXXX") || { echo "$1: mktemp failed" >&2; exit 1; }
  if [ "${T_KEEP:-0}" = 1 ]; then echo "$1: keeping $T_TMP"; else t_defer rm -rf "$T_TMP"; fi
  # Open MPI's session directory per runner: runners starting mpirun at
  # the same moment raced on /tmp/ompi.HOST.UID ("mkdir: File exists")
  export OMPI_MCA_orte_tmpdir_base="$T_TMP"
}

t__exit() {
  local rc=$?
  [ "$BASHPID" = "$T__MAIN" ] || return 0    # a subshell's exit
  trap '' INT TERM
  if [ -z "$T__DONE" ]; then
    T__DONE=1
    t_fail "$T_SUITE/incomplete" "the runner stopped (exit $rc) before its end"
    t__close
    [ $rc -eq 0 ] && rc=1
  fi
  t__cleanup
  exit $rc
}

t__cleanup() {
  local i
  for ((i = ${#T_CLEANUP[@]} - 1; i >= 0; i--)); do eval "${T_CLEANUP[i]}" >/dev/null 2>&1; done
  T_CLEANUP=()
}

# t_defer CMD [ARGS...]: run CMD at exit (commands and functions; reverse order)
t_defer() { T_CLEANUP+=("$(printf '%q ' "$@")"); }

# t_tmpdir VAR [PARENT]: a new directory under PARENT (default T_TMP), removed at exit
t_tmpdir() {
  local d; d=$(mktemp -d "${2:-$T_TMP}/ddio-$T_SUITE.XXXXXX") || return 1
  t_defer rm -rf "$d"
  printf -v "$1" '%s' "$d"
}

# t_secret FILE: a fresh 32-byte shared secret, mode 0600
t_secret() { ( umask 077 && head -c 32 /dev/urandom | base64 >"$1" ); }

# ---- waiting, always with a deadline ----------------------------------------------

# t_alive PID: PID runs (a zombie, exited but not yet waited for, does not;
# a zombie leader whose other threads are still exiting does: they hold the
# process's descriptors, its port among them)
t_alive() {
  local s
  s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  s=${s##*) }
  [ "${s%% *}" != Z ] && return 0
  [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -gt 1 ]
}

t__gone() { ! t_alive "$1"; }

# t_wait_for [-p PID] SECS CMD...: until CMD succeeds; 1 after SECS, 2 as
# soon as PID (e.g. the server that should make CMD true) has exited
t_wait_for() {
  local pid=""; [ "$1" = -p ] && { pid=$2; shift 2; }
  local end=$((SECONDS + $1)); shift
  until "$@"; do
    if [ -n "$pid" ] && ! t_alive "$pid"; then "$@" && return 0; return 2; fi
    [ $SECONDS -lt $end ] || return 1
    sleep 0.05
  done
}

# t_wait_pid PID SECS: wait until PID (a child of this shell) exits, for at
# most SECS; returns its exit status, or 124 if it still runs then
t_wait_pid() {
  t_wait_for "$2" t__gone "$1" || return 124
  local rc=0; wait "$1" 2>/dev/null || rc=$?
  return $rc
}

# t_kill PID [GRACE]: stop PID (and a stopped PID): SIGTERM, SIGKILL after GRACE s (10)
t_kill() {
  if t_alive "$1"; then
    kill -CONT "$1" 2>/dev/null; kill -TERM "$1" 2>/dev/null
    t_wait_for "${2:-10}" t__gone "$1" || kill -KILL "$1" 2>/dev/null
  fi
  wait "$1" 2>/dev/null
  return 0
}

# t_silent_listener PORTFILE: a listener on 127.0.0.1 that accepts and never
# answers (a hung server); its port into PORTFILE, its pid in T_SILENT_PID
# (killed at the end, or earlier with t_kill)
t_silent_listener() {
  python3 -c 'import socket,time,sys
s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(16)
open(sys.argv[1],"w").write(str(s.getsockname()[1])); time.sleep(120)' "$1" &
  T_SILENT_PID=$!
  t_defer t_kill "$T_SILENT_PID"
  t_wait_for -p "$T_SILENT_PID" 10 test -s "$1"
}

# t_hold_port HOST:PORT: keep a killed server's port from being taken by
# another process (make distcheck's suites run beside make check's, each
# starting servers on ports the kernel picks) while the test still dials
# it: a socket bound there and never listening, so a client is refused as
# by a dead server. It ends with the shell that made it (or at
# t_release_port HOST:PORT, before a server starts on it again).
declare -gA T_HELD_PORTS
t_hold_port() {
  local f; f=$(mktemp "${T_TMP:-/tmp}/held.XXXXXX")
  python3 -c 'import os,socket,sys,time
h,p=sys.argv[1].rsplit(":",1); pp=os.getppid()
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)
s.bind((h,int(p))); open(sys.argv[2],"w").write("held")
while os.getppid()==pp: time.sleep(0.2)' "$1" "$f" &
  T_HELD_PORTS[$1]=$!
  t_defer t_kill "$!"
  t_wait_for -p "$!" 5 test -s "$f"
}
t_release_port() {
  [ -n "${T_HELD_PORTS[$1]:-}" ] || return 0
  t_kill "${T_HELD_PORTS[$1]}"
  unset "T_HELD_PORTS[$1]"
}

# t_run_limited SECS CMD...: CMD with a deadline; 124 when it was cut off.
# CMD may be a shell function: it runs in a subshell that runs its own
# t_defer'd commands when it ends, and is stopped (with its children) at
# the deadline.
t_run_limited() {
  local limit=$1; shift
  if ! declare -F "$1" >/dev/null; then
    timeout -k 10 "$limit" "$@"; return
  fi
  ( T__MAIN=$BASHPID T__DONE=1 T_CLEANUP=()
    trap 't__cleanup' EXIT; trap 'exit 143' TERM; trap 'exit 130' INT
    "$@" ) &
  local p=$!
  # the watchdog: exit 0 when cancelled, 1 when it fired
  ( s=""; trap 'kill $s 2>/dev/null; exit 0' TERM
    sleep "$limit" & s=$!; wait $s || exit 0
    trap 'kill $s 2>/dev/null; exit 1' TERM
    echo "time limit ${limit}s" >&2
    kill -TERM "$p" 2>/dev/null; pkill -TERM -P "$p" 2>/dev/null
    sleep 5 & s=$!; wait $s
    pkill -KILL -P "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null
    exit 1 ) &
  local w=$! rc=0 fired=0
  wait "$p" || rc=$?
  kill -TERM "$w" 2>/dev/null; wait "$w" || fired=1
  [ $fired = 1 ] && return 124
  return $rc
}

t__why() {   # t__why STATUS LIMIT
  case $1 in 124|137) echo "timed out after ${2}s" ;; *) echo "exit $1" ;; esac
}

# ---- steps ------------------------------------------------------------------------

# t__case_time NAME SECS: with DDIO_CASE_TIMES set (./ddio.sh test), a line
# "SECS SUITE NAME" there, for the slowest cases at the end of a full run
# (SUITE: make check's name for it, DDIO_CASE_SUITE from suite-time.sh)
t__case_time() {
  [ -n "${DDIO_CASE_TIMES:-}" ] && [ "$2" -gt 0 ] \
    && echo "$2 ${DDIO_CASE_SUITE:-$T_SUITE} $1" >>"$DDIO_CASE_TIMES"
  return 0
}

# t_case NAME NOTE FN [ARGS...]: FN run in this shell (each of its waits
# bounded by its own deadline); PASS NAME (NOTE, or the T_NOTE FN set), or
# FAIL with the reason FN gave with t_why. Returns FN's status.
t_case() {
  local name=$1 note=$2 rc=0 t0=$SECONDS; shift 2
  T_WHY="" T_NOTE=""
  "$@" || rc=$?
  t__case_time "$name" $((SECONDS - t0))
  if [ $rc -eq 0 ]; then t_pass "$name" "${T_NOTE:-$note}"; else t_fail "$name" "${T_WHY:-exit $rc}"; fi
  return $rc
}
# t_why REASON: (in a t_case function) say why it failed; returns 1, so:
#   grep -q x "$f" || t_why "no x in $f" || return
t_why() { T_WHY=$*; return 1; }

# t_step [-t SECS] [-v] [-w N] NAME CMD...: CMD under a deadline (T_LIMIT),
# its output in T_LOG ($T_TMP/NAME.log); PASS, or FAIL with the log's last
# N lines (1) in the reason and its last T_TAIL lines below (-v: the whole
# output either way). Returns CMD's status.
t_step() {
  local limit=$T_LIMIT show=0 nwhy=1
  while :; do
    case $1 in -t) limit=$2; shift 2 ;; -v) show=1; shift ;; -w) nwhy=$2; shift 2 ;; *) break ;; esac
  done
  local name=$1; shift
  T_LOG="$T_TMP/${name//[^A-Za-z0-9._-]/_}.log"
  local t0=$SECONDS rc=0
  t_run_limited "$limit" "$@" >"$T_LOG" 2>&1 || rc=$?
  t__case_time "$name" $((SECONDS - t0))
  if [ $rc -eq 0 ]; then
    t_pass "$name" "$((SECONDS - t0)) s"
    [ $show = 1 ] && t_indent "$T_LOG"
  else
    local why; why=$(t__why $rc "$limit")
    case $rc in 124|137) ;; *) why="$why after $((SECONDS - t0)) s" ;; esac
    local last; last=$(grep -v '^[[:space:]]*$' "$T_LOG" | tail -n "$nwhy" | tr '\n' '|' | head -c 600)
    t_fail "$name" "$why${last:+: ${last%|}}"
    if [ $show = 1 ]; then t_indent "$T_LOG"; else t_indent "$T_LOG" "$T_TAIL"; fi
  fi
  return $rc
}

# t_expect_fail [-t SECS] [-x STATUS] [-2] [-v] NAME TEXT CMD...: CMD must
# fail (with STATUS, when given; never by the deadline) and say TEXT (-2: on
# stderr; else anywhere in its output)
t_expect_fail() {
  local limit=$T_LIMIT want="" erronly=0 show=0
  while :; do
    case $1 in
      -t) limit=$2; shift 2 ;; -x) want=$2; shift 2 ;; -2) erronly=1; shift ;;
      -v) show=1; shift ;; *) break ;;
    esac
  done
  local name=$1 text=$2; shift 2
  T_LOG="$T_TMP/${name//[^A-Za-z0-9._-]/_}.log"
  local rc=0
  t_run_limited "$limit" "$@" >"$T_LOG.out" 2>"$T_LOG.err" || rc=$?
  cat "$T_LOG.out" "$T_LOG.err" >"$T_LOG"
  local said="$T_LOG"; [ $erronly = 1 ] && said="$T_LOG.err"
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && { [ -z "$want" ] || [ $rc = "$want" ]; } \
     && grep -qF -- "$text" "$said"; then
    t_pass "$name"
  else
    t_fail "$name" "exit $rc, wanted ${want:-a failure} and '$text': $(head -c 300 "$said")"
  fi
  [ $show = 1 ] && t_indent "$T_LOG"
  return 0
}

# t_results FILE: a checker's result lines as this runner's cases ("PASS:
# NAME (NOTE)", "FAIL: NAME: WHY"; any other line is said); T_NRESULTS: how
# many cases it held
t_results() {
  local line
  T_NRESULTS=0
  while IFS= read -r line; do
    case $line in
      "PASS: "*) line=${line#PASS: }; T_NRESULTS=$((T_NRESULTS + 1))
        t_pass "${line%% (*}" "$(expr "$line" : '[^(]* (\(.*\))$')" ;;
      "FAIL: "*) line=${line#FAIL: }; T_NRESULTS=$((T_NRESULTS + 1))
        t_fail "${line%%: *}" "${line#*: }" ;;
      *) t_say "$line" ;;
    esac
  done <"$1"
}

# ---- selection ----------------------------------------------------------------------

# t_select ARGS...: the runner's selected groups or tests (none: all)
t_select() { T_SELECT=("$@"); }
# t_selected NAME: NAME was selected
t_selected() {
  [ ${#T_SELECT[@]} -eq 0 ] && return 0
  local s; for s in "${T_SELECT[@]}"; do [ "$s" = "$1" ] && return 0; done
  return 1
}

# ---- local ddio servers -------------------------------------------------------------

# t_server_start [-n NETNS] [-e VAR=VALUE]... [-N] DIR [ARGS...]: a
# ddio-server with --port-file DIR/port (and --listen 127.0.0.1:auto, a
# port a restart can keep, unless ARGS name --listen or --config), its log
# DIR/log; DIR is created. Waits
# (T_START_LIMIT) until the port file is written, which the server does
# after listen(); -N returns at once (the caller waits for its own event).
# Sets T_SRV_PID, T_SRV_DIR, T_SRV_LOG, and once listening T_SRV_PORT and
# T_SRV_ADDR (HOST:PORT). The server is stopped at exit if still running.
# Returns 1 (T_SRV_WHY says why, the log's tail printed) if it did not start.
t_server_start() {
  local pre=() envs=() nowait=0
  while :; do
    case $1 in
      -n) pre=(ip netns exec "$2"); shift 2 ;;
      -e) envs+=("$2"); shift 2 ;;
      -N) nowait=1; shift ;;
      *) break ;;
    esac
  done
  local dir=$1; shift
  mkdir -p "$dir"
  local listen=(--listen 127.0.0.1:auto) a prev=""
  T_SRV_HOST=127.0.0.1
  for a in "$@"; do
    case $a in --config|--config=*) listen=() ;; esac
    case $prev in --listen) T_SRV_HOST=${a%:*}; listen=() ;; esac
    case $a in --listen=*) T_SRV_HOST=${a#--listen=}; T_SRV_HOST=${T_SRV_HOST%:*}; listen=() ;; esac
    prev=$a
  done
  T_SRV_DIR=$dir T_SRV_LOG=$dir/log T_SRV_PORT="" T_SRV_ADDR="" T_SRV_WHY=""
  rm -f "$dir/port"
  "${pre[@]}" env "${envs[@]}" "$T_SERVER_BIN" "${listen[@]}" --port-file "$dir/port" "$@" \
    2>"$T_SRV_LOG" &
  T_SRV_PID=$!
  t_defer t_kill "$T_SRV_PID"
  [ $nowait = 1 ] && return 0
  t_server_wait_port
}

# t_server_wait_port: (after t_server_start -N) wait for the port file
t_server_wait_port() {
  local rc=0
  t_wait_for -p "$T_SRV_PID" "$T_START_LIMIT" test -s "$T_SRV_DIR/port" || rc=$?
  if [ $rc -ne 0 ]; then
    if [ $rc = 2 ]; then T_SRV_WHY="the server exited before listening"
    else T_SRV_WHY="no port file after ${T_START_LIMIT}s"; fi
    t_indent "$T_SRV_LOG" 20
    t_kill "$T_SRV_PID"
    return 1
  fi
  T_SRV_PORT=$(cat "$T_SRV_DIR/port")
  T_SRV_ADDR=$T_SRV_HOST:$T_SRV_PORT
}

# t_server_stop [PID]: SIGTERM (default: T_SRV_PID), wait for the exit
# (T_STOP_LIMIT, then SIGKILL and 124); returns the server's exit status
t_server_stop() {
  local pid=${1:-$T_SRV_PID} rc=0
  [ -n "$pid" ] || return 0
  kill -CONT "$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null
  t_wait_pid "$pid" "$T_STOP_LIMIT" || rc=$?
  if [ $rc = 124 ]; then kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  return $rc
}

# ---- another host ---------------------------------------------------------------------

# t_other_host NET: two hosts for tests of what crosses hosts: network
# namespaces T_HNS ("this host": start its server with t_server_start -n
# "$T_HNS") and T_NS ("the other"), joined by a veth pair on NET.ID.0/24
# (ID from the pid), T_HOSTIP (NET.ID.1) and T_NSIP (NET.ID.2); removed at
# exit. Nothing is added to the machine's own namespace: UCX in the other
# suites running beside this one would wire over such an interface, then
# meet it gone (an Open MPI job failed so). In a t_case function: says why
# on failure.
t_other_host() {
  local id=$(( $$ % 200 + 20 )); T_NS="ddns$$" T_HNS="ddhs$$" T_HOSTIP="$1.$id.1" T_NSIP="$1.$id.2"
  ip netns add "$T_HNS" && ip netns add "$T_NS" || t_why "cannot make a network namespace" || return
  t_defer ip netns del "$T_NS"
  t_defer ip netns del "$T_HNS"
  ip -n "$T_HNS" link add h0 type veth peer name eth0 netns "$T_NS" \
    && ip -n "$T_HNS" addr add "$T_HOSTIP/24" dev h0 && ip -n "$T_HNS" link set h0 up \
    && ip -n "$T_HNS" link set lo up && ip -n "$T_NS" addr add "$T_NSIP/24" dev eth0 \
    && ip -n "$T_NS" link set eth0 up && ip -n "$T_NS" link set lo up || t_why "veth setup failed"
}

# ---- MPI and FUSE -------------------------------------------------------------------

# t_mpi_env DEFAULT_DDIO_TIMEOUT: the build's ddio-enabled MPICH ($BUILD/mpich)
# first on PATH and LD_LIBRARY_PATH, a default deadline for every ddio wait
# (DDIO_TIMEOUT), Hydra kept on loopback (machines without a resolvable host
# name). Sets MPI (that MPICH); the suite is unusable without it.
t_mpi_env() {
  MPI=$BUILD/mpich
  [ -x "$MPI/bin/mpicc" ] && [ -x "$MPI/bin/mpiexec" ] \
    || t_unusable "$T_SUITE/build" "$MPI/bin/mpicc missing: run make first"
  local real; real=$(cd "$MPI" && pwd -P)
  export PATH="$real/bin:$PATH"
  export LD_LIBRARY_PATH="$real/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export DDIO_TIMEOUT=${DDIO_TIMEOUT:-$1}
  export HYDRA_IFACE=${HYDRA_IFACE:-lo}
  # the suites run 3-6 ranks per 2 cores, and several suites at once: a
  # waiting rank gives the CPU away after 10 polls, not 1000
  # (scripts/build-mpich.sh --enable-yield)
  export MPIR_CVAR_POLLS_BEFORE_YIELD=${MPIR_CVAR_POLLS_BEFORE_YIELD:-10}
}

# t_have_fuse: a ddio mount can be made here (tools/ddio-fuse, fusermount3, /dev/fuse)
t_have_fuse() {
  [ -x "$BUILD/tools/ddio-fuse" ] && command -v fusermount3 >/dev/null && [ -e /dev/fuse ]
}

# t_stat_sum FILE KEY: the sum of counter KEY over the servers in FILE
# (`ddio stats` output: "HOST:PORT KEY VALUE" lines)
t_stat_sum() { awk -v k="$2" '$2==k{s+=$3} END{print s+0}' "$1" 2>/dev/null || echo 0; }

# t_other_transport: the transport a suite's second pass uses: tcp where the
# default (auto, scripts/auto-transport.sh) is ucx, else ucx
t_other_transport() {
  if [ "$("$SRC/scripts/auto-transport.sh")" = tcp ]; then echo ucx; else echo tcp; fi
}
# t_other_pass: the second pass's environment: the other transport, and
# reads and writes through the servers (DDIO_LOCAL_READ=0,
# DDIO_LOCAL_WRITE=0): the first pass reads contiguous ranges, and writes
# independent ones, on this host in the servers' datafiles, as users do, so
# the servers' paths for those are exercised here
t_other_pass() {
  DDIO_TRANSPORT=$(t_other_transport)
  T_OTHER_PASS=1    # (cases run on one transport only skip this pass)
  export DDIO_TRANSPORT DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 T_OTHER_PASS
}
