/* Shared secret and the HELLO/AUTH handshake (see ddio_auth.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_auth.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* SHA-256's own functions, deprecated in OpenSSL 3 for its EVP layer:
 * see hmac_sha256 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include "ddio_munge.h"
#include "ddio_net.h"
#include "ddio_tls.h"
#include "ddio_ucx.h"
#include "ddio_xport.h"

#define AUTH_LABEL "ddio-auth-v1"

__thread struct ddio_dial_stages ddio_dial_stages;
/* handshake replies are small; a bigger one is not from a ddio server */
#define HANDSHAKE_MAX_REPLY (DDIO_MAX_UCXADDR + 256u)   /* also UCXADDR|R */

/* ---- configuration ----------------------------------------------------------- */

char *ddio_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

int ddio_config_value(const char *key, char *out, size_t n)
{
    const char *path = getenv("DDIO_CONFIG");
    char line[4096];
    int found = 0;
    FILE *fp;

    if (!path || !*path || !(fp = fopen(path, "re")))
        return 0;
    while (fgets(line, sizeof(line), fp)) {
        char *hash = strchr(line, '#'), *eq;
        if (hash)
            *hash = '\0';
        if (!(eq = strchr(line, '=')))
            continue;
        *eq = '\0';
        if (strcmp(ddio_trim(line), key) == 0) {
            snprintf(out, n, "%s", ddio_trim(eq + 1));   /* the last one wins */
            found = 1;
        }
    }
    fclose(fp);
    return found && *out;
}

int ddio_secret_path(const char *given, char *out, size_t n)
{
    const char *env = getenv("DDIO_SECRET_FILE");
    if (given && *given) {
        snprintf(out, n, "%s", given);
        return 1;
    }
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return 1;
    }
    if (!ddio_config_value("secret_file", out, n))
        return 0;
    /* "~/..." in the file is the user's home, as a shell would have it */
    const char *home = getenv("HOME");
    if (out[0] == '~' && out[1] == '/' && home && *home) {
        char rest[4096];
        snprintf(rest, sizeof(rest), "%s", out + 1);
        snprintf(out, n, "%s%s", home, rest);
    }
    return 1;
}

/* ---- the secret file ------------------------------------------------------------ */

/* Ownership and permissions of the opened file (checked on the descriptor,
 * so they are the ones of what is read). */
static int secret_check_stat(int fd, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (fstat(fd, &st)) {
        int e = errno;
        snprintf(err, errlen, "secret file %s: %s", path, strerror(e));
        return -e;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "secret file %s is not a regular file: refused", path);
        return -EINVAL;
    }
    if (st.st_uid != geteuid()) {
        snprintf(err, errlen, "secret file %s is owned by uid %u, not by this user (uid %u): "
                 "refused", path, (unsigned)st.st_uid, (unsigned)geteuid());
        return -EPERM;
    }
    if (st.st_mode & 077) {
        snprintf(err, errlen, "secret file %s is accessible by group or others (mode %04o): "
                 "refused; make it private with chmod 600", path, (unsigned)(st.st_mode & 07777));
        return -EPERM;
    }
    return 0;
}

int ddio_secret_load(const char *path, struct ddio_secret *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof(*s));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "secret file %s: cannot open: %s", path, strerror(e));
        return -e;
    }
    int rc = secret_check_stat(fd, path, err, errlen);
    size_t len = 0;
    while (rc == 0 && len <= DDIO_SECRET_MAX) {
        uint8_t tmp[512];
        ssize_t k = read(fd, tmp, sizeof(tmp));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            rc = -errno;
            snprintf(err, errlen, "secret file %s: read: %s", path, strerror(-rc));
        } else if (k == 0) {
            break;
        } else if (len + (size_t)k > DDIO_SECRET_MAX) {
            len = DDIO_SECRET_MAX + 1;
        } else {
            memcpy(s->key + len, tmp, (size_t)k);
            len += (size_t)k;
        }
        OPENSSL_cleanse(tmp, sizeof(tmp));
    }
    close(fd);
    while (rc == 0 && len && len <= DDIO_SECRET_MAX && isspace(s->key[len - 1]))
        len--;                       /* `echo SECRET > file` adds a newline */
    if (rc == 0 && (len < DDIO_SECRET_MIN || len > DDIO_SECRET_MAX)) {
        snprintf(err, errlen, "secret file %s: a secret must be %u to %u bytes, not %s%zu "
                 "(make one with: head -c 32 /dev/urandom | base64 > FILE; chmod 600 FILE)",
                 path, DDIO_SECRET_MIN, DDIO_SECRET_MAX, len > DDIO_SECRET_MAX ? "over " : "",
                 len > DDIO_SECRET_MAX ? (size_t)DDIO_SECRET_MAX : len);
        rc = -EINVAL;
    }
    if (rc)
        ddio_secret_clear(s);
    else
        s->len = len;
    return rc;
}

