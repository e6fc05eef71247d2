/* ddio wire protocol, the control messages (ddio_proto.h): HELLO, AUTH,
 * the layout record and OPEN, the small fixed-size requests and replies
 * (CANCEL, LOCAL, handle, path, SETSIZE, PREALLOC), LOCK, the STATS reply
 * and the error reply. Conventions: ddio_proto.c. */
#include "ddio_proto.h"
#include "ddio_layout.h"           /* DDIO_MAX_COPIES */
#include "ddio_proto_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- HELLO ---------------------------------------------------------------- */

void ddio_enc_hello(struct ddio_wbuf *w, const struct ddio_hello *m)
{
    ddio_put_u32(w, m->pid);
    ddio_put_u32(w, m->flags);
    ddio_put_str(w, m->client);
}

int ddio_dec_hello(const void *p, size_t n, struct ddio_hello *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->pid = ddio_get_u32(&r);
    m->flags = ddio_get_u32(&r);
    m->client = ddio_get_str(&r, DDIO_MAX_STR);
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->client);
        memset(m, 0, sizeof(*m));
    }
    return rc;
}

void ddio_enc_hello_r(struct ddio_wbuf *w, const struct ddio_hello_r *m)
{
    ddio_put_bytes(w, m->server_id, DDIO_ID_LEN);
    ddio_put_u32(w, m->ndisks);
    ddio_put_u32(w, m->flags);
    ddio_put_u64(w, m->block_size);
    ddio_put_bytes(w, m->nonce, DDIO_NONCE_LEN);
    ddio_put_str(w, m->name);
}

int ddio_dec_hello_r(const void *p, size_t n, struct ddio_hello_r *m)
{
    struct ddio_rbuf r;
    const uint8_t *b;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    if ((b = ddio_get_bytes(&r, DDIO_ID_LEN)))
        memcpy(m->server_id, b, DDIO_ID_LEN);
    m->ndisks = ddio_get_u32(&r);
    m->flags = ddio_get_u32(&r);
    m->block_size = ddio_get_u64(&r);
    if ((b = ddio_get_bytes(&r, DDIO_NONCE_LEN)))
        memcpy(m->nonce, b, DDIO_NONCE_LEN);
    m->name = ddio_get_str(&r, DDIO_MAX_STR);
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->name);
        memset(m, 0, sizeof(*m));
    }
    return rc;
}

/* ---- AUTH ------------------------------------------------------------------ */

void ddio_enc_auth(struct ddio_wbuf *w, const struct ddio_auth *m)
{
    ddio_put_bytes(w, m->nonce, DDIO_NONCE_LEN);
    ddio_put_bytes(w, m->mac, DDIO_MAC_LEN);
}

/* fixed-size byte fields, in order; *m is all zeros on any error */
static int dec_fixed(const void *p, size_t n, void *m, size_t msize, uint8_t *f1, size_t n1,
                     uint8_t *f2, size_t n2)
{
    struct ddio_rbuf r;
    const uint8_t *b;
    memset(m, 0, msize);
    ddio_rbuf_init(&r, p, n);
    if ((b = ddio_get_bytes(&r, n1)))
        memcpy(f1, b, n1);
    if (n2 && (b = ddio_get_bytes(&r, n2)))
        memcpy(f2, b, n2);
    int rc = rbuf_result(&r);
    if (rc)
        memset(m, 0, msize);
    return rc;
}

int ddio_dec_auth(const void *p, size_t n, struct ddio_auth *m)
{
    return dec_fixed(p, n, m, sizeof(*m), m->nonce, DDIO_NONCE_LEN, m->mac, DDIO_MAC_LEN);
}

void ddio_enc_auth_r(struct ddio_wbuf *w, const struct ddio_auth_r *m)
{
    ddio_put_bytes(w, m->mac, DDIO_MAC_LEN);
}

int ddio_dec_auth_r(const void *p, size_t n, struct ddio_auth_r *m)
{
    return dec_fixed(p, n, m, sizeof(*m), m->mac, DDIO_MAC_LEN, NULL, 0);
}

void ddio_enc_auth_munge(struct ddio_wbuf *w, const struct ddio_auth_munge *m)
{
    ddio_put_bytes(w, m->nonce, DDIO_NONCE_LEN);
    ddio_put_str(w, m->cred);
}

