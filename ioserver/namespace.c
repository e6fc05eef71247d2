/* The namespace requests by path: DELETE, PSTAT, READDIR, MKDIR, RMDIR,
 * RENAME, SETATTR (PROTOCOL.md "Namespace"). The work is the store's
 * (store_ns.c, DELETE store.c: confinement, every root); these decode,
 * check the caller's permissions (access.h), call it and reply. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "namespace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "access.h"
#include "member.h"
#include "member_req.h"
#include "missed.h"
#include "rebuild.h"
#include "replay.h"
#include "reply.h"
#include "watch.h"

/* the end of a request that changes the store: its error (cause in msg)
 * or OK, once every watching mount knows what changed (watch.h) */
static int reply_done(struct conn *c, const struct ddio_hdr *h, int rc, const char *msg,
                      const char *path, const char *path2, uint32_t what)
{
    if (rc == 0 && path)
        watch_changed(c, path, what);
    if (rc == 0 && path2)
        watch_changed(c, path2, what);
    if (rc)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg), 0;
    return reply_ok(c, h);
}

/* A change with ids (DELETE, MKDIR, RMDIR, RENAME) that succeeded is
 * remembered (replay.h), so its resend after a lost answer (a dropped
 * connection, a restarted server) is answered done, not run again: the
 * second run's EEXIST or ENOENT could not be told from another client's. */
static int once_answered(struct conn *c, uint64_t client, uint64_t call)
{
    uint8_t *done;
    size_t n;
    watch_note_client(c, client);
    if (!client || !replay_find(client, call, &done, &n))
        return 0;
    free(done);                 /* (empty) */
    stats_bump(&c->srv->stats, &c->srv->stats.replayed);
    return 1;
}

static void once_note(int rc, uint64_t client, uint64_t call)
{
    if (rc == 0 && client)
        replay_note(client, call, (const uint8_t *)"", 0);
}

/* the check fn (access.h) on path, normalized (a path the store refuses
 * is not checked: the store says why) */
static int check(const struct conn *c, const char *path,
                 int (*fn)(const struct conn *, const char *, char *, size_t), char *msg,
                 size_t n)
{
    char norm[DDIO_MAX_STR + 1];
    if (!access_on(c) || store_norm_ns(path, norm, sizeof(norm), msg, n))
        return 0;
    return fn(c, norm, msg, n);
}

static int may_search(const struct conn *c, const char *norm, char *msg, size_t n)
{
    return access_path(c, norm, 0, msg, n);
}

static int may_list(const struct conn *c, const char *norm, char *msg, size_t n)
{
    return access_path(c, norm, ACC_READ | ACC_SEARCH, msg, n);
}

/* a file being copied onto a replacement is neither removed nor renamed
 * meanwhile (rebuild.h: its fence) */
static int not_fenced(struct conn *c, const char *path, char *msg, size_t n)
{
    char norm[DDIO_MAX_STR + 1];
    if (store_norm_ns(path, norm, sizeof(norm), msg, n))
        return 0;
    return rebuild_fenced(c, norm, msg, n);
}

/* A namespace change made while a member is out (down: the client sends
 * it nothing) is noted for it, before it is made, as a write is: the
 * resync finds a deleted path gone from the others and deletes the
 * member's copy (which would otherwise come back with it), and makes a
 * directory made meanwhile. An out member changing notes nothing. */
static int change_noted(struct conn *c, const char *path, char *msg, size_t n)
{
    char norm[DDIO_MAX_STR + 1];
    if (member_self_out(&c->srv->member) || store_norm_ns(path, norm, sizeof(norm), msg, n))
        return 0;
    return missed_note(c->srv, norm, msg, n);
}

/* A rename while a member is out: both names noted (the resync removes
 * the old one from the member and copies the new one onto it), for a file
 * kept with copies or parity only. A directory's files would all need
 * copying under their new names, and a `none` file's part on the member
 * is its only copy: both refused until the member is in again. */
static int rename_noted(struct conn *c, const char *from, const char *to, char *msg,
                        size_t n)
{
    uint32_t out[DDIO_MAX_SERVERS];
    int nout = member_out_list(&c->srv->member, out);
    if (nout == 0 || member_self_out(&c->srv->member))
        return 0;
    struct ddio_pstat_r *r = malloc(sizeof(*r));   /* a layout is 4 KiB */
    int rc = r ? store_pstat(&c->srv->store, from, r, msg, n) : -ENOMEM;
    if (rc == -ENOMEM)
        snprintf(msg, n, "rename %s: out of memory", from);
    if (rc == 0 && (r->kind != DDIO_K_FILE
                    || !ddio_redundancy_kept(ddio_layout_redundancy(&r->layout)))) {
        snprintf(msg, n, "rename %s: %s while server %u is out of the membership (%s); "
                 "`ddio member in` first", from, r->kind != DDIO_K_FILE ? "a directory"
                 : "a file without copies", out[0], r->kind != DDIO_K_FILE
                 ? "its files would need copying under the new name"
                 : "its part there is the only one");
        rc = -EBUSY;
    }
    free(r);
    if (rc == 0)
        rc = change_noted(c, from, msg, n);
    return rc ? rc : change_noted(c, to, msg, n);
}

/* a new directory is its creator's, with the mode asked for */
static int own(const struct conn *c, const char *path, uint32_t mode, char *msg, size_t n)
{
    char norm[DDIO_MAX_STR + 1];
    if (store_norm_ns(path, norm, sizeof(norm), msg, n))
        return 0;
    return access_own(c, norm, mode, msg, n);
}

