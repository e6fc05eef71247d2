/* The tools' and the mount's API (ddio_client.h) over the client core
 * (ddio_core.h): a client owns a connection pool and a server list; the
 * namespace calls (ddio_client_ns.c) merge or fan out over every server,
 * open files are core file handles (renewed on a new
 * connection after a lost one), and reads and writes are core XFERs with a
 * contiguous descriptor, to every stripe server at once. Not part of libmpi
 * (scripts/overlay-driver.sh leaves it out). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE      /* qsort_r */
#endif
#include "ddio_client.h"
#include "ddio_client_int.h"
#include "ddio_auth.h"
#include "ddio_core.h"
#include "ddio_core_member.h"
#include "ddio_net.h"
#include "ddio_xport.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



struct ddio_cfile {
    struct ddio_client *cl;
    struct ddio_fh fh;
};

void ddio_cl_say(char *msg, size_t n, const char *fmt, ...)
{
    va_list ap;
    if (!msg || !n)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
}

/* a core error as this API's: the message, and -errno (-EIO for a
 * connection that failed, whatever its errno) */
int ddio_cl_fail(const struct ddio_err *e, char *msg, size_t msglen)
{
    ddio_cl_say(msg, msglen, "%s", e->msg);
    return e->transport ? -EIO : -(e->errnum ? e->errnum : EIO);
}

/* ---- the client ---------------------------------------------------------------- */

/* the secret named by secret_file / the environment / the config must load
 * now, so a bad one is reported before anything is sent */
static int check_secret(struct ddio_client *cl, const char *secret_file, char *msg,
                        size_t msglen)
{
    char path[4096], err[512];
    struct ddio_secret *s;
    int rc = 0;

    if (!ddio_secret_path(secret_file, path, sizeof(path)))
        return 0;
    if (!(s = malloc(sizeof(*s))) || !(cl->pool.secret_file = strdup(path)))
        rc = (ddio_cl_say(msg, msglen, "out of memory"), -1);
    else if (ddio_secret_load(path, s, err, sizeof(err)))
        rc = (ddio_cl_say(msg, msglen, "%s", err), -1);
    if (s)
        ddio_secret_clear(s);
    free(s);
    return rc;
}

static int add_server(struct ddio_client *cl, const char *s, const char *servers, char *msg,
                      size_t msglen)
{
    char host[256];
    int port;
    char **v;

    if (ddio_parse_hostport(s, host, sizeof(host), &port) || strlen(s) >= 256 ||
        cl->n >= (int)DDIO_MAX_SERVERS) {
        ddio_cl_say(msg, msglen, "bad server '%s' in '%s' (expected host:port, at most %u)", s,
            servers, DDIO_MAX_SERVERS);
        return -1;
    }
    if (!(v = realloc(cl->addr, sizeof(*v) * (size_t)(cl->n + 1))))
        return -1;
    cl->addr = v;
    if (!(v[cl->n] = strdup(s)))
        return -1;
    cl->n++;
    return 0;
}

struct ddio_client *ddio_client_new(const char *servers, int timeout_ms, uint64_t unit,
                                    const char *secret_file, char *msg, size_t msglen)
{
    struct ddio_client *cl = calloc(1, sizeof(*cl));
    char *list = servers ? strdup(servers) : NULL, *save = NULL;
    int rc = cl && list && *list ? 0 : -1;

    if (cl) {
        pthread_mutex_init(&cl->pool.mu, NULL);
        cl->pool.client_name = "ddio-client";
        cl->pool.strict_ucx = 1;
        cl->pool.act_uid = cl->pool.act_gid = -1;
        cl->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
        cl->recover_ms = ddio_recover_ms(-1, cl->timeout_ms);
        /* DDIO_CONFIG's striping, as the driver's opens take it */
        long long cunit;
        int cfactor;
        ddio_config_striping(&cunit, &cfactor);
        cl->unit = unit ? unit : cunit > 0 ? (uint64_t)cunit : DDIO_DFLT_UNIT;
        cl->count = cfactor > 0 ? (uint32_t)cfactor : 0;
        cl->servers = servers ? strdup(servers) : NULL;
    }
    if (!rc && (cl->xport = ddio_xport_env(msg, msglen)) < 0)
        goto fail;
    if (!rc)
        cl->pool.xport = cl->xport;
    for (char *s = rc ? NULL : strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save))
        if (add_server(cl, s, servers, msg, msglen))
            goto fail;
    if (rc || !cl->servers || cl->n == 0) {
        ddio_cl_say(msg, msglen, "no servers given (host:port,...)");
        goto fail;
    }
    if (check_secret(cl, secret_file, msg, msglen))
        goto fail;
    free(list);
    return cl;
