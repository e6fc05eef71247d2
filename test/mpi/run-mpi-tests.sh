#!/usr/bin/env bash
# MPI integration tests: each program runs on ddio: (servers started by
# ddio-run) and on ROMIO's ufs:, and the files they leave are compared byte
# for byte through MPI-IO (filecmp). Closes with "N passed, N failed".
# usage: run-mpi-tests.sh [-k] [TEST...]   (run from anywhere; -k keeps temp dirs)
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
[ "${1:-}" = "-k" ] && { T_KEEP=1; shift; }
t_init mpi
t_mpi_env 30
here=$SRC/test/mpi
top=$BUILD
bin="$top/test/mpi/bin"
run=$T_RUN
tmp=$T_TMP   # each step's log: $tmp/NAME.log (t_step); a step has T_LIMIT (DDIO_TEST_LIMIT, 300 s)

# ufs_run NAME NP PROG ARGS... : the ufs: control run of PROG, leaving
# $U/NAME (and whatever else it writes beside it). U is $tmp/ufs; with
# DDIO_UFS_REF (./ddio.sh test sets it for make check, where this suite
# runs twice, once per transport, side by side) it is a directory keyed by
# the program, its arguments, hints and rank count, which whichever pass
# gets there first fills (under a lock) and the other reuses: the ufs: run
# is the same whatever transport ddio uses.
ufs_run() {
  local name=$1 np=$2 prog=$3 key lk rc=0; shift 3
  U="$tmp/ufs"
  if [ -z "${DDIO_UFS_REF:-}" ]; then
    mkdir -p "$U"
    t_step "$name/ufs" mpiexec -n "$np" "$prog" "$@" "ufs:$U/$name"
    return
  fi
  key=$( { echo "$name $np ${DDIO_TEST_HINTS:-} $*"; cat "$prog"; } | sha256sum | cut -c1-16)
  U="$DDIO_UFS_REF/$key"
  mkdir -p "$U"
  exec {lk}>"$U.lock"
  flock "$lk"
  if [ -e "$U/.done" ]; then
    t_say "note: $name/ufs: the other transport's pass ran it"
  else
    t_step "$name/ufs" mpiexec -n "$np" "$prog" "$@" "ufs:$U/$name" && touch "$U/.done" || rc=$?
  fi
  exec {lk}>&-
  return $rc
}

# ddio_vs_ufs NAME SERVERS NP PROG ARGS... : run PROG on ddio:/NAME and on
# ufs:, then compare the two files.
prog_path() { [ -x "$bin/$1" ] && echo "$bin/$1" || echo "$top/examples/bin/$1"; }
ddio_vs_ufs() {
  local name=$1 ns=$2 np=$3 prog; prog=$(prog_path "$4"); shift 4
  local root="$tmp/srv-$name"
  mkdir -p "$root"
  t_step "$name/ddio" "$run" -s "$ns" --root "$root" -- mpiexec -n "$np" "$prog" "$@" "ddio:/$name"
  ufs_run "$name" "$np" "$prog" "$@"
  t_step "$name/cmp" "$run" -s "$ns" --root "$root" -- mpiexec -n 1 "$bin/filecmp" "ddio:/$name" "ufs:$U/$name"
}

# ddio_vs_ufs_2 NAME SERVERS NP PROG ARGS... : ddio_vs_ufs, and the second
# file the program leaves (FILE.2) compared too
ddio_vs_ufs_2() {
  local name=$1 ns=$2
  ddio_vs_ufs "$@"
  t_step "$name/cmp.2" "$run" -s "$ns" --root "$tmp/srv-$name" -- \
    mpiexec -n 1 "$bin/filecmp" "ddio:/$name.2" "ufs:$U/$name.2"
}

# only ddio (programs that leave no file, or whose check is internal)
ddio_only() {
  local name=$1 ns=$2 np=$3 prog; prog=$(prog_path "$4"); shift 4
  local root="$tmp/srv-$name"
  mkdir -p "$root"
  t_step "$name" "$run" -s "$ns" --root "$root" -- mpiexec -n "$np" "$prog" "$@" "ddio:/$name"
}

# stats_check NS FILTER KEY... : print every server's KEYs (tools/ddio stats,
# inside the ddio-run session), then require the awk FILTER to accept them
# (it sees "host:port key value" lines, NS the number of servers).
stats_check() {
  local ns=$1 filter=$2; shift 2
  "$top/tools/ddio" stats "$@" > "$tmp/stats.$$" && cat "$tmp/stats.$$" && awk -v NS="$ns" "$filter" "$tmp/stats.$$"
}
# Steps that check the disk-directed collective ran keep it for collectives of
# plain ranges too (which otherwise go as each rank's own XFER)
DD_HINTS="$tmp/dd-hints"
echo "romio_ddio_coll_ranges disable" > "$DD_HINTS"
# the groups the Open MPI runner runs too (test/mpi/groups.sh): this MPICH
# in the session, ufs: as the control
G_RUN=("$run") G_PAT=$top/examples/bin/ddio-patterns G_CLASSES_CTL=1
g_ctl() { ufs_run "$@"; }
# shellcheck source=test/mpi/groups.sh
. "$here/groups.sh"
# the disk-directed collective path ran on every server
COLL_RAN='$2=="coll_xfers"{n++; if ($3>0) ok++} END{if (n!=NS || ok!=n) {print "coll_xfers: " ok+0 " of " NS " servers ran a disk-directed collective"; exit 1}}'

# ddio_vs_ufs_coll NAME SERVERS NP PROG ARGS... : ddio_vs_ufs, and the ddio
# run must have gone through the disk-directed collective on every server
ddio_vs_ufs_coll() {
  local name=$1 ns=$2 np=$3 prog; prog=$(prog_path "$4"); shift 4
  local root="$tmp/srv-$name"
  mkdir -p "$root"
  export -f stats_check; export top tmp COLL_RAN
  t_step "$name/ddio" env ROMIO_HINTS="$DD_HINTS" "$run" -s "$ns" --root "$root" -- bash -c \
    'mpiexec -n "$0" "$@" && stats_check "'"$ns"'" "$COLL_RAN" coll_xfers' "$np" "$prog" "$@" "ddio:/$name"
  ufs_run "$name" "$np" "$prog" "$@"
  t_step "$name/cmp" "$run" -s "$ns" --root "$root" -- mpiexec -n 1 "$bin/filecmp" "ddio:/$name" "ufs:$U/$name"
}

# check_step NAME RC REGEXES CMD...: CMD exits RC ("nonzero": any but 0)
# and its output (stdout and stderr) matches each line of REGEXES (grep -E)
check_step() {
  local name=$1 want=$2 re=$3; shift 3
  t_step "$name" bash -c 'want=$1 re=$2; shift 2; out=$("$@" 2>&1); rc=$?; echo "$out"
    case $want in nonzero) [ $rc != 0 ] ;; *) [ $rc = "$want" ] ;; esac || { echo "exit $rc, expected $want"; exit 1; }
    while IFS= read -r l; do
      [ -z "$l" ] || grep -qE -- "$l" <<< "$out" || { echo "no line matches: $l"; exit 1; }
    done <<< "$re"' _ "$want" "$re" "$@"
}
# lost_midway NAME SERVERS POINT:N ARGS...: server 2 of SERVERS SIGKILLed
# at its --fault point POINT:N (and from outside once it is found, in case
# the point came after the write) and its root deleted, while 4 ranks of
# ddio-patterns ARGS write and read ddio:/lost (a file with copies or
# parity): the call that loses it waits the recovery time (2 s), the ranks
# have it declared out and go on, both patterns verify their bytes, and
# every other server noted the file for it. At a read point (coll-read,
# indep-read) nothing is written after the loss: the read verifies its
# bytes, served from the copies (STATS copy_reads) or decoded from the
# others (ECREAD)
lost_midway() {
  local name=$1 n=$2 point=$3; shift 3
  local root="$tmp/srv-$name"; mkdir -p "$root"
  LOST_POINT=$point t_step "$name" "$run" -s "$n" --root "$root" --fault "2:$point:kill" -- bash -c '
    here=$1 top=$2 root=$3 n=$4; shift 4
    ( . "$here/find-server.sh"; find_server 2 || exit 1
      for _ in $(seq 3000); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
      kill -KILL "$pid" 2>/dev/null; rm -rf "$root/s2" ) & k=$!
    DDIO_RECOVER_TIMEOUT=2 mpiexec -n 4 "$top/examples/bin/ddio-patterns" "$@" ddio:/lost \
      > "$root.out" || exit 1
    wait $k; cat "$root.out"
    [ "$(grep -c " verified$" "$root.out")" = 2 ] || exit 1
    case $LOST_POINT in *-read:*)
      "$top/tools/ddio" -t 1 stats copy_reads req.ECREAD 2>/dev/null | awk "{ s += \$3 } END { exit !(s > 0) }"
      exit ;; esac
    "$top/tools/ddio" member | grep -x "server 2 .* out (unreachable)" || exit 1
    "$top/tools/ddio" stats missed_files | awk -v n="$n" "{ s += \$3 } END { exit !(s == n - 1) }"' \
    _ "$here" "$top" "$root" "$n" "$@"
}
# The runtime check of the library a program loads (ddio-run --check, and
# ddio-run's warning before a command): Debian-built programs load ours
# under ddio-run; a copy with a DT_RPATH to Debian's directory (which wins
# over LD_LIBRARY_PATH) loads Debian's, fails on ddio: with
# *iofstypeunsupported, and is named with the fix; with that fix applied it
# runs on ddio:; a RUNPATH loses to LD_LIBRARY_PATH, and outside ddio-run
# the note names the trap
abi_check_tests() {
  local deb=/usr/lib/x86_64-linux-gnu ours; ours=$(cd "$MPI" && pwd -P)/lib
  local p progs=()
  for p in t_abi t_fio t_f08 t_cxx; do [ -x "$bin/$p.debian" ] && progs+=("$bin/$p.debian"); done
  [ ${#progs[@]} = 4 ] || { t_fail abi-check "Debian-built test programs missing"; return; }
  command -v patchelf >/dev/null || { t_fail abi-check "patchelf missing: scripts/install-deps.sh installs it"; return; }
  cp "$bin/t_abi.debian" "$tmp/t_rpath" && patchelf --force-rpath --set-rpath "$deb" "$tmp/t_rpath"
  cp "$bin/t_abi.debian" "$tmp/t_runpath" && patchelf --set-rpath "$deb" "$tmp/t_runpath"
  cp "$tmp/t_rpath" "$tmp/t_fixed" && patchelf --remove-rpath "$tmp/t_fixed"
  check_step abi-check-debian-built 0 "t_abi.debian: libmpich.so.12 => $ours/libmpich.so.12: has the ddio driver
t_fio.debian: libmpich.so.12 => $ours/libmpich.so.12: has the ddio driver
t_f08.debian: libmpich.so.12 => $ours/libmpich.so.12: has the ddio driver
t_cxx.debian: libmpich.so.12 => $ours/libmpich.so.12: has the ddio driver" "$run" --check "${progs[@]}"
  check_step abi-check-rpath 1 "t_rpath: libmpich.so.12 => $deb/libmpich.so.12: no ddio driver
DT_RPATH \\($deb\\) is searched before LD_LIBRARY_PATH
fix: patchelf --remove-rpath" "$run" --check "$tmp/t_rpath"
  check_step abi-check-runpath 0 "t_runpath: libmpich.so.12 => $ours/libmpich.so.12: has the ddio driver
without ddio-run \\(LD_LIBRARY_PATH unset\\)
t_runpath: libmpich.so.12 => $deb/libmpich.so.12: no ddio driver
RUNPATH \\($deb\\) finds
export LD_LIBRARY_PATH=$ours" env -u LD_LIBRARY_PATH "$run" --check "$tmp/t_runpath"
  check_step abi-check-not-mpi 1 "loads no MPI library" "$run" --check "$(command -v true)"
  mkdir -p "$tmp/srv-abi-check"
  check_step abi-check-warning nonzero "^ddio-run: warning: .*t_rpath: libmpich.so.12 => $deb/libmpich.so.12: no ddio driver
fix: patchelf --remove-rpath
iofstypeunsupported ddio:/abi-rpath" env DDIO_EXPECT_LIB=ch4: \
    "$run" -s 2 --root "$tmp/srv-abi-check" -- mpiexec -n 2 "$tmp/t_rpath" ddio:/abi-rpath
  t_step abi-check-fixed bash -c 'out=$(env DDIO_EXPECT_LIB=ch3:nemesis "$@" 2>&1); rc=$?; echo "$out"
    [ $rc = 0 ] && ! grep -q "ddio-run: warning" <<< "$out"' _ \
    "$run" -s 2 --root "$tmp/srv-abi-check" -- mpiexec -n 2 "$tmp/t_fixed" ddio:/abi-fixed
}

# --data-groups: the groups whose bytes a transport moves, for the second
# pass on the other transport (test/mpi/run-mpi-tests-other.sh). Left out:
# descriptor sizes, metadata (open/EXCL/delete, hints' errors, missing
# servers, authentication, ABI) and small I/O that goes by TCP whatever the
# transport (below DDIO_UCX_MIN_STREAM, or forced: shortsend); same-host
# reads (local: the second pass turns them off, t_other_pass in test/lib.sh).
NOT_DATA="busy sameblock smallio excl delclose park desc-size errors missing auth abi shortsend local"
# groups_except "GROUP ...": every group of this suite but those, one a line
groups_except() {
  local g
  for g in $(grep -o 't_selected [a-z0-9-]*' "$0" | awk '{ print $2 }' | sort -u); do
    case " $1 " in *" $g "*) ;; *) echo "$g" ;; esac
  done
}
if [ "${1:-}" = --data-groups ]; then
  shift
  mapfile -t groups < <(groups_except "$NOT_DATA")
  set -- "${groups[@]}" "$@"
