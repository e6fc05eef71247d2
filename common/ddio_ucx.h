/* UCX for the XFER data path (docs/TRANSPORT.md), shared by the server, the
 * driver and the tools. No MPI dependency.
 *
 * Data moves as UCX active messages: PUT (server -> client, read data) and
 * DATA (client -> server, write data, answering a GET). Large bodies go by
 * UCX's rendezvous: the receiver fetches them straight from the sender's
 * memory into their place (CMA on one host, RDMA get on InfiniBand/RoCE),
 * so a byte is copied once, with no staging on either side. Everything
 * else (HELLO, AUTH, XFER, GET, DONE, errors, heartbeats) stays on the TCP
 * connection, and the UCX endpoints are made only from addresses exchanged
 * on a connection that passed AUTH (UCXADDR), so UCX inherits TCP's
 * authentication, limits and deadlines.
 *
 * libucp is loaded at run time (dlopen): nothing links against it, the
 * ddio MPICH and the tools run where UCX is missing (on TCP), and MPICH's
 * build does not change.
 *
 * Which transport a client uses: DDIO_TRANSPORT (or the hint
 * romio_ddio_transport) = auto (UCX where it loads, the server offers it
 * and ddio_xport_resolve finds a one-copy path to it, else TCP), ucx (UCX
 * or a clear error), tcp (never UCX). */
#ifndef DDIO_UCX_H
#define DDIO_UCX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ddio_proto.h"
#include "ddio_xport.h"

#if defined(__has_include)
#if __has_include(<ucp/api/ucp.h>)
#define DDIO_HAVE_UCX 1
#endif
#endif

/* Streams smaller than this keep TCP's PUT/DATA messages even with UCX: a
 * few bytes cost less in the message that is sent anyway. */
#define DDIO_UCX_MIN_STREAM (64u << 10)

struct ddio_ucx;                 /* a UCX context and one worker (thread-safe) */

/* A new context + worker (active messages, wake-up by fd); NULL with the
 * reason in err when UCX cannot be had (no library, no transport). */
struct ddio_ucx *ddio_ucx_open(char *err, size_t n);
void ddio_ucx_close(struct ddio_ucx *u);
/* this process's client context: made on first use (with the PUT handler
 * below), kept until exit; a failure is remembered */
struct ddio_ucx *ddio_ucx_client(char *err, size_t n);

const void *ddio_ucx_address(const struct ddio_ucx *u, size_t *len);
/* readable when the worker has something to progress */
int ddio_ucx_efd(const struct ddio_ucx *u);
/* progress until nothing is left, then arm the fd: 0 = armed (a poll may
 * sleep on it), 1 = more came meanwhile (poll without sleeping) */
int ddio_ucx_prepare_wait(struct ddio_ucx *u);
unsigned ddio_ucx_progress(struct ddio_ucx *u);

/* ---- client side ---- */

/* An endpoint to a server's worker (address and cookie from the UCXADDR
 * reply), announced to the server by an ATTACH active message that carries
 * UCX's reply endpoint and, with own_ep (the server offered
 * DDIO_SRV_UCX_EP), this worker's address: the server's way back. */
struct ddio_ucx_ep;
struct ddio_ucx_ep *ddio_ucx_connect(struct ddio_ucx *u, const void *addr, size_t len,
                                     uint64_t cookie, int own_ep, int64_t deadline_ms,
                                     char *err, size_t n);
void ddio_ucx_disconnect(struct ddio_ucx_ep *ep);

/* Where one XFER's PUT messages from one server land: a contiguous stream
 * buffer. The PUT handler (run inside progress, any thread) checks every
 * segment against len, receives the body straight into buf, and calls
 * landed (under the sinks' lock) for the segments that arrived. */
struct ddio_ucx_sink {
    uint64_t token;              /* set by sink_add: what the XFER names */
    uint8_t *buf;
    uint64_t len;
    void (*landed)(void *arg, const struct ddio_seg *seg);
    void *arg;
    /* under the sinks' lock: */
    uint64_t got;                /* bytes landed */
    int err;                     /* first error (EPROTO: a malformed PUT) */
    int busy;                    /* receives in flight into buf */
    struct ddio_ucx_sink *next;
};
void ddio_ucx_sink_add(struct ddio_ucx *u, struct ddio_ucx_sink *s);
/* Stop routing PUTs to s. Waits (progressing, until deadline_ms) for its
 * receives in flight; -ETIMEDOUT if some are still running then (s must
 * then stay allocated: it is left to them). */
