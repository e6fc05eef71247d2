#!/usr/bin/env bash
# More than 2 GiB per rank in one call (docs/SEMANTICS.md, large counts):
#  - large-s1: t_large writes 2100 MiB from rank 0 with ONE write_at_all_c
#    of count 2100 of a 1 MiB contiguous type (rank 1 adds 1 MiB after it),
#    reads it back with ONE read_at_all_c and checks every 8-byte word and
#    the status counts; 1 server;
#  - lcount-s2: t_lcount at_all, a count beyond INT_MAX: each of 2 ranks
#    writes 2304 MiB of MPI_BYTE (count 2415919104) with ONE
#    write_at_all_c and reads it back with ONE read_at_all_c; 2 servers.
# Then the servers' coll_xfers counters must show the disk-directed path
# ran. Storage under ${TMPDIR:-/tmp}; ~13 GiB through the disks: part of a
# full `make check` (./ddio.sh test), not of the quick one. Every _c family
# at that size, on ddio: and ufs:: bench/large-count.sh.
# usage: run-large-tests.sh [MIB]   (t_large's size; default $DDIO_LARGE_MIB, else 2100)
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_init large
t_mpi_env 120
top=$BUILD
bin="$top/test/mpi/bin"
mib=${1:-${DDIO_LARGE_MIB:-2100}}
lmib=${DDIO_LCOUNT_MIB:-2304}
for p in t_large t_lcount; do
  [ -x "$bin/$p" ] || t_unusable large/build "$bin/$p missing: run make check (or make $bin/$p)"
done
tmp=$T_TMP
# run NAME SERVERS PROGRAM ARGS...: under ddio-run, then the servers' counters
run() {
  local name=$1 ns=$2; shift 2
  mkdir -p "$tmp/$name"
  if timeout -k 10 "${DDIO_TEST_LIMIT:-900}" "$T_RUN" -s "$ns" --root "$tmp/$name" -- \
      bash -c 'stats=$1 ddio=$2; shift 2; mpiexec -n 2 "$@" && "$ddio" stats coll_xfers > "$stats"' \
      _ "$tmp/$name.stats" "$T_DDIO" "$@" >"$tmp/$name.log" 2>&1 &&
     awk -v NS="$ns" '$2=="coll_xfers"{n++; if ($3>0) ok++} END{exit !(n==NS && ok==n)}' "$tmp/$name.stats"; then
    t_pass "$name" "$(grep -h 'rank 0:' "$tmp/$name.log")"
  else
    t_fail "$name" "exit status or coll_xfers (below)"; t_indent "$tmp/$name.log" 30
    t_indent "$tmp/$name.stats"
  fi
  rm -rf "${tmp:?}/$name"
}
run large-s1 1 "$bin/t_large" "$mib" ddio:/large
run lcount-s2 2 "$bin/t_lcount" at_all "$lmib" ddio:/lcount
t_done
