/* TLS 1.3 sessions on connected sockets (see ddio_tls.h).
 *
 * Sessions sit in a table indexed by the socket's descriptor, so that
 * ddio_net's helpers, which every message of both ends goes through, find
 * them without a change above them. A session has a mutex: the server's
 * reader and writer threads share a connection and libssl allows one call
 * at a time on an SSL object; the socket is non-blocking, so no call sleeps
 * holding it (the waits happen in ddio_net, outside).
 *
 * Sends are written from a staging buffer of one record when pieces are
 * small (a message's header and payload become one record, not three), and
 * straight from the caller's memory when they are large. libssl runs with
 * partial writes and moving write buffers: a send that stops returns what
 * went out, and the caller comes back with the rest, the same bytes first.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_tls.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define TLS_STAGE 16384         /* one TLS record's worth of plaintext */
#define TLS_MAX_FD 65536        /* sockets above this descriptor cannot carry TLS */

/* ---- libssl, loaded at run time --------------------------------------------------- */

static struct {
    int ok;
    char why[256];
    const SSL_METHOD *(*client_method)(void);
    const SSL_METHOD *(*server_method)(void);
    SSL_CTX *(*ctx_new)(const SSL_METHOD *);
    void (*ctx_free)(SSL_CTX *);
    long (*ctx_ctrl)(SSL_CTX *, int, long, void *);
    int (*ctx_set_num_tickets)(SSL_CTX *, size_t);
    uint64_t (*ctx_set_options)(SSL_CTX *, uint64_t);
    int (*ctx_use_chain)(SSL_CTX *, const char *);
    int (*ctx_use_key)(SSL_CTX *, const char *, int);
    int (*ctx_check_key)(const SSL_CTX *);
    int (*ctx_load_verify)(SSL_CTX *, const char *, const char *);
    int (*ctx_default_verify)(SSL_CTX *);
    void (*ctx_set_verify)(SSL_CTX *, int, SSL_verify_cb);
    SSL *(*ssl_new)(SSL_CTX *);
    void (*ssl_free)(SSL *);
    int (*set_fd)(SSL *, int);
    void (*set0_rbio)(SSL *, BIO *);
    int (*connect)(SSL *);
    int (*accept)(SSL *);
    int (*read_ex)(SSL *, void *, size_t, size_t *);
    int (*write_ex)(SSL *, const void *, size_t, size_t *);
    int (*get_error)(const SSL *, int);
    int (*has_pending)(const SSL *);
    X509_VERIFY_PARAM *(*get0_param)(SSL *);
    long (*ctrl)(SSL *, int, long, void *);
    long (*verify_result)(const SSL *);
    const char *(*version)(const SSL *);
    const SSL_CIPHER *(*cipher)(const SSL *);
    const char *(*cipher_name)(const SSL_CIPHER *);
} ls;

static pthread_once_t ls_once = PTHREAD_ONCE_INIT;

#define SYM(field, name) (*(void **)&ls.field = dlsym(h, name), ls.field != NULL)

static void load_libssl(void)
{
    void *h = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(ls.why, sizeof(ls.why), "TLS needs OpenSSL's libssl.so.3 (Debian: libssl3): %s",
                 dlerror());
        return;
    }
    int ok = SYM(client_method, "TLS_client_method") && SYM(server_method, "TLS_server_method")
        && SYM(ctx_new, "SSL_CTX_new") && SYM(ctx_free, "SSL_CTX_free")
        && SYM(ctx_ctrl, "SSL_CTX_ctrl") && SYM(ctx_set_num_tickets, "SSL_CTX_set_num_tickets")
        && SYM(ctx_set_options, "SSL_CTX_set_options")
        && SYM(ctx_use_chain, "SSL_CTX_use_certificate_chain_file")
        && SYM(ctx_use_key, "SSL_CTX_use_PrivateKey_file")
        && SYM(ctx_check_key, "SSL_CTX_check_private_key")
        && SYM(ctx_load_verify, "SSL_CTX_load_verify_locations")
        && SYM(ctx_default_verify, "SSL_CTX_set_default_verify_paths")
        && SYM(ctx_set_verify, "SSL_CTX_set_verify") && SYM(ssl_new, "SSL_new")
        && SYM(ssl_free, "SSL_free") && SYM(set_fd, "SSL_set_fd") && SYM(set0_rbio, "SSL_set0_rbio") && SYM(connect, "SSL_connect")
        && SYM(accept, "SSL_accept") && SYM(read_ex, "SSL_read_ex")
        && SYM(write_ex, "SSL_write_ex") && SYM(get_error, "SSL_get_error")
        && SYM(has_pending, "SSL_has_pending") && SYM(get0_param, "SSL_get0_param")
        && SYM(ctrl, "SSL_ctrl") && SYM(verify_result, "SSL_get_verify_result")
        && SYM(version, "SSL_get_version") && SYM(cipher, "SSL_get_current_cipher")
        && SYM(cipher_name, "SSL_CIPHER_get_name");
    if (!ok) {
        snprintf(ls.why, sizeof(ls.why), "libssl.so.3 lacks a function TLS needs: %s", dlerror());
        return;
    }
    ls.ok = 1;
}

