/* The planner and slots (engine_slots.c): an XFER's block plan, and the
 * slots its blocks take: buffers, block locks, disk requests. */
#ifndef DDIO_SRV_ENGINE_SLOTS_H
#define DDIO_SRV_ENGINE_SLOTS_H

#include "engine_int.h"

/* the slots, event queue and write state of a pass; 0 or -ENOMEM */
int slots_alloc(struct xfer *x);
/* x->blocks in issue order (planner.h); 0 or -errno */
int slots_plan(struct xfer *x);
/* a slot not in use, or NULL */
struct slot *slot_find_free(struct xfer *x);
int slot_lock_block(struct xfer *x, struct ofile *of, uint64_t k, int wait, int64_t dl);
void *slot_get_buffer(struct xfer *x, struct disk *disk, int wait, int64_t dl);
void slot_read_range(struct xfer *x, const struct slot *s, uint64_t *lo, uint64_t *hi);
/* whether a write of [write_lo, write_hi) goes through the page cache */
int slot_write_cached(const struct xfer *x, const struct slot *s);
/* block s's disk request: len bytes from s->io_lo (its completion is an event) */
void slot_submit_io(struct xfer *x, struct slot *s, int write, size_t len);
void slot_count_io(struct xfer *x, const struct slot *s);
void slot_release(struct xfer *x, struct slot *s);

#endif
