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
set -euo pipefail
BUILD=${BUILD:-$(cd "$(dirname "$0")/../.." && pwd)}
SRCDIR=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
case $SRCDIR in /*) ;; *) SRCDIR=$(cd "$SRCDIR" && pwd) ;; esac
SERVER=${DDIO_SERVER:-$BUILD/ioserver/ddio-server}
CLIENT=$BUILD/test/server/ops_client
PIDS=()
D=$(mktemp -d /tmp/ddio-opstest.XXXXXX)
cleanup() {
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill -9 "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
    done
    rm -rf "$D"
}
trap cleanup EXIT INT TERM
fail() { echo "FAIL: $*"; for f in "$D"/*.log; do [ -f "$f" ] && { echo "---- $f"; tail -20 "$f"; }; done; exit 1; }
ok() { echo "ok   $*"; }
( umask 077 && head -c 32 /dev/urandom | base64 > "$D/secret" )
export DDIO_SECRET_FILE=$D/secret
mkdir -p "$D/ra" "$D/rb" "$D/rc"

wait_port() {   # wait_port PID FILE
    for _ in $(seq 200); do
        [ -s "$2" ] && return 0
        kill -0 "$1" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

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
"$SERVER" --config "$D/server.conf" --buffers 3 --root "$D/rb" --port-file "$D/port1" \
    2>"$D/conf.log" &
PIDS+=($!)
wait_port "${PIDS[-1]}" "$D/port1" || fail "server with --config did not start"
grep -q "block size 2097152, 3 buffers per disk, rotation on" "$D/conf.log" \
    || fail "file settings (block_size, rotate) or the --buffers flag not applied"
grep -q "disk 0: root $D/rb" "$D/conf.log" || fail "--root flag did not replace the file's root"
grep -q "root $D/ra" "$D/conf.log" && fail "the file's root was used although --root was given"
"$CLIENT" write "127.0.0.1:$(cat "$D/port1")" /c 1 >/dev/null || fail "client against --config server"
kill -TERM "${PIDS[-1]}"; rc=0; wait "${PIDS[-1]}" || rc=$?; PIDS[-1]=""
[ $rc = 0 ] || fail "server exited $rc on SIGTERM"
ok "--config file applies (block_size, rotate, secret_file); --buffers and --root flags beat it"

# --insecure on the command line beats the file's secret_file (and vice versa)
"$SERVER" --config "$D/server.conf" --insecure --root "$D/rb" --port-file "$D/port2" \
    2>"$D/insecure.log" &
PIDS+=($!)
wait_port "${PIDS[-1]}" "$D/port2" || fail "--insecure flag over a file's secret_file refused"
kill -TERM "${PIDS[-1]}"; wait "${PIDS[-1]}" || true; PIDS[-1]=""
ok "--insecure flag overrides the file's secret_file"

printf 'listen = 127.0.0.1:0\nbuffers = many\n' > "$D/bad.conf"
rc=0; out=$("$SERVER" --config "$D/bad.conf" 2>&1) || rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "bad.conf:2: --buffers" \
    || fail "bad config line: exit $rc, '$out'"
printf 'listen = 127.0.0.1:0\nno_such_option = 1\n' > "$D/bad2.conf"
rc=0; out=$("$SERVER" --config "$D/bad2.conf" 2>&1) || rc=$?
[ $rc = 2 ] && echo "$out" | grep -q "bad2.conf:2: unknown option 'no-such-option'" \
    || fail "unknown config option: exit $rc, '$out'"
rc=0; out=$("$SERVER" --config "$D/missing.conf" 2>&1) || rc=$?
[ $rc = 2 ] || fail "missing config file: exit $rc"
ok "a bad value, an unknown option and a missing file are refused (FILE:LINE, exit 2)"

EXAMPLE=$SRCDIR/etc/ddio-server.conf.example
if [ -f "$EXAMPLE" ]; then
    "$SERVER" --config "$EXAMPLE" --listen 127.0.0.1:0 --root "$D/rb" --secret-file "$D/secret" \
        --port-file "$D/port3" 2>"$D/example.log" &
    PIDS+=($!)
    wait_port "${PIDS[-1]}" "$D/port3" || fail "the shipped $EXAMPLE does not parse"
    kill -TERM "${PIDS[-1]}"; wait "${PIDS[-1]}" || true; PIDS[-1]=""
    ok "etc/ddio-server.conf.example parses (paths overridden by flags)"
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
PIDS+=($!)
LISTENER=${PIDS[-1]}
for _ in $(seq 100); do [ -S "$NOTIFY" ] && break; sleep 0.05; done

start_notified() {   # start_notified PORTFILE ARGS...
    local pf=$1; shift
    : > "$D/notify.out"
    NOTIFY_SOCKET=$NOTIFY "$SERVER" --listen 127.0.0.1:0 --root "$D/rc" --secret-file "$D/secret" \
        --port-file "$pf" "$@" 2>>"$D/notify-server.log" &
    PIDS+=($!)
    SRV=${PIDS[-1]}
    for _ in $(seq 200); do grep -q "READY=1" "$D/notify.out" 2>/dev/null && break; sleep 0.05; done
    grep -q "READY=1" "$D/notify.out" || fail "no READY=1 on NOTIFY_SOCKET"
    [ -s "$pf" ] || fail "READY=1 before the server listened (no port file yet)"
    PORT=$(cat "$pf")
}

# 24 MiB through a disk throttled to 6 MiB/s: about 4 s in one call
start_notified "$D/port4" --throttle-mbps 6 --stop-timeout 30
ok "READY=1 arrives on NOTIFY_SOCKET once the server listens"
"$CLIENT" write "127.0.0.1:$PORT" /long 24 > "$D/client.out" 2>"$D/client.log" &
PIDS+=($!)
CL=${PIDS[-1]}
for _ in $(seq 100); do grep -qs writing "$D/client.out" && break; sleep 0.05; done
sleep 0.5
t0=$(date +%s.%N)
kill -TERM "$SRV"
sleep 0.5
kill -0 "$SRV" 2>/dev/null || fail "server exited at SIGTERM with a call in flight"
if "$CLIENT" verify "127.0.0.1:$PORT" /long 24 >/dev/null 2>&1; then
    fail "a new connection was accepted after SIGTERM"
fi
rc=0; wait "$CL" || rc=$?; PIDS[-1]=""
[ $rc = 0 ] && grep -q "written 25165824" "$D/client.out" || fail "the write in flight at SIGTERM failed (rc $rc)"
rc=0; wait "$SRV" || rc=$?
t1=$(date +%s.%N)
[ $rc = 0 ] || fail "server exited $rc after SIGTERM"
for _ in $(seq 40); do grep -q "STOPPING=1" "$D/notify.out" && break; sleep 0.05; done
grep -q "STOPPING=1" "$D/notify.out" || fail "no STOPPING=1 on NOTIFY_SOCKET"
ok "SIGTERM: STOPPING=1, new connections refused, the write in flight completed, exit 0 ($(awk "BEGIN{printf \"%.1f\", $t1 - $t0}") s)"
wait "$LISTENER" 2>/dev/null || true

# every byte is there after a restart
"$SERVER" --listen 127.0.0.1:0 --root "$D/rc" --secret-file "$D/secret" --port-file "$D/port5" \
    2>"$D/restart.log" &
PIDS+=($!)
wait_port "${PIDS[-1]}" "$D/port5" || fail "restart"
"$CLIENT" verify "127.0.0.1:$(cat "$D/port5")" /long 24 >/dev/null || fail "bytes after the clean stop"
kill -TERM "${PIDS[-1]}"; wait "${PIDS[-1]}" || fail "restarted server's exit status"; PIDS[-1]=""
ok "after a restart the 24 MiB written across the stop read back intact"

# the drain is bounded: --stop-timeout 1 with a call of about 24 s
"$SERVER" --listen 127.0.0.1:0 --root "$D/rc" --secret-file "$D/secret" --port-file "$D/port6" \
    --throttle-mbps 1 --stop-timeout 1 2>"$D/bounded.log" &
PIDS+=($!)
SRV=${PIDS[-1]}
wait_port "$SRV" "$D/port6" || fail "start (bounded)"
"$CLIENT" write "127.0.0.1:$(cat "$D/port6")" /long2 24 > "$D/client2.out" 2>"$D/client2.log" &
PIDS+=($!)
CL=${PIDS[-1]}
for _ in $(seq 100); do grep -qs writing "$D/client2.out" && break; sleep 0.05; done
sleep 0.3
s0=$(date +%s)
kill -TERM "$SRV"
rc=0; wait "$SRV" || rc=$?
el=$(( $(date +%s) - s0 ))
[ $rc = 0 ] || fail "server exited $rc at --stop-timeout"
[ $el -le 12 ] || fail "server took ${el}s to stop with --stop-timeout 1"
rc=0; wait "$CL" || rc=$?; PIDS[-1]=""
[ $rc != 0 ] || fail "the cut-off write reported success"
grep -q "still busy at --stop-timeout" "$D/bounded.log" || fail "no warning about the cut-off call"
ok "--stop-timeout 1: a longer call is cut off, the client gets an error, exit 0 in ${el}s"
echo "ops tests: PASS"
