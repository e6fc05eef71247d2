/* Byte-range locks of an open file (ddio_core_file.h): held on stripe
 * server 0 or, for a copied file, on the first stripe server the handle's
 * view has in (DESIGN.md 6.1 "Locks with a server out"); noted by the
 * handle, taken again as reclaims when that server's connection is renewed
 * (ddio_core_handle.c) and when they move to another server. */
#include "ddio_core_file.h"
#include "ddio_net.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* a blocking lock may legitimately wait up to the timeout on the server;
 * the client waits a little longer to receive its ETIMEDOUT */
#define LOCK_REPLY_SLACK_MS 5000

/* The server that holds f's locks: stripe server 0; for a copied file
 * the first the handle's view has in. Every client with the same view
 * picks the same one, and a server refuses a LOCK from another view (an
 * out server with DDIO_E_OUT, any with DDIO_E_EPOCH), so two never grant
 * the same range at once for long: each starts a lock grace when the
 * membership changes, for the holders to move theirs. */
static int lock_server(const struct ddio_fh *f)
{
    for (int i = 0; ddio_fh_redundant(f) && i < f->nsrv; i++)
        if (!f->srv[i].out)
            return i;
    return 0;
}

/* one LOCK on server i's handle (its connection's mutex held), carrying
 * the handle's view; flags: DDIO_LK_RECLAIM for one held before */
static int lock_locked(struct ddio_fh *f, int i, uint32_t cmd, uint32_t type, uint64_t start,
                       uint64_t len, uint32_t flags, struct ddio_err *e)
{
    struct ddio_lock m = {.handle = f->srv[i].handle,.cmd = cmd,.type = type,.start = start,
        .len = len,.timeout_ms = (uint32_t) f->timeout_ms,.flags = flags,
        .client = ddio_client_id()
    };
    struct ddio_conn *c = f->srv[i].conn;
    int64_t deadline = ddio_now_ms() + f->timeout_ms + LOCK_REPLY_SLACK_MS;
    struct ddio_wbuf w;
    uint8_t *reply = NULL;
    size_t n;
    uint64_t id;

    ddio_wbuf_init(&w);
    ddio_enc_lock(&w, &m);
    int rc = w.err ? (ddio_err_set(e, ENOMEM, "ddio: out of memory encoding LOCK"), -1)
        : ddio_conn_send_view(c, DDIO_T_LOCK, w.p, w.len, ddio_fh_change_epoch(f), &id,
                              deadline, e);
    if (!rc)
        rc = ddio_conn_recv_reply(c, DDIO_T_LOCK, id, deadline, &reply, &n, e);
    ddio_wbuf_free(&w);
    free(reply);
    return rc;
}

/* the locks f holds taken again on server i as reclaims: a server grants
 * only these during its lock grace (after a restart, a dropped holder, a
 * membership change), so no other process takes a range in between */
static int relock_on(struct ddio_fh *f, int i, struct ddio_err *e)
{
    for (int k = 0; k < f->nlocks; k++)
        if (lock_locked(f, i, DDIO_LK_SETLKW, f->locks[k].type, f->locks[k].start,
                        f->locks[k].len, DDIO_LK_RECLAIM, e))
            return -1;
    return 0;
}

static int relock_locked(struct ddio_fh *f, struct ddio_err *e)
{
    return relock_on(f, f->lock_at, e);
}

/* f's locks moved to server i (the view changed): reclaimed there, then
 * let go on the server that held them if it still answers (one out but
 * alive keeps them until its connection closes otherwise) */