void ddio_secret_clear(struct ddio_secret *s)
{
    OPENSSL_cleanse(s, sizeof(*s));
}

/* ---- proofs ------------------------------------------------------------------------ */

/* the kernel's CSPRNG (what OpenSSL's RAND_bytes seeds from; RAND_bytes
 * itself would load OpenSSL 3's providers, below) */
int ddio_auth_nonce(uint8_t nonce[DDIO_NONCE_LEN])
{
    ssize_t n = getrandom(nonce, DDIO_NONCE_LEN, 0);
    return n == (ssize_t)DDIO_NONCE_LEN ? 0 : -EIO;
}

/* HMAC-SHA-256 (RFC 2104) on libcrypto's SHA-256 functions. OpenSSL 3's
 * HMAC() first loads its providers and configuration: 10 ms of CPU in each
 * process's first call, paid by every rank at its first open (first
 * SHA256_Init..Final: 0.02 ms; measured on this project's VM). */
static void hmac_sha256(const uint8_t *key, size_t klen, const uint8_t *msg, size_t n,
                        uint8_t out[DDIO_MAC_LEN])
{
    uint8_t k[SHA256_CBLOCK] = {0}, pad[SHA256_CBLOCK], inner[SHA256_DIGEST_LENGTH];
    SHA256_CTX c;
    if (klen > sizeof(k)) {
        SHA256_Init(&c);
        SHA256_Update(&c, key, klen);
        SHA256_Final(k, &c);
    } else {
        memcpy(k, key, klen);
    }
    for (size_t i = 0; i < sizeof(k); i++)
        pad[i] = k[i] ^ 0x36;
    SHA256_Init(&c);
    SHA256_Update(&c, pad, sizeof(pad));
    SHA256_Update(&c, msg, n);
    SHA256_Final(inner, &c);
    for (size_t i = 0; i < sizeof(k); i++)
        pad[i] = k[i] ^ 0x5c;
    SHA256_Init(&c);
    SHA256_Update(&c, pad, sizeof(pad));
    SHA256_Update(&c, inner, sizeof(inner));
    SHA256_Final(out, &c);
    OPENSSL_cleanse(k, sizeof(k));
    OPENSSL_cleanse(pad, sizeof(pad));
    OPENSSL_cleanse(&c, sizeof(c));
}

int ddio_auth_mac(const struct ddio_secret *s, enum ddio_auth_role role,
                  const uint8_t id[DDIO_ID_LEN], const uint8_t snonce[DDIO_NONCE_LEN],
                  const uint8_t cnonce[DDIO_NONCE_LEN], uint8_t mac[DDIO_MAC_LEN])
{
    static const char *const roles[] = {"client", "server"};
    uint8_t msg[sizeof(AUTH_LABEL) + 8 + DDIO_ID_LEN + 2 * DDIO_NONCE_LEN];
    size_t n = 0;
    /* fixed-width fields: the label, a NUL, the role (NUL-padded to 7) */
    memcpy(msg, AUTH_LABEL, sizeof(AUTH_LABEL));
    n += sizeof(AUTH_LABEL);
    memset(msg + n, 0, 8);
    memcpy(msg + n, roles[role == DDIO_AUTH_SERVER], 6);
    n += 8;
    memcpy(msg + n, id, DDIO_ID_LEN);
    n += DDIO_ID_LEN;
    memcpy(msg + n, snonce, DDIO_NONCE_LEN);
    n += DDIO_NONCE_LEN;
    memcpy(msg + n, cnonce, DDIO_NONCE_LEN);
    n += DDIO_NONCE_LEN;
    hmac_sha256(s->key, s->len, msg, n, mac);
    return 0;
}

