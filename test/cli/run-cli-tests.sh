#!/usr/bin/env bash
# The ddio command-line tool (tools/ddio) and the servers' observability,
# against servers started by tools/ddio-run with authentication on:
# mkdir/ls/stat/rm, layout numbers that add up to the file size, cp round
# trips local -> ddio -> local compared with cmp (0 and 1 bytes, not a
# multiple of the stripe unit, 64 MiB), status and --json parsed with sane
# values (test/cli/cli-cases.sh); then exit status 2 and one line on stderr
# for bad options of ddio, ddio-server and ddio-run, and the debug-level
# log line per call; checksums mended from copies and ddio scrub
# (test/cli/scrub-cases.sh, servers with --redundancy mirror, and with
# --checksums on and no copies); ddio rebuild onto a replacement server
# (test/cli/rebuild-cases.sh, 3 servers: mirror, none, 2 disks, ec:2+1, mirror:3,
# ddio watch; 6 servers: ec:4+2);
# the servers' membership, a server out and in again
# (test/cli/member-cases.sh); a server lost for good mid-write, declared
# out by the client (test/cli/lost-cases.sh); a failed write's copies made
# to agree by ddio scrub (test/cli/doubt-cases.sh). Closes with "cli: N passed,
# N failed".
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init cli
here=$SRC/test/cli
DDIO=$T_DDIO; SERVER=$T_SERVER_BIN; RUN=$T_RUN
for p in "$DDIO" "$SERVER"; do [ -x "$p" ] || t_unusable cli/build "$p missing: run make"; done
command -v python3 >/dev/null || t_unusable cli/python3 "python3 missing (JSON checks)"
tmp=$T_TMP
unset DDIO_SERVERS DDIO_SECRET_FILE DDIO_CONFIG DDIO_TIMEOUT   # DDIO_TRANSPORT is kept
# In a VPATH build (make distcheck) ddio-run is a source file and finds no
# server next to it: run it through a wrapper that names the built one.
if [ ! -x "$RUN" ]; then
  printf '#!/usr/bin/env bash\nexec %q --server %q "$@"\n' "$SRC/tools/ddio-run" "$SERVER" > "$tmp/ddio-run"
  chmod +x "$tmp/ddio-run"; RUN="$tmp/ddio-run"
fi

# ---- the cases against live servers -------------------------------------------------------
# the transport the data must take (DDIO_TRANSPORT; auto: this host's rule)
xport=$("$SRC/scripts/auto-transport.sh" --expected)
echo "cli: data by $xport (DDIO_TRANSPORT=${DDIO_TRANSPORT:-auto})"
mkdir -p "$tmp/srv" "$tmp/t"
timeout -k 10 "$T_LIMIT" "$RUN" -s 2 --root "$tmp/srv" -- \
  env DDIO="$DDIO" T="$tmp/t" XPORT="$xport" bash "$here/cli-cases.sh" >"$tmp/cases.log" 2>&1
rc=$?
t_relay "$tmp/cases.log"
if [ $rc -ne 0 ] || ! grep -q '^PASS: ' "$tmp/cases.log"; then
  t_fail cli/session "exit $rc"; t_indent "$tmp/cases.log" 20
fi

# ---- checksums mended: a read repairs from the copy, ddio scrub (test/cli/scrub-cases.sh) ----
# mirrored files (--redundancy mirror: cp makes copies; --checksums mirrored keeps their sums)
mkdir -p "$tmp/srv-sm" "$tmp/tsm"
timeout -k 10 "$T_LIMIT" "$RUN" -s 2 --root "$tmp/srv-sm" --server-opt --redundancy=mirror --keep-logs -- \
  env DDIO="$DDIO" T="$tmp/tsm" ROOT="$tmp/srv-sm" bash "$here/scrub-cases.sh" mirror \
  >"$tmp/scrub-m.log" 2>"$tmp/scrub-m.err"