# DDIO_MPI_SPLIT=1 (make check), no groups named: every group but the
# fault groups, which make check runs beside the rest
# (test/mpi/run-mpi-tests-faults.sh lists them)
elif [ $# -eq 0 ] && [ "${DDIO_MPI_SPLIT:-0}" = 1 ]; then
  mapfile -t groups < <(groups_except \
    "$(sed -n 's/^groups=(\(.*\))$/\1/p' "$SRC/test/mpi/run-mpi-tests-faults.sh")")
  set -- "${groups[@]}"
fi
t_select "$@"

if t_selected indep; then
  ddio_vs_ufs indep-s1 1 4 t_indep
  DDIO_TEST_HINTS="striping_unit=4096" ddio_vs_ufs indep-s2-u4k 2 3 t_indep
  DDIO_TEST_HINTS="striping_unit=65536" ddio_vs_ufs indep-s3-u64k 3 4 t_indep
  DDIO_TEST_HINTS="striping_unit=3000,striping_factor=2" ddio_vs_ufs indep-s3-u3000-f2 3 2 t_indep
fi
if t_selected busy; then g_busy; fi
if t_selected size; then ddio_vs_ufs size 2 4 t_size; fi
if t_selected sameblock; then
  ddio_vs_ufs sameblock 1 4 t_sameblock
  ddio_vs_ufs sameblock-s2 2 3 t_sameblock
fi
if t_selected smallio; then   # sector-sized reads and read-modify-writes
  ddio_vs_ufs smallio 2 3 t_smallio
  DDIO_TEST_HINTS="striping_unit=6000,striping_factor=2" ddio_vs_ufs smallio-u6000 3 2 t_smallio
fi
if t_selected self; then ddio_vs_ufs self 2 3 t_self; fi
if t_selected cache; then   # write-behind and read-ahead vs MPI's consistency rules
  DDIO_TEST_HINTS="romio_ddio_write_behind=4194304,romio_ddio_read_ahead=4194304" \
    T_CACHE_WB=4194304 T_CACHE_RA=4194304 ddio_vs_ufs cache 2 3 t_cache
  DDIO_TEST_HINTS="romio_ddio_write_behind=65536,romio_ddio_read_ahead=32768,striping_unit=6000" \
    T_CACHE_WB=65536 T_CACHE_RA=32768 ddio_vs_ufs cache-small 3 2 t_cache
  # the default: off
  T_CACHE_WB=0 T_CACHE_RA=0 ddio_vs_ufs cache-off 2 2 t_cache
  # other programs that synchronise as MPI says, with the cache on
  on="romio_ddio_write_behind=4194304,romio_ddio_read_ahead=4194304"
  DDIO_TEST_HINTS="$on" ddio_vs_ufs cache-smallio 2 3 t_smallio
  DDIO_TEST_HINTS="$on,striping_unit=4096" ddio_vs_ufs cache-indep 2 3 t_indep
  DDIO_TEST_HINTS="$on" ddio_vs_ufs cache-nonblock 2 3 t_nonblock
  DDIO_TEST_HINTS="$on" ddio_vs_ufs cache-coll 2 4 t_coll
fi
if t_selected hot; then   # the servers' page cache (ioserver/pcache.h): hot re-reads, coherence
  # t_hot on the default servers (--page-cache on), and every server must
  # have served reads from its page cache
  HOT_CACHED='$2=="read_cache_bytes"{n++; if ($3>0) ok++} END{if (n!=NS || ok!=n) {print "read_cache_bytes: " ok+0 " of " NS " servers served reads from the page cache"; exit 1}}'
  root="$tmp/srv-hot"; mkdir -p "$root"
  export -f stats_check; export top tmp HOT_CACHED
  # (reads and writes through the servers: same-host I/O would bypass their cache)
  t_step hot/ddio env DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 "$run" -s 2 --root "$root" -- bash -c \
    'mpiexec -n 4 "$0" "$1" && stats_check 2 "$HOT_CACHED" read_cache_bytes read_disk_bytes write_cache_bytes write_direct_bytes' \
    "$bin/t_hot" ddio:/hot
  ufs_run hot 4 "$bin/t_hot"; hot_ufs="$U/hot"
  t_step hot/cmp "$run" -s 2 --root "$root" -- mpiexec -n 1 "$bin/filecmp" ddio:/hot "ufs:$hot_ufs"
  # hot reads sent from the page cache's own pages (ioserver/engine_slots.c
  # "one copy"), checked byte for byte under overwrites, a concurrent
  # atomic writer and a shrink; every server must have sent reads that way
  # (read_mapped_bytes): UCX lets the rank fetch them, TCP's socket copies
  # them from there
  ONECOPY='$2=="read_mapped_bytes"{n++; if ($3>0) ok++} END{if (n!=NS || ok!=n) {print "read_mapped_bytes: " ok+0 " of " NS " servers sent reads from the page cache"; exit 1}}'
  root="$tmp/srv-onecopy"; mkdir -p "$root"
  export ONECOPY
  t_step onecopy/ddio env DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 "$run" -s 2 --root "$root" -- bash -c \
    'mpiexec -n 4 "$0" "$1" && stats_check 2 "$ONECOPY" read_mapped_bytes read_cache_bytes' \
    "$bin/t_onecopy" ddio:/onecopy
  ufs_run onecopy 4 "$bin/t_onecopy"
  t_step onecopy/cmp "$run" -s 2 --root "$root" -- mpiexec -n 1 "$bin/filecmp" ddio:/onecopy "ufs:$U/onecopy"
  # the same with the disk-directed schedule for plain ranges too, 64 KiB stripes
  printf 'romio_ddio_coll_ranges disable\nstriping_unit 65536\n' > "$tmp/hot-hints"
  ROMIO_HINTS="$tmp/hot-hints" ddio_vs_ufs hot-u64k 3 3 t_hot
  # --page-cache off: the O_DIRECT path for everything above 64 KiB of a block
  root="$tmp/srv-hot-off"; mkdir -p "$root"
  t_step hot-off/ddio "$run" -s 2 --server-opt --page-cache=off --root "$root" -- \
    mpiexec -n 4 "$bin/t_hot" ddio:/hot-off
  t_step hot-off/cmp "$run" -s 2 --root "$root" -- mpiexec -n 1 "$bin/filecmp" ddio:/hot-off "ufs:$hot_ufs"
  # synced bytes survive SIGKILL of every server (its independent half went
  # through the page cache)
  root="$tmp/srv-hot-durable"; mkdir -p "$root"
  t_step hot-durable-write-kill "$run" -s 2 --root "$root" -- sh -c \
    "mpiexec -n 3 '$bin/t_durable' write ddio:/durable && pkill -KILL -P \$PPID -x ddio-server && sleep 0.5"
  t_step hot-durable-check "$run" -s 2 --root "$root" -- mpiexec -n 3 "$bin/t_durable" check ddio:/durable
fi
if t_selected mirror; then  # romio_ddio_redundancy=mirror: reads survive a lost server
  # 3 servers, 4 ranks: t_mirror writes a mirrored file (collective and
  # independent), sizes and syncs it, has server K SIGKILLed and its root
  # deleted (kill-server.sh), reads every byte back (collective and
  # independent) and dumps what it read, which must be the ufs: run's file;
  # the survivors must have served the lost server's part from their copies
  # (STATS copy_reads). Then: every copy is its primary byte for byte, ddio
  # stat says "mirror", and ddio rm removes the copies too; the refusals.
  ufs_run mirror 4 "$bin/t_mirror" /dev/null; mirror_ufs="$U/mirror"
  COPY_READS='$2=="copy_reads"{s+=$3} END{if (s==0) {print "no survivor served a copy"; exit 1}}'
  export top tmp COPY_READS
  for k in 1 0 2; do
    root="$tmp/srv-mirror-$k"; mkdir -p "$root"
    t_step "mirror-kill$k/ddio" env DDIO_TEST_KILL="$here/kill-server.sh $k $root" \
      "$run" -s 3 --root "$root" -- bash -c '
        mpiexec -n 4 "$0" "$1" ddio:/mirror || exit 1
        IFS=, read -ra all <<< "$DDIO_SERVERS"; live=()
        for i in "${!all[@]}"; do [ "$i" = "$2" ] || live+=("${all[$i]}"); done
        "$top/tools/ddio" stats -s "$(IFS=,; echo "${live[*]}")" copy_reads > "$tmp/mirror-stats.$2" &&
          cat "$tmp/mirror-stats.$2" && awk "$COPY_READS" "$tmp/mirror-stats.$2"' \
      "$bin/t_mirror" "$tmp/mirror-$k.dump" "$k"
    t_step "mirror-kill$k/cmp" cmp "$tmp/mirror-$k.dump" "$mirror_ufs"
  done
  # server 1 declared out (alive, refusing the file): the file written
  # again with another pattern (its part to the copies, the others noting
  # it) and read back; declared in (resynced from the notes); then server 0
  # out: read back read-only, server 0's part from server 1's copy; every
  # copy then equals its primary. Both reads compared with ufs:.
  T_MIRROR_SEED=44 ufs_run mirror44 4 "$bin/t_mirror" /dev/null; mirror44_ufs="$U/mirror44"
  root="$tmp/srv-mirror-out"; mkdir -p "$root"
  t_step mirror-out/ddio "$run" -s 3 --root "$root" -- bash -c '
    d="$top/tools/ddio"
    mpiexec -n 4 "$0" /dev/null ddio:/mirror && "$d" member out 1 || exit 1
    T_MIRROR_SEED=44 mpiexec -n 4 "$0" rewrite "$1.w" ddio:/mirror || exit 1
    "$d" member in 1 | tee "$1.in" && grep -q "^resync: server 1: 1 file(s) resynced, 0 lost, 0 failed" "$1.in" || exit 1
    "$d" member out 0 && T_MIRROR_SEED=44 mpiexec -n 4 "$0" reread "$1.r" ddio:/mirror || exit 1
    for i in 0 1 2; do cmp "$2/s$i/mirror" "$2/s$(( (i + 1) % 3 ))/.ddio/copy1/mirror" || exit 1; done
    "$d" stats copy_reads > "$1.stats" && cat "$1.stats" && awk "$COPY_READS" "$1.stats"' \
    "$bin/t_mirror" "$tmp/mirror-out" "$root"
  t_step mirror-out/cmp-written cmp "$tmp/mirror-out.w" "$mirror44_ufs"
  t_step mirror-out/cmp-resynced cmp "$tmp/mirror-out.r" "$mirror44_ufs"
  # a job that opens the file while server 1 is being declared in (the
  # resync paused after its last look at the notes): its open is held back
  # by the frozen servers and has server 1 out from the older epoch; its
  # collective write is refused for that view on every rank, each takes
  # server 1 back and sends it its part after the call; every copy then
  # equals its primary and the job read back what ufs: wrote
  root="$tmp/srv-mirror-join"; mkdir -p "$root" "$tmp/join-pause"
  t_step mirror-join/ddio "$run" -s 3 --root "$root" -- bash -c '
    d="$top/tools/ddio"; p="$3"
    mpiexec -n 4 "$0" /dev/null ddio:/mirror && "$d" member out 1 >/dev/null || exit 1
    DDIO_TEST_RESYNC_PAUSE=frozen:$p "$d" member in 1 > "$1.in" 2>&1 & inpid=$!
    for _ in $(seq 300); do [ -e "$p/frozen.ready" ] && break; sleep 0.1; done
    [ -e "$p/frozen.ready" ] || exit 1
    T_MIRROR_SEED=44 mpiexec -n 4 "$0" rewrite "$1.w" ddio:/mirror & job=$!
    sleep 1.5; touch "$p/frozen.go"
    wait $inpid || { cat "$1.in"; exit 1; }
    wait $job || exit 1
    grep -q "^server 1 .* in$" "$1.in" || { cat "$1.in"; exit 1; }
    for i in 0 1 2; do cmp "$2/s$i/mirror" "$2/s$(( (i + 1) % 3 ))/.ddio/copy1/mirror" || exit 1; done' \
    "$bin/t_mirror" "$tmp/mirror-join" "$root" "$tmp/join-pause"
  t_step mirror-join/cmp cmp "$tmp/mirror-join.w" "$mirror44_ufs"
  # A copied file's byte-range locks live on its first stripe server in.
  # Atomic mode (every independent write and read under a lock): with
  # server 0 declared out (alive: it refuses the locks) they are taken on
  # server 1, and server 0 grants none; after it is declared in again, on
  # server 0. Then server 0 killed 1 s into such a job, no one told: the
  # job's next lock waits the recovery time, has it declared out and takes
  # the locks, those held included, on server 1. t_restart reads every
  # byte back; each file equals ufs:'s.
  ufs_run lock-out 4 "$bin/t_restart" atomic 20 0; lockout_ufs="$U/lock-out"
  root="$tmp/srv-lock-out"; mkdir -p "$root"
  t_step lock-out/ddio "$run" -s 3 --root "$root" --server-opt --redundancy=mirror -- bash -c '
    d="$top/tools/ddio"
    locks() {   # the count of server $1 (one down has no line)
      "$d" stats locks 2>/dev/null | awk -v a="$(echo "$DDIO_SERVERS" | cut -d, -f$(($1 + 1)))" "\$1 == a { print \$3 }"; }
    : > "$1/empty"
    for f in lock-out1 lock-out2 lock-out3; do "$d" cp "$1/empty" "ddio:/$f" >/dev/null || exit 1; done
    "$d" member out 0 >/dev/null || exit 1
    mpiexec -n 4 "$0" atomic 20 0 ddio:/lock-out1 || exit 1
    [ "$(locks 0)" = 0 ] && [ "$(locks 1)" -gt 0 ] || { "$d" stats locks; echo "locks not on server 1"; exit 1; }
    "$d" member in 0 >/dev/null || exit 1
    mpiexec -n 4 "$0" atomic 20 0 ddio:/lock-out2 || exit 1
    [ "$(locks 0)" -gt 0 ] || { "$d" stats locks; echo "locks not back on server 0"; exit 1; }
    { sleep 1; "$2/test/mpi/kill-server.sh" 0 "$1"; } & k=$!
    n1=$(locks 1)
    DDIO_RECOVER_TIMEOUT=2 mpiexec -n 4 "$0" atomic 20 100 ddio:/lock-out3 || exit 1
    wait $k || exit 1
    "$d" member | grep -x "server 0 .* out (unreachable)" || exit 1
    [ "$(locks 1)" -gt "$n1" ] || { "$d" stats locks; echo "no locks on server 1 after the kill"; exit 1; }
    # MPI_File_delete (DELETE_ON_CLOSE) with server 0 down and out: made
    # on the others, deleted there (noted for server 0), gone
    mpiexec -n 2 "$3" ddio:/delout || exit 1
    for i in 1 2; do [ ! -e "$1/s$i/delout" ] || { echo "delout left on server $i"; exit 1; }; done
    for f in lock-out1 lock-out2 lock-out3; do "$d" cp "ddio:/$f" "$1/$f.out" >/dev/null || exit 1; done' \
    "$bin/t_restart" "$root" "$top" "$bin/t_delclose"
  for f in lock-out1 lock-out2 lock-out3; do t_step "lock-out/cmp-$f" cmp "$root/$f.out" "$lockout_ufs"; done
  # a server lost between jobs, no one told: the next job's open of the
  # mirrored file waits the recovery time (2 s), has it declared out and
  # goes on without it. Server 1 lost, then a read-only open (every byte
  # read back); server 2 lost, then a read-write open (every byte written
  # again with another pattern and read back). Compared with ufs:.
  for k in 1 2; do
    root="$tmp/srv-mirror-gone$k"; mkdir -p "$root"
    t_step "mirror-gone$k/ddio" "$run" -s 3 --root "$root" -- bash -c '
      mpiexec -n 4 "$0" /dev/null ddio:/mirror && "$3/test/mpi/kill-server.sh" "$2" "$4" || exit 1
      t0=$(date +%s%N)
      if [ "$2" = 1 ]; then
        DDIO_RECOVER_TIMEOUT=2 mpiexec -n 4 "$0" reread "$1" ddio:/mirror || exit 1
      else
        T_MIRROR_SEED=44 DDIO_RECOVER_TIMEOUT=2 mpiexec -n 4 "$0" rewrite "$1" ddio:/mirror || exit 1
      fi
      # (it waited the recovery time first: a restarting server is not lost)
      [ $(( ($(date +%s%N) - t0) / 1000000 )) -ge 2000 ] || { echo "declared out without waiting"; exit 1; }
      "$3/tools/ddio" member | grep -x "server $2 .* out (unreachable)"' \
      "$bin/t_mirror" "$tmp/mirror-gone$k" "$k" "$top" "$root"
  done
  t_step mirror-gone1/cmp cmp "$tmp/mirror-gone1" "$mirror_ufs"
  t_step mirror-gone2/cmp cmp "$tmp/mirror-gone2" "$mirror44_ufs"
  # server 2 SIGKILLed (by itself, at its 100th collective write block:
  # a kill timed from outside came after the write when it was quick) and
  # its root deleted during a collective write of a 768 MiB mirrored file
  # (4 ranks, cyclic 8 KiB records, 16 MiB calls): the call that loses it
  # waits the recovery time (2 s), the ranks have it declared out, and the
  # write, and the read after, verify their bytes; the others noted the
  # file for it
  lost_midway mirror-lost-midwrite 3 coll-write:100 -H romio_ddio_redundancy=mirror \
    -p wc,rb -m 768 -w 16
  # the same mid an independent write-behind flush: 8 KiB records written
  # independently, gathered by each rank's 4 MiB write-behind cache, server
  # 2 killed at its 20th independent write block (a flush)
  lost_midway mirror-lost-wbflush 3 indep-write:20 -H romio_ddio_redundancy=mirror \
    -H romio_ddio_write_behind=4194304 -i -p wc,rc -m 128 -w 16
  # the same mid a collective read (server 2 killed at its 30th block read
  # for a collective; the write before it whole)
  lost_midway mirror-lost-midread 3 coll-read:30 -H romio_ddio_redundancy=mirror \
    -p wc,rb -m 384 -w 16
  # mirror:3 on 3 servers: two of them lost, the third serves everything
  root="$tmp/srv-mirror3"; mkdir -p "$root"
  t_step mirror3-kill01/ddio env T_MIRROR_MODE=mirror:3 \
    DDIO_TEST_KILL="$here/kill-server.sh 0 $root && $here/kill-server.sh 1 $root" \
    "$run" -s 3 --root "$root" -- bash -c '
      mpiexec -n 4 "$0" "$1" ddio:/mirror || exit 1
      "$top/tools/ddio" stats -s "${DDIO_SERVERS##*,}" copy_reads > "$tmp/mirror3-stats" &&
        cat "$tmp/mirror3-stats" && awk "$COPY_READS" "$tmp/mirror3-stats"' \
    "$bin/t_mirror" "$tmp/mirror3.dump"
  t_step mirror3-kill01/cmp cmp "$tmp/mirror3.dump" "$mirror_ufs"
  root="$tmp/srv-mirror-keep"; mkdir -p "$root"
  t_step mirror-copies "$run" -s 3 --root "$root" -- bash -c '
    mpiexec -n 4 "$0" /dev/null ddio:/mirror || exit 1
    for i in 0 1 2; do j=$(( (i + 1) % 3 ))
      cmp "$1/s$i/mirror" "$1/s$j/.ddio/copy1/mirror" || exit 1
      echo "server $i: its copy on server $j is the same"; done
    "$2/tools/ddio" stat /mirror | grep -x "redundancy: mirror" || exit 1
    "$2/tools/ddio" rm /mirror || exit 1
    for i in 0 1 2; do [ ! -e "$1/s$i/.ddio/copy1/mirror" ] || { echo "copy left on $i"; exit 1; }; done
    echo "ddio rm removed every copy"' "$bin/t_mirror" "$root" "$top"
  t_step mirror-errors "$run" -s 3 --root "$root" -- mpiexec -n 4 "$bin/t_mirror" errors ddio:/mirror-e
  # the servers' default (ddio-server --redundancy mirror): a file created
  # without the hint is mirrored (get_info says so) and survives server 1's
  # loss; so is one `ddio cp` creates; an explicit none stays none; ec is
  # refused at the server's start, naming it
  root="$tmp/srv-mirror-dflt"; mkdir -p "$root"
  t_step mirror-default-kill1/ddio env T_MIRROR_MODE= T_MIRROR_EXPECT=mirror \
    DDIO_TEST_KILL="$here/kill-server.sh 1 $root" \
    "$run" -s 3 --root "$root" --server-opt --redundancy=mirror -- \
    mpiexec -n 4 "$bin/t_mirror" "$tmp/mirror-dflt.dump" ddio:/mirror
  t_step mirror-default-kill1/cmp cmp "$tmp/mirror-dflt.dump" "$mirror_ufs"
  root="$tmp/srv-mirror-dflt2"; mkdir -p "$root"
  head -c 3000001 /dev/urandom > "$tmp/mirror-cp.in"
  t_step mirror-default-cp "$run" -s 3 --root "$root" --server-opt --redundancy=mirror -- bash -c '
    "$2/tools/ddio" cp "$1" ddio:/cp.bin >/dev/null || exit 1
    "$2/tools/ddio" stat ddio:/cp.bin | grep -x "redundancy: mirror" || exit 1
    cmp "$3/s0/cp.bin" "$3/s1/.ddio/copy1/cp.bin" || exit 1
    T_MIRROR_MODE=none mpiexec -n 4 "$0" /dev/null ddio:/explicit-none || exit 1
    "$2/tools/ddio" stat ddio:/explicit-none | grep -x "redundancy: none"' \
    "$bin/t_mirror" "$tmp/mirror-cp.in" "$top" "$root"
  mkdir -p "$tmp/srv-mirror-ec"
  t_expect_fail -x 2 mirror-default-ec "erasure coding is chosen per file" \
    "$T_SERVER_BIN" --listen 127.0.0.1:auto --root "$tmp/srv-mirror-ec" --insecure --redundancy ec:2+1
fi
if t_selected ec; then  # romio_ddio_redundancy=ec:K+M: parity computed on the servers
  # 4 ranks: t_mirror's writes (a collective dealt view, then independent
  # ranges: groups written whole get their parity in the pass, those
  # written in part go to the overlays) on ec:2+1 (3 servers) and ec:4+2
  # (6 servers); every byte read back, collective and independent, must be
  # the ufs: run's file; every group's parity must be its in-place data's
  # (test/server/ec_verify); ddio stat names the mode; the servers killed
  # after a synced job lose nothing of it; reads with servers lost (up to
  # M) decode their part. (t_mirror's set_size cuts the file mid-group:
  # the cut group is written whole, zeros past the end, before the
  # servers cut the rest.)
  ufs_run ec 4 "$bin/t_mirror" /dev/null; ec_ufs="$U/ec"
  for shape in 2+1 4+2; do
    k=${shape%+*}; m=${shape#*+}; n=$((k + m)); root="$tmp/srv-ec-$k$m"; mkdir -p "$root"
    t_step "ec$k$m/ddio" env T_MIRROR_MODE="ec:$shape" \
      "$run" -s $n --root "$root" -- bash -c '
        mpiexec -n 4 "$0" "$1" ddio:/ec || exit 1
        "$2/tools/ddio" stat /ec | grep -x "redundancy: $3"' \
      "$bin/t_mirror" "$tmp/ec$k$m.dump" "$top" "ec:$shape"
    t_step "ec$k$m/cmp" cmp "$tmp/ec$k$m.dump" "$ec_ufs"
    roots=(); for ((i = 0; i < n; i++)); do roots+=("$root/s$i"); done
    t_step "ec$k$m/parity" "$top/test/server/ec_verify" "$k" "$m" 65536 ec "${roots[@]}"
  done
  # synced is durable: every server SIGKILLed right after the job's sync,
  # the file still open (t_mirror's kill hook; its reads then fail, which
  # this step allows); started again, a job reads every byte back: the
  # overlays' extents (partial groups) were logged at the sync
  root="$tmp/srv-ec-kill"; mkdir -p "$root"
  t_step ec-killed/write env T_MIRROR_MODE=ec:2+1 DDIO_TIMEOUT=2 \
    DDIO_RECOVER_TIMEOUT=1 "$run" -s 3 --root "$root" -- sh -c "
      DDIO_TEST_KILL=\"pkill -KILL -P \$PPID -x ddio-server; sleep 0.3\" \
        mpiexec -n 4 '$bin/t_mirror' /dev/null ddio:/ec >/dev/null 2>&1
      ! pgrep -P \$PPID -x ddio-server"
  t_step ec-killed/reread env "$run" -s 3 --root "$root" -- \
    mpiexec -n 4 "$bin/t_mirror" reread "$tmp/ec-killed.dump" ddio:/ec
  t_step ec-killed/cmp cmp "$tmp/ec-killed.dump" "$ec_ufs"
  t_step ec-killed/parity "$top/test/server/ec_verify" 2 1 65536 ec "$root/s0" "$root/s1" "$root/s2"
  # a server lost for good mid-job (SIGKILLed after the sync, its root
  # deleted: kill-server.sh): every byte still reads back, collectively
  # and independently, its units decoded from the others and its partial
  # writes read from their copies; ec:2+1 loses each of its 3 servers in
  # turn, ec:4+2 one, then two at once
  for spec in 2+1:0 2+1:1 2+1:2 4+2:5 4+2:1,4; do
    shape=${spec%:*}; lose=${spec#*:}; k=${shape%+*}; m=${shape#*+}
    root="$tmp/srv-ec-lose-$k$m-${lose/,/}"; mkdir -p "$root"
    kill=""; for i in ${lose//,/ }; do kill="$kill${kill:+ && }$here/kill-server.sh $i $root"; done
    t_step "ec$k$m-lose${lose/,/}/ddio" env T_MIRROR_MODE="ec:$shape" \
      DDIO_TEST_KILL="$kill" "$run" -s $((k + m)) --root "$root" -- \
      mpiexec -n 4 "$bin/t_mirror" "$tmp/ec-lose.dump" ddio:/ec
    t_step "ec$k$m-lose${lose/,/}/cmp" cmp "$tmp/ec-lose.dump" "$ec_ufs"
  done
  # a server declared out (alive: what it holds goes stale): the open goes
  # on without it and every byte reads back; every byte written again with
  # another pattern (its units carried by the groups' parity, its partial
  # groups by the copies in the parity servers' overlays; the others note
  # the file) and read back; declared in (resynced: the file read with it
  # out and written back whole); then server 0 out: every byte read back,
  # its units decoded from the resynced server 1 and server 2; every
  # group's parity is its data's. Both rounds compared with ufs:.
  T_MIRROR_SEED=44 ufs_run ec44 4 "$bin/t_mirror" /dev/null; ec44_ufs="$U/ec44"
  root="$tmp/srv-ec-out"; mkdir -p "$root"
  t_step ec-out/ddio env T_MIRROR_MODE=ec:2+1 "$run" -s 3 --root "$root" -- \
    bash -c 'd="$2/tools/ddio"
      mpiexec -n 4 "$0" /dev/null ddio:/ec && "$d" member out 1 >/dev/null || exit 1
      mpiexec -n 4 "$0" reread "$1.r1" ddio:/ec || exit 1
      T_MIRROR_SEED=44 mpiexec -n 4 "$0" rewrite "$1.w" ddio:/ec || exit 1
      "$d" member in 1 | tee "$1.in" &&
        grep -q "^resync: server 1: 1 file(s) resynced, 0 lost, 0 failed" "$1.in" || exit 1
      "$d" member out 0 >/dev/null &&
        T_MIRROR_SEED=44 mpiexec -n 4 "$0" reread "$1.r" ddio:/ec || exit 1' \
    "$bin/t_mirror" "$tmp/ec-out" "$top"
  t_step ec-out/cmp-before cmp "$tmp/ec-out.r1" "$ec_ufs"
  t_step ec-out/cmp-written cmp "$tmp/ec-out.w" "$ec44_ufs"
  t_step ec-out/cmp-resynced cmp "$tmp/ec-out.r" "$ec44_ufs"
  t_step ec-out/parity "$top/test/server/ec_verify" 2 1 65536 ec "$root/s0" "$root/s1" "$root/s2"
  # a server lost between jobs, no one told (SIGKILLed, its root deleted):
  # the next job's read-write open of the ec:2+1 file waits the recovery
  # time (2 s), has it declared out and goes on without it: every byte
  # read back, written again with another pattern and read back
  root="$tmp/srv-ec-gone"; mkdir -p "$root"
  t_step ec-gone/ddio env T_MIRROR_MODE=ec:2+1 "$run" -s 3 --root "$root" -- bash -c '
    mpiexec -n 4 "$0" /dev/null ddio:/ec && "$3" 1 "$2" || exit 1
    DDIO_RECOVER_TIMEOUT=2 mpiexec -n 4 "$0" reread "$1.r" ddio:/ec || exit 1
    T_MIRROR_SEED=44 DDIO_RECOVER_TIMEOUT=2 mpiexec -n 4 "$0" rewrite "$1.w" ddio:/ec || exit 1
    "$4/tools/ddio" member | grep -x "server 1 .* out (unreachable)"' \
    "$bin/t_mirror" "$tmp/ec-gone" "$root" "$here/kill-server.sh" "$top"
  t_step ec-gone/cmp-read cmp "$tmp/ec-gone.r" "$ec_ufs"
  t_step ec-gone/cmp-written cmp "$tmp/ec-gone.w" "$ec44_ufs"
  # server 2 SIGKILLed at its 100th collective write block and its root
  # deleted, during a collective write of a 384 MiB ec:2+1 file (cyclic
  # 8 KiB records, 16 MiB calls: groups written whole): the call that loses
  # it waits the recovery time (2 s), the ranks have it declared out, the
  # write goes on (server 2's units carried by parity), and the write and
  # the read after verify their bytes; the others noted the file for it.
  # The same on ec:4+2 (6 servers, server 2 killed at its 40th block; on
  # one transport only)
  lost_midway ec-lost-midwrite 3 coll-write:100 -H romio_ddio_redundancy=ec:2+1 \
    -p wc,rc -m 384 -w 16
  [ -n "${T_OTHER_PASS:-}" ] || lost_midway ec42-lost-midwrite 6 coll-write:40 \
    -H romio_ddio_redundancy=ec:4+2 -p wc,rc -m 384 -w 16
  # mid a collective read (as mirror-lost-midread)
  lost_midway ec-lost-midread 3 coll-read:30 -H romio_ddio_redundancy=ec:2+1 \
    -p wc,rb -m 384 -w 16
  [ -n "${T_OTHER_PASS:-}" ] || lost_midway ec42-lost-midread 6 coll-read:12 \
    -H romio_ddio_redundancy=ec:4+2 -p wc,rb -m 384 -w 16
  # mid an independent write-behind flush (as mirror-lost-wbflush)
  lost_midway ec-lost-wbflush 3 indep-write:20 -H romio_ddio_redundancy=ec:2+1 \
    -H romio_ddio_write_behind=4194304 -i -p wc,rc -m 128 -w 16
  # bit rot: a byte of server 1's datafile changed behind its back (in a
  # group written whole): a job reads every byte right (the sector fails
  # its checksum, the unit is decoded from the others) and the read mends
  # the sector (the datafile is as it was); a second one, in a sector no
  # read touches, is found and mended by ddio scrub
  root="$tmp/srv-ec-rot"; mkdir -p "$root"
  flip() { python3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x5a])); f.close()' "$@"; }
  t_step ec-rot/write env T_MIRROR_MODE=ec:2+1 "$run" -s 3 --root "$root" -- \
    mpiexec -n 4 "$bin/t_mirror" /dev/null ddio:/ec
  cp "$root/s1/ec" "$tmp/ec-rot.orig"
  flip "$root/s1/ec" 100000
  t_step ec-rot/read env "$run" -s 3 --root "$root" -- \
    mpiexec -n 4 "$bin/t_mirror" reread "$tmp/ec-rot.dump" ddio:/ec
  t_step ec-rot/cmp cmp "$tmp/ec-rot.dump" "$ec_ufs"
  t_step ec-rot/read-mended cmp "$root/s1/ec" "$tmp/ec-rot.orig"
  flip "$root/s1/ec" 200000
  t_step ec-rot/scrub "$run" -s 3 --root "$root" -- bash -c '
    "$0" scrub /ec | tee /dev/stderr | grep -q "bad 1, repaired 1, unrepairable 0" &&
    "$0" scrub /ec | grep -q "bad 0, repaired 0"' "$top/tools/ddio"
  t_step ec-rot/scrub-mended cmp "$root/s1/ec" "$tmp/ec-rot.orig"
  # the parity and the overlay are scrubbed too: a byte of server 2's
  # parity datafile (group 0's parity) and one of server 0's overlay (its
  # first byte written) changed; ddio scrub finds both, mends the parity
  # with the encoding of the group's data and the overlay with another
  # holder's copy of the same partial write: both datafiles as they were
  par="$root/s2/.ddio/parity/ec" ovl="$root/s0/.ddio/overlay/ec"
  cp "$par" "$tmp/ec-rot.par"; cp "$ovl" "$tmp/ec-rot.ovl"
  flip "$par" 100
  flip "$ovl" "$(python3 -c 'import sys
b = open(sys.argv[1], "rb").read(); print(next(i for i, c in enumerate(b) if c))' "$ovl")"
  t_step ec-rot/scrub-parity-overlay "$run" -s 3 --root "$root" -- bash -c '
    "$0" scrub /ec | tee /dev/stderr | grep -q "bad 2, repaired 2, unrepairable 0" &&
    "$0" scrub /ec | grep -q "bad 0, repaired 0"' "$top/tools/ddio"
  t_step ec-rot/parity-mended cmp "$par" "$tmp/ec-rot.par"
  t_step ec-rot/overlay-mended cmp "$ovl" "$tmp/ec-rot.ovl"
  # a decode never takes rotted bytes for the lost unit's: a byte of the
  # ec:4+2 file's first parity unit of group 0 (server 4's parity
  # datafile) changed, server 0 lost: group 0's unit 0 is decoded with the
  # other parity, every byte right; the ec:2+1 file's only parity of group
  # 0 (server 2) changed, server 0 lost: too few good units left, and the
  # read fails with the integrity error instead of returning wrong bytes
  flip "$tmp/srv-ec-42/s4/.ddio/parity/ec" 100
  t_step ec-rot-parity42/read env DDIO_RECOVER_TIMEOUT=1 "$run" -s 6 --root "$tmp/srv-ec-42" -- \
    bash -c '"$0" 0 "$1" && mpiexec -n 4 "$2" reread "$3" ddio:/ec' \
    "$here/kill-server.sh" "$tmp/srv-ec-42" "$bin/t_mirror" "$tmp/ec-rotp.dump"
  t_step ec-rot-parity42/cmp cmp "$tmp/ec-rotp.dump" "$ec_ufs"
  flip "$tmp/srv-ec-21/s2/.ddio/parity/ec" 100
  t_step ec-rot-parity21/fails env DDIO_RECOVER_TIMEOUT=1 "$run" -s 3 --root "$tmp/srv-ec-21" -- \
    bash -c '"$0" 0 "$1" || exit 1
      ! "$2/tools/ddio" cp ddio:/ec /dev/null 2> "$1.err" || exit 1
      cat "$1.err"; grep -q "disagrees with its checksum" "$1.err"' \
    "$here/kill-server.sh" "$tmp/srv-ec-21" "$top"
  # The fold (DESIGN.md 6.4): t_mirror's partial groups (held as copies in
  # the overlays) folded into parity, by ddio watch's periodic fold (one
  # pass); a second fold finds none left; every group's parity is its
  # data's in place (the overlay laid there); with server 1 lost (the
  # copies dropped by the fold) every byte still decodes right.
  root="$tmp/srv-ec-fold"; mkdir -p "$root"
  t_step ec-fold/fold env T_MIRROR_MODE=ec:2+1 "$run" -s 3 --root "$root" -- bash -c '
    mpiexec -n 4 "$0" /dev/null ddio:/ec >/dev/null &&
    "$1/tools/ddio" watch --once --grace 0 --fold-every 1 | tee /dev/stderr |
      grep -q "^/ec: ec:2+1: [1-9][0-9]* group(s) folded" &&
    "$1/tools/ddio" fold /ec | grep -q ": 0 group(s) folded"' "$bin/t_mirror" "$top"
  t_step ec-fold/parity "$top/test/server/ec_verify" 2 1 65536 ec "$root/s0" "$root/s1" "$root/s2"
  t_step ec-fold/lost env DDIO_RECOVER_TIMEOUT=1 "$run" -s 3 --root "$root" -- \
    bash -c '"$0" 1 "$1" && mpiexec -n 4 "$2" reread "$3" ddio:/ec' \
    "$here/kill-server.sh" "$root" "$bin/t_mirror" "$tmp/ec-fold.dump"
  t_step ec-fold/cmp cmp "$tmp/ec-fold.dump" "$ec_ufs"
  # A fold cut off between a group's parity and its data (a crash there):
  # server 2 stopped at its 6th fold XFER, the data step of t_mirror's
  # third partial group (50: data on servers 1 and 2, parity on 0), when
  # that parity was written from the merged data and synced everywhere and
  # server 1's data laid in place, server 2's not; the fold killed, the
  # servers too. Started again: every byte reads back; a writable open is
  # refused, naming ddio fold; with server 1 lost, its units are decoded
  # from server 2's merged data and server 0's folded parity (its state
  # kept across the restart: a decode from the data in place would be
  # wrong); ddio fold (server 1 declared out) finishes; every byte again.
  root="$tmp/srv-ec-fold-cut"; mkdir -p "$root"
  t_step ec-fold-cut/cut env T_MIRROR_MODE=ec:2+1 DDIO_TIMEOUT=30 "$run" -s 3 --root "$root" \
    --fault 2:fold:6:stop -- bash -c '
    mpiexec -n 4 "$0" /dev/null ddio:/ec >/dev/null || exit 1
    timeout -s KILL 4 "$1/tools/ddio" fold /ec; [ $? = 137 ] || exit 1
    pkill -KILL -P $PPID -x ddio-server; sleep 0.3; ! pgrep -P $PPID -x ddio-server' \
    "$bin/t_mirror" "$top"
  t_step ec-fold-cut/reread env "$run" -s 3 --root "$root" -- \
    mpiexec -n 4 "$bin/t_mirror" reread "$tmp/ec-fold-cut.dump" ddio:/ec
  t_step -w 4 ec-fold-cut/write-refused "$run" -s 3 --root "$root" -- \
    mpiexec -n 4 "$bin/t_mirror" openfails "ddio fold /ec" ddio:/ec
  t_step ec-fold-cut/lost env DDIO_RECOVER_TIMEOUT=1 "$run" -s 3 --root "$root" -- bash -c '
    "$0" 1 "$1" && mpiexec -n 4 "$2" reread "$3.lost" ddio:/ec &&
    "$4/tools/ddio" fold /ec | tee /dev/stderr | grep -q ": [1-9][0-9]* group(s) folded" &&
    mpiexec -n 4 "$2" reread "$3.folded" ddio:/ec' \
    "$here/kill-server.sh" "$root" "$bin/t_mirror" "$tmp/ec-fold-cut.dump" "$top"
  for d in "" .lost .folded; do
    t_step "ec-fold-cut/cmp$d" cmp "$tmp/ec-fold-cut.dump$d" "$ec_ufs"
  done
fi
if t_selected sums; then  # end-to-end checksums (ddio-server --checksums, ioserver/sums.h)
  # Servers with --checksums on (SUMS_ON; the default, mirrored, keeps
  # sums for files with copies only: the mirror steps run on it). 4 ranks
  # write 1 MiB each (64 KiB stripes) and sync; between runs a byte
  # at local offset 70000 of server 0's datafile is flipped behind the
  # servers' backs (each run starts fresh servers: nothing cached in
  # them). Its sector starts at local 69632, which is logical
  # 2 * 65536 + 4096 = 135168 on 2 servers and 3 * 65536 + 4096 = 200704 on 3.
  SUMS_FLIP='import sys; f = open(sys.argv[1], "r+b"); o = int(sys.argv[2]); f.seek(o); c = f.read(1); f.seek(o); f.write(bytes([c[0] ^ 0xFF]))'
  # the sidecar's header state: 1 DIRTY, 2 CLEAN (ioserver/sums.h)
  SUMS_HDR='import struct, sys; h = open(sys.argv[1], "rb").read(12); print("sidecar state", struct.unpack("<3I", h)[2]); sys.exit(struct.unpack("<3I", h)[2] != int(sys.argv[2]))'
  ufs_run sums 4 "$bin/t_sums" write; sums_ufs="$U/sums"
  SUMS_ON=(--server-opt --checksums=on)
  export top tmp SUMS_FLIP SUMS_HDR
  # none: the read fails on every rank with the file, offset and server
  root="$tmp/srv-sums"; mkdir -p "$root"
  t_step sums-none-write "$run" -s 2 --root "$root" "${SUMS_ON[@]}" -- mpiexec -n 4 "$bin/t_sums" write ddio:/sums
  t_step sums-none-clean python3 -c "$SUMS_HDR" "$root/s0/.ddio/sums/sums" 2
  t_step sums-none-flip python3 -c "$SUMS_FLIP" "$root/s0/sums" 70000
  check_step sums-none-readerr 0 'data integrity error: sums at offset 135168 \(disk 0
checksums on: sectors verified [0-9]+, bad [1-9]' \
    env ROMIO_HINTS="$DD_HINTS" "$run" -s 2 --root "$root" "${SUMS_ON[@]}" -- bash -c \
    'mpiexec -n 4 "$0" readerr ddio:/sums && "$top/tools/ddio" status' "$bin/t_sums"
  check_step sums-none-indep 0 'rank 0: read failed: .*data integrity error: sums at offset 135168
rank 3: read failed: .*data integrity error: sums at offset 135168' \
    "$run" -s 2 --root "$root" "${SUMS_ON[@]}" -- mpiexec -n 4 "$bin/t_sums" readerr-indep ddio:/sums
  # written again, the bad sector is mended: every byte reads back
  t_step sums-none-mend "$run" -s 2 --root "$root" "${SUMS_ON[@]}" -- bash -c \
    'mpiexec -n 4 "$0" write ddio:/sums && mpiexec -n 4 "$0" read /dev/null ddio:/sums' "$bin/t_sums"
  # mirror, under the servers' default (--checksums mirrored): the right
  # bytes (the ufs: file's), read from the copy
  root="$tmp/srv-sums-m"; mkdir -p "$root"
  t_step sums-mirror-write env T_SUMS_MODE=mirror "$run" -s 3 --root "$root" -- \
    mpiexec -n 4 "$bin/t_sums" write ddio:/sums
  t_step sums-mirror-flip python3 -c "$SUMS_FLIP" "$root/s0/sums" 70000
  t_step sums-mirror-read "$run" -s 3 --root "$root" -- bash -c '
    mpiexec -n 4 "$0" read "$tmp/sums-m.dump" ddio:/sums || exit 1
    "$top/tools/ddio" stats sums_bad copy_reads sums_repaired > "$tmp/sums-m.stats"; cat "$tmp/sums-m.stats"
    awk "\$2==\"sums_bad\"{b+=\$3} \$2==\"copy_reads\"{c+=\$3} \$2==\"sums_repaired\"{r+=\$3} END{exit !(b>=1 && c>=1 && r>=1)}" "$tmp/sums-m.stats"' \
    "$bin/t_sums"
  t_step sums-mirror-cmp cmp "$tmp/sums-m.dump" "$sums_ufs"
  # the read rewrote the bad sector from the copy (index 0's copy 1 is on
  # server 1): the datafile equals its mirror again
  t_step sums-mirror-repaired cmp "$root/s0/sums" "$root/s1/.ddio/copy1/sums"
  # a crash between data and sums: server 0 killed at its second flush of
  # sums (the second sync's: its data durable, the sidecar still DIRTY
  # with the first pattern's sums); restarted, the second pattern reads
  # back with no error, its sectors counted unknown
  root="$tmp/srv-sums-c"; mkdir -p "$root"
  t_step sums-crash-write env T_SUMS_SEED2=2 DDIO_RECOVER_TIMEOUT=2 "$run" -s 2 --root "$root" \
    "${SUMS_ON[@]}" --fault 0:sums:2 -- mpiexec -n 4 "$bin/t_sums" write ddio:/sums
  t_step sums-crash-dirty python3 -c "$SUMS_HDR" "$root/s0/.ddio/sums/sums" 1
  t_step sums-crash-read env T_SUMS_SEED=2 "$run" -s 2 --root "$root" "${SUMS_ON[@]}" -- bash -c '
    mpiexec -n 4 "$0" read /dev/null ddio:/sums || exit 1
    "$top/tools/ddio" stats sums_bad sums_unknown > "$tmp/sums-c.stats"; cat "$tmp/sums-c.stats"
    awk "\$2==\"sums_bad\"{b+=\$3} \$2==\"sums_unknown\"{u+=\$3} END{exit !(b==0 && u>=1)}" "$tmp/sums-c.stats"' \
    "$bin/t_sums"
  # no false error where sums must follow the file: set_size down and up,
  # preallocate (t_size), sector-sized reads and read-modify-writes
  # (t_smallio), each read back (filecmp) by fresh servers with checksums
  for prog in t_size t_smallio; do
    root="$tmp/srv-sums-$prog"; mkdir -p "$root"
    t_step "sums-$prog/ddio" "$run" -s 2 --root "$root" "${SUMS_ON[@]}" -- \
      mpiexec -n 3 "$bin/$prog" "ddio:/$prog"
    ufs_run "sums-$prog" 3 "$bin/$prog"
    t_step "sums-$prog/cmp" "$run" -s 2 --root "$root" "${SUMS_ON[@]}" -- \
      mpiexec -n 1 "$bin/filecmp" "ddio:/$prog" "ufs:$U/sums-$prog"
  done
  # a none file under the default (no option given: mirrored): as
  # before, no sidecar, and the flipped byte is read
  root="$tmp/srv-sums-off"; mkdir -p "$root"
  t_step sums-off-write "$run" -s 2 --root "$root" -- \
    mpiexec -n 4 "$bin/t_sums" write ddio:/sums
  t_step sums-off-nosidecar bash -c '[ ! -e "$0/s0/.ddio/sums" ]' "$root"
  t_step sums-off-flip python3 -c "$SUMS_FLIP" "$root/s0/sums" 70000
  t_step sums-off-read env T_SUMS_NOCHECK=1 "$run" -s 2 --root "$root" -- \
    mpiexec -n 4 "$bin/t_sums" read "$tmp/sums-off.dump" ddio:/sums
  t_step sums-off-cmp bash -c 'cmp -l "$0" "$1"; [ "$(cmp -l "$0" "$1" | awk "{print \$1}")" = 135537 ]' \
    "$tmp/sums-off.dump" "$sums_ufs"
fi
if t_selected local; then  # same-host I/O on the servers' datafiles (ddio_core_local.c)
  # t_local (reads; its writes are independent contiguous ranges too): every
  # server handed its descriptors over and served no read and no write
  # itself; with DDIO_LOCAL_READ=0 / DDIO_LOCAL_WRITE=0 (and with the hints
  # off) the servers read / write, as before
  LOCAL_ON='$2=="local_handovers"{n++; if ($3>0) ok++} $2=="read_cache_bytes"||$2=="read_disk_bytes"{rd+=$3} $2=="bytes_written"{wr+=$3} END{if (n!=NS || ok!=n || rd!=0 || wr!=0) {print "local_handovers: " ok+0 " of " NS " servers; bytes the servers read: " rd+0 ", wrote: " wr+0; exit 1}}'
  LOCAL_OFF='$2=="read_cache_bytes"{n++; if ($3>0) ok++} END{if (ok!=NS) {print "servers that read: " ok+0 " of " NS; exit 1}}'
  LOCAL_WOFF='$2=="bytes_written"{n++; if ($3>0) ok++} END{if (ok!=NS) {print "servers that wrote: " ok+0 " of " NS; exit 1}}'
  export -f stats_check; export top tmp LOCAL_ON LOCAL_OFF LOCAL_WOFF
  # The servers hand descriptors over only for files without checksums
  # (ioserver/local.c): the steps of the shortcut itself run with
  # --checksums off (said out loud; none files have none by default)
  # unless LOCAL_SUMS=on; local-sums checks the refusal.
  local_run() {  # NAME PROG FILTER RUN-ARGS...
    local name=$1 prog=$2 filter=$3 root="$tmp/srv-$1"; shift 3
    mkdir -p "$root"
    set -- --server-opt "--checksums=${LOCAL_SUMS:-off}" "$@"
    t_step "$name/ddio" "$run" --root "$root" "$@" -- bash -c \
      'mpiexec -n 3 "$0" "$1" && stats_check "$2" "$3" local_handovers read_cache_bytes read_disk_bytes bytes_written' \
      "$bin/$prog" "ddio:/$name" "$ns" "$filter"
    t_step "$name/cmp" "$run" --root "$root" "$@" -- mpiexec -n 1 "$bin/filecmp" "ddio:/$name" "ufs:$U/$prog"
  }
  ufs_run t_local 3 "$bin/t_local"
  ns=2; local_run local t_local "$LOCAL_ON" -s 2
  # three servers of two disks each, 64 KiB blocks, 64 KiB stripes
  ns=3; DDIO_TEST_HINTS=striping_unit=65536 local_run local-disks t_local "$LOCAL_ON" -s 3 -d 2 -b 65536
  ns=2; DDIO_LOCAL_READ=0 local_run local-off t_local "$LOCAL_OFF" -s 2
  ns=2; DDIO_TEST_HINTS=romio_ddio_local_read=disable local_run local-hint-off t_local "$LOCAL_OFF" -s 2
  ns=2; DDIO_LOCAL_WRITE=0 local_run local-woff t_local "$LOCAL_WOFF" -s 2
  ns=2; DDIO_TEST_HINTS=romio_ddio_local_write=disable local_run local-whint-off t_local "$LOCAL_WOFF" -s 2
  # checksums on: no handover, the servers read and write
  # every byte (and check and sum it), the file the same
  LOCAL_REFUSED='$2=="local_handovers"{n++; if ($3==0) ok++} $2=="read_cache_bytes"||$2=="read_disk_bytes"{rd+=$3} $2=="bytes_written"{wr+=$3} END{if (n!=NS || ok!=n || rd==0 || wr==0) {print "servers without a handover: " ok+0 " of " NS "; bytes they read: " rd+0 ", wrote: " wr+0; exit 1}}'
  export LOCAL_REFUSED
  ns=2; LOCAL_SUMS=on local_run local-sums t_local "$LOCAL_REFUSED" -s 2
  # t_localw (writes: own writes at once, sizes, a hole, a collective's
  # partly covered sectors raced by another rank's writes); its collective
  # goes through the servers, so only the handovers are required
  LOCAL_HO='$2=="local_handovers"{n++; if ($3>0) ok++} END{if (n!=NS || ok!=n) {print "local_handovers: " ok+0 " of " NS " servers"; exit 1}}'
  export LOCAL_HO
  ufs_run t_localw 3 "$bin/t_localw"
  ns=2; local_run localw t_localw "$LOCAL_HO" -s 2
  ns=3; DDIO_TEST_HINTS=striping_unit=65536 local_run localw-disks t_localw "$LOCAL_HO" -s 3 -d 2 -b 65536
  ns=2; DDIO_LOCAL_WRITE=0 local_run localw-woff t_localw "$LOCAL_WOFF" -s 2
  # t_wb: same-host sequential writes start their writeback as they go
  ufs_run t_wb 3 "$bin/t_wb"
  root="$tmp/srv-wb"; mkdir -p "$root"
  t_step wb/ddio "$run" -s 2 --root "$root" --server-opt --checksums=off -- \
    mpiexec -n 3 "$bin/t_wb" ddio:/wb "$root" 2
  t_step wb/cmp "$run" -s 2 --root "$root" -- mpiexec -n 1 "$bin/filecmp" ddio:/wb "ufs:$U/t_wb"
fi
if t_selected excl; then ddio_only excl 2 4 t_excl; ddio_only excl-s3 3 3 t_excl; fi
if t_selected delclose; then ddio_only delclose 2 4 t_delclose; fi
if t_selected park; then  # parked handles (common/ddio_core_park.c; off by default)
  # t_park's checks pass with parking off (the default) and on (the hint in
  # a ROMIO_HINTS file, or DDIO_PARK_MS); on, the servers see fewer OPENs.
  # The same-host bytes are counted alike with parking on, though the job
  # ends with handles still parked (never closed): reported before parking
  echo "romio_ddio_park enable" > "$tmp/park-on-hints"
  mkdir -p "$tmp/srv-park"
  t_step park "$run" -s 2 --root "$tmp/srv-park" -- bash -c '
    prog=$0 ddio=$1 hints=$2
    n() { "$ddio" stats opens | awk "{ s += \$3 } END { print s + 0 }"; }
    l() { "$ddio" stats local_write_bytes local_read_bytes | awk "{ s[\$2] += \$3 } END { print s[\"local_write_bytes\"] + 0, s[\"local_read_bytes\"] + 0 }"; }
    o0=$(n) l0=($(l))
    mpiexec -n 2 "$prog" ddio:/park-off || exit 1; o1=$(n) l1=($(l))
    ROMIO_HINTS=$hints T_PARK_WANT=enable mpiexec -n 2 "$prog" ddio:/park-hint || exit 1; o2=$(n)
    l2=($(l))
    DDIO_PARK_MS=5000 mpiexec -n 2 "$prog" ddio:/park || exit 1; o3=$(n) l3=($(l))
    off=$((o1 - o0)) hint=$((o2 - o1)) on=$((o3 - o2))
    echo "server OPENs: parking off $off, on by hint $hint, on by DDIO_PARK_MS $on"
    lw=($((l1[0] - l0[0])) $((l3[0] - l2[0]))) lr=($((l1[1] - l0[1])) $((l3[1] - l2[1])))
    echo "same-host bytes written, read: parking off ${lw[0]}, ${lr[0]}; on ${lw[1]}, ${lr[1]}"
    [ "$hint" -lt "$off" ] && [ "$on" -lt "$off" ] && [ "${lw[1]}" = "${lw[0]}" ] \
      && [ "${lr[1]}" = "${lr[0]}" ]' "$bin/t_park" "$top/tools/ddio" "$tmp/park-on-hints"
fi
if t_selected patterns; then
  ddio_vs_ufs patterns8 2 4 ddio-patterns -q -r 8 -m 2
  ddio_vs_ufs patterns8k 2 4 ddio-patterns -q -r 8192 -m 16
  ddio_vs_ufs patterns-p3 3 3 ddio-patterns -q -r 24 -m 3 -H striping_unit=5000
  # each part in many calls (-w: how the benchmark runs what would not fit
  # in one), and the views from MPI_Type_create_darray itself (-D) where
  # they are otherwise built from vectors with the same type map
  ddio_vs_ufs patterns8-win 2 3 ddio-patterns -q -r 8 -m 1 -w 0.03
  ddio_vs_ufs patterns8-darray 2 4 ddio-patterns -q -r 8 -m 1 -D -p wbc,rcc,wc,rbc,rc
  # the data went the way DDIO_TRANSPORT says: with ucx every server moved
  # read and write data by UCX (and some of it in place, some staged); with
  # tcp none did; auto is what scripts/auto-transport.sh says
  xport=$("$SRC/scripts/auto-transport.sh" --expected)
  echo "data by $xport (DDIO_TRANSPORT=${DDIO_TRANSPORT:-auto})"
  if [ "$xport" = ucx ]; then
    XPORT_RAN='$2~/^ucx_(put|get|staged)_bytes$/{n++; if ($3>0) ok++} END{if (n!=3*NS || ok!=n) {print "ucx bytes: " ok+0 " of " 3*NS " counters moved"; exit 1}}'
  else
    XPORT_RAN='$2~/^ucx_(put|get)_bytes$/{n++; if ($3==0) ok++} END{if (n!=2*NS || ok!=n) {print "ucx bytes on a TCP run"; exit 1}}'
  fi
  export -f stats_check; export top tmp XPORT_RAN
  mkdir -p "$tmp/srv-xport"
  t_step "patterns-transport" "$run" -s 2 --root "$tmp/srv-xport" -- bash -c \
    'mpiexec -n 4 "$0" -q -r 8 -m 4 -p wc,rc ddio:/x8 && mpiexec -n 4 "$0" -q -r 8192 -m 8 ddio:/x8k && stats_check 2 "$XPORT_RAN" ucx_put_bytes ucx_get_bytes ucx_staged_bytes' \
    "$(prog_path ddio-patterns)"
fi
if t_selected transport; then
  # the transport each file settles on (ddio_transport_in_use), with the data
  # written and read back through it: the environment's (auto: what
  # scripts/auto-transport.sh says for this host), a hint that forces TCP,
  # and a hint asking for UCX, which fails the open where the environment
  # gave the connections none
  envx=$("$SRC/scripts/auto-transport.sh" --expected)
  ucx_hint=$envx; [ "$envx" = ucx ] || ucx_hint=error
  ddio_only transport-env 2 3 t_transport "$envx" -
  ddio_only transport-hint-auto 2 3 t_transport "$envx" auto
  ddio_only transport-hint-tcp 2 3 t_transport tcp tcp
  ddio_only transport-hint-ucx 2 3 t_transport "$ucx_hint" ucx
  if [ "$envx" = ucx ]; then
    # UCX is attached at the first call whose data it moves, or at the
    # set_view of a described filetype: a job of small contiguous calls
    # (t_self, its bytes read back and compared) makes no UCX endpoint; one
    # of small calls through a vector view (t_smallio, checked against its
    # model) one per rank and server at its set_view; a collective after it
    # (2 ranks) two more
    EPS0='$2=="ucx_eps"{n++; if ($3==0) ok++} END{if (n!=NS || ok!=n) {print "a job of small calls made UCX endpoints"; exit 1}}'
    EPS3='$2=="ucx_eps"{n++; if ($3==3) ok++} END{if (n!=NS || ok!=n) {print "ucx_eps: " ok+0 " of " NS " servers attached the 3 ranks of the set_view"; exit 1}}'
    EPS5='$2=="ucx_eps"{n++; if ($3==5) ok++} END{if (n!=NS || ok!=n) {print "ucx_eps: " ok+0 " of " NS " servers attached the 2 ranks of the collective"; exit 1}}'
    export -f stats_check; export top tmp EPS0 EPS3 EPS5
    mkdir -p "$tmp/srv-lazy"
    t_step "transport-ucx-lazy" env ROMIO_HINTS="$DD_HINTS" "$run" -s 2 --root "$tmp/srv-lazy" --transport ucx -- bash -c \
      'mpiexec -n 3 "$0" ddio:/lazy && stats_check 2 "$EPS0" ucx_eps && mpiexec -n 3 "$1" ddio:/lazyv && stats_check 2 "$EPS3" ucx_eps && mpiexec -n 2 "$2" -q -r 8192 -m 4 -p wc,rc ddio:/lazy8k && stats_check 2 "$EPS5" ucx_eps' \
      "$(prog_path t_self)" "$(prog_path t_smallio)" "$(prog_path ddio-patterns)"
  fi
fi
if t_selected smallcoll; then
  # Small contiguous collectives (IOR's collective mode, ad_ddio_coll.c:
  # each rank's range as its own exchange, agreed before and after): 1 B to
  # 1 MiB parts side by side, some empty, read back collectively and by a
  # neighbour; the same-host shortcuts on, then every byte through the
  # servers (where the agreements around a small part spin), then parts
  # across 3 servers of 5000-byte stripes
  ddio_vs_ufs smallcoll-p4-s2 2 4 t_smallcoll
  DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 ddio_vs_ufs smallcoll-p4-s2-servers 2 4 t_smallcoll
  DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 DDIO_TEST_HINTS="striping_unit=5000" \
    ddio_vs_ufs smallcoll-p3-s3-u5000 3 3 t_smallcoll
fi
if t_selected smallcoll-fail; then
  # A server dies (SIGKILL) or hangs (SIGSTOP) at its 20th collective write
  # block of a series of 4 KiB collective writes through the servers: every
  # rank fails, in the same call, within the bound (dead: recovery gives up
  # after 1 s; hung: DDIO_TIMEOUT 2 s of silence + 5 s grace), none hangs
  for spec in coll-write:20 coll-write:20:stop; do
    case $spec in *:stop) bound=9 ;; *) bound=4 ;; esac
    root="$tmp/srv-smallcoll-${spec//:/-}"; mkdir -p "$root"
    t_step "smallcoll-fail-${spec//:/-}" env DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 DDIO_TIMEOUT=2 \
      DDIO_RECOVER_TIMEOUT=1 "$run" -s 2 --root "$root" --fault "1:$spec" -- \
      mpiexec -n 4 "$bin/t_smallcoll" -f 400 "$bound" ddio:/f
  done
