/* A file open on its stripe servers (ddio_core.h): open, create, close,
 * size, set size, preallocation, sync, delete, and the renewal of a handle
 * lost with its connection.
 *
 * A file lives on `count` servers with a layout stored on each of them. To
 * open an existing file we ask every configured server (only the stripe
 * servers have it, and we do not know the stripe count yet), then check the
 * stored layout against our connections. To create, we first look for an
 * existing file the same way (so a file created earlier with a different
 * striping is reused, not shadowed), then create with O_EXCL on each stripe
 * server, which makes EXCL exact across servers and racing processes. */
#include "ddio_core.h"
#include "ddio_net.h"
#include "ddio_xport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- one OPEN to several servers -------------------------------------------- */

typedef struct open_set {
    int n;
    struct ddio_conn **conns;
    struct ddio_call *calls;
    struct ddio_open_r *res;
} open_set;

/* OPEN of path on c into w: with proto (a create), stripe i of that layout,
 * and the create's ids (call non-zero: DDIO_O_ONCE), the same on every
 * stripe server and in every resend */
static void open_msg(struct ddio_wbuf *w, const struct ddio_conn *c, const char *path,
                     uint32_t amode, const struct ddio_layout_rec *proto, int i, uint64_t call,
                     const struct ddio_local_ask *ask)
{
    struct ddio_open m;
    memset(&m, 0, sizeof(m));
    if (ask && ask->n && ask->asked[i]) {
        amode |= DDIO_O_LOCAL;
        m.local_name = (char *) ask->name;
        memcpy(m.local_nonce, ask->nonce[i], DDIO_LOCAL_NONCE);
    }
    m.path = (char *) path;
    m.amode = amode;
    if (proto) {
        m.layout = *proto;
        m.layout.server_index = i;
    } else {
        /* unused without CREAT, but the decoder insists on a valid one */
        m.layout.stripe_unit = DDIO_DFLT_UNIT;
        m.layout.stripe_count = 1;
        memcpy(m.layout.ids[0], c->id, DDIO_ID_LEN);
    }
    if (call) {
        m.amode |= DDIO_O_ONCE;
        m.once_client = ddio_client_id();
        m.once_call = call;
    }
    m.layout.ndisks = c->ndisks;
    m.layout.block_size = c->block_size;
    ddio_wbuf_init(w);
    ddio_enc_open(w, &m);
}

/* calls [lo, hi) sent (resent to a server lost meanwhile), answers decoded.
 * A resent create's EEXIST is another creator's: the server answers the
 * resend of a create whose first run made the file as a create (the ids
 * stored with the file: PROTOCOL.md "Resending"). */
static void open_fan(open_set *s, int lo, int hi, int timeout_ms, int recover_ms)
{
    ddio_fanout_recover(s->calls + lo, hi - lo, DDIO_T_OPEN, timeout_ms, recover_ms);
    for (int i = lo; i < hi; i++) {
        struct ddio_call *k = &s->calls[i];
        if (!k->conn)
            ddio_err_set(&k->err, ECANCELED, "not sent");
        else if (!k->err.errnum && ddio_dec_open_r(k->reply, k->reply_len, &s->res[i]))
            ddio_err_set(&k->err, EPROTO, "ddio server %s: malformed OPEN reply",
                         k->conn->name);
    }
}

static int open_send(open_set *s, const char *path, uint32_t amode,
                     const struct ddio_layout_rec *proto, const struct ddio_local_ask *ask,
                     int timeout_ms, int recover_ms, struct ddio_err *e)
{
    uint64_t call = proto ? ddio_call_id() : 0;
    s->calls = calloc(s->n, sizeof(*s->calls));
    s->res = calloc(s->n, sizeof(*s->res));
    if (!s->calls || !s->res) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    for (int i = 0; i < s->n; i++) {
        s->calls[i].conn = s->conns[i];
        open_msg(&s->calls[i].req, s->conns[i], path, amode, proto, i, call, ask);
    }
    if (proto && s->n > 1) {
        /* stripe server 0 decides who creates: only its O_EXCL winner goes
         * on to the others, so racing creators never split a file */
        open_fan(s, 0, 1, timeout_ms, recover_ms);
        if (s->calls[0].err.errnum)
            for (int i = 1; i < s->n; i++)
                s->calls[i].conn = NULL;        /* not sent: no error of its own */
        open_fan(s, 1, s->n, timeout_ms, recover_ms);
    } else
        open_fan(s, 0, s->n, timeout_ms, recover_ms);
    return 0;
}

