/* Authentication: a shared secret read from a private file, and the
 * challenge-response handshake every connection starts with (PROTOCOL.md,
 * "Connection"). SHA-256 and the constant-time compare come from OpenSSL's
 * libcrypto, nonces from the kernel (getrandom); HMAC-SHA-256 is RFC 2104's
 * construction over libcrypto's SHA-256 (checked against Python's hmac for
 * short and long keys), because OpenSSL 3's HMAC() and RAND_bytes first
 * load its providers, 10 ms of CPU per process at its first open.
 *
 *   client                                server
 *   HELLO                        ->
 *                                <-   HELLO|R {id, ..., flags AUTH_REQUIRED, Ns}
 *   AUTH {Nc, HMAC(K, "ddio-auth-v1" | "client" | id | Ns | Nc)}  ->
 *                                <-   AUTH|R {HMAC(K, "ddio-auth-v1" | "server" | id | Ns | Nc)}
 *
 * Both sides contribute a fresh nonce, so a recorded AUTH is worthless
 * against the next connection's Ns, and a recorded AUTH|R against the next
 * Nc; the role label keeps one side's proof from being reflected as the
 * other's. No MPI dependency (compiled into libmpich.so by the overlay). */
#ifndef DDIO_AUTH_H
#define DDIO_AUTH_H

#include <stddef.h>
#include <stdint.h>
#include "ddio_proto.h"

#define DDIO_SECRET_MIN 16u      /* bytes, after trailing white space is dropped */
#define DDIO_SECRET_MAX 4096u

struct ddio_secret {
    size_t len;
    uint8_t key[DDIO_SECRET_MAX];
};

enum ddio_auth_role { DDIO_AUTH_CLIENT = 0, DDIO_AUTH_SERVER = 1 };

/* s without leading and trailing white space (trailing removed in place) */
char *ddio_trim(char *s);

/* The value of `key = value` in the $DDIO_CONFIG file ('#' starts a
 * comment), copied to out. 1 if found, 0 if not (no file, no such key). */
int ddio_config_value(const char *key, char *out, size_t n);

/* Which secret file to use: `given` (a hint or a flag) when non-empty, else
 * $DDIO_SECRET_FILE, else DDIO_CONFIG's `secret_file =` (a leading "~/"
 * there is $HOME). 1 and the path in out, or 0 when none is named. */
int ddio_secret_path(const char *given, char *out, size_t n);

/* Read a secret file. It must be a regular file owned by the effective user
 * with no group or other permission bits, holding DDIO_SECRET_MIN..MAX bytes
 * (trailing white space is not part of the secret). 0, or -errno with one
 * line in err saying what is wrong and how to fix it. */
int ddio_secret_load(const char *path, struct ddio_secret *s, char *err, size_t errlen);
/* wipe a secret from memory */
void ddio_secret_clear(struct ddio_secret *s);

/* fresh random nonce: 0 or -EIO */
int ddio_auth_nonce(uint8_t nonce[DDIO_NONCE_LEN]);
/* HMAC(secret, "ddio-auth-v1" | role | id | snonce | cnonce): 0 or -EIO */
int ddio_auth_mac(const struct ddio_secret *s, enum ddio_auth_role role,
                  const uint8_t id[DDIO_ID_LEN], const uint8_t snonce[DDIO_NONCE_LEN],
                  const uint8_t cnonce[DDIO_NONCE_LEN], uint8_t mac[DDIO_MAC_LEN]);
/* 1 when the proof `got` is the expected one for these inputs (constant
 * time compare), else 0 */
int ddio_auth_verify(const struct ddio_secret *s, enum ddio_auth_role role,
                     const uint8_t id[DDIO_ID_LEN], const uint8_t snonce[DDIO_NONCE_LEN],
                     const uint8_t cnonce[DDIO_NONCE_LEN], const uint8_t got[DDIO_MAC_LEN]);