int on_delete(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_path_req m = {0};
    if (ddio_dec_path_req(p, h->len, &m))
        return bad_payload(c, h);
    char msg[768];
    int rc = 0;
    if (!once_answered(c, m.once_client, m.once_call)) {
        rc = check(c, m.path, access_remove, msg, sizeof(msg));
        if (rc == 0)
            rc = not_fenced(c, m.path, msg, sizeof(msg));
        if (rc == 0)
            rc = change_noted(c, m.path, msg, sizeof(msg));
        if (rc == 0)
            rc = store_delete(&c->srv->store, m.path, msg, sizeof(msg));
        once_note(rc, m.once_client, m.once_call);
    }
    rc = reply_done(c, h, rc, msg, m.path, NULL, DDIO_IV_NAME | DDIO_IV_ATTR);
    free(m.path);
    return rc;
}

int on_pstat(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_path_req m = {0};
    if (ddio_dec_path_req(p, h->len, &m))
        return bad_payload(c, h);
    char msg[768];
    struct ddio_pstat_r *r = malloc(sizeof(*r));   /* a layout is 4 KiB */
    int rc = r ? check(c, m.path, may_search, msg, sizeof(msg)) : -ENOMEM;
    if (rc == 0)
        rc = store_pstat(&c->srv->store, m.path, r, msg, sizeof(msg));
    free(m.path);
    /* out of the membership, a mirrored file's size here may be stale:
     * refused like its opens (the client sizes it from the copies) */
    if (rc == 0 && r->kind == DDIO_K_FILE && member_refused(c, h, ddio_layout_redundancy(&r->layout))) {
        free(r);
        return 0;
    }
    if (rc) {
        free(r);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s",
                             r ? msg : "pstat: out of memory"), 0;
    }
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_pstat_r(&w, r);
    free(r);
    return reply_w(c, h, &w);
}

int on_readdir(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_readdir m;
    struct ddio_readdir_r r;
    char msg[768];
    if (ddio_dec_readdir(p, h->len, &m))
        return bad_payload(c, h);
    int rc = check(c, m.path, may_list, msg, sizeof(msg));
    if (rc == 0)
        rc = store_readdir(&c->srv->store, m.path, m.after, m.max, &r, msg, sizeof(msg));
    free(m.path);
    free(m.after);
    if (rc)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg), 0;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_readdir_r(&w, &r);
    ddio_readdir_r_free(&r);
    return reply_w(c, h, &w);
}

int on_mkdir(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_mkdir m;
    char msg[768];
    if (ddio_dec_mkdir(p, h->len, &m))
        return bad_payload(c, h);
    int rc = 0;
    if (!once_answered(c, m.once_client, m.once_call)) {
        rc = check(c, m.path, access_create, msg, sizeof(msg));
        if (rc == 0)
            rc = change_noted(c, m.path, msg, sizeof(msg));
        if (rc == 0)
            rc = store_mkdir(&c->srv->store, m.path, m.mode, msg, sizeof(msg));
        if (rc == 0)
            rc = own(c, m.path, m.mode, msg, sizeof(msg));
        once_note(rc, m.once_client, m.once_call);
    }
    rc = reply_done(c, h, rc, msg, m.path, NULL, DDIO_IV_NAME | DDIO_IV_ATTR);
    free(m.path);
    return rc;
}

int on_rmdir(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_path_req m = {0};
    char msg[768];
    if (ddio_dec_path_req(p, h->len, &m))
        return bad_payload(c, h);
    int rc = 0;
    if (!once_answered(c, m.once_client, m.once_call)) {
        rc = check(c, m.path, access_remove, msg, sizeof(msg));
        if (rc == 0)
            rc = change_noted(c, m.path, msg, sizeof(msg));
        if (rc == 0)
            rc = store_rmdir(&c->srv->store, m.path, msg, sizeof(msg));
        once_note(rc, m.once_client, m.once_call);
    }
    rc = reply_done(c, h, rc, msg, m.path, NULL, DDIO_IV_ALL);
    free(m.path);
    return rc;
}

int on_rename(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_rename m;
    char msg[768];
    if (ddio_dec_rename(p, h->len, &m))
        return bad_payload(c, h);
    int rc = 0;
    if (!once_answered(c, m.once_client, m.once_call)) {
        rc = check(c, m.from, access_remove, msg, sizeof(msg));
        if (rc == 0)
            rc = check(c, m.to, access_remove, msg, sizeof(msg));   /* the parent's, and a
                                                                     * replaced entry's */
        if (rc == 0)
            rc = not_fenced(c, m.from, msg, sizeof(msg));
        if (rc == 0)
            rc = not_fenced(c, m.to, msg, sizeof(msg));
        if (rc == 0)
            rc = rename_noted(c, m.from, m.to, msg, sizeof(msg));
        if (rc == 0)
            rc = store_rename(&c->srv->store, m.from, m.to, msg, sizeof(msg));
        once_note(rc, m.once_client, m.once_call);
    }
    rc = reply_done(c, h, rc, msg, m.from, m.to, DDIO_IV_ALL);
    free(m.from);
    free(m.to);
    return rc;
}

int on_setattr(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_setattr m;
    char msg[768], norm[DDIO_MAX_STR + 1];
    if (ddio_dec_setattr(p, h->len, &m))
        return bad_payload(c, h);
    int rc = store_norm_ns(m.path, norm, sizeof(norm), msg, sizeof(msg));
    if (rc == 0)
        rc = change_noted(c, m.path, msg, sizeof(msg));
    if (rc == 0)
        rc = access_setattr(c, norm, &m, msg, sizeof(msg));
    rc = reply_done(c, h, rc, msg, m.path, NULL, DDIO_IV_ATTR);
    free(m.path);
    return rc;
}
