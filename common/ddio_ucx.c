/* UCX loaded at run time, contexts, and the client's side of the active
 * message data path (see ddio_ucx.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_ucx.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_net.h"
#include "ddio_xport.h"

#ifndef DDIO_HAVE_UCX

struct ddio_ucx *ddio_ucx_open(char *err, size_t n)
{
    snprintf(err, n, "ddio was built without UCX headers (libucx-dev)");
    return NULL;
}
void ddio_ucx_close(struct ddio_ucx *u) { (void)u; }
struct ddio_ucx *ddio_ucx_client(char *err, size_t n) { return ddio_ucx_open(err, n); }
const void *ddio_ucx_address(const struct ddio_ucx *u, size_t *len)
{
    (void)u;
    *len = 0;
    return NULL;
}
int ddio_ucx_efd(const struct ddio_ucx *u) { (void)u; return -1; }
int ddio_ucx_prepare_wait(struct ddio_ucx *u) { (void)u; return 0; }
unsigned ddio_ucx_progress(struct ddio_ucx *u) { (void)u; return 0; }
struct ddio_ucx_ep *ddio_ucx_connect(struct ddio_ucx *u, const void *addr, size_t len,
                                     uint64_t cookie, int own_ep, int64_t dl, char *err,
                                     size_t n)
{
    (void)u; (void)addr; (void)len; (void)cookie; (void)own_ep; (void)dl;
    snprintf(err, n, "no UCX");
    return NULL;
}
void ddio_ucx_disconnect(struct ddio_ucx_ep *ep) { (void)ep; }
void ddio_ucx_sink_add(struct ddio_ucx *u, struct ddio_ucx_sink *s) { (void)u; (void)s; }
int ddio_ucx_sink_remove(struct ddio_ucx *u, struct ddio_ucx_sink *s, int64_t dl)
{
    (void)u; (void)s; (void)dl;
    return 0;
}
void ddio_ucx_sink_peek(struct ddio_ucx *u, const struct ddio_ucx_sink *s, uint64_t *got,
                        int *err)
{
    (void)u;
    *got = s->got;
    *err = s->err;
}
void ddio_ucx_put_counts(struct ddio_ucx *u, char *buf, size_t n)
{
    (void)u;
    snprintf(buf, n, "no UCX");
}
void ddio_ucx_lock(struct ddio_ucx *u) { (void)u; }
void ddio_ucx_unlock(struct ddio_ucx *u) { (void)u; }
int ddio_ucx_send_data(struct ddio_ucx *u, struct ddio_ucx_ep *ep, uint64_t cookie,
                       uint64_t req, uint32_t tag, const struct iovec *iov, int n,
                       struct ddio_ucx_sends *s)
{
    (void)u; (void)ep; (void)cookie; (void)req; (void)tag; (void)iov; (void)n; (void)s;
    return -ENOSYS;
}
int ddio_ucx_sends_wait(struct ddio_ucx *u, struct ddio_ucx_sends *s, int64_t dl)
{
    (void)u; (void)s; (void)dl;
    return 0;
}

#else

#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>

/* what only this file calls, beside the public table */
struct ucx_priv_api {
    ucs_status_t (*config_read)(const char *, const char *, ucp_config_t **);
    void (*config_release)(ucp_config_t *);
    ucs_status_t (*config_modify)(ucp_config_t *, const char *, const char *);
    ucs_status_t (*init_version)(unsigned, unsigned, const ucp_params_t *,
                                 const ucp_config_t *, ucp_context_h *);
    void (*cleanup)(ucp_context_h);
    ucs_status_t (*worker_create)(ucp_context_h, const ucp_worker_params_t *, ucp_worker_h *);
    void (*worker_destroy)(ucp_worker_h);
    ucs_status_t (*worker_get_address)(ucp_worker_h, ucp_address_t **, size_t *);
    void (*worker_release_address)(ucp_worker_h, ucp_address_t *);
    unsigned (*worker_progress)(ucp_worker_h);
    ucs_status_t (*worker_get_efd)(ucp_worker_h, int *);
    ucs_status_t (*worker_arm)(ucp_worker_h);
};

static struct ddio_ucx_api api;
static struct ucx_priv_api priv;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_err[256];
static int loaded;

