/* srv_client's cases: authentication against a live server (--security). */
#include "srv_harness.h"

/* ---- authentication against a live server (--security) ------------------------------------- */

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
    ddio_hangup(fd);
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
    ddio_hangup(fd);
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
    ddio_hangup(fd);
    uint8_t first_nonce[DDIO_NONCE_LEN];
    memcpy(first_nonce, r.nonce, sizeof(first_nonce));

    fd = raw_conn();
    char me[64];
    local_name(fd, me, sizeof(me));
    hello_only(fd, &r);
    CHECK(memcmp(first_nonce, r.nonce, DDIO_NONCE_LEN) != 0, "server nonce repeated");
    send_auth(fd, &a);            /* the recorded AUTH */
    expect_refusal(fd, EACCES, "authentication failed", "replayed AUTH");
    ddio_hangup(fd);
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
        ddio_hangup(fd);
        CHECK(log_has(me, what), "%s from %s not logged", what, me);
    }
    int fd = raw_conn();          /* AUTH before HELLO: a protocol error */
    struct ddio_auth a;
    memset(&a, 0, sizeof(a));
    send_auth(fd, &a);
    expect_refusal(fd, EPROTO, "expected HELLO", "AUTH before HELLO");
    ddio_hangup(fd);
    fd = raw_conn();              /* a malformed AUTH */
    struct ddio_hello_r r;
    hello_only(fd, &r);
    ddio_send_msg(fd, DDIO_T_AUTH, 2, 0, "short", 5, NULL, 0, ddio_now_ms() + TMO);
    expect_refusal(fd, EPROTO, "malformed AUTH", "malformed AUTH");
    ddio_hangup(fd);
    printf("ok   %zu request types before AUTH refused (EACCES) and logged; AUTH before "
           "HELLO and a malformed AUTH refused (EPROTO)\n", sizeof(types) / sizeof(types[0]));
}

/* a file the intruders go after, its bytes and the storage root's snapshot */
static struct cl *g_victim;
static uint64_t g_victim_handle;
static uint8_t g_victim_data[4096];
static char *g_before;

static void victim_desc(struct ddio_desc *d)
{
    *d = (struct ddio_desc){.disp = 0, .extent = 0, .start = 0, .length = sizeof(g_victim_data)};
    d->root = ddio_node_leaf(sizeof(g_victim_data));
    CHECK(d->root && ddio_node_finish(d->root) == 0, "desc");
}

static void sec_victim(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    layout_for(c, &l, 65536, 1);
    CHECK(cl_open(c, "sec/victim", DDIO_O_RDWR | DDIO_O_CREAT, &l, &r) == 0, "create victim");
    fill_pattern(g_victim_data, sizeof(g_victim_data), 77);
    struct ddio_desc d;
    victim_desc(&d);
    CHECK(cl_xfer(c, r.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, g_victim_data, NULL, 5000).status
          == 0, "write victim");
    CHECK(cl_handle_op(c, DDIO_T_SYNC, r.handle, NULL) == 0, "sync");
    ddio_desc_free(&d);
    g_before = snapshot();
    g_victim = c;
    g_victim_handle = r.handle;
}

static void sec_root_unchanged(void)
{
    CHECK(g_victim && g_before, "no victim file (security/victim failed)");
    char *after = snapshot();
    CHECK(strcmp(g_before, after) == 0, "the storage root changed:\n--- before\n%s--- after\n%s",
          g_before, after);
    uint8_t back[sizeof(g_victim_data)];
    memset(back, 0, sizeof(back));
    struct ddio_desc d;
    victim_desc(&d);
    CHECK(cl_xfer(g_victim, g_victim_handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, back, NULL, 5000).status
          == 0, "read victim");
    CHECK(memcmp(g_victim_data, back, sizeof(back)) == 0, "victim's bytes changed");
    ddio_desc_free(&d);
    free(after);
    printf("ok   storage root unchanged (every file's size and mtime), victim's bytes intact\n");
}

void test_security(void)
{
    CHECK(g_have_secret && g_root && g_log, "--security needs DDIO_SECRET_FILE, ROOT and LOG");
    run_case("security/victim", sec_victim);
    run_case("security/wrong-secret", sec_wrong_secret);
    run_case("security/no-secret", sec_no_secret);
    run_case("security/replay", sec_replay);
    run_case("security/ops-before-auth", sec_ops_before_auth);
    run_case("security/root-unchanged", sec_root_unchanged);
    if (g_victim)
        cl_close(g_victim);
    free(g_before);
}
