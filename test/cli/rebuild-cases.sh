#!/usr/bin/env bash
# ddio rebuild onto a replacement (run-cli-tests.sh runs it inside
# `ddio-run -s 3 --server-opt --redundancy=mirror`, DDIO_SERVERS and
# DDIO_SECRET_FILE set): files copied in, server K SIGKILLed and its root
# deleted, a fresh `ddio-server --replacement` started at its address, then
# `ddio rebuild --server K`: the replacement's datafiles compared byte for
# byte with the copies they mirror, then another server killed and every
# file read back and compared with the original. Also: a rebuild cut off
# (timeout, small --rate) and run again; a `none` file reported lost.
#   rebuild-cases.sh mirror    the whole story (3 servers, mirror)
#   rebuild-cases.sh none      servers without copies: a file reported lost
#   rebuild-cases.sh disks     mirror, 2 disks per server, 64 KiB blocks
#                              (ddio-run -d 2 -b 65536): one rebuild, every
#                              disk's datafiles compared, the files read back
#   rebuild-cases.sh mirror3   mirror:3: the replacement holds every view
#   rebuild-cases.sh fence     an open of a file a rebuild has fenced waits
#                              for the fence (ec:2+1 files)
#   rebuild-cases.sh watch     ddio watch (servers with --redundancy mirror,
#                              and an ec:2+1 file): a lost server declared
#                              out, its replacement rebuilt and declared in
#   rebuild-cases.sh ec|ec42   ec:2+1 (3 servers) or ec:4+2 (6) files (ddio
#                              cp --redundancy): rebuilt by decoding, every
#                              group's parity checked (EC_VERIFY), then M
#                              other servers lost and
#                              every byte read back
# Needs: DDIO, SERVER (ddio-server), T (scratch dir), ROOT (ddio-run's
# --root: server i under ROOT/s<i>, disk d under ROOT/s<i>/d<d> with 2
# disks). Prints "PASS: name" / "FAIL: name: why".
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
T_TMP=$T
mode=${1:-mirror}
red=mirror; copies=2; disks=("")
case "$mode" in
  none) red= ;;
  mirror3) red=mirror:3; copies=3 ;;
  watch) red=mirror ;;
  disks) disks=(d0 d1) ;;
  ec|ec42|fence) red= ;;
