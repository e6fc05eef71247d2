/* ucx_probe: what UCX RMA can move between two processes on this machine
 * (ucx_am_probe measures the transport's own active-message path). A "server" process
 * puts (or gets) CHUNK-sized pieces into (from) a "rank" process's registered
 * buffer, the way the transport would move block data straight into rank
 * memory, and reports MiB/s per UCX_TLS choice. Same-run comparison: a plain
 * TCP loopback socket stream of the same bytes (ddio's TCP transport).
 *
 *   ucx_probe [MiB total] [KiB per op]      (defaults 1024 MiB, 1024 KiB)
 *   UCX_TLS=cma,self ucx_probe ; UCX_TLS=tcp,self ucx_probe ; ...
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#define DIE(...) do { fprintf(stderr, "ucx_probe: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void xwrite(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k <= 0) DIE("write: %s", strerror(errno));
        c += k; n -= (size_t)k;
    }
}

static void xread(int fd, void *p, size_t n)
{
    char *c = p;
    while (n) {
        ssize_t k = read(fd, c, n);
        if (k <= 0) DIE("read: %s", k ? strerror(errno) : "EOF");
        c += k; n -= (size_t)k;
    }
}

static void send_blob(int fd, const void *p, size_t n) { xwrite(fd, &n, sizeof(n)); xwrite(fd, p, n); }
static void *recv_blob(int fd, size_t *n)
{
    xread(fd, n, sizeof(*n));
    void *p = malloc(*n);
    if (!p) DIE("malloc");
    xread(fd, p, *n);
    return p;
}

static void make_worker(ucp_context_h *ctx, ucp_worker_h *w)
{
    ucp_params_t pp = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_RMA};
    ucp_config_t *cfg;
    if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK) DIE("ucp_config_read");
    ucs_status_t st = ucp_init(&pp, cfg, ctx);
    ucp_config_release(cfg);
    if (st != UCS_OK) DIE("ucp_init: %s", ucs_status_string(st));
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    if ((st = ucp_worker_create(*ctx, &wp, w)) != UCS_OK) DIE("worker: %s", ucs_status_string(st));
}

static void wait_req(ucp_worker_h w, void *r)
{
    if (r == NULL) return;
    if (UCS_PTR_IS_ERR(r)) DIE("op: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    ucs_status_t st;
    while ((st = ucp_request_check_status(r)) == UCS_INPROGRESS)
        ucp_worker_progress(w);
    if (st != UCS_OK) DIE("op: %s", ucs_status_string(st));
    ucp_request_free(r);
}

/* the rank: registers its buffer, hands address + rkey over, then keeps
 * its worker progressing (software RMA over shared memory needs it) until
 * the server says done, and checks the bytes of a put run */
static void rank(int fd, size_t total, size_t buflen, int op)
{
    ucp_context_h ctx;
    ucp_worker_h w;
    make_worker(&ctx, &w);
    char *buf = aligned_alloc(4096, buflen);
    if (!buf) DIE("alloc");
    memset(buf, op == 'g' ? 0x5a : 0, buflen);
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                               .address = buf, .length = buflen};
    ucp_mem_h mh;
    if (ucp_mem_map(ctx, &mp, &mh) != UCS_OK) DIE("mem_map");
    void *rk; size_t rklen;
    if (ucp_rkey_pack(ctx, mh, &rk, &rklen) != UCS_OK) DIE("rkey_pack");
    ucp_address_t *addr; size_t alen;
    if (ucp_worker_get_address(w, &addr, &alen) != UCS_OK) DIE("address");
    send_blob(fd, addr, alen);
    send_blob(fd, rk, rklen);
    uint64_t va = (uintptr_t)buf;
    xwrite(fd, &va, sizeof(va));
    size_t plen;
    void *paddr = recv_blob(fd, &plen);     /* the server's address: an ep back for wireup */
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = paddr};
    ucp_ep_h e;
    if (ucp_ep_create(w, &ep, &e) != UCS_OK) DIE("ep_create");
    struct pollfd pfd = {fd, POLLIN, 0};
    while (poll(&pfd, 1, 0) == 0)
        ucp_worker_progress(w);
    char c;
    xread(fd, &c, 1);
    if (op == 'p')
        for (size_t i = 0; i < buflen; i++)
            if (buf[i] != (char)(i * 7 + 3)) DIE("rank: byte %zu wrong after put", i);
    xwrite(fd, "k", 1);
    (void)total;
    ucp_request_param_t rp = {.op_attr_mask = 0};
    void *r = ucp_ep_close_nbx(e, &rp);
    if (r && !UCS_PTR_IS_ERR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(w);
        ucp_request_free(r);
    }
    ucp_rkey_buffer_release(rk);
    ucp_worker_release_address(w, addr);
    ucp_mem_unmap(ctx, mh);
    ucp_worker_destroy(w);
    ucp_cleanup(ctx);
    free(paddr);
    free(buf);
}

