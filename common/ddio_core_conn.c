/* Connections to the servers (ddio_core_conn.h): pools keyed by host:port, the
 * connect + HELLO + AUTH (+ UCX) step, one request and its reply, and the
 * fan-out of one request to several servers.
 *
 * A connection carries one conversation at a time (PROTOCOL.md): its mutex
 * is held from the request's first byte to the reply's last. Several are
 * locked in address order, so two threads fanning out over the same servers
 * never wait for each other in a circle. */
#include "ddio_core_conn.h"
#include "ddio_auth.h"
#include "ddio_dial.h"
#include "ddio_net.h"
#include "ddio_ucx.h"
#include "ddio_xport.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the pool ---------------------------------------------------------------- */

/* ---- fork: a child never speaks on its parent's connections ------------- */

static _Atomic unsigned fork_gen;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void after_fork_child(void)
{
    atomic_fetch_add(&fork_gen, 1);
}

static void fork_watch(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

unsigned ddio_fork_gen(void)
{
    pthread_once(&fork_once, fork_watch);
    return atomic_load(&fork_gen);
}

/* c came with the process this one forked from: its socket (and UCX
 * endpoint) are the parent's conversation, which a word of ours would
 * corrupt. Let go of them without a word (the parent keeps its own);
 * the caller then reconnects as after a lost connection. */
static void forsake_parents(struct ddio_conn *c)
{
    if (c->sock >= 0 && c->fork_gen != ddio_fork_gen()) {
        ddio_hangup(c->sock);
        c->sock = -1;
        c->ucx = NULL;
        c->ucx_lazy = 0;
        c->nposted = 0;
    }
}

static struct ddio_conn *conn_new(struct ddio_pool *p, const char *addr)
{
    struct ddio_conn *c = calloc(1, sizeof(*c));
    ddio_fork_gen();    /* watching from before any fork that could matter */
    if (!c)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    c->pool = p;
    snprintf(c->addr, sizeof(c->addr), "%s", addr);
    snprintf(c->name, sizeof(c->name), "%s", addr);
    c->sock = -1;
    c->next_req = 1;
    return c;
}

struct ddio_conn *ddio_pool_find(struct ddio_pool *p, const char *addr)
{
    struct ddio_conn *c = NULL;
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->n && !c; i++)
        if (!strcmp(p->conns[i]->addr, addr))
            c = p->conns[i];
    if (!c && p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        struct ddio_conn **v = realloc(p->conns, cap * sizeof(*v));
        if (v) {
            p->conns = v;
            p->cap = cap;
        }
    }
    if (!c && p->n < p->cap && (c = conn_new(p, addr)))
        p->conns[p->n++] = c;
    pthread_mutex_unlock(&p->mu);
    return c;
}

int ddio_pool_get(struct ddio_pool *p, const char *addr, int timeout_ms,
                  struct ddio_conn **out, struct ddio_err *e)
{
    struct ddio_conn *c = ddio_pool_find(p, addr);
    int rc;

    *out = NULL;
    if (!c) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    pthread_mutex_lock(&c->mu);
    rc = ddio_conn_ready(c, timeout_ms, e);
    pthread_mutex_unlock(&c->mu);
    if (!rc)
        *out = c;
    return rc;
}

void ddio_pool_clear(struct ddio_pool *p)
{
    for (int i = 0; i < p->n; i++) {
        ddio_conn_fail(p->conns[i]);    /* its UCX endpoint too */
        pthread_mutex_destroy(&p->conns[i]->mu);
        free(p->conns[i]);
    }
    free(p->conns);
    p->conns = NULL;
    p->n = p->cap = 0;
}

void ddio_conn_fail(struct ddio_conn *c)
{
    ddio_hangup(c->sock);
    c->sock = -1;
    ddio_ucx_disconnect(c->ucx);        /* the server drops its side with the socket */
    c->ucx = NULL;
    c->ucx_lazy = 0;
    c->nposted = 0;
}

static int ptr_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *) a, y = (uintptr_t) * (void *const *) b;
    return x < y ? -1 : x > y;
}

/* v's distinct non-NULL connections in address order into s (a server
 * list, and so any set of connections one call uses, has at most
 * DDIO_MAX_SERVERS entries) */
