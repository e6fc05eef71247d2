/* One XFER's pass (engine_pass.c): run it and answer every participant. */
#ifndef DDIO_SRV_ENGINE_PASS_H
#define DDIO_SRV_ENGINE_PASS_H

#include "engine_int.h"

/* run x (all participants present, or those of a re-formed resend), answer
 * everyone, free it */
void pass_execute(struct server *srv, struct xfer *x);
/* participant p's DONE (or error), once */
void pass_send_done(struct xfer *x, struct part *p);

#endif
