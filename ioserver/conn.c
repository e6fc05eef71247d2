/* A TCP connection's life and its send side: references, kill, the
 * output queue with its writer thread and direct sends, and the
 * --max-inflight slots a queued reply frees. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "conn.h"
#include "ddio_tls.h"

#include <errno.h>
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "fault.h"

/* ---- connections ------------------------------------------------------------------ */

/* a queued outgoing message; the connection's writer thread sends it */
struct outmsg {
    struct outmsg *next;
    uint8_t hdr[DDIO_HDR_SIZE];
    uint8_t *payload;            /* malloc'd, owned */
    size_t plen;
    int64_t deadline_ms;
    int bounded;                 /* counted against the queue's byte cap */
    size_t sent;                 /* bytes of header + payload already sent */
};

/* A message of at most this many bytes is sent by the thread that queues it
 * when the connection's output is idle: a small reply (DONE, GET, a small
 * PUT, a metadata answer) then costs no wakeup of the writer thread, which
 * on a small VM costs more than the send. What the socket does not take at
 * once goes to the writer. A PUT of any size is sent from the block in
 * place instead (conn_send_iov): the socket's copy replaces the copy into
 * a message, so the engine thread does no more work than before. */
#define DIRECT_SEND_MAX 65536

void conn_ref(struct conn *c)
{
    atomic_fetch_add(&c->refs, 1);
}

static void free_queue(struct conn *c)
{
    while (c->qhead) {
        struct outmsg *m = c->qhead;
        c->qhead = m->next;
        free(m->payload);
        free(m);
    }
    c->qtail = NULL;
    c->qbytes = 0;
}