static int have_libssl(char *err, size_t n)
{
    pthread_once(&ls_once, load_libssl);
    if (!ls.ok)
        snprintf(err, n, "%s", ls.why);
    return ls.ok;
}

/* the newest libssl/libcrypto error, as text */
static void ssl_reason(char *out, size_t n)
{
    unsigned long e = ERR_peek_last_error();
    if (e)
        ERR_error_string_n(e, out, n);
    else
        snprintf(out, n, "no further detail");
    ERR_clear_error();
}

/* ---- contexts ------------------------------------------------------------------------ */

struct ddio_tls_ctx {
    SSL_CTX *ctx;
    int server;
};

int ddio_tls_mode_parse(const char *s)
{
    if (!s)
        return -1;
    if (!strcasecmp(s, "off"))
        return DDIO_TLS_OFF;
    if (!strcasecmp(s, "optional"))
        return DDIO_TLS_OPTIONAL;
    if (!strcasecmp(s, "required"))
        return DDIO_TLS_REQUIRED;
    return -1;
}

static struct ddio_tls_ctx *ctx_new(int server, char *err, size_t n)
{
    if (!have_libssl(err, n))
        return NULL;
    struct ddio_tls_ctx *x = calloc(1, sizeof(*x));
    if (!x || !(x->ctx = ls.ctx_new(server ? ls.server_method() : ls.client_method()))) {
        free(x);
        snprintf(err, n, "TLS: cannot make a context");
        return NULL;
    }
    x->server = server;
    ls.ctx_ctrl(x->ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_3_VERSION, NULL);
    ls.ctx_ctrl(x->ctx, SSL_CTRL_MODE, SSL_MODE_ENABLE_PARTIAL_WRITE
                | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS, NULL);
    /* a peer gone without close_notify is a closed connection (ECONNRESET,
     * which recovery knows), not a protocol error: every ddio message says
     * its length, so a cut-off one is seen as such anyway */
    ls.ctx_set_options(x->ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    /* a record header and its body in one recv where the socket has them */
    ls.ctx_ctrl(x->ctx, SSL_CTRL_SET_READ_AHEAD, 1, NULL);
    return x;
}

struct ddio_tls_ctx *ddio_tls_server_new(const char *cert, const char *key, char *err, size_t n)
{
    char why[256];
    if (!cert || !*cert || !key || !*key) {
        snprintf(err, n, "TLS needs a certificate and its key (--tls-cert, --tls-key)");
        return NULL;
    }
    struct ddio_tls_ctx *x = ctx_new(1, err, n);
    if (!x)
        return NULL;
    /* no tickets: a ticket is a write after the handshake that the client
     * would have to read, and ddio connections are long-lived anyway */
    ls.ctx_set_num_tickets(x->ctx, 0);
    const char *bad = NULL;
    if (ls.ctx_use_chain(x->ctx, cert) != 1)
        bad = cert;
    else if (ls.ctx_use_key(x->ctx, key, SSL_FILETYPE_PEM) != 1)
        bad = key;
    else if (ls.ctx_check_key(x->ctx) != 1)
        bad = "the key does not match the certificate";
    if (bad) {
        ssl_reason(why, sizeof(why));
        snprintf(err, n, "TLS: %s: %s", bad, why);
        ddio_tls_ctx_free(x);
        return NULL;
    }
    return x;
}

struct ddio_tls_ctx *ddio_tls_client_new(const char *ca, char *err, size_t n)
{
    char why[256];
    struct ddio_tls_ctx *x = ctx_new(0, err, n);
    if (!x)
        return NULL;
    int ok = ca && *ca ? ls.ctx_load_verify(x->ctx, ca, NULL) : ls.ctx_default_verify(x->ctx);
    if (ok != 1) {
        ssl_reason(why, sizeof(why));
        snprintf(err, n, "TLS: CA file %s: %s", ca && *ca ? ca : "(the system's)", why);
        ddio_tls_ctx_free(x);
        return NULL;
    }
    ls.ctx_set_verify(x->ctx, SSL_VERIFY_PEER, NULL);
    return x;
}

void ddio_tls_ctx_free(struct ddio_tls_ctx *x)
{
    if (!x)
        return;
    if (x->ctx)
        ls.ctx_free(x->ctx);
    free(x);
}

/* ---- the table of sessions --------------------------------------------------------- */

struct sess {
    SSL *ssl;
    pthread_mutex_t mu;
    char *stage;                /* TLS_STAGE bytes */
};

static _Atomic(struct sess *) *table;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_make(void)
{
    table = calloc(TLS_MAX_FD, sizeof(*table));
}

/* the hot path of every send and receive: one load when TLS is not used */
static struct sess *sess_of(int fd)
{
    _Atomic(struct sess *) *t = table;
    if (!t || fd < 0 || fd >= TLS_MAX_FD)
        return NULL;
    return atomic_load_explicit(&t[fd], memory_order_acquire);
}

int ddio_tls_active(int fd)
{
    return sess_of(fd) != NULL;
}

static void sess_free(struct sess *s)
{
    if (!s)
        return;
    if (s->ssl)
        ls.ssl_free(s->ssl);
    pthread_mutex_destroy(&s->mu);
    free(s->stage);
    free(s);
}

void ddio_tls_drop(int fd)
{
    if (!table || fd < 0 || fd >= TLS_MAX_FD)
        return;
    sess_free(atomic_exchange(&table[fd], NULL));
}

void ddio_tls_describe(int fd, char *out, size_t n)
{
    struct sess *s = sess_of(fd);
    if (!s) {
        snprintf(out, n, "plain");
        return;
    }
    pthread_mutex_lock(&s->mu);
    snprintf(out, n, "%s %s", ls.version(s->ssl), ls.cipher_name(ls.cipher(s->ssl)));
    pthread_mutex_unlock(&s->mu);
}

/* ---- I/O ---------------------------------------------------------------------------- */

/* What a failed call means: 0 with *wait set (try again when the socket
 * is ready), or -errno. */
static int ssl_status(SSL *ssl, int ret, short *wait)
{
    int e = ls.get_error(ssl, ret);
    int sys = errno;
    if (e != SSL_ERROR_SSL)
        ERR_clear_error();      /* an SSL error's reason stays for the caller's message */
    switch (e) {
    case SSL_ERROR_WANT_READ:
        *wait = POLLIN;
        return 0;
    case SSL_ERROR_WANT_WRITE:
        *wait = POLLOUT;
        return 0;
    case SSL_ERROR_ZERO_RETURN:
        return -ECONNRESET;     /* the peer closed its side */
    case SSL_ERROR_SYSCALL:
        if (sys == EAGAIN || sys == EWOULDBLOCK || sys == EINTR) {
            *wait = POLLIN | POLLOUT;
            return 0;
        }
        return sys && sys != EPIPE ? -sys : -ECONNRESET;
    default:
        return -EPROTO;         /* a record that does not decrypt, or the like */
    }
}

/* Fill the stage from iov[i]+off on (whole or partial pieces); its length */
static size_t stage_fill(char *stage, const struct iovec *iov, int cnt, int i, size_t off)
{
    size_t used = 0;
    for (; i < cnt && used < TLS_STAGE; i++, off = 0) {
        size_t k = iov[i].iov_len - off;
        if (k > TLS_STAGE - used)
            k = TLS_STAGE - used;
        if (k == 0)
            continue;           /* an empty piece may have no base at all */
        memcpy(stage + used, (const char *)iov[i].iov_base + off, k);
        used += k;
    }
    return used;
}

ssize_t ddio_tls_sendv(int fd, const struct iovec *iov, int cnt, short *wait)
{
    struct sess *s = sess_of(fd);
    if (!s)
        return -EBADF;
    size_t done = 0, off = 0;
    int i = 0, rc = 0;
    pthread_mutex_lock(&s->mu);
    while (i < cnt) {
        if (off == iov[i].iov_len) {
            i++, off = 0;
            continue;
        }
        const char *p = (const char *)iov[i].iov_base + off;
        size_t len = iov[i].iov_len - off, w = 0;
        if (len < TLS_STAGE) {          /* small: several pieces in one record */
            len = stage_fill(s->stage, iov, cnt, i, off);
            p = s->stage;
        }
        int ok = ls.write_ex(s->ssl, p, len, &w);
        if (!ok) {
            rc = ssl_status(s->ssl, ok, wait);
            break;
        }
        done += w;
        for (size_t k = w; k > 0;) {    /* advance the cursor by w */
            size_t left = iov[i].iov_len - off, step = k < left ? k : left;
            off += step;
            k -= step;
            if (off == iov[i].iov_len && k > 0)
                i++, off = 0;
        }
        if (w < len)
            break;
    }
    pthread_mutex_unlock(&s->mu);
    return done ? (ssize_t)done : rc;
}

ssize_t ddio_tls_recvv(int fd, const struct iovec *iov, int cnt, short *wait)
{
    struct sess *s = sess_of(fd);
    if (!s)
        return -EBADF;
    size_t done = 0;
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < cnt; i++)
        for (size_t off = 0, r; off < iov[i].iov_len; off += r, done += r) {
            r = 0;
            int ok = ls.read_ex(s->ssl, (char *)iov[i].iov_base + off, iov[i].iov_len - off, &r);
            if (!ok) {          /* nothing more now (rc 0, *wait set), or an error */
                rc = ssl_status(s->ssl, ok, wait);
                goto out;
            }
        }
out:
    pthread_mutex_unlock(&s->mu);
    return done ? (ssize_t)done : rc;
}

