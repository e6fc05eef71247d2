/* rtt: the bare transport's round trip, beside which ddio's per-call
 * latency through the servers is a ratio (bench/latency.sh). Two
 * processes, a "rank" and a "server", as ddio has them; per size, the
 * rank times each of N round trips:
 *   read   an 8-byte request, answered with SIZE bytes into the rank's buffer
 *   write  SIZE bytes into the server's buffer, answered with 8 bytes
 * over a loopback TCP connection (TCP_NODELAY, both sides blocking in
 * read, as ddio's TCP path) or over UCX active messages (rendezvous as UCX
 * picks it, received into place; both sides wait as the driver does:
 * progress, then sleep on the worker's fd). Only the transport: no file,
 * no protocol. One line per transport, op and size:
 *   RTT,transport,op,size,calls,p50_us,p99_us,mean_us
 *
 *   rtt tcp|ucx [CALLS] [SIZES]     (defaults 2000, 8,4k,64k,1m)
 *   cc -O2 -o bench/bin/rtt bench/rtt.c -lucp -lucs
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

#define DIE(...) do { fprintf(stderr, "rtt: " __VA_ARGS__); fputc('\n', stderr); exit(1); } while (0)
#define AM_ID 9
#define MAXSZ (4u << 20)

struct req { uint32_t op, pad; uint64_t size; };       /* op: 'r', 'w', 'q' (quit) */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void xio(int fd, void *p, size_t n, int out)
{
    char *c = p;
    while (n) {
        ssize_t k = out ? write(fd, c, n) : read(fd, c, n);
        if (k <= 0) DIE("%s: %s", out ? "write" : "read", k ? strerror(errno) : "EOF");
        c += k; n -= (size_t)k;
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *tp, int op, size_t size, double *t, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++) sum += t[i];
    qsort(t, (size_t)n, sizeof(*t), cmp);
    printf("RTT,%s,%s,%zu,%d,%.1f,%.1f,%.1f\n", tp, op == 'r' ? "read" : "write", size, n,
           t[n / 2] * 1e6, t[(int)(n * 0.99)] * 1e6, sum / n * 1e6);
    fflush(stdout);
}

/* ---- TCP ---------------------------------------------------------------------- */

static void tcp_server(int lfd)
{
    int fd = accept(lfd, NULL, NULL), one = 1;
    char *buf = malloc(MAXSZ);
    struct req q;
    uint64_t ack = 0;
    if (fd < 0 || !buf) DIE("accept");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    for (;;) {
        xio(fd, &q, sizeof(q), 0);
        if (q.op == 'q') break;
        if (q.op == 'w') {
            xio(fd, buf, q.size, 0);
            xio(fd, &ack, sizeof(ack), 1);
        } else {
            xio(fd, buf, q.size, 1);
        }
    }
    close(fd);
    free(buf);
}

static void tcp_rank(int port, int n, const size_t *sizes, int nsz)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    char *buf = malloc(MAXSZ);
    double *t = malloc(sizeof(*t) * (size_t)n);
    uint64_t ack;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || !buf || !t || connect(fd, (struct sockaddr *)&a, sizeof(a))) DIE("connect");
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    memset(buf, 7, MAXSZ);
    for (int s = 0; s < nsz; s++)
        for (int op = 'r'; op; op = op == 'r' ? 'w' : 0) {
            struct req q = {.op = (uint32_t)op, .size = sizes[s]};
            for (int i = -8; i < n; i++) {
                double t0 = now();
                xio(fd, &q, sizeof(q), 1);
                if (op == 'w') {
                    xio(fd, buf, q.size, 1);
                    xio(fd, &ack, sizeof(ack), 0);
                } else {
                    xio(fd, buf, q.size, 0);
                }
                if (i >= 0) t[i] = now() - t0;
            }
            report("tcp", op, sizes[s], t, n);
        }
    struct req q = {.op = 'q'};
    xio(fd, &q, sizeof(q), 1);
    close(fd);
    free(buf);
    free(t);
}

