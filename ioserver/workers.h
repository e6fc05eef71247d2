/* Request threads (workers.c) for the requests that may wait. */
#ifndef DDIO_SRV_WORKERS_H
#define DDIO_SRV_WORKERS_H

#include "conn.h"

/* a request for fn; takes over *payload (NULL afterwards) */
struct work *work_new(struct conn *c, const struct ddio_hdr *h, uint8_t **payload,
                      void (*fn)(struct work *));
/* the longest read that runs on the reader thread (a hand-off costs
 * ~10-20 us, nothing next to a read this long) */
#define WORK_INLINE_READ_MAX (1u << 20)
/* whether w runs on the reader thread itself (a short one-participant read,
 * or an inline write) */
int work_runs_inline(const struct work *w);
void work_run_inline(struct conn *c, struct work *w);
/* A request's hold on its file is marked answered before its first reply
 * and let go of after it: the client may close the file, and a resync's or
 * fold's fence take it, in between (a fence waits only for answered holds:
 * store_is_open) */
void work_answering(struct work *w);
void work_let_go(struct work *w);
/* run w on a request thread (an idle one, or a new one); takes over w */
void work_spawn(struct conn *c, struct work *w);

#endif
