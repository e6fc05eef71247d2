/* The UCX transport (transport.h): XFER data moves as UCX active messages
 * between the server's block buffers and the ranks' own buffers (rendezvous:
 * one copy); everything else (the XFER request, GET, DONE, errors,
 * heartbeats) goes through the TCP connection the endpoint was attached on,
 * so authentication, the limits and the deadlines are TCP's.
 * docs/TRANSPORT.md. */
#ifndef DDIO_SRV_UCX_H
#define DDIO_SRV_UCX_H

#include <stddef.h>
#include <stdint.h>

#include "ddio_proto.h"
#include "transport.h"

struct server;
struct uep;

/* Per cfg.transport: auto = offer UCX when it loads (else a warning and
 * TCP only), ucx = fail to start without it, tcp = never. 0 or -errno. */
int ucx_start(struct server *srv, char *err, size_t n);
/* stop the progress thread (at shutdown) */
void ucx_stop(struct server *srv);
/* release the worker: only once no connection or engine thread is left */
void ucx_destroy(struct server *srv);
/* whether HELLO offers UCX */
int ucx_offered(const struct server *srv);

/* A connection's UCX endpoint for the authenticated connection ctl
 * (referenced while it lives), with a fresh random cookie; it is usable
 * once the client's ATTACH message (naming the cookie) brought UCX's reply
 * endpoint. NULL with the reason in err. */
struct uep *ucx_ep_new(struct server *srv, struct xp *ctl, char *err, size_t n);
/* the UCXADDR reply's payload: the connection's cookie, the server's address */
int ucx_ep_reply(struct uep *u, struct ddio_wbuf *w);
/* The endpoint a UCX XFER runs on: remembers req's token and stream length
 * until its DONE; -errno with the reason (the caller replies with it). */
int ucx_bind(struct uep *u, uint64_t req, const struct ddio_xfer *m, char *err, size_t n);
struct xp *ucx_xp(struct uep *u);
/* The connection is gone: no more UCX traffic on it (operations in flight fail), and
 * the connection's reference is dropped. */
void ucx_ep_close(struct uep *u);

#endif
