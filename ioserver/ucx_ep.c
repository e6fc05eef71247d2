/* The UCX transport's endpoints: a connection's endpoint, its references
 * and its close, the ATTACH that gives it the way to the client, and the
 * bindings of the XFERs that run on it (ucx_ep.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ucx.h"
#include "ucx_ep.h"

#ifdef DDIO_HAVE_UCX

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cond.h"
#include "ddio_log.h"
#include "ddio_net.h"
#include "server.h"

/* how long an XFER waits for its connection's ATTACH message */
#define ATTACH_WAIT_MS 5000
/* how long a connection's end waits for its endpoint's flushing close (a
 * dead client's may never end: it is then left to UCX) */
#define CLOSE_QUICK_MS 200

void uep_ref(struct xp *ep)
{
    atomic_fetch_add(&uep_of(ep)->refs, 1);
}

/* Release the UCX endpoint (once): no new operation starts on it, and ours
 * is closed. The close flushes (UCX 1.13 force-closes only endpoints in
 * peer-failure mode): at once when the client's failure discarded its
 * lanes, else left to UCX after CLOSE_QUICK_MS; a thread still waiting for
 * sends to it gives them up CLOSED_GRACE_MS later (progress_until). */
void uep_release_ep(struct uep *u)
{
    pthread_mutex_lock(&u->mu);
    u->dead = 1;
    while (u->users > 0)
        pthread_cond_wait(&u->cv, &u->mu);
    int first = !u->closed;
    __atomic_store_n(&u->closed, 1, __ATOMIC_RELEASE);   /* read by progress_until */
    ucp_ep_h ep = u->ep_ours ? u->ep : NULL;
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
    if (!first)
        return;
    pthread_mutex_lock(&u->su->mu);           /* no DATA finds it any more */
    for (struct uep **pp = &u->su->ueps; *pp; pp = &(*pp)->next)
        if (*pp == u) {
            *pp = u->next;
            break;
        }
    pthread_mutex_unlock(&u->su->mu);
    if (ep)                       /* else never attached, or UCX's reply endpoint */
        ddio_ucx_close_ep(u->su->u, ep, ddio_now_ms() + CLOSE_QUICK_MS);
}

void uep_unref(struct xp *ep)
{
    struct uep *u = uep_of(ep);
    if (atomic_fetch_sub(&u->refs, 1) != 1)
        return;
    uep_release_ep(u);
    while (u->binds) {
        struct bind *b = u->binds;
        u->binds = b->next;
        free(b);
    }
    free(u->peer);
    xp_unref(u->ctl);
    pthread_mutex_destroy(&u->mu);
    pthread_cond_destroy(&u->cv);
    free(u);
}

const char *uep_name(const struct xp *ep)
{
    return xp_name(uep_of(ep)->ctl);
}

/* a thread starts issuing operations: 0, or -ECONNRESET once closed */
int uep_enter(struct uep *u)
{
    pthread_mutex_lock(&u->mu);
    int dead = u->dead;
    if (!dead)
        u->users++;
    pthread_mutex_unlock(&u->mu);
    return dead ? -ECONNRESET : 0;
}

void uep_leave(struct uep *u)
{
    pthread_mutex_lock(&u->mu);
    if (--u->users == 0)
        pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
}

int uep_bind_find(struct uep *u, uint64_t req, struct bind *out)
{
    pthread_mutex_lock(&u->mu);
    struct bind *b = u->binds;
    while (b && b->req != req)
        b = b->next;
    if (b)
        *out = *b;
    pthread_mutex_unlock(&u->mu);
    return b ? 0 : -1;
}

static void bind_drop(struct uep *u, uint64_t req)
{
    struct bind *found = NULL;
    pthread_mutex_lock(&u->mu);
    for (struct bind **pp = &u->binds; *pp; pp = &(*pp)->next)
        if ((*pp)->req == req) {
            found = *pp;
            *pp = found->next;
            break;
        }
    pthread_mutex_unlock(&u->mu);
    free(found);
}

struct uep *uep_by_cookie(struct srv_ucx *su, uint64_t cookie)
{
    pthread_mutex_lock(&su->mu);
    struct uep *u = su->ueps;
    while (u && u->cookie != cookie)
        u = u->next;
    if (u)
        atomic_fetch_add(&u->refs, 1);
    pthread_mutex_unlock(&su->mu);
    return u;
}

/* ATTACH (the first one of a cookie; an unknown cookie is dropped): the
 * client's worker address, from which ucx_make_eps makes the server's own
 * endpoint back to it, outside this callback. A client of before sends no
 * address: its reply endpoint is used, as then. */
