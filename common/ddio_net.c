/* Deadline-based socket helpers (see ddio_net.h).
 *
 * Deadlines are absolute CLOCK_MONOTONIC milliseconds (ddio_now_ms()), and
 * always finite: callers pass ddio_now_ms() + timeout. A deadline already in
 * the past still lets data that is ready move, then fails with -ETIMEDOUT.
 *
 * The transfer loops try the non-blocking call first (MSG_DONTWAIT, so they
 * work on blocking sockets too) and poll only when the socket is not ready:
 * a ready socket costs one syscall, and no call ever blocks past the deadline.
 * They are for sockets only (send/recv flags); MSG_NOSIGNAL keeps a closed
 * peer from raising SIGPIPE in the MPI application or the server.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_net.h"
#include "ddio_tls.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int64_t ddio_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ddio_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Wait until fd is ready for `events` or the deadline passes. 0 when ready
 * (or in error/hangup state: the next I/O call reports it), -ETIMEDOUT. */
static int wait_fd(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - ddio_now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p = { .fd = fd, .events = events };
        int rc = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -errno;
    }
}

/* a peer that went away is one condition for callers, however it shows */
static int io_errno(int e)
{
    return (e == EPIPE) ? -ECONNRESET : -e;
}

/* ---- host:port ------------------------------------------------------------ */

static int parse_port(const char *s, int *port)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > 65535)
        return -EINVAL;
    *port = (int)v;
    return 0;
}

static int copy_host(const char *s, size_t n, char *host, size_t hostlen)
{
    if (n >= hostlen)
        return -EINVAL;
    memcpy(host, s, n);
    host[n] = '\0';
    return 0;
}

/* "name:port", "1.2.3.4:port" or "[v6addr]:port". A bare IPv6 address with
 * several colons is ambiguous and refused. The host may be empty (":4711",
 * meaning "any" to a listener); the port is 0..65535. */
int ddio_parse_hostport(const char *s, char *host, size_t hostlen, int *port)
{
    if (!s || !host || !port)
        return -EINVAL;
    if (s[0] == '[') {
        const char *rb = strchr(s, ']');
        if (!rb || rb[1] != ':' || rb == s + 1)
            return -EINVAL;
        if (copy_host(s + 1, (size_t)(rb - s - 1), host, hostlen))
            return -EINVAL;
        return parse_port(rb + 2, port);
    }
    const char *colon = strchr(s, ':');
    if (!colon || strchr(colon + 1, ':'))
        return -EINVAL;
    if (copy_host(s, (size_t)(colon - s), host, hostlen))
        return -EINVAL;
    return parse_port(colon + 1, port);
}

/* ---- connect / listen ----------------------------------------------------- */

static int gai_errno(int rc)
{
    switch (rc) {
    case EAI_NONAME:
#ifdef EAI_NODATA
    case EAI_NODATA:
#endif
    case EAI_FAIL:
        return -EHOSTUNREACH;
    case EAI_AGAIN:
        return -EAGAIN;
    case EAI_MEMORY:
        return -ENOMEM;
    case EAI_SYSTEM:
        return errno ? -errno : -EIO;
    default:
        return -EINVAL;
    }
}

static int resolve(const char *host, int port, int passive, struct addrinfo **res)
{
    char portstr[16];
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    /* no AI_ADDRCONFIG: on a node whose only interface is loopback it would
     * hide 127.0.0.1 and ::1, which is exactly where tests and ddio-run live */
    hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
    snprintf(portstr, sizeof(portstr), "%d", port);
    int rc = getaddrinfo(host, portstr, &hints, res);
    return rc ? gai_errno(rc) : 0;
}

static int set_blocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

/* One address: non-blocking connect, wait for completion until the
 * deadline, then back to a blocking socket with TCP_NODELAY (the protocol
 * is request/reply with small headers: Nagle would add latency to each). */
static int connect_one(const struct addrinfo *ai, int64_t deadline_ms)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
    if (fd < 0)
        return -errno;
    int rc = 0;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        if (errno != EINPROGRESS && errno != EINTR) {
            rc = -errno;
            goto fail;
        }
        if ((rc = wait_fd(fd, POLLOUT, deadline_ms)))
            goto fail;
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
            err = errno;
        if (err) {
            rc = -err;
            goto fail;
        }
    }
    if ((rc = set_blocking(fd)))
        goto fail;
    ddio_nodelay(fd);
    return fd;