int ddio_dec_auth_munge(const void *p, size_t n, struct ddio_auth_munge *m)
{
    struct ddio_rbuf r;
    const uint8_t *b;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    if ((b = ddio_get_bytes(&r, DDIO_NONCE_LEN)))
        memcpy(m->nonce, b, DDIO_NONCE_LEN);
    m->cred = ddio_get_str(&r, DDIO_MAX_STR);
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->cred);
        memset(m, 0, sizeof(*m));
    }
    return rc;
}

void ddio_enc_auth_munge_r(struct ddio_wbuf *w, const struct ddio_auth_munge_r *m)
{
    ddio_put_str(w, m->cred);
}

int ddio_dec_auth_munge_r(const void *p, size_t n, struct ddio_auth_munge_r *m)
{
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, p, n);
    m->cred = ddio_get_str(&r, DDIO_MAX_STR);
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->cred);
        m->cred = NULL;
    }
    return rc;
}

/* ---- layout record, OPEN ---------------------------------------------------- */

/* Only the first stripe_count ids go on the wire: a typical file has a few
 * servers, and 256 * 16 bytes per OPEN would dwarf the rest. */
/* proposed: an OPEN's proposal, where copies 0 means the server's default;
 * every other layout (replies, stored records) carries 1..3 */
static void enc_layout_copies(struct ddio_wbuf *w, const struct ddio_layout_rec *l, int proposed)
{
    if (l->stripe_count > DDIO_MAX_SERVERS) {
        if (!w->err)
            w->err = -EINVAL;
        return;
    }
    ddio_put_u64(w, l->stripe_unit);
    ddio_put_u32(w, l->stripe_count);
    ddio_put_u32(w, l->server_index);
    ddio_put_u32(w, l->ndisks);
    ddio_put_u64(w, l->block_size);
    for (uint32_t i = 0; i < l->stripe_count; i++)
        ddio_put_bytes(w, l->ids[i], DDIO_ID_LEN);
    uint32_t copies = l->copies || proposed ? l->copies : 1;
    ddio_put_u32(w, copies | l->ec.k << 8 | l->ec.m << 16);
}

void ddio_enc_layout(struct ddio_wbuf *w, const struct ddio_layout_rec *l)
{
    enc_layout_copies(w, l, 0);
}

/* Besides the count bound, a decoded layout is safe for the striping math:
 * unit > 0 (a divisor) and server_index names one of the stored ids. */
int ddio_dec_layout_base(struct ddio_rbuf *r, struct ddio_layout_rec *l)
{
    memset(l, 0, sizeof(*l));
    l->stripe_unit = ddio_get_u64(r);
    l->stripe_count = ddio_get_u32(r);
    l->server_index = ddio_get_u32(r);
    l->ndisks = ddio_get_u32(r);
    l->block_size = ddio_get_u64(r);
    if (r->err)
        return r->err;
    if (l->stripe_unit == 0 || l->stripe_count == 0 ||
        l->stripe_count > DDIO_MAX_SERVERS || l->server_index >= l->stripe_count) {
        r->err = -EPROTO;
        return r->err;
    }
    const uint8_t *b = ddio_get_bytes(r, (size_t)l->stripe_count * DDIO_ID_LEN);
    if (!b)
        return r->err;
    for (uint32_t i = 0; i < l->stripe_count; i++)
        memcpy(l->ids[i], b + (size_t)i * DDIO_ID_LEN, DDIO_ID_LEN);
    l->copies = 1;
    return 0;
}

/* copies: 1..DDIO_MAX_COPIES, never more than the servers (two copies of a
 * unit on one server would not survive its loss); 0 where proposed = 1, in
 * an OPEN's proposal: the server's default (--redundancy) */
static int dec_layout_copies(struct ddio_rbuf *r, struct ddio_layout_rec *l, int proposed)
{
    if (ddio_dec_layout_base(r, l))
        return r->err;
    uint32_t word = ddio_get_u32(r);
    l->copies = word & 0xffu;
    l->ec = (struct ddio_ec){word >> 8 & 0xffu, word >> 16 & 0xffu};
    if (!r->err && ((l->copies == 0 && !proposed) || l->copies > DDIO_MAX_COPIES ||
                    l->copies > l->stripe_count || word >> 24))
        r->err = -EPROTO;
    /* erasure coded: one copy of the data, exactly K+M servers */
    if (!r->err && (l->ec.k || l->ec.m)
        && (l->copies != 1 || l->ec.k < 1 || l->ec.k > DDIO_EC_MAX_K || l->ec.m < 1
            || l->ec.m > DDIO_EC_MAX_M || l->ec.k + l->ec.m != l->stripe_count))
        r->err = -EPROTO;
    return r->err;
}

