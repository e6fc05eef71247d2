/* The UCX transport (ucx.h, ddio_ucx.h, docs/TRANSPORT.md): the server's
 * worker and its progress thread, start and stop, and a connection's
 * endpoint with the transport's ops (ucx_ep_new). The endpoints' state and
 * ATTACH are in ucx_ep.c, the data path (PUT, GET, DATA) in ucx_data.c.
 *
 * Large bodies travel by UCX's rendezvous: the receiver fetches them from
 * the sender's memory (CMA on one host, RDMA on a fabric), so each byte is
 * copied once. Nothing here holds one of its own mutexes while calling
 * into UCX: callbacks run under UCX's worker lock and take ours. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ucx.h"
#include "cond.h"

#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "ddio_ucx.h"
#include "server.h"

#ifndef DDIO_HAVE_UCX

int ucx_start(struct server *srv, char *err, size_t n)
{
    if (srv->cfg.transport == DDIO_XPORT_UCX) {
        snprintf(err, n, "--transport ucx: this server was built without UCX (libucx-dev)");
        return -ENOSYS;
    }
    return 0;
}
void ucx_stop(struct server *srv) { (void)srv; }
void ucx_destroy(struct server *srv) { (void)srv; }
int ucx_offered(const struct server *srv) { (void)srv; return 0; }
struct uep *ucx_ep_new(struct server *srv, struct xp *ctl, char *err, size_t n)
{
    (void)srv; (void)ctl;
    snprintf(err, n, "this server has no UCX");
    return NULL;
}
int ucx_ep_reply(struct uep *u, struct ddio_wbuf *w) { (void)u; (void)w; return -ENOSYS; }
int ucx_bind(struct uep *u, uint64_t req, const struct ddio_xfer *m, char *err, size_t n)
{
    (void)u; (void)req; (void)m;
    snprintf(err, n, "this server has no UCX");
    return -EPROTO;
}
struct xp *ucx_xp(struct uep *u) { (void)u; return NULL; }
void ucx_ep_close(struct uep *u) { (void)u; }

#else

#include <ucs/debug/log_def.h>

#include "ucx_data.h"
#include "ucx_ep.h"

/* UCX 1.13's wake-up fd can miss a shared-memory event (ddio leaves the
 * posix/sysv transports out unless UCX_TLS names them, see ddio_ucx.c): the
 * progress thread's sleep is sliced so a missed one costs at most this */
#define PROGRESS_SLICE_MS 1
/* after this long without events the thread sleeps in longer slices (an
 * idle server at 1 ms slices took 3 % of a core); the first event after a
 * quiet spell is noticed by the fd, or at worst after IDLE_SLICE_MS */
#define IDLE_AFTER_MS 2000
#define IDLE_SLICE_MS 50

/* ---- the progress thread ------------------------------------------------------------ */

static void *progress_main(void *arg)
{
    struct srv_ucx *su = arg;
    int efd = ddio_ucx_efd(su->u);
    int64_t busy_until = 0;
    while (!atomic_load(&su->stop)) {
        if (atomic_exchange(&su->eps_wanted, 0))
            ucx_make_eps(su);
        if (ddio_ucx_prepare_wait(su->u)) {
            busy_until = ddio_now_ms() + IDLE_AFTER_MS;
            continue;
        }
        struct pollfd pf = {.fd = efd, .events = POLLIN};
        int64_t now = ddio_now_ms();
        int busy = now < busy_until || now < atomic_load(&su->last_op_ms) + IDLE_AFTER_MS;
        int woke = poll(&pf, 1, busy ? PROGRESS_SLICE_MS : IDLE_SLICE_MS);
        if (woke > 0)
            busy_until = ddio_now_ms() + IDLE_AFTER_MS;
    }
    return NULL;
}

int ucx_offered(const struct server *srv)
{
    return srv->ucx != NULL;
}

static int set_handler(struct srv_ucx *su, unsigned id, ucp_am_recv_callback_t cb, char *err,
                       size_t n)
{
    ucp_am_handler_param_t hp = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                                               UCP_AM_HANDLER_PARAM_FIELD_CB |
                                               UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                 .id = id, .cb = cb, .arg = su};
    ucs_status_t st = su->api->worker_set_am_recv_handler(su->w, &hp);
    if (st != UCS_OK)
        snprintf(err, n, "UCX: active message handler: %s", su->api->status_string(st));
    return st == UCS_OK ? 0 : -EIO;
}

/* UCX logs a failed flush as an error. The server closes an endpoint of
 * its own (a flushing close, ddio_ucx_close_ep) when the client's TCP
 * connection ends, mostly because the client exited: its failed flush is
 * expected there, and kept out of the server's log. */
static ucs_log_func_rc_t quiet_flush(const char *file, unsigned line, const char *fn,
                                     ucs_log_level_t level,
                                     const ucs_log_component_config_t *cc, const char *msg,
                                     va_list ap)
{
    (void)file;
    (void)line;
    (void)fn;
    (void)cc;
    (void)ap;
    return level == UCS_LOG_LEVEL_ERROR && msg && strstr(msg, "error during flush")
               ? UCS_LOG_FUNC_RC_STOP : UCS_LOG_FUNC_RC_CONTINUE;
}

