# Sourced by the MPI test harnesses (test/mpi, test/romio) after they set
# $mpi (the build tree's mpich/): that ddio-enabled MPICH first on PATH and
# LD_LIBRARY_PATH, a default deadline for every ddio wait, and Hydra kept on
# loopback (machines without a resolvable host name).
# usage: . "$top/test/mpienv.sh" DEFAULT_DDIO_TIMEOUT_SECONDS
mpi_real=$(cd "$mpi" && pwd -P)
export PATH="$mpi_real/bin:$PATH"
export LD_LIBRARY_PATH="$mpi_real/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DDIO_TIMEOUT=${DDIO_TIMEOUT:-$1}
export HYDRA_IFACE=${HYDRA_IFACE:-lo}
