/* Open and OpenColl.
 *
 * A file lives on `count` servers with a layout stored on each of them. To
 * open an existing file we ask every configured server (only the stripe
 * servers have it, and we do not know the stripe count yet), then check the
 * stored layout against our connections. To create, we first look for an
 * existing file the same way (so a file created earlier with a different
 * striping is reused, not shadowed), then create with O_EXCL on each stripe
 * server, which makes EXCL exact across servers and racing jobs.
 *
 * OpenColl: rank 0 alone creates (and keeps its handles), broadcasts the
 * outcome, the server message and a random collective group id; then every
 * other rank opens the existing file. */
#include "ad_ddio.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/random.h>

ADIOI_DDIO_File *ADIOI_DDIO_File_get(ADIO_File fd)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    if (!f) {
        f = ADIOI_Calloc(1, sizeof(*f));
        f->collective = ADIOI_DDIO_COLL_DDIO;
        f->presort = ADIOI_HINT_ENABLE;
        f->check_desc = ADIOI_HINT_DISABLE;
        f->type_desc = ADIOI_HINT_ENABLE;
        f->transport = -1;
        fd->fs_ptr = f;
    }
    return f;
}

void ADIOI_DDIO_File_free(ADIO_File fd)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    if (!f)
        return;
    ADIOI_DDIO_View_free(&f->view);
    free(f->srv);
    free(f->servers_hint);
    free(f->mount_servers);
    free(f->secret_hint);
    ADIOI_Free(f);
    fd->fs_ptr = NULL;
}

/* "ddio:/a/b" and "/a/b" -> "a/b": relative to every server's storage root */
const char *ADIOI_DDIO_Server_path(const char *filename)
{
    if (!strncmp(filename, "ddio:", 5))
        filename += 5;
    while (*filename == '/')
        filename++;
    return filename;
}

static uint32_t ddio_amode(int access_mode)
{
    /* write-only opens ask for read access too: ROMIO's two-phase write
     * reads the holes of a collective buffer before writing it back */
    if (access_mode & (ADIO_WRONLY | ADIO_RDWR))
        return DDIO_O_RDWR;
    return DDIO_O_RDONLY;
}

/* ---- one OPEN to several servers -------------------------------------------- */

typedef struct open_set {
    int n;
    ADIOI_DDIO_Conn **conns;
    ADIOI_DDIO_Call *calls;
    struct ddio_open_r *res;
} open_set;

static void open_send(open_set * s, const char *path, uint32_t amode,
                      const struct ddio_layout_rec *proto, int timeout_ms)
{
    s->calls = calloc(s->n, sizeof(*s->calls));
    s->res = calloc(s->n, sizeof(*s->res));
    for (int i = 0; i < s->n; i++) {
        struct ddio_open m;
        memset(&m, 0, sizeof(m));
        m.path = (char *) path;
        m.amode = amode;
        if (proto) {
            m.layout = *proto;
            m.layout.server_index = i;
        } else {
            /* unused without CREAT, but the decoder insists on a valid one */
            m.layout.stripe_unit = ADIOI_DDIO_DFLT_UNIT;
            m.layout.stripe_count = 1;
            memcpy(m.layout.ids[0], s->conns[i]->id, DDIO_ID_LEN);
        }
        m.layout.ndisks = s->conns[i]->ndisks;
        m.layout.block_size = s->conns[i]->block_size;
        s->calls[i].conn = s->conns[i];
        ddio_wbuf_init(&s->calls[i].req);
        ddio_enc_open(&s->calls[i].req, &m);
    }
    if (proto && s->n > 1) {
        /* stripe server 0 decides who creates: only its O_EXCL winner goes
         * on to the others, so racing creators never split a file */
        ADIOI_DDIO_Fanout(s->calls, 1, DDIO_T_OPEN, timeout_ms);
        if (s->calls[0].err.errnum)
            for (int i = 1; i < s->n; i++)
                s->calls[i].conn = NULL;        /* not sent: no error of its own */
        ADIOI_DDIO_Fanout(s->calls + 1, s->n - 1, DDIO_T_OPEN, timeout_ms);
    } else
        ADIOI_DDIO_Fanout(s->calls, s->n, DDIO_T_OPEN, timeout_ms);
    for (int i = 0; i < s->n; i++) {
        if (!s->calls[i].conn) {
            ADIOI_DDIO_Err_set(&s->calls[i].err, ECANCELED, "not sent");
            continue;
        }
        ADIOI_DDIO_Call *k = &s->calls[i];
        if (!k->err.errnum && ddio_dec_open_r(k->reply, k->reply_len, &s->res[i]))
            ADIOI_DDIO_Err_set(&k->err, EPROTO, "ddio server %s: malformed OPEN reply",
                               k->conn->name);
    }
}