fi
if t_selected coll-patterns; then
  # Kotz's patterns through the disk-directed collective: P = 1..6 (more
  # ranks than cores is fine), 1-3 servers, stripe units that do not divide
  # the record size
  P8=(-q -r 8); P8K=(-q -r 8192)
  ddio_vs_ufs_coll cpat-p1-s1-r8 1 1 ddio-patterns "${P8[@]}" -m 1
  ddio_vs_ufs_coll cpat-p2-s2-r8k-u5000 2 2 ddio-patterns "${P8K[@]}" -m 2 -H striping_unit=5000
  ddio_vs_ufs_coll cpat-p3-s3-r8-u5000 3 3 ddio-patterns "${P8[@]}" -m 1 -H striping_unit=5000
  ddio_vs_ufs_coll cpat-p4-s2-r8-u12345 2 4 ddio-patterns "${P8[@]}" -m 2 -H striping_unit=12345
  ddio_vs_ufs_coll cpat-p4-s3-r8k 3 4 ddio-patterns "${P8K[@]}" -m 4
  ddio_vs_ufs_coll cpat-p6-s3-r8k-u5000 3 6 ddio-patterns "${P8K[@]}" -m 4 -H striping_unit=5000
  ddio_vs_ufs_coll cpat-p6-s1-r8 1 6 ddio-patterns "${P8[@]}" -m 1
  ddio_vs_ufs_coll cpat-p3-s2-r8k-presort-off 2 3 ddio-patterns "${P8K[@]}" -m 2 \
    -H romio_ddio_presort=disable -H striping_unit=3000
