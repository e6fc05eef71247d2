/* ddio wire protocol, the data path's messages (ddio_proto.h): XFER and
 * its reply, the segment lists of PUT, GET and DATA, and UCX's address
 * reply and active-message headers. Conventions: ddio_proto.c. */
#include "ddio_proto.h"
#include "ddio_layout.h"           /* DDIO_MAX_COPIES */
#include "ddio_proto_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- XFER ---------------------------------------------------------------------- */

void ddio_enc_xfer(struct ddio_wbuf *w, const struct ddio_xfer *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_u32(w, m->op);
    ddio_put_u32(w, m->flags);
    ddio_put_u64(w, m->group);
    ddio_put_u64(w, m->seq);
    ddio_put_u32(w, m->nparticipants);
    ddio_put_u32(w, m->rank);
    ddio_put_u32(w, m->timeout_ms);
    ddio_put_u32(w, m->desc_len);
    ddio_put_bytes(w, m->desc, m->desc_len);
    if (m->flags & DDIO_XF_UCX) {
        ddio_put_u64(w, m->ucx_token);
        ddio_put_u64(w, m->ucx_len);
    }
    if (m->flags & DDIO_XF_INLINE) {
        ddio_put_u32(w, m->inline_len);
        if (!m->inline_npieces)
            ddio_put_bytes(w, m->inline_data, m->inline_len);
        for (uint32_t i = 0; i < m->inline_npieces; i++)
            ddio_put_bytes(w, m->inline_pieces[i].p, (size_t)m->inline_pieces[i].len);
    }
    if (m->flags & DDIO_XF_ONCE) {
        ddio_put_u64(w, m->once_client);
        ddio_put_u64(w, m->once_call);
    }
    if (m->flags & DDIO_XF_COPY)
        ddio_put_u32(w, m->copy);
}

/* rank < nparticipants is checked here because the server indexes its
 * per-participant state by rank; op and flags are the server's to judge. */
int ddio_dec_xfer(const void *p, size_t n, struct ddio_xfer *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    m->op = ddio_get_u32(&r);
    m->flags = ddio_get_u32(&r);
    m->group = ddio_get_u64(&r);
    m->seq = ddio_get_u64(&r);
    m->nparticipants = ddio_get_u32(&r);
    m->rank = ddio_get_u32(&r);
    m->timeout_ms = ddio_get_u32(&r);
    m->desc_len = ddio_get_u32(&r);
    if (!r.err && (m->nparticipants == 0 || m->rank >= m->nparticipants))
        r.err = -EPROTO;
    m->desc = ddio_get_bytes(&r, m->desc_len);
    if (!r.err && (m->flags & DDIO_XF_UCX)) {
        m->ucx_token = ddio_get_u64(&r);
        m->ucx_len = ddio_get_u64(&r);
    }
    if (!r.err && (m->flags & DDIO_XF_INLINE)) {
        m->inline_len = ddio_get_u32(&r);
        /* only a write of one participant, and not with UCX (its data
         * would have two sources) */
        if (!r.err && (m->inline_len > DDIO_MAX_INLINE || m->op != DDIO_X_WRITE
                       || m->nparticipants != 1 || (m->flags & DDIO_XF_UCX)))
            r.err = -EPROTO;
        m->inline_data = ddio_get_bytes(&r, m->inline_len);
    }
    if (!r.err && (m->flags & DDIO_XF_INLINE_OWN) && !(m->flags & DDIO_XF_INLINE))
        r.err = -EPROTO;
    if (!r.err && (m->flags & DDIO_XF_ONCE)) {
        m->once_client = ddio_get_u64(&r);
        m->once_call = ddio_get_u64(&r);
        if (!r.err && m->op != DDIO_X_WRITE)    /* a read's DONE says nothing of its data */
            r.err = -EPROTO;
    }
    if (!r.err && (m->flags & DDIO_XF_COPY)) {
        m->copy = ddio_get_u32(&r);
        /* a copy serves one reader: writes go to every copy in one pass */
        if (!r.err && (m->copy == 0 || m->copy >= DDIO_MAX_COPIES || m->op != DDIO_X_READ
                       || m->nparticipants != 1 || (m->flags & DDIO_XF_COLLECTIVE)))
            r.err = -EPROTO;
    }
    int rc = rbuf_result(&r);
    if (rc)
        memset(m, 0, sizeof(*m));
    return rc;
}

