# Network namespaces as hosts, for the multi-host test and bench/multihost.sh
# (sourced). mh_net_up ID: two I/O servers (srv0, srv1) and two compute
# nodes (cn0, cn1), each a namespace with one veth pair to a bridge in a
# fifth namespace, the switch, on 10.213.ID.0/24 (addresses MH_ADDR). The
# bridge's namespace keeps this machine's own namespace free of the test
# net (run-multihost-tests.sh says why). mh_net_down removes them.
MH_NS=(srv0 srv1 cn0 cn1); MH_ADDR=(11 12 21 22)
mh_nsname() { echo "ddio$MH_ID-$1"; }
# mh_veth HOST: the switch-side end of HOST's pair (the host side is $MH_BR)
mh_veth() { echo "dd$MH_ID$1"; }
mh_ip() {   # mh_ip HOST: its address
  local i; for i in "${!MH_NS[@]}"; do [ "${MH_NS[$i]}" = "$1" ] && echo "$MH_NET.${MH_ADDR[$i]}"; done
}
mh_net_up() {
  MH_ID=$1 MH_NET="10.213.$1" MH_BR="ddbr$1" MH_SW=$(mh_nsname sw)
  ip netns add "$MH_SW" && ip -n "$MH_SW" link add "$MH_BR" type bridge \
    && ip -n "$MH_SW" link set "$MH_BR" up || return 1
  local i n v
  for i in "${!MH_NS[@]}"; do
    n=$(mh_nsname "${MH_NS[$i]}") v=$(mh_veth "${MH_NS[$i]}")
    ip netns add "$n" || return 1
    # inside, the interface has the bridge's name: Hydra's -iface names the
    # interface for mpiexec and for the ranks (nemesis TCP) alike
    ip -n "$MH_SW" link add "$v" type veth peer name "$MH_BR" netns "$n" \
      && ip -n "$MH_SW" link set "$v" master "$MH_BR" up \
      && ip -n "$n" addr add "$MH_NET.${MH_ADDR[$i]}/24" dev "$MH_BR" \
      && ip -n "$n" link set "$MH_BR" up && ip -n "$n" link set lo up || return 1
  done
  # nothing of the test net may appear here
  ! ip -o addr show | grep -q "$MH_NET\."
}
mh_net_down() {
  local n
  for n in "${MH_NS[@]}"; do ip netns del "$(mh_nsname "$n")" 2>/dev/null; done
  ip netns del "$MH_SW" 2>/dev/null
  return 0
}