int ddio_auth_verify(const struct ddio_secret *s, enum ddio_auth_role role,
                     const uint8_t id[DDIO_ID_LEN], const uint8_t snonce[DDIO_NONCE_LEN],
                     const uint8_t cnonce[DDIO_NONCE_LEN], const uint8_t got[DDIO_MAC_LEN])
{
    uint8_t want[DDIO_MAC_LEN];
    if (ddio_auth_mac(s, role, id, snonce, cnonce, want))
        return 0;
    int ok = CRYPTO_memcmp(want, got, DDIO_MAC_LEN) == 0;
    OPENSSL_cleanse(want, sizeof(want));
    return ok;
}

/* ---- client handshake ---------------------------------------------------------------- */

static int transport_err(int rc, const char *addr, const char *what, char *err, size_t errlen)
{
    if (rc == -ETIMEDOUT)
        snprintf(err, errlen, "ddio server %s: no answer to %s before the deadline", addr, what);
    else if (rc == -EPROTONOSUPPORT)
        snprintf(err, errlen, "ddio server %s: %s: protocol version mismatch (this client "
                 "speaks version %u)", addr, what, DDIO_VERSION);
    else if (rc == -EPROTO)
        snprintf(err, errlen, "ddio server %s: %s: received something that is not a ddio "
                 "message (is a ddio server listening there?)", addr, what);
    else if (rc == -ECONNRESET || rc == -EPIPE)
        snprintf(err, errlen, "ddio server %s closed the connection during %s", addr, what);
    else
        snprintf(err, errlen, "ddio server %s: %s failed: %s", addr, what, strerror(-rc));
    return rc;
}

/* One reply of `type` to req; its payload (malloc'd) in *p, *n. A refusal
 * (non-zero status) becomes -status with the server's message in err. */
static int recv_reply(int fd, const char *addr, uint16_t type, uint64_t req, int64_t dl,
                      uint8_t **p, size_t *n, char *err, size_t errlen)
{
    struct ddio_hdr h;
    const char *what = ddio_type_name(type);
    *p = NULL;
    int rc = ddio_recv_hdr(fd, &h, dl);
    if (rc)
        return transport_err(rc, addr, what, err, errlen);
    if (h.type != (type | DDIO_REPLY) || h.req != req || h.len > HANDSHAKE_MAX_REPLY) {
        snprintf(err, errlen, "ddio server %s: unexpected %s (req %llu, %llu bytes) in "
                 "reply to %s", addr, ddio_type_name(h.type), (unsigned long long)h.req,
                 (unsigned long long)h.len, what);
        return -EPROTO;
    }
    uint8_t *b = malloc(h.len + 1);
    if (!b) {
        snprintf(err, errlen, "ddio: out of memory");
        return -ENOMEM;
    }
    rc = ddio_recv_all(fd, b, h.len, dl);
    if (rc) {
        free(b);
        return transport_err(rc, addr, what, err, errlen);
    }
    if (h.status) {
        char *msg = NULL;
        if (ddio_dec_err(b, h.len, &msg) == 0 && msg && *msg)
            snprintf(err, errlen, "%s", msg);
        else
            snprintf(err, errlen, "ddio server %s refused %s: %s", addr, what,
                     strerror(h.status));
        free(msg);
        free(b);
        return h.status > 0 ? -h.status : -EPROTO;
    }
    *p = b;
    *n = h.len;
    return 0;
}

int ddio_read_refusal(int fd, const char *addr, int64_t deadline_ms, char *err, size_t errlen)
{
    uint8_t *p = NULL;
    size_t n = 0;
    int rc = recv_reply(fd, addr, DDIO_T_HELLO, 1, deadline_ms, &p, &n, err, errlen);
    free(p);
    if (rc == 0) {
        snprintf(err, errlen, "ddio server %s answered a TLS handshake in the clear", addr);
        rc = -EPROTO;
    }
    return rc;
}

static int send_hello(int fd, const char *client_name, int64_t dl)
{
    struct ddio_hello m = {.pid = (uint32_t)getpid(), .client = (char *)client_name};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_hello(&w, &m);
    int rc = w.err ? w.err : ddio_send_msg(fd, DDIO_T_HELLO, 1, 0, w.p, w.len, NULL, 0, dl);
    ddio_wbuf_free(&w);
    return rc;
}

