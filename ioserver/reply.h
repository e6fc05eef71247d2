/* Replies to a client's request (reply.c). */
#ifndef DDIO_SRV_REPLY_H
#define DDIO_SRV_REPLY_H

#include "conn.h"

/* error reply: "server HOST:PORT: <cause>" */
int conn_send_err(struct conn *c, uint16_t type, uint64_t req, int err,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* reply with an encoded payload (w is consumed) */
int reply_w(struct conn *c, const struct ddio_hdr *h, struct ddio_wbuf *w);
int reply_ok(struct conn *c, const struct ddio_hdr *h);
/* EPROTO "malformed X payload"; returns -EPROTO */
int bad_payload(struct conn *c, const struct ddio_hdr *h);

#endif
