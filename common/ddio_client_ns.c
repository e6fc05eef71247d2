/* The tools' and the mount's namespace calls (ddio_client.h): stat,
 * readdir, mkdir, rmdir, unlink, rename, setattr, the servers' STATS and a
 * file's layout, merged or fanned out over every server (a server out of
 * the membership left out of reads, and refusing changes). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE      /* qsort_r */
#endif
#include "ddio_client.h"
#include "ddio_client_int.h"
#include "ddio_core.h"
#include "ddio_core_member.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CL_PAGE        1024u      /* READDIR entries per request */

/* ---- namespace ---------------------------------------------------------------- */

/* a change needs every server it is not noted for: one down and out of
 * the membership is sent none, the others note the change (DELETE, MKDIR,
 * RMDIR, RENAME, SETATTR: CH_OUT_OK) for it and its resync makes it there; none is
 * made while a server is unreachable and not out */
#define CH_OUT_OK 2
static int all_in(struct ddio_client *cl, struct ddio_conn **conns, int change, char *msg,
                  size_t msglen)
{
    for (int i = 0; i < cl->n; i++)
        if ((conns[i]->member_out && change != CH_OUT_OK) || conns[i]->gone) {
            ddio_cl_say(msg, msglen, "ddio server %s is %s: namespace changes need every server "
                "(ddio member in first)", cl->addr[i], conns[i]->member_out
                ? "down and out of the membership" : "unreachable");
            return conns[i]->member_out ? -DDIO_E_OUT : -EIO;
        }
    return 0;
}

/* The request req sent to every server at once (resent to one lost
 * meanwhile), every reply collected: the calls, each with its own outcome
 * (free with ddio_calls_free), or NULL with the error in *rc. A server
 * out (or gone) is not sent it, and answers DDIO_E_OUT (its error); with
 * change, nothing is sent then (all_in). */
static struct ddio_call *send_all(struct ddio_client *cl, uint16_t type,
                                  const struct ddio_wbuf *req, int change, int *rc, char *msg,
                                  size_t msglen)
{
    struct ddio_call *calls = calloc(cl->n, sizeof(*calls));
    struct ddio_conn *conns[DDIO_MAX_SERVERS];
    struct ddio_err e = {0};

    if (!calls) {
        *rc = (ddio_cl_say(msg, msglen, "out of memory"), -ENOMEM);
        return NULL;
    }
    if (ddio_cl_conns_all(cl, conns, &e)
        || (change && (*rc = all_in(cl, conns, change, msg, msglen)))) {
        free(calls);
        if (e.errnum)
            *rc = ddio_cl_fail(&e, msg, msglen);
        return NULL;
    }
    for (int i = 0; i < cl->n; i++) {
        /* out (or gone): not asked, its reason its answer */
        calls[i].conn = conns[i]->member_out || conns[i]->gone ? NULL : conns[i];
        ddio_wbuf_init(&calls[i].req);
        ddio_put_bytes(&calls[i].req, req->p, req->len);
        if (req->err)
            calls[i].req.err = req->err;
    }
    ddio_fanout_recover(calls, cl->n, type, cl->timeout_ms, cl->recover_ms);
    for (int i = 0; i < cl->n; i++)
        if (conns[i]->member_out)
            ddio_err_set(&calls[i].err, DDIO_E_OUT, "ddio server %s: down, and out of the "
                         "membership", cl->addr[i]);
        else if (conns[i]->gone)
            calls[i].err = conns[i]->gone_err;
    return calls;
}

/* A request sent to every server at once; the outcome: the first hard
 * error (any status but ok and `soft`), else ok if any server said ok,
 * else `soft`. The changes (MKDIR, RMDIR, DELETE, RENAME) carry ids a
 * server answers a resend by (PROTOCOL.md "Resending"), so a resend's
 * EEXIST or ENOENT is a real one. */