static void close_one(ADIOI_DDIO_Conn * c, uint64_t handle, int timeout_ms)
{
    ADIOI_DDIO_Call k;
    struct ddio_handle_req m = {.handle = handle };
    memset(&k, 0, sizeof(k));
    k.conn = c;
    ddio_wbuf_init(&k.req);
    ddio_enc_handle_req(&k.req, &m);
    ADIOI_DDIO_Fanout(&k, 1, DDIO_T_CLOSE, timeout_ms);
    ddio_wbuf_free(&k.req);
    free(k.reply);
}

/* close what this set opened (after a failure); delete what it created */
static void open_undo(open_set * s, const char *path, int timeout_ms)
{
    for (int i = 0; i < s->n; i++) {
        if (s->calls[i].err.errnum)
            continue;
        close_one(s->conns[i], s->res[i].handle, timeout_ms);
        if (s->res[i].created) {
            ADIOI_DDIO_Call k;
            struct ddio_path_req m = {.path = (char *) path };
            memset(&k, 0, sizeof(k));
            k.conn = s->conns[i];
            ddio_wbuf_init(&k.req);
            ddio_enc_path_req(&k.req, &m);
            ADIOI_DDIO_Fanout(&k, 1, DDIO_T_DELETE, timeout_ms);
            ddio_wbuf_free(&k.req);
            free(k.reply);
        }
    }
}

static void open_set_free(open_set * s)
{
    ADIOI_DDIO_Calls_free(s->calls, s->n);
    free(s->res);
    s->calls = NULL;
    s->res = NULL;
}

/* ---- layout checks ------------------------------------------------------------ */

static void id_hex(const uint8_t * id, char *out)
{
    for (unsigned i = 0; i < DDIO_ID_LEN; i++)
        sprintf(out + 2 * i, "%02x", id[i]);
}

static int layout_same(const struct ddio_layout_rec *a, const struct ddio_layout_rec *b)
{
    return a->stripe_unit == b->stripe_unit && a->stripe_count == b->stripe_count &&
        !memcmp(a->ids, b->ids, (size_t) a->stripe_count * DDIO_ID_LEN);
}

/* place reply i at its stripe index, checking it against the first layout */
static int adopt_one(ADIOI_DDIO_File * f, open_set * s, int i,
                     const struct ddio_layout_rec *L, const char *path, ADIOI_DDIO_Err * e)
{
    const struct ddio_layout_rec *li = &s->res[i].layout;
    uint32_t idx = li->server_index;

    if (!layout_same(li, L) || idx >= L->stripe_count ||
        memcmp(s->conns[i]->id, L->ids[idx], DDIO_ID_LEN)) {
        ADIOI_DDIO_Err_set(e, ESTALE, "ddio: %s: server %s holds a layout that does not "
                           "match the file's (stale or foreign copy); refusing to open",
                           path, s->conns[i]->name);
        return -1;
    }
    if (f->srv[idx].is_open) {
        ADIOI_DDIO_Err_set(e, EINVAL, "ddio: server %s is listed twice (as %s and %s)",
                           s->conns[i]->name, f->srv[idx].conn->addr, s->conns[i]->addr);
        return -1;
    }
    f->srv[idx].conn = s->conns[i];
    f->srv[idx].gen = s->conns[i]->gen;
    f->srv[idx].handle = s->res[i].handle;
    f->srv[idx].is_open = 1;
    return 0;
}

