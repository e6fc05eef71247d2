/* Unit tests of common/ddio_auth: the secret file's checks, the proofs, and
 * the client handshake against scripted servers over a socketpair (a real
 * server's side is tested in test/server/srv_security.sh). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddio_auth.h"
#include "ddio_core.h"
#include "ddio_net.h"
#include "ddio_xport.h"
#include "ddio_proto.h"
#include "suite_run.h"

#define TMO 5000

static char g_dir[] = "/tmp/ddio-check-auth.XXXXXX";

static void make_file(const char *path, const char *content, mode_t mode)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
    close(fd);
    ck_assert_int_eq(chmod(path, mode), 0);
}

static int load(const char *content, mode_t mode, struct ddio_secret *s, char *err, size_t n)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/secret", g_dir);
    make_file(path, content, mode);
    return ddio_secret_load(path, s, err, n);
}

START_TEST(secret_ok)
{
    struct ddio_secret s;
    char err[512] = "";
    ck_assert_int_eq(load("0123456789abcdef-secret\n\n", 0600, &s, err, sizeof(err)), 0);
    ck_assert_uint_eq(s.len, 23);                /* trailing white space dropped */
    ck_assert_int_eq(memcmp(s.key, "0123456789abcdef-secret", 23), 0);
    ck_assert_int_eq(load("0123456789abcdef", 0400, &s, err, sizeof(err)), 0);
    ck_assert_uint_eq(s.len, 16);
}
END_TEST

START_TEST(secret_refused)
{
    struct ddio_secret s;
    char err[512];
    static const mode_t bad[] = {0640, 0604, 0660, 0644, 0610, 0601, 0602, 0620};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        ck_assert_int_eq(load("0123456789abcdef-secret", bad[i], &s, err, sizeof(err)), -EPERM);
        ck_assert_ptr_nonnull(strstr(err, "accessible by group or others"));
        ck_assert_ptr_nonnull(strstr(err, "chmod 600"));
        ck_assert_uint_eq(s.len, 0);
    }
    ck_assert_int_eq(load("short\n", 0600, &s, err, sizeof(err)), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "16 to 4096 bytes"));
    char *big = malloc(DDIO_SECRET_MAX + 2);
    memset(big, 'x', DDIO_SECRET_MAX + 1);
    big[DDIO_SECRET_MAX + 1] = '\0';
    ck_assert_int_eq(load(big, 0600, &s, err, sizeof(err)), -EINVAL);
    free(big);
    char path[256];
    snprintf(path, sizeof(path), "%s/none", g_dir);
    ck_assert_int_eq(ddio_secret_load(path, &s, err, sizeof(err)), -ENOENT);
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
    ck_assert_int_eq(ddio_secret_load(g_dir, &s, err, sizeof(err)), -EINVAL);  /* a directory */
}
END_TEST

/* another owner: only root can make such a file (chown to nobody) */
START_TEST(secret_wrong_owner)
{
    if (geteuid() != 0)
        return;
    struct ddio_secret s;
    char path[256], err[512] = "";
    snprintf(path, sizeof(path), "%s/owned", g_dir);
    make_file(path, "0123456789abcdef-secret", 0600);
    ck_assert_int_eq(chown(path, 65534, 65534), 0);
    ck_assert_int_eq(ddio_secret_load(path, &s, err, sizeof(err)), -EPERM);
    ck_assert_ptr_nonnull(strstr(err, "owned by uid 65534"));
}
END_TEST

