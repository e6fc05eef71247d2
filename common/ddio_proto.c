/* ddio wire protocol: header, bounds-checked buffers, message payloads.
 *
 * Conventions (see ddio_proto.h):
 * - Encoders append to a wbuf; the wbuf's error is sticky, so a sequence of
 *   puts needs one check at the end. An encoder given a struct that cannot be
 *   represented (e.g. more ids than DDIO_MAX_SERVERS) sets -EINVAL.
 * - Decoders zero the output struct first, so the free functions are safe on
 *   whatever a failed decode left; on failure they also free what they
 *   allocated themselves. Every count and length is bounded against the bytes
 *   actually left before anything is allocated, and every decoder requires
 *   the payload to be consumed exactly.
 */
#include "ddio_proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- header ------------------------------------------------------------- */

static void le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t rd32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

void ddio_hdr_encode(const struct ddio_hdr *h, uint8_t out[DDIO_HDR_SIZE])
{
    le32(out + 0, h->magic);
    le16(out + 4, h->version);
    le16(out + 6, h->type);
    le32(out + 8, h->flags);
    le32(out + 12, (uint32_t)h->status);
    le64(out + 16, h->req);
    le64(out + 24, h->len);
}

/* A valid type is a known request type, optionally with DDIO_REPLY set. */
static int type_valid(uint16_t type)
{
    uint16_t base = (uint16_t)(type & ~DDIO_REPLY);
    return base >= DDIO_T_HELLO && base < DDIO_T_MAX;
}

int ddio_hdr_decode(const uint8_t in[DDIO_HDR_SIZE], struct ddio_hdr *h,
                    uint64_t max_payload)
{
    h->magic = rd32(in + 0);
    h->version = rd16(in + 4);
    h->type = rd16(in + 6);
    h->flags = rd32(in + 8);
    h->status = (int32_t)rd32(in + 12);
    h->req = rd64(in + 16);
    h->len = rd64(in + 24);
    if (h->magic != DDIO_MAGIC)
        return -EPROTO;
    /* checked before the type so a future version's new types are reported
     * as a version mismatch, not as garbage */
    if (h->version != DDIO_VERSION)
        return -EPROTONOSUPPORT;
    if (!type_valid(h->type))
        return -EPROTO;
    if (h->len > max_payload || h->len > DDIO_MAX_PAYLOAD)
        return -EPROTO;
    return 0;
}

void ddio_hdr_init(struct ddio_hdr *h, uint16_t type, uint64_t req, uint64_t len)
{
    memset(h, 0, sizeof(*h));
    h->magic = DDIO_MAGIC;
    h->version = DDIO_VERSION;
    h->type = type;
    h->flags = DDIO_HF_NONE;
    h->req = req;
    h->len = len;
}

/* ---- writer ------------------------------------------------------------- */

void ddio_wbuf_init(struct ddio_wbuf *w)
{
    memset(w, 0, sizeof(*w));
}

void ddio_wbuf_free(struct ddio_wbuf *w)
{
    free(w->p);
    ddio_wbuf_init(w);
}

uint8_t *ddio_put_space(struct ddio_wbuf *w, size_t n)
{
    if (w->err)
        return NULL;
    if (n > SIZE_MAX - w->len) {
        w->err = -ENOMEM;
        return NULL;
    }
    size_t need = w->len + n;
    if (need > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < need)
            cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        uint8_t *p = realloc(w->p, cap);
        if (!p) {
            w->err = -ENOMEM;
            return NULL;
        }
        w->p = p;
        w->cap = cap;
    }
    uint8_t *at = w->p + w->len;
    w->len = need;
    return at;
}

void ddio_put_u8(struct ddio_wbuf *w, uint8_t v)
{
    uint8_t *p = ddio_put_space(w, 1);
    if (p)
        p[0] = v;
}

void ddio_put_u16(struct ddio_wbuf *w, uint16_t v)
{
    uint8_t *p = ddio_put_space(w, 2);
    if (p)
        le16(p, v);
}

void ddio_put_u32(struct ddio_wbuf *w, uint32_t v)
{
    uint8_t *p = ddio_put_space(w, 4);
    if (p)
        le32(p, v);
}

void ddio_put_u64(struct ddio_wbuf *w, uint64_t v)
{
    uint8_t *p = ddio_put_space(w, 8);
    if (p)
        le64(p, v);
}

void ddio_put_bytes(struct ddio_wbuf *w, const void *p, size_t n)
{
    uint8_t *d = ddio_put_space(w, n);
    if (d && n)
        memcpy(d, p, n);
}