#define SYM(lib, tab, field, name)                                                    \
    do {                                                                              \
        *(void **)&(tab).field = dlsym(lib, name);                                    \
        if (!(tab).field) {                                                           \
            snprintf(load_err, sizeof(load_err), "UCX: %s not found (%s)", name,      \
                     dlerror());                                                      \
            return;                                                                   \
        }                                                                             \
    } while (0)

/* With no RDMA device, UCX's verbs modules (libuct_ib, libuct_rdmacm and
 * the verbs and netlink libraries they pull in) are loaded and probed for
 * nothing at every context's start: 0.6-0.8 of ~4 ms of ucp_init plus its
 * worker per process here, paid by every rank at once. Left to UCX where
 * the user set UCX_MODULES, or where an RDMA device exists. UCS loads the
 * transports' modules at the first ucp_init, after this. */
static void skip_rdma_modules(void *ucs)
{
    ucs_status_t (*set)(const char *, const char *);
    if (getenv("UCX_MODULES") || ddio_xport_rdma_present())
        return;
    *(void **)&set = dlsym(ucs, "ucs_global_opts_set_value");
    if (set)
        (void)set("MODULES", "^ib,rdmacm");
}

static void load(void)
{
    void *ucp = dlopen("libucp.so.0", RTLD_NOW | RTLD_GLOBAL);
    void *ucs = dlopen("libucs.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (!ucp || !ucs) {
        snprintf(load_err, sizeof(load_err), "UCX libraries not loadable: %s", dlerror());
        return;
    }
    SYM(ucp, priv, config_read, "ucp_config_read");
    SYM(ucp, priv, config_release, "ucp_config_release");
    SYM(ucp, priv, config_modify, "ucp_config_modify");
    SYM(ucp, priv, init_version, "ucp_init_version");
    SYM(ucp, priv, cleanup, "ucp_cleanup");
    SYM(ucp, priv, worker_create, "ucp_worker_create");
    SYM(ucp, priv, worker_destroy, "ucp_worker_destroy");
    SYM(ucp, priv, worker_get_address, "ucp_worker_get_address");
    SYM(ucp, priv, worker_release_address, "ucp_worker_release_address");
    SYM(ucp, priv, worker_progress, "ucp_worker_progress");
    SYM(ucp, priv, worker_get_efd, "ucp_worker_get_efd");
    SYM(ucp, priv, worker_arm, "ucp_worker_arm");
    SYM(ucp, api, ep_create, "ucp_ep_create");
    SYM(ucp, api, ep_close_nbx, "ucp_ep_close_nbx");
    SYM(ucp, api, am_send_nbx, "ucp_am_send_nbx");
    SYM(ucp, api, am_recv_data_nbx, "ucp_am_recv_data_nbx");
    SYM(ucp, api, worker_set_am_recv_handler, "ucp_worker_set_am_recv_handler");
    SYM(ucp, api, request_check_status, "ucp_request_check_status");
    SYM(ucp, api, request_free, "ucp_request_free");
    SYM(ucp, api, worker_signal, "ucp_worker_signal");
    SYM(ucs, api, status_string, "ucs_status_string");
    skip_rdma_modules(ucs);
    loaded = 1;
}

const struct ddio_ucx_api *ddio_ucx_api(void)
{
    return loaded ? &api : NULL;
}

struct ddio_ucx {
    ucp_context_h ctx;
    ucp_worker_h w;
    int efd;
    ucp_address_t *addr;
    size_t alen;
    pthread_mutex_t mu;          /* the sinks, sends and landed() */
    struct ddio_ucx_sink *sinks;
    uint64_t next_token;
    /* PUTs seen by this process (under mu): what a failed call reports,
     * so that a server's send that never completed shows which side
     * stopped (never arrived, dropped, or fetched and not finished) */
    uint64_t puts_in, puts_dropped, fetches, fetches_done;
};

struct ddio_ucx_ep {
    struct ddio_ucx *u;
    ucp_ep_h ep;
};

ucp_worker_h ddio_ucx_worker(const struct ddio_ucx *u) { return u->w; }

static int ucx_fail(char *err, size_t n, const char *what, ucs_status_t st)
{
    snprintf(err, n, "UCX: %s: %s", what, api.status_string(st));
    return -EIO;
}

