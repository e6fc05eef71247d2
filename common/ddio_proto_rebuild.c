/* REBUILD (PROTOCOL.md "REBUILD"): a replacement server takes a lost one's
 * id, and a file is rebuilt on it while its servers keep writers off. */
#include <stdlib.h>
#include <string.h>

#include "ddio_proto.h"
#include "ddio_proto_int.h"

/* what follows the op: ADOPT an id; PROGRESS three counts; MISSED,
 * FREEZE and THAW a member; RESYNCED a member and a path; BEGIN and REDO
 * a path and a layout; FOLD and FOLDED a path and two group numbers;
 * DOUBT nothing; the other ops a path */
static int has_member(uint32_t op)
{
    return op == DDIO_RB_MISSED || op == DDIO_RB_RESYNCED || op == DDIO_RB_FREEZE
        || op == DDIO_RB_THAW;
}

static int has_path(uint32_t op)
{
    return op != DDIO_RB_MISSED && op != DDIO_RB_DOUBT && op != DDIO_RB_FREEZE
        && op != DDIO_RB_THAW;
}

void ddio_enc_rebuild(struct ddio_wbuf *w, const struct ddio_rebuild *m)
{
    ddio_put_u32(w, m->op);
    if (m->op == DDIO_RB_ADOPT) {
        ddio_put_bytes(w, m->id, DDIO_ID_LEN);
        return;
    }
    if (m->op == DDIO_RB_PROGRESS) {
        ddio_put_u64(w, m->done);
        ddio_put_u64(w, m->total);
        ddio_put_u64(w, m->rate);
        return;
    }
    if (has_member(m->op))
        ddio_put_u32(w, m->member);
    if (!has_path(m->op))
        return;
    ddio_put_str(w, m->path ? m->path : "");
    if (m->op == DDIO_RB_BEGIN || m->op == DDIO_RB_REDO)
        ddio_enc_layout(w, &m->layout);
    if (m->op == DDIO_RB_FOLD || m->op == DDIO_RB_FOLDED) {
        ddio_put_u64(w, m->glo);
        ddio_put_u64(w, m->ghi);
    }
}

static void dec_path_ops(struct ddio_rbuf *r, struct ddio_rebuild *m)
{
    if (has_member(m->op)) {
        m->member = ddio_get_u32(r);
        if (!r->err && m->member >= DDIO_MAX_SERVERS)
            r->err = -EPROTO;
    }
    if (r->err || !has_path(m->op))
        return;
    m->path = ddio_get_str(r, DDIO_MAX_STR);
    if (!r->err && !m->path[0])         /* a file, never the root */
        r->err = -EPROTO;
    if (!r->err && (m->op == DDIO_RB_BEGIN || m->op == DDIO_RB_REDO))
        ddio_dec_layout(r, &m->layout);
    if (!r->err && (m->op == DDIO_RB_FOLD || m->op == DDIO_RB_FOLDED)) {
        m->glo = ddio_get_u64(r);
        m->ghi = ddio_get_u64(r);
        if (!r->err && m->glo >= m->ghi)
            r->err = -EPROTO;
    }
}

int ddio_dec_rebuild(const void *p, size_t n, struct ddio_rebuild *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->op = ddio_get_u32(&r);
    if (!r.err && (m->op < DDIO_RB_ADOPT || m->op > DDIO_RB_FOLDED))
        r.err = -EPROTO;
    if (!r.err && m->op == DDIO_RB_PROGRESS) {
        m->done = ddio_get_u64(&r);
        m->total = ddio_get_u64(&r);
        m->rate = ddio_get_u64(&r);
        if (!r.err && m->done > m->total)
            r.err = -EPROTO;
    } else if (!r.err && m->op == DDIO_RB_ADOPT) {
        const uint8_t *id = ddio_get_bytes(&r, DDIO_ID_LEN);
        if (id)
            memcpy(m->id, id, DDIO_ID_LEN);
    } else if (!r.err)
        dec_path_ops(&r, m);
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->path);
        memset(m, 0, sizeof(*m));
    }
    return rc;
}

void ddio_enc_rebuild_r(struct ddio_wbuf *w, const struct ddio_rebuild_r *m)
{
    ddio_put_u32(w, m->state);
    ddio_put_u32(w, m->npaths);
    for (uint32_t i = 0; i < m->npaths; i++)
        ddio_put_str(w, m->paths[i]);
}

int ddio_dec_rebuild_r(const void *p, size_t n, struct ddio_rebuild_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->state = ddio_get_u32(&r);
    uint32_t k = ddio_get_u32(&r);
    if (!r.err && (m->state > DDIO_RB_BUILT || k > DDIO_RB_MAX_PATHS))
        r.err = -EPROTO;
    if (!r.err && k && !(m->paths = calloc(k, sizeof(*m->paths))))
        r.err = -ENOMEM;
    for (uint32_t i = 0; i < k && !r.err; i++) {
        m->paths[i] = ddio_get_str(&r, DDIO_MAX_STR);
        m->npaths = i + 1;
        if (!r.err && !m->paths[i][0])
            r.err = -EPROTO;
    }
    int rc = rbuf_result(&r);
    if (rc)
        ddio_rebuild_r_free(m);
    return rc;
}

void ddio_rebuild_r_free(struct ddio_rebuild_r *m)
{
    for (uint32_t i = 0; i < m->npaths; i++)
        free(m->paths[i]);
    free(m->paths);
    memset(m, 0, sizeof(*m));
}
