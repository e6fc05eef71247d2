/* srv_client's cases: the UCX transport's handshake and refusals (--ucx, --no-ucx). */
#include "srv_harness.h"

/* ---- the UCX transport's handshake and refusals (server with --transport ucx|tcp) ---- */

static int ucxaddr(struct cl *c, struct ddio_wbuf *payload, struct msg *m)
{
    return call(c, DDIO_T_UCXADDR, payload, m);
}

/* an XFER asking for UCX: the status, and the error's text in msg */
static int ucx_xfer(struct cl *c, uint64_t handle, char *msg, size_t n)
{
    struct ddio_desc d = {.length = 4096};
    d.root = ddio_node_leaf(4096);
    CHECK(d.root && ddio_node_finish(d.root) == 0, "ucx: desc");
    struct ddio_wbuf dw;
    ddio_wbuf_init(&dw);
    ddio_desc_encode(&dw, &d);
    struct ddio_xfer x = {handle, DDIO_X_READ, DDIO_XF_UCX, 0, 0, 1, 0, 5000,
                          (uint32_t)dw.len, dw.p, 1, 4096, 0, NULL, 0, 0, 0, NULL, 0};
    int st = xfer_call(c, &x, msg, n);
    ddio_wbuf_free(&dw);
    ddio_desc_free(&d);
    return st;
}


/* A UCX rank that never fetches its read data (its worker is never
 * progressed): the server's sends from a block cannot end, so its wait for
 * them must give up at the XFER's deadline, close the endpoint so they end
 * (a block is never reused while UCX may read it) and fail the XFER, and
 * every buffer must come back: the same read over TCP on the same
 * connection then works. */
static void ucx_stalled_read(struct cl *c, uint64_t h)
{
    const uint64_t len = 32u << 20;          /* 32 blocks of 1 MiB: past any eager send */
    struct ddio_setsize ss = {h, len, UINT64_MAX, 0};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_setsize(&w, &ss);
    CHECK(call_simple(c, DDIO_T_SETSIZE, &w) == 0, "stalled read: setsize");
    struct dspec sp = {.count = 1, .len = len, .extent = (int64_t)len, .length = len};
    struct ddio_desc d;
    build_desc(&sp, &d);
    uint8_t *buf = malloc(len), *got = calloc(len, 1);
    CHECK(buf && got, "oom");
    struct xres r = cl_xfer_hold(c, h, DDIO_X_READ, DDIO_XF_UCX, 0, 0, 1, 0, &d, buf, got, 2000,
                                 0, 77);
    CHECK(r.status == ETIMEDOUT && r.err[0], "stalled read: status %d (%s), want ETIMEDOUT",
          r.status, r.err);
    CHECK(r.put_bytes == 0 && r.get_bytes == 0, "stalled read: data by TCP, not UCX");
    printf("    (stalled UCX read: ETIMEDOUT after %" PRId64 " ms)\n", r.elapsed_ms);
    CHECK(r.elapsed_ms >= 1900 && r.elapsed_ms <= 2000 + 10000 + 3000,
          "stalled read failed after %" PRId64 " ms", r.elapsed_ms);
    r = cl_xfer(c, h, DDIO_X_READ, 0, 0, 0, 1, 0, &d, buf, got, 5000);
    CHECK(r.status == 0 && r.put_bytes == len, "read after a stalled one: status %d, %" PRIu64
          " of %" PRIu64 " bytes", r.status, r.put_bytes, len);
    for (uint64_t i = 0; i < len; i++)       /* the file is a hole: every byte 0 */
        CHECK(got[i] && buf[i] == 0, "read after a stalled one: byte %" PRIu64 " is %u", i,
              buf[i]);
    CHECK(!g_log || log_has("did not complete in time", "endpoint closed"),
          "stalled read: the server log does not say it closed the endpoint");
    /* UCX 1.13 leaves such a send in flight even after the force-close: the
     * server must then give its block up rather than reuse it */
    if (g_log && log_has("still in flight after the endpoint closed", ""))
        CHECK(log_has("block buffer", "given up"), "stalled read: a block whose send never "
              "ended was not given up");
    ddio_desc_free(&d);
    free(buf);
    free(got);
}

