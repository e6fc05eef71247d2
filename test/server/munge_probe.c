/* A hostile client for the MUNGE tests (run-identity-tests.sh), no MPI:
 *   munge_probe HOST:PORT MODE
 * connects, says HELLO and sends an AUTH to a server running --auth munge,
 * with a credential from $DDIO_MUNGE_SOCKET that MODE makes good or bad:
 *   good      a fresh credential over this connection's nonces
 *   tamper    the same with one character of it changed
 *   replay    a good credential sent on a first connection, then again on
 *             a second one
 *   stale     a good credential of 1 s time-to-live, sent after 2 s
 *   other     a credential over another connection's nonces
 *   hmac      a shared-secret AUTH (an HMAC), no credential
 *   actas     a good credential, then ACTAS uid 4202 gid 4202 (what a
 *             trusted mount does)
 * Prints "accepted uid U" (the server's log tells its own story) or
 * "refused: MESSAGE" for the last AUTH sent. Exit 0 accepted, 1 refused,
 * 2 when the probe itself failed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddio_auth.h"
#include "ddio_munge.h"
#include "ddio_net.h"
#include "ddio_proto.h"

#define DL() (ddio_now_ms() + 10000)

static const char *g_sock;

/* one reply of type|R to req: status, payload (malloc'd) */
static int reply(int fd, uint16_t type, uint64_t req, uint8_t **p, size_t *n)
{
    struct ddio_hdr h;
    if (ddio_recv_hdr(fd, &h, DL()) || h.type != (type | DDIO_REPLY) || h.req != req
        || h.len > 65536)
        return -EPROTO;
    *p = malloc(h.len + 1);
    *n = h.len;
    if (!*p || ddio_recv_all(fd, *p, h.len, DL()))
        return -EPROTO;
    return (int)h.status;
}

/* connect and HELLO: the fd and the server's HELLO reply, or -1 */
static int hello(const char *host, int port, struct ddio_hello_r *hr)
{
    int fd = ddio_connect(host, port, DL());
    struct ddio_hello m = {.pid = (uint32_t)getpid(),
                           .client = "munge_probe"};
    struct ddio_wbuf w;
    uint8_t *p = NULL;
    size_t n;
    if (fd < 0)
        return -1;
    ddio_wbuf_init(&w);
    ddio_enc_hello(&w, &m);
    int rc = ddio_send_msg(fd, DDIO_T_HELLO, 1, 0, w.p, w.len, NULL, 0, DL());
    ddio_wbuf_free(&w);
    if (rc || reply(fd, DDIO_T_HELLO, 1, &p, &n) != 0 || ddio_dec_hello_r(p, n, hr)) {
        free(p);
        close(fd);
        return -1;
    }
    free(p);
    return fd;
}

static char *credential(const struct ddio_hello_r *hr, const uint8_t *cnonce, int ttl)
{
    uint8_t pay[DDIO_MUNGE_PAYLOAD_LEN];
    char *cred = NULL, err[256];
    ddio_munge_payload(DDIO_MUNGE_CLIENT, hr->server_id, hr->nonce, cnonce, pay);
    if (ddio_munge_encode(g_sock, pay, sizeof(pay), ttl, -1, &cred, err, sizeof(err))) {
        fprintf(stderr, "munge_probe: %s\n", err);
        exit(2);
    }
    return cred;
}

/* send an AUTH payload, report the answer: 0 accepted, 1 refused */
static int auth(int fd, struct ddio_wbuf *w)
{
    uint8_t *p = NULL;
    size_t n = 0;
    char *msg = NULL;
    int rc = w->err ? -EPROTO : ddio_send_msg(fd, DDIO_T_AUTH, 2, 0, w->p, w->len, NULL, 0, DL());
    if (rc == 0)
        rc = reply(fd, DDIO_T_AUTH, 2, &p, &n);
    if (rc == 0) {
        printf("accepted\n");
    } else if (rc > 0 && ddio_dec_err(p, n, &msg) == 0) {
        printf("refused: %s\n", msg ? msg : "");
        rc = 1;
    } else {
        printf("refused: connection closed (%d)\n", rc);
        rc = 1;
    }
    free(msg);
    free(p);
    return rc;
}

static int send_cred(int fd, const uint8_t *nonce, char *cred)
{
    struct ddio_auth_munge a = {.cred = cred};
    struct ddio_wbuf w;
    memcpy(a.nonce, nonce, DDIO_NONCE_LEN);
    ddio_wbuf_init(&w);
    ddio_enc_auth_munge(&w, &a);
    int rc = auth(fd, &w);
    ddio_wbuf_free(&w);
    return rc;
}

int main(int argc, char **argv)
{
    char host[256];
    int port;
    struct ddio_hello_r hr, hr2;
    uint8_t nonce[DDIO_NONCE_LEN] = {1, 2, 3};
    if (argc != 3 || ddio_parse_hostport(argv[1], host, sizeof(host), &port)) {
        fprintf(stderr, "usage: munge_probe HOST:PORT good|tamper|replay|stale|other|hmac|actas\n");
        return 2;
    }
    const char *mode = argv[2];
    g_sock = getenv("DDIO_MUNGE_SOCKET");
    int fd = hello(host, port, &hr);
    if (fd < 0 || !(hr.flags & DDIO_SRV_AUTH_MUNGE)) {
        fprintf(stderr, "munge_probe: no MUNGE server at %s\n", argv[1]);
        return 2;
    }
    if (!strcmp(mode, "hmac")) {
        struct ddio_auth a;
        memset(&a, 0, sizeof(a));
        struct ddio_wbuf w;
        ddio_wbuf_init(&w);
        ddio_enc_auth(&w, &a);
        int rc = auth(fd, &w);
        ddio_wbuf_free(&w);
        return rc;
    }
    char *cred = credential(&hr, nonce, !strcmp(mode, "stale") ? 1 : 0);
    if (!strcmp(mode, "tamper"))
        cred[strlen(cred) / 2] = cred[strlen(cred) / 2] == 'A' ? 'B' : 'A';
    if (!strcmp(mode, "stale"))
        sleep(2);
    if (!strcmp(mode, "replay") || !strcmp(mode, "other")) {
        if (!strcmp(mode, "replay") && send_cred(fd, nonce, cred) != 0) {
            fprintf(stderr, "munge_probe: the first, good AUTH was refused\n");
            return 2;
        }
        close(fd);
        if ((fd = hello(host, port, &hr2)) < 0)
            return 2;
    }
    int rc = send_cred(fd, nonce, cred);
    if (rc || strcmp(mode, "actas"))
        return rc;
    char err[512];
    rc = ddio_act_as(fd, argv[1], 3, 4202, 4202, DL(), err, sizeof(err));
    printf(rc ? "actas refused: %s\n" : "actas accepted\n", err);
    return rc ? 1 : 0;
}