static int fanout(struct ddio_client *cl, uint16_t type, const struct ddio_wbuf *req, int soft,
                  char *msg, size_t msglen)
{
    int ok = 0, hard = 0, soft_seen = 0;
    int change = type == DDIO_T_DELETE || type == DDIO_T_MKDIR || type == DDIO_T_RMDIR
                 || type == DDIO_T_RENAME || type == DDIO_T_SETATTR ? CH_OUT_OK : 1;
    struct ddio_call *calls = send_all(cl, type, req, change, &hard, msg, msglen);

    if (!calls)
        return hard;
    for (int i = 0; i < cl->n; i++) {
        struct ddio_err *ei = &calls[i].err;
        if (change == CH_OUT_OK && ei->errnum == DDIO_E_OUT && !calls[i].conn)
            continue;   /* down and out: the others noted it */
        int rc = ei->errnum ? ddio_cl_fail(ei, NULL, 0) : 0;
        if (rc == 0)
            ok = 1;
        else if (rc != soft && !hard)
            hard = ddio_cl_fail(ei, msg, msglen);
        else if (rc == soft && !soft_seen && !hard) {
            soft_seen = 1;
            ddio_cl_say(msg, msglen, "%s", ei->msg);
        }
    }
    ddio_calls_free(calls, cl->n);
    return hard ? hard : (ok ? 0 : soft);
}

/* a path request; once: with the ids of a change (a new call number) */
static void path_req(struct ddio_wbuf *w, const char *path, int once)
{
    struct ddio_path_req m = {.path = (char *)path};
    if (once) {
        m.once_client = ddio_client_id();
        m.once_call = ddio_call_id();
    }
    ddio_wbuf_init(w);
    ddio_enc_path_req(w, &m);
}

/* merge one server's PSTAT answer into st */
static void merge_stat(struct ddio_cstat *st, const struct ddio_pstat_r *r, int *kind)
{
    if (r->mtime_ns > st->mtime_ns)
        st->mtime_ns = r->mtime_ns;
    if (r->kind == DDIO_K_DIR) {
        if (!*kind) {
            *kind = DDIO_K_DIR;
            st->mode = r->mode;
            st->uid = r->uid;
            st->gid = r->gid;
        }
        return;
    }
    struct ddio_stripe s = {r->layout.stripe_unit, r->layout.stripe_count};
    uint64_t end = ddio_layout_logical_end(&s, r->layout.server_index, r->local_size);
    *kind = DDIO_K_FILE;
    st->mode = r->mode;
    st->uid = r->uid;
    st->gid = r->gid;
    st->stripe = s;
    st->copies = r->layout.copies;
    st->redundancy = ddio_layout_redundancy(&r->layout);
    if (end > st->size)
        st->size = end;
}

/* server i's PSTAT answer (a call of send_all) decoded into r: 0, or
 * -errno (-ENOENT: not there) */
static int pstat_reply(struct ddio_client *cl, int i, const struct ddio_call *k,
                       struct ddio_pstat_r *r, char *msg, size_t msglen)
{
    if (k->err.errnum)
        return ddio_cl_fail(&k->err, msg, msglen);
    if (ddio_dec_pstat_r(k->reply, k->reply_len, r)) {
        ddio_cl_say(msg, msglen, "server %s: malformed PSTAT reply", cl->addr[i]);
        return -EIO;
    }
    return 0;
}

/* PSTAT of path on every server at once: one round trip each, in parallel
 * (the mount pays one per lookup and getattr). 0 with the calls in
 * *calls, or -errno. */