static int conns_sorted(struct ddio_conn *const *v, int n, struct ddio_conn **s)
{
    int k = 0, m = 0;
    for (int i = 0; i < n && k < (int) DDIO_MAX_SERVERS; i++)
        if (v[i])
            s[k++] = v[i];
    qsort(s, k, sizeof(*s), ptr_cmp);
    for (int i = 0; i < k; i++)
        if (i == 0 || s[i] != s[i - 1])
            s[m++] = s[i];
    return m;
}

void ddio_conns_lock(struct ddio_conn *const *v, int n)
{
    struct ddio_conn *s[DDIO_MAX_SERVERS];
    int k = conns_sorted(v, n, s);
    for (int i = 0; i < k; i++)
        pthread_mutex_lock(&s[i]->mu);
}

void ddio_conns_unlock(struct ddio_conn *const *v, int n)
{
    struct ddio_conn *s[DDIO_MAX_SERVERS];
    int k = conns_sorted(v, n, s);
    for (int i = k - 1; i >= 0; i--)
        pthread_mutex_unlock(&s[i]->mu);
}

/* ---- connecting ------------------------------------------------------------------ */

/* The secret for a new connection, read at every connect (so a rotated
 * file takes effect): 1 = loaded, 0 = none configured, -1 = refused (e). */
static int secret_get(const struct ddio_pool *p, struct ddio_secret *s, struct ddio_err *e)
{
    char path[4096], msg[DDIO_ERR_LEN - 16];
    const char *given = p->secret_file ? p->secret_file : ddio_secret_hint_get();
    int rc;

    if (!ddio_secret_path(given, path, sizeof(path)))
        return 0;
    rc = ddio_secret_load(path, s, msg, sizeof(msg));
    if (rc) {
        ddio_err_set(e, rc == -ENOENT ? ENOENT : EACCES, "ddio: %s", msg);
        return -1;
    }
    return 1;
}

/* After the handshake: whether this connection's XFER data is to move by
 * UCX (the pool's transport, or DDIO_TRANSPORT, resolves to ucx for this
 * server, ddio_xport_resolve, and the server offers it): c->ucx_lazy. The
 * attachment itself (the process's UCX context, UCXADDR, the endpoint:
 * 5-100 ms on a busy host, most of a first open) waits for the first XFER
 * that moves data by UCX (ddio_conn_ucx), so a job whose calls all go by
 * TCP or same-host I/O never pays it. A strict pool fails here when UCX was
 * forced and this server does not offer it. */
static int want_ucx(struct ddio_conn *c, const struct ddio_hello_r *r, struct ddio_err *e)
{
    int t = c->pool->xport >= 0 ? c->pool->xport : ddio_xport_env(c->ucx_why,
                                                                  sizeof(c->ucx_why));
    c->ucx = NULL;
    c->ucx_lazy = 0;
    c->ucx_forced = t == DDIO_XPORT_UCX;
    c->ucx_own_ep = (r->flags & DDIO_SRV_UCX_EP) != 0;
    if (t < 0)          /* the opener reports a bad DDIO_TRANSPORT */
        return 0;
    c->ucx_lazy = ddio_ucx_wanted(c->sock, r, t, c->ucx_why, sizeof(c->ucx_why));
    if (c->pool->strict_ucx && c->ucx_forced && !c->ucx_lazy) {
        ddio_err_set(e, EPROTONOSUPPORT, "DDIO_TRANSPORT = ucx, but server %s: %s", c->addr,
                     c->ucx_why);
        return -1;
    }
    return 0;
}

/* DDIO_TIMING: one line per UCX attachment, its stages in ms */
static void attach_timing(const struct ddio_conn *c, int64_t t0, int rc)
{
    const struct ddio_dial_stages *s = &ddio_dial_stages;
    if (!ddio_timing_on())
        return;
    fprintf(stderr, "ddio-timing pid %d ucx-attach %s total_ms %.2f ucx_init_ms %.2f "
            "ucxaddr_ms %.2f endpoint_ms %.2f%s\n", (int) getpid(), c->addr,
            (ddio_now_us() - t0) / 1e3, s->ucx_init / 1e3, s->ucxaddr / 1e3,
            s->endpoint / 1e3, rc ? " failed" : c->ucx ? "" : " declined");
}

/* UCX forced and not had on c */
static int forced_err(const struct ddio_conn *c, struct ddio_err *e)
{
    ddio_err_set(e, EPROTONOSUPPORT, "ddio: DDIO_TRANSPORT = ucx, but server %s: %s", c->name,
                 c->ucx_why);
    return -1;
}

