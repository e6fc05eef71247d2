/* Admission: which connections the server keeps and what they may send
 * before they authenticate. A connection is pending (only HELLO, then AUTH,
 * within --auth-timeout; the oldest is evicted when --max-unauth newer ones
 * wait), then authenticated; over --max-connections it is refused at once. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "admit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "identity.h"
#include "reply.h"
#include "stats.h"
#include "ucx.h"

#define REFUSE_SEND_MS 100

/* ---- authentication state ------------------------------------------------------------ */

/* the connection no longer counts against --max-unauth */
void pending_drop_locked(struct server *srv, struct conn *c)
{
    if (c->pending) {
        c->pending = 0;
        srv->npending--;
    }
}

/* 0, or -EBUSY when the connection was just evicted (it closes) */
static int auth_done(struct conn *c)
{
    pthread_mutex_lock(&c->srv->mu);
    int evicted = atomic_load(&c->evicted);
    if (!evicted) {
        pending_drop_locked(c->srv, c);
        atomic_store(&c->authed, 1);
    }
    pthread_mutex_unlock(&c->srv->mu);
    return evicted ? -EBUSY : 0;
}

int64_t auth_deadline(const struct conn *c)
{
    return c->born_ms + (int64_t)c->srv->cfg.auth_timeout_s * 1000;
}

/* deadline for the rest of a message: before AUTH, the authentication deadline */
int64_t recv_deadline(const struct conn *c)
{
    return atomic_load(&c->authed) ? ddio_now_ms() + PAYLOAD_TIMEOUT_MS : auth_deadline(c);
}

int on_hello(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_hello m = {0};
    if (ddio_dec_hello(p, h->len, &m))
        return bad_payload(c, h);
    snprintf(c->peer + strlen(c->peer), sizeof(c->peer) - strlen(c->peer), " pid %u",
             m.pid);
    free(m.client);
    struct server *srv = c->srv;
    struct ddio_hello_r r = {.ndisks = (uint32_t)srv->ndisks,
                             .flags = (srv->cfg.insecure ? 0 : DDIO_SRV_AUTH_REQUIRED)
                                      | (srv->cfg.munge ? DDIO_SRV_AUTH_MUNGE : 0)
                                      | (ucx_offered(srv) ? DDIO_SRV_UCX | DDIO_SRV_UCX_EP : 0),
                             .block_size = srv->cfg.block_size, .name = srv->name};
    memcpy(r.server_id, srv->store.id, DDIO_ID_LEN);
    if (ddio_auth_nonce(c->snonce)) {
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EIO, "cannot make a nonce (libcrypto)");
        return -EIO;
    }
    memcpy(r.nonce, c->snonce, DDIO_NONCE_LEN);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_hello_r(&w, &r);
    c->hello = 1;
    if (srv->cfg.insecure && auth_done(c)) {
        ddio_wbuf_free(&w);
        return -EBUSY;
    }
    return reply_w(c, h, &w);
}

/* AUTH under --auth munge: the client's credential proves its uid and gid */
static int on_auth_munge(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_auth_munge m;
    struct ddio_auth_munge_r r = {0};
    char why[320];
    if (ddio_dec_auth_munge(p, h->len, &m)) {
        stats_bump(&c->srv->stats, &c->srv->stats.auth_refused);
        DDIO_WARN("connection %" PRIu64 " from %s refused: its AUTH is not a MUNGE credential",
                  c->id, c->peer);
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EACCES, "this server proves users with "
                      "MUNGE (--auth munge) and this client sent no MUNGE credential");
        return -EACCES;
    }
    int rc = identity_verify(c, &m, why, sizeof(why));
    if (rc == 0)
        rc = identity_proof(c, m.nonce, &r.cred, why, sizeof(why));
    free(m.cred);
    if (rc) {
        stats_bump(&c->srv->stats, &c->srv->stats.auth_refused);
        DDIO_WARN("connection %" PRIu64 " from %s refused: %s", c->id, c->peer, why);
        conn_send_err(c, h->type | DDIO_REPLY, h->req, rc == -EIO ? EIO : EACCES,
                      "MUNGE authentication failed: %s", why);
        free(r.cred);
        return rc;
    }
    if (auth_done(c)) {
        free(r.cred);
        return -EBUSY;
    }
    DDIO_INFO("connection %" PRIu64 " from %s authenticated as uid %u gid %u (MUNGE)%s", c->id,
              c->peer, c->who.uid, c->who.gid, c->who.squashed ? ", root squashed" : "");
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_auth_munge_r(&w, &r);
    free(r.cred);
    return reply_w(c, h, &w);
}

