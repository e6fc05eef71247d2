#!/usr/bin/env bash
# TLS on TCP connections (ddio-server --tls, clients' DDIO_TLS) against live
# ddio-servers, with a CA and certificates made for the run by openssl:
#   - the server's checks of --tls, its certificate and key;
#   - srv_client's protocol suite and its authentication cases over TLS
#     (malformed messages included: they go inside TLS);
#   - refusals, each with its reason: a plain client by a server requiring
#     TLS (logged, counted), a TLS client by a server without TLS, a
#     certificate from another CA, a certificate for another name;
#   - a passive tap between tools/ddio and the server (test/server/
#     tcp_tap.py): the file's bytes never cross in the clear with TLS, and
#     do without it (the tap sees what a capture would);
#   - --tls optional takes both kinds of clients;
#   - a client in a network namespace (another host): UCX refused by the
#     server, the copy goes by TCP with TLS;
#   - MPI jobs under ddio-run --tls on both transports, their files
#     compared with the same job's on ufs:.
# Ends with "tls: N passed, N failed".
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init tls
# srv_client's xfer/page-cache writes past the stream length (ddio_stream.h),
# which both ends read from here: 16 MiB, not 1/64 of the node's memory
export DDIO_STREAM_MIN=16m
CLIENT=${SRV_CLIENT:-$BUILD/test/server/srv_client}
TAP=$SRC/test/server/tcp_tap.py
TOOL=$T_DDIO
T_LIMIT=${DDIO_TLS_TEST_TIMEOUT:-120}
unset DDIO_SECRET_FILE DDIO_CONFIG DDIO_TLS DDIO_TLS_CA DDIO_TRANSPORT
W=$T_TMP
for p in "$T_SERVER_BIN" "$CLIENT" "$TOOL"; do [ -x "$p" ] || t_unusable tls/build "$p missing: run make"; done
command -v openssl >/dev/null || t_unusable tls/openssl "openssl not found (scripts/install-deps.sh installs it)"

# ---- certificates ------------------------------------------------------------------------------
C=$W/certs; mkdir -p "$C"
# ca NAME: a CA; cert NAME CA SAN: a key and a certificate signed by CA
ca() { openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
         -subj "/CN=$1" -keyout "$C/$1.key" -out "$C/$1.pem"; }
cert() {
  printf 'subjectAltName=%s\n' "$3" > "$C/$1.ext"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
      -keyout "$C/$1.key" -out "$C/$1.csr" \
    && openssl x509 -req -in "$C/$1.csr" -CA "$C/$2.pem" -CAkey "$C/$2.key" -CAcreateserial \
      -days 2 -extfile "$C/$1.ext" -out "$C/$1.pem"
}
certs() {
  ca ca && ca otherca && cert srv ca "IP:127.0.0.1,DNS:localhost" \
    && cert wrongname ca "DNS:elsewhere.example" && cert foreign otherca "IP:127.0.0.1"
}
t_step tls/certificates certs || t_unusable tls/openssl "openssl could not make the test's certificates"
export DDIO_TLS_CA=$C/ca.pem

# ---- the server's own checks ---------------------------------------------------------------------
mkdir -p "$W/root"
t_secret "$W/key"
srv_args=(--root "$W/root" --secret-file "$W/key")
t_expect_fail -x 2 tls/server-needs-cert "--tls required needs --tls-cert FILE and --tls-key FILE" \
  "$T_SERVER_BIN" --listen 127.0.0.1:auto "${srv_args[@]}" --tls required
t_expect_fail -x 2 tls/server-bad-mode "is not one of off|optional|required" \
  "$T_SERVER_BIN" --listen 127.0.0.1:auto "${srv_args[@]}" --tls on
t_expect_fail -x 1 tls/server-key-mismatch "key values mismatch" \
  "$T_SERVER_BIN" --listen 127.0.0.1:auto "${srv_args[@]}" --tls required \
  --tls-cert "$C/srv.pem" --tls-key "$C/wrongname.key"
t_expect_fail -x 1 tls/server-cert-missing "$W/none.pem" \
  "$T_SERVER_BIN" --listen 127.0.0.1:auto "${srv_args[@]}" --tls required \
  --tls-cert "$W/none.pem" --tls-key "$C/srv.key"

export DDIO_SECRET_FILE=$W/key
t_server_start "$W/req" "${srv_args[@]}" --tls required --tls-cert "$C/srv.pem" \
  --tls-key "$C/srv.key" || t_unusable tls/server "$T_SRV_WHY"
