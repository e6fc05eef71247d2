#!/usr/bin/env bash
# Debian's Open MPI on ddio: the plug-in (mca_io_romio321.so with the ddio
# driver, scripts/build-ompi-romio.sh, cached) loaded by Debian's own
# mpirun.openmpi and libmpi.so.40 through tools/ddio-run --ompi, with
# unmodified Open MPI programs:
#   c        programs of test/mpi and examples/ built with Debian's
#            mpicc.openmpi: t_coll and ddio-patterns (collective and
#            independent, Kotz's cyclic and block patterns), t_indep,
#            t_nonblock (t_desc and t_typedesc are MPICH's: their model
#            and get_info checks do not hold on Open MPI's datatypes and
#            its own MPI_File_get_info); t_locks: atomic mode and the
#            shared and ordered pointers with the ranks racing, through
#            the lock hook the build adds to ROMIO 3.2.1 (build-ompi-
#            romio.sh), 4 ranks on 3 servers of 4 KiB stripes
#   mpi4py   Debian's python3-mpi4py: MPI.File with subarray and cyclic
#            views, independent, collective and nonblocking (t_mpi4py.py);
#            every MPI.File method mpi4py's own I/O tests exercise
#            (t_mpi4py_api.py: 1, 2, 4 ranks; its errors on ROMIO's ufs:;
#            on the mount with TMPDIR there)
#   h5py     Debian's python3-h5py-mpi: parallel h5py, collective,
#            independent and chunked writes, read back (t_h5py.py)
# Each program runs on ddio: (servers started by ddio-run --ompi) and on a
# local file through Open MPI's OMPIO (the control: see ctl below), and the
# files are compared byte for byte (filecmp, built with mpicc.openmpi,
# reading both through MPI-IO); t_nonblock has no control and checks
# itself. The ddio runs of the collective programs must show the
# disk-directed collective on every server (coll_xfers > 0). One more
# test: a ddio: name with Debian's own component must fail (so the plug-in
# is what reaches ddio).
# Every command is time-bounded (t_step: DDIO_TEST_LIMIT, default 300 s;
# the first component build, OMPI_BUILD_LIMIT, default 3600 s).
#   netcdf   Debian's libnetcdf-mpi-dev (netCDF-C 4.9 over parallel HDF5):
#            t_nc4par.c, netCDF-4 collective, independent and chunked
#            writes read back in parallel, on ddio: names and on the mount
#   mount    plain paths under a ddio mount (ddio-run --ompi --mount): t_coll
#            and t_h5py, compared through the mount with POSIX cmp, the HDF5
#            file read back with serial h5py (needs /dev/fuse)
#   suite    more of test/mpi's programs (the MPICH suite's): t_indep with
#            striping hints, t_smallio, t_sameblock, t_self, t_size,
#            t_features, t_prop (random nested types: a new seed each run,
#            printed; DDIO_PROP_SEED=N repeats it), t_viewout (PnetCDF's
#            view with data below the filetype's lb), each == its control;
#            t_nonblock, t_excl, t_delclose and driver_basic check themselves. What ROMIO
#            3.2.1 cannot do on ddio is left out of t_features by name, with
#            its reason printed (T_FEATURES_SKIP: the driver's get_info
#            keys), and of t_prop the MPI 4
#            large-count calls (Open MPI 4.1 is MPI 3.1), the views ROMIO
#            3.2.1 refuses, and darray and subarray file types (ROMIO
#            3.2.1's expansions misplace some nested ones, on ufs: too). Where OMPIO itself
#            fails a program (t_size: preallocate; t_features: SEEK_END) or
#            places memory types with a moved lb otherwise than the type
#            map (t_prop), the control is Debian's own ROMIO 3.2.1 on ufs:
#            (CTL_ROMIO=1, see ctl)
#   faults   a server killed (or stopped) at a --fault point: every rank's
#            call fails within the bound, the bytes synced before survive a
#            restart (t_fault, the MPI suite's faults group); t_durable:
#            every server SIGKILLed after a sync, all bytes there after
#            the restart
#   cache    the client cache (write-behind, read-ahead hints): t_cache
#            (its atomic step too), t_smallio, t_indep, t_coll with the
#            cache on, each == OMPIO's
#   local    same-host reads and writes (the servers' datafiles handed
#            over): t_local with the servers' counters (none read or wrote
#            itself; with DDIO_LOCAL_READ=0 / _WRITE=0 they did), t_localw
#   restart  a server restarted mid-job (SIGTERM, SIGKILL; collective,
#            independent, sync, nonblocking; three restarts in a row; server
#            0 killed inside an atomic-mode write, holding its lock): the job
#            completes, its file == the control's (t_restart)
#   errors   t_errors: a path out of the store refused, the error classes of
#            bad input (what Open MPI itself answers otherwise: asserted as
#            such, see t_errors.c), a server lost under an open file (named
#            on every rank's stderr), a full and a read-only root; a server
#            that refuses connections and one that never answers: the open
#            fails on every rank within 10 s, the driver naming the server
#   busy     servers at --max-connections answer EBUSY: the open waits until
#            the held slots close, the file == OMPIO's
#   shortsend  server 0 cuts its replies mid-header and mid-payload (--fault
#            direct-send:1:short): t_smallio, ddio-patterns == OMPIO's
#   failfast a server SIGKILLed mid-collective: the call fails on every rank
#            within 4 s (rc, wb; DDIO_OMPI_MORE=1: wc, rb too)
#   heartbeat  a 13 s collective pass kept alive by a busy server's
#            heartbeats, a SIGSTOPped one failing it within timeout + grace
#            (~60 s: only with DDIO_OMPI_MORE=1 or when named)
#   (busy, shortsend, failfast, heartbeat, errors and restart are the MPI
#   suite's own groups, shared through test/mpi/groups.sh)
#   auth     a wrong secret, none, and one with loose permissions refused
#            on every rank with MPI_ERR_ACCESS (the driver's message, which
#            Open MPI's MPI_Error_string leaves out, on stderr); the secret
#            named by the hint and by DDIO_CONFIG accepted
#   transports  t_coll, t_indep and t_smallio with DDIO_TRANSPORT=tcp and
#            =ucx (same-host reads and writes off, so the bytes cross the
#            transport; the servers' ucx counters show which one moved
#            them), and =ucx with Open MPI's own pml ucx in the same
#            processes; each == the OMPIO control
#   fortran  test/mpi's Fortran programs (t_fio: use mpi, t_f08: use
#            mpi_f08) built with mpif90.openmpi, each file == OMPIO's
#   pnetcdf  Debian's libpnetcdf-dev: PnetCDF's own examples (C, F77, F90,
#            from Debian's pnetcdf source) on ddio: names, those that
#            reopen their file on the mount, each file == OMPIO's
#   pntest   PnetCDF's own test programs (its test/: testcases,
#            nonblocking, header; C, F77, F90; DDIO_OMPI_MORE=1: also
#            nc_test, fandc and the rest of testcases and nonblocking) from
#            Debian's pnetcdf source, built against Debian's libpnetcdf, run
#            on plain paths under the mount (test/ompi/pntest-run.sh): each
#            judged by its own pass line, every file it leaves == the
#            control's (OMPIO; add_var: Debian's ROMIO 3.2.1 on ufs:)
#            (needs /dev/fuse)
#   nctest   netCDF-C's own parallel tests (nc_test4, Debian's netcdf
#            source) built against libnetcdf-mpi-dev, run in directories
#            under the mount: their files == OMPIO's, and so is ncdump's
#            output of each (needs /dev/fuse)
#   DDIO_OMPI_MORE=1: the long lists of these four (see MORE below), and
#   heartbeat, failfast's other two patterns, restart's atomic SIGKILL
# usage: run-ompi-tests.sh [-k] [GROUP...]
#   groups: c mpi4py h5py netcdf mount suite cache local faults restart errors busy
#           shortsend failfast heartbeat auth transports fortran pnetcdf pntest nctest
#   (default all)
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
[ "${1:-}" = "-k" ] && { T_KEEP=1; shift; }
t_init ompi
here=$SRC/test/ompi
top=$BUILD
run=$T_RUN
tmp=$T_TMP
PY=/usr/bin/python3          # Debian's: its mpi4py and h5py (not a pyenv's python3)
export DDIO_TIMEOUT=${DDIO_TIMEOUT:-60}
# Open MPI: more ranks than cores; as root in containers and CI
export OMPI_MCA_rmaps_base_oversubscribe=1
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
command -v mpirun.openmpi >/dev/null && command -v mpicc.openmpi >/dev/null \
  || t_unusable ompi/deps "Debian's Open MPI is not installed (scripts/install-deps.sh)"

