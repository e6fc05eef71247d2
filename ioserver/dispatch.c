/* Request dispatch: each message a client sends goes to its handler, once
 * the connection said HELLO and, for anything but HELLO and AUTH,
 * authenticated. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "dispatch.h"

#include <errno.h>

#include "admit.h"
#include "handlers.h"
#include "member_req.h"
#include "namespace.h"
#include "rebuild.h"
#include "reply.h"
#include "watch.h"

int dispatch(struct conn *c, const struct ddio_hdr *h, uint8_t **payload)
{
    const uint8_t *p = *payload;
    stats_request(&c->srv->stats, h->type);
    if (!c->hello && h->type != DDIO_T_HELLO) {
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EPROTO,
                      "expected HELLO as first message, got %s", ddio_type_name(h->type));
        return -EPROTO;
    }
    if (!atomic_load(&c->authed) && h->type != DDIO_T_HELLO && h->type != DDIO_T_AUTH)
        return refuse_unauth(c, h);
    switch (h->type) {
    case DDIO_T_HELLO:
        if (c->hello) {
            conn_send_err(c, h->type | DDIO_REPLY, h->req, EPROTO, "second HELLO");
            return -EPROTO;
        }
        return on_hello(c, h, p);
    case DDIO_T_AUTH:    return on_auth(c, h, p);
    case DDIO_T_OPEN:    return on_open(c, h, p);
    case DDIO_T_CLOSE:   return on_close(c, h, p);
    case DDIO_T_STAT:    return on_stat(c, h, p);
    case DDIO_T_SETSIZE: return on_setsize(c, h, p);
    case DDIO_T_DELETE:  return on_delete(c, h, p);
    case DDIO_T_STATS:   return on_stats(c, h);
    case DDIO_T_PSTAT:   return on_pstat(c, h, p);
    case DDIO_T_READDIR: return on_readdir(c, h, p);
    case DDIO_T_MKDIR:   return on_mkdir(c, h, p);
    case DDIO_T_RMDIR:   return on_rmdir(c, h, p);
    case DDIO_T_RENAME:  return on_rename(c, h, p);
    case DDIO_T_SETATTR: return on_setattr(c, h, p);
    case DDIO_T_ACTAS:   return on_actas(c, h, p);
    case DDIO_T_LOCALSTAT: return on_localstat(c, h, p);
    case DDIO_T_UCXADDR: return on_ucxaddr(c, h);
    case DDIO_T_CANCEL:  return on_cancel(c, h, p);
    case DDIO_T_LOCAL:   return on_local(c, h, p);
    case DDIO_T_WATCH:   return on_watch(c, h, p);
    case DDIO_T_REBUILD: return on_rebuild(c, h, p);
    case DDIO_T_MEMBER:  return on_member(c, h, p);
    case DDIO_T_XFER:
    case DDIO_T_SYNC:
    case DDIO_T_PREALLOC:
    case DDIO_T_SCRUB:
    case DDIO_T_REPAIR:
    case DDIO_T_ECREAD:
    case DDIO_T_LOCK:    return on_slow(c, h, payload);
    default:
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EPROTO, "unexpected message type %u",
                      h->type);
        return -EPROTO;
    }
}