rc=$?
t_relay "$tmp/scrub-m.log" && [ $rc = 0 ] || t_fail cli/scrub/session-mirror "exit $rc: $(tail -c 400 "$tmp/scrub-m.err")"
grep -m1 'scrub --rate' "$tmp/scrub-m.log"
# the servers log each repair: file, offset, server
grep -qE 'WARN: checksums: repaired m1 \(copy 0\) at offset 69632 \(local 69632\) on server 127\.0\.0\.1:[0-9]+ from a good copy' "$tmp/scrub-m.err" \
  && [ "$(grep -c 'WARN: checksums: repaired m2 ' "$tmp/scrub-m.err")" = 5 ] \
  && [ "$(grep -cE 'ERROR: data integrity: m2 \(copy [01]\): sector at offset [0-9]+ \(local [0-9]+\) on server 127\.0\.0\.1:[0-9]+ disagrees with its checksum \(scrub\)' "$tmp/scrub-m.err")" = 5 ] \
  && t_pass cli/scrub/repair-logged || t_fail cli/scrub/repair-logged "$(grep -m5 'WARN\|ERROR' "$tmp/scrub-m.err")"
# two disks per server, 64 KiB blocks: each disk's datafile and mirror
mkdir -p "$tmp/srv-sd" "$tmp/tsd"
timeout -k 10 "$T_LIMIT" "$RUN" -s 2 -d 2 -b 65536 --root "$tmp/srv-sd" --server-opt --redundancy=mirror -- \
  env DDIO="$DDIO" T="$tmp/tsd" ROOT="$tmp/srv-sd" bash "$here/scrub-cases.sh" disks \
  >"$tmp/scrub-d.log" 2>"$tmp/scrub-d.err"
rc=$?
t_relay "$tmp/scrub-d.log" && [ $rc = 0 ] || t_fail cli/scrub/session-disks "exit $rc: $(tail -c 400 "$tmp/scrub-d.err")"
# redundancy none with --checksums on: found, not mended
mkdir -p "$tmp/srv-sn" "$tmp/tsn"
timeout -k 10 "$T_LIMIT" "$RUN" -s 2 --root "$tmp/srv-sn" --server-opt --checksums=on -- \
  env DDIO="$DDIO" T="$tmp/tsn" ROOT="$tmp/srv-sn" bash "$here/scrub-cases.sh" none \
  >"$tmp/scrub-n.log" 2>"$tmp/scrub-n.err"
rc=$?
t_relay "$tmp/scrub-n.log" && [ $rc = 0 ] || t_fail cli/scrub/session-none "exit $rc: $(tail -c 400 "$tmp/scrub-n.err")"

# ---- rebuild onto a replacement (test/cli/rebuild-cases.sh) ----
# rebuild_session MODE DDIO-RUN-ARGS...: rebuild-cases.sh MODE inside a
# ddio-run of those arguments, its cases relayed
rebuild_session() {
  local mode=$1 rc; shift
  mkdir -p "$tmp/srv-r$mode" "$tmp/tr$mode"
  timeout -k 10 "$T_LIMIT" "$RUN" --root "$tmp/srv-r$mode" "$@" -- \
    env DDIO="$DDIO" SERVER="$SERVER" T="$tmp/tr$mode" ROOT="$tmp/srv-r$mode" \
    EC_VERIFY="$BUILD/test/server/ec_verify" bash "$here/rebuild-cases.sh" "$mode" \
    >"$tmp/rebuild-$mode.log" 2>"$tmp/rebuild-$mode.err"
  rc=$?
  t_relay "$tmp/rebuild-$mode.log" && [ $rc = 0 ] ||
    t_fail "cli/rebuild/session-$mode" "exit $rc: $(grep -v Killed "$tmp/rebuild-$mode.err" | tail -c 400)"
}
rebuild_session mirror -s 3 --server-opt --redundancy=mirror
rebuild_session none -s 3
rebuild_session disks -s 3 -d 2 -b 65536 --server-opt --redundancy=mirror
rebuild_session ec -s 3
rebuild_session fence -s 3
# (ddio watch: a lost server declared out, its replacement rebuilt onto
# and declared in, with no command run by hand)
rebuild_session watch -s 3 --server-opt --redundancy=mirror
# (ec:4+2 on 6 servers: rebuilt, then two others lost)
rebuild_session ec42 -s 6
rebuild_session mirror3 -s 3 --server-opt --redundancy=mirror:3
# ---- the membership: a server declared out by majority, refusing until in again ----------
# (test/cli/member-cases.sh; three servers, mirrored files, one SIGKILLed and restarted)
mkdir -p "$tmp/srv-mb" "$tmp/tmb"
timeout -k 10 "$T_LIMIT" "$RUN" -s 3 --root "$tmp/srv-mb" --server-opt --redundancy=mirror -- \
  env DDIO="$DDIO" SERVER="$SERVER" FUSE="$BUILD/tools/ddio-fuse" T="$tmp/tmb" ROOT="$tmp/srv-mb" \
  bash "$here/member-cases.sh" \
  >"$tmp/member.log" 2>"$tmp/member.err"