# The cache configure was given (--with-cache-dir): the one holding the
# build's MPICH (its mpich/ links into it), unless DDIO_CACHE_DIR says
if [ -z "${DDIO_CACHE_DIR:-}" ] && [ -L "$top/mpich" ]; then
  DDIO_CACHE_DIR=$(dirname "$(dirname "$(readlink -f "$top/mpich")")"); export DDIO_CACHE_DIR
fi
# debian_orig PKG: the upstream tarball of Debian's source package PKG,
# fetched once into the cache's debian-source/ (as scripts/build-*.sh do)
debian_orig() {
  local dsc f
  dsc=$("$SRC/scripts/debian-source.sh" "$1") || return 1
  f=$(ls "$(dirname "$dsc")/$1"_*.orig.tar.* 2>/dev/null | head -n1)
  [ -n "$f" ] && echo "$f"
}
# DDIO_OMPI_MORE=1: the longer lists of the fortran, pnetcdf, pntest and
# nctest groups (every PnetCDF example the MPICH runner diffs, 63 of
# PnetCDF's test programs, every nc_test4
# parallel program at every process count netCDF's run_par_test.sh uses),
# the heartbeat group (~60 s), failfast's wc and rb, restart's atomic SIGKILL
MORE=${DDIO_OMPI_MORE:-0}

# --- the plug-in: the cached build (rebuilt only when its inputs change) ----
comp=$top/ompi-romio
t_step -t "${OMPI_BUILD_LIMIT:-3600}" ompi/build "$SRC/scripts/build-ompi-romio.sh" "$SRC" "$comp" \
  || t_unusable ompi/build "scripts/build-ompi-romio.sh failed"
export DDIO_OMPI_COMPONENT_DIR=$comp

# --- programs: built with Debian's mpicc.openmpi ----------------------------
bin=$tmp/bin; mkdir -p "$bin"
for s in test/mpi/t_coll.c test/mpi/t_indep.c test/mpi/t_nonblock.c \
         test/mpi/t_smallio.c test/mpi/t_sameblock.c test/mpi/t_self.c test/mpi/t_size.c \
         test/mpi/t_features.c test/mpi/t_prop.c test/mpi/t_excl.c test/mpi/t_delclose.c \
         test/mpi/driver_basic.c test/mpi/t_fault.c test/mpi/t_durable.c test/mpi/t_auth.c \
         test/mpi/t_restart.c test/mpi/t_cache.c test/mpi/t_local.c test/mpi/t_localw.c \
         test/mpi/t_errors.c test/mpi/t_missing.c test/mpi/t_large.c test/mpi/t_viewout.c \
         test/mpi/filecmp.c examples/ddio-patterns.c; do
  mpicc.openmpi -O2 -g -Wall -Wextra -Werror -I"$SRC/test/mpi" -o "$bin/$(basename "$s" .c)" "$SRC/$s" -lm \
    || t_unusable ompi/compile "mpicc.openmpi $s"
done
mpicc.openmpi -O2 -g -Wall -Wextra -Werror -I"$SRC/test/mpi" -o "$bin/t_locks" "$here/t_locks.c" \
  || t_unusable ompi/compile "t_locks.c"
nc=/usr/lib/x86_64-linux-gnu/netcdf/mpi
mpicc.openmpi -O2 -g -Wall -Wextra -Werror -I"$nc/include" -o "$bin/t_nc4par" "$here/t_nc4par.c" \
  -L"$nc/lib" -lnetcdf -Wl,-rpath,"$nc/lib" || t_unusable ompi/compile "t_nc4par.c (libnetcdf-mpi-dev)"
U=$tmp/ufs; mkdir -p "$U"

# ctl NAME NP CMD...: the control, Open MPI's own MPI-IO (OMPIO, its
# default) on the local file $U/NAME. Not Debian's ROMIO 3.2.1 on ufs:,
# which fails three of these programs by itself (docs/CONFORMANCE.md:
# MPI_File_iwrite_all calls a NULL entry and crashes, a Kotz read pattern
# reads wrong bytes, a zero-byte collective reports bytes written). With
# CTL_ROMIO=1 it is that ROMIO on ufs:$U/NAME after all, for the programs
# OMPIO fails itself (t_size, t_features, t_local) and t_prop
ctl() {
  local name=$1 np=$2; shift 2
  if [ -n "${CTL_ROMIO:-}" ]; then
    t_step "$name/romio321-ufs" mpirun.openmpi -n "$np" --mca io romio321 "$@" "ufs:$U/$name"
  else
    t_step "$name/ompio" mpirun.openmpi -n "$np" --mca io ompio "$@" "$U/$name"
  fi
}
# ddio NAME NS NP CMD...: on ddio:/NAME through the plug-in; with OMPI_COLL
# set, every server must have run a disk-directed collective
stats_ok() {   # inside the ddio-run session
  "$top/tools/ddio" stats coll_xfers | tee /dev/stderr \
    | awk -v NS="$1" '$2=="coll_xfers"{n++; if ($3>0) ok++} END{exit !(n==NS && ok==n)}'
}
export -f stats_ok; export top
ddio() {
  local name=$1 ns=$2 np=$3; shift 3
  mkdir -p "$tmp/srv-$name"
  if [ -n "${OMPI_COLL:-}" ]; then
    t_step "$name/ddio" env ROMIO_HINTS="$tmp/dd-hints" "$run" --ompi -s "$ns" --root "$tmp/srv-$name" -- \
      bash -c 'mpirun -n "$0" "$@" && stats_ok '"$ns" "$np" "$@" "ddio:/$name"
  else
    t_step "$name/ddio" "$run" --ompi -s "$ns" --root "$tmp/srv-$name" -- mpirun -n "$np" "$@" "ddio:/$name"
  fi
}
# cmpf NAME NS SUFFIX...: ("=" for none) the ddio file(s) equal to the ufs: ones, byte for byte
cmpf() {
  local name=$1 ns=$2 sfx; shift 2
  for sfx in "$@"; do
    [ "$sfx" = = ] && sfx=""
    t_step "$name/cmp$sfx" "$run" --ompi -s "$ns" --root "$tmp/srv-$name" -- \
      mpirun -n 1 "$bin/filecmp" "ddio:/$name$sfx" "ufs:$U/$name$sfx"
  done
}
# collectives of plain ranges take the disk-directed path too
DD_HINTS="$tmp/dd-hints"
echo "romio_ddio_coll_ranges disable" > "$DD_HINTS"
# the groups the MPICH runner runs too (test/mpi/groups.sh): Open MPI in
# the session, its control ctl (OMPIO on $U/NAME)
G_RUN=("$run" --ompi) G_PAT=$bin/ddio-patterns
g_ctl() { ctl "$@"; }
# shellcheck source=test/mpi/groups.sh
. "$SRC/test/mpi/groups.sh"
both() {   # both NAME NS NP SUFFIXES CMD...
  local name=$1 ns=$2 np=$3 sfx=$4; shift 4
  ddio "$name" "$ns" "$np" "$@" && ctl "$name" "$np" "$@" && cmpf "$name" "$ns" $sfx
}

t_select "$@"
if t_selected c; then
  t_section "C programs (mpicc.openmpi)"
  OMPI_COLL=1 both coll-p4-s2 2 4 = "$bin/t_coll"
  OMPI_COLL=1 both cpat-p4-s3-r8 3 4 = "$bin/ddio-patterns" -q -r 8 -m 2 -p wc,rc,wb,rb
  both patterns-p3-s2-r8k 2 3 = "$bin/ddio-patterns" -q -r 8192 -m 16
  both indep-p3-s2 2 3 = "$bin/t_indep"
  # t_nonblock checks every byte, count and pointer itself; OMPIO does not
  # finish it (its run hangs: no control), Debian's ROMIO crashes in it
  ddio nonblock-p3-s2 2 3 "$bin/t_nonblock"
  # atomic mode and the shared and ordered pointers, ranks racing (ROMIO
  # 3.2.1's lock macros reach the servers' locks through the hook). The
  # control is Debian's ROMIO 3.2.1 on ufs: (fcntl locks): OMPIO's atomic
  # mode lets a read see half of a concurrent write (t_locks "two writes
  # mixed" in 3 of 4 runs on a local file, 2026-11-27)
  DDIO_TEST_HINTS="striping_unit=4096" CTL_ROMIO=1 both locks-p4-s3 3 4 = "$bin/t_locks"
  # the plug-in is what reaches ddio: with Debian's own component the same
  # program cannot even create a ddio: file (a local path "ddio:/..." to it)
  t_expect_fail ompi/debian-component-refuses-ddio MPI_ERR_NO_SUCH_FILE \
    "$run" -s 1 --root "$tmp/srv-refuse" -- mpirun.openmpi -n 2 --mca io romio321 "$bin/t_indep" ddio:/refuse