static void quiet_flush_errors(void)
{
    void (*push)(ucs_log_func_t);
    *(void **)&push = dlsym(RTLD_DEFAULT, "ucs_log_push_handler");  /* libucs: ddio_ucx.c */
    if (push)
        push(quiet_flush);
}

static int su_init(struct srv_ucx *su, struct ddio_ucx *u, char *err, size_t n)
{
    su->u = u;
    su->api = ddio_ucx_api();
    su->w = ddio_ucx_worker(u);
    pthread_mutex_init(&su->mu, NULL);
    quiet_flush_errors();
    if (set_handler(su, DDIO_AM_DATA, ucx_data_cb, err, n) ||
        set_handler(su, DDIO_AM_ATTACH, ucx_attach_cb, err, n))
        return -EIO;
    if (pthread_key_create(&su->tkey, tput_free)) {
        snprintf(err, n, "out of thread keys");
        return -EAGAIN;
    }
    if (pthread_create(&su->thr, NULL, progress_main, su)) {
        pthread_key_delete(su->tkey);
        snprintf(err, n, "cannot start the UCX progress thread");
        return -EAGAIN;
    }
    return 0;
}

int ucx_start(struct server *srv, char *err, size_t n)
{
    char why[256];
    if (ddio_xport_resolve(srv->cfg.transport, -1, why, sizeof(why)) == DDIO_XPORT_TCP) {
        if (srv->cfg.transport == DDIO_XPORT_AUTO)
            DDIO_INFO("UCX not offered (%s): data moves over TCP", why);
        return 0;
    }
    struct ddio_ucx *u = ddio_ucx_open(why, sizeof(why));
    if (!u) {
        if (srv->cfg.transport == DDIO_XPORT_UCX) {
            snprintf(err, n, "--transport ucx: %s", why);
            return -ENOSYS;
        }
        DDIO_WARN("UCX not available (%s): data moves over TCP only", why);
        return 0;
    }
    struct srv_ucx *su = calloc(1, sizeof(*su));
    int rc = su ? su_init(su, u, err, n) : -ENOMEM;
    if (rc) {
        if (!su)
            snprintf(err, n, "out of memory");
        free(su);
        ddio_ucx_close(u);
        return rc;
    }
    srv->ucx = su;
    DDIO_INFO("UCX: data by active messages offered to clients");
    return 0;
}

void ucx_stop(struct server *srv)
{
    struct srv_ucx *su = srv->ucx;
    if (!su)
        return;
    atomic_store(&su->stop, 1);
    su->api->worker_signal(su->w);
    pthread_join(su->thr, NULL);
}

void ucx_destroy(struct server *srv)
{
    struct srv_ucx *su = srv->ucx;
    if (!su)
        return;
    srv->ucx = NULL;
    pthread_key_delete(su->tkey);
    pthread_mutex_destroy(&su->mu);
    ddio_ucx_close(su->u);        /* no callback runs after this */
    while (su->given_up) {
        struct opset *o = su->given_up;
        su->given_up = o->next;
        opset_free(o);
    }
    free(su);
}

/* ---- a connection's endpoint -------------------------------------------------------- */

static const struct xport_ops ucx_ops = {
    .ref = uep_ref, .unref = uep_unref, .name = uep_name, .reply = uep_reply,
    .progress = uep_progress, .put = ux_put, .get = ux_get, .cancel = ux_cancel,
    .sync = ux_sync, .sends_in_place = 1,
};

/* a cookie nobody can guess: DATA and ATTACH messages name their
 * connection by it */
static uint64_t new_cookie(void)
{
    uint64_t c = 0;
    while (c == 0 && getrandom(&c, sizeof(c), 0) != (ssize_t)sizeof(c))
        ;
    return c;
}

struct uep *ucx_ep_new(struct server *srv, struct xp *ctl, char *err, size_t n)
{
    struct srv_ucx *su = srv->ucx;
    if (!su) {
        snprintf(err, n, "this server does not offer UCX");
        return NULL;
    }
    struct uep *u = calloc(1, sizeof(*u));
    if (!u) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    u->xp = (struct xp){.ops = &ucx_ops, .srv = srv};
    u->ctl = ctl;
    xp_ref(ctl);
    u->su = su;
    u->cookie = new_cookie();
    atomic_init(&u->refs, 1);     /* the connection's */
    pthread_mutex_init(&u->mu, NULL);
    cond_init_mono(&u->cv);
    pthread_mutex_lock(&su->mu);
    u->next = su->ueps;
    su->ueps = u;
    pthread_mutex_unlock(&su->mu);
    stats_bump(&srv->stats, &srv->stats.ucx_eps);
    /* the client wires up an endpoint to our worker next (UCX's own
     * messages, then ATTACH): count it as activity and wake the progress
     * thread, so that it polls in 1 ms slices, not an idle server's 50 ms
     * ones (a job's first open against fresh servers, 4 ranks: some
     * endpoints took 50-67 ms before, against 1-3 ms to a busy server) */
    atomic_store(&su->last_op_ms, ddio_now_ms());
    su->api->worker_signal(su->w);
    return u;
}

#endif