REQ=$T_SRV_ADDR REQLOG=$T_SRV_LOG REQPID=$T_SRV_PID

# ---- the protocol over TLS ---------------------------------------------------------------------
t_step tls/srv-client env DDIO_TLS=on "$CLIENT" "$REQ" "$W/root" "$REQLOG"
t_relay -p tls/ "$T_LOG"
t_step tls/srv-client-security env DDIO_TLS=on "$CLIENT" --security "$REQ" "$W/root" "$REQLOG"
t_relay -p tls/ "$T_LOG"
grep -q "TLSv1.3" "$REQLOG" && t_pass tls/logged "$(grep -m1 -o 'TLSv1.3 [A-Z0-9_]*' "$REQLOG")" \
  || t_fail tls/logged "no TLSv1.3 connection in the server's log"

# ---- refusals ----------------------------------------------------------------------------------
t_expect_fail -x 1 tls/plain-client-refused "this server requires TLS: set DDIO_TLS=on" \
  "$TOOL" -s "$REQ" ls /
n=$(env DDIO_TLS=on "$TOOL" -s "$REQ" stats auth_refused | awk '{ s += $3 } END { print s + 0 }')
grep -q "refused: this server requires TLS" "$REQLOG" && [ "$n" -ge 1 ] \
  && t_pass tls/plain-client-logged "logged, auth_refused $n" \
  || t_fail tls/plain-client-logged "not in the server's log, or auth_refused $n"
t_expect_fail -x 1 tls/other-ca-refused "is not trusted" \
  env DDIO_TLS=on DDIO_TLS_CA="$C/otherca.pem" "$TOOL" -s "$REQ" ls /
t_expect_fail -x 1 tls/bad-tls-setting "is not on or off" env DDIO_TLS=maybe "$TOOL" -s "$REQ" ls /
start_other() {   # start_other NAME CERT: a server with that certificate
  t_server_start "$W/$1" --root "$W/root" --secret-file "$W/key" --tls required \
    --tls-cert "$C/$2.pem" --tls-key "$C/$2.key"
}
if start_other wrongname wrongname; then
  t_expect_fail -x 1 tls/wrong-name-refused "is not trusted" env DDIO_TLS=on "$TOOL" -s "$T_SRV_ADDR" ls /
  t_server_stop
else t_fail tls/wrong-name-refused "server: $T_SRV_WHY"; fi
if start_other foreign foreign; then
  t_expect_fail -x 1 tls/foreign-cert-refused "is not trusted" env DDIO_TLS=on "$TOOL" -s "$T_SRV_ADDR" ls /
  t_server_stop
else t_fail tls/foreign-cert-refused "server: $T_SRV_WHY"; fi
if t_server_start "$W/off" "${srv_args[@]}"; then
  t_expect_fail -x 1 tls/server-without-tls "this server does not offer TLS" \
    env DDIO_TLS=on "$TOOL" -s "$T_SRV_ADDR" ls /
  t_server_stop
else t_fail tls/server-without-tls "server: $T_SRV_WHY"; fi

