/* srv_client's cases: hostile clients and the server's limits (--limits). */
#include "srv_harness.h"

/* ---- hostile clients and limits (--limits) --------------------------------------------------
 * The server runs with small limits (run-security-tests.sh): --max-connections 24
 * --max-unauth 8 --auth-timeout 2 --max-message 64K --max-desc 2K --max-desc-depth 4
 * --max-call-memory 1M --max-inflight 3 --block-size 64K. */

#define LIM_CONNS 24
#define LIM_AUTH_S 2
#define LIM_FLOOD 1000

static struct cl *g_bystander;   /* an ordinary client served throughout */
static uint64_t g_by_handle;

/* the bystander's connection (made again after a failed case dropped it) */
static struct cl *bystander(void)
{
    if (!g_bystander) {
        struct ddio_open_r r;
        g_bystander = connect_create("lim/bystander", &r);
        g_by_handle = r.handle;
    }
    return g_bystander;
}

/* after a failed case: its state on the bystander's connection is unknown */
static void bystander_drop(void)
{
    if (g_bystander)
        cl_close(g_bystander);
    g_bystander = NULL;
}

static void bystander_check(const char *when)
{
    uint64_t v;
    CHECK(cl_handle_op(bystander(), DDIO_T_STAT, g_by_handle, &v) == 0,
          "the ordinary client was not served %s", when);
}

/* a fresh authenticated connection does a small write and reads it back */
static void normal_client_works(const char *when)
{
    struct ddio_open_r r;
    struct cl *c = connect_create("lim/normal", &r);
    uint8_t data[1000], back[1000];
    fill_pattern(data, sizeof(data), (unsigned)ddio_now_ms());
    struct ddio_desc d = {.length = sizeof(data)};
    d.root = ddio_node_leaf(sizeof(data));
    CHECK(d.root && ddio_node_finish(d.root) == 0, "desc");
    CHECK(cl_xfer(c, r.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, data, NULL, 5000).status == 0,
          "normal write %s", when);
    CHECK(cl_xfer(c, r.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, back, NULL, 5000).status == 0
          && memcmp(data, back, sizeof(data)) == 0, "normal read-back %s", when);
    ddio_desc_free(&d);
    cl_close(c);
}

/* a header alone, with a length that may be a lie */
static void send_hdr(int fd, uint16_t type, uint64_t req, uint64_t len, uint16_t version)
{
    struct ddio_hdr h;
    uint8_t raw[DDIO_HDR_SIZE];
    ddio_hdr_init(&h, type, req, len);
    h.version = version;
    ddio_hdr_encode(&h, raw);
    CHECK(ddio_send_all(fd, raw, sizeof(raw), ddio_now_ms() + TMO) == 0, "send header");
}

static void lim_messages(void)
{
    int fd = raw_conn();
    send_hello_raw(fd);
    send_hdr(fd, DDIO_T_OPEN, 3, 1u << 20, DDIO_VERSION);
    expect_refusal(fd, EMSGSIZE, "--max-message", "oversized OPEN");
    ddio_hangup(fd);
    fd = raw_conn();
    send_hdr(fd, DDIO_T_HELLO, 1, 100000, DDIO_VERSION);
    expect_refusal(fd, EMSGSIZE, "before authentication", "oversized HELLO");
    ddio_hangup(fd);
    fd = raw_conn();
    send_hello_raw(fd);
    send_hdr(fd, DDIO_T_STAT, 3, (uint64_t)DDIO_MAX_PAYLOAD + 1, DDIO_VERSION);
    expect_refusal(fd, EPROTO, "malformed message header", "header past the protocol cap");
    ddio_hangup(fd);
    printf("ok   oversized messages refused (EMSGSIZE before and after AUTH, EPROTO past "
           "the protocol cap)\n");

    fd = raw_conn();              /* truncated HELLO, then silence */
    send_hdr(fd, DDIO_T_HELLO, 1, 100, DDIO_VERSION);
    CHECK(ddio_send_all(fd, "0123456789", 10, ddio_now_ms() + TMO) == 0, "send");
    int64_t t0 = ddio_now_ms();
    expect_refusal(fd, ETIMEDOUT, "--auth-timeout", "truncated HELLO");
    int64_t waited = ddio_now_ms() - t0;
    CHECK(waited < (LIM_AUTH_S + 2) * 1000, "truncated HELLO held for %lld ms",
          (long long)waited);
    ddio_hangup(fd);
    printf("ok   truncated HELLO closed after the authentication deadline (%lld ms)\n",
           (long long)waited);

    uint8_t junk[256];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    fd = raw_conn();
    send_hello_raw(fd);
    ddio_send_all(fd, junk, sizeof(junk), ddio_now_ms() + TMO);
    expect_closed(fd, "garbage after AUTH");   /* the reply's type is the garbage's */
    fd = raw_conn();
    send_hello_raw(fd);
    send_hdr(fd, DDIO_T_STAT, 3, 0, DDIO_VERSION + 7);
    expect_refusal(fd, EPROTONOSUPPORT, "not supported", "wrong version after AUTH");
    ddio_hangup(fd);
    fd = raw_conn();
    send_hdr(fd, DDIO_T_HELLO, 1, 0, 1);   /* a version-1 client */
    char want[32];
    snprintf(want, sizeof(want), "expected %u", (unsigned) DDIO_VERSION);
    expect_refusal(fd, EPROTONOSUPPORT, want, "version-1 HELLO");
    ddio_hangup(fd);
    bystander_check("after malformed messages");
    printf("ok   garbage, wrong-version (before and after AUTH) refused\n");
}