int ddio_tls_pending(int fd)
{
    struct sess *s = sess_of(fd);
    if (!s)
        return 0;
    pthread_mutex_lock(&s->mu);
    int p = ls.has_pending(s->ssl);
    pthread_mutex_unlock(&s->mu);
    return p;
}

/* ---- handshakes ---------------------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_ready(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p = {.fd = fd, .events = events};
        int rc = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -errno;
    }
}

static struct sess *sess_new(struct ddio_tls_ctx *x, int fd, char *err, size_t n)
{
    if (fd < 0 || fd >= TLS_MAX_FD) {
        snprintf(err, n, "TLS: socket descriptor %d is above %d", fd, TLS_MAX_FD - 1);
        return NULL;
    }
    pthread_once(&table_once, table_make);
    struct sess *s = calloc(1, sizeof(*s));
    if (!s || !table) {
        free(s);
        snprintf(err, n, "TLS: out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    int fl = fcntl(fd, F_GETFL);
    if (!(s->stage = malloc(TLS_STAGE)) || !(s->ssl = ls.ssl_new(x->ctx)) || fl < 0
        || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || ls.set_fd(s->ssl, fd) != 1) {
        snprintf(err, n, "TLS: cannot set up a session");
        sess_free(s);
        return NULL;
    }
    return s;
}

/* the client checks the server's name: an IP address or a DNS name (SNI too) */
static int expect_host(SSL *ssl, const char *host)
{
    X509_VERIFY_PARAM *vp = ls.get0_param(ssl);
    unsigned char a[16];
    if (inet_pton(AF_INET, host, a) == 1 || inet_pton(AF_INET6, host, a) == 1)
        return X509_VERIFY_PARAM_set1_ip_asc(vp, host) == 1 ? 0 : -1;
    ls.ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, (void *)host);
    X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return X509_VERIFY_PARAM_set1_host(vp, host, 0) == 1 ? 0 : -1;
}

