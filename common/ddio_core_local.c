/* Same-host I/O (LOCAL, PROTOCOL.md): when a file's stripe servers run on
 * this host, a contiguous read, and an independent contiguous write, is done
 * by the client itself on the servers' datafiles, through descriptors the
 * servers hand over once per open file: one copy into or out of the page
 * cache, as ufs: pays, instead of a round trip with the data on the
 * connection. A server publishes its local size in a shared page, so the
 * end of file and holes read as the server would answer; a writer raises
 * that page (a compare-and-swap maximum) before it writes, so the server's
 * size, and every reader's end of file, include its bytes. The server keeps
 * its own writes from undoing a client's (ioserver/local.c): from the first
 * writable handover on it writes partly covered blocks byte-exact.
 *
 * The descriptors are only trusted while the connection they came with is
 * the one the file's handle lives on and has nothing to say (no hangup, no
 * message): a server that died or restarted is then reached the usual way,
 * which reconnects or fails as every other call does. MPI-IO's consistency
 * is the page cache's: what a rank wrote, itself or through a server, is
 * in the page cache every later read sees, and MPI_File_sync's fdatasync
 * on the server covers the inode's pages whoever dirtied them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_core_io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "ddio_wb.h"

struct ddio_local {
    unsigned gen;               /* conn->gen the descriptors came with */
    int state;                  /* 1: usable; -1: not offered (another host) */
    int writable;               /* read-write descriptors and size page */
    int nfds;                   /* datafiles, one per server disk */
    int fds[DDIO_MAX_LOCAL_DISKS];
    uint64_t *size;             /* the server's local size (shared page) */
    struct ddio_stripe disks;   /* local offset -> (disk, offset) */
    int64_t quiet_ms;           /* when poll last found the connection quiet */
    struct ddio_wb wb[DDIO_MAX_LOCAL_DISKS];    /* per datafile (wb_note) */
    char *link;                 /* where the first datafile was when handed
                                 * over (/proc/self/fd): ddio_local_same_file */
    uint64_t rbytes, wbytes;    /* moved through these descriptors, not yet
                                 * reported to the server (LOCALSTAT) */
};

/* How long a connection found quiet is taken as quiet without asking the
 * kernel again: a poll per call would double an 8-byte read's cost. A
 * server that dies meanwhile leaves its files as they were (its own
 * writes done); one that restarted is noticed by the next call that talks
 * to it (a write, or the sync MPI requires before reading others' writes),
 * which renews the handle and with it these descriptors. */
#define QUIET_MS 1

/* ---- the process's listener ------------------------------------------------- */

static pthread_mutex_t lis_mu = PTHREAD_MUTEX_INITIALIZER;
static int lis_fd = -1;
static pid_t lis_pid;
static char lis_name[64];

/* lis_mu held: an abstract SOCK_SEQPACKET listener named for this process */
static int listener(void)
{
    uint64_t r = 0;
    if (lis_fd >= 0 && lis_pid == getpid())
        return lis_fd;
    if (lis_fd >= 0)
        close(lis_fd);      /* a forked child's copy: never its own */
    lis_fd = -1;
    if (getrandom(&r, sizeof(r), 0) != (ssize_t) sizeof(r))
        return -1;
    snprintf(lis_name, sizeof(lis_name), DDIO_LOCAL_PREFIX "%d/%016llx", (int) getpid(),
             (unsigned long long) r);
    struct sockaddr_un a;
    socklen_t alen;
    if (ddio_abstract_addr(lis_name, &a, &alen))
        return -1;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    if (bind(s, (struct sockaddr *) &a, alen) || listen(s, 64)) {
        close(s);
        return -1;
    }
    lis_fd = s;
    lis_pid = getpid();
    return s;
}

/* ---- taking the descriptors ------------------------------------------------- */

