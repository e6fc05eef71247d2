/* MEMBER (PROTOCOL.md "MEMBER"): the deployment's membership record, read
 * and changed by a majority of its servers. Hostile input: every count is
 * bounded before it is read, and a value that could not have been agreed
 * (duplicate members, nobody in, an out flag other than 0/1) is refused. */
#include <string.h>

#include "ddio_proto.h"
#include "ddio_proto_int.h"

static void enc_val(struct ddio_wbuf *w, const struct ddio_member_val *v)
{
    if (v->n > DDIO_MAX_SERVERS) {
        w->err = -EINVAL;
        return;
    }
    ddio_put_u32(w, v->n);
    for (uint32_t i = 0; i < v->n; i++) {
        ddio_put_bytes(w, v->ids[i], DDIO_ID_LEN);
        ddio_put_u8(w, v->out[i]);
    }
}

/* a value with n members is well formed: distinct ids, flags 0 or 1, and
 * at least one member in (a deployment with nobody in has nobody to agree) */
static int val_ok(const struct ddio_member_val *v)
{
    uint32_t in = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        if (v->out[i] > 1)
            return 0;
        in += !v->out[i];
        for (uint32_t j = 0; j < i; j++)
            if (!memcmp(v->ids[i], v->ids[j], DDIO_ID_LEN))
                return 0;
    }
    return v->n == 0 || in > 0;
}

static void dec_val(struct ddio_rbuf *r, struct ddio_member_val *v)
{
    v->n = ddio_get_u32(r);
    if (!r->err && (v->n > DDIO_MAX_SERVERS
                    || (uint64_t)v->n * (DDIO_ID_LEN + 1) > rbuf_left(r)))
        r->err = -EPROTO;
    for (uint32_t i = 0; !r->err && i < v->n; i++) {
        const uint8_t *id = ddio_get_bytes(r, DDIO_ID_LEN);
        if (id)
            memcpy(v->ids[i], id, DDIO_ID_LEN);
        v->out[i] = ddio_get_u8(r);
    }
    if (!r->err && !val_ok(v))
        r->err = -EPROTO;
}

void ddio_enc_member(struct ddio_wbuf *w, const struct ddio_member *m)
{
    ddio_put_u32(w, m->op);
    ddio_put_u32(w, m->epoch);
    ddio_put_u64(w, m->ballot);
    enc_val(w, &m->val);
}

/* what each op must carry: GET nothing, PREPARE an epoch and a ballot,
 * ACCEPT those and a value, COMMIT an epoch and a value */
static int member_shape_ok(const struct ddio_member *m)
{
    switch (m->op) {
    case DDIO_MB_GET:
        return m->epoch == 0 && m->ballot == 0 && m->val.n == 0;
    case DDIO_MB_PREPARE:
        return m->epoch >= 1 && m->ballot >= 1 && m->val.n == 0;
    case DDIO_MB_ACCEPT:
        return m->epoch >= 1 && m->ballot >= 1 && m->val.n >= 1;
    case DDIO_MB_COMMIT:
        return m->epoch >= 1 && m->ballot == 0 && m->val.n >= 1;
    case DDIO_MB_SEAL:
        return m->epoch == 0 && m->ballot == 0 && m->val.n == 0;
    case DDIO_MB_CONFIRM:
        return m->epoch >= 1 && m->ballot >= 1 && m->val.n == 0;
    default:
        return 0;
    }
}

int ddio_dec_member(const void *p, size_t n, struct ddio_member *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->op = ddio_get_u32(&r);
    m->epoch = ddio_get_u32(&r);
    m->ballot = ddio_get_u64(&r);
    dec_val(&r, &m->val);
    int rc = rbuf_result(&r);
    if (rc == 0 && !member_shape_ok(m))
        rc = -EPROTO;
    if (rc)
        memset(m, 0, sizeof(*m));
    return rc;
}

void ddio_enc_member_r(struct ddio_wbuf *w, const struct ddio_member_r *m)
{
    ddio_put_u32(w, m->epoch);
    enc_val(w, &m->val);
    ddio_put_u64(w, m->promised);
    ddio_put_u64(w, m->acc_ballot);
    enc_val(w, &m->acc);
    ddio_put_u64(w, m->sealed);
}

int ddio_dec_member_r(const void *p, size_t n, struct ddio_member_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->epoch = ddio_get_u32(&r);
    dec_val(&r, &m->val);
    m->promised = ddio_get_u64(&r);
    m->acc_ballot = ddio_get_u64(&r);
    dec_val(&r, &m->acc);
    m->sealed = ddio_get_u64(&r);
    int rc = rbuf_result(&r);
    /* a record past epoch 0 names its members; an accepted value has the
     * ballot it was accepted under, and that ballot was promised */
    if (rc == 0 && ((m->epoch > 0) != (m->val.n > 0) || (m->acc.n > 0) != (m->acc_ballot > 0)
                    || m->acc_ballot > m->promised))
        rc = -EPROTO;
    if (rc)
        memset(m, 0, sizeof(*m));
    return rc;
}
