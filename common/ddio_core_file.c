/* A file by its path on its stripe servers (ddio_core_file.h): open, create,
 * open again (through another pool, or one server's handle after a lost
 * connection: ddio_core_handle.c renews with it), and delete. What is done
 * with the handles once open is ddio_core_handle.c's.
 *
 * A file lives on `count` servers with a layout stored on each of them. To
 * open an existing file we ask every configured server (only the stripe
 * servers have it, and we do not know the stripe count yet), then check the
 * stored layout against our connections. To create, we first look for an
 * existing file the same way (so a file created earlier with a different
 * striping is reused, not shadowed), then create with O_EXCL on each stripe
 * server, which makes EXCL exact across servers and racing processes. */
#include "ddio_core_file.h"
#include "ddio_net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- one OPEN to several servers -------------------------------------------- */

typedef struct open_set {
    int n;
    int mode_set;               /* a create's mode given (struct ddio_create) */
    uint32_t mode;
    struct ddio_conn **conns;
    struct ddio_call *calls;
    struct ddio_open_r *res;
} open_set;

/* A new file's mode: 0666 less this process's umask, read from
 * /proc/self/status (umask() would change it under the program's other
 * threads); 0644 when the kernel does not say */
static uint32_t create_mode(void)
{
    static uint32_t mode;
    static int known;              /* mode read (a race reads it twice, alike) */
    if (!__atomic_load_n(&known, __ATOMIC_ACQUIRE)) {
        char line[128];
        unsigned um = 022;
        FILE *fp = fopen("/proc/self/status", "r");
        while (fp && fgets(line, sizeof(line), fp))
            if (sscanf(line, "Umask: %o", &um) == 1)
                break;
        if (fp)
            fclose(fp);
        mode = 0666u & ~(um & 0777u);
        __atomic_store_n(&known, 1, __ATOMIC_RELEASE);
    }
    return mode;
}

/* OPEN of path on c into w: with proto (a create), stripe i of that layout,
 * and the create's ids (call non-zero: DDIO_O_ONCE), the same on every
 * stripe server and in every resend */
