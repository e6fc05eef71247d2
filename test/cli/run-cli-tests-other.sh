#!/usr/bin/env bash
# The cli suite again on the transport the default run does not use (servers
# --transport T, clients DDIO_TRANSPORT=T; t_other_transport in test/lib.sh):
# the tools' data path (the client core under common/ddio_client.c).
# A test of its own so that make check runs it beside the others.
set -u
# shellcheck source=test/lib.sh
. "$(dirname "$0")/../lib.sh"
t_other_pass
exec "$SRC/test/cli/run-cli-tests.sh"  "$@"
