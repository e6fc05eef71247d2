#!/usr/bin/env bash
# The servers' membership under a partition, on one machine: three servers
# with --redundancy mirror and a client host, each a network namespace on a
# bridge (test/multihost/net.sh). Server 2's link is taken down (no RST:
# its peers just stop hearing it). A client on its side (in its namespace)
# cannot change the membership (one server of three answers, no majority)
# and cannot learn of a change; a client on the other side declares server
# 2 out (two of three). The link comes back: the next client on server 2's
# side that reads the membership brings it the new epoch, and it refuses
# the mirrored file until declared in again (a client on its side reads
# the file from the copies); then every byte reads back and every copy
# equals its primary. Clients on both sides write through the cut: one on
# server 2's side that opened /p2 before it goes on writing (server 2
# takes its part, the others never hear of it, the call fails), one on
# the other side overwrites /p1 (noted for server 2); after the resync
# the copies involving server 2 agree, and after ddio scrub (the failed
# copy left /p2 in doubt) every copy of both files equals its primary. No MPI. Needs root (ip
# netns). Closes with "partition: N passed, N failed".
#   run-partition-tests.sh ec   the same story with ec:2+1 files (ddio cp
#                               --redundancy): server 2's part decoded and
#                               written as parity while it is out, the
#                               resync and the scrub rewrite the files
#                               whole, and "agrees" is every group's parity
#                               being its data's (test/server/ec_verify);
#                               its steps are named partition/ec/...
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
MODE=mirror; cpr=(); P=partition
if [ "${1:-}" = ec ]; then MODE=ec:2+1; cpr=(-r ec:2+1); P=partition/ec; shift; fi
t_init "${P//\//-}"
here=$SRC/test/multihost
DDIO=$T_DDIO
if [ ! -x "$DDIO" ] || [ ! -x "$T_SERVER_BIN" ]; then
  t_unusable partition/build "ddio or ddio-server missing: run make"
fi
if [ "$(id -u)" != 0 ] || ! ip netns add "ddio-probe-$$" 2>/dev/null; then
  t_unusable partition/netns "needs root and ip netns"
fi
ip netns del "ddio-probe-$$"
tmp=$T_TMP
# shellcheck source=test/multihost/net.sh
. "$here/net.sh"
MH_NS=(srv0 srv1 srv2 cn0); MH_ADDR=(11 12 13 21)
id=$(( $$ % 200 + 20 ))                  # 10.213.ID.0/24, per run
t_defer mh_net_down
mh_net_up "$id" || t_unusable partition/network "the namespaces and their bridge (or the test net leaked here)"
export DDIO_SECRET_FILE="$tmp/secret"
t_secret "$DDIO_SECRET_FILE" || t_unusable partition/secret "cannot write $DDIO_SECRET_FILE"
list=""
for i in 0 1 2; do
  mkdir -p "$tmp/root$i"
  t_server_start -n "$(mh_nsname srv$i)" "$tmp/srv$i" --listen "$MH_NET.${MH_ADDR[$i]}:0" \
    --root "$tmp/root$i" --log-level info --secret-file "$DDIO_SECRET_FILE" --redundancy mirror \
    --throttle-mbps 100 \
    || t_unusable partition/servers "$T_SRV_WHY"
  list="$list${list:+,}$T_SRV_ADDR"
done
IFS=, read -r -a addr <<<"$list"
# short deadlines: a server behind the cut is silent, not refusing
export DDIO_SERVERS=$list DDIO_TIMEOUT=2 DDIO_RECOVER_TIMEOUT=2
on() { local h=$1; shift; ip netns exec "$(mh_nsname "$h")" "$@"; }
link() { ip -n "$MH_SW" link set "$(mh_veth srv2)" "$1"; }

