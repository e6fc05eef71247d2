#!/usr/bin/env bash
# The mpi suite's fault groups (servers killed, stopped, restarted, hung;
# fail-fast; the soak; a mirrored file's server lost; checksums): a test of their own
# so that make check runs them beside the other groups (most of their time
# is spent waiting on deadlines and restarts, not on the cores).
# run-mpi-tests.sh alone still runs every group; make check's run of it
# (DDIO_MPI_SPLIT=1, Makefile.am) leaves out the groups listed here.
set -u
groups=(heartbeat failfast restart faults smallcoll-fail soak mirror sums)
exec "$(dirname "$0")/run-mpi-tests.sh" "${groups[@]}" "$@"
