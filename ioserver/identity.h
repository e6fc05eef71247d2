/* Identity (--auth munge): who is calling, proven by a MUNGE credential
 * bound to the connection's nonces and encoded on the peer's own host;
 * supplementary groups from this server's name service (getgrouplist), as
 * Lustre's identity upcall does. */
#ifndef IDENTITY_H
#define IDENTITY_H

#include <stddef.h>
#include "conn.h"
#include "ddio_proto.h"

/* At start: munged answers on the configured socket (a credential made
 * and decoded). 0, or -1 and the reason in err. */
int identity_startup(struct server *srv, char *err, size_t errlen);

/* The client's AUTH: its credential must decode (not replayed, not
 * expired), carry this connection's nonces and come from the peer's host.
 * 0 with c->who set, else -EACCES (-EIO: munged unreachable) and why. */
int identity_verify(struct conn *c, const struct ddio_auth_munge *m, char *why, size_t n);

/* The server's answer: its credential over the same nonces, decodable by
 * c->who.uid only. 0 and *cred (free() it), else -EIO and why. */
int identity_proof(struct conn *c, const uint8_t cnonce[DDIO_NONCE_LEN], char **cred,
                   char *why, size_t n);

/* ACTAS: c (proven root, not squashed first, from a --mount-hosts
 * address) acts for uid/gid from now on (squashed in turn when 0). 0, or
 * -EACCES and why. */
/* c is root's (its MUNGE credential) from a --mount-hosts host, as
 * itself: 0, else -EACCES with the reason */
int identity_trusted_root(const struct conn *c, char *why, size_t n);
int identity_act_as(struct conn *c, const struct ddio_actas *m, char *why, size_t n);

#endif
