/* Protocol test client for ddio-server (no MPI). Talks to a running server:
 *   srv_client HOST:PORT [DATAFILE_ROOT]
 *   srv_client --security HOST:PORT ROOT LOG   authentication (LOG: server's log)
 *   srv_client --limits HOST:PORT              hostile clients vs. the limits
 * The secret comes from $DDIO_SECRET_FILE.
 * With DATAFILE_ROOT (a one-disk server's root) it also checks that the
 * datafile of a one-server, one-stripe file is the file, byte for byte.
 * Every check prints a line; the first failure exits 1. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddio_auth.h"
#include "ddio_desc.h"
#include "ddio_layout.h"
#include "ddio_net.h"
#include "ddio_proto.h"
#include "ddio_ucx.h"

#define TMO 20000
#define SENTINEL 0xA5

static char g_host[256];
static char g_addr[300];          /* host:port, for the handshake's messages */
static int g_port;
static const char *g_root;
static unsigned g_run;            /* makes file names unique per run */
static struct ddio_secret g_secret;   /* $DDIO_SECRET_FILE */
static int g_have_secret;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

#define CHECK(c, ...) do { if (!(c)) die(__VA_ARGS__); } while (0)

/* ---- a minimal client ------------------------------------------------------------ */

struct cl {
    int fd;
    uint64_t req;
    uint8_t id[DDIO_ID_LEN];
    uint32_t ndisks;
    uint64_t bsize;
    uint32_t flags;              /* HELLO reply's DDIO_SRV_* */
};

struct msg {
    struct ddio_hdr h;
    uint8_t *p;
};

static int recv_msg(struct cl *c, struct msg *m)
{
    int rc = ddio_recv_hdr(c->fd, &m->h, ddio_now_ms() + TMO);
    if (rc)
        return rc;
    m->p = malloc(m->h.len + 1);
    CHECK(m->p, "oom");
    return ddio_recv_all(c->fd, m->p, m->h.len, ddio_now_ms() + TMO);
}

static void send_w(struct cl *c, uint16_t type, uint64_t req, struct ddio_wbuf *w)
{
    int rc = ddio_send_msg(c->fd, type, req, 0, w ? w->p : NULL, w ? w->len : 0, NULL, 0,
                           ddio_now_ms() + TMO);
    CHECK(rc == 0, "send %s: %s", ddio_type_name(type), strerror(-rc));
    if (w)
        ddio_wbuf_free(w);
}

/* request/reply; returns the status, reply payload in *m */
static int call(struct cl *c, uint16_t type, struct ddio_wbuf *w, struct msg *m)
{
    uint64_t req = ++c->req;
    send_w(c, type, req, w);
    int rc = recv_msg(c, m);
    CHECK(rc == 0, "reply to %s: %s", ddio_type_name(type), strerror(-rc));
    CHECK(m->h.type == (type | DDIO_REPLY) && m->h.req == req, "reply type/req mismatch");
    if (m->h.status) {
        char *s = NULL;
        if (ddio_dec_err(m->p, m->h.len, &s) == 0) {
            printf("    (%s: %s)\n", ddio_type_name(type), s);
            CHECK(strstr(s, "server ") == s, "error message does not name the server: %s", s);
        }
        free(s);
    }
    return m->h.status;
}

static int call_simple(struct cl *c, uint16_t type, struct ddio_wbuf *w)
{
    struct msg m;
    int st = call(c, type, w, &m);
    free(m.p);
    return st;
}

/* connect and run the clients' shared handshake (HELLO, AUTH) */
static struct cl *cl_connect(void)
{
    struct cl *c = calloc(1, sizeof(*c));
    struct ddio_hello_r r;
    char err[1024];
    c->fd = ddio_dial(g_host, g_port, g_addr, "srv_client", g_have_secret ? &g_secret : NULL,
                      ddio_now_ms() + TMO, &r, err, sizeof(err));
    CHECK(c->fd >= 0, "connect and handshake: %s", err);
    c->req = DDIO_HANDSHAKE_REQS;
    memcpy(c->id, r.server_id, DDIO_ID_LEN);
    c->ndisks = r.ndisks;
    c->bsize = r.block_size;
    c->flags = r.flags;
    free(r.name);
    return c;
}

static void cl_close(struct cl *c)
{
    close(c->fd);
    free(c);
}

static void layout_for(struct cl *c, struct ddio_layout_rec *l, uint64_t unit, uint32_t count)
{
    memset(l, 0, sizeof(*l));
    l->stripe_unit = unit;
    l->stripe_count = count;
    l->server_index = 0;
    memcpy(l->ids[0], c->id, DDIO_ID_LEN);
    for (uint32_t i = 1; i < count; i++)
        memset(l->ids[i], 0x10 + (int)i, DDIO_ID_LEN);   /* other (absent) servers */
}

static int cl_open(struct cl *c, const char *path, uint32_t amode, const struct ddio_layout_rec *l,
                   struct ddio_open_r *r)
{
    struct ddio_open o = {.path = (char *)path, .amode = amode, .layout = *l};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, &o);
    struct msg m;
    int st = call(c, DDIO_T_OPEN, &w, &m);
    if (st == 0)
        CHECK(ddio_dec_open_r(m.p, m.h.len, r) == 0, "OPEN reply malformed");
    free(m.p);
    return st;
}

static int cl_handle_op(struct cl *c, uint16_t type, uint64_t handle, uint64_t *value)
{
    struct ddio_handle_req hr = {handle};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_handle_req(&w, &hr);
    struct msg m;
    int st = call(c, type, &w, &m);
    if (st == 0 && value) {
        struct ddio_u64_r u;
        CHECK(ddio_dec_u64_r(m.p, m.h.len, &u) == 0, "u64 reply malformed");
        *value = u.value;
    }
    free(m.p);
    return st;
}

static int cl_delete(struct cl *c, const char *path)
{
    struct ddio_path_req p = {(char *)path};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_path_req(&w, &p);
    return call_simple(c, DDIO_T_DELETE, &w);
}

static int cl_lock(struct cl *c, uint64_t h, uint32_t cmd, uint32_t type, uint64_t start,
                   uint64_t len, uint32_t tmo)
{
    struct ddio_lock l = {h, cmd, type, start, len, tmo};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_lock(&w, &l);
    return call_simple(c, DDIO_T_LOCK, &w);
}

/* ---- descriptors ------------------------------------------------------------------- */

struct dspec {                     /* disp + tiles of `count` blocks of `len` at `stride` */
    int64_t disp;
    uint64_t count, len;
    int64_t stride, extent;
    uint64_t start, length;
};

static void build_desc(const struct dspec *s, struct ddio_desc *d)
{
    struct ddio_node *leaf = ddio_node_leaf(s->len);
    d->root = s->count > 1 ? ddio_node_vec(s->count, s->stride, leaf) : leaf;
    CHECK(d->root && ddio_node_finish(d->root) == 0, "bad test descriptor");
    d->disp = s->disp;
    d->extent = s->extent;
    d->start = s->start;
    d->length = s->length;
}

/* ---- XFER ------------------------------------------------------------------------------ */

struct xres {
    int status;
    struct ddio_xfer_r r;
    uint64_t put_bytes, get_bytes;
    unsigned progress;            /* PROGRESS heartbeats received */
    int64_t max_gap_ms;           /* longest silence: XFER sent .. last message */
    int64_t elapsed_ms;           /* XFER sent .. DONE */
    char err[256];                /* an error reply's text ("" if none could be decoded) */
};

