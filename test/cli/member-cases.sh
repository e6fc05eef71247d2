#!/usr/bin/env bash
# The membership of three servers (run-cli-tests.sh runs it inside
# `ddio-run -s 3`, servers with --redundancy mirror, DDIO_SERVERS and
# DDIO_SECRET_FILE set): epoch 1 named while all answer; a SIGKILLed server
# declared out by the two others (a majority); restarted on its old root, it learns from the next
# client that it is out and refuses the mirrored file (a read goes on
# without it, from the copies; a write fails clearly);
# declared in again, the file reads back byte for byte and every copy's
# datafile equals its primary; with two servers down no change is agreed.
# A file held open through the mount across a membership change reads on
# (its stale requests refused and resent). A file written between two
# rounds of a resync is resynced again; a file held open for writing since
# the server went out keeps the resync from letting it in until closed
# (DDIO_TEST_RESYNC_PAUSE stops the resync at a named point). Needs: DDIO (tools/ddio),
# SERVER (ddio-server), T (scratch dir), ROOT (ddio-run's --root); FUSE
# (tools/ddio-fuse, optional). Prints "PASS: name" or "FAIL: name: why"
# per case.
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
T_TMP=$T
IFS=, read -r -a addr <<<"$DDIO_SERVERS"
restarted=""
trap '[ -z "$restarted" ] || kill -KILL $restarted 2>/dev/null' EXIT

# pid of ddio-run's server i (its port file is s<i>.port)
pid_of() { pgrep -P "$PPID" -a ddio-server | awk -v f="/s$1.port" 'index($0, f) { print $1 }'; }
# server i started again on its old root and port, as an operator would
restart() {
  "$SERVER" --listen "${addr[$1]}" --secret-file "$DDIO_SECRET_FILE" --root "$ROOT/s$1" \
    --redundancy mirror --log-level info 2>"$T/s$1.restart.log" &
  restarted="$restarted $!"
  for _ in $(seq 100); do "$DDIO" -t 1 stats 2>/dev/null | grep -q "^${addr[$1]} " && return 0; sleep 0.1; done
  return 1
}
# member lines: "epoch N" then "server I ADDR in|out[ (unreachable)]"
member_is() { "$DDIO" member >"$T/m.out" 2>"$T/m.err"; grep -qx "$1" "$T/m.out"; }
same() { cmp "$1" "$2" >"$T/why" 2>&1; }

head -c 3000017 /dev/urandom > "$T/src"
"$DDIO" cp "$T/src" ddio:/m1 >/dev/null 2>"$T/cp.err" && "$DDIO" stat /m1 | grep -q mirror \
  && "$DDIO" cp "$T/src" ddio:/gone1 >/dev/null 2>>"$T/cp.err" \
  && "$DDIO" cp "$T/src" ddio:/mv1 >/dev/null 2>>"$T/cp.err" && "$DDIO" mkdir /dgone 2>>"$T/cp.err" \
  && "$DDIO" mkdir /dkept 2>>"$T/cp.err" || t_fail cli/member/setup "$(cat "$T/cp.err")"
if member_is "epoch 1" && [ "$(grep -c ' in$' "$T/m.out")" = 3 ]; then t_pass cli/member/first-epoch
else t_fail cli/member/first-epoch "$(cat "$T/m.out" "$T/m.err")"; fi

# ---- server 2 killed: declared out by the two others -------------------------------------
kill -KILL "$(pid_of 2)"; sleep 0.2
# status looks, it does not wait: the server down is named within seconds
# (5 s a connect with no timeout given; it was 30, twice), the others shown
s0=$(date +%s); rc=0; env -u DDIO_TIMEOUT "$DDIO" status >"$T/down.out" 2>&1 || rc=$?
if [ $rc = 1 ] && [ $(( $(date +%s) - s0 )) -lt 20 ] \
   && grep -q "cannot connect to server ${addr[2]}" "$T/down.out" && grep -q "^server ${addr[0]} " "$T/down.out"; then
  t_pass cli/member/status-server-down
else t_fail cli/member/status-server-down "exit $rc after $(( $(date +%s) - s0 )) s: $(head -c 400 "$T/down.out")"; fi
if "$DDIO" member out 2 >"$T/o.out" 2>"$T/o.err" && grep -qx "epoch 2" "$T/o.out" \
   && grep -qx "server 2 ${addr[2]} out (unreachable)" "$T/o.out"; then t_pass cli/member/out-by-majority