rc=$?
t_relay "$tmp/member.log" && [ $rc = 0 ] || t_fail cli/member/session "exit $rc: $(tail -c 400 "$tmp/member.err")"

# ---- a server lost for good mid-write: declared out by the client, the write goes on ----
# (test/cli/lost-cases.sh; three servers, a mirrored, then an ec:2+1 file, one SIGKILLed at
# its 40th write block and its root deleted)
mkdir -p "$tmp/srv-lost" "$tmp/tlost"
timeout -k 10 "$T_LIMIT" "$RUN" -s 3 --root "$tmp/srv-lost" --server-opt --redundancy=mirror \
  --fault 2:indep-write:40:kill -- \
  env DDIO="$DDIO" T="$tmp/tlost" ROOT="$tmp/srv-lost" bash "$here/lost-cases.sh" \
  >"$tmp/lost.log" 2>"$tmp/lost.err"
rc=$?
t_relay "$tmp/lost.log" && [ $rc = 0 ] || t_fail cli/lost/session "exit $rc: $(grep -v Killed "$tmp/lost.err" | tail -c 400)"
mkdir -p "$tmp/srv-lost-ec" "$tmp/tlost-ec"
timeout -k 10 "$T_LIMIT" "$RUN" -s 3 --root "$tmp/srv-lost-ec" --fault 2:indep-write:40:kill -- \
  env DDIO="$DDIO" T="$tmp/tlost-ec" ROOT="$tmp/srv-lost-ec" bash "$here/lost-cases.sh" ec \
  >"$tmp/lost-ec.log" 2>"$tmp/lost-ec.err"
rc=$?
t_relay "$tmp/lost-ec.log" && [ $rc = 0 ] || t_fail cli/lost/ec/session "exit $rc: $(grep -v Killed "$tmp/lost-ec.err" | tail -c 400)"

# ---- a fence right after the last reply: the request's hold counts as answered ----
# Server 0 sleeps 2 s between each reply of a request holding a file and
# its letting go of it (--fault 0:let-go:1:pause). `ddio cp` of an ec:2+1
# file ends with a SYNC; the fold started right after it finds the SYNC's
# hold still there and must wait for it (so it takes a while), not refuse
# ("open now: not folded").
mkdir -p "$tmp/srv-answered"
timeout -k 10 "$T_LIMIT" "$RUN" -s 3 --root "$tmp/srv-answered" --fault 0:let-go:1:pause -- \
  bash -c 'head -c 3000017 /dev/urandom > "$1/src" && "$0" cp -r ec:2+1 "$1/src" ddio:/ec >/dev/null \
    && t0=$(date +%s%N) && "$0" fold /ec && echo "fold took $(( ($(date +%s%N) - t0) / 1000000 )) ms" \
    && "$0" cp ddio:/ec "$1/back" >/dev/null && cmp "$1/src" "$1/back"' \
  "$DDIO" "$tmp/srv-answered" >"$tmp/answered.log" 2>&1
rc=$?
ms=$(sed -n 's/^fold took \([0-9]*\) ms$/\1/p' "$tmp/answered.log")
if [ $rc = 0 ] && grep -q "group(s) folded" "$tmp/answered.log" && ! grep -q "open now" "$tmp/answered.log" \
   && [ "${ms:-0}" -ge 300 ]; then
  t_pass cli/fence/waits-for-answered-hold "the fold waited ${ms} ms"
else t_fail cli/fence/waits-for-answered-hold "exit $rc, fold ${ms:-?} ms: $(tail -c 400 "$tmp/answered.log")"; fi

