#!/usr/bin/env bash
# The partition story of run-partition-tests.sh with ec:2+1 files (its
# header says what differs). Closes with "partition-ec: N passed, N failed".
exec bash "$(dirname "$0")/run-partition-tests.sh" ec "$@"