fi
if t_selected mpi4py; then
  t_section "mpi4py (python3-mpi4py)"
  both mpi4py-p3-s2 2 3 ".sub .cyc .nb" "$PY" "$here/t_mpi4py.py"
  both mpi4py-p4-s3 3 4 ".sub .cyc .nb" "$PY" "$here/t_mpi4py.py"
  # t_mpi4py_api.py: every MPI.File method and behaviour mpi4py 3.1's own
  # I/O tests (test_io.py, test_file.py: not to be had here) exercise, our
  # own code: each read/write family (explicit offset, individual, shared,
  # ordered, collective, split collective, nonblocking, atomic) on byte,
  # int, double, contiguous and vector types; the views of every type
  # constructor; the file-level calls; delete-on-close; the error classes.
  # Each checks itself; its three files == OMPIO's, on 1, 2 and 4 ranks.
  # Where OMPIO (the control) differs by itself, the program asserts what
  # each gives (see its comments)
  api=(".io .view .file" "$PY" "$here/t_mpi4py_api.py")
  both mpi4pyapi-p1-s1 1 1 "${api[@]}"
  both mpi4pyapi-p2-s2 2 2 "${api[@]}"
  both mpi4pyapi-p4-s3 3 4 "${api[@]}"
  # its error classes are ROMIO 3.2.1's own: the same cases on Debian's
  # romio321 on ufs: (the rest of it cannot run there: that ROMIO's
  # MPI_File_iwrite_all calls a NULL entry and crashes, see ctl)
  t_step mpi4pyapi-errors-p2/romio321-ufs env T_MPI4PY_API_ONLY=errors \
    mpirun.openmpi -n 2 --mca io romio321 "$PY" "$here/t_mpi4py_api.py" "ufs:$U/mpi4pyapi-errors"
  # on plain paths under the mount, with TMPDIR there for the ranks only
  # (mpirun -x): mpirun's stays local, since Open MPI's session directory
  # under a TMPDIR on the mount fails orte_init (no FIFOs, no PMIx shared
  # memory on a FUSE file system: "CANNOT CREATE FIFO", PMIx dstore
  # errors). mpi4py's test makes its file with tempfile.mkstemp and opens
  # it DELETE_ON_CLOSE|UNIQUE_OPEN; issue #25 found its nonblocking calls
  # failing there (ENOENT) and 2 ranks hanging. The files == the 2-rank
  # control's (cmp through the mount), nothing left in TMPDIR
  if t_have_fuse; then
    mnt=$tmp/mnt; mkdir -p "$mnt" "$tmp/srv-mpi4pyapi-mount"
    t_step -t 120 mpi4pyapi-mount-p2-s2/ddio "$run" --ompi --mount "$mnt" -s 2 --root "$tmp/srv-mpi4pyapi-mount" -- \
      bash -c 'mkdir -p "$0/tmp" && mpirun -x TMPDIR="$0/tmp" -n 2 "$1" "$2" "$0/mpi4pyapi" || exit 1
        for s in .io .view .file; do cmp "$0/mpi4pyapi$s" "$3/mpi4pyapi-p2-s2$s" || exit 1; done
        left=$(ls -A "$0/tmp"); [ -z "$left" ] || { echo "left in TMPDIR: $left"; exit 1; }' \
      "$mnt" "$PY" "$here/t_mpi4py_api.py" "$U"
  else
    t_skip mpi4pyapi-mount-p2-s2 "needs the mount (/dev/fuse)"
  fi
fi
if t_selected h5py; then
  t_section "h5py (python3-h5py-mpi)"
  both h5py-p3-s2 2 3 = "$PY" "$here/t_h5py.py"
  both h5py-p4-s3 3 4 = "$PY" "$here/t_h5py.py"
fi
# ddio_only NAME NS NP CMD...: a program that checks itself, on ddio: only
ddio_only() { ddio "$@"; }
if t_selected suite; then
  t_section "the MPI suite's programs (mpicc.openmpi)"
  DDIO_TEST_HINTS="striping_unit=4096" both indep-s2-u4k 2 3 = "$bin/t_indep"
  DDIO_TEST_HINTS="striping_unit=65536" both indep-s3-u64k 3 4 = "$bin/t_indep"
  DDIO_TEST_HINTS="striping_unit=3000,striping_factor=2" both indep-s3-u3000-f2 3 2 = "$bin/t_indep"
  both smallio-p3-s2 2 3 = "$bin/t_smallio"
  DDIO_TEST_HINTS="striping_unit=6000,striping_factor=2" both smallio-p2-s3-u6000 3 2 = "$bin/t_smallio"
  both sameblock-p4-s1 1 4 = "$bin/t_sameblock"
  both sameblock-p3-s2 2 3 = "$bin/t_sameblock"
  both self-p3-s2 2 3 = "$bin/t_self"
  # more than 2^31 bytes in one collective call through an int count of a
  # 1 MiB type (Open MPI 4.1 has no _c routines): every word checked
  OMPI_COLL=1 ddio_only large-p2-s2 2 2 "$bin/t_large" 2100
  # OMPIO's own preallocate fails t_size (the size it reports after it)
  CTL_ROMIO=1 both size-p4-s2 2 4 = "$bin/t_size"
  # ROMIO 3.2.1's get_info lacks the driver's keys: that part is left out
  # (shared pointers and atomic mode run: the lock hook); OMPIO fails its
  # own SEEK_END check
  export T_FEATURES_SKIP="info"
  CTL_ROMIO=1 both features-p3-s2 2 3 "= .2" "$bin/t_features"
  CTL_ROMIO=1 both features-p4-s3 3 4 "= .2" "$bin/t_features"
  unset T_FEATURES_SKIP
  # t_prop: every byte, read and position against t_prop's model of the
  # type maps, FILE and the positions MPI returned (FILE.2) also == Debian's
  # ROMIO 3.2.1 on ufs: (where t_prop packs the memory ROMIO would
  # misplace). Left out of these, said by t_prop: views ROMIO 3.2.1 refuses
  # at set_view (MPI_ERR_TYPE, on ufs: too: T_PROP_REFUSED), darray and
  # subarray file types (ROMIO 3.2.1's expansions misplace some nested
  # ones on ufs:, the control: seeds 789776 P = 3 case 4, 789775 P = 4 case
  # 21, 11 P = 4 case 9), the MPI 4 large-count calls
  seed=${DDIO_PROP_SEED:-$(( $(date +%s) % 1000000 + 1 ))}
  t_say "prop: seed $seed (repeat: DDIO_PROP_SEED=$seed $0 suite)"
  export T_PROP_REFUSED=1 T_PROP_NO_DARRAY=1 T_PROP_NO_SUBARRAY=1
  CTL_ROMIO=1 both prop-p4-s2 2 4 "= .2" "$bin/t_prop" -n 30 -s "$seed"
  DDIO_TEST_HINTS="striping_unit=5000" CTL_ROMIO=1 both prop-p3-s3-u5000 3 3 "= .2" \
    "$bin/t_prop" -n 30 -s "$((seed + 1))"
  DDIO_TEST_HINTS="romio_ddio_coll_ranges=disable" CTL_ROMIO=1 both prop-p2-s1-dd 1 2 "= .2" \
    "$bin/t_prop" -n 20 -s "$((seed + 2))"
  unset T_PROP_REFUSED T_PROP_NO_DARRAY T_PROP_NO_SUBARRAY
  # zero-length blocks and the rest of what MPI allows (t_prop -z), darray
  # and subarray in (the driver expands them by the standard, not through
  # ROMIO 3.2.1), and the fixed recipes (-f), against the model alone
  ddio_only prop-z-p4-s2 2 4 "$bin/t_prop" -z -n 150 -s "$((seed + 3))"
  ddio_only prop-fixed-p4-s2 2 4 "$bin/t_prop" -f
  # PnetCDF's view as Open MPI makes it (t_viewout: header bytes below the
  # subarray's sticky lb), one tile collectively and independently, ==
  # OMPIO's; then (-x) a collective call reaching the next tile on one rank
  # fails on every rank and writes nothing
  both viewout-p4-s2 2 4 = "$bin/t_viewout"
  ddio_only viewout-refused-p3-s3 3 3 "$bin/t_viewout" -x
  # nonblocking forms on 3 servers with 5000-byte stripes, and through the
  # two-phase fallback (whose nonblocking collectives are blocking ones
  # here: ad_ddio_compat.h); t_nonblock checks itself (OMPIO does not
  # finish it: no control)
  DDIO_TEST_HINTS="striping_unit=5000" ddio_only nonblock-p4-s3-u5000 3 4 "$bin/t_nonblock"
  DDIO_TEST_HINTS="romio_ddio_collective=twophase" ddio_only nonblock-p2-s2-twophase 2 2 "$bin/t_nonblock"
  ddio_only excl-p4-s2 2 4 "$bin/t_excl"
  ddio_only delclose-p4-s2 2 4 "$bin/t_delclose"
  ddio_only driver-basic-p4-s3 3 4 "$bin/driver_basic"