/* one request on a connection, its answer dropped (cleanup paths) */
static void call_once(struct ddio_conn *c, uint16_t type, struct ddio_wbuf *w, int timeout_ms)
{
    struct ddio_call k;
    memset(&k, 0, sizeof(k));
    k.conn = c;
    k.req = *w;
    ddio_fanout(&k, 1, type, timeout_ms);
    ddio_wbuf_free(&k.req);
    free(k.reply);
}

static void close_one(struct ddio_conn *c, uint64_t handle, int timeout_ms)
{
    struct ddio_handle_req m = {.handle = handle };
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_handle_req(&w, &m);
    call_once(c, DDIO_T_CLOSE, &w, timeout_ms);
}

static void delete_one(struct ddio_conn *c, const char *path, int timeout_ms)
{
    struct ddio_path_req m = {.path = (char *) path };
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_path_req(&w, &m);
    call_once(c, DDIO_T_DELETE, &w, timeout_ms);
}

/* close what this set opened (after a failure); delete what it created */
static void open_undo(open_set *s, const char *path, int timeout_ms)
{
    for (int i = 0; s->calls && i < s->n; i++) {
        if (s->calls[i].err.errnum)
            continue;
        close_one(s->conns[i], s->res[i].handle, timeout_ms);
        if (s->res[i].created)
            delete_one(s->conns[i], path, timeout_ms);
    }
}

static void open_set_free(open_set *s)
{
    ddio_calls_free(s->calls, s->n);
    free(s->res);
    s->calls = NULL;
    s->res = NULL;
}

/* ---- layout checks ------------------------------------------------------------ */

static void id_hex(const uint8_t *id, char *out)
{
    for (unsigned i = 0; i < DDIO_ID_LEN; i++)
        sprintf(out + 2 * i, "%02x", id[i]);
}

static int layout_same(const struct ddio_layout_rec *a, const struct ddio_layout_rec *b)
{
    return a->stripe_unit == b->stripe_unit && a->stripe_count == b->stripe_count &&
        !memcmp(a->ids, b->ids, (size_t) a->stripe_count * DDIO_ID_LEN);
}

static void srv_set(struct ddio_srv *s, struct ddio_conn *c, uint64_t handle)
{
    s->conn = c;
    s->gen = c->gen;
    s->handle = handle;
    s->is_open = 1;
}

/* place reply i at its stripe index, checking it against the first layout */
static int adopt_one(struct ddio_fh *f, open_set *s, int i, const struct ddio_layout_rec *L,
                     const char *path, struct ddio_err *e)
{
    const struct ddio_layout_rec *li = &s->res[i].layout;
    uint32_t idx = li->server_index;

    if (!layout_same(li, L) || idx >= L->stripe_count ||
        memcmp(s->conns[i]->id, L->ids[idx], DDIO_ID_LEN)) {
        ddio_err_set(e, ESTALE, "ddio: %s: server %s holds a layout that does not "
                     "match the file's (stale or foreign copy); refusing to open",
                     path, s->conns[i]->name);
        return -1;
    }
    if (f->srv[idx].is_open) {
        ddio_err_set(e, EINVAL, "ddio: server %s is listed twice (as %s and %s)",
                     s->conns[i]->name, f->srv[idx].conn->addr, s->conns[i]->addr);
        return -1;
    }
    srv_set(&f->srv[idx], s->conns[i], s->res[i].handle);
    return 0;
}

/* every stripe of L must have been adopted */
static int check_complete(struct ddio_fh *f, open_set *s, const struct ddio_layout_rec *L,
                          const char *path, struct ddio_err *e)
{
    char hex[2 * DDIO_ID_LEN + 1];

    for (int j = 0; j < f->nsrv; j++) {
        for (int i = 0; i < s->n && !f->srv[j].is_open; i++)
            if (!memcmp(s->conns[i]->id, L->ids[j], DDIO_ID_LEN)) {
                ddio_err_set(e, EAGAIN, "ddio: %s: incomplete file: stripe %d is "
                             "missing on server %s (being created or deleted?)",
                             path, j, s->conns[i]->name);
                return -1;
            }
        if (!f->srv[j].is_open) {
            id_hex(L->ids[j], hex);
            ddio_err_set(e, ESTALE, "ddio: %s: stripe %d of %d lives on server id %s, "
                         "which is not in the configured server list", path, j, f->nsrv,
                         hex);
            return -1;
        }
    }
    return 0;
}