fail:
    close(fd);
    return rc;
}

/* Note: name resolution (getaddrinfo) is not bounded by the deadline; use
 * numeric addresses or a local resolver where that matters. */
int ddio_connect(const char *host, int port, int64_t deadline_ms)
{
    struct addrinfo *res, *ai;
    if (!host || !*host || port <= 0 || port > 65535)
        return -EINVAL;
    int rc = resolve(host, port, 0, &res);
    if (rc)
        return rc;
    rc = -EHOSTUNREACH;
    for (ai = res; ai; ai = ai->ai_next) {
        rc = connect_one(ai, deadline_ms);
        if (rc >= 0 || rc == -ETIMEDOUT)
            break;
    }
    freeaddrinfo(res);
    return rc;
}

/* Both ends: a reply is often a data message followed by a small one
 * (PUT then DONE); with Nagle the small one waits for the peer's delayed
 * ACK, ~40 ms per call. */
void ddio_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void ddio_keepalive(int fd, int idle_s, int user_s)
{
    int one = 1, intvl = 5, cnt = 3;
    unsigned user_ms = (unsigned)user_s * 1000u;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_ms, sizeof(user_ms));
}

static int listen_one(const struct addrinfo *ai, int *bound_port)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0)
        return -errno;
    int one = 1;
    /* restart a server on its port while old connections sit in TIME_WAIT */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, SOMAXCONN) < 0 ||
        getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    if (bound_port) {
        if (ss.ss_family == AF_INET6)
            *bound_port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
        else
            *bound_port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    }
    return fd;
}

/* host NULL, "" or "*" listens on every address. Returns a blocking,
 * CLOEXEC listening socket or -errno; the first address that binds wins. */
int ddio_listen(const char *host, int port, int *bound_port)
{
    struct addrinfo *res, *ai;
    if (port < 0 || port > 65535)
        return -EINVAL;
    if (host && (!*host || strcmp(host, "*") == 0))
        host = NULL;
    int rc = resolve(host, port, 1, &res);
    if (rc)
        return rc;
    rc = -EADDRNOTAVAIL;
    for (ai = res; ai; ai = ai->ai_next) {
        rc = listen_one(ai, bound_port);
        if (rc >= 0)
            break;
    }
    freeaddrinfo(res);
    return rc;
}

/* ---- transfers ---------------------------------------------------------------- */

/* Drop fully transferred iovecs and advance into a partial one. */
static void iov_advance(struct iovec **iov, int *iovcnt, size_t n)
{
    while (*iovcnt > 0 && n >= (*iov)->iov_len) {
        n -= (*iov)->iov_len;
        (*iov)++;
        (*iovcnt)--;
    }
    if (*iovcnt > 0 && n) {
        (*iov)->iov_base = (char *)(*iov)->iov_base + n;
        (*iov)->iov_len -= n;
    }
}

/* Through fd's TLS session (ddio_tls.h): the same loop, with the waits the
 * session asks for (a TLS read may need to wait for a write, and back). */
static int tls_move_all(int fd, struct iovec *iov, int iovcnt, int sending,
                        int64_t deadline_ms)
{
    iov_advance(&iov, &iovcnt, 0);
    while (iovcnt > 0) {
        short ev = 0;
        int cnt = iovcnt > IOV_MAX ? IOV_MAX : iovcnt;
        ssize_t k = sending ? ddio_tls_sendv(fd, iov, cnt, &ev) : ddio_tls_recvv(fd, iov, cnt, &ev);
        if (k > 0) {
            iov_advance(&iov, &iovcnt, (size_t)k);
            continue;
        }
        if (k < 0)
            return (int)k;
        int rc = wait_fd(fd, ev, deadline_ms);
        if (rc)
            return rc;
    }
    return 0;
}

