# Sourced by kill-server.sh and restart-server.sh: find_server I finds
# server I of a ddio-run session (its index in DDIO_SERVERS) among this
# user's ddio-server processes, by the port its --port-file holds. Sets
# port, pid and argv (its command line); returns 1 when none has it.
arg_after() { local want=$1; shift; while [ $# -gt 0 ]; do [ "$1" = "$want" ] && { echo "$2"; return; }; shift; done; }
find_server() {
  local list p pf
  IFS=, read -ra list <<<"${DDIO_SERVERS:?not inside a ddio-run session}"
  port=${list[$1]##*:} pid=""
  for p in $(pgrep -u "$(id -u)" -x ddio-server); do
    # (2> first: a server that exited meanwhile is no error)
    mapfile -d '' -t argv 2>/dev/null < "/proc/$p/cmdline" || continue
    pf=$(arg_after --port-file "${argv[@]}")
    [ -n "$pf" ] && [ "$(cat "$pf" 2>/dev/null)" = "$port" ] && { pid=$p; return 0; }
  done
  return 1
}
