/* The XFER engine: collective gate, per-block read and write pipelines,
 * PUT / GET and their answers, DONE and counters. It talks to clients only
 * through transport.h; these are the calls a transport makes into it.
 * Its code: engine.c (the core), engine_slots.c, engine_getput.c,
 * engine_write.c, engine_pass.c and gate.c (engine_int.h). */
#ifndef DDIO_SRV_ENGINE_H
#define DDIO_SRV_ENGINE_H

#include "ddio_proto.h"
#include "server.h"
#include "transport.h"

int engine_create(struct server *srv);
void engine_destroy(struct server *srv);

/* Run on a request thread: join the collective gate (or run an independent
 * XFER) and, for the thread that completes the gate's wait, run the pass
 * and send DONE to every participant. `of` is a reference the engine takes
 * over; x->desc points into a payload valid for the call. */
void engine_xfer(struct server *srv, struct xp *ep, uint64_t req,
                 const struct ddio_xfer *x, struct ofile *of);

/* The answer to GET g (see transport.h), on the transport's thread.
 * sink stores the bytes [s, s + n) of g's segment i (in any order).
 * done: they all arrived (err 0), or their transfer broke (err a positive
 * errno, why the cause: the XFER fails); wakes the block.
 * drop: the answer does not fit g; nothing is counted, the XFER fails.
 * done and drop free g: the transport must not touch it after. */
void engine_get_sink(struct xp_get *g, uint32_t i, uint64_t s, const void *data, size_t n);
void engine_get_done(struct xp_get *g, int err, const char *why);
void engine_get_drop(struct xp_get *g, int err, const char *why);

/* An endpoint dropped: fail every XFER (waiting or running) it is in. */
void engine_conn_dropped(struct server *srv, struct xp *ep);
/* fail the XFER whose participant req arrived on endpoint a or b (the
 * connection's TCP and UCX endpoints), for every participant, and with
 * group != 0 every XFER of collective call (group, seq) whoever sent it;
 * returns how many were found */
int engine_cancel(struct server *srv, struct xp *a, struct xp *b, uint64_t req, uint64_t group,
                  uint64_t seq, const char *why);
/* Shutdown: fail everything waiting at the gate. */
/* SIGTERM: the collectives still waiting for participants fail (ECONNRESET:
 * their clients resend them to the restarted server). A rank that must
 * reconnect can no longer join them, so the drain would wait for their
 * deadline while the clients' recovery ran out. */
void engine_stopping(struct server *srv);
/* log each XFER still at the gate or running (a drain that takes long) */
void engine_report(struct server *srv);
void engine_shutdown(struct server *srv);

#endif