static int adopt_layout(struct ddio_fh *f, open_set *s, int first, const char *path,
                        struct ddio_err *e)
{
    const struct ddio_layout_rec *L = &s->res[first].layout;

    if (L->stripe_count == 0 || L->stripe_count > DDIO_MAX_SERVERS || L->stripe_unit == 0) {
        ddio_err_set(e, EPROTO, "ddio: %s: server %s returned an invalid layout",
                     path, s->conns[first]->name);
        return -1;
    }
    f->nsrv = (int) L->stripe_count;
    f->stripe.unit = L->stripe_unit;
    f->stripe.count = L->stripe_count;
    f->srv = calloc(f->nsrv, sizeof(*f->srv));
    if (!f->srv) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    for (int i = 0; i < s->n; i++)
        if (!s->calls[i].err.errnum && adopt_one(f, s, i, L, path, e))
            return -1;
    return check_complete(f, s, L, path, e);
}

/* forget the handles adopted so far (their closing is open_undo's job) */
static void drop_srv(struct ddio_fh *f)
{
    free(f->srv);
    f->srv = NULL;
    f->nsrv = 0;
}

/* ---- open existing / create ------------------------------------------------- */

/* 0: opened; -1 with e set (ENOENT when no server has it) */
static int open_existing(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                         uint32_t amode, const struct ddio_open_hooks *hooks,
                         struct ddio_err *e)
{
    open_set s = {.n = n,.conns = conns };
    struct ddio_local_ask ask;
    int first = -1, rc = 0;

    if (hooks)
        hooks->ask_begin(f, conns, n, amode, &ask);
    else
        memset(&ask, 0, sizeof(ask));
    if (!open_send(&s, path, amode, NULL, &ask, f->timeout_ms, f->recover_ms, e)) {
        for (int i = 0; i < n && !e->errnum; i++) {
            struct ddio_err *ei = &s.calls[i].err;
            if (!ei->errnum && first < 0)
                first = i;
            else if (ei->errnum && ei->errnum != ENOENT)
                *e = *ei;
        }
        if (!e->errnum && first < 0)
            ddio_err_set(e, ENOENT, "ddio: %s: no such file on any of the %d servers",
                         path, n);
        if (!e->errnum && adopt_layout(f, &s, first, path, e))
            drop_srv(f);
    }
    if (hooks)
        hooks->ask_end(f, conns, &ask);
    if (e->errnum) {
        open_undo(&s, path, f->timeout_ms);
        rc = -1;
    }
    open_set_free(&s);
    return rc;
}

/* create on the first cr->count servers of the list, O_EXCL */
static int create_new(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                      uint32_t amode, const struct ddio_create *cr, struct ddio_err *e)
{
    int count = cr->count > 0 && cr->count < n ? cr->count : n;
    open_set s = {.n = count,.conns = conns };
    struct ddio_layout_rec *L = calloc(1, sizeof(*L));
    int rc = 0;

    if (!L) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    L->stripe_unit = cr->unit ? cr->unit : DDIO_DFLT_UNIT;
    L->stripe_count = (uint32_t) count;
    for (int i = 0; i < count; i++)
        memcpy(L->ids[i], conns[i]->id, DDIO_ID_LEN);
    if (!open_send(&s, path, amode | DDIO_O_CREAT | DDIO_O_EXCL, L, NULL, f->timeout_ms,
                   f->recover_ms, e)) {
        for (int i = 0; i < count && !e->errnum; i++)
            if (s.calls[i].err.errnum)
                *e = s.calls[i].err;
        if (!e->errnum && adopt_layout(f, &s, 0, path, e))
            drop_srv(f);
    }
    if (e->errnum) {
        open_undo(&s, path, f->timeout_ms);
        rc = -1;
    }
    open_set_free(&s);
    free(L);
    return rc;
}

/* Another process may be creating (or deleting) the same file right now, as
 * every rank does with ROMIO's hidden shared-pointer file: a file found on
 * only some of its servers is retried until complete, within the deadline. */
static int open_settled(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                        uint32_t amode, const struct ddio_open_hooks *hooks,
                        struct ddio_err *e)
{
    int64_t deadline = ddio_now_ms() + f->timeout_ms;
    for (;;) {
        memset(e, 0, sizeof(*e));
        if (open_existing(f, conns, n, path, amode, hooks, e) == 0)
            return 0;
        if (e->errnum != EAGAIN || ddio_now_ms() > deadline)
            return -1;
        usleep(10000);
    }
}