/* the server's first byte is a ddio message's, not a TLS record's */
static int plain_answer(int fd)
{
    unsigned char b;
    return recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 1 && b != DDIO_TLS_FIRST_BYTE
        && b != 0x15 /* an alert */;
}

/* A client reads the server's handshake itself, into a memory BIO: libssl
 * never reads the socket before the first byte is seen, so a server's
 * plain refusal is left there whole for ddio_read_refusal (libssl's own
 * read right after sending its hello would take it in otherwise). 1 when
 * bytes were fed, 0 when the socket had none, or -errno; -ENOPROTOOPT for a
 * plain answer. */
static int feed(int fd, BIO *mem, int first, int64_t deadline_ms)
{
    char buf[16384];
    int rc = wait_ready(fd, POLLIN, deadline_ms);
    if (rc)
        return rc;
    if (first && plain_answer(fd))
        return -ENOPROTOOPT;
    ssize_t k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (k == 0)
        return -ECONNRESET;
    if (k < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -errno;
    return BIO_write(mem, buf, (int)k) == (int)k ? 1 : -ENOMEM;
}

/* the handshake done, the socket itself becomes the session's input; a
 * server that spoke before the client did is refused */
static int to_socket(struct sess *s, int fd, BIO *mem)
{
    if (BIO_ctrl_pending(mem) > 0)
        return -EPROTO;
    BIO *sb = BIO_new_socket(fd, BIO_NOCLOSE);
    if (!sb)
        return -ENOMEM;
    ls.set0_rbio(s->ssl, sb);
    return 0;
}

static int client_loop(struct sess *s, int fd, int64_t deadline_ms)
{
    BIO *mem = BIO_new(BIO_s_mem());
    if (!mem)
        return -ENOMEM;
    ls.set0_rbio(s->ssl, mem);          /* the session owns it from here */
    int first = 1;
    for (;;) {
        ERR_clear_error();
        int ret = ls.connect(s->ssl);
        if (ret == 1)
            return to_socket(s, fd, mem);
        short ev = 0;
        int rc = ssl_status(s->ssl, ret, &ev);
        if (rc)
            return rc;
        if (ev & POLLIN) {
            if ((rc = feed(fd, mem, first, deadline_ms)) < 0)
                return rc;
            first &= rc == 0;
        } else if ((rc = wait_ready(fd, ev, deadline_ms)) != 0) {
            return rc;
        }
    }
}

static int server_loop(struct sess *s, int fd, int64_t deadline_ms)
{
    for (;;) {
        ERR_clear_error();
        int ret = ls.accept(s->ssl);
        if (ret == 1)
            return 0;
        short ev = 0;
        int rc = ssl_status(s->ssl, ret, &ev);
        if (rc == 0)
            rc = wait_ready(fd, ev, deadline_ms);
        if (rc)
            return rc;
    }
}

static void handshake_failed(struct sess *s, int rc, const char *peer, char *err, size_t n)
{
    char why[256];
    long v = ls.verify_result(s->ssl);
    if (rc == -ETIMEDOUT)
        snprintf(err, n, "TLS handshake with %s: no answer before the deadline", peer);
    else if (v != X509_V_OK)
        snprintf(err, n, "TLS: the certificate of %s is not trusted: %s (DDIO_TLS_CA names "
                 "the CA that signs the servers' certificates)", peer,
                 X509_verify_cert_error_string(v));
    else {
        ssl_reason(why, sizeof(why));
        snprintf(err, n, "TLS handshake with %s failed: %s (%s)", peer, why,
                 rc == -ECONNRESET ? "connection closed" : "refused");
    }
}

static int handshake(struct ddio_tls_ctx *x, int fd, const char *host, int64_t deadline_ms,
                     char *err, size_t n)
{
    struct sess *s = sess_new(x, fd, err, n);
    if (!s)
        return -ENOMEM;
    if (host && expect_host(s->ssl, host)) {
        snprintf(err, n, "TLS: cannot check the name %s", host);
        sess_free(s);
        return -EINVAL;
    }
    int rc = x->server ? server_loop(s, fd, deadline_ms) : client_loop(s, fd, deadline_ms);
    if (rc == -ENOPROTOOPT) {
        sess_free(s);
        return rc;
    }
    if (rc) {
        handshake_failed(s, rc, host ? host : "the client", err, n);
        sess_free(s);
        return rc == -ETIMEDOUT ? rc : -EACCES;
    }
    /* a session still there belongs to a socket closed without
     * ddio_tls_drop (a caller's bug): this one replaces it */
    sess_free(atomic_exchange_explicit(&table[fd], s, memory_order_acq_rel));
    return 0;
}

int ddio_tls_accept(struct ddio_tls_ctx *x, int fd, int64_t deadline_ms, char *err, size_t n)
{
    return handshake(x, fd, NULL, deadline_ms, err, n);
}

int ddio_tls_connect(struct ddio_tls_ctx *x, int fd, const char *host, int64_t deadline_ms,
                     char *err, size_t n)
{
    return handshake(x, fd, host, deadline_ms, err, n);
}
