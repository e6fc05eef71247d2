#!/usr/bin/env bash
# ROMIO 3.2.1's test directory (Debian's Open MPI source) on ddio: through
# the plug-in, as a test of its own in `make check`: run-romio-tests.sh --ompi
# (read its header). usage: run-romio-ompi-tests.sh [TEST...]
exec "$(dirname "$0")/run-romio-tests.sh" --ompi "$@"
