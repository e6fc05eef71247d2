/* UCX loaded at run time, contexts, and the client's registration cache
 * (see ddio_ucx.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_ucx.h"
#include "ddio_proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int ddio_xport_parse(const char *s)
{
    if (!s || !*s || !strcasecmp(s, "auto"))
        return DDIO_XPORT_AUTO;
    if (!strcasecmp(s, "tcp"))
        return DDIO_XPORT_TCP;
    if (!strcasecmp(s, "ucx"))
        return DDIO_XPORT_UCX;
    return -1;
}

int ddio_xport_env(char *err, size_t n)
{
    const char *s = getenv("DDIO_TRANSPORT");
    int t = ddio_xport_parse(s);
    if (t < 0)
        snprintf(err, n, "DDIO_TRANSPORT=%s: unknown transport (auto, ucx or tcp)", s);
    return t;
}

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
int ddio_ucx_reg(struct ddio_ucx *u, void *buf, uint64_t len, struct ddio_ucx_key *k,
                 char *err, size_t n)
{
    (void)u; (void)buf; (void)len; (void)k;
    snprintf(err, n, "no UCX");
    return -ENOSYS;
}
void ddio_ucx_unreg(struct ddio_ucx *u, struct ddio_ucx_key *k) { (void)u; (void)k; }
void ddio_ucx_reg_counts(const struct ddio_ucx *u, uint64_t *made, uint64_t *hits)
{
    (void)u;
    *made = *hits = 0;
}

#else

#include <dlfcn.h>
#include <pthread.h>
#include <ucm/api/ucm.h>

/* what only this file calls, beside the public table */
struct ucx_priv_api {
    ucs_status_t (*config_read)(const char *, const char *, ucp_config_t **);
    void (*config_release)(ucp_config_t *);
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
    ucs_status_t (*mem_map)(ucp_context_h, const ucp_mem_map_params_t *, ucp_mem_h *);
    ucs_status_t (*mem_unmap)(ucp_context_h, ucp_mem_h);
    ucs_status_t (*rkey_pack)(ucp_context_h, ucp_mem_h, void **, size_t *);
    void (*rkey_buffer_release)(void *);
    ucs_status_t (*ucm_set_event_handler)(int, int, ucm_event_callback_t, void *);
    void (*ucm_unset_event_handler)(int, ucm_event_callback_t, void *);
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

static void load(void)
{
    void *ucp = dlopen("libucp.so.0", RTLD_NOW | RTLD_GLOBAL);
    void *ucs = dlopen("libucs.so.0", RTLD_NOW | RTLD_GLOBAL);
    void *ucm = dlopen("libucm.so.0", RTLD_NOW | RTLD_GLOBAL);
    if (!ucp || !ucs || !ucm) {
        snprintf(load_err, sizeof(load_err), "UCX libraries not loadable: %s", dlerror());
        return;
    }
    SYM(ucp, priv, config_read, "ucp_config_read");
    SYM(ucp, priv, config_release, "ucp_config_release");
    SYM(ucp, priv, init_version, "ucp_init_version");
    SYM(ucp, priv, cleanup, "ucp_cleanup");
    SYM(ucp, priv, worker_create, "ucp_worker_create");
    SYM(ucp, priv, worker_destroy, "ucp_worker_destroy");
    SYM(ucp, priv, worker_get_address, "ucp_worker_get_address");
    SYM(ucp, priv, worker_release_address, "ucp_worker_release_address");
    SYM(ucp, priv, worker_progress, "ucp_worker_progress");
    SYM(ucp, priv, worker_get_efd, "ucp_worker_get_efd");
    SYM(ucp, priv, worker_arm, "ucp_worker_arm");
    SYM(ucp, priv, mem_map, "ucp_mem_map");
    SYM(ucp, priv, mem_unmap, "ucp_mem_unmap");
    SYM(ucp, priv, rkey_pack, "ucp_rkey_pack");
    SYM(ucp, priv, rkey_buffer_release, "ucp_rkey_buffer_release");
    SYM(ucm, priv, ucm_set_event_handler, "ucm_set_event_handler");
    SYM(ucm, priv, ucm_unset_event_handler, "ucm_unset_event_handler");
    SYM(ucp, api, ep_create, "ucp_ep_create");
    SYM(ucp, api, ep_close_nbx, "ucp_ep_close_nbx");
    SYM(ucp, api, ep_flush_nbx, "ucp_ep_flush_nbx");
    SYM(ucp, api, ep_rkey_unpack, "ucp_ep_rkey_unpack");
    SYM(ucp, api, rkey_destroy, "ucp_rkey_destroy");
    SYM(ucp, api, put_nbx, "ucp_put_nbx");
    SYM(ucp, api, get_nbx, "ucp_get_nbx");
    SYM(ucp, api, request_check_status, "ucp_request_check_status");
    SYM(ucp, api, request_free, "ucp_request_free");
    SYM(ucp, api, worker_signal, "ucp_worker_signal");
    SYM(ucs, api, status_string, "ucs_status_string");
    loaded = 1;
}

const struct ddio_ucx_api *ddio_ucx_api(void)
{
    return loaded ? &api : NULL;
}

/* one cached registration */
struct reg {
    uintptr_t addr;
    uint64_t len;
    ucp_mem_h memh;
    void *rkey;
    size_t rkey_len;
    int refs;
    int stale;                   /* the range was unmapped: never handed out again */
    struct reg *next;
};
#define REG_CACHE_MAX 32

struct ddio_ucx {
    ucp_context_h ctx;
    ucp_worker_h w;
    int efd;
    ucp_address_t *addr;
    size_t alen;
    pthread_mutex_t mu;          /* recursive: the unmap hook may run inside our calls */
    struct reg *regs;
    int nregs, hooked;
    uint64_t made, hits;
};

ucp_context_h ddio_ucx_context(const struct ddio_ucx *u) { return u->ctx; }
ucp_worker_h ddio_ucx_worker(const struct ddio_ucx *u) { return u->w; }

static int ucx_fail(char *err, size_t n, const char *what, ucs_status_t st)
{
    snprintf(err, n, "UCX: %s: %s", what, api.status_string(st));
    return -EIO;
}

static int make_worker(struct ddio_ucx *u, char *err, size_t n)
{
    ucp_config_t *cfg;
    ucs_status_t st = priv.config_read(NULL, NULL, &cfg);
    if (st != UCS_OK)
        return ucx_fail(err, n, "reading the configuration", st);
    ucp_params_t pp = {.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
                       .features = UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP,
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
    pthread_mutexattr_t ma;
    pthread_mutexattr_init(&ma);
    pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&u->mu, &ma);
    pthread_mutexattr_destroy(&ma);
    if (make_worker(u, err, n)) {
        pthread_mutex_destroy(&u->mu);
        free(u);
        return NULL;
    }
    return u;
}

static void unhook(struct ddio_ucx *u);

static void reg_free(struct ddio_ucx *u, struct reg *r)
{
    priv.rkey_buffer_release(r->rkey);
    priv.mem_unmap(u->ctx, r->memh);
    free(r);
}

void ddio_ucx_close(struct ddio_ucx *u)
{
    if (!u)
        return;
    unhook(u);
    while (u->regs) {
        struct reg *r = u->regs;
        u->regs = r->next;
        reg_free(u, r);
    }
    priv.worker_release_address(u->w, u->addr);
    priv.worker_destroy(u->w);
    priv.cleanup(u->ctx);
    pthread_mutex_destroy(&u->mu);
    free(u);
}

static pthread_once_t client_once = PTHREAD_ONCE_INIT;
static struct ddio_ucx *client_ctx;
static char client_err[256];

static void client_init(void)
{
    client_ctx = ddio_ucx_open(client_err, sizeof(client_err));
}

struct ddio_ucx *ddio_ucx_client(char *err, size_t n)
{
    pthread_once(&client_once, client_init);
    if (!client_ctx)
        snprintf(err, n, "%s", client_err);
    return client_ctx;
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

/* ---- registration cache ---------------------------------------------------------- */

/* UCX's memory hooks: a registration whose range is (partly) unmapped must
 * never name that memory again (on RDMA hardware it still pins the old
 * pages). Called inside munmap: only marks. */
static void on_unmap(ucm_event_type_t type, ucm_event_t *ev, void *arg)
{
    struct ddio_ucx *u = arg;
    (void)type;
    uintptr_t lo = (uintptr_t)ev->vm_unmapped.address, hi = lo + ev->vm_unmapped.size;
    pthread_mutex_lock(&u->mu);
    for (struct reg *r = u->regs; r; r = r->next)
        if (r->addr < hi && lo < r->addr + r->len)
            r->stale = 1;
    pthread_mutex_unlock(&u->mu);
}

static void hook(struct ddio_ucx *u)
{
    if (!u->hooked && priv.ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 1000, on_unmap, u) ==
        UCS_OK)
        u->hooked = 1;
}

static void unhook(struct ddio_ucx *u)
{
    if (u->hooked)
        priv.ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, on_unmap, u);
    u->hooked = 0;
}

