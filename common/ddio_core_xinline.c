/* What an XFER carries (ddio_core_xfer.c's send_one): a write's bytes in
 * the request itself (DDIO_XF_INLINE, PROTOCOL.md "Inline write"), the
 * whole stream or only the server's own units' bytes, or nothing (the
 * server GETs them, by TCP or UCX). */
#include "ddio_core_xstate.h"

#include "ddio_layout.h"
#include "ddio_ucx.h"
#include "ddio_xport.h"

/* one rank's contiguous write of at most limit bytes */
static int small_write(const struct ddio_xfer_req *x, uint64_t limit)
{
    return x->op == DDIO_X_WRITE && x->nparticipants == 1 && x->mem->contig
        && x->fdesc->length <= limit;
}

int xfer_ucx_fits(const xstate *st, int i)
{
    const struct ddio_xfer_req *x = st->x;
    return !st->s[i].no_ucx && st->f->xport != DDIO_XPORT_TCP && x->mem->contig &&
        x->fdesc->length >= DDIO_UCX_MIN_STREAM && !small_write(x, DDIO_UCX_MIN_STREAM);
}

static int own_piece(void *arg, uint32_t server, uint64_t logical_off, uint64_t local_off,
                     uint64_t len)
{
    struct xfer_own *o = arg;
    (void) local_off;
    if (server != o->server)
        return 0;
    if (o->n == XFER_OWN_PIECES)
        return 1;
    o->v[o->n++] = (struct ddio_span) {o->base + (logical_off - o->first), len};
    o->len += len;
    return 0;
}

/* A one-range write of a file whose units are each on one server carries
 * to each server its own bytes only (DDIO_XF_INLINE_OWN): up to
 * DDIO_MAX_INLINE per server the call is one round trip, and no server
 * receives the others' bytes (a whole inline stream goes to every server
 * involved: a 512 KiB write over 64 KiB units on 2 servers 0.78-0.93x the
 * time). 1: o holds server i's pieces. */
static int own_write(const xstate *st, int i, struct xfer_own *o)
{
    const struct ddio_xfer_req *x = st->x;
    const struct ddio_fh *f = st->f;
    int64_t first, end;
    if (!small_write(x, UINT64_MAX) || f->nsrv < 2 || f->copies > 1 || f->ec.k || st->s[i].via != i || st->s[i].copy
        || xfer_ucx_fits(st, i) || x->fdesc->length == 0)
        return 0;
    ddio_desc_bounds(x->fdesc, &first, &end);
    if (end - first != (int64_t) x->fdesc->length)
        return 0;
    o->n = 0;
    o->server = (uint32_t) i;
    o->len = 0;
    o->base = (const uint8_t *) x->mem->buf;
    o->first = (uint64_t) first;
    return ddio_layout_foreach(&f->stripe, o->first, x->fdesc->length, own_piece, o) == 0
        && o->n > 0 && o->len <= DDIO_MAX_INLINE;
}

/* A small write carries its bytes: one round trip, no GET and DATA. Up
 * to DDIO_MAX_INLINE where its data goes by TCP anyway (a 128 KiB write
 * through a server 0.62-0.75x the time of GET and DATA, 512 KiB
 * 0.74-0.85x); where UCX would move it, only up to DDIO_UCX_MIN_STREAM:
 * on a fabric UCX's rendezvous moves a larger body faster than the
 * control connection. */
int xfer_inline(const xstate *st, int i, struct ddio_xfer *m, struct xfer_own *o)
{
    const struct ddio_xfer_req *x = st->x;
    if (own_write(st, i, o)) {
        m->flags |= DDIO_XF_INLINE | DDIO_XF_INLINE_OWN;
        m->inline_len = (uint32_t) o->len;
        m->inline_pieces = o->v;
        m->inline_npieces = (uint32_t) o->n;
        return 1;
    }
    if (!small_write(x, DDIO_MAX_INLINE) || xfer_ucx_fits(st, i))
        return 0;
    m->flags |= DDIO_XF_INLINE;
    m->inline_len = (uint32_t) x->fdesc->length;
    m->inline_data = (const uint8_t *) x->mem->buf;
    return 1;
}
