/* What the XFER engine needs from a client endpoint, and nothing about how
 * bytes move: tcp.c implements it over TCP (messages on the connection's
 * queue, conn.c); ucx.c implements the same ops with UCX active messages
 * beside it, without touching the engine.
 *
 * Calls go both ways:
 *   engine -> transport: the ops below (replies, heartbeats, PUT, GET,
 *     cancelling a failed XFER's GETs), through the xp_* helpers.
 *   transport -> engine (engine.h): engine_xfer for an XFER request,
 *     engine_get_sink / engine_get_done / engine_get_drop for the answer to
 *     a GET, engine_conn_dropped when an endpoint dies.
 * The engine holds endpoints by reference (ref/unref) and never sees their
 * fields beyond this header. */
#ifndef DDIO_SRV_TRANSPORT_H
#define DDIO_SRV_TRANSPORT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ddio_proto.h"

struct server;
struct xp_get;

/* how long a reply may take to reach the client */
#define XP_REPLY_TIMEOUT_MS 30000

/* One client endpoint; a transport embeds it in its own connection. */
struct xp {
    const struct xport_ops *ops;
    struct server *srv;          /* its server: error messages name it */
    int dropped;                 /* engine_conn_dropped ran (atomic; under the
                                  * engine's lock): an XFER joining later fails */
};

/* fills the n stream bytes of a PUT, in stream order (the engine gathers
 * straight into the transport's buffer: no extra copy) */
typedef void xp_fill_fn(void *arg, uint8_t *dst, uint64_t n);
/* one contiguous piece of a block: stream bytes [s, s + n) of the rank's
 * buffer are at p in the block (UCX moves them from there, no staging) */
typedef int xp_piece_fn(void *cbarg, uint8_t *p, uint64_t s, uint64_t n);
/* calls fn for every piece of a PUT's or GET's bytes, in stream order;
 * returns fn's first non-zero result */
typedef int xp_walk_fn(void *arg, xp_piece_fn *fn, void *cbarg);
/* where a PUT's bytes are: fill packs them (TCP), walk names them in place
 * (UCX); both describe the same bytes */
struct xp_src {
    xp_fill_fn *fill;
    xp_walk_fn *walk;
    void *arg;
};

struct xport_ops {
    void (*ref)(struct xp *ep);
    void (*unref)(struct xp *ep);
    /* the peer, for messages ("host:port pid N") */
    const char *(*name)(const struct xp *ep);
    /* A message to the client (reply or XFER DONE); payload (may be NULL) is
     * taken over. Never waits for queue space. 0, -ECONNRESET, -ENOMEM. */
    int (*reply)(struct xp *ep, uint16_t type, uint64_t req, int32_t status,
                 uint8_t *payload, size_t len, int64_t deadline_ms);
    /* Heartbeat for req, only when the client has nothing else coming (a
     * busy endpoint proves progress by itself). Never waits. */
    int (*progress)(struct xp *ep, uint64_t req, int64_t deadline_ms);
    /* Read data for request req: the bytes of stream segments seg[0..nseg)
     * of the rank's buffer, total bytes, from src. May wait (until
     * deadline_ms) while the client is behind; the block may be reused once
     * it returns, or, with a transport that has sync, once sync returned.
     * 0, -ETIMEDOUT, -ECONNRESET, -ENOMEM, -EFAULT. */
    int (*put)(struct xp *ep, uint64_t req, const struct ddio_seg *seg, uint32_t nseg,
               uint64_t total, const struct xp_src *src, int64_t deadline_ms);
    /* Ask the rank for the bytes of g's segments (may wait like put). From
     * this call on, whatever it returns, g is the transport's until it hands
     * it back with engine_get_done / engine_get_drop, or cancel returns it;
     * a failed get leaves the XFER to fail and cancel. */
    int (*get)(struct xp *ep, struct xp_get *g, int64_t deadline_ms);
    /* Stop matching owner's GETs, wait until none of its answers is still
     * arriving, and return them (linked by next) for the engine to free. */
    struct xp_get *(*cancel)(struct xp *ep, const void *owner);
    /* Optional (NULL: puts never outlive their call): wait until every put
     * this thread made, on any endpoint of the transport, no longer needs its
     * block. The engine calls it after a block's puts, before reusing the
     * block. 0, -ETIMEDOUT, -ECONNRESET, -EIO; -EBUSY when puts still in
     * flight were given up (the block must never be reused: put may return
     * it too). */
    int (*sync)(struct xp *ep, int64_t deadline_ms);
    /* 1: a put whose bytes are one range of the block sends them from
     * there, never copied into a staging buffer by the server (UCX
     * rendezvous: fetched by the peer, CMA or RDMA; TCP: the socket's own
     * copy); the engine may then hand it a mapping of the datafile's
     * cached pages instead of a block buffer (engine_slots.c). 0: put
     * copies them. */
    int sends_in_place;
};

