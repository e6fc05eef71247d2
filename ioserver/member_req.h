/* The membership's requests (member_req.c): MEMBER itself, and the check
 * every request on a mirrored file passes (member.h member_admit). */
#ifndef DDIO_SRV_MEMBER_REQ_H
#define DDIO_SRV_MEMBER_REQ_H

#include "conn.h"

int on_member(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
/* 0: h may go on with a file of `copies` copies; 1: refused (answered) */
int member_refused(struct conn *c, const struct ddio_hdr *h, uint32_t copies);

#endif
