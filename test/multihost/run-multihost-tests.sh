#!/usr/bin/env bash
# Multi-host test on one machine: network namespaces as hosts. Two I/O
# servers, each in its own namespace, and four MPI ranks on two "compute
# nodes" (two more namespaces), joined by veth pairs to a bridge on private
# 10.x test addresses that exist only inside this run. The bridge lives in
# a fifth namespace (the "switch") and mpiexec runs on compute node 0, so
# this machine's own namespace never gets an interface: servers of other
# tests running beside this one (make -j check) must not see the test net
# among their UCX interfaces (one did, and its clients later met a
# vanished address: "connect(... 10.213.50.1 ...) failed"). Hydra starts the
# ranks through ns-launch (its ssh stand-in). Authentication is on (a fresh
# secret). The Kotz patterns and the HDF5 program run across them and are
# compared with ufs:; a rank without the secret is refused; then a server's
# link is taken down in the middle of a collective read and every rank must
# fail within the deadline.
# Needs root (ip netns). Closes with "multihost: N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${DDIO_BUILD_DIR:-$(cd "$here/../.." && pwd)}
mpi="$top/mpich"; bin="$top/test/mpi/bin"; pat="$top/examples/bin/ddio-patterns"
server="$top/ioserver/ddio-server"
[ -x "$mpi/bin/mpiexec" ] || { echo "run-multihost-tests: build first" >&2; exit 2; }
. "$top/test/mpienv.sh" 30
pass=0; fail=0; failed=()
if [ "$(id -u)" != 0 ] || ! ip netns add "ddio-probe-$$" 2>/dev/null; then
  echo "SKIP: multihost (needs root and ip netns)"; echo "multihost: 0 passed, 1 failed"; exit 1