int ddio_dec_layout(struct ddio_rbuf *r, struct ddio_layout_rec *l)
{
    return dec_layout_copies(r, l, 0);
}

void ddio_enc_open(struct ddio_wbuf *w, const struct ddio_open *m)
{
    ddio_put_str(w, m->path);
    ddio_put_u32(w, m->amode);
    enc_layout_copies(w, &m->layout, 1);
    if (m->amode & DDIO_O_ONCE) {
        ddio_put_u64(w, m->once_client);
        ddio_put_u64(w, m->once_call);
    }
    if (m->amode & DDIO_O_LOCAL) {
        ddio_put_str(w, m->local_name);
        ddio_put_bytes(w, m->local_nonce, DDIO_LOCAL_NONCE);
    }
    if (m->amode & DDIO_O_MODE)
        ddio_put_u32(w, m->mode);
}

/* a local socket name the server may connect to: ddio's own, never another
 * program's abstract socket */
static void local_name_check(struct ddio_rbuf *r, const char *name)
{
    if (!r->err && strncmp(name, DDIO_LOCAL_PREFIX, strlen(DDIO_LOCAL_PREFIX)) != 0)
        r->err = -EPROTO;
}

int ddio_dec_open(const void *p, size_t n, struct ddio_open *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->path = ddio_get_str(&r, DDIO_MAX_STR);
    m->amode = ddio_get_u32(&r);
    if (!r.err)
        dec_layout_copies(&r, &m->layout, 1);
    if (!r.err && (m->amode & DDIO_O_ONCE)) {
        m->once_client = ddio_get_u64(&r);
        m->once_call = ddio_get_u64(&r);
        /* the ids name a create, and a client */
        if (!r.err && (!m->once_client || (m->amode & (DDIO_O_CREAT | DDIO_O_EXCL)) !=
                                              (DDIO_O_CREAT | DDIO_O_EXCL)))
            r.err = -EPROTO;
    }
    if (!r.err && (m->amode & DDIO_O_LOCAL)) {
        m->local_name = ddio_get_str(&r, DDIO_MAX_LOCAL_NAME);
        const uint8_t *nonce = ddio_get_bytes(&r, DDIO_LOCAL_NONCE);
        if (nonce)
            memcpy(m->local_nonce, nonce, DDIO_LOCAL_NONCE);
        local_name_check(&r, m->local_name);
        /* read-only descriptors, for a handle that only reads */
        if (!r.err && (m->amode & (DDIO_O_RDONLY | DDIO_O_WRONLY | DDIO_O_RDWR | DDIO_O_CREAT))
            != DDIO_O_RDONLY)
            r.err = -EPROTO;
    }
    if (!r.err && (m->amode & DDIO_O_MODE)) {
        m->mode = ddio_get_u32(&r);
        if (!r.err && (m->mode > 07777 || !(m->amode & DDIO_O_CREAT)))
            r.err = -EPROTO;
    }
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->path);
        free(m->local_name);
        memset(m, 0, sizeof(*m));
    }
    return rc;
}

void ddio_enc_open_r(struct ddio_wbuf *w, const struct ddio_open_r *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_u64(w, m->local_size);
    ddio_put_u32(w, m->created);
    ddio_enc_layout(w, &m->layout);
}

int ddio_dec_open_r(const void *p, size_t n, struct ddio_open_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    m->local_size = ddio_get_u64(&r);
    m->created = ddio_get_u32(&r);
    if (!r.err)
        ddio_dec_layout(&r, &m->layout);
    return rbuf_result(&r);
}

/* ---- small fixed-size requests and replies ------------------------------------ */

void ddio_enc_cancel(struct ddio_wbuf *w, uint64_t req, const char *why, uint64_t group,
                     uint64_t seq)
{
    char cut[DDIO_MAX_CANCEL_WHY + 1];
    snprintf(cut, sizeof(cut), "%s", why ? why : "");
    ddio_put_u64(w, req);
    ddio_put_str(w, cut);
    if (group) {        /* the short form stays what it was */
        ddio_put_u64(w, group);
        ddio_put_u64(w, seq);
    }
}