START_TEST(secret_path_order)
{
    char out[256], cfg[256], path[256];
    snprintf(cfg, sizeof(cfg), "%s/ddio.conf", g_dir);
    make_file(cfg, "servers = a:1  # comment\nsecret_file = /from/config \n", 0600);
    setenv("DDIO_CONFIG", cfg, 1);
    unsetenv("DDIO_SECRET_FILE");
    ck_assert_int_eq(ddio_secret_path(NULL, out, sizeof(out)), 1);
    ck_assert_str_eq(out, "/from/config");
    ck_assert_int_eq(ddio_config_value("servers", out, sizeof(out)), 1);
    ck_assert_str_eq(out, "a:1");
    ck_assert_int_eq(ddio_config_value("timeout", out, sizeof(out)), 0);
    setenv("DDIO_SECRET_FILE", "/from/env", 1);
    ck_assert_int_eq(ddio_secret_path("", out, sizeof(out)), 1);
    ck_assert_str_eq(out, "/from/env");
    ck_assert_int_eq(ddio_secret_path("/from/hint", out, sizeof(out)), 1);
    ck_assert_str_eq(out, "/from/hint");
    unsetenv("DDIO_SECRET_FILE");
    /* "~/" in the file is $HOME */
    make_file(cfg, "secret_file = ~/.ddio-secret\n", 0600);
    setenv("HOME", "/home/u", 1);
    ck_assert_int_eq(ddio_secret_path(NULL, out, sizeof(out)), 1);
    ck_assert_str_eq(out, "/home/u/.ddio-secret");
    unsetenv("DDIO_CONFIG");
    ck_assert_int_eq(ddio_secret_path(NULL, path, sizeof(path)), 0);
}
END_TEST

static void secret_of(struct ddio_secret *s, const char *text)
{
    memset(s, 0, sizeof(*s));
    s->len = strlen(text);
    memcpy(s->key, text, s->len);
}

START_TEST(mac_binds_everything)
{
    struct ddio_secret k, k2;
    uint8_t id[DDIO_ID_LEN], sn[DDIO_NONCE_LEN], cn[DDIO_NONCE_LEN], m[DDIO_MAC_LEN],
        m2[DDIO_MAC_LEN];
    secret_of(&k, "the shared secret, 1");
    secret_of(&k2, "the shared secret, 2");
    memset(id, 1, sizeof(id));
    ck_assert_int_eq(ddio_auth_nonce(sn), 0);
    ck_assert_int_eq(ddio_auth_nonce(cn), 0);
    ck_assert_int_ne(memcmp(sn, cn, DDIO_NONCE_LEN), 0);
    ck_assert_int_eq(ddio_auth_mac(&k, DDIO_AUTH_CLIENT, id, sn, cn, m), 0);
    ck_assert(ddio_auth_verify(&k, DDIO_AUTH_CLIENT, id, sn, cn, m));
    ck_assert(!ddio_auth_verify(&k2, DDIO_AUTH_CLIENT, id, sn, cn, m));   /* wrong secret */
    ck_assert(!ddio_auth_verify(&k, DDIO_AUTH_SERVER, id, sn, cn, m));    /* reflected */
    ck_assert(!ddio_auth_verify(&k, DDIO_AUTH_CLIENT, id, cn, sn, m));    /* nonces swapped */
    uint8_t sn2[DDIO_NONCE_LEN];
    memcpy(sn2, sn, sizeof(sn2));
    sn2[DDIO_NONCE_LEN - 1] ^= 1;
    ck_assert(!ddio_auth_verify(&k, DDIO_AUTH_CLIENT, id, sn2, cn, m));   /* replay, new Ns */
    id[0] ^= 0x80;
    ck_assert(!ddio_auth_verify(&k, DDIO_AUTH_CLIENT, id, sn, cn, m));    /* other server */
    id[0] ^= 0x80;
    memcpy(m2, m, sizeof(m2));
    m2[5] ^= 4;
    ck_assert(!ddio_auth_verify(&k, DDIO_AUTH_CLIENT, id, sn, cn, m2));   /* one bit off */
}
END_TEST

/* the proof is standard HMAC-SHA-256 over the documented message layout
 * (PROTOCOL.md), checked against Python's hmac module */
