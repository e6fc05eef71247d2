/* --tls: a connection's first byte says whether it is a TLS handshake or a
 * plain ddio message, and the server's mode says which it accepts. */
#ifndef DDIO_SRV_TLSGATE_H
#define DDIO_SRV_TLSGATE_H

#include <stddef.h>

struct server;
struct conn;

/* at start: the certificate and key of --tls optional|required (nothing to
 * do when off). 0, or -1 with the reason in err. */
int tlsgate_start(struct server *srv, char *err, size_t n);
void tlsgate_stop(struct server *srv);
/* the connection's first bytes have arrived: run the TLS handshake, or let
 * a plain connection through, or refuse it (answered, logged, counted).
 * 0: go on; -1: close the connection. */
int tlsgate_pass(struct conn *c);
/* 0 when the connection may attach UCX; else -1 with the reason: --tls
 * required and the client on another host (UCX carries no encryption) */
int tlsgate_ucx_allowed(const struct conn *c, char *why, size_t n);

#endif