fi
if t_selected faults; then
  t_section "faults: a server killed or stopped mid-call (ddio-server --fault)"
  # as the MPI suite's faults group: every rank's call fails within the
  # bound (a dead server: 4 s; a hung one: DDIO_TIMEOUT 2 s + 5 s grace),
  # then after a restart on the same roots every synced byte is there
  for spec in open:1 coll-write:2 coll-read:2 indep-write:2 indep-read:1 sync:1 \
      coll-write:3:stop indep-read:1:stop sync:1:stop; do
    ph=${spec%%:*}; root="$tmp/srv-fault-${spec//:/-}"; mkdir -p "$root"
    case $spec in *:stop) bound=9 ;; *) bound=4 ;; esac
    t_step "fault-${spec//:/-}/prep" "$run" --ompi -s 2 --root "$root" -- mpirun -n 4 "$bin/t_fault" prep ddio:/f
    t_step "fault-${spec//:/-}/phase" env DDIO_TIMEOUT=2 DDIO_RECOVER_TIMEOUT=1 "$run" --ompi -s 2 --root "$root" \
      --fault "1:$spec" -- mpirun -n 4 "$bin/t_fault" phase ddio:/f "$ph" "$bound"
    t_step "fault-${spec//:/-}/restart-check" "$run" --ompi -s 2 --root "$root" -- \
      mpirun -n 4 "$bin/t_fault" check ddio:/f
  done
  # write + sync, SIGKILL every server, restart on the same roots, read back
  root="$tmp/srv-durable"; mkdir -p "$root"
  t_step durable-write-kill "$run" --ompi -s 2 --root "$root" -- sh -c \
    "mpirun -n 3 '$bin/t_durable' write ddio:/durable && pkill -KILL -P \$PPID -x ddio-server && sleep 0.5"
  t_step durable-restart-check "$run" --ompi -s 2 --root "$root" -- mpirun -n 3 "$bin/t_durable" check ddio:/durable
fi
if t_selected cache; then
  t_section "the client cache (write-behind, read-ahead hints)"
  # t_cache against MPI's consistency rules, as the MPI suite's cache group
  # (its atomic-mode step too: the lock hook); with the cache off (no
  # hints) get_info cannot show the driver's defaults (Open MPI's copy of
  # the hints): that check is left out there
  DDIO_TEST_HINTS="romio_ddio_write_behind=4194304,romio_ddio_read_ahead=4194304" \
    T_CACHE_WB=4194304 T_CACHE_RA=4194304 both cache-p3-s2 2 3 = "$bin/t_cache"
  DDIO_TEST_HINTS="romio_ddio_write_behind=65536,romio_ddio_read_ahead=32768,striping_unit=6000" \
    T_CACHE_WB=65536 T_CACHE_RA=32768 both cache-small-p2-s3 3 2 = "$bin/t_cache"
  T_CACHE_SKIP="info" both cache-off-p2-s2 2 2 = "$bin/t_cache"
  unset T_CACHE_SKIP
  on="romio_ddio_write_behind=4194304,romio_ddio_read_ahead=4194304"
  DDIO_TEST_HINTS="$on" both cache-smallio-p3-s2 2 3 = "$bin/t_smallio"
  DDIO_TEST_HINTS="$on,striping_unit=4096" both cache-indep-p3-s2 2 3 = "$bin/t_indep"
  DDIO_TEST_HINTS="$on" OMPI_COLL=1 both cache-coll-p4-s2 2 4 = "$bin/t_coll"
fi
if t_selected local; then
  t_section "same-host reads and writes on the servers' datafiles"
  # as the MPI suite's local group: with the servers on this host, every
  # server handed its datafiles' descriptors over and read and wrote
  # nothing itself (t_local); with DDIO_LOCAL_READ=0 / DDIO_LOCAL_WRITE=0
  # the servers do; t_localw's own writes, sizes, holes and raced sectors.
  # The control of t_local is Debian's ROMIO 3.2.1 on ufs: (OMPIO fails its
  # own check: a rank's collective write read back at once)
  LOCAL_ON='$2=="local_handovers"{n++; if ($3>0) ok++} $2=="read_cache_bytes"||$2=="read_disk_bytes"{rd+=$3} $2=="bytes_written"{wr+=$3} END{if (n!=NS || ok!=n || rd!=0 || wr!=0) {print "local_handovers: " ok+0 " of " NS " servers; bytes the servers read: " rd+0 ", wrote: " wr+0; exit 1}}'
  LOCAL_OFF='$2=="read_cache_bytes"{n++; if ($3>0) ok++} END{if (ok!=NS) {print "servers that read: " ok+0 " of " NS; exit 1}}'
  LOCAL_WOFF='$2=="bytes_written"{n++; if ($3>0) ok++} END{if (ok!=NS) {print "servers that wrote: " ok+0 " of " NS; exit 1}}'
  LOCAL_HO='$2=="local_handovers"{n++; if ($3>0) ok++} END{if (n!=NS || ok!=n) {print "local_handovers: " ok+0 " of " NS " servers"; exit 1}}'
  stats_filter() {   # NS FILTER: inside the session, every server's counters
    "$top/tools/ddio" stats local_handovers read_cache_bytes read_disk_bytes bytes_written \
      | tee /dev/stderr | awk -v NS="$1" "$2"
  }
  export -f stats_filter
  local_run() {   # NAME NS PROG FILTER: on ddio, the counters, == the control
    local name=$1 ns=$2 prog=$3 filter=$4
    mkdir -p "$tmp/srv-$name"
    t_step "$name/ddio" "$run" --ompi -s "$ns" --root "$tmp/srv-$name" -- \
      bash -c 'mpirun -n 3 "$0" "$1" && stats_filter "$2" "$3"' "$bin/$prog" "ddio:/$name" "$ns" "$filter"
    ctl "$name" 3 "$bin/$prog" && cmpf "$name" "$ns" =
  }
  CTL_ROMIO=1 local_run local-p3-s2 2 t_local "$LOCAL_ON"
  CTL_ROMIO=1 DDIO_LOCAL_READ=0 local_run local-off-p3-s2 2 t_local "$LOCAL_OFF"
  CTL_ROMIO=1 DDIO_LOCAL_WRITE=0 local_run local-woff-p3-s2 2 t_local "$LOCAL_WOFF"
  local_run localw-p3-s2 2 t_localw "$LOCAL_HO"
  DDIO_LOCAL_WRITE=0 local_run localw-woff-p3-s2 2 t_localw "$LOCAL_WOFF"
fi
if t_selected restart; then
  t_section "a server restarted mid-job (test/mpi/restart-server.sh)"
  # as the MPI suite's restart group (test/mpi/groups.sh): server 1
  # SIGTERMed or SIGKILLed 1 s in (4 s: in the read phase), started again on
  # the same port and roots 0.3 s after it exited; the job completes
  # (t_restart reads every byte back) and its file == the control's.
  # coll:KILL:1:3: three restarts in a row
  for spec in coll:TERM:1:1 coll:KILL:1:1 indep:TERM:1:1 indep:KILL:1:1 indep:KILL:4:1 \
      sync:KILL:1:1 nonblock:KILL:1:1 coll:KILL:1:3; do
    g_restart_signal "$spec"
  done
  # with a lock held: in atomic mode every write and read runs under a
  # byte-range lock on server 0 (the lock hook); server 0 kills itself at
  # the 4th block of an independent write, inside its lock, and comes back;
  # the client core takes the lock again from the new server (a reclaim,
  # in its lock grace: that round takes ~3.3 s) and resends the write
  g_restart_fault atomic:indep-write:4
  # DDIO_OMPI_MORE=1: also a SIGKILL at a time (landing in a lock or between two)
  [ "$MORE" = 1 ] && g_restart_signal atomic:KILL:1:1