else t_fail cli/member/out-by-majority "$(cat "$T/o.out" "$T/o.err")"; fi
"$DDIO" status -i 0 >"$T/st.out" 2>/dev/null
"$DDIO" status --json -i 0 >"$T/st.json" 2>/dev/null
if grep -qx "membership: epoch 2, out: ${addr[2]}" "$T/st.out" && python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["membership"]
assert m == {"epoch": 2, "out": [sys.argv[2]]}, m' "$T/st.json" "${addr[2]}"; then
  t_pass cli/member/status
else t_fail cli/member/status "$(head -3 "$T/st.out"; tail -c 200 "$T/st.json")"; fi
# a second server out by choice: refused (a unit whose copies are on 1 and
# 2 would have none in), nothing changed; --force is tested further down
t_expect_fail -x 1 -2 cli/member/second-out-refused \
  "server ${addr[2]} is out already (epoch 2); with ${addr[1]} out too" "$DDIO" member out 1
if member_is "epoch 2" && grep -qx "server 1 ${addr[1]} in" "$T/m.out"; then
  t_pass cli/member/second-out-changed-nothing
else t_fail cli/member/second-out-changed-nothing "$(cat "$T/m.out" "$T/m.err")"; fi

# down and out: the namespace is read from the others (the size of /m1,
# whose last unit is server 2's, from its copy); changes are made on the
# others, which note them for server 2 (its resync makes them there,
# below): a file deleted, directories made (one in another) and removed,
# a mirrored file renamed; a directory's rename is refused, naming the
# server out, and changes nothing
nsout() {
  "$DDIO" stat /m1 >"$T/ns.out" 2>&1 && grep -qx "size: 3000017" "$T/ns.out" \
    && "$DDIO" ls -l / >>"$T/ns.out" 2>&1 && grep -q " 3000017 .* m1$" "$T/ns.out" || return 1
  "$DDIO" mkdir /d1 >>"$T/ns.out" 2>&1 && "$DDIO" mkdir /d1/d2 >>"$T/ns.out" 2>&1 \
    && "$DDIO" chmod 750 /d1/d2 >>"$T/ns.out" 2>&1 && "$DDIO" rm /dgone >>"$T/ns.out" 2>&1 \
    && "$DDIO" mv /mv1 /d1/mv2 >>"$T/ns.out" 2>&1 && "$DDIO" rm /gone1 >>"$T/ns.out" 2>&1 || return 1
  ! "$DDIO" stat /gone1 >>"$T/ns.out" 2>&1 || return 1
  ! "$DDIO" mv /dkept /dmoved >>"$T/ns.out" 2>&1 || return 1
  grep -q "rename /\?dkept: a directory while server 2 is out of the membership" "$T/ns.out" \
    && [ -d "$ROOT/s0/d1/d2" ] && [ -d "$ROOT/s1/d1/d2" ] && [ ! -e "$ROOT/s2/d1" ] \
    && [ ! -e "$ROOT/s0/dgone" ] && [ -d "$ROOT/s2/dgone" ] && [ -d "$ROOT/s0/dkept" ] \
    && [ ! -e "$ROOT/s0/dmoved" ] && [ -e "$ROOT/s0/d1/mv2" ] && [ ! -e "$ROOT/s1/mv1" ] \
    && [ -e "$ROOT/s2/mv1" ] && [ -e "$ROOT/s0/m1" ] && [ -e "$ROOT/s1/m1" ] \
    && [ ! -e "$ROOT/s0/gone1" ] && [ ! -e "$ROOT/s1/gone1" ] && [ -e "$ROOT/s2/gone1" ]
}
nsout && t_pass cli/member/out-namespace \
  || t_fail cli/member/out-namespace "$(cat "$T/ns.out"; ls -R "$ROOT/s0" "$ROOT/s2")"

# ---- back on its old root: it learns it is out, and refuses the mirrored file -------------
restart 2 || t_fail cli/member/restart "$(cat "$T/s2.restart.log")"
if member_is "epoch 2" && grep -qx "server 2 ${addr[2]} out" "$T/m.out" \
   && grep -q "membership epoch 2 committed: this server is out" "$T/s2.restart.log"; then
  t_pass cli/member/returning-learns-out
