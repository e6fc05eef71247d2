/* LOCAL (ioserver/local.c): a same-host client gets a file's datafile
 * descriptors (read-only, or read-write for a writer) and a page mirroring
 * its local size. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "srv_harness.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

/* an abstract SOCK_SEQPACKET listener named name (no leading NUL) */
static int listen_abstract(const char *name)
{
    struct sockaddr_un a;
    socklen_t alen;
    CHECK(ddio_abstract_addr(name, &a, &alen) == 0, "name too long: %s", name);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    CHECK(s >= 0, "socket: %s", strerror(errno));
    CHECK(bind(s, (struct sockaddr *)&a, alen) == 0
          && listen(s, 4) == 0, "bind/listen %s: %s", name, strerror(errno));
    return s;
}

static int local_call_f(struct cl *c, uint64_t handle, const char *name, const uint8_t *nonce,
                        uint32_t flags)
{
    struct ddio_local_req q = {.handle = handle, .name = (char *)name, .flags = flags};
    memcpy(q.nonce, nonce, DDIO_LOCAL_NONCE);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_local_req(&w, &q);
    return call_simple(c, DDIO_T_LOCAL, &w);
}

static int local_call(struct cl *c, uint64_t handle, const char *name, const uint8_t *nonce)
{
    return local_call_f(c, handle, name, nonce, 0);
}

/* the one queued message: its header and descriptors (returns how many) */
static int take(int lis, struct ddio_local_msg *m, int *fds)
{
    int s = accept4(lis, NULL, NULL, SOCK_CLOEXEC), n = 0;
    CHECK(s >= 0, "no connection from the server: %s", strerror(errno));
    union { char b[CMSG_SPACE(sizeof(int) * 65)]; struct cmsghdr al; } u;
    uint8_t p[64];
    struct iovec iov = {.iov_base = p, .iov_len = sizeof(p)};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
                        .msg_controllen = sizeof(u.b)};
    ssize_t k = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
    CHECK(k > 0, "recvmsg: %s", k < 0 ? strerror(errno) : "nothing");
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_type == SCM_RIGHTS) {
            n = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)n);
        }
    CHECK(ddio_dec_local_msg(p, (size_t)k, m) == 0, "undecodable local message");
    close(s);
    return n;
}

/* LOCAL with DDIO_LOCAL_WRITE: read-write descriptors and size page for a
 * handle opened for writing (what the client raises the server counts);
 * read-only ones for a handle opened read-only */
static void test_local_write(struct cl *c, uint64_t handle, int lis, const char *name,
                             const uint8_t *nonce, const char *path,
                             const struct ddio_layout_rec *l)
{
    struct ddio_local_msg m;
    int fds[65];
    uint64_t v = 0;
    CHECK(local_call_f(c, handle, name, nonce, DDIO_LOCAL_WRITE) == 0, "LOCAL (write) refused");
    int n = take(lis, &m, fds);
    CHECK(m.flags == DDIO_LOCAL_WRITE, "a writable handle got flags %u", m.flags);
    uint64_t *size = mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
    CHECK(size != MAP_FAILED, "writable size page: %s", strerror(errno));
    if (m.ndisks == 1) {
        uint8_t b[4] = {1, 2, 3, 4}, back[4];
        CHECK(pwrite(fds[1], b, 4, 4996) == 4, "the datafile is not writable: %s", strerror(errno));
        CHECK(pread(fds[1], back, 4, 4996) == 4 && !memcmp(b, back, 4), "the bytes did not stay");
    }
    __atomic_store_n(size, 5000, __ATOMIC_RELEASE);
    CHECK(cl_handle_op(c, DDIO_T_STAT, handle, &v) == 0 && v == 5000,
          "a writer raised the size page to 5000; STAT says %" PRIu64, v);
    for (int i = 0; i < n; i++)
        close(fds[i]);
    munmap(size, 8);
    /* read-only handle: read-only descriptors, whatever it asks */
    struct ddio_open_r ro;
    CHECK(cl_open(c, path, DDIO_O_RDONLY, l, &ro) == 0, "open %s read-only", path);
    CHECK(local_call_f(c, ro.handle, name, nonce, DDIO_LOCAL_WRITE) == 0, "LOCAL (ro) refused");
    n = take(lis, &m, fds);
    CHECK(m.flags == 0, "a read-only handle got flags %u", m.flags);
    CHECK(mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0) == MAP_FAILED,
          "a read-only handle's size page can be mapped writable");
    for (int i = 0; i < n; i++)
        close(fds[i]);
}

