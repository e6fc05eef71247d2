/* The write pipeline (engine_write.c): a block's coverage, its data
 * pulled from the writers, and its write in plan order. */
#ifndef DDIO_SRV_ENGINE_WRITE_H
#define DDIO_SRV_ENGINE_WRITE_H

#include "engine_int.h"

/* block s (locked, buffered) is written: read what it must keep first, or
 * pull its data at once */
void write_start(struct xfer *x, struct slot *s);
/* the next step of s's pull; when all came, its write */
void write_pull_next(struct xfer *x, struct slot *s);
/* after a read-modify-write's read: zeros past what the datafile held */
void write_rmw_zero_tail(struct xfer *x, struct slot *s);

#endif
