/* Watchers and their invalidations (watch.h; PROTOCOL.md "WATCH and
 * INVAL"). A change is told to every watching connection but those of the
 * process that made it, and its reply waits for their answers: a mount
 * keeps names and attributes on the strength of this, so the word must
 * have reached it before the changer can tell anyone else. A watcher that
 * does not answer within WATCH_ACK_MS is cut off, which its mount sees as
 * the end of its watch (it then keeps nothing until it watches again).
 * One list per process: a process runs one server. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "watch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cond.h"
#include "ddio_log.h"
#include "identity.h"
#include "reply.h"
#include "store.h"

struct watcher {
    struct conn *c;              /* not referenced: watch_drop runs before its end */
    uint64_t client;
    struct watcher *next;
};

struct waiting {                 /* an INVAL whose answer a change waits for */
    struct conn *c;              /* referenced by the waiting change */
    uint64_t req;
    int done;
    struct waiting *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;
static pthread_once_t cv_once = PTHREAD_ONCE_INIT;
static struct watcher *watchers;
static atomic_int nwatchers;     /* read without mu: a change with none skips it all */
static struct waiting *waits;
static uint64_t next_req = 1;

static void cv_init(void)
{
    cond_init_mono(&cv);
}

void watch_note_client(struct conn *c, uint64_t client)
{
    if (client)
        atomic_store(&c->client, client);
}

int on_watch(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_watch m;
    char why[320];
    if (ddio_dec_watch(p, h->len, &m))
        return bad_payload(c, h);
    /* an INVAL names paths the watcher may not be allowed to search:
     * with proven users only a trusted mount (root, --mount-hosts) watches */
    if (c->who.known && identity_trusted_root(c, why, sizeof(why)))
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EACCES, "WATCH: %s", why), 0;
    struct watcher *w = calloc(1, sizeof(*w));
    if (!w)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "out of memory"), 0;
    pthread_once(&cv_once, cv_init);
    watch_note_client(c, m.client);
    pthread_mutex_lock(&mu);
    int again = 0;
    for (struct watcher *o = watchers; o; o = o->next)
        again |= o->c == c;
    if (!again) {
        *w = (struct watcher){c, m.client, watchers};
        watchers = w;
        atomic_fetch_add(&nwatchers, 1);
    }
    pthread_mutex_unlock(&mu);
    if (again) {
        free(w);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EEXIST, "WATCH: already"), 0;
    }
    DDIO_INFO("connection %" PRIu64 " from %s watches the namespace", c->id, c->peer);
    return reply_ok(c, h);
}

void watch_ack(struct conn *c, uint64_t req)
{
    pthread_mutex_lock(&mu);
    for (struct waiting *k = waits; k; k = k->next)
        if (k->c == c && k->req == req)
            k->done = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

void watch_drop(struct conn *c)
{
    pthread_mutex_lock(&mu);
    for (struct watcher **pp = &watchers; *pp;)
        if ((*pp)->c == c) {
            struct watcher *w = *pp;
            *pp = w->next;
            free(w);
            atomic_fetch_sub(&nwatchers, 1);
        } else
            pp = &(*pp)->next;
    for (struct waiting *k = waits; k; k = k->next)
        if (k->c == c)
            k->done = 1;
    if (watchers || waits)
        pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

/* the waits for this change: one per watcher not of c's process (mu held) */
static int waits_make(struct conn *c, struct waiting *out, int cap)
{
    uint64_t client = atomic_load(&c->client);
    int n = 0;
    for (struct watcher *w = watchers; w && n < cap; w = w->next) {
        if (w->c == c || (client && w->client == client))
            continue;
        conn_ref(w->c);
        out[n] = (struct waiting){w->c, next_req++, 0, waits};
        waits = &out[n++];
    }
    return n;
}

static void waits_unlink(struct waiting *v, int n)
{
    for (struct waiting **pp = &waits; *pp;)
        if (*pp >= v && *pp < v + n)
            *pp = (*pp)->next;
        else
            pp = &(*pp)->next;
}

#define WATCH_MAX 64             /* watchers told of one change */

void watch_changed(struct conn *c, const char *path, uint32_t what)
{
    struct waiting v[WATCH_MAX];
    char norm[DDIO_MAX_STR + 1], msg[256];
    if (!atomic_load(&nwatchers) ||
        store_norm_ns(path, norm, sizeof(norm), msg, sizeof(msg)))
        return;
    pthread_mutex_lock(&mu);
    int n = waits_make(c, v, WATCH_MAX);
    pthread_mutex_unlock(&mu);
    int64_t deadline = ddio_now_ms() + WATCH_ACK_MS;
    for (int i = 0; i < n; i++) {
        struct ddio_inval m = {.what = what, .path = norm};
        struct ddio_wbuf w;
        ddio_wbuf_init(&w);
        ddio_enc_inval(&w, &m);
        if (w.err || conn_send(v[i].c, DDIO_T_INVAL, v[i].req, 0, w.p, w.len, 0, deadline)) {
            if (w.err)
                ddio_wbuf_free(&w);
            watch_ack(v[i].c, v[i].req);         /* a dead watcher keeps nothing */
        }
    }
    pthread_mutex_lock(&mu);
    for (int i = 0; i < n; i++)
        while (!v[i].done && cond_wait_ms(&cv, &mu, deadline) != ETIMEDOUT)
            ;
    waits_unlink(v, n);
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < n; i++) {
        if (!v[i].done) {
            DDIO_WARN("watcher %s did not answer INVAL of %s within %d ms: cut off",
                      v[i].c->peer, norm, WATCH_ACK_MS);
            conn_kill(v[i].c, "silent watcher");
        }
        conn_unref(v[i].c);
    }
}