int ddio_ucx_sink_remove(struct ddio_ucx *u, struct ddio_ucx_sink *s, int64_t deadline_ms);
/* a consistent look at s->got / s->err */
void ddio_ucx_sink_peek(struct ddio_ucx *u, const struct ddio_ucx_sink *s, uint64_t *got,
                        int *err);
/* this process's PUTs so far, in words, for a failed call's message */
void ddio_ucx_put_counts(struct ddio_ucx *u, char *buf, size_t n);
/* the lock landed() runs under, for code sharing what it writes */
void ddio_ucx_lock(struct ddio_ucx *u);
void ddio_ucx_unlock(struct ddio_ucx *u);

/* Outstanding DATA sends of one call. */
struct ddio_ucx_sends {
    int busy;                    /* under the sinks' lock */
    int err;
};
/* DATA for the server's GET (cookie, req, tag): the bytes of iov[0..n),
 * sent straight from them (they must stay until sends_wait). 0 or -errno. */
int ddio_ucx_send_data(struct ddio_ucx *u, struct ddio_ucx_ep *ep, uint64_t cookie,
                       uint64_t req, uint32_t tag, const struct iovec *iov, int n,
                       struct ddio_ucx_sends *s);
/* wait (progressing) until every send of s completed; 0, -ETIMEDOUT, -EIO */
int ddio_ucx_sends_wait(struct ddio_ucx *u, struct ddio_ucx_sends *s, int64_t deadline_ms);

#ifdef DDIO_HAVE_UCX
#include <ucp/api/ucp.h>
ucp_worker_h ddio_ucx_worker(const struct ddio_ucx *u);
/* Wait for request r (progressing u; asleep on its fd, in 1 ms slices, while
 * nothing moves) until deadline_ms: its status, or
 * UCS_INPROGRESS when still running then (it stays UCX's, not freed).
 * r may be NULL or an error pointer (returned as such). */
ucs_status_t ddio_ucx_wait(struct ddio_ucx *u, ucs_status_ptr_t r, int64_t deadline_ms);
/* The buffer and count to hand UCX for iov[0..n): one piece goes as a
 * contiguous buffer (sets rp's datatype accordingly). UCX 1.13 offers a
 * rendezvous zero-copy read (CMA, RDMA) only for contiguous buffers on both
 * sides; an iov datatype falls back to fragments the sender must pack. */
void *ddio_ucx_buf(ucp_request_param_t *rp, ucp_dt_iov_t *iov, size_t n, size_t *count);
/* Close ep, flushing (UCX 1.13 force-closes only endpoints in peer-failure
 * mode, which ours are not): waits for the close until deadline_ms, then
 * leaves it to UCX. */
void ddio_ucx_close_ep(struct ddio_ucx *u, ucp_ep_h ep, int64_t deadline_ms);
/* An endpoint of ours to the worker at addr (a server's, or on a server a
 * client's), as every ddio endpoint is made: an error handler that does
 * nothing, no peer-failure mode (with it UCX 1.13 drops the CMA lane:
 * docs/TRANSPORT.md). A peer that dies then fails the requests on it
 * instead of aborting the process or UCX freeing the endpoint; the TCP
 * connection drives what follows. */
ucs_status_t ddio_ucx_ep_create(struct ddio_ucx *u, const void *addr, ucp_ep_h *ep);

/* The UCP calls the server's transport uses, resolved by ddio_ucx_open. */
struct ddio_ucx_api {
    ucs_status_t (*ep_create)(ucp_worker_h, const ucp_ep_params_t *, ucp_ep_h *);
    ucs_status_ptr_t (*ep_close_nbx)(ucp_ep_h, const ucp_request_param_t *);
    ucs_status_ptr_t (*am_send_nbx)(ucp_ep_h, unsigned, const void *, size_t, const void *,
                                    size_t, const ucp_request_param_t *);
    ucs_status_ptr_t (*am_recv_data_nbx)(ucp_worker_h, void *, void *, size_t,
                                         const ucp_request_param_t *);
    ucs_status_t (*worker_set_am_recv_handler)(ucp_worker_h, const ucp_am_handler_param_t *);
    ucs_status_t (*request_check_status)(void *);
    void (*request_free)(void *);
    ucs_status_t (*worker_signal)(ucp_worker_h);
    const char *(*status_string)(ucs_status_t);
};
/* NULL until some ddio_ucx_open succeeded */
const struct ddio_ucx_api *ddio_ucx_api(void);
#endif

#endif