/* ddio's defaults where the user's UCX_* environment is silent (measured in
 * docs/TRANSPORT.md): the worker is shared by several threads, and UCX's
 * default spinlock makes a thread spin out its time slice whenever the
 * holder is preempted (15 % of the server's cycles on a 2-core host); and
 * UCX 1.13's shared-memory FIFOs (posix, sysv) do not always wake a worker
 * sleeping on its fd, so a sleeping side noticed messages only at its next
 * timer slice (a write call 6x slower). Without them messages take UCX's
 * TCP or RDMA transports, whose wake-ups are reliable, and the bulk still
 * moves in one copy (CMA on a host, RDMA between hosts). */
static ucs_status_t tune(ucp_config_t *cfg)
{
    static const char *const dflt[][2] = {{"USE_MT_MUTEX", "y"}, {"TLS", "^posix,sysv"}};
    for (size_t i = 0; i < sizeof(dflt) / sizeof(dflt[0]); i++) {
        char env[64];
        snprintf(env, sizeof(env), "UCX_%s", dflt[i][0]);
        if (getenv(env))
            continue;
        ucs_status_t st = priv.config_modify(cfg, dflt[i][0], dflt[i][1]);
        if (st != UCS_OK)
            return st;
    }
    return UCS_OK;
}

static int make_worker(struct ddio_ucx *u, char *err, size_t n)
{
    ucp_config_t *cfg;
    ucs_status_t st = priv.config_read(NULL, NULL, &cfg);
    if (st != UCS_OK)
        return ucx_fail(err, n, "reading the configuration", st);
    if ((st = tune(cfg)) != UCS_OK) {
        priv.config_release(cfg);
        return ucx_fail(err, n, "setting ddio's defaults", st);
    }
    ucp_params_t pp = {.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                       .features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP,
                       .mt_workers_shared = 1};
    st = priv.init_version(UCP_API_MAJOR, UCP_API_MINOR, &pp, cfg, &u->ctx);
    priv.config_release(cfg);
    if (st != UCS_OK)
        return ucx_fail(err, n, "ucp_init", st);
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_MULTI};
    if ((st = priv.worker_create(u->ctx, &wp, &u->w)) != UCS_OK) {
        priv.cleanup(u->ctx);
        return ucx_fail(err, n, "creating a worker", st);
    }
    if ((st = priv.worker_get_efd(u->w, &u->efd)) != UCS_OK ||
        (st = priv.worker_get_address(u->w, &u->addr, &u->alen)) != UCS_OK) {
        priv.worker_destroy(u->w);
        priv.cleanup(u->ctx);
        return ucx_fail(err, n, "worker fd or address", st);
    }
    return 0;
}

struct ddio_ucx *ddio_ucx_open(char *err, size_t n)
{
    pthread_once(&load_once, load);
    if (!loaded) {
        snprintf(err, n, "%s", load_err);
        return NULL;
    }
    struct ddio_ucx *u = calloc(1, sizeof(*u));
    if (!u) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&u->mu, NULL);
    if (make_worker(u, err, n)) {
        pthread_mutex_destroy(&u->mu);
        free(u);
        return NULL;
    }
    return u;
}

void ddio_ucx_close(struct ddio_ucx *u)
{
    if (!u)
        return;
    priv.worker_release_address(u->w, u->addr);
    priv.worker_destroy(u->w);
    priv.cleanup(u->ctx);
    pthread_mutex_destroy(&u->mu);
    free(u);
}

const void *ddio_ucx_address(const struct ddio_ucx *u, size_t *len)
{
    *len = u->alen;
    return u->addr;
}

int ddio_ucx_efd(const struct ddio_ucx *u)
{
    return u->efd;
}

void *ddio_ucx_buf(ucp_request_param_t *rp, ucp_dt_iov_t *iov, size_t n, size_t *count)
{
    rp->op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    if (n == 1) {
        rp->datatype = ucp_dt_make_contig(1);
        *count = iov[0].length;
        return iov[0].buffer;
    }
    rp->datatype = ucp_dt_make_iov();
    *count = n;
    return iov;
}

unsigned ddio_ucx_progress(struct ddio_ucx *u)
{
    return priv.worker_progress(u->w);
}