int ddio_conn_ucx(struct ddio_conn *c, int64_t deadline, struct ddio_err *e)
{
    forsake_parents(c);         /* a forked child's first word reconnects */
    if (c->sock < 0 || c->ucx)
        return 0;
    if (!c->ucx_lazy)           /* not wanted, or tried before */
        return c->ucx_forced ? forced_err(c, e) : 0;
    if (ddio_conn_drain(c, deadline, e))
        return -1;
    c->ucx_lazy = 0;
    int64_t t0 = ddio_now_us();
    memset(&ddio_dial_stages, 0, sizeof(ddio_dial_stages));
    int rc = ddio_ucx_attach_conn(c->sock, c->addr, c->next_req++, deadline, c->ucx_own_ep,
                                  &c->ucx_cookie, &c->ucx, c->ucx_why, sizeof(c->ucx_why));
    attach_timing(c, t0, rc);
    if (rc) {
        ddio_err_set(e, -rc, "%s", c->ucx_why);
        e->transport = 1;
        ddio_conn_fail(c);
        return -1;
    }
    return !c->ucx && c->ucx_forced ? forced_err(c, e) : 0;
}

static void adopt_hello(struct ddio_conn *c, struct ddio_hello_r *r)
{
    c->next_req = DDIO_HANDSHAKE_REQS + 1;
    c->nposted = 0;
    memcpy(c->id, r->server_id, DDIO_ID_LEN);
    c->ndisks = r->ndisks;
    c->block_size = r->block_size;
    if (r->name && *r->name)
        snprintf(c->name, sizeof(c->name), "%s", r->name);
}

int ddio_timing_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *v = getenv("DDIO_TIMING");
        on = v && *v && strcmp(v, "0") != 0;
    }
    return on;
}

/* DDIO_TIMING: one line per connection made, its stages in ms */
static void dial_timing(const struct ddio_conn *c, int64_t t0, int64_t secret_us, int rc)
{
    const struct ddio_dial_stages *s = &ddio_dial_stages;
    if (!ddio_timing_on())
        return;
    fprintf(stderr, "ddio-timing pid %d connect %s total_ms %.2f secret_ms %.2f connect_ms %.2f "
            "hello_ms %.2f auth_ms %.2f ucx_init_ms %.2f ucxaddr_ms %.2f endpoint_ms %.2f%s\n",
            (int) getpid(), c->addr, (ddio_now_us() - t0) / 1e3, secret_us / 1e3,
            s->connect / 1e3, s->hello / 1e3, s->auth / 1e3, s->ucx_init / 1e3,
            s->ucxaddr / 1e3, s->endpoint / 1e3, rc ? " failed" : "");
}

/* ACTAS right after the handshake: this connection acts for the pool's user */
static int act_as(struct ddio_conn *c, int64_t deadline, struct ddio_err *e)
{
    int rc = ddio_act_as(c->sock, c->addr, c->next_req++, (uint32_t)c->pool->act_uid,
                         (uint32_t)c->pool->act_gid, deadline, e->msg, sizeof(e->msg));
    if (rc) {
        e->errnum = -rc;
        e->transport = rc != -EACCES;
    }
    return rc ? -1 : 0;
}

/* Connect, HELLO and AUTH (ddio_dial: the handshake every client shares,
 * retried while the server says it is busy), then UCX when wanted. */
static int dial(struct ddio_conn *c, const char *host, int port, int64_t deadline,
                struct ddio_err *e)
{
    struct ddio_secret *s = malloc(sizeof(*s));
    struct ddio_hello_r r;
    char me[256] = "";
    int have, fd = -1;
    int64_t t0 = ddio_now_us(), secret_us;

    memset(&ddio_dial_stages, 0, sizeof(ddio_dial_stages));
    if (!s) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    have = secret_get(c->pool, s, e);
    secret_us = ddio_now_us() - t0;
    if (have >= 0) {
        if (c->pool->client_name)
            snprintf(me, sizeof(me), "%s", c->pool->client_name);
        else
            gethostname(me, sizeof(me) - 1);
        fd = ddio_dial(host, port, c->addr, me, have ? s : NULL, deadline, &r, e->msg,
                       sizeof(e->msg));
        if (fd < 0) {
            e->errnum = -fd;
            e->transport = fd != -EACCES;
        }
    }
    ddio_secret_clear(s);
    free(s);
    if (fd < 0) {
        dial_timing(c, t0, secret_us, -1);
        return -1;
    }
    c->sock = fd;
    c->gen++;
    c->local_no = 0;
    c->fork_gen = ddio_fork_gen();
    int rc = want_ucx(c, &r, e);
    if (!rc)
        adopt_hello(c, &r);
    if (!rc && c->pool->act_uid >= 0)
        rc = act_as(c, deadline, e);
    free(r.name);
    dial_timing(c, t0, secret_us, rc);
    return rc;
}