static void close_fds(const int *fds, int n)
{
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

/* one queued message on an accepted connection, decoded, with its
 * descriptors (the size page's first); -1: none or malformed (closed) */
static int recv_handover(int s, struct ddio_local_msg *m, int *fds, int *nfd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * (DDIO_MAX_LOCAL_DISKS + 1))];
        struct cmsghdr align;
    } u;
    uint8_t p[64];
    struct iovec iov = {.iov_base = p,.iov_len = sizeof(p) };
    struct msghdr mh = {.msg_iov = &iov,.msg_iovlen = 1,.msg_control = u.buf,
        .msg_controllen = sizeof(u.buf)
    };
    ssize_t n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

    *nfd = 0;
    for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && *nfd == 0) {
            *nfd = (int) ((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t) *nfd);
        }
    if (n < 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || ddio_dec_local_msg(p, (size_t) n, m)
        || *nfd != (int) m->ndisks + 1) {
        close_fds(fds, *nfd);
        return -1;
    }
    return 0;
}

/* the path fd's file is at now ("... (deleted)" once unlinked) */
static int fd_link(int fd, char *out, size_t n)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
    ssize_t k = readlink(p, out, n - 1);
    if (k <= 0 || (size_t) k >= n - 1)
        return -1;
    out[k] = '\0';
    return 0;
}

int ddio_local_same_file(const struct ddio_local *L)
{
    char p[PATH_MAX];
    if (!L || L->state != 1 || L->nfds <= 0)
        return 0;
    return L->link && fd_link(L->fds[0], p, sizeof(p)) == 0 && strcmp(p, L->link) == 0
        ? 1 : -1;
}

/* the descriptors of a message into L (its size page mapped) */
static int adopt_fds(struct ddio_local *L, const struct ddio_local_msg *m, const int *fds,
                     int nfd)
{
    L->writable = (m->flags & DDIO_LOCAL_WRITE) != 0;
    void *map = mmap(NULL, sizeof(uint64_t), PROT_READ | (L->writable ? PROT_WRITE : 0),
                     MAP_SHARED, fds[0], 0);
    close(fds[0]);
    if (map == MAP_FAILED) {
        close_fds(fds + 1, nfd - 1);
        return -1;
    }
    L->size = map;
    L->nfds = nfd - 1;
    memcpy(L->fds, fds + 1, sizeof(int) * (size_t) L->nfds);
    L->disks.unit = m->block_size;
    L->disks.count = m->ndisks;
    free(L->link);
    L->link = NULL;
    char p[PATH_MAX];
    if (L->nfds > 0 && fd_link(L->fds[0], p, sizeof(p)) == 0)
        L->link = strdup(p);
    return 0;
}

/* the next handover queued on the listener: 0, with the message and its
 * descriptors; 1: a malformed one (dropped); -1: none queued */
static int next_handover(int lis, struct ddio_local_msg *m, int *fds, int *nfd)
{
    int s = accept4(lis, NULL, NULL, SOCK_CLOEXEC);
    if (s < 0)
        return -1;
    int rc = recv_handover(s, m, fds, nfd);
    close(s);
    return rc ? 1 : 0;
}

/* after the server's reply its connection and message are queued: take
 * them until ours is found (a stale one from a failed earlier try is
 * dropped) */
static int take_fds(int lis, const uint8_t *nonce, struct ddio_local *L)
{
    struct ddio_local_msg m;
    int fds[DDIO_MAX_LOCAL_DISKS + 1], nfd, rc;

    for (int k = 0; k < 8 && (rc = next_handover(lis, &m, fds, &nfd)) >= 0; k++) {
        if (rc)
            continue;
        if (!memcmp(m.nonce, nonce, DDIO_LOCAL_NONCE))
            return adopt_fds(L, &m, fds, nfd);
        close_fds(fds, nfd);
    }
    return -1;
}

/* The listener, waited for at most LIS_WAIT_MS: another thread's LOCAL
 * holds it for a round trip (ddio cp's threads, one per server, start
 * together), but a read-only open of this process holds it while it takes
 * connections' mutexes, and the caller here holds one: past the bound this
 * call goes to the server and the next one asks again (no deadlock). */
#define LIS_WAIT_MS 200
static int lis_lock_bounded(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += (long) LIS_WAIT_MS * 1000000L;
    t.tv_sec += t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return pthread_mutex_clocklock(&lis_mu, CLOCK_MONOTONIC, &t);
}

