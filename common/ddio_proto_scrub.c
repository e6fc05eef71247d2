/* SCRUB and REPAIR (PROTOCOL.md "SCRUB and REPAIR"): a copy's sectors
 * checked against their checksums, bad ones rewritten from a good copy. */
#include <stdlib.h>
#include <string.h>

#include "ddio_proto.h"
#include "ddio_proto_int.h"

static int sector_aligned(uint64_t v)
{
    return v % DDIO_SCRUB_SECTOR == 0;
}

void ddio_enc_scrub(struct ddio_wbuf *w, const struct ddio_scrub *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_u32(w, m->copy);
    ddio_put_u32(w, m->flags);
    ddio_put_u64(w, m->off);
    ddio_put_u64(w, m->len);
}

int ddio_dec_scrub(const void *p, size_t n, struct ddio_scrub *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    m->copy = ddio_get_u32(&r);
    m->flags = ddio_get_u32(&r);
    m->off = ddio_get_u64(&r);
    m->len = ddio_get_u64(&r);
    int rc = rbuf_result(&r);
    uint64_t max = (m->flags & DDIO_SC_DATA) ? DDIO_SCRUB_DATA_MAX : DDIO_SCRUB_MAX;
    if (rc == 0 && (m->copy >= DDIO_SCRUB_VIEWS || (m->flags & ~DDIO_SC_DATA)
                    || !sector_aligned(m->off) || m->len == 0 || m->len > max
                    || m->off > UINT64_MAX - m->len - DDIO_SCRUB_SECTOR))
        rc = -EPROTO;
    if (rc)
        memset(m, 0, sizeof(*m));
    return rc;
}

void ddio_enc_scrub_r(struct ddio_wbuf *w, const struct ddio_scrub_r *m)
{
    ddio_put_u64(w, m->next);
    ddio_put_u64(w, m->size);
    ddio_put_u64(w, m->verified);
    ddio_put_u64(w, m->unknown);
    ddio_put_u32(w, m->nbad);
    for (uint32_t i = 0; i < m->nbad; i++)
        ddio_put_u64(w, m->bad[i]);
    ddio_put_u32(w, m->data_len);
    ddio_put_bytes(w, m->data, m->data_len);
}

int ddio_dec_scrub_r(const void *p, size_t n, struct ddio_scrub_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->next = ddio_get_u64(&r);
    m->size = ddio_get_u64(&r);
    m->verified = ddio_get_u64(&r);
    m->unknown = ddio_get_u64(&r);
    m->nbad = ddio_get_u32(&r);
    if (!r.err && (m->nbad > DDIO_SCRUB_MAX_BAD || (uint64_t)m->nbad * 8 > rbuf_left(&r)))
        r.err = -EPROTO;
    if (!r.err && m->nbad && !(m->bad = malloc(m->nbad * sizeof(*m->bad))))
        r.err = -ENOMEM;
    for (uint32_t i = 0; !r.err && i < m->nbad; i++)
        m->bad[i] = ddio_get_u64(&r);
    m->data_len = ddio_get_u32(&r);
    if (!r.err && m->data_len > DDIO_SCRUB_DATA_MAX)
        r.err = -EPROTO;
    if (!r.err)
        m->data = ddio_get_bytes(&r, m->data_len);
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->bad);
        memset(m, 0, sizeof(*m));
    }
    return rc;
}

void ddio_scrub_r_free(struct ddio_scrub_r *m)
{
    free(m->bad);
    m->bad = NULL;
    m->nbad = 0;
}

void ddio_enc_repair(struct ddio_wbuf *w, const struct ddio_repair *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_u32(w, m->copy);
    ddio_put_u64(w, m->off);
    ddio_put_u32(w, m->data_len);
    ddio_put_bytes(w, m->data, m->data_len);
}

int ddio_dec_repair(const void *p, size_t n, struct ddio_repair *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    m->copy = ddio_get_u32(&r);
    m->off = ddio_get_u64(&r);
    m->data_len = ddio_get_u32(&r);
    if (!r.err && (m->data_len == 0 || m->data_len > DDIO_SCRUB_DATA_MAX
                   || !sector_aligned(m->data_len)))
        r.err = -EPROTO;
    if (!r.err)
        m->data = ddio_get_bytes(&r, m->data_len);
    int rc = rbuf_result(&r);
    if (rc == 0 && (m->copy >= DDIO_SCRUB_VIEWS || !sector_aligned(m->off)
                    || m->off > UINT64_MAX - m->data_len))
        rc = -EPROTO;
    if (rc)
        memset(m, 0, sizeof(*m));
    return rc;
}

void ddio_enc_repair_r(struct ddio_wbuf *w, const struct ddio_repair_r *m)
{
    ddio_put_u32(w, m->repaired);
    ddio_put_u32(w, m->good);
    ddio_put_u32(w, m->refused);
}

int ddio_dec_repair_r(const void *p, size_t n, struct ddio_repair_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->repaired = ddio_get_u32(&r);
    m->good = ddio_get_u32(&r);
    m->refused = ddio_get_u32(&r);
    int rc = rbuf_result(&r);
    if (rc)
        memset(m, 0, sizeof(*m));
    return rc;
}