int ddio_conn_silent(struct ddio_conn *c)
{
    /* read without c's mutex: a hint, set under it */
    return __atomic_load_n(&c->silent_until, __ATOMIC_RELAXED) > ddio_now_ms();
}

int ddio_conn_skip_silent(struct ddio_conn *c, struct ddio_err *e)
{
    if (!c)
        return 0;
    pthread_mutex_lock(&c->mu);
    int skip = c->sock < 0 && ddio_conn_silent(c);
    pthread_mutex_unlock(&c->mu);
    if (skip) {
        ddio_err_set(e, ETIMEDOUT, "ddio server %s: no answer within the whole timeout at "
                     "the last try, moments ago (romio_ddio_timeout / DDIO_TIMEOUT)", c->addr);
        e->transport = 1;
    }
    return skip;
}

/* A server that took a whole timeout without answering a handshake is
 * stopped or hung: for one more timeout, a connect only probes it. One
 * stat on a mount re-dials a server several times (the membership's
 * view, the recovery), and the kernel asks again after an error; each
 * waiting the timeout made a stat on a stopped server take five of them.
 * A server that answers again answers a probe: nothing waits for the
 * window to close. */
static void silent_for(struct ddio_conn *c, int ms)
{
    __atomic_store_n(&c->silent_until, ddio_now_ms() + ms, __ATOMIC_RELAXED);
}

static void note_silence(struct ddio_conn *c, int probe, int timeout_ms, struct ddio_err *e)
{
    size_t l = strlen(e->msg);
    if (probe) {
        snprintf(e->msg + l, sizeof(e->msg) - l, " (%d ms: silent for the whole timeout "
                 "before)", DDIO_PROBE_MS);
        return;
    }
    snprintf(e->msg + l, sizeof(e->msg) - l, " (%d s: romio_ddio_timeout / "
             "DDIO_TIMEOUT)", timeout_ms / 1000);
    silent_for(c, timeout_ms);
}

int ddio_conn_ready(struct ddio_conn *c, int timeout_ms, struct ddio_err *e)
{
    char host[256];
    int port;

    if (c->sock >= 0)
        return 0;
    int probe = ddio_conn_silent(c) && timeout_ms > DDIO_PROBE_MS;
    c->timeout_ms = timeout_ms;
    int64_t deadline = ddio_now_ms() + (probe ? DDIO_PROBE_MS : timeout_ms);
    if (ddio_parse_hostport(c->addr, host, sizeof(host), &port)) {
        ddio_err_set(e, EDESTADDRREQ, "ddio: bad server address '%s'", c->addr);
        return -1;
    }
    if (dial(c, host, port, deadline, e)) {
        if (e->errnum == ETIMEDOUT)
            note_silence(c, probe, timeout_ms, e);
        ddio_conn_fail(c);
        return -1;
    }
    __atomic_store_n(&c->silent_until, 0, __ATOMIC_RELAXED);
    return 0;
}

/* ---- messages ------------------------------------------------------------------ */

void ddio_conn_transport_error(struct ddio_conn *c, int rc, const char *what,
                               struct ddio_err *e)
{
    int err = -rc;
    if (err == ETIMEDOUT) {
        ddio_err_set(e, err, "ddio server %s: no answer (%s) before the deadline "
                     "(romio_ddio_timeout / DDIO_TIMEOUT)", c->name, what);
        silent_for(c, c->timeout_ms);
    } else if (err == EPROTO)
        ddio_err_set(e, err, "ddio server %s: %s: received something that is not a "
                     "ddio message (is a ddio server listening there?)", c->name, what);
    else if (err == EPROTONOSUPPORT)
        ddio_err_set(e, err, "ddio server %s: %s: protocol version mismatch (this "
                     "client speaks version %u)", c->name, what, DDIO_VERSION);
    else
        ddio_err_set(e, err, "ddio server %s: %s failed: %s (%s)", c->name, what,
                     strerror(err), ddio_errno_name(err));
    e->transport = 1;
    ddio_conn_fail(c);
}