/* NULL encodes as the empty string, so optional strings need no special case. */
void ddio_put_str(struct ddio_wbuf *w, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n > UINT32_MAX) {
        if (!w->err)
            w->err = -EINVAL;
        return;
    }
    ddio_put_u32(w, (uint32_t)n);
    ddio_put_bytes(w, s, n);
}

/* ---- reader ------------------------------------------------------------- */

void ddio_rbuf_init(struct ddio_rbuf *r, const void *p, size_t len)
{
    r->p = p;
    r->len = p ? len : 0;
    r->off = 0;
    r->err = 0;
}

const uint8_t *ddio_get_bytes(struct ddio_rbuf *r, size_t n)
{
    static const uint8_t empty[1];
    if (r->err)
        return NULL;
    if (n > r->len - r->off) {
        r->err = -EPROTO;
        return NULL;
    }
    /* a zero-length read succeeds even on an empty (NULL) payload; callers
     * must not get NULL, which means failure */
    if (n == 0)
        return r->p ? r->p + r->off : empty;
    const uint8_t *at = r->p + r->off;
    r->off += n;
    return at;
}

uint8_t ddio_get_u8(struct ddio_rbuf *r)
{
    const uint8_t *p = ddio_get_bytes(r, 1);
    return p ? p[0] : 0;
}

uint16_t ddio_get_u16(struct ddio_rbuf *r)
{
    const uint8_t *p = ddio_get_bytes(r, 2);
    return p ? rd16(p) : 0;
}

uint32_t ddio_get_u32(struct ddio_rbuf *r)
{
    const uint8_t *p = ddio_get_bytes(r, 4);
    return p ? rd32(p) : 0;
}

uint64_t ddio_get_u64(struct ddio_rbuf *r)
{
    const uint8_t *p = ddio_get_bytes(r, 8);
    return p ? rd64(p) : 0;
}

char *ddio_get_str(struct ddio_rbuf *r, size_t maxlen)
{
    uint32_t n = ddio_get_u32(r);
    if (r->err)
        return NULL;
    if (n > maxlen) {
        r->err = -EPROTO;
        return NULL;
    }
    const uint8_t *b = ddio_get_bytes(r, n);
    if (!b)
        return NULL;
    if (memchr(b, 0, n)) {
        r->err = -EPROTO;
        return NULL;
    }
    char *s = malloc((size_t)n + 1);
    if (!s) {
        r->err = -ENOMEM;
        return NULL;
    }
    memcpy(s, b, n);
    s[n] = '\0';
    return s;
}

int ddio_rbuf_done(const struct ddio_rbuf *r)
{
    return (r->err == 0 && r->off == r->len) ? 0 : -EPROTO;
}

static size_t rbuf_left(const struct ddio_rbuf *r)
{
    return r->len - r->off;
}

/* The decoder result: the sticky error if any (it may be -ENOMEM), else
 * -EPROTO unless every byte was consumed. */
static int rbuf_result(const struct ddio_rbuf *r)
{
    if (r->err)
        return r->err;
    return r->off == r->len ? 0 : -EPROTO;
}

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

/* ---- layout record, OPEN ---------------------------------------------------- */

/* Only the first stripe_count ids go on the wire: a typical file has a few
 * servers, and 256 * 16 bytes per OPEN would dwarf the rest. */
void ddio_enc_layout(struct ddio_wbuf *w, const struct ddio_layout_rec *l)
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
}

/* Besides the count bound, a decoded layout is safe for the striping math:
 * unit > 0 (a divisor) and server_index names one of the stored ids. */
int ddio_dec_layout(struct ddio_rbuf *r, struct ddio_layout_rec *l)
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
    return 0;
}

void ddio_enc_open(struct ddio_wbuf *w, const struct ddio_open *m)
{
    ddio_put_str(w, m->path);
    ddio_put_u32(w, m->amode);
    ddio_enc_layout(w, &m->layout);
    if (m->amode & DDIO_O_ONCE) {
        ddio_put_u64(w, m->once_client);
        ddio_put_u64(w, m->once_call);
    }
    if (m->amode & DDIO_O_LOCAL) {
        ddio_put_str(w, m->local_name);
        ddio_put_bytes(w, m->local_nonce, DDIO_LOCAL_NONCE);
    }
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
        ddio_dec_layout(&r, &m->layout);
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
}

int ddio_dec_setsize(const void *p, size_t n, struct ddio_setsize *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    m->local_size = ddio_get_u64(&r);
    return rbuf_result(&r);
}