START_TEST(mac_layout)
{
    struct ddio_secret k;
    uint8_t id[DDIO_ID_LEN], sn[DDIO_NONCE_LEN], cn[DDIO_NONCE_LEN], m[DDIO_MAC_LEN];
    secret_of(&k, "0123456789abcdef");
    for (unsigned i = 0; i < DDIO_ID_LEN; i++)
        id[i] = (uint8_t)i;
    for (unsigned i = 0; i < DDIO_NONCE_LEN; i++) {
        sn[i] = (uint8_t)(0x40 + i);
        cn[i] = (uint8_t)(0x80 + i);
    }
    ck_assert_int_eq(ddio_auth_mac(&k, DDIO_AUTH_SERVER, id, sn, cn, m), 0);
    /* computed independently with:  python3 -c 'import hmac,hashlib;
     * msg=b"ddio-auth-v1\0"+b"server\0\0"+bytes(range(16))+bytes(range(0x40,0x60))
     * +bytes(range(0x80,0xa0)); print(hmac.new(b"0123456789abcdef",msg,
     * hashlib.sha256).hexdigest())' */
    static const char want[] =
        "b58ec693ced4b8a5504effcb8fe7446846bb726c809bbda36205dbf572b0304f";
    char got[2 * DDIO_MAC_LEN + 1];
    for (unsigned i = 0; i < DDIO_MAC_LEN; i++)
        snprintf(got + 2 * i, 3, "%02x", m[i]);
    ck_assert_str_eq(got, want);
    /* a key longer than SHA-256's 64-byte block is hashed first (RFC 2104):
     * the same python with b"0123456789abcdef"*5 and b"client\0\0" */
    secret_of(&k, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
              "0123456789abcdef");
    ck_assert_int_eq(ddio_auth_mac(&k, DDIO_AUTH_CLIENT, id, sn, cn, m), 0);
    for (unsigned i = 0; i < DDIO_MAC_LEN; i++)
        snprintf(got + 2 * i, 3, "%02x", m[i]);
    ck_assert_str_eq(got, "f9381ef3839300cd6610d22ddeb7c23e1627f0f9d8d7dc500a8e88f06553eee5");
}
END_TEST

/* ---- the client handshake against a scripted server ------------------------ */

enum script { S_GOOD, S_BAD_PROOF, S_NO_AUTH, S_REFUSE_AUTH, S_WRONG_REPLY };

struct fake {
    int fd;
    enum script how;
    const struct ddio_secret *k;
    int got_auth;                 /* the client sent AUTH */
};

static void reply(int fd, uint16_t type, uint64_t req, int status, struct ddio_wbuf *w)
{
    ck_assert_int_eq(ddio_send_msg(fd, type | DDIO_REPLY, req, status, w->p, w->len, NULL, 0,
                                   ddio_now_ms() + TMO), 0);
    ddio_wbuf_free(w);
}

static uint8_t *recv_req(int fd, uint16_t type, uint64_t req, size_t *n)
{
    struct ddio_hdr h;
    if (ddio_recv_hdr(fd, &h, ddio_now_ms() + TMO))
        return NULL;
    ck_assert_uint_eq(h.type, type);
    ck_assert_uint_eq(h.req, req);
    uint8_t *p = malloc(h.len + 1);
    ck_assert_int_eq(ddio_recv_all(fd, p, h.len, ddio_now_ms() + TMO), 0);
    *n = h.len;
    return p;
}

static void *fake_main(void *arg)
{
    struct fake *f = arg;
    size_t n;
    uint8_t id[DDIO_ID_LEN];
    memset(id, 0x33, sizeof(id));
    free(recv_req(f->fd, DDIO_T_HELLO, 1, &n));
    struct ddio_hello_r hr = {.ndisks = 1, .block_size = 4096, .name = "fake:1",
                              .flags = f->how == S_NO_AUTH ? 0 : DDIO_SRV_AUTH_REQUIRED};
    memcpy(hr.server_id, id, DDIO_ID_LEN);
    ddio_auth_nonce(hr.nonce);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_hello_r(&w, &hr);
    reply(f->fd, DDIO_T_HELLO, 1, 0, &w);
    uint8_t *p = recv_req(f->fd, DDIO_T_AUTH, 2, &n);
    if (!p)
        return NULL;              /* the client gave up before AUTH */
    f->got_auth = 1;
    struct ddio_auth a;
    ck_assert_int_eq(ddio_dec_auth(p, n, &a), 0);
    free(p);
    ck_assert(ddio_auth_verify(f->k, DDIO_AUTH_CLIENT, id, hr.nonce, a.nonce, a.mac));
    struct ddio_auth_r r;
    ddio_auth_mac(f->k, DDIO_AUTH_SERVER, id, hr.nonce, a.nonce, r.mac);
    if (f->how == S_BAD_PROOF)
        r.mac[0] ^= 1;
    ddio_wbuf_init(&w);
    if (f->how == S_REFUSE_AUTH) {
        ddio_enc_err(&w, "server fake:1: authentication failed");
        reply(f->fd, DDIO_T_AUTH, 2, EACCES, &w);
    } else {
        ddio_enc_auth_r(&w, &r);
        reply(f->fd, f->how == S_WRONG_REPLY ? DDIO_T_OPEN : DDIO_T_AUTH, 2, 0, &w);
    }
    return NULL;
}