esac
# the erasure-coded shapes: ec:2+1 on 3 servers, ec:4+2 on 6
K=2; M=1; [ "$mode" = ec42 ] && { K=4; M=2; }
EP=cli/rebuild/ec; [ "$mode" = ec42 ] && EP=cli/rebuild/ec42
IFS=, read -r -a addr <<<"$DDIO_SERVERS"
N=${#addr[@]}
same() { cmp "$1" "$2" >"$T/why" 2>&1; }
# the pid of the server listening on ADDR's port (ddio-run's or ours)
srv_pid() {
  local port=${1##*:}
  ss -ltnpH "sport = :$port" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1
}
# kill server K with SIGKILL and delete its root
lose() {
  local p; p=$(srv_pid "${addr[$1]}")
  [ -n "$p" ] && kill -9 "$p"
  while [ -n "$p" ] && kill -0 "$p" 2>/dev/null; do sleep 0.05; done
  t_hold_port "${addr[$1]}"     # no other suite's server takes it meanwhile
  rm -rf "$ROOT/s$1"; mkdir -p "$ROOT/s$1"
  local d; for d in "${disks[@]}"; do mkdir -p "$ROOT/s$1/$d"; done
}
# a fresh server on K's address and an empty root (--replacement)
replace() {
  local d roots=()
  for d in "${disks[@]}"; do roots+=(--root "$ROOT/s$1${d:+/$d}"); done
  [ ${#disks[@]} -gt 1 ] && roots+=(--block-size 65536)
  t_release_port "${addr[$1]}"
  "$SERVER" --listen "${addr[$1]}" "${roots[@]}" --secret-file "$DDIO_SECRET_FILE" \
    ${red:+--redundancy $red} --replacement ${DDIO_TRANSPORT:+--transport "$DDIO_TRANSPORT"} \
    2>>"$T/repl$1.log" &
  echo $! >>"$T/pids"
  local t=0
  until [ -n "$(srv_pid "${addr[$1]}")" ]; do
    sleep 0.05; t=$((t + 1)); [ $t -lt 200 ] || { t_fail cli/rebuild/setup "replacement $1 did not start"; return 1; }
  done
}
cleanup() { [ -f "$T/pids" ] && while read -r p; do kill "$p" 2>/dev/null; done <"$T/pids"; }
trap cleanup EXIT
# every datafile server K holds (on each disk) equals the one it mirrors:
# its primary (index K) with copy c on K+c, its copy c (of index K-c)
# with K-c's primary
compare_views() {
  local k=$1 f=$2 c d
  for d in "${disks[@]}"; do
    for ((c = 1; c < copies; c++)); do
      local prev=$(( (k + N - c) % N )) next=$(( (k + c) % N )) s="${d:+/$d}"
      same "$ROOT/s$k$s/$f" "$ROOT/s$next$s/.ddio/copy$c/$f" \
        && same "$ROOT/s$k$s/.ddio/copy$c/$f" "$ROOT/s$prev$s/$f" || return 1
    done
  done
}

if [ "$mode" = watch ]; then
  # ---- ddio watch does the repairs: server 1 lost, declared out after the
  # grace; a replacement started at its address, rebuilt onto and, once
  # rebuilt, declared in by its resync; then server 2 lost: a mirrored and
  # an ec:2+1 file read back byte for byte ----
  [ -x "${EC_VERIFY:-}" ] || { t_fail cli/rebuild/watch-setup "EC_VERIFY '${EC_VERIFY:-}' is not a program"; exit 1; }
  head -c 5000017 /dev/urandom >"$T/m"
  head -c 3000007 /dev/urandom >"$T/e"
  "$DDIO" cp "$T/m" ddio:/m >/dev/null && "$DDIO" cp -r ec:2+1 -u 65536 "$T/e" ddio:/e >/dev/null \
    || t_fail cli/rebuild/watch-setup "cp"
  # (--fold-every 0: its fold would wait out the recovery time for the
  # server lost below before the repairs this case is about; a call in
  # flight to the server when it dies waits the recovery time too: 1 s)
  DDIO_RECOVER_TIMEOUT=1 "$DDIO" watch --grace 1 --interval 0.2 --fold-every 0 \
    >"$T/w.out" 2>"$T/w.err" &
  echo $! >>"$T/pids"
  # until: wait up to 30 s for the watch to have said $1
  until_said() {
    local t
    for t in $(seq 150); do grep -q "$1" "$T/w.out" && return 0; sleep 0.2; done
    return 1
  }
  lose 1
  until_said "server 1 .* unreachable for .* declared out" \
    && "$DDIO" member | grep -qx "server 1 .* out (unreachable)" \
    && t_pass cli/rebuild/watch-declared-out \
    || t_fail cli/rebuild/watch-declared-out "$(cat "$T/w.out" "$T/w.err"; "$DDIO" member)"
  replace 1 || exit 1
  until_said "server 1 .* is a replacement: ddio rebuild --server 1" \
    && until_said "^rebuild: server 1: 2 file(s) rebuilt, 0 already done, 0 lost, 0 failed" \
    && until_said "server 1 .* out and reachable for .* ddio member in 1" \
    && for _ in $(seq 150); do "$DDIO" member | grep -q "out" || break; sleep 0.2; done \
    && ! "$DDIO" member | grep -q "out" \
    && "$EC_VERIFY" 2 1 65536 e "$ROOT/s0" "$ROOT/s1" "$ROOT/s2" >/dev/null \
    && t_pass cli/rebuild/watch-rebuilt-and-in \
    || t_fail cli/rebuild/watch-rebuilt-and-in "$(cat "$T/w.out" "$T/w.err" | tail -c 1500; "$DDIO" member)"
  lose 2
  ok=1
  for f in m e; do
    DDIO_RECOVER_TIMEOUT=1 "$DDIO" cp "ddio:/$f" "$T/out.$f" >/dev/null 2>"$T/err" && same "$T/$f" "$T/out.$f" \
      || { ok=0; echo "$f: $(cat "$T/err" "$T/why")" >>"$T/reads"; }
  done
  [ $ok = 1 ] && t_pass cli/rebuild/watch-second-loss || t_fail cli/rebuild/watch-second-loss "$(cat "$T/reads")"
  exit 0
fi

if [ "$mode" = fence ]; then
  # ---- an open waits out a rebuild's fence: three ec:2+1 files, server 1
  # replaced, a rebuild paced at 0.5 MB/s (the file it copies fenced for
  # seconds, on every server); a cp of that file (its path from the
  # replacement's unbuilt mark) waits, the servers answering EBUSY, instead
  # of failing; the rebuild killed, its fences end, and the cp goes on (to
  # the refusal of a file the replacement has not finished: its size); a
  # second rebuild finishes, and every file reads back right ----
  for f in a b c; do
    head -c 3000007 /dev/urandom >"$T/$f"
    "$DDIO" cp -r ec:2+1 -u 65536 "$T/$f" "ddio:/$f" >/dev/null || t_fail cli/rebuild/fence-setup "cp $f"
  done
  lose 1; replace 1 || exit 1
  "$DDIO" rebuild --server 1 --rate 0.5 >"$T/slow.out" 2>"$T/slow.err" &
  rb=$!
  for _ in $(seq 100); do [ -n "$(ls "$ROOT/s1/.ddio/unbuilt" 2>/dev/null)" ] && break; sleep 0.1; done
  f=$(cat "$ROOT/s1/.ddio/unbuilt"/* 2>/dev/null | head -1)
  "$DDIO" cp "ddio:/$f" "$T/out" >/dev/null 2>"$T/err" &
  cpid=$!
  sleep 1.5
  kill -0 "$cpid" 2>/dev/null && waited=1 || waited=0
  kill -KILL "$rb"; wait "$rb" 2>/dev/null
  wait "$cpid"
  [ -n "$f" ] && [ $waited = 1 ] && ! grep -q "being rebuilt" "$T/err" \
    && grep -q "not rebuilt on this replacement server yet" "$T/err" \
    && t_pass cli/rebuild/fence-open-waits \
    || t_fail cli/rebuild/fence-open-waits "file '$f', waited $waited: $(head -c 600 "$T/err")"
  rc=0; "$DDIO" rebuild --server 1 >"$T/r.out" 2>"$T/r.err" || rc=$?
  ok=1; for f in a b c; do "$DDIO" cp "ddio:/$f" "$T/out.$f" >/dev/null 2>>"$T/r.err" && same "$T/$f" "$T/out.$f" || ok=0; done
  [ $rc = 0 ] && [ $ok = 1 ] && t_pass cli/rebuild/fence-finished \
    || t_fail cli/rebuild/fence-finished "exit $rc: $(cat "$T/r.out" "$T/r.err" | head -c 600)"
  exit 0
fi

if [ "$mode" = none ]; then
  # ---- redundancy none: the lost server's stripes are reported lost, not faked ----
  head -c 5000017 /dev/urandom >"$T/n"
  "$DDIO" cp "$T/n" ddio:/n >/dev/null || t_fail cli/rebuild/setup "cp n"
  # a replacement started on roots that are not empty (another server's)
  # takes no id: the files there would no longer open
  lose 1; cp -a "$ROOT/s0/." "$ROOT/s1/"; replace 1 || exit 1
  rc=0; "$DDIO" rebuild --server 1 >"$T/n.out" 2>"$T/n.err" || rc=$?
  [ $rc = 1 ] && grep -q 'roots are not empty' "$T/n.err" && t_pass cli/rebuild/not-empty-refused \
    || t_fail cli/rebuild/not-empty-refused "exit $rc: $(cat "$T/n.out" "$T/n.err")"
  lose 1; replace 1 || exit 1
  rc=0; "$DDIO" rebuild --server 1 >"$T/n.out" 2>"$T/n.err" || rc=$?
  [ $rc = 1 ] && grep -qx '/n: none: lost (its stripe on server 1 had no copy)' "$T/n.out" \
    && grep -q '^rebuild: server 1: 0 file(s) rebuilt, 0 already done, 1 lost, 0 failed' "$T/n.out" \
    && [ ! -e "$ROOT/s1/n" ] && t_pass cli/rebuild/none-lost \
    || t_fail cli/rebuild/none-lost "exit $rc: $(cat "$T/n.out" "$T/n.err"; ls "$ROOT/s1")"
  exit 0
fi

if [ "$mode" = disks ] || [ "$mode" = mirror3 ]; then
  # ---- one loss, one rebuild: every view on every disk, the bytes read back ----
  head -c 5000017 /dev/urandom >"$T/big"
  head -c 777 /dev/urandom >"$T/small"
  "$DDIO" mkdir /d || t_fail cli/rebuild/setup "mkdir"
  "$DDIO" cp "$T/big" ddio:/d/big >/dev/null && "$DDIO" cp "$T/small" ddio:/small >/dev/null \
    || t_fail cli/rebuild/setup "cp"
  "$DDIO" stat /d/big | grep -q "$red" || t_fail cli/rebuild/setup "not $red: $("$DDIO" stat /d/big)"
  lose 1; replace 1 || exit 1
  rc=0; "$DDIO" rebuild --server 1 >"$T/m.out" 2>"$T/m.err" || rc=$?
  [ $rc = 0 ] && grep -q '^rebuild: server 1: 2 file(s) rebuilt, 0 already done, 0 lost, 0 failed' "$T/m.out" \
    && t_pass "cli/rebuild/$mode-rebuilt" || t_fail "cli/rebuild/$mode-rebuilt" "exit $rc: $(cat "$T/m.out" "$T/m.err" | head -c 600)"
  ok=1
  for f in d/big small; do compare_views 1 "$f" || { ok=0; echo "$f: $(cat "$T/why")" >>"$T/views"; }; done
  [ $ok = 1 ] && t_pass "cli/rebuild/$mode-datafiles-equal" || t_fail "cli/rebuild/$mode-datafiles-equal" "$(cat "$T/views")"
  "$DDIO" cp ddio:/d/big "$T/big.back" >/dev/null 2>"$T/e" && same "$T/big" "$T/big.back" \
    && "$DDIO" cp ddio:/small "$T/small.back" >/dev/null 2>>"$T/e" && same "$T/small" "$T/small.back" \
    && t_pass "cli/rebuild/$mode-reads" || t_fail "cli/rebuild/$mode-reads" "$(cat "$T/e" "$T/why")"
  exit 0
fi

if [ "$mode" = ec ] || [ "$mode" = ec42 ]; then
  [ -x "${EC_VERIFY:-}" ] || { t_fail $EP-setup "EC_VERIFY '${EC_VERIFY:-}' is not a program"; exit 1; }
  [ "$N" = $((K + M)) ] || { t_fail $EP-setup "ec:$K+$M needs $((K + M)) servers, not $N"; exit 1; }
  # ---- ec:K+M: the lost server's units decoded from the others and
  # written to the replacement with the parity it holds (DESIGN.md 6.4),
  # then M different servers lost: nothing lost ----
  roots=(); for ((i = 0; i < N; i++)); do roots+=("$ROOT/s$i"); done
  head -c 5000017 /dev/urandom >"$T/big"
  head -c 777 /dev/urandom >"$T/small"
  { head -c 1000000 /dev/urandom; head -c 3000000 /dev/zero; head -c 12345 /dev/urandom; } >"$T/holey"
  for f in big small holey; do
    "$DDIO" cp -r ec:$K+$M -u 65536 "$T/$f" "ddio:/$f" >/dev/null || t_fail $EP-setup "cp $f"
  done
  "$DDIO" stat /big | grep -qx "redundancy: ec:$K+$M" || t_fail $EP-setup "not ec:$K+$M: $("$DDIO" stat /big)"
  lose 1; replace 1 || exit 1
  rc=0; "$DDIO" rebuild --server 1 >"$T/e.out" 2>"$T/e.err" || rc=$?
  [ $rc = 0 ] && grep -q '^rebuild: server 1: 3 file(s) rebuilt, 0 already done, 0 lost, 0 failed' "$T/e.out" \
    && [ "$(grep -c ": ec:$K+$M: rebuilt, " "$T/e.out")" = 3 ] \
    && t_pass $EP-rebuilt || t_fail $EP-rebuilt "exit $rc: $(cat "$T/e.out" "$T/e.err" | head -c 600)"
  # the replacement's data and parity: every group's parity is its data's
  ok=1; : >"$T/ecv"
  for f in big small holey; do
    "$EC_VERIFY" $K $M 65536 "$f" "${roots[@]}" >"$T/ecv1" 2>&1 \
      && grep -qE "^ec_verify: $f: [1-9][0-9]* groups of ec:$K\+$M, 0 parity units wrong$" "$T/ecv1" || ok=0
    cat "$T/ecv1" >>"$T/ecv"
  done
  [ $ok = 1 ] && t_pass $EP-parity || t_fail $EP-parity "$(head -c 600 "$T/ecv")"
  # M other servers lost now (2; ec:4+2 also 4): their units decoded from
  # the others, the replacement among them
  lose 2; [ $M = 2 ] && lose 4
  ok=1; : >"$T/reads"
  for f in big small holey; do
    DDIO_RECOVER_TIMEOUT=1 "$DDIO" cp "ddio:/$f" "$T/out.$f" >/dev/null 2>"$T/e" && same "$T/$f" "$T/out.$f" \
      || { ok=0; echo "$f: $(cat "$T/e" "$T/why")" >>"$T/reads"; }
  done
  [ $ok = 1 ] && t_pass $EP-second-loss || t_fail $EP-second-loss "$(head -c 600 "$T/reads")"
  exit 0
fi

# ---- files in: several stripes, a nested directory, an odd size, a hole ----
head -c 5000017 /dev/urandom >"$T/big"
head -c 777 /dev/urandom >"$T/small"
{ head -c 1000000 /dev/urandom; head -c 3000000 /dev/zero; head -c 12345 /dev/urandom; } >"$T/holey"
"$DDIO" mkdir /d && "$DDIO" mkdir /d/e || t_fail cli/rebuild/setup "mkdir"
for f in big small holey; do "$DDIO" cp "$T/$f" "ddio:/d/e/$f" >/dev/null || t_fail cli/rebuild/setup "cp $f"; done
"$DDIO" cp "$T/big" ddio:/top >/dev/null || t_fail cli/rebuild/setup "cp top"
files="d/e/big d/e/small d/e/holey top"
"$DDIO" chmod 600 /d/e/small 2>"$T/chmod.err" && "$DDIO" chmod 750 /d/e 2>>"$T/chmod.err" \
  || t_fail cli/rebuild/setup "chmod: $(cat "$T/chmod.err")"

# ---- a replacement before its rebuild refuses, never zeros ----
lose 1; replace 1 || exit 1
rc=0; "$DDIO" cp ddio:/top "$T/top.early" >"$T/o" 2>"$T/e" || rc=$?
[ $rc != 0 ] && ! { [ -f "$T/top.early" ] && cmp -s "$T/top.early" "$T/big" ; } && grep -q "rebuild" "$T/e" \
  && t_pass cli/rebuild/before-refuses || t_fail cli/rebuild/before-refuses "exit $rc: $(cat "$T/e")"
# ddio status shows where a rebuild stands (the replacement's lines)
status_says() { "$DDIO" status -i 0 >"$T/st" 2>&1; grep -qF "  rebuild: $1" "$T/st"; }
status_says 'a replacement waiting for `ddio rebuild`' && t_pass cli/rebuild/status-waiting \
  || t_fail cli/rebuild/status-waiting "$(grep -A3 "${addr[1]}" "$T/st")"

# ---- an interrupted rebuild: files it finished stay done, the one it was
# copying is never read short meanwhile, a second run finishes ----
timeout -s KILL 3 "$DDIO" rebuild --server 1 --rate 4 >"$T/r1.out" 2>"$T/r1.err"
n1=$(grep -c ': mirror: rebuilt, ' "$T/r1.out")
ls "$ROOT/s1/.ddio/unbuilt" >"$T/marks" 2>/dev/null
# the file it was copying (its mark holds the path; which one depends on
# the machine's speed): its size, which needs every server, is refused by
# the replacement, so cp fails rather than come out short (the read path
# takes that part's size from the copy)
mid=$(cat "$ROOT/s1/.ddio/unbuilt/"* 2>/dev/null | head -c 300)
rc=0; "$DDIO" cp "ddio:/${mid:-top}" "$T/top.mid" >/dev/null 2>"$T/e" || rc=$?
# (nothing failed before the kill: a file's end needs no size from the replacement)
[ "$n1" -ge 1 ] && [ "$n1" -lt 4 ] && [ -s "$T/marks" ] && ! grep -q '^ddio: rebuild:' "$T/r1.err" && [ $rc = 1 ] && grep -q 'not rebuilt on this replacement server yet' "$T/e" \
  && t_pass cli/rebuild/interrupted-not-short \
  || t_fail cli/rebuild/interrupted-not-short "$n1 done, marks $(wc -l <"$T/marks"), cp exit $rc: $(cat "$T/e" "$T/r1.out"; grep '^ddio:' "$T/r1.err" | head -c 400)"
status_says "$n1 file(s) rebuilt, 1 begun and not done (being copied, or cut off" \
  && t_pass cli/rebuild/status-cut-off || t_fail cli/rebuild/status-cut-off "$(grep "rebuild:" "$T/st"; ls "$ROOT/s1/.ddio/unbuilt")"
# the bytes as the cut-off run last reported them: some, not all, and the
# time left at its rate
status_bytes() { grep -E "^  rebuild: [0-9.]+ (B|KiB|MiB) $1" "$T/st"; }
# (some: a file done; under 1 % when that was the small one)
status_bytes 'of [0-9.]+ MiB copied \(([0-9]|[1-9][0-9]) %\), [0-9.]+ (KiB|MiB)/s, about [0-9]+ s left$' >/dev/null \
  && ! status_bytes 'of' | grep -q '^  rebuild: 0 B ' && t_pass cli/rebuild/status-bytes-cut-off || t_fail cli/rebuild/status-bytes-cut-off "$(grep "rebuild:" "$T/st")"
rc=0; "$DDIO" rebuild --server 1 >"$T/r2.out" 2>"$T/r2.err" || rc=$?
status_says "4 file(s) rebuilt, 0 begun and not done" && t_pass cli/rebuild/status-done \
  || t_fail cli/rebuild/status-done "$(grep -A3 "${addr[1]}" "$T/st")"
# the second run's bytes, all of them: its own count of what it copied
b2=$(sed -n 's/^rebuild: server 1: .*; \([0-9]*\) bytes in .*/\1/p' "$T/r2.out")
"$DDIO" status --json -i 0 >"$T/st.json" 2>&1
json_done() {
  python3 - "$T/st.json" "${addr[1]}" "$b2" >"$T/why" 2>&1 <<'PY'
import json, sys
s = [x for x in json.load(open(sys.argv[1]))["servers"] if x["server"] == sys.argv[2]][0]
assert s["rebuild_bytes_done"] == s["rebuild_bytes_total"] == int(sys.argv[3]) > 0, s
PY
}
json_done && status_bytes 'copied, finished [0-9]+ s ago$' >/dev/null \
  && t_pass cli/rebuild/status-bytes-done || t_fail cli/rebuild/status-bytes-done "$(cat "$T/why"; grep "rebuild:" "$T/st")"
if [ $rc = 0 ] && [ "$(grep -c 'already rebuilt (skipped)' "$T/r2.out")" = "$n1" ] \
   && grep -qE "^rebuild: server 1: $((4 - n1)) file\(s\) rebuilt, $n1 already done, 0 lost, 0 failed" "$T/r2.out" \
   && [ -z "$(ls "$ROOT/s1/.ddio/unbuilt")" ]; then
  t_pass cli/rebuild/resumed
else t_fail cli/rebuild/resumed "exit $rc, $n1 done first: $(cat "$T/r1.out" "$T/r2.out" "$T/r2.err" | head -c 600)"; fi
# its default pace: a quarter of what the replacement measured of its
# disks at its start (STATS device_bps)
pace() {
  local line dev; line=$(grep '^rebuild: pacing at ' "$T/r2.out") || return 1
  dev=$("$DDIO" stats -s "${addr[1]}" device_bps | awk '{ print $3 }')
  python3 - "$line" "$dev" <<'PY'
import re, sys
m = re.match(r"rebuild: pacing at ([0-9.]+) MB/s, a quarter of the replacement's disks "
             r"\(([0-9.]+) MB/s, measured at its start\)", sys.argv[1])
assert m, sys.argv[1]
pace, disks, dev = float(m.group(1)), float(m.group(2)), int(sys.argv[2]) / 1e6
assert dev > 0 and abs(disks - dev) < 0.1 and abs(pace - disks / 4) < 0.1, (pace, disks, dev)
PY
}
pace >"$T/why" 2>&1 && t_pass cli/rebuild/default-pace-quarter-of-disks \
  || t_fail cli/rebuild/default-pace-quarter-of-disks "$(cat "$T/why"; grep pacing "$T/r2.out")"
# a third run finds everything done, and says so
rc=0; "$DDIO" rebuild --server 1 >"$T/r3.out" 2>"$T/r3.err" || rc=$?
[ $rc = 0 ] && [ "$(grep -c 'already rebuilt (skipped)' "$T/r3.out")" = 4 ] \
  && grep -q '^rebuild: server 1: 0 file(s) rebuilt, 4 already done, 0 lost, 0 failed' "$T/r3.out" \
  && t_pass cli/rebuild/skips-done || t_fail cli/rebuild/skips-done "exit $rc: $(cat "$T/r3.out" "$T/r3.err")"
ok=1
for f in $files; do compare_views 1 "$f" || { ok=0; echo "$f: $(cat "$T/why")" >>"$T/views"; }; done
[ $ok = 1 ] && t_pass cli/rebuild/datafiles-equal-copies || t_fail cli/rebuild/datafiles-equal-copies "$(cat "$T/views")"
# modes as the survivors have them (the entries' own, not a default)
m=$(stat -c '%a' "$ROOT/s1/d/e/small" "$ROOT/s1/d/e" | tr '\n' ' ')
[ "$m" = "600 750 " ] && t_pass cli/rebuild/modes || t_fail cli/rebuild/modes "$m"

# ---- every file read back whole through the servers ----
readback() {
  local ok=1 f b
  : >"$T/reads"
  for f in $files; do
    b=$(basename "$f"); [ "$f" = top ] && b=big
    "$DDIO" cp "ddio:/$f" "$T/out.$b" >/dev/null 2>"$T/e" && same "$T/$b" "$T/out.$b" \
      || { ok=0; echo "$f: $(cat "$T/e" "$T/why")" >>"$T/reads"; }
  done
  return $((1 - ok))
}
readback && t_pass cli/rebuild/reads-after || t_fail cli/rebuild/reads-after "$(head -c 600 "$T/reads")"

# ---- a second, different server lost and rebuilt from the first's
# replacement and the third: every byte still there. A job has /top open
# meanwhile (a slow scrub, on server 0's view for its first 10 s): /top is
# not copied under it (not fenced: reported, exit 1), the rest is; once
# the job is gone a second run copies /top ----
# (held once server 0 counts its open: a fixed sleep lost the race under
# the sanitizers)
opens() { "$DDIO" stats -s "${addr[0]}" opens 2>/dev/null | awk '{ print $3 + 0 }'; }
# (a rebuild cut off above left /top in doubt on the replacement: settled
# now, so the holder's scrub only reads)
"$DDIO" scrub /top >/dev/null 2>&1
o0=$(opens)
"$DDIO" scrub --rate 0.2 /top >/dev/null 2>&1 & holder=$!
opened() { [ "$(opens)" -gt "$o0" ]; }
t_wait_for 20 opened
lose 2; replace 2 || exit 1
rc=0; "$DDIO" rebuild --server 2 --rate 1000 >"$T/r4.out" 2>"$T/r4.err" || rc=$?
if [ $rc = 1 ] && grep -q '^rebuild: server 2: 3 file(s) rebuilt, 0 already done, 0 lost, 1 failed' "$T/r4.out" \
   && grep -q 'rebuild: /top: .*open on this server.*rerun ddio rebuild' "$T/r4.err"; then
  t_pass cli/rebuild/open-file-left
else t_fail cli/rebuild/open-file-left "exit $rc: $(cat "$T/r4.out" "$T/r4.err" | head -c 600)"; fi
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
rc=0; "$DDIO" rebuild --server 2 >"$T/r4.out" 2>"$T/r4.err" || rc=$?
[ $rc = 0 ] && grep -q '^rebuild: server 2: 1 file(s) rebuilt, 3 already done, 0 lost, 0 failed' "$T/r4.out" \
  && t_pass cli/rebuild/second-server || t_fail cli/rebuild/second-server "exit $rc: $(cat "$T/r4.out" "$T/r4.err" | head -c 600)"
ok=1; : >"$T/views"
for f in $files; do compare_views 2 "$f" || { ok=0; echo "$f: $(cat "$T/why")" >>"$T/views"; }; done
[ $ok = 1 ] && t_pass cli/rebuild/second-datafiles-equal || t_fail cli/rebuild/second-datafiles-equal "$(cat "$T/views")"
readback && t_pass cli/rebuild/second-loss-reads || t_fail cli/rebuild/second-loss-reads "$(head -c 600 "$T/reads")"

# ---- the third server lost and rebuilt: all three are replacements now ----
lose 0; replace 0 || exit 1
rc=0; "$DDIO" rebuild --server 0 --rate 1000 >"$T/r5.out" 2>"$T/r5.err" || rc=$?
[ $rc = 0 ] && grep -q '^rebuild: server 0: 4 file(s) rebuilt, 0 already done, 0 lost, 0 failed' "$T/r5.out" \
  && t_pass cli/rebuild/third-server || t_fail cli/rebuild/third-server "exit $rc: $(cat "$T/r5.out" "$T/r5.err" | head -c 600)"
ok=1; : >"$T/views"
for f in $files; do compare_views 0 "$f" || { ok=0; echo "$f: $(cat "$T/why")" >>"$T/views"; }; done
[ $ok = 1 ] && readback && t_pass cli/rebuild/third-reads || t_fail cli/rebuild/third-reads "$(cat "$T/views" "$T/reads" | head -c 600)"