void ddio_enc_xfer_r(struct ddio_wbuf *w, const struct ddio_xfer_r *m)
{
    ddio_put_u64(w, m->bytes);
    ddio_put_u64(w, m->local_size);
    ddio_put_u64(w, m->desc_bytes);
    ddio_put_u64(w, m->blocks_read);
    ddio_put_u64(w, m->blocks_written);
    ddio_put_u64(w, m->nonconsec);
    ddio_put_u64(w, m->bytes_to_rank);
    ddio_put_u64(w, m->bytes_from_rank);
    ddio_put_u64(w, m->wait_us);
    ddio_put_u64(w, m->io_us);
    ddio_put_u64(w, m->sorted);
}

int ddio_dec_xfer_r(const void *p, size_t n, struct ddio_xfer_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->bytes = ddio_get_u64(&r);
    m->local_size = ddio_get_u64(&r);
    m->desc_bytes = ddio_get_u64(&r);
    m->blocks_read = ddio_get_u64(&r);
    m->blocks_written = ddio_get_u64(&r);
    m->nonconsec = ddio_get_u64(&r);
    m->bytes_to_rank = ddio_get_u64(&r);
    m->bytes_from_rank = ddio_get_u64(&r);
    m->wait_us = ddio_get_u64(&r);
    m->io_us = ddio_get_u64(&r);
    m->sorted = ddio_get_u64(&r);
    return rbuf_result(&r);
}

/* ---- segment lists: PUT / GET / DATA ----------------------------------------------
 * Wire: PUT = nseg u32, nseg * (off u64, len u64), data.
 *       GET = tag u32, nseg u32, nseg * (off u64, len u64).
 *       DATA = tag u32, data.
 * The list decoders read only the list part of p, never the data, so a
 * receiver that streams the data straight into its destination may pass a
 * buffer holding just the list together with n = the full payload length. */

#define SEG_WIRE DDIO_SEG_WIRE

static void enc_seglist(struct ddio_wbuf *w, const struct ddio_segs *m)
{
    ddio_put_u32(w, m->nseg);
    for (uint32_t i = 0; i < m->nseg; i++) {
        ddio_put_u64(w, m->seg[i].off);
        ddio_put_u64(w, m->seg[i].len);
    }
}

/* Decode nseg and the segments; bound the count by DDIO_MAX_SEGS and by the
 * bytes present before allocating; reject empty segments and any segment or
 * total that overflows. */
static int dec_seglist(struct ddio_rbuf *r, struct ddio_segs *m)
{
    m->nseg = ddio_get_u32(r);
    if (r->err)
        return r->err;
    if (m->nseg > DDIO_MAX_SEGS || m->nseg > rbuf_left(r) / SEG_WIRE)
        return r->err = -EPROTO;
    if (m->nseg == 0)
        return 0;
    m->seg = calloc(m->nseg, sizeof(*m->seg));
    if (!m->seg)
        return r->err = -ENOMEM;
    uint64_t total = 0;
    for (uint32_t i = 0; i < m->nseg; i++) {
        uint64_t off = ddio_get_u64(r), len = ddio_get_u64(r);
        if (r->err)
            return r->err;
        if (len == 0 || len > UINT64_MAX - off || len > UINT64_MAX - total)
            return r->err = -EPROTO;
        m->seg[i].off = off;
        m->seg[i].len = len;
        total += len;
    }
    m->total = total;
    return 0;
}

void ddio_enc_put(struct ddio_wbuf *w, const struct ddio_segs *m)
{
    enc_seglist(w, m);
}

