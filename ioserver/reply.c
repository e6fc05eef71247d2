/* Replies to a client's request on its connection: success (empty or an
 * encoded payload), and errors, which name the server and go through the
 * connection's endpoint (xp_vreply_err, transport.c) like the engine's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "reply.h"

#include <errno.h>
#include <stdarg.h>

#include "ddio_net.h"

/* error reply: "server HOST:PORT: <cause>" */
int conn_send_err(struct conn *c, uint16_t type, uint64_t req, int err,
                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = xp_vreply_err(&c->xp, type, req, err, fmt, ap);
    va_end(ap);
    return rc;
}

/* reply with an encoded payload (w is consumed) */
int reply_w(struct conn *c, const struct ddio_hdr *h, struct ddio_wbuf *w)
{
    if (w->err) {
        ddio_wbuf_free(w);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "out of memory");
    }
    return conn_send(c, h->type | DDIO_REPLY, h->req, 0, w->p, w->len, 0,
                     ddio_now_ms() + XP_REPLY_TIMEOUT_MS);
}

int reply_ok(struct conn *c, const struct ddio_hdr *h)
{
    return conn_send(c, h->type | DDIO_REPLY, h->req, 0, NULL, 0, 0,
                     ddio_now_ms() + XP_REPLY_TIMEOUT_MS);
}

int bad_payload(struct conn *c, const struct ddio_hdr *h)
{
    conn_send_err(c, h->type | DDIO_REPLY, h->req, EPROTO, "malformed %s payload",
                  ddio_type_name(h->type));
    return -EPROTO;
}
