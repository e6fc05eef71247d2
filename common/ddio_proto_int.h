/* Helpers the wire protocol's decoders share (ddio_proto.c,
 * ddio_proto_msg.c, ddio_proto_data.c, ddio_proto_ns.c); not for users
 * of ddio_proto.h. */
#ifndef DDIO_PROTO_INT_H
#define DDIO_PROTO_INT_H

#include <errno.h>
#include <stddef.h>

#include "ddio_proto.h"

static inline size_t rbuf_left(const struct ddio_rbuf *r)
{
    return r->len - r->off;
}

/* The decoder result: the sticky error if any (it may be -ENOMEM), else
 * -EPROTO unless every byte was consumed. */
static inline int rbuf_result(const struct ddio_rbuf *r)
{
    if (r->err)
        return r->err;
    return r->off == r->len ? 0 : -EPROTO;
}

#endif
