/* Which transport moves XFER data (docs/TRANSPORT.md): the names, and what
 * "auto" settles to. No MPI dependency, no UCX dependency. */
#ifndef DDIO_XPORT_H
#define DDIO_XPORT_H

#include <stddef.h>

enum ddio_xport { DDIO_XPORT_AUTO = 0, DDIO_XPORT_TCP = 1, DDIO_XPORT_UCX = 2 };

/* "auto" / "tcp" / "ucx" (case-insensitive; NULL or "" = auto); -1 otherwise */
int ddio_xport_parse(const char *s);
/* DDIO_TRANSPORT, parsed; a bad value is reported in err and gives -1 */
int ddio_xport_env(char *err, size_t n);

/* What auto means: UCX where it has a one-copy path to the peer, TCP
 * elsewhere (measured in docs/TRANSPORT.md: where it has one, UCX is at
 * least TCP's equal on most patterns; where it has none, UCX's rendezvous
 * over TCP sockets only adds work). A one-copy path is an RDMA device, or
 * cross-memory attach (CMA): the peer on this host, owned by our user, and
 * Yama not forbidding process_vm_readv between them.
 * sock: the client's connected TCP socket to the server (the server's end
 * is looked up in /proc/net/tcp{,6} for its owner); -1 for a server deciding
 * whether to offer UCX at all (it offers it where RDMA or CMA may work).
 * why (may be NULL): set to the reason when auto settles to TCP.
 * tcp and ucx are returned as they are. */
int ddio_xport_resolve(int t, int sock, char *why, size_t n);

/* an RDMA device (InfiniBand, RoCE, iWARP) the verbs stack shows */
int ddio_xport_rdma_present(void);

#endif