# ---- a passive tap ---------------------------------------------------------------------------------
head -c $((4 << 20)) /dev/urandom > "$W/data"
# tapped NAME SERVER [ENV...]: copy $W/data in and out through a tap in
# front of SERVER (no same-host shortcut, TCP), compare; the capture in
# $W/NAME.cap
tapped() {
  local name=$1 srv=$2; shift 2
  rm -f "$W/$name.port" "$W/$name.cap"
  python3 "$TAP" "$srv" "$W/$name.port" "$W/$name.cap" & local tap=$!
  t_defer t_kill $tap
  t_wait_for -p $tap 10 test -s "$W/$name.port" || t_why "the tap did not start" || return
  local via=127.0.0.1:$(cat "$W/$name.port")
  env DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 DDIO_TRANSPORT=tcp "$@" \
    "$TOOL" -s "$via" cp "$W/data" "ddio:/$name" >"$W/$name.out" 2>&1 \
    && env DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 DDIO_TRANSPORT=tcp "$@" \
    "$TOOL" -s "$via" cp "ddio:/$name" "$W/$name.back" >>"$W/$name.out" 2>&1 \
    || t_why "cp through the tap: $(tail -n 2 "$W/$name.out")" || return
  t_kill $tap
  cmp -s "$W/data" "$W/$name.back" || t_why "the copy came back different" || return
}
# seen CAPTURE: how many of 64 pieces (16 bytes each, spread over the file)
# the capture holds
seen() {
  python3 - "$W/data" "$1" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read(); c = open(sys.argv[2], 'rb').read()
print(sum(1 for i in range(64) if d[i * len(d) // 64:i * len(d) // 64 + 16] in c))
PY
}
capture_tls() {
  tapped tls "$REQ" DDIO_TLS=on || return
  local k; k=$(seen "$W/tls.cap")
  [ "$k" = 0 ] || t_why "$k of 64 pieces of the file are in the capture" || return
  T_NOTE="$(stat -c %s "$W/tls.cap") bytes captured, none of the file's"
}
t_case tls/capture-encrypted "" capture_tls
if t_server_start "$W/opt" "${srv_args[@]}" --tls optional --tls-cert "$C/srv.pem" --tls-key "$C/srv.key"; then
  OPT=$T_SRV_ADDR
  capture_plain() {
    tapped plain "$OPT" || return
    local k; k=$(seen "$W/plain.cap")
    [ "$k" -ge 60 ] || t_why "only $k of 64 pieces of the file seen without TLS" || return
    T_NOTE="$k of 64 pieces of the file seen without TLS: the tap sees the bytes"
  }
  t_case tls/capture-control-plain "" capture_plain
  t_step tls/optional-takes-tls env DDIO_TLS=on "$TOOL" -s "$OPT" ls /
  t_step tls/optional-takes-plain "$TOOL" -s "$OPT" ls /
  t_server_stop
else t_fail tls/optional "server: $T_SRV_WHY"; fi

# ---- another host: a network namespace ---------------------------------------------------------
other_host() {
  t_other_host 10.216 || return
  ns=$T_NS hostip=$T_HOSTIP nsip=$T_NSIP
  cert hostcert ca "IP:$hostip" >"$W/hostcert.log" 2>&1 || t_why "openssl: host certificate" || return
  t_server_start -n "$T_HNS" "$W/far" "${srv_args[@]}" --listen "$hostip:auto" --tls required \
    --tls-cert "$C/hostcert.pem" --tls-key "$C/hostcert.key" || t_why "server on $hostip: $T_SRV_WHY"
}
if t_case tls/other-host-setup "a namespace on a veth pair" other_host; then
  t_step tls/other-host-ucx-refused env DDIO_TLS=on ip netns exec "$ns" "$CLIENT" --ucx-tls-refused \
    "$T_SRV_ADDR"
  far_copy() {
    ip netns exec "$ns" env DDIO_TLS=on "$TOOL" -s "$T_SRV_ADDR" cp "$W/data" ddio:/far \
      && ip netns exec "$ns" env DDIO_TLS=on "$TOOL" -s "$T_SRV_ADDR" cp ddio:/far "$W/far.back" \
      || t_why "cp from the namespace failed" || return
    cmp -s "$W/data" "$W/far.back" || t_why "the copy came back different" || return
    ! grep -q "UCX endpoint attached" "$T_SRV_LOG" || t_why "a UCX endpoint was attached" || return
  }
  t_case tls/other-host-copy "TCP with TLS, no UCX endpoint" far_copy
  t_server_stop
fi
rc=0; t_server_stop "$REQPID" || rc=$?; t_result tls/server-stops $rc

# ---- MPI jobs under ddio-run --tls -----------------------------------------------------------------
# (DDIO_TLS_TEST_MPI=0 skips them: check-sanitizers.sh, whose MPICH is not
# the sanitized build, runs the rest)
[ "${DDIO_TLS_TEST_MPI:-1}" = 1 ] || t_done
t_mpi_env 30
PAT=$BUILD/examples/bin/ddio-patterns CMP=$BUILD/test/mpi/bin/filecmp U=$W/ufs
mkdir -p "$U"
if [ -x "$PAT" ] && [ -x "$CMP" ] && mpiexec -n 4 "$PAT" -q -r 8192 -m 8 "ufs:$U/p" >/dev/null; then
  for x in tcp ucx; do
    t_step tls/mpi-ddio-run-$x env -u DDIO_TLS_CA -u DDIO_SECRET_FILE DDIO_LOCAL_READ=0 \
      DDIO_LOCAL_WRITE=0 "$T_RUN" --tls --transport $x -s 2 -r "$W/dr-$x" -- \
      bash -c 'mpiexec -n 4 "$1" -q -r 8192 -m 8 ddio:/p && mpiexec -n 1 "$2" ddio:/p "ufs:$3/p"' \
      _ "$PAT" "$CMP" "$U"
  done
else
  t_fail tls/mpi-ddio-run "ddio-patterns or filecmp missing, or its ufs: run failed"
fi
t_done
