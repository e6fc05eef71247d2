#!/usr/bin/env bash
# Start ddio-server on 127.0.0.1:0 with temporary roots, run srv_client
# against it, and always stop the server. Two configurations: one disk on
# the real file system under /tmp (O_DIRECT; the datafile is checked byte
# for byte), and two disks on tmpfs (/dev/shm) with a small block size,
# two buffers per disk and --rotate.
set -euo pipefail
BUILD=${BUILD:-$(cd "$(dirname "$0")/../.." && pwd)}
SERVER=${DDIO_SERVER:-$BUILD/ioserver/ddio-server}
CLIENT=${SRV_CLIENT:-$BUILD/test/server/srv_client}
PIDS=()
DIRS=()
cleanup() {
    for p in "${PIDS[@]:-}"; do
        [ -n "$p" ] && kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true
    done
    for d in "${DIRS[@]:-}"; do [ -n "$d" ] && rm -rf "$d"; done
}
trap cleanup EXIT INT TERM

# start_server DIR ARGS... -> sets PORT; server and client share DIR/secret
start_server() {
    local dir=$1; shift
    ( umask 077 && head -c 32 /dev/urandom | base64 > "$dir/secret" )
    export DDIO_SECRET_FILE="$dir/secret"
    "$SERVER" --listen 127.0.0.1:0 --port-file "$dir/port" --secret-file "$dir/secret" "$@" \
        2>"$dir/server.log" &
    PIDS+=($!)
    for _ in $(seq 100); do
        [ -s "$dir/port" ] && break
        kill -0 "${PIDS[-1]}" 2>/dev/null || { cat "$dir/server.log"; echo "server died"; exit 1; }
        sleep 0.05
    done
    PORT=$(cat "$dir/port")
}

stop_server() {
    local pid=${PIDS[-1]}
    kill -TERM "$pid"
    local rc=0
    wait "$pid" || rc=$?
    PIDS[-1]=""
    if [ "$rc" != 0 ]; then echo "server exited with $rc on SIGTERM"; exit 1; fi
}

run() {
    local dir=$1; shift
    local root1=$1; shift
    start_server "$dir" "$@"
    if ! "$CLIENT" "127.0.0.1:$PORT" $root1; then
        echo "---- server log"; tail -50 "$dir/server.log"; exit 1
    fi
    stop_server
}

D1=$(mktemp -d /tmp/ddio-srvtest.XXXXXX); DIRS+=("$D1")
mkdir -p "$D1/root"
echo "== one disk on $(df --output=fstype "$D1" | tail -1) ($D1)"
run "$D1" "$D1/root" --root "$D1/root"
# restart on the same root: the server id persists
id1=$(od -An -tx1 "$D1/root/.ddio/server-id")
rm -f "$D1/port"
start_server "$D1" --root "$D1/root"
"$CLIENT" "127.0.0.1:$PORT" "$D1/root" >/dev/null
stop_server
id2=$(od -An -tx1 "$D1/root/.ddio/server-id")
[ "$id1" = "$id2" ] || { echo "server id changed across restart"; exit 1; }
echo "ok   restart on the same root keeps the server id"

if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    D2=$(mktemp -d /dev/shm/ddio-srvtest.XXXXXX); DIRS+=("$D2")
    mkdir -p "$D2/a" "$D2/b"
    echo "== two disks on tmpfs ($D2), 64 KiB blocks, 2 buffers, --rotate"
    run "$D2" "" --root "$D2/a" --root "$D2/b" --block-size 65536 --buffers 2 --rotate
fi
# the UCX transport's handshake and refusals: offered with --transport ucx,
# not with --transport tcp (the data path itself: test/mpi with DDIO_TRANSPORT=ucx)
for mode in ucx tcp; do
    rm -f "$D1/port"
    start_server "$D1" --root "$D1/root" --transport "$mode"
    flag=--ucx; [ "$mode" = tcp ] && flag=--no-ucx
    if ! "$CLIENT" "$flag" "127.0.0.1:$PORT" "$D1/root" "$D1/server.log"; then
        echo "---- server log"; tail -50 "$D1/server.log"; exit 1
    fi
    stop_server
done
echo "server tests: PASS"