/* c->mu held: LOCAL for stripe server i's handle. 0: L is usable; -1: this
 * server will not be read locally (another host, an old server, an error:
 * logged at debug level, the reads go to the server as before); 1: not now
 * (the listener stayed busy: lis_lock_bounded; the next call asks again) */
static int acquire(struct ddio_fh *f, int i, struct ddio_local *L)
{
    struct ddio_conn *c = f->srv[i].conn;
    struct ddio_local_req m = {.handle = f->srv[i].handle,
        .flags = f->local_write && (f->amode & (DDIO_O_WRONLY | DDIO_O_RDWR)) ? DDIO_LOCAL_WRITE : 0
    };
    struct ddio_wbuf w;
    struct ddio_err e;
    uint8_t *reply = NULL;
    size_t len = 0;
    int rc = -1, lis;

    memset(&e, 0, sizeof(e));
    if (c->local_no)
        return -1;
    if (lis_lock_bounded())
        return 1;
    if ((lis = listener()) >= 0 && getrandom(m.nonce, sizeof(m.nonce), 0) == sizeof(m.nonce)) {
        m.name = lis_name;
        ddio_wbuf_init(&w);
        ddio_enc_local_req(&w, &m);
        rc = ddio_conn_call_locked(c, DDIO_T_LOCAL, &w, ddio_now_ms() + f->timeout_ms, &reply,
                                   &len, &e);
        ddio_wbuf_free(&w);
        free(reply);
        if (rc == 0 && take_fds(lis, m.nonce, L))
            ddio_err_set(&e, EPROTO, "no descriptors came with the answer");
        rc = e.errnum ? -1 : 0;
    }
    pthread_mutex_unlock(&lis_mu);
    if (e.errnum == EHOSTUNREACH)
        c->local_no = 1;    /* asked no more on this connection */
    if (rc)
        DDIO_DEBUG("same-host I/O of %s on %s: off (%s)", f->path ? f->path : "?",
                       c->name, e.errnum ? e.msg : "no local socket");
    return rc;
}

/* ---- the handover with a read-only OPEN (DDIO_O_LOCAL) ---------------------- */

int ddio_local_ask_begin(struct ddio_fh *f, struct ddio_conn **conns, int n, uint32_t amode,
                         struct ddio_local_ask *a)
{
    memset(a, 0, sizeof(*a));
    if (!f->local_read || f->local_lazy || amode != DDIO_O_RDONLY || n <= 0)
        return 0;
    a->asked = calloc((size_t) n, 1);
    a->nonce = calloc((size_t) n, DDIO_LOCAL_NONCE);
    pthread_mutex_lock(&lis_mu);
    int any = 0, ok = a->asked && a->nonce && listener() >= 0;
    for (int i = 0; ok && i < n; i++)
        if (!conns[i]->local_no &&
            getrandom(a->nonce[i], DDIO_LOCAL_NONCE, 0) == DDIO_LOCAL_NONCE)
            any = a->asked[i] = 1;
    if (!any) {
        pthread_mutex_unlock(&lis_mu);
        free(a->asked);
        free(a->nonce);
        memset(a, 0, sizeof(*a));
        return 0;
    }
    a->n = n;
    a->name = lis_name;
    return 1;
}

/* stripe server of conns[i]'s handover, matched by nonce; NULL: not ours */
static struct ddio_srv *asked_srv(struct ddio_fh *f, struct ddio_conn **conns,
                                  const struct ddio_local_ask *a, const uint8_t *nonce)
{
    for (int i = 0; i < a->n; i++)
        if (a->asked[i] && !memcmp(a->nonce[i], nonce, DDIO_LOCAL_NONCE))
            for (int j = 0; f->srv && j < f->nsrv; j++)
                if (f->srv[j].is_open && f->srv[j].conn == conns[i])
                    return &f->srv[j];
    return NULL;
}

