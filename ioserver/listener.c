/* The listener: bind, accept connections (admission first), and the
 * connections' part of stopping: drain on SIGTERM, then drop them all.
 * A connection itself is conn.c (send side), tcp.c (its endpoint),
 * reader.c (its reader thread) and the modules the reader dispatches to. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "listener.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "admit.h"
#include "conn.h"
#include "ddio_log.h"
#include "ddio_net.h"
#include "engine.h"
#include "reader.h"
#include "tcp.h"

enum { DRAIN_REPORT_MS = 2000 };   /* a drain this long says what holds it */

/* ---- listener ----------------------------------------------------------------------------- */

/* Port "auto": a free port below the kernel's ephemeral range. A server
 * restarted on the port it had cannot then find it taken meanwhile by
 * some connection's local port or by another program's port-0 listener
 * (an MPI job's, which then receives our clients' reconnections). */
static int listen_auto(const char *host, int *bound_port)
{
    enum { TRIES = 200 };
    int lo = 32768;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (f) {
        if (fscanf(f, "%d", &lo) != 1)
            lo = 32768;
        fclose(f);
    }
    int first = lo / 2 > 1024 ? lo / 2 : 1024;
    if (lo - first < 256)              /* no room below: any free port */
        return ddio_listen(host, 0, bound_port);
    unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL) ^ (unsigned)clock();
    int fd = -EADDRINUSE;
    for (int i = 0; i < TRIES && fd == -EADDRINUSE; i++)
        fd = ddio_listen(host, first + (int)(rand_r(&seed) % (unsigned)(lo - first)), bound_port);
    return fd;
}

int listener_open(struct server *srv, char *err, size_t errlen)
{
    int port = 0, want = srv->cfg.listen_port;
    int fd = want == LISTEN_PORT_AUTO ? listen_auto(srv->cfg.listen_host, &port)
                                      : ddio_listen(srv->cfg.listen_host, want, &port);
    if (fd < 0) {
        if (want == LISTEN_PORT_AUTO)
            snprintf(err, errlen, "listen on %s:auto: %s", srv->cfg.listen_host, strerror(-fd));
        else
            snprintf(err, errlen, "listen on %s:%d: %s", srv->cfg.listen_host, want,
                     strerror(-fd));
        return fd;
    }
    srv->lfd = fd;
    srv->port = port;
    if (strchr(srv->cfg.listen_host, ':'))
        snprintf(srv->name, sizeof(srv->name), "[%s]:%d", srv->cfg.listen_host, port);
    else
        snprintf(srv->name, sizeof(srv->name), "%s:%d", srv->cfg.listen_host, port);
    return 0;
}

/* the writer, then the reader, which owns the connection from then on */
static void start_threads(struct conn *c)
{
    if (pthread_create(&c->writer, NULL, writer_main, c) == 0)
        c->writer_started = 1;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (!c->writer_started || pthread_create(&t, &at, reader_main, c) != 0) {
        DDIO_ERR("connection %" PRIu64 ": cannot start threads", c->id);
        reader_teardown(c);
    }
    pthread_attr_destroy(&at);
}

static void start_conn(struct server *srv, int fd)
{
    if (admit_refuse_full(srv, fd))
        return;
    struct conn *c = conn_new(srv, fd);
    if (!c) {
        close(fd);
        return;
    }
    pthread_mutex_lock(&srv->mu);
    admit_pending_locked(srv, c);   /* before c is listed: c is not the one evicted */
    c->id = ++srv->next_conn_id;
    c->next = srv->conns;
    srv->conns = c;
    srv->nconns++;
    pthread_mutex_unlock(&srv->mu);
    stats_conn(&srv->stats, 1);
    if (srv->cfg.insecure)
        DDIO_WARN("connection %" PRIu64 " from %s accepted WITHOUT authentication "
                  "(--insecure): it may read and write every file", c->id, c->peer);
    else
        DDIO_INFO("connection %" PRIu64 " from %s", c->id, c->peer);
    start_threads(c);
}