/* AUTH and the server's proof; hr is the decoded HELLO reply */
/* send w (freed) as request req of `type`, then take its reply as recv_reply */
static int exchange(int fd, const char *addr, uint16_t type, uint64_t req, struct ddio_wbuf *w,
                    int64_t dl, uint8_t **p, size_t *n, char *err, size_t errlen)
{
    int rc = w->err ? w->err : ddio_send_msg(fd, type, req, 0, w->p, w->len, NULL, 0, dl);
    ddio_wbuf_free(w);
    *p = NULL;
    if (rc)
        return transport_err(rc, addr, ddio_type_name(type), err, errlen);
    return recv_reply(fd, addr, type, req, dl, p, n, err, errlen);
}

static int authenticate(int fd, const char *addr, const struct ddio_secret *secret,
                        const struct ddio_hello_r *hr, int64_t dl, char *err, size_t errlen)
{
    struct ddio_auth a;
    struct ddio_auth_r ar;
    struct ddio_wbuf w;
    uint8_t *p;
    size_t n = 0;

    if (ddio_auth_nonce(a.nonce)
        || ddio_auth_mac(secret, DDIO_AUTH_CLIENT, hr->server_id, hr->nonce, a.nonce, a.mac)) {
        snprintf(err, errlen, "ddio: libcrypto failed to make a nonce or an HMAC");
        return -EIO;
    }
    ddio_wbuf_init(&w);
    ddio_enc_auth(&w, &a);
    int rc = exchange(fd, addr, DDIO_T_AUTH, 2, &w, dl, &p, &n, err, errlen);
    if (rc)
        return rc;
    rc = ddio_dec_auth_r(p, n, &ar);
    free(p);
    if (rc || !ddio_auth_verify(secret, DDIO_AUTH_SERVER, hr->server_id, hr->nonce, a.nonce,
                                ar.mac)) {
        snprintf(err, errlen, "ddio server %s did not prove that it holds this client's "
                 "secret (different secret file on the server?): refused", addr);
        return -EACCES;
    }
    return 0;
}

/* munged's socket: $DDIO_MUNGE_SOCKET, else DDIO_CONFIG's `munge_socket =`,
 * else NULL (libmunge's default) */
static const char *munge_socket(char *buf, size_t n)
{
    const char *e = getenv("DDIO_MUNGE_SOCKET");
    if (e && *e)
        return e;
    return ddio_config_value("munge_socket", buf, n) && *buf ? buf : NULL;
}

/* the uids whose server credentials a client accepts: root, its own, and
 * DDIO_MUNGE_SERVER_UID / DDIO_CONFIG's `munge_server_uid =` */
static int munge_server_ok(uint32_t uid)
{
    char v[32];
    const char *e = getenv("DDIO_MUNGE_SERVER_UID");
    if (uid == 0 || uid == (uint32_t)geteuid())
        return 1;
    if (e && *e)
        return strtoul(e, NULL, 10) == uid;
    return ddio_config_value("munge_server_uid", v, sizeof(v)) && strtoul(v, NULL, 10) == uid;
}

/* the server's answer: its credential over the same nonces, from a uid we trust */
static int munge_check_server(const char *sock, const char *addr, const char *cred,
                              const struct ddio_hello_r *hr, const uint8_t *cnonce, char *err,
                              size_t errlen)
{
    uint8_t want[DDIO_MUNGE_PAYLOAD_LEN];
    struct ddio_munge_id id;
    void *got;
    size_t n;
    char why[256];
    ddio_munge_payload(DDIO_MUNGE_SERVER, hr->server_id, hr->nonce, cnonce, want);
    int rc = ddio_munge_decode(sock, cred, &got, &n, &id, why, sizeof(why));
    int same = rc == 0 && n == sizeof(want) && memcmp(got, want, n) == 0;
    free(got);
    if (rc || !same || !munge_server_ok(id.uid)) {
        snprintf(err, errlen, "ddio server %s did not prove itself with MUNGE (%s): refused",
                 addr, rc ? why : !same ? "its credential is not for this connection"
                                   : "its uid is not root, yours or DDIO_MUNGE_SERVER_UID");
        return -EACCES;
    }
    return 0;
}