void ddio_local_ask_end(struct ddio_fh *f, struct ddio_conn **conns, struct ddio_local_ask *a)
{
    if (!a->n)
        return;
    /* every server that handed over did so before its answer: all queued */
    struct ddio_local_msg m;
    int fds[DDIO_MAX_LOCAL_DISKS + 1], nfd, rc;
    for (int k = 0; k < a->n + 8 && (rc = next_handover(lis_fd, &m, fds, &nfd)) >= 0; k++) {
        if (rc)
            continue;
        struct ddio_srv *srv = asked_srv(f, conns, a, m.nonce);
        struct ddio_local *L = srv && !srv->local ? calloc(1, sizeof(*L)) : NULL;
        if (!L || adopt_fds(L, &m, fds, nfd)) {
            if (!L)
                close_fds(fds, nfd);
            free(L);
            continue;
        }
        L->gen = srv->gen;
        L->state = 1;
        L->quiet_ms = INT64_MIN / 2;
        srv->local = L;
    }
    pthread_mutex_unlock(&lis_mu);
    free(a->asked);
    free(a->nonce);
    memset(a, 0, sizeof(*a));
}

static void local_clear(struct ddio_local *L)
{
    close_fds(L->fds, L->nfds);
    free(L->link);
    if (L->size)
        munmap(L->size, sizeof(uint64_t));
    uint64_t r = L->rbytes, w = L->wbytes;   /* renewed descriptors: still to report */
    memset(L, 0, sizeof(*L));
    L->rbytes = r;
    L->wbytes = w;
}

/* c->mu held */
static void report_one(struct ddio_fh *f, int i, int64_t deadline)
{
    struct ddio_local *L = f->srv[i].local;
    struct ddio_localstat m = {.handle = f->srv[i].handle };
    struct ddio_wbuf w;
    struct ddio_err e;

    if (!L || !(L->rbytes | L->wbytes) || !ddio_srv_live(&f->srv[i]))
        return;
    m.read = L->rbytes;
    m.written = L->wbytes;
    memset(&e, 0, sizeof(e));
    ddio_wbuf_init(&w);
    ddio_enc_localstat(&w, &m);
    if (!w.err && !ddio_conn_post(f->srv[i].conn, DDIO_T_LOCALSTAT, w.p, w.len, deadline, &e))
        L->rbytes = L->wbytes = 0;
    ddio_wbuf_free(&w);
}

void ddio_local_report(struct ddio_fh *f)
{
    int64_t deadline = ddio_now_ms() + f->timeout_ms;
    for (int i = 0; f->srv && i < f->nsrv; i++) {
        pthread_mutex_lock(&f->srv[i].conn->mu);
        report_one(f, i, deadline);
        pthread_mutex_unlock(&f->srv[i].conn->mu);
    }
}

void ddio_local_release(struct ddio_fh *f)
{
    for (int i = 0; f->srv && i < f->nsrv; i++) {
        if (f->srv[i].local)
            local_clear(f->srv[i].local);
        free(f->srv[i].local);
        f->srv[i].local = NULL;
    }
}

/* stripe server i's descriptors if they can be trusted now: its handle is
 * on the connection they came with. Locks that connection (try-lock: a
 * thread talking to it, or reading through it, sends this read the usual
 * way); the caller unlocks it when done, so no thread renews, closes or
 * reuses the descriptors under a read (the mount reads from many threads).
 * NULL: not locked, read through the server. */
static struct ddio_local *usable(struct ddio_fh *f, int i)
{
    struct ddio_srv *s = &f->srv[i];
    struct ddio_conn *c = s->conn;
    struct ddio_local *L;

    if (!c || !s->is_open || pthread_mutex_trylock(&c->mu))
        return NULL;
    if (!(L = s->local) && !(L = s->local = calloc(1, sizeof(*L)))) {
        pthread_mutex_unlock(&c->mu);
        return NULL;
    }
    int ok = c->gen == s->gen && c->sock >= 0 && !(L->state < 0 && L->gen == s->gen);
    if (ok && (L->state != 1 || L->gen != s->gen)) {
        local_clear(L);
        L->gen = s->gen;
        L->quiet_ms = INT64_MIN / 2;
        int a = acquire(f, i, L);
        L->state = a < 0 ? -1 : a == 0 ? 1 : 0;
        ok = L->state == 1 && c->sock >= 0;
    }
    if (!ok)
        pthread_mutex_unlock(&c->mu);
    return ok ? L : NULL;
}