/* The handshake every client runs on a fresh connection `fd` to the server
 * at `addr` (for messages): HELLO (req 1), then AUTH (req 2) when the
 * server requires it. With a secret, the client also insists that the
 * server proves it holds the same secret (a server without authentication,
 * i.e. started with --insecure, is refused). Without a secret (NULL) only a
 * --insecure server is accepted. On success returns 0 and the HELLO reply
 * in *hr (free hr->name); the caller's next request id is
 * DDIO_HANDSHAKE_REQS + 1. Else -errno (-EACCES: authentication refused
 * either way) and one line in err naming the server and the cause. */
#define DDIO_HANDSHAKE_REQS 3u   /* HELLO, AUTH, UCXADDR (ddio_attach_ucx) */
int ddio_handshake(int fd, const char *addr, const char *client_name,
                   const struct ddio_secret *secret, int64_t deadline_ms,
                   struct ddio_hello_r *hr, char *err, size_t errlen);

/* The plain answer of a server to a connection's first message (HELLO,
 * req 1): its refusal, as -errno with its words in err (ddio_dial reads it
 * where a TLS handshake met a plain answer). */
int ddio_read_refusal(int fd, const char *addr, int64_t deadline_ms, char *err, size_t errlen);

/* ACTAS {uid, gid} as request req on a connection just authenticated: a
 * mount (root, on a host the server trusts) acts for that user from now
 * on. 0, or -errno with the server's reason in err (-EACCES: refused). */
int ddio_act_as(int fd, const char *addr, uint64_t req, uint32_t uid, uint32_t gid,
                int64_t deadline_ms, char *err, size_t errlen);

/* Where this thread's last connection went, in microseconds (DDIO_TIMING:
 * ddio_core_conn.c prints them): ddio_dial fills connect, hello and auth
 * (summed over its busy retries), ddio_ucx_attach_conn ucx_init (the
 * process's UCX context, paid once), ucxaddr and endpoint. */
struct ddio_dial_stages {
    int64_t connect, hello, auth, ucx_init, ucxaddr, endpoint;
};
extern __thread struct ddio_dial_stages ddio_dial_stages;

/* When the server offers UCX (DDIO_SRV_UCX in its HELLO|R): ask for it
 * (UCXADDR, as request req: 3 right after the handshake, the connection's
 * next id later); on success the server's cookie for this connection and
 * its worker address (malloc'd: *srv_addr) come back, for
 * ddio_ucx_connect/ddio_ucx_attach. A refusal (-EOPNOTSUPP, -EEXIST) is no
 * failure of the connection, which keeps TCP; other errors are failures of
 * the connection. The reason is in err. */
int ddio_attach_ucx(int fd, const char *addr, uint64_t req, int64_t deadline_ms,
                    uint64_t *cookie, uint8_t **srv_addr, size_t *srv_len, char *err,
                    size_t errlen);

/* After ddio_handshake on fd: 1 when XFER data should move by UCX to this
 * server: the wanted transport t (ddio_xport_env) resolves to ucx for it
 * (ddio_xport_resolve: forced, or auto finding a one-copy path) and the
 * server offers it; else 0 and the reason in why. Cheap: UCX is not loaded. */
int ddio_ucx_wanted(int fd, const struct ddio_hello_r *hr, int t, char *why, size_t n);

/* The UCX step of a client's connection that ddio_ucx_wanted, on fd at any
 * time between two conversations: load UCX (the process's context, once),
 * ask for it (ddio_attach_ucx, request req) and connect to the server's
 * worker (own_ep: the server's HELLO offered DDIO_SRV_UCX_EP, and the
 * ATTACH carries this worker's address). Returns 0 with *ep the endpoint, or NULL and the reason in why
 * (the connection stays on TCP); -errno when the connection broke, or
 * -ETIMEDOUT when the server did not answer before the deadline (why says
 * how). */
struct ddio_ucx_ep;
int ddio_ucx_attach_conn(int fd, const char *addr, uint64_t req, int64_t deadline_ms,
                         int own_ep, uint64_t *cookie, struct ddio_ucx_ep **ep, char *why,
                         size_t n);

#endif