/* ---- UCX ---------------------------------------------------------------------- */

struct side {
    ucp_context_h ctx;
    ucp_worker_h w;
    ucp_ep_h ep;
    int efd;
    char *buf;
    struct req got;             /* the last message's header */
    size_t len;                 /* and its length */
    int arrived, landed;        /* a message came; its data is in buf */
};

static void recv_done(void *r, ucs_status_t st, size_t len, void *arg)
{
    struct side *s = arg;
    (void)len;
    if (st != UCS_OK) DIE("recv: %s", ucs_status_string(st));
    s->landed = 1;
    ucp_request_free(r);
}

static ucs_status_t am_cb(void *arg, const void *hdr, size_t hlen, void *data, size_t len,
                          const ucp_am_recv_param_t *p)
{
    struct side *s = arg;
    if (hlen != sizeof(s->got)) DIE("header");
    memcpy(&s->got, hdr, sizeof(s->got));
    s->len = len;
    s->arrived = 1;
    if (len == 0) {
        s->landed = 1;
        return UCS_OK;
    }
    if (!(p->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        memcpy(s->buf, data, len);
        s->landed = 1;
        return UCS_OK;
    }
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
                              .cb.recv_am = recv_done, .user_data = s};
    void *r = ucp_am_recv_data_nbx(s->w, data, s->buf, len, &rp);
    if (r == NULL) s->landed = 1;
    else if (UCS_PTR_IS_ERR(r)) DIE("recv_data: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    return UCS_INPROGRESS;
}

/* the driver's wait: progress, then sleep on the fd unless more came */
static void wait_round(struct side *s)
{
    while (ucp_worker_progress(s->w))
        ;
    if (ucp_worker_arm(s->w) == UCS_OK) {
        struct pollfd pf = {.fd = s->efd, .events = POLLIN};
        poll(&pf, 1, 100);
    }
}

static void wait_req(struct side *s, void *r)
{
    if (r == NULL) return;
    if (UCS_PTR_IS_ERR(r)) DIE("send: %s", ucs_status_string(UCS_PTR_STATUS(r)));
    while (ucp_request_check_status(r) == UCS_INPROGRESS)
        wait_round(s);
    ucp_request_free(r);
}

static void next_message(struct side *s)
{
    while (!s->landed)
        wait_round(s);
    s->arrived = s->landed = 0;
}

static void send_am(struct side *s, const struct req *q, const void *data, size_t len)
{
    ucp_request_param_t rp = {.op_attr_mask = 0};
    wait_req(s, ucp_am_send_nbx(s->ep, AM_ID, q, sizeof(*q), data, len, &rp));
}

/* a worker, its AM handler, and an endpoint to the peer's address (the
 * addresses cross the socketpair) */
static void ucx_side(struct side *s, int fd)
{
    ucp_params_t pp = {.field_mask = UCP_PARAM_FIELD_FEATURES,
                       .features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP};
    ucp_config_t *cfg;
    ucp_address_t *addr;
    size_t alen, plen;
    if (ucp_config_read(NULL, NULL, &cfg) != UCS_OK) DIE("ucp_config_read");
    ucs_status_t st = ucp_init(&pp, cfg, &s->ctx);
    ucp_config_release(cfg);
    if (st != UCS_OK) DIE("ucp_init: %s", ucs_status_string(st));
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    if (ucp_worker_create(s->ctx, &wp, &s->w) != UCS_OK) DIE("worker");
    ucp_worker_get_efd(s->w, &s->efd);
    s->buf = aligned_alloc(4096, MAXSZ);
    if (!s->buf) DIE("malloc");
    memset(s->buf, 7, MAXSZ);
    ucp_am_handler_param_t hp = {.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                                 UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG,
                                 .id = AM_ID, .cb = am_cb, .arg = s};
    if (ucp_worker_set_am_recv_handler(s->w, &hp) != UCS_OK) DIE("am handler");
    if (ucp_worker_get_address(s->w, &addr, &alen) != UCS_OK) DIE("address");
    xio(fd, &alen, sizeof(alen), 1);
    xio(fd, addr, alen, 1);
    xio(fd, &plen, sizeof(plen), 0);
    void *peer = malloc(plen);
    if (!peer) DIE("malloc");
    xio(fd, peer, plen, 0);
    ucp_ep_params_t ep = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS, .address = peer};
    if (ucp_ep_create(s->w, &ep, &s->ep) != UCS_OK) DIE("ep_create");
    ucp_worker_release_address(s->w, addr);
    free(peer);
}