int ddio_dec_cancel(const void *p, size_t n, struct ddio_cancel *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->req = ddio_get_u64(&r);
    m->why = ddio_get_str(&r, DDIO_MAX_CANCEL_WHY);
    if (!r.err && r.off < r.len) {
        m->group = ddio_get_u64(&r);
        m->seq = ddio_get_u64(&r);
    }
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->why);
        m->why = NULL;
    }
    return rc;
}

void ddio_enc_local_req(struct ddio_wbuf *w, const struct ddio_local_req *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_bytes(w, m->nonce, DDIO_LOCAL_NONCE);
    ddio_put_str(w, m->name);
    ddio_put_u32(w, m->flags);
}

int ddio_dec_local_req(const void *p, size_t n, struct ddio_local_req *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    const uint8_t *nonce = ddio_get_bytes(&r, DDIO_LOCAL_NONCE);
    if (nonce)
        memcpy(m->nonce, nonce, DDIO_LOCAL_NONCE);
    m->name = ddio_get_str(&r, DDIO_MAX_LOCAL_NAME);
    m->flags = ddio_get_u32(&r);
    if (!r.err && (m->flags & ~DDIO_LOCAL_WRITE))
        r.err = -EPROTO;
    local_name_check(&r, m->name);
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->name);
        m->name = NULL;
    }
    return rc;
}

void ddio_enc_local_msg(struct ddio_wbuf *w, const struct ddio_local_msg *m)
{
    ddio_put_bytes(w, m->nonce, DDIO_LOCAL_NONCE);
    ddio_put_u32(w, m->ndisks);
    ddio_put_u64(w, m->block_size);
    ddio_put_u32(w, m->flags);
}

int ddio_dec_local_msg(const void *p, size_t n, struct ddio_local_msg *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    const uint8_t *nonce = ddio_get_bytes(&r, DDIO_LOCAL_NONCE);
    if (nonce)
        memcpy(m->nonce, nonce, DDIO_LOCAL_NONCE);
    m->ndisks = ddio_get_u32(&r);
    m->block_size = ddio_get_u64(&r);
    m->flags = ddio_get_u32(&r);
    if (!r.err && (m->ndisks == 0 || m->ndisks > DDIO_MAX_LOCAL_DISKS || m->block_size == 0
                   || (m->flags & ~DDIO_LOCAL_WRITE)))
        r.err = -EPROTO;
    return rbuf_result(&r);
}

void ddio_enc_handle_req(struct ddio_wbuf *w, const struct ddio_handle_req *m)
{
    ddio_put_u64(w, m->handle);
}

int ddio_dec_handle_req(const void *p, size_t n, struct ddio_handle_req *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    return rbuf_result(&r);
}

void ddio_enc_u64_r(struct ddio_wbuf *w, const struct ddio_u64_r *m)
{
    ddio_put_u64(w, m->value);
}

int ddio_dec_u64_r(const void *p, size_t n, struct ddio_u64_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->value = ddio_get_u64(&r);
    return rbuf_result(&r);
}

void ddio_enc_path_req(struct ddio_wbuf *w, const struct ddio_path_req *m)
{
    ddio_put_str(w, m->path);
    ddio_put_u64(w, m->once_client);
    ddio_put_u64(w, m->once_call);
}

int ddio_dec_path_req(const void *p, size_t n, struct ddio_path_req *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->path = ddio_get_str(&r, DDIO_MAX_STR);
    m->once_client = ddio_get_u64(&r);
    m->once_call = ddio_get_u64(&r);
    int rc = rbuf_result(&r);
    if (rc) {
        free(m->path);
        m->path = NULL;
    }
    return rc;
}

void ddio_enc_setsize(struct ddio_wbuf *w, const struct ddio_setsize *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_u64(w, m->local_size);
    ddio_put_u64(w, m->logical_size);
    ddio_put_u32(w, m->flags);
}

int ddio_dec_setsize(const void *p, size_t n, struct ddio_setsize *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    m->local_size = ddio_get_u64(&r);
    m->logical_size = ddio_get_u64(&r);
    m->flags = ddio_get_u32(&r);
    if (!r.err && (m->flags & ~DDIO_SS_GROW))
        r.err = -EPROTO;
    return rbuf_result(&r);
}

