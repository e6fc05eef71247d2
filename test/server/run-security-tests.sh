#!/usr/bin/env bash
# Authentication and hostile-client tests against live ddio-servers on
# 127.0.0.1 (no MPI): srv_client --security (wrong / no / replayed secret,
# every request type before AUTH, storage root unchanged), the secret file's
# checks on the server and in tools/ddio, --insecure, and srv_client --limits
# (oversized, truncated, garbage, out-of-order, wrong-version and wrong-state
# messages, descriptor depth/size/memory limits, calls in flight, connection
# limits, 1000 stalled connections). Every test has a time limit. Ends with
# "security: N passed, N failed" and the names of the failed tests.
set -uo pipefail
BUILD=${BUILD:-$(cd "$(dirname "$0")/../.." && pwd)}
SERVER=${DDIO_SERVER:-$BUILD/ioserver/ddio-server}
CLIENT=${SRV_CLIENT:-$BUILD/test/server/srv_client}
TOOL=${DDIO_TOOL:-$BUILD/tools/ddio}
LIMIT=${DDIO_SECURITY_TEST_TIMEOUT:-120}   # seconds per test
unset DDIO_SECRET_FILE DDIO_CONFIG
pass=0; fail=0; failed=()
W=$(mktemp -d /tmp/ddio-sectest.XXXXXX)
PID=""
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT INT TERM

ok()  { pass=$((pass + 1)); echo "PASS: $1"; }
bad() { fail=$((fail + 1)); failed+=("$1"); echo "FAIL: $1${2:+: $2}"; }
secret() { ( umask 077 && head -c 32 /dev/urandom | base64 > "$1" ); }

# start NAME ARGS...: a server with root $W/NAME/root, log $W/NAME/log; sets PORT
start() {
    local d="$W/$1"; shift
    mkdir -p "$d/root"
    rm -f "$d/port"
    "$SERVER" --listen 127.0.0.1:0 --port-file "$d/port" --root "$d/root" "$@" 2>"$d/log" &
    PID=$!
    for _ in $(seq 200); do
        [ -s "$d/port" ] && { PORT=$(cat "$d/port"); return 0; }
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.05
    done
    PID=""; return 1
}
stop() {
    [ -n "$PID" ] || return 0
    kill -TERM "$PID"; local rc=0; wait "$PID" || rc=$?; PID=""
    return $rc
}

# run NAME CMD...: one test, bounded; its output indented
run() {
    local name=$1; shift
    if timeout "$LIMIT" "$@" >"$W/out" 2>&1; then ok "$name"; else bad "$name" "exit $?"; fi
    sed 's/^/    /' "$W/out"
}

# expect_fail NAME TEXT CMD...: CMD must fail and say TEXT
expect_fail() {
    local name=$1 text=$2; shift 2
    local rc=0
    timeout "$LIMIT" "$@" >"$W/out" 2>&1 || rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -qF -- "$text" "$W/out"; then ok "$name"
    else bad "$name" "exit $rc, wanted '$text'"; fi
    sed 's/^/    /' "$W/out"
}