int ddio_ucx_prepare_wait(struct ddio_ucx *u)
{
    while (priv.worker_progress(u->w))
        ;
    return priv.worker_arm(u->w) == UCS_ERR_BUSY;
}

void ddio_ucx_lock(struct ddio_ucx *u) { pthread_mutex_lock(&u->mu); }
void ddio_ucx_unlock(struct ddio_ucx *u) { pthread_mutex_unlock(&u->mu); }

/* ---- PUT messages into sinks ---------------------------------------------------------- */

/* one receive in flight into a sink */
struct precv {
    struct ddio_ucx *u;
    struct ddio_ucx_sink *s;
    struct ddio_segs sg;
    ucp_dt_iov_t *iov;
};

static void precv_end(struct precv *r, ucs_status_t st)
{
    struct ddio_ucx *u = r->u;
    pthread_mutex_lock(&u->mu);
    struct ddio_ucx_sink *s = r->s;
    if (st == UCS_OK) {
        s->got += r->sg.total;
        for (uint32_t i = 0; i < r->sg.nseg; i++)
            if (s->landed)
                s->landed(s->arg, &r->sg.seg[i]);
    } else if (!s->err) {
        s->err = EIO;
    }
    s->busy--;
    u->fetches_done++;
    pthread_mutex_unlock(&u->mu);
    ddio_segs_free(&r->sg);
    free(r->iov);
    free(r);
}

static void precv_cb(void *req, ucs_status_t st, size_t len, void *arg)
{
    (void)len;
    api.request_free(req);
    precv_end(arg, st);
}

static struct ddio_ucx_sink *sink_find(struct ddio_ucx *u, uint64_t token)
{
    struct ddio_ucx_sink *s = u->sinks;
    while (s && s->token != token)
        s = s->next;
    return s;
}

/* segments inside the sink and adding up to the body */
static int segs_fit(const struct ddio_ucx_sink *s, const struct ddio_segs *sg, size_t len)
{
    if (sg->total != len)
        return 0;
    for (uint32_t i = 0; i < sg->nseg; i++)
        if (sg->seg[i].off > s->len || sg->seg[i].len > s->len - sg->seg[i].off)
            return 0;
    return 1;
}

static void eager_copy(struct ddio_ucx_sink *s, const struct ddio_segs *sg, const uint8_t *data)
{
    for (uint32_t i = 0; i < sg->nseg; i++) {
        memcpy(s->buf + sg->seg[i].off, data, sg->seg[i].len);
        data += sg->seg[i].len;
        if (s->landed)
            s->landed(s->arg, &sg->seg[i]);
    }
    s->got += sg->total;
}

/* the body of a rendezvous PUT: fetched straight into the buffer */
static void rndv_recv(struct ddio_ucx *u, struct ddio_ucx_sink *s, struct precv *r, void *data)
{
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                              UCP_OP_ATTR_FIELD_USER_DATA,
                              .cb.recv_am = precv_cb, .user_data = r};
    size_t n = 0, count;
    for (uint32_t i = 0; i < r->sg.nseg; i++) {         /* stream-adjacent pieces merged */
        uint8_t *p = s->buf + r->sg.seg[i].off;
        if (n > 0 && (uint8_t *)r->iov[n - 1].buffer + r->iov[n - 1].length == p)
            r->iov[n - 1].length += r->sg.seg[i].len;
        else
            r->iov[n++] = (ucp_dt_iov_t){p, r->sg.seg[i].len};
    }
    void *dst = ddio_ucx_buf(&rp, r->iov, n, &count);
    ucs_status_ptr_t q = api.am_recv_data_nbx(u->w, data, dst, count, &rp);
    if (q == NULL || UCS_PTR_IS_ERR(q))
        precv_end(r, q ? UCS_PTR_STATUS(q) : UCS_OK);
}

/* DDIO_CLIENT_FAULT=put:N (testing only): the process SIGKILLs itself on
 * the N-th PUT it receives, before fetching its body, so that the server's
 * sends to it are in flight when it dies (test/mpi/rank-killed.sh putkill) */
static long put_fault = -1;
static _Atomic long puts_seen;

