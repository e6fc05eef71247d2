/* ECREAD (PROTOCOL.md "ECREAD"; DESIGN.md 6.4): bytes of an erasure-coded
 * file's view on this server (its data in place, its parity, its overlay
 * with the overlay's extents) and the file's logical size as this server
 * knows it, for a read that decodes a lost server's units. Runs on a
 * request thread (it reads the disk). */
#ifndef DDIO_SRV_ECREAD_H
#define DDIO_SRV_ECREAD_H

#include "conn.h"

/* w->u.er decoded, w->of referenced (released here) */
void do_ecread(struct work *w);

#endif