static void on_put(const struct msg *m, uint8_t *buf, uint8_t *got, uint64_t blen,
                   struct xres *x)
{
    struct ddio_segs s;
    size_t off;
    CHECK(ddio_dec_put(m->p, m->h.len, &s, &off) == 0, "PUT malformed");
    const uint8_t *data = m->p + off;
    for (uint32_t i = 0; i < s.nseg; i++) {
        CHECK(s.seg[i].off + s.seg[i].len <= blen, "PUT outside the stream");
        memcpy(buf + s.seg[i].off, data, s.seg[i].len);
        if (got)
            memset(got + s.seg[i].off, 1, s.seg[i].len);
        data += s.seg[i].len;
        x->put_bytes += s.seg[i].len;
    }
    ddio_segs_free(&s);
}

static void on_get(struct cl *c, const struct msg *m, const uint8_t *buf, uint64_t blen,
                   struct xres *x)
{
    struct ddio_segs s;
    CHECK(ddio_dec_get(m->p, m->h.len, &s) == 0, "GET malformed");
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_data(&w, s.tag);
    for (uint32_t i = 0; i < s.nseg; i++) {
        CHECK(s.seg[i].off + s.seg[i].len <= blen, "GET outside the stream");
        ddio_put_bytes(&w, buf + s.seg[i].off, s.seg[i].len);
        x->get_bytes += s.seg[i].len;
    }
    send_w(c, DDIO_T_DATA, m->h.req, &w);
    ddio_segs_free(&s);
}

/* answer the held GETs, newest first, a few ms apart (so the server
 * handles each block's completion on its own, in that order) */
static void flush_gets(struct cl *c, struct msg *held, unsigned *nheld, const uint8_t *buf,
                       uint64_t blen, struct xres *x)
{
    while (*nheld) {
        struct msg *m = &held[--*nheld];
        on_get(c, m, buf, blen, x);
        free(m->p);
        if (*nheld)
            usleep(10000);
    }
}

/* one participant's XFER; buf is the stream (length d->length). hold_ms > 0
 * makes a slow, contrary participant: GETs are held until the server has
 * been quiet for hold_ms, then answered newest first, so the server's
 * blocks get their data in reverse order. With DDIO_XF_UCX in flags the
 * data goes by UCX to the stream bound as ucx_token (this function receives
 * only what comes by TCP). */
static struct xres cl_xfer_hold(struct cl *c, uint64_t handle, uint32_t op, uint32_t flags,
                                uint64_t group, uint64_t seq, uint32_t n, uint32_t rank,
                                const struct ddio_desc *d, uint8_t *buf, uint8_t *got,
                                uint32_t tmo, int hold_ms, uint64_t ucx_token)
{
    struct msg held[64];
    unsigned nheld = 0;
    struct ddio_wbuf dw, w;
    ddio_wbuf_init(&dw);
    ddio_desc_encode(&dw, d);
    struct ddio_xfer x = {handle, op, flags, group, seq, n, rank, tmo, (uint32_t)dw.len, dw.p,
                          ucx_token, (flags & DDIO_XF_UCX) ? d->length : 0};
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &x);
    ddio_wbuf_free(&dw);
    uint64_t req = ++c->req;
    send_w(c, DDIO_T_XFER, req, &w);
    struct xres res;
    memset(&res, 0, sizeof(res));
    int64_t t0 = ddio_now_ms(), last = t0;
    for (;;) {
        struct msg m;
        struct pollfd pf = {.fd = c->fd, .events = POLLIN};
        if (nheld && (nheld == 64 || poll(&pf, 1, hold_ms) == 0))
            flush_gets(c, held, &nheld, buf, d->length, &res);
        int rc = recv_msg(c, &m);
        CHECK(rc == 0, "XFER: waiting for server: %s", strerror(-rc));
        CHECK(m.h.req == req, "XFER: message for another request");
        int64_t now = ddio_now_ms();
        if (now - last > res.max_gap_ms)
            res.max_gap_ms = now - last;
        last = now;
        if (m.h.type == DDIO_T_PROGRESS) {
            CHECK(m.h.len == 0 && m.h.status == 0, "PROGRESS with payload or status");
            res.progress++;
        } else if (m.h.type == DDIO_T_PUT) {
            on_put(&m, buf, got, d->length, &res);
        } else if (m.h.type == DDIO_T_GET && hold_ms > 0) {
            held[nheld++] = m;
            continue;             /* answered (and freed) by flush_gets */
        } else if (m.h.type == DDIO_T_GET) {
            on_get(c, &m, buf, d->length, &res);
        } else {
            CHECK(m.h.type == (DDIO_T_XFER | DDIO_REPLY), "XFER: unexpected %s",
                  ddio_type_name(m.h.type));
            res.status = m.h.status;
            res.elapsed_ms = now - t0;
            if (m.h.status == 0)
                CHECK(ddio_dec_xfer_r(m.p, m.h.len, &res.r) == 0, "DONE malformed");
            else {
                char *s = NULL;
                if (ddio_dec_err(m.p, m.h.len, &s) == 0) {
                    printf("    (xfer rank %u: %s)\n", rank, s);
                    snprintf(res.err, sizeof(res.err), "%s", s);
                }
                free(s);
            }
            free(m.p);
            return res;
        }
        free(m.p);
    }
}

static struct xres cl_xfer(struct cl *c, uint64_t handle, uint32_t op, uint32_t flags,
                           uint64_t group, uint64_t seq, uint32_t n, uint32_t rank,
                           const struct ddio_desc *d, uint8_t *buf, uint8_t *got, uint32_t tmo)
{
    return cl_xfer_hold(c, handle, op, flags, group, seq, n, rank, d, buf, got, tmo, 0, 0);
}

/* ---- model: the server's local bytes ------------------------------------------------------ */

struct model {
    struct ddio_stripe S;
    uint8_t *local;              /* this server's local byte space */
    uint64_t cap, size;
};

static void model_init(struct model *md, uint64_t unit, uint32_t count, uint64_t cap)
{
    md->S.unit = unit;
    md->S.count = count;
    md->local = calloc(cap, 1);
    md->cap = cap;
    md->size = 0;
}

struct mw { struct model *md; const uint8_t *buf; int write; uint8_t *out; const uint8_t *got; };

static int model_piece(void *arg, int64_t addr, uint64_t len, uint64_t s)
{
    struct mw *a = arg;
    for (uint64_t i = 0; i < len; i++) {
        uint64_t L = (uint64_t)addr + i;
        if (ddio_layout_server(&a->md->S, L) != 0) {
            if (!a->write)   /* another server's byte: never sent by this one */
                CHECK(!a->got[s + i], "byte at %" PRIu64 " of another server was sent", L);
            continue;
        }
        uint64_t loc = ddio_layout_local(&a->md->S, L);
        CHECK(loc < a->md->cap, "model too small");
        if (a->write) {
            a->md->local[loc] = a->buf[s + i];
            if (loc + 1 > a->md->size)
                a->md->size = loc + 1;
        } else if (loc < a->md->size) {
            CHECK(a->got[s + i], "stream byte %" PRIu64 " (file %" PRIu64 ") not sent", s + i, L);
            CHECK(a->out[s + i] == a->md->local[loc], "stream byte %" PRIu64 " (file %" PRIu64
                  ") is %02x, expected %02x", s + i, L, a->out[s + i], a->md->local[loc]);
        } else {
            CHECK(!a->got[s + i], "byte beyond local EOF was sent (file %" PRIu64 ")", L);
        }
    }
    return 0;
}

static void model_write(struct model *md, const struct ddio_desc *d, const uint8_t *buf)
{
    struct mw a = {md, buf, 1, NULL, NULL};
    ddio_desc_walk_stream(d, 0, d->length, model_piece, &a);
}

static void model_check_read(struct model *md, const struct ddio_desc *d, uint8_t *out,
                             const uint8_t *got)
{
    struct mw a = {md, NULL, 0, out, got};
    ddio_desc_walk_stream(d, 0, d->length, model_piece, &a);
}