void ddio_enc_prealloc(struct ddio_wbuf *w, const struct ddio_prealloc *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_u64(w, m->local_off);
    ddio_put_u64(w, m->local_len);
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
    if (!r.err && m->local_len > UINT64_MAX - m->local_off)
        r.err = -EPROTO;
    return rbuf_result(&r);
}

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
        ddio_put_bytes(w, m->inline_data, m->inline_len);
    }
    if (m->flags & DDIO_XF_ONCE) {
        ddio_put_u64(w, m->once_client);
        ddio_put_u64(w, m->once_call);
    }
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
    if (!r.err && (m->flags & DDIO_XF_ONCE)) {
        m->once_client = ddio_get_u64(&r);
        m->once_call = ddio_get_u64(&r);
        if (!r.err && m->op != DDIO_X_WRITE)    /* a read's DONE says nothing of its data */
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

/* ---- namespace: PSTAT, READDIR, MKDIR, RENAME ------------------------------------------- */

/* A namespace decoder's result (rbuf_result); on failure it frees the
 * strings it decoded (s2 may be NULL) and zeroes the message. */
static int ns_result(const struct ddio_rbuf *r, void *m, size_t size, char *s1, char *s2)
{
    int rc = rbuf_result(r);
    if (rc) {
        free(s1);
        free(s2);
        memset(m, 0, size);
    }
    return rc;
}

void ddio_enc_pstat_r(struct ddio_wbuf *w, const struct ddio_pstat_r *m)
{
    ddio_put_u32(w, m->kind);
    ddio_put_u32(w, m->mode);
    ddio_put_u64(w, m->local_size);
    ddio_put_u64(w, m->mtime_ns);
    if (m->kind == DDIO_K_FILE)
        ddio_enc_layout(w, &m->layout);
}

int ddio_dec_pstat_r(const void *p, size_t n, struct ddio_pstat_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->kind = ddio_get_u32(&r);
    m->mode = ddio_get_u32(&r);
    m->local_size = ddio_get_u64(&r);
    m->mtime_ns = ddio_get_u64(&r);
    if (!r.err && ((m->kind != DDIO_K_FILE && m->kind != DDIO_K_DIR) || m->mode > 07777 ||
                   (m->kind == DDIO_K_DIR && m->local_size != 0)))
        r.err = -EPROTO;
    if (!r.err && m->kind == DDIO_K_FILE)
        ddio_dec_layout(&r, &m->layout);
    return ns_result(&r, m, sizeof(*m), NULL, NULL);
}

void ddio_enc_readdir(struct ddio_wbuf *w, const struct ddio_readdir *m)
{
    ddio_put_str(w, m->path);
    ddio_put_u64(w, m->cookie);
    ddio_put_u32(w, m->max);
}

int ddio_dec_readdir(const void *p, size_t n, struct ddio_readdir *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->path = ddio_get_str(&r, DDIO_MAX_STR);
    m->cookie = ddio_get_u64(&r);
    m->max = ddio_get_u32(&r);
    if (!r.err && (m->max == 0 || m->max > DDIO_READDIR_MAX))
        r.err = -EPROTO;
    return ns_result(&r, m, sizeof(*m), m->path, NULL);
}

/* one directory entry name: a single component */
static int name_valid(const char *s)
{
    return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

void ddio_enc_readdir_r(struct ddio_wbuf *w, const struct ddio_readdir_r *m)
{
    if (m->n > DDIO_READDIR_MAX) {
        if (!w->err)
            w->err = -EINVAL;
        return;
    }
    ddio_put_u64(w, m->next);
    ddio_put_u32(w, m->n);
    for (uint32_t i = 0; i < m->n; i++) {
        ddio_put_str(w, m->ent[i].name);
        ddio_put_u32(w, m->ent[i].kind);
    }
}

int ddio_dec_readdir_r(const void *p, size_t n, struct ddio_readdir_r *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->next = ddio_get_u64(&r);
    uint32_t cnt = ddio_get_u32(&r);
    /* an entry takes at least 9 bytes (length, one byte, kind) */
    if (!r.err && (cnt > DDIO_READDIR_MAX || cnt > rbuf_left(&r) / 9))
        r.err = -EPROTO;
    if (!r.err && cnt && !(m->ent = calloc(cnt, sizeof(*m->ent))))
        r.err = -ENOMEM;
    for (uint32_t i = 0; i < cnt && !r.err; i++) {
        m->n = i + 1;
        m->ent[i].name = ddio_get_str(&r, DDIO_NAME_MAX);
        m->ent[i].kind = ddio_get_u32(&r);
        if (!r.err && (!name_valid(m->ent[i].name) ||
                       (m->ent[i].kind != DDIO_K_FILE && m->ent[i].kind != DDIO_K_DIR)))
            r.err = -EPROTO;
    }
    int rc = rbuf_result(&r);
    if (rc)
        ddio_readdir_r_free(m);
    return rc;
}

void ddio_readdir_r_free(struct ddio_readdir_r *m)
{
    for (uint32_t i = 0; i < m->n; i++)
        free(m->ent[i].name);
    free(m->ent);
    memset(m, 0, sizeof(*m));
}

void ddio_enc_mkdir(struct ddio_wbuf *w, const struct ddio_mkdir *m)
{
    ddio_put_str(w, m->path);
    ddio_put_u32(w, m->mode);
    ddio_put_u64(w, m->once_client);
    ddio_put_u64(w, m->once_call);
}

int ddio_dec_mkdir(const void *p, size_t n, struct ddio_mkdir *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->path = ddio_get_str(&r, DDIO_MAX_STR);
    m->mode = ddio_get_u32(&r);
    m->once_client = ddio_get_u64(&r);
    m->once_call = ddio_get_u64(&r);
    if (!r.err && m->mode > 07777)
        r.err = -EPROTO;
    return ns_result(&r, m, sizeof(*m), m->path, NULL);
}

void ddio_enc_rename(struct ddio_wbuf *w, const struct ddio_rename *m)
{
    ddio_put_str(w, m->from);
    ddio_put_str(w, m->to);
    ddio_put_u64(w, m->once_client);
    ddio_put_u64(w, m->once_call);
}

int ddio_dec_rename(const void *p, size_t n, struct ddio_rename *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->from = ddio_get_str(&r, DDIO_MAX_STR);
    m->to = ddio_get_str(&r, DDIO_MAX_STR);
    m->once_client = ddio_get_u64(&r);
    m->once_call = ddio_get_u64(&r);
    return ns_result(&r, m, sizeof(*m), m->from, m->to);
}

/* ---- names ------------------------------------------------------------------------------- */

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

const char *ddio_type_name(uint16_t type)
{
    static const char *const req[DDIO_T_MAX] = {
        [DDIO_T_HELLO] = "HELLO", [DDIO_T_AUTH] = "AUTH", [DDIO_T_OPEN] = "OPEN",
        [DDIO_T_CLOSE] = "CLOSE", [DDIO_T_DELETE] = "DELETE", [DDIO_T_STAT] = "STAT",
        [DDIO_T_SETSIZE] = "SETSIZE", [DDIO_T_PREALLOC] = "PREALLOC",
        [DDIO_T_SYNC] = "SYNC", [DDIO_T_XFER] = "XFER", [DDIO_T_PUT] = "PUT",
        [DDIO_T_GET] = "GET", [DDIO_T_DATA] = "DATA", [DDIO_T_LOCK] = "LOCK",
        [DDIO_T_STATS] = "STATS", [DDIO_T_PROGRESS] = "PROGRESS",
        [DDIO_T_PSTAT] = "PSTAT", [DDIO_T_READDIR] = "READDIR", [DDIO_T_MKDIR] = "MKDIR",
        [DDIO_T_RMDIR] = "RMDIR", [DDIO_T_RENAME] = "RENAME",
        [DDIO_T_UCXADDR] = "UCXADDR", [DDIO_T_CANCEL] = "CANCEL", [DDIO_T_LOCAL] = "LOCAL",
    };
    static const char *const rep[DDIO_T_MAX] = {
        [DDIO_T_HELLO] = "HELLO|R", [DDIO_T_AUTH] = "AUTH|R", [DDIO_T_OPEN] = "OPEN|R",
        [DDIO_T_CLOSE] = "CLOSE|R", [DDIO_T_DELETE] = "DELETE|R", [DDIO_T_STAT] = "STAT|R",
        [DDIO_T_SETSIZE] = "SETSIZE|R", [DDIO_T_PREALLOC] = "PREALLOC|R",
        [DDIO_T_SYNC] = "SYNC|R", [DDIO_T_XFER] = "XFER|R", [DDIO_T_PUT] = "PUT|R",
        [DDIO_T_GET] = "GET|R", [DDIO_T_DATA] = "DATA|R", [DDIO_T_LOCK] = "LOCK|R",
        [DDIO_T_STATS] = "STATS|R", [DDIO_T_PROGRESS] = "PROGRESS|R",
        [DDIO_T_PSTAT] = "PSTAT|R", [DDIO_T_READDIR] = "READDIR|R",
        [DDIO_T_MKDIR] = "MKDIR|R", [DDIO_T_RMDIR] = "RMDIR|R", [DDIO_T_RENAME] = "RENAME|R",
        [DDIO_T_LOCAL] = "LOCAL|R",
        [DDIO_T_UCXADDR] = "UCXADDR|R", [DDIO_T_CANCEL] = "CANCEL|R",
    };
    if (!type_valid(type))
        return "UNKNOWN";
    uint16_t base = (uint16_t)(type & ~DDIO_REPLY);
    return (type & DDIO_REPLY) ? rep[base] : req[base];
}
