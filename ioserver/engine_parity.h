/* An erasure-coded file's write in the engine (DESIGN.md 6.4): the groups
 * a write touches checked whole, and the parity blocks this server holds:
 * their participants' bytes (the K data ranges behind each parity byte),
 * which of their units the call changes, and the parity computed in the
 * block buffer before it is written. */
#ifndef DDIO_SRV_ENGINE_PARITY_H
#define DDIO_SRV_ENGINE_PARITY_H

#include "engine_int.h"

/* An ec:K+M write, before any byte is written: the groups the participants
 * together cover in part noted (x->partial: their bytes go to the
 * overlays, their parity stays), the overlays' older bytes of the groups
 * covered whole dropped. 0, or -errno with x failed. Any other call: 0. */
int eparity_check(struct xfer *x);

/* Participant p's bytes behind parity block s's local bytes [*o, end), as
 * segments whose block offsets index the slot's scratch buffer: data unit
 * d's bytes at d * B. Like xfer_block_segs: resumable at *o. */
size_t eparity_block_segs(const struct xfer *x, const struct slot *s, const struct part *p,
                          uint64_t *o, uint64_t end, struct bseg *out, size_t cap);

/* Which bytes of parity block s the call rewrites (s->write_lo/write_hi,
 * s->full, s->overlap), its scratch buffer allocated. 0, or -errno with x
 * failed. */
int eparity_coverage(struct xfer *x, struct slot *s);

/* Every data byte pulled: the parity of each rewritten unit piece from the
 * scratch buffer into the block buffer. */
void eparity_encode(struct xfer *x, struct slot *s);

/* An ec:K+M write done: the end of what it wrote noted as the file's
 * logical size this server knows (overlay.h), for a read that decodes a
 * lost server's units and needs the end of file. */
void eparity_done(struct xfer *x);

/* Overlay block s written (its runs, written byte-exact): its extents
 * noted, and the data grown where the write went past the file's end. 0
 * or -errno. */
int eparity_written(struct xfer *x, struct slot *s);

/* Data block s read: the overlay's bytes over the in-place ones (an
 * erasure-coded file's partial writes). 0, or -errno with x failed. */
int eparity_merge(struct xfer *x, struct slot *s);

#endif
