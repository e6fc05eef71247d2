#!/usr/bin/env bash
# Authentication and hostile-client tests against live ddio-servers on
# 127.0.0.1 (no MPI): srv_client --security (wrong / no / replayed secret,
# every request type before AUTH, storage root unchanged), the secret file's
# checks on the server and in tools/ddio, --insecure, and srv_client --limits
# (oversized, truncated, garbage, out-of-order, wrong-version and wrong-state
# messages, descriptor depth/size/memory limits, calls in flight, connection
# limits, 1000 stalled connections; srv_client's cases are counted too).
# Every test has a time limit. Ends with the names of the failed tests and
# "security: N passed, N failed".
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init security
CLIENT=${SRV_CLIENT:-$BUILD/test/server/srv_client}
TOOL=$T_DDIO
T_LIMIT=${DDIO_SECURITY_TEST_TIMEOUT:-120}   # seconds per test
unset DDIO_SECRET_FILE DDIO_CONFIG
W=$T_TMP
for p in "$T_SERVER_BIN" "$CLIENT" "$TOOL"; do [ -x "$p" ] || t_unusable security/build "$p missing: run make"; done

# start NAME ARGS...: a server with root $W/NAME/root, log $W/NAME/log; sets T_SRV_ADDR
start() {
  local d="$W/$1"; shift
  mkdir -p "$d/root"
  t_server_start "$d" --root "$d/root" "$@"
}

# ---- authentication on a normal server ---------------------------------------------------
t_secret "$W/key"; t_secret "$W/otherkey"
if start auth --secret-file "$W/key"; then
    t_step -v "auth: wrong/no/replayed secret, requests before AUTH, root unchanged" \
        env DDIO_SECRET_FILE="$W/key" "$CLIENT" --security "$T_SRV_ADDR" "$W/auth/root" "$W/auth/log"
    t_relay "$T_LOG"     # srv_client's cases (security/...)
    t_step -v "auth: tools/ddio stats with the secret" env DDIO_SECRET_FILE="$W/key" "$TOOL" stats -s "$T_SRV_ADDR" xfers
    t_expect_fail -v "auth: tools/ddio stats with another secret" "authentication failed" \
        env DDIO_SECRET_FILE="$W/otherkey" "$TOOL" stats -s "$T_SRV_ADDR"
    t_expect_fail -v "auth: tools/ddio stats without a secret" "requires authentication" \
        "$TOOL" stats -s "$T_SRV_ADDR"
    cp "$W/key" "$W/key644"; chmod 644 "$W/key644"
    t_expect_fail -v "auth: client secret file readable by others" "accessible by group or others" \
        env DDIO_SECRET_FILE="$W/key644" "$TOOL" stats -s "$T_SRV_ADDR"
    cp "$W/key" "$W/key640"; chmod 640 "$W/key640"
    ( umask 077; echo "secret_file = $W/key640" > "$W/ddio.conf" )
    t_expect_fail -v "auth: secret file named by DDIO_CONFIG, group readable" "accessible by group" \
        env DDIO_CONFIG="$W/ddio.conf" "$TOOL" stats -s "$T_SRV_ADDR"
    rc=0; t_server_stop || rc=$?; t_result "auth: server stops cleanly" $rc
else
    t_fail "auth: server start" "$T_SRV_WHY"
fi

# ---- the server's own secret file ----------------------------------------------------------
t_expect_fail -v "server: no --secret-file and no --insecure" "--secret-file FILE is required" \
    "$T_SERVER_BIN" --listen 127.0.0.1:0 --root "$W"
t_expect_fail -v "server: secret file readable by others" "accessible by group or others" \
    "$T_SERVER_BIN" --listen 127.0.0.1:0 --root "$W" --secret-file "$W/key644"
t_expect_fail -v "server: secret file missing" "cannot open" \
    "$T_SERVER_BIN" --listen 127.0.0.1:0 --root "$W" --secret-file "$W/none"
printf 'short\n' > "$W/short"; chmod 600 "$W/short"
t_expect_fail -v "server: secret too short" "16 to 4096 bytes" \
    "$T_SERVER_BIN" --listen 127.0.0.1:0 --root "$W" --secret-file "$W/short"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    cp "$W/key" "$W/keynobody"; chown nobody "$W/keynobody"
    t_expect_fail -v "server: secret file owned by another user" "owned by uid" \
        "$T_SERVER_BIN" --listen 127.0.0.1:0 --root "$W" --secret-file "$W/keynobody"
else
    t_skip "server: secret file owned by another user" "needs root"
fi

# ---- --insecure: loud, and refused by clients that hold a secret ------------------------------
if start insecure --insecure; then
    t_step -v "insecure: a client without a secret is served" "$TOOL" stats -s "$T_SRV_ADDR" xfers
    t_expect_fail -v "insecure: a client with a secret refuses the server" "does not authenticate" \
        env DDIO_SECRET_FILE="$W/key" "$TOOL" stats -s "$T_SRV_ADDR"
    if grep -q "WITHOUT authentication (--insecure)" "$W/insecure/log"; then
        t_pass "insecure: every connection logged as unauthenticated"
    else t_fail "insecure: every connection logged as unauthenticated"; fi
    rc=0; t_server_stop || rc=$?
    [ $rc -eq 0 ] || t_fail "insecure: server stops cleanly" "exit $rc"
else
    t_fail "insecure: server start" "$T_SRV_WHY"
fi

# ---- hostile clients against small limits ---------------------------------------------------------
if start limits --secret-file "$W/key" --block-size 65536 --max-connections 24 --max-unauth 8 \
        --auth-timeout 2 --max-message 64K --max-desc 2K --max-desc-depth 4 \
        --max-call-memory 1M --max-inflight 3; then
    t_step -v "limits: hostile messages, descriptor and call limits, connection floods" \
        env DDIO_SECRET_FILE="$W/key" "$CLIENT" --limits "$T_SRV_ADDR"
    t_relay "$T_LOG"     # (limits/...)
    rc=0; t_server_stop || rc=$?
    t_result "limits: server stops cleanly afterwards" $rc
    [ $rc -eq 0 ] || t_indent "$W/limits/log" 20
else
    t_fail "limits: server start" "$T_SRV_WHY"
fi
t_expect_fail -v "limits: a bad limit value is refused" "--max-desc-depth: '17' is not a number in 1..16" \
    "$T_SERVER_BIN" --listen 127.0.0.1:0 --root "$W" --secret-file "$W/key" --max-desc-depth 17
t_done
