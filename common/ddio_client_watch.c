/* Watching the servers for a mount's cache (ddio_client.h "Watching"):
 * a thread per server holds a connection of the watch's own client, sends
 * WATCH with this process's id (the servers then leave out the changes of
 * this process's other connections), and answers each INVAL after the
 * caller's inval returned. A lost connection is reported (the caller
 * forgets what it kept) and made again with backoff. Not part of libmpi
 * (scripts/overlay-driver.sh leaves it out). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_client.h"
#include "ddio_client_int.h"
#include "ddio_net.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define WATCH_IDLE_MS (3600 * 1000)   /* an INVAL may be an hour away */

struct watch_thread {
    struct ddio_watcher *w;
    int i;                       /* the server */
    pthread_t th;
    int started;
    atomic_int sock;             /* the connection's socket, for the stop */
};

struct ddio_watcher {
    struct ddio_client *cl;
    const struct ddio_watch_ops *ops;
    void *arg;
    atomic_int stop;
    struct watch_thread *t;
};

/* connect and WATCH: 0, or -errno (refused for good: EACCES, a server of
 * another version) with the connection failed */
static int watch_begin(struct watch_thread *t, struct ddio_conn **out)
{
    struct ddio_client *cl = t->w->cl;
    struct ddio_err e = {0};
    struct ddio_conn *c;
    struct ddio_wbuf req;
    struct ddio_watch m = {.client = ddio_client_id()};
    uint8_t *reply = NULL;
    size_t len = 0;

    /* a short connect: the stop waits for it */
    if (ddio_pool_get(&cl->pool, cl->addr[t->i], cl->timeout_ms < 2000 ? cl->timeout_ms : 2000,
                      &c, &e))
        return -(e.errnum ? e.errnum : EIO);
    ddio_wbuf_init(&req);
    ddio_enc_watch(&req, &m);
    int rc = ddio_conn_call(c, DDIO_T_WATCH, &req, ddio_now_ms() + cl->timeout_ms, &reply, &len,
                            &e);
    ddio_wbuf_free(&req);
    free(reply);
    if (rc) {
        if (!e.transport)
            ddio_conn_fail(c);
        return -(e.errnum ? e.errnum : EIO);
    }
    *out = c;
    return 0;
}

/* one INVAL heard: told to the caller, then answered. 0, or -1 (the
 * connection is no longer to be trusted) */
static int heard(struct watch_thread *t, struct ddio_conn *c, const struct ddio_hdr *h)
{
    struct ddio_err e = {0};
    struct ddio_inval m;
    uint8_t *p;
    char path[DDIO_MAX_STR + 2];
    if (h->type != DDIO_T_INVAL || ddio_conn_recv_payload(c, h, ddio_now_ms() +
                                                          t->w->cl->timeout_ms, &p, &e))
        return -1;
    int rc = ddio_dec_inval(p, h->len, &m);
    free(p);
    if (rc)
        return -1;
    snprintf(path, sizeof(path), "/%s", m.path);
    free(m.path);
    t->w->ops->inval(t->w->arg, m.what, path);
    return ddio_send_msg(c->sock, DDIO_T_INVAL | DDIO_REPLY, h->req, 0, NULL, 0, NULL, 0,
                         ddio_now_ms() + t->w->cl->timeout_ms) ? -1 : 0;
}

/* INVALs until the connection ends or the watch stops */
static void listen_on(struct watch_thread *t, struct ddio_conn *c)
{
    pthread_mutex_lock(&c->mu);
    atomic_store(&t->sock, c->sock);
    while (!atomic_load(&t->w->stop)) {
        struct ddio_hdr h;
        if (ddio_recv_hdr(c->sock, &h, ddio_now_ms() + WATCH_IDLE_MS) || heard(t, c, &h))
            break;
    }
    atomic_store(&t->sock, -1);
    ddio_conn_fail(c);
    pthread_mutex_unlock(&c->mu);
}

static void nap(struct ddio_watcher *w, int ms)
{
    for (int slept = 0; slept < ms && !atomic_load(&w->stop); slept += 20)
        usleep(20000);
}

static void *watch_main(void *arg)
{
    struct watch_thread *t = arg;
    struct ddio_watcher *w = t->w;
    int wait_ms = 0;
    while (!atomic_load(&w->stop)) {
        struct ddio_conn *c = NULL;
        int rc = watch_begin(t, &c);
        if (rc == -EACCES || rc == -EPROTONOSUPPORT || rc == -EPROTO) {
            w->ops->up(w->arg, t->i, rc);         /* for good: no watch here */
            return NULL;
        }
        if (rc) {
            nap(w, wait_ms = ddio_backoff_next(wait_ms));
            continue;
        }
        wait_ms = 0;
        w->ops->up(w->arg, t->i, 1);
        listen_on(t, c);
        w->ops->up(w->arg, t->i, 0);
    }
    return NULL;
}

struct ddio_watcher *ddio_watch_start(struct ddio_client *cl, const struct ddio_watch_ops *ops,
                                    void *arg, char *msg, size_t msglen)
{
    struct ddio_watcher *w = calloc(1, sizeof(*w));
    if (w)
        w->t = calloc((size_t)cl->n, sizeof(*w->t));
    if (!w || !w->t) {
        free(w);
        snprintf(msg, msglen, "out of memory");
        return NULL;
    }
    *w = (struct ddio_watcher){.cl = cl, .ops = ops, .arg = arg, .t = w->t};
    for (int i = 0; i < cl->n; i++) {
        w->t[i] = (struct watch_thread){.w = w, .i = i};
        atomic_store(&w->t[i].sock, -1);
        if (pthread_create(&w->t[i].th, NULL, watch_main, &w->t[i]) == 0)
            w->t[i].started = 1;
        else {
            snprintf(msg, msglen, "watch: no thread for server %s", cl->addr[i]);
            ddio_watch_stop(w);
            return NULL;
        }
    }
    return w;
}

void ddio_watch_stop(struct ddio_watcher *w)
{
    if (!w)
        return;
    atomic_store(&w->stop, 1);
    for (int i = 0; i < w->cl->n; i++) {
        int s = atomic_load(&w->t[i].sock);
        if (s >= 0)
            shutdown(s, SHUT_RDWR);       /* wakes its receive */
    }
    for (int i = 0; i < w->cl->n; i++)
        if (w->t[i].started)
            pthread_join(w->t[i].th, NULL);
    free(w->t);
    free(w);
}