# ---- a failed write of a mirrored (and of an ec:2+1) file: in doubt until ddio scrub makes its copies agree ----
# (test/cli/doubt-cases.sh; three servers, a writer killed while server 1
# is stopped at a fault point)
mkdir -p "$tmp/srv-doubt" "$tmp/tdoubt"
timeout -k 10 "$T_LIMIT" "$RUN" -s 3 --root "$tmp/srv-doubt" --server-opt --redundancy=mirror \
  --fault 1:indep-write:20:stop -- \
  env DDIO="$DDIO" T="$tmp/tdoubt" ROOT="$tmp/srv-doubt" bash "$here/doubt-cases.sh" \
  >"$tmp/doubt.log" 2>"$tmp/doubt.err"
rc=$?
t_relay "$tmp/doubt.log" && [ $rc = 0 ] || t_fail cli/doubt/session "exit $rc: $(grep -v Killed "$tmp/doubt.err" | tail -c 400)"
# (with UCX, server 1 stopped while its writer is killed may be left with
# a rendezvous receive from the dead client that never ends: it gives it
# up 20 s later, ioserver/ucx_data.c orphan_recvs, and the scrub, refused
# while the file is open, is run again until then)
mkdir -p "$tmp/srv-doubt-ec" "$tmp/tdoubt-ec"
timeout -k 10 "$T_LIMIT" "$RUN" -s 3 --root "$tmp/srv-doubt-ec" --fault 1:indep-write:20:stop -- \
  env DDIO="$DDIO" T="$tmp/tdoubt-ec" ROOT="$tmp/srv-doubt-ec" EC_VERIFY="$BUILD/test/server/ec_verify" \
  bash "$here/doubt-cases.sh" ec >"$tmp/doubt-ec.log" 2>"$tmp/doubt-ec.err"
rc=$?
t_relay "$tmp/doubt-ec.log" && [ $rc = 0 ] || t_fail cli/doubt/ec/session "exit $rc: $(grep -v Killed "$tmp/doubt-ec.err" | tail -c 400)"

# ---- status of a server with three disks: a line and a JSON entry per disk and root ----
mkdir -p "$tmp/srv3"
timeout -k 10 120 "$RUN" -s 1 -d 3 --root "$tmp/srv3" -- bash -c \
  '"$0" status -i 0 >"$1/st3.txt" && "$0" status --json -i 0.1 >"$1/st3.json"' "$DDIO" "$tmp" 2>"$tmp/st3.err"
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -cE '^  disk [0-2]  read ' "$tmp/st3.txt")" = 3 ] \
   && [ "$(grep -cE '^  root [0-2]  free ' "$tmp/st3.txt")" = 3 ] && python3 -c '
import json,sys
s=json.load(open(sys.argv[1]))["servers"]
assert len(s)==1 and [d["index"] for d in s[0]["disks"]]==[0,1,2], s
assert [r["index"] for r in s[0]["roots"]]==[0,1,2], s
' "$tmp/st3.json"; then t_pass cli/status/three-disks
else t_fail cli/status/three-disks "exit $rc: $(cat "$tmp/st3.txt" "$tmp/st3.err" 2>/dev/null | head -c 400)"; fi

# ---- ddio-run --secret-file and --timeout: used by the servers, exported to the command --
t_secret "$tmp/runkey"
mkdir -p "$tmp/srv4"
timeout -k 10 120 "$RUN" -s 1 --root "$tmp/srv4" --secret-file "$tmp/runkey" -t 7 -- bash -c \
  '[ "$DDIO_SECRET_FILE" = "$(realpath "$1")" ] && [ "$DDIO_TIMEOUT" = 7 ] && "$0" ls / >/dev/null' \
  "$DDIO" "$tmp/runkey" >"$tmp/run4.log" 2>&1 \
  && t_pass cli/ddio-run/secret-file-and-timeout || t_fail cli/ddio-run/secret-file-and-timeout "$(head -c 300 "$tmp/run4.log")"