/* The create goes first (stripe server 0's O_EXCL decides): a new file, the
 * common case of MPI_MODE_CREATE, costs no lookup; EEXIST there means the
 * file is there (or being made by another creator) and is opened instead,
 * unless MPI_MODE_EXCL asked for a new one. */
static int create_file(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                       uint32_t amode, const struct ddio_create *cr,
                       const struct ddio_open_hooks *hooks, struct ddio_err *e)
{
    int64_t deadline = ddio_now_ms() + f->timeout_ms;

    for (;;) {
        memset(e, 0, sizeof(*e));
        if (create_new(f, conns, n, path, amode, cr, e) == 0)
            return 0;
        if (e->errnum != EEXIST)
            return -1;
        if (cr->excl) {
            ddio_err_set(e, EEXIST, "ddio: %s: file exists (MPI_MODE_EXCL)", path);
            return -1;
        }
        if (open_settled(f, conns, n, path, amode, hooks, e) == 0)
            return 0;
        /* deleted between our create and our open: create again */
        if (e->errnum != ENOENT || ddio_now_ms() > deadline)
            return -1;
    }
}

int ddio_fh_open_servers(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                         uint32_t amode, const struct ddio_create *cr,
                         const struct ddio_open_hooks *hooks, struct ddio_err *e)
{
    return cr ? create_file(f, conns, n, path, amode, cr, hooks, e)
        : open_settled(f, conns, n, path, amode, hooks, e);
}

/* ---- opening again: another pool, or after a lost connection ------------------- */

static int srv_live(const struct ddio_srv *s)
{
    return s->is_open && s->conn->sock >= 0 && s->conn->gen == s->gen;
}

int ddio_srv_live(const struct ddio_srv *s)
{
    return srv_live(s);
}

/* the server at stripe index i must answer with the file's own layout */
static int same_layout(const struct ddio_fh *f, const struct ddio_open_r *r, int i,
                       const struct ddio_conn *c, struct ddio_err *e)
{
    const struct ddio_layout_rec *l = &r->layout;

    if (l->server_index != (uint32_t) i || l->stripe_count != (uint32_t) f->nsrv ||
        l->stripe_unit != f->stripe.unit || memcmp(l->ids[i], c->id, DDIO_ID_LEN)) {
        ddio_err_set(e, ESTALE, "ddio: %s: server %s answered with another layout "
                     "than at open (the file was replaced?)", f->path, c->name);
        return -1;
    }
    return 0;
}

int ddio_fh_open_again(struct ddio_fh *f, struct ddio_pool *pool, char (*addrs)[256],
                       const uint8_t (*ids)[DDIO_ID_LEN], struct ddio_err *e)
{
    open_set s = {.n = f->nsrv };

    f->srv = calloc(f->nsrv, sizeof(*f->srv));
    s.conns = calloc(f->nsrv, sizeof(*s.conns));
    if (!f->srv || !s.conns)
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
    for (int i = 0; i < f->nsrv && !e->errnum; i++)
        if (!ddio_pool_get_recover(pool, addrs[i], f->timeout_ms, f->recover_ms, &s.conns[i], e) &&
            memcmp(s.conns[i]->id, ids[i], DDIO_ID_LEN))
            ddio_err_set(e, ESTALE, "ddio: server %s has another identity than at "
                         "open (restarted with another storage root?)", addrs[i]);
    if (!e->errnum &&
        !open_send(&s, f->path, f->amode, NULL, NULL, f->timeout_ms, f->recover_ms, e)) {
        for (int i = 0; i < f->nsrv && !e->errnum; i++)
            if (s.calls[i].err.errnum)
                *e = s.calls[i].err;
            else if (!same_layout(f, &s.res[i], i, s.conns[i], e))
                srv_set(&f->srv[i], s.conns[i], s.res[i].handle);
    }
    if (e->errnum)
        open_undo(&s, f->path, f->timeout_ms);
    open_set_free(&s);
    free(s.conns);
    if (e->errnum) {
        free(f->srv);   /* (nsrv stays: the next request tries again) */
        f->srv = NULL;
        return -1;
    }
    return 0;
}

/* OPEN of f's path on c (c->mu held) into *r */
static int open_locked(const struct ddio_fh *f, struct ddio_conn *c, struct ddio_open_r *r,
                       struct ddio_err *e)
{
    struct ddio_wbuf w;
    uint8_t *p = NULL;
    size_t n = 0;
    int rc;

