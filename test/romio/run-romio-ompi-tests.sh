#!/usr/bin/env bash
# ROMIO 3.2.1's test directory (Debian's Open MPI source) on ddio: through
# the plug-in, as a test of its own in `make check`: run-romio-tests.sh --ompi
# (read its header). Without large_file and large_array (4 GiB each), which
# the MPICH list runs through the same driver: the pair's 8 GiB of I/O cost
# 76 s here in a CI run that ended at 25.1 min (DDIO_ROMIO_LARGE=1 runs them).
# usage: run-romio-ompi-tests.sh [TEST...]
export DDIO_ROMIO_LARGE=${DDIO_ROMIO_LARGE:-0}
exec "$(dirname "$0")/run-romio-tests.sh" --ompi "$@"