# ---- DDIO_TRANSPORT=ucx against a server without UCX: a clear error, exit 1 --------------
mkdir -p "$tmp/srv5"
timeout -k 10 120 "$RUN" -s 1 --root "$tmp/srv5" --transport tcp -- \
  env DDIO_TRANSPORT=ucx "$DDIO" ls / >"$tmp/run5.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "DDIO_TRANSPORT = ucx, but server 127.0.0.1:[0-9]*: .*UCX" "$tmp/run5.log" \
  && t_pass cli/transport/ucx-refused || t_fail cli/transport/ucx-refused "exit $rc: $(head -c 300 "$tmp/run5.log")"

# ---- bad command lines: exit 2, exactly one line on stderr, nothing on stdout ----------
# badopt NAME CMD...
badopt() {
  local n=$1 rc=0; shift
  "$@" >"$tmp/o" 2>"$tmp/e" </dev/null || rc=$?
  local lines; lines=$(wc -l <"$tmp/e")
  if [ $rc -eq 2 ] && [ "$lines" = 1 ] && [ ! -s "$tmp/o" ]; then t_pass "cli/badopt/$n"
  else t_fail "cli/badopt/$n" "exit $rc, $lines stderr lines: $(head -c 300 "$tmp/e")"; fi
}
S=127.0.0.1:1
badopt ddio-unknown "$DDIO" --bogus ls
badopt ddio-unknown-after-command "$DDIO" -s $S ls --bogus
badopt ddio-unknown-short "$DDIO" -s $S ls -x
badopt ddio-timeout-abc "$DDIO" -s $S --timeout abc status
badopt ddio-timeout-zero "$DDIO" -s $S -t 0 status
badopt ddio-port-70000 "$DDIO" -s 127.0.0.1:70000 ls
badopt ddio-no-servers "$DDIO" ls
badopt ddio-missing-value "$DDIO" ls -s
badopt ddio-unknown-command "$DDIO" -s $S frobnicate
badopt ddio-no-command "$DDIO"
badopt ddio-operands "$DDIO" -s $S stat
badopt ddio-option-of-another-command "$DDIO" -s $S stat -l /x
badopt ddio-option-of-another-command-before "$DDIO" --json -s $S cp /a ddio:/b
badopt ddio-cp-two-local "$DDIO" -s $S cp /a /b
badopt ddio-stripe-unit "$DDIO" -s $S cp -u 0 /a ddio:/b
badopt ddio-interval "$DDIO" -s $S status -i -1
badopt ddio-scrub-nothing "$DDIO" -s $S scrub
badopt ddio-scrub-path-and-all "$DDIO" -s $S scrub /a --all
badopt ddio-scrub-two-paths "$DDIO" -s $S scrub /a /b
badopt ddio-scrub-rate-abc "$DDIO" -s $S scrub --rate abc /a
badopt ddio-scrub-rate-zero "$DDIO" -s $S scrub --rate 0 /a
badopt ddio-scrub-option-of-cp "$DDIO" -s $S scrub -u 1M /a
badopt ddio-rate-of-cp "$DDIO" -s $S cp --rate 5 /a ddio:/b
badopt ddio-rebuild-no-server "$DDIO" -s $S rebuild
badopt ddio-rebuild-server-abc "$DDIO" -s $S rebuild --server abc
badopt ddio-rebuild-server-negative "$DDIO" -s $S rebuild --server -1
badopt ddio-rebuild-server-out-of-list "$DDIO" -s $S rebuild --server 1
badopt ddio-rebuild-operand "$DDIO" -s $S rebuild --server 0 /a
badopt ddio-rebuild-rate-zero "$DDIO" -s $S rebuild --server 0 --rate 0
badopt ddio-server-of-scrub "$DDIO" -s $S scrub --server 0 /a
badopt ddio-server-unknown "$SERVER" --bogus
badopt ddio-server-port-70000 "$SERVER" --listen 127.0.0.1:70000 --root "$tmp" --insecure
badopt ddio-server-log-level "$SERVER" --listen 127.0.0.1:0 --root "$tmp" --insecure --log-level loud
badopt ddio-server-missing-value "$SERVER" --listen
badopt ddio-server-buffers-abc "$SERVER" --listen 127.0.0.1:0 --root "$tmp" --insecure --buffers abc
badopt ddio-run-unknown "$RUN" --bogus -- true
badopt ddio-run-timeout-abc "$RUN" --timeout abc -- true
badopt ddio-run-servers-abc "$RUN" -s abc -- true
badopt ddio-run-log-level "$RUN" --log-level loud -- true
badopt ddio-run-no-command "$RUN" -s 1
# --help: exit 0, on stdout, and the shared options worded alike
for p in "$DDIO" "$SERVER" "$RUN"; do
  n=$(basename "$p")
  if "$p" --help >"$tmp/h" 2>"$tmp/e" && [ ! -s "$tmp/e" ] && grep -q '^usage: ' "$tmp/h" \
     && grep -q -- '--secret-file F .*the shared secret: a file owned by you, mode 0600' "$tmp/h"; then
    t_pass "cli/help/$n"
  else t_fail "cli/help/$n" "$(head -c 300 "$tmp/h" "$tmp/e")"; fi