/* A GET: filled by the engine (which allocates it, usually inside a larger
 * record of its own) before ops->get; the transport matches the answer. */
struct xp_get {
    uint64_t req;                /* the participant's XFER request */
    uint32_t tag;                /* unique among owner's GETs on the endpoint */
    uint32_t nseg;
    const struct ddio_seg *seg;  /* stream ranges of the rank's buffer, in order */
    uint64_t total;              /* their bytes */
    uint32_t timeout_ms;         /* for the answer's bytes once they arrive */
    const void *owner;           /* what cancel matches (the XFER) */
    xp_walk_fn *walk;            /* the block pieces the answer goes to (arg: this) */
    struct xp_get *next;         /* the transport's */
    int abandoned;               /* set by a cancel: its answer never ended and may
                                  * still land in the block's buffer (never reuse it) */
};

static inline void xp_ref(struct xp *ep) { ep->ops->ref(ep); }
static inline void xp_unref(struct xp *ep) { ep->ops->unref(ep); }
static inline const char *xp_name(const struct xp *ep) { return ep->ops->name(ep); }

static inline int xp_reply(struct xp *ep, uint16_t type, uint64_t req, int32_t status,
                           uint8_t *payload, size_t len, int64_t deadline_ms)
{
    return ep->ops->reply(ep, type, req, status, payload, len, deadline_ms);
}

static inline int xp_progress(struct xp *ep, uint64_t req, int64_t deadline_ms)
{
    return ep->ops->progress(ep, req, deadline_ms);
}

static inline int xp_put(struct xp *ep, uint64_t req, const struct ddio_seg *seg, uint32_t nseg,
                         uint64_t total, const struct xp_src *src, int64_t deadline_ms)
{
    return ep->ops->put(ep, req, seg, nseg, total, src, deadline_ms);
}

static inline int xp_get(struct xp *ep, struct xp_get *g, int64_t deadline_ms)
{
    return ep->ops->get(ep, g, deadline_ms);
}

static inline int xp_sync(struct xp *ep, int64_t deadline_ms)
{
    return ep->ops->sync ? ep->ops->sync(ep, deadline_ms) : 0;
}

static inline struct xp_get *xp_cancel(struct xp *ep, const void *owner)
{
    return ep->ops->cancel(ep, owner);
}

/* The pieces walk names (a PUT's or GET's bytes in the block), adjacent
 * ones merged, appended to v[*n..max-1]: 0, or -E2BIG when they take more
 * pieces (v[*n..] is then partly written), or -EINVAL without a walk. */
int xp_gather(xp_walk_fn *walk, void *arg, struct iovec *v, int *n, int max);

/* A GET's message payload (its tag and segments) into w: 0 or -ENOMEM
 * (w is then freed). */
int xp_enc_get(const struct xp_get *g, struct ddio_wbuf *w);

/* Take owner's GETs off *list (linked by next) and return them, linked
 * the same way: what a transport's cancel hands back (transport.c). */
struct xp_get *xp_take_owner(struct xp_get **list, const void *owner);

/* Error reply "server HOST:PORT: <cause>" (transport.c). */
int xp_vreply_err(struct xp *ep, uint16_t type, uint64_t req, int err, const char *fmt,
                  va_list ap);
int xp_reply_err(struct xp *ep, uint16_t type, uint64_t req, int err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif
