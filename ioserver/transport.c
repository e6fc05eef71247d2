/* What every transport shares (see transport.h): error replies. */
#include "transport.h"

#include <errno.h>
#include <stdio.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "server.h"

int xp_vreply_err(struct xp *ep, uint16_t type, uint64_t req, int err, const char *fmt,
                  va_list ap)
{
    char msg[1024];
    srv_errmsg(ep->srv, msg, sizeof(msg), fmt, ap);
    DDIO_DEBUG("reply %s to %s: %s", ddio_type_name(type & ~DDIO_REPLY), xp_name(ep), msg);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_err(&w, msg);
    if (w.err) {
        ddio_wbuf_free(&w);
        return -ENOMEM;
    }
    return xp_reply(ep, type, req, err, w.p, w.len, ddio_now_ms() + XP_REPLY_TIMEOUT_MS);
}

int xp_reply_err(struct xp *ep, uint16_t type, uint64_t req, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = xp_vreply_err(ep, type, req, err, fmt, ap);
    va_end(ap);
    return rc;
}

struct xp_get *xp_take_owner(struct xp_get **list, const void *owner)
{
    struct xp_get *out = NULL;
    for (struct xp_get **pp = list; *pp;) {
        struct xp_get *g = *pp;
        if (g->owner != owner) {
            pp = &g->next;
            continue;
        }
        *pp = g->next;
        g->next = out;
        out = g;
    }
    return out;
}

struct gather {
    struct iovec *v;
    int n, max;
};

static int gather_piece(void *arg, uint8_t *p, uint64_t s, uint64_t n)
{
    struct gather *g = arg;
    (void)s;
    struct iovec *last = g->n ? &g->v[g->n - 1] : NULL;
    if (last && (uint8_t *)last->iov_base + last->iov_len == p) {
        last->iov_len += n;       /* adjacent in the block: one piece */
        return 0;
    }
    if (g->n == g->max)
        return -E2BIG;            /* the walk stops */
    g->v[g->n++] = (struct iovec){p, n};
    return 0;
}

int xp_gather(xp_walk_fn *walk, void *arg, struct iovec *v, int *n, int max)
{
    if (!walk)
        return -EINVAL;
    struct gather g = {v, *n, max};
    int rc = walk(arg, gather_piece, &g);
    *n = g.n;
    return rc;
}

int xp_enc_get(const struct xp_get *g, struct ddio_wbuf *w)
{
    struct ddio_segs m = {.tag = g->tag, .nseg = g->nseg, .seg = (struct ddio_seg *)g->seg,
                          .total = g->total};
    ddio_wbuf_init(w);
    ddio_enc_get(w, &m);
    if (w->err) {
        ddio_wbuf_free(w);
        return -ENOMEM;
    }
    return 0;
}
