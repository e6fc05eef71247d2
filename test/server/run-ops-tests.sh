#!/usr/bin/env bash
# Operations tests of ddio-server (no MPI, no systemd):
#  - the configuration file (--config): its settings apply, flags beat it,
#    a bad line is refused with FILE:LINE, the shipped example parses;
#  - readiness notification: READY=1 reaches $NOTIFY_SOCKET (a unix datagram
#    socket made here, as systemd does for Type=notify) once the server
#    listens, STOPPING=1 at SIGTERM;
#  - clean stop: SIGTERM during a long write stops accepting, lets the write
#    finish, exits 0 (the bytes are all there after a restart); with
#    --stop-timeout 1 a longer call is cut off and the server still exits 0
#    within the bound.
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init ops
CLIENT=$BUILD/test/server/ops_client
for p in "$T_SERVER_BIN" "$CLIENT"; do [ -x "$p" ] || t_unusable ops/build "$p missing: run make"; done
D=$T_TMP
t_secret "$D/secret"
export DDIO_SECRET_FILE=$D/secret
mkdir -p "$D/ra" "$D/rb" "$D/rc"
# a client command, bounded
# (writes through the server, whose handling of calls in flight is tested:
# a same-host client would write the datafiles itself; a server stopping
# refuses it, which it would otherwise retry for its whole 60 s timeout)
client() { DDIO_LOCAL_WRITE=0 DDIO_RECOVER_TIMEOUT=2 timeout -k 5 120 "$CLIENT" "$@"; }
# a server's exit status after SIGTERM, into RC
stop() { RC=0; t_server_stop || RC=$?; }

# ---- configuration file ----------------------------------------------------------
cat > "$D/server.conf" <<CONF
# comment lines and trailing comments are ignored
listen      = 127.0.0.1:0
root        = $D/ra         # replaced by --root below
block_size  = 2M
buffers     = 8
secret_file = $D/secret
log_level   = info
rotate      = yes
stop-timeout = 5
CONF
config_file() {
  t_server_start "$D/conf" --config "$D/server.conf" --buffers 3 --root "$D/rb" \
    || t_why "server with --config did not start ($T_SRV_WHY)" || return
  grep -q "block size 2097152, 3 buffers per disk, rotation on" "$T_SRV_LOG" \
    || t_why "file settings (block_size, rotate) or the --buffers flag not applied" || return
  grep -q "disk 0: root $D/rb" "$T_SRV_LOG" || t_why "--root flag did not replace the file's root" || return
  ! grep -q "root $D/ra" "$T_SRV_LOG" || t_why "the file's root was used although --root was given" || return
  client write "$T_SRV_ADDR" /c 1 >/dev/null || t_why "client against --config server" || return
  stop; [ $RC = 0 ] || t_why "server exited $RC on SIGTERM"
}
t_case ops/config-file "--config file applies (block_size, rotate, secret_file); --buffers and --root flags beat it" \
  config_file

# --insecure on the command line beats the file's secret_file (and vice versa)
insecure_flag() {
  t_server_start "$D/insecure" --config "$D/server.conf" --insecure --root "$D/rb" \
    || t_why "--insecure flag over a file's secret_file refused ($T_SRV_WHY)" || return
  stop
}
t_case ops/insecure-over-file "--insecure flag overrides the file's secret_file" insecure_flag

bad_config() {
  local rc out
  printf 'listen = 127.0.0.1:0\nbuffers = many\n' > "$D/bad.conf"
  rc=0; out=$(timeout 30 "$T_SERVER_BIN" --config "$D/bad.conf" 2>&1) || rc=$?
  [ $rc = 2 ] && echo "$out" | grep -q "bad.conf:2: --buffers" \
    || t_why "bad config line: exit $rc, '$out'" || return
  printf 'listen = 127.0.0.1:0\nno_such_option = 1\n' > "$D/bad2.conf"
  rc=0; out=$(timeout 30 "$T_SERVER_BIN" --config "$D/bad2.conf" 2>&1) || rc=$?
  [ $rc = 2 ] && echo "$out" | grep -q "bad2.conf:2: unknown option 'no-such-option'" \
    || t_why "unknown config option: exit $rc, '$out'" || return
  rc=0; out=$(timeout 30 "$T_SERVER_BIN" --config "$D/missing.conf" 2>&1) || rc=$?
  [ $rc = 2 ] || t_why "missing config file: exit $rc"
}
t_case ops/bad-config "a bad value, an unknown option and a missing file are refused (FILE:LINE, exit 2)" \
  bad_config

EXAMPLE=$SRC/etc/ddio-server.conf.example
example() {
  t_server_start "$D/example" --config "$EXAMPLE" --listen 127.0.0.1:0 --root "$D/rb" \
    --secret-file "$D/secret" || t_why "the shipped $EXAMPLE does not parse ($T_SRV_WHY)" || return
  stop
}
if [ -f "$EXAMPLE" ]; then
  t_case ops/config-example "etc/ddio-server.conf.example parses (paths overridden by flags)" example
else
  t_fail ops/config-example "$EXAMPLE missing"
fi

# ---- readiness notification and clean stop -------------------------------------
# the service manager's side: a unix datagram socket, every message to a file
NOTIFY=$D/notify.sock
python3 - "$NOTIFY" "$D/notify.out" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(1.0)
end = time.time() + 120
with open(sys.argv[2], "a", buffering=1) as out:
    while time.time() < end:
        try:
            m = s.recv(4096).decode()
        except socket.timeout:
            continue
        out.write(m + "\n")
        if "STOPPING=1" in m:
            break