fi
if t_selected coll; then
  # t_coll (and its second file FILE.2) on ddio: vs ufs:
  coll_both() {
    local name=$1 ns=$2 np=$3
    ddio_vs_ufs_coll "$name" "$ns" "$np" t_coll
    t_step "$name/cmp.2" "$run" -s "$ns" --root "$tmp/srv-$name" -- \
      mpiexec -n 1 "$bin/filecmp" "ddio:/$name.2" "ufs:$U/$name.2"
  }
  coll_both coll-p4-s2 2 4
  DDIO_TEST_HINTS="striping_unit=5000" coll_both coll-p3-s3-u5000 3 3
  DDIO_TEST_HINTS="striping_unit=4096" coll_both coll-p1-s1-u4k 1 1
  DDIO_TEST_HINTS="striping_unit=7777" coll_both coll-p6-s2-u7777 2 6
  # collectives of plain ranges as each rank's own XFER, the next ones
  # speculatively (romio_ddio_coll_speculate, ad_ddio_coll.c); t_coll's part
  # G makes overlapping and strided-memory calls after plain ranges, where
  # the higher rank must still win
  DDIO_TEST_HINTS="romio_ddio_coll_speculate=enable" ddio_vs_ufs coll-spec-p4-s2 2 4 t_coll
  # ROMIO's romio_cb_write / romio_cb_read = disable: each rank's independent
  # call, as in ROMIO (ad_ddio_coll.c): no collective XFER reaches the
  # servers, t_coll's checks hold (bar the overlap order, which t_coll then
  # skips), and both files are ufs:'s with the same hints
  coll_cb_disabled() {
    local name=coll-cbdisable-p4-s2 no='$2=="coll_xfers" && $3 != 0 {print $1 ": " $3 " collective XFERs"; bad = 1} END {exit bad}'
    mkdir -p "$tmp/srv-$name"
    export -f stats_check; export top tmp
    t_step "$name/ddio" "$run" -s 2 --root "$tmp/srv-$name" -- bash -c \
      'mpiexec -n 4 "$0" "$1" && stats_check 2 "$2" coll_xfers' "$bin/t_coll" "ddio:/$name" "$no"
    ufs_run "$name" 4 "$bin/t_coll"
    for f in "$name" "$name.2"; do
      t_step "$f/cmp" "$run" -s 2 --root "$tmp/srv-$name" -- \
        mpiexec -n 1 "$bin/filecmp" "ddio:/$f" "ufs:$U/$f"
    done
  }
  DDIO_TEST_HINTS="romio_cb_write=disable,romio_cb_read=disable" coll_cb_disabled
  # A collective read of a fresh 3,000,000-byte file (64 KiB blocks = stripe
  # unit): each needed block read exactly once (blocks_read == blocks on
  # every server, ceil(3000000 / 65536) = 46 in all) and issued in physical
  # order (out_of_order == 0; sorted == 1 where FIEMAP maps the datafile).
  ONCE='$2=="last.blocks"{b[$1]=$3; tb+=$3} $2=="last.blocks_read"{r[$1]=$3; tr+=$3}
    $2=="last.out_of_order"{o+=$3} $2=="last.nparticipants"{p[$1]=$3}
    END{for (s in b) if (b[s]!=r[s]) {print s ": read " r[s] " of " b[s] " blocks"; exit 1}
        if (tb!=46 || tr!=46) {print "blocks " tb ", read " tr ", want 46"; exit 1}
        if (o!=0) {print o " blocks issued out of physical order"; exit 1}
        for (s in p) if (p[s]!=4) {print s ": last collective had " p[s] " participants"; exit 1}}'
  export -f stats_check; export top tmp ONCE
  mkdir -p "$tmp/srv-fresh"
  t_step coll-fresh-read "$run" -s 2 -b 65536 --root "$tmp/srv-fresh" -- env \
    DDIO_TEST_HINTS=striping_unit=65536 bash -c 'mpiexec -n 4 "$0" -f 3000000 ddio:/fresh &&
    stats_check 2 "$ONCE" last.nparticipants last.blocks last.blocks_read last.out_of_order last.sorted' \
    "$bin/t_coll"
  # A collective 8-byte cyclic write of a fresh 16 MiB file (64 KiB blocks,
  # 128 per server): the ranks answer the pulls in any order, but every
  # block is written exactly once and the disk sees them in the planned,
  # ascending order: at most one non-consecutive write per server (the
  # first). Before blocks were held for their turn, 30-70% were not.
  WORDER='$2=="last.blocks_written"{w[$1]=$3; tw+=$3} $2=="last.nonconsec"{n[$1]=$3}
    END{if (tw!=256) {print "blocks written " tw ", want 256"; exit 1}
        for (s in n) if (n[s]>1) {print s ": " n[s] " writes out of order"; exit 1}}'
  export WORDER
  mkdir -p "$tmp/srv-worder"
  t_step coll-write-order "$run" -s 2 -b 65536 --root "$tmp/srv-worder" -- bash -c \
    'mpiexec -n 4 "$0" -q -r 8 -m 16 -p wc ddio:/worder &&
    stats_check 2 "$WORDER" last.blocks_written last.nonconsec' "$(prog_path ddio-patterns)"
  # DDIO_TIMING: every rank reports each collective call's phases and the
  # sync's waits, in the form bench/report.py parses (4 ranks: 4 lines each)
  TIMING='/^ddio-timing rank [0-9]+ (write|read) seq [0-9]+ bytes [0-9]+ describe_ms [0-9.]+ agree_ms [0-9.]+ xfer_ms [0-9.]+ agree2_ms [0-9.]+$/{c[$4]++}
    /^ddio-timing rank [0-9]+ sync barrier_ms [0-9.]+ sync_ms [0-9.]+ bcast_ms [0-9.]+$/{c["sync"]++}
    END{if (c["write"]!=4 || c["read"]!=4 || c["sync"]!=4) {print "timing lines: write " c["write"]+0 ", read " c["read"]+0 ", sync " c["sync"]+0 ", want 4 each"; exit 1}}'
  export TIMING
  mkdir -p "$tmp/srv-timing"
  t_step coll-timing "$run" -s 2 --root "$tmp/srv-timing" -- bash -c \
    'DDIO_TIMING=1 mpiexec -n 4 "$0" -q -r 8 -m 1 -p wc,rc ddio:/timing 2>"$1" && awk "$TIMING" "$1"' \
    "$(prog_path ddio-patterns)" "$tmp/timing.err"
