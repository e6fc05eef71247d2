/* srv_client's cases: malformed input: garbage, wrong versions, out-of-order and truncated messages, bad descriptors. */
#include "srv_harness.h"

/* ---- malformed input -------------------------------------------------------------------------- */

static uint8_t junk[64];

/* before the handshake: bad magic, a wrong version, OPEN before HELLO */
void test_malformed_before_auth(void)
{
    memset(junk, 0x5a, sizeof(junk));
    int fd = raw_conn();
    ddio_send_all(fd, junk, sizeof(junk), ddio_now_ms() + TMO);
    expect_closed(fd, "bad magic");

    fd = raw_conn();
    struct ddio_hdr h;
    uint8_t raw[DDIO_HDR_SIZE];
    ddio_hdr_init(&h, DDIO_T_HELLO, 1, 0);
    h.version = 9;
    ddio_hdr_encode(&h, raw);
    ddio_send_all(fd, raw, sizeof(raw), ddio_now_ms() + TMO);
    expect_closed(fd, "wrong version");

    fd = raw_conn();
    ddio_send_msg(fd, DDIO_T_OPEN, 1, 0, junk, 8, NULL, 0, ddio_now_ms() + TMO);
    expect_closed(fd, "OPEN before HELLO");
}

/* after the handshake: a garbage payload, an unknown type, a server-only type */
void test_malformed_after_auth(void)
{
    memset(junk, 0x5a, sizeof(junk));
    int fd = raw_conn();
    send_hello_raw(fd);
    ddio_send_msg(fd, DDIO_T_OPEN, 2, 0, junk, sizeof(junk), NULL, 0, ddio_now_ms() + TMO);
    expect_closed(fd, "garbage OPEN payload");

    fd = raw_conn();
    send_hello_raw(fd);
    ddio_send_msg(fd, 999, 2, 0, NULL, 0, NULL, 0, ddio_now_ms() + TMO);
    expect_closed(fd, "unknown type");

    fd = raw_conn();              /* PROGRESS is server -> client only */
    send_hello_raw(fd);
    ddio_send_msg(fd, DDIO_T_PROGRESS, 2, 0, NULL, 0, NULL, 0, ddio_now_ms() + TMO);
    expect_closed(fd, "PROGRESS from a client");
}

/* truncated: the header promises more than arrives */
void test_malformed_truncated(void)
{
    struct ddio_hdr h;
    uint8_t raw[DDIO_HDR_SIZE];
    memset(junk, 0x5a, sizeof(junk));
    int fd = raw_conn();
    send_hello_raw(fd);
    ddio_hdr_init(&h, DDIO_T_STAT, 3, 100);
    ddio_hdr_encode(&h, raw);
    ddio_send_all(fd, raw, sizeof(raw), ddio_now_ms() + TMO);
    ddio_send_all(fd, junk, 10, ddio_now_ms() + TMO);
    shutdown(fd, SHUT_WR);
    char c1;
    int rc = ddio_recv_all(fd, &c1, 1, ddio_now_ms() + TMO);
    CHECK(rc != 0, "truncated message: connection stayed open");
    ddio_hangup(fd);
    printf("ok   truncated message refused\n");
}

/* a garbage descriptor in a valid XFER: refused, the connection keeps
 * working, and the server keeps serving new connections */
void test_malformed_descriptor(void)
{
    memset(junk, 0x5a, sizeof(junk));
    struct ddio_open_r r;
    struct cl *c = connect_create("baddesc", &r);
    struct ddio_xfer x = {.handle = r.handle, .op = DDIO_X_READ, .nparticipants = 1,
                          .timeout_ms = 1000, .desc_len = sizeof(junk), .desc = junk};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &x);
    int st = call_simple(c, DDIO_T_XFER, &w);
    CHECK(st == EPROTO || st == EINVAL, "garbage descriptor accepted (%d)", st);
    uint64_t v;
    CHECK(cl_handle_op(c, DDIO_T_STAT, r.handle, &v) == 0, "connection unusable after bad XFER");
    cl_close(c);
    printf("ok   garbage descriptor refused, connection still serves\n");
    c = cl_connect();              /* and the server keeps serving new connections */
    cl_close(c);
    printf("ok   server still serves new connections\n");
}

