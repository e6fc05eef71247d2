/* Configuration (server list, timeout), the per-process connection pool and
 * the request/reply helpers every other part of the driver uses.
 *
 * One TCP connection per server host:port serves every file this process has
 * open there (PROTOCOL.md: one request at a time per connection, so the
 * single-threaded ROMIO critical section is all the locking we need); the
 * progress thread of nonblocking I/O has a second pool of its own. */
#include "ad_ddio.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- errors --------------------------------------------------------------------- */

void ADIOI_DDIO_Err_set(ADIOI_DDIO_Err * e, int errnum, const char *fmt, ...)
{
    va_list ap;
    e->errnum = errnum ? errnum : EIO;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
}

/* errno -> MPI error class, as ADIOI_Err_create_code does, but keeping the
 * server's message (which names the server and the cause) in the string */
static int err_class(int errnum)
{
    switch (errnum) {
        case ENOENT:
            return MPI_ERR_NO_SUCH_FILE;
        case EEXIST:
            return MPI_ERR_FILE_EXISTS;
        case EACCES:
        case EPERM:
            return MPI_ERR_ACCESS;
        case ENOSPC:
            return MPI_ERR_NO_SPACE;
        case EDQUOT:
            return MPI_ERR_QUOTA;
        case EROFS:
            return MPI_ERR_READ_ONLY;
        case ENAMETOOLONG:
        case EISDIR:
        case ENOTDIR:
        case ELOOP:
            return MPI_ERR_BAD_FILE;
        case EINVAL:
            return MPI_ERR_ARG;
        case ADIOI_DDIO_EINTERN:
            return MPI_ERR_INTERN;
        default:
            return MPI_ERR_IO;
    }
}

int ADIOI_DDIO_Err_code(const char *myname, const ADIOI_DDIO_Err * e)
{
    if (!e->errnum)
        return MPI_SUCCESS;
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                err_class(e->errnum), "**io", "**io %s", e->msg);
}

/* ---- configuration ---------------------------------------------------------------- */

static struct {
    int loaded;
    char *servers;              /* "servers = " line of $DDIO_CONFIG */
    int timeout_s;              /* "timeout = " line, 0 if none */
    long long striping_unit;    /* "striping_unit = " line, 0 if none */
    int striping_factor;        /* "striping_factor = " line, 0 if none */
    char *last_hint;            /* last romio_ddio_servers seen by this process */
    char *secret_hint;          /* last romio_ddio_secret_file seen by this process */
} cfg;

/* $DDIO_CONFIG is read once per process: jobs do not edit it under us */
static void config_load(void)
{
    char val[4096];

    if (cfg.loaded)
        return;
    cfg.loaded = 1;
    if (ddio_config_value("servers", val, sizeof(val)))
        cfg.servers = strdup(val);
    if (ddio_config_value("timeout", val, sizeof(val)))
        cfg.timeout_s = atoi(val);
    if (ddio_config_value("striping_unit", val, sizeof(val))) {
        char *end;
        long long v = strtoll(val, &end, 10);
        if (*end == 'k' || *end == 'K')
            v <<= 10, end++;
        else if (*end == 'm' || *end == 'M')
            v <<= 20, end++;
        /* the layout's unit is a 32-bit hint in ROMIO: at most 1 GiB */
        cfg.striping_unit = !*end && v > 0 && v <= (1LL << 30) ? v : 0;
    }
    if (ddio_config_value("striping_factor", val, sizeof(val)))
        cfg.striping_factor = atoi(val) > 0 ? atoi(val) : 0;
}

void ADIOI_DDIO_Config_striping(long long *unit, int *factor)
{
    config_load();
    *unit = cfg.striping_unit;
    *factor = cfg.striping_factor;
}

void ADIOI_DDIO_Secret_hint(const char *hint)
{
    if (hint && *hint && (!cfg.secret_hint || strcmp(cfg.secret_hint, hint))) {
        free(cfg.secret_hint);
        cfg.secret_hint = strdup(hint);
    }
}

