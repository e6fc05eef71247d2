/* The UCX transport's data path (ucx_data.c), for ucx.c: PUT sends and
 * the sync that waits for them, GETs and the DATA that answers them, and
 * the cancel of an XFER's GETs. */
#ifndef DDIO_SRV_UCX_DATA_H
#define DDIO_SRV_UCX_DATA_H

#include "ucx_ep.h"

#ifdef DDIO_HAVE_UCX

/* completion counter of a batch of operations */
struct opset {
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* CLOCK_MONOTONIC; signalled as left drops */
    int left;
    ucs_status_t st;
    struct psend *live;          /* its sends in flight */
    uint8_t *stage;              /* given up: the staging area they read */
    struct opset *next;          /* given up: su->given_up */
};

void opset_free(struct opset *o);
/* the end of an engine thread (its key's destructor) */
void tput_free(void *p);
/* the transport's ops (ucx.c's table) */
int ux_put(struct xp *ep, uint64_t req, const struct ddio_seg *seg, uint32_t nseg,
           uint64_t total, const struct xp_src *src, int64_t dl);
int ux_get(struct xp *ep, struct xp_get *g, int64_t dl);
struct xp_get *ux_cancel(struct xp *ep, const void *owner);
int ux_sync(struct xp *ep, int64_t dl);
/* the DATA active message's handler */
ucs_status_t ucx_data_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                         const ucp_am_recv_param_t *p);

#endif
#endif