static void fill_pattern(uint8_t *b, uint64_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (uint8_t)(x >> 16);
    }
}

/* write with d, model it; read it back with rd and compare */
static void write_read(struct cl *c, uint64_t h, struct model *md, const struct dspec *ws,
                       const struct dspec *rs, unsigned seed, const char *what)
{
    struct ddio_desc wd, rd;
    build_desc(ws, &wd);
    build_desc(rs, &rd);
    uint8_t *wb = malloc(wd.length ? wd.length : 1);
    fill_pattern(wb, wd.length, seed);
    struct xres x = cl_xfer(c, h, DDIO_X_WRITE, 0, 0, 0, 1, 0, &wd, wb, NULL, TMO);
    CHECK(x.status == 0, "%s: write failed (%s)", what, strerror(x.status));
    model_write(md, &wd, wb);
    CHECK(x.r.local_size == md->size, "%s: local size %" PRIu64 ", model %" PRIu64, what,
          x.r.local_size, md->size);
    CHECK(x.r.bytes_from_rank == x.get_bytes, "%s: DONE bytes_from_rank %" PRIu64 " != %" PRIu64,
          what, x.r.bytes_from_rank, x.get_bytes);
    uint8_t *rb = malloc(rd.length ? rd.length : 1), *got = calloc(rd.length + 1, 1);
    memset(rb, SENTINEL, rd.length);
    x = cl_xfer(c, h, DDIO_X_READ, 0, 0, 0, 1, 0, &rd, rb, got, TMO);
    CHECK(x.status == 0, "%s: read failed (%s)", what, strerror(x.status));
    CHECK(x.r.bytes == x.put_bytes && x.r.bytes_to_rank == x.put_bytes,
          "%s: DONE bytes %" PRIu64 " vs PUT bytes %" PRIu64, what, x.r.bytes, x.put_bytes);
    model_check_read(md, &rd, rb, got);
    printf("ok   %s: wrote %" PRIu64 ", read %" PRIu64 " (blocks r/w %" PRIu64 "/-, nonconsec %"
           PRIu64 ", sorted %" PRIu64 ")\n", what, wd.length, x.put_bytes, x.r.blocks_read,
           x.r.nonconsec, x.r.sorted);
    free(wb);
    free(rb);
    free(got);
    ddio_node_free(wd.root);
    ddio_node_free(rd.root);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void path_name(char *out, size_t n, const char *base)
{
    snprintf(out, n, "t%u/%s", g_run, base);
}

static void test_files(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    char p[128];
    layout_for(c, &l, 65536, 1);
    path_name(p, sizeof(p), "dir/sub/f1");
    CHECK(cl_open(c, p, DDIO_O_RDWR, &l, &r) == ENOENT, "open of a missing file is not ENOENT");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create failed");
    CHECK(r.created == 1 && r.local_size == 0, "create reply wrong");
    CHECK(memcmp(r.layout.ids[0], c->id, DDIO_ID_LEN) == 0 && r.layout.stripe_unit == 65536,
          "stored layout wrong");
    uint64_t h = r.handle, v = 99;
    struct ddio_open_r r2;
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r2) == EEXIST,
          "EXCL create of an existing file is not EEXIST");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT, &l, &r2) == 0 && r2.created == 0,
          "reopen with CREAT failed");
    CHECK(cl_handle_op(c, DDIO_T_CLOSE, r2.handle, NULL) == 0, "close failed");
    CHECK(cl_handle_op(c, DDIO_T_CLOSE, r2.handle, NULL) == EBADF, "double close not EBADF");
    CHECK(cl_handle_op(c, DDIO_T_STAT, h, &v) == 0 && v == 0, "stat of new file");
    struct ddio_setsize ss = {h, 100000};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_setsize(&w, &ss);
    CHECK(call_simple(c, DDIO_T_SETSIZE, &w) == 0, "setsize failed");
    CHECK(cl_handle_op(c, DDIO_T_STAT, h, &v) == 0 && v == 100000, "stat after setsize: %" PRIu64, v);
    struct ddio_prealloc pa = {h, 0, 300000};
    ddio_wbuf_init(&w);
    ddio_enc_prealloc(&w, &pa);
    CHECK(call_simple(c, DDIO_T_PREALLOC, &w) == 0, "prealloc failed");
    CHECK(cl_handle_op(c, DDIO_T_STAT, h, &v) == 0 && v == 300000, "stat after prealloc: %" PRIu64, v);
    ss.local_size = 5000;
    ddio_wbuf_init(&w);
    ddio_enc_setsize(&w, &ss);
    CHECK(call_simple(c, DDIO_T_SETSIZE, &w) == 0, "shrink failed");
    CHECK(cl_handle_op(c, DDIO_T_STAT, h, &v) == 0 && v == 5000, "stat after shrink");
    CHECK(cl_handle_op(c, DDIO_T_SYNC, h, NULL) == 0, "sync failed");
    CHECK(cl_handle_op(c, DDIO_T_STAT, 12345, &v) == EBADF, "stat of a bad handle not EBADF");
    /* confinement */
    const char *bad[] = {"../escape", "a/../../b", "a//b", "/", "", ".ddio/server-id", "a/./b"};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        int st = cl_open(c, bad[i], DDIO_O_RDWR | DDIO_O_CREAT, &l, &r2);
        CHECK(st == EACCES || st == EINVAL, "path '%s' accepted (%d)", bad[i], st);
    }
    char abs[160];
    snprintf(abs, sizeof(abs), "/%s", p);   /* leading '/' is stripped: same file */
    CHECK(cl_open(c, abs, DDIO_O_RDWR, &l, &r2) == 0, "open with a leading / failed");
    /* layout mismatch: another server's id at our index */
    struct ddio_layout_rec bl = l;
    memset(bl.ids[0], 0x77, DDIO_ID_LEN);
    path_name(p, sizeof(p), "stale");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT, &bl, &r2) == ESTALE,
          "create naming another server id not refused");
    /* delete */
    path_name(p, sizeof(p), "dir/sub/f1");
    CHECK(cl_delete(c, p) == 0, "delete failed");
    CHECK(cl_delete(c, p) == ENOENT, "second delete not ENOENT");
    CHECK(cl_open(c, p, DDIO_O_RDWR, &l, &r2) == ENOENT, "open after delete not ENOENT");
    CHECK(cl_delete(c, "../x") == EACCES, "delete of ../x not EACCES");
    /* a second AUTH is a protocol error (the server then closes) */
    CHECK(call_simple(c, DDIO_T_AUTH, NULL) == EPROTO, "second AUTH not EPROTO");
    cl_close(c);
    printf("ok   file operations, EXCL, confinement, ESTALE, delete, second AUTH\n");
}

static void test_independent(uint64_t unit, uint32_t count, const char *name)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    char p[128];
    layout_for(c, &l, unit, count);
    path_name(p, sizeof(p), name);
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create %s", p);
    uint64_t B = c->bsize;
    struct model md;
    model_init(&md, unit, count, 64u << 20);
    /* contiguous, unaligned start, spanning blocks */
    struct dspec a = {.disp = 1000, .count = 1, .len = 3 * B + 123, .extent = 3 * B + 123,
                      .length = 3 * B + 123};
    write_read(c, r.handle, &md, &a, &a, 1, "contiguous unaligned");
    /* strided records (8-byte and 8 KiB), read back through another view */
    struct dspec s8 = {.disp = 40, .count = 1000, .len = 8, .stride = 24, .extent = 24000,
                       .start = 16, .length = 8 * 5000 - 40};
    struct dspec all = {.disp = 0, .count = 1, .len = 8 * B, .extent = 8 * B, .length = 8 * B};
    write_read(c, r.handle, &md, &s8, &all, 2, "8-byte strided records");
    struct dspec s8k = {.disp = 0, .count = 64, .len = 8192, .stride = 3 * 8192,
                        .extent = 64 * 3 * 8192, .length = 64 * 8192 * 3};
    struct dspec r8k = {.disp = 4096, .count = 50, .len = 5000, .stride = 9000,
                        .extent = 450000, .length = 50 * 5000 * 4};
    write_read(c, r.handle, &md, &s8k, &r8k, 3, "8 KiB strided records");
    /* partial block overwrite in the middle (read-modify-write) */
    struct dspec mid = {.disp = (int64_t)B + 17, .count = 1, .len = 100, .extent = 100,
                        .length = 100};
    write_read(c, r.handle, &md, &mid, &all, 4, "read-modify-write");
    /* a read past the end: only bytes below the size come back */
    struct dspec far = {.disp = (int64_t)(20 * B), .count = 1, .len = B, .extent = B, .length = B};
    write_read(c, r.handle, &md, &mid, &far, 5, "read past EOF");
    uint64_t v;
    CHECK(cl_handle_op(c, DDIO_T_STAT, r.handle, &v) == 0 && v == md.size,
          "STAT %" PRIu64 " != model %" PRIu64, v, md.size);
    if (g_root && count == 1 && c->ndisks == 1) {
        char fn[512];
        snprintf(fn, sizeof(fn), "%s/%s", g_root, p);
        FILE *f = fopen(fn, "rb");
        CHECK(f, "datafile %s missing", fn);
        uint8_t *fb = malloc(md.size + 1);
        size_t got = fread(fb, 1, md.size + 1, f);
        fclose(f);
        CHECK(got == md.size && memcmp(fb, md.local, md.size) == 0,
              "datafile differs from the model (%zu bytes vs %" PRIu64 ")", got, md.size);
        free(fb);
        printf("ok   datafile is the file, byte for byte (%" PRIu64 " bytes)\n", md.size);
    }
    cl_handle_op(c, DDIO_T_CLOSE, r.handle, NULL);
    cl_close(c);
    free(md.local);
}

/* ---- collective ------------------------------------------------------------------------------- */

struct coll_arg {
    uint32_t rank, n, op;
    uint64_t group, seq;
    const char *path;
    struct dspec spec;
    uint8_t *buf, *got;
    struct xres res;
    uint32_t tmo;
    int skip;                     /* do not send (timeout test) */
    int hold_ms;                  /* answer GETs late and newest first */
};

static void *coll_thread(void *p)
{
    struct coll_arg *a = p;
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    layout_for(c, &l, 1u << 20, 1);
    CHECK(cl_open(c, a->path, DDIO_O_RDWR | DDIO_O_CREAT, &l, &r) == 0, "coll open");
    struct ddio_desc d;
    build_desc(&a->spec, &d);
    if (!a->skip)
        a->res = cl_xfer_hold(c, r.handle, a->op, DDIO_XF_COLLECTIVE, a->group, a->seq, a->n,
                              a->rank, &d, a->buf, a->got, a->tmo, a->hold_ms, 0);
    ddio_node_free(d.root);
    cl_close(c);
    return NULL;
}

static void run_coll(struct coll_arg *a, uint32_t n)
{
    pthread_t t[8];
    for (uint32_t i = 0; i < n; i++)
        pthread_create(&t[i], NULL, coll_thread, &a[i]);
    for (uint32_t i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* Collective write arguments: P ranks writing rec-byte records cyclically
 * (rank r owns records r, r + P, ...), each rank's stream filled from seed
 * + r; `file` gets the expected content. */
static void cyclic_writes(struct coll_arg *a, uint32_t P, uint64_t rec, uint64_t nrec,
                          uint64_t group, const char *path, unsigned seed, uint8_t *file)
{
    for (uint32_t r = 0; r < P; r++) {
        uint64_t cnt = nrec / P + (r < nrec % P);
        a[r] = (struct coll_arg){.rank = r, .n = P, .op = DDIO_X_WRITE, .group = group,
                                 .seq = 1, .path = path, .tmo = TMO,
                                 .spec = {.disp = (int64_t)(r * rec), .count = 1, .len = rec,
                                          .extent = (int64_t)(P * rec), .length = cnt * rec}};
        a[r].buf = malloc(cnt * rec);
        fill_pattern(a[r].buf, cnt * rec, seed + r);
        for (uint64_t i = 0; i < cnt; i++)
            memcpy(file + (i * P + r) * rec, a[r].buf + i * rec, rec);
    }
}

static void test_collective(void)
{
    enum { P = 3, REC = 8, NREC = 200000 };
    char p[128];
    path_name(p, sizeof(p), "coll");
    uint64_t total = (uint64_t)REC * NREC;           /* 1.6 MB: several blocks */
    uint8_t *file = calloc(total, 1);
    struct coll_arg a[P];
    memset(a, 0, sizeof(a));
    /* write: cyclic 8-byte records, rank r owns records r, r+3, ... */
    cyclic_writes(a, P, REC, NREC, 77 + g_run, p, 10, file);
    /* rank 2 additionally overlaps rank 0's first record?  No: views of one
     * collective are disjoint here; overlap is tested separately below. */
    run_coll(a, P);
    for (uint32_t r = 0; r < P; r++) {
        CHECK(a[r].res.status == 0, "collective write rank %u failed", r);
        CHECK(a[r].res.r.bytes == a[r].spec.length, "rank %u moved %" PRIu64, r, a[r].res.r.bytes);
        free(a[r].buf);
    }
    printf("ok   collective write, 3 ranks cyclic 8-byte records (blocks written %" PRIu64
           ", desc bytes %" PRIu64 ", sorted %" PRIu64 ")\n", a[0].res.r.blocks_written,
           a[0].res.r.desc_bytes, a[0].res.r.sorted);
    /* overlapping collective write: all ranks write [0, 4096): rank 2 wins */
    for (uint32_t r = 0; r < P; r++) {
        a[r].seq = 2;
        a[r].spec = (struct dspec){.disp = 0, .count = 1, .len = 4096, .extent = 4096,
                                   .length = 4096};
        a[r].buf = malloc(4096);
        memset(a[r].buf, 0x30 + (int)r, 4096);
    }
    run_coll(a, P);
    for (uint32_t r = 0; r < P; r++) {
        CHECK(a[r].res.status == 0, "overlapping write rank %u failed", r);
        free(a[r].buf);
    }
    memset(file, 0x32, 4096);
    printf("ok   overlapping collective write (higher rank wins)\n");
    /* collective read: block distribution, rank 1 empty */
    uint64_t half = total / 2;
    for (uint32_t r = 0; r < P; r++) {
        uint64_t off = r == 0 ? 0 : half, len = r == 1 ? 0 : (r == 0 ? half : total - half);
        a[r] = (struct coll_arg){.rank = r, .n = P, .op = DDIO_X_READ, .group = 77 + g_run,
                                 .seq = 3, .path = p, .tmo = TMO,
                                 .spec = {.disp = (int64_t)off, .count = 1, .len = len ? len : 1,
                                          .extent = (int64_t)(len ? len : 1), .length = len}};
        a[r].buf = malloc(len + 1);
        a[r].got = calloc(len + 1, 1);
    }
    run_coll(a, P);
    for (uint32_t r = 0; r < P; r++) {
        CHECK(a[r].res.status == 0, "collective read rank %u failed", r);
        uint64_t off = (uint64_t)a[r].spec.disp, len = a[r].spec.length;
        CHECK(a[r].res.r.bytes == len, "rank %u read %" PRIu64 " of %" PRIu64, r,
              a[r].res.r.bytes, len);
        for (uint64_t i = 0; i < len; i++)
            CHECK(a[r].buf[i] == file[off + i], "rank %u: byte %" PRIu64 " is %02x, expected %02x",
                  r, off + i, a[r].buf[i], file[off + i]);
        free(a[r].buf);
        free(a[r].got);
    }
    printf("ok   collective read, 3 ranks (one empty) (blocks read %" PRIu64 ", io %" PRIu64
           " us)\n", a[0].res.r.blocks_read, a[0].res.r.io_us);
    /* gate timeout: rank 2 never comes */
    for (uint32_t r = 0; r < P; r++) {
        a[r].seq = 4;
        a[r].tmo = 500;
        a[r].skip = r == 2;
        a[r].spec = (struct dspec){.disp = 0, .count = 1, .len = 10, .extent = 10, .length = 10};
        a[r].buf = malloc(10);
        a[r].got = calloc(10, 1);
    }
    run_coll(a, P);
    for (uint32_t r = 0; r < 2; r++) {
        CHECK(a[r].res.status == ETIMEDOUT, "gate timeout: rank %u got %d", r, a[r].res.status);
        free(a[r].buf);
        free(a[r].got);
    }
    free(a[2].buf);
    free(a[2].got);
    printf("ok   collective gate timeout -> ETIMEDOUT for every participant present\n");
    free(file);
}

/* Writes reach the disk in planned order whatever order the data comes in:
 * 2 ranks write 8-byte records cyclically over 16 blocks; rank 1 answers
 * every batch of GETs late and newest first, so the last block of each
 * batch is complete first. The server must still write the blocks in
 * ascending order (nonconsec counts writes that do not start where the
 * previous one on the disk ended: only a disk's first write, or the wrap
 * of --rotate, may), and the bytes must be right. */
static void test_write_order(void)
{
    enum { P = 2, REC = 8 };
    struct cl *probe = cl_connect();
    uint64_t total = 16 * probe->bsize, nrec = total / REC;
    uint32_t ndisks = probe->ndisks;
    cl_close(probe);
    char p[128];
    path_name(p, sizeof(p), "worder");
    struct coll_arg a[P];
    memset(a, 0, sizeof(a));
    uint8_t *file = malloc(total);
    cyclic_writes(a, P, REC, nrec, 91 + g_run, p, 40, file);
    a[1].hold_ms = 60;
    run_coll(a, P);
    for (uint32_t r = 0; r < P; r++) {
        CHECK(a[r].res.status == 0, "write-order: rank %u failed", r);
        free(a[r].buf);
    }
    uint64_t nc = a[0].res.r.nonconsec;
    CHECK(a[0].res.r.blocks_written == 16, "write-order: %" PRIu64 " blocks written, want 16",
          a[0].res.r.blocks_written);
    CHECK(nc <= 2 * ndisks, "write-order: %" PRIu64 " of 16 writes out of order (disks %u)", nc,
          ndisks);
    /* read it all back as one participant */
    struct coll_arg rd = {.rank = 0, .n = 1, .op = DDIO_X_READ, .group = 92 + g_run, .seq = 1,
                          .path = p, .tmo = TMO,
                          .spec = {.disp = 0, .count = 1, .len = total, .extent = (int64_t)total,
                                   .length = total}};
    rd.buf = malloc(total);
    rd.got = calloc(total, 1);
    run_coll(&rd, 1);
    CHECK(rd.res.status == 0 && rd.res.r.bytes == total, "write-order: read back failed");
    CHECK(memcmp(rd.buf, file, total) == 0, "write-order: data differs after reordered pulls");
    printf("ok   writes in planned order with late, reversed DATA (nonconsec %" PRIu64
           " of 16, disks %u, data verified)\n", nc, ndisks);
    free(rd.buf);
    free(rd.got);
    free(file);
}

/* Heartbeats: rank 0 of 2 arrives, rank 1 never does. While the gate waits,
 * the server must send rank 0 a PROGRESS at least every timeout/4 (500 ms
 * here; checked with slack at 1 s), then ETIMEDOUT after the 2 s timeout. */
static void test_heartbeat(void)
{
    char p[128];
    path_name(p, sizeof(p), "beat");
    struct coll_arg a[2];
    memset(a, 0, sizeof(a));
    for (uint32_t r = 0; r < 2; r++) {
        a[r] = (struct coll_arg){.rank = r, .n = 2, .op = DDIO_X_READ, .group = 99 + g_run,
                                 .seq = 1, .path = p, .tmo = 2000, .skip = r == 1,
                                 .spec = {.disp = 0, .count = 1, .len = 10, .extent = 10,
                                          .length = 10}};
        a[r].buf = malloc(10);
        a[r].got = calloc(10, 1);
    }
    run_coll(a, 2);
    const struct xres *x = &a[0].res;
    printf("    (%u PROGRESS, longest silence %" PRId64 " ms, DONE after %" PRId64 " ms)\n",
           x->progress, x->max_gap_ms, x->elapsed_ms);
    CHECK(x->status == ETIMEDOUT, "heartbeat: rank 0 got status %d, want ETIMEDOUT", x->status);
    CHECK(x->progress >= 3, "heartbeat: only %u PROGRESS in a 2 s gate wait", x->progress);
    CHECK(x->max_gap_ms <= 1000, "heartbeat: %" PRId64 " ms without a message", x->max_gap_ms);
    CHECK(x->elapsed_ms >= 1900 && x->elapsed_ms <= 3500,
          "heartbeat: gate timed out after %" PRId64 " ms, want ~2000", x->elapsed_ms);
    for (uint32_t r = 0; r < 2; r++) {
        free(a[r].buf);
        free(a[r].got);
    }
    printf("ok   PROGRESS heartbeats while the gate waits, then ETIMEDOUT\n");
}

/* ---- locks ---------------------------------------------------------------------------------- */

/* a fresh connection with a new file `name` created on it (64 KiB stripes) */
static struct cl *connect_create(const char *name, struct ddio_open_r *r)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    char p[128];
    path_name(p, sizeof(p), name);
    layout_for(c, &l, 65536, 1);
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT, &l, r) == 0, "create %s", name);
    return c;
}

/* two connections with the same new file open: handles in ra, rb */
static void open_pair(const char *name, struct cl **a, struct cl **b, struct ddio_open_r *ra,
                      struct ddio_open_r *rb)
{
    struct ddio_layout_rec l;
    char p[128];
    *a = connect_create(name, ra);
    *b = cl_connect();
    path_name(p, sizeof(p), name);
    layout_for(*a, &l, 65536, 1);
    CHECK(cl_open(*b, p, DDIO_O_RDWR, &l, rb) == 0, "%s: open b", name);
}

static void test_locks(void)
{
    struct cl *a, *b;
    struct ddio_open_r ra, rb;
    open_pair("locked", &a, &b, &ra, &rb);
    CHECK(cl_lock(a, ra.handle, DDIO_LK_SETLK, DDIO_LK_WR, 0, 100, 0) == 0, "a WR lock");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_RD, 50, 10, 0) == EAGAIN, "b conflict");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_WR, 100, 10, 0) == 0, "b adjacent");
    int64_t t0 = ddio_now_ms();
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 0, 10, 300) == ETIMEDOUT,
          "SETLKW timeout");
    CHECK(ddio_now_ms() - t0 >= 250, "SETLKW returned early");
    CHECK(cl_lock(a, ra.handle, DDIO_LK_UNLCK, 0, 0, 50, 0) == 0, "a unlock part");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_WR, 0, 50, 0) == 0, "b after split");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_WR, 50, 1, 0) == EAGAIN, "a keeps 50..100");
    cl_close(a);                   /* dropping a releases its locks */
    usleep(200000);
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 0, 0, 2000) == 0,
          "locks not released on drop");
    cl_close(b);
    printf("ok   byte-range locks over the wire (conflict, timeout, split, release on drop)\n");
}

/* ---- malformed input -------------------------------------------------------------------------- */

static int raw_conn(void)
{
    int fd = ddio_connect(g_host, g_port, ddio_now_ms() + TMO);
    CHECK(fd >= 0, "connect");
    return fd;
}

/* after garbage the server must answer EPROTO (if anything) and close */
static void expect_closed(int fd, const char *what)
{
    struct ddio_hdr h;
    int rc = ddio_recv_hdr(fd, &h, ddio_now_ms() + TMO);
    if (rc == 0) {
        CHECK(h.status == EPROTO || h.status == EPROTONOSUPPORT, "%s: status %d", what, h.status);
        ddio_discard(fd, h.len, ddio_now_ms() + TMO);
        char c;
        rc = ddio_recv_all(fd, &c, 1, ddio_now_ms() + TMO);
    }
    CHECK(rc == -ECONNRESET || rc == -EPIPE || rc == -EPROTO, "%s: connection not closed (%d)",
          what, rc);
    close(fd);
    printf("ok   %s refused\n", what);
}

/* the handshake on a raw connection: the next request id is 3 */
static void send_hello_raw(int fd)
{
    struct ddio_hello_r r;
    char err[1024];
    int rc = ddio_handshake(fd, g_addr, "raw", g_have_secret ? &g_secret : NULL,
                            ddio_now_ms() + TMO, &r, err, sizeof(err));
    CHECK(rc == 0, "raw handshake: %s", err);
    free(r.name);
}

static void test_malformed(void)
{
    uint8_t junk[64];
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

    fd = raw_conn();
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

    fd = raw_conn();                /* truncated: header promises more than arrives */
    send_hello_raw(fd);
    ddio_hdr_init(&h, DDIO_T_STAT, 3, 100);
    ddio_hdr_encode(&h, raw);
    ddio_send_all(fd, raw, sizeof(raw), ddio_now_ms() + TMO);
    ddio_send_all(fd, junk, 10, ddio_now_ms() + TMO);
    shutdown(fd, SHUT_WR);
    char c1;
    int rc = ddio_recv_all(fd, &c1, 1, ddio_now_ms() + TMO);
    CHECK(rc != 0, "truncated message: connection stayed open");
    close(fd);
    printf("ok   truncated message refused\n");

    /* garbage descriptor in a valid XFER: refused, connection keeps working */
    struct ddio_open_r r;
    struct cl *c = connect_create("baddesc", &r);
    struct ddio_xfer x = {r.handle, DDIO_X_READ, 0, 0, 0, 1, 0, 1000, sizeof(junk), junk, 0, 0};
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

static void test_stats(void)
{
    struct cl *c = cl_connect();
    struct msg m;
    CHECK(call(c, DDIO_T_STATS, NULL, &m) == 0, "STATS failed");
    struct ddio_stats_r s;
    CHECK(ddio_dec_stats_r(m.p, m.h.len, &s) == 0, "STATS malformed");
    int have_xfers = 0, have_last = 0;
    for (uint32_t i = 0; i < s.n; i++) {
        have_xfers |= strcmp(s.kv[i].key, "xfers") == 0 && s.kv[i].val > 0;
        have_last |= strcmp(s.kv[i].key, "last.blocks") == 0;
    }
    CHECK(have_xfers && have_last, "STATS lacks xfers / last.*");
    ddio_stats_r_free(&s);
    free(m.p);
    cl_close(c);
    printf("ok   STATS\n");
}

/* ---- authentication against a live server (--security) ------------------------------------- */

static const char *g_log;         /* the server's log file (refusals must be logged) */

/* "127.0.0.1:PORT" of our end: how the server's log names this client */
static void local_name(int fd, char *out, size_t n)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0, "getsockname");
    snprintf(out, n, "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
}

/* some line of the server log holds both strings (the log is written
 * before the refusal is sent; allow a moment for the close path) */
static int log_has(const char *a, const char *b)
{
    for (int tries = 0; tries < 40; tries++) {
        FILE *f = fopen(g_log, "r");
        CHECK(f, "cannot read the server log %s", g_log);
        char line[2048];
        int found = 0;
        while (!found && fgets(line, sizeof(line), f))
            found = strstr(line, a) && strstr(line, b);
        fclose(f);
        if (found)
            return 1;
        usleep(50000);
    }
    return 0;
}

/* the connection's next message must be a refusal with `status`, whose
 * message contains `text`, and then the connection must close */
static void expect_refusal(int fd, int status, const char *text, const char *what)
{
    struct ddio_hdr h;
    int rc = ddio_recv_hdr(fd, &h, ddio_now_ms() + TMO);
    CHECK(rc == 0, "%s: no refusal received (%s)", what, strerror(-rc));
    CHECK(h.status == status, "%s: status %d, expected %d", what, h.status, status);
    uint8_t *p = malloc(h.len + 1);
    CHECK(p && ddio_recv_all(fd, p, h.len, ddio_now_ms() + TMO) == 0, "%s: payload", what);
    char *msg = NULL;
    CHECK(ddio_dec_err(p, h.len, &msg) == 0, "%s: refusal without a message", what);
    CHECK(strstr(msg, text), "%s: message '%s' lacks '%s'", what, msg, text);
    free(msg);
    free(p);
    char c;
    rc = ddio_recv_all(fd, &c, 1, ddio_now_ms() + TMO);
    CHECK(rc == -ECONNRESET || rc == -EPIPE, "%s: connection not closed (%d)", what, rc);
}

/* HELLO only (no AUTH): the reply's nonce and server id in *r */
static void hello_only(int fd, struct ddio_hello_r *r)
{
    struct ddio_hello h = {.pid = 1, .client = "intruder"};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_hello(&w, &h);
    CHECK(ddio_send_msg(fd, DDIO_T_HELLO, 1, 0, w.p, w.len, NULL, 0, ddio_now_ms() + TMO) == 0,
          "send HELLO");
    ddio_wbuf_free(&w);
    struct ddio_hdr hd;
    CHECK(ddio_recv_hdr(fd, &hd, ddio_now_ms() + TMO) == 0 && hd.status == 0, "HELLO reply");
    uint8_t *p = malloc(hd.len + 1);
    CHECK(ddio_recv_all(fd, p, hd.len, ddio_now_ms() + TMO) == 0, "HELLO reply payload");
    CHECK(ddio_dec_hello_r(p, hd.len, r) == 0, "HELLO reply malformed");
    CHECK(r->flags & DDIO_SRV_AUTH_REQUIRED, "server does not require authentication");
    free(p);
    free(r->name);
    r->name = NULL;
}

static void send_auth(int fd, const struct ddio_auth *a)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_auth(&w, a);
    CHECK(ddio_send_msg(fd, DDIO_T_AUTH, 2, 0, w.p, w.len, NULL, 0, ddio_now_ms() + TMO) == 0,
          "send AUTH");
    ddio_wbuf_free(&w);
}

/* every file and directory under the root: path, size, mtime */
static FILE *g_snap;
static int snap_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)flag;
    (void)ftw;
    fprintf(g_snap, "%s %lld %lld.%09ld\n", path, (long long)st->st_size,
            (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
    return 0;
}

static char *snapshot(void)
{
    char *buf = NULL;
    size_t n = 0;
    g_snap = open_memstream(&buf, &n);
    CHECK(g_snap && nftw(g_root, snap_one, 16, FTW_PHYS) == 0, "snapshot of %s", g_root);
    fclose(g_snap);
    return buf;
}

static void sec_wrong_secret(void)
{
    struct ddio_secret wrong;
    memset(&wrong, 0, sizeof(wrong));
    wrong.len = 32;
    memset(wrong.key, 'w', wrong.len);
    int fd = raw_conn();
    char me[64], err[1024];
    local_name(fd, me, sizeof(me));
    struct ddio_hello_r r;
    int rc = ddio_handshake(fd, g_addr, "wrong", &wrong, ddio_now_ms() + TMO, &r, err,
                            sizeof(err));
    CHECK(rc == -EACCES && strstr(err, "authentication failed"),
          "wrong secret: handshake gave %d (%s)", rc, err);
    /* then an OPEN anyway: the connection is closed */
    ddio_send_msg(fd, DDIO_T_OPEN, 3, 0, "x", 1, NULL, 0, ddio_now_ms() + TMO);
    char c;
    rc = ddio_recv_all(fd, &c, 1, ddio_now_ms() + TMO);
    CHECK(rc == -ECONNRESET || rc == -EPIPE, "wrong secret: connection stayed open (%d)", rc);
    close(fd);
    CHECK(log_has(me, "authentication failed"), "wrong secret: refusal of %s not logged", me);
    printf("ok   wrong secret refused (%s), logged with the peer %s\n", err, me);
}

static void sec_no_secret(void)
{
    int fd = raw_conn();
    char me[64], err[1024];
    local_name(fd, me, sizeof(me));
    struct ddio_hello_r r;
    int rc = ddio_handshake(fd, g_addr, "nosecret", NULL, ddio_now_ms() + TMO, &r, err,
                            sizeof(err));
    CHECK(rc == -EACCES && strstr(err, "DDIO_SECRET_FILE"), "no secret: handshake gave %d (%s)",
          rc, err);
    close(fd);
    CHECK(log_has(me, "closed before authenticating"), "no secret: %s not logged", me);
    printf("ok   client without a secret refused (%s), logged\n", err);
}

/* a recorded, valid AUTH is worthless against a new connection's nonce */
static void sec_replay(void)
{
    int fd = raw_conn();
    struct ddio_hello_r r;
    struct ddio_auth a;
    hello_only(fd, &r);
    CHECK(ddio_auth_nonce(a.nonce) == 0, "nonce");
    CHECK(ddio_auth_mac(&g_secret, DDIO_AUTH_CLIENT, r.server_id, r.nonce, a.nonce, a.mac) == 0,
          "mac");
    send_auth(fd, &a);
    struct msg m = {0};
    struct cl tmp = {.fd = fd};
    CHECK(recv_msg(&tmp, &m) == 0 && m.h.status == 0, "the original AUTH was refused");
    struct ddio_auth_r ar;
    CHECK(ddio_dec_auth_r(m.p, m.h.len, &ar) == 0 && ddio_auth_verify(&g_secret,
          DDIO_AUTH_SERVER, r.server_id, r.nonce, a.nonce, ar.mac), "server proof wrong");
    free(m.p);
    close(fd);
    uint8_t first_nonce[DDIO_NONCE_LEN];
    memcpy(first_nonce, r.nonce, sizeof(first_nonce));

    fd = raw_conn();
    char me[64];
    local_name(fd, me, sizeof(me));
    hello_only(fd, &r);
    CHECK(memcmp(first_nonce, r.nonce, DDIO_NONCE_LEN) != 0, "server nonce repeated");
    send_auth(fd, &a);            /* the recorded AUTH */
    expect_refusal(fd, EACCES, "authentication failed", "replayed AUTH");
    close(fd);
    CHECK(log_has(me, "authentication failed"), "replay: refusal of %s not logged", me);
    printf("ok   replayed AUTH refused on a new connection, logged\n");
}

/* request types a client might try before AUTH (after HELLO) */
static void sec_ops_before_auth(void)
{
    static const uint16_t types[] = {DDIO_T_OPEN, DDIO_T_DELETE, DDIO_T_CLOSE, DDIO_T_STAT,
                                     DDIO_T_SETSIZE, DDIO_T_PREALLOC, DDIO_T_SYNC,
                                     DDIO_T_XFER, DDIO_T_LOCK, DDIO_T_STATS, DDIO_T_DATA};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        struct ddio_wbuf w;
        ddio_wbuf_init(&w);
        if (types[i] == DDIO_T_OPEN) {     /* a well-formed create */
            struct ddio_open o = {.path = "sec/evil", .amode = DDIO_O_RDWR | DDIO_O_CREAT};
            o.layout.stripe_unit = 65536;
            o.layout.stripe_count = 1;
            ddio_enc_open(&w, &o);
        } else if (types[i] == DDIO_T_DELETE) {
            struct ddio_path_req d = {.path = "sec/victim"};
            ddio_enc_path_req(&w, &d);
        } else if (types[i] == DDIO_T_DATA) {
            ddio_enc_data(&w, 1);
            ddio_put_bytes(&w, "overwrite", 9);
        } else {                           /* handle 1 is what a real OPEN would give */
            struct ddio_handle_req hr = {1};
            ddio_enc_handle_req(&w, &hr);
        }
        int fd = raw_conn();
        char me[64];
        local_name(fd, me, sizeof(me));
        struct ddio_hello_r r;
        hello_only(fd, &r);
        CHECK(ddio_send_msg(fd, types[i], 2, 0, w.p, w.len, NULL, 0, ddio_now_ms() + TMO) == 0,
              "send");
        ddio_wbuf_free(&w);
        char what[64];
        snprintf(what, sizeof(what), "%s before authentication", ddio_type_name(types[i]));
        expect_refusal(fd, EACCES, "not authenticated", what);
        close(fd);
        CHECK(log_has(me, what), "%s from %s not logged", what, me);
    }
    int fd = raw_conn();          /* AUTH before HELLO: a protocol error */
    struct ddio_auth a;
    memset(&a, 0, sizeof(a));
    send_auth(fd, &a);
    expect_refusal(fd, EPROTO, "expected HELLO", "AUTH before HELLO");
    close(fd);
    fd = raw_conn();              /* a malformed AUTH */
    struct ddio_hello_r r;
    hello_only(fd, &r);
    ddio_send_msg(fd, DDIO_T_AUTH, 2, 0, "short", 5, NULL, 0, ddio_now_ms() + TMO);
    expect_refusal(fd, EPROTO, "malformed AUTH", "malformed AUTH");
    close(fd);
    printf("ok   %zu request types before AUTH refused (EACCES) and logged; AUTH before "
           "HELLO and a malformed AUTH refused (EPROTO)\n", sizeof(types) / sizeof(types[0]));
}

static void test_security(void)
{
    CHECK(g_have_secret && g_root && g_log, "--security needs DDIO_SECRET_FILE, ROOT and LOG");
    /* a file the intruders go after */
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    layout_for(c, &l, 65536, 1);
    CHECK(cl_open(c, "sec/victim", DDIO_O_RDWR | DDIO_O_CREAT, &l, &r) == 0, "create victim");
    uint8_t data[4096], back[4096];
    fill_pattern(data, sizeof(data), 77);
    struct ddio_desc d = {.disp = 0, .extent = 0, .start = 0, .length = sizeof(data)};
    d.root = ddio_node_leaf(sizeof(data));
    CHECK(d.root && ddio_node_finish(d.root) == 0, "desc");
    CHECK(cl_xfer(c, r.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, data, NULL, 5000).status == 0,
          "write victim");
    CHECK(cl_handle_op(c, DDIO_T_SYNC, r.handle, NULL) == 0, "sync");
    char *before = snapshot();

    sec_wrong_secret();
    sec_no_secret();
    sec_replay();
    sec_ops_before_auth();

    char *after = snapshot();
    CHECK(strcmp(before, after) == 0, "the storage root changed:\n--- before\n%s--- after\n%s",
          before, after);
    memset(back, 0, sizeof(back));
    CHECK(cl_xfer(c, r.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, back, NULL, 5000).status == 0,
          "read victim");
    CHECK(memcmp(data, back, sizeof(data)) == 0, "victim's bytes changed");
    ddio_desc_free(&d);
    free(before);
    free(after);
    cl_close(c);
    printf("ok   storage root unchanged (every file's size and mtime), victim's bytes intact\n");
}