static void put_fault_init(void)
{
    const char *f = getenv("DDIO_CLIENT_FAULT");
    if (f && !strncmp(f, "put:", 4))
        put_fault = atol(f + 4);
}

static ucs_status_t put_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                           const ucp_am_recv_param_t *p)
{
    struct ddio_ucx *u = arg;
    if (put_fault > 0 && ++puts_seen == put_fault)
        raise(SIGKILL);
    struct precv *r = calloc(1, sizeof(*r));
    uint64_t token;
    if (!r)
        return UCS_OK;            /* dropped: the call ends short, with a clear error */
    r->u = u;
    int bad = ddio_dec_am_put(hdr, hlen, &token, &r->sg);
    pthread_mutex_lock(&u->mu);
    u->puts_in++;
    struct ddio_ucx_sink *s = bad ? NULL : sink_find(u, token);
    if (s && !segs_fit(s, &r->sg, len))
        s->err = EPROTO, s = NULL;
    if (s && !(p->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV))
        eager_copy(s, &r->sg, data), s = NULL;
    else if (s && !(r->iov = calloc(r->sg.nseg ? r->sg.nseg : 1, sizeof(*r->iov))))
        s->err = ENOMEM, s = NULL;
    if (s) {
        r->s = s;
        s->busy++;
        u->fetches++;
    } else if (p->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)
        u->puts_dropped++;
    pthread_mutex_unlock(&u->mu);
    if (!s) {                     /* done with it (copied, or refused) */
        ddio_segs_free(&r->sg);
        free(r->iov);
        free(r);
        return UCS_OK;
    }
    rndv_recv(u, s, r, data);
    return UCS_INPROGRESS;
}

void ddio_ucx_sink_add(struct ddio_ucx *u, struct ddio_ucx_sink *s)
{
    pthread_mutex_lock(&u->mu);
    s->token = ++u->next_token;
    s->got = 0;
    s->err = 0;
    s->busy = 0;
    s->next = u->sinks;
    u->sinks = s;
    pthread_mutex_unlock(&u->mu);
}

int ddio_ucx_sink_remove(struct ddio_ucx *u, struct ddio_ucx_sink *s, int64_t dl)
{
    pthread_mutex_lock(&u->mu);
    for (struct ddio_ucx_sink **pp = &u->sinks; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    while (s->busy > 0 && ddio_now_ms() < dl) {
        pthread_mutex_unlock(&u->mu);
        if (!priv.worker_progress(u->w))
            sched_yield();
        pthread_mutex_lock(&u->mu);
    }
    int busy = s->busy;
    pthread_mutex_unlock(&u->mu);
    return busy ? -ETIMEDOUT : 0;
}

void ddio_ucx_put_counts(struct ddio_ucx *u, char *buf, size_t n)
{
    pthread_mutex_lock(&u->mu);
    snprintf(buf, n, "%" PRIu64 " PUTs arrived here, %" PRIu64 " fetched of %" PRIu64
             " started, %" PRIu64 " dropped", u->puts_in, u->fetches_done, u->fetches,
             u->puts_dropped);
    pthread_mutex_unlock(&u->mu);
}

void ddio_ucx_sink_peek(struct ddio_ucx *u, const struct ddio_ucx_sink *s, uint64_t *got,
                        int *err)
{
    pthread_mutex_lock(&u->mu);
    *got = s->got;
    *err = s->err;
    pthread_mutex_unlock(&u->mu);
}

/* ---- the client context ----------------------------------------------------------------- */

static pthread_once_t client_once = PTHREAD_ONCE_INIT;
static struct ddio_ucx *client_ctx;
static char client_err[256];

static void client_init(void)
{
    put_fault_init();
    struct ddio_ucx *u = ddio_ucx_open(client_err, sizeof(client_err));
    if (!u)
        return;
    ucp_am_handler_param_t hp = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                                               UCP_AM_HANDLER_PARAM_FIELD_CB |
                                               UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                 .id = DDIO_AM_PUT, .cb = put_cb, .arg = u};
    ucs_status_t st = api.worker_set_am_recv_handler(u->w, &hp);
    if (st != UCS_OK) {
        ucx_fail(client_err, sizeof(client_err), "active message handler", st);
        ddio_ucx_close(u);
        return;
    }
    client_ctx = u;
}

