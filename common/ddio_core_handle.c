/* The handles of an open file (ddio_core_file.h): kept usable, and used on every
 * stripe server. A handle lost with its connection is renewed (reconnect
 * with backoff, OPEN by path again: ddio_core_file.c, the locks held taken
 * again: ddio_core_lock.c); requests fanned out to the
 * stripe servers' handles (STAT, SETSIZE, PREALLOC, SYNC, one server's
 * call), resent to a server lost meanwhile; CLOSE of every handle; the UCX
 * attachment of the file's connections. */
#include "ddio_core_file.h"
#include "ddio_net.h"
#include "ddio_xport.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- is a handle alive ------------------------------------------------------------ */

static int srv_live(const struct ddio_srv *s)
{
    return s->is_open && s->conn->sock >= 0 && s->conn->gen == s->gen;
}

int ddio_srv_live(const struct ddio_srv *s)
{
    return !s->out && srv_live(s);    /* an out server's copies may be stale */
}

/* ---- renewal ------------------------------------------------------------------- */

/* Stripe server i's connection dropped since its handle was opened: connect
 * again and OPEN by path; the server must still hold stripe i of a file with
 * the same layout. Under the connection's mutex, so threads sharing f renew
 * a handle once. */
int ddio_fh_renew_locked(struct ddio_fh *f, int i, int conn_ms, struct ddio_err *e)
{
    struct ddio_srv *s = &f->srv[i];
    struct ddio_conn *c = s->conn;
    struct ddio_open_r *r;
    int rc;

    if (srv_live(s))
        return 0;
    if (!(r = malloc(sizeof(*r)))) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    rc = ddio_conn_ready(c, conn_ms, e);
    if (!rc)
        rc = ddio_fh_reopen_locked(f, i, c, r, e);
    /* the membership moved since this connection last heard it: the
     * refusal brought the new epoch, which the OPEN sent again carries */
    if (rc && e->errnum == DDIO_E_EPOCH) {
        memset(e, 0, sizeof(*e));
        rc = ddio_fh_reopen_locked(f, i, c, r, e);
    }
    if (!rc) {
        s->handle = r->handle;
        s->gen = c->gen;
    }
    free(r);
    if (!rc && i == f->lock_at && f->nlocks && f->relock && f->relock(f, e)) {
        ddio_conn_fail(c);      /* try again from the connect, locks and all */
        e->transport = 1;
        rc = -1;
    }
    if (rc && e->errnum == ENOENT)      /* renamed or deleted meanwhile */
        e->transport = 1;
    return rc;
}

