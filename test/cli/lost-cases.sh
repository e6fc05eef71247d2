#!/usr/bin/env bash
# A server lost for good mid-write (run-cli-tests.sh runs it inside
# `ddio-run -s 3`, servers with --redundancy mirror, DDIO_SERVERS and
# DDIO_SECRET_FILE set): server 2 SIGKILLed (by itself, at its 40th write
# block: --fault 2:indep-write:40:kill) and its root deleted while `ddio
# cp` writes a 300 MB mirrored file. The write rides through: after
# the recovery time (DDIO_RECOVER_TIMEOUT=2) the client has the majority
# declare server 2 out and finishes on the others; the file reads back
# byte for byte in a new process (server 2 down and out: no waiting for
# it), the others noted the file for it, and a file made after is written
# and read without it. Needs: DDIO (tools/ddio), T (scratch dir), ROOT
# (ddio-run's --root). Prints "PASS: name" or "FAIL: name: why" per case.
#   lost-cases.sh      mirrored files (the servers' --redundancy mirror)
#   lost-cases.sh ec   ec:2+1 files (ddio cp --redundancy): server 2's
#                      units carried by the parity, then decoded
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
T_TMP=$T
IFS=, read -r -a addr <<<"$DDIO_SERVERS"
export DDIO_RECOVER_TIMEOUT=2
pid_of() { pgrep -P "$PPID" -a ddio-server | awk -v f="/s$1.port" 'index($0, f) { print $1 }'; }
same() { cmp "$1" "$2" >"$T/why" 2>&1; }
cpr=(); P=cli/lost
[ "${1:-mirror}" = ec ] && { cpr=(-r ec:2+1); P=cli/lost/ec; }

head -c 300000007 /dev/urandom > "$T/src"
"$DDIO" member >/dev/null 2>&1          # epoch 1 named while all answer
victim=$(pid_of 2)
# (a kill timed from outside raced the copy: now and then it came after)
( for _ in $(seq 3000); do kill -0 "$victim" 2>/dev/null || break; sleep 0.02; done
  kill -KILL "$victim" 2>/dev/null; rm -rf "$ROOT/s2" ) &
killer=$!
rc=0; "$DDIO" cp "${cpr[@]}" "$T/src" ddio:/big >/dev/null 2>"$T/cp.err" || rc=$?
wait "$killer"
if [ $rc = 0 ] && ! kill -0 "$victim" 2>/dev/null; then t_pass $P/write-rides-through
else t_fail $P/write-rides-through "exit $rc: $(cat "$T/cp.err")"; fi
"$DDIO" member >"$T/m.out" 2>&1
grep -qx "server 2 ${addr[2]} out (unreachable)" "$T/m.out" && t_pass $P/declared-out \
  || t_fail $P/declared-out "$(cat "$T/m.out")"
# (an ec file's read decodes server 2's third on the client: under the
# sanitizers that alone takes longer than 10 s)
t0=$(date +%s); limit=10; [ "$P" = cli/lost ] || limit=60
if "$DDIO" cp ddio:/big "$T/back" >/dev/null 2>"$T/cp.err" && same "$T/src" "$T/back" \
   && [ $(( $(date +%s) - t0 )) -lt $limit ]; then t_pass $P/reads-back
else t_fail $P/reads-back "$(( $(date +%s) - t0 )) s (limit $limit): $(cat "$T/cp.err" "$T/why")"; fi
"$DDIO" stats missed_files >"$T/st" 2>/dev/null
[ "$(awk '$2 == "missed_files" { s += $3 } END { print s + 0 }' "$T/st")" = 2 ] \
  && t_pass $P/noted || t_fail $P/noted "$(cat "$T/st")"
head -c 5000011 /dev/urandom > "$T/small"
if "$DDIO" cp "${cpr[@]}" "$T/small" ddio:/small >/dev/null 2>"$T/cp.err" \
   && "$DDIO" cp ddio:/small "$T/small.back" >/dev/null 2>>"$T/cp.err" && same "$T/small" "$T/small.back"; then
  t_pass $P/new-file-without-it
else t_fail $P/new-file-without-it "$(cat "$T/cp.err" "$T/why")"; fi
# Another deployment's server takes the lost server's port (its own
# secret): the clients still find server 2 out and go on without it, where
# a server that is in refusing the secret fails the call (cli/auth cases)
if [ "$P" = cli/lost ]; then
  head -c 64 /dev/urandom > "$T/other.secret"; chmod 600 "$T/other.secret"
  mkdir -p "$T/other"
  "$T_SERVER_BIN" --listen "${addr[2]}" --root "$T/other" --secret-file "$T/other.secret" \
    2>"$T/other.log" & other=$!
  for _ in $(seq 200); do grep -q "listening" "$T/other.log" && break; sleep 0.05; done
  if kill -0 "$other" 2>/dev/null && "$DDIO" cp ddio:/small "$T/small.back2" >/dev/null 2>"$T/cp.err" \
     && same "$T/small" "$T/small.back2"; then
    t_pass $P/impostor-stays-out
  else t_fail $P/impostor-stays-out "$(kill -0 "$other" 2>/dev/null || echo "other server not up: $(tail -3 "$T/other.log")") $(cat "$T/cp.err" "$T/why" 2>/dev/null)"; fi
  kill "$other" 2>/dev/null; wait "$other" 2>/dev/null
fi