PY
LISTENER=$!
t_defer t_kill "$LISTENER"
t_wait_for -p "$LISTENER" 10 test -S "$NOTIFY"

# a call is in flight on the server at T_SRV_ADDR (STATS inflight)
inflight() { "$T_DDIO" -s "$T_SRV_ADDR" stats inflight 2>/dev/null | awk '$3>0{n++} END{exit !n}'; }
# the notifier got MSG
notified() { grep -q "$1" "$D/notify.out" 2>/dev/null; }

# the server started with NOTIFY_SOCKET: READY=1 comes once it listens
# 24 MiB through a disk throttled to 6 MiB/s: about 4 s in one call
ready() {
  : > "$D/notify.out"
  t_server_start -N -e NOTIFY_SOCKET="$NOTIFY" "$D/notified" --root "$D/rc" --secret-file "$D/secret" \
    --throttle-mbps 6 --stop-timeout 30
  SRV=$T_SRV_PID
  t_wait_for -p "$SRV" 10 notified READY=1 || t_why "no READY=1 on NOTIFY_SOCKET" || return
  [ -s "$T_SRV_DIR/port" ] || t_why "READY=1 before the server listened (no port file yet)" || return
  t_server_wait_port || t_why "no port after READY=1 ($T_SRV_WHY)"
}
# SIGTERM with a write in flight: STOPPING=1, no new connections, the write
# completes, exit 0
sigterm() {
  client write "$T_SRV_ADDR" /long 24 > "$D/client.out" 2>"$D/client.log" &
  local cl=$! rc t0 t1
  t_defer t_kill "$cl"
  t_wait_for -p "$cl" 10 inflight || t_why "the write never got in flight" || return
  t0=$(date +%s.%N)
  kill -TERM "$SRV"
  t_wait_for -p "$SRV" 10 notified STOPPING=1 || t_why "no STOPPING=1 on NOTIFY_SOCKET" || return
  t_alive "$SRV" || t_why "server exited at SIGTERM with a call in flight" || return
  if client verify "$T_SRV_ADDR" /long 24 >/dev/null 2>&1; then
    t_why "a new connection was accepted after SIGTERM"; return
  fi
  rc=0; t_wait_pid "$cl" 60 || rc=$?
  [ $rc = 0 ] && grep -q "written 25165824" "$D/client.out" \
    || t_why "the write in flight at SIGTERM failed (rc $rc)" || return
  rc=0; t_wait_pid "$SRV" 60 || rc=$?
  t1=$(date +%s.%N)
  [ $rc = 0 ] || t_why "server exited $rc after SIGTERM" || return
  T_NOTE="SIGTERM: STOPPING=1, new connections refused, the write in flight completed, exit 0 ($(
    awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s)"
}
if t_case ops/ready-notification "READY=1 arrives on NOTIFY_SOCKET once the server listens" ready; then
  t_case ops/sigterm-drain "" sigterm
else
  t_fail ops/sigterm-drain "no notified server to stop"
fi
t_wait_pid "$LISTENER" 10

# every byte is there after a restart
restart() {
  t_server_start "$D/restart" --root "$D/rc" --secret-file "$D/secret" || t_why "restart ($T_SRV_WHY)" || return
  client verify "$T_SRV_ADDR" /long 24 >/dev/null || t_why "bytes after the clean stop" || return
  stop; [ $RC = 0 ] || t_why "restarted server's exit status $RC"
}
t_case ops/restart-intact "after a restart the 24 MiB written across the stop read back intact" restart

# the drain is bounded: --stop-timeout 1 with a call of about 24 s
bounded() {
  t_server_start "$D/bounded" --root "$D/rc" --secret-file "$D/secret" --throttle-mbps 1 --stop-timeout 1 \
    || t_why "start (bounded): $T_SRV_WHY" || return
  client write "$T_SRV_ADDR" /long2 24 > "$D/client2.out" 2>"$D/client2.log" &
  local cl=$! rc s0 el
  t_defer t_kill "$cl"
  t_wait_for -p "$cl" 10 inflight || t_why "the write never got in flight" || return
  s0=$(date +%s)
  kill -TERM "$T_SRV_PID"
  rc=0; t_wait_pid "$T_SRV_PID" 60 || rc=$?
  el=$(( $(date +%s) - s0 ))
  [ $rc = 0 ] || t_why "server exited $rc at --stop-timeout" || return
  [ $el -le 12 ] || t_why "server took ${el}s to stop with --stop-timeout 1" || return
  rc=0; t_wait_pid "$cl" 60 || rc=$?
  [ $rc != 0 ] || t_why "the cut-off write reported success" || return
  grep -q "still busy at --stop-timeout" "$T_SRV_LOG" || t_why "no warning about the cut-off call" || return
  # and what held the drain, for the operator: the connection and its call
  grep -q "stopping: still waiting after" "$T_SRV_LOG" && grep -q "^.*  connection [0-9]* from .*request threads busy" "$T_SRV_LOG" \
    || t_why "the log does not say what held the drain" || return
  T_NOTE="--stop-timeout 1: a longer call is cut off, the client gets an error, exit 0 in ${el}s"
}
t_case ops/stop-timeout "" bounded
t_done
