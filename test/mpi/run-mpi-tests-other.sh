#!/usr/bin/env bash
# The mpi suite again on the transport the default run does not use (servers
# --transport T, clients DDIO_TRANSPORT=T; t_other_transport in test/lib.sh):
# the groups whose data can move by either transport (run-mpi-tests.sh --data-groups).
# A test of its own so that make check runs it beside the others.
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_other_pass
exec "$SRC/test/mpi/run-mpi-tests.sh" --data-groups "$@"
