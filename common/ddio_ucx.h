/* UCX for the RMA data path (docs/TRANSPORT.md), shared by the server, the
 * driver and the tools. No MPI dependency.
 *
 * libucp is loaded at run time (dlopen), so nothing links against it: the
 * ddio MPICH and the tools run where UCX is missing (they keep TCP), and
 * MPICH's build does not change. Only the control messages (HELLO, AUTH,
 * XFER, DONE, errors, heartbeats) travel on the TCP connection; a server
 * learns a client's worker address from a UCXADDR request on a connection
 * that already passed AUTH, so RMA inherits TCP's authentication.
 *
 * Which transport a client uses: DDIO_TRANSPORT (or the romio hint
 * ddio_transport) = auto (UCX where the library loads and the server
 * offers it, else TCP), ucx (UCX or a clear error), tcp (never UCX). */
#ifndef DDIO_UCX_H
#define DDIO_UCX_H

#include <stddef.h>
#include <stdint.h>

#if defined(__has_include)
#if __has_include(<ucp/api/ucp.h>) && __has_include(<ucm/api/ucm.h>)
#define DDIO_HAVE_UCX 1
#endif
#endif

enum ddio_xport { DDIO_XPORT_AUTO = 0, DDIO_XPORT_TCP = 1, DDIO_XPORT_UCX = 2 };

/* "auto" / "tcp" / "ucx" (case-insensitive; NULL or "" = auto); -1 otherwise */
int ddio_xport_parse(const char *s);
/* DDIO_TRANSPORT, parsed; a bad value is reported in err and gives -1 */
int ddio_xport_env(char *err, size_t n);

/* Streams smaller than this keep TCP's packed messages even with UCX: a
 * registration and an RPUT per piece would cost more than the copy. */
#define DDIO_RMA_MIN_STREAM (64u << 10)

struct ddio_ucx;                 /* a UCX context and one worker (thread-safe) */

/* A new context + worker for RMA (and wake-up by fd); NULL with a reason in
 * err when UCX cannot be had (no library, no transport). */
struct ddio_ucx *ddio_ucx_open(char *err, size_t n);
void ddio_ucx_close(struct ddio_ucx *u);
/* this process's client context: made on first use, kept until exit; the
 * failure is remembered (one dlopen/ucp_init attempt per process) */
struct ddio_ucx *ddio_ucx_client(char *err, size_t n);

/* the worker's address, for UCXADDR */
const void *ddio_ucx_address(const struct ddio_ucx *u, size_t *len);
/* the fd that becomes readable when the worker has something to progress */
int ddio_ucx_efd(const struct ddio_ucx *u);
/* progress until nothing is left, then arm the fd: 0 = armed (a poll may
 * sleep on it), 1 = more came meanwhile (poll without sleeping) */
int ddio_ucx_prepare_wait(struct ddio_ucx *u);
/* one round of progress; returns events progressed */
unsigned ddio_ucx_progress(struct ddio_ucx *u);

/* A registration of [buf, buf + len) and its packed key, from a cache
 * (a buffer used call after call is registered once; entries are dropped
 * when UCX's memory hooks see the range unmapped). */
struct ddio_ucx_key {
    const void *rkey;
    size_t rkey_len;
    void *entry;                 /* the cache's; hold until the call ends */
};
int  ddio_ucx_reg(struct ddio_ucx *u, void *buf, uint64_t len, struct ddio_ucx_key *k,
                  char *err, size_t n);
void ddio_ucx_unreg(struct ddio_ucx *u, struct ddio_ucx_key *k);
/* registrations made / found in the cache (tests, DDIO_TIMING) */
void ddio_ucx_reg_counts(const struct ddio_ucx *u, uint64_t *made, uint64_t *hits);

#ifdef DDIO_HAVE_UCX
#include <ucp/api/ucp.h>
/* the handles, for the server's transport (ioserver/ucx.c) */
ucp_context_h ddio_ucx_context(const struct ddio_ucx *u);
ucp_worker_h ddio_ucx_worker(const struct ddio_ucx *u);

/* The UCP calls ddio uses, resolved from libucp.so.0 by ddio_ucx_open. */
struct ddio_ucx_api {
    ucs_status_t (*ep_create)(ucp_worker_h, const ucp_ep_params_t *, ucp_ep_h *);
    ucs_status_ptr_t (*ep_close_nbx)(ucp_ep_h, const ucp_request_param_t *);
    ucs_status_ptr_t (*ep_flush_nbx)(ucp_ep_h, const ucp_request_param_t *);
    ucs_status_t (*ep_rkey_unpack)(ucp_ep_h, const void *, ucp_rkey_h *);
    void (*rkey_destroy)(ucp_rkey_h);
    ucs_status_ptr_t (*put_nbx)(ucp_ep_h, const void *, size_t, uint64_t, ucp_rkey_h,
                                const ucp_request_param_t *);
    ucs_status_ptr_t (*get_nbx)(ucp_ep_h, void *, size_t, uint64_t, ucp_rkey_h,
                                const ucp_request_param_t *);
    ucs_status_t (*request_check_status)(void *);
    void (*request_free)(void *);
    ucs_status_t (*worker_signal)(ucp_worker_h);
    const char *(*status_string)(ucs_status_t);
};
/* NULL until some ddio_ucx_open succeeded */
const struct ddio_ucx_api *ddio_ucx_api(void);
#endif

#endif