    open_msg(&w, c, f->path, f->amode, NULL, 0, 0, NULL);
    rc = ddio_conn_call_locked(c, DDIO_T_OPEN, &w, ddio_now_ms() + f->timeout_ms, &p, &n, e);
    ddio_wbuf_free(&w);
    if (!rc && ddio_dec_open_r(p, n, r)) {
        ddio_err_set(e, EPROTO, "ddio server %s: malformed OPEN reply", c->name);
        rc = -1;
    }
    free(p);
    return rc;
}

/* ---- byte-range locks ------------------------------------------------------------ */

/* a blocking lock may legitimately wait up to the timeout on the server;
 * the client waits a little longer to receive its ETIMEDOUT */
#define LOCK_REPLY_SLACK_MS 5000

/* one LOCK on server 0's handle (its connection's mutex held); flags:
 * DDIO_LK_RECLAIM for one held before a reconnect */
static int lock_locked(struct ddio_fh *f, uint32_t cmd, uint32_t type, uint64_t start,
                       uint64_t len, uint32_t flags, struct ddio_err *e)
{
    struct ddio_lock m = {.handle = f->srv[0].handle,.cmd = cmd,.type = type,.start = start,
        .len = len,.timeout_ms = (uint32_t) f->timeout_ms,.flags = flags,
        .client = ddio_client_id()
    };
    struct ddio_wbuf w;
    uint8_t *reply = NULL;
    size_t n;
    int rc;

    ddio_wbuf_init(&w);
    ddio_enc_lock(&w, &m);
    rc = ddio_conn_call_locked(f->srv[0].conn, DDIO_T_LOCK, &w,
                               ddio_now_ms() + f->timeout_ms + LOCK_REPLY_SLACK_MS, &reply, &n, e);
    ddio_wbuf_free(&w);
    free(reply);
    return rc;
}

/* the locks f held on a connection that was lost, taken again on the new
 * one as reclaims: the server grants only these during its lock grace after
 * a restart or the drop, so no other process takes a range in between */
static int relock_locked(struct ddio_fh *f, struct ddio_err *e)
{
    for (int k = 0; k < f->nlocks; k++)
        if (lock_locked(f, DDIO_LK_SETLKW, f->locks[k].type, f->locks[k].start,
                        f->locks[k].len, DDIO_LK_RECLAIM, e))
            return -1;
    return 0;
}

/* note a granted lock, or forget the ones an unlock released (ROMIO unlocks
 * the ranges it locked) */
static void lock_note(struct ddio_fh *f, uint32_t cmd, uint32_t type, uint64_t start,
                      uint64_t len)
{
    if (cmd == DDIO_LK_UNLCK) {
        int m = 0;
        for (int k = 0; k < f->nlocks; k++)
            if (f->locks[k].start < start || f->locks[k].start + f->locks[k].len > start + len)
                f->locks[m++] = f->locks[k];
        f->nlocks = m;
        return;
    }
    if (f->nlocks == f->caplocks) {
        int cap = f->caplocks ? 2 * f->caplocks : 4;
        struct ddio_lk *v = realloc(f->locks, cap * sizeof(*v));
        if (!v)
            return;     /* not taken again after a reconnect: as before */
        f->locks = v;
        f->caplocks = cap;
    }
    f->locks[f->nlocks++] = (struct ddio_lk) {.type = type,.start = start,.len = len };
}

int ddio_fh_lock(struct ddio_fh *f, uint32_t cmd, uint32_t type, uint64_t start, uint64_t len,
                 struct ddio_err *e)
{
    int64_t give_up = ddio_now_ms() + f->recover_ms;
    int rc;

