/* GET and PUT (engine_getput.c): a read block's bytes sent to the
 * participants, a written block's asked of them. */
#ifndef DDIO_SRV_ENGINE_GETPUT_H
#define DDIO_SRV_ENGINE_GETPUT_H

#include "engine_int.h"

/* block s was read: its bytes to every participant (PUT), then the sends'
 * sync; a failure is the XFER's */
/* 1: s was mapped and its puts left without a sync (the caller makes it
 * S_SENT, for put_flush_sent); 0: its puts ended (or failed), release it.
 * A sync here also releases the blocks sent before. */
int put_read_block(struct xfer *x, struct slot *s);
/* sync the puts of the S_SENT blocks and release them */
void put_flush_sent(struct xfer *x);
/* ask participant p for its segments g of block s (one GET); 0 or -errno */
int get_send(struct xfer *x, struct slot *s, struct part *p, const struct bseg *g, size_t n);
/* take back the XFER's GETs still out */
void get_cancel_all(struct xfer *x);

#endif