else t_fail cli/member/returning-learns-out "$(cat "$T/m.out" "$T/m.err" "$T/s2.restart.log")"; fi
# a read-only open goes on without it: its unit comes from its copy (the
# end of file too: the last unit is server 2's), byte for byte
if "$DDIO" cp ddio:/m1 "$T/degraded" >/dev/null 2>"$T/cp.err" && same "$T/src" "$T/degraded"; then
  t_pass cli/member/out-reads-copies
else t_fail cli/member/out-reads-copies "$(cat "$T/cp.err" "$T/why")"; fi
# writes go on without it: /m1 overwritten (shorter), /m2 made; the
# others note both for it; its datafiles keep the old bytes meanwhile
head -c 2500003 /dev/urandom > "$T/src1"; head -c 1700001 /dev/urandom > "$T/src2"
cp "$ROOT/s2/m1" "$T/s2-m1.before"
if "$DDIO" cp "$T/src1" ddio:/m1 >/dev/null 2>"$T/cp.err" && "$DDIO" cp "$T/src2" ddio:/m2 >/dev/null 2>>"$T/cp.err" \
   && "$DDIO" cp ddio:/m1 "$T/b1" >/dev/null 2>>"$T/cp.err" && same "$T/src1" "$T/b1" \
   && "$DDIO" cp ddio:/m2 "$T/b2" >/dev/null 2>>"$T/cp.err" && same "$T/src2" "$T/b2" \
   && same "$ROOT/s2/m1" "$T/s2-m1.before" && [ ! -e "$ROOT/s2/m2" ]; then
  t_pass cli/member/out-writes-copies
else t_fail cli/member/out-writes-copies "$(cat "$T/cp.err" "$T/why"; ls "$ROOT/s2")"; fi
"$DDIO" status -i 0 >"$T/st.out" 2>&1
grep -q "^  noted for members out: 8 file(s)" "$T/st.out" && t_pass cli/member/out-noted \
  || t_fail cli/member/out-noted "$(grep -E '^server|noted' "$T/st.out")"
# alive and out, server 2 still holds /m1's old 3000017 bytes: stat and ls
# must size it from the copies (it refuses the mirrored file's PSTAT)
if "$DDIO" stat /m1 >"$T/ns.out" 2>&1 && grep -qx "size: 2500003" "$T/ns.out" \
   && "$DDIO" ls -l / >>"$T/ns.out" 2>&1 && grep -q " 2500003 .* m1$" "$T/ns.out" \
   && grep -q " 1700001 .* m2$" "$T/ns.out"; then
  t_pass cli/member/out-stale-size-not-shown
else t_fail cli/member/out-stale-size-not-shown "$(cat "$T/ns.out"; ls -l "$ROOT/s2")"; fi

# ---- in again: resynced from the notes, every byte back, every copy equal ----------------
if "$DDIO" member in 2 >"$T/i.out" 2>"$T/i.err" && grep -qx "epoch 3" "$T/i.out" \
   && grep -qx "server 2 ${addr[2]} in" "$T/i.out" && grep -q '^/m1: mirror: resynced, ' "$T/i.out" \
   && grep -q '^/m2: mirror: resynced, ' "$T/i.out" \
   && grep -q '^resync: server 2: 3 file(s) resynced, 0 lost, 0 failed' "$T/i.out"; then
  t_pass cli/member/in-again-resynced
else t_fail cli/member/in-again-resynced "$(cat "$T/i.out" "$T/i.err")"; fi
# the namespace changed while it was out is server 2's too: the
# directories made there (mode and owner as on the others), the removed
# one and the renamed file's old name gone, its new name resynced
if grep -qx "/d1/d2: directory made while server 2 was out: made there" "$T/i.out" \
   && [ "$(stat -c %a "$ROOT/s2/d1/d2")" = 750 ] && [ ! -e "$ROOT/s2/dgone" ] \
   && grep -qx "/dgone: directory removed while server 2 was out: removed there" "$T/i.out" \
   && [ ! -e "$ROOT/s2/mv1" ] && grep -q '^/d1/mv2: mirror: resynced, ' "$T/i.out" \
   && "$DDIO" cp ddio:/d1/mv2 "$T/mv2" >/dev/null 2>"$T/g.out" && same "$T/src" "$T/mv2" \
   && same "$ROOT/s0/d1/mv2" "$ROOT/s1/.ddio/copy1/d1/mv2" \
   && same "$ROOT/s2/d1/mv2" "$ROOT/s0/.ddio/copy1/d1/mv2"; then
  t_pass cli/member/namespace-while-out