/* on a new authenticated connection, a message of `type` (payload w, may be
 * NULL, consumed) must be refused with `status` and `text`, then closed */
static void authed_refused(uint16_t type, struct ddio_wbuf *w, int status, const char *text,
                           const char *what)
{
    int fd = raw_conn();
    send_hello_raw(fd);
    ddio_send_msg(fd, type, 3, 0, w ? w->p : NULL, w ? w->len : 0, NULL, 0,
                  ddio_now_ms() + TMO);
    if (w)
        ddio_wbuf_free(w);
    expect_refusal(fd, status, text, what);
    ddio_hangup(fd);
}

static void lim_order_and_state(void)
{
    struct ddio_segs g = {.tag = 1, .nseg = 0};   /* a GET is the server's to send */
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_get(&w, &g);
    authed_refused(DDIO_T_GET, &w, EPROTO, "unexpected GET", "GET from a client");
    authed_refused(DDIO_T_OPEN | DDIO_REPLY, NULL, EPROTO, "unexpected", "reply from a client");
    struct ddio_hello h = {.pid = 1, .client = "again"};
    ddio_wbuf_init(&w);
    ddio_enc_hello(&w, &h);
    authed_refused(DDIO_T_HELLO, &w, EPROTO, "second HELLO", "second HELLO");
    /* DATA that answers no GET (a late answer): dropped, the connection serves on */
    struct cl *c = cl_connect();
    ddio_wbuf_init(&w);
    ddio_enc_data(&w, 999);
    ddio_put_bytes(&w, "stray bytes", 11);
    send_w(c, DDIO_T_DATA, 77, &w);
    CHECK(call_simple(c, DDIO_T_STATS, NULL) == 0, "connection unusable after a stray DATA");
    cl_close(c);
    bystander_check("after out-of-order messages");
    printf("ok   out-of-order (GET, a reply from a client) and wrong-state (second HELLO) "
           "refused; a stray DATA is dropped\n");
}

/* a write XFER of len contiguous bytes sent by hand, up to its first GET
 * (decoded into *g); returns the XFER's request id */
static uint64_t raw_write_first_get(struct cl *c, uint64_t handle, uint64_t len,
                                    struct ddio_segs *g, const char *what)
{
    struct ddio_desc d = {.length = len};
    d.root = ddio_node_leaf(len);
    CHECK(d.root && ddio_node_finish(d.root) == 0, "%s: desc", what);
    struct ddio_wbuf dw, w;
    ddio_wbuf_init(&dw);
    ddio_desc_encode(&dw, &d);
    struct ddio_xfer x = {handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, 5000, (uint32_t)dw.len, dw.p, 0, 0, 0, NULL, 0, 0, 0, NULL, 0};
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &x);
    ddio_wbuf_free(&dw);
    ddio_desc_free(&d);
    uint64_t req = ++c->req;
    send_w(c, DDIO_T_XFER, req, &w);
    struct msg m;
    CHECK(recv_msg(c, &m) == 0 && m.h.type == DDIO_T_GET, "%s: no GET", what);
    CHECK(ddio_dec_get(m.p, m.h.len, g) == 0, "%s: GET malformed", what);
    free(m.p);
    return req;
}

