#!/usr/bin/env bash
# More than 2 GiB on one rank in one collective (docs/DESIGN.md section 9.6): t_large
# writes 2100 MiB from rank 0 with ONE write_at_all (count 2100 of a 1 MiB
# contiguous type; rank 1 adds 1 MiB after it), reads it back with ONE
# read_at_all and checks every 8-byte word and the status counts; then the
# servers' coll_xfers counters must show the disk-directed path ran. With 1
# and 2 servers, storage under ${TMPDIR:-/tmp}. Not part of `make check`
# (it moves ~9 GiB through the disks); CI runs it separately.
# usage: run-large-tests.sh [MIB]     (default 2100)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${DDIO_BUILD_DIR:-$(cd "$here/../.." && pwd)}
bin="$top/test/mpi/bin"
mpi="$top/mpich"
mib=${1:-2100}
[ -x "$bin/t_large" ] || { echo "run-large-tests: $bin/t_large missing: run make check (or make $bin/t_large)" >&2; exit 2; }
. "$here/../mpienv.sh" 120
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddio-large.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for ns in 1 2; do
  name="large-s$ns"
  mkdir -p "$tmp/$name"
  if timeout -k 10 "${DDIO_TEST_LIMIT:-900}" "$top/tools/ddio-run" -s "$ns" --root "$tmp/$name" -- \
      bash -c 'mpiexec -n 2 "$0" "$1" ddio:/large && "$2" stats coll_xfers > "$3"' \
      "$bin/t_large" "$mib" "$top/tools/ddio" "$tmp/$name.stats" >"$tmp/$name.log" 2>&1 &&
     awk -v NS="$ns" '$2=="coll_xfers"{n++; if ($3>0) ok++} END{exit !(n==NS && ok==n)}' "$tmp/$name.stats"; then
    pass=$((pass + 1)); echo "PASS: $name ($(grep -h 'rank 0:' "$tmp/$name.log"))"
  else
    fail=$((fail + 1)); echo "FAIL: $name"; tail -n 30 "$tmp/$name.log" | sed 's/^/    /'
    cat "$tmp/$name.stats" 2>/dev/null | sed 's/^/    /'
  fi
  rm -rf "${tmp:?}/$name"
done
echo
echo "large: $pass passed, $fail failed"
[ $fail -eq 0 ]