else t_fail cli/member/namespace-while-out "$(cat "$T/i.out" "$T/g.out" "$T/why"; ls -lR "$ROOT/s2")"; fi
# the file deleted while it was out: its copy there removed, so it does
# not come back with server 2 (stat and ls of every server)
if grep -qx "/gone1: deleted while server 2 was out: its copy removed" "$T/i.out" \
   && [ ! -e "$ROOT/s2/gone1" ] && ! "$DDIO" stat /gone1 >"$T/g.out" 2>&1 \
   && grep -q "no such file" "$T/g.out" && "$DDIO" ls / >"$T/g.out" 2>&1 && ! grep -q gone1 "$T/g.out"; then
  t_pass cli/member/deleted-while-out
else t_fail cli/member/deleted-while-out "$(cat "$T/i.out" "$T/g.out"; ls "$ROOT/s2")"; fi
"$DDIO" status -i 0 >"$T/st.out" 2>&1
grep -q "noted for members out" "$T/st.out" && t_fail cli/member/notes-cleared "$(grep noted "$T/st.out")" \
  || t_pass cli/member/notes-cleared
if "$DDIO" cp ddio:/m1 "$T/back" >/dev/null 2>"$T/cp.err" && same "$T/src1" "$T/back" \
   && "$DDIO" cp ddio:/m2 "$T/back2" >/dev/null 2>"$T/cp.err" && same "$T/src2" "$T/back2"; then
  t_pass cli/member/reads-back
else t_fail cli/member/reads-back "$(cat "$T/cp.err" "$T/why")"; fi
# server 2's datafiles are its primaries' bytes again: each primary equals
# its copy, server 2's own and the copy it keeps of server 1's units
ok=1
for f in m1 m2; do for j in 0 1 2; do
  same "$ROOT/s$j/$f" "$ROOT/s$(( (j + 1) % 3 ))/.ddio/copy1/$f" || { ok=0; echo "$f $j: $(cat "$T/why")" >>"$T/agree"; }
done; done
[ $ok = 1 ] && t_pass cli/member/copies-agree || t_fail cli/member/copies-agree "$(cat "$T/agree")"