/* DATA whose length does not match its GET: the write fails with EPROTO
 * (when its reply beats the close), the connection closes, nothing else is
 * disturbed. The late-answer case above is harmless; this one is a lie. */
static void lim_data_length(void)
{
    struct ddio_open_r r;
    struct cl *c = connect_create("lim/datalen", &r);
    enum { LEN = 1000 };
    struct ddio_segs g;
    uint64_t req = raw_write_first_get(c, r.handle, LEN, &g, "data length");
    CHECK(g.total == LEN, "data length: GET of %llu bytes", (unsigned long long)g.total);
    struct msg m;
    struct ddio_wbuf w;
    uint8_t data[LEN + 1] = {0};
    ddio_wbuf_init(&w);
    ddio_enc_data(&w, g.tag);
    ddio_put_bytes(&w, data, LEN + 1);   /* one byte more than asked for */
    ddio_segs_free(&g);
    send_w(c, DDIO_T_DATA, req, &w);
    int rc = recv_msg(c, &m);
    if (rc == 0) {
        char *e = NULL;
        CHECK(m.h.type == (DDIO_T_XFER | DDIO_REPLY) && m.h.status == EPROTO
              && ddio_dec_err(m.p, m.h.len, &e) == 0 && strstr(e, "bytes for a GET of"),
              "data length: want EPROTO for the XFER, got %s status %d (%s)",
              ddio_type_name(m.h.type), m.h.status, e ? e : "");
        printf("    (xfer: %s)\n", e);
        free(e);
        free(m.p);
        rc = recv_msg(c, &m);
    }
    CHECK(rc != 0, "data length: connection still open");
    cl_close(c);
    bystander_check("after a DATA of the wrong length");
    normal_client_works("after a DATA of the wrong length");
    printf("ok   DATA of the wrong length for its GET: the XFER fails, the connection "
           "closes\n");
}

/* A writer that dies halfway through a DATA, with more GETs outstanding:
 * the XFER fails, the server takes its GETs back and serves on. */
static void lim_data_cut(void)
{
    struct ddio_open_r r;
    struct cl *c = connect_create("lim/datacut", &r);
    struct ddio_segs g;
    uint64_t req = raw_write_first_get(c, r.handle, 4 * c->bsize, &g, "data cut");
    CHECK(g.total > 1, "data cut: GET of %llu bytes", (unsigned long long)g.total);
    send_hdr(c->fd, DDIO_T_DATA, req, 4 + g.total, DDIO_VERSION);
    uint8_t *half = calloc(1, 4 + g.total / 2);
    memcpy(half, (uint8_t[4]){(uint8_t)g.tag, (uint8_t)(g.tag >> 8), (uint8_t)(g.tag >> 16),
                              (uint8_t)(g.tag >> 24)}, 4);
    CHECK(ddio_send_all(c->fd, half, 4 + g.total / 2, ddio_now_ms() + TMO) == 0,
          "data cut: send");
    usleep(100000);               /* the reader is inside the block now */
    free(half);
    ddio_segs_free(&g);
    cl_close(c);
    bystander_check("after a writer died inside a DATA");
    normal_client_works("after a writer died inside a DATA");
    printf("ok   a writer dying inside a DATA fails its XFER, the server serves on\n");
}

/* a descriptor of `depth` levels (VEC of 1 ... around a 512-byte leaf) */
static void deep_desc(struct ddio_desc *d, int depth, uint64_t len)
{
    struct ddio_node *n = ddio_node_leaf(len);
    for (int i = 1; i < depth; i++)
        n = ddio_node_vec(1, 0, n);
    CHECK(n && ddio_node_finish(n) == 0, "deep desc");
    memset(d, 0, sizeof(*d));
    d->root = n;
    d->length = len;
}

/* an XFER that is answered at once (refused, or nothing to move): its
 * status, and the error's text in msg */
static int xfer_raw_desc(struct cl *c, uint64_t handle, uint32_t op, const uint8_t *desc,
                         uint32_t len, char *msg, size_t n)
{
    struct ddio_xfer x = {handle, op, 0, 0, 0, 1, 0, 5000, len, desc, 0, 0, 0, NULL, 0, 0, 0, NULL, 0};
    return xfer_call(c, &x, msg, n);
}

