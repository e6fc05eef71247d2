#!/usr/bin/env bash
# Start ddio-server on 127.0.0.1:0 with temporary roots, run srv_client
# against it, and always stop the server. Two configurations: one disk on
# the real file system under /tmp (O_DIRECT; the datafile is checked byte
# for byte), and two disks on tmpfs (/dev/shm) with a small block size,
# two buffers per disk and --rotate. Every run must end with the server
# exiting 0 on SIGTERM. srv_client's cases count as CONFIG/CASE. Closes with
# "server: N passed, N failed".
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init server
# srv_client's xfer/page-cache writes past the stream length (ddio_stream.h),
# which both ends read from here: 16 MiB, not 1/64 of the node's memory
export DDIO_STREAM_MIN=16m
CLIENT=${SRV_CLIENT:-$BUILD/test/server/srv_client}
for p in "$T_SERVER_BIN" "$CLIENT"; do [ -x "$p" ] || t_unusable server/build "$p missing: run make"; done

# start DIR ARGS...: a server with a fresh secret in DIR, shared with srv_client
start() {
  local dir=$1; shift
  t_secret "$dir/secret"
  export DDIO_SECRET_FILE="$dir/secret"
  t_server_start "$dir" --secret-file "$dir/secret" "$@"
}

# run NAME DIR "SERVER_ARGS" CLIENT_ARGS...: a server (started with the
# words of SERVER_ARGS), srv_client against it (its output shown indented,
# its cases counted here as NAME/CASE), a clean stop
run() {
  local name=$1 dir=$2 sargs=$3 rc=0; shift 3
  # shellcheck disable=SC2086 # SERVER_ARGS are words
  start "$dir" $sargs || { t_fail "$name" "server start: $T_SRV_WHY"; return 1; }
  timeout -k 10 "$T_LIMIT" "$CLIENT" "$@" "$T_SRV_ADDR" ${ROOT1:+"$ROOT1"} ${SRVLOG:+"$T_SRV_LOG"} \
    >"$dir/client.out" 2>&1 || rc=$?
  t_indent "$dir/client.out"
  t_relay -p "$name/" "$dir/client.out"
  if [ $rc -ne 0 ]; then
    t_fail "$name" "srv_client: $(t__why $rc "$T_LIMIT")"
    echo "---- server log"; tail -n 50 "$T_SRV_LOG"
    t_server_stop
    return 1
  fi
  rc=0; t_server_stop || rc=$?
  t_result "$name" $rc "server exited with $rc on SIGTERM"
}

t_tmpdir D1 /tmp
mkdir -p "$D1/root"
echo "== one disk on $(df --output=fstype "$D1" | tail -1) ($D1)"
ROOT1=$D1/root run server/one-disk "$D1" "--root $D1/root --checksums on"

# restart on the same root: the server id persists
id1=$(od -An -tx1 "$D1/root/.ddio/server-id" 2>/dev/null)
if start "$D1" --root "$D1/root"; then
  rc=0
  timeout -k 10 "$T_LIMIT" "$CLIENT" "$T_SRV_ADDR" "$D1/root" >"$D1/restart.out" 2>&1 || rc=$?
  src=0; t_server_stop || src=$?
  id2=$(od -An -tx1 "$D1/root/.ddio/server-id" 2>/dev/null)
  if [ $rc -ne 0 ]; then
    t_fail server/restart-keeps-server-id "srv_client after the restart: $(t__why $rc "$T_LIMIT")"
    grep -E -A3 '^(FAIL|    \(then)' "$D1/restart.out" | sed 's/^/    /'
    echo "---- server log"; t_indent "$T_SRV_LOG" 30
  elif [ $src -ne 0 ]; then t_fail server/restart-keeps-server-id "server exited with $src on SIGTERM"
  elif [ -z "$id1" ] || [ "$id1" != "$id2" ]; then
    t_fail server/restart-keeps-server-id "server id changed across restart ('$id1' -> '$id2')"
  else t_pass server/restart-keeps-server-id "restart on the same root keeps the server id"; fi
else
  t_fail server/restart-keeps-server-id "server start: $T_SRV_WHY"
fi

# A restarted server answers resends as their first run did: srv_client
# --replay-before creates (with its ids), writes (DDIO_XF_ONCE) and renames
# (with ids); the server is SIGKILLed (or SIGTERMed) and started again on
# the same root; --replay-after resends all three as a client that lost the
# answers would: the create is its own, the write answered from the
# reloaded table (another writer's bytes in between stay), the rename done
# (srv_t_replay.c). Each signal on a fresh root and client id.
for sig in KILL TERM; do
  name=server/restart-$sig-answers
  t_tmpdir D3 /tmp
  mkdir -p "$D3/root"
  export SRV_REPLAY_ID=$(( (RANDOM << 30 | RANDOM << 15 | RANDOM) + 1 ))
  if ! start "$D3" --root "$D3/root"; then t_fail "$name" "server start: $T_SRV_WHY"; continue; fi
  rc=0
  timeout -k 10 "$T_LIMIT" "$CLIENT" --replay-before "$T_SRV_ADDR" >"$D3/before.out" 2>&1 || rc=$?
  kill -"$sig" "$T_SRV_PID"; t_wait_pid "$T_SRV_PID" "$T_STOP_LIMIT" || true
  if [ $rc = 0 ] && start "$D3" --root "$D3/root"; then
    timeout -k 10 "$T_LIMIT" "$CLIENT" --replay-after "$T_SRV_ADDR" >"$D3/after.out" 2>&1 || rc=$?
    grep -h "answers table" "$T_SRV_LOG" | sed 's/^/    /'
    t_server_stop || true
  elif [ $rc = 0 ]; then
    rc=1; echo "server restart: $T_SRV_WHY" >"$D3/after.out"
  fi
  cat "$D3/before.out" "$D3/after.out" >"$D3/client.out" 2>/dev/null
  t_indent "$D3/client.out"
  t_result "$name" $rc "srv_client or the restart failed (above)"
