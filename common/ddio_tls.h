/* TLS 1.3 under the protocol on TCP connections (docs/SECURITY.md,
 * "Encryption"). libssl is loaded at run time, as libmunge and UCX are, so
 * that libmpich, which carries the driver, needs it only where TLS is used.
 *
 * A session belongs to a connected socket: ddio_net's transfer and wait
 * helpers find it by the descriptor, so the code above them is the same
 * with or without TLS. Whoever closes a socket that may carry a session
 * calls ddio_tls_drop first. No MPI dependency. */
#ifndef DDIO_TLS_H
#define DDIO_TLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

/* what a server asks of its clients (ddio-server --tls) */
enum ddio_tls_mode { DDIO_TLS_OFF = 0, DDIO_TLS_OPTIONAL = 1, DDIO_TLS_REQUIRED = 2 };

/* "off" / "optional" / "required"; -1 otherwise */
int ddio_tls_mode_parse(const char *s);

/* The first byte of a TLS connection (a handshake record); a ddio message
 * starts with 'D' (DDIO_MAGIC), so one byte tells them apart. */
#define DDIO_TLS_FIRST_BYTE 0x16

struct ddio_tls_ctx;

/* A server's context: its certificate chain and key (PEM files), TLS 1.3
 * only, no session tickets. NULL with the reason in err. */
struct ddio_tls_ctx *ddio_tls_server_new(const char *cert, const char *key, char *err,
                                         size_t n);
/* A client's context: servers' certificates are verified against the CA
 * file ca (PEM), or against the system's store when ca is NULL or "". */
struct ddio_tls_ctx *ddio_tls_client_new(const char *ca, char *err, size_t n);
void ddio_tls_ctx_free(struct ddio_tls_ctx *x);

/* The handshake on a connected socket, before any ddio message; the socket
 * is non-blocking from then on. 0 with the session attached to fd, or
 * -errno with the reason in err (-ETIMEDOUT past the deadline).
 * ddio_tls_connect checks the certificate names host (a DNS name or an IP
 * address). It returns -ENOPROTOOPT, with nothing attached, when the server
 * answered with a plain ddio message instead (a refusal: read it as one). */
int ddio_tls_accept(struct ddio_tls_ctx *x, int fd, int64_t deadline_ms, char *err, size_t n);
int ddio_tls_connect(struct ddio_tls_ctx *x, int fd, const char *host, int64_t deadline_ms,
                     char *err, size_t n);

/* 1 when fd carries a session */
int ddio_tls_active(int fd);
/* The session's protocol and cipher, for logs ("TLSv1.3 TLS_AES_256_GCM_SHA384") */
void ddio_tls_describe(int fd, char *out, size_t n);
/* Let go of fd's session (no message is sent: the caller closes fd next;
 * also right in a forked child, whose copy must not speak). */
void ddio_tls_drop(int fd);

/* For ddio_net: move bytes through fd's session. > 0 bytes moved; 0 when
 * the session cannot move any now, with *wait set to the poll events to wait
 * for; -errno (-ECONNRESET: the peer closed). */
ssize_t ddio_tls_sendv(int fd, const struct iovec *iov, int cnt, short *wait);
ssize_t ddio_tls_recvv(int fd, const struct iovec *iov, int cnt, short *wait);
/* 1 when fd's session holds received bytes not yet read (a poll of the
 * socket would not show them) */
int ddio_tls_pending(int fd);

#endif