static void lim_descriptors(void)
{
    struct ddio_open_r r;
    struct cl *c = connect_create("lim/desc", &r);
    char msg[1024];
    uint8_t buf[512];
    memset(buf, 0x5a, sizeof(buf));
    struct ddio_desc d;
    deep_desc(&d, 4, sizeof(buf));           /* at the depth limit: served */
    CHECK(cl_xfer(c, r.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, buf, NULL, 5000).status == 0,
          "depth 4 refused");
    ddio_desc_free(&d);
    deep_desc(&d, 5, sizeof(buf));           /* past it: E2BIG, nothing moves */
    struct xres x = cl_xfer(c, r.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, buf, NULL, 5000);
    CHECK(x.status == E2BIG && x.get_bytes == 0, "depth 5: status %d, %llu bytes pulled",
          x.status, (unsigned long long)x.get_bytes);
    ddio_desc_free(&d);
    printf("ok   descriptor at the depth limit (4) served, past it (5) refused with E2BIG\n");

    /* encoded size: a LIST descriptor just within and just past 2 KiB */
    for (int past = 0; past < 2; past++) {
        struct ddio_wbuf w;
        ddio_wbuf_init(&w);
        uint32_t cnt = past ? 119 : 117;     /* 17 bytes per entry, 55 + 5 of header */
        ddio_put_u64(&w, 1u << 20);         /* past EOF: DONE without PUTs */
        ddio_put_u64(&w, 0);
        ddio_put_u64(&w, 0);
        ddio_put_u64(&w, cnt);
        ddio_put_u8(&w, DDIO_N_LIST);
        ddio_put_u32(&w, cnt);
        for (uint32_t i = 0; i < cnt; i++) {
            ddio_put_u64(&w, 2 * i);
            ddio_put_u8(&w, DDIO_N_LEAF);
            ddio_put_u64(&w, 1);
        }
        CHECK(!w.err && (w.len <= 2048) == !past, "test descriptor size %zu", w.len);
        int st = xfer_raw_desc(c, r.handle, DDIO_X_READ, w.p, (uint32_t)w.len, msg, sizeof(msg));
        if (past)
            CHECK(st == EMSGSIZE && strstr(msg, "--max-desc"), "descriptor of %zu bytes: %d "
                  "(%s)", w.len, st, msg);
        else
            CHECK(st == 0, "descriptor of %zu bytes refused: %d (%s)", w.len, st, msg);
        printf("ok   descriptor of %zu bytes %s\n", w.len, past ? "refused (EMSGSIZE)" : "served");
        ddio_wbuf_free(&w);
    }

    /* memory per call: a 1 GiB write plans 16384 blocks of 64 KiB; 1 MiB
     * allows 10922 entries. Refused before any GET: nothing written. */
    struct ddio_desc big = {.length = 1u << 30};
    big.root = ddio_node_leaf(1u << 30);
    CHECK(big.root && ddio_node_finish(big.root) == 0, "big desc");
    uint64_t size_before;
    CHECK(cl_handle_op(c, DDIO_T_STAT, r.handle, &size_before) == 0, "stat");
    struct ddio_xfer xm = {r.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, 5000, 0, NULL, 0, 0, 0, NULL, 0, 0, 0, NULL, 0};
    struct ddio_wbuf dw, w;
    ddio_wbuf_init(&dw);
    ddio_desc_encode(&dw, &big);
    xm.desc = dw.p;
    xm.desc_len = (uint32_t)dw.len;
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &xm);
    struct msg m;
    int st = call(c, DDIO_T_XFER, &w, &m);   /* the first message must be the refusal */
    char *s = NULL;
    CHECK(st == E2BIG && ddio_dec_err(m.p, m.h.len, &s) == 0 && strstr(s, "--max-call-memory"),
          "1 GiB write: status %d (%s)", st, s ? s : "");
    free(s);
    free(m.p);
    ddio_wbuf_free(&dw);
    ddio_desc_free(&big);
    uint64_t size_after;
    CHECK(cl_handle_op(c, DDIO_T_STAT, r.handle, &size_after) == 0 && size_after == size_before,
          "size changed %llu -> %llu", (unsigned long long)size_before,
          (unsigned long long)size_after);
    cl_close(c);
    bystander_check("after descriptor limits");
    printf("ok   a call needing more than --max-call-memory refused (E2BIG) before any data "
           "moved\n");
}

