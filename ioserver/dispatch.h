/* Request dispatch (dispatch.c), called by the reader. */
#ifndef DDIO_SRV_DISPATCH_H
#define DDIO_SRV_DISPATCH_H

#include "conn.h"

/* hand one message to its handler; may take over *payload. A negative
 * result closes the connection. */
int dispatch(struct conn *c, const struct ddio_hdr *h, uint8_t **payload);

#endif