/* AUTH to a MUNGE server: our credential over both nonces, then its own */
static int munge_authenticate(int fd, const char *addr, const struct ddio_hello_r *hr,
                              int64_t dl, char *err, size_t errlen)
{
    char sbuf[512];
    const char *sock = munge_socket(sbuf, sizeof(sbuf));
    struct ddio_auth_munge a = {0};
    struct ddio_auth_munge_r ar = {0};
    uint8_t pay[DDIO_MUNGE_PAYLOAD_LEN], *p;
    size_t n = 0;
    char why[256];
    if (ddio_auth_nonce(a.nonce)) {
        snprintf(err, errlen, "ddio: cannot make a nonce");
        return -EIO;
    }
    ddio_munge_payload(DDIO_MUNGE_CLIENT, hr->server_id, hr->nonce, a.nonce, pay);
    int rc = ddio_munge_encode(sock, pay, sizeof(pay), 0, -1, &a.cred, why, sizeof(why));
    if (rc) {
        /* no credential, no way in: final, not a transport error to retry */
        snprintf(err, errlen, "ddio server %s authenticates users with MUNGE, and %s", addr, why);
        return -EACCES;
    }
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_auth_munge(&w, &a);
    free(a.cred);
    rc = exchange(fd, addr, DDIO_T_AUTH, 2, &w, dl, &p, &n, err, errlen);
    if (rc)
        return rc;
    rc = ddio_dec_auth_munge_r(p, n, &ar);
    free(p);
    if (rc) {
        snprintf(err, errlen, "ddio server %s: malformed AUTH reply", addr);
        return -EPROTO;
    }
    rc = munge_check_server(sock, addr, ar.cred, hr, a.nonce, err, errlen);
    free(ar.cred);
    return rc;
}

int ddio_handshake(int fd, const char *addr, const char *client_name,
                   const struct ddio_secret *secret, int64_t deadline_ms,
                   struct ddio_hello_r *hr, char *err, size_t errlen)
{
    uint8_t *p;
    size_t n = 0;
    memset(hr, 0, sizeof(*hr));
    int64_t t0 = ddio_now_us();
    int rc = send_hello(fd, client_name ? client_name : "", deadline_ms);
    if (rc)
        return transport_err(rc, addr, "HELLO", err, errlen);
    rc = recv_reply(fd, addr, DDIO_T_HELLO, 1, deadline_ms, &p, &n, err, errlen);
    ddio_dial_stages.hello += ddio_now_us() - t0;
    if (rc)
        return rc;
    rc = ddio_dec_hello_r(p, n, hr);
    free(p);
    if (rc) {
        snprintf(err, errlen, "ddio server %s: malformed HELLO reply", addr);
        return -EPROTO;
    }
    if (hr->flags & DDIO_SRV_AUTH_MUNGE) {
        t0 = ddio_now_us();
        rc = munge_authenticate(fd, addr, hr, deadline_ms, err, errlen);
        ddio_dial_stages.auth += ddio_now_us() - t0;
    } else if (!(hr->flags & DDIO_SRV_AUTH_REQUIRED) && secret) {
        snprintf(err, errlen, "ddio server %s does not authenticate (started with --insecure), "
                 "and this client has a secret: refused (unset DDIO_SECRET_FILE to talk to "
                 "an --insecure server)", addr);
        rc = -EACCES;
    } else if ((hr->flags & DDIO_SRV_AUTH_REQUIRED) && !secret) {
        snprintf(err, errlen, "ddio server %s requires authentication and no secret file is "
                 "set (DDIO_SECRET_FILE, the hint romio_ddio_secret_file, or secret_file = "
                 "in the DDIO_CONFIG file)", addr);
        rc = -EACCES;
    } else if (secret) {
        t0 = ddio_now_us();
        rc = authenticate(fd, addr, secret, hr, deadline_ms, err, errlen);
        ddio_dial_stages.auth += ddio_now_us() - t0;
    }
    if (rc) {
        free(hr->name);
        memset(hr, 0, sizeof(*hr));
    }
    return rc;
}

