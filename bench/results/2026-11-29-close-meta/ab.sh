#!/bin/bash
# ab.sh: the three builds alternated, 8 rounds (bench/ab-swap.sh swaps the
# client library; the server binary is copied in by the command):
#   base:  client and server of 60d26b9 (a writer's CLOSE waited for;
#          the layout record fsynced at the first sync, its flag on the open file)
#   close: this session's client (every CLOSE posted), the server of 60d26b9
#   final: this session's client and server (store_meta.c, in the version
#          that woke its thread at every create: NOTES.md, 3)
# The four files are built beforehand into /tmp (see NOTES.md).
here=$(cd "$(dirname "$0")" && pwd); top=$(cd "$here/../../.." && pwd)
cd "$top" || exit 2
P=$(readlink -f mpich/lib/libmpich.so.12)
cp ioserver/ddio-server /tmp/srv-keep
bench/ab-swap.sh -n 8 -f "$P" base=/tmp/lib-old.so close=/tmp/lib-new.so final=/tmp/lib-new2.so -- bash -c '
  case $AB_LABEL in final) cp /tmp/srv-final ioserver/ddio-server ;; *) cp /tmp/srv-base ioserver/ddio-server ;; esac
  '"$here"'/run.sh '"$here"'/raw/$AB_LABEL-$AB_ROUND'
cp /tmp/srv-keep ioserver/ddio-server