static void unlock_all(struct ddio_fh *f, struct ddio_local *const *L)
{
    for (int i = 0; i < f->nsrv; i++)
        if (L[i])
            pthread_mutex_unlock(&f->srv[i].conn->mu);
}

static int drained(struct ddio_conn *c, int64_t deadline)
{
    struct ddio_err e;
    memset(&e, 0, sizeof(e));
    return ddio_conn_drain(c, deadline, &e) == 0;
}

/* the connections (locked) have nothing to say: no hangup, no message
 * waiting (a server that died or restarted has closed its end) */
static int quiet_all(struct ddio_fh *f, struct ddio_local *const *L)
{
    struct pollfd p[DDIO_MAX_SERVERS];
    nfds_t n = 0;
    int64_t now = ddio_now_ms();
    for (int i = 0; i < f->nsrv; i++) {
        if (!L[i])
            continue;
        /* a posted CLOSE's reply is no news; taken off first */
        if (f->srv[i].conn->nposted && !drained(f->srv[i].conn, now + f->timeout_ms))
            return 0;
        if (now - L[i]->quiet_ms > QUIET_MS)
            p[n++] = (struct pollfd) {.fd = f->srv[i].conn->sock,.events = POLLIN | POLLRDHUP };
    }
    if (n && ddio_poll(p, n, 0) != 0)
        return 0;
    for (int i = 0; n && i < f->nsrv; i++)
        if (L[i])
            L[i]->quiet_ms = now;
    return 1;
}

/* ---- the read ---------------------------------------------------------------- */

/* A read this long first tells the kernel every datafile range it will read
 * (POSIX_FADV_WILLNEED), then reads them in turn: the pieces alternate
 * between datafiles a stripe unit at a time, and read one by one a cold
 * file had one request in flight per rank where a local read of the same
 * range (one call) has the kernel's read-ahead */
#define LOCAL_ADVISE_MIN (4u << 20)

typedef struct lread {
    struct ddio_local **L;      /* per stripe server (NULL: not read) */
    uint64_t *size;             /* each one's local size, read once */
    char *buf;
    uint64_t off;               /* logical offset of buf[0] */
    uint64_t n;                 /* !raw: bytes below the end of file */
    int raw;
    uint64_t got;               /* bytes found in datafiles */
    uint32_t cur;               /* disk_piece: the server, and where its */
    char *dst;                  /* local offset base goes */
    uint64_t base;
} lread;

