/* ucx_am_probe: UCX active messages with rendezvous between two processes,
 * the way ddio's UCX transport moves block data: the "server" sends CHUNK
 * pieces (ucp_am_send_nbx), the "rank" receives each straight into its
 * buffer from the AM callback (ucp_am_recv_data_nbx) while it waits the
 * way the driver waits (sleeping on the worker's fd between rounds of
 * progress, or spinning with WAIT=spin). Beside it: RMA put into the
 * rank's registered buffer with the same waiting (what UCX 1.13 does for
 * RMA to user memory without xpmem/knem: software emulation over shared
 * memory active messages, which needs the target's progress).
 *
 *   ucx_am_probe [MiB total] [KiB per op]    (defaults 1024, 1024)
 *   WAIT=spin|sleep (default sleep); UCX_TLS=... as usual
 */
#define _GNU_SOURCE
#include <errno.h>
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

#define DIE(...) do { fprintf(stderr, "ucx_am_probe: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define AM_ID 7

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
    ucp_params_t pp = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                       .features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP};
    ucp_config_t *cfg;
    if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK) DIE("ucp_config_read");
    ucs_status_t st = ucp_init(&pp, cfg, ctx);
    ucp_config_release(cfg);
    if (st != UCS_OK) DIE("ucp_init: %s", ucs_status_string(st));
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_MULTI};
    if ((st = ucp_worker_create(*ctx, &wp, w)) != UCS_OK) DIE("worker: %s", ucs_status_string(st));
}

static int spin;

/* the driver's wait: progress, then sleep on the fd unless more came */
static void wait_round(ucp_worker_h w, int efd)
{
    if (spin) {
        ucp_worker_progress(w);
        return;
    }
    while (ucp_worker_progress(w))
        ;
    if (ucp_worker_arm(w) == UCS_OK) {
        struct pollfd pf = {.fd = efd, .events = POLLIN};
        poll(&pf, 1, 100);
    }
}

static void wait_req(ucp_worker_h w, int efd, void *r)
{
    if (r == NULL) return;
    if (UCS_PTR_IS_ERR(r)) DIE("op: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    while (ucp_request_check_status(r) == UCS_INPROGRESS)
        wait_round(w, efd);
    ucp_request_free(r);
}

/* ---- rank side: receives into buf ---- */
static char *g_buf;
static size_t g_buflen, g_got;

static void recv_done(void *req, ucs_status_t st, size_t len, void *user)
{
    (void)user;
    if (st != UCS_OK) DIE("recv: %s", ucs_status_string(st));
    g_got += len;
    ucp_request_free(req);
}

static ucs_status_t am_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                          const ucp_am_recv_param_t *p)
{
    ucp_worker_h w = arg;
    uint64_t off;
    if (hlen != sizeof(off)) DIE("header");
    memcpy(&off, hdr, sizeof(off));
    if (!(p->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        memcpy(g_buf + off, data, len);
        g_got += len;
        return UCS_OK;
    }
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK,
                              .cb.recv_am = recv_done};
    void *r = ucp_am_recv_data_nbx(w, data, g_buf + off, len, &rp);
    if (r == NULL) g_got += len;
    else if (UCS_PTR_IS_ERR(r)) DIE("recv_data: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    return UCS_INPROGRESS;
}

static void rank(int fd, size_t total, int mode)
{
    ucp_context_h ctx;
    ucp_worker_h w;
    make_worker(&ctx, &w);
    int efd;
    ucp_worker_get_efd(w, &efd);
    g_buflen = 64u << 20;
    g_buf = aligned_alloc(4096, g_buflen);
    memset(g_buf, 0, g_buflen);
    ucp_am_handler_param_t hp = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                                 UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                 .id = AM_ID, .cb = am_cb, .arg = w};
    if (ucp_worker_set_am_recv_handler(w, &hp) != UCS_OK) DIE("am handler");
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
                               .address = g_buf, .length = g_buflen};
    ucp_mem_h mh;
    if (ucp_mem_map(ctx, &mp, &mh) != UCS_OK) DIE("mem_map");
    void *rk; size_t rklen;
    if (ucp_rkey_pack(ctx, mh, &rk, &rklen) != UCS_OK) DIE("rkey_pack");
    ucp_address_t *addr; size_t alen;
    if (ucp_worker_get_address(w, &addr, &alen) != UCS_OK) DIE("address");
    send_blob(fd, addr, alen);
    send_blob(fd, rk, rklen);
    uint64_t va = (uintptr_t)g_buf;
    xwrite(fd, &va, sizeof(va));
    /* wait for the server's "done", progressing like the driver (or, for
     * RMA with WAIT=none, not at all: is the put one-sided?) */
    for (; !(mode == 'p' && getenv("WAIT") && !strcmp(getenv("WAIT"), "none"));) {
        wait_round(w, efd);
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 0) > 0) break;
    }
    char c;
    xread(fd, &c, 1);
    if (mode == 'a' && g_got != total) DIE("rank: got %zu of %zu", g_got, total);
    for (size_t i = 0; i < g_buflen; i++)
        if (g_buf[i] != (char)(i * 7 + 3)) DIE("rank: byte %zu wrong", i);
    xwrite(fd, "k", 1);
    ucp_rkey_buffer_release(rk);
    ucp_worker_release_address(w, addr);
    ucp_mem_unmap(ctx, mh);
    ucp_worker_destroy(w);
    ucp_cleanup(ctx);
    free(g_buf);
}