/* a read-only OPEN with DDIO_O_LOCAL: the read-only descriptors are queued
 * on the listener before the answer (the client takes them after it);
 * nobody listening: the open still succeeds; with a writable amode, or a
 * name outside ddio's prefix: EPROTO (the connection closed, so last) */
static void test_open_local(int lis, const char *name, const char *path,
                            const struct ddio_layout_rec *l)
{
    struct cl *c = cl_connect();
    struct ddio_open o = {.path = (char *)path, .amode = DDIO_O_RDONLY | DDIO_O_LOCAL,
                          .layout = *l, .local_name = (char *)name};
    struct ddio_open_r r;
    struct ddio_local_msg m;
    int fds[65];
    uint64_t v = 0;
    memset(o.local_nonce, 0x5a, DDIO_LOCAL_NONCE);
    CHECK(cl_open_m(c, &o, &r) == 0, "OPEN with DDIO_O_LOCAL refused");
    int n = take(lis, &m, fds);
    CHECK(!memcmp(m.nonce, o.local_nonce, DDIO_LOCAL_NONCE) && m.flags == 0 &&
          n == (int)m.ndisks + 1, "OPEN's handover: nonce, flags %u, %d descriptors", m.flags, n);
    const uint64_t *size = mmap(NULL, 8, PROT_READ, MAP_SHARED, fds[0], 0);
    CHECK(size != MAP_FAILED && cl_handle_op(c, DDIO_T_STAT, r.handle, &v) == 0 && *size == v,
          "OPEN's size page does not show the size STAT gives (%" PRIu64 ")", v);
    if (m.ndisks == 1)
        CHECK(pwrite(fds[1], &v, 1, 0) < 0 && errno == EBADF, "OPEN handed over a writable datafile");
    for (int i = 0; i < n; i++)
        close(fds[i]);
    munmap((void *)size, 8);
    CHECK(cl_handle_op(c, DDIO_T_CLOSE, r.handle, NULL) == 0, "close");
    char none[96];
    snprintf(none, sizeof(none), DDIO_LOCAL_PREFIX "nobody/%d", (int)getpid());
    o.local_name = none;
    CHECK(cl_open_m(c, &o, &r) == 0, "OPEN with DDIO_O_LOCAL and nobody listening failed");
    CHECK(cl_handle_op(c, DDIO_T_CLOSE, r.handle, NULL) == 0, "close");
    o.local_name = (char *)name;
    o.amode = DDIO_O_RDWR | DDIO_O_LOCAL;
    CHECK(cl_open_m(c, &o, &r) == EPROTO, "OPEN with DDIO_O_LOCAL and RDWR: not EPROTO");
    cl_close(c);
}