static int adopt_layout(ADIOI_DDIO_File * f, open_set * s, int first, const char *path,
                        ADIOI_DDIO_Err * e)
{
    const struct ddio_layout_rec *L = &s->res[first].layout;
    char hex[2 * DDIO_ID_LEN + 1];

    if (L->stripe_count == 0 || L->stripe_count > DDIO_MAX_SERVERS || L->stripe_unit == 0) {
        ADIOI_DDIO_Err_set(e, EPROTO, "ddio: %s: server %s returned an invalid layout",
                           path, s->conns[first]->name);
        return -1;
    }
    f->nsrv = (int) L->stripe_count;
    f->stripe.unit = L->stripe_unit;
    f->stripe.count = L->stripe_count;
    f->srv = calloc(f->nsrv, sizeof(*f->srv));
    for (int i = 0; i < s->n; i++)
        if (!s->calls[i].err.errnum && adopt_one(f, s, i, L, path, e))
            return -1;
    for (int j = 0; j < f->nsrv; j++) {
        for (int i = 0; i < s->n && !f->srv[j].is_open; i++)
            if (!memcmp(s->conns[i]->id, L->ids[j], DDIO_ID_LEN)) {
                ADIOI_DDIO_Err_set(e, EAGAIN, "ddio: %s: incomplete file: stripe %d is "
                                   "missing on server %s (being created or deleted?)",
                                   path, j, s->conns[i]->name);
                return -1;
            }
        if (!f->srv[j].is_open) {
            id_hex(L->ids[j], hex);
            ADIOI_DDIO_Err_set(e, ESTALE, "ddio: %s: stripe %d of %d lives on server id %s, "
                               "which is not in the configured server list", path, j,
                               f->nsrv, hex);
            return -1;
        }
    }
    return 0;
}

/* forget the handles adopted so far (their closing is open_undo's job) */
static void drop_srv(ADIOI_DDIO_File * f)
{
    free(f->srv);
    f->srv = NULL;
    f->nsrv = 0;
}

/* ---- open existing / create ------------------------------------------------- */

/* 0: opened; -1 with e set (ENOENT when no server has it) */
static int open_existing(ADIOI_DDIO_File * f, ADIOI_DDIO_Conn ** conns, int n,
                         const char *path, uint32_t amode, ADIOI_DDIO_Err * e)
{
    open_set s = {.n = n,.conns = conns };
    int first = -1, rc = 0;

    open_send(&s, path, amode, NULL, f->timeout_ms);
    for (int i = 0; i < n && !e->errnum; i++) {
        ADIOI_DDIO_Err *ei = &s.calls[i].err;
        if (!ei->errnum && first < 0)
            first = i;
        else if (ei->errnum && ei->errnum != ENOENT)
            *e = *ei;
    }
    if (!e->errnum && first < 0)
        ADIOI_DDIO_Err_set(e, ENOENT, "ddio: %s: no such file on any of the %d servers",
                           path, n);
    if (!e->errnum && adopt_layout(f, &s, first, path, e))
        drop_srv(f);
    if (e->errnum) {
        open_undo(&s, path, f->timeout_ms);
        rc = -1;
    }
    open_set_free(&s);
    return rc;
}

static void layout_proto(ADIO_File fd, ADIOI_DDIO_File * f, ADIOI_DDIO_Conn ** conns,
                         int count, struct ddio_layout_rec *L)
{
    long long cunit;
    int cfactor;

    ADIOI_DDIO_Config_striping(&cunit, &cfactor);
    memset(L, 0, sizeof(*L));
    /* the striping_unit hint, else DDIO_CONFIG's striping_unit, else 1 MiB */
    L->stripe_unit = fd->hints->striping_unit > 0 ? (uint64_t) fd->hints->striping_unit
        : cunit > 0 ? (uint64_t) cunit : ADIOI_DDIO_DFLT_UNIT;
    L->stripe_count = (uint32_t) count;
    for (int i = 0; i < count; i++)
        memcpy(L->ids[i], conns[i]->id, DDIO_ID_LEN);
    (void) f;
}