/* --max-inflight 3: three waiting locks are fine, the fourth is refused */
static void lim_inflight(void)
{
    struct cl *a, *b;
    struct ddio_open_r ra, rb;
    open_pair("lim/locks", &a, &b, &ra, &rb);
    CHECK(cl_lock(a, ra.handle, DDIO_LK_SETLK, DDIO_LK_WR, 0, 100, 0) == 0, "lock a");
    for (uint64_t i = 0; i < 4; i++) {
        struct ddio_lock lk = {rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 10 * i, 5, 8000, 0, 0};
        struct ddio_wbuf w;
        ddio_wbuf_init(&w);
        ddio_enc_lock(&w, &lk);
        send_w(b, DDIO_T_LOCK, 100 + i, &w);
    }
    struct msg m;
    CHECK(recv_msg(b, &m) == 0, "recv");
    char *s = NULL;
    CHECK(m.h.req == 103 && m.h.status == EBUSY && ddio_dec_err(m.p, m.h.len, &s) == 0
          && strstr(s, "--max-inflight"), "fourth waiting request: req %llu status %d (%s)",
          (unsigned long long)m.h.req, m.h.status, s ? s : "");
    free(s);
    free(m.p);
    CHECK(cl_lock(a, ra.handle, DDIO_LK_UNLCK, 0, 0, 100, 0) == 0, "unlock a");
    unsigned granted = 0;
    for (int i = 0; i < 3; i++) {
        CHECK(recv_msg(b, &m) == 0, "recv");
        granted += m.h.status == 0 && m.h.req >= 100 && m.h.req < 103;
        free(m.p);
    }
    CHECK(granted == 3, "only %u of 3 waiting locks granted", granted);
    /* a request stops counting when its reply is out: 200 calls, each sent
     * after the previous reply, are never refused, however slowly the
     * server's finished threads unwind (SYNC and LOCK run on threads) */
    uint8_t data[512], back[512];
    fill_pattern(data, sizeof(data), 7);
    struct ddio_desc d = {.length = sizeof(data)};
    d.root = ddio_node_leaf(sizeof(data));
    CHECK(d.root && ddio_node_finish(d.root) == 0, "desc");
    for (int i = 0; i < 200; i++) {
        int rc;
        switch (i % 4) {
        case 0: rc = cl_xfer(b, rb.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, data, NULL, 5000).status;
                break;
        case 1: rc = cl_xfer(b, rb.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, back, NULL, 5000).status;
                break;
        case 2: rc = cl_handle_op(b, DDIO_T_SYNC, rb.handle, NULL); break;
        default: rc = cl_lock(b, rb.handle, DDIO_LK_SETLKW, DDIO_LK_RD, 0, 1, 1000); break;
        }
        CHECK(rc == 0, "sequential call %d refused: %d", i, rc);
    }
    CHECK(memcmp(data, back, sizeof(data)) == 0, "sequential read-back differs");
    ddio_desc_free(&d);
    cl_close(a);
    cl_close(b);
    printf("ok   --max-inflight: 3 waiting requests served, the 4th refused (EBUSY); 200 "
           "sequential calls never refused\n");
}

/* wait until the server counts at most n connections (closes are noticed
 * by the server's reader threads, a moment after the client's close) */
static void wait_conns(uint64_t n)
{
    int64_t dl = ddio_now_ms() + 5000;
    for (;;) {
        uint64_t have = cl_stat(bystander(), "connections");   /* UINT64_MAX: none */
        if (have <= n)
            return;
        CHECK(ddio_now_ms() < dl, "server still counts %llu connections, expected %llu",
              (unsigned long long)have, (unsigned long long)n);
        usleep(20000);
    }
}

static void *close_later(void *arg)
{
    usleep(300000);
    cl_close(arg);
    return NULL;
}

/* --max-connections: the 25th authenticated connection is refused until one closes */
static void lim_connections(void)
{
    struct cl *cs[LIM_CONNS];
    wait_conns(1);
    int n = 1;                    /* the bystander holds one */
    for (; n < LIM_CONNS; n++)
        cs[n] = cl_connect();
    int fd = raw_conn();
    struct ddio_hello_r r;
    char err[1024];
    int rc = ddio_handshake(fd, g_addr, "one too many", &g_secret, ddio_now_ms() + TMO, &r,
                            err, sizeof(err));
    CHECK(rc == -EBUSY && strstr(err, "--max-connections"), "connection %d: %d (%s)",
          LIM_CONNS + 1, rc, err);
    ddio_hangup(fd);
    /* Every client's ddio_dial takes "try again later" at its word: refused
     * while all 24 are held, it is served once one closes (300 ms on). */
    pthread_t t;
    pthread_create(&t, NULL, close_later, cs[LIM_CONNS - 1]);
    int64_t t0 = ddio_now_ms();
    struct cl *c = cl_connect();
    int64_t waited = ddio_now_ms() - t0;
    pthread_join(t, NULL);
    CHECK(waited >= 250, "connection %d served after %lld ms, before a connection closed",
          LIM_CONNS + 1, (long long)waited);
    cl_close(c);
    for (int i = 1; i < LIM_CONNS - 1; i++)
        cl_close(cs[i]);
    printf("ok   --max-connections %d: the next one refused (%s); a client that tries again "
           "is served %lld ms later, once one closed\n", LIM_CONNS, err, (long long)waited);
}

