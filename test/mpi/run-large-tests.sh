#!/usr/bin/env bash
# More than 2 GiB on one rank in one collective (docs/DESIGN.md section 9.6): t_large
# writes 2100 MiB from rank 0 with ONE write_at_all (count 2100 of a 1 MiB
# contiguous type; rank 1 adds 1 MiB after it), reads it back with ONE
# read_at_all and checks every 8-byte word and the status counts; then the
# servers' coll_xfers counters must show the disk-directed path ran. With 1
# and 2 servers, storage under ${TMPDIR:-/tmp}. Moves ~9 GiB through the
# disks: part of a full `make check` (./ddio.sh test), not of the quick one.
# usage: run-large-tests.sh [MIB]     (default $DDIO_LARGE_MIB, else 2100)
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init large
t_mpi_env 120
top=$BUILD
bin="$top/test/mpi/bin"
mib=${1:-${DDIO_LARGE_MIB:-2100}}
[ -x "$bin/t_large" ] || t_unusable large/build "$bin/t_large missing: run make check (or make $bin/t_large)"
tmp=$T_TMP
for ns in 1 2; do
  name="large-s$ns"
  mkdir -p "$tmp/$name"
  if timeout -k 10 "${DDIO_TEST_LIMIT:-900}" "$T_RUN" -s "$ns" --root "$tmp/$name" -- \
      bash -c 'mpiexec -n 2 "$0" "$1" ddio:/large && "$2" stats coll_xfers > "$3"' \
      "$bin/t_large" "$mib" "$T_DDIO" "$tmp/$name.stats" >"$tmp/$name.log" 2>&1 &&
     awk -v NS="$ns" '$2=="coll_xfers"{n++; if ($3>0) ok++} END{exit !(n==NS && ok==n)}' "$tmp/$name.stats"; then
    t_pass "$name" "$(grep -h 'rank 0:' "$tmp/$name.log")"
  else
    t_fail "$name" "exit status or coll_xfers (below)"; t_indent "$tmp/$name.log" 30
    t_indent "$tmp/$name.stats"
  fi
  rm -rf "${tmp:?}/$name"
done
t_done