void listener_serve(struct server *srv)
{
    while (!atomic_load(&srv->stopping)) {
        struct pollfd pf = {srv->lfd, POLLIN, 0};
        int n = poll(&pf, 1, 250);
        if (n <= 0)
            continue;
        int fd = accept4(srv->lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
                DDIO_WARN("accept: %s", strerror(errno));
            if (errno == EMFILE || errno == ENFILE)
                usleep(100000);   /* let connections close before retrying */
            continue;
        }
        ddio_nodelay(fd);
        /* a vanished client's handles (and the opens, fences and
         * in-doubt marks they hold) go within ~30 s, not hours */
        ddio_keepalive(fd, 10, 30);
        start_conn(srv, fd);
    }
}

/* c->mu held: a call in flight or output queued (what a drain waits for) */
static int conn_busy_locked(const struct conn *c)
{
    return !c->dead && (c->workers > c->idle || c->qhead || c->writing);
}

static int busy_conns(struct server *srv)
{
    int busy = 0;
    pthread_mutex_lock(&srv->mu);
    for (struct conn *c = srv->conns; c; c = c->next) {
        pthread_mutex_lock(&c->mu);
        busy += conn_busy_locked(c);
        pthread_mutex_unlock(&c->mu);
    }
    pthread_mutex_unlock(&srv->mu);
    return busy;
}

/* what holds a drain, in the log: each busy connection (its threads, its
 * requests in flight, its output) and the engine's collectives. An
 * operator whose SIGTERM takes long sees who it waits for. */
static void report_busy(struct server *srv, int64_t waited_ms)
{
    DDIO_WARN("stopping: still waiting after %" PRId64 " ms for:", waited_ms);
    pthread_mutex_lock(&srv->mu);
    for (struct conn *c = srv->conns; c; c = c->next) {
        pthread_mutex_lock(&c->mu);
        if (conn_busy_locked(c)) {
            char reqs[256] = "";
            size_t n = 0;
            for (struct work *w = c->held; w && n + 40 < sizeof(reqs); w = w->next_held)
                n += (size_t)snprintf(reqs + n, sizeof(reqs) - n, " %s#%" PRIu64,
                                      ddio_type_name(w->h.type), w->h.req);
            DDIO_WARN("  connection %" PRIu64 " from %s: %d of %d request threads busy, "
                      "%zu bytes queued%s; in flight:%s", c->id, c->peer,
                      c->workers - c->idle, c->workers, c->qbytes,
                      c->writing ? ", sending" : "", n ? reqs : " (none counted)");
        }
        pthread_mutex_unlock(&c->mu);
    }
    pthread_mutex_unlock(&srv->mu);
    engine_report(srv);
}

int listener_drain(struct server *srv, int wait_ms)
{
    if (srv->lfd >= 0) {
        close(srv->lfd);
        srv->lfd = -1;
    }
    engine_stopping(srv);
    int64_t t0 = ddio_now_ms(), dl = t0 + wait_ms;
    int busy, idle = 0, reported = 0;
    while ((busy = busy_conns(srv)) > 0 || ++idle < 2) {
        if (busy)
            idle = 0;
        int64_t now = ddio_now_ms();
        if (busy && !reported && now >= t0 + DRAIN_REPORT_MS) {
            report_busy(srv, now - t0);
            reported = 1;
        }
        if (now >= dl || atomic_load(&srv->signals) > 1) {
            if (busy)
                report_busy(srv, now - t0);
            break;
        }
        usleep(50000);
    }
    return busy;
}

void listener_stop(struct server *srv, int wait_ms)
{
    atomic_store(&srv->closing, 1);
    if (srv->lfd >= 0) {
        close(srv->lfd);
        srv->lfd = -1;
    }
    engine_shutdown(srv);
    pthread_mutex_lock(&srv->mu);
    for (struct conn *c = srv->conns; c; c = c->next)
        conn_kill(c, "server shutting down");
    int64_t dl = ddio_now_ms() + wait_ms;
    while (srv->nconns > 0 && ddio_now_ms() < dl) {
        struct timespec ts = {.tv_sec = dl / 1000, .tv_nsec = (dl % 1000) * 1000000};
        pthread_cond_timedwait(&srv->cv, &srv->mu, &ts);
    }
    int left = srv->nconns;
    pthread_mutex_unlock(&srv->mu);
    if (left)
        DDIO_WARN("%d connection(s) still closing at exit", left);
}