fi
if t_selected desc-size; then
  # Descriptor bytes per participant (server counter last.desc_bytes /
  # last.nparticipants) for every Kotz pattern: < 1 KiB, and the same for
  # files 1024x apart (64 KiB and 64 MiB of 8-byte records)
  export -f stats_check; export top tmp
  DSZ='$2=="last.desc_bytes"{d+=$3; n++} $2=="last.nparticipants"{p=$3}
    END{if (p<1 || n<1) exit 1; v=d/n/p; print v > ENVIRON["DSZ_OUT"];
        if (v>=1024) {print "descriptor " v " bytes per participant"; exit 1}}'
  export DSZ
  for pat in wn wb wc wnb wbb wcb wbc wcc wcn ra rn rb rc rnb rnc rbn rbb rbc rcn rcb rcc; do
    for mib in 0.0625 64; do
      w=wb; [ "${pat:0:1}" = w ] && w=$pat
      mkdir -p "$tmp/srv-dsz"
      t_step "desc-size-$pat-$mib" env DSZ_OUT="$tmp/dsz.$pat.$mib" ROMIO_HINTS="$DD_HINTS" \
        "$run" -s 2 --root "$tmp/srv-dsz" -- \
        bash -c 'mpiexec -n 4 "$0" -q -r 8 -m "$1" -p "$2" ddio:/dsz &&
        stats_check 2 "$DSZ" last.desc_bytes last.nparticipants' \
        "$top/examples/bin/ddio-patterns" "$mib" "$w,$pat"
    done
    t_step "desc-size-$pat-same" cmp "$tmp/dsz.$pat.0.0625" "$tmp/dsz.$pat.64"
  done