static int run_handshake(enum script how, const struct ddio_secret *client_k,
                         const struct ddio_secret *server_k, char *err, size_t n, int *got_auth)
{
    int sv[2];
    ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    struct fake f = {.fd = sv[1], .how = how, .k = server_k};
    pthread_t t;
    pthread_create(&t, NULL, fake_main, &f);
    struct ddio_hello_r hr;
    err[0] = '\0';
    int rc = ddio_handshake(sv[0], "fake:1", "check_auth", client_k, ddio_now_ms() + TMO, &hr,
                            err, n);
    if (rc == 0) {
        ck_assert_str_eq(hr.name, "fake:1");
        free(hr.name);
    }
    close(sv[0]);                 /* unblocks the fake if the client gave up */
    pthread_join(t, NULL);
    close(sv[1]);
    *got_auth = f.got_auth;
    return rc;
}

START_TEST(handshake_cases)
{
    struct ddio_secret k, k2;
    char err[512];
    int got;
    secret_of(&k, "the shared secret, 1");
    secret_of(&k2, "the shared secret, 2");
    ck_assert_int_eq(run_handshake(S_GOOD, &k, &k, err, sizeof(err), &got), 0);
    ck_assert(got);
    /* the server does not prove it holds the secret: refused by the client */
    ck_assert_int_eq(run_handshake(S_BAD_PROOF, &k, &k, err, sizeof(err), &got), -EACCES);
    ck_assert_ptr_nonnull(strstr(err, "did not prove"));
    /* an unauthenticated (--insecure) server, and a client with a secret */
    ck_assert_int_eq(run_handshake(S_NO_AUTH, &k, &k, err, sizeof(err), &got), -EACCES);
    ck_assert_ptr_nonnull(strstr(err, "--insecure"));
    ck_assert(!got);
    /* ... and without one: accepted */
    ck_assert_int_eq(run_handshake(S_NO_AUTH, NULL, &k, err, sizeof(err), &got), 0);
    /* a server that requires AUTH, a client without a secret: nothing sent */
    ck_assert_int_eq(run_handshake(S_GOOD, NULL, &k, err, sizeof(err), &got), -EACCES);
    ck_assert_ptr_nonnull(strstr(err, "DDIO_SECRET_FILE"));
    ck_assert(!got);
    /* the server refuses: its message comes through */
    ck_assert_int_eq(run_handshake(S_REFUSE_AUTH, &k2, &k2, err, sizeof(err), &got), -EACCES);
    ck_assert_str_eq(err, "server fake:1: authentication failed");
    ck_assert_int_eq(run_handshake(S_WRONG_REPLY, &k, &k, err, sizeof(err), &got), -EPROTO);
    ck_assert_ptr_nonnull(strstr(err, "unexpected"));
}
END_TEST

/* ---- ddio_pool_get_all: a file's servers dialled at once ------------------- */

/* an --insecure server that answers one connection's HELLO after delay_ms,
 * then holds it until the client closes */
struct slow_srv {
    int lfd, port, delay_ms;
    pthread_t t;
};

static void *slow_main(void *arg)
{
    struct slow_srv *s = arg;
    struct pollfd pf = {.fd = s->lfd, .events = POLLIN};
    if (poll(&pf, 1, TMO) != 1)
        return NULL;
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    size_t n;
    free(recv_req(fd, DDIO_T_HELLO, 1, &n));
    usleep((useconds_t)s->delay_ms * 1000);
    struct ddio_hello_r hr = {.ndisks = 1, .block_size = 4096, .name = "slow"};
    memset(hr.server_id, 0x44, DDIO_ID_LEN);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_hello_r(&w, &hr);
    reply(fd, DDIO_T_HELLO, 1, 0, &w);
    char b;
    while (read(fd, &b, 1) > 0)
        ;
    close(fd);
    return NULL;
}