fail:
    free(list);
    ddio_client_free(cl);
    return NULL;
}

void ddio_client_free(struct ddio_client *cl)
{
    if (!cl)
        return;
    ddio_pool_clear(&cl->pool);         /* closes connections, UCX endpoints too */
    pthread_mutex_destroy(&cl->pool.mu);
    free(cl->pool.secret_file);
    ddio_free_list(cl->addr, cl->n);
    free(cl->servers);
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
    return i >= 0 && i < cl->n ? cl->addr[i] : NULL;
}

/* every server's connection, as an open dials them: one down and out of
 * the membership filled in (member_out), not waited for */
int ddio_cl_conns_all(struct ddio_client *cl, struct ddio_conn **conns, struct ddio_err *e)
{
    return ddio_members_dial(&cl->pool, cl->addr, cl->n, cl->timeout_ms, cl->recover_ms,
                             conns, e);
}

/* server i's connection; one that does not answer at once and is out of
 * the membership fails at once (no waiting for it to restart), as does a
 * silent one (its connect took the whole timeout, or the one before did);
 * any other is waited for, the recovery time */
int ddio_cl_conn_of(struct ddio_client *cl, int i, struct ddio_conn **c, struct ddio_err *e)
{
    struct ddio_conn *all[DDIO_MAX_SERVERS] = { 0 };
    struct ddio_err ae = {0};
    if (!ddio_pool_get(&cl->pool, cl->addr[i], cl->timeout_ms, c, e))
        return 0;
    if (e->errnum == ETIMEDOUT)     /* silent: waited for already (ddio_conn_silent) */
        return -1;
    if (e->transport && cl->n <= (int)DDIO_MAX_SERVERS
        && ddio_pool_get_all(&cl->pool, cl->addr, cl->n, cl->timeout_ms, 0, all, &ae, NULL)
        && !ddio_members_fill_out(&cl->pool, cl->addr, cl->n, cl->timeout_ms, all, &ae)
        && all[i] && all[i]->member_out) {
        ddio_err_set(e, DDIO_E_OUT, "ddio: server %s is down and out of the membership",
                     cl->addr[i]);
        return -1;
    }
    return ddio_pool_get_recover(&cl->pool, cl->addr[i], cl->timeout_ms, cl->recover_ms, c, e);
}

/* One request and its reply on server i (resent to it after a lost
 * connection: PSTAT, READDIR, STATS are reads): 0 with the reply in *rp
 * (may be NULL), or -errno with the message in msg. */
int ddio_cl_call(struct ddio_client *cl, int i, uint16_t type, const struct ddio_wbuf *req,
                uint8_t **rp, size_t *rn, char *msg, size_t msglen)
{
    struct ddio_call k = {0};
    struct ddio_err e = {0};

    if (ddio_cl_conn_of(cl, i, &k.conn, &e))
        return ddio_cl_fail(&e, msg, msglen);
    ddio_wbuf_init(&k.req);
    if (req) {                  /* NULL: no payload (STATS) */
        ddio_put_bytes(&k.req, req->p, req->len);
        k.req.err = req->err;
    }
    ddio_fanout_recover(&k, 1, type, cl->timeout_ms, cl->recover_ms);
    ddio_wbuf_free(&k.req);
    if (k.err.errnum) {
        free(k.reply);
        return ddio_cl_fail(&k.err, msg, msglen);
    }
    if (rp) {
        *rp = k.reply;
        *rn = k.reply_len;
    } else
        free(k.reply);
    return 0;
}