ssize_t ddio_sendv_some(int fd, const struct iovec *iov, int iovcnt)
{
    if (ddio_tls_active(fd)) {
        short ev;
        return ddio_tls_sendv(fd, iov, iovcnt, &ev);
    }
    struct msghdr mh = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};
    ssize_t k;
    do
        k = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (k < 0 && errno == EINTR);
    if (k < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : io_errno(errno);
    return k;
}

int ddio_poll(struct pollfd *p, nfds_t n, int timeout_ms)
{
    int held = 0;
    for (nfds_t i = 0; i < n; i++)
        held += p[i].fd >= 0 && ddio_tls_pending(p[i].fd);
    int rc = poll(p, n, held ? 0 : timeout_ms);
    if (rc < 0 || !held)
        return rc;
    rc = 0;
    for (nfds_t i = 0; i < n; i++) {
        if (p[i].fd >= 0 && ddio_tls_pending(p[i].fd))
            p[i].revents |= POLLIN;
        rc += p[i].revents != 0;
    }
    return rc;
}

int ddio_sendv_all(int fd, struct iovec *iov, int iovcnt, int64_t deadline_ms)
{
    if (ddio_tls_active(fd))
        return tls_move_all(fd, iov, iovcnt, 1, deadline_ms);
    iov_advance(&iov, &iovcnt, 0);    /* skip leading empty entries */
    while (iovcnt > 0) {
        struct msghdr mh = { .msg_iov = iov,
                             .msg_iovlen = (size_t)(iovcnt > IOV_MAX ? IOV_MAX : iovcnt) };
        ssize_t k = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k > 0) {
            iov_advance(&iov, &iovcnt, (size_t)k);
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return io_errno(errno);
        int rc = wait_fd(fd, POLLOUT, deadline_ms);
        if (rc)
            return rc;
    }
    return 0;
}

int ddio_recvv_all(int fd, struct iovec *iov, int iovcnt, int64_t deadline_ms)
{
    if (ddio_tls_active(fd))
        return tls_move_all(fd, iov, iovcnt, 0, deadline_ms);
    iov_advance(&iov, &iovcnt, 0);
    while (iovcnt > 0) {
        struct msghdr mh = { .msg_iov = iov,
                             .msg_iovlen = (size_t)(iovcnt > IOV_MAX ? IOV_MAX : iovcnt) };
        ssize_t k = recvmsg(fd, &mh, MSG_DONTWAIT);
        if (k > 0) {
            iov_advance(&iov, &iovcnt, (size_t)k);
            continue;
        }
        if (k == 0)
            return -ECONNRESET;       /* orderly close in mid-message */
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return io_errno(errno);
        int rc = wait_fd(fd, POLLIN, deadline_ms);
        if (rc)
            return rc;
    }
    return 0;
}

int ddio_segs_fit(const struct ddio_segs *sg, uint64_t len)
{
    for (uint32_t j = 0; j < sg->nseg; j++)
        if (sg->seg[j].off > len || sg->seg[j].len > len - sg->seg[j].off)
            return 0;
    return 1;
}