static double server(int fd, size_t total, size_t chunk, size_t buflen, int op)
{
    ucp_context_h ctx;
    ucp_worker_h w;
    make_worker(&ctx, &w);
    size_t alen, rklen;
    void *addr = recv_blob(fd, &alen), *rkbuf = recv_blob(fd, &rklen);
    uint64_t va;
    xread(fd, &va, sizeof(va));
    ucp_address_t *my; size_t mylen;
    if (ucp_worker_get_address(w, &my, &mylen) != UCS_OK) DIE("address");
    send_blob(fd, my, mylen);
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = addr};
    ucp_ep_h e;
    if (ucp_ep_create(w, &ep, &e) != UCS_OK) DIE("ep_create");
    ucp_rkey_h rkey;
    if (ucp_ep_rkey_unpack(e, rkbuf, &rkey) != UCS_OK) DIE("rkey_unpack");
    /* the server's own staging buffer: registered once, like the engine's
     * fixed set of aligned block buffers */
    char *src = aligned_alloc(4096, buflen);
    if (!src) DIE("alloc");
    for (size_t i = 0; i < buflen; i++) src[i] = (char)(i * 7 + 3);
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                               .address = src, .length = buflen};
    ucp_mem_h mh;
    if (ucp_mem_map(ctx, &mp, &mh) != UCS_OK) DIE("mem_map");
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH, .memh = mh};
    double t0 = now();
    size_t off = 0;
    for (size_t done = 0; done < total; done += chunk) {
        void *r = op == 'p' ? ucp_put_nbx(e, src + off, chunk, va + off, rkey, &rp)
                            : ucp_get_nbx(e, src + off, chunk, va + off, rkey, &rp);
        wait_req(w, r);
        off = (off + chunk) % buflen;
    }
    ucp_request_param_t fp = {.op_attr_mask = 0};
    wait_req(w, ucp_ep_flush_nbx(e, &fp));
    double dt = now() - t0;
    if (op == 'g')
        for (size_t i = 0; i < buflen; i++)
            if (src[i] != 0x5a) DIE("server: byte %zu wrong after get", i);
    xwrite(fd, "d", 1);
    char c;
    xread(fd, &c, 1);
    ucp_rkey_destroy(rkey);
    void *r = ucp_ep_close_nbx(e, &fp);
    if (r && !UCS_PTR_IS_ERR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(w);
        ucp_request_free(r);
    }
    ucp_worker_release_address(w, my);
    ucp_mem_unmap(ctx, mh);
    ucp_worker_destroy(w);
    ucp_cleanup(ctx);
    free(addr); free(rkbuf); free(src);
    return dt;
}

/* the same bytes over a TCP loopback socket: today's path, without ddio's
 * framing (an upper bound for it) */
static double tcp_stream(size_t total, size_t chunk)
{
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    if (bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) || getsockname(l, (struct sockaddr *)&a, &al))
        DIE("tcp listen: %s", strerror(errno));
    pid_t pid = fork();
    if (pid == 0) {
        int s = accept(l, NULL, NULL);
        char *b = malloc(chunk);
        for (size_t got = 0; got < total;) {
            ssize_t k = read(s, b, chunk);
            if (k <= 0) _exit(1);
            got += (size_t)k;
        }
        xwrite(s, "k", 1);
        _exit(0);
    }
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(s, (struct sockaddr *)&a, sizeof(a))) DIE("connect: %s", strerror(errno));
    char *b = malloc(chunk);
    memset(b, 1, chunk);
    double t0 = now();
    for (size_t done = 0; done < total; done += chunk)
        xwrite(s, b, chunk);
    char c;
    xread(s, &c, 1);
    double dt = now() - t0;
    int stt;
    waitpid(pid, &stt, 0);
    close(s); close(l); free(b);
    return dt;
}

int main(int argc, char **argv)
{
    size_t total = (argc > 1 ? strtoull(argv[1], NULL, 10) : 1024) << 20;
    size_t chunk = (argc > 2 ? strtoull(argv[2], NULL, 10) : 1024) << 10;
    size_t buflen = 64u << 20;
    if (chunk == 0 || chunk > buflen || buflen % chunk) DIE("KiB per op must divide 65536");
    const char *tls = getenv("UCX_TLS");
    for (int k = 0; k < 2; k++) {
        int op = k ? 'g' : 'p';
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) DIE("socketpair");
        pid_t pid = fork();
        if (pid == 0) {
            close(sv[0]);
            rank(sv[1], total, buflen, op);
            _exit(0);
        }
        close(sv[1]);
        double dt = server(sv[0], total, chunk, buflen, op);
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) DIE("rank process failed");
        printf("ucx %-4s UCX_TLS=%-12s %6zu KiB ops  %8.1f MiB/s  verified\n", op == 'p' ? "put" : "get",
               tls ? tls : "(default)", chunk >> 10, (double)total / dt / 1048576.0);
        close(sv[0]);
    }
    double dt = tcp_stream(total, chunk);
    printf("tcp loopback stream            %6zu KiB writes %8.1f MiB/s\n", chunk >> 10,
           (double)total / dt / 1048576.0);
    return 0;
}
