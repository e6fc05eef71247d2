/* ddio client library (see ddio_client.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE      /* qsort_r */
#endif
#include "ddio_client.h"
#include "ddio_auth.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ddio_desc.h"
#include "ddio_net.h"
#include "ddio_proto.h"
#include "ddio_ucx.h"
#include "ddio_xport.h"

#define CL_DFLT_UNIT   (1u << 20)
#define CL_PAGE        1024u      /* READDIR entries per request */
/* UCX 1.13's wake-up fd can miss a shared-memory event (the driver's
 * XFER_UCX_SLICE_MS), so a wait with UCX in use polls in slices this long */
#define CL_UCX_SLICE_MS 1

struct cconn {
    pthread_mutex_t mu;          /* one request at a time on the socket */
    char addr[256];
    char name[256];              /* the server's own name, for messages */
    int sock;                    /* -1: not connected */
    unsigned gen;                /* bumped at every connect */
    uint64_t next_req;
    uint8_t id[DDIO_ID_LEN];
    struct ddio_ucx_ep *ucx;     /* XFER data by UCX (ddio_ucx_attach_conn), or NULL */
    uint64_t ucx_cookie;
    char ucx_why[200];           /* why not UCX */
};

struct ddio_client {
    int n;
    struct cconn *c;
    int timeout_ms;
    uint64_t unit;
    char *servers;
    struct ddio_secret *secret;  /* NULL: none named */
    int xport;                   /* DDIO_TRANSPORT */
};

struct ddio_cfile {
    struct ddio_client *cl;
    char *path;
    struct ddio_stripe stripe;
    int nsrv;
    int *ci;                     /* stripe server i = connection ci[i] */
    uint64_t *handle;
    unsigned *gen;               /* connection generation at open */
};

static void say(char *msg, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *msg, size_t n, const char *fmt, ...)
{
    va_list ap;
    if (!msg || !n)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
}

/* ---- connections ------------------------------------------------------------ */

/* the secret named by secret_file / the environment / the config, if any */
static int load_secret(struct ddio_client *cl, const char *secret_file, char *msg, size_t msglen)
{
    char path[4096], err[512];
    if (!ddio_secret_path(secret_file, path, sizeof(path)))
        return 0;
    cl->secret = malloc(sizeof(*cl->secret));
    if (!cl->secret)
        return say(msg, msglen, "out of memory"), -1;
    if (ddio_secret_load(path, cl->secret, err, sizeof(err))) {
        say(msg, msglen, "%s", err);
        return -1;
    }
    return 0;
}

struct ddio_client *ddio_client_new(const char *servers, int timeout_ms, uint64_t unit,
                                    const char *secret_file, char *msg, size_t msglen)
{
    struct ddio_client *cl = calloc(1, sizeof(*cl));
    char *list = servers ? strdup(servers) : NULL, *save = NULL, host[256];
    int port;

    if (!cl || !list || !*list) {
        say(msg, msglen, "no servers given (host:port,...)");
        goto fail;
    }
    cl->servers = strdup(servers);
    cl->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
    cl->unit = unit ? unit : CL_DFLT_UNIT;
    if ((cl->xport = ddio_xport_env(msg, msglen)) < 0)
        goto fail;
    for (char *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        if (ddio_parse_hostport(s, host, sizeof(host), &port) || strlen(s) >= 256 ||
            cl->n >= (int)DDIO_MAX_SERVERS) {
            say(msg, msglen, "bad server '%s' in '%s' (expected host:port, at most %u)", s,
                servers, DDIO_MAX_SERVERS);
            goto fail;
        }
        struct cconn *nc = realloc(cl->c, sizeof(*nc) * (size_t)(cl->n + 1));
        if (!nc)
            goto fail;
        cl->c = nc;
        memset(&nc[cl->n], 0, sizeof(*nc));
        pthread_mutex_init(&nc[cl->n].mu, NULL);
        snprintf(nc[cl->n].addr, sizeof(nc[cl->n].addr), "%s", s);
        snprintf(nc[cl->n].name, sizeof(nc[cl->n].name), "%s", s);
        nc[cl->n].sock = -1;
        cl->n++;
    }
    if (!cl->servers || cl->n == 0) {
        say(msg, msglen, "no servers given (host:port,...)");
        goto fail;
    }
    if (load_secret(cl, secret_file, msg, msglen))
        goto fail;
    free(list);
    return cl;
fail:
    free(list);
    ddio_client_free(cl);
    return NULL;
}

static void conn_drop(struct cconn *c);

void ddio_client_free(struct ddio_client *cl)
{
    if (!cl)
        return;
    for (int i = 0; i < cl->n; i++) {
        conn_drop(&cl->c[i]);     /* its UCX endpoint too */
        pthread_mutex_destroy(&cl->c[i].mu);
    }
    free(cl->c);
    free(cl->servers);
    if (cl->secret) {
        ddio_secret_clear(cl->secret);
        free(cl->secret);
    }
    free(cl);
}

const char *ddio_client_servers(const struct ddio_client *cl)
{
    return cl->servers;
}

int ddio_client_nservers(const struct ddio_client *cl)
{
    return cl->n;
}

const char *ddio_client_server_addr(const struct ddio_client *cl, int i)
{
    return i >= 0 && i < cl->n ? cl->c[i].addr : NULL;
}

static void conn_drop(struct cconn *c)
{
    ddio_ucx_disconnect(c->ucx);  /* the server drops its side with the socket */
    c->ucx = NULL;
    if (c->sock >= 0)
        close(c->sock);
    c->sock = -1;
}

/* Receive the reply to (type, req): payload malloc'd into *p. Returns 0 with
 * *status set, or -errno for a transport failure. */
