/* Socket helpers shared by the driver and the server: every blocking call
 * takes an absolute deadline (monotonic ms, see ddio_now_ms) and fails with
 * -ETIMEDOUT when it passes, never hangs. There is no "no deadline" value:
 * pass ddio_now_ms() + timeout_ms (a past deadline fails at once unless the
 * data is already there). The transfer helpers are for sockets (they use
 * send/recv flags, MSG_NOSIGNAL); name resolution in ddio_connect is not
 * bounded by the deadline. No MPI dependency. */
#ifndef DDIO_NET_H
#define DDIO_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include "ddio_proto.h"

/* monotonic clock in milliseconds / microseconds */
int64_t ddio_now_ms(void);
int64_t ddio_now_us(void);

/* Parse "host:port" (IPv4 name/address, or [v6]:port). 0 or -EINVAL. */
int ddio_parse_hostport(const char *s, char *host, size_t hostlen, int *port);
/* Connect with a deadline. Returns a connected blocking fd (TCP_NODELAY,
 * CLOEXEC) or -errno (-ETIMEDOUT, -ECONNREFUSED, -EHOSTUNREACH, ...). */
int ddio_connect(const char *host, int port, int64_t deadline_ms);
/* Listen on host:port (port 0 = any free port); *bound_port gets the port. */
int ddio_listen(const char *host, int port, int *bound_port);
/* the address of abstract AF_UNIX name (no leading NUL): 0, or
 * -ENAMETOOLONG */
struct sockaddr_un;
int ddio_abstract_addr(const char *name, struct sockaddr_un *a, socklen_t *len);
/* 1 when the peer of the TCP socket fd is on this host, in this network
 * namespace: a loopback peer, or one whose address is this end's own */
int ddio_same_host(int fd);
/* TCP_NODELAY on a connected (or accepted) socket */
void ddio_nodelay(int fd);
/* A server's end of a client connection: a peer that vanished without a
 * FIN (its host died, or a partition cut it off and it has since gone)
 * is noticed user_s after the last thing it acknowledged, whether the
 * connection was idle (keepalive probes from idle_s of silence on; the
 * user timeout decides when their silence ends it: tcp(7)) or had data
 * in flight, not minutes or hours later; its handles then close as on
 * any hangup. A live peer's kernel answers the probes, however long its
 * process stays quiet. */
void ddio_keepalive(int fd, int idle_s, int user_s);

/* Full send/recv with deadline (poll-based; works on blocking and
 * non-blocking fds). 0, -ETIMEDOUT, -ECONNRESET (peer closed), -errno. */
int ddio_send_all(int fd, const void *p, size_t n, int64_t deadline_ms);
int ddio_recv_all(int fd, void *p, size_t n, int64_t deadline_ms);
/* vectored variants; the iovec array is modified as data moves */
int ddio_sendv_all(int fd, struct iovec *iov, int iovcnt, int64_t deadline_ms);
int ddio_recvv_all(int fd, struct iovec *iov, int iovcnt, int64_t deadline_ms);
/* One non-blocking send of what the socket (or its TLS session) takes now:
 * the bytes sent (0: none fit), or -errno (-ECONNRESET: the peer is gone). */
ssize_t ddio_sendv_some(int fd, const struct iovec *iov, int iovcnt);
/* poll(2) that also counts bytes a socket's TLS session already holds
 * (ddio_tls.h): such an entry is readable (POLLIN) at once. */
struct pollfd;
int ddio_poll(struct pollfd *p, unsigned long n, int timeout_ms);
/* read and discard n bytes */
int ddio_discard(int fd, size_t n, int64_t deadline_ms);

/* Send one message: header + payload (payload may be NULL when len is 0),
 * plus optional trailing data (e.g. PUT/DATA bytes) counted in the length. */
int ddio_send_msg(int fd, uint16_t type, uint64_t req, int32_t status,
                  const void *payload, size_t plen,
                  const void *data, size_t dlen, int64_t deadline_ms);
/* a request carrying the membership epoch the client knows (PROTOCOL.md
 * "MEMBER"), no trailing data */
int ddio_send_req_ep(int fd, uint16_t type, uint64_t req, uint32_t epoch,
                     const void *payload, size_t plen, int64_t deadline_ms);
/* Receive a header and validate it (max payload DDIO_MAX_PAYLOAD). */
int ddio_recv_hdr(int fd, struct ddio_hdr *h, int64_t deadline_ms);
/* A PUT's segment list (its payload of len bytes up to the data), leaving
 * the data on the socket so the caller can receive it straight into place.
 * -EPROTO for an empty, oversized or inconsistent list. */
int ddio_recv_put_list(int fd, uint64_t len, struct ddio_segs *sg, int64_t deadline_ms);

/* 1 when every segment of a PUT or GET lies inside a buffer of len bytes
 * (no wrap-around), else 0 */
int ddio_segs_fit(const struct ddio_segs *sg, uint64_t len);

/* The pieces of buf[0, len) that a PUT's or GET's segments name, in stream
 * order, stream-adjacent pieces merged (a contiguous buffer is one piece:
 * UCX moves it in one rendezvous, TCP in one recvmsg entry). lead empty
 * slots come first for the caller's headers. *iov (malloc'd, caller frees)
 * gets lead + *n entries. 0; -EPROTO when a segment lies outside the
 * buffer (nothing allocated); -ENOMEM. */
int ddio_segs_iov(const struct ddio_segs *sg, char *buf, uint64_t len, int lead,
                  struct iovec **iov, int *n);

/* errno <-> short name, for messages ("ENOENT") */
const char *ddio_errno_name(int err);

#endif
