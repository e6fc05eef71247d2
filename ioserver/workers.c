/* Request threads: the requests that may wait (XFER, blocking LOCK, SYNC,
 * PREALLOC) run on a thread of their own, so the reader only ever blocks on
 * its socket and short mutexes. A finished thread waits a while for the
 * connection's next request before it exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "workers.h"
#include "ddio_desc.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "cond.h"
#include "ddio_net.h"
#include "fault.h"
#include "reply.h"

/* A request thread that finished waits this long for the connection's next
 * request before it exits: a client issuing small calls one after another
 * then costs one thread handoff per call instead of a thread creation. At
 * most IDLE_WORKERS wait per connection. */
#define WORKER_IDLE_MS 2000
#define IDLE_WORKERS 4

static void run_work(struct work *w)
{
    struct conn *c = w->c;
    stats_inflight(&c->srv->stats, 1);
    w->fn(w);
    changed_end(c->srv, w->changed_gen);
    stats_inflight(&c->srv->stats, -1);
    free(w->payload);
    pthread_mutex_lock(&c->mu);
    if (w->holding)
        release_slot(c, w, 0, 0);
    pthread_mutex_unlock(&c->mu);
    free(w);
}

/* The request work_spawn handed to this idle thread, or NULL: the thread
 * should exit (it waited WORKER_IDLE_MS, enough threads wait already, or
 * the connection died). c->mu held. */
static struct work *next_work(struct conn *c)
{
    if (c->idle >= IDLE_WORKERS)
        return NULL;
    c->idle++;
    int64_t dl = ddio_now_ms() + WORKER_IDLE_MS;
    while (!c->wq && !c->dead && ddio_now_ms() < dl)
        cond_wait_ms(&c->wcv, &c->mu, dl);
    struct work *w = c->wq;
    if (w)                        /* work_spawn already took this thread off idle */
        c->wq = w->next_queued;
    else
        c->idle--;
    return w;
}

static void *work_main(void *arg)
{
    struct work *w = arg;
    struct conn *c = w->c;
    while (w) {
        run_work(w);
        pthread_mutex_lock(&c->mu);
        w = next_work(c);
        if (!w) {
            c->workers--;
            pthread_cond_broadcast(&c->cv);
        }
        pthread_mutex_unlock(&c->mu);
    }
    conn_unref(c);
    return NULL;
}

static void refuse_busy(struct conn *c, struct work *w)
{
    conn_send_err(c, w->h.type | DDIO_REPLY, w->h.req, EBUSY,
                  "too many requests in progress on this connection (limit %u, "
                  "--max-inflight)", c->srv->cfg.max_inflight);
    if (w->of)
        store_release(&c->srv->store, w->of);
    changed_end(c->srv, w->changed_gen);
    free(w->payload);
    free(w);
}

/* A read by one participant runs on the reader thread itself: it needs
 * nothing more from this connection (no DATA, no lock, no gate), and a
 * client sends one request at a time on a connection, so the reader has
 * nothing else to do meanwhile; the hand-off to a request thread would cost
 * a wakeup per call. It counts as a request in flight like any other. */
int work_runs_inline(const struct work *w)
{
    /* Nothing to wait for from this connection: a read, or a write whose
     * bytes came with it. But while it runs the reader reads nothing else,
     * a CANCEL included: a long read goes to a request thread, so a failed
     * call stops in milliseconds, not when this part is done. */
    const struct ddio_xfer *x = &w->u.x;
    if (w->h.type != DDIO_T_XFER || x->nparticipants != 1)
        return 0;
    if (x->flags & DDIO_XF_INLINE)
        return 1;
    return x->op == DDIO_X_READ
           && ddio_desc_peek_length(x->desc, x->desc_len) <= WORK_INLINE_READ_MAX;
}

void work_run_inline(struct conn *c, struct work *w)
{
    pthread_mutex_lock(&c->mu);
    int ok = hold_slot(c, w);
    if (ok)
        c->workers++;
    pthread_mutex_unlock(&c->mu);
    if (!ok) {
        refuse_busy(c, w);
        return;
    }
    run_work(w);
    pthread_mutex_lock(&c->mu);
    c->workers--;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

/* run fn on a request thread (an idle one, or a new one); takes over
 * payload and the file reference */
void work_spawn(struct conn *c, struct work *w)
{
    pthread_mutex_lock(&c->mu);
    int ok = hold_slot(c, w);
    if (ok) {
        if (c->idle > 0) {        /* FIFO, so requests start in arrival order */
            c->idle--;
            w->next_queued = NULL;
            struct work **pp = &c->wq;
            while (*pp)
                pp = &(*pp)->next_queued;
            *pp = w;
            pthread_cond_signal(&c->wcv);
            pthread_mutex_unlock(&c->mu);
            return;
        }
        c->workers++;
    }
    pthread_mutex_unlock(&c->mu);
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    conn_ref(c);
    if (ok && pthread_create(&t, &at, work_main, w) == 0) {
        pthread_attr_destroy(&at);
        return;
    }
    pthread_attr_destroy(&at);
    if (ok) {
        pthread_mutex_lock(&c->mu);
        release_slot(c, w, 0, 0);
        c->workers--;
        pthread_mutex_unlock(&c->mu);
    }
    conn_unref(c);
    refuse_busy(c, w);
}

void work_answering(struct work *w)
{
    if (w->of && !w->of_answered) {
        store_answered(&w->c->srv->store, w->of);
        w->of_answered = 1;
    }
}

void work_let_go(struct work *w)
{
    fault_pause(FAULT_LET_GO);
    store_release_pass(&w->c->srv->store, w->of, w->of_answered);
    w->of_answered = 0;
}

struct work *work_new(struct conn *c, const struct ddio_hdr *h, uint8_t **payload,
                             void (*fn)(struct work *))
{
    struct work *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->c = c;
    w->h = *h;
    w->payload = *payload;
    *payload = NULL;              /* the request thread owns it now */
    w->fn = fn;
    return w;
}
