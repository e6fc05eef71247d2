#!/usr/bin/env bash
# Prints what DDIO_TRANSPORT=auto means for a client and servers on this
# host: ucx when UCX is installed and cross-memory attach is allowed (no
# Yama, or ptrace_scope 0), else tcp. The same rule as common/ddio_xport.c
# for local servers of the same user; tests use it to know what to expect.
# --expected: the transport a client here will use, DDIO_TRANSPORT when it
# is ucx or tcp, else (auto or unset) the rule above.
if [ "${1:-}" = --expected ]; then
  case "${DDIO_TRANSPORT:-auto}" in ucx|tcp) echo "$DDIO_TRANSPORT"; exit 0 ;; esac
fi
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ] || [ "$scope" = 0 ]; then
  if /sbin/ldconfig -p | grep -q 'libucp\.so\.0'; then echo ucx; exit 0; fi
fi
echo tcp