/* ---- hostile clients and limits (--limits) --------------------------------------------------
 * The server runs with small limits (run-security-tests.sh): --max-connections 24
 * --max-unauth 8 --auth-timeout 2 --max-message 64K --max-desc 2K --max-desc-depth 4
 * --max-call-memory 1M --max-inflight 3 --block-size 64K. */

#define LIM_CONNS 24
#define LIM_AUTH_S 2
#define LIM_FLOOD 1000

static struct cl *g_bystander;   /* an ordinary client served throughout */
static uint64_t g_by_handle;

static void bystander_check(const char *when)
{
    uint64_t v;
    CHECK(cl_handle_op(g_bystander, DDIO_T_STAT, g_by_handle, &v) == 0,
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
    close(fd);
    fd = raw_conn();
    send_hdr(fd, DDIO_T_HELLO, 1, 100000, DDIO_VERSION);
    expect_refusal(fd, EMSGSIZE, "before authentication", "oversized HELLO");
    close(fd);
    fd = raw_conn();
    send_hello_raw(fd);
    send_hdr(fd, DDIO_T_STAT, 3, (uint64_t)DDIO_MAX_PAYLOAD + 1, DDIO_VERSION);
    expect_refusal(fd, EPROTO, "malformed message header", "header past the protocol cap");
    close(fd);
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
    close(fd);
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
    close(fd);
    fd = raw_conn();
    send_hdr(fd, DDIO_T_HELLO, 1, 0, 1);   /* a version-1 client */
    expect_refusal(fd, EPROTONOSUPPORT, "expected 2", "version-1 HELLO");
    close(fd);
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
    close(fd);
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
    struct ddio_xfer x = {handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, 5000, (uint32_t)dw.len, dw.p, 0, 0};
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
static int xfer_call(struct cl *c, const struct ddio_xfer *x, char *msg, size_t n)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, x);
    struct msg m;
    int st = call(c, DDIO_T_XFER, &w, &m);
    char *s = NULL;
    snprintf(msg, n, "%s", st && ddio_dec_err(m.p, m.h.len, &s) == 0 ? s : "");
    free(s);
    free(m.p);
    return st;
}

static int xfer_raw_desc(struct cl *c, uint64_t handle, uint32_t op, const uint8_t *desc,
                         uint32_t len, char *msg, size_t n)
{
    struct ddio_xfer x = {handle, op, 0, 0, 0, 1, 0, 5000, len, desc, 0, 0};
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
    struct ddio_xfer xm = {r.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, 5000, 0, NULL, 0, 0};
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
        struct ddio_lock lk = {rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 10 * i, 5, 8000};
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
        struct msg m;
        CHECK(call(g_bystander, DDIO_T_STATS, NULL, &m) == 0, "STATS");
        struct ddio_stats_r st;
        CHECK(ddio_dec_stats_r(m.p, m.h.len, &st) == 0, "STATS malformed");
        uint64_t have = UINT64_MAX;
        for (uint32_t i = 0; i < st.n; i++)
            if (strcmp(st.kv[i].key, "connections") == 0)
                have = st.kv[i].val;
        ddio_stats_r_free(&st);
        free(m.p);
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
    close(fd);
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

static void test_limits(void)
{
    struct ddio_open_r r;
    g_bystander = connect_create("lim/bystander", &r);
    g_by_handle = r.handle;
    lim_messages();
    lim_order_and_state();
    lim_data_length();
    lim_data_cut();
    lim_descriptors();
    lim_inflight();
    lim_connections();
    lim_flood();
    bystander_check("at the end");
    cl_close(g_bystander);
}

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
                          (uint32_t)dw.len, dw.p, 1, 4096};
    int st = xfer_call(c, &x, msg, n);
    ddio_wbuf_free(&dw);
    ddio_desc_free(&d);
    return st;
}

static uint64_t stat_of(struct cl *c, const char *key)
{
    struct msg m;
    struct ddio_stats_r s;
    uint64_t v = UINT64_MAX;
    CHECK(call(c, DDIO_T_STATS, NULL, &m) == 0, "STATS failed");
    CHECK(ddio_dec_stats_r(m.p, m.h.len, &s) == 0, "STATS malformed");
    for (uint32_t i = 0; i < s.n; i++)
        if (strcmp(s.kv[i].key, key) == 0)
            v = s.kv[i].val;
    ddio_stats_r_free(&s);
    free(m.p);
    return v;
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
    struct ddio_setsize ss = {h, len};
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

static void test_ucx(int offered)
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
    struct ddio_ucx_ep *bad = ddio_ucx_connect(u, saddr, salen, cookie ^ 1,
                                               ddio_now_ms() + TMO, why, sizeof(why));
    CHECK(bad, "ATTACH with a wrong cookie not sent: %s", why);
    struct ddio_ucx_ep *e = ddio_ucx_connect(u, saddr, salen, cookie, ddio_now_ms() + TMO, why,
                                             sizeof(why));
    CHECK(e, "ATTACH: %s", why);
    CHECK(stat_of(c, "ucx_eps") >= 1, "STATS ucx_eps not counted");
    ucx_stalled_read(c, r.handle);
    ddio_ucx_disconnect(bad);
    ddio_ucx_disconnect(e);
    free(saddr);
    cl_close(c);
    printf("ok   UCX: offered; XFER without UCXADDR or before ATTACH refused, UCXADDR with "
           "a payload malformed, a second one refused, a wrong cookie ignored; a rank that never "
           "fetches its read data fails by the deadline and every buffer comes back\n");
}

int main(int argc, char **argv)
{
    const char *mode = "";
    if (argc > 1 && strncmp(argv[1], "--", 2) == 0) {
        mode = argv[1];
        argv++;
        argc--;
    }
    if (argc < 2 || ddio_parse_hostport(argv[1], g_host, sizeof(g_host), &g_port)) {
        fprintf(stderr, "usage: srv_client [--security|--limits|--ucx|--no-ucx] HOST:PORT "
                "[ROOT [LOG]]\n");
        return 2;
    }
    snprintf(g_addr, sizeof(g_addr), "%s", argv[1]);
    g_root = argc > 2 ? argv[2] : NULL;
    g_log = argc > 3 ? argv[3] : NULL;
    g_run = (unsigned)getpid();
    char path[4096], err[1024];
    if (ddio_secret_path(NULL, path, sizeof(path))) {
        CHECK(ddio_secret_load(path, &g_secret, err, sizeof(err)) == 0, "%s", err);
        g_have_secret = 1;
    }
    if (strcmp(mode, "--security") == 0) {
        test_security();
        printf("PASS\n");
        return 0;
    }
    if (strcmp(mode, "--limits") == 0) {
        test_limits();
        printf("PASS\n");
        return 0;
    }
    if (strcmp(mode, "--ucx") == 0 || strcmp(mode, "--no-ucx") == 0) {
        test_ucx(strcmp(mode, "--ucx") == 0);
        printf("PASS\n");
        return 0;
    }
    CHECK(!*mode, "unknown mode %s", mode);
    test_files();
    test_independent(1u << 20, 1, "ind1");
    test_independent(65536, 2, "ind2");       /* index 0 of 2: only its stripes */
    test_independent(4096, 2, "ind3");        /* stripe unit below the block size */
    test_locks();
    test_malformed();
    test_collective();
    test_write_order();
    test_heartbeat();
    test_stats();
    printf("PASS\n");
    return 0;
}
