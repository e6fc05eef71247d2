/* The listener, and the connections' part of starting and stopping. */
#ifndef DDIO_SRV_LISTENER_H
#define DDIO_SRV_LISTENER_H

#include <stddef.h>

#include "server.h"

/* Bind the listening socket; fills srv->port and srv->name. */
int listener_open(struct server *srv, char *err, size_t errlen);
/* Accept connections until srv->stopping is set. */
void listener_serve(struct server *srv);
/* Graceful stop, step 1: close the listener (no new connections) and keep
 * serving the open ones until none has a call in flight or queued output
 * (idle twice, 50 ms apart), wait_ms passed, or a second signal arrived.
 * Returns how many connections were still busy (0: drained). */
int listener_drain(struct server *srv, int wait_ms);
/* Stop: close the listener, drop every connection (failing their XFERs and
 * lock waits), wait up to wait_ms for their threads to finish. */
void listener_stop(struct server *srv, int wait_ms);

#endif
