/* Byte-range locks of an open file (ddio_core_file.h): held on stripe
 * server 0, noted by the handle, and taken again as reclaims when that
 * server's connection is renewed (ddio_core_handle.c). */
#include "ddio_core_file.h"
#include "ddio_net.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* a blocking lock may legitimately wait up to the timeout on the server;
 * the client waits a little longer to receive its ETIMEDOUT */
#define LOCK_REPLY_SLACK_MS 5000

/* one LOCK on server 0's handle (its connection's mutex held); flags:
 * DDIO_LK_RECLAIM for one held before a reconnect */
static int lock_locked(struct ddio_fh *f, uint32_t cmd, uint32_t type, uint64_t start,
                       uint64_t len, uint32_t flags, struct ddio_err *e)
{
    struct ddio_lock m = {.handle = f->srv[0].handle,.cmd = cmd,.type = type,.start = start,
        .len = len,.timeout_ms = (uint32_t) f->timeout_ms,.flags = flags,
        .client = ddio_client_id()
    };
    struct ddio_wbuf w;
    uint8_t *reply = NULL;
    size_t n;
    int rc;

    ddio_wbuf_init(&w);
    ddio_enc_lock(&w, &m);
    rc = ddio_conn_call_locked(f->srv[0].conn, DDIO_T_LOCK, &w,
                               ddio_now_ms() + f->timeout_ms + LOCK_REPLY_SLACK_MS, &reply, &n, e);
    ddio_wbuf_free(&w);
    free(reply);
    return rc;
}

/* the locks f held on a connection that was lost, taken again on the new
 * one as reclaims: the server grants only these during its lock grace after
 * a restart or the drop, so no other process takes a range in between */
int ddio_fh_relock_locked(struct ddio_fh *f, struct ddio_err *e)
{
    for (int k = 0; k < f->nlocks; k++)
        if (lock_locked(f, DDIO_LK_SETLKW, f->locks[k].type, f->locks[k].start,
                        f->locks[k].len, DDIO_LK_RECLAIM, e))
            return -1;
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

    for (;;) {
        memset(e, 0, sizeof(*e));
        rc = !f->srv ? (ddio_err_set(e, EBADF, "ddio: file not open"), -1)
            : ddio_fh_ready(f, 0, e);
        if (!rc) {
            pthread_mutex_lock(&f->srv[0].conn->mu);
            rc = lock_locked(f, cmd, type, start, len, 0, e);
            pthread_mutex_unlock(&f->srv[0].conn->mu);
        }
        if (!rc || !f->recover_ms || !ddio_err_recoverable(e) || ddio_now_ms() >= give_up)
            break;
    }
    if (!rc)
        lock_note(f, cmd, type, start, len);
    return rc;
}