void test_local(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    char p[128], name[96];
    uint8_t nonce[DDIO_LOCAL_NONCE];
    layout_for(c, &l, 1u << 20, 1);
    path_name(p, sizeof(p), "local");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create %s", p);
    uint64_t len = 100000;
    uint8_t *w = malloc(len), *back = malloc(len);
    fill_pattern(w, len, 11);
    struct ddio_desc d;
    struct dspec s = {.disp = 0, .count = 1, .len = len, .extent = (int64_t)len, .length = len};
    build_desc(&s, &d);
    struct xres x = cl_xfer(c, r.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, w, NULL, TMO);
    CHECK(x.status == 0, "write failed (%s)", strerror(x.status));

    snprintf(name, sizeof(name), DDIO_LOCAL_PREFIX "srv-test/%d", (int)getpid());
    int lis = listen_abstract(name), fds[65];
    memset(nonce, 0x3c, sizeof(nonce));
    if (cl_stat(c, "checksums") == 1) {
        /* a server keeping checksums hands nothing over (ioserver/local.c),
         * for writing or reading (run-server-tests.sh's one-disk
         * configuration); the one with --checksums off tests the handover */
        int rw = local_call_f(c, r.handle, name, nonce, DDIO_LOCAL_WRITE);
        int ro = local_call(c, r.handle, name, nonce);
        CHECK(rw == EOPNOTSUPP && ro == EOPNOTSUPP,
              "LOCAL of a file with checksums: %s and %s, wanted EOPNOTSUPP", strerror(rw),
              strerror(ro));
        printf("ok   local: refused for a file with checksums (EOPNOTSUPP)\n");
        close(lis);
        ddio_node_free(d.root);
        free(w);
        free(back);
        cl_close(c);
        return;
    }
    CHECK(local_call(c, r.handle, name, nonce) == 0, "LOCAL refused");
    struct ddio_local_msg m;
    int n = take(lis, &m, fds);
    CHECK(!memcmp(m.nonce, nonce, sizeof(nonce)), "the nonce did not come back");
    CHECK(m.ndisks == c->ndisks && m.block_size == c->bsize && n == (int)m.ndisks + 1,
          "ndisks %u block %" PRIu64 " with %d descriptors (server: %u disks, %" PRIu64 ")",
          m.ndisks, m.block_size, n, c->ndisks, c->bsize);
    const uint64_t *size = mmap(NULL, 8, PROT_READ, MAP_SHARED, fds[0], 0);
    CHECK(size != MAP_FAILED, "size page: %s", strerror(errno));
    CHECK(*size == len, "size page says %" PRIu64 ", wrote %" PRIu64, *size, len);
    CHECK(mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0) == MAP_FAILED,
          "the size page can be mapped writable");
    if (m.ndisks == 1) {
        CHECK(pread(fds[1], back, len, 0) == (ssize_t)len && !memcmp(back, w, len),
              "the datafile does not hold what was written");
        CHECK(pwrite(fds[1], w, 1, 0) < 0 && errno == EBADF, "the datafile is writable");
    }
    /* a later write moves the size the page shows, no new LOCAL needed */
    struct dspec s2 = {.disp = (int64_t)len, .count = 1, .len = len, .extent = (int64_t)len,
                       .length = len};
    struct ddio_desc d2;
    build_desc(&s2, &d2);
    x = cl_xfer(c, r.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d2, w, NULL, TMO);
    CHECK(x.status == 0 && *size == 2 * len, "after a second write: status %d, size page %" PRIu64,
          x.status, *size);
    /* and so does SETSIZE */
    struct ddio_setsize ss = {.handle = r.handle, .local_size = 1234};
    struct ddio_wbuf sw;
    ddio_wbuf_init(&sw);
    ddio_enc_setsize(&sw, &ss);
    CHECK(call_simple(c, DDIO_T_SETSIZE, &sw) == 0 && *size == 1234,
          "after SETSIZE 1234 the size page says %" PRIu64, *size);
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        close(fds[i]);
    munmap((void *)size, 8);

    test_local_write(c, r.handle, lis, name, nonce, p, &l);
    ddio_wbuf_init(&sw);
    ddio_enc_setsize(&sw, &ss);
    CHECK(call_simple(c, DDIO_T_SETSIZE, &sw) == 0, "SETSIZE 1234 again");

    /* nobody listening under the name: EHOSTUNREACH, the connection stays */
    char none[96];
    snprintf(none, sizeof(none), DDIO_LOCAL_PREFIX "nobody/%d", (int)getpid());
    CHECK(local_call(c, r.handle, none, nonce) == EHOSTUNREACH,
          "LOCAL to a name nobody listens on: not EHOSTUNREACH");
    CHECK(local_call(c, r.handle + 1000, name, nonce) == EBADF, "LOCAL of a bad handle: not EBADF");
    CHECK(cl_handle_op(c, DDIO_T_STAT, r.handle, &v) == 0 && v == 1234,
          "STAT after the refusals: %" PRIu64, v);
    /* a name outside ddio's prefix is a malformed request */
    CHECK(local_call(c, r.handle, "other-program", nonce) == EPROTO,
          "LOCAL naming another program's socket: not EPROTO");
    test_open_local(lis, name, p, &l);
    printf("ok   local: descriptors and size page handed over (LOCAL, OPEN); refusals; writers\n");
    close(lis);
    ddio_node_free(d.root);
    ddio_node_free(d2.root);
    free(w);
    free(back);
    cl_close(c);
}