void conn_unref(struct conn *c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    free_queue(c);
    if (c->fd >= 0) {
        ddio_tls_drop(c->fd);
        close(c->fd);
    }
    free(c->scratch);
    pthread_cond_destroy(&c->cv);
    pthread_cond_destroy(&c->wcv);
    pthread_cond_destroy(&c->ocv);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* mark dead, shut the socket down (wakes the reader), drop queued output */
void conn_kill(struct conn *c, const char *why)
{
    pthread_mutex_lock(&c->mu);
    if (!c->dead) {
        c->dead = 1;
        shutdown(c->fd, SHUT_RDWR);   /* wakes the reader and the writer */
        DDIO_DEBUG("connection %" PRIu64 " (%s) closed: %s", c->id, c->peer, why);
    }
    pthread_cond_broadcast(&c->cv);
    pthread_cond_broadcast(&c->wcv);
    pthread_cond_broadcast(&c->ocv);
    pthread_mutex_unlock(&c->mu);
}

static int wait_space(struct conn *c, size_t plen, int64_t deadline_ms)
{
    while (!c->dead && c->qbytes > 0 && c->qbytes + plen > c->srv->queue_cap) {
        if (ddio_now_ms() >= deadline_ms)
            return -ETIMEDOUT;
        struct timespec ts = {.tv_sec = deadline_ms / 1000,
                              .tv_nsec = (deadline_ms % 1000) * 1000000};
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    return c->dead ? -ECONNRESET : 0;
}

/* Free the --max-inflight slot of w (or, w NULL, of a request of this type
 * and id), c->mu held. A request stops counting when its reply is queued, not
 * when its thread exits: a client that waits for each reply before sending the
 * next request must never be refused because a finished thread is still
 * unwinding. (A client reusing request ids can free slots early; the thread
 * count keeps its own hard cap, see work_spawn.) */
void release_slot(struct conn *c, struct work *w, uint16_t type, uint64_t req)
{
    for (struct work **pp = &c->held; *pp; pp = &(*pp)->next_held) {
        struct work *x = *pp;
        if (w ? x == w : x->h.req == req && x->h.type == type) {
            *pp = x->next_held;
            x->holding = 0;
            c->nheld--;
            return;
        }
    }
}

/* c->mu held: count w against --max-inflight, or 0 (too many) */
int hold_slot(struct conn *c, struct work *w)
{
    if (c->nheld >= (int)c->srv->cfg.max_inflight
        || c->workers >= 2 * (int)c->srv->cfg.max_inflight)
        return 0;
    c->nheld++;
    w->holding = 1;
    w->next_held = c->held;
    c->held = w;
    return 1;
}

/* a message to send: its header encoded, payload (may be NULL) taken over */
static struct outmsg *outmsg_new(struct conn *c, uint16_t type, uint64_t req, int32_t status,
                                 uint8_t *payload, size_t plen, int bounded, int64_t deadline_ms)
{
    struct outmsg *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    struct ddio_hdr h;
    ddio_hdr_init(&h, type, req, plen);
    h.status = status;
    h.epoch = member_epoch(&c->srv->member);
    ddio_hdr_encode(&h, m->hdr);
    m->payload = payload;
    m->plen = plen;
    m->deadline_ms = deadline_ms;
    m->bounded = bounded;
    return m;
}

/* c->mu held: m queued first (the rest of a message begun on the socket)
 * or last */
static void enqueue(struct conn *c, struct outmsg *m, int first)
{
    if (first) {
        m->next = c->qhead;
        c->qhead = m;
        if (!c->qtail)
            c->qtail = m;
    } else {
        if (c->qtail)
            c->qtail->next = m;
        else
            c->qhead = m;
        c->qtail = m;
    }
    if (m->bounded)
        c->qbytes += m->plen;
}

/* Send m on the caller's thread (c->mu held, output idle; unlocked on
 * return). c->writing keeps the writer and other senders off the socket
 * meanwhile; a remainder the socket did not take goes first in the queue. */
static int send_direct(struct conn *c, struct outmsg *m)
{
    c->writing = 1;
    pthread_mutex_unlock(&c->mu);
    struct iovec iov[2] = {{m->hdr, DDIO_HDR_SIZE}, {m->payload, m->plen}};
    int cnt = m->plen ? 2 : 1;
    size_t cap = fault_cut(FAULT_DIRECT_SEND, DDIO_HDR_SIZE, m->plen);   /* tests */
    if (cap < DDIO_HDR_SIZE + m->plen) {
        iov[0].iov_len = cap < DDIO_HDR_SIZE ? cap : DDIO_HDR_SIZE;
        iov[1].iov_len = cap - iov[0].iov_len;
        cnt = iov[1].iov_len ? 2 : 1;
    }
    ssize_t k = ddio_sendv_some(c->fd, iov, cnt);   /* plain or TLS */
    int err = k < 0 ? (int)-k : 0;
    pthread_mutex_lock(&c->mu);
    c->writing = 0;
    if (!err && (size_t)(k > 0 ? k : 0) < DDIO_HDR_SIZE + m->plen) {
        m->sent = k > 0 ? (size_t)k : 0;
        enqueue(c, m, 1);
        m = NULL;
    }
    if (c->qhead)                 /* the writer: the remainder, or what came meanwhile */
        pthread_cond_signal(&c->ocv);
    if (c->flushers)
        pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (m) {
        free(m->payload);
        free(m);
    }
    if (err) {
        conn_kill(c, "send failed");
        return -ECONNRESET;
    }
    return 0;
}

/* Queue a message. payload (may be NULL) is taken over and freed.
 * bounded = 1: wait (until deadline_ms) while the connection's queue holds
 * more than queue_cap bytes. 0, -ETIMEDOUT, -ECONNRESET (dead). */
int conn_send(struct conn *c, uint16_t type, uint64_t req, int32_t status,
                     uint8_t *payload, size_t plen, int bounded, int64_t deadline_ms)
{
    struct outmsg *m = outmsg_new(c, type, req, status, payload, plen, bounded, deadline_ms);
    if (!m) {
        free(payload);
        return -ENOMEM;
    }
    pthread_mutex_lock(&c->mu);
    int rc = bounded ? wait_space(c, plen, deadline_ms) : (c->dead ? -ECONNRESET : 0);
    if ((type & DDIO_REPLY) && c->held)
        release_slot(c, NULL, (uint16_t)(type & ~DDIO_REPLY), req);
    if (rc == 0 && !c->qhead && !c->writing && DDIO_HDR_SIZE + plen <= DIRECT_SEND_MAX)
        return send_direct(c, m);   /* unlocks */
    if (rc == 0) {
        enqueue(c, m, 0);
        pthread_cond_signal(&c->ocv);
    }
    pthread_mutex_unlock(&c->mu);
    if (rc) {
        free(payload);
        free(m);
    }
    return rc;
}

/* the bytes of iov[0..cnt) from byte skip on, into dst */
static void iov_copy(uint8_t *dst, const struct iovec *iov, int cnt, size_t skip)
{
    for (int i = 0; i < cnt; i++) {
        size_t l = iov[i].iov_len;
        if (skip >= l) {
            skip -= l;
            continue;
        }
        memcpy(dst, (const uint8_t *)iov[i].iov_base + skip, l - skip);
        dst += l - skip;
        skip = 0;
    }
}

/* iov trimmed to its first cap bytes (a test's cut send); its new count */
static int iov_trim(struct iovec *iov, int cnt, size_t cap)
{
    for (int i = 0; i < cnt; i++) {
        if (iov[i].iov_len >= cap) {
            iov[i].iov_len = cap;
            return cap ? i + 1 : i;
        }
        cap -= iov[i].iov_len;
    }
    return cnt;
}

/* Send iov[0..cnt) (plen bytes in all) on the caller's thread, behind the
 * header, when the output is idle (c->mu held; unlocked on return). What
 * the socket did not take is copied into m's payload and goes first in the
 * queue; the caller's bytes are not needed once this returns. */
static int send_iov_direct(struct conn *c, struct outmsg *m, const struct iovec *iov, int cnt)
{
    struct iovec v[1 + CONN_IOV_MAX];
    c->writing = 1;
    pthread_mutex_unlock(&c->mu);
    v[0] = (struct iovec){m->hdr, DDIO_HDR_SIZE};
    memcpy(v + 1, iov, (size_t)cnt * sizeof(*iov));
    int n = iov_trim(v, 1 + cnt, fault_cut(FAULT_DIRECT_SEND, DDIO_HDR_SIZE, m->plen));
    ssize_t k = n ? ddio_sendv_some(c->fd, v, n) : 0;     /* plain or TLS */
    int err = k < 0 ? (int)-k : 0;
    size_t sent = k > 0 ? (size_t)k : 0;
    if (!err && sent < DDIO_HDR_SIZE + m->plen) {
        /* the payload's part already sent is never read: only the rest is copied */
        size_t skip = sent > DDIO_HDR_SIZE ? sent - DDIO_HDR_SIZE : 0;
        m->payload = malloc(m->plen);
        if (m->payload)
            iov_copy(m->payload + skip, iov, cnt, skip);
        else
            err = ENOMEM;
        m->sent = sent;
    }
    pthread_mutex_lock(&c->mu);
    c->writing = 0;
    if (!err && m->payload) {
        enqueue(c, m, 1);
        m = NULL;
    }
    if (c->qhead)
        pthread_cond_signal(&c->ocv);
    if (c->flushers)
        pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    if (m)
        free(m);
    if (err) {                    /* a message cut short: the stream is lost */
        conn_kill(c, err == ENOMEM ? "out of memory for a send" : "send failed");
        return err == ENOMEM ? -ENOMEM : -ECONNRESET;
    }
    return 0;
}

int conn_send_iov(struct conn *c, uint16_t type, uint64_t req, const struct iovec *iov, int cnt,
                  int bounded, int64_t deadline_ms)
{
    size_t plen = 0;
    for (int i = 0; i < cnt; i++)
        plen += iov[i].iov_len;
    struct outmsg *m = cnt <= CONN_IOV_MAX
        ? outmsg_new(c, type, req, 0, NULL, plen, bounded, deadline_ms) : NULL;
    if (!m)
        return -ENOMEM;
    pthread_mutex_lock(&c->mu);
    int rc = bounded ? wait_space(c, plen, deadline_ms) : (c->dead ? -ECONNRESET : 0);
    if (rc == 0 && !c->qhead && !c->writing)
        return send_iov_direct(c, m, iov, cnt);     /* unlocks */
    pthread_mutex_unlock(&c->mu);
    if (rc) {
        free(m);
        return rc;
    }
    /* the output is busy: a copy, queued behind what is there (unlocked
     * meanwhile, so the queue is looked at again) */
    m->payload = malloc(plen ? plen : 1);
    if (!m->payload) {
        free(m);
        return -ENOMEM;
    }
    iov_copy(m->payload, iov, cnt, 0);
    pthread_mutex_lock(&c->mu);
    if (c->dead) {
        pthread_mutex_unlock(&c->mu);
        free(m->payload);
        free(m);
        return -ECONNRESET;
    }
    enqueue(c, m, 0);
    pthread_cond_signal(&c->ocv);
    pthread_mutex_unlock(&c->mu);
    return 0;
}

/* A heartbeat is only worth sending on an idle connection: anything still
 * queued reaches the client first and proves progress by itself, and
 * skipping keeps a client that stopped reading from collecting them. */
int conn_send_progress(struct conn *c, uint64_t req, int64_t deadline_ms)
{
    pthread_mutex_lock(&c->mu);
    int idle = !c->dead && !c->qhead;
    pthread_mutex_unlock(&c->mu);
    if (!idle)
        return 0;
    return conn_send(c, DDIO_T_PROGRESS, req, 0, NULL, 0, 0, deadline_ms);
}

/* ---- writer thread -------------------------------------------------------------------- */

void *writer_main(void *arg)
{
    struct conn *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while ((!c->qhead || c->writing) && !c->dead)   /* writing: a direct send */
            pthread_cond_wait(&c->ocv, &c->mu);
        if (c->dead)
            break;
        struct outmsg *m = c->qhead;
        c->qhead = m->next;
        if (!c->qhead)
            c->qtail = NULL;
        c->writing = 1;
        pthread_mutex_unlock(&c->mu);
        /* from where a direct send stopped (ddio_sendv_all skips empty pieces) */
        size_t h = m->sent < DDIO_HDR_SIZE ? m->sent : DDIO_HDR_SIZE, p = m->sent - h;
        struct iovec iov[2] = {{m->hdr + h, DDIO_HDR_SIZE - h}, {NULL, 0}};
        if (m->plen > p)
            iov[1] = (struct iovec){m->payload + p, m->plen - p};
        int rc = ddio_sendv_all(c->fd, iov, 2, m->deadline_ms);
        pthread_mutex_lock(&c->mu);
        c->writing = 0;
        if (m->bounded)
            c->qbytes -= m->plen;
        pthread_cond_broadcast(&c->cv);
        free(m->payload);
        free(m);
        if (rc) {
            pthread_mutex_unlock(&c->mu);
            conn_kill(c, rc == -ETIMEDOUT ? "client stopped reading (send timeout)"
                                          : "send failed");
            pthread_mutex_lock(&c->mu);
            break;
        }
    }
    free_queue(c);
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Wait (bounded) until everything queued went out: a refusal's reply must
 * reach the client before the connection closes. */
void conn_flush(struct conn *c, int64_t deadline_ms)
{
    pthread_mutex_lock(&c->mu);
    c->flushers++;
    while (!c->dead && (c->qhead || c->writing) && ddio_now_ms() < deadline_ms) {
        struct timespec ts = {.tv_sec = deadline_ms / 1000,
                              .tv_nsec = (deadline_ms % 1000) * 1000000};
        pthread_cond_timedwait(&c->cv, &c->mu, &ts);
    }
    c->flushers--;
    pthread_mutex_unlock(&c->mu);
}

void peer_name(int fd, char *out, size_t n)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (getpeername(fd, (struct sockaddr *)&ss, &len) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
            port = ntohs(a->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
            port = ntohs(a->sin6_port);
        }
    }
    snprintf(out, n, "%s:%d", host, port);
}
