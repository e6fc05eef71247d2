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
/* the sector at local a of view vf (its bytes in sec, 4 KiB aligned)
 * disagreed with its sum: 1 if it still does read again under its block
 * lock (a write in flight holds it until its sums are in; sec then holds
 * the newer bytes if not), 0, or -errno */
int scrub_confirm_bad(struct ofile *vf, uint64_t a, uint8_t *sec);

#endif