/* create on the first `striping_factor` servers of the list, O_EXCL */
static int create_new(ADIO_File fd, ADIOI_DDIO_File * f, ADIOI_DDIO_Conn ** conns, int n,
                      const char *path, uint32_t amode, ADIOI_DDIO_Err * e)
{
    long long cunit;
    int cfactor, want;

    /* the striping_factor hint, else DDIO_CONFIG's striping_factor, else all */
    ADIOI_DDIO_Config_striping(&cunit, &cfactor);
    want = f->striping_factor > 0 ? f->striping_factor
        : f->striping_factor_given ? 0 : cfactor;
    int count = want > 0 && want < n ? want : n;
    open_set s = {.n = count,.conns = conns };
    struct ddio_layout_rec *L = malloc(sizeof(*L));
    int rc = 0;

    layout_proto(fd, f, conns, count, L);
    open_send(&s, path, amode | DDIO_O_CREAT | DDIO_O_EXCL, L, f->timeout_ms);
    for (int i = 0; i < count && !e->errnum; i++)
        if (s.calls[i].err.errnum)
            *e = s.calls[i].err;
    if (!e->errnum && adopt_layout(f, &s, 0, path, e))
        drop_srv(f);
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
static int open_settled(ADIOI_DDIO_File * f, ADIOI_DDIO_Conn ** conns, int n,
                        const char *path, uint32_t amode, ADIOI_DDIO_Err * e)
{
    int64_t deadline = ddio_now_ms() + f->timeout_ms;
    for (;;) {
        memset(e, 0, sizeof(*e));
        if (open_existing(f, conns, n, path, amode, e) == 0)
            return 0;
        if (e->errnum != EAGAIN || ddio_now_ms() > deadline)
            return -1;
        usleep(10000);
    }
}

static int create_file(ADIO_File fd, ADIOI_DDIO_File * f, ADIOI_DDIO_Conn ** conns, int n,
                       const char *path, uint32_t amode, ADIOI_DDIO_Err * e)
{
    int excl = fd->access_mode & ADIO_EXCL;
    int64_t deadline = ddio_now_ms() + f->timeout_ms;

    for (;;) {
        if (open_settled(f, conns, n, path, amode, e) == 0) {
            if (!excl)
                return 0;
            ADIOI_DDIO_Close_handles(f);
            ADIOI_DDIO_Err_set(e, EEXIST, "ddio: %s: file exists (MPI_MODE_EXCL)", path);
            return -1;
        }
        if (e->errnum != ENOENT)
            return -1;
        memset(e, 0, sizeof(*e));
        if (create_new(fd, f, conns, n, path, amode, e) == 0)
            return 0;
        /* someone else created it between our look and our create */
        if (e->errnum != EEXIST || excl || ddio_now_ms() > deadline)
            return -1;
    }
}

/* ---- the progress thread's handles ------------------------------------------------ */

/* the stripe server at index i must answer with the file's own layout */
static int shadow_check(const ADIOI_DDIO_File * sh, const open_set * s, int i,
                        const char *path, ADIOI_DDIO_Err * e)
{
    const struct ddio_layout_rec *l = &s->res[i].layout;

    if (l->server_index != (uint32_t) i || l->stripe_count != (uint32_t) sh->nsrv ||
        l->stripe_unit != sh->stripe.unit) {
        ADIOI_DDIO_Err_set(e, ESTALE, "ddio: %s: server %s answered with another layout "
                           "than at open (the file was replaced?)", path, s->conns[i]->name);
        return -1;
    }
    return 0;
}

int ADIOI_DDIO_Open_shadow(ADIOI_DDIO_File * sh, const ADIOI_DDIO_Conn * conns,
                           const char *path, int access_mode, ADIOI_DDIO_Err * e)
{
    open_set s = {.n = sh->nsrv };
    int rc = 0;

    sh->srv = calloc(sh->nsrv, sizeof(*sh->srv));
    s.conns = calloc(sh->nsrv, sizeof(*s.conns));
    if (!sh->srv || !s.conns) {
        ADIOI_DDIO_Err_set(e, ENOMEM, "ddio: out of memory");
        free(s.conns);
        return -1;
    }
    for (int i = 0; i < sh->nsrv && !e->errnum; i++)
        if (!ADIOI_DDIO_Conn_get_pool(ADIOI_DDIO_POOL_ASYNC, conns[i].addr, sh->timeout_ms,
                                      &s.conns[i], e) &&
            memcmp(s.conns[i]->id, conns[i].id, DDIO_ID_LEN))
            ADIOI_DDIO_Err_set(e, ESTALE, "ddio: server %s has another identity than at "
                               "open (restarted with another storage root?)", conns[i].addr);
    if (!e->errnum) {
        open_send(&s, path, ddio_amode(access_mode), NULL, sh->timeout_ms);
        for (int i = 0; i < sh->nsrv && !e->errnum; i++)
            if (s.calls[i].err.errnum)
                *e = s.calls[i].err;
            else if (!shadow_check(sh, &s, i, path, e)) {
                sh->srv[i].conn = s.conns[i];
                sh->srv[i].gen = s.conns[i]->gen;
                sh->srv[i].handle = s.res[i].handle;
                sh->srv[i].is_open = 1;
            }
        if (e->errnum)
            open_undo(&s, path, sh->timeout_ms);
        open_set_free(&s);
    }
    if (e->errnum) {
        free(sh->srv);  /* (nsrv stays: the next request tries again) */
        sh->srv = NULL;
        rc = -1;
    }
    free(s.conns);
    return rc;
}

/* ---- Open --------------------------------------------------------------------- */

static int connect_all(ADIOI_DDIO_File * f, ADIOI_DDIO_Conn *** conns, int *n,
                       ADIOI_DDIO_Err * e)
{
    char **list = NULL;

    *conns = NULL;
    ADIOI_DDIO_Secret_hint(f->secret_hint);
    if (ADIOI_DDIO_Server_list(ADIOI_DDIO_Servers_spec(f->servers_hint, f->mount_servers),
                               &list, n, e))
        return -1;
    *conns = calloc(*n, sizeof(**conns));
    for (int i = 0; i < *n && !e->errnum; i++)
        ADIOI_DDIO_Conn_get(list[i], f->timeout_ms, &(*conns)[i], e);
    ADIOI_DDIO_Free_list(list, *n);
    return e->errnum ? -1 : 0;
}

static void publish_layout(ADIO_File fd, ADIOI_DDIO_File * f)
{
    char value[64];

    fd->blksize = (long) f->stripe.unit;
    fd->hints->striping_unit = (int) f->stripe.unit;
    fd->hints->striping_factor = f->nsrv;
    snprintf(value, sizeof(value), "%llu", (unsigned long long) f->stripe.unit);
    ADIOI_Info_set(fd->info, "striping_unit", value);
    /* a non-positive striping_factor hint was ignored ("use all servers");
     * ROMIO's helper already echoed it into the info and its file_info test
     * expects to read it back, so only a real request or none is replaced by
     * the stripe count actually used */
    if (f->striping_factor > 0 || !f->striping_factor_given) {
        snprintf(value, sizeof(value), "%d", f->nsrv);
        ADIOI_Info_set(fd->info, "striping_factor", value);
    }
}

/* The transport in force: the hint, else DDIO_TRANSPORT, else auto (which
 * ddio_xport_resolve settled per connection). With ucx, every server must
 * have taken our UCX address. */
static int settle_transport(ADIO_File fd, ADIOI_DDIO_File * f, ADIOI_DDIO_Conn ** conns, int n,
                            ADIOI_DDIO_Err * e)
{
    int t = f->transport, all = n > 0;    /* all: every server by UCX */
    if (t < 0 && (t = ddio_xport_env(e->msg, sizeof(e->msg))) < 0) {
        e->errnum = EINVAL;
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (t == DDIO_XPORT_UCX && !conns[i]->ucx) {
            ADIOI_DDIO_Err_set(e, EPROTONOSUPPORT, "ddio: romio_ddio_transport / "
                               "DDIO_TRANSPORT = ucx, but server %s: %s", conns[i]->name,
                               conns[i]->ucx_why[0] ? conns[i]->ucx_why : "no UCX endpoint");
            return -1;
        }
        all &= conns[i]->ucx != NULL;
    }
    /* auto: each connection attached to UCX where it found a one-copy path */
    f->xport = t == DDIO_XPORT_TCP ? DDIO_XPORT_TCP : DDIO_XPORT_UCX;
    ADIOI_Info_set(fd->info, "ddio_transport_in_use",
                   f->xport == DDIO_XPORT_UCX && all ? "ucx" : "tcp");
    return 0;
}

static int open_file(ADIO_File fd, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_File *f = ADIOI_DDIO_File_get(fd);
    uint32_t amode = ddio_amode(fd->access_mode);
    ADIOI_DDIO_Conn **conns = NULL;
    int n = 0, rc;
    char path[PATH_MAX], servers[ADIOI_DDIO_SERVERS_LEN];

    fd->fd_sys = -1;    /* no generic POSIX path may touch fd 0 */
    fd->fd_direct = -1;
    f->timeout_ms = ADIOI_DDIO_Timeout_ms(f->timeout_s);
    ADIOI_DDIO_Target(fd->filename, path, sizeof(path), servers, sizeof(servers));
    free(f->mount_servers);
    f->mount_servers = *servers ? strdup(servers) : NULL;
    rc = connect_all(f, &conns, &n, e);
    if (!rc)
        rc = settle_transport(fd, f, conns, n, e);
    if (!rc && (fd->access_mode & ADIO_CREATE))
        rc = create_file(fd, f, conns, n, path, amode, e);
    else if (!rc)
        rc = open_settled(f, conns, n, path, amode, e);
    free(conns);
    if (!rc && (fd->access_mode & ADIO_APPEND)) {
        uint64_t size;
        rc = ADIOI_DDIO_File_size(f, NULL, NULL, &size, e);
        fd->fp_ind = fd->fp_sys_posn = (ADIO_Offset) size;
    }
    if (!rc)
        publish_layout(fd, f);
    else if (f->srv)
        ADIOI_DDIO_Close_handles(f);
    return rc;
}

void ADIOI_DDIO_Open(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_OPEN";
    ADIOI_DDIO_Err e;

    memset(&e, 0, sizeof(e));
    open_file(fd, &e);
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}

/* ---- OpenColl ----------------------------------------------------------------- */

static uint64_t random_group(void)
{
    uint64_t g = 0;
    if (getrandom(&g, sizeof(g), 0) != (ssize_t) sizeof(g))
        g = ((uint64_t) time(NULL) << 32) ^ ((uint64_t) getpid() << 12) ^ (uint64_t) clock();
    return g ? g : 1;   /* 0 means "no group" on the wire */
}

typedef struct open_bcast {
    int32_t errnum;
    int32_t pad;
    uint64_t group;
    char msg[ADIOI_DDIO_MSG_LEN];
} open_bcast;

void ADIOI_DDIO_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_OPENCOLL";
    ADIOI_DDIO_Err e;
    open_bcast b;

    memset(&e, 0, sizeof(e));
    memset(&b, 0, sizeof(b));
    fd->access_mode = access_mode;
    if (rank == 0) {
        b.group = random_group();
        /* only rank 0 creates: EXCL then means "this collective open created it" */
        if ((access_mode & ADIO_CREATE) && open_file(fd, &e)) {
            b.errnum = e.errnum;
            snprintf(b.msg, sizeof(b.msg), "%s", e.msg);
        }
    }
    MPI_Bcast(&b, sizeof(b), MPI_BYTE, 0, fd->comm);
    if (b.errnum && rank != 0)
        ADIOI_DDIO_Err_set(&e, b.errnum, "%s", b.msg);
    else if (!b.errnum && (rank != 0 || !(access_mode & ADIO_CREATE))) {
        fd->access_mode = access_mode & ~(ADIO_CREATE | ADIO_EXCL);
        open_file(fd, &e);
    }
    fd->access_mode = access_mode;
    ADIOI_DDIO_File_get(fd)->group = b.group;
    fd->is_open = 1;
    fd->dirty_write = 0;
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
    if (e.errnum)       /* ADIO_Open calls Close only on ranks that succeeded */
        ADIOI_DDIO_File_free(fd);
}