head -c 3000017 /dev/urandom > "$tmp/src"
first() {
  on cn0 "$DDIO" cp "${cpr[@]}" "$tmp/src" ddio:/p1 && on cn0 "$DDIO" stat /p1 | grep -q "$MODE" \
    && on cn0 "$DDIO" member | grep -qx "epoch 1"
}
t_step $P/first-epoch first
# every server's own notes of its changes confirmed by that membership read
unconfirmed() { on "$1" "$DDIO" stats -s "$2" changed_unconfirmed | awk '{ print $3 }'; }
confirmed() {
  for j in 0 1 2; do [ "$(unconfirmed cn0 "${addr[$j]}")" = 0 ] || return 1; done
}
t_step $P/changes-confirmed confirmed

# a writer on server 2's side, stopped mid-copy (a window or more written
# everywhere) until the link is down: what it writes then reaches server 2
# only (100 MiB/s disks: 240 MiB take seconds)
head -c 251658240 /dev/urandom > "$tmp/big"
( sh -c 'echo $$ >"$1"; shift; exec "$@"' _ "$tmp/minw.pid" ip netns exec "$(mh_nsname srv2)" \
    "$DDIO" cp "${cpr[@]}" "$tmp/big" ddio:/p2 >"$tmp/minw.out" 2>&1; echo $? >"$tmp/minw.rc" ) &
t_wait_for 10 test -s "$tmp/minw.pid"
minw=$(cat "$tmp/minw.pid")
t_defer kill -KILL "$minw"
stopped() {
  local size
  for _ in $(seq 400); do
    size=$(on cn0 "$DDIO" stat /p2 2>/dev/null | awk '$1 == "size:" { print $2 }')
    if [ "${size:-0}" -ge 50331648 ]; then kill -STOP "$minw"; break; fi
    kill -0 "$minw" 2>/dev/null || break
    sleep 0.05
  done
  size=$(on cn0 "$DDIO" stat /p2 2>/dev/null | awk '$1 == "size:" { print $2 }')
  kill -0 "$minw" 2>/dev/null && [ "${size:-0}" -lt 251658240 ] \
    || { echo "the copy ended (size ${size:-?}) before it could be stopped"; return 1; }
}
t_step $P/minority-writer-stopped stopped

link down
# server 2's side: one server of three answers; nothing may change anywhere
minority() {
  ! on srv2 "$DDIO" member out 0 >"$tmp/min.out" 2>&1 \
    && grep -q "no majority of the 3 servers agreed to epoch 2" "$tmp/min.out" \
    && ! grep -q "membership epoch 2 committed" "$tmp/srv2/log"
}
t_step $P/minority-cannot-change minority
majority() {
  on cn0 "$DDIO" member out 2 | tee "$tmp/maj.out" | grep -qx "epoch 2" \
    && grep -qx "server 2 ${addr[2]} out (unreachable)" "$tmp/maj.out"
}
t_step $P/majority-declares-out majority
# the majority's side overwrites /p1: written without server 2, noted for it
head -c 2000003 /dev/urandom > "$tmp/src3"
t_step $P/majority-writes sh -c "ip netns exec '$(mh_nsname cn0)' '$DDIO' cp '$tmp/src3' ddio:/p1 >/dev/null"
# the minority's writer goes on: server 2 takes its part, the others are
# silent, no majority declares them out: the copy fails; server 2 kept a
# note of its change
minority_writes() {
  kill -CONT "$minw"
  t_wait_for 120 test -s "$tmp/minw.rc" || { echo "the copy did not end"; return 1; }
  cat "$tmp/minw.out"
  [ "$(cat "$tmp/minw.rc")" != 0 ] && [ "$(unconfirmed srv2 "${addr[2]}")" -ge 1 ]
}
t_step $P/minority-write-fails minority_writes
# still cut off: server 2's side sees only the old epoch
t_step $P/minority-sees-old-epoch sh -c "ip netns exec '$(mh_nsname srv2)' '$DDIO' member | grep -qx 'epoch 1'"
link up

