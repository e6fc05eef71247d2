/* ECREAD (PROTOCOL.md "ECREAD"): bytes of an erasure-coded file's view,
 * for a read that decodes a lost server's units. */
#include <stdlib.h>
#include <string.h>

#include "ddio_proto.h"
#include "ddio_proto_int.h"

void ddio_enc_ecread(struct ddio_wbuf *w, const struct ddio_ecread *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_u32(w, m->view);
    ddio_put_u32(w, m->len);
    ddio_put_u64(w, m->off);
}

int ddio_dec_ecread(const void *p, size_t n, struct ddio_ecread *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    m->view = ddio_get_u32(&r);
    m->len = ddio_get_u32(&r);
    m->off = ddio_get_u64(&r);
    int rc = rbuf_result(&r);
    if (rc == 0 && (m->view > DDIO_EV_FOLDING || m->len == 0
                    || (m->len > DDIO_ECREAD_MAX && m->view < DDIO_EV_EXTENTS)
                    || m->off > UINT64_MAX - m->len))
        rc = -EPROTO;
    if (rc)
        memset(m, 0, sizeof(*m));
    return rc;
}

void ddio_enc_ecread_r(struct ddio_wbuf *w, const struct ddio_ecread_r *m)
{
    ddio_put_u64(w, m->logical_size);
    ddio_put_u32(w, m->pstate);
    ddio_put_u32(w, m->data_len);
    ddio_put_bytes(w, m->data, m->data_len);
    ddio_put_u32(w, m->next);
    for (uint32_t i = 0; i < 2 * m->next; i++)
        ddio_put_u64(w, m->ext[i]);
}

int ddio_dec_ecread_r(const void *p, size_t n, struct ddio_ecread_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->logical_size = ddio_get_u64(&r);
    m->pstate = ddio_get_u32(&r);
    m->data_len = ddio_get_u32(&r);
    if (!r.err && (m->data_len > DDIO_ECREAD_MAX || m->pstate > DDIO_PS_MERGED))
        r.err = -EPROTO;
    if (!r.err)
        m->data = ddio_get_bytes(&r, m->data_len);
    m->next = ddio_get_u32(&r);
    if (!r.err && (m->next > DDIO_ECREAD_MAX_EXT || (uint64_t)m->next * 16 > rbuf_left(&r)))
        r.err = -EPROTO;
    if (!r.err && m->next && !(m->ext = malloc(2 * m->next * sizeof(*m->ext))))
        r.err = -ENOMEM;
    for (uint32_t i = 0; !r.err && i < 2 * m->next; i++)
        m->ext[i] = ddio_get_u64(&r);
    /* extents sorted, inside the bytes sent */
    for (uint32_t i = 0; !r.err && i < m->next; i++)
        if (m->ext[2 * i] >= m->ext[2 * i + 1] || (i && m->ext[2 * i] < m->ext[2 * i - 1]))
            r.err = -EPROTO;
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->ext);
        memset(m, 0, sizeof(*m));
    }
    return rc;
}

void ddio_ecread_r_free(struct ddio_ecread_r *m)
{
    free(m->ext);
    m->ext = NULL;
}