static double server(int fd, size_t total, size_t chunk, int mode)
{
    ucp_context_h ctx;
    ucp_worker_h w;
    make_worker(&ctx, &w);
    int efd;
    ucp_worker_get_efd(w, &efd);
    size_t alen, rklen, buflen = 64u << 20;
    void *addr = recv_blob(fd, &alen), *rkbuf = recv_blob(fd, &rklen);
    uint64_t va;
    xread(fd, &va, sizeof(va));
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = addr};
    ucp_ep_h e;
    if (ucp_ep_create(w, &ep, &e) != UCS_OK) DIE("ep_create");
    ucp_rkey_h rkey;
    if (ucp_ep_rkey_unpack(e, rkbuf, &rkey) != UCS_OK) DIE("rkey_unpack");
    char *src = aligned_alloc(4096, buflen);
    for (size_t i = 0; i < buflen; i++) src[i] = (char)(i * 7 + 3);
    double t0 = now();
    size_t off = 0;
    for (size_t done = 0; done < total; done += chunk) {
        uint64_t hdr = off;
        ucp_request_param_t rp = {.op_attr_mask = 0};
        void *r = mode == 'a' ? ucp_am_send_nbx(e, AM_ID, &hdr, sizeof(hdr), src + off, chunk, &rp)
                              : ucp_put_nbx(e, src + off, chunk, va + off, rkey, &rp);
        wait_req(w, efd, r);
        off = (off + chunk) % buflen;
    }
    ucp_request_param_t fp = {.op_attr_mask = 0};
    wait_req(w, efd, ucp_ep_flush_nbx(e, &fp));
    double dt = now() - t0;
    xwrite(fd, "d", 1);
    char c;
    xread(fd, &c, 1);
    ucp_rkey_destroy(rkey);
    void *r = ucp_ep_close_nbx(e, &fp);
    if (r && !UCS_PTR_IS_ERR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(w);
        ucp_request_free(r);
    }
    ucp_worker_destroy(w);
    ucp_cleanup(ctx);
    free(addr); free(rkbuf); free(src);
    return dt;
}

int main(int argc, char **argv)
{
    size_t total = (argc > 1 ? strtoull(argv[1], NULL, 10) : 1024) << 20;
    size_t chunk = (argc > 2 ? strtoull(argv[2], NULL, 10) : 1024) << 10;
    spin = getenv("WAIT") && !strcmp(getenv("WAIT"), "spin");
    if (chunk == 0 || (64u << 20) % chunk) DIE("KiB per op must divide 65536");
    for (int k = 0; k < 2; k++) {
        int mode = k ? 'p' : 'a';
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) DIE("socketpair");
        pid_t pid = fork();
        if (pid == 0) {
            close(sv[0]);
            rank(sv[1], total, mode);
            _exit(0);
        }
        close(sv[1]);
        double dt = server(sv[0], total, chunk, mode);
        int st;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) DIE("rank failed");
        printf("%-8s %-5s chunk %6zu KiB  %8.0f MiB/s  (UCX_TLS=%s, verified)\n",
               mode == 'a' ? "am-rndv" : "rma-put", spin ? "spin" : "sleep", chunk >> 10,
               (double)total / (1 << 20) / dt, getenv("UCX_TLS") ? getenv("UCX_TLS") : "default");
    }
    return 0;
}
