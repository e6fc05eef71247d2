/* Admission and authentication state of connections (admit.c). */
#ifndef DDIO_SRV_ADMIT_H
#define DDIO_SRV_ADMIT_H

#include "conn.h"

/* the connection no longer counts against --max-unauth (srv->mu held) */
void pending_drop_locked(struct server *srv, struct conn *c);
/* Over --max-connections: refuse fd (and close it); 1 if it was refused. */
int admit_refuse_full(struct server *srv, int fd);
/* c starts pending (srv->mu held, c not yet on the list), making room at
 * --max-unauth by evicting the oldest pending connection */
void admit_pending_locked(struct server *srv, struct conn *c);
int64_t auth_deadline(const struct conn *c);
/* deadline for the rest of a message: before AUTH, the authentication deadline */
int64_t recv_deadline(const struct conn *c);
int on_hello(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
/* AUTH: check the client's proof over both nonces, answer with ours */
int on_auth(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
int on_actas(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
/* anything but HELLO/AUTH before authentication: refused, logged; -EACCES */
int refuse_unauth(struct conn *c, const struct ddio_hdr *h);
/* closing a connection that has not authenticated: the refusal, flushed */
void refuse_pending(struct conn *c, int err, const char *why);

#endif