void ddio_client_create_redundancy(struct ddio_client *cl, uint32_t word)
{
    cl->redundancy = word;
}

void ddio_client_local_lazy(struct ddio_client *cl, int on)
{
    cl->local_lazy = on;
}

void ddio_client_act_as(struct ddio_client *cl, uint32_t uid, uint32_t gid)
{
    cl->pool.act_uid = uid;
    cl->pool.act_gid = gid;
}

/* ---- open files ----------------------------------------------------------------- */

static int client_open(struct ddio_client *cl, const char *path, int flags, int mode_set,
                       uint32_t mode, struct ddio_cfile **out, char *msg, size_t msglen)
{
    struct ddio_cfile *f = calloc(1, sizeof(*f));
    struct ddio_conn *conns[DDIO_MAX_SERVERS];
    struct ddio_create cr = {.unit = cl->unit, .count = cl->count, .copies = (int)cl->redundancy,
                             .excl = !!(flags & DDIO_CO_EXCL),
                             .mode_set = mode_set, .mode = mode};
    struct ddio_err e = {0};
    int rc = 0;

    *out = NULL;
    if (!f)
        return ddio_cl_say(msg, msglen, "out of memory"), -ENOMEM;
    f->cl = cl;
    f->fh.timeout_ms = cl->timeout_ms;
    f->fh.xport = cl->xport;
    f->fh.renew = 1;    /* a handle lost with its connection is opened again */
    f->fh.recover_ms = cl->recover_ms;  /* and the call resent */
    f->fh.declare_out = ddio_client_declare_out;  /* lost for good during a write */
    f->fh.declare_arg = cl;
    f->fh.local_read = ddio_local_read_on(-1);
    f->fh.local_lazy = cl->local_lazy;
    f->fh.local_write = ddio_local_write_on(-1);
    /* a server down and out of the membership: opened without it */
    if (ddio_members_dial(&cl->pool, cl->addr, cl->n, cl->timeout_ms, cl->recover_ms, conns,
                          &e) ||
        ddio_fh_open(&f->fh, conns, cl->n, path,
                     (flags & DDIO_CO_RDONLY) ? DDIO_O_RDONLY : DDIO_O_RDWR,
                     (flags & DDIO_CO_CREAT) ? &cr : NULL, &e))
        rc = ddio_cl_fail(&e, msg, msglen);
    if (rc == 0)
        ddio_members_name_first(&cl->pool, cl->addr, cl->n, cl->timeout_ms, &f->fh);
    if (rc == 0 && (flags & DDIO_CO_TRUNC))
        rc = ddio_client_truncate(f, 0, msg, msglen);
    if (rc) {
        ddio_client_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

int ddio_client_open(struct ddio_client *cl, const char *path, int flags,
                     struct ddio_cfile **out, char *msg, size_t msglen)
{
    return client_open(cl, path, flags, 0, 0, out, msg, msglen);
}

int ddio_client_open_mode(struct ddio_client *cl, const char *path, int flags, uint32_t mode,
                          struct ddio_cfile **out, char *msg, size_t msglen)
{
    return client_open(cl, path, flags, 1, mode, out, msg, msglen);
}

int ddio_client_close(struct ddio_cfile *f)
{
    if (!f)
        return 0;
    ddio_fh_close(&f->fh, NULL);
    ddio_fh_free(&f->fh);
    free(f);
    return 0;
}

int ddio_client_created(const struct ddio_cfile *f)
{
    return f->fh.created;
}

int ddio_client_size(struct ddio_cfile *f, uint64_t *size, char *msg, size_t msglen)
{
    struct ddio_err e = {0};
    return ddio_xfer_file_size(&f->fh, size, &e) ? ddio_cl_fail(&e, msg, msglen) : 0;
}

int ddio_client_truncate(struct ddio_cfile *f, uint64_t size, char *msg, size_t msglen)
{
    struct ddio_err e = {0};
    return ddio_fh_resize(&f->fh, size, &e) ? ddio_cl_fail(&e, msg, msglen) : 0;
}

int ddio_client_sync(struct ddio_cfile *f, char *msg, size_t msglen)
{
    struct ddio_err e = {0};
    return ddio_fh_sync(&f->fh, &e) ? ddio_cl_fail(&e, msg, msglen) : 0;
}

void ddio_client_file_stripe(const struct ddio_cfile *f, struct ddio_stripe *s)
{
    *s = f->fh.stripe;
}

uint32_t ddio_client_file_redundancy(const struct ddio_cfile *f)
{
    return ddio_fh_redundancy(&f->fh);
}

/* ---- reads and writes: one core XFER with a contiguous descriptor ---------- */

/* [off, off + len) of the file <-> buf, on the servers in involved (NULL:
 * those holding any of it); raw: a read leaves the bytes no server sent
 * alone. Returns the bytes moved (reads: below the end of file) or -errno. */
static ssize_t xfer(struct ddio_cfile *f, uint32_t op, char *buf, size_t len, uint64_t off,
                    const char *involved, int raw, char *msg, size_t msglen)
{
    struct ddio_desc d = {.disp = (int64_t)off, .extent = (int64_t)len, .start = 0,
                          .length = len};
    struct ddio_mem mem = {.buf = buf, .contig = 1};
    struct ddio_xfer_req x = {.f = &f->fh, .op = op, .nparticipants = 1, .fdesc = &d,
                              .mem = &mem, .raw = raw};
    struct ddio_err e = {0};
    char *inv = NULL;
    int rc = 0;

    if (len == 0)
        return 0;
    if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
        return ddio_cl_say(msg, msglen, "offset %llu + %zu out of range", (unsigned long long)off,
                   len), -EFBIG;
    if (!(d.root = ddio_node_leaf(len)) ||
        (!involved && !(involved = inv = ddio_xfer_involved(&f->fh, &d))))
        rc = (ddio_cl_say(msg, msglen, "out of memory"), -ENOMEM);
    if (!rc && ddio_xfer_run(&x, involved, &e))
        rc = ddio_cl_fail(&e, msg, msglen);
    free(inv);
    ddio_desc_free(&d);
    return rc ? rc : (ssize_t)x.bytes;
}

ssize_t ddio_client_pread(struct ddio_cfile *f, void *buf, size_t len, uint64_t off,
                          char *msg, size_t msglen)
{
    return xfer(f, DDIO_X_READ, buf, len, off, NULL, 0, msg, msglen);
}

ssize_t ddio_client_pwrite(struct ddio_cfile *f, const void *buf, size_t len, uint64_t off,
                           char *msg, size_t msglen)
{
    return xfer(f, DDIO_X_WRITE, (char *)buf, len, off, NULL, 0, msg, msglen);
}

/* stripe server k's part only: the other bytes of buf are not touched */
static int xfer_part(struct ddio_cfile *f, uint32_t k, uint32_t op, char *buf, size_t len,
                     uint64_t off, char *msg, size_t msglen)
{
    char involved[DDIO_MAX_SERVERS] = {0};
    if (k >= (uint32_t)f->fh.nsrv)
        return ddio_cl_say(msg, msglen, "%s: no stripe server %u", f->fh.path, k), -EINVAL;
    involved[k] = 1;
    ssize_t rc = xfer(f, op, buf, len, off, involved, 1, msg, msglen);
    return rc < 0 ? (int)rc : 0;
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

int ddio_client_scrub(struct ddio_cfile *f, uint64_t rate, struct ddio_scrub_tally *t,
                      char *msg, size_t msglen)
{
    struct ddio_scrub_opt o = {.index = -1, .rate = rate};
    struct ddio_err e = {0};
    return ddio_scrub_fh(&f->fh, &o, t, &e) ? ddio_cl_fail(&e, msg, msglen) : 0;
}

int ddio_client_fold(struct ddio_cfile *f, uint64_t *groups, uint64_t *bytes, char *msg,
                     size_t msglen)
{
    struct ddio_err e = {0};
    f->fh.local_read = f->fh.local_write = 0;     /* the merged bytes: the servers' */
    return ddio_ec_fold(&f->fh, groups, bytes, &e) ? ddio_cl_fail(&e, msg, msglen) : 0;
}

/* ---- rebuild onto a replacement (DESIGN.md 6.3) -------------------------------- */

int ddio_client_server_id(struct ddio_client *cl, int i, uint8_t id[DDIO_ID_LEN], char *msg,
                          size_t msglen)
{
    struct ddio_conn *c;
    struct ddio_err e = {0};
    if (ddio_cl_conn_of(cl, i, &c, &e))
        return ddio_cl_fail(&e, msg, msglen);
    memcpy(id, c->id, DDIO_ID_LEN);
    return 0;
}

int ddio_client_rebuild_call(struct ddio_client *cl, int i, const struct ddio_rebuild *m,
                             struct ddio_rebuild_r *r, char *msg, size_t msglen)
{
    struct ddio_wbuf w;
    uint8_t *p = NULL;
    size_t n = 0;
    memset(r, 0, sizeof(*r));
    ddio_wbuf_init(&w);
    ddio_enc_rebuild(&w, m);
    int rc = ddio_cl_call(cl, i, DDIO_T_REBUILD, &w, &p, &n, msg, msglen);
    ddio_wbuf_free(&w);
    if (rc == 0 && ddio_dec_rebuild_r(p, n, r))
        rc = (ddio_cl_say(msg, msglen, "server %s: malformed REBUILD reply", cl->addr[i]), -EIO);
    free(p);
    return rc;
}

int ddio_client_rebuild_op(struct ddio_client *cl, int i, const struct ddio_rebuild *m,
                           uint32_t *state, char *msg, size_t msglen)
{
    struct ddio_rebuild_r r;
    int rc = ddio_client_rebuild_call(cl, i, m, &r, msg, msglen);
    if (state)
        *state = r.state;
    ddio_rebuild_r_free(&r);
    return rc;
}

int ddio_client_rebuild_copy(struct ddio_cfile *f, uint32_t k, const struct ddio_rebuild_opt *o,
                             uint64_t *copied, char *msg, size_t msglen)
{
    struct ddio_err e = {0};
    struct ddio_cfile *rf = NULL;
    char ignored[DDIO_CLIENT_MSG_LEN];
    /* a second handle reads ahead (without one, the chunks go one by one) */
    if (ddio_client_open(f->cl, f->fh.path, DDIO_CO_RDONLY, &rf, ignored, sizeof ignored))
        rf = NULL;
    /* through the servers: same-host descriptors would skip the sums */
    f->fh.local_read = f->fh.local_write = 0;
    if (rf)
        rf->fh.local_read = rf->fh.local_write = 0;
    int rc;
    if (f->fh.ec.k && !rf) {
        ddio_cl_say(msg, msglen, "%s: a second handle for reading: %s", f->fh.path, ignored);
        rc = -EIO;
    } else if (f->fh.ec.k)
        rc = ddio_ec_rewrite(&f->fh, &rf->fh, k, o, copied, &e) ? ddio_cl_fail(&e, msg, msglen)
            : 0;
    else
        rc = ddio_rebuild_copy(&f->fh, rf ? &rf->fh : NULL, k, o, copied, &e)
            ? ddio_cl_fail(&e, msg, msglen) : 0;
    if (rf)
        ddio_client_close(rf);
    return rc;
}