fi
if t_selected desc; then
  # every descriptor compared with the view's type map (check hint: listed
  # by the driver apart from its tree builder), data checked against
  # MPI_Pack, file compared with ufs:
  DDIO_TEST_HINTS="romio_ddio_check_desc=enable,striping_unit=5000" \
    ddio_vs_ufs_coll desc-p3-s2 2 3 t_desc -n 80
  DDIO_TEST_HINTS="romio_ddio_check_desc=enable" ddio_vs_ufs_coll desc-p4-s3 3 4 t_desc -n 60
  DDIO_TEST_HINTS="romio_ddio_check_desc=enable,striping_unit=4096" \
    ddio_vs_ufs_coll desc-p1-s1 1 1 t_desc -n 40
  # trees built from datatypes (every constructor, subarray, darray; memory
  # types with negative displacements): == their type maps (check hint,
  # set by the program), builder reported as expected, file == ufs:
  ddio_vs_ufs_coll typedesc-p4-s2 2 4 t_typedesc -n 60
  DDIO_TEST_HINTS="striping_unit=5000" ddio_vs_ufs_coll typedesc-p3-s3-u5000 3 3 t_typedesc \
    -n 60 -s 7
  # a type the tree builder gives up on is logged once per rank and type
  # (the fixed case over the tree budget, set as the view twice; t_typedesc
  # checks the ddio_flat_types count): P lines naming the constructor
  mkdir -p "$tmp/srv-flatlog"
  t_step typedesc-flat-logged-once env DDIO_VERBOSE=1 "$run" -s 2 --root "$tmp/srv-flatlog" -- bash -c \
    'mpiexec -n 3 "$0" -n 0 ddio:/flatlog 2> "$1"; rc=$?; cat "$1"
     n=$(grep -c "described from its flattened pieces" "$1")
     b=$(grep -c "flattened pieces.*gave up in hindexed: .*tree budget" "$1")
     echo "$n log lines ($b hindexed)"; [ "$rc" = 0 ] && [ "$n" = 3 ] && [ "$b" = 3 ]' \
    "$bin/t_typedesc" "$tmp/flatlog.err"
  # zero-length blocks and lb/ub markers: descriptor == the type map
  # (check hint) and a data round trip, on ddio: only
  ddio_only desc0-p3-s2 2 3 t_desc0
  ddio_only desc0-p4-s3 3 4 t_desc0
  # ...and the check really fires: a deliberately skewed descriptor
  mkdir -p "$tmp/srv-desc0-skew"
  t_step desc0-check-fires env DDIO_TEST_DESC_SKEW=8 "$run" -s 2 --root "$tmp/srv-desc0-skew" -- \
    mpiexec -n 3 "$bin/t_desc0" ddio:/skew expect-intern
  # ...and so does the comparison of type-built trees with the flat ones
  t_step desc0-tree-check-fires env DDIO_TEST_TREE_SKEW=8 "$run" -s 2 --root "$tmp/srv-desc0-skew" -- \
    mpiexec -n 3 "$bin/t_desc0" ddio:/skew2 expect-intern
  # ...and of memory trees with MPI_Pack
  t_step desc0-mem-check-fires env DDIO_TEST_TREE_SKEW=8 "$run" -s 2 --root "$tmp/srv-desc0-skew" -- \
    mpiexec -n 3 "$bin/t_desc0" ddio:/skew3 expect-intern-mem
