/* LOCAL: a client on this host reads, and writes contiguous ranges of, a
 * file's bytes itself. The server hands it descriptors of the file's
 * datafiles (buffered: the page cache the server's own independent I/O goes
 * through; read-write when the client asked and its handle may write) and of
 * a page that mirrors the file's local size, over an abstract AF_UNIX socket
 * the client listens on. A call then costs the client one copy into or out
 * of the page cache, the same as ufs:, instead of a round trip with the data
 * on the connection. A writer raises the size page before it writes; the
 * server folds the page into its size, writes partly covered blocks
 * byte-exact from then on (a read-modify-write would put back old bytes over
 * the client's) and no longer trims the datafiles (store.h). Durability is
 * unchanged: MPI_File_sync's fdatasync covers the inode's pages, whoever
 * dirtied them. A client elsewhere cannot be reached (abstract names are per
 * network namespace): the connect fails and the client goes through the
 * server as before. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "local.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ddio_net.h"


/* connect to the client's listener (queued in its backlog: no wait) */
static int dial(const char *name)
{
    struct sockaddr_un a;
    socklen_t alen;
    int rc = ddio_abstract_addr(name, &a, &alen);
    if (rc)
        return rc;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    if (connect(s, (struct sockaddr *)&a, alen)) {
        rc = -errno;
        close(s);
        return rc;
    }
    return s;
}

/* one message: the encoded ddio_local_msg and the descriptors */
static int send_fds(int s, const struct ddio_wbuf *w, const int *fds, int n)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * (DDIO_MAX_LOCAL_DISKS + 1))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {.iov_base = w->p, .iov_len = w->len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)n);
    return sendmsg(s, &mh, MSG_NOSIGNAL) == (ssize_t)w->len ? 0 : -errno;
}

int local_hand_over(struct ofile *of, const struct ddio_local_req *m, int write)
{
    int fds[DDIO_MAX_LOCAL_DISKS + 1], rc, s;
    if (of->ndisks > (int)DDIO_MAX_LOCAL_DISKS)
        return -E2BIG;
    /* checksums on (sums.h): a client reading the datafiles itself would
     * not check them, one writing them would leave no sums; its calls go
     * through XFER, which does both (SEMANTICS.md "Checksums") */
    if (of->sums)
        return -EOPNOTSUPP;
    /* an erasure-coded file's partial writes are in its overlay, not in
     * the datafiles a same-host reader would read */
    if (of->layout.ec.k)
        return -EOPNOTSUPP;
    /* first the client's socket: one on another host must not turn the
     * file's partial-block writes byte-exact (store_local_fds) */
    if ((s = dial(m->name)) < 0)
        return s;
    if ((rc = store_local_fds(of, &write, &fds[0], fds + 1))) {
        close(s);
        return rc;
    }
    struct ddio_local_msg msg = {.ndisks = (uint32_t)of->ndisks, .block_size = of->block_size,
                                 .flags = write ? DDIO_LOCAL_WRITE : 0};
    memcpy(msg.nonce, m->nonce, DDIO_LOCAL_NONCE);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_local_msg(&w, &msg);
    rc = w.err ? -ENOMEM : send_fds(s, &w, fds, of->ndisks + 1);
    close(s);
    ddio_wbuf_free(&w);
    for (int i = 0; i <= of->ndisks; i++)
        close(fds[i]);
    return rc;
}
