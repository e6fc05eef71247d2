/* srv_client's harness: see srv_harness.h. */
#include "srv_harness.h"

char g_host[256];
char g_addr[300];          /* host:port, for the handshake's messages */
int g_port;
const char *g_root;
unsigned g_run;            /* makes file names unique per run */
struct ddio_secret g_secret;   /* $DDIO_SECRET_FILE */
int g_have_secret;
const char *g_log;         /* the server's log file (refusals must be logged) */

/* ---- cases ----------------------------------------------------------------------------
 * run_case runs one case under a recovery point: a failed CHECK prints
 * "FAIL: CASE: why" (later failures of the same case "    (then: why)") and
 * returns to run_case, which closes every descriptor the case opened (its
 * connections, whatever state they were left in), calls the reset hook,
 * and the run goes on with the next case. A thread of a case (collective
 * participants) sets its own recovery point with case_thread_recover. */

static const char *g_case;                /* the running case, NULL outside one */
static atomic_int g_case_failed;          /* failures reported in it so far */
static __thread jmp_buf *t_jmp;           /* this thread's recovery point */
static unsigned g_passed, g_failed;
static void (*g_reset)(void);

void die(const char *fmt, ...)
{
    char why[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    if (!g_case) {                        /* outside a case (the command line, setup) */
        fprintf(stderr, "FAIL: %s\n", why);
        exit(1);
    }
    if (atomic_fetch_add(&g_case_failed, 1) == 0)
        printf("FAIL: %s: %s\n", g_case, why);
    else
        printf("    (then: %s)\n", why);
    fflush(stdout);
    if (t_jmp)
        longjmp(*t_jmp, 1);
    pthread_exit(NULL);                   /* a thread without a recovery point */
}

void case_thread_recover(jmp_buf *jb)
{
    t_jmp = jb;
}

void case_on_failure(void (*reset)(void))
{
    g_reset = reset;
}

/* the descriptors open now, as a bitmap of fds below `n` */
static void open_fds(uint8_t *map, int n)
{
    memset(map, 0, (size_t)n / 8);
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd != dirfd(d) && fd < n)
            map[fd / 8] |= (uint8_t)(1u << (fd % 8));
    }
    closedir(d);
}

void run_case(const char *name, void (*fn)(void))
{
    enum { NFD = 1 << 16 };
    static uint8_t before[NFD / 8], after[NFD / 8];
    jmp_buf jb;
    /* SRV_CASE=NAME: that case only (a flaky one run again and again) */
    const char *only = getenv("SRV_CASE");
    if (only && *only && strcmp(only, name))
        return;
    open_fds(before, NFD);
    int64_t t0 = ddio_now_ms();
    g_case = name;
    atomic_store(&g_case_failed, 0);
    t_jmp = &jb;
    if (setjmp(jb) == 0)
        fn();
    t_jmp = NULL;
    if (atomic_load(&g_case_failed)) {
        g_failed++;
        open_fds(after, NFD);             /* what the case left open: closed */
        for (int fd = 0; fd < NFD; fd++)
            if ((after[fd / 8] & ~before[fd / 8]) & (1u << (fd % 8)))
                ddio_hangup(fd);
        if (g_reset)
            g_reset();
    } else {
        g_passed++;
        printf("PASS: %s (%.1f s)\n", name, (double)(ddio_now_ms() - t0) / 1000);
    }
    fflush(stdout);
    g_case = NULL;
}

int case_summary(void)
{
    printf("srv-client: %u passed, %u failed\n", g_passed, g_failed);
    return g_failed ? 1 : 0;
}

/* ---- a minimal client ------------------------------------------------------------ */

int recv_msg(struct cl *c, struct msg *m)
{
    int rc = ddio_recv_hdr(c->fd, &m->h, ddio_now_ms() + TMO);
    if (rc)
        return rc;
    m->p = malloc(m->h.len + 1);
    CHECK(m->p, "oom");
    return ddio_recv_all(c->fd, m->p, m->h.len, ddio_now_ms() + TMO);
}

void send_w(struct cl *c, uint16_t type, uint64_t req, struct ddio_wbuf *w)
{
    int rc = ddio_send_msg(c->fd, type, req, 0, w ? w->p : NULL, w ? w->len : 0, NULL, 0,
                           ddio_now_ms() + TMO);
    CHECK(rc == 0, "send %s: %s", ddio_type_name(type), strerror(-rc));
    if (w)
        ddio_wbuf_free(w);
}

