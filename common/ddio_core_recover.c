/* Riding through a lost server at the connection level (ddio_core_conn.h): the
 * ids that let a server answer a resent call instead of running it twice
 * (PROTOCOL.md "Resending"), the backoff between reconnect attempts, a
 * fan-out whose lost calls are resent after reconnecting, a connect tried
 * again while a server restarts, and every server of a file dialled at
 * once. Above the connections (ddio_core_conn.c), below the file handles. */
#include "ddio_core_conn.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "ddio_net.h"

/* ---- call ids: a resent write is answered, not done twice ------------------ */

static uint64_t client_id;
static unsigned client_gen;
static pthread_mutex_t client_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic uint64_t next_call = 1;

/* this process's id in the servers' tables of answers: random, so that
 * processes on different hosts (and a restarted one) never share one; a
 * forked child draws its own, or its writes would be answered from its
 * parent's (same client id, same call numbers): never done */
uint64_t ddio_client_id(void)
{
    unsigned g = ddio_fork_gen();
    pthread_mutex_lock(&client_mu);
    if (!client_id || client_gen != g) {
        if (getrandom(&client_id, sizeof(client_id), 0) != (ssize_t) sizeof(client_id))
            client_id = ((uint64_t) getpid() << 32) ^ (uint64_t) time(NULL) ^ (uint64_t) clock();
        client_id |= 1;     /* never 0 */
        client_gen = g;
    }
    uint64_t id = client_id;
    pthread_mutex_unlock(&client_mu);
    return id;
}

uint64_t ddio_call_id(void)
{
    return atomic_fetch_add(&next_call, 1);
}

/* ---- reconnecting ------------------------------------------------------------ */

/* 20 ms doubling to 200 ms: a restarted server is back within ~0.1 s of
 * its start, and an attempt against a port nobody listens on costs nothing;
 * a host that does not answer at all costs the attempt's connect timeout */
int ddio_backoff_next(int ms)
{
    return ms <= 0 ? 20 : ms >= 100 ? 200 : 2 * ms;
}

