/* How every client connects to a server: TCP, TLS where the client is
 * configured for it (DDIO_TLS), then the HELLO/AUTH handshake (ddio_auth.h).
 * No MPI dependency. */
#ifndef DDIO_DIAL_H
#define DDIO_DIAL_H

#include <stddef.h>
#include <stdint.h>

#include "ddio_auth.h"

/* TCP connect to host:port, TLS when configured, and ddio_handshake. TLS
 * is configured once per process: DDIO_TLS (on|off), else "tls =" of
 * $DDIO_CONFIG (default off); servers' certificates are checked against
 * DDIO_TLS_CA, else "tls_ca =", else the system's store.
 * A server that is busy (over --max-connections, or evicting the oldest
 * unauthenticated connection under --max-unauth) refuses with EBUSY and
 * "try again later": wait (backing off, 20 ms to 1 s, jittered) and try
 * again until the deadline; the last refusal is then the error. Returns the
 * connected fd with *hr filled as ddio_handshake does, or -errno and one
 * line in err. Close the fd with ddio_hangup. */
int ddio_dial(const char *host, int port, const char *addr, const char *client_name,
              const struct ddio_secret *secret, int64_t deadline_ms, struct ddio_hello_r *hr,
              char *err, size_t errlen);

/* The TLS step of ddio_dial alone, on a connected socket (nothing when the
 * client's TLS is off): for programs that speak the protocol themselves.
 * 0, or -errno with the reason in err. */
int ddio_dial_secure(int fd, const char *host, const char *addr, int64_t deadline_ms, char *err,
                     size_t errlen);

/* Close a dialled connection (its TLS session first, without a word: also
 * right for a forked child's copy) */
void ddio_hangup(int fd);

#endif