int ddio_dec_put(const void *p, size_t n, struct ddio_segs *m, size_t *hdr_len)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    *hdr_len = 0;
    ddio_rbuf_init(&r, p, n);
    int rc = dec_seglist(&r, m);
    if (!rc && m->total != (uint64_t)rbuf_left(&r))
        rc = -EPROTO;
    if (rc) {
        ddio_segs_free(m);
        return rc;
    }
    *hdr_len = r.off;
    return 0;
}

void ddio_enc_get(struct ddio_wbuf *w, const struct ddio_segs *m)
{
    ddio_put_u32(w, m->tag);
    enc_seglist(w, m);
}

int ddio_dec_get(const void *p, size_t n, struct ddio_segs *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->tag = ddio_get_u32(&r);
    int rc = dec_seglist(&r, m);
    if (!rc)
        rc = rbuf_result(&r);
    if (rc)
        ddio_segs_free(m);
    return rc;
}

void ddio_enc_data(struct ddio_wbuf *w, uint32_t tag)
{
    ddio_put_u32(w, tag);
}

/* The data length is checked by the caller against the GET it answers. */
int ddio_dec_data(const void *p, size_t n, uint32_t *tag, size_t *hdr_len)
{
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, p, n);
    *tag = ddio_get_u32(&r);
    *hdr_len = r.err ? 0 : r.off;
    return r.err;
}

void ddio_segs_free(struct ddio_segs *m)
{
    free(m->seg);
    memset(m, 0, sizeof(*m));
}

/* ---- UCX: the address reply, the active messages' headers ------------------------ */

void ddio_enc_ucxaddr_r(struct ddio_wbuf *w, uint64_t cookie, const void *addr, uint32_t len)
{
    ddio_put_u64(w, cookie);
    ddio_put_u32(w, len);
    ddio_put_bytes(w, addr, len);
}

int ddio_dec_ucxaddr_r(const void *p, size_t n, uint64_t *cookie, const uint8_t **addr,
                       uint32_t *len)
{
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, p, n);
    *cookie = ddio_get_u64(&r);
    *len = ddio_get_u32(&r);
    if (!r.err && (*len == 0 || *len > DDIO_MAX_UCXADDR))
        r.err = -EPROTO;
    *addr = ddio_get_bytes(&r, *len);
    int rc = rbuf_result(&r);
    if (rc) {
        *addr = NULL;
        *len = 0;
    }
    return rc;
}

void ddio_enc_am_put(struct ddio_wbuf *w, uint64_t token, const struct ddio_segs *m)
{
    ddio_put_u64(w, token);
    ddio_enc_get(w, m);
}

int ddio_dec_am_put(const void *p, size_t n, uint64_t *token, struct ddio_segs *m)
{
    memset(m, 0, sizeof(*m));
    if (n < 8)
        return -EPROTO;
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, p, 8);
    *token = ddio_get_u64(&r);
    int rc = ddio_dec_get((const uint8_t *)p + 8, n - 8, m);
    if (rc == 0 && (m->tag != 0 || m->nseg == 0)) {
        ddio_segs_free(m);
        rc = -EPROTO;
    }
    return rc;
}

void ddio_enc_am_data(uint8_t out[DDIO_AM_DATA_HDR], uint64_t cookie, uint64_t req, uint32_t tag)
{
    for (int i = 0; i < 8; i++) {
        out[i] = (uint8_t)(cookie >> (8 * i));
        out[8 + i] = (uint8_t)(req >> (8 * i));
    }
    for (int i = 0; i < 4; i++)
        out[16 + i] = (uint8_t)(tag >> (8 * i));
}

int ddio_dec_am_data(const void *p, size_t n, uint64_t *cookie, uint64_t *req, uint32_t *tag)
{
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, p, n);
    *cookie = ddio_get_u64(&r);
    *req = ddio_get_u64(&r);
    *tag = ddio_get_u32(&r);
    return rbuf_result(&r);
}