struct ddio_ucx *ddio_ucx_client(char *err, size_t n)
{
    pthread_once(&client_once, client_init);
    if (!client_ctx)
        snprintf(err, n, "%s", client_err);
    return client_ctx;
}

ucs_status_t ddio_ucx_wait(struct ddio_ucx *u, ucs_status_ptr_t r, int64_t dl)
{
    if (r == NULL || UCS_PTR_IS_ERR(r))
        return UCS_PTR_STATUS(r);
    ucs_status_t st;
    while ((st = api.request_check_status(r)) == UCS_INPROGRESS && ddio_now_ms() < dl) {
        if (priv.worker_progress(u->w))
            continue;
        /* nothing moved: sleep on the worker's fd (1 ms slices: UCX's fd
         * may miss an event) rather than spin. What this waits for (an
         * endpoint's wire-up, a close) needs the server's CPU: 4 ranks
         * spinning here on a 2-core host took it from both servers. */
        if (ddio_ucx_prepare_wait(u) || api.request_check_status(r) != UCS_INPROGRESS)
            continue;
        struct pollfd pf = {.fd = u->efd, .events = POLLIN};
        int64_t left = dl - ddio_now_ms();
        poll(&pf, 1, left < 1 ? 0 : 1);
    }
    if (st != UCS_INPROGRESS)
        api.request_free(r);
    return st;
}

/* A flushing close: UCX 1.13 refuses UCP_EP_CLOSE_FLAG_FORCE
 * (UCS_ERR_INVALID_PARAM, the endpoint left open) on an endpoint without
 * UCP_ERR_HANDLING_MODE_PEER, which ours never have (docs/TRANSPORT.md). An
 * endpoint whose peer failed has had its lanes discarded, so this ends at
 * once; one whose peer is silent may outlive dl, and then stays UCX's. */
void ddio_ucx_close_ep(struct ddio_ucx *u, ucp_ep_h ep, int64_t dl)
{
    ucp_request_param_t rp = {.op_attr_mask = 0};
    ucs_status_ptr_t r = api.ep_close_nbx(ep, &rp);
    /* a close still going at dl is released: UCX frees it when it ends, and
     * ucp_worker_destroy asserts on an unreleased one (a server stopped with
     * clients connected aborted there) */
    if (ddio_ucx_wait(u, r, dl) == UCS_INPROGRESS)
        api.request_free(r);
}

/* ATTACH: the cookie and, when the server offers it, this worker's
 * address, from which the server makes its own endpoint back to us for the
 * PUTs: UCX destroys a reply endpoint, never exposed to a user, when its
 * peer dies, under a server thread sending on it. The reply flag is kept:
 * the way back of a server of before, or should the server's own endpoint
 * fail to be made. Waits (progressing) until it left. */
static int attach(struct ddio_ucx_ep *e, uint64_t cookie, int own_ep, int64_t dl, char *err,
                  size_t n)
{
    uint8_t hdr[8];
    size_t alen = 0;
    const void *addr = own_ep ? ddio_ucx_address(e->u, &alen) : NULL;
    for (int i = 0; i < 8; i++)
        hdr[i] = (uint8_t)(cookie >> (8 * i));
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                              .flags = UCP_AM_SEND_FLAG_REPLY};
    ucs_status_t st = ddio_ucx_wait(e->u, api.am_send_nbx(e->ep, DDIO_AM_ATTACH, hdr,
                                                          sizeof(hdr), addr, alen, &rp), dl);
    if (st == UCS_INPROGRESS)
        st = UCS_ERR_TIMED_OUT;
    return st == UCS_OK ? 0 : ucx_fail(err, n, "attaching to the server", st);
}

/* nothing to do here: the requests on the endpoint fail, and the peer's
 * TCP connection, which breaks too, drives the recovery */
static void ep_failed(void *arg, ucp_ep_h ep, ucs_status_t st)
{
    (void)arg;
    (void)ep;
    (void)st;
}

ucs_status_t ddio_ucx_ep_create(struct ddio_ucx *u, const void *addr, ucp_ep_h *ep)
{
    ucp_ep_params_t p = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                                       UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                       UCP_EP_PARAM_FIELD_ERR_HANDLER,
                         .address = (const ucp_address_t *)addr,
                         .err_mode = UCP_ERR_HANDLING_MODE_NONE,
                         .err_handler = {.cb = ep_failed, .arg = NULL}};
    return api.ep_create(u->w, &p, ep);
}