# healed: the first read on server 2's side brings it the epoch; it is out
# (until the healed link carries it: the cut left failed neighbour entries
# behind, and a connect may meet EHOSTUNREACH for a moment)
rejoin() {
  for _ in $(seq 40); do
    on srv2 "$DDIO" member >"$tmp/rej.out" 2>&1 && ! grep -q unreachable "$tmp/rej.out" && break
    sleep 0.25
  done
  grep -qx "epoch 2" "$tmp/rej.out" \
    && grep -qx "server 2 ${addr[2]} out" "$tmp/rej.out" \
    && grep -q "membership epoch 2 committed: this server is out" "$tmp/srv2/log"
}
t_step $P/rejoined-learns-out rejoin
# it refuses the mirrored file; a client on its side reads it from the copies
out_reads() {
  ip netns exec "$(mh_nsname srv2)" "$DDIO" cp ddio:/p1 "$tmp/degraded" >/dev/null \
    && cmp "$tmp/src3" "$tmp/degraded" \
    && ip netns exec "$(mh_nsname srv2)" "$DDIO" stats -s "${addr[2]}" out_refused \
       | awk '$2 == "out_refused" && $3 > 0 { ok = 1 } END { exit !ok }'
}
t_step $P/out-refuses-reads-copies out_reads
# in again: resynced with the others' notes (/p1) and its own (/p2). Every
# copy of /p1 equals its primary; of /p2, those server 2 holds or keeps a
# copy of (server 2's primary and its copy on server 0; server 1's primary
# and its copy on server 2). The writer's last call failed: servers 0 and
# 1 may disagree on what it left of their own units (a failed write leaves
# its range undefined: DESIGN.md 6.1 "A failed write of a mirrored
# file") until ddio scrub makes them agree.
# (a datafile's end past its last byte written reads as zeros, as a hole)
# (an ec:2+1 file: every group's parity is its data's, checked once per
# file, whatever J)
agree() {
  if [ "$MODE" != mirror ]; then
    "$BUILD/test/server/ec_verify" 2 1 1048576 "$1" "$tmp/root0" "$tmp/root1" "$tmp/root2"
    return
  fi
  python3 - "$tmp/root$2/$1" "$tmp/root$(( ($2 + 1) % 3 ))/.ddio/copy1/$1" <<'PY'
import sys
a, b = (open(p, "rb").read() for p in sys.argv[1:3])
n = max(len(a), len(b))
if a.ljust(n, b"\0") != b.ljust(n, b"\0"):
    sys.exit("%s and %s differ (%d and %d bytes)" % (sys.argv[1], sys.argv[2], len(a), len(b)))
PY
}
# (the dead writer's handle on servers 0 and 1 keeps /p2 open, refusing
# its resync, until they notice its connection gone: run again, as an
# operator would)
back() {
  for _ in $(seq 90); do
    on cn0 "$DDIO" member in 2 >"$tmp/in.out" 2>&1 && break
    cat "$tmp/in.out" >>"$tmp/in.all"; sleep 1
  done
  cat "$tmp/in.out" >>"$tmp/in.all"; cat "$tmp/in.all"
  grep -qx "epoch 3" "$tmp/in.out" \
    && grep -q "^/p1: $MODE: resynced" "$tmp/in.all" && grep -q "^/p2: $MODE: resynced" "$tmp/in.all" \
    && on cn0 "$DDIO" cp ddio:/p1 "$tmp/back" >/dev/null && cmp "$tmp/src3" "$tmp/back" \
    && agree p1 0 && agree p1 1 && agree p1 2 && agree p2 1 && agree p2 2
}
t_step -t 150 $P/in-again-every-copy-agrees back
# the minority's failed copy left /p2 in doubt on the servers whose part
# of it did not complete; ddio scrub makes its copies agree (again while
# a server still holds the dead writer's handle: the file counts as open)
settled() {
  for _ in $(seq 60); do
    on cn0 "$DDIO" scrub --all >"$tmp/scrub.out" 2>&1 \
      && [ "$(on cn0 "$DDIO" stats indoubt_files | awk '{ s += $3 } END { print s + 0 }')" = 0 ] && break
    sleep 1
  done
  cat "$tmp/scrub.out"
  for f in p1 p2; do for j in 0 1 2; do agree $f $j || return 1; done; done
}
t_step -t 120 $P/scrub-every-copy-agrees settled
t_done
