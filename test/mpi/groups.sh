# shellcheck shell=bash
# shellcheck disable=SC2154,SC2016  # the runner's variables; bash -c bodies expand later
# test/mpi/groups.sh: the fault and error groups the MPICH runner
# (test/mpi/run-mpi-tests.sh) and the Open MPI one (test/ompi/run-ompi-tests.sh)
# both run, written once. Sourced after test/lib.sh; the runner sets
#   G_RUN=(ddio-run [--ompi])   how a ddio-run session starts
#   G_PAT                        examples' ddio-patterns, built for that MPI
#   g_ctl NAME NP PROG ARGS...   its control: PROG on a local file $U/NAME
# and the names both runners have: bin (test programs), tmp (T_TMP), top,
# DD_HINTS (a ROMIO_HINTS file keeping plain ranges on the disk-directed
# path). Inside a session `mpiexec` is that MPI's (ddio-run --ompi links
# Debian's mpiexec.openmpi first on PATH).

# g_cmp NAME FILE NS: ddio:/FILE == the control's ufs:$U/FILE, through MPI-IO
g_cmp() {
  t_step "$1/cmp" "${G_RUN[@]}" -s "$3" --root "$tmp/srv-$1" -- \
    mpiexec -n 1 "$bin/filecmp" "ddio:/$2" "ufs:$U/$2"
}