fi
if t_selected errors; then
  t_section "errors: bad input, a lost server, full and read-only roots, servers down or silent"
  # the MPI suite's errors group (test/mpi/groups.sh), t_errors built for
  # Open MPI: where Open MPI itself answers otherwise it asserts what Open
  # MPI gives (its MPI_File_set_view refuses non-monotone types with
  # MPI_ERR_TYPE before ROMIO sees them; its MPI_File_set_info never reaches
  # the driver), and the lost server is named on every rank's stderr
  # (--tag-output; MPI_Error_string gives only the class). No control for
  # the classes: Debian's ROMIO 3.2.1 on ufs: accepts a negative
  # displacement, OMPIO ranks that disagree on the amode
  G_MPI_TAG=--tag-output g_errors
  # the open fails on every rank; Open MPI's MPI_Error_string gives only the
  # class, so the driver's message naming the server is looked for on stderr
  export bin comp_path="$DDIO_OMPI_COMPONENT_DIR:/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3"
  missing() {   # missing NAME SERVERS TEXT: refused within 10 s, TEXT on every rank's stderr
    local name=$1 srv=$2 text=$3
    t_step "$name" env DDIO_SERVERS="$srv" DDIO_TIMEOUT="${4:-3}" OMPI_MCA_io=romio321 \
      OMPI_MCA_mca_base_component_path="$comp_path" bash -c \
      'out=$(mpirun.openmpi -n 2 "$bin/t_missing" ddio:/m 10 2>&1); rc=$?; echo "$out"
       [ $rc = 0 ] && [ "$(grep -c "$0" <<<"$out")" -ge 2 ]' "$text"
  }
  missing missing-refused 127.0.0.1:1 "cannot connect to server 127.0.0.1:1"
  t_silent_listener "$tmp/bh.port"
  missing missing-silent "127.0.0.1:$(cat "$tmp/bh.port")" "no answer to HELLO before the deadline" 2
  t_kill "$T_SILENT_PID"
fi
if t_selected busy; then
  t_section "busy: servers refusing with EBUSY until held slots close"
  g_busy
fi
if t_selected shortsend; then
  t_section "shortsend: replies cut mid-message, the writer thread sends the rest"
  g_shortsend
fi
if t_selected failfast; then
  t_section "failfast: a server killed mid-collective fails the call on every rank within 4 s"
  # the disk-directed collective read and plain-range write; with
  # DDIO_OMPI_MORE=1 also wc and rb, as on MPICH (each ~5 s)
  if [ "$MORE" = 1 ]; then g_failfast rc wc rb wb; else g_failfast rc wb; fi