static int pstat_all(struct ddio_client *cl, const char *path, struct ddio_call **calls,
                     char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    int rc = 0;
    path_req(&w, path, 0);
    *calls = send_all(cl, DDIO_T_PSTAT, &w, 0, &rc, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}

/* A file some of whose servers are out: a mirrored one's size from an
 * open (the out servers' parts sized from their copies), an erasure-coded
 * one's likewise (from the size its other servers noted); a `none` file's
 * is not known (its parts there are not reachable) */
static int stat_size_without(struct ddio_client *cl, const char *path, struct ddio_cstat *st,
                             int files, const char *out, char *msg, size_t msglen)
{
    struct ddio_cfile *f = NULL;
    if (!ddio_redundancy_kept(st->redundancy)) {
        if ((uint32_t)files >= st->stripe.count)
            return 0;           /* every part answered: none on the out ones */
        ddio_cl_say(msg, msglen, "%s: a part of this file is on server %s, which is down and out of "
            "the membership (the file has no copies)", path, out);
        return -EIO;
    }
    int rc = ddio_client_open(cl, path, DDIO_CO_RDONLY, &f, msg, msglen);
    if (!rc)
        rc = ddio_client_size(f, &st->size, msg, msglen);
    if (f)
        ddio_client_close(f);
    return rc;
}

int ddio_client_stat(struct ddio_client *cl, const char *path, struct ddio_cstat *st,
                     char *msg, size_t msglen)
{
    struct ddio_pstat_r *r = malloc(sizeof(*r));
    struct ddio_call *calls = NULL;
    int kind = 0, files = 0, rc = r ? 0 : (ddio_cl_say(msg, msglen, "out of memory"), -ENOMEM);
    const char *out = NULL;     /* a server out of the membership: not asked */

    memset(st, 0, sizeof(*st));
    if (!rc)
        rc = pstat_all(cl, path, &calls, msg, msglen);
    for (int i = 0; calls && i < cl->n && !rc; i++) {     /* the first error in list order */
        int e = pstat_reply(cl, i, &calls[i], r, msg, msglen);
        if (e == 0) {
            merge_stat(st, r, &kind);
            files += r->kind != DDIO_K_DIR;
        } else if (e == -DDIO_E_OUT)
            out = cl->addr[i];
        else if (e != -ENOENT)
            rc = e;
    }
    if (calls)
        ddio_calls_free(calls, cl->n);
    free(r);
    if (!rc && kind == DDIO_K_FILE && out)
        rc = stat_size_without(cl, path, st, files, out, msg, msglen);
    if (!rc && !kind) {
        ddio_cl_say(msg, msglen, "%s: no such file or directory on any of the %d servers", path, cl->n);
        rc = -ENOENT;
    }
    st->is_dir = kind == DDIO_K_DIR;
    return rc;
}

struct names {
    char **v;
    int *dir;
    size_t n, cap;
};

static int names_add(struct names *nm, const char *name, int is_dir)
{
    if (nm->n == nm->cap) {
        size_t cap = nm->cap ? nm->cap * 2 : 64;
        char **v = realloc(nm->v, cap * sizeof(*v));
        int *d = v ? realloc(nm->dir, cap * sizeof(*d)) : NULL;
        if (v)
            nm->v = v;
        if (!d)
            return -ENOMEM;
        nm->dir = d;
        nm->cap = cap;
    }
    if (!(nm->v[nm->n] = strdup(name)))
        return -ENOMEM;
    nm->dir[nm->n++] = is_dir;
    return 0;
}

/* the next page starts after r's last name, which must sort after the
 * one before (or a hostile server loops us): 0, or -EIO */
static int page_advance(const struct ddio_readdir_r *r, char *after, size_t afterlen)
{
    if (!r->more)
        return 0;
    const char *last = r->ent[r->n - 1].name;     /* the decoder: more means n >= 1 */
    if (strcmp(last, after) <= 0 || strlen(last) >= afterlen)
        return -EIO;
    strcpy(after, last);
    return 0;
}

/* every page of one server's listing of path into nm */
static int list_server(struct ddio_client *cl, int i, const char *path, struct names *nm,
                       char *msg, size_t msglen)
{
    char after[DDIO_NAME_MAX + 1] = "";
    struct ddio_readdir q = {.path = (char *)path, .after = after, .max = CL_PAGE};
    int rc = 0, more;
    do {
        struct ddio_wbuf w;
        struct ddio_readdir_r r;
        uint8_t *p = NULL;
        size_t n = 0;
        ddio_wbuf_init(&w);
        ddio_enc_readdir(&w, &q);
        rc = ddio_cl_call(cl, i, DDIO_T_READDIR, &w, &p, &n, msg, msglen);
        ddio_wbuf_free(&w);
        if (rc == 0 && ddio_dec_readdir_r(p, n, &r)) {
            ddio_cl_say(msg, msglen, "server %s: malformed READDIR reply", cl->addr[i]);
            rc = -EIO;
        }
        free(p);
        if (rc)
            return rc;
        for (uint32_t k = 0; k < r.n && !rc; k++)
            rc = names_add(nm, r.ent[k].name, r.ent[k].kind == DDIO_K_DIR);
        if (!rc && (rc = page_advance(&r, after, sizeof(after))))
            ddio_cl_say(msg, msglen, "server %s: READDIR page does not move forward", cl->addr[i]);
        more = r.more;
        ddio_readdir_r_free(&r);
    } while (!rc && more);
    return rc;
}

static int cmp_idx(const void *a, const void *b, void *arg)
{
    char **v = arg;
    return strcmp(v[*(const size_t *)a], v[*(const size_t *)b]);
}

int ddio_client_readdir(struct ddio_client *cl, const char *path,
                        int (*fn)(void *arg, const char *name, int is_dir), void *arg,
                        char *msg, size_t msglen)
{
    struct names nm = {0};
    int rc = 0, found = 0;
    size_t *ix = NULL;

    for (int i = 0; i < cl->n && !rc; i++) {
        int e = list_server(cl, i, path, &nm, msg, msglen);
        if (e == 0)
            found = 1;
        else if (e != -ENOENT && e != -DDIO_E_OUT)   /* out: listed by the others */
            rc = e;
    }
    if (!rc && !found)
        rc = -ENOENT;
    if (!rc && nm.n && !(ix = malloc(nm.n * sizeof(*ix))))
        rc = -ENOMEM;
    for (size_t k = 0; !rc && k < nm.n; k++)
        ix[k] = k;
    if (!rc && nm.n)
        qsort_r(ix, nm.n, sizeof(*ix), cmp_idx, nm.v);
    /* a file is listed by each of its stripe servers, a directory by all */
    for (size_t k = 0; !rc && k < nm.n; k++)
        if (k == 0 || strcmp(nm.v[ix[k]], nm.v[ix[k - 1]]))
            rc = fn(arg, nm.v[ix[k]], nm.dir[ix[k]]);
    for (size_t k = 0; k < nm.n; k++)
        free(nm.v[k]);
    free(nm.v);
    free(nm.dir);
    free(ix);
    return rc;
}

/* a MKDIR with the ids of a new call */
static void mkdir_req(struct ddio_wbuf *w, const char *path, uint32_t mode)
{
    struct ddio_mkdir m = {.path = (char *)path, .mode = mode & 07777,
                           .once_client = ddio_client_id(), .once_call = ddio_call_id()};
    ddio_wbuf_init(w);
    ddio_enc_mkdir(w, &m);
}

int ddio_client_mkdir(struct ddio_client *cl, const char *path, uint32_t mode,
                      char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    mkdir_req(&w, path, mode);
    int rc = fanout(cl, DDIO_T_MKDIR, &w, -EEXIST, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}

static void setattr_req(struct ddio_wbuf *w, const char *path, uint32_t what, uint32_t mode,
                        uint32_t uid, uint32_t gid)
{
    struct ddio_setattr m = {.path = (char *)path, .what = what, .mode = mode & 07777,
                             .uid = uid, .gid = gid};
    ddio_wbuf_init(w);
    ddio_enc_setattr(w, &m);
}

int ddio_client_setattr(struct ddio_client *cl, const char *path, uint32_t what,
                        uint32_t mode, uint32_t uid, uint32_t gid, char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    setattr_req(&w, path, what, mode, uid, gid);
    int rc = fanout(cl, DDIO_T_SETATTR, &w, -ENOENT, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}

int ddio_client_chown(struct ddio_client *cl, const char *path, long uid, long gid,
                      char *msg, size_t msglen)
{
    struct ddio_cstat st;
    if (uid < 0 || gid < 0) {
        int rc = ddio_client_stat(cl, path, &st, msg, msglen);
        if (rc)
            return rc;
        uid = uid < 0 ? (long)st.uid : uid;
        gid = gid < 0 ? (long)st.gid : gid;
    }
    return ddio_client_setattr(cl, path, DDIO_SA_OWNER, 0, (uint32_t)uid, (uint32_t)gid, msg,
                               msglen);
}

/* Is path an empty directory on every server? One READDIR of at most one
 * name to each, all at once (a listing of the whole directory would read
 * what only needs to be absent): 0, -ENOTEMPTY, -ENOENT (on none), or the
 * first other error (a file: ENOTDIR). */
static int empty_dir(struct ddio_client *cl, const char *path, char *msg, size_t msglen)
{
    struct ddio_readdir q = {.path = (char *)path, .after = "", .max = 1};
    struct ddio_wbuf w;
    int rc = 0, found = 0;
    ddio_wbuf_init(&w);
    ddio_enc_readdir(&w, &q);
    struct ddio_call *calls = send_all(cl, DDIO_T_READDIR, &w, CH_OUT_OK, &rc, msg, msglen);
    ddio_wbuf_free(&w);
    for (int i = 0; calls && i < cl->n && !rc; i++) {
        struct ddio_readdir_r r;
        if (calls[i].err.errnum == DDIO_E_OUT && !calls[i].conn)
            continue;           /* down and out: the others note the rmdir */
        if (calls[i].err.errnum) {
            int e = ddio_cl_fail(&calls[i].err, NULL, 0);
            if (e != -ENOENT)
                rc = ddio_cl_fail(&calls[i].err, msg, msglen);
            continue;
        }
        if (ddio_dec_readdir_r(calls[i].reply, calls[i].reply_len, &r)) {
            rc = (ddio_cl_say(msg, msglen, "server %s: malformed READDIR reply", cl->addr[i]), -EIO);
            continue;
        }
        found = 1;
        if (r.n)
            rc = (ddio_cl_say(msg, msglen, "rmdir %s: directory not empty", path), -ENOTEMPTY);
        ddio_readdir_r_free(&r);
    }
    if (calls)
        ddio_calls_free(calls, cl->n);
    if (!rc && !found) {        /* no directory: a file (ENOTDIR), or nothing (rare) */
        struct ddio_cstat st;
        rc = ddio_client_stat(cl, path, &st, msg, msglen);
        if (!rc && !st.is_dir)
            rc = (ddio_cl_say(msg, msglen, "rmdir %s: not a directory", path), -ENOTDIR);
        else if (!rc)          /* removed while we asked */
            rc = (ddio_cl_say(msg, msglen, "rmdir %s: no such directory", path), -ENOENT);
    }
    return rc;
}

int ddio_client_rmdir(struct ddio_client *cl, const char *path, char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    /* every server's emptiness first, so ENOTEMPTY leaves the namespace as it was */
    int rc = empty_dir(cl, path, msg, msglen);
    if (rc)
        return rc;
    path_req(&w, path, 1);
    rc = fanout(cl, DDIO_T_RMDIR, &w, -ENOENT, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}

int ddio_client_unlink(struct ddio_client *cl, const char *path, char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    path_req(&w, path, 1);
    int rc = fanout(cl, DDIO_T_DELETE, &w, -ENOENT, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}

/* a change of path (with ids) sent to server i alone */
static int path_change_on(struct ddio_client *cl, int i, uint16_t type, const char *path,
                          char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    path_req(&w, path, 1);
    int rc = ddio_cl_call(cl, i, type, &w, NULL, NULL, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}

int ddio_client_unlink_on(struct ddio_client *cl, int i, const char *path, char *msg,
                          size_t msglen)
{
    return path_change_on(cl, i, DDIO_T_DELETE, path, msg, msglen);
}

int ddio_client_rmdir_on(struct ddio_client *cl, int i, const char *path, char *msg,
                         size_t msglen)
{
    return path_change_on(cl, i, DDIO_T_RMDIR, path, msg, msglen);
}

int ddio_client_rename(struct ddio_client *cl, const char *from, const char *to,
                       char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    struct ddio_rename m = {.from = (char *)from, .to = (char *)to,
                            .once_client = ddio_client_id(), .once_call = ddio_call_id()};
    ddio_wbuf_init(&w);
    ddio_enc_rename(&w, &m);
    int rc = fanout(cl, DDIO_T_RENAME, &w, -ENOENT, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}

int ddio_client_stats(struct ddio_client *cl, int i, struct ddio_stats_r *r,
                      char *msg, size_t msglen)
{
    uint8_t *p = NULL;
    size_t n = 0;
    memset(r, 0, sizeof(*r));
    if (i < 0 || i >= cl->n)
        return ddio_cl_say(msg, msglen, "no server %d", i), -EINVAL;
    int rc = ddio_cl_call(cl, i, DDIO_T_STATS, NULL, &p, &n, msg, msglen);
    if (rc == 0 && ddio_dec_stats_r(p, n, r)) {
        ddio_cl_say(msg, msglen, "server %s: malformed STATS reply", cl->addr[i]);
        rc = -EIO;
    }
    free(p);
    return rc;
}

/* one file server's PSTAT answer into l; 1: it holds a directory there */
static int layout_add(struct ddio_client *cl, int i, const char *path,
                      const struct ddio_pstat_r *r, int *files, struct ddio_clayout *l,
                      char *msg, size_t msglen)
{
    if (r->kind != DDIO_K_FILE)
        return 1;
    uint32_t k = r->layout.server_index;
    if (*files && (r->layout.stripe_unit != l->stripe.unit
                   || r->layout.stripe_count != l->stripe.count || l->server[k] >= 0)) {
        ddio_cl_say(msg, msglen, "%s: server %s holds a layout that disagrees with the others",
            path, cl->addr[i]);
        return -EIO;
    }
    ++*files;
    l->stripe.unit = r->layout.stripe_unit;
    l->stripe.count = r->layout.stripe_count;
    l->server[k] = i;
    l->local[k] = r->local_size;
    uint64_t end = ddio_layout_logical_end(&l->stripe, k, r->local_size);
    if (end > l->size)
        l->size = end;
    return 0;
}

/* PSTAT on every server: which one holds which stripe, and how much */
int ddio_client_layout(struct ddio_client *cl, const char *path, struct ddio_clayout *l,
                       char *msg, size_t msglen)
{
    struct ddio_pstat_r *r = malloc(sizeof(*r));
    struct ddio_call *calls = NULL;
    int files = 0, dirs = 0, rc = r ? 0 : (ddio_cl_say(msg, msglen, "out of memory"), -ENOMEM);

    memset(l, 0, sizeof(*l));
    for (unsigned k = 0; k < DDIO_MAX_SERVERS; k++)
        l->server[k] = -1;
    if (!rc)
        rc = pstat_all(cl, path, &calls, msg, msglen);
    for (int i = 0; calls && i < cl->n && !rc; i++) {
        int e = pstat_reply(cl, i, &calls[i], r, msg, msglen);
        if (e == 0 && (e = layout_add(cl, i, path, r, &files, l, msg, msglen)) == 1)
            dirs++;
        else if (e && e != -ENOENT)
            rc = e;
    }
    if (calls)
        ddio_calls_free(calls, cl->n);
    free(r);
    if (!rc && !files)
        rc = dirs ? (ddio_cl_say(msg, msglen, "%s: is a directory", path), -EISDIR)
                  : (ddio_cl_say(msg, msglen, "%s: no such file on any of the %d servers", path,
                         cl->n), -ENOENT);
    return rc;
}

/* ---- one server's namespace (the rebuild and the resync) ---------------------- */

int ddio_client_pstat_on(struct ddio_client *cl, int i, const char *path,
                         struct ddio_pstat_r *r, char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    uint8_t *p = NULL;
    size_t n = 0;
    path_req(&w, path, 0);
    int rc = ddio_cl_call(cl, i, DDIO_T_PSTAT, &w, &p, &n, msg, msglen);
    ddio_wbuf_free(&w);
    if (rc == 0 && ddio_dec_pstat_r(p, n, r))
        rc = (ddio_cl_say(msg, msglen, "server %s: malformed PSTAT reply", cl->addr[i]), -EIO);
    free(p);
    return rc;
}

int ddio_client_mkdir_on(struct ddio_client *cl, int i, const char *path, uint32_t mode,
                         char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    mkdir_req(&w, path, mode);
    int rc = ddio_cl_call(cl, i, DDIO_T_MKDIR, &w, NULL, NULL, msg, msglen);
    ddio_wbuf_free(&w);
    return rc == -EEXIST ? 0 : rc;
}

int ddio_client_setattr_on(struct ddio_client *cl, int i, const char *path, uint32_t mode,
                           uint32_t uid, uint32_t gid, char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    setattr_req(&w, path, DDIO_SA_MODE | DDIO_SA_OWNER, mode, uid, gid);
    int rc = ddio_cl_call(cl, i, DDIO_T_SETATTR, &w, NULL, NULL, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}