/* request/reply; returns the status, reply payload in *m */
int call(struct cl *c, uint16_t type, struct ddio_wbuf *w, struct msg *m)
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

int call_simple(struct cl *c, uint16_t type, struct ddio_wbuf *w)
{
    struct msg m;
    int st = call(c, type, w, &m);
    free(m.p);
    return st;
}

/* connect and run the clients' shared handshake (HELLO, AUTH) */
struct cl *cl_connect(void)
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

void cl_close(struct cl *c)
{
    ddio_hangup(c->fd);
    free(c);
}

void layout_for(struct cl *c, struct ddio_layout_rec *l, uint64_t unit, uint32_t count)
{
    memset(l, 0, sizeof(*l));
    l->stripe_unit = unit;
    l->stripe_count = count;
    l->server_index = 0;
    memcpy(l->ids[0], c->id, DDIO_ID_LEN);
    for (uint32_t i = 1; i < count; i++)
        memset(l->ids[i], 0x10 + (int)i, DDIO_ID_LEN);   /* other (absent) servers */
}

/* A create makes no directories (as open(2)): its path's parents are made
 * first, as the client core's callers do (one that exists is fine) */
static void make_parents(struct cl *c, const char *path)
{
    char p[DDIO_MAX_STR + 1];
    snprintf(p, sizeof(p), "%s", path);
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        struct ddio_mkdir mk = {.path = p, .mode = 0755};
        struct ddio_wbuf w;
        struct msg m;
        ddio_wbuf_init(&w);
        ddio_enc_mkdir(&w, &mk);
        uint64_t req = ++c->req;
        send_w(c, DDIO_T_MKDIR, req, &w);
        /* its status is not checked: a path the create must refuse (an
         * escape, a bad name) is refused here too, and the create says so */
        CHECK(recv_msg(c, &m) == 0 && m.h.req == req, "reply to MKDIR %s", p);
        free(m.p);
        *s = '/';
    }
}

int cl_open_m(struct cl *c, const struct ddio_open *o, struct ddio_open_r *r)
{
    struct ddio_wbuf w;
    if (o->amode & DDIO_O_CREAT)
        make_parents(c, o->path);
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, o);
    struct msg m;
    int st = call(c, DDIO_T_OPEN, &w, &m);
    if (st == 0)
        CHECK(ddio_dec_open_r(m.p, m.h.len, r) == 0, "OPEN reply malformed");
    free(m.p);
    return st;
}

int cl_open(struct cl *c, const char *path, uint32_t amode, const struct ddio_layout_rec *l,
                   struct ddio_open_r *r)
{
    struct ddio_open o = {.path = (char *)path, .amode = amode, .layout = *l};
    return cl_open_m(c, &o, r);
}

uint64_t cl_stat(struct cl *c, const char *key)
{
    struct msg m;
    struct ddio_stats_r s;
    CHECK(call(c, DDIO_T_STATS, NULL, &m) == 0, "STATS failed");
    CHECK(ddio_dec_stats_r(m.p, m.h.len, &s) == 0, "STATS malformed");
    int found;
    uint64_t v = ddio_stats_r_get(&s, key, &found);
    if (!found)
        v = UINT64_MAX;
    ddio_stats_r_free(&s);
    free(m.p);
    return v;
}

int cl_handle_op(struct cl *c, uint16_t type, uint64_t handle, uint64_t *value)
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

int cl_delete(struct cl *c, const char *path)
{
    struct ddio_path_req p = {.path = (char *)path};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_path_req(&w, &p);
    return call_simple(c, DDIO_T_DELETE, &w);
}

int cl_lock(struct cl *c, uint64_t h, uint32_t cmd, uint32_t type, uint64_t start,
                   uint64_t len, uint32_t tmo)
{
    return cl_lock_as(c, h, cmd, type, start, len, tmo, 0, 0);
}

int cl_lock_as(struct cl *c, uint64_t h, uint32_t cmd, uint32_t type, uint64_t start,
               uint64_t len, uint32_t tmo, uint32_t flags, uint64_t client)
{
    struct ddio_lock l = {h, cmd, type, start, len, tmo, flags, client};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_lock(&w, &l);
    return call_simple(c, DDIO_T_LOCK, &w);
}

/* ---- descriptors ------------------------------------------------------------------- */

