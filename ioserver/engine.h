/* The XFER engine: collective gate, per-block read and write pipelines,
 * PUT / GET / DATA, DONE and counters. */
#ifndef DDIO_SRV_ENGINE_H
#define DDIO_SRV_ENGINE_H

#include "ddio_proto.h"
#include "server.h"

int engine_create(struct server *srv);
void engine_destroy(struct server *srv);

/* Run on a request thread: join the collective gate (or run an independent
 * XFER) and, for the thread that completes the gate's wait, run the pass
 * and send DONE to every participant. `of` is a reference the engine takes
 * over; x->desc points into a payload valid for the call. */
void engine_xfer(struct server *srv, struct conn *c, uint64_t req,
                 const struct ddio_xfer *x, struct ofile *of);

/* Reader thread: a DATA header arrived on c; receive its payload straight
 * into the waiting block. 0, or -errno when the connection must close. */
int engine_data(struct conn *c, const struct ddio_hdr *h);

/* A connection dropped: fail every XFER (waiting or running) it is in. */
void engine_conn_dropped(struct server *srv, struct conn *c);
/* Shutdown: fail everything waiting at the gate. */
void engine_shutdown(struct server *srv);

#endif