/* one attempt to connect c again (its mutex taken here) */
static int reconnect(struct ddio_conn *c, int conn_ms, struct ddio_err *e)
{
    pthread_mutex_lock(&c->mu);
    memset(e, 0, sizeof(*e));
    int rc = ddio_conn_ready(c, conn_ms, e);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

/* call k's connection was lost: connect again and resend, with backoff,
 * until an answer (of any kind) or give_up */
static void call_recover(struct ddio_call *k, uint16_t type, int timeout_ms, int64_t give_up)
{
    int wait = 0;
    for (;;) {
        int64_t left = give_up - ddio_now_ms();
        struct ddio_err e;
        /* a refused connect fails at once; a slow handshake (a loaded
         * host) gets the timeout, within the recovery time */
        int conn_ms = left < timeout_ms ? (int) (left > 0 ? left : 1) : timeout_ms;
        if (!reconnect(k->conn, conn_ms, &e)) {
            free(k->reply);
            k->reply = NULL;
            k->reply_len = 0;
            memset(&k->err, 0, sizeof(k->err));
            ddio_fanout(k, 1, type, timeout_ms);
            if (!ddio_err_recoverable(&k->err))
                return;         /* answered */
        } else if (!ddio_err_reconnectable(&e)
                   || (e.errnum == ETIMEDOUT && ddio_conn_silent(k->conn))) {
            k->err = e;
            return;
        }
        wait = ddio_backoff_next(wait);
        if (ddio_now_ms() + wait > give_up)
            return;             /* k->err: the last failure */
        usleep((useconds_t) wait * 1000);
    }
}

void ddio_fanout_recover(struct ddio_call *calls, int n, uint16_t type, int timeout_ms,
                         int recover_ms)
{
    int64_t give_up = ddio_now_ms() + recover_ms;

    ddio_fanout(calls, n, type, timeout_ms);
    for (int i = 0; i < n && recover_ms; i++)
        if (calls[i].conn && ddio_err_recoverable(&calls[i].err))
            call_recover(&calls[i], type, timeout_ms, give_up);
}

int ddio_pool_get_recover(struct ddio_pool *p, const char *addr, int timeout_ms, int recover_ms,
                          struct ddio_conn **out, struct ddio_err *e)
{
    struct ddio_conn *known = ddio_pool_find(p, addr);
    /* down and out of the membership when last tried: once, no waiting
     * for a restart (its files go on without it) */
    if (known && known->member_out)
        recover_ms = 0;
    int64_t give_up = ddio_now_ms() + recover_ms;
    int wait = 0;

    for (;;) {
        memset(e, 0, sizeof(*e));
        /* each attempt has the whole timeout: a refused connect (a server
         * restarting) fails at once, a slow handshake must not */
        if (!ddio_pool_get(p, addr, timeout_ms, out, e))
            return 0;
        wait = ddio_backoff_next(wait);
        /* the time left after the attempt: one that took the whole
         * timeout is not followed by another past the recovery time; a
         * silent server is not waited for again (ddio_conn_silent) */
        if (!recover_ms || !ddio_err_reconnectable(e) || give_up - ddio_now_ms() < wait
            || (known && e->errnum == ETIMEDOUT && ddio_conn_silent(known)))
            return -1;
        usleep((useconds_t) wait * 1000);
    }
}

/* ---- every server of a file at once ------------------------------------------------- */

struct dial_job {
    struct ddio_pool *p;
    const char *addr;
    int timeout_ms, recover_ms;
    struct ddio_conn *c;
    struct ddio_err e;
};

static void *dial_job_run(void *arg)
{
    struct dial_job *j = arg;
    /* a look at who answers now does not wait for a silent server again;
     * a dial with recovery probes it (it may answer again) */
    if (!j->recover_ms && ddio_conn_skip_silent(ddio_pool_find(j->p, j->addr), &j->e))
        return NULL;
    ddio_pool_get_recover(j->p, j->addr, j->timeout_ms, j->recover_ms, &j->c, &j->e);
    return NULL;
}

/* a connection still to be made (a hint: ddio_pool_get decides, under the
 * connection's mutex) */
static int needs_dial(struct ddio_pool *p, const char *addr)
{
    struct ddio_conn *c = ddio_pool_find(p, addr);
    if (!c)
        return 0;
    pthread_mutex_lock(&c->mu);
    int need = c->sock < 0;
    pthread_mutex_unlock(&c->mu);
    return need;
}

int ddio_pool_get_all(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                      int recover_ms, struct ddio_conn **conns, struct ddio_err *e,
                      struct ddio_err *each)
{
    struct dial_job *j = calloc(n > 0 ? n : 1, sizeof(*j));
    pthread_t *th = calloc(n > 0 ? n : 1, sizeof(*th));
    char *started = calloc(n > 0 ? n : 1, 1);
    int first = -1;

    memset(e, 0, sizeof(*e));
    if (!j || !th || !started) {
        free(j);
        free(th);
        free(started);
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        j[i] = (struct dial_job) { .p = p, .addr = addrs[i], .timeout_ms = timeout_ms,
            .recover_ms = recover_ms };
        /* the first one to dial runs on this thread, every other one on a
         * thread of its own: the servers' handshakes overlap */
        if (needs_dial(p, addrs[i])) {
            if (first < 0)
                first = i;
            else
                started[i] = !pthread_create(&th[i], NULL, dial_job_run, &j[i]);
        }
    }
    if (first >= 0)
        dial_job_run(&j[first]);
    for (int i = 0; i < n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        else if (i != first)    /* connected already (or no thread: dialled here) */
            dial_job_run(&j[i]);
        conns[i] = j[i].c;
        if (each)
            each[i] = j[i].e;
    }
    /* the first failure in list order, as a dial one after another had it */
    for (int i = 0; i < n && !e->errnum; i++)
        if (j[i].e.errnum)
            *e = j[i].e;
    free(j);
    free(th);
    free(started);
    return e->errnum ? -1 : 0;
}