    for (;;) {
        memset(e, 0, sizeof(*e));
        rc = !f->srv ? (ddio_err_set(e, EBADF, "ddio: file not open"), -1)
            : ddio_fh_ready(f, 0, e);
        if (!rc) {
            pthread_mutex_lock(&f->srv[0].conn->mu);
            rc = lock_locked(f, cmd, type, start, len, 0, e);
            pthread_mutex_unlock(&f->srv[0].conn->mu);
        }
        if (!rc || !f->recover_ms || !ddio_err_recoverable(e) || ddio_now_ms() >= give_up)
            break;
    }
    if (!rc)
        lock_note(f, cmd, type, start, len);
    return rc;
}

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
        rc = open_locked(f, c, r, e);
    if (!rc && same_layout(f, r, i, c, e))
        rc = -1;        /* the handle dies with the connection the server keeps */
    if (!rc) {
        s->handle = r->handle;
        s->gen = c->gen;
    }
    free(r);
    if (!rc && i == 0 && f->nlocks && relock_locked(f, e)) {
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

int ddio_fh_ready(struct ddio_fh *f, int i, struct ddio_err *e)
{
    struct ddio_srv *s = &f->srv[i];

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
    if (!enc(f, i, &k->req, arg) || ddio_fh_ready(f, i, &k->err))
        return;
    if (f->srv[i].handle != handle) {   /* renewed: the request names it */
        ddio_wbuf_free(&k->req);
        ddio_wbuf_init(&k->req);
        enc(f, i, &k->req, arg);
    }
    k->conn = f->srv[i].conn;
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
    while (again) {
        for (int i = 0; i < f->nsrv; i++)
            if (todo[i])
                fh_prepare(f, i, &calls[i], enc, arg);
            else
                calls[i].conn = NULL;   /* answered: not sent again */
        ddio_fanout(calls, f->nsrv, type, f->timeout_ms);
        again = 0;
        for (int i = 0; i < f->nsrv; i++) {
            /* not sent: ddio_fh_ready already tried to reconnect for the
             * whole recovery time */
            todo[i] = todo[i] && calls[i].sent && f->recover_ms &&
                ddio_err_recoverable(&calls[i].err) && ddio_now_ms() < give_up;
            again |= todo[i];
        }
    }
    for (int i = 0; i < f->nsrv && !rc; i++)
        if (calls[i].err.errnum) {
            *e = calls[i].err;
            rc = -1;
        }
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
    int rc = fh_fanout(f, DDIO_T_STAT, enc_handle, skip, &calls, e);

    for (int i = 0; !rc && i < f->nsrv; i++) {
        struct ddio_u64_r r;
        if (skip && skip[i])
            continue;
        if (ddio_dec_u64_r(calls[i].reply, calls[i].reply_len, &r)) {
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

static int enc_setsize(const struct ddio_fh *f, int i, struct ddio_wbuf *w, const void *arg)
{
    const struct size_arg *a = arg;
    struct ddio_setsize m = {.handle = f->srv[i].handle,
        .local_size = ddio_layout_local_size(&f->stripe, (uint32_t) i, a->size)
    };
    if (a->grow && m.local_size <= a->grow[i])
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
    struct ddio_prealloc m = {.handle = f->srv[i].handle,.local_off = 0,
        .local_len = ddio_layout_local_size(&f->stripe, (uint32_t) i, *(const uint64_t *) arg)
    };
    if (m.local_len == 0)
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
     * extension of each server's share (never a shrink) */
    if (!rc)
        rc = ddio_fh_local_sizes(f, NULL, local, e);
    if (!rc)
        rc = ddio_fh_set_local_sizes(f, size, local, e);
    free(local);
    return rc;
}

int ddio_fh_sync_servers(struct ddio_fh *f, struct ddio_err *e)
{
    return fh_fanout(f, DDIO_T_SYNC, enc_handle, NULL, NULL, e);
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

/* ---- close, delete ------------------------------------------------------------ */

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

int ddio_delete_servers(struct ddio_conn **conns, int n, const char *path, int timeout_ms,
                        int recover_ms, struct ddio_err *e)
{
    struct ddio_call *calls;
    calls = calloc(n ? n : 1, sizeof(*calls));
    /* ids: a resend's ENOENT is then a real one (the server answers a done
     * DELETE's resend from its table) */
    struct ddio_path_req m = {.path = (char *) path, .once_client = ddio_client_id(),
                              .once_call = ddio_call_id()};
    int found = 0;

    if (!calls) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        ddio_wbuf_init(&calls[i].req);
        ddio_enc_path_req(&calls[i].req, &m);
        calls[i].conn = conns[i];
    }
    ddio_fanout_recover(calls, n, DDIO_T_DELETE, timeout_ms, recover_ms);
    for (int i = 0; i < n && !e->errnum; i++) {
        if (!calls[i].err.errnum)
            found++;
        else if (calls[i].err.errnum != ENOENT)
            *e = calls[i].err;
    }
    if (!e->errnum && !found)
        ddio_err_set(e, ENOENT, "ddio: %s: no such file on any of the %d servers", path, n);
    ddio_calls_free(calls, n);
    return e->errnum ? -1 : 0;
}
