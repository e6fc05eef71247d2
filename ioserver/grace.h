#ifndef DDIO_GRACE_H
#define DDIO_GRACE_H
#include "server.h"

/* Start (or extend) the lock grace (--lock-grace): locks held before are
 * being taken again by their holders (LOCK with DDIO_LK_RECLAIM); other
 * LOCKs wait for its end (handlers.c), so none slips into a range between
 * the loss and the reclaim. why: for the log. */
void srv_lock_grace(struct server *srv, const char *why);

#endif
