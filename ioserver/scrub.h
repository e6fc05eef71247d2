/* SCRUB and REPAIR (PROTOCOL.md "SCRUB and REPAIR"; DESIGN.md 6.2): a
 * view's sectors read from disk and checked against their checksums, and
 * bad ones rewritten with a good copy's bytes the client brings. Both run
 * on request threads (they read the disk and wait for block locks). */
#ifndef DDIO_SRV_SCRUB_H
#define DDIO_SRV_SCRUB_H

#include "conn.h"

/* w->u.sc decoded, w->of referenced (released here) */
void do_scrub(struct work *w);
/* w->u.rp decoded (its data in w->payload), w->of referenced */
void do_repair(struct work *w);

#endif