/* AUTH: check the client's proof over both nonces, answer with ours */
int on_auth(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct server *srv = c->srv;
    struct ddio_auth m;
    struct ddio_auth_r r;
    if (atomic_load(&c->authed)) {
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EPROTO, "AUTH on an authenticated "
                      "connection");
        return -EPROTO;
    }
    if (srv->cfg.munge)
        return on_auth_munge(c, h, p);
    if (ddio_dec_auth(p, h->len, &m))
        return bad_payload(c, h);
    if (!ddio_auth_verify(&srv->secret, DDIO_AUTH_CLIENT, srv->store.id, c->snonce, m.nonce,
                          m.mac)) {
        stats_bump(&srv->stats, &srv->stats.auth_refused);
        DDIO_WARN("connection %" PRIu64 " from %s refused: authentication failed (the client "
                  "does not hold this server's secret, or replayed an old AUTH)", c->id, c->peer);
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EACCES, "authentication failed: this "
                      "client does not hold the server's secret (check DDIO_SECRET_FILE)");
        return -EACCES;
    }
    if (ddio_auth_mac(&srv->secret, DDIO_AUTH_SERVER, srv->store.id, c->snonce, m.nonce, r.mac)) {
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EIO, "cannot compute HMAC (libcrypto)");
        return -EIO;
    }
    if (auth_done(c))
        return -EBUSY;            /* the reader sends the eviction notice */
    DDIO_INFO("connection %" PRIu64 " from %s authenticated", c->id, c->peer);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_auth_r(&w, &r);
    return reply_w(c, h, &w);
}

/* ACTAS: a trusted mount acts for one of its users on this connection */
int on_actas(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_actas m;
    char why[320];
    if (ddio_dec_actas(p, h->len, &m))
        return bad_payload(c, h);
    if (identity_act_as(c, &m, why, sizeof(why))) {
        stats_bump(&c->srv->stats, &c->srv->stats.auth_refused);
        DDIO_WARN("connection %" PRIu64 " from %s: %s", c->id, c->peer, why);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EACCES, "%s", why), 0;
    }
    DDIO_INFO("connection %" PRIu64 " from %s acts for uid %u gid %u (mount)%s", c->id,
              c->peer, c->who.uid, c->who.gid, c->who.squashed ? ", root squashed" : "");
    return reply_ok(c, h);
}

/* anything but HELLO/AUTH before authentication: refused, logged, closed */
int refuse_unauth(struct conn *c, const struct ddio_hdr *h)
{
    const char *what = ddio_type_name(h->type);
    DDIO_WARN("connection %" PRIu64 " from %s refused: %s before authentication", c->id,
              c->peer, what);
    conn_send_err(c, h->type | DDIO_REPLY, h->req, EACCES, "%s refused: not authenticated "
                  "(AUTH first)", what);
    return -EACCES;
}

/* Closing a connection that has not authenticated: the refusal goes where
 * its handshake waits for a reply (HELLO's req 1, AUTH's req 2). */
void refuse_pending(struct conn *c, int err, const char *why)
{
    DDIO_WARN("connection %" PRIu64 " from %s closed: %s", c->id, c->peer, why);
    conn_send_err(c, (c->hello ? DDIO_T_AUTH : DDIO_T_HELLO) | DDIO_REPLY, c->hello ? 2 : 1,
                  err, "connection closed: %s", why);
    conn_flush(c, ddio_now_ms() + FLUSH_TIMEOUT_MS);
}

/* Over --max-connections: say so in place of the HELLO reply (the client's
 * first request is HELLO, req 1), then close. Whatever the client already
 * sent is read first, so the close does not reset the refusal away. */
static void refuse_conn(struct server *srv, int fd, uint64_t nrefused)
{
    char msg[512], peer[96];
    peer_name(fd, peer, sizeof(peer));
    snprintf(msg, sizeof(msg), "server %s: too many connections (limit %u, "
             "--max-connections); try again later", srv->name, srv->cfg.max_conns);
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_err(&w, msg);
    if (!w.err)
        ddio_send_msg(fd, DDIO_T_HELLO | DDIO_REPLY, 1, EBUSY, w.p, w.len, NULL, 0,
                      ddio_now_ms() + REFUSE_SEND_MS);
    ddio_wbuf_free(&w);
    shutdown(fd, SHUT_WR);
    char sink[512];
    while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
        ;
    close(fd);
    if (nrefused == 1 || nrefused % 100 == 0)   /* a flood must not flood the log */
        DDIO_WARN("connection from %s refused: %u connections open (--max-connections); "
                  "%" PRIu64 " refused so far", peer, srv->cfg.max_conns, nrefused);
}

/* Over --max-connections: refuse fd (and close it); 1 if it was refused. */
int admit_refuse_full(struct server *srv, int fd)
{
    pthread_mutex_lock(&srv->mu);
    if (srv->nconns < (int)srv->cfg.max_conns) {
        pthread_mutex_unlock(&srv->mu);
        return 0;
    }
    uint64_t k = ++srv->refused;
    pthread_mutex_unlock(&srv->mu);
    refuse_conn(srv, fd, k);
    return 1;
}

/* the oldest connection still authenticating (the list is newest first) */
static struct conn *oldest_pending_locked(struct server *srv)
{
    struct conn *old = NULL;
    for (struct conn *c = srv->conns; c; c = c->next)
        if (c->pending)
            old = c;
    return old;
}

/* c starts pending (srv->mu held, c not yet on the list): at --max-unauth
 * the oldest pending connection makes room, and c's authentication
 * deadline starts now. */
void admit_pending_locked(struct server *srv, struct conn *c)
{
    struct conn *victim = NULL;
    if (srv->npending >= (int)srv->cfg.max_unauth && (victim = oldest_pending_locked(srv))) {
        pending_drop_locked(srv, victim);
        atomic_store(&victim->evicted, 1);   /* under srv->mu: auth_done checks it */
        shutdown(victim->fd, SHUT_RD);       /* its reader sends the notice, closes */
    }
    c->born_ms = ddio_now_ms();
    c->pending = 1;
    srv->npending++;
}