static void ucx_server(int fd)
{
    struct side s = {0};
    uint64_t ack = 0;
    ucx_side(&s, fd);
    for (;;) {
        next_message(&s);
        if (s.got.op == 'q') break;
        struct req q = {.op = 'a', .size = s.got.op == 'r' ? s.got.size : sizeof(ack)};
        send_am(&s, &q, s.got.op == 'r' ? (void *)s.buf : (void *)&ack, q.size);
    }
    xio(fd, "d", 1, 1);         /* the rank may go only when nothing is in flight */
}

static void ucx_rank(int fd, int n, const size_t *sizes, int nsz)
{
    struct side s = {0};
    double *t = malloc(sizeof(*t) * (size_t)n);
    char c;
    ucx_side(&s, fd);
    if (!t) DIE("malloc");
    for (int z = 0; z < nsz; z++)
        for (int op = 'r'; op; op = op == 'r' ? 'w' : 0) {
            struct req q = {.op = (uint32_t)op, .size = sizes[z]};
            for (int i = -8; i < n; i++) {
                double t0 = now();
                send_am(&s, &q, op == 'w' ? s.buf : NULL, op == 'w' ? q.size : 0);
                next_message(&s);
                if (s.len != (op == 'r' ? q.size : 8)) DIE("answer of %zu bytes", s.len);
                if (i >= 0) t[i] = now() - t0;
            }
            report("ucx", op, sizes[z], t, n);
        }
    struct req q = {.op = 'q'};
    send_am(&s, &q, NULL, 0);
    xio(fd, &c, 1, 0);
    free(t);
}

/* ---- main ------------------------------------------------------------------------ */

static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'k' || *end == 'K') v <<= 10;
    else if (*end == 'm' || *end == 'M') v <<= 20;
    if (v == 0 || v > MAXSZ) DIE("size %s: 1 byte to 4 MiB", s);
    return (size_t)v;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "tcp") && strcmp(argv[1], "ucx")))
        DIE("usage: rtt tcp|ucx [CALLS] [SIZES]");
    int n = argc > 2 ? atoi(argv[2]) : 2000, nsz = 0, ucx = !strcmp(argv[1], "ucx");
    size_t sizes[16];
    char list[256];
    snprintf(list, sizeof(list), "%s", argc > 3 ? argv[3] : "8,4k,64k,1m");
    for (char *p = strtok(list, ","); p && nsz < 16; p = strtok(NULL, ","))
        sizes[nsz++] = parse_size(p);
    if (n < 1 || nsz == 0) DIE("nothing to measure");

    int sv[2], lfd = -1, port = 0;
    if (ucx) {
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) DIE("socketpair");
    } else {
        struct sockaddr_in a = {.sin_family = AF_INET};
        socklen_t al = sizeof(a);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        lfd = socket(AF_INET, SOCK_STREAM, 0);
        if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 1)
            || getsockname(lfd, (struct sockaddr *)&a, &al))
            DIE("listen: %s", strerror(errno));
        port = ntohs(a.sin_port);
    }
    pid_t pid = fork();
    if (pid < 0) DIE("fork");
    if (pid == 0) {
        if (ucx) {
            close(sv[0]);
            ucx_server(sv[1]);
        } else {
            tcp_server(lfd);
        }
        _exit(0);
    }
    if (ucx) {
        close(sv[1]);
        ucx_rank(sv[0], n, sizes, nsz);
    } else {
        close(lfd);
        tcp_rank(port, n, sizes, nsz);
    }
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st)) DIE("server side failed");
    return 0;
}