static void conn_lost(const struct ddio_conn *c, struct ddio_err *e)
{
    ddio_err_set(e, EPIPE, "ddio: connection to server %s was lost", c->name);
    e->transport = 1;
}

static int send_req(struct ddio_conn *c, uint16_t type, const void *payload, size_t len,
                    uint32_t view, uint64_t *req, int64_t deadline, struct ddio_err *e)
{
    int rc;
    uint32_t ep = view && view < c->epoch ? view : c->epoch;
    *req = c->next_req++;
    rc = ddio_send_req_ep(c->sock, type, *req, ep, payload, len, deadline);
    if (rc) {
        ddio_conn_transport_error(c, rc, "send", e);
        return -1;
    }
    return 0;
}

/* c may be spoken on: connected, and not the process's it forked from */
static int conn_usable(struct ddio_conn *c, struct ddio_err *e)
{
    forsake_parents(c);
    if (c->sock < 0) {
        conn_lost(c, e);
        return 0;
    }
    return 1;
}

int ddio_conn_send_view(struct ddio_conn *c, uint16_t type, const void *payload, size_t len,
                        uint32_t view, uint64_t *req, int64_t deadline, struct ddio_err *e)
{
    if (!conn_usable(c, e))
        return -1;
    if (c->nposted && ddio_conn_drain(c, deadline, e))
        return -1;
    return send_req(c, type, payload, len, view, req, deadline, e);
}

int ddio_conn_send(struct ddio_conn *c, uint16_t type, const void *payload, size_t len,
                   uint64_t *req, int64_t deadline, struct ddio_err *e)
{
    return ddio_conn_send_view(c, type, payload, len, 0, req, deadline, e);
}

int ddio_conn_post(struct ddio_conn *c, uint16_t type, const void *payload, size_t len,
                   int64_t deadline, struct ddio_err *e)
{
    uint64_t req;
    if (!conn_usable(c, e))
        return -1;
    if (c->nposted == DDIO_CONN_POSTED && ddio_conn_drain(c, deadline, e))
        return -1;
    if (send_req(c, type, payload, len, 0, &req, deadline, e))
        return -1;
    c->posted_req[c->nposted] = req;
    c->posted_type[c->nposted++] = type;
    return 0;
}

int ddio_conn_drain(struct ddio_conn *c, int64_t deadline, struct ddio_err *e)
{
    forsake_parents(c);         /* the parent's replies are the parent's */
    for (int k = 0; k < c->nposted && c->sock >= 0; k++) {
        uint8_t *p;
        size_t n;
        struct ddio_err pe;
        memset(&pe, 0, sizeof(pe));
        if (ddio_conn_recv_reply(c, c->posted_type[k], c->posted_req[k], deadline, &p, &n,
                                 &pe) && c->sock < 0) {
            *e = pe;    /* broken (it failed c); a server's error is dropped */
            c->nposted = 0;
            return -1;
        }
        free(p);
    }
    c->nposted = 0;
    if (c->sock < 0) {
        conn_lost(c, e);
        return -1;
    }
    return 0;
}

int ddio_conn_recv_payload(struct ddio_conn *c, const struct ddio_hdr *h, int64_t deadline,
                           uint8_t **payload, struct ddio_err *e)
{
    /* +1: never malloc(0), and room for callers that want a terminator */
    uint8_t *p = malloc(h->len + 1);
    int rc;
    *payload = NULL;
    if (!p) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory for a %llu-byte message from %s",
                     (unsigned long long) h->len, c->name);
        ddio_conn_fail(c);
        return -1;
    }
    rc = ddio_recv_all(c->sock, p, h->len, deadline);
    if (rc) {
        free(p);
        ddio_conn_transport_error(c, rc, "receive", e);
        return -1;
    }
    *payload = p;
    return 0;
}

void ddio_conn_server_error(const struct ddio_conn *c, int status, const uint8_t *p, size_t n,
                            struct ddio_err *e)
{
    char *msg = NULL;
    if (ddio_dec_err(p, n, &msg) == 0 && msg && *msg)
        ddio_err_set(e, status, "%s", msg);
    else
        ddio_err_set(e, status, "ddio server %s: %s (%s)", c->name, strerror(status),
                     ddio_errno_name(status));
    free(msg);
}