/* The secret for a new connection, read at every connect (so a rotated
 * file takes effect): 1 = loaded, 0 = none configured, -1 = refused (e). */
static int secret_get(struct ddio_secret *s, ADIOI_DDIO_Err * e)
{
    char path[4096], msg[ADIOI_DDIO_MSG_LEN - 16];
    int rc;

    if (!ddio_secret_path(cfg.secret_hint, path, sizeof(path)))
        return 0;
    rc = ddio_secret_load(path, s, msg, sizeof(msg));
    if (rc) {
        ADIOI_DDIO_Err_set(e, rc == -ENOENT ? ENOENT : EACCES, "ddio: %s", msg);
        return -1;
    }
    return 1;
}

int ADIOI_DDIO_Timeout_ms(int hint_s)
{
    const char *env = getenv("DDIO_TIMEOUT");
    int s = hint_s;

    if (s <= 0 && env && atoi(env) > 0)
        s = atoi(env);
    if (s <= 0) {
        config_load();
        s = cfg.timeout_s;
    }
    if (s <= 0)
        s = ADIOI_DDIO_DFLT_TIMEOUT_S;
    if (s > 24 * 3600)
        s = 24 * 3600;
    return s * 1000;
}

void ADIOI_DDIO_Free_list(char **list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

static int split_list(const char *spec, char ***list, int *n, ADIOI_DDIO_Err * e)
{
    char *copy = strdup(spec), *save = NULL, *tok;
    char host[256];
    int port;

    *list = calloc(DDIO_MAX_SERVERS, sizeof(char *));
    *n = 0;
    if (!copy || !*list) {
        free(copy);
        ADIOI_DDIO_Err_set(e, ENOMEM, "ddio: out of memory parsing the server list");
        return -1;
    }
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *t = ddio_trim(tok);
        if (!*t)
            continue;
        if (*n == (int) DDIO_MAX_SERVERS || ddio_parse_hostport(t, host, sizeof(host), &port)) {
            ADIOI_DDIO_Err_set(e, EDESTADDRREQ, "ddio: bad server address '%s' in '%s' "
                               "(expected host:port, at most %u servers)", t, spec,
                               DDIO_MAX_SERVERS);
            break;
        }
        (*list)[(*n)++] = strdup(t);
    }
    free(copy);
    if (e->errnum || *n == 0) {
        if (!e->errnum)
            ADIOI_DDIO_Err_set(e, EDESTADDRREQ, "ddio: empty server list '%s'", spec);
        ADIOI_DDIO_Free_list(*list, *n);
        *list = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}

int ADIOI_DDIO_Server_list(const char *hint, char ***list, int *n, ADIOI_DDIO_Err * e)
{
    const char *spec = hint, *env = getenv("DDIO_SERVERS");

    if (hint && *hint) {
        /* remembered so that files opened without hints by ROMIO itself (the
         * hidden shared-file-pointer file, delete on close) reach the same
         * servers */
        if (!cfg.last_hint || strcmp(cfg.last_hint, hint)) {
            free(cfg.last_hint);
            cfg.last_hint = strdup(hint);
        }
    } else if (env && *env)
        spec = env;
    else {
        config_load();
        spec = cfg.servers ? cfg.servers : cfg.last_hint;
    }
    if (!spec || !*spec) {
        ADIOI_DDIO_Err_set(e, EDESTADDRREQ, "ddio: no servers given: set the hint "
                           "romio_ddio_servers or DDIO_SERVERS=host:port,... or a "
                           "DDIO_CONFIG file with a 'servers = host:port,...' line");
        return -1;
    }
    return split_list(spec, list, n, e);
}

/* ---- connection pool ------------------------------------------------------------ */

/* Two pools: the main thread's, and the progress thread's own connections
 * (ad_ddio_async.c), so a background transfer never shares a byte stream
 * with a call of the main thread. Each pool is used by one thread only. */
typedef struct conn_pool {
    ADIOI_DDIO_Conn **conns;
    int n, cap;
} conn_pool;
static conn_pool pools[2];

void ADIOI_DDIO_Conn_fail(ADIOI_DDIO_Conn * c)
{
    if (c->sock >= 0)
        close(c->sock);
    c->sock = -1;
    ddio_ucx_disconnect(c->ucx);        /* the server drops its side with the socket */
    c->ucx = NULL;
}

static ADIOI_DDIO_Conn *pool_find(conn_pool * pool, const char *addr)
{
    for (int i = 0; i < pool->n; i++)
        if (!strcmp(pool->conns[i]->addr, addr))
            return pool->conns[i];
    if (pool->n == pool->cap) {
        int cap = pool->cap ? 2 * pool->cap : 16;
        ADIOI_DDIO_Conn **p = realloc(pool->conns, cap * sizeof(*p));
        if (!p)
            return NULL;
        pool->conns = p;
        pool->cap = cap;
    }
    ADIOI_DDIO_Conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    snprintf(c->addr, sizeof(c->addr), "%s", addr);
    snprintf(c->name, sizeof(c->name), "%s", addr);
    c->sock = -1;
    c->next_req = 1;
    pool->conns[pool->n++] = c;
    return c;
}

/* After the handshake: ask the server for UCX when DDIO_TRANSPORT resolves
 * to ucx for it (ddio_xport_resolve: forced, or auto finding a one-copy
 * path to this server), connect to its worker and attach. A server that declines
 * leaves the connection on TCP (c->ucx_why says why); a broken connection
 * fails. */
static int attach_ucx(ADIOI_DDIO_Conn * c, const struct ddio_hello_r *r, int64_t deadline,
                      ADIOI_DDIO_Err * e)
{
    int t = ddio_xport_env(c->ucx_why, sizeof(c->ucx_why));
    c->ucx = NULL;
    if (t < 0)          /* settle_transport reports it */
        return 0;
    t = ddio_ucx_attach_conn(c->sock, c->addr, r, t, deadline, &c->ucx_cookie, &c->ucx,
                             c->ucx_why, sizeof(c->ucx_why));
    if (t) {
        ADIOI_DDIO_Err_set(e, -t, "%s", c->ucx_why);
        return -1;
    }
    return 0;
}

/* Connect, HELLO and AUTH (ddio_dial in common/ddio_auth.c: the handshake
 * every client shares, retried while the server says it is busy), then UCX
 * when wanted. */
static int dial(ADIOI_DDIO_Conn * c, const char *host, int port, int64_t deadline,
                ADIOI_DDIO_Err * e)
{
    struct ddio_secret *s = malloc(sizeof(*s));
    struct ddio_hello_r r;
    char me[256] = "";
    int have, fd = -1;

    if (!s) {
        ADIOI_DDIO_Err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    have = secret_get(s, e);
    if (have >= 0) {
        gethostname(me, sizeof(me) - 1);
        fd = ddio_dial(host, port, c->addr, me, have ? s : NULL, deadline, &r, e->msg,
                       sizeof(e->msg));
        if (fd < 0)
            e->errnum = -fd;
    }
    ddio_secret_clear(s);
    free(s);
    if (fd < 0)
        return -1;
    c->sock = fd;
    c->gen++;
    if (attach_ucx(c, &r, deadline, e)) {
        free(r.name);
        return -1;
    }
    c->next_req = DDIO_HANDSHAKE_REQS + 1;
    memcpy(c->id, r.server_id, DDIO_ID_LEN);
    c->ndisks = r.ndisks;
    c->block_size = r.block_size;
    if (r.name && *r.name)
        snprintf(c->name, sizeof(c->name), "%s", r.name);
    free(r.name);
    return 0;
}

static int conn_open(ADIOI_DDIO_Conn * c, int timeout_ms, ADIOI_DDIO_Err * e)
{
    char host[256];
    int port;
    int64_t deadline = ddio_now_ms() + timeout_ms;

    if (ddio_parse_hostport(c->addr, host, sizeof(host), &port)) {
        ADIOI_DDIO_Err_set(e, EDESTADDRREQ, "ddio: bad server address '%s'", c->addr);
        return -1;
    }
    if (dial(c, host, port, deadline, e)) {
        if (e->errnum == ETIMEDOUT) {
            size_t l = strlen(e->msg);
            snprintf(e->msg + l, sizeof(e->msg) - l, " (%d s: romio_ddio_timeout / "
                     "DDIO_TIMEOUT)", timeout_ms / 1000);
        }
        ADIOI_DDIO_Conn_fail(c);
        return -1;
    }
    return 0;
}

int ADIOI_DDIO_Conn_get(const char *addr, int timeout_ms, ADIOI_DDIO_Conn ** out,
                        ADIOI_DDIO_Err * e)
{
    return ADIOI_DDIO_Conn_get_pool(ADIOI_DDIO_POOL_MAIN, addr, timeout_ms, out, e);
}

int ADIOI_DDIO_Conn_get_pool(int pool, const char *addr, int timeout_ms,
                             ADIOI_DDIO_Conn ** out, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_Conn *c = pool_find(&pools[pool], addr);

    *out = NULL;
    if (!c) {
        ADIOI_DDIO_Err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    if (c->sock < 0 && conn_open(c, timeout_ms, e))
        return -1;
    *out = c;
    return 0;
}

int ADIOI_DDIO_Srv_check(const ADIOI_DDIO_Srv * s, ADIOI_DDIO_Err * e)
{
    /* a dropped connection took the server-side handle (and locks) with it;
     * a new connection must not reuse the old handle number */
    if (!s->is_open || s->conn->sock < 0 || s->conn->gen != s->gen) {
        ADIOI_DDIO_Err_set(e, EPIPE, "ddio: connection to server %s was lost; the file "
                           "must be reopened", s->conn->name);
        return -1;
    }
    return 0;
}

/* ---- messages ------------------------------------------------------------------ */

static void transport_error(ADIOI_DDIO_Conn * c, int rc, const char *what, ADIOI_DDIO_Err * e)
{
    int err = -rc;
    if (err == ETIMEDOUT)
        ADIOI_DDIO_Err_set(e, err, "ddio server %s: no answer (%s) before the deadline "
                           "(romio_ddio_timeout / DDIO_TIMEOUT)", c->name, what);
    else if (err == EPROTO)
        ADIOI_DDIO_Err_set(e, err, "ddio server %s: %s: received something that is not a "
                           "ddio message (is a ddio server listening there?)", c->name, what);
    else if (err == EPROTONOSUPPORT)
        ADIOI_DDIO_Err_set(e, err, "ddio server %s: %s: protocol version mismatch (this "
                           "client speaks version %u)", c->name, what, DDIO_VERSION);
    else
        ADIOI_DDIO_Err_set(e, err, "ddio server %s: %s failed: %s (%s)", c->name, what,
                           strerror(err), ddio_errno_name(err));
    ADIOI_DDIO_Conn_fail(c);
}

int ADIOI_DDIO_Send(ADIOI_DDIO_Conn * c, uint16_t type, const void *payload, size_t len,
                    uint64_t * req, int64_t deadline, ADIOI_DDIO_Err * e)
{
    int rc;
    if (c->sock < 0) {
        ADIOI_DDIO_Err_set(e, EPIPE, "ddio: connection to server %s was lost", c->name);
        return -1;
    }
    *req = c->next_req++;
    rc = ddio_send_msg(c->sock, type, *req, 0, payload, len, NULL, 0, deadline);
    if (rc) {
        transport_error(c, rc, "send", e);
        return -1;
    }
    return 0;
}

int ADIOI_DDIO_Recv_payload(ADIOI_DDIO_Conn * c, const struct ddio_hdr *h, int64_t deadline,
                            uint8_t ** payload, ADIOI_DDIO_Err * e)
{
    /* +1: never malloc(0), and room for callers that want a terminator */
    uint8_t *p = malloc(h->len + 1);
    int rc;
    *payload = NULL;
    if (!p) {
        ADIOI_DDIO_Err_set(e, ENOMEM, "ddio: out of memory for a %llu-byte message from %s",
                           (unsigned long long) h->len, c->name);
        ADIOI_DDIO_Conn_fail(c);
        return -1;
    }
    rc = ddio_recv_all(c->sock, p, h->len, deadline);
    if (rc) {
        free(p);
        transport_error(c, rc, "receive", e);
        return -1;
    }
    *payload = p;
    return 0;
}

void ADIOI_DDIO_Server_error(ADIOI_DDIO_Conn * c, int status, const uint8_t * p, size_t n,
                             ADIOI_DDIO_Err * e)
{
    char *msg = NULL;
    if (ddio_dec_err(p, n, &msg) == 0 && msg && *msg)
        ADIOI_DDIO_Err_set(e, status, "%s", msg);
    else
        ADIOI_DDIO_Err_set(e, status, "ddio server %s: %s (%s)", c->name, strerror(status),
                           ddio_errno_name(status));
    free(msg);
}

int ADIOI_DDIO_Recv_reply(ADIOI_DDIO_Conn * c, uint16_t type, uint64_t req, int64_t deadline,
                          uint8_t ** payload, size_t * len, ADIOI_DDIO_Err * e)
{
    struct ddio_hdr h;
    uint8_t *p;
    int rc;

    *payload = NULL;
    *len = 0;
    if (c->sock < 0) {
        ADIOI_DDIO_Err_set(e, EPIPE, "ddio: connection to server %s was lost", c->name);
        return -1;
    }
    rc = ddio_recv_hdr(c->sock, &h, deadline);
    if (rc) {
        transport_error(c, rc, ddio_type_name(type), e);
        return -1;
    }
    if (h.type != (type | DDIO_REPLY) || h.req != req) {
        ADIOI_DDIO_Err_set(e, EPROTO, "ddio server %s: unexpected %s (req %llu) while "
                           "waiting for the reply to %s", c->name, ddio_type_name(h.type),
                           (unsigned long long) h.req, ddio_type_name(type));
        ADIOI_DDIO_Conn_fail(c);
        return -1;
    }
    if (ADIOI_DDIO_Recv_payload(c, &h, deadline, &p, e))
        return -1;
    if (h.status) {
        ADIOI_DDIO_Server_error(c, h.status, p, h.len, e);
        free(p);
        /* EPROTONOSUPPORT/EPROTO: the server closes the connection */
        if (h.status == EPROTONOSUPPORT || h.status == EPROTO)
            ADIOI_DDIO_Conn_fail(c);
        return -1;
    }
    *payload = p;
    *len = h.len;
    return 0;
}

void ADIOI_DDIO_Fanout(ADIOI_DDIO_Call * calls, int n, uint16_t type, int timeout_ms)
{
    int64_t deadline = ddio_now_ms() + timeout_ms;

    /* all requests first, so the servers work in parallel */
    for (int i = 0; i < n; i++) {
        ADIOI_DDIO_Call *k = &calls[i];
        k->sent = 0;
        if (k->err.errnum || !k->conn)
            continue;
        if (k->req.err)
            ADIOI_DDIO_Err_set(&k->err, ENOMEM, "ddio: out of memory encoding a request");
        else if (!ADIOI_DDIO_Send(k->conn, type, k->req.p, k->req.len, &k->id, deadline,
                                  &k->err))
            k->sent = 1;
    }
    for (int i = 0; i < n; i++) {
        ADIOI_DDIO_Call *k = &calls[i];
        if (k->sent)
            ADIOI_DDIO_Recv_reply(k->conn, type, k->id, deadline, &k->reply,
                                  &k->reply_len, &k->err);
    }
}

void ADIOI_DDIO_Calls_free(ADIOI_DDIO_Call * calls, int n)
{
    if (!calls)
        return;
    for (int i = 0; i < n; i++) {
        ddio_wbuf_free(&calls[i].req);
        free(calls[i].reply);
    }
    free(calls);
}