/* drop unused stale entries, and the oldest unused ones past the cap
 * (called with u->mu held; the list is newest first) */
static void reg_trim(struct ddio_ucx *u)
{
    int kept = 0;
    for (struct reg **pp = &u->regs; *pp;) {
        struct reg *r = *pp;
        if (r->refs == 0 && (r->stale || kept >= REG_CACHE_MAX)) {
            *pp = r->next;
            u->nregs--;
            reg_free(u, r);
            continue;
        }
        kept++;
        pp = &r->next;
    }
}

static struct reg *reg_find(struct ddio_ucx *u, uintptr_t a, uint64_t len)
{
    for (struct reg **pp = &u->regs; *pp; pp = &(*pp)->next) {
        struct reg *r = *pp;
        if (!r->stale && r->addr <= a && a + len <= r->addr + r->len) {
            *pp = r->next;        /* most recently used first */
            r->next = u->regs;
            u->regs = r;
            return r;
        }
    }
    return NULL;
}

static struct reg *reg_new(struct ddio_ucx *u, void *buf, uint64_t len, char *err, size_t n)
{
    struct reg *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, n, "out of memory");
        return NULL;
    }
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                             UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                               .address = buf, .length = len};
    ucs_status_t st = priv.mem_map(u->ctx, &mp, &r->memh);
    if (st != UCS_OK) {
        ucx_fail(err, n, "registering the buffer", st);
        free(r);
        return NULL;
    }
    if ((st = priv.rkey_pack(u->ctx, r->memh, &r->rkey, &r->rkey_len)) != UCS_OK ||
        r->rkey_len > DDIO_MAX_RKEY) {
        if (st == UCS_OK) {
            priv.rkey_buffer_release(r->rkey);
            snprintf(err, n, "UCX: packed key of %zu bytes is too long", r->rkey_len);
        } else {
            ucx_fail(err, n, "packing the key", st);
        }
        priv.mem_unmap(u->ctx, r->memh);
        free(r);
        return NULL;
    }
    r->addr = (uintptr_t)buf;
    r->len = len;
    return r;
}