# ---- authentication on a normal server ---------------------------------------------------
secret "$W/key"; secret "$W/otherkey"
if start auth --secret-file "$W/key"; then
    run "auth: wrong/no/replayed secret, requests before AUTH, root unchanged" \
        env DDIO_SECRET_FILE="$W/key" "$CLIENT" --security "127.0.0.1:$PORT" "$W/auth/root" "$W/auth/log"
    run "auth: tools/ddio stats with the secret" env DDIO_SECRET_FILE="$W/key" "$TOOL" stats -s "127.0.0.1:$PORT" xfers
    expect_fail "auth: tools/ddio stats with another secret" "authentication failed" \
        env DDIO_SECRET_FILE="$W/otherkey" "$TOOL" stats -s "127.0.0.1:$PORT"
    expect_fail "auth: tools/ddio stats without a secret" "requires authentication" \
        "$TOOL" stats -s "127.0.0.1:$PORT"
    cp "$W/key" "$W/key644"; chmod 644 "$W/key644"
    expect_fail "auth: client secret file readable by others" "accessible by group or others" \
        env DDIO_SECRET_FILE="$W/key644" "$TOOL" stats -s "127.0.0.1:$PORT"
    cp "$W/key" "$W/key640"; chmod 640 "$W/key640"
    ( umask 077; echo "secret_file = $W/key640" > "$W/ddio.conf" )
    expect_fail "auth: secret file named by DDIO_CONFIG, group readable" "accessible by group" \
        env DDIO_CONFIG="$W/ddio.conf" "$TOOL" stats -s "127.0.0.1:$PORT"
    if stop; then ok "auth: server stops cleanly"; else bad "auth: server stops cleanly"; fi
else
    bad "auth: server start"; cat "$W/auth/log"
fi

# ---- the server's own secret file ----------------------------------------------------------
expect_fail "server: no --secret-file and no --insecure" "--secret-file FILE is required" \
    "$SERVER" --listen 127.0.0.1:0 --root "$W"
expect_fail "server: secret file readable by others" "accessible by group or others" \
    "$SERVER" --listen 127.0.0.1:0 --root "$W" --secret-file "$W/key644"
expect_fail "server: secret file missing" "cannot open" \
    "$SERVER" --listen 127.0.0.1:0 --root "$W" --secret-file "$W/none"
printf 'short\n' > "$W/short"; chmod 600 "$W/short"
expect_fail "server: secret too short" "16 to 4096 bytes" \
    "$SERVER" --listen 127.0.0.1:0 --root "$W" --secret-file "$W/short"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    cp "$W/key" "$W/keynobody"; chown nobody "$W/keynobody"
    expect_fail "server: secret file owned by another user" "owned by uid" \
        "$SERVER" --listen 127.0.0.1:0 --root "$W" --secret-file "$W/keynobody"
else
    echo "SKIP: secret file owned by another user (needs root)"
fi

# ---- --insecure: loud, and refused by clients that hold a secret ------------------------------
if start insecure --insecure; then
    run "insecure: a client without a secret is served" "$TOOL" stats -s "127.0.0.1:$PORT" xfers
    expect_fail "insecure: a client with a secret refuses the server" "does not authenticate" \
        env DDIO_SECRET_FILE="$W/key" "$TOOL" stats -s "127.0.0.1:$PORT"
    if grep -q "WITHOUT authentication (--insecure)" "$W/insecure/log"; then
        ok "insecure: every connection logged as unauthenticated"
    else bad "insecure: every connection logged as unauthenticated"; fi
    stop || bad "insecure: server stops cleanly"
else
    bad "insecure: server start"
fi

# ---- hostile clients against small limits ---------------------------------------------------------
if start limits --secret-file "$W/key" --block-size 65536 --max-connections 24 --max-unauth 8 \
        --auth-timeout 2 --max-message 64K --max-desc 2K --max-desc-depth 4 \
        --max-call-memory 1M --max-inflight 3; then
    run "limits: hostile messages, descriptor and call limits, connection floods" \
        env DDIO_SECRET_FILE="$W/key" "$CLIENT" --limits "127.0.0.1:$PORT"
    if stop; then ok "limits: server stops cleanly afterwards"
    else bad "limits: server stops cleanly afterwards"; tail -20 "$W/limits/log"; fi
else
    bad "limits: server start"
fi
expect_fail "limits: a bad limit value is refused" "--max-desc-depth: '17' is not a number in 1..16" \
    "$SERVER" --listen 127.0.0.1:0 --root "$W" --secret-file "$W/key" --max-desc-depth 17

for t in "${failed[@]:-}"; do [ -n "$t" ] && echo "failed: $t"; done
echo "security: $pass passed, $fail failed"
[ $fail -eq 0 ]