static int localstat_call(struct cl *c, uint64_t handle, uint64_t read, uint64_t written)
{
    struct ddio_localstat m = {.handle = handle, .read = read, .written = written};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_localstat(&w, &m);
    return call_simple(c, DDIO_T_LOCALSTAT, &w);
}

/* LOCALSTAT: a handle's counts added exactly; another connection's handle,
 * or none, is EBADF and adds nothing (the connection stays); a payload
 * that is not 24 bytes is EPROTO and the close */
void test_localstat(void)
{
    struct ddio_open_r r;
    struct cl *c = connect_create("localstat", &r), *other = cl_connect();
    uint64_t r0 = cl_stat(c, "local_read_bytes"), w0 = cl_stat(c, "local_write_bytes"), v = 0;
    CHECK(r0 != UINT64_MAX && w0 != UINT64_MAX, "STATS has no local_*_bytes");
    CHECK(localstat_call(c, r.handle, 4096, 5000000) == 0, "LOCALSTAT refused");
    CHECK(localstat_call(c, r.handle, 1, 0) == 0, "a second LOCALSTAT refused");
    CHECK(cl_stat(c, "local_read_bytes") == r0 + 4097 && cl_stat(c, "local_write_bytes") == w0 + 5000000,
          "counters: read +%" PRIu64 ", written +%" PRIu64, cl_stat(c, "local_read_bytes") - r0,
          cl_stat(c, "local_write_bytes") - w0);
    CHECK(localstat_call(c, r.handle + 1000, 7, 7) == EBADF, "LOCALSTAT of a bad handle: not EBADF");
    CHECK(localstat_call(other, r.handle, 7, 7) == EBADF,
          "LOCALSTAT of another connection's handle: not EBADF");
    CHECK(cl_stat(c, "local_read_bytes") == r0 + 4097 && cl_stat(c, "local_write_bytes") == w0 + 5000000,
          "a refused LOCALSTAT counted");
    CHECK(cl_handle_op(c, DDIO_T_STAT, r.handle, &v) == 0, "STAT after the refusals");
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_put_u64(&w, r.handle);
    ddio_put_u64(&w, 1);
    ddio_put_u32(&w, 1);        /* 20 bytes */
    CHECK(call_simple(other, DDIO_T_LOCALSTAT, &w) == EPROTO, "a short LOCALSTAT: not EPROTO");
    char b;
    CHECK(ddio_recv_all(other->fd, &b, 1, ddio_now_ms() + TMO) != 0,
          "a short LOCALSTAT: the connection stayed open");
    CHECK(cl_stat(c, "local_read_bytes") == r0 + 4097, "a malformed LOCALSTAT counted");
    printf("ok   localstat: counts added, refusals add nothing\n");
    cl_close(other);
    cl_close(c);
}
