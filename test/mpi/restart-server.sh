#!/usr/bin/env bash
# Restart one server of a ddio-run session, as an operator (or systemd)
# would: inside the session (DDIO_SERVERS set), after AFTER seconds send
# SIGNAL to server I (its index in DDIO_SERVERS), wait until it has exited,
# wait DELAY seconds, start it again with the same arguments on the same
# port and roots (without --fault), and wait until it accepts connections.
# SIGNAL `fault`: send nothing; the server kills itself at its --fault point
# (a precise phase); wait (up to 60 s) until it has, then restart it. The
# caller starts the job once PIDFILE.found exists (the server was found).
# Prints what it measured:
#   restart: SIGTERM; exited after X ms; accepting again after Y ms
#   (Y - DELAY: the start itself, Z ms)
# The new server's pid goes to PIDFILE: the caller stops it (ddio-run stops
# only the servers it started). Its log is appended to PIDFILE.log.
# usage: restart-server.sh I SIGNAL DELAY AFTER PIDFILE
set -u
idx=$1 sig=$2 delay=$3 after=$4 pidfile=$5
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# shellcheck source=test/mpi/find-server.sh
. "$(dirname "$0")/find-server.sh"
find_server "$idx" || { echo "restart-server: no server on port $port" >&2; exit 1; }
exe=$(readlink "/proc/$pid/exe")
args=()
skip=0
for ((k = 1; k < ${#argv[@]}; k++)); do
  a=${argv[$k]}
  if [ $skip = 1 ]; then skip=0; continue; fi
  case $a in
    --fault) skip=1 ;;
    --listen) args+=(--listen "127.0.0.1:$port"); skip=1 ;;
    --port-file) args+=(--port-file "$pidfile.port"); skip=1 ;;
    *) args+=("$a") ;;
  esac
done

# found and its arguments read: a job may start now (a fault point can kill
# the server before this script would have found it)
touch "$pidfile.found"
sleep "$after"
wait_ms=30000
if [ "$sig" = fault ]; then
  wait_ms=60000
  sig=KILL-at-fault-point   # (the message's name for it)
  t0=$(ms)
else
  t0=$(ms)
  kill -"$sig" "$pid" || exit 1
fi
# gone, or a zombie (a restarted server's parent, an earlier run of this
# script, has exited: it is reaped late, but it no longer holds the port).
# Not a zombie leader whose other threads are still exiting: a killed
# server's leader shows Z while a thread finishes a system call, and its
# descriptors (the port, the replay file's lock) go with the last thread
# (CI, restart-coll-KILL-1-x3: the new server found the port in use)
alive() {
  [ -r "/proc/$1/stat" ] || return 1
  [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ] && return 0
  [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -gt 1 ]
}
# a job that stalls before the fault point leaves nothing to explain it
# but the processes themselves: their state and stacks (gdb, if present)
dump_stall() {
  local p
  echo "restart-server: the job's and the servers' processes:" >&2
  ps -u "$(id -u)" -o pid,stat,etime,time,args 2>/dev/null | grep -E "t_restart|ddio-server|mpiexec" | grep -v grep >&2
  command -v gdb >/dev/null || return 0
  for p in $(pgrep -u "$(id -u)" -x t_restart) $(pgrep -u "$(id -u)" -x ddio-server); do
    echo "--- stacks of $p ($(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null | cut -c1-80))" >&2
    timeout 20 gdb -p "$p" -batch -ex "thread apply all bt 12" 2>/dev/null | grep -E "^#|^Thread" >&2
  done
}
while alive "$pid"; do
  if [ $(( $(ms) - t0 )) -gt $wait_ms ]; then
    echo "restart-server: $pid still running $((wait_ms / 1000)) s after SIG$sig" >&2
    [ "$sig" = KILL-at-fault-point ] && dump_stall
    exit 1
  fi
  sleep 0.005
done
t1=$(ms)
# a server this script started before: its exit status, kept by its reaper
# (below). SIGTERM must end it with 0, SIGKILL with 137: anything else (an
# abort, a segmentation fault while stopping) fails the restart
if [ -e "$pidfile.reaped.$pid" ]; then
  for ((k = 0; k < 500; k++)); do [ -s "$pidfile.exit.$pid" ] && break; sleep 0.01; done
  st=$(cat "$pidfile.exit.$pid" 2>/dev/null)
  case $sig in TERM|INT) want=0 ;; *) want=137 ;; esac
  if [ "$st" != "$want" ]; then
    echo "restart-server: the server (pid $pid) ended with status ${st:-unknown} after SIG$sig, not $want" >&2
    tail -n 20 "$pidfile.log" >&2
    exit 1
  fi
fi
sleep "$delay"
rm -f "$pidfile.port" "$pidfile"
t2=$(ms)
echo "--- a server started by restart-server.sh after SIG$sig" >> "$pidfile.log"
# its reaper outlives this script and writes the server's exit status for
# the next restart to check; $pidfile gets the server's own pid
( "$exe" "${args[@]}" 2>>"$pidfile.log" & p=$!
  touch "$pidfile.reaped.$p"; echo "$p" > "$pidfile"
  wait "$p"; echo $? > "$pidfile.exit.$p" ) &
until [ -s "$pidfile" ]; do sleep 0.002; done
until [ -s "$pidfile.port" ]; do
  kill -0 "$(cat "$pidfile")" 2>/dev/null || { cat "$pidfile.log" >&2; echo "restart-server: the new server exited" >&2; exit 1; }
  [ $(( $(ms) - t2 )) -gt 20000 ] && { echo "restart-server: not accepting after 20 s" >&2; exit 1; }
  sleep 0.002
done
t3=$(ms)
if [ "$wait_ms" = 60000 ]; then   # no signal: timed from its exit
  echo "restart: $sig; accepting again $((t3 - t1)) ms after it exited (the start itself: $((t3 - t2)) ms)"
else
  echo "restart: SIG$sig; exited after $((t1 - t0)) ms; accepting again after $((t3 - t0)) ms (the start itself: $((t3 - t2)) ms)"
fi