int ddio_conn_recv_reply(struct ddio_conn *c, uint16_t type, uint64_t req, int64_t deadline,
                         uint8_t **payload, size_t *len, struct ddio_err *e)
{
    struct ddio_hdr h;
    uint8_t *p;
    int rc;

    *payload = NULL;
    *len = 0;
    if (c->sock < 0) {
        conn_lost(c, e);
        return -1;
    }
    rc = ddio_recv_hdr(c->sock, &h, deadline);
    if (rc) {
        ddio_conn_transport_error(c, rc, ddio_type_name(type), e);
        return -1;
    }
    c->epoch = h.epoch;
    if (h.type != (type | DDIO_REPLY) || h.req != req) {
        ddio_err_set(e, EPROTO, "ddio server %s: unexpected %s (req %llu) while "
                     "waiting for the reply to %s", c->name, ddio_type_name(h.type),
                     (unsigned long long) h.req, ddio_type_name(type));
        e->transport = 1;
        ddio_conn_fail(c);
        return -1;
    }
    if (ddio_conn_recv_payload(c, &h, deadline, &p, e))
        return -1;
    if (h.status) {
        ddio_conn_server_error(c, h.status, p, h.len, e);
        free(p);
        /* EPROTONOSUPPORT/EPROTO: the server closes the connection */
        if (h.status == EPROTONOSUPPORT || h.status == EPROTO)
            ddio_conn_fail(c);
        return -1;
    }
    *payload = p;
    *len = h.len;
    return 0;
}

int ddio_conn_call_locked(struct ddio_conn *c, uint16_t type, const struct ddio_wbuf *req,
                          int64_t deadline, uint8_t **reply, size_t *len, struct ddio_err *e)
{
    uint64_t id;

    *reply = NULL;
    *len = 0;
    if (req && req->err) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory encoding %s", ddio_type_name(type));
        return -1;
    }
    if (ddio_conn_send(c, type, req ? req->p : NULL, req ? req->len : 0, &id, deadline, e))
        return -1;
    return ddio_conn_recv_reply(c, type, id, deadline, reply, len, e);
}

int ddio_conn_call(struct ddio_conn *c, uint16_t type, const struct ddio_wbuf *req,
                   int64_t deadline, uint8_t **reply, size_t *len, struct ddio_err *e)
{
    pthread_mutex_lock(&c->mu);
    int rc = ddio_conn_call_locked(c, type, req, deadline, reply, len, e);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* ---- fan-out ------------------------------------------------------------------- */

static void fanout_locked(struct ddio_call *calls, int n, uint16_t type, int64_t deadline)
{
    /* all requests first, so the servers work in parallel */
    for (int i = 0; i < n; i++) {
        struct ddio_call *k = &calls[i];
        k->sent = 0;
        if (k->err.errnum || !k->conn)
            continue;
        if (k->req.err)
            ddio_err_set(&k->err, ENOMEM, "ddio: out of memory encoding a request");
        else if (!ddio_conn_send_view(k->conn, type, k->req.p, k->req.len, k->view_epoch,
                                      &k->id, deadline, &k->err))
            k->sent = 1;
    }
    for (int i = 0; i < n; i++) {
        struct ddio_call *k = &calls[i];
        if (k->sent)
            ddio_conn_recv_reply(k->conn, type, k->id, deadline, &k->reply, &k->reply_len,
                                 &k->err);
    }
}

void ddio_fanout(struct ddio_call *calls, int n, uint16_t type, int timeout_ms)
{
    struct ddio_conn *v[DDIO_MAX_SERVERS] = { 0 };
    int m = n < (int) DDIO_MAX_SERVERS ? n : (int) DDIO_MAX_SERVERS;

    for (int i = 0; i < m; i++)
        v[i] = calls[i].conn;
    ddio_conns_lock(v, m);
    fanout_locked(calls, m, type, ddio_now_ms() + timeout_ms);
    ddio_conns_unlock(v, m);
}

void ddio_calls_free(struct ddio_call *calls, int n)
{
    if (!calls)
        return;
    for (int i = 0; i < n; i++) {
        ddio_wbuf_free(&calls[i].req);
        free(calls[i].reply);
    }
    free(calls);
}
