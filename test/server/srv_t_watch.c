/* srv_client's cases: WATCH and INVAL (PROTOCOL.md "WATCH and INVAL"): a
 * change is told to a watcher of another process before its reply, with
 * the path and what changed; a change of the watcher's own process is not;
 * a watcher that stays silent is cut off and the change answered. Changes
 * are sent without waiting for their replies, which wait for the watcher. */
#include "srv_harness.h"

#include <poll.h>
#include <unistd.h>

static void watch_as(struct cl *c, uint64_t client, int want)
{
    struct ddio_watch m = {.client = client};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_watch(&w, &m);
    int rc = call_simple(c, DDIO_T_WATCH, &w);
    CHECK(rc == want, "WATCH: status %d, not %d", rc, want);
}

/* request type with payload w sent on c; its req */
static uint64_t sent(struct cl *c, uint16_t type, struct ddio_wbuf *w)
{
    send_w(c, type, ++c->req, w);
    return c->req;
}

/* the reply to req on c: its status (an OPEN's handle in *handle) */
static int reply_of(struct cl *c, uint64_t req, uint64_t *handle)
{
    struct msg m;
    struct ddio_open_r r;
    CHECK(recv_msg(c, &m) == 0, "no reply");
    CHECK(m.h.req == req && (m.h.type & DDIO_REPLY), "%s, not the reply to %" PRIu64,
          ddio_type_name(m.h.type), req);
    if (handle && m.h.status == 0) {
        CHECK(ddio_dec_open_r(m.p, m.h.len, &r) == 0, "malformed OPEN reply");
        *handle = r.handle;
    }
    free(m.p);
    return m.h.status;
}

static uint64_t create_sent(struct cl *c, const char *path)
{
    struct ddio_open o = {.path = (char *)path, .amode = DDIO_O_RDWR | DDIO_O_CREAT};
    struct ddio_wbuf w;
    layout_for(c, &o.layout, 65536, 1);
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, &o);
    return sent(c, DDIO_T_OPEN, &w);
}

static uint64_t handle_sent(struct cl *c, uint16_t type, uint64_t handle)
{
    struct ddio_handle_req h = {.handle = handle};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_handle_req(&w, &h);
    return sent(c, type, &w);
}

/* a DELETE with ids (client, a new call): the server keeps the answers of
 * ids it saw (a run again on the same root must not find them) */
static uint64_t delete_sent(struct cl *c, const char *path, uint64_t client)
{
    static uint64_t call;
    struct ddio_path_req p = {.path = (char *)path, .once_client = client, .once_call = ++call};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_path_req(&w, &p);
    return sent(c, DDIO_T_DELETE, &w);
}

/* the next message on c is INVAL of path with what; answered */
static void expect_inval(struct cl *c, const char *path, uint32_t what)
{
    struct msg m;
    struct ddio_inval iv;
    CHECK(recv_msg(c, &m) == 0, "no INVAL");
    CHECK(m.h.type == DDIO_T_INVAL, "%s, not INVAL", ddio_type_name(m.h.type));
    CHECK(ddio_dec_inval(m.p, m.h.len, &iv) == 0, "malformed INVAL");
    CHECK(!strcmp(iv.path, path) && iv.what == what, "INVAL of %s (%u), not %s (%u)", iv.path,
          iv.what, path, what);
    free(iv.path);
    free(m.p);
    send_w(c, DDIO_T_INVAL | DDIO_REPLY, m.h.req, NULL);
}

/* nothing arrives on c within ms */
static void expect_quiet(struct cl *c, int ms, const char *what)
{
    struct pollfd p = {.fd = c->fd, .events = POLLIN};
    CHECK(poll(&p, 1, ms) == 0, "%s: a message came", what);
}

/* a file created by c (told to w), and its handle */
static uint64_t created(struct cl *c, struct cl *w, const char *p)
{
    uint64_t h = 0, q = create_sent(c, p);
    expect_inval(w, p, DDIO_IV_NAME | DDIO_IV_ATTR);
    CHECK(reply_of(c, q, &h) == 0, "create");
    return h;
}

/* the handle's CLOSE: told to w when told */
static void closed(struct cl *c, struct cl *w, uint64_t h, const char *p)
{
    uint64_t q = handle_sent(c, DDIO_T_CLOSE, h);
    if (p)
        expect_inval(w, p, DDIO_IV_ATTR);
    CHECK(reply_of(c, q, NULL) == 0, "close");
}

void test_watch(void)
{
    struct cl *w = cl_connect(), *c = cl_connect(), *o = cl_connect();
    uint64_t me = ((uint64_t)getpid() << 20) ^ (uint64_t)ddio_now_ms(), other = me + 1;
    char p[128];
    path_name(p, sizeof(p), "wf");
    watch_as(w, me, 0);
    watch_as(w, me, EEXIST);
    uint64_t h = created(c, w, p);
    closed(c, w, h, NULL);             /* unwritten: nothing told */
    expect_quiet(w, 200, "an unwritten handle's CLOSE");
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    layout_for(c, &l, 65536, 1);
    CHECK(cl_open(c, p, DDIO_O_RDWR, &l, &r) == 0, "open");
    struct ddio_setsize ss = {r.handle, 4096, UINT64_MAX, 0};
    struct ddio_wbuf sw;
    ddio_wbuf_init(&sw);
    ddio_enc_setsize(&sw, &ss);
    uint64_t q = sent(c, DDIO_T_SETSIZE, &sw);
    expect_inval(w, p, DDIO_IV_ATTR);  /* before the SETSIZE's reply */
    CHECK(reply_of(c, q, NULL) == 0, "SETSIZE");
    closed(c, w, r.handle, p);         /* resized through it: told at its CLOSE */
    /* a change of the watcher's own process (its ids) is not sent back */
    q = delete_sent(o, p, me);
    CHECK(reply_of(o, q, NULL) == 0, "own DELETE");
    expect_quiet(w, 200, "a DELETE of the watcher's own process");
    /* the reply waits for the watcher's answer */
    closed(c, w, created(c, w, p), NULL);
    q = delete_sent(c, p, other);
    expect_quiet(c, 300, "DELETE answered before the watcher answered");
    expect_inval(w, p, DDIO_IV_NAME | DDIO_IV_ATTR);
    CHECK(reply_of(c, q, NULL) == 0, "DELETE");
    /* a silent watcher: cut off after 2 s, the change answered */
    closed(c, w, created(c, w, p), NULL);
    int64_t t0 = ddio_now_ms();
    q = delete_sent(c, p, other);
    CHECK(reply_of(c, q, NULL) == 0, "DELETE with a silent watcher");
    int64_t dt = ddio_now_ms() - t0;
    CHECK(dt >= 1800 && dt < 6000, "a silent watcher held the change %" PRId64 " ms", dt);
    struct msg m;
    CHECK(recv_msg(w, &m) == 0 && m.h.type == DDIO_T_INVAL, "the INVAL left unanswered");
    free(m.p);
    expect_closed(w->fd, "a silent watcher");
    free(w);
    cl_close(c);
    cl_close(o);
}