done
grep -q -- '-t, --timeout S .*seconds any wait may take before' <("$DDIO" --help) \
  && grep -q -- '-t, --timeout S .*seconds any wait may take before' <("$RUN" --help) \
  && t_pass cli/help/timeout-wording || t_fail cli/help/timeout-wording
"$DDIO" ls --help >"$tmp/h" 2>&1 && grep -q '^usage: ddio' "$tmp/h" && t_pass cli/help/after-command \
  || t_fail cli/help/after-command "$(head -c 300 "$tmp/h")"

# ---- observability: debug level logs one line per call with its counters -----------------
mkdir -p "$tmp/srv2"
head -c 3000017 /dev/urandom >"$tmp/f"
DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 timeout -k 10 120 "$RUN" -s 2 --root "$tmp/srv2" --log-level debug --keep-logs -- \
  bash -c '"$0" cp "$1" ddio:/logged && "$0" cp ddio:/logged "$1.back"' "$DDIO" "$tmp/f" \
  >"$tmp/dbg.out" 2>"$tmp/dbg.err"
rc=$?
# "xfer write logged ... blocks B read R written W ... sent S recv N ... wait Tus io Tus
#  disk Tus net Tus": a write's disk and network time are never 0; a read's
#  disk time is 0 when its blocks went from a mapping of the page cache
#  (UCX's one-copy path), never its blocks read and bytes sent
if [ $rc -eq 0 ] && grep -qE 'DEBUG: xfer write logged .* blocks [0-9]+ read [0-9]+ written [1-9][0-9]* .* recv [1-9][0-9]* .* wait [0-9]+us io [0-9]+us disk [1-9][0-9]*us net [1-9][0-9]*us' "$tmp/dbg.err" \
   && grep -qE 'DEBUG: xfer read logged .* read [1-9][0-9]* .* sent [1-9][0-9]* .* disk [0-9]+us net [0-9]+us' "$tmp/dbg.err"; then
  t_pass cli/log/debug-line-per-call
else t_fail cli/log/debug-line-per-call "exit $rc: $(grep -m3 -E 'DEBUG|ERROR' "$tmp/dbg.err")"; fi
# the info level has no such lines
timeout -k 10 120 "$RUN" -s 1 --root "$tmp/srv2" --log-level info --keep-logs -- \
  "$DDIO" cp "$tmp/f" ddio:/logged2 >/dev/null 2>"$tmp/info.err"
grep -q 'INFO: listening on' "$tmp/info.err" && ! grep -q 'DEBUG:' "$tmp/info.err" \
  && t_pass cli/log/info-level || t_fail cli/log/info-level "$(head -c 300 "$tmp/info.err")"
# --syslog: nothing on stderr (the lines go to syslog, or nowhere without one)
t_secret "$tmp/key"
if t_server_start "$tmp/sys" --root "$tmp/srv2" --secret-file "$tmp/key" --syslog --log-level debug; then
  DDIO_SECRET_FILE="$tmp/key" timeout 60 "$DDIO" -s "$T_SRV_ADDR" stats xfers >/dev/null 2>&1
  src=$?
  t_server_stop
  [ $src -eq 0 ] && [ ! -s "$T_SRV_LOG" ] && t_pass cli/log/syslog \
    || t_fail cli/log/syslog "stats exit $src: $(head -c 300 "$T_SRV_LOG")"
else
  t_fail cli/log/syslog "server start: $T_SRV_WHY"
fi
t_done