/* LIM_FLOOD connections that connect and say nothing */
static void lim_flood(void)
{
    static int fds[LIM_FLOOD];
    wait_conns(1);                /* lim_connections' closes noticed: only the bystander */
    int64_t t0 = ddio_now_ms();
    for (int i = 0; i < LIM_FLOOD; i++) {
        fds[i] = ddio_connect(g_host, g_port, ddio_now_ms() + TMO);
        CHECK(fds[i] >= 0, "flood connection %d: %s", i, strerror(-fds[i]));
    }
    int64_t t1 = ddio_now_ms();
    /* Evicted connections count against --max-connections until their
     * threads close them, so a client may first be told "try again later";
     * ddio_dial does, as every client does. */
    normal_client_works("during a flood of stalled connections");
    int64_t t2 = ddio_now_ms();
    CHECK(t2 - t1 < 10000, "a normal client waited %lld ms during the flood",
          (long long)(t2 - t1));
    bystander_check("during the flood");
    unsigned evicted = 0, timedout = 0, toomany = 0;
    for (int i = 0; i < LIM_FLOOD; i++) {
        struct ddio_hdr h;
        int rc = ddio_recv_hdr(fds[i], &h, ddio_now_ms() + (LIM_AUTH_S + 3) * 1000);
        CHECK(rc == 0, "stalled connection %d: no refusal (%s)", i, strerror(-rc));
        uint8_t *p = malloc(h.len + 1);
        char *s = NULL;
        CHECK(ddio_recv_all(fds[i], p, h.len, ddio_now_ms() + TMO) == 0
              && ddio_dec_err(p, h.len, &s) == 0, "stalled connection %d: refusal payload", i);
        if (h.status == EBUSY && strstr(s, "--max-unauth"))
            evicted++;
        else if (h.status == ETIMEDOUT && strstr(s, "--auth-timeout"))
            timedout++;
        else if (h.status == EBUSY && strstr(s, "--max-connections"))
            toomany++;
        else
            die("stalled connection %d: status %d (%s)", i, h.status, s);
        char c;
        rc = ddio_recv_all(fds[i], &c, 1, ddio_now_ms() + TMO);
        CHECK(rc == -ECONNRESET || rc == -EPIPE, "stalled connection %d not closed", i);
        free(s);
        free(p);
        close(fds[i]);
    }
    CHECK(timedout <= 8 + 1, "%u stalled connections outlived --max-unauth 8", timedout);
    normal_client_works("after the flood");
    bystander_check("after the flood");
    printf("ok   %d stalled connections (opened in %lld ms): %u evicted (--max-unauth), %u "
           "timed out (--auth-timeout), %u refused (--max-connections); a normal client "
           "worked during (served %lld ms after the flood) and after\n", LIM_FLOOD,
           (long long)(t1 - t0), evicted, timedout, toomany, (long long)(t2 - t1));
}

static void lim_bystander(void)
{
    bystander();
}

static void lim_end(void)
{
    bystander_check("at the end");
}

void test_limits(void)
{
    case_on_failure(bystander_drop);
    run_case("limits/bystander", lim_bystander);
    run_case("limits/messages", lim_messages);
    run_case("limits/order-and-state", lim_order_and_state);
    run_case("limits/data-length", lim_data_length);
    run_case("limits/data-cut", lim_data_cut);
    run_case("limits/descriptors", lim_descriptors);
    run_case("limits/inflight", lim_inflight);
    run_case("limits/connections", lim_connections);
    run_case("limits/flood", lim_flood);
    run_case("limits/bystander-at-end", lim_end);
    case_on_failure(NULL);
    bystander_drop();
}
