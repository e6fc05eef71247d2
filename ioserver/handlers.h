/* The requests on open files (handlers.c), called by dispatch. Each replies
 * itself; a negative result closes the connection. */
#ifndef DDIO_SRV_HANDLERS_H
#define DDIO_SRV_HANDLERS_H

#include "conn.h"

int on_ucxaddr(struct conn *c, const struct ddio_hdr *h);
int on_open(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_close(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_stat(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_localstat(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_setsize(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_stats(struct conn *c, const struct ddio_hdr *h);
/* LOCAL: the file's read-only descriptors to a client on this host */
int on_local(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_cancel(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
/* XFER, SYNC, PREALLOC, LOCK, SCRUB, REPAIR: may take over *payload */
int on_slow(struct conn *c, const struct ddio_hdr *h, uint8_t **payload);
/* The call number of the answer a lock holder's client id is noted with in
 * the table of answers (replay.h), so a restart knows locks may have been
 * held (no call has number 0) */
#define LOCK_HOLDER_CALL 0

#endif