static int move_locks(struct ddio_fh *f, int i, struct ddio_err *e)
{
    int was = f->lock_at;
    if (f->nlocks) {
        pthread_mutex_lock(&f->srv[i].conn->mu);
        int rc = relock_on(f, i, e);
        pthread_mutex_unlock(&f->srv[i].conn->mu);
        if (rc)
            return -1;
    }
    f->lock_at = i;
    struct ddio_err ignored;
    if (!f->nlocks || ddio_fh_ready_once(f, was, &ignored))
        return 0;
    pthread_mutex_lock(&f->srv[was].conn->mu);
    for (int k = 0; k < f->nlocks; k++)
        lock_locked(f, was, DDIO_LK_UNLCK, 0, f->locks[k].start, f->locks[k].len, 0, &ignored);
    pthread_mutex_unlock(&f->srv[was].conn->mu);
    return 0;
}

/* a LOCK refused for the handle's view: a server out is marked so (the
 * next one in holds the locks), another epoch reviews the view. 1: ask
 * again */
static int lock_view_moved(struct ddio_fh *f, int i, const struct ddio_err *e, int64_t give_up)
{
    if (!ddio_fh_redundant(f))
        return 0;
    if (e->errnum == DDIO_E_OUT && !f->srv[i].out) {
        f->srv[i].out = 1;
        ddio_fh_view_pin(f);
        return 1;
    }
    if (e->errnum == DDIO_E_EPOCH) {
        ddio_fh_review(f, f->srv[i].conn->epoch, NULL);
        return 1;
    }
    /* lost for the whole recovery time: declared out, as a write does */
    struct ddio_err de = {0};
    if (e->transport && f->recover_ms && ddio_now_ms() >= give_up && f->declare_out
        && !f->srv[i].out
        && !f->declare_out(f->declare_arg, f->srv[i].conn, &de)) {
        f->srv[i].out = 1;
        ddio_fh_view_pin(f);
        return 1;
    }
    return 0;
}

/* note a granted lock, or forget the ones an unlock released (ROMIO unlocks
 * the ranges it locked) */
static void lock_note(struct ddio_fh *f, uint32_t cmd, uint32_t type, uint64_t start,
                      uint64_t len)
{
    if (cmd == DDIO_LK_UNLCK) {
        int m = 0;
        for (int k = 0; k < f->nlocks; k++)
            if (f->locks[k].start < start || f->locks[k].start + f->locks[k].len > start + len)
                f->locks[m++] = f->locks[k];
        f->nlocks = m;
        return;
    }
    if (f->nlocks == f->caplocks) {
        int cap = f->caplocks ? 2 * f->caplocks : 4;
        struct ddio_lk *v = realloc(f->locks, cap * sizeof(*v));
        if (!v)
            return;     /* not taken again after a reconnect: as before */
        f->locks = v;
        f->caplocks = cap;
    }
    f->locks[f->nlocks++] = (struct ddio_lk) {.type = type,.start = start,.len = len };
}

int ddio_fh_lock(struct ddio_fh *f, uint32_t cmd, uint32_t type, uint64_t start, uint64_t len,
                 struct ddio_err *e)
{
    int64_t give_up = ddio_now_ms() + f->recover_ms;
    int rc;

    if (!f->srv)
        return ddio_err_set(e, EBADF, "ddio: file not open"), -1;
    f->relock = relock_locked;      /* renewal calls it (ddio_core_handle.c) */
    for (int moves = 0;;) {
        int i = lock_server(f);
        memset(e, 0, sizeof(*e));
        rc = ddio_fh_ready(f, i, e);
        if (!rc && i != f->lock_at)
            rc = move_locks(f, i, e);
        if (!rc) {
            pthread_mutex_lock(&f->srv[i].conn->mu);
            rc = lock_locked(f, i, cmd, type, start, len, 0, e);
            pthread_mutex_unlock(&f->srv[i].conn->mu);
        }
        if (!rc)
            break;
        /* each move takes a server out or the view to a newer epoch:
         * bounded by the servers, twice over */
        if (moves++ < 2 * f->nsrv && lock_view_moved(f, i, e, give_up))
            continue;
        if (!f->recover_ms || !ddio_err_recoverable(e) || ddio_now_ms() >= give_up)
            break;
    }
    if (!rc)
        lock_note(f, cmd, type, start, len);
    return rc;
}