static void open_msg(struct ddio_wbuf *w, const struct ddio_conn *c, const char *path,
                     uint32_t amode, const struct ddio_layout_rec *proto, int i, uint64_t call,
                     const struct ddio_local_ask *ask, const open_set *s)
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
    if (amode & DDIO_O_CREAT) {
        m.amode |= DDIO_O_MODE;
        m.mode = s && s->mode_set ? s->mode & 07777 : create_mode();
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

/* A create goes to every stripe server at once: one round trip. Stripe
 * server 0's O_EXCL still decides who creates, so racing creators never
 * split a file: a creator refused there undoes what it made elsewhere
 * (its caller's open_undo), and the winner, refused by a server where a
 * loser's part still stands, asks that server again until the loser's
 * undo has run (or the deadline). */
static void create_settle(open_set *s, int timeout_ms, int recover_ms)
{
    int64_t deadline = ddio_now_ms() + timeout_ms;
    if (s->calls[0].err.errnum)
        return;
    for (int wait_us = 1000;; wait_us = wait_us < 64000 ? wait_us * 2 : wait_us) {
        int refused = 0;
        for (int i = 1; i < s->n; i++)
            refused |= s->calls[i].err.errnum == EEXIST;
        if (!refused || ddio_now_ms() > deadline)
            return;
        usleep((useconds_t) wait_us);
        for (int i = 1; i < s->n; i++) {
            struct ddio_call *k = &s->calls[i];
            if (k->err.errnum != EEXIST)
                continue;
            free(k->reply);
            k->reply = NULL;
            k->reply_len = 0;
            k->sent = 0;
            memset(&k->err, 0, sizeof(k->err));
            open_fan(s, i, i + 1, timeout_ms, recover_ms);
        }
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
        /* down and out of the membership: not asked (it would refuse);
         * gone (not back within the recovery time): not waited for again */
        s->calls[i].conn = s->conns[i]->member_out || s->conns[i]->gone ? NULL : s->conns[i];
        open_msg(&s->calls[i].req, s->conns[i], path, amode, proto, i, call, ask, s);
    }
    open_fan(s, 0, s->n, timeout_ms, recover_ms);
    for (int i = 0; i < s->n; i++)
        if (s->conns[i]->member_out)
            ddio_err_set(&s->calls[i].err, DDIO_E_OUT, "ddio server %s: down, and out of "
                         "the membership", s->conns[i]->name);
        else if (s->conns[i]->gone)
            s->calls[i].err = s->conns[i]->gone_err;
    if (proto && s->n > 1)
        create_settle(s, timeout_ms, recover_ms);
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
        a->copies == b->copies && a->ec.k == b->ec.k && a->ec.m == b->ec.m &&
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

    if (li->copies != L->copies || li->ec.k != L->ec.k || li->ec.m != L->ec.m) {
        ddio_err_set(e, ESTALE, "ddio: %s: server %s gives the file %u copies, another "
                     "server %u (created without romio_ddio_redundancy, under different "
                     "ddio-server --redundancy defaults?)", path, s->conns[i]->name,
                     li->copies, L->copies);
        return -1;
    }
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

/* may an open of a mirrored file go on without server i: it answered
 * that the membership has it out (the other servers then note what it
 * misses), or, for reading only, could not be reached within the
 * recovery time */
static int out_ok(uint32_t amode, const struct ddio_err *ei)
{
    return ei->errnum == DDIO_E_OUT
        || (ei->transport && !(amode & (DDIO_O_WRONLY | DDIO_O_RDWR)));
}

/* A mirrored file's server not reached within the recovery time: declared
 * out by a majority, as a write does (ddio_core_xprep.c), so every client
 * goes on without it and the others note what it misses */
static int declare_lost(struct ddio_fh *f, const struct ddio_conn *c, const struct ddio_err *ei)
{
    struct ddio_err de = {0};
    return ei->transport && f->declare_out && f->declare_out(f->declare_arg, c, &de) == 0;
}

/* An open of a mirrored file whose server i is out: opened without it
 * (DESIGN.md 6.1): its parts are read from copies, which hold the same
 * bytes (every write reaches every copy that is in), and written to them;
 * an erasure-coded file's likewise, its units decoded from the others and
 * its writes' parity and partial copies on them (6.4) */
static int open_without(struct ddio_fh *f, open_set *s, int i, int j)
{
    const struct ddio_err *ei = &s->calls[i].err;
    if (!ddio_fh_redundant(f))
        return 0;
    if (ei->errnum != DDIO_E_OUT && !declare_lost(f, s->conns[i], ei)
        && !out_ok(f->amode, ei))
        return 0;
    f->srv[j].conn = s->conns[i];
    f->srv[j].out = 1;
    return 1;
}

/* every stripe of L must have been adopted */
static int check_complete(struct ddio_fh *f, open_set *s, const struct ddio_layout_rec *L,
                          const char *path, struct ddio_err *e)
{
    char hex[2 * DDIO_ID_LEN + 1];

    for (int j = 0; j < f->nsrv; j++) {
        for (int i = 0; i < s->n && !f->srv[j].is_open && !f->srv[j].out; i++)
            if (!memcmp(s->conns[i]->id, L->ids[j], DDIO_ID_LEN) && !open_without(f, s, i, j)) {
                const struct ddio_err *ei = &s->calls[i].err;
                if (ei->errnum && ei->errnum != ENOENT)
                    *e = *ei;   /* the reason it is missing */
                else
                    ddio_err_set(e, EAGAIN, "ddio: %s: incomplete file: stripe %d is "
                                 "missing on server %s (being created or deleted?)",
                                 path, j, s->conns[i]->name);
                return -1;
            }
        if (!f->srv[j].is_open && !f->srv[j].out) {
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
    f->copies = L->copies ? L->copies : 1;
    f->ec = L->ec;
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
            else if (ei->errnum && ei->errnum != ENOENT && !out_ok(amode, ei)
                     && !ei->transport)
                *e = *ei;       /* (one out or lost: decided by the layout) */
        }
        /* no server that has the file answered: the first one's reason (a
         * server out says so for a file it does not have: no such file) */
        for (int i = 0; i < n && !e->errnum && first < 0; i++)
            if (s.calls[i].err.errnum && s.calls[i].err.errnum != ENOENT
                && s.calls[i].err.errnum != DDIO_E_OUT)
                *e = s.calls[i].err;
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
/* an ec:K+M file's stripe count is K+M: a striping_factor of another
 * count, or fewer servers, refused */
static int ec_count(const struct ddio_layout_rec *L, int asked, int n, const char *path,
                    int *count, struct ddio_err *e)
{
    int want = (int) (L->ec.k + L->ec.m);
    if ((asked > 0 && asked != want) || n < want) {
        ddio_err_set(e, EINVAL, "ddio: %s: ec:%u+%u needs %d servers, the file would have %d "
                     "(romio_ddio_redundancy; striping_factor, or the server list)", path,
                     L->ec.k, L->ec.m, want, asked > 0 && asked < n ? asked : n);
        return -1;
    }
    *count = want;
    return 0;
}

static int create_new(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                      uint32_t amode, const struct ddio_create *cr, struct ddio_err *e)
{
    int count = cr->count > 0 && cr->count < n ? cr->count : n;
    struct ddio_layout_rec *L = calloc(1, sizeof(*L));
    int rc = 0;

    if (!L) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    /* 0: no mode of its own, the servers' default (--redundancy) */
    uint32_t word = cr->copies > 0 ? (uint32_t) cr->copies : 0;
    L->copies = ddio_redundancy_copies(word);
    L->ec = (struct ddio_ec){ddio_redundancy_ec_k(word), ddio_redundancy_ec_m(word)};
    if (L->ec.k && ec_count(L, cr->count, n, path, &count, e)) {
        free(L);
        return -1;
    }
    open_set s = {.n = count, .conns = conns, .mode_set = cr->mode_set, .mode = cr->mode};
    if (L->copies > DDIO_MAX_COPIES || L->copies > (uint32_t) count) {
        ddio_err_set(e, EINVAL, "ddio: %s: %u copies need %u servers, the file would "
                     "have %d (romio_ddio_redundancy; striping_factor, or the server "
                     "list)", path, L->copies, L->copies, count);
        free(L);
        return -1;
    }
    L->stripe_unit = cr->unit ? cr->unit : DDIO_DFLT_UNIT;
    L->stripe_count = (uint32_t) count;
    for (int i = 0; i < count; i++)
        memcpy(L->ids[i], conns[i]->id, DDIO_ID_LEN);
    if (!open_send(&s, path, amode | DDIO_O_CREAT | DDIO_O_EXCL, L, NULL, f->timeout_ms,
                   f->recover_ms, e)) {
        int first = -1;
        /* a server out refused before it made anything: the file is made
         * on the others (which note it for it), if it is mirrored */
        for (int i = 0; i < count && !e->errnum; i++)
            if (!s.calls[i].err.errnum)
                first = first < 0 ? i : first;
            else if (s.calls[i].err.errnum != DDIO_E_OUT)
                *e = s.calls[i].err;
        if (!e->errnum && first < 0)
            *e = s.calls[0].err;
        if (!e->errnum && adopt_layout(f, &s, first, path, e))
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
 * only some of its servers is retried until complete, within the deadline.
 * So is a file fenced for a moment (EBUSY: a rebuild or a fold copying it,
 * ddio watch's among them): the open waits for the fence to be lifted. */
static int open_settled(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                        uint32_t amode, const struct ddio_open_hooks *hooks,
                        struct ddio_err *e)
{
    int64_t deadline = ddio_now_ms() + f->timeout_ms;
    for (;;) {
        memset(e, 0, sizeof(*e));
        if (open_existing(f, conns, n, path, amode, hooks, e) == 0)
            return 0;
        if ((e->errnum != EAGAIN && e->errnum != EBUSY) || ddio_now_ms() > deadline)
            return -1;
        usleep(e->errnum == EBUSY ? 50000 : 10000);
    }
}

/* a mirrored file's view of who is out: the lowest epoch its servers'
 * answers carried (an out server's refusal included), so that an open
 * that met an epoch change is refused and looks again at its first change */
static void view_at_open(struct ddio_fh *f)
{
    f->view_epoch = 0;
    for (int i = 0; i < f->nsrv && ddio_fh_redundant(f); i++) {
        uint32_t ep = f->srv[i].conn ? f->srv[i].conn->epoch : 0;
        if (ep && (!f->view_epoch || ep < f->view_epoch))
            f->view_epoch = ep;
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
        if (create_new(f, conns, n, path, amode, cr, e) == 0) {
            f->created = 1;
            return 0;
        }
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
    f->created = 0;
    int rc = cr ? create_file(f, conns, n, path, amode, cr, hooks, e)
        : open_settled(f, conns, n, path, amode, hooks, e);
    if (rc == 0)
        view_at_open(f);
    return rc;
}

/* ---- opening again: another pool, or after a lost connection ------------------- */

/* the server at stripe index i must answer with the file's own layout */
static int same_layout(const struct ddio_fh *f, const struct ddio_open_r *r, int i,
                       const struct ddio_conn *c, struct ddio_err *e)
{
    const struct ddio_layout_rec *l = &r->layout;

    if (l->server_index != (uint32_t) i || l->stripe_count != (uint32_t) f->nsrv ||
        l->stripe_unit != f->stripe.unit || l->copies != f->copies || l->ec.k != f->ec.k ||
        memcmp(l->ids[i], c->id, DDIO_ID_LEN)) {
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
    view_at_open(f);
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

    open_msg(&w, c, f->path, f->amode, NULL, 0, 0, NULL, NULL);
    rc = ddio_conn_call_locked(c, DDIO_T_OPEN, &w, ddio_now_ms() + f->timeout_ms, &p, &n, e);
    ddio_wbuf_free(&w);
    if (!rc && ddio_dec_open_r(p, n, r)) {
        ddio_err_set(e, EPROTO, "ddio server %s: malformed OPEN reply", c->name);
        rc = -1;
    }
    free(p);
    return rc;
}

int ddio_fh_reopen_locked(const struct ddio_fh *f, int i, struct ddio_conn *c,
                          struct ddio_open_r *r, struct ddio_err *e)
{
    if (open_locked(f, c, r, e))
        return -1;
    if (same_layout(f, r, i, c, e))
        return -1;      /* the handle dies with the connection the server keeps */
    return 0;
}

/* ---- delete ---------------------------------------------------------------------- */

int ddio_delete_servers(struct ddio_conn **conns, int n, const char *path, int timeout_ms,
                        int recover_ms, struct ddio_err *e)
{
    /* one unreachable and not out: nothing deleted anywhere (it would keep
     * its copy, noted by no one) */
    for (int i = 0; i < n; i++)
        if (conns[i]->gone) {
            *e = conns[i]->gone_err;
            return -1;
        }
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
        /* down and out: not asked (the others note it for its resync) */
        calls[i].conn = conns[i]->member_out ? NULL : conns[i];
    }
    ddio_fanout_recover(calls, n, DDIO_T_DELETE, timeout_ms, recover_ms);
    for (int i = 0; i < n && !e->errnum; i++) {
        if (!calls[i].conn)
            continue;
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