/* a disk's share of a server's local range; past the datafile's end: zeros */
static int disk_piece(void *arg, uint32_t disk, uint64_t local_off, uint64_t doff, uint64_t len)
{
    lread *r = arg;
    const struct ddio_local *L = r->L[r->cur];
    char *dst = r->dst + (local_off - r->base);
    uint64_t done = 0;

    while (done < len) {
        ssize_t k = pread(L->fds[disk], dst + done, len - done, (off_t) (doff + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        if (k == 0)
            break;
        done += (uint64_t) k;
    }
    memset(dst + done, 0, len - done);
    return 0;
}

/* of a stripe unit's piece [local_off, +len) on server, the bytes below
 * its local size (0 for a server this call did not size) */
static uint64_t piece_avail(const lread *r, uint32_t server, uint64_t local_off, uint64_t len)
{
    uint64_t sz = r->size[server];
    if (!r->L[server] || sz <= local_off)
        return 0;
    return sz - local_off < len ? sz - local_off : len;
}

/* a disk's share of a piece, told to the kernel (LOCAL_ADVISE_MIN) */
static int disk_advise(void *arg, uint32_t disk, uint64_t local_off, uint64_t doff, uint64_t len)
{
    const lread *r = arg;
    (void) local_off;
    posix_fadvise(r->L[r->cur]->fds[disk], (off_t) doff, (off_t) len, POSIX_FADV_WILLNEED);
    return 0;
}

static int stripe_advise(void *arg, uint32_t server, uint64_t logical_off, uint64_t local_off,
                         uint64_t len)
{
    lread *r = arg;
    uint64_t avail = piece_avail(r, server, local_off, len);
    (void) logical_off;
    r->cur = server;
    return avail ? ddio_layout_foreach(&r->L[server]->disks, local_off, avail, disk_advise, r) : 0;
}

/* one stripe unit's piece of the range: the bytes below its server's local
 * size from the datafiles; below the end of file but past that size: a hole */
static int stripe_piece(void *arg, uint32_t server, uint64_t logical_off, uint64_t local_off,
                        uint64_t len)
{
    lread *r = arg;
    int rc = 0;

    if (!r->L[server])  /* (its size was not read: not this call's server) */
        return 0;
    uint64_t pos = logical_off - r->off;
    uint64_t avail = piece_avail(r, server, local_off, len);
    uint64_t want = r->raw ? avail : len;
    if (avail) {
        r->dst = r->buf + pos;
        r->base = local_off;
        r->cur = server;
        rc = ddio_layout_foreach(&r->L[server]->disks, local_off, avail, disk_piece, r);
        r->got += avail;
        if (!rc)
            r->L[server]->rbytes += avail;
    }
    if (want > avail)
        memset(r->buf + pos + avail, 0, want - avail);
    return rc;
}

/* !raw: the stream bytes below the logical end of file (every server's) */
static uint64_t below_eof(const struct ddio_fh *f, const uint64_t *size, uint64_t off,
                          uint64_t len)
{
    uint64_t eof = 0;
    for (int i = 0; i < f->nsrv; i++) {
        uint64_t e = ddio_layout_logical_end(&f->stripe, (uint32_t) i, size[i]);
        if (e > eof)
            eof = e;
    }
    return eof <= off ? 0 : (eof - off < len ? eof - off : len);
}

/* the servers [off, off+len) touches, marked in the char array arg */
static int mark_touched(void *arg, uint32_t server, uint64_t logical_off, uint64_t local_off,
                        uint64_t len)
{
    (void) logical_off;
    (void) local_off;
    (void) len;
    ((char *) arg)[server] = 1;
    return 0;
}

/* lock (usable) and size the servers sel marks, not yet in L; 0: one is
 * not usable (all unlocked) */
static int size_servers(struct ddio_fh *f, const char *sel, int want, struct ddio_local **L,
                        struct ddio_local **R, uint64_t *size, const char *only)
{
    for (int i = 0; i < f->nsrv; i++) {
        if (L[i] || (sel[i] != 0) != want)
            continue;
        if (!(L[i] = usable(f, i))) {
            unlock_all(f, L);
            return 0;
        }
        size[i] = __atomic_load_n(L[i]->size, __ATOMIC_ACQUIRE);
        R[i] = !only || only[i] ? L[i] : NULL;  /* sized, maybe not read */
    }
    return 1;
}

/* The usual small call's one piece: [off, off+len) in one stripe unit of
 * one server (*s, at local *loc) and one unit of one of its disks (*disk,
 * at *doff); that server locked (usable) in L, the others NULL. The general
 * paths walk the layout three times and size every server they touch; this
 * divides twice. 1: so; 0: its server is not usable (go through it); -1:
 * not one piece (the general path). */
static int one_piece(struct ddio_fh *f, uint64_t off, uint64_t len, struct ddio_local **L,
                     uint32_t *s, uint64_t *loc, uint32_t *disk, uint64_t *doff)
{
    if (!ddio_layout_one(&f->stripe, off, len, s, loc))
        return -1;
    for (int i = 0; i < f->nsrv; i++)
        L[i] = NULL;
    if (!(L[*s] = usable(f, (int) *s)))
        return 0;
    if (!ddio_layout_one(&L[*s]->disks, *loc, len, disk, doff)) {
        unlock_all(f, L);
        return -1;
    }
    return 1;
}

/* a small read below its server's local size (so below the end of file
 * whatever the others hold: none is asked); as one_piece, 1: read */
static int pread_one(struct ddio_fh *f, uint64_t off, void *buf, uint64_t len, uint64_t *bytes)
{
    struct ddio_local *L[DDIO_MAX_SERVERS];
    uint32_t s, disk;
    uint64_t loc, doff;
    int rc = one_piece(f, off, len, L, &s, &loc, &disk, &doff);

    if (rc <= 0)
        return rc;
    rc = -1;
    if (__atomic_load_n(L[s]->size, __ATOMIC_ACQUIRE) >= loc + len) {
        lread r = {.L = L,.cur = s,.dst = buf,.base = loc };
        rc = quiet_all(f, L) && !disk_piece(&r, disk, loc, doff, len);
        if (rc) {
            *bytes = len;
            L[s]->rbytes += len;
        }
    }
    unlock_all(f, L);
    return rc;
}

int ddio_local_pread(struct ddio_fh *f, uint64_t off, void *buf, uint64_t len,
                     const char *only, int raw, uint64_t *bytes)
{
    /* only the file's nsrv entries are cleared: an 8-byte read spent
     * more on clearing 4 KiB of these than on its pread */
    struct ddio_local *L[DDIO_MAX_SERVERS], *R[DDIO_MAX_SERVERS];
    uint64_t size[DDIO_MAX_SERVERS];
    char sel[DDIO_MAX_SERVERS];
    lread r = {.L = R,.size = size,.buf = buf,.off = off,.raw = raw };
    int rc = 0;

    if (!f->local_read || f->nsrv > (int) DDIO_MAX_SERVERS || len == 0)
        return 0;
    if (!only && (rc = pread_one(f, off, buf, len, bytes)) >= 0)
        return rc;
    rc = 0;
    memset(L, 0, sizeof(*L) * (size_t) f->nsrv);
    memset(R, 0, sizeof(*R) * (size_t) f->nsrv);
    memset(sel, 0, (size_t) f->nsrv);
    memset(size, 0, sizeof(*size) * (size_t) f->nsrv);
    /* the servers read first; without raw the others' sizes matter only
     * when these do not put the end of file past the range (so a file
     * whose other servers handed nothing over yet reads without asking) */
    if (only)
        memcpy(sel, only, (size_t) f->nsrv);
    else
        ddio_layout_foreach(&f->stripe, off, len, mark_touched, sel);
    if (!size_servers(f, sel, 1, L, R, size, only))
        return 0;
    r.n = raw ? len : below_eof(f, size, off, len);
    if (r.n < len && !raw) {
        if (!size_servers(f, sel, 0, L, R, size, only))
            return 0;
        r.n = below_eof(f, size, off, len);
    }
    if (quiet_all(f, L)) {
        if (r.n >= LOCAL_ADVISE_MIN)
            (void) ddio_layout_foreach(&f->stripe, off, r.n, stripe_advise, &r);
        /* a read error: the server's path reports it */
        rc = !r.n || !ddio_layout_foreach(&f->stripe, off, r.n, stripe_piece, &r);
    }
    unlock_all(f, L);
    if (rc)
        *bytes = raw ? r.got : r.n;
    return rc;
}

/* ---- the write ---------------------------------------------------------------- */

typedef struct lwrite {
    struct ddio_local **L;      /* per stripe server (NULL: not written) */
    const char *buf;
    uint64_t off;               /* logical offset of buf[0] */
    const char *src;            /* disk_wpiece: where the server's */
    uint64_t base;              /* local offset base comes from */
    uint32_t cur;
} lwrite;

/* Writeback started as this process writes, as the servers' engine does
 * for what it writes through the page cache (ddio_wb.h). (A hint: if it
 * fails, MPI_File_sync's fdatasync writes them.) */
static void wb_note(struct ddio_local *L, uint32_t disk, uint64_t off, uint64_t len)
{
    uint64_t lo, hi, bytes;
    /* only a dense range: random writes scattered over the file would hand
     * the kernel every rank's dirty pages of it, page by page (IOR-style
     * random 4 KiB writes: 0.94 -> 0.71 of ufs: with, 0.94 without) */
    if (ddio_wb_note(&L->wb[disk], off, len, &lo, &hi, &bytes) && hi - lo <= 2 * bytes)
        (void) sync_file_range(L->fds[disk], (off_t) lo, (off_t) (hi - lo),
                               SYNC_FILE_RANGE_WRITE);
}

static int disk_wpiece(void *arg, uint32_t disk, uint64_t local_off, uint64_t doff, uint64_t len)
{
    lwrite *w = arg;
    const char *src = w->src + (local_off - w->base);
    int fd = w->L[w->cur]->fds[disk];

    for (uint64_t done = 0; done < len;) {
        ssize_t k = pwrite(fd, src + done, len - done, (off_t) (doff + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? -errno : -EIO;
        done += (uint64_t) k;
    }
    wb_note(w->L[w->cur], disk, doff, len);
    return 0;
}

/* one stripe unit's piece: the size first (nothing trims past it), then the
 * bytes, on the server's disks */
static int stripe_wpiece(void *arg, uint32_t server, uint64_t logical_off, uint64_t local_off,
                         uint64_t len)
{
    lwrite *w = arg;
    if (!w->L[server])
        return 0;
    ddio_size_raise(w->L[server]->size, local_off + len);
    w->src = w->buf + (logical_off - w->off);
    w->base = local_off;
    w->cur = server;
    int rc = ddio_layout_foreach(&w->L[server]->disks, local_off, len, disk_wpiece, w);
    if (!rc)
        w->L[server]->wbytes += len;
    return rc;
}

/* a small write; as one_piece, 1: written */
static int pwrite_one(struct ddio_fh *f, uint64_t off, const void *buf, uint64_t len)
{
    struct ddio_local *L[DDIO_MAX_SERVERS];
    uint32_t s, disk;
    uint64_t loc, doff;
    int rc = one_piece(f, off, len, L, &s, &loc, &disk, &doff);

    if (rc <= 0)
        return rc;
    rc = 0;
    if (L[s]->writable && quiet_all(f, L)) {
        lwrite w = {.L = L,.src = buf,.base = loc,.cur = s };
        ddio_size_raise(L[s]->size, loc + len);
        rc = !disk_wpiece(&w, disk, loc, doff, len);
        if (rc)
            L[s]->wbytes += len;
    }
    unlock_all(f, L);
    return rc;
}

int ddio_local_pwrite(struct ddio_fh *f, uint64_t off, const void *buf, uint64_t len,
                      const char *only)
{
    struct ddio_local *L[DDIO_MAX_SERVERS];   /* the first nsrv cleared, as above */
    char touched[DDIO_MAX_SERVERS];
    lwrite w = {.L = L,.buf = buf,.off = off };
    int done = 0;

    /* a mirrored file's copies are the servers' to write: its servers hand
     * over read-only descriptors only (PROTOCOL.md "LOCAL") */
    if (!f->local_write || f->nsrv > (int) DDIO_MAX_SERVERS || len == 0
        || !(f->amode & (DDIO_O_WRONLY | DDIO_O_RDWR)) || ddio_fh_redundant(f))
        return 0;
    if (!only && (done = pwrite_one(f, off, buf, len)) >= 0)
        return done;
    done = 0;
    memset(L, 0, sizeof(*L) * (size_t) f->nsrv);
    memset(touched, 0, (size_t) f->nsrv);
    if (!only)          /* the callers with a descriptor have marked them */
        ddio_layout_foreach(&f->stripe, off, len, mark_touched, touched);
    for (int i = 0; i < f->nsrv; i++) {
        if (!(only ? only[i] : touched[i]))
            continue;
        if (!(L[i] = usable(f, i)) || !L[i]->writable) {
            unlock_all(f, L);
            return 0;
        }
    }
    /* a write error: the server's path redoes it and reports it */
    if (quiet_all(f, L))
        done = !ddio_layout_foreach(&f->stripe, off, len, stripe_wpiece, &w);
    unlock_all(f, L);
    return done;
}