int ddio_act_as(int fd, const char *addr, uint64_t req, uint32_t uid, uint32_t gid,
                int64_t deadline_ms, char *err, size_t errlen)
{
    struct ddio_actas m = {.uid = uid, .gid = gid};
    struct ddio_wbuf w;
    uint8_t *p = NULL;
    size_t n = 0;
    ddio_wbuf_init(&w);
    ddio_enc_actas(&w, &m);
    int rc = exchange(fd, addr, DDIO_T_ACTAS, req, &w, deadline_ms, &p, &n, err, errlen);
    free(p);
    return rc;
}

int ddio_attach_ucx(int fd, const char *addr, uint64_t req, int64_t deadline_ms,
                    uint64_t *cookie, uint8_t **srv_addr, size_t *srv_len, char *err,
                    size_t errlen)
{
    *srv_addr = NULL;
    *srv_len = 0;
    int rc = ddio_send_msg(fd, DDIO_T_UCXADDR, req, 0, NULL, 0, NULL, 0, deadline_ms);
    if (rc)
        return transport_err(rc, addr, "UCXADDR", err, errlen);
    uint8_t *p = NULL;
    size_t n = 0;
    rc = recv_reply(fd, addr, DDIO_T_UCXADDR, req, deadline_ms, &p, &n, err, errlen);
    const uint8_t *a;
    uint32_t alen;
    if (rc == 0 && ddio_dec_ucxaddr_r(p, n, cookie, &a, &alen)) {
        snprintf(err, errlen, "ddio server %s: malformed UCXADDR reply", addr);
        rc = -EPROTO;
    }
    if (rc == 0 && !(*srv_addr = malloc(alen))) {
        snprintf(err, errlen, "ddio: out of memory");
        rc = -ENOMEM;
    }
    if (rc == 0) {
        memcpy(*srv_addr, a, alen);
        *srv_len = alen;
    }
    free(p);
    return rc;
}

int ddio_ucx_wanted(int fd, const struct ddio_hello_r *hr, int t, char *why, size_t n)
{
    why[0] = '\0';
    if (t == DDIO_XPORT_TCP)
        snprintf(why, n, "not attached: DDIO_TRANSPORT is tcp");
    if (ddio_tls_active(fd) && !ddio_same_host(fd)) {
        snprintf(why, n, "not attached: this connection runs TLS and UCX carries no "
                 "encryption; the server is on another host");
        return 0;
    }
    if (ddio_xport_resolve(t, fd, why, n) != DDIO_XPORT_UCX)
        return 0;
    if (!(hr->flags & DDIO_SRV_UCX)) {
        snprintf(why, n, "the server does not offer UCX (ddio-server --transport, or no UCX "
                 "there)");
        return 0;
    }
    return 1;
}

int ddio_ucx_attach_conn(int fd, const char *addr, uint64_t req, int64_t deadline_ms,
                         int own_ep, uint64_t *cookie, struct ddio_ucx_ep **ep, char *why,
                         size_t n)
{
    struct ddio_ucx *u;
    uint8_t *saddr = NULL;
    size_t slen;

    *ep = NULL;
    why[0] = '\0';
    int64_t t0 = ddio_now_us(), t1;
    u = ddio_ucx_client(why, n);
    ddio_dial_stages.ucx_init = (t1 = ddio_now_us()) - t0;
    if (!u)
        return 0;
    int rc = ddio_attach_ucx(fd, addr, req, deadline_ms, cookie, &saddr, &slen, why, n);
    ddio_dial_stages.ucxaddr = (t0 = ddio_now_us()) - t1;
    if (rc == -EOPNOTSUPP || rc == -EEXIST)
        return 0;       /* declined */
    if (rc)
        return rc;
    *ep = ddio_ucx_connect(u, saddr, slen, *cookie, own_ep, deadline_ms, why, n);
    ddio_dial_stages.endpoint = ddio_now_us() - t0;
    free(saddr);
    if (!*ep && ddio_now_ms() >= deadline_ms) {
        /* its UCX worker did not answer in time: a hung server, which the
         * connection's recovery (or failure) handles, not a call by TCP
         * that would wait for it all over again */
        size_t l = strlen(why);
        snprintf(why + l, n - l, " (ddio server %s: no UCX answer before the deadline)", addr);
        return -ETIMEDOUT;
    }
    return 0;
}