# A server over --max-connections answers "try again later" (EBUSY); the
# driver retries until its deadline. Four connections that never
# authenticate hold every slot of each server (--max-connections 4) until
# --auth-timeout 2 closes them: the ranks' open waits that out (the job
# must take over 1.5 s) and the file matches the control's.
g_busy() {
  mkdir -p "$tmp/srv-busy"
  t_step busy/ddio "${G_RUN[@]}" -s 2 --root "$tmp/srv-busy" --server-opt --max-connections=4 \
    --server-opt --auth-timeout=2 -- bash -c '
      for a in ${DDIO_SERVERS//,/ }; do
        for i in 1 2 3 4; do exec {fd}<>"/dev/tcp/${a%:*}/${a##*:}" || exit 1; done
      done
      t0=$(date +%s%N); mpiexec -n 2 "$0" "$1" || exit 1
      ms=$(( ($(date +%s%N) - t0) / 1000000 )); echo "served after ${ms} ms"
      [ "$ms" -ge 1500 ] || { echo "served before the held connections closed"; exit 1; }' \
    "$bin/t_indep" ddio:/busy
  g_ctl busy 2 "$bin/t_indep" && g_cmp busy busy 2
}

# Server 0 cuts every reply it sends without its writer thread (DONE, GET,
# PUTs, sent from the block in place, metadata answers) on purpose
# (--fault direct-send:1:short):
# the socket takes only part, cut alternately inside the header and inside
# the payload, and the writer thread must send the rest in order. Data over
# TCP (with UCX the PUT data does not go through these sends). t_smallio
# checks what it reads against its model, ddio-patterns its reads, both
# files must match the control's, and server 0's log must show cuts of both
# kinds.
g_shortsend() {
  local root="$tmp/srv-shortsend" log
  mkdir -p "$root"
  t_step shortsend/ddio "${G_RUN[@]}" -s 2 --transport tcp --keep-logs --root "$root" \
    --fault 0:direct-send:1:short -- bash -c 'mpiexec -n 3 "$0" ddio:/ss-small &&
    mpiexec -n 4 "$1" -q -r 8 -m 2 ddio:/ss-pat' "$bin/t_smallio" "$G_PAT"
  log=$T_LOG
  t_step shortsend/cuts bash -c 'grep "direct-send:1: sent" "$0" | sed -n 1,4p
    grep -q "cut in the header" "$0" && grep -q "cut in the payload" "$0"' "$log"
  g_ctl ss-small 3 "$bin/t_smallio" && t_step shortsend/cmp-ss-small "${G_RUN[@]}" -s 2 --root "$root" -- \
    mpiexec -n 1 "$bin/filecmp" ddio:/ss-small "ufs:$U/ss-small"
  g_ctl ss-pat 4 "$G_PAT" -q -r 8 -m 2 && t_step shortsend/cmp-ss-pat "${G_RUN[@]}" -s 2 --root "$root" -- \
    mpiexec -n 1 "$bin/filecmp" ddio:/ss-pat "ufs:$U/ss-pat"
}

# A collective pass that outlasts the client's silence limit (DDIO_TIMEOUT
# = 3 s + 5 s grace) for the ranks whose blocks come last: one server with
# 4 KiB blocks, one buffer and its disk throttled to 5 MiB/s, 64 MiB in
# Kotz's BLOCK pattern over 4 ranks (each pass ~13 s: rank 3's first
# GET/PUT comes after ~10 s). Only the server's PROGRESS heartbeats keep
# those ranks waiting; ddio-patterns verifies the data. Each pass must take
# > 9.5 s, or the test would no longer prove anything. (The disk-directed
# schedule: BLOCK parts are plain ranges, DD_HINTS.) Not 2 s: the one
# buffer waits at most DDIO_TIMEOUT for a rank's data, and a loaded
# 2-core machine starved a rank for 2 s ("no free buffer on disk 0").
g_heartbeat() {
  local root="$tmp/srv-heartbeat"
  mkdir -p "$root"
  export HB_SLOW='$7!="ok" || $5<9.5 {print "pattern " $1 ": " $7 " in " $5 " s (need ok, > 9.5 s)"; bad=1} END{exit bad+0}'
  t_step heartbeat-wb-rb env DDIO_TIMEOUT=3 ROMIO_HINTS="$DD_HINTS" "${G_RUN[@]}" -s 1 -b 4096 -n 1 \
    --throttle-mbps 5 --root "$root" -- bash -o pipefail -c \
    'mpiexec -n 4 "$0" -C -r 8192 -m 64 -p wb,rb ddio:/heartbeat | tee "$1" &&
    awk -F, "$HB_SLOW" "$1"' "$G_PAT" "$tmp/heartbeat.csv"
  # A rank whose own part alone outlasts the silence limit (DDIO_TIMEOUT
  # = 1 s + 5 s grace): 2 ranks, 8 MiB each in BLOCK order at 1 MiB/s. The
  # server sends it no heartbeat while it sends it data, which by UCX
  # never comes on the connection: the bytes landing must count as word
  # from the server (a loaded CI host failed heartbeat-wb-rb that way)
  export HB_LONG='$7!="ok" || $5<13 {print "pattern " $1 ": " $7 " in " $5 " s (need ok, > 13 s)"; bad=1} END{exit bad+0}'
  t_step heartbeat-long-part-prep "${G_RUN[@]}" -s 1 -b 4096 --root "$root" -- \
    mpiexec -n 2 "$G_PAT" -q -r 8192 -m 16 -p wb ddio:/hb-long
  t_step heartbeat-long-part env DDIO_TIMEOUT=1 ROMIO_HINTS="$DD_HINTS" "${G_RUN[@]}" -s 1 -b 4096 -n 1 \
    --throttle-mbps 1 --root "$root" -- bash -o pipefail -c \
    'mpiexec -n 2 "$0" -C -r 8192 -m 16 -p rb ddio:/hb-long | tee "$1" &&
    awk -F, "$HB_LONG" "$1"' "$G_PAT" "$tmp/heartbeat-long.csv"
  # ... but a hung server (SIGSTOP: no heartbeats, connection stays open)
  # must still fail the read within the timeout + grace (7 s) of silence
  t_step heartbeat-hung-server env DDIO_TIMEOUT=2 ROMIO_HINTS="$DD_HINTS" "${G_RUN[@]}" -s 1 -b 4096 -n 1 \
    --throttle-mbps 5 --root "$root" -- bash -c 'mpiexec -n 4 "$0" -C -r 8192 -m 64 -p rb ddio:/heartbeat & m=$!
    sleep 3; srv=$(pgrep -P "$PPID" -x ddio-server); kill -STOP $srv; t0=$SECONDS
    wait $m; rc=$?; dt=$((SECONDS - t0)); kill -CONT $srv
    echo "read against a stopped server: exit $rc after ${dt} s"
    [ $rc -ne 0 ] && [ $dt -ge 5 ] && [ $dt -le 12 ]' "$G_PAT"
}

# A server SIGKILLed in the middle of a long collective (disks throttled to
# 20 MiB/s, 512 MiB: ~13 s of work): the ranks whose connection dropped
# CANCEL the call on the surviving server, which fails it for every
# participant at once, instead of running its whole part first (11.4-11.9
# s after the kill before CANCEL existed; bound here: 3 s, measured ~0.45).
# The server does not come back: recovery (DDIO_RECOVER_TIMEOUT, 1 s here)
# gives up first, then the call fails fast; the bound grows by that 1 s.
# g_failfast PATTERN...: rc/wc: the disk-directed collective (one XFER for
# all ranks per server); rb/wb: plain ranges, each rank's part its own
# XFER, cancelled together by the collective call they belong to
g_failfast() {
  local root="$tmp/srv-failfast" pat
  mkdir -p "$root"
  t_step failfast-prepare "${G_RUN[@]}" -s 2 --root "$root" -- \
    mpiexec -n 4 "$G_PAT" -q -r 8192 -m 512 -p wc ddio:/ff
  for pat in "$@"; do
    # (DDIO_STREAM_MIN: wb's 128 MiB parts must be the throttled servers'
    # stream, not same-host writes done before the kill)
    t_step "failfast-$pat" env DDIO_TIMEOUT=10 DDIO_RECOVER_TIMEOUT=1 DDIO_STREAM_MIN=16m \
      "${G_RUN[@]}" -s 2 --throttle-mbps 20 \
      --root "$root" -- bash -c 'mpiexec -n 4 "$0" -q -r 8192 -m 512 -p "$1" ddio:/ff & m=$!
      sleep 2.5; srv=$(pgrep -P "$PPID" -x ddio-server | tail -1); kill -KILL $srv
      t0=$(date +%s%N); wait $m; rc=$?; dt=$(( ($(date +%s%N) - t0) / 1000000 ))
      echo "$1 with a server killed: exit $rc ${dt} ms after the kill"
      [ $rc -ne 0 ] && [ $dt -le 4000 ]' "$G_PAT" "$pat"
  done
}

# g_failfast_all REC...: a server SIGKILLed 1 s into a call (disks
# throttled so the call is still running, 256 MiB) and not restarted: EVERY
# rank's call fails within max(DDIO_TIMEOUT, DDIO_RECOVER_TIMEOUT) + 1 s of
# the kill (t_failfast measures each rank), for collective and independent
# writes and reads of REC-byte records, with recovery at its default (the
# timeout, 3 s here) and off (DDIO_RECOVER_TIMEOUT=0). G_FF_QUICK=1: the
# recovery-off cases only
g_failfast_all() {
  local root="$tmp/srv-failfast-all" rec rt mode bound
  mkdir -p "$root"
  for rec in "$@"; do
    t_step "failfast-all-prepare-$rec" "${G_RUN[@]}" -s 2 --root "$root" -- \
      mpiexec -n 4 "$bin/t_failfast" coll-write "$rec" 256 100 - "ddio:/ff$rec"
    for rt in 0 default; do
      [ "$rt" = default ] && [ "${G_FF_QUICK:-0}" = 1 ] && continue
      bound=4
      for mode in coll-write coll-read indep-write indep-read; do
        t_step "failfast-all-$mode-$rec-recover-$rt" env DDIO_TIMEOUT=3 \
          "${G_RUN[@]}" -s 2 --throttle-mbps 20 --root "$root" \
          -- bash -c '[ "$4" = 0 ] && export DDIO_RECOVER_TIMEOUT=0; rm -f "$5/kill" "$5/started"
          DDIO_FF_STARTED="$5/started" mpiexec -n 4 "$0" "$1" "$2" 256 "$3" "$5/kill" "ddio:/ff$2" & m=$!
          # from the call, not from the launch (a loaded host took 1.5 s
          # to reach the open: the kill came first, and the open failed)
          for ((k = 0; k < 3000; k++)); do [ -e "$5/started" ] && break; sleep 0.01; done
          sleep 1; srv=$(pgrep -P "$PPID" -x ddio-server | tail -1); kill -KILL $srv
          date +%s%N > "$5/kill"; wait $m' "$bin/t_failfast" "$mode" "$rec" "$bound" "$rt" "$root"
        grep -h "after the kill" "$T_LOG" 2>/dev/null || true
      done
    done
  done
}

# t_errors: a path out of the store; every other error class where it
# applies (G_CLASSES_CTL=1: and the same classes on ufs:, outside a
# session); a server lost under an open file; a full and a read-only root.
# G_MPI_TAG: mpiexec's option that prefixes each output line with its rank
# (Open MPI's --tag-output): then the lost server must be named on every
# rank's stderr, where the driver writes it (Open MPI's MPI_Error_string
# gives only the class; on MPICH t_errors finds it in the error string)
g_errors() {
  mkdir -p "$tmp/srv-escape" "$tmp/srv-classes" "$tmp/srv-lost" "$tmp/lost"
  t_step errors-escape "${G_RUN[@]}" -s 2 --root "$tmp/srv-escape" -- \
    mpiexec -n 2 "$bin/t_errors" escape ddio:/../../escape
  t_step errors-classes "${G_RUN[@]}" -s 2 --root "$tmp/srv-classes" -- \
    mpiexec -n 3 "$bin/t_errors" classes ddio:/classes
  if [ "${G_CLASSES_CTL:-0}" = 1 ]; then
    mkdir -p "$tmp/ufs"
    t_step errors-classes-ufs mpiexec -n 3 "$bin/t_errors" classes "ufs:$tmp/ufs/classes"
  fi
  # (recovery 2 s: each of its calls first tries to reconnect for that long;
  # with the default, the timeout, the group took 120 s)
  t_step errors-lostserver env DDIO_RECOVER_TIMEOUT=2 G_MPI_TAG="${G_MPI_TAG:-}" "${G_RUN[@]}" -s 2 \
    --root "$tmp/srv-lost" -- bash -c \
    'mpiexec $G_MPI_TAG -n 3 "$0" lostserver ddio:/lost "$1" > "$1/out" 2>&1 & m=$!
     for i in $(seq 600); do [ -e "$1/ready" ] && break; sleep 0.1; done
     kill -KILL $(pgrep -P "$PPID" -x ddio-server | head -1); touch "$1/killed"; wait $m; rc=$?
     cat "$1/out"; [ $rc = 0 ] || exit $rc
     [ -z "$G_MPI_TAG" ] || for r in 0 1 2; do
       grep -q "^\[[0-9]*,$r\]<stderr>:.*server 127\.0\.0\.1:" "$1/out" ||
         { echo "rank $r: no message naming the server on stderr"; exit 1; }
     done' "$bin/t_errors" "$tmp/lost"
  local small="$tmp/small"; mkdir -p "$small"
  if mount -t tmpfs -o size=3m tmpfs "$small" 2>/dev/null; then
    t_step errors-nospace "${G_RUN[@]}" -s 1 --root "$small" -- mpiexec -n 2 "$bin/t_errors" nospace ddio:/big
    t_step errors-readonly "${G_RUN[@]}" -s 1 --root "$small" -- sh -c \
      "mount -o remount,ro '$small' && mpiexec -n 2 '$bin/t_errors' readonly ddio:/ro"
    umount "$small"
  else
    t_skip errors-nospace "cannot mount a small tmpfs here: not root?"
    t_skip errors-readonly "cannot mount a small tmpfs here: not root?"
  fi
}

# g_restart_signal MODE:SIG:AFTER:TIMES: server 1 (server 0 for atomic,
# the one holding the locks) sent SIG AFTER s into a job of t_restart MODE
# (4 ranks, 30 rounds) and started again on the same port and roots 0.3 s
# after it exited (test/mpi/restart-server.sh), TIMES restarts in a row
# (each 0.5 s after the previous one accepted again); the job completes
# and its file == the control's
g_restart_signal() {
  local mode sig after times name idx=1 root rs="$SRC/test/mpi/restart-server.sh" logs=() envs=(DDIO_TIMEOUT=10)
  local rounds
  IFS=: read -r mode sig after times rounds <<<"$1"; name="restart-$mode-$sig-$after-x$times"
  rounds=${rounds:-30}
  [ "$mode" = atomic ] && idx=0
  root="$tmp/srv-$name"; mkdir -p "$root"
  # late: the signal when rank 0 says the others wait at the gate (AFTER
  # then counts from that moment)
  [ "$mode" = late ] && logs=(-l info --keep-logs) && envs+=(LATE_MARK="$root/late.mark" T_DDIO="$T_DDIO")
  t_step "$name/ddio" env "${envs[@]}" "${G_RUN[@]}" -s 2 "${logs[@]}" --root "$root" -- bash -c '
    { if [ -n "${LATE_MARK:-}" ]; then
        for ((k = 0; k < 3000; k++)); do [ -e "$LATE_MARK" ] && break; sleep 0.01; done
        # and the server holds the punctual ranks at its gate (on a loaded
        # host their XFERs can come after the mark; the gate counts as one
        # call in flight)
        for ((k = 0; k < 200; k++)); do
          [ "$("$T_DDIO" stats inflight 2>/dev/null | awk -v i="$7" "NR == i + 1 { print \$3 }")" -ge 1 ] 2>/dev/null && break
          sleep 0.02
        done
      fi
      "$0" "$7" "$1" 0.3 "$6" "$4/restarted.pid" &&
      for ((k = 1; k < $8; k++)); do "$0" "$7" "$1" 0.3 0.5 "$4/restarted.pid" || exit 1; done; } & r=$!
    mpiexec -n 4 "$2" "$3" "$9" 100 "ddio:/$5"; rc=$?
    wait $r || rc=1
    [ -s "$4/restarted.pid" ] && kill "$(cat "$4/restarted.pid")"
    exit $rc' "$rs" "$sig" "$bin/t_restart" "$mode" "$root" "$name" "$after" "$idx" "$times" "$rounds"
  grep -h "^restart:\|rounds" "$T_LOG" 2>/dev/null || true
  [ "$mode" = late ] && t_case "$name/backoff" "" g_late_backoff "$T_LOG"
  g_ctl "$name" 4 "$bin/t_restart" "$mode" "$rounds" 0 && g_cmp "$name" "$name" 2
}
# the ranks waiting at the stopped server's gate were refused while it
# drained (so the case happened), and backed off meanwhile: a few resends
# each, not a loop that keeps the drain busy until their recovery runs out
g_late_backoff() {
  local n
  n=$(sed -n 's/.*stopping: \([0-9]*\) collective request(s) refused.*/\1/p' "$1" | head -1)
  [ -n "$n" ] || t_why "the stopped server refused no resent collective (no gate at SIGTERM?)" || return
  [ "$n" -le 40 ] || t_why "$n resent collectives refused while the server drained (a resend loop)" || return
  T_NOTE="$n resends refused while draining; $(grep -ho "exited after [0-9]* ms" "$1" | head -1)"
}

# g_restart_fault MODE:POINT:N: the server (0 for atomic, else 1) kills
# itself the N-th time it reaches --fault POINT and is restarted 0.3 s
# after it died (restart-server.sh fault); the job completes and its file
# == the control's; at a done point the restarted server's log must say it
# ran the resent collective
g_restart_fault() {
  local mode point n name idx=1 root rs="$SRC/test/mpi/restart-server.sh"
  IFS=: read -r mode point n <<<"$1"; name="restart-at-$mode-$point-$n"
  [ "$mode" = atomic ] && idx=0
  root="$tmp/srv-$name"; mkdir -p "$root"
  t_step "$name/ddio" env DDIO_TIMEOUT=10 "${G_RUN[@]}" -s 2 -l info --root "$root" --fault "$idx:$point:$n:kill" -- bash -c '
    "$0" "$5" fault 0.3 0 "$3/restarted.pid" & r=$!
    for ((k = 0; k < 1000; k++)); do [ -e "$3/restarted.pid.found" ] && break; sleep 0.01; done
    mpiexec -n 4 "$1" "$2" 30 100 "ddio:/$4"; rc=$?
    wait $r || rc=1
    [ -s "$3/restarted.pid" ] && kill "$(cat "$3/restarted.pid")"
    exit $rc' "$rs" "$bin/t_restart" "$mode" "$root" "$name" "$idx"
  grep -h "^restart:\|rounds" "$T_LOG" 2>/dev/null || true
  if [ "$point" = done ]; then
    t_step "$name/re-formed" grep "resent: running" "$root/restarted.pid.log"
  fi
  g_ctl "$name" 4 "$bin/t_restart" "$mode" 30 0 && g_cmp "$name" "$name" 2
}
