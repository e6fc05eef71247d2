#!/usr/bin/env bash
# Installs everything ddio needs on a bare Debian 12 machine (root or sudo).
# Idempotent: packages already present are left alone.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

PKGS=(build-essential gfortran autoconf automake libtool pkg-config m4 dpkg-dev
      libaio-dev libisal-dev check libsubunit-dev
      libssl-dev openssl libucx-dev munge libmunge-dev   # openssl: TLS tests, ddio-run --tls
      libnss-wrapper                             # the identity tests' server-side groups
      mpich libmpich-dev libhdf5-mpich-dev hdf5-tools
      python3 python3-matplotlib
      clang libclang-rt-14-dev iproute2 procps util-linux
      libfuse3-dev fuse3 attr
      patchelf man-db groff-base strace    # make install (MPICH relocation), man pages, install test
      gdb                                  # a stalled restart test prints its stacks
      openmpi-bin libopenmpi-dev python3-mpi4py python3-h5py-mpi   # Open MPI plug-in and its tests
      libnetcdf-mpi-dev libpnetcdf-dev netcdf-bin   # Open MPI's parallel stack: netCDF-4, PnetCDF, ncdump
      zlib1g-dev libbz2-dev libaec-dev libcurl4-openssl-dev)   # netCDF-C from source (scripts/build-netcdf.sh)
# Installing Open MPI makes it the `mpi` and `mpirun` alternatives (mpicc,
# mpirun, mpiexec in /usr/bin): the project never uses those names
# unqualified; it puts its MPICH's bin first on PATH or names the flavour
# (mpicc.mpich, mpirun.openmpi), and HDF5 by its mpich paths (libnetcdf-mpi-dev
# brings libhdf5-openmpi-dev, which takes the h5pcc and hdf5-mpi.pc
# alternatives: the project uses h5pcc.mpich and /usr/include/hdf5/mpich).

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# deb-src entries for 'apt-get source mpich', derived from the deb entries
# apt already has (scripts/deb-src.sh: a site's own mirror serves the
# sources too; it replaces the fixed-mirror ddio-src.sources an older
# version of this script wrote). DDIO_APT_DIR: apt's directory (/etc/apt).
need_src=0
if [ "${DDIO_NEED_MPICH_SOURCE:-1}" = 1 ]; then
  changed=$(SUDO=$SUDO bash "$(dirname "$0")/deb-src.sh" "${DDIO_APT_DIR:-/etc/apt}")
  if [ -n "$changed" ]; then
    sed 's/^/install-deps: /' <<<"$changed"
    need_src=1
  fi
fi

if [ ${#missing[@]} -gt 0 ] || [ $need_src = 1 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
fi
echo "install-deps: all dependencies present"