struct ddio_ucx_ep *ddio_ucx_connect(struct ddio_ucx *u, const void *addr, size_t len,
                                     uint64_t cookie, int own_ep, int64_t dl, char *err,
                                     size_t n)
{
    (void)len;
    struct ddio_ucx_ep *e = calloc(1, sizeof(*e));
    if (!e) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    /* a server that dies while this process copies from its memory then
     * fails the request instead of aborting the process */
    ucs_status_t st = ddio_ucx_ep_create(u, addr, &e->ep);
    if (st != UCS_OK) {
        ucx_fail(err, n, "endpoint to the server's worker", st);
        free(e);
        return NULL;
    }
    e->u = u;
    if (attach(e, cookie, own_ep, dl, err, n)) {
        ddio_ucx_disconnect(e);
        return NULL;
    }
    return e;
}

/* The endpoint is left to the worker, which lives until the process exits:
 * UCX 1.13 force-closes only endpoints in peer-failure mode (ours are not,
 * docs/TRANSPORT.md), and this runs when the connection failed, typically
 * because the server died, where a flushing close would print UCX's errors
 * into the application's output. One endpoint per lost connection. */
void ddio_ucx_disconnect(struct ddio_ucx_ep *e)
{
    free(e);
}

/* ---- DATA sends ----------------------------------------------------------------------------- */

struct dsend {
    struct ddio_ucx *u;
    struct ddio_ucx_sends *s;
    uint8_t hdr[DDIO_AM_DATA_HDR];
    ucp_dt_iov_t iov[];
};

static void dsend_end(struct dsend *d, ucs_status_t st)
{
    pthread_mutex_lock(&d->u->mu);
    if (st != UCS_OK && !d->s->err)
        d->s->err = EIO;
    d->s->busy--;
    pthread_mutex_unlock(&d->u->mu);
    free(d);
}

static void dsend_cb(void *req, ucs_status_t st, void *arg)
{
    api.request_free(req);
    dsend_end(arg, st);
}

int ddio_ucx_send_data(struct ddio_ucx *u, struct ddio_ucx_ep *ep, uint64_t cookie,
                       uint64_t req, uint32_t tag, const struct iovec *iov, int n,
                       struct ddio_ucx_sends *s)
{
    struct dsend *d = malloc(sizeof(*d) + (size_t)n * sizeof(ucp_dt_iov_t));
    if (!d)
        return -ENOMEM;
    d->u = u;
    d->s = s;
    ddio_enc_am_data(d->hdr, cookie, req, tag);
    for (int i = 0; i < n; i++)
        d->iov[i] = (ucp_dt_iov_t){iov[i].iov_base, iov[i].iov_len};
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                              UCP_OP_ATTR_FIELD_USER_DATA,
                              .cb.send = dsend_cb, .user_data = d};
    size_t count;
    void *buf = ddio_ucx_buf(&rp, d->iov, (size_t)n, &count);
    pthread_mutex_lock(&u->mu);
    s->busy++;
    pthread_mutex_unlock(&u->mu);
    ucs_status_ptr_t r = api.am_send_nbx(ep->ep, DDIO_AM_DATA, d->hdr, sizeof(d->hdr), buf,
                                         count, &rp);
    if (r == NULL || UCS_PTR_IS_ERR(r)) {
        dsend_end(d, r ? UCS_PTR_STATUS(r) : UCS_OK);
        return r ? -EIO : 0;
    }
    return 0;
}

int ddio_ucx_sends_wait(struct ddio_ucx *u, struct ddio_ucx_sends *s, int64_t dl)
{
    pthread_mutex_lock(&u->mu);
    while (s->busy > 0 && ddio_now_ms() < dl) {
        pthread_mutex_unlock(&u->mu);
        if (!priv.worker_progress(u->w))
            sched_yield();
        pthread_mutex_lock(&u->mu);
    }
    int rc = s->busy > 0 ? -ETIMEDOUT : s->err ? -s->err : 0;
    pthread_mutex_unlock(&u->mu);
    return rc;
}

#endif
