/* The UCX transport's endpoints (ucx_ep.c), for ucx.c and ucx_data.c (the
 * rest of the server uses ucx.h): the server's UCX state, a connection's
 * endpoint, its references and close, the ATTACH that makes it usable, and
 * the bindings of its XFERs. */
#ifndef DDIO_SRV_UCX_EP_H
#define DDIO_SRV_UCX_EP_H

#include "ddio_ucx.h"

#ifdef DDIO_HAVE_UCX

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "transport.h"

struct srv_ucx {
    struct ddio_ucx *u;
    const struct ddio_ucx_api *api;
    ucp_worker_h w;
    pthread_t thr;
    atomic_int stop;
    _Atomic int64_t last_op_ms;  /* when a put, a get or an endpoint was last asked for */
    pthread_key_t tkey;          /* per engine thread: struct tput */
    pthread_mutex_t mu;          /* ueps, given_up */
    atomic_int eps_wanted;       /* an ATTACH left an address for ucx_make_eps */
    struct uep *ueps;            /* attached endpoints, found by cookie */
    struct opset *given_up;      /* sends that outlived their endpoint (freed at destroy) */
};

/* a request's token and stream length, from its XFER until its DONE */
struct bind {
    uint64_t req, token, len;
    struct bind *next;
};

struct uep {
    struct xp xp;
    struct xp *ctl;              /* the TCP connection (referenced) */
    struct srv_ucx *su;
    ucp_ep_h ep;
    uint64_t cookie;
    atomic_int refs;
    pthread_mutex_t mu;          /* below */
    pthread_cond_t cv;           /* CLOCK_MONOTONIC */
    int dead;                    /* closed: no new operations */
    int users;                   /* threads issuing operations on ep now */
    int closed;                  /* ep released */
    void *peer;                  /* the client's worker address, from its
                                  * ATTACH, until ucx_make_eps made ep of it */
    size_t peer_len;
    ucp_ep_h reply_ep;           /* UCX's, from the ATTACH: the way back
                                  * only if ours cannot be made */
    int attach_failed;           /* no endpoint: XFERs fail at once */
    int ep_ours;                 /* ep made by ucx_make_eps (else a reply
                                  * endpoint, UCX's to close) */
    atomic_ulong syncs_done;     /* rounds of PUTs completed on ep: a stuck
                                  * one's warning says whether any ever did */
    struct bind *binds;
    struct xp_get *gets;         /* GETs waiting for their DATA */
    struct fill *fills;          /* DATA being received (cancel waits for them) */
    struct uep *next;            /* su->ueps */
};

/* a DATA being received for a GET of owner */
struct fill {
    const void *owner;
    struct fill *next;
    void *recv;                  /* its receive in flight (ucx_data.c), NULL: passing */
};

static inline struct uep *uep_of(const struct xp *ep)
{
    return (struct uep *)((char *)ep - offsetof(struct uep, xp));
}

/* the transport's ops (ucx.c's table): reference, name, reply, heartbeat */
void uep_ref(struct xp *ep);
void uep_unref(struct xp *ep);
const char *uep_name(const struct xp *ep);
int uep_reply(struct xp *ep, uint16_t type, uint64_t req, int32_t status,
              uint8_t *payload, size_t len, int64_t dl);
int uep_progress(struct xp *ep, uint64_t req, int64_t dl);
/* no new operation on u, and its UCX endpoint closed (once) */
void uep_release_ep(struct uep *u);
/* a thread starts issuing operations on u (0, or -ECONNRESET once closed),
 * and ends */
int uep_enter(struct uep *u);
void uep_leave(struct uep *u);
/* req's binding (ucx_bind) into *out: 0, or -1 if none */
int uep_bind_find(struct uep *u, uint64_t req, struct bind *out);
/* the endpoint a DATA or ATTACH names by its cookie, referenced; or NULL */
struct uep *uep_by_cookie(struct srv_ucx *su, uint64_t cookie);
/* the ATTACH active message's handler */
ucs_status_t ucx_attach_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                           const ucp_am_recv_param_t *p);
/* the endpoints ATTACHes asked for (the progress thread) */
void ucx_make_eps(struct srv_ucx *su);

#endif
#endif