static int recv_reply(struct cconn *c, uint16_t type, uint64_t req, int64_t dl,
                      int32_t *status, uint8_t **p, size_t *n)
{
    struct ddio_hdr h;
    int rc = ddio_recv_hdr(c->sock, &h, dl);
    if (rc)
        return rc;
    if (h.type != (type | DDIO_REPLY) || h.req != req)
        return -EPROTO;
    *p = malloc(h.len ? h.len : 1);
    if (!*p)
        return -ENOMEM;
    if ((rc = ddio_recv_all(c->sock, *p, h.len, dl))) {
        free(*p);
        *p = NULL;
        return rc;
    }
    *n = h.len;
    *status = h.status;
    return 0;
}

/* The connection step: TCP connect, then the HELLO/AUTH handshake every
 * client runs (ddio_auth.h). Called with c->mu held. */
static int conn_connect(struct ddio_client *cl, struct cconn *c, char *msg, size_t msglen)
{
    char host[256], err[512];
    int port, rc;
    int64_t dl = ddio_now_ms() + cl->timeout_ms;
    struct ddio_hello_r r;

    if (ddio_parse_hostport(c->addr, host, sizeof(host), &port))
        return say(msg, msglen, "bad server address '%s'", c->addr), -EINVAL;
    c->sock = ddio_dial(host, port, c->addr, "ddio-client", cl->secret, dl, &r, err,
                        sizeof(err));
    if (c->sock < 0) {
        rc = c->sock;
        c->sock = -1;
        say(msg, msglen, "%s", err);
        return rc == -EACCES ? -EACCES : -EIO;
    }
    rc = ddio_ucx_attach_conn(c->sock, c->addr, &r, cl->xport, dl, &c->ucx_cookie, &c->ucx,
                              c->ucx_why, sizeof(c->ucx_why));
    if (rc || (cl->xport == DDIO_XPORT_UCX && !c->ucx)) {
        conn_drop(c);
        free(r.name);
        if (rc)
            return say(msg, msglen, "%s", c->ucx_why), -EIO;
        say(msg, msglen, "DDIO_TRANSPORT = ucx, but server %s: %s", c->addr, c->ucx_why);
        return -EPROTONOSUPPORT;
    }
    c->next_req = DDIO_HANDSHAKE_REQS + 1;
    memcpy(c->id, r.server_id, DDIO_ID_LEN);
    if (r.name && *r.name)
        snprintf(c->name, sizeof(c->name), "%s", r.name);
    free(r.name);
    c->gen++;
    return 0;
}

static int conn_ready(struct ddio_client *cl, struct cconn *c, char *msg, size_t msglen)
{
    return c->sock >= 0 ? 0 : conn_connect(cl, c, msg, msglen);
}

/* One request and its reply on connection i (c->mu held by the caller).
 * Returns 0 with the reply payload in *rp (may be NULL), the server's error
 * status as -errno (message in msg), or -EIO when the transport failed. */
static int call_locked(struct ddio_client *cl, struct cconn *c, uint16_t type,
                       const struct ddio_wbuf *req, uint8_t **rp, size_t *rn,
                       char *msg, size_t msglen)
{
    int64_t dl = ddio_now_ms() + cl->timeout_ms;
    int32_t status = 0;
    uint8_t *p = NULL;
    size_t n = 0;
    int rc = conn_ready(cl, c, msg, msglen);

    if (rc)
        return rc;
    if (req && req->err)
        return say(msg, msglen, "out of memory encoding %s", ddio_type_name(type)), -ENOMEM;
    uint64_t id = c->next_req++;
    rc = ddio_send_msg(c->sock, type, id, 0, req ? req->p : NULL, req ? req->len : 0,
                       NULL, 0, dl);
    if (!rc)
        rc = recv_reply(c, type, id, dl, &status, &p, &n);
    if (rc) {
        conn_drop(c);
        say(msg, msglen, "server %s: %s: %s", c->name, ddio_type_name(type),
            rc == -ETIMEDOUT ? "no reply within the timeout" : ddio_errno_name(-rc));
        return -EIO;
    }
    if (status) {
        char *text = NULL;
        if (ddio_dec_err(p, n, &text) == 0)
            say(msg, msglen, "%s", text);
        else
            say(msg, msglen, "server %s: %s: %s", c->name, ddio_type_name(type),
                ddio_errno_name(status));
        free(text);
        free(p);
        return status > 0 ? -status : -EIO;
    }
    if (rp) {
        *rp = p;
        *rn = n;
    } else
        free(p);
    return 0;
}

static int call(struct ddio_client *cl, int i, uint16_t type, const struct ddio_wbuf *req,
                uint8_t **rp, size_t *rn, char *msg, size_t msglen)
{
    struct cconn *c = &cl->c[i];
    pthread_mutex_lock(&c->mu);
    int rc = call_locked(cl, c, type, req, rp, rn, msg, msglen);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* ---- namespace ---------------------------------------------------------------- */

/* A request sent to every server; the outcome: the first hard error (any
 * status but ok and `soft`), else ok if any server said ok, else `soft`. */
static int fanout(struct ddio_client *cl, uint16_t type, const struct ddio_wbuf *req, int soft,
                  char *msg, size_t msglen)
{
    int ok = 0, hard = 0;
    char m[DDIO_CLIENT_MSG_LEN];
    for (int i = 0; i < cl->n; i++) {
        int rc = call(cl, i, type, req, NULL, NULL, m, sizeof(m));
        if (rc == 0)
            ok = 1;
        else if (rc != soft && !hard) {
            hard = rc;
            say(msg, msglen, "%s", m);
        } else if (rc == soft && !ok && !hard)
            say(msg, msglen, "%s", m);
    }
    return hard ? hard : (ok ? 0 : soft);
}

static void path_req(struct ddio_wbuf *w, const char *path)
{
    struct ddio_path_req m = {.path = (char *)path};
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
        }
        return;
    }
    struct ddio_stripe s = {r->layout.stripe_unit, r->layout.stripe_count};
    uint64_t end = ddio_layout_logical_end(&s, r->layout.server_index, r->local_size);
    *kind = DDIO_K_FILE;
    st->mode = r->mode;
    st->stripe = s;
    if (end > st->size)
        st->size = end;
}