static void slow_start(struct slow_srv *s, int delay_ms)
{
    s->delay_ms = delay_ms;
    s->lfd = ddio_listen("127.0.0.1", 0, &s->port);
    ck_assert_int_ge(s->lfd, 0);
    ck_assert_int_eq(pthread_create(&s->t, NULL, slow_main, s), 0);
}

static void slow_join(struct slow_srv *s)
{
    pthread_join(s->t, NULL);
    close(s->lfd);
}

/* a port nobody listens on (refused at once) */
static int dead_port(void)
{
    int port, fd = ddio_listen("127.0.0.1", 0, &port);
    ck_assert_int_ge(fd, 0);
    close(fd);
    return port;
}

START_TEST(pool_get_all)
{
    struct ddio_pool p = DDIO_POOL_INIT;
    struct ddio_conn *c[2];
    struct ddio_err e;
    char a0[64], a1[64], *addrs[2] = {a0, a1};
    struct slow_srv s0, s1;

    unsetenv("DDIO_SECRET_FILE");
    unsetenv("DDIO_CONFIG");
    unsetenv("DDIO_TRANSPORT");
    p.xport = DDIO_XPORT_TCP;
    /* two servers that each take 400 ms to answer HELLO: at once, about
     * 400 ms; one after the other it would be 800 */
    slow_start(&s0, 400);
    slow_start(&s1, 400);
    snprintf(a0, sizeof(a0), "127.0.0.1:%d", s0.port);
    snprintf(a1, sizeof(a1), "127.0.0.1:%d", s1.port);
    int64_t t0 = ddio_now_ms();
    ck_assert_int_eq(ddio_pool_get_all(&p, addrs, 2, TMO, 0, c, &e, NULL), 0);
    int64_t dt = ddio_now_ms() - t0;
    ck_assert_msg(dt >= 400 && dt < 700, "two 400 ms handshakes took %lld ms",
                  (long long)dt);
    ck_assert(c[0] && c[1] && c[0] != c[1]);
    ck_assert(c[0]->sock >= 0 && c[1]->sock >= 0);
    /* connected already: nothing dialled again (the servers accept no more) */
    struct ddio_conn *again[2];
    t0 = ddio_now_ms();
    ck_assert_int_eq(ddio_pool_get_all(&p, addrs, 2, TMO, 0, again, &e, NULL), 0);
    ck_assert(again[0] == c[0] && again[1] == c[1]);
    ck_assert_int_lt(ddio_now_ms() - t0, 100);
    ddio_pool_clear(&p);
    slow_join(&s0);
    slow_join(&s1);

    /* a dead server beside a slow live one: its own error, and the live one
     * connected; two dead ones: the first in list order is the error */
    slow_start(&s0, 200);
    snprintf(a0, sizeof(a0), "127.0.0.1:%d", s0.port);
    snprintf(a1, sizeof(a1), "127.0.0.1:%d", dead_port());
    ck_assert_int_eq(ddio_pool_get_all(&p, addrs, 2, TMO, 0, c, &e, NULL), -1);
    ck_assert_int_eq(e.errnum, ECONNREFUSED);
    ck_assert_msg(strstr(e.msg, a1) != NULL, "error '%s' does not name %s", e.msg, a1);
    ck_assert(c[0] && c[0]->sock >= 0 && !c[1]);
    ddio_pool_clear(&p);
    slow_join(&s0);
    snprintf(a0, sizeof(a0), "127.0.0.1:%d", dead_port());
    ck_assert_int_eq(ddio_pool_get_all(&p, addrs, 2, TMO, 0, c, &e, NULL), -1);
    ck_assert_msg(strstr(e.msg, a0) != NULL, "error '%s' does not name %s", e.msg, a0);
    ddio_pool_clear(&p);
}
END_TEST

int main(void)
{
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    Suite *s = suite_create("auth");
    TCase *tc = tcase_create("auth");
    tcase_add_test(tc, secret_ok);
    tcase_add_test(tc, secret_refused);
    tcase_add_test(tc, secret_wrong_owner);
    tcase_add_test(tc, secret_path_order);
    tcase_add_test(tc, mac_binds_everything);
    tcase_add_test(tc, mac_layout);
    tcase_add_test(tc, handshake_cases);
    tcase_add_test(tc, pool_get_all);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    int failed = check_run(s, 1);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", g_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", g_dir);
    return failed ? 1 : 0;
}
