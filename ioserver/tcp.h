/* The TCP transport's endpoint (tcp.c): a connection with transport.h's
 * ops, and DATA, the answer to a GET, received on its reader thread. */
#ifndef DDIO_SRV_TCP_H
#define DDIO_SRV_TCP_H

#include "conn.h"

struct conn *conn_new(struct server *srv, int fd);
/* DATA: a 4-byte tag, then the bytes of the GET (req, tag) asked for */
int on_data(struct conn *c, const struct ddio_hdr *h);

#endif