/* renew with backoff until the recovery deadline (f->recover_ms from now) */
static int renew(struct ddio_fh *f, int i, struct ddio_err *e)
{
    struct ddio_conn *c = f->srv[i].conn;
    int64_t give_up = ddio_now_ms() + f->recover_ms;
    int wait = 0, rc;

    pthread_mutex_lock(&c->mu);
    for (;;) {
        int64_t left = give_up - ddio_now_ms();
        memset(e, 0, sizeof(*e));
        rc = ddio_fh_renew_locked(f, i, left > 1000 && f->recover_ms ? 1000 : f->timeout_ms, e);
        wait = ddio_backoff_next(wait);
        if (!rc || !f->recover_ms || !ddio_err_reconnectable(e) || left < wait)
            break;
        pthread_mutex_unlock(&c->mu);   /* others may use c meanwhile */
        usleep((useconds_t) wait * 1000);
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* a server the open found out (ddio_srv.out): what needs it fails, and a
 * read takes its part from a copy (ddio_core_xprep.c) */
static int out_err(const struct ddio_fh *f, int i, struct ddio_err *e)
{
    ddio_err_set(e, DDIO_E_OUT, "ddio: %s: server %s is out of the membership (or was "
                 "unreachable when the file was opened read-only): its parts are read "
                 "from and written to copies; this request needs every server",
                 f->path ? f->path : "?", f->srv[i].conn->name);
    return -1;
}

int ddio_fh_ready(struct ddio_fh *f, int i, struct ddio_err *e)
{
    struct ddio_srv *s = &f->srv[i];

    if (s->out)
        return out_err(f, i, e);
    if (srv_live(s))
        return 0;
    if ((f->renew || f->recover_ms) && s->conn && f->path)
        return renew(f, i, e);
    /* a dropped connection took the server-side handle (and locks) with it;
     * a new connection must not reuse the old handle number */
    ddio_err_set(e, EPIPE, "ddio: connection to server %s was lost; the file must be "
                 "reopened", s->conn ? s->conn->name : "?");
    e->transport = 1;
    return -1;
}

int ddio_fh_ready_once(struct ddio_fh *f, int i, struct ddio_err *e)
{
    struct ddio_srv *s = &f->srv[i];
    int rc;

    if (s->out)
        return out_err(f, i, e);
    if (srv_live(s))
        return 0;
    if (!(f->renew || f->recover_ms) || !s->conn || !f->path)
        return ddio_fh_ready(f, i, e);          /* its EPIPE */
    pthread_mutex_lock(&s->conn->mu);
    rc = ddio_fh_renew_locked(f, i, f->timeout_ms < 1000 ? f->timeout_ms : 1000, e);
    pthread_mutex_unlock(&s->conn->mu);
    return rc;
}

/* ---- the handle's view of who is out ---------------------------------------------- */

int ddio_fh_review(struct ddio_fh *f, uint32_t epoch, char *back)
{
    int n = 0;
    for (int i = 0; i < f->nsrv; i++)
        if (f->srv[i].out) {
            f->srv[i].out = 0;
            if (back)
                back[i] = 1;
            n++;
        }
    if (epoch > f->view_epoch)
        f->view_epoch = epoch;
    return n;
}

void ddio_fh_view_pin(struct ddio_fh *f)
{
    uint32_t newest = 0;
    if (f->view_epoch || !ddio_fh_redundant(f))
        return;
    for (int j = 0; j < f->nsrv; j++) {
        uint32_t ep = f->srv[j].conn ? f->srv[j].conn->epoch : 0;
        newest = ep > newest ? ep : newest;
    }
    f->view_epoch = newest;
}

uint32_t ddio_fh_change_epoch(const struct ddio_fh *f)
{
    return ddio_fh_redundant(f) ? f->view_epoch : 0;
}

/* ---- requests on every stripe server ------------------------------------------ */

/* enc(f, i, w, arg) builds server i's request, or returns 0 to skip it */
typedef int (*srv_enc_fn)(const struct ddio_fh *f, int i, struct ddio_wbuf *w, const void *arg);

/* build server i's request for this pass (0: skipped, or not ready: err) */
static void fh_prepare(struct ddio_fh *f, int i, struct ddio_call *k, srv_enc_fn enc,
                       const void *arg)
{
    uint64_t handle = f->srv[i].handle;

    ddio_wbuf_free(&k->req);
    free(k->reply);
    memset(k, 0, sizeof(*k));
    ddio_wbuf_init(&k->req);
    /* out: left closed by a read-only open, nothing of it to sync or
     * close; its size is a copy's (ddio_xfer_file_size) */
    if (f->srv[i].out || !enc(f, i, &k->req, arg) || ddio_fh_ready(f, i, &k->err))
        return;
    if (f->srv[i].handle != handle) {   /* renewed: the request names it */
        ddio_wbuf_free(&k->req);
        ddio_wbuf_init(&k->req);
        enc(f, i, &k->req, arg);
    }
    k->conn = f->srv[i].conn;
}

/* A mirrored file's servers lost for the whole recovery time in a fan-out
 * declared out (f->declare_out; DESIGN.md 6.1): their errors cleared, the
 * file goes on without them. How many were declared. */
static int fh_declare_lost(struct ddio_fh *f, struct ddio_call *calls)
{
    int n = 0;
    for (int i = 0; i < f->nsrv && ddio_fh_redundant(f) && f->declare_out; i++) {
        struct ddio_err de = {0};
        /* out already: another thread's call declared it meanwhile */
        if (!calls[i].err.errnum || !calls[i].err.transport
            || (!f->srv[i].out && f->declare_out(f->declare_arg, f->srv[i].conn, &de)))
            continue;
        f->srv[i].out = 1;
        ddio_fh_view_pin(f);
        memset(&calls[i].err, 0, sizeof(calls[i].err));
        n++;
    }
    return n;
}

/* A change was refused for the handle's older view of who is out: the
 * servers it had out taken back and asked too (todo 2, back[] 1); one
 * taken back that still refuses as out (DDIO_E_OUT) is out again, without
 * an error (its copies' holders took the change). 1: send again. */
static int fh_view_moved(struct ddio_fh *f, struct ddio_call *calls, char *todo, char *back)
{
    int again = 0;
    for (int i = 0; i < f->nsrv; i++) {
        if (back[i] && calls[i].err.errnum == DDIO_E_OUT) {
            f->srv[i].out = 1;
            ddio_fh_view_pin(f);
            memset(&calls[i].err, 0, sizeof(calls[i].err));
            todo[i] = 0;
        }
        if (calls[i].err.errnum != DDIO_E_EPOCH || !calls[i].conn)
            continue;
        char took[DDIO_MAX_SERVERS] = {0};
        if (ddio_fh_review(f, calls[i].conn->epoch, took))
            for (int j = 0; j < f->nsrv; j++)
                if (took[j]) {
                    back[j] = 1;
                    todo[j] = 2;
                    memset(&calls[j].err, 0, sizeof(calls[j].err));
                    again = 1;
                }
    }
    return again;
}

/* fan a request out to the stripe servers enc picks; the first error into e;
 * the calls (replies) stay for the caller in *out when out != NULL. A server
 * lost meanwhile (f->recover_ms) is reconnected and asked again: these
 * requests (STAT, SETSIZE, PREALLOC, SYNC, CLOSE, ...) give the same result
 * when done twice. */
static int fh_fanout(struct ddio_fh *f, uint16_t type, srv_enc_fn enc, const void *arg,
                     struct ddio_call **out, struct ddio_err *e)
{
    struct ddio_call *calls = calloc(f->nsrv ? f->nsrv : 1, sizeof(*calls));
    char *todo = calloc(f->nsrv ? f->nsrv : 1, 1);
    int64_t give_up = ddio_now_ms() + f->recover_ms;
    int rc = 0, again = 1;

    if (!calls || !todo) {
        free(calls);
        free(todo);
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    memset(todo, 1, f->nsrv);
    char back[DDIO_MAX_SERVERS] = {0};
    int change = type == DDIO_T_SETSIZE || type == DDIO_T_PREALLOC;
    while (again) {
        for (int i = 0; i < f->nsrv; i++)
            if (todo[i]) {
                fh_prepare(f, i, &calls[i], enc, arg);
                calls[i].view_epoch = change ? ddio_fh_change_epoch(f) : 0;
            } else
                calls[i].conn = NULL;   /* answered: not sent again */
        ddio_fanout(calls, f->nsrv, type, f->timeout_ms);
        again = change && fh_view_moved(f, calls, todo, back);
        for (int i = 0; i < f->nsrv; i++) {
            /* not sent: ddio_fh_ready already tried to reconnect for the
             * whole recovery time */
            if (todo[i] == 2) {         /* taken back by fh_view_moved */
                todo[i] = 1;
                continue;
            }
            todo[i] = todo[i] && calls[i].sent && f->recover_ms &&
                ddio_err_recoverable(&calls[i].err) && ddio_now_ms() < give_up;
            again |= todo[i];
        }
    }
    int declared = fh_declare_lost(f, calls);
    for (int i = 0; i < f->nsrv && !rc; i++)
        if (calls[i].err.errnum) {
            *e = calls[i].err;
            rc = -1;
        }
    /* what the others did before it was out is noted for it */
    if (!rc && declared && type != DDIO_T_SETSIZE)
        rc = ddio_fh_touch(f, e);
    free(todo);
    if (out && !rc)
        *out = calls;
    else
        ddio_calls_free(calls, f->nsrv);
    return rc;
}

static int enc_handle(const struct ddio_fh *f, int i, struct ddio_wbuf *w, const void *skip)
{
    struct ddio_handle_req m = {.handle = f->srv[i].handle };
    if (skip && ((const char *) skip)[i])
        return 0;
    ddio_enc_handle_req(w, &m);
    return 1;
}

int ddio_fh_local_sizes(struct ddio_fh *f, const char *skip, uint64_t *local,
                        struct ddio_err *e)
{
    struct ddio_call *calls = NULL;
    int rc = 0;

    /* an out server's size is a copy's (ddio_xfer_file_size gives it) */
    for (int i = 0; i < f->nsrv && !rc; i++)
        if (f->srv[i].out && !(skip && skip[i]))
            rc = ddio_fh_ready(f, i, e);
    if (!rc)
        rc = fh_fanout(f, DDIO_T_STAT, enc_handle, skip, &calls, e);
    for (int i = 0; !rc && i < f->nsrv; i++) {
        struct ddio_u64_r r;
        if (skip && skip[i])
            continue;
        if (!calls[i].reply && f->srv[i].out) {   /* declared out by this fan-out */
            ddio_err_set(e, EHOSTDOWN, "ddio server %s: declared out while asked its size",
                         f->srv[i].conn->name);
            rc = -1;
        } else if (ddio_dec_u64_r(calls[i].reply, calls[i].reply_len, &r)) {
            ddio_err_set(e, EPROTO, "ddio server %s: malformed STAT reply",
                         f->srv[i].conn->name);
            rc = -1;
        } else
            local[i] = r.value;
    }
    ddio_calls_free(calls, calls ? f->nsrv : 0);
    return rc;
}

int ddio_fh_size(struct ddio_fh *f, const char *skip, const uint64_t *known, uint64_t *size,
                 struct ddio_err *e)
{
    uint64_t *local = calloc(f->nsrv ? f->nsrv : 1, sizeof(*local));
    int rc;

    *size = 0;
    if (!local) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    rc = ddio_fh_local_sizes(f, skip, local, e);
    for (int i = 0; !rc && i < f->nsrv; i++) {
        uint64_t ls = skip && skip[i] ? known[i] : local[i];
        uint64_t end = ddio_layout_logical_end(&f->stripe, (uint32_t) i, ls);
        if (end > *size)
            *size = end;
    }
    free(local);
    return rc;
}

struct size_arg {
    uint64_t size;
    const uint64_t *grow;
};

/* an extending set_size reaches server s when it, or an index it holds a
 * copy of, grows (a copy's size is its primary's) */
static int grows(const struct ddio_fh *f, const struct size_arg *a, uint32_t s)
{
    for (uint32_t c = 0; c < (f->copies ? f->copies : 1); c++) {
        uint32_t p = ddio_copy_of(f->stripe.count, s, c);
        if (ddio_layout_local_size(&f->stripe, p, a->size) > a->grow[p])
            return 1;
    }
    return 0;
}

static int enc_setsize(const struct ddio_fh *f, int i, struct ddio_wbuf *w, const void *arg)
{
    const struct size_arg *a = arg;
    struct ddio_setsize m = {.handle = f->srv[i].handle,
        .local_size = ddio_layout_local_size(&f->stripe, (uint32_t) i, a->size),
        .logical_size = f->copies > 1 || f->ec.k ? a->size : UINT64_MAX,
        .flags = a->grow ? DDIO_SS_GROW : 0
    };
    /* (every server of an erasure-coded file notes its logical size) */
    if (a->grow && !f->ec.k && !grows(f, a, (uint32_t) i))
        return 0;
    ddio_enc_setsize(w, &m);
    return 1;
}

int ddio_fh_set_local_sizes(struct ddio_fh *f, uint64_t size, const uint64_t *grow,
                            struct ddio_err *e)
{
    struct size_arg a = {.size = size,.grow = grow };
    return fh_fanout(f, DDIO_T_SETSIZE, enc_setsize, &a, NULL, e);
}

static int enc_prealloc(const struct ddio_fh *f, int i, struct ddio_wbuf *w, const void *arg)
{
    uint64_t size = *(const uint64_t *) arg;
    struct ddio_prealloc m = {.handle = f->srv[i].handle,.local_off = 0,
        .local_len = ddio_layout_local_size(&f->stripe, (uint32_t) i, size),
        .logical_size = f->copies > 1 ? size : 0
    };
    if (m.local_len == 0 && !m.logical_size)
        return 0;
    ddio_enc_prealloc(w, &m);
    return 1;
}

int ddio_fh_prealloc(struct ddio_fh *f, uint64_t size, struct ddio_err *e)
{
    uint64_t *local = calloc(f->nsrv ? f->nsrv : 1, sizeof(*local));
    int rc = local ? 0 : -1;

    if (!local)
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
    if (!rc)
        rc = fh_fanout(f, DDIO_T_PREALLOC, enc_prealloc, &size, NULL, e);
    /* MPI_File_preallocate also makes the file at least `size` long: a pure
     * extension of each server's share (never a shrink); a server out
     * counts as empty, so its copies' holders grow its copies */
    char out[DDIO_MAX_SERVERS] = { 0 };
    for (int i = 0; i < f->nsrv; i++)
        out[i] = (char) f->srv[i].out;
    if (!rc)
        rc = ddio_fh_local_sizes(f, out, local, e);
    if (!rc)
        rc = ddio_fh_set_local_sizes(f, size, local, e);
    free(local);
    return rc;
}

int ddio_fh_sync_servers(struct ddio_fh *f, struct ddio_err *e)
{
    return fh_fanout(f, DDIO_T_SYNC, enc_handle, NULL, NULL, e);
}

static int enc_touch(const struct ddio_fh *f, int i, struct ddio_wbuf *w, const void *arg)
{
    (void) arg;
    struct ddio_setsize m = {.handle = f->srv[i].handle,.local_size = 0,
        .logical_size = 0,.flags = DDIO_SS_GROW
    };
    ddio_enc_setsize(w, &m);
    return 1;
}

int ddio_fh_touch(struct ddio_fh *f, struct ddio_err *e)
{
    return fh_fanout(f, DDIO_T_SETSIZE, enc_touch, NULL, NULL, e);
}

struct call_arg {
    ddio_henc_fn enc;
    uint64_t arg;
    int only;
};

static int enc_one(const struct ddio_fh *f, int i, struct ddio_wbuf *w, const void *arg)
{
    const struct call_arg *a = arg;
    if (i != a->only)
        return 0;
    a->enc(w, f->srv[i].handle, a->arg);
    return 1;
}

int ddio_fh_call(struct ddio_fh *f, int i, uint16_t type, ddio_henc_fn enc, uint64_t arg,
                 uint8_t **reply, size_t *len, struct ddio_err *e)
{
    struct call_arg a = {.enc = enc,.arg = arg,.only = i };
    struct ddio_call *calls = NULL;
    int rc = fh_fanout(f, type, enc_one, &a, &calls, e);

    if (!rc && reply) {
        *reply = calls[i].reply;
        *len = calls[i].reply_len;
        calls[i].reply = NULL;
    }
    ddio_calls_free(calls, calls ? f->nsrv : 0);
    return rc;
}

/* ---- close ------------------------------------------------------------------ */

/* A CLOSE has nothing a caller could see fail: the server makes nothing
 * durable at it (MPI_File_sync does; a close does not sync, as ufs:'s does
 * not), this process's writes were answered before it (the client cache is
 * flushed first, and its error is the close's), and a handle its server
 * lost is closed already. It is sent to every server at once and its
 * replies read (errors dropped) before the close returns: a close whose
 * CLOSE was only posted let another rank's MPI_File_delete after the
 * collective close reach the server first, and the deleted file's space
 * stayed held by the still-open handle (a job that deleted and then wrote
 * on a nearly full file system got ENOSPC: MPI suite errors-nospace). */
void ddio_fh_close_servers(struct ddio_fh *f)
{
    int64_t dl = ddio_now_ms() + f->timeout_ms;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < f->nsrv; i++) {
            struct ddio_conn *c = f->srv[i].conn;
            struct ddio_wbuf w;
            struct ddio_err e;
            memset(&e, 0, sizeof(e));
            pthread_mutex_lock(&c->mu);
            if (pass == 1) {            /* the replies */
                if (c->nposted)
                    (void) ddio_conn_drain(c, dl, &e);
            } else {
                ddio_wbuf_init(&w);
                if (srv_live(&f->srv[i]) && enc_handle(f, i, &w, NULL) && !w.err)
                    ddio_conn_post(c, DDIO_T_CLOSE, w.p, w.len, dl, &e);
                ddio_wbuf_free(&w);
            }
            pthread_mutex_unlock(&c->mu);
        }
}

void ddio_fh_ucx_attach(struct ddio_fh *f)
{
    int64_t dl = ddio_now_ms() + f->timeout_ms;
    if (f->xport == DDIO_XPORT_TCP)
        return;
    for (int i = 0; i < f->nsrv; i++) {
        struct ddio_conn *c = f->srv[i].conn;
        struct ddio_err ce;
        memset(&ce, 0, sizeof(ce));
        pthread_mutex_lock(&c->mu);
        if (c->ucx_lazy)
            ddio_conn_ucx(c, dl, &ce);
        pthread_mutex_unlock(&c->mu);
    }
}
