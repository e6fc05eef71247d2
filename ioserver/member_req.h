/* The membership's requests (member_req.c): MEMBER itself, and the check
 * every request on a mirrored file passes (member.h member_admit). */
#ifndef DDIO_SRV_MEMBER_REQ_H
#define DDIO_SRV_MEMBER_REQ_H

#include "conn.h"

int on_member(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
/* 0: h may go on with a file of that redundancy word (ddio_layout.h); 1:
 * refused (answered) */
int member_refused(struct conn *c, const struct ddio_hdr *h, uint32_t redundancy);
/* the same for a request on the file norm: also 0 when c holds its rebuild
 * fence here (the resync of an out member copying it) */
int member_refused_on(struct conn *c, const struct ddio_hdr *h, uint32_t redundancy,
                      const char *norm);
/* a change of norm (a file of that redundancy) that h makes, noted for the
 * members that are out (missed.h) and by this server itself (changed.h)
 * before it is made: 0 go on, *gen to be given to changed_end once the
 * change is made (or not); 1 a note failed (answered with the error) */
int member_note_change(struct conn *c, const struct ddio_hdr *h, uint32_t redundancy,
                       const char *norm, uint64_t *gen);

#endif