ucs_status_t ucx_attach_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                           const ucp_am_recv_param_t *p)
{
    struct srv_ucx *su = arg;
    uint64_t cookie = 0;
    ucp_ep_h reply = (p->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? p->reply_ep : NULL;
    /* an address is here now (eager), never fetched */
    if (hlen != 8 || len > DDIO_MAX_UCXADDR || (p->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) ||
        (len && !data) || (!len && !reply))
        return UCS_OK;
    for (int i = 0; i < 8; i++)
        cookie |= (uint64_t)((const uint8_t *)hdr)[i] << (8 * i);
    struct uep *u = uep_by_cookie(su, cookie);
    if (!u)
        return UCS_OK;
    void *peer = len ? malloc(len) : NULL;
    if (peer)
        memcpy(peer, data, len);
    pthread_mutex_lock(&u->mu);
    if (!u->ep && !u->peer && !u->dead) {
        if (peer) {
            u->peer = peer;
            u->peer_len = len;
            u->reply_ep = reply;
            peer = NULL;
            atomic_store(&su->eps_wanted, 1);   /* this thread, once back from progress */
        } else if (!len)
            u->ep = reply;
        else
            u->attach_failed = 1;               /* out of memory */
    }
    pthread_cond_broadcast(&u->cv);
    pthread_mutex_unlock(&u->mu);
    free(peer);
    xp_unref(&u->xp);
    return UCS_OK;
}

/* the next endpoint an ATTACH asked for (a reference taken), or NULL; only
 * the progress thread makes endpoints, so none is picked twice */
static struct uep *eps_next(struct srv_ucx *su)
{
    struct uep *u = NULL;
    pthread_mutex_lock(&su->mu);
    for (struct uep *x = su->ueps; x && !u; x = x->next) {
        pthread_mutex_lock(&x->mu);
        if (x->peer && !x->ep && !x->dead && !x->attach_failed) {
            u = x;
            atomic_fetch_add(&u->refs, 1);
        }
        pthread_mutex_unlock(&x->mu);
    }
    pthread_mutex_unlock(&su->mu);
    return u;
}

/* The server's own endpoints to the clients that ATTACHed (progress thread,
 * outside UCX's callbacks). Made as the clients' are (ddio_ucx_ep_create),
 * so UCX counts them as the user's: a dead peer fails their sends, where
 * UCX 1.13 destroys a reply endpoint outright, under whichever thread is
 * sending on it (a crash in ucp_am_send_nbx, once in ~35 rank-killed runs). */
void ucx_make_eps(struct srv_ucx *su)
{
    struct uep *u;
    while ((u = eps_next(su)) != NULL) {
        ucp_ep_h ep = NULL;
        ucs_status_t st = ddio_ucx_ep_create(su->u, u->peer, &ep);
        if (st != UCS_OK)
            DDIO_WARN("UCX endpoint to %s: %s; its reply endpoint is used instead",
                      xp_name(u->ctl), su->api->status_string(st));
        pthread_mutex_lock(&u->mu);
        int keep = st == UCS_OK && !u->dead;
        if (keep) {
            u->ep = ep;
            u->ep_ours = 1;
        }
        else if (st != UCS_OK && u->reply_ep && !u->dead)
            u->ep = u->reply_ep;
        else
            u->attach_failed = 1;
        free(u->peer);
        u->peer = NULL;
        pthread_cond_broadcast(&u->cv);
        pthread_mutex_unlock(&u->mu);
        if (st == UCS_OK && !keep)
            ddio_ucx_close_ep(su->u, ep, ddio_now_ms() + CLOSE_QUICK_MS);
        uep_unref(&u->xp);
    }
}

/* ---- replies: through the control connection -------------------------------------------- */

int uep_reply(struct xp *ep, uint16_t type, uint64_t req, int32_t status,
              uint8_t *payload, size_t len, int64_t dl)
{
    struct uep *u = uep_of(ep);
    if (type == (DDIO_T_XFER | DDIO_REPLY))
        bind_drop(u, req);        /* its sends were synced with their blocks */
    return xp_reply(u->ctl, type, req, status, payload, len, dl);
}

int uep_progress(struct xp *ep, uint64_t req, int64_t dl)
{
    return xp_progress(uep_of(ep)->ctl, req, dl);
}

/* the UCXADDR reply: this connection's cookie and the server's address */
int ucx_ep_reply(struct uep *u, struct ddio_wbuf *w)
{
    size_t alen;
    const void *addr = ddio_ucx_address(u->su->u, &alen);
    ddio_enc_ucxaddr_r(w, u->cookie, addr, (uint32_t)alen);
    return w->err;
}

int ucx_bind(struct uep *u, uint64_t req, const struct ddio_xfer *m, char *err, size_t n)
{
    struct bind *b = calloc(1, sizeof(*b));
    if (!b) {
        snprintf(err, n, "out of memory");
        return -ENOMEM;
    }
    *b = (struct bind){.req = req, .token = m->ucx_token, .len = m->ucx_len};
    pthread_mutex_lock(&u->mu);
    int64_t dl = ddio_now_ms() + ATTACH_WAIT_MS;   /* the ATTACH may still be on its way */
    while (!u->ep && !u->dead && !u->attach_failed &&
           cond_wait_ms(&u->cv, &u->mu, dl) != ETIMEDOUT)
        ;
    int dup = 0, dead = u->dead || !u->ep;
    for (struct bind *o = u->binds; o; o = o->next)
        dup |= o->req == req;
    if (!dup && !dead) {
        b->next = u->binds;
        u->binds = b;
    }
    pthread_mutex_unlock(&u->mu);
    if (dup || dead) {
        free(b);
        snprintf(err, n, dead ? "the connection's UCX endpoint is closed or was never attached"
                              : "XFER request id %llu is already in progress",
                 (unsigned long long)req);
        return dead ? -ECONNRESET : -EPROTO;
    }
    return 0;
}

struct xp *ucx_xp(struct uep *u)
{
    return &u->xp;
}

void ucx_ep_close(struct uep *u)
{
    uep_release_ep(u);
    uep_unref(&u->xp);
}

#endif