fi
ip netns del "ddio-probe-$$"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-mh.XXXXXX")
id=$(( $$ % 200 + 20 ))                  # 10.213.ID.0/24, per run
net="10.213.$id"; br="ddbr$id"
NS=(srv0 srv1 cn0 cn1); ADDR=(11 12 21 22)
nsname() { echo "ddio$id-$1"; }
sw=$(nsname sw)
pids=()
cleanup() {
  local p n
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; done
  sleep 0.5
  for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for n in "${NS[@]}"; do ip netns del "$(nsname "$n")" 2>/dev/null; done
  ip netns del "$sw" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

step() {
  local name=$1; shift
  local log="$tmp/$name.log" rc limit=${DDIO_TEST_LIMIT:-300} t0=$SECONDS
  if [ "$(type -t "$1")" = function ]; then   # a shell function: its own watchdog
    ( "$@" ) >"$log" 2>&1 & local p=$!
    ( sleep "$limit"; echo "time limit ${limit}s" >>"$log"; pkill -KILL -P $p ) </dev/null >/dev/null 2>&1 &
    local w=$!
    wait $p; rc=$?; pkill -P $w sleep 2>/dev/null; kill $w 2>/dev/null; wait $w 2>/dev/null
  else
    timeout -k 10 "$limit" "$@" >"$log" 2>&1; rc=$?
  fi
  if [ $rc = 0 ]; then
    pass=$((pass + 1)); echo "PASS: multihost/$name ($((SECONDS - t0)) s)"
  else
    fail=$((fail + 1)); failed+=("$name"); echo "FAIL: multihost/$name ($((SECONDS - t0)) s)"; tail -n 30 "$log" | sed 's/^/    /'
  fi
}

# --- the network: a bridge in the switch namespace, a veth pair per host ---
ip netns add "$sw" && ip -n "$sw" link add "$br" type bridge && ip -n "$sw" link set "$br" up || exit 1
for i in "${!NS[@]}"; do
  n=$(nsname "${NS[$i]}"); v="dd$id${NS[$i]}"
  ip netns add "$n"
  # inside, the interface has the bridge's name: Hydra's -iface names the
  # interface for mpiexec and for the ranks (nemesis TCP) alike
  ip -n "$sw" link add "$v" type veth peer name "$br" netns "$n"
  ip -n "$sw" link set "$v" master "$br" up
  ip -n "$n" addr add "$net.${ADDR[$i]}/24" dev "$br"
  ip -n "$n" link set "$br" up
  ip -n "$n" link set lo up
done
# nothing of the test net may appear here (see the top)
if ip -o addr show | grep -q "$net\."; then echo "the test net leaked into this namespace"; exit 1; fi

# --- authentication: one fresh secret for the servers and the ranks --------
export DDIO_SECRET_FILE="$tmp/secret"
( umask 077 && head -c 32 /dev/urandom | base64 > "$DDIO_SECRET_FILE" ) || exit 1

# --- servers, each in its namespace, listening on its own address ---------
start_servers() {   # start_servers EXTRA_ARGS...: sets DDIO_SERVERS
  local i list="" a
  for i in 0 1; do
    mkdir -p "$tmp/root$i"; rm -f "$tmp/port$i"
    a=$net.${ADDR[$i]}
    ip netns exec "$(nsname srv$i)" "$server" --listen "$a:0" --port-file "$tmp/port$i" \
      --root "$tmp/root$i" --log-level warn --secret-file "$DDIO_SECRET_FILE" "$@" \
      2>>"$tmp/server$i.log" &
    pids+=($!)
  done
  for i in 0 1; do
    for _ in $(seq 100); do [ -s "$tmp/port$i" ] && break; sleep 0.1; done
    [ -s "$tmp/port$i" ] || { echo "server $i did not start"; cat "$tmp/server$i.log"; return 1; }
    list="$list${list:+,}$net.${ADDR[$i]}:$(cat "$tmp/port$i")"
  done
  export DDIO_SERVERS=$list
}
stop_servers() {
  local p
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  pids=()
}

# mpiexec (on compute node 0, as from a login shell there) with the ranks on
# the two compute-node namespaces (2 ranks each); ranks reach each other
# (nemesis TCP) and the servers over the test net
MPIHOSTS=(ip netns exec "$(nsname cn0)" mpiexec -launcher ssh -launcher-exec "$here/ns-launch" -iface "$br"
          -hosts "$(nsname cn0):2,$(nsname cn1):2")
MPIRUN=("${MPIHOSTS[@]}" -n 4 -genv DDIO_SERVERS)

start_servers || exit 1
MPIRUN+=("$DDIO_SERVERS")
u="$tmp/ufs"; mkdir -p "$u"
for r in 8 8192; do
  m=2; [ $r = 8192 ] && m=16
  step "patterns-r$r-ddio" "${MPIRUN[@]}" "$pat" -q -r "$r" -m "$m" "ddio:/mh$r"
  step "patterns-r$r-ufs" mpiexec -n 4 "$pat" -q -r "$r" -m "$m" "ufs:$u/mh$r"
  step "patterns-r$r-cmp" "${MPIHOSTS[@]}" -n 1 -genv DDIO_SERVERS "$DDIO_SERVERS" \
    "$bin/filecmp" "ddio:/mh$r" "ufs:$u/mh$r"
done
# the HDF5 program (Debian's libhdf5 mpich on our libmpich) across the hosts,
# its file compared with the same program's on ufs:
h5() {
  mpicc -O2 -I/usr/include/hdf5/mpich -o "$tmp/t_h5" "$top/test/hdf5/t_h5.c" \
    -L/usr/lib/x86_64-linux-gnu/hdf5/mpich -lhdf5 || return 1
  "${MPIRUN[@]}" "$tmp/t_h5" "ddio:/mh.h5" && mpiexec -n 4 "$tmp/t_h5" "ufs:$u/mh.h5" &&
    "${MPIHOSTS[@]}" -n 1 -genv DDIO_SERVERS "$DDIO_SERVERS" "$bin/filecmp" "ddio:/mh.h5" "ufs:$u/mh.h5"
}
step "hdf5-ddio-vs-ufs" h5
# ranks without the secret (or with another one) are refused by the servers
nosecret() {
  ( umask 077 && head -c 32 /dev/urandom | base64 > "$tmp/other" )
  ! DDIO_SECRET_FILE="$tmp/other" "${MPIRUN[@]}" "$pat" -q -r 8 -m 1 -p wb "ddio:/refused" &&
    grep -q "refused" "$tmp/server0.log"
}
step "wrong-secret-refused" nosecret
# the ranks really ran on the two compute-node hosts: two network
# namespaces, 2 ranks each, neither of them this shell's
where() {
  local mine; mine=$(readlink /proc/self/ns/net)
  "${MPIRUN[@]}" sh -c 'readlink /proc/self/ns/net' | sort | uniq -c | tee "$tmp/where"
  awk -v mine="$mine" '$1==2 && $2!=mine {n++} END{exit n!=2}' "$tmp/where"
}
step "ranks-on-two-hosts" where
stop_servers

# --- a link taken down mid-call --------------------------------------------
# Server 1 throttled to 5 MiB/s: a 64 MiB collective read takes ~7 s; after
# 2 s its link goes down (no RST: the peers just stop hearing it). Every
# rank must fail within DDIO_TIMEOUT (2 s) + 5 s grace of silence.
start_servers --throttle-mbps 5 --block-size 65536 || exit 1
MPIRUN[${#MPIRUN[@]}-1]=$DDIO_SERVERS
step "linkdown-prep" "${MPIRUN[@]}" "$pat" -q -r 8192 -m 64 -p wb "ddio:/down"
linkdown() {
  "${MPIRUN[@]}" -genv DDIO_TIMEOUT 2 "$pat" -q -r 8192 -m 64 -p rb "ddio:/down" & local m=$!
  sleep 2; ip -n "$sw" link set "dd${id}srv1" down; local t0=$SECONDS
  wait $m; local rc=$? dt=$((SECONDS - t0))
  ip -n "$sw" link set "dd${id}srv1" up
  echo "collective read with server 1's link down: exit $rc after ${dt} s"
  [ $rc -ne 0 ] && [ $dt -le 12 ] && grep -q "ddio server $net.${ADDR[1]}" "$tmp/linkdown-read-fails-in-time.log"
}
step "linkdown-read-fails-in-time" linkdown
stop_servers

# --- an interface removed under a running job ------------------------------
# What broke a CI run when this test's bridge was still in the machine's own
# namespace: UCX (default transport) had wired server and ranks over an
# extra local interface, which then vanished. Here on purpose, in a namespace
# of its own (server and ranks on its 127.0.0.1): the bridge goes away in
# the middle of the Kotz patterns. The job either completes with its bytes
# verified (within a minute: it takes 2-10 s) or fails within DDIO_TIMEOUT
# (3 s) + 5 s grace of the removal, plus slack for a loaded machine (the
# program's collective calls fail on every rank together;
# its verification reads are independent, so there one rank's error aborts
# the job); never a hang.
vanish() {
  local n; n=$(nsname solo); local v="${br}v"
  ip netns add "$n" && ip -n "$n" link set lo up &&
    ip -n "$n" link add "$v" type bridge && ip -n "$n" addr add "10.214.$id.1/24" dev "$v" &&
    ip -n "$n" link set "$v" up || return 1
  mkdir -p "$tmp/solo"
  ip netns exec "$n" "$server" --listen 127.0.0.1:0 --port-file "$tmp/solo.port" \
    --root "$tmp/solo" --log-level warn --secret-file "$DDIO_SECRET_FILE" 2>"$tmp/solo.log" &
  local sp=$!; pids+=($sp)
  for _ in $(seq 100); do [ -s "$tmp/solo.port" ] && break; sleep 0.1; done
  ip netns exec "$n" env HYDRA_IFACE=lo DDIO_TIMEOUT=3 DDIO_SERVERS="127.0.0.1:$(cat "$tmp/solo.port")" \
    mpiexec -n 4 "$pat" -r 8 -m 8 "ddio:/vanish" >"$tmp/vanish.out" 2>&1 & local m=$!
  sleep 1; ip -n "$n" link del "$v"; local t0=$SECONDS
  wait $m; local rc=$? dt=$((SECONDS - t0))
  kill -TERM $sp; wait $sp; ip netns del "$n"
  cat "$tmp/vanish.out"
  echo "the job: exit $rc, ${dt} s after the interface was removed"
  if [ $rc = 0 ]; then   # all 21 patterns ran and verified
    [ $dt -le 60 ] && [ "$(grep -c ' verified$' "$tmp/vanish.out")" = 21 ]
  else                   # a clear I/O error, not a crash
    [ $dt -le 12 ] && grep -q '^ddio-patterns: rank [0-3]: .*I/O error' "$tmp/vanish.out"
  fi
}
step "interface-vanishes-mid-job" vanish

echo
[ $fail -gt 0 ] && echo "failed: ${failed[*]}"
echo "multihost: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