void ddio_enc_prealloc(struct ddio_wbuf *w, const struct ddio_prealloc *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_u64(w, m->local_off);
    ddio_put_u64(w, m->local_len);
    ddio_put_u64(w, m->logical_size);
}

/* A range whose end is not representable is malformed, not merely large. */
int ddio_dec_prealloc(const void *p, size_t n, struct ddio_prealloc *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    m->local_off = ddio_get_u64(&r);
    m->local_len = ddio_get_u64(&r);
    m->logical_size = ddio_get_u64(&r);
    if (!r.err && m->local_len > UINT64_MAX - m->local_off)
        r.err = -EPROTO;
    return rbuf_result(&r);
}

/* ---- LOCK ------------------------------------------------------------------------- */

void ddio_enc_lock(struct ddio_wbuf *w, const struct ddio_lock *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_u32(w, m->cmd);
    ddio_put_u32(w, m->type);
    ddio_put_u64(w, m->start);
    ddio_put_u64(w, m->len);
    ddio_put_u32(w, m->timeout_ms);
    ddio_put_u32(w, m->flags);
    ddio_put_u64(w, m->client);
}

/* len 0 means "to end of file"; any other range must have a representable
 * end so the lock manager can compare ranges without overflow. */
int ddio_dec_lock(const void *p, size_t n, struct ddio_lock *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    m->cmd = ddio_get_u32(&r);
    m->type = ddio_get_u32(&r);
    m->start = ddio_get_u64(&r);
    m->len = ddio_get_u64(&r);
    m->timeout_ms = ddio_get_u32(&r);
    m->flags = ddio_get_u32(&r);
    m->client = ddio_get_u64(&r);
    if (!r.err && (m->len > UINT64_MAX - m->start || (m->flags & ~DDIO_LK_RECLAIM)))
        r.err = -EPROTO;
    return rbuf_result(&r);
}

/* ---- STATS reply -------------------------------------------------------------------- */

#define KV_MIN_WIRE 12u   /* empty key (u32 length) + u64 value */

void ddio_enc_stats_r(struct ddio_wbuf *w, const struct ddio_stats_r *m)
{
    ddio_put_u32(w, m->n);
    for (uint32_t i = 0; i < m->n; i++) {
        ddio_put_str(w, m->kv[i].key);
        ddio_put_u64(w, m->kv[i].val);
    }
}

int ddio_dec_stats_r(const void *p, size_t n, struct ddio_stats_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    uint32_t cnt = ddio_get_u32(&r);
    if (!r.err && cnt > rbuf_left(&r) / KV_MIN_WIRE)
        r.err = -EPROTO;
    if (!r.err && cnt) {
        m->kv = calloc(cnt, sizeof(*m->kv));
        if (!m->kv)
            r.err = -ENOMEM;
    }
    /* m->n counts the entries filled so far, so a partial result frees
     * exactly what was allocated */
    for (uint32_t i = 0; i < cnt && !r.err; i++) {
        char *key = ddio_get_str(&r, DDIO_MAX_STR);
        uint64_t val = ddio_get_u64(&r);
        if (!key)
            break;
        m->kv[i].key = key;
        m->kv[i].val = val;
        m->n = i + 1;
    }
    int rc = rbuf_result(&r);
    if (rc)
        ddio_stats_r_free(m);
    return rc;
}

void ddio_stats_r_free(struct ddio_stats_r *m)
{
    if (m->kv)
        for (uint32_t i = 0; i < m->n; i++)
            free(m->kv[i].key);
    free(m->kv);
    memset(m, 0, sizeof(*m));
}

uint64_t ddio_stats_r_get(const struct ddio_stats_r *m, const char *key, int *found)
{
    for (uint32_t k = 0; k < m->n; k++)
        if (strcmp(m->kv[k].key, key) == 0) {
            if (found)
                *found = 1;
            return m->kv[k].val;
        }
    if (found)
        *found = 0;
    return 0;
}

/* ---- error reply ------------------------------------------------------------------------ */

void ddio_enc_err(struct ddio_wbuf *w, const char *msg)
{
    ddio_put_str(w, msg);
}

int ddio_dec_err(const void *p, size_t n, char **msg)
{
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, p, n);
    *msg = ddio_get_str(&r, DDIO_MAX_STR);
    int rc = rbuf_result(&r);
    if (rc) {
        free(*msg);
        *msg = NULL;
    }
    return rc;
}