void build_desc(const struct dspec *s, struct ddio_desc *d)
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
struct xres cl_xfer_hold(struct cl *c, uint64_t handle, uint32_t op, uint32_t flags,
                                uint64_t group, uint64_t seq, uint32_t n, uint32_t rank,
                                const struct ddio_desc *d, uint8_t *buf, uint8_t *got,
                                uint32_t tmo, int hold_ms, uint64_t ucx_token)
{
    struct msg held[64];
    unsigned nheld = 0;
    struct ddio_wbuf dw, w;
    ddio_wbuf_init(&dw);
    ddio_desc_encode(&dw, d);
    struct ddio_xfer x = {.handle = handle, .op = op, .flags = flags, .group = group,
                          .seq = seq, .nparticipants = n, .rank = rank, .timeout_ms = tmo,
                          .desc_len = (uint32_t)dw.len, .desc = dw.p, .ucx_token = ucx_token,
                          .ucx_len = (flags & DDIO_XF_UCX) ? d->length : 0,
                          .inline_len = (flags & DDIO_XF_INLINE) ? (uint32_t)d->length : 0,
                          .inline_data = (flags & DDIO_XF_INLINE) ? buf : NULL,
                          .copy = (flags & DDIO_XF_COPY) ? (uint32_t)ucx_token : 0};
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
        if (nheld && (nheld == 64 || ddio_poll(&pf, 1, hold_ms) == 0))
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
            while (nheld)         /* a failed XFER wants no answers */
                free(held[--nheld].p);
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

struct xres cl_xfer(struct cl *c, uint64_t handle, uint32_t op, uint32_t flags,
                           uint64_t group, uint64_t seq, uint32_t n, uint32_t rank,
                           const struct ddio_desc *d, uint8_t *buf, uint8_t *got, uint32_t tmo)
{
    return cl_xfer_hold(c, handle, op, flags, group, seq, n, rank, d, buf, got, tmo, 0, 0);
}

void fill_pattern(uint8_t *b, uint64_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (uint8_t)(x >> 16);
    }
}

/* write with d, model it; read it back with rd and compare */
void path_name(char *out, size_t n, const char *base)
{
    snprintf(out, n, "t%u/%s", g_run, base);
}

struct cl *connect_create(const char *name, struct ddio_open_r *r)
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
void open_pair(const char *name, struct cl **a, struct cl **b, struct ddio_open_r *ra,
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

/* a connection that speaks the protocol by hand; close it with ddio_hangup,
 * which lets go of its TLS session too */
int raw_conn(void)
{
    char err[512];
    int fd = ddio_connect(g_host, g_port, ddio_now_ms() + TMO);
    CHECK(fd >= 0, "connect");
    /* with DDIO_TLS=on the raw bytes go inside TLS, as a hostile client's would */
    CHECK(ddio_dial_secure(fd, g_host, g_addr, ddio_now_ms() + TMO, err, sizeof(err)) == 0,
          "TLS: %s", err);
    return fd;
}

/* after garbage the server must answer EPROTO (if anything) and close */
void expect_closed(int fd, const char *what)
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
    ddio_hangup(fd);
    printf("ok   %s refused\n", what);
}

/* the handshake on a raw connection: the next request id is 3 */
void send_hello_raw(int fd)
{
    struct ddio_hello_r r;
    char err[1024];
    int rc = ddio_handshake(fd, g_addr, "raw", g_have_secret ? &g_secret : NULL,
                            ddio_now_ms() + TMO, &r, err, sizeof(err));
    CHECK(rc == 0, "raw handshake: %s", err);
    free(r.name);
}

/* "127.0.0.1:PORT" of our end: how the server's log names this client */
void local_name(int fd, char *out, size_t n)
{
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    CHECK(getsockname(fd, (struct sockaddr *)&a, &len) == 0, "getsockname");
    snprintf(out, n, "127.0.0.1:%u", (unsigned)ntohs(a.sin_port));
}

/* some line of the server log holds both strings (the log is written
 * before the refusal is sent; allow a moment for the close path) */
int log_has(const char *a, const char *b)
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
void expect_refusal(int fd, int status, const char *text, const char *what)
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
void hello_only(int fd, struct ddio_hello_r *r)
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

void send_auth(int fd, const struct ddio_auth *a)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_auth(&w, a);
    CHECK(ddio_send_msg(fd, DDIO_T_AUTH, 2, 0, w.p, w.len, NULL, 0, ddio_now_ms() + TMO) == 0,
          "send AUTH");
    ddio_wbuf_free(&w);
}

int xfer_call(struct cl *c, const struct ddio_xfer *x, char *msg, size_t n)
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