fi
if t_selected heartbeat; then
  t_section "heartbeat: a busy server's heartbeats keep a long collective alive, a hung one fails it"
  # ~60 s (two 13 s passes throttled, each slower under Open MPI's polling
  # ranks on 2 cores): with DDIO_OMPI_MORE=1 only, or named
  if [ "$MORE" = 1 ] || [ ${#T_SELECT[@]} -gt 0 ]; then g_heartbeat
  else t_skip heartbeat "~60 s: DDIO_OMPI_MORE=1 (or: run-ompi-tests.sh heartbeat)"; fi
fi
if t_selected auth; then
  t_section "authentication"
  root="$tmp/srv-auth"; mkdir -p "$root"
  (umask 077; head -c 32 /dev/urandom | base64 > "$tmp/other.key")
  export tmp bin
  # refused: MPI_ERR_ACCESS on every rank (t_auth), the driver's reason on
  # stderr (Open MPI's MPI_Error_string gives the class only)
  refused() {   # refused NAME TEXT ENV...
    local name=$1 text=$2; shift 2
    t_step "auth-$name" "$run" --ompi -s 2 --root "$root" -- bash -c \
      'out=$(env "$@" mpirun -n 2 "$bin/t_auth" ddio:/auth refused "$0" 2>&1); rc=$?; echo "$out"
       [ $rc = 0 ] && [ "$(grep -c "$0" <<<"$out")" -ge 2 ]' "$text" "$@"
  }
  refused wrong-secret "authentication failed" DDIO_SECRET_FILE="$tmp/other.key"
  refused no-secret "requires authentication" -u DDIO_SECRET_FILE
  cp "$tmp/other.key" "$tmp/loose.key" && chmod 644 "$tmp/loose.key"
  refused loose-permissions "accessible by group or others" DDIO_SECRET_FILE="$tmp/loose.key"
  t_step auth-hint "$run" --ompi -s 2 --root "$root" -- bash -c \
    'T_SECRET_HINT=$DDIO_SECRET_FILE DDIO_SECRET_FILE=$tmp/other.key mpirun -n 3 "$bin/t_auth" ddio:/auth-hint ok'
  t_step auth-config "$run" --ompi -s 2 --root "$root" -- bash -c \
    '(umask 077; echo "secret_file = $DDIO_SECRET_FILE" > "$tmp/ddio.conf")
     env -u DDIO_SECRET_FILE DDIO_CONFIG="$tmp/ddio.conf" mpirun -n 2 "$bin/t_auth" ddio:/auth-conf ok'
fi
if t_selected transports; then
  t_section "both transports (DDIO_TRANSPORT), and UCX in Open MPI's pml too"
  # xport_ok NS tcp|ucx: inside the session, the servers' UCX counters:
  # with ucx every server attached UCX endpoints and bytes moved by UCX
  # (not on every server: small independent calls go inline on the TCP
  # connection by design), with tcp no endpoint and no byte
  xport_ok() {
    "$top/tools/ddio" stats ucx_eps ucx_put_bytes ucx_get_bytes | tee /dev/stderr | awk -v NS="$1" -v X="$2" '
      $2=="ucx_eps"{n++; if ($3>0) e++} $2~/^ucx_(put|get)_bytes$/{b+=$3}
      END{exit !(n==NS && (X=="ucx" ? e==NS && b>0 : e==0 && b==0))}'
  }
  export -f xport_ok
  for x in tcp ucx ucx-pml; do
    xp=${x%-pml}; extra=()
    [ "$x" = ucx-pml ] && extra=(OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any)
    for p in coll:t_coll:4 indep:t_indep:3 smallio:t_smallio:3; do
      IFS=: read -r tn prog np <<<"$p"; name="xport-$x-$tn"; mkdir -p "$tmp/srv-$name"
      t_step "$name/ddio" env DDIO_TRANSPORT="$xp" DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0 "${extra[@]}" \
        "$run" --ompi -s 2 --root "$tmp/srv-$name" -- \
        bash -c 'mpirun -n "$0" "$1" "$2" && xport_ok 2 "$3"' "$np" "$bin/$prog" "ddio:/$name" "$xp"
      ctl "$name" "$np" "$bin/$prog" && cmpf "$name" 2 =
    done
  done
fi
if t_selected netcdf; then
  t_section "netCDF-4 parallel (libnetcdf-mpi-dev)"
  OMPI_COLL=1 both nc4par-p3-s2 2 3 = "$bin/t_nc4par"
  both nc4par-p4-s3 3 4 = "$bin/t_nc4par"
fi
if t_selected mount && t_have_fuse; then
  t_section "plain paths under a ddio mount (ddio-run --ompi --mount)"
  mnt=$tmp/mnt; mkdir -p "$mnt"
  # ROMIO 3.2.1 routes the plain path to the driver (the collective ran on
  # every server), and the bytes read through the mount (POSIX cmp) equal
  # the control's; the HDF5 file also reads back with serial h5py there
  h5cmp='import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
bad = [k for k in b if not np.array_equal(a[k][...], b[k][...])]
sys.exit("serial h5py: datasets differ: %s" % bad if bad or sorted(a) != sorted(b) else 0)'
  export mnt h5cmp PY
  ctl mount-coll 3 "$bin/t_coll" &&
    t_step mount-coll/ddio "$run" --ompi --mount "$mnt" -s 2 --root "$tmp/srv-mount-coll" -- bash -c \
      'mpirun -n 3 "$0" "$mnt/mount-coll" && stats_ok 2 && cmp "$mnt/mount-coll" "$1/mount-coll" &&
       cmp "$mnt/mount-coll.2" "$1/mount-coll.2"' "$bin/t_coll" "$U"
  ctl mount-nc4par 3 "$bin/t_nc4par" &&
    t_step mount-nc4par/ddio "$run" --ompi --mount "$mnt" -s 2 --root "$tmp/srv-mount-nc4par" -- bash -c \
      'mpirun -n 3 "$0" "$mnt/mount-nc4par" && cmp "$mnt/mount-nc4par" "$1/mount-nc4par"' "$bin/t_nc4par" "$U"
  ctl mount-h5py 3 "$PY" "$here/t_h5py.py" &&
    t_step mount-h5py/ddio "$run" --ompi --mount "$mnt" -s 2 --root "$tmp/srv-mount-h5py" -- bash -c \
      'mpirun -n 3 "$PY" "$0" "$mnt/mount-h5py" && cmp "$mnt/mount-h5py" "$1/mount-h5py" &&
       "$PY" -c "$h5cmp" "$mnt/mount-h5py" "$1/mount-h5py"' "$here/t_h5py.py" "$U"
fi
# one_session NAME NS NP CMD...: the control (ctl), then CMD on ddio:/NAME
# and the byte compare with the control's file in one ddio-run session (one
# server start where both/cmpf take two)
one_session() {
  local name=$1 ns=$2 np=$3; shift 3
  mkdir -p "$tmp/srv-$name"
  ctl "$name" "$np" "$@" &&
    t_step "$name/ddio+cmp" "$run" --ompi -s "$ns" --root "$tmp/srv-$name" -- bash -c \
      'mpirun -n "$0" "${@:4}" "ddio:/$1" && mpirun -n 1 "$2" "ddio:/$1" "ufs:$3/$1"' \
      "$np" "$name" "$bin/filecmp" "$U" "$@"
}
if t_selected fortran; then
  t_section "Fortran (mpif90.openmpi)"
  # the MPICH suite's Fortran programs (test/mpi: t_fio with use mpi, a
  # cyclic vector view collectively, nonblocking and subarray-view
  # independent calls, two files; t_f08 with use mpi_f08), built with
  # Debian's mpif90.openmpi, each file == OMPIO's. t_fio's view is of
  # MPI_INTEGER8, not of MPI_Type_create_f90_integer's type (T_FIO_NO_F90):
  # ROMIO 3.2.1's MPI_File_close fails on that (Debian's component on ufs:
  # too; OMPIO does not)
  for p in t_fio t_f08; do
    t_step "fortran/compile-$p" mpif90.openmpi -O2 -Wall -Werror -o "$bin/$p" "$SRC/test/mpi/$p.f90"
  done
  # ddio-run --ompi --check accepts Open MPI programs (a Fortran binary,
  # Debian's python3 through its mpi4py) and says why an MPICH one is not
  t_step fortran/check-ompi bash -c 'out=$("$@" 2>&1); rc=$?; echo "$out"; [ $rc = 0 ] &&
    [ "$(grep -c "libmpi.so.40 => .*: Open MPI, served by the ddio plug-in" <<< "$out")" = 2 ]' \
    _ "$run" --ompi --check "$bin/t_fio" "$PY"
  t_expect_fail -x 1 fortran/check-ompi-mpich "an MPICH program: run it without --ompi" \
    "$run" --ompi --check "$top/examples/bin/ddio-patterns"
  export T_FIO_NO_F90=1
  OMPI_COLL=1 both fio-p3-s2 2 3 "= .2" "$bin/t_fio"
  [ "$MORE" = 1 ] && both fio-p4-s3 3 4 "= .2" "$bin/t_fio"
  unset T_FIO_NO_F90
  OMPI_COLL=1 both f08-p3-s2 2 3 = "$bin/t_f08"
  [ "$MORE" = 1 ] && both f08-p4-s3 3 4 = "$bin/t_f08"
fi
if t_selected pnetcdf; then
  t_section "PnetCDF (libpnetcdf-dev): PnetCDF's examples"
  # PnetCDF's own examples (C, Fortran 77, Fortran 90; Debian's pnetcdf
  # source, the cached tarball scripts/build-pnetcdf.sh uses) built with
  # Debian's Open MPI wrappers against Debian's libpnetcdf, 4 processes on
  # ddio:/NAME (PnetCDF's classic formats straight over MPI-IO), each file
  # == OMPIO's. Those that reopen their file (PN_REOPEN) run on a plain
  # path under the ddio mount instead: PnetCDF's ncmpi_open checks a file's
  # format with POSIX calls, which cannot open a ddio: name
  pn=$tmp/pnetcdf; pnb=$bin/pnetcdf; mkdir -p "$pn" "$pnb"
  PN_REOPEN=" C/block_cyclic C/column_wise C/global_attributes C/req_all C/time_var C/vard_int "
  PN_REOPEN+="F77/block_cyclic F77/time_var F77/vard_int F90/block_cyclic F90/vard_int "
  PN_PROGS="C/collective_write C/vard_int F77/column_wise F90/column_wise"
  # DDIO_OMPI_MORE=1: the examples test/pnetcdf/run-pnetcdf-tests.sh diffs on MPICH
  [ "$MORE" = 1 ] && PN_PROGS="$(printf 'C/%s ' collective_write nonblocking_write column_wise \
    block_cyclic flexible_api mput put_varn_float put_varn_int put_vara transpose vard_int \
    i_varn_int64 bput_varn_uint bput_varn_int64 fill_mode ghost_cell req_all vard_mvars time_var \
    global_attributes) $(printf 'F77/%s ' nonblocking_write column_wise block_cyclic flexible_api \
    put_varn_int put_varn_real put_vara transpose vard_int i_varn_real bput_varn_int8 fill_mode \
    time_var) $(printf 'F90/%s ' nonblocking_write column_wise block_cyclic flexible_api \
    put_varn_int put_varn_real put_var transpose vard_int fill_mode)"
  pn_build() {   # the examples of PN_PROGS, and the Fortran ones' utils.o
    local tb dp d p ex=$pn/examples
    tb=$(debian_orig pnetcdf) || { echo "no pnetcdf source (apt-get source pnetcdf)"; return 1; }
    tar -xf "$tb" -C "$pn" --strip-components=1 --wildcards '*/examples/C/*' \
      '*/examples/F77/*' '*/examples/F90/*' || return 1
    # Debian's pnetcdf.inc (F77) and pnetcdf.mod (F90, gfortran's module dir)
    local inc=/usr/include/x86_64-linux-gnu
    local mod; mod=$(dirname "$(ls /usr/lib/x86_64-linux-gnu/fortran/*/pnetcdf.mod | head -n1)")
    # PnetCDF's F77 examples pass one buffer as several types (gfortran >= 10)
    local f77=(mpif77.openmpi -O2 -fallow-argument-mismatch -I"$inc")
    local f90=(mpif90.openmpi -O2 -I"$mod")
    mkdir -p "$pnb/f77" "$pnb/f90"
    "${f77[@]}" -c "$ex/F77/utils.F90" -o "$pnb/utils77.o" -J "$pnb/f77" || return 1
    "${f90[@]}" -c "$ex/F90/utils.F90" -o "$pnb/utils90.o" -J "$pnb/f90" || return 1
    for dp in $PN_PROGS; do
      d=${dp%/*} p=${dp#*/}
      case $d in
        C) mpicc.openmpi -O2 -o "$pnb/$p" "$ex/C/$p.c" -lpnetcdf ;;
        F77) "${f77[@]}" -ffixed-form -w -o "$pnb/$p.F77" "$ex/F77/$p.f" "$pnb/utils77.o" -lpnetcdf ;;
        F90) "${f90[@]}" -I"$pnb/f90" -o "$pnb/$p.F90" "$ex/F90/$p.f90" "$pnb/utils90.o" -lpnetcdf ;;
      esac || return 1
    done
  }
  if t_step pnetcdf/build pn_build; then
    mnt=$tmp/mnt; mkdir -p "$mnt"
    for dp in $PN_PROGS; do
      d=${dp%/*} p=${dp#*/}; exe=$pnb/$p; [ "$d" = C ] || exe=$exe.$d
      name=pn-$d-$p-p4-s2
      case $PN_REOPEN in
        *" $dp "*)
          t_have_fuse || { t_skip "$name" "reopens its file: needs the mount (/dev/fuse)"; continue; }
          mkdir -p "$tmp/srv-$name"
          ctl "$name" 4 "$exe" -q &&
            t_step "$name/mount+cmp" "$run" --ompi --mount "$mnt" -s 2 --root "$tmp/srv-$name" -- \
              bash -c 'mpirun -n 4 "$0" -q "$1/$2" && cmp "$1/$2" "$3/$2"' "$exe" "$mnt" "$name" "$U" ;;
        *) one_session "$name" 2 4 "$exe" -q ;;
      esac
    done
  fi