fi
if t_selected prop; then
  # property test: random nested file and memory types (every constructor,
  # zero-extent and negative-lb memory for writes), written and read back
  # collectively and independently, seeks and positions, each checked by
  # t_prop against its model of the type maps; the file and the positions
  # MPI returned (FILE.2) also == ufs: (where ROMIO misplaces a memory type,
  # t_prop packs it on ufs:; ddio follows the type map). A new seed each run, printed;
  # DDIO_PROP_SEED=N repeats one (and the P it draws). Etypes larger than
  # the pieces and the large-count calls are drawn per case; P is 1, 4, 6
  # and one drawn from the seed (2-8).
  seed=${DDIO_PROP_SEED:-$(( $(date +%s) % 1000000 + 1 ))}
  rp=$(( 2 + seed % 7 ))
  t_say "prop: seed $seed, random P $rp (repeat: DDIO_PROP_SEED=$seed $0 prop)"
  ddio_vs_ufs_2 prop-p4-s2 2 4 t_prop -n 40 -s "$seed"
  ddio_vs_ufs_2 prop-p1-s2 2 1 t_prop -n 20 -s "$((seed + 6))"
  ddio_vs_ufs_2 prop-p6-s3 3 6 t_prop -n 20 -s "$((seed + 7))"
  ddio_vs_ufs_2 "prop-p$rp-s2-random" 2 "$rp" t_prop -n 20 -s "$((seed + 8))"
  DDIO_TEST_HINTS="striping_unit=5000" ddio_vs_ufs_2 prop-p3-s3-u5000 3 3 t_prop -n 40 \
    -s "$((seed + 1))"
  DDIO_TEST_HINTS="romio_ddio_coll_ranges=disable" ddio_vs_ufs_2 prop-p2-s1-dd 1 2 t_prop \
    -n 30 -s "$((seed + 2))"
  # ROMIO's two-phase over ddio (it flattens the view itself, lazily), and
  # trees from ROMIO's flattened lists only (romio_ddio_type_desc=disable:
  # memory too, placed as ROMIO places it; t_prop's last case, whose read
  # type ROMIO flattens into overlapping pieces, over 5000-byte stripes of
  # 3 servers: the later piece must stay, as on ufs:)
  DDIO_TEST_HINTS="romio_ddio_collective=twophase" ddio_vs_ufs_2 prop-p3-s2-2ph 2 3 t_prop \
    -n 20 -s "$((seed + 3))"
  DDIO_TEST_HINTS="romio_ddio_type_desc=disable,striping_unit=5000" ddio_vs_ufs_2 \
    prop-p4-s3-flat 3 4 t_prop -n 20 -s "$((seed + 4))"
  # that read in windows of 4000 bytes instead of 4 MiB (an ordered read
  # holds one window, whatever it reads: 64 KiB per rank here, in 17, the
  # 20-byte elements straddling them), independent and collective (where
  # the rank joins the call's XFER with nothing, then reads its windows)
  DDIO_ORDERED_WINDOW=4000 DDIO_TEST_HINTS="romio_ddio_type_desc=disable,striping_unit=5000" \
    ddio_vs_ufs_2 prop-p3-s3-flat-win 3 3 t_prop -n 0
  # every descriptor and every tree compared with the type map as the
  # driver's check lists it apart from the tree builder
  DDIO_TEST_HINTS="romio_ddio_check_desc=enable" ddio_vs_ufs_2 prop-p3-s2-check 2 3 t_prop \
    -n 30 -s "$((seed + 5))"
  # zero-length blocks and the rest of what MPI allows (t_prop -z: zero
  # counts, parts of size 0, resized parts with a moved lower bound, darrays
  # leaving a rank nothing), every byte of the file, every read and position
  # against t_prop's model alone (ROMIO's ufs: misplaces, refuses or aborts
  # on some of them): 200 cases at P = 4; 60 at P = 3 over 3 servers of
  # 5000-byte stripes with every descriptor checked; then the fixed recipes
  # (-f: views ROMIO's flattening got wrong, ddio too while it followed it;
  # a view not monotone on one rank fails set_view on every rank)
  ddio_only prop-z-p4-s2 2 4 t_prop -z -n 200 -s "$((seed + 9))"
  DDIO_TEST_HINTS="striping_unit=5000,romio_ddio_check_desc=enable" ddio_only \
    prop-z-p3-s3-check 3 3 t_prop -z -n 60 -s "$((seed + 10))"
  ddio_only prop-fixed-p4-s2 2 4 t_prop -f
  # PnetCDF's view under Open MPI (t_viewout): header bytes below the
  # filetype's lb, so the next tile starts before this one ends; one tile
  # written and read collectively and independently, every byte of the
  # file against t_viewout's model (ROMIO's ufs: misplaces this view: at
  # P = 3 its file is 73024 bytes where the type map gives 40512; OMPIO's
  # == ddio's, the Open MPI suite compares them); then (-x) a collective
  # call reaching the next tile on one rank fails on every rank and writes
  # nothing, and a view refused on one rank fails set_view on every rank
  # (no rank left waiting)
  ddio_only viewout-p4-s2 2 4 t_viewout
  ddio_only viewout-p3-s3 3 3 t_viewout
  ddio_only viewout-refused-p4-s2 2 4 t_viewout -x
  ddio_only viewout-refused-p3-s3 3 3 t_viewout -x
fi
if t_selected viewcost; then
  # a view costs memory by its description, not its pieces: an 8-byte
  # cyclic view (one vector over the whole extent) at P = 4, windows of
  # 1 MiB per rank at its start, middle and end; a rank's peak RSS may grow
  # at most 16 MiB over its pre-view level, at 64 MiB and at 4 GiB of view.
  # ufs: at 256 MiB shows the measurement sees a flattened view (>= 64 MiB:
  # ROMIO's 16 bytes per 8-byte record).
  for e in 67108864 4294967296; do
    mkdir -p "$tmp/srv-viewcost"
    t_step "viewcost-ddio-$e" "$run" -s 2 --root "$tmp/srv-viewcost" -- \
      mpiexec -n 4 "$bin/t_viewcost" -e "$e" -m 16384 "ddio:/viewcost-$e"
  done
  # the same for two darray-shaped views (block x cyclic, cyclic(2) x
  # cyclic(2)) built from vectors (at 64 MiB checked against
  # MPI_Type_create_darray's type map with MPI_Pack; MPICH's own darray
  # costs memory per piece before any file is opened)
  # MPICH's own darrays (their dataloop is flattened): get_view returns the
  # type map (-c), with the driver's uncommitted copy of the filetype
  for k in darray-bc darray-cc; do
    t_step "viewcost-ddio-$k" "$run" -s 2 --root "$tmp/srv-viewcost" -- \
      mpiexec -n 4 "$bin/t_viewcost" -t "$k" -e 16777216 -c -m 16384 "ddio:/viewcost-$k"
  done
  for k in vdarray-bc vdarray-cc; do
    for e in 67108864 4294967296; do
      t_step "viewcost-ddio-$k-$e" "$run" -s 2 --root "$tmp/srv-viewcost" -- \
        mpiexec -n 4 "$bin/t_viewcost" -t "$k" -e "$e" $([ "$e" = 67108864 ] && echo -c) \
        -m 16384 "ddio:/viewcost-$k-$e"
    done
  done
  mkdir -p "$tmp/ufs"
  t_step viewcost-ufs-sees-flattening bash -c 'out=$(mpiexec -n 4 "$0" -e 268435456 "$1") \
    || exit 1; echo "$out"; g=$(sed -n "s/.*grew_kB=\([0-9]*\).*/\1/p" <<<"$out"); \
    [ "${g:-0}" -ge 65536 ]' "$bin/t_viewcost" "ufs:$tmp/ufs/viewcost"
fi
if t_selected nonblock; then
  # every nonblocking form (independent, collective, _at, several
  # outstanding on one and two files) on ddio: vs ufs:, FILE and FILE.2
  ddio_vs_ufs_2 nonblock-p3-s2 2 3 t_nonblock
  DDIO_TEST_HINTS="striping_unit=5000" ddio_vs_ufs_2 nonblock-p4-s3-u5000 3 4 t_nonblock
  DDIO_TEST_HINTS="romio_ddio_collective=twophase" ddio_vs_ufs_2 nonblock-p2-s2-twophase 2 2 \
    t_nonblock
  # overlap: servers throttled to 4 MiB/s per disk, 4 MiB per rank per
  # case (about 1 s of I/O): call < 25% and compute + wait < 80% of the sum
  # (reads through the servers: same-host reads come from the page cache,
  # unthrottled, too fast to show anything)
  mkdir -p "$tmp/srv-overlap"
  t_step nonblock-overlap env DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 "$run" -s 2 --throttle-mbps 4 --root "$tmp/srv-overlap" -- \
    mpiexec -n 2 "$bin/t_nonblock" overlap 4 ddio:/overlap
fi
if t_selected features; then
  # seek, shared/ordered pointers, split collectives, set_view etypes and
  # displacements, external32, atomic mode, APPEND/SEQUENTIAL/UNIQUE_OPEN,
  # RDONLY/WRONLY, set_size/preallocate, get_* (t_features.c): FILE and
  # FILE.2 on ddio: vs ufs:
  ddio_vs_ufs_2 features-p3-s2 2 3 t_features
  ddio_vs_ufs_2 features-p4-s3 3 4 t_features
fi
if t_selected driver; then
  ddio_only driver-basic-s1 1 4 driver_basic
  ddio_only driver-basic-s3 3 4 driver_basic
  ddio_only driver-strided-s2 2 4 driver_strided
  ddio_only driver-hints-s2 2 3 driver_hints
  # the client configuration file (DDIO_CONFIG): servers, timeout, default
  # striping; hints beat it
  mkdir -p "$tmp/srv-config"
  t_step driver-config-s2 "$run" -s 2 --root "$tmp/srv-config" -- mpiexec -n 3 "$bin/driver_hints" ddio:/config config
fi
if t_selected errors; then g_errors; fi
if t_selected durable; then
  # write + sync, SIGKILL every server (no clean shutdown), restart on the
  # same roots, read back: every synced byte must be there
  root="$tmp/srv-durable"; mkdir -p "$root"
  t_step durable-write-kill "$run" -s 2 --root "$root" -- sh -c \
    "mpiexec -n 3 '$bin/t_durable' write ddio:/durable && pkill -KILL -P \$PPID -x ddio-server && sleep 0.5"
  t_step durable-restart-check "$run" -s 2 --root "$root" -- mpiexec -n 3 "$bin/t_durable" check ddio:/durable
  # the same with write-behind on: the sync sends what the caches gathered
  root="$tmp/srv-durable-wb"; mkdir -p "$root"
  wb="romio_ddio_write_behind=4194304,romio_ddio_read_ahead=4194304"
  t_step durable-wb-write-kill env DDIO_TEST_HINTS="$wb" "$run" -s 2 --root "$root" -- sh -c \
    "mpiexec -n 3 '$bin/t_durable' write ddio:/durable && pkill -KILL -P \$PPID -x ddio-server && sleep 0.5"
  t_step durable-wb-restart-check env DDIO_TEST_HINTS="$wb" "$run" -s 2 --root "$root" -- \
    mpiexec -n 3 "$bin/t_durable" check ddio:/durable
fi
if t_selected heartbeat; then g_heartbeat; fi
if t_selected failfast; then
  # the other transport's pass: recovery off, 8 KiB records
  if [ "${DDIO_TRANSPORT:-auto}" = tcp ]; then G_FF_QUICK=1 g_failfast_all 8192
  else g_failfast_all 8192 65536; fi