# ---- a file held open across a membership change: refused once, resent, right bytes ------
# (the mount's connection to server 1 carries the epoch it last heard; the
# servers move on twice; the read after is server 1's again, so the first
# thing it sends is the XFER)
counter() { "$DDIO" stats "$1" 2>/dev/null | awk '{ s += $3 } END { print s + 0 }'; }
if [ -n "${FUSE:-}" ] && t_have_fuse; then
  M=$T/mnt; mkdir -p "$M"
  "$FUSE" -f --servers="$DDIO_SERVERS" "$M" 2>"$T/fuse.log" & fusepid=$!
  for _ in $(seq 200); do mountpoint -q "$M" && break; sleep 0.05; done
  coproc HOLD { python3 -c '
import sys
f = open(sys.argv[1], "rb", buffering=0); src = open(sys.argv[2], "rb").read()
f.seek(1048576); ok = f.read(65536) == src[1048576:1114112]
print("ready", flush=True); sys.stdin.readline()
f.seek(1900000); ok = ok and f.read(65536) == src[1900000:1965536]
print("same" if ok else "differ", flush=True)' "$M/m1" "$T/src1"; }
  read -r -t 20 line <&"${HOLD[0]}"
  before=$(counter epoch_refused)
  "$DDIO" member out 2 >/dev/null 2>&1 && "$DDIO" member in 2 >"$T/i2.out" 2>&1
  echo go >&"${HOLD[1]}"
  read -r -t 60 got <&"${HOLD[0]}"
  after=$(counter epoch_refused)
  if [ "$line" = ready ] && [ "$got" = same ] && grep -qx "epoch 5" "$T/i2.out" && [ "$after" -gt "$before" ]; then
    t_pass cli/member/held-file-resent
  else t_fail cli/member/held-file-resent "'$line' '$got', epoch_refused $before -> $after: $(cat "$T/i2.out" "$T/fuse.log" | head -c 400)"; fi
  fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M"; wait "$fusepid" 2>/dev/null
else echo "SKIP: cli/member/held-file-resent (no FUSE)"; fi

# ---- proposers racing: every change made once, every server the same record -------------
# (two clients at once declare two servers out (--force: the second out
# is refused otherwise, see below), then in again: four epochs, whatever the
# order; each server's record file then holds the same bytes; the last
# server in cannot be declared out)
race() {
  local rc=0 f=""; [ "$1" = out ] && f=--force
  "$DDIO" member "$1" $f 0 >"$T/r0.out" 2>&1 & local a=$!
  "$DDIO" member "$1" $f 1 >"$T/r1.out" 2>&1 & local b=$!
  wait $a || rc=1; wait $b || rc=1
  return $rc
}
e0=$(awk '/^epoch/ { print $2 }' "$T/i2.out" 2>/dev/null); [ -n "$e0" ] || { "$DDIO" member >"$T/m.out"; e0=$(awk '/^epoch/ { print $2 }' "$T/m.out"); }
if race out && member_is "epoch $((e0 + 2))" && grep -qx "server 0 ${addr[0]} out" "$T/m.out" \
   && grep -qx "server 1 ${addr[1]} out" "$T/m.out" \
   && ! "$DDIO" member out --force 2 >"$T/last.out" 2>&1 && grep -q "is the last one in" "$T/last.out" \
   && race in && member_is "epoch $((e0 + 4))" \
   && [ "$(grep -c ' in$' "$T/m.out")" = 3 ] && cmp "$ROOT/s0/.ddio/member" "$ROOT/s1/.ddio/member" \
   && cmp "$ROOT/s0/.ddio/member" "$ROOT/s2/.ddio/member"; then
  t_pass cli/member/racing-proposers
else t_fail cli/member/racing-proposers "from epoch $e0: $(cat "$T/r0.out" "$T/r1.out" "$T/m.out" | head -c 500)"; fi

# ---- a write between two resync rounds: noted again, resynced again ---------------------
# (the resync pauses after a round's copies; /m1 is written meanwhile, server
# 2 still out: its new note must survive the round's clearing, which is done
# under each file's fence)
all_agree() {
  local f j ok=0
  for f in "$@"; do for j in 0 1 2; do
    same "$ROOT/s$j/$f" "$ROOT/s$(( (j + 1) % 3 ))/.ddio/copy1/$f" || { ok=1; echo "$f $j: $(cat "$T/why")"; }
  done; done
  return $ok
}
# pause_at WHERE: wait for the resync to reach WHERE (DDIO_TEST_RESYNC_PAUSE)
pause_at() { for _ in $(seq 300); do [ -e "${2:-$T/pause}/$1.ready" ] && return 0; sleep 0.1; done; return 1; }
mkdir -p "$T/pause"
head -c 2200001 /dev/urandom > "$T/src3"; head -c 2100003 /dev/urandom > "$T/src4"
"$DDIO" member out 2 >"$T/o3.out" 2>&1 && "$DDIO" cp "$T/src3" ddio:/m1 >/dev/null 2>>"$T/o3.out" \
  || t_fail cli/member/resync-between-rounds "setup: $(cat "$T/o3.out")"
DDIO_TEST_RESYNC_PAUSE=copied:$T/pause "$DDIO" member in 2 >"$T/i3.out" 2>&1 & inpid=$!
if pause_at copied && "$DDIO" cp "$T/src4" ddio:/m1 >/dev/null 2>"$T/cp.err"; then wrote=1; else wrote=0; fi
touch "$T/pause/copied.go"; wait $inpid; rc=$?
if [ $wrote = 1 ] && [ $rc = 0 ] && grep -qx "server 2 ${addr[2]} in" "$T/i3.out" \
   && [ "$(grep -c '^/m1: mirror: resynced, ' "$T/i3.out")" = 2 ] \
   && "$DDIO" cp ddio:/m1 "$T/back4" >/dev/null 2>>"$T/cp.err" && same "$T/src4" "$T/back4" \
   && all_agree m1 >"$T/agree3"; then
  t_pass cli/member/resync-between-rounds
else t_fail cli/member/resync-between-rounds "wrote $wrote, exit $rc: $(cat "$T/i3.out" "$T/cp.err" "$T/agree3" 2>/dev/null | head -c 600)"; fi

# ---- a write while server 2 is being declared in: held back, then it reaches server 2 too --
# (the resync pauses after its last gathering, before the epoch that says
# server 2 is in; a copy into /m1 meanwhile is refused by the frozen servers
# and sent again; once in, its handle, which has server 2 out from the
# older epoch, is refused for that view and takes server 2 back)
head -c 1900007 /dev/urandom > "$T/src6"; head -c 2300011 /dev/urandom > "$T/src7"
"$DDIO" member out 2 >"$T/o6.out" 2>&1 && "$DDIO" cp "$T/src6" ddio:/m1 >/dev/null 2>>"$T/o6.out" \
  || t_fail cli/member/write-while-declared-in "setup: $(cat "$T/o6.out")"
DDIO_TEST_RESYNC_PAUSE=frozen:$T/pause "$DDIO" member in 2 >"$T/i6.out" 2>&1 & inpid=$!
if pause_at frozen; then
  DDIO_RECOVER_TIMEOUT=30 "$DDIO" cp "$T/src7" ddio:/m1 >/dev/null 2>"$T/cp7.err" & cppid=$!
  sleep 1.5
  kill -0 $cppid 2>/dev/null && held=1 || held=0
else held=x; cppid=""; fi
touch "$T/pause/frozen.go"; wait $inpid; rc=$?
crc=1; [ -n "$cppid" ] && { wait $cppid; crc=$?; }
"$DDIO" cp ddio:/m1 "$T/back7" >/dev/null 2>>"$T/cp7.err"; same "$T/src7" "$T/back7"; bytes=$?
all_agree m1 >"$T/agree7"; agree=$?
if [ "$held" = 1 ] && [ $rc = 0 ] && [ $crc = 0 ] && grep -qx "server 2 ${addr[2]} in" "$T/i6.out" \
   && [ $bytes = 0 ] && [ $agree = 0 ]; then
  t_pass cli/member/write-while-declared-in
else t_fail cli/member/write-while-declared-in "held $held, in $rc, cp $crc, bytes $bytes, agree $agree: $(cat "$T/agree7" "$T/cp7.err" "$T/i6.out" 2>/dev/null | head -c 700)"; fi

# ---- a file held open for writing while out: no resync until it is closed ----------------
# (a handle opened with server 2 out never writes to it; a resync that let
# server 2 in under it would leave its datafile stale)
if [ -n "${FUSE:-}" ] && t_have_fuse; then
  M=$T/mnt2; mkdir -p "$M"
  "$FUSE" -f --servers="$DDIO_SERVERS" "$M" 2>"$T/fuse2.log" & fusepid=$!
  for _ in $(seq 200); do mountpoint -q "$M" && break; sleep 0.05; done
  "$DDIO" member out 2 >"$T/o4.out" 2>&1 || t_fail cli/member/held-writer-blocks-resync "out: $(cat "$T/o4.out")"
  head -c 2000000 /dev/urandom > "$T/patch"
  python3 -c 'import sys; a = open(sys.argv[1], "rb").read(); p = open(sys.argv[2], "rb").read()
open(sys.argv[3], "wb").write(p + a[len(p):])' "$T/src7" "$T/patch" "$T/src5"
  # (its first byte written at once: the mount asks the servers at a
  # handle's first write, not at its open)
  coproc HOLDW { python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
p = open(sys.argv[2], "rb").read(); os.pwrite(fd, p[:1], 0)
print("ready", flush=True); sys.stdin.readline()
n = os.pwrite(fd, p, 0); os.close(fd)
print("wrote" if n == len(p) else "short", flush=True)' "$M/m1" "$T/patch"; }
  read -r -t 20 line <&"${HOLDW[0]}"
  "$DDIO" member in 2 >"$T/i4.out" 2>&1; rc1=$?
  member_is "epoch $(awk '/^epoch/ { print $2 }' "$T/o4.out")"; still_out=$?
  echo go >&"${HOLDW[1]}"
  read -r -t 60 got <&"${HOLDW[0]}"
  "$DDIO" member in 2 >"$T/i5.out" 2>&1; rc2=$?
  if [ "$line" = ready ] && [ $rc1 != 0 ] && grep -q "/m1: .*is open" "$T/i4.out" && [ $still_out = 0 ] \
     && grep -qx "server 2 ${addr[2]} out" "$T/m.out" && [ "$got" = wrote ] && [ $rc2 = 0 ] \
     && grep -qx "server 2 ${addr[2]} in" "$T/i5.out" \
     && "$DDIO" cp ddio:/m1 "$T/back5" >/dev/null 2>"$T/cp.err" && same "$T/src5" "$T/back5" \
     && all_agree m1 >"$T/agree5"; then
    t_pass cli/member/held-writer-blocks-resync
  else t_fail cli/member/held-writer-blocks-resync "'$line' $rc1 $still_out '$got' $rc2: $(cat "$T/i4.out" "$T/i5.out" "$T/m.out" "$T/cp.err" "$T/agree5" 2>/dev/null | head -c 900)"; fi
  # opened while server 2 is being declared in (the resync paused after its
  # last gathering): the open is held back by the frozen servers, then has
  # server 2 out from the older epoch; its write is refused for that view,
  # takes server 2 back, and reaches it
  mkdir -p "$T/pause2"
  head -c 1500000 /dev/urandom > "$T/patch2"
  python3 -c 'import sys; a = open(sys.argv[1], "rb").read(); p = open(sys.argv[2], "rb").read()
open(sys.argv[3], "wb").write(p + a[len(p):])' "$T/src5" "$T/patch2" "$T/src8"
  "$DDIO" member out 2 >"$T/o8.out" 2>&1 || t_fail cli/member/open-while-declared-in "out: $(cat "$T/o8.out")"
  DDIO_TEST_RESYNC_PAUSE=frozen:$T/pause2 "$DDIO" member in 2 >"$T/i8.out" 2>&1 & inpid=$!
  line=""; got=""
  if pause_at frozen "$T/pause2"; then
    coproc HOLD8 { python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
print("ready", flush=True); sys.stdin.readline()
p = open(sys.argv[2], "rb").read(); n = os.pwrite(fd, p, 0); os.close(fd)
print("wrote" if n == len(p) else "short", flush=True)' "$M/m1" "$T/patch2"; }
    sleep 1.5
  fi
  touch "$T/pause2/frozen.go"; wait $inpid; rc=$?
  read -r -t 60 line <&"${HOLD8[0]}"
  echo go >&"${HOLD8[1]}"
  read -r -t 60 got <&"${HOLD8[0]}"
  "$DDIO" cp ddio:/m1 "$T/back8" >/dev/null 2>"$T/cp8.err"; same "$T/src8" "$T/back8"; bytes=$?
  all_agree m1 >"$T/agree8"; agree=$?
  if [ $rc = 0 ] && grep -qx "server 2 ${addr[2]} in" "$T/i8.out" && [ "$line" = ready ] \
     && [ "$got" = wrote ] && [ $bytes = 0 ] && [ $agree = 0 ]; then
    t_pass cli/member/open-while-declared-in
  else t_fail cli/member/open-while-declared-in "in $rc, '$line' '$got', bytes $bytes, agree $agree: $(cat "$T/i8.out" "$T/cp8.err" "$T/agree8" 2>/dev/null | head -c 700)"; fi
  fusermount3 -u "$M" 2>/dev/null || fusermount3 -uz "$M"; wait "$fusepid" 2>/dev/null
else echo "SKIP: cli/member/held-writer-blocks-resync (no FUSE)"
  echo "SKIP: cli/member/open-while-declared-in (no FUSE)"; fi

# ---- two of three down: no majority, nothing changes ------------------------------------
"$DDIO" member >"$T/m.out" 2>&1; epoch=$(awk '/^epoch/ { print $2 }' "$T/m.out")
kill -KILL $restarted; restarted=""
kill -KILL "$(pid_of 1)"; sleep 0.2
t_expect_fail -x 1 -2 cli/member/minority-refused "no majority of the 3 servers agreed to epoch $((epoch + 1))" \
  "$DDIO" member out 1
if member_is "epoch $epoch" && grep -qx "server 1 ${addr[1]} in (unreachable)" "$T/m.out"; then
  t_pass cli/member/minority-changed-nothing
else t_fail cli/member/minority-changed-nothing "$(cat "$T/m.out" "$T/m.err")"; fi
