/* Same-host clients (local.c): a file's descriptors handed to a client over
 * its abstract AF_UNIX socket (LOCAL). */
#ifndef DDIO_SRV_LOCAL_H
#define DDIO_SRV_LOCAL_H

#include "ddio_proto.h"
#include "store.h"

/* connect to m->name and send the size page's and datafiles' descriptors
 * with m's nonce: read-only, or with write read-write (the message's flags
 * say DDIO_LOCAL_WRITE); 0 or -errno (-ECONNREFUSED / -ENOENT: no such
 * listener here, the client is on another host or namespace) */
int local_hand_over(struct ofile *of, const struct ddio_local_req *m, int write);

#endif