fi
if t_selected restart; then
  # A server restarted in the middle of a job (test/mpi/restart-server.sh:
  # SIGTERM or SIGKILL 1 s in (4 s: in the read phase), started again on the same port and roots 0.3
  # s after it exited): the client core reconnects, opens its handles again
  # and resends what had not completed, so the job completes and its file
  # equals the ufs: run's (t_restart also reads every byte back). Modes:
  # collective writes and reads, independent strided writes and reads, a
  # sync after every collective write, nonblocking strided writes and reads
  # in flight (the driver's progress thread). Prints the restart's times and the
  # job's longest round against its median (the stall). atomic (below) runs
  # each write under a lock on server 0, the one restarted: the job
  # completes whether the restart lands while a lock is held (the client
  # core takes it again) or between two.
  rs="$here/restart-server.sh"
  # indep:KILL:4: the restart lands in the read phase (the writes take ~3 s);
  # atomic: every independent write and read under a lock, and the server
  # restarted is server 0, which holds them (the client takes them again)
  # late: nonblocking collectives, one rank 1.5 s late, so the others wait
  # at the gate when the SIGTERM lands (sent when rank 0 says so): refused while the server drains,
  # they must back off (a loop of resends held the drain, and the restart,
  # until their recovery ran out: soak-restarts in CI)
  # coll:KILL:1:3: three restarts in a row (each 0.5 s after the previous
  # one accepted again), as a soak of restarts
  # coll:TERM:1:10:150 and indep:TERM:1:10:150 (UCX): ten clean stops in a
  # row under a 150-round job each, collective and small independent
  # writes in flight; every stopped server must exit 0 (restart-server.sh
  # checks; ddio-run for the first), the job completes with the right bytes
  # (steps restart-coll-TERM-1-x10, restart-indep-TERM-1-x10)
  specs=(coll:TERM:1:1 coll:KILL:1:1 late:TERM:0:1 indep:TERM:1:1 indep:KILL:1:1 indep:KILL:4:1
    sync:KILL:1:1 nonblock:KILL:1:1 atomic:KILL:1:1 coll:KILL:1:3)
  [ "${DDIO_TRANSPORT:-auto}" = tcp ] || specs+=(coll:TERM:1:10:150 indep:TERM:1:10:150)
  for spec in "${specs[@]}"; do
    g_restart_signal "$spec"
  done
  # A restart at a precise phase: the server kills itself at a --fault point
  # (restart-server.sh fault: restarted 0.3 s after it died), where a signal
  # at a time offset cannot aim: the create and a later open, a block of a
  # collective write and read, of an independent strided write and read, a
  # sync, a close, an independent write in atomic mode (server 0, holding
  # the locks), a nonblocking write in flight (the progress thread). done:N
  # kills the server 0.2 s after its N-th DONE left, before the others of
  # that collective: the ranks without one resend (DDIO_XF_RESENT) and the
  # restarted server runs them without the answered ones after its 1 s grace
  # (its log, at info, says so; before, the call failed after DDIO_TIMEOUT);
  # created:1 kills server 1 after it created its part of the file, before
  # the answer: the client resends the create (the same DDIO_O_ONCE ids) and
  # the restarted server, finding the file made with them, answers it as the
  # create (another creator's would get EEXIST); create-half:1 kills server
  # 1 halfway through that create, its layout (with the ids) written, in its
  # first datafile, and the rest not: the resend finds the layout its own
  # and completes it (datafiles before the layout left some without one:
  # EEXIST); done:122
  # lands in the read phase (30 rounds x 4 ranks of writes first). The job
  # completes, reads every byte back, and its file equals ufs:'s.
  for spec in coll:open:1 coll:open:3 coll:created:1 coll:create-half:1 coll:coll-write:5 coll:coll-read:3 coll:done:2 \
      coll:done:122 indep:indep-write:6 indep:indep-read:4 sync:sync:3 coll:close:2 \
      atomic:indep-write:4 nonblock:indep-write:4; do
    g_restart_fault "$spec"
  done
  # A lost answer: server 0 closes the connection instead of sending the
  # DONE of the first write it completed (--fault 0:done:1:drop). The client
  # resends the same call (same client and call id) on a new connection and
  # the server answers it from its table of answers: the write is done once
  # (server 0's bytes_written is exactly the 4 MiB written to it, 5 MiB if
  # it had run twice) and its `replayed` counter is 1.
  root="$tmp/srv-restart-dup"; mkdir -p "$root"
  # (writes through the servers: a same-host write is not an XFER)
  t_step restart-dup env DDIO_LOCAL_WRITE=0 "$run" -s 2 --transport tcp --root "$root" --fault 0:done:1:drop -- bash -c '
    mpiexec -n 2 "$0" dup 8 0 ddio:/dup &&
    "$1" stats replayed bytes_written | tee /dev/stderr | awk -v s0="${DDIO_SERVERS%%,*}" "
      \$1 == s0 && \$2 == \"replayed\" { r = \$3 } \$1 == s0 && \$2 == \"bytes_written\" { w = \$3 }
      END { exit !(r == 1 && w == 4194304) }"' "$bin/t_restart" "$top/tools/ddio"
  # The answer lost with the server itself: server 0 SIGKILLs itself in place
  # of sending the DONE of the first write it completed (--fault
  # 0:done:1:crash: written, its answer noted in the table, not sent),
  # restart-server.sh starts it again on the same port and roots 0.3 s after,
  # and the client resends the call to the new process, which must answer it
  # from the table it reloaded (ioserver/replay.c): the NEW process's
  # `replayed` is 1 and its `bytes_written` is 3 MiB, the 3 later MiB of the
  # 4 server 0 holds (4 MiB if it had written the first one again). TCP and
  # UCX (the DONE goes through the TCP endpoint either way).
  for tr in tcp ucx; do
    root="$tmp/srv-restart-dup-crash-$tr"; mkdir -p "$root"
    t_step "restart-dup-crash-$tr" env DDIO_LOCAL_WRITE=0 DDIO_TIMEOUT=10 "$run" -s 2 -l info --transport "$tr" \
        --root "$root" --fault 0:done:1:crash -- bash -c '
      "$2" 0 fault 0.3 0 "$3/restarted.pid" & r=$!
      for ((k = 0; k < 1000; k++)); do [ -e "$3/restarted.pid.found" ] && break; sleep 0.01; done
      mpiexec -n 2 "$0" dup 8 0 ddio:/dup; rc=$?
      wait $r || rc=1
      grep -h "answers table" "$3/restarted.pid.log" >&2
      [ $rc = 0 ] && { "$1" stats replayed bytes_written | tee /dev/stderr | awk -v s0="${DDIO_SERVERS%%,*}" "
        \$1 == s0 && \$2 == \"replayed\" { r = \$3 } \$1 == s0 && \$2 == \"bytes_written\" { w = \$3 }
        END { exit !(r == 1 && w == 3145728) }" || rc=1; }
      [ -s "$3/restarted.pid" ] && kill "$(cat "$3/restarted.pid")"
      exit $rc' "$bin/t_restart" "$top/tools/ddio" "$rs" "$root"
  done
  # A dead job never takes a server down (rank-killed.sh says how; a
  # request thread that joined a collective after its client died once used
  # a freed UCX endpoint and crashed the server): the next job's file
  # equals ufs:'s
  root="$tmp/srv-rank-killed"; mkdir -p "$root"
  t_step rank-killed/ddio "$run" -s 2 --root "$root" -- "$here/rank-killed.sh" job \
    "$bin/t_restart" "$top/tools/ddio" 400 1.5 "$root/stats" ddio:/rank-killed
  ufs_run rank-killed 4 "$bin/t_restart" coll 5 0
  t_step rank-killed/cmp "$run" -s 2 --root "$root" -- mpiexec -n 1 "$bin/filecmp" "ddio:/rank-killed" "ufs:$U/rank-killed"
  # A client killed exactly while the servers' replies (PUTs) to it are in
  # flight, 20 times (DDIO_CLIENT_FAULT=put:1..20): the servers never crash
  # (ddio-run fails the step if one dies of a signal), let go of each dead
  # job, and serve a whole read after them, every byte checked. UCX only:
  # TCP replies are the connection's own bytes
  if [ "${DDIO_TRANSPORT:-auto}" != tcp ]; then
    root="$tmp/srv-putkill"; mkdir -p "$root"
    t_step rank-killed/put-in-flight "$run" -s 2 --transport ucx --root "$root" -- \
      "$here/rank-killed.sh" putkill "$top/examples/bin/ddio-patterns" "$top/tools/ddio" 20 "$root/stats"
  fi
fi
if t_selected faults; then
  # A server dies (SIGKILL) or hangs (SIGSTOP) at a deterministic point of
  # one phase (ddio-server --fault): every rank's call must fail within the
  # bound (a dead server: its connection drops; a hung one: DDIO_TIMEOUT 2 s
  # of silence + 5 s grace), and after a restart on the same roots every
  # byte synced before the fault reads back, nothing outside the range the
  # interrupted call was writing changed (t_fault check). The server does not
  # come back during the phase: recovery (DDIO_RECOVER_TIMEOUT=1) gives up
  # after 1 s, which the bound of a dead server includes.
  for spec in open:1 coll-write:2 coll-read:2 indep-write:2 indep-read:1 sync:1 \
      coll-write:3:stop indep-read:1:stop sync:1:stop; do
    ph=${spec%%:*}; root="$tmp/srv-fault-${spec//:/-}"; mkdir -p "$root"
    case $spec in *:stop) bound=9 ;; *) bound=4 ;; esac
    t_step "fault-${spec//:/-}/prep" "$run" -s 2 --root "$root" -- mpiexec -n 4 "$bin/t_fault" prep ddio:/f
    t_step "fault-${spec//:/-}/phase" env DDIO_TIMEOUT=2 DDIO_RECOVER_TIMEOUT=1 "$run" -s 2 --root "$root" --fault "1:$spec" -- \
      mpiexec -n 4 "$bin/t_fault" phase ddio:/f "$ph" "$bound"
    t_step "fault-${spec//:/-}/restart-check" "$run" -s 2 --root "$root" -- \
      mpiexec -n 4 "$bin/t_fault" check ddio:/f
  done
  # The same with write-behind on: small writes gathered by each rank's
  # cache, then MPI_File_sync, whose flush (same-host writes off: through
  # the servers, so the fault meets it) or SYNC meets the fault. Every rank
  # fails within the bound; what was synced before reads back.
  wb="romio_ddio_write_behind=4194304,romio_ddio_read_ahead=4194304"
  for spec in sync:1:1 indep-write:1:0; do
    pt=${spec%:*} lw=${spec##*:}; root="$tmp/srv-fault-wb-${pt//:/-}"; mkdir -p "$root"
    t_step "fault-wb-${pt//:/-}/prep" env DDIO_TEST_HINTS="$wb" "$run" -s 2 --root "$root" -- \
      mpiexec -n 4 "$bin/t_fault" prep ddio:/f
    t_step "fault-wb-${pt//:/-}/phase" env DDIO_TEST_HINTS="$wb" DDIO_LOCAL_WRITE=$lw DDIO_TIMEOUT=2 \
      DDIO_RECOVER_TIMEOUT=1 "$run" -s 2 --root "$root" --fault "1:$pt" -- \
      mpiexec -n 4 "$bin/t_fault" phase ddio:/f wb-sync 4
    t_step "fault-wb-${pt//:/-}/restart-check" env DDIO_TEST_HINTS="$wb" "$run" -s 2 --root "$root" -- \
      mpiexec -n 4 "$bin/t_fault" check ddio:/f
  done
fi
if t_selected shortsend; then g_shortsend; fi
if t_selected soak; then
  # Load: 3 MPI jobs at once against the same 2 servers, 3 rounds (12 + 2 x
  # 24 operations per job), every byte verified, the servers' heap in use
  # flat after the first round (test/mpi/soak.sh)
  root="$tmp/srv-soak"; mkdir -p "$root"
  t_step soak "$run" -s 2 --root "$root" -- "$here/soak.sh" "$bin/t_soak" 3 2 12 24 3
  grep -h "^soak" "$tmp/soak.log"
  # the same while server 1 is restarted 4 times (SIGKILL, SIGTERM in turn):
  # the client core rides through each, every byte still verified, on both
  # transports (with UCX a server killed while a client pulls from its memory
  # by CMA fails that request: the client's endpoints carry an error handler)
  root="$tmp/srv-soak-restarts"; mkdir -p "$root"
  t_step soak-restarts env DDIO_TIMEOUT=10 SOAK_RESTARTS=4 SOAK_PIDFILE="$root/restarted.pid" \
    "$run" -s 2 --root "$root" -- "$here/soak.sh" "$bin/t_soak" 3 2 12 24 3
  grep -h "^soak\|^restart:" "$tmp/soak-restarts.log"
fi
if t_selected missing; then
  # nothing listens on the second port: refused, tried again for the
  # recovery time (the timeout, 3 s: a server restarting while a job opens)
  t_step missing-refused env DDIO_SERVERS=127.0.0.1:1 DDIO_TIMEOUT=3 \
    mpiexec -n 2 "$bin/t_missing" ddio:/m 10
  # a listener that never answers: the deadline must fire
  t_silent_listener "$tmp/bh.port"
  t_step missing-silent env DDIO_SERVERS=127.0.0.1:$(cat "$tmp/bh.port") DDIO_TIMEOUT=2 \
    mpiexec -n 2 "$bin/t_missing" ddio:/m 10
  t_kill "$T_SILENT_PID"
  # names that cannot be opened as asked fail at once (well within the 30 s
  # timeout), with the class and the reason: a directory, a create under a
  # missing parent (no directory is made, as on ufs:), a name too long
  root="$tmp/srv-badname"; mkdir -p "$root"
  t_step missing-badname "$run" -s 2 --root "$root" -- bash -c '"$1" mkdir /adir &&
    mpiexec -n 2 "$0" ddio:/adir r BAD_FILE "is a directory" 2 &&
    mpiexec -n 2 "$0" ddio:/adir c BAD_FILE "is a directory" 2 &&
    mpiexec -n 2 "$0" ddio:/nodir/f c NO_SUCH_FILE "/nodir does not exist" 2 &&
    mpiexec -n 2 "$0" @5000 c BAD_FILE "name too long" 2 &&
    ! "$1" stat /nodir 2>/dev/null' "$bin/t_badname" "$top/tools/ddio"
fi
if t_selected auth; then
  # ddio-run's fresh secret authenticates every other test; here the driver
  # gets the wrong one, none, one named by the hint or by DDIO_CONFIG, and
  # one with loose permissions
  root="$tmp/srv-auth"; mkdir -p "$root"
  (umask 077; head -c 32 /dev/urandom | base64 > "$tmp/other.key")
  export tmp bin
  t_step auth-wrong-secret "$run" -s 2 --root "$root" -- bash -c \
    'DDIO_SECRET_FILE=$tmp/other.key mpiexec -n 2 "$bin/t_auth" ddio:/auth refused "authentication failed"'
  t_step auth-no-secret "$run" -s 2 --root "$root" -- bash -c \
    'env -u DDIO_SECRET_FILE mpiexec -n 2 "$bin/t_auth" ddio:/auth refused "requires authentication"'
  t_step auth-hint "$run" -s 2 --root "$root" -- bash -c \
    'T_SECRET_HINT=$DDIO_SECRET_FILE DDIO_SECRET_FILE=$tmp/other.key mpiexec -n 3 "$bin/t_auth" ddio:/auth-hint ok'
  t_step auth-config "$run" -s 2 --root "$root" -- bash -c \
    '(umask 077; echo "secret_file = $DDIO_SECRET_FILE" > "$tmp/ddio.conf")
     env -u DDIO_SECRET_FILE DDIO_CONFIG="$tmp/ddio.conf" mpiexec -n 2 "$bin/t_auth" ddio:/auth-conf ok'
  t_step auth-loose-permissions "$run" -s 2 --root "$root" -- bash -c \
    'cp "$DDIO_SECRET_FILE" "$tmp/loose.key" && chmod 644 "$tmp/loose.key" &&
     DDIO_SECRET_FILE=$tmp/loose.key mpiexec -n 2 "$bin/t_auth" ddio:/auth refused "accessible by group or others"'
fi
if t_selected abi; then
  if [ -x "$bin/t_abi.debian" ]; then
    root="$tmp/srv-abi"; mkdir -p "$root"
    t_step abi-debian-mpicc env DDIO_EXPECT_LIB="ch3:nemesis" \
      "$run" -s 2 --root "$root" -- mpiexec -n 3 "$bin/t_abi.debian" ddio:/abi
  else
    t_fail abi-debian-mpicc "t_abi.debian not built: Debian's mpicc.mpich missing?"
  fi
  # every symbol Debian's MPICH libraries export, ours export too (else a
  # Debian-built binary that uses one fails to load on ours)
  for lib in libmpich libmpichfort libmpichcxx; do
    t_step "abi-symbols-$lib" bash -c 'deb=/usr/lib/x86_64-linux-gnu/$0.so.12 ours=$1/lib/$0.so.12
      [ -e "$deb" ] || { echo "Debian'"'"'s $deb missing: scripts/install-deps.sh installs it"; exit 1; }
      [ -e "$ours" ] || { echo "$ours missing: our MPICH lacks $0"; exit 1; }
      syms() { nm -D --defined-only "$1" | awk "{print \$3}" | sort -u; }
      missing=$(comm -23 <(syms "$deb") <(syms "$ours"))
      [ -z "$missing" ] || { echo "$0.so.12 lacks $(echo "$missing" | wc -l) of Debian'"'"'s symbols:"; echo "$missing"; exit 1; }
      echo "$0.so.12: all $(syms "$deb" | wc -l) of Debian'"'"'s symbols exported"' "$lib" "$MPI"
  done
  # Fortran (use mpi; use mpi_f08) and C++ MPI-IO programs built with
  # Debian's wrappers, on ddio: and on ufs:, the files compared (t_fio leaves two)
  for p in t_fio t_f08 t_cxx; do
    if [ -x "$bin/$p.debian" ]; then
      if [ $p = t_fio ]; then ddio_vs_ufs_2 "abi-$p" 2 3 "$p.debian"; else ddio_vs_ufs "abi-$p" 2 3 "$p.debian"; fi
    else
      t_fail "abi-$p" "$p.debian not built: Debian's mpif90.mpich / mpicxx.mpich missing?"
    fi
  done
  abi_check_tests
fi

t_done