done

# Byte-range locks across a lost connection and a restart (--lock-grace):
# srv_client --lock-grace-before takes a lock, drops its connection, and
# checks that another connection gets no lock until the holder reclaims it
# on a new one; the server is SIGKILLed and started again on the same root,
# and --lock-grace-after checks the same after the restart (the table of
# answers names the holder, so the restarted server starts in its grace),
# then that a free range is granted when the grace ends (srv_t_locks.c).
name=server/lock-grace
t_tmpdir D4 /tmp
mkdir -p "$D4/root"
export SRV_REPLAY_ID=$(( (RANDOM << 30 | RANDOM << 15 | RANDOM) + 1 ))
rc=0
if start "$D4" --root "$D4/root" --lock-grace 4000; then
  timeout -k 10 "$T_LIMIT" "$CLIENT" --lock-grace-before "$T_SRV_ADDR" >"$D4/before.out" 2>&1 || rc=$?
  kill -KILL "$T_SRV_PID"; t_wait_pid "$T_SRV_PID" "$T_STOP_LIMIT" || true
  if [ $rc = 0 ] && start "$D4" --root "$D4/root" --lock-grace 4000; then
    timeout -k 10 "$T_LIMIT" "$CLIENT" --lock-grace-after "$T_SRV_ADDR" >"$D4/after.out" 2>&1 || rc=$?
    grep -h "lock grace" "$T_SRV_LOG" | sed 's/^/    /'
    t_server_stop || true
  elif [ $rc = 0 ]; then
    rc=1; echo "server restart: $T_SRV_WHY" >"$D4/after.out"
  fi
else
  rc=1; echo "server start: $T_SRV_WHY" >"$D4/before.out"
fi
cat "$D4/before.out" "$D4/after.out" >"$D4/client.out" 2>/dev/null
t_indent "$D4/client.out"
t_result "$name" $rc "srv_client or the restart failed (above)"

if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  t_tmpdir D2 /dev/shm
  mkdir -p "$D2/a" "$D2/b"
  echo "== two disks on tmpfs ($D2), 64 KiB blocks, 2 buffers, --rotate"
  # checksums off here (on in one-disk): the same-host handover, which a
  # server keeping checksums refuses, is tested here
  ROOT1=$D2/a run server/two-disks-tmpfs "$D2" "--root $D2/a --root $D2/b --block-size 65536 --buffers 2 --rotate --checksums off"
else
  t_skip server/two-disks-tmpfs "no writable /dev/shm"
fi
# the UCX transport's handshake and refusals: offered with --transport ucx,
# not with --transport tcp (the data path itself: test/mpi with DDIO_TRANSPORT=ucx)
ROOT1=$D1/root SRVLOG=1 run server/transport-ucx "$D1" "--root $D1/root --transport ucx" --ucx
ROOT1=$D1/root SRVLOG=1 run server/transport-tcp "$D1" "--root $D1/root --transport tcp" --no-ucx
# a start that fails says why and exits 1 (it once crashed in the
# engine's shutdown, which did not exist yet: exit 139)
t_expect_fail -x 1 server/start/missing-root "--root $D1/none: No such file or directory" \
  "$T_SERVER_BIN" --root "$D1/none" --listen 127.0.0.1:0 --insecure
t_expect_fail -x 1 server/start/bad-listen "listen on 256.0.0.1:0" \
  "$T_SERVER_BIN" --root "$D1/root" --listen 256.0.0.1:0 --insecure
t_expect_fail -x 2 server/start/bad-auto "is not HOST:PORT (port 0..65535 or auto)" \
  "$T_SERVER_BIN" --root "$D1/root" --listen 127.0.0.1:autumn --insecure
# port auto (what the tests and ddio-run use): below the ephemeral range,
# where no other program's port-0 listener can take it during a restart
read -r eph_lo _ < /proc/sys/net/ipv4/ip_local_port_range
if t_server_start "$D1/auto" --root "$D1/root" --insecure; then
  if [ "$T_SRV_PORT" -ge 1024 ] && [ "$T_SRV_PORT" -lt "$eph_lo" ]; then
    t_pass server/start/listen-auto "port $T_SRV_PORT, ephemeral from $eph_lo"
  else
    t_fail server/start/listen-auto "port $T_SRV_PORT is not in 1024..$((eph_lo - 1))"
  fi
  t_server_stop
else
  t_fail server/start/listen-auto "$T_SRV_WHY"
fi
t_done
