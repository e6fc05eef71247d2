#!/usr/bin/env bash
# Lose one server of a ddio-run session for good, as a dead node would:
# inside the session (DDIO_SERVERS set), SIGKILL server I (its index in
# DDIO_SERVERS), wait until it has exited, and delete its storage root
# (ddio-run's DIR/s<I>). Nothing restarts it.
# usage: kill-server.sh I DIR
set -u
idx=$1 dir=$2
# shellcheck source=test/mpi/find-server.sh
. "$(dirname "$0")/find-server.sh"
find_server "$idx" || { echo "kill-server: no server on port $port" >&2; exit 1; }
kill -KILL "$pid" || exit 1
# gone: no thread left (a killed leader shows Z while a thread still exits)
for ((k = 0; k < 3000; k++)); do
  [ -d "/proc/$pid/task" ] && [ "$(ls "/proc/$pid/task" 2>/dev/null | wc -l)" -gt 0 ] &&
    [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" != Z ] || break
  sleep 0.01
done
rm -rf "${dir:?}/s$idx"
echo "kill-server: server $idx (port $port, pid $pid) killed, $dir/s$idx deleted"
