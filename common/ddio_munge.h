/* MUNGE credentials: who is calling, proven by the node's munged (Slurm's
 * authentication service) instead of claimed. A server started with
 * --auth munge asks every connection for a credential whose payload binds
 * this connection's nonces (ddio_munge_payload); munged vouches for the
 * uid and gid of the process that encoded it, refuses a replayed or expired
 * one, and says on which host it was made. The server answers with a
 * credential of its own over the same nonces, restricted to the client's
 * uid, so the client knows a server of its MUNGE realm is answering.
 *
 * libmunge is loaded at first use (dlopen of libmunge.so.2), as UCX is:
 * the client core lives in libmpich and the Open MPI plug-in, which then
 * need libmunge only on nodes whose servers ask for it. No MPI dependency. */
#ifndef DDIO_MUNGE_H
#define DDIO_MUNGE_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include "ddio_proto.h"

/* What munged says about a credential it decoded. */
struct ddio_munge_id {
    uint32_t uid, gid;
    struct in_addr addr;          /* the encoding host's address (its munged's origin) */
};

enum ddio_munge_role { DDIO_MUNGE_CLIENT = 0, DDIO_MUNGE_SERVER = 1 };

#define DDIO_MUNGE_PAYLOAD_LEN (16u + 1u + DDIO_ID_LEN + 2u * DDIO_NONCE_LEN)

/* "ddio-munge-v1" | role | server id | server nonce | client nonce */
void ddio_munge_payload(enum ddio_munge_role role, const uint8_t id[DDIO_ID_LEN],
                        const uint8_t snonce[DDIO_NONCE_LEN],
                        const uint8_t cnonce[DDIO_NONCE_LEN],
                        uint8_t out[DDIO_MUNGE_PAYLOAD_LEN]);

/* socket: munged's, NULL for libmunge's default (/run/munge/munge.socket.2) */

/* A credential over data (ttl seconds, 0: munged's default; only `uid` may
 * decode it when uid >= 0). 0 and *cred (free() it), or -errno: -ENOSYS
 * without libmunge, -EIO when munged cannot be reached; err says why. */
int ddio_munge_encode(const char *socket, const void *data, size_t n, int ttl, long uid,
                      char **cred, char *err, size_t errlen);

/* Decode cred: 0 with its payload in *data (free() it; may be NULL when
 * empty), its length in *n and the encoder's identity in *id. -EACCES when
 * munged refuses it (invalid, expired, rewound, replayed, not for this
 * uid), -EIO when munged cannot be reached, -ENOSYS without libmunge; err
 * says which. */
int ddio_munge_decode(const char *socket, const char *cred, void **data, size_t *n,
                      struct ddio_munge_id *id, char *err, size_t errlen);

#endif