int ddio_ucx_reg(struct ddio_ucx *u, void *buf, uint64_t len, struct ddio_ucx_key *k,
                 char *err, size_t n)
{
    pthread_mutex_lock(&u->mu);
    hook(u);
    struct reg *r = reg_find(u, (uintptr_t)buf, len);
    if (r) {
        u->hits++;
    } else if ((r = reg_new(u, buf, len, err, n))) {
        u->made++;
        r->next = u->regs;
        u->regs = r;
        u->nregs++;
    }
    if (r)
        r->refs++;
    reg_trim(u);
    pthread_mutex_unlock(&u->mu);
    if (!r)
        return -EIO;
    *k = (struct ddio_ucx_key){.rkey = r->rkey, .rkey_len = r->rkey_len, .entry = r};
    return 0;
}

void ddio_ucx_unreg(struct ddio_ucx *u, struct ddio_ucx_key *k)
{
    struct reg *r = k->entry;
    if (!r)
        return;
    pthread_mutex_lock(&u->mu);
    r->refs--;
    reg_trim(u);
    pthread_mutex_unlock(&u->mu);
    k->entry = NULL;
}

void ddio_ucx_reg_counts(const struct ddio_ucx *u, uint64_t *made, uint64_t *hits)
{
    *made = u->made;
    *hits = u->hits;
}

#endif
