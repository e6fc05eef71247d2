/* A block's checksums in the engine (sums.h): summed from the block buffer
 * as it is written, checked in it as it is read from disk. */
#ifndef DDIO_SRV_ENGINE_SUMS_H
#define DDIO_SRV_ENGINE_SUMS_H

#include "engine_int.h"

/* before block s's data write: its sidecar says DIRTY, and stays so
 * until the slot is released (s->sums_begun). 0, or -errno with x failed */
int esums_begin(struct xfer *x, struct slot *s);
/* block s's write completed: the sectors it wrote whole summed from its
 * buffer, those it wrote in part STALE */
void esums_written(struct xfer *x, struct slot *s);
/* block s's write request ended unprocessed (the XFER failed while it was
 * on the disk) or with an error: whatever of it landed is unknown to the
 * sums, so its sectors go STALE (summed from the datafile at the next
 * flush) rather than keep the old sums */
void esums_unsure(struct xfer *x, struct slot *s);
/* block s's read (S_READ or S_RMW) completed: its sectors checked. 0, or
 * -EILSEQ with x failed by a data-integrity error naming the file, the
 * offset and the server */
int esums_check(struct xfer *x, struct slot *s);

#endif