void test_ucx(int offered)
{
    struct msg m;
    struct ddio_open_r r;
    char msg[1024];
    struct cl *c = connect_create("ucx/file", &r);
    CHECK(!!(c->flags & DDIO_SRV_UCX) == offered, "HELLO: UCX offered %d, expected %d",
          !!(c->flags & DDIO_SRV_UCX), offered);
    if (!offered) {
        CHECK(ucxaddr(c, NULL, &m) == EOPNOTSUPP, "UCXADDR not refused");
        free(m.p);
        CHECK(call_simple(c, DDIO_T_STATS, NULL) == 0, "connection unusable after UCXADDR");
        cl_close(c);
        printf("ok   --transport tcp: UCX not offered, UCXADDR refused, connection kept\n");
        return;
    }
    /* an XFER asking for UCX on a connection that never asked for it */
    int st = ucx_xfer(c, r.handle, msg, sizeof(msg));
    CHECK(st == EPROTO && strstr(msg, "UCXADDR"), "UCX XFER without UCXADDR: %d (%s)", st, msg);
    /* UCXADDR carries no payload: one with bytes is malformed (and closes) */
    struct cl *b = cl_connect();
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_put_u32(&w, 7);
    CHECK(ucxaddr(b, &w, &m) == EPROTO, "UCXADDR with a payload accepted");
    free(m.p);
    cl_close(b);
    /* the reply: a cookie and the server's address; a second UCXADDR is refused */
    CHECK(ucxaddr(c, NULL, &m) == 0, "UCXADDR refused");
    uint64_t cookie;
    const uint8_t *sa;
    uint32_t salen;
    CHECK(ddio_dec_ucxaddr_r(m.p, m.h.len, &cookie, &sa, &salen) == 0 && salen > 0,
          "UCXADDR reply malformed");
    uint8_t *saddr = malloc(salen);
    memcpy(saddr, sa, salen);
    free(m.p);
    CHECK(ucxaddr(c, NULL, &m) == EEXIST, "second UCXADDR accepted");
    free(m.p);
    /* an XFER before the ATTACH: refused once the wait for it runs out */
    st = ucx_xfer(c, r.handle, msg, sizeof(msg));
    CHECK(st == ECONNRESET && strstr(msg, "never attached"), "UCX XFER before ATTACH: %d (%s)",
          st, msg);
    /* ATTACH naming a wrong cookie is dropped (the server lives on); the
     * right one attaches */
    char why[256];
    struct ddio_ucx *u = ddio_ucx_client(why, sizeof(why));
    CHECK(u, "UCX client: %s", why);
    CHECK(c->flags & DDIO_SRV_UCX_EP, "HELLO: UCX offered without DDIO_SRV_UCX_EP");
    struct ddio_ucx_ep *bad = ddio_ucx_connect(u, saddr, salen, cookie ^ 1, 1,
                                               ddio_now_ms() + TMO, why, sizeof(why));
    CHECK(bad, "ATTACH with a wrong cookie not sent: %s", why);
    struct ddio_ucx_ep *e = ddio_ucx_connect(u, saddr, salen, cookie, 1, ddio_now_ms() + TMO,
                                             why, sizeof(why));
    CHECK(e, "ATTACH: %s", why);
    CHECK(cl_stat(c, "ucx_eps") >= 1, "STATS ucx_eps not counted");
    ucx_stalled_read(c, r.handle);
    /* a client of before: ATTACH without its address, UCX's reply endpoint
     * is the way back (an XFER then finds the connection attached) */
    struct ddio_open_r r2;
    struct cl *c2 = connect_create("ucx/file2", &r2);
    CHECK(ucxaddr(c2, NULL, &m) == 0, "UCXADDR refused (second connection)");
    uint64_t cookie2;
    CHECK(ddio_dec_ucxaddr_r(m.p, m.h.len, &cookie2, &sa, &salen) == 0,
          "UCXADDR reply malformed (second connection)");
    free(m.p);
    struct ddio_ucx_ep *old = ddio_ucx_connect(u, saddr, salen, cookie2, 0,
                                               ddio_now_ms() + TMO, why, sizeof(why));
    CHECK(old, "ATTACH without an address: %s", why);
    ucx_stalled_read(c2, r2.handle);
    ddio_ucx_disconnect(old);
    cl_close(c2);
    ddio_ucx_disconnect(bad);
    ddio_ucx_disconnect(e);
    free(saddr);
    cl_close(c);
    printf("ok   UCX: offered (the server's own endpoint back); XFER without UCXADDR or "
           "before ATTACH refused, UCXADDR with a payload malformed, a second one refused, a "
           "wrong cookie ignored; a rank that never fetches its read data fails by the deadline "
           "and every buffer comes back, with the server's endpoint and with a client of "
           "before's reply endpoint\n");
}


void test_ucx_offered(void)
{
    test_ucx(1);
}

/* a server with --tls required, this client on another host (a network
 * namespace): UCXADDR refused, the connection stays on TCP with TLS */
void test_ucx_refused_tls(void)
{
    struct msg m;
    struct cl *c = cl_connect();
    CHECK(c->flags & DDIO_SRV_UCX, "HELLO: UCX not offered at all");
    int st = ucxaddr(c, NULL, &m);
    char *why = NULL;
    if (st && m.p)
        ddio_dec_err(m.p, m.h.len, &why);
    CHECK(st == EOPNOTSUPP && why && strstr(why, "requires TLS"), "UCXADDR: %d (%s)", st,
          why ? why : "");
    free(why);
    free(m.p);
    cl_close(c);
    printf("ok   UCX refused to a client on another host: the server requires TLS\n");
}

void test_ucx_not_offered(void)
{
    test_ucx(0);
}