/* PSTAT of the path in w on server i, decoded into r */
static int pstat_one(struct ddio_client *cl, int i, struct ddio_wbuf *w, struct ddio_pstat_r *r,
                     char *msg, size_t msglen)
{
    uint8_t *p = NULL;
    size_t n = 0;
    int e = call(cl, i, DDIO_T_PSTAT, w, &p, &n, msg, msglen);
    if (e == 0 && ddio_dec_pstat_r(p, n, r)) {
        say(msg, msglen, "server %s: malformed PSTAT reply", cl->c[i].name);
        e = -EIO;
    }
    free(p);
    return e;
}

int ddio_client_stat(struct ddio_client *cl, const char *path, struct ddio_cstat *st,
                     char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    struct ddio_pstat_r *r = malloc(sizeof(*r));
    int kind = 0, rc = 0;

    memset(st, 0, sizeof(*st));
    if (!r)
        return say(msg, msglen, "out of memory"), -ENOMEM;
    path_req(&w, path);
    for (int i = 0; i < cl->n && !rc; i++) {
        int e = pstat_one(cl, i, &w, r, msg, msglen);
        if (e == 0)
            merge_stat(st, r, &kind);
        else if (e != -ENOENT)
            rc = e;
    }
    ddio_wbuf_free(&w);
    free(r);
    if (!rc && !kind) {
        say(msg, msglen, "%s: no such file or directory on any of the %d servers", path, cl->n);
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

/* every page of one server's listing of path into nm */
static int list_server(struct ddio_client *cl, int i, const char *path, struct names *nm,
                       char *msg, size_t msglen)
{
    struct ddio_readdir q = {.path = (char *)path, .cookie = 0, .max = CL_PAGE};
    int rc = 0;
    do {
        struct ddio_wbuf w;
        struct ddio_readdir_r r;
        uint8_t *p = NULL;
        size_t n = 0;
        ddio_wbuf_init(&w);
        ddio_enc_readdir(&w, &q);
        rc = call(cl, i, DDIO_T_READDIR, &w, &p, &n, msg, msglen);
        ddio_wbuf_free(&w);
        if (rc == 0 && ddio_dec_readdir_r(p, n, &r)) {
            say(msg, msglen, "server %s: malformed READDIR reply", cl->c[i].name);
            rc = -EIO;
        }
        free(p);
        if (rc)
            return rc;
        for (uint32_t k = 0; k < r.n && !rc; k++)
            rc = names_add(nm, r.ent[k].name, r.ent[k].kind == DDIO_K_DIR);
        /* the cookie must move forward, or a hostile server loops us */
        rc = rc ? rc : (r.next && r.next <= q.cookie ? -EIO : 0);
        q.cookie = r.next;
        ddio_readdir_r_free(&r);
    } while (!rc && q.cookie);
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
        else if (e != -ENOENT)
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

int ddio_client_mkdir(struct ddio_client *cl, const char *path, uint32_t mode,
                      char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    struct ddio_mkdir m = {.path = (char *)path, .mode = mode & 07777};
    ddio_wbuf_init(&w);
    ddio_enc_mkdir(&w, &m);
    int rc = fanout(cl, DDIO_T_MKDIR, &w, -EEXIST, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}

static int count_entry(void *arg, const char *name, int is_dir)
{
    (void)name;
    (void)is_dir;
    ++*(int *)arg;
    return 0;
}

int ddio_client_rmdir(struct ddio_client *cl, const char *path, char *msg, size_t msglen)
{
    struct ddio_cstat st;
    struct ddio_wbuf w;
    int entries = 0;
    /* every server's listing first, so ENOTEMPTY leaves the namespace as it was */
    int rc = ddio_client_stat(cl, path, &st, msg, msglen);
    if (!rc && !st.is_dir)
        rc = (say(msg, msglen, "rmdir %s: not a directory", path), -ENOTDIR);
    if (!rc)
        rc = ddio_client_readdir(cl, path, count_entry, &entries, msg, msglen);
    if (!rc && entries)
        rc = (say(msg, msglen, "rmdir %s: directory not empty", path), -ENOTEMPTY);
    if (rc)
        return rc;
    path_req(&w, path);
    rc = fanout(cl, DDIO_T_RMDIR, &w, -ENOENT, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}

int ddio_client_unlink(struct ddio_client *cl, const char *path, char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    path_req(&w, path);
    int rc = fanout(cl, DDIO_T_DELETE, &w, -ENOENT, msg, msglen);
    ddio_wbuf_free(&w);
    return rc;
}

int ddio_client_rename(struct ddio_client *cl, const char *from, const char *to,
                       char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    struct ddio_rename m = {.from = (char *)from, .to = (char *)to};
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
        return say(msg, msglen, "no server %d", i), -EINVAL;
    int rc = call(cl, i, DDIO_T_STATS, NULL, &p, &n, msg, msglen);
    if (rc == 0 && ddio_dec_stats_r(p, n, r)) {
        say(msg, msglen, "server %s: malformed STATS reply", cl->c[i].name);
        rc = -EIO;
    }
    free(p);
    return rc;
}

/* PSTAT on every server: which one holds which stripe, and how much */
int ddio_client_layout(struct ddio_client *cl, const char *path, struct ddio_clayout *l,
                       char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    struct ddio_pstat_r *r = malloc(sizeof(*r));
    int rc = 0, files = 0, dirs = 0;

    memset(l, 0, sizeof(*l));
    for (unsigned k = 0; k < DDIO_MAX_SERVERS; k++)
        l->server[k] = -1;
    if (!r)
        return say(msg, msglen, "out of memory"), -ENOMEM;
    path_req(&w, path);
    for (int i = 0; i < cl->n && !rc; i++) {
        int e = pstat_one(cl, i, &w, r, msg, msglen);
        if (e == -ENOENT)
            continue;
        if (e) {
            rc = e;
            break;
        }
        if (r->kind != DDIO_K_FILE) {
            dirs++;
            continue;
        }
        uint32_t k = r->layout.server_index;
        if (files && (r->layout.stripe_unit != l->stripe.unit
                      || r->layout.stripe_count != l->stripe.count || l->server[k] >= 0)) {
            say(msg, msglen, "%s: server %s holds a layout that disagrees with the others",
                path, cl->c[i].name);
            rc = -EIO;
            break;
        }
        files++;
        l->stripe.unit = r->layout.stripe_unit;
        l->stripe.count = r->layout.stripe_count;
        l->server[k] = i;
        l->local[k] = r->local_size;
        uint64_t end = ddio_layout_logical_end(&l->stripe, k, r->local_size);
        if (end > l->size)
            l->size = end;
    }
    ddio_wbuf_free(&w);
    free(r);
    if (!rc && !files)
        rc = dirs ? (say(msg, msglen, "%s: is a directory", path), -EISDIR)
                  : (say(msg, msglen, "%s: no such file on any of the %d servers", path,
                         cl->n), -ENOENT);
    return rc;
}

/* ---- open files ----------------------------------------------------------------- */

static void open_req(struct ddio_wbuf *w, const char *path, uint32_t amode,
                     const struct ddio_layout_rec *l)
{
    struct ddio_open m = {.path = (char *)path, .amode = amode, .layout = *l};
    ddio_wbuf_init(w);
    ddio_enc_open(w, &m);
}

/* OPEN on connection c (c->mu held): handle, the stored layout into *l and
 * the connection generation the handle belongs to */
static int open_locked(struct ddio_client *cl, struct cconn *c, const char *path,
                       uint32_t amode, struct ddio_layout_rec *l, uint64_t *handle,
                       unsigned *gen, char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    struct ddio_open_r *r = malloc(sizeof(*r));
    uint8_t *p = NULL;
    size_t n = 0;
    int rc = r ? conn_ready(cl, c, msg, msglen) : -ENOMEM;

    if (!rc) {
        if (!(amode & DDIO_O_CREAT)) {
            /* the layout must be well formed even when the server ignores it */
            memset(l, 0, sizeof(*l));
            l->stripe_unit = cl->unit;
            l->stripe_count = 1;
            memcpy(l->ids[0], c->id, DDIO_ID_LEN);
        }
        open_req(&w, path, amode, l);
        rc = call_locked(cl, c, DDIO_T_OPEN, &w, &p, &n, msg, msglen);
        ddio_wbuf_free(&w);
    }
    if (rc == 0 && ddio_dec_open_r(p, n, r)) {
        say(msg, msglen, "server %s: malformed OPEN reply", c->name);
        rc = -EIO;
    }
    if (rc == 0) {
        *handle = r->handle;
        *l = r->layout;
        *gen = c->gen;
    } else if (rc == -ENOMEM)
        say(msg, msglen, "out of memory");
    free(p);
    free(r);
    return rc;
}

static int open_one(struct ddio_client *cl, int i, const char *path, uint32_t amode,
                    struct ddio_layout_rec *l, uint64_t *handle, unsigned *gen,
                    char *msg, size_t msglen)
{
    struct cconn *c = &cl->c[i];
    pthread_mutex_lock(&c->mu);
    int rc = open_locked(cl, c, path, amode, l, handle, gen, msg, msglen);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

static void handle_req(struct ddio_wbuf *w, uint64_t handle)
{
    struct ddio_handle_req m = {.handle = handle};
    ddio_wbuf_init(w);
    ddio_enc_handle_req(w, &m);
}

/* Stripe server i's handle died with its connection (a server restart, a
 * timeout): reconnect and open the file again by path (c->mu held). The
 * server must still hold stripe i of a file with the same layout. */
static int handle_valid(struct ddio_cfile *f, int i, struct cconn *c, char *msg, size_t msglen)
{
    struct ddio_layout_rec *l;
    uint64_t h;
    unsigned gen;
    if (c->sock >= 0 && c->gen == f->gen[i])
        return 0;
    if (!(l = malloc(sizeof(*l))))
        return say(msg, msglen, "out of memory"), -ENOMEM;
    int rc = open_locked(f->cl, c, f->path, DDIO_O_RDWR, l, &h, &gen, msg, msglen);
    if (rc == 0 && (l->server_index != (uint32_t)i || l->stripe_count != f->stripe.count ||
                    l->stripe_unit != f->stripe.unit)) {
        say(msg, msglen, "server %s: %s changed its layout while open", c->name, f->path);
        rc = -EIO;
    }
    free(l);
    if (rc)
        return rc == -ENOENT ? -EIO : rc;   /* renamed or deleted meanwhile */
    f->handle[i] = h;
    f->gen[i] = gen;
    return 0;
}

/* payload builders for requests on a handle (the handle is filled in only
 * once it is known to be valid) */
typedef void (*henc_fn)(struct ddio_wbuf *w, uint64_t handle, uint64_t arg);

static void enc_handle(struct ddio_wbuf *w, uint64_t handle, uint64_t unused)
{
    struct ddio_handle_req m = {.handle = handle};
    (void)unused;
    ddio_enc_handle_req(w, &m);
}

static void enc_setsize(struct ddio_wbuf *w, uint64_t handle, uint64_t local_size)
{
    struct ddio_setsize m = {.handle = handle, .local_size = local_size};
    ddio_enc_setsize(w, &m);
}

/* A request on stripe server i's handle. A handle lost with its connection
 * is renewed first (reopen = 1) or the request is skipped (CLOSE: the
 * server closed it already). */
static int fcall(struct ddio_cfile *f, int i, uint16_t type, henc_fn enc, uint64_t arg,
                 int reopen, uint8_t **rp, size_t *rn, char *msg, size_t msglen)
{
    struct cconn *c = &f->cl->c[f->ci[i]];
    struct ddio_wbuf w;
    int rc = 0;
    pthread_mutex_lock(&c->mu);
    if (c->sock < 0 || c->gen != f->gen[i])
        rc = reopen ? handle_valid(f, i, c, msg, msglen) : 1;
    if (!rc) {
        ddio_wbuf_init(&w);
        enc(&w, f->handle[i], arg);
        rc = call_locked(f->cl, c, type, &w, rp, rn, msg, msglen);
        ddio_wbuf_free(&w);
    }
    pthread_mutex_unlock(&c->mu);
    return rc > 0 ? 0 : rc;
}

static void close_handles(struct ddio_cfile *f)
{
    char m[DDIO_CLIENT_MSG_LEN];
    for (int i = 0; i < f->nsrv; i++) {
        if (f->ci[i] < 0)
            continue;
        fcall(f, i, DDIO_T_CLOSE, enc_handle, 0, 0, NULL, NULL, m, sizeof(m));
    }
}

static void cfile_free(struct ddio_cfile *f)
{
    if (!f)
        return;
    free(f->path);
    free(f->ci);
    free(f->handle);
    free(f->gen);
    free(f);
}

static struct ddio_cfile *cfile_new(struct ddio_client *cl, const char *path, int nsrv)
{
    struct ddio_cfile *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    f->cl = cl;
    f->nsrv = nsrv;
    f->path = strdup(path);
    f->ci = malloc(sizeof(int) * (size_t)nsrv);
    f->handle = calloc((size_t)nsrv, sizeof(uint64_t));
    f->gen = calloc((size_t)nsrv, sizeof(unsigned));
    if (!f->path || !f->ci || !f->handle || !f->gen) {
        cfile_free(f);
        return NULL;
    }
    for (int i = 0; i < nsrv; i++)
        f->ci[i] = -1;
    return f;
}

/* open an existing file: OPEN on every server, keep the stripe servers'
 * handles (in stripe order, by server id); -ENOENT if none has it */
static int open_existing(struct ddio_client *cl, const char *path, struct ddio_cfile **out,
                         char *msg, size_t msglen)
{
    struct ddio_layout_rec *l = malloc(sizeof(*l));
    struct ddio_cfile *f = NULL;
    int rc = l ? 0 : -ENOMEM, holders = 0;

    for (int i = 0; i < cl->n && !rc; i++) {
        uint64_t h;
        unsigned gen;
        int e = open_one(cl, i, path, DDIO_O_RDWR, l, &h, &gen, msg, msglen);
        if (e == -ENOENT)
            continue;
        if (e) {
            rc = e;
            break;
        }
        if (!f && !(f = cfile_new(cl, path, (int)l->stripe_count)))
            rc = -ENOMEM;
        else if ((int)l->stripe_count != f->nsrv || f->ci[l->server_index] >= 0) {
            say(msg, msglen, "%s: server %s holds a layout that disagrees with the others",
                path, cl->c[i].name);
            rc = -EIO;
        }
        if (rc) {
            struct ddio_wbuf w;
            handle_req(&w, h);
            call(cl, i, DDIO_T_CLOSE, &w, NULL, NULL, NULL, 0);
            ddio_wbuf_free(&w);
            break;
        }
        f->stripe.unit = l->stripe_unit;
        f->stripe.count = l->stripe_count;
        f->ci[l->server_index] = i;
        f->handle[l->server_index] = h;
        f->gen[l->server_index] = gen;
        holders++;
    }
    if (!rc && !holders)
        rc = (say(msg, msglen, "%s: no such file on any of the %d servers", path, cl->n),
              -ENOENT);
    if (!rc && holders != f->nsrv)
        rc = (say(msg, msglen, "%s: only %d of its %d stripe servers are in the list %s",
                  path, holders, f->nsrv, cl->servers), -EIO);
    if (rc && f)
        close_handles(f);
    if (rc) {
        cfile_free(f);
        f = NULL;
    }
    free(l);
    *out = f;
    return rc;
}

/* create with O_EXCL on every server, in list order */
static int create_new(struct ddio_client *cl, const char *path, struct ddio_cfile **out,
                      char *msg, size_t msglen)
{
    struct ddio_layout_rec *l = calloc(1, sizeof(*l));
    struct ddio_cfile *f = cfile_new(cl, path, cl->n);
    int rc = (l && f) ? 0 : -ENOMEM;

    for (int i = 0; i < cl->n && !rc; i++) {    /* every server's id (connects) */
        pthread_mutex_lock(&cl->c[i].mu);
        rc = conn_ready(cl, &cl->c[i], msg, msglen);
        if (!rc)
            memcpy(l->ids[i], cl->c[i].id, DDIO_ID_LEN);
        pthread_mutex_unlock(&cl->c[i].mu);
    }
    for (int i = 0; i < cl->n && !rc; i++) {
        l->stripe_unit = cl->unit;
        l->stripe_count = (uint32_t)cl->n;
        l->server_index = (uint32_t)i;
        struct ddio_layout_rec mine = *l;
        rc = open_one(cl, i, path, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &mine,
                      &f->handle[i], &f->gen[i], msg, msglen);
        if (!rc)
            f->ci[i] = i;
    }
    if (!rc) {
        f->stripe.unit = cl->unit;
        f->stripe.count = (uint32_t)cl->n;
    } else if (f) {
        close_handles(f);
        for (int i = 0; i < cl->n; i++)     /* no half-created file stays behind */
            if (f->ci[i] >= 0) {
                struct ddio_wbuf w;
                path_req(&w, path);
                call(cl, i, DDIO_T_DELETE, &w, NULL, NULL, NULL, 0);
                ddio_wbuf_free(&w);
            }
        cfile_free(f);
        f = NULL;
    }
    free(l);
    *out = f;
    return rc;
}

int ddio_client_open(struct ddio_client *cl, const char *path, int flags,
                     struct ddio_cfile **out, char *msg, size_t msglen)
{
    int rc = open_existing(cl, path, out, msg, msglen);
    if (rc == 0 && (flags & DDIO_CO_CREAT) && (flags & DDIO_CO_EXCL)) {
        ddio_client_close(*out);
        *out = NULL;
        return say(msg, msglen, "create %s: file exists", path), -EEXIST;
    }
    if (rc == -ENOENT && (flags & DDIO_CO_CREAT)) {
        rc = create_new(cl, path, out, msg, msglen);
        if (rc == -EEXIST && !(flags & DDIO_CO_EXCL))   /* lost a race: use theirs */
            rc = open_existing(cl, path, out, msg, msglen);
    }
    if (rc == 0 && (flags & DDIO_CO_TRUNC) && (rc = ddio_client_truncate(*out, 0, msg, msglen))) {
        ddio_client_close(*out);
        *out = NULL;
    }
    return rc;
}

int ddio_client_close(struct ddio_cfile *f)
{
    if (!f)
        return 0;
    close_handles(f);
    cfile_free(f);
    return 0;
}

int ddio_client_size(struct ddio_cfile *f, uint64_t *size, char *msg, size_t msglen)
{
    *size = 0;
    for (int i = 0; i < f->nsrv; i++) {
        struct ddio_u64_r r;
        uint8_t *p = NULL;
        size_t n = 0;
        int rc = fcall(f, i, DDIO_T_STAT, enc_handle, 0, 1, &p, &n, msg, msglen);
        if (rc == 0 && ddio_dec_u64_r(p, n, &r))
            rc = (say(msg, msglen, "malformed STAT reply"), -EIO);
        free(p);
        if (rc)
            return rc;
        uint64_t end = ddio_layout_logical_end(&f->stripe, (uint32_t)i, r.value);
        if (end > *size)
            *size = end;
    }
    return 0;
}

int ddio_client_truncate(struct ddio_cfile *f, uint64_t size, char *msg, size_t msglen)
{
    for (int i = 0; i < f->nsrv; i++) {
        uint64_t local = ddio_layout_local_size(&f->stripe, (uint32_t)i, size);
        int rc = fcall(f, i, DDIO_T_SETSIZE, enc_setsize, local, 1, NULL, NULL, msg, msglen);
        if (rc)
            return rc;
    }
    return 0;
}

int ddio_client_sync(struct ddio_cfile *f, char *msg, size_t msglen)
{
    for (int i = 0; i < f->nsrv; i++) {
        int rc = fcall(f, i, DDIO_T_SYNC, enc_handle, 0, 1, NULL, NULL, msg, msglen);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- XFER: one server, contiguous stream [0, len) at logical offset off ---- */

struct xio {
    char *buf;                   /* stream byte s is buf[s] */
    size_t len;
    /* UCX for this XFER's data (ucx_begin), else u == NULL */
    struct ddio_ucx *u;
    struct ddio_ucx_sink *sink;  /* PUTs (heap: outlives a stuck call) */
    struct ddio_ucx_sends *sends;        /* DATA in flight (heap, likewise) */
};

/* ---- the XFER's data by UCX (ddio_ucx.h), as the driver moves it ---- */

/* UCX when the connection attached it and the stream is big enough: a sink
 * receiving the PUTs straight into the buffer, a counter for DATA sends.
 * 1 = in use; 0 = TCP (also when memory is short: TCP still works). */
static int ucx_begin(struct xio *x, struct cconn *c)
{
    char why[200];
    x->u = NULL;
    x->sink = NULL;
    x->sends = NULL;
    if (!c->ucx || x->len < DDIO_UCX_MIN_STREAM)
        return 0;
    struct ddio_ucx *u = ddio_ucx_client(why, sizeof(why));
    struct ddio_ucx_sink *sk = u ? calloc(1, sizeof(*sk)) : NULL;
    struct ddio_ucx_sends *sd = sk ? calloc(1, sizeof(*sd)) : NULL;
    if (!sd) {
        free(sk);
        return 0;
    }
    sk->buf = (uint8_t *)x->buf;
    sk->len = x->len;
    ddio_ucx_sink_add(u, sk);
    x->u = u;
    x->sink = sk;
    x->sends = sd;
    return 1;
}

/* Stop receiving PUTs and wait for the DATA sends; after a failure only
 * briefly (a dead server's operations may never complete). What still runs
 * then keeps its sink or counter, never freed. 0 or -errno. */
static int ucx_end(struct xio *x, int failed)
{
    if (!x->u)
        return 0;
    int64_t dl = ddio_now_ms() + (failed ? 200 : 5000);
    int rc = ddio_ucx_sink_remove(x->u, x->sink, dl);
    if (rc == 0)
        free(x->sink);
    int rs = ddio_ucx_sends_wait(x->u, x->sends, dl);
    if (rs != -ETIMEDOUT)
        free(x->sends);
    x->u = NULL;
    return rc ? rc : rs;
}

/* one slice of waiting: progress UCX, then poll fd (may be -1) and the
 * worker's fd, not sleeping while the worker has more to do. Returns
 * fd's revents, or -errno when a PUT by UCX failed (-EPROTO: malformed). */
static int ucx_slice(struct xio *x, int fd, int64_t dl)
{
    struct pollfd pf[2] = {{.fd = fd, .events = POLLIN}, {.fd = ddio_ucx_efd(x->u),
                                                            .events = POLLIN}};
    int64_t left = dl - ddio_now_ms();
    uint64_t got;
    int e;

    if (left < 0 || ddio_ucx_prepare_wait(x->u))
        left = 0;
    else if (left > CL_UCX_SLICE_MS)
        left = CL_UCX_SLICE_MS;
    if (poll(pf, 2, (int)left) < 0)
        pf[0].revents = 0;      /* EINTR */
    ddio_ucx_progress(x->u);
    ddio_ucx_sink_peek(x->u, x->sink, &got, &e);
    return e ? -e : pf[0].revents;
}

/* wait until fd is readable (with UCX in use: progressing it) */
static int wait_readable(struct xio *x, int fd, int64_t dl)
{
    if (!x->u)
        return 0;       /* the blocking receive has the deadline */
    for (;;) {
        int r = ucx_slice(x, fd, dl);
        if (r)
            return r < 0 ? r : 0;
        if (ddio_now_ms() >= dl)
            return -ETIMEDOUT;
    }
}

/* after a read's DONE: wait for the bytes the server sent by UCX to land */
static int ucx_landed(struct xio *x, uint64_t expect, int timeout_ms)
{
    int64_t dl = ddio_now_ms() + timeout_ms;
    for (;;) {
        uint64_t got;
        int e;
        ddio_ucx_sink_peek(x->u, x->sink, &got, &e);
        if (e)
            return -e;
        if (got >= expect)
            return 0;
        if (ddio_now_ms() >= dl)
            return -ETIMEDOUT;
        int r = ucx_slice(x, -1, dl);
        if (r < 0)
            return r;
    }
}

/* ---- PUT and GET on the TCP connection ---- */

/* a PUT of len payload bytes: its segment list first, checked against the
 * buffer, then its data received straight into place (no staging copy) */
static int recv_put(int sock, struct xio *x, uint64_t len, int64_t dl)
{
    struct ddio_segs sg = {0};
    int rc = ddio_recv_put_list(sock, len, &sg, dl), n = 0;
    struct iovec *iov = NULL;
    if (!rc)
        rc = ddio_segs_iov(&sg, x->buf, x->len, 0, &iov, &n);
    if (!rc)
        rc = ddio_recvv_all(sock, iov, n, dl);
    free(iov);
    ddio_segs_free(&sg);
    return rc;
}

/* a GET answered by UCX: one DATA active message sent straight from the
 * buffer (a contiguous run of pieces goes by rendezvous) */
static int get_by_ucx(struct xio *x, struct cconn *c, uint64_t req, const struct ddio_segs *sg)
{
    struct iovec *iov = NULL;
    int n = 0, rc = ddio_segs_iov(sg, x->buf, x->len, 0, &iov, &n);
    if (!rc)
        rc = ddio_ucx_send_data(x->u, c->ucx, c->ucx_cookie, req, sg->tag, iov, n, x->sends);
    free(iov);
    return rc;
}

/* a GET: answer with DATA holding its segments' bytes */
static int on_get(struct xio *x, struct cconn *c, uint64_t req, const uint8_t *p, size_t n,
                  int64_t dl)
{
    struct ddio_segs sg;
    struct ddio_wbuf w;
    int rc = ddio_dec_get(p, n, &sg);
    if (rc)
        return rc;
    if (x->u) {
        rc = sg.total > DDIO_MAX_PAYLOAD - 4 ? -EPROTO : get_by_ucx(x, c, req, &sg);
        ddio_segs_free(&sg);
        return rc;
    }
    ddio_wbuf_init(&w);
    ddio_enc_data(&w, sg.tag);
    /* header, tag, then the segments straight from the buffer */
    struct iovec *iov = NULL;
    int niov = 0;
    rc = w.err ? w.err : sg.total > DDIO_MAX_PAYLOAD - w.len ? -EMSGSIZE : 0;
    if (!rc)
        rc = ddio_segs_iov(&sg, x->buf, x->len, 2, &iov, &niov);
    if (!rc) {
        struct ddio_hdr h;
        uint8_t hb[DDIO_HDR_SIZE];
        ddio_hdr_init(&h, DDIO_T_DATA, req, w.len + sg.total);
        ddio_hdr_encode(&h, hb);
        iov[0] = (struct iovec){hb, sizeof(hb)};
        iov[1] = (struct iovec){w.p, w.len};
        rc = ddio_sendv_all(c->sock, iov, niov + 2, dl);
    }
    free(iov);
    ddio_wbuf_free(&w);
    ddio_segs_free(&sg);
    return rc;
}

/* Serve one XFER until its DONE. The deadline restarts with every message
 * (PROGRESS heartbeats included). Returns 0 with *done filled, a server
 * status (> 0) with its message, or -errno for the transport. */
static int serve_xfer(struct cconn *c, int timeout_ms, uint64_t req, struct xio *x,
                      struct ddio_xfer_r *done, int32_t *status, char **text)
{
    for (;;) {
        int64_t dl = ddio_now_ms() + timeout_ms;
        struct ddio_hdr h;
        uint8_t *p;
        int rc = wait_readable(x, c->sock, dl);
        if (!rc)
            rc = ddio_recv_hdr(c->sock, &h, dl);
        if (rc)
            return rc;
        if (h.req != req)
            return -EPROTO;
        if (h.type == DDIO_T_PUT) {
            if ((rc = recv_put(c->sock, x, h.len, dl)))
                return rc;
            continue;
        }
        if (!(p = malloc(h.len ? h.len : 1)))
            return -ENOMEM;
        rc = ddio_recv_all(c->sock, p, h.len, dl);
        if (!rc) {
            if (h.type == DDIO_T_GET)
                rc = on_get(x, c, req, p, h.len, dl);
            else if (h.type == DDIO_T_PROGRESS)
                rc = 0;
            else if (h.type == (DDIO_T_XFER | DDIO_REPLY)) {
                *status = h.status;
                rc = h.status ? ddio_dec_err(p, h.len, text) : ddio_dec_xfer_r(p, h.len, done);
                free(p);
                return rc;
            } else
                rc = -EPROTO;
        }
        free(p);
        if (rc)
            return rc;
    }
}

/* send the XFER (its data by UCX where ucx_begin says so) and serve it */
static int run_xfer(struct ddio_cfile *f, int i, struct cconn *c, uint32_t op, struct xio *x,
                    const struct ddio_wbuf *dw, struct ddio_xfer_r *done, int32_t *status,
                    char **text)
{
    int ucx = ucx_begin(x, c);
    /* the XFER names the handle, which handle_valid may just have renewed */
    struct ddio_xfer m = {.handle = f->handle[i], .op = op, .nparticipants = 1,
                          .timeout_ms = (uint32_t)f->cl->timeout_ms,
                          .desc_len = (uint32_t)dw->len, .desc = dw->p,
                          .flags = ucx ? DDIO_XF_UCX : 0,
                          .ucx_token = ucx ? x->sink->token : 0, .ucx_len = ucx ? x->len : 0};
    struct ddio_wbuf w;
    uint64_t req = c->next_req++;
    int rc;

    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &m);
    rc = w.err ? -ENOMEM : ddio_send_msg(c->sock, DDIO_T_XFER, req, 0, w.p, w.len, NULL, 0,
                                          ddio_now_ms() + f->cl->timeout_ms);
    ddio_wbuf_free(&w);
    if (!rc)
        rc = serve_xfer(c, f->cl->timeout_ms, req, x, done, status, text);
    if (!rc && !*status && ucx && op == DDIO_X_READ)
        rc = ucx_landed(x, done->bytes, f->cl->timeout_ms);
    int re = ucx_end(x, rc || *status);
    return rc ? rc : re;
}

static int xfer_one(struct ddio_cfile *f, int i, uint32_t op, struct xio *x, uint64_t off,
                    uint64_t *local_size, char *msg, size_t msglen)
{
    struct cconn *c = &f->cl->c[f->ci[i]];
    struct ddio_desc d = {.disp = (int64_t)off, .extent = (int64_t)x->len,
                          .root = ddio_node_leaf(x->len), .start = 0, .length = x->len};
    struct ddio_wbuf dw;
    struct ddio_xfer_r done;
    int32_t status = 0;
    char *text = NULL;
    int rc = d.root ? 0 : -ENOMEM;

    ddio_wbuf_init(&dw);
    if (!rc) {
        ddio_desc_encode(&dw, &d);
        rc = dw.err ? -ENOMEM : 0;
    }
    ddio_desc_free(&d);
    pthread_mutex_lock(&c->mu);
    if (!rc)
        rc = handle_valid(f, i, c, msg, msglen);
    if (!rc) {
        rc = run_xfer(f, i, c, op, x, &dw, &done, &status, &text);
        if (rc) {
            conn_drop(c);
            say(msg, msglen, "server %s: XFER: %s%s", c->name,
                rc == -ETIMEDOUT ? "no progress within the timeout" : ddio_errno_name(-rc),
                rc == -EPROTO ? " (malformed message)" : "");
            rc = -EIO;
        }
    }
    pthread_mutex_unlock(&c->mu);
    ddio_wbuf_free(&dw);
    if (!rc && status) {
        say(msg, msglen, "%s", text ? text : "XFER failed");
        rc = status > 0 ? -status : -EIO;
    }
    free(text);
    if (!rc)
        *local_size = done.local_size;
    return rc;
}

static ssize_t xfer(struct ddio_cfile *f, uint32_t op, char *buf, size_t len, uint64_t off,
                    char *msg, size_t msglen)
{
    struct xio x = {.buf = buf, .len = len};
    uint64_t size = 0, lo, hi;

    if (len == 0)
        return 0;
    if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
        return say(msg, msglen, "offset %llu + %zu out of range", (unsigned long long)off,
                   len), -EFBIG;
    if (op == DDIO_X_READ)
        memset(buf, 0, len);    /* holes read as zeros */
    for (int i = 0; i < f->nsrv; i++) {
        uint64_t ls;
        if (!ddio_layout_local_range(&f->stripe, (uint32_t)i, off, len, &lo, &hi))
            continue;
        int rc = xfer_one(f, i, op, &x, off, &ls, msg, msglen);
        if (rc)
            return rc;
        uint64_t end = ddio_layout_logical_end(&f->stripe, (uint32_t)i, ls);
        if (end > size)
            size = end;
    }
    if (op == DDIO_X_WRITE)
        return (ssize_t)len;
    /* a short answer: servers outside the range may still end the file
     * later (then the gap is a hole, read as zeros) */
    if (size < off + len) {
        int rc = ddio_client_size(f, &size, msg, msglen);
        if (rc)
            return rc;
    }
    return size <= off ? 0 : (ssize_t)(size - off < len ? size - off : len);
}

ssize_t ddio_client_pread(struct ddio_cfile *f, void *buf, size_t len, uint64_t off,
                          char *msg, size_t msglen)
{
    return xfer(f, DDIO_X_READ, buf, len, off, msg, msglen);
}

ssize_t ddio_client_pwrite(struct ddio_cfile *f, const void *buf, size_t len, uint64_t off,
                           char *msg, size_t msglen)
{
    return xfer(f, DDIO_X_WRITE, (char *)buf, len, off, msg, msglen);
}

void ddio_client_file_stripe(const struct ddio_cfile *f, struct ddio_stripe *s)
{
    *s = f->stripe;
}

static int xfer_part(struct ddio_cfile *f, uint32_t k, uint32_t op, char *buf, size_t len,
                     uint64_t off, char *msg, size_t msglen)
{
    struct xio x = {.buf = buf, .len = len};
    uint64_t lo, hi, ls;
    if (k >= (uint32_t)f->nsrv)
        return say(msg, msglen, "%s: no stripe server %u", f->path, k), -EINVAL;
    if (len == 0 || !ddio_layout_local_range(&f->stripe, k, off, len, &lo, &hi))
        return 0;
    if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
        return say(msg, msglen, "offset %llu + %zu out of range", (unsigned long long)off,
                   len), -EFBIG;
    return xfer_one(f, (int)k, op, &x, off, &ls, msg, msglen);
}

int ddio_client_pread_part(struct ddio_cfile *f, uint32_t k, void *buf, size_t len,
                           uint64_t off, char *msg, size_t msglen)
{
    return xfer_part(f, k, DDIO_X_READ, buf, len, off, msg, msglen);
}

int ddio_client_pwrite_part(struct ddio_cfile *f, uint32_t k, const void *buf, size_t len,
                            uint64_t off, char *msg, size_t msglen)
{
    return xfer_part(f, k, DDIO_X_WRITE, (char *)buf, len, off, msg, msglen);
}