fi
if t_selected pntest && t_have_fuse; then
  t_section "PnetCDF's own test programs (libpnetcdf-dev) under the mount"
  # PnetCDF's C and Fortran API tests (its source's test/: testcases,
  # nonblocking, fandc, header, nc_test, nf_test, largefile), from
  # Debian's pnetcdf source with Debian's patches (dpkg-source -x of the
  # .dsc scripts/build-pnetcdf.sh builds from on MPICH, found by
  # scripts/debian-source.sh), built with mpicc.openmpi, mpif77.openmpi and
  # mpif90.openmpi against Debian's libpnetcdf. All of them run in one
  # session on plain paths under the mount (most reopen their file, which
  # ncmpi_open checks with POSIX calls), 4 processes (nc_test, nf_test: 1,
  # as PnetCDF's seq_runs.sh runs them), and as the control on a local
  # directory through OMPIO. Each is judged by its own pass line
  # (testutils' "pass", nc_test's and nf_test's "Total number of failures:
  # 0"), and every file the control left must be there with the same bytes
  # (cmp through the mount); test-runner: test/ompi/pntest-run.sh
  pnt=$tmp/pntest; pntb=$bin/pntest; mkdir -p "$pnt" "$pntb"
  PNT_PROGS="testcases/add_var:4 testcases/flexible:4 testcases/test_vard:4 testcases/put_all_kinds:4
    nonblocking/test_bput:4 nonblocking/column_wise:4 header/header_consistency:4
    testcases/attrf:4 testcases/test_vardf90:4 nonblocking/test_bputf:4"
  # DDIO_OMPI_MORE=1: more of testcases and nonblocking (C, F77, F90), and
  # nc_test (1 process; ~10 s on ddio)
  [ "$MORE" = 1 ] && PNT_PROGS="$PNT_PROGS nc_test/nc_test:1 $(printf 'testcases/%s:4 ' \
    ncmpi_vars_null_stride vectors collective_error test_varm alignment_test flexible2 flexible_varm \
    nonblocking noclobber record inq_num_vars varn_int modes one_record inq_recsize test_vard_rec \
    test_vard_multiple varn_contig ivarn check_striping buftype_free check_type test_erange scalar \
    tst_dimsizes mix_collectives tst_max_var_dims tst_info tst_def_var_fill test_fillvalue \
    tst_free_comm iput_all_kinds tst_vars_fill buftype_freef put_parameter test_vardf inq_num_varsf \
    inq_recsizef) $(printf 'nonblocking/%s:4 ' bput_varn flexible_bput i_varn_indef i_varn_int64 \
    interleaved req_all wait_after_indep mcoll_testf77 test_bputf77 mcoll_testf) fandc/pnctest:4
    fandc/csnap:4 fandc/pnctestf:4 fandc/pnf_test:4"
  # PnetCDF's own programs that print no pass line, judged by their exit
  # status and their files: pnf_test prints nothing; pnctest's rank is
  # MPI_Comm_size's answer (its bug), so no rank prints its pass line
  PNT_NOPASS=" fandc/pnctest fandc/pnf_test "
  # PNT_ONLY="DIR/PROG:NP ...": those alone
  [ -n "${PNT_ONLY:-}" ] && PNT_PROGS=$PNT_ONLY
  # The control is Debian's ROMIO 3.2.1 on ufs: where OMPIO's file is not
  # the program's: add_var creates one name three times (CDF-1, 2, 5) and
  # PnetCDF's NC_CLOBBER truncates it with POSIX truncate() on rank 0 before
  # the open; OMPIO's file keeps 1824 bytes, ROMIO's (ufs: and ddio) 632,
  # the size of the last one written (two OMPIO runs alike, 2026-11-27)
  PNT_CTL_ROMIO=" testcases/add_var "
  # Programs whose file differs between two OMPIO runs (and from ROMIO's):
  # judged by their pass line only. check_type: 2 bytes at 7171 (a
  # variable put with a type it refuses: never written, whatever the
  # memory held)
  PNT_NOCMP=" testcases/check_type "
  # PNT_SKIP: "DIR/PROG:why" of programs that fail on the control too
  PNT_SKIP=${PNT_SKIP-}
  pnt_build() {
    local dsc s spec dp d p f mod inc=/usr/include/x86_64-linux-gnu
    dsc=$("$SRC/scripts/debian-source.sh" pnetcdf) || return 1
    rm -rf "$pnt/src"
    dpkg-source --no-check -x "$dsc" "$pnt/src" >/dev/null || return 1   # Debian's patches
    s=$pnt/src/test
    mod=$(dirname "$(ls /usr/lib/x86_64-linux-gnu/fortran/*/pnetcdf.mod | head -n1)")
    # what PnetCDF's configure would write into config.h for its tests
    # here: Debian's library relaxes the coordinate bound (pnetcdf.h),
    # glibc has these types and functions, nctypes.h the rest
    printf '#define %s 1\n' HAVE_DECL_MPI_OFFSET RELAX_COORD_BOUND HAVE_SYS_TYPES_H HAVE_PTRDIFF_T \
      HAVE_USHORT HAVE_UINT HAVE_STRDUP HAVE_STRCASECMP > "$pnt/config.h"
    echo '#include <nctypes.h>' >> "$pnt/config.h"
    local defs=(-DHAVE_CONFIG_H -I"$pnt" -I"$pnt/src/src/include" -DHAVE_DECL_MPI_OFFSET)
    # -O0 -w: PnetCDF's test code, nothing timed; the F77 tests pass one
    # buffer as several types (gfortran >= 10)
    local cc=(mpicc.openmpi -O0 -w "${defs[@]}" -I"$s/common")
    local f77=(mpif77.openmpi -O0 -w -fallow-argument-mismatch "${defs[@]}" -I"$inc" -ffixed-form)
    local f90=(mpif90.openmpi -O0 -w -fallow-argument-mismatch "${defs[@]}" -I"$mod" -I"$pntb")
    local m4=(m4 -DPNETCDF -I"$pnt/src/m4")
    "${cc[@]}" -c "$s/common/testutils.c" -o "$pntb/testutils.o" || return 1
    "${f90[@]}" -c "$s/common/testutilsf.F90" -o "$pntb/testutilsf.o" -J "$pntb" || return 1
    for spec in $PNT_PROGS; do
      dp=${spec%:*} d=${dp%/*} p=${dp#*/}; mkdir -p "$pntb/$d"
      case $dp in
        nc_test/nc_test)
          "${m4[@]}" "$s/nc_test/tests.h.m4" > "$s/nc_test/tests.h" || return 1
          for f in test_get test_put test_iget test_iput test_read test_write; do
            "${m4[@]}" "$s/nc_test/$f.m4" > "$s/nc_test/$f.c" || return 1
          done
          "${cc[@]}" -I"$s/nc_test" -o "$pntb/$dp" "$s/nc_test/"{nc_test,error,util,test_get,test_put,test_iget,test_iput,test_read,test_write}.c \
            "$pntb/testutils.o" -lpnetcdf -lm ;;
        *) if [ -f "$s/$dp.c" ]; then "${cc[@]}" -o "$pntb/$dp" "$s/$dp.c" "$pntb/testutils.o" -lpnetcdf -lm
           elif [ -f "$s/$dp.m4" ]; then
             "${m4[@]}" "$s/$dp.m4" > "$s/$dp.c" &&
               "${cc[@]}" -o "$pntb/$dp" "$s/$dp.c" "$pntb/testutils.o" -lpnetcdf -lm
           elif [ -f "$s/$dp.f" ]; then "${f77[@]}" -o "$pntb/$dp" "$s/$dp.f" "$pntb/testutilsf.o" -lpnetcdf
           elif [ -f "$s/$dp.F" ]; then "${f77[@]}" -o "$pntb/$dp" "$s/$dp.F" "$pntb/testutilsf.o" -lpnetcdf
           elif [ -f "$s/$dp.f90" ]; then "${f90[@]}" -o "$pntb/$dp" "$s/$dp.f90" "$pntb/testutilsf.o" -lpnetcdf
           else echo "$dp: no source in PnetCDF's test/"; false; fi ;;
      esac || { echo "$dp: build failed"; return 1; }
    done
  }
  if t_step pntest/build pnt_build; then
    mnt=$tmp/mnt; mkdir -p "$mnt" "$U/pntest" "$tmp/srv-pntest"
    progs=()
    for spec in $PNT_PROGS; do
      dp=${spec%:*}
      case " $PNT_SKIP " in *" $dp:"*) continue ;; esac
      progs+=("$spec")
    done
    lim=${PNT_LIMIT:-120}
    mkdir -p "$pnt/ctl" "$pnt/ddio"
    ompio=() romio=()
    for spec in "${progs[@]}"; do
      case $PNT_CTL_ROMIO in *" ${spec%:*} "*) romio+=("$spec") ;; *) ompio+=("$spec") ;; esac
    done
    t_step pntest/ompio env MPIRUN="mpirun.openmpi --mca io ompio" LOGS="$pnt/ctl" \
      "$here/pntest-run.sh" "$pntb" "$U/pntest" "$pnt/ctl.res" "$lim" "${ompio[@]}"
    [ ${#romio[@]} -eq 0 ] || t_step pntest/romio321-ufs env MPIRUN="mpirun.openmpi --mca io romio321" \
      LOGS="$pnt/ctl" PREFIX=ufs: "$here/pntest-run.sh" "$pntb" "$U/pntest" "$pnt/ctl.res" "$lim" "${romio[@]}"
    t_step pntest/ddio env CTL="$U/pntest" MPIRUN=mpirun LOGS="$pnt/ddio" "$run" --ompi --mount "$mnt" -s 2 \
      --root "$tmp/srv-pntest" -- bash -c 'mkdir -p "$0" && "$1" "$2" "$0" "$3" "$4" "${@:5}" && stats_ok 2' \
      "$mnt/pntest" "$here/pntest-run.sh" "$pntb" "$pnt/ddio.res" "$lim" "${progs[@]}"
    # pnt_skipped LOG: the program said it skips itself (testutils' "skip":
    # tst_max_var_dims, where NC_MAX_VAR_DIMS is INT_MAX)
    pnt_skipped() { grep -Eq -- '-- skip[[:space:]]*$' "$1"; }
    # pnt_passed LOG: the program said it passed (testutils' "pass", nc_test's
    # failure count 0, pnctestf's "No Errors"), and nothing failed
    pnt_passed() {
      [[ "$PNT_NOPASS" == *" $dp "* ]] && ! grep -Eqi -- 'fail|error' "$1" && return 0
      grep -Eq -- '(-- pass|Total number of failures: 0|^ No Errors)[[:space:]]*$' "$1" &&
        ! grep -Eq -- '(-- fail|fail with [0-9]+ mismatches|Total number of failures: [1-9])' "$1"
    }
    for spec in $PNT_PROGS; do
      dp=${spec%:*}; name=${dp//\//-}; tn=pnt-$name-p${spec##*:}
      case " $PNT_SKIP " in *" $dp:"*) r=${PNT_SKIP#*"$dp:"}; t_skip "$tn" "${r%% *} (fails on the control too)"; continue ;; esac
      read -r _ crc csec _ < <(grep "^$name " "$pnt/ctl.res" 2>/dev/null) || crc=missing
      read -r _ rc sec cmpr < <(grep "^$name " "$pnt/ddio.res" 2>/dev/null) || rc=missing
      if [ "$crc" != 0 ] || { ! pnt_passed "$pnt/ctl/$name.out" && ! pnt_skipped "$pnt/ctl/$name.out"; }; then
        t_fail "$tn/ompio" "the control: exit $crc, or no pass line" "$pnt/ctl/$name.out"
      elif [ "$rc" != 0 ]; then t_fail "$tn" "exit $rc" "$pnt/ddio/$name.out"
      elif ! pnt_passed "$pnt/ddio/$name.out" && ! pnt_skipped "$pnt/ddio/$name.out"; then t_fail "$tn" "no pass line, or a failure said" "$pnt/ddio/$name.out"
      elif sd=0 sc=0; pnt_skipped "$pnt/ddio/$name.out" && sd=1; pnt_skipped "$pnt/ctl/$name.out" && sc=1
           [ $sd != $sc ]; then
        t_fail "$tn" "skipped itself on $([ $sd = 1 ] && echo ddio || echo the control) only" "$pnt/ddio/$name.out"
      elif [ $sd = 1 ]; then
        t_skip "$tn" "the program skips itself, on the control too: $(grep -- '-- skip' "$pnt/ddio/$name.out" | head -n1 | tr -s ' ')"
      elif [ "$cmpr" != same ] && [[ "$PNT_NOCMP" == *" $dp "* ]]; then
        t_pass "$tn" "${sec}s, the control ${csec}s; files not compared: they differ between two OMPIO runs ($cmpr)"
      elif [ "$cmpr" != same ]; then
        t_fail "$tn" "file $cmpr (vs the control's)"
      else
        c=OMPIO; case $PNT_CTL_ROMIO in *" $dp "*) c="ROMIO 3.2.1 ufs:" ;; esac
        t_pass "$tn" "${sec}s, the control ${csec}s, files: $(ls "$U/pntest/$name" | wc -l), == $c's"
      fi
    done
  fi
fi
if t_selected nctest && t_have_fuse; then
  t_section "netCDF-C's own parallel tests (nc_test4) under the mount"
  # netCDF-C's parallel tests (nc_test4: run_par_test.sh's programs, from
  # Debian's netcdf source: the upstream 4.9.0 of libnetcdf-mpi-dev, whose
  # own source package netcdf-parallel is not served) built with
  # mpicc.openmpi against libnetcdf-mpi-dev (config.h: nc_test4/ here).
  # Each runs in a directory under the ddio mount (they write ./NAME.nc;
  # some write serially with rank 0, tst_parallel5 reopens such a file in
  # parallel) and, as the control, in a local one with OMPIO. Each checks
  # what it reads back; the files they leave are compared with the
  # control's byte for byte (cmp through the mount), and so is what ncdump
  # (netcdf-bin, serial netCDF through the mount) prints of each .nc one.
  nct=$tmp/netcdf; nctb=$bin/nc_test4; mkdir -p "$nct" "$nctb"
  NC_PROGS="tst_mode:1 tst_parallel:4 tst_parallel6:4 tst_parallel_zlib:4"
  [ "$MORE" = 1 ] && NC_PROGS="tst_mode:1 tst_mpi_parallel:4 tst_parallel:4 tst_parallel3:16
    tst_parallel4:1 tst_parallel4:2 tst_parallel4:4 tst_parallel4:8 tst_nc4perf:4
    tst_simplerw_coll_r:1 tst_simplerw_coll_r:2 tst_simplerw_coll_r:4 tst_parallel_zlib:4
    tst_parallel_compress:1 tst_parallel_compress:4 tst_quantize_par:4 tst_parallel6:4 tst_parallel5:4"
  # Three of them leave files whose bytes differ from one OMPIO run to the
  # next (and from Debian's ROMIO's) where no variable's value is:
  # tst_parallel3's test.nc, tst_parallel5's, tst_simplerw_coll_r's; and the latter's files
  # of NC_NOFILL runs (*_fv_2.nc) hold whatever was in memory where nothing
  # was written. Of those, what ncdump prints (of the filled ones) is compared
  NC_DUMP_ONLY=" tst_parallel3 tst_parallel5 tst_simplerw_coll_r "
  nc_build() {
    local tb spec p
    tb=$(debian_orig netcdf) || { echo "no netcdf source (apt-get source netcdf)"; return 1; }
    tar -xf "$tb" -C "$nct" --strip-components=1 --wildcards '*/nc_test4/tst_*par*.c' \
      '*/nc_test4/tst_mode.c' '*/nc_test4/tst_nc4perf.c' '*/nc_test4/tst_simplerw_coll_r.c' \
      '*/include/*.h' || return 1
    # tst_parallel5's string step loops twice with no barrier: rank 0's
    # serial nc_create of the second round truncates the file while the
    # other ranks may still be opening it in the first (nc_close of a file
    # opened read-only does not synchronize). On a local file rank 0 is the
    # slower one; on ddio the others are, and about half the runs failed
    # ("NetCDF: HDF error" in nc_open_par; 10 of 10 pass with the barrier)
    sed -i '/Create a netcdf-4 file. Turns out that HDF5 does not/i\
            MPI_Barrier(comm); /* added by ddio: the rounds raced */' "$nct/nc_test4/tst_parallel5.c" &&
      grep -q "added by ddio" "$nct/nc_test4/tst_parallel5.c" || return 1
    for spec in $NC_PROGS; do
      p=${spec%:*}; [ -x "$nctb/$p" ] && continue
      # -w: netCDF's test code, not ours (its own build has no -Werror);
      # -O0: half the compile time, and nothing here is timed
      mpicc.openmpi -O0 -g -w -I"$here/nc_test4" -I"$nc/include" -I"$nct/include" -o "$nctb/$p" \
        "$nct/nc_test4/$p.c" -L"$nc/lib" -lnetcdf -Wl,-rpath,"$nc/lib" || return 1
    done
  }
  command -v ncdump >/dev/null || t_fail nctest/ncdump "ncdump missing (netcdf-bin: scripts/install-deps.sh)"
  if t_step nctest/build nc_build; then
    mnt=$tmp/mnt; mkdir -p "$mnt"
    # nc_same DIR CTLDIR [dump]: every file the control left is there, the
    # same bytes (with dump: but *_fv_2.nc, and only ncdump's output), and
    # ncdump prints the same of each .nc
    nc_same() {
      local f n=0
      for f in "$2"/*; do
        [ -e "$f" ] || continue; f=${f##*/}
        case ${3:-}:$f in dump:*_fv_2.nc) continue ;; dump:*) ;; *) cmp "$1/$f" "$2/$f" || return 1 ;; esac
        case $f in *.nc) diff <(ncdump "$1/$f") <(ncdump "$2/$f") || { echo "ncdump $f differs"; return 1; } ;; esac
        n=$((n + 1))
      done
      echo "$n files equal to the control's"
    }
    export -f nc_same; export mnt
    for spec in $NC_PROGS; do
      p=${spec%:*} np=${spec#*:} name=nct-${spec/:/-p} how=""
      case $NC_DUMP_ONLY in *" $p "*) how=dump ;; esac
      mkdir -p "$U/$name" "$tmp/srv-$name"
      t_step "$name/ompio" bash -c 'cd "$0" && mpirun.openmpi -n "$1" --mca io ompio "$2"' \
        "$U/$name" "$np" "$nctb/$p" &&
        t_step "$name/ddio" "$run" --ompi --mount "$mnt" -s 2 --root "$tmp/srv-$name" -- bash -c \
          'mkdir "$mnt/$0" && cd "$mnt/$0" && mpirun -n "$1" "$2" && nc_same "$mnt/$0" "$3" "$4"' \
          "$name" "$np" "$nctb/$p" "$U/$name" "$how"
    done
  fi
fi
t_done
