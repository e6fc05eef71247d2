/* ddio wire protocol, the namespace messages (ddio_proto.h): PSTAT,
 * READDIR, MKDIR, RENAME, WATCH, INVAL and their replies. Conventions: ddio_proto.c. */
#include "ddio_proto.h"
#include "ddio_proto_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
    ddio_put_u32(w, m->uid);
    ddio_put_u32(w, m->gid);
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
    m->uid = ddio_get_u32(&r);
    m->gid = ddio_get_u32(&r);
    m->local_size = ddio_get_u64(&r);
    m->mtime_ns = ddio_get_u64(&r);
    if (!r.err && ((m->kind != DDIO_K_FILE && m->kind != DDIO_K_DIR) || m->mode > 07777 ||
                   (m->kind == DDIO_K_DIR && m->local_size != 0)))
        r.err = -EPROTO;
    if (!r.err && m->kind == DDIO_K_FILE)
        ddio_dec_layout(&r, &m->layout);
    return ns_result(&r, m, sizeof(*m), NULL, NULL);
}

/* one directory entry name: a single component */
static int name_valid(const char *s)
{
    return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

void ddio_enc_readdir(struct ddio_wbuf *w, const struct ddio_readdir *m)
{
    ddio_put_str(w, m->path);
    ddio_put_str(w, m->after ? m->after : "");
    ddio_put_u32(w, m->max);
}

int ddio_dec_readdir(const void *p, size_t n, struct ddio_readdir *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->path = ddio_get_str(&r, DDIO_MAX_STR);
    m->after = ddio_get_str(&r, DDIO_NAME_MAX);
    m->max = ddio_get_u32(&r);
    if (!r.err && (m->max == 0 || m->max > DDIO_READDIR_MAX ||
                   (*m->after && !name_valid(m->after))))
        r.err = -EPROTO;
    return ns_result(&r, m, sizeof(*m), m->path, m->after);
}

void ddio_enc_readdir_r(struct ddio_wbuf *w, const struct ddio_readdir_r *m)
{
    if (m->n > DDIO_READDIR_MAX) {
        if (!w->err)
            w->err = -EINVAL;
        return;
    }
    ddio_put_u32(w, m->more);
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
    m->more = ddio_get_u32(&r);
    uint32_t cnt = ddio_get_u32(&r);
    /* an entry takes at least 9 bytes (length, one byte, kind); a page
     * with more to come names its last entry, where the next one starts */
    if (!r.err && (cnt > DDIO_READDIR_MAX || cnt > rbuf_left(&r) / 9 || m->more > 1 ||
                   (m->more && !cnt)))
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

void ddio_enc_setattr(struct ddio_wbuf *w, const struct ddio_setattr *m)
{
    ddio_put_str(w, m->path);
    ddio_put_u32(w, m->what);
    ddio_put_u32(w, m->mode);
    ddio_put_u32(w, m->uid);
    ddio_put_u32(w, m->gid);
}

int ddio_dec_setattr(const void *p, size_t n, struct ddio_setattr *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->path = ddio_get_str(&r, DDIO_MAX_STR);
    m->what = ddio_get_u32(&r);
    m->mode = ddio_get_u32(&r);
    m->uid = ddio_get_u32(&r);
    m->gid = ddio_get_u32(&r);
    if (!r.err && (!m->what || (m->what & ~(DDIO_SA_MODE | DDIO_SA_OWNER)) || m->mode > 07777))
        r.err = -EPROTO;
    return ns_result(&r, m, sizeof(*m), m->path, NULL);
}

void ddio_enc_localstat(struct ddio_wbuf *w, const struct ddio_localstat *m)
{
    ddio_put_u64(w, m->handle);
    ddio_put_u64(w, m->read);
    ddio_put_u64(w, m->written);
}

int ddio_dec_localstat(const void *p, size_t n, struct ddio_localstat *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->handle = ddio_get_u64(&r);
    m->read = ddio_get_u64(&r);
    m->written = ddio_get_u64(&r);
    return ns_result(&r, m, sizeof(*m), NULL, NULL);
}

void ddio_enc_watch(struct ddio_wbuf *w, const struct ddio_watch *m)
{
    ddio_put_u64(w, m->client);
}

int ddio_dec_watch(const void *p, size_t n, struct ddio_watch *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->client = ddio_get_u64(&r);
    return ns_result(&r, m, sizeof(*m), NULL, NULL);
}

void ddio_enc_inval(struct ddio_wbuf *w, const struct ddio_inval *m)
{
    ddio_put_u32(w, m->what);
    ddio_put_str(w, m->path);
}

int ddio_dec_inval(const void *p, size_t n, struct ddio_inval *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->what = ddio_get_u32(&r);
    m->path = ddio_get_str(&r, DDIO_MAX_STR);
    if (!r.err && (!m->what || (m->what & ~DDIO_IV_ALL)))
        r.err = -EPROTO;
    return ns_result(&r, m, sizeof(*m), m->path, NULL);
}

void ddio_enc_actas(struct ddio_wbuf *w, const struct ddio_actas *m)
{
    ddio_put_u32(w, m->uid);
    ddio_put_u32(w, m->gid);
}

int ddio_dec_actas(const void *p, size_t n, struct ddio_actas *m)
{
    struct ddio_rbuf r;
    memset(m, 0, sizeof(*m));
    ddio_rbuf_init(&r, p, n);
    m->uid = ddio_get_u32(&r);
    m->gid = ddio_get_u32(&r);
    return ns_result(&r, m, sizeof(*m), NULL, NULL);
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