int ddio_segs_iov(const struct ddio_segs *sg, char *buf, uint64_t len, int lead,
                  struct iovec **iov, int *n)
{
    struct iovec *v;
    int k = 0;
    *iov = NULL;
    *n = 0;
    if (!ddio_segs_fit(sg, len))
        return -EPROTO;
    v = malloc(((size_t)lead + sg->nseg + 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    for (uint32_t j = 0; j < sg->nseg; j++) {
        char *p = buf + sg->seg[j].off;
        struct iovec *last = k ? &v[lead + k - 1] : NULL;
        if (last && (char *)last->iov_base + last->iov_len == p)
            last->iov_len += (size_t)sg->seg[j].len;
        else
            v[lead + k++] = (struct iovec){p, (size_t)sg->seg[j].len};
    }
    *iov = v;
    *n = k;
    return 0;
}

int ddio_send_all(int fd, const void *p, size_t n, int64_t deadline_ms)
{
    struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
    return ddio_sendv_all(fd, &iov, 1, deadline_ms);
}

int ddio_recv_all(int fd, void *p, size_t n, int64_t deadline_ms)
{
    struct iovec iov = { .iov_base = p, .iov_len = n };
    return ddio_recvv_all(fd, &iov, 1, deadline_ms);
}

int ddio_discard(int fd, size_t n, int64_t deadline_ms)
{
    char buf[8192];
    while (n > 0) {
        size_t k = n < sizeof(buf) ? n : sizeof(buf);
        int rc = ddio_recv_all(fd, buf, k, deadline_ms);
        if (rc)
            return rc;
        n -= k;
    }
    return 0;
}

/* ---- messages --------------------------------------------------------------------- */

/* Header, payload and data go out in one writev-style call; the data (a
 * user buffer or a block buffer, possibly megabytes) is never copied. */
static int send_msg(int fd, uint16_t type, uint64_t req, int32_t status, uint32_t epoch,
                    const void *payload, size_t plen,
                    const void *data, size_t dlen, int64_t deadline_ms)
{
    if (plen > DDIO_MAX_PAYLOAD || dlen > DDIO_MAX_PAYLOAD - plen)
        return -EMSGSIZE;
    if ((!payload && plen) || (!data && dlen))
        return -EINVAL;
    struct ddio_hdr h;
    uint8_t hb[DDIO_HDR_SIZE];
    ddio_hdr_init(&h, type, req, (uint64_t)plen + dlen);
    h.status = status;
    h.epoch = epoch;
    ddio_hdr_encode(&h, hb);
    struct iovec iov[3] = {
        { .iov_base = hb, .iov_len = sizeof(hb) },
        { .iov_base = (void *)payload, .iov_len = plen },
        { .iov_base = (void *)data, .iov_len = dlen },
    };
    return ddio_sendv_all(fd, iov, 3, deadline_ms);
}

int ddio_send_msg(int fd, uint16_t type, uint64_t req, int32_t status,
                  const void *payload, size_t plen,
                  const void *data, size_t dlen, int64_t deadline_ms)
{
    return send_msg(fd, type, req, status, 0, payload, plen, data, dlen, deadline_ms);
}

int ddio_send_req_ep(int fd, uint16_t type, uint64_t req, uint32_t epoch,
                     const void *payload, size_t plen, int64_t deadline_ms)
{
    return send_msg(fd, type, req, 0, epoch, payload, plen, NULL, 0, deadline_ms);
}

int ddio_recv_put_list(int fd, uint64_t len, struct ddio_segs *sg, int64_t deadline_ms)
{
    uint8_t nb[4];
    memset(sg, 0, sizeof(*sg));
    if (len < sizeof(nb))
        return -EPROTO;
    int rc = ddio_recv_all(fd, nb, sizeof(nb), deadline_ms);
    if (rc)
        return rc;
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, nb, sizeof(nb));
    uint32_t nseg = ddio_get_u32(&r);
    if (nseg == 0 || nseg > DDIO_MAX_SEGS || (uint64_t)nseg * DDIO_SEG_WIRE > len - sizeof(nb))
        return -EPROTO;
    size_t hl = sizeof(nb) + (size_t)nseg * DDIO_SEG_WIRE, got;
    uint8_t *list = malloc(hl);
    if (!list)
        return -ENOMEM;
    memcpy(list, nb, sizeof(nb));
    rc = ddio_recv_all(fd, list + sizeof(nb), hl - sizeof(nb), deadline_ms);
    if (!rc && ddio_dec_put(list, (size_t)len, sg, &got))   /* reads only the list */
        rc = -EPROTO;
    free(list);
    return rc;
}

int ddio_recv_hdr(int fd, struct ddio_hdr *h, int64_t deadline_ms)
{
    uint8_t hb[DDIO_HDR_SIZE];
    int rc = ddio_recv_all(fd, hb, sizeof(hb), deadline_ms);
    if (rc)
        return rc;
    return ddio_hdr_decode(hb, h, DDIO_MAX_PAYLOAD);
}

/* ---- errno names ------------------------------------------------------------------- */

const char *ddio_errno_name(int err)
{
    static const struct { int e; const char *name; } tab[] = {
        { 0, "OK" },
        { EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" },
        { EINTR, "EINTR" }, { EIO, "EIO" }, { ENXIO, "ENXIO" },
        { E2BIG, "E2BIG" }, { EBADF, "EBADF" }, { EAGAIN, "EAGAIN" },
        { ENOMEM, "ENOMEM" }, { EACCES, "EACCES" }, { EFAULT, "EFAULT" },
        { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" }, { EXDEV, "EXDEV" },
        { ENODEV, "ENODEV" }, { ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" },
        { EINVAL, "EINVAL" }, { ENFILE, "ENFILE" }, { EMFILE, "EMFILE" },
        { EFBIG, "EFBIG" }, { ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" },
        { EROFS, "EROFS" }, { EMLINK, "EMLINK" }, { EPIPE, "EPIPE" },
        { ERANGE, "ERANGE" }, { EDEADLK, "EDEADLK" },
        { ENAMETOOLONG, "ENAMETOOLONG" }, { ENOLCK, "ENOLCK" },
        { ENOSYS, "ENOSYS" }, { ENOTEMPTY, "ENOTEMPTY" }, { ELOOP, "ELOOP" },
        { EOVERFLOW, "EOVERFLOW" }, { EPROTO, "EPROTO" },
        { EBADMSG, "EBADMSG" }, { EMSGSIZE, "EMSGSIZE" },
        { EPROTONOSUPPORT, "EPROTONOSUPPORT" }, { EOPNOTSUPP, "EOPNOTSUPP" },
        { EADDRINUSE, "EADDRINUSE" }, { EADDRNOTAVAIL, "EADDRNOTAVAIL" },
        { ENETDOWN, "ENETDOWN" }, { ENETUNREACH, "ENETUNREACH" },
        { ECONNABORTED, "ECONNABORTED" }, { ECONNRESET, "ECONNRESET" },
        { ENOBUFS, "ENOBUFS" }, { ENOTCONN, "ENOTCONN" },
        { ETIMEDOUT, "ETIMEDOUT" }, { ECONNREFUSED, "ECONNREFUSED" },
        { EHOSTDOWN, "EHOSTDOWN" }, { EHOSTUNREACH, "EHOSTUNREACH" },
        { EALREADY, "EALREADY" }, { EINPROGRESS, "EINPROGRESS" },
        { ESTALE, "ESTALE" }, { EDQUOT, "EDQUOT" }, { ECANCELED, "ECANCELED" },
    };
    if (err == INT_MIN)
        return "EUNKNOWN";
    if (err < 0)
        err = -err;
    for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
        if (tab[i].e == err)
            return tab[i].name;
    return "EUNKNOWN";
}

/* the address of one end of fd, without its port (v4-mapped v6 as v4) */
static int end_addr(int fd, int peer, struct in6_addr *a)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if ((peer ? getpeername(fd, (struct sockaddr *)&ss, &len)
              : getsockname(fd, (struct sockaddr *)&ss, &len)) < 0)
        return -1;
    memset(a, 0, sizeof(*a));
    if (ss.ss_family == AF_INET) {
        a->s6_addr[10] = a->s6_addr[11] = 0xff;
        memcpy(&a->s6_addr[12], &((struct sockaddr_in *)&ss)->sin_addr, 4);
        return 0;
    }
    if (ss.ss_family == AF_INET6) {
        *a = ((struct sockaddr_in6 *)&ss)->sin6_addr;
        return 0;
    }
    return -1;
}

int ddio_same_host(int fd)
{
    struct in6_addr me, peer;
    if (end_addr(fd, 0, &me) || end_addr(fd, 1, &peer))
        return 0;
    static const uint8_t v4lo[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if ((!memcmp(peer.s6_addr, v4lo, 12) && peer.s6_addr[12] == 127) || IN6_IS_ADDR_LOOPBACK(&peer))
        return 1;
    return !memcmp(&me, &peer, sizeof(me));
}

int ddio_abstract_addr(const char *name, struct sockaddr_un *a, socklen_t *len)
{
    size_t n = strlen(name);
    memset(a, 0, sizeof(*a));
    if (n + 1 > sizeof(a->sun_path))
        return -ENAMETOOLONG;
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path + 1, name, n);       /* abstract: a leading NUL */
    *len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + n);
    return 0;
}
