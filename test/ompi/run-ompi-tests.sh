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
#            its own MPI_File_get_info); t_refuse: atomic mode and the
#            shared file pointer are refused on ROMIO 3.2.1, cleanly
#   mpi4py   Debian's python3-mpi4py: MPI.File with subarray and cyclic
#            views, independent, collective and nonblocking (t_mpi4py.py)
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
# usage: run-ompi-tests.sh [-k] [GROUP...]   groups: c mpi4py h5py netcdf mount (default all)
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

# --- the plug-in: the cached build (rebuilt only when its inputs change) ----
comp=$top/ompi-romio
t_step -t "${OMPI_BUILD_LIMIT:-3600}" ompi/build "$SRC/scripts/build-ompi-romio.sh" "$SRC" "$comp" \
  || t_unusable ompi/build "scripts/build-ompi-romio.sh failed"
export DDIO_OMPI_COMPONENT_DIR=$comp

# --- programs: built with Debian's mpicc.openmpi ----------------------------
bin=$tmp/bin; mkdir -p "$bin"
for s in test/mpi/t_coll.c test/mpi/t_indep.c test/mpi/t_nonblock.c \
         test/mpi/filecmp.c examples/ddio-patterns.c; do
  mpicc.openmpi -O2 -g -Wall -Wextra -Werror -I"$SRC/test/mpi" -o "$bin/$(basename "$s" .c)" "$SRC/$s" \
    || t_unusable ompi/compile "mpicc.openmpi $s"
done
mpicc.openmpi -O2 -g -Wall -Wextra -Werror -o "$bin/t_refuse" "$here/t_refuse.c" \
  || t_unusable ompi/compile "t_refuse.c"
nc=/usr/lib/x86_64-linux-gnu/netcdf/mpi
mpicc.openmpi -O2 -g -Wall -Wextra -Werror -I"$nc/include" -o "$bin/t_nc4par" "$here/t_nc4par.c" \
  -L"$nc/lib" -lnetcdf -Wl,-rpath,"$nc/lib" || t_unusable ompi/compile "t_nc4par.c (libnetcdf-mpi-dev)"
U=$tmp/ufs; mkdir -p "$U"

# ctl NAME NP CMD...: the control, Open MPI's own MPI-IO (OMPIO, its
# default) on the local file $U/NAME. Not Debian's ROMIO 3.2.1 on ufs:,
# which fails three of these programs by itself (docs/CONFORMANCE.md:
# MPI_File_iwrite_all calls a NULL entry and crashes, a Kotz read pattern
# reads wrong bytes, a zero-byte collective reports bytes written)
ctl() {
  local name=$1 np=$2; shift 2
  t_step "$name/ompio" mpirun.openmpi -n "$np" --mca io ompio "$@" "$U/$name"
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
echo "romio_ddio_coll_ranges disable" > "$tmp/dd-hints"
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
  # atomic mode and the shared file pointer are refused, the file stays usable
  ddio refuse-p3-s1 1 3 "$bin/t_refuse"
  # the plug-in is what reaches ddio: with Debian's own component the same
  # program cannot even create a ddio: file (a local path "ddio:/..." to it)
  t_expect_fail ompi/debian-component-refuses-ddio MPI_ERR_NO_SUCH_FILE \
    "$run" -s 1 --root "$tmp/srv-refuse" -- mpirun.openmpi -n 2 --mca io romio321 "$bin/t_indep" ddio:/refuse
fi
if t_selected mpi4py; then
  t_section "mpi4py (python3-mpi4py)"
  both mpi4py-p3-s2 2 3 ".sub .cyc .nb" "$PY" "$here/t_mpi4py.py"
  both mpi4py-p4-s3 3 4 ".sub .cyc .nb" "$PY" "$here/t_mpi4py.py"
fi
if t_selected h5py; then
  t_section "h5py (python3-h5py-mpi)"
  both h5py-p3-s2 2 3 = "$PY" "$here/t_h5py.py"
  both h5py-p4-s3 3 4 = "$PY" "$here/t_h5py.py"
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
t_done
