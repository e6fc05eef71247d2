/* The requests on a connection's open files: the handle table, OPEN,
 * CLOSE, STAT, SETSIZE, STATS and UCXADDR on the reader thread, and XFER,
 * SYNC, PREALLOC, LOCK, SCRUB and REPAIR, which may wait, on request
 * threads. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "handlers.h"
#include "access.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "engine.h"
#include "fault.h"
#include "local.h"
#include "locks.h"
#include "member_req.h"
#include "indoubt.h"
#include "missed.h"
#include "replay.h"
#include "rebuild.h"
#include "scrub.h"
#include "overlay.h"
#include "ecread.h"
#include "tlsgate.h"
#include "reply.h"
#include "ucx.h"
#include "watch.h"
#include "workers.h"

#define DEFAULT_LOCK_TIMEOUT_MS 60000u

/* ---- handles --------------------------------------------------------------------------- */

/* the connection's handle id, or NULL; c->mu held */
static struct handle *handle_find(struct conn *c, uint64_t id)
{
    struct handle *h = c->handles;
    while (h && h->id != id)
        h = h->next;
    return h;
}

static struct ofile *handle_get_w(struct conn *c, uint64_t id, int *writable)
{
    pthread_mutex_lock(&c->mu);
    struct handle *h = handle_find(c, id);
    struct ofile *of = h ? h->of : NULL;
    if (writable)
        *writable = h && h->writable;
    pthread_mutex_unlock(&c->mu);
    return of;
}

static struct ofile *handle_get(struct conn *c, uint64_t id)
{
    return handle_get_w(c, id, NULL);
}

/* the reply to a request naming a handle this connection does not have */
static int bad_handle(struct conn *c, const struct ddio_hdr *h, uint64_t id)
{
    conn_send_err(c, h->type | DDIO_REPLY, h->req, EBADF, "handle %" PRIu64 ": EBADF", id);
    return 0;
}

/* a change through a handle opened for reading only: EBADF, as write(2) on
 * a descriptor opened O_RDONLY (the driver and MPI refuse it first; this
 * keeps another client from it) */
static int read_only(struct conn *c, const struct ddio_hdr *h, uint64_t id)
{
    conn_send_err(c, h->type | DDIO_REPLY, h->req, EBADF, "handle %" PRIu64 " was opened "
                  "read-only: %s refused", id, ddio_type_name(h->type));
    return 0;
}

/* a handle's file, with a reference the caller releases; replies EBADF */
static struct ofile *handle_retain(struct conn *c, const struct ddio_hdr *h, uint64_t id,
                                   int *writable)
{
    struct ofile *of = handle_get_w(c, id, writable);
    if (!of) {
        bad_handle(c, h, id);
        return NULL;
    }
    store_retain(&c->srv->store, of);
    return of;
}

static uint64_t handle_add(struct conn *c, struct ofile *of, uint32_t amode)
{
    struct handle *h = calloc(1, sizeof(*h));
    if (!h)
        return 0;
    pthread_mutex_lock(&c->mu);
    h->id = ++c->next_handle;
    h->of = of;
    h->writable = (amode & (DDIO_O_WRONLY | DDIO_O_RDWR)) != 0;
    h->next = c->handles;
    c->handles = h;
    pthread_mutex_unlock(&c->mu);
    return h->id;
}

/* the file changed through handle id (its size or times may have) */
static void handle_wrote(struct conn *c, uint64_t id)
{
    pthread_mutex_lock(&c->mu);
    struct handle *h = handle_find(c, id);
    if (h)
        atomic_store(&h->wrote, 1);
    pthread_mutex_unlock(&c->mu);
}

/* a change of mirrored file `of` through handle id is about to be made:
 * the file in doubt first (indoubt.h). 0 go on; 1 refused (answered) */
static int handle_changing(struct conn *c, const struct ddio_hdr *h, uint64_t id,
                           struct ofile *of)
{
    char msg[400];
    int rc = 0;
    if (!ddio_redundancy_kept(ddio_layout_redundancy(&of->layout)))
        return 0;
    /* held through the mark (made once per handle): the handle stays */
    pthread_mutex_lock(&c->mu);
    struct handle *hd = handle_find(c, id);
    if (hd)
        rc = indoubt_change(c->srv, of, &hd->changed, msg, sizeof(msg));
    pthread_mutex_unlock(&c->mu);
    if (rc)
        conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg);
    return rc != 0;
}

/* remove a handle; drop the connection's locks on the file when it was the
 * connection's last handle of that file (as POSIX close does per process) */
static struct ofile *handle_remove(struct conn *c, uint64_t id, int *last, int *wrote,
                                   int *changed)
{
    pthread_mutex_lock(&c->mu);
    struct ofile *of = NULL;
    for (struct handle **pp = &c->handles; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id) {
            struct handle *h = *pp;
            *pp = h->next;
            of = h->of;
            *wrote = atomic_load(&h->wrote);
            *changed = atomic_load(&h->changed);
            free(h);
            break;
        }
    *last = 1;
    for (struct handle *h = c->handles; h && of; h = h->next)
        if (h->of == of)
            *last = 0;
    pthread_mutex_unlock(&c->mu);
    return of;
}

/* ---- requests that may wait (request threads) ---------------------------------------- */

/* An XFER asking for UCX runs on the connection's UCX endpoint, which keeps
 * its token until the XFER's DONE. */
static void do_xfer(struct work *w)
{
    struct conn *c = w->c;
    struct xp *ep = &c->xp;
    struct uep *u = NULL;
    if (w->u.x.flags & DDIO_XF_UCX) {
        char why[256] = "this connection has no UCX endpoint (UCXADDR first)";
        /* referenced: the reader may drop the connection's endpoint (the
         * client died) while this XFER still binds to it and joins */
        pthread_mutex_lock(&c->mu);
        if ((u = c->uep))
            xp_ref(ucx_xp(u));
        pthread_mutex_unlock(&c->mu);
        int rc = u ? ucx_bind(u, w->h.req, &w->u.x, why, sizeof(why)) : -EPROTO;
        if (rc) {
            work_answering(w);
            conn_send_err(c, DDIO_T_XFER | DDIO_REPLY, w->h.req, -rc, "XFER: %s", why);
            work_let_go(w);
            if (u)
                xp_unref(ucx_xp(u));
            return;
        }
        ep = ucx_xp(u);
    }
    if (w->u.x.op == DDIO_X_WRITE)
        handle_wrote(c, w->u.x.handle);
    if (w->u.x.op == DDIO_X_READ && rebuild_unbuilt(c->srv, w->of->path)) {
        /* the replacement has not copied it yet: a mirrored file's client
         * reads a copy instead (ENODATA is "out" to it), never these zeros */
        work_answering(w);
        conn_send_err(c, DDIO_T_XFER | DDIO_REPLY, w->h.req, ENODATA, "XFER: %s is not "
                      "rebuilt on this replacement server yet", w->of->path);
        work_let_go(w);
        if (u)
            xp_unref(ucx_xp(u));
        return;
    }
    engine_xfer(c->srv, ep, w->h.req, &w->u.x, w->of);   /* takes w->of */
    if (u)
        xp_unref(ucx_xp(u));
}

static void do_sync(struct work *w)
{
    fault_hit(FAULT_SYNC);
    int rc = store_sync(&w->c->srv->store, w->of);
    work_answering(w);
    if (rc)
        conn_send_err(w->c, DDIO_T_SYNC | DDIO_REPLY, w->h.req, -rc, "fdatasync %s: %s",
                      w->of->path, ddio_errno_name(-rc));
    else
        reply_ok(w->c, &w->h);
    work_let_go(w);
}

static void do_prealloc(struct work *w)
{
    handle_wrote(w->c, w->u.pa.handle);
    int rc = store_prealloc(w->of, w->u.pa.local_off, w->u.pa.local_len);
    if (rc == 0 && w->u.pa.logical_size)
        rc = store_copies_prealloc(w->of, w->u.pa.logical_size);
    work_answering(w);
    if (rc)
        conn_send_err(w->c, DDIO_T_PREALLOC | DDIO_REPLY, w->h.req, -rc,
                      "preallocate %s: %s", w->of->path, ddio_errno_name(-rc));
    else
        reply_ok(w->c, &w->h);
    work_let_go(w);
}

static int lock_type(uint32_t t)
{
    return t == DDIO_LK_RD ? LK_RD : t == DDIO_LK_WR ? LK_WR : 0;
}

/* a granted lock's client, noted once per connection: a restart then
 * starts with the lock grace (main.c) */
static void note_holder(struct conn *c, uint64_t client)
{
    if (!client || atomic_exchange(&c->lock_noted, 1))
        return;
    replay_note(client, LOCK_HOLDER_CALL, (const uint8_t *)"", 0);
}

static void do_lock(struct work *w)
{
    const struct ddio_lock *m = &w->u.lk;
    struct conn *c = w->c;
    uint64_t end = lk_end_of(m->start, m->len);
    int rc;
    if (m->cmd == DDIO_LK_UNLCK) {
        rc = lk_unlock(&w->of->locks, c->id, m->start, end);
    } else {
        uint32_t tmo = m->timeout_ms ? m->timeout_ms : DEFAULT_LOCK_TIMEOUT_MS;
        int64_t grace = m->flags & DDIO_LK_RECLAIM ? 0 : atomic_load(&c->srv->lock_grace_until);
        rc = lk_lock(&w->of->locks, c->id, lock_type(m->type), m->start, end,
                     m->cmd == DDIO_LK_SETLKW, ddio_now_ms() + tmo, grace);
        if (rc == 0) {
            stats_bump(&c->srv->stats, &c->srv->stats.locks);
            note_holder(c, m->client);
        }
    }
    work_answering(w);
    if (rc)
        conn_send_err(c, DDIO_T_LOCK | DDIO_REPLY, w->h.req, -rc,
                      "lock %s [%" PRIu64 ", +%" PRIu64 "): %s", w->of->path, m->start,
                      m->len, ddio_errno_name(-rc));
    else
        reply_ok(c, &w->h);
    work_let_go(w);
}

/* ---- request handlers (reader thread) ------------------------------------------------------ */

/* CANCEL: the client gave up on one of its XFERs here (another server of
 * the call failed): fail it now for every participant, instead of running
 * the rest of it for nobody, and with a collective call named, the other
 * ranks' XFERs of that call too. Unknown or finished: nothing to do. No
 * reply: each XFER's own DONE answers. */
int on_cancel(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_cancel m;
    if (ddio_dec_cancel(p, h->len, &m))
        return bad_payload(c, h);
    pthread_mutex_lock(&c->mu);
    struct xp *u = c->uep ? ucx_xp(c->uep) : NULL;
    pthread_mutex_unlock(&c->mu);
    int n = engine_cancel(c->srv, &c->xp, u, m.req, m.group, m.seq, m.why);
    DDIO_DEBUG("connection %" PRIu64 " from %s: CANCEL of request %" PRIu64 " (collective seq %"
               PRIu64 "): %d cancelled (%s)", c->id, c->peer, m.req, m.seq, n, m.why);
    free(m.why);
    return 0;
}

/* UCXADDR (only after AUTH, see dispatch; no payload): the reply names this
 * connection's cookie and the server's worker address; a refusal leaves the
 * connection on TCP */
int on_ucxaddr(struct conn *c, const struct ddio_hdr *h)
{
    if (h->len != 0)
        return bad_payload(c, h);
    pthread_mutex_lock(&c->mu);
    int have = c->uep != NULL;
    pthread_mutex_unlock(&c->mu);
    if (have)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EEXIST, "UCXADDR: this "
                             "connection already has a UCX endpoint"), 0;
    char why[256];
    if (tlsgate_ucx_allowed(c, why, sizeof(why)))
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EOPNOTSUPP, "UCXADDR: %s",
                             why), 0;
    struct uep *u = ucx_ep_new(c->srv, &c->xp, why, sizeof(why));
    if (!u)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EOPNOTSUPP, "UCXADDR: %s",
                             why), 0;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    if (ucx_ep_reply(u, &w)) {
        ddio_wbuf_free(&w);
        ucx_ep_close(u);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "out of memory"), 0;
    }
    pthread_mutex_lock(&c->mu);
    c->uep = u;
    pthread_mutex_unlock(&c->mu);
    DDIO_INFO("connection %" PRIu64 " from %s: UCX endpoint attached", c->id, c->peer);
    return reply_w(c, h, &w);
}

/* OPEN with DDIO_O_LOCAL: LOCAL's read-only handover done before the answer,
 * which saves a same-host reader the LOCAL round trip at its first read. A
 * client this cannot reach (another host) gets the answer without it and
 * reads through the server. */
static void open_local(struct conn *c, struct ofile *of, const struct ddio_open *m)
{
    if (!m->local_name || rebuild_unbuilt(c->srv, of->path))
        return;
    struct ddio_local_req lr = {.name = m->local_name};
    memcpy(lr.nonce, m->local_nonce, DDIO_LOCAL_NONCE);
    int rc = local_hand_over(of, &lr, 0);
    if (rc == 0)
        stats_bump(&c->srv->stats, &c->srv->stats.local_handovers);
    else
        DDIO_DEBUG("OPEN of %s from %s: no same-host handover (%s)", of->path, c->peer,
                   ddio_errno_name(-rc));
}

int on_open(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_open m;
    memset(&m, 0, sizeof(m));
    if (ddio_dec_open(p, h->len, &m))
        return bad_payload(c, h);
    fault_hit(FAULT_OPEN);
    struct ofile *of;
    int created = 0;
    char msg[768];
    /* a create of a mirrored file is refused before it makes anything (the
     * layout proposed, 0: the server's default); every open once the
     * stored layout is known, below */
    uint32_t want = m.layout.copies || m.layout.ec.k ? ddio_layout_redundancy(&m.layout)
        : c->srv->store.copies;
    if ((m.amode & DDIO_O_CREAT) && member_refused(c, h, want)) {
        free(m.path);
        free(m.local_name);
        return 0;
    }
    struct store_creator cr = {m.once_client, m.once_call};   /* 0, 0 without DDIO_O_ONCE */
    watch_note_client(c, m.once_client);
    char norm[DDIO_MAX_STR + 1];
    int ok = store_norm_path(m.path, norm, sizeof(norm)) == 0;
    /* a create is noted for the members out before anything is made */
    uint64_t gen = 0;
    if (ok && (m.amode & DDIO_O_CREAT) && member_note_change(c, h, want, norm, &gen)) {
        free(m.path);
        free(m.local_name);
        return 0;
    }
    int rc = ok ? access_open(c, norm, m.amode, msg, sizeof(msg)) : 0;
    if (rc == 0 && ok)
        rc = rebuild_open_refused(c, norm, msg, sizeof(msg));
    if (rc == 0)
        rc = store_open(&c->srv->store, m.path, m.amode, &m.layout, &cr, &of, &created, msg,
                        sizeof(msg));
    changed_end(c->srv, gen);
    /* not here, and this server is out: perhaps made while it was out
     * (the client opens it without this server if it is mirrored) */
    if (rc == -ENOENT && !(m.amode & DDIO_O_CREAT) && member_self_out(&c->srv->member)) {
        snprintf(msg, sizeof(msg), "%.300s is not on this server, which is out of the "
                 "membership", m.path);
        rc = -DDIO_E_OUT;
    }
    /* a fence put up meanwhile saw no open file: this open sees the fence */
    if (rc == 0 && ok && (rc = rebuild_open_refused(c, norm, msg, sizeof(msg))) != 0)
        store_release(&c->srv->store, of);
    /* a fold cut off (its parity matches the merged data): no new partial
     * write may change the merged data until a fold finishes it */
    if (rc == 0 && ok && (m.amode & (DDIO_O_WRONLY | DDIO_O_RDWR)) && of->copy[STORE_OVERLAY]
        && of->copy[STORE_OVERLAY]->ovl && ovl_pstate_count(of->copy[STORE_OVERLAY]->ovl)
        && !rebuild_fence_held(c, norm)) {
        snprintf(msg, sizeof(msg), "%.300s: a fold of its partial groups into parity was cut "
                 "off; `ddio fold /%.300s` finishes it (reads are served meanwhile)", norm, norm);
        store_release(&c->srv->store, of);
        rc = -EROFS;
    }
    /* a new file is its creator's, with the creator's mode */
    if (rc == 0 && created && ok
        && (rc = access_own(c, norm, (m.amode & DDIO_O_MODE) ? m.mode : 0644, msg,
                            sizeof(msg))) != 0)
        store_release(&c->srv->store, of);
    free(m.path);
    /* a mirrored file's open depends on the membership: what an out
     * server holds may be stale */
    if (rc == 0 && member_refused_on(c, h, ddio_layout_redundancy(&of->layout), of->path)) {
        store_release(&c->srv->store, of);
        free(m.local_name);
        return 0;
    }
    /* a writable handle's writes skip a member that is out for the
     * handle's life: noted now, so no resync lets it in while the handle
     * is open (its fence finds the file open), whether it writes or not */
    if (rc == 0 && (m.amode & (DDIO_O_WRONLY | DDIO_O_RDWR)) && !(m.amode & DDIO_O_CREAT)
        && ddio_redundancy_kept(ddio_layout_redundancy(&of->layout))
        && (rc = missed_note(c->srv, of->path, msg, sizeof(msg)))) {
        store_release(&c->srv->store, of);
        free(m.local_name);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg), 0;
    }
    if (!rc)
        open_local(c, of, &m);
    free(m.local_name);
    if (rc)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg), 0;
    if (created) {
        fault_hit(FAULT_CREATED);   /* tests: created, the answer never sent */
        watch_changed(c, of->path, DDIO_IV_NAME | DDIO_IV_ATTR);
    }
    stats_bump(&c->srv->stats, &c->srv->stats.opens);
    struct ddio_open_r *r = calloc(1, sizeof(*r));
    uint64_t id = r ? handle_add(c, of, m.amode) : 0;
    if (!id) {
        free(r);
        store_release(&c->srv->store, of);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "open: out of memory"), 0;
    }
    r->handle = id;
    r->local_size = store_size(of);
    r->created = (uint32_t)created;
    r->layout = of->layout;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_open_r(&w, r);
    free(r);
    return reply_w(c, h, &w);
}

int on_close(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_handle_req m;
    if (ddio_dec_handle_req(p, h->len, &m))
        return bad_payload(c, h);
    fault_hit(FAULT_CLOSE);
    int last, wrote = 0, changed = 0;
    struct ofile *of = handle_remove(c, m.handle, &last, &wrote, &changed);
    if (!of)
        return bad_handle(c, h, m.handle);
    indoubt_closed(c->srv, of, changed);
    if (last)
        lk_release_owner(&of->locks, c->id);
    if (wrote)          /* close-to-open: a watching mount sees the new size now */
        watch_changed(c, of->path, DDIO_IV_ATTR);
    store_release(&c->srv->store, of);
    return reply_ok(c, h);
}

/* LOCALSTAT: what a handle's same-host descriptors moved, for the counters */
int on_localstat(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_localstat m;
    if (ddio_dec_localstat(p, h->len, &m))
        return bad_payload(c, h);
    if (!handle_get(c, m.handle))
        return bad_handle(c, h, m.handle);
    stats_local(&c->srv->stats, m.read, m.written);
    if (m.written)
        handle_wrote(c, m.handle);
    return reply_ok(c, h);
}

int on_stat(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_handle_req m;
    if (ddio_dec_handle_req(p, h->len, &m))
        return bad_payload(c, h);
    struct ofile *of = handle_get(c, m.handle);
    if (!of)
        return bad_handle(c, h, m.handle);
    /* a replacement's size of a file it has not rebuilt is not the file's:
     * the size fails, as with a server out, rather than come out short */
    if (rebuild_unbuilt(c->srv, of->path))
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENODATA, "size of %s: not "
                             "rebuilt on this replacement server yet", of->path), 0;
    struct ddio_u64_r r = {.value = store_size(of)};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_u64_r(&w, &r);
    return reply_w(c, h, &w);
}

int on_local(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_local_req m;
    if (ddio_dec_local_req(p, h->len, &m))
        return bad_payload(c, h);
    int writable = 0;
    struct ofile *of = handle_retain(c, h, m.handle, &writable);
    if (!of) {
        free(m.name);
        return 0;
    }
    /* writes only through a handle opened for writing; nothing of a file
     * a replacement has not rebuilt (its datafiles are not the file's) */
    int rc = rebuild_unbuilt(c->srv, of->path) ? -ENODATA
        : local_hand_over(of, &m, writable && (m.flags & DDIO_LOCAL_WRITE));
    free(m.name);
    if (rc == -ECONNREFUSED || rc == -ENOENT)
        conn_send_err(c, h->type | DDIO_REPLY, h->req, EHOSTUNREACH,
                      "same-host I/O: the client is not on this host");
    else if (rc)
        conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "same-host I/O of %s: %s",
                      of->path, ddio_errno_name(-rc));
    store_release(&c->srv->store, of);
    if (rc)
        return 0;
    stats_bump(&c->srv->stats, &c->srv->stats.local_handovers);
    return reply_ok(c, h);
}

int on_setsize(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_setsize m;
    if (ddio_dec_setsize(p, h->len, &m))
        return bad_payload(c, h);
    int writable = 0;
    struct ofile *of = handle_get_w(c, m.handle, &writable);
    if (!of)
        return bad_handle(c, h, m.handle);
    if (!writable)
        return read_only(c, h, m.handle);
    uint64_t gen = 0;
    if (member_refused_on(c, h, ddio_layout_redundancy(&of->layout), of->path)
        || member_note_change(c, h, ddio_layout_redundancy(&of->layout), of->path, &gen))
        return 0;
    if (handle_changing(c, h, m.handle, of)) {
        changed_end(c->srv, gen);
        return 0;
    }
    /* an extending set_size reaches a server for its copies' sake too:
     * nothing of it shrinks */
    int rc = (m.flags & DDIO_SS_GROW) && m.local_size <= store_size(of) ? 0
        : store_setsize(of, m.local_size);
    /* ec:K+M: cut, its parity and overlay past the end go (the client wrote
     * the cut group whole first); else the size it notes */
    if (rc == 0 && of->layout.ec.k && !(m.flags & DDIO_SS_GROW) && m.logical_size != UINT64_MAX)
        rc = store_ec_cut(of, m.logical_size);
    if (rc == 0 && of->copy[STORE_OVERLAY] && m.logical_size != UINT64_MAX)
        rc = ovl_note_size(of->copy[STORE_OVERLAY]->ovl, m.logical_size);
    if (rc == 0 && m.logical_size != UINT64_MAX)
        rc = store_copies_setsize(of, m.logical_size, (m.flags & DDIO_SS_GROW) != 0);
    changed_end(c->srv, gen);
    if (rc) {
        indoubt_failed(c->srv, of);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "set size of %s: %s",
                             of->path, ddio_errno_name(-rc)), 0;
    }
    handle_wrote(c, m.handle);
    watch_changed(c, of->path, DDIO_IV_ATTR);
    return reply_ok(c, h);
}

int on_stats(struct conn *c, const struct ddio_hdr *h)
{
    struct server *srv = c->srv;
    struct ddio_stats_r r;
    struct stats_disk dk[DDIO_MAX_ROOTS];
    int nd = srv->ndisks < DDIO_MAX_ROOTS ? srv->ndisks : DDIO_MAX_ROOTS;
    for (int d = 0; d < nd; d++) {
        struct disk_counters dc;
        disk_get_counters(&srv->disks[d], &dc);
        dk[d] = (struct stats_disk){dc.bytes_read, dc.bytes_written, dc.ops, dc.busy_us,
                                    dc.depth};
    }
    struct stats_env env = {.ndisks = nd, .disks = dk, .nroots = srv->cfg.nroots,
                            .roots = srv->cfg.roots, .block_size = srv->cfg.block_size,
                            .checksums = srv->cfg.checksums};
    rebuild_counts(srv, &env.rb_unbuilt, &env.rb_done, &env.rb_pending);
    env.missed_files = missed_count(srv);
    env.changed_files = changed_count(srv);
    env.indoubt_files = indoubt_count(srv);
    env.device_bps = srv->device_bps;
    struct rebuild_progress pr;
    rebuild_progress_get(srv, &pr);
    if (pr.reported) {
        env.rb_bytes_done = pr.done;
        env.rb_bytes_total = pr.total;
        env.rb_rate = pr.rate;
        env.rb_report_age_ms = (uint64_t)(ddio_now_ms() - pr.at_ms);
    }
    if (stats_snapshot(&srv->stats, &env, &r)) {
        ddio_stats_r_free(&r);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "stats: out of memory"), 0;
    }
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_stats_r(&w, &r);
    ddio_stats_r_free(&r);
    return reply_w(c, h, &w);
}

/* w's payload decoded into w->u, and the handle it names; 0, a decoder's
 * error, or -EINVAL: a lock's command or type is not one we know */
static int decode_slow(struct work *w, uint64_t *handle)
{
    const struct ddio_hdr *h = &w->h;
    int rc;
    if (h->type == DDIO_T_XFER) {
        rc = ddio_dec_xfer(w->payload, h->len, &w->u.x);
        *handle = w->u.x.handle;
    } else if (h->type == DDIO_T_LOCK) {
        rc = ddio_dec_lock(w->payload, h->len, &w->u.lk);
        *handle = w->u.lk.handle;
        if (rc == 0 && (w->u.lk.cmd < DDIO_LK_SETLK || w->u.lk.cmd > DDIO_LK_UNLCK
                        || (w->u.lk.cmd != DDIO_LK_UNLCK && !lock_type(w->u.lk.type))))
            rc = -EINVAL;
    } else if (h->type == DDIO_T_PREALLOC) {
        rc = ddio_dec_prealloc(w->payload, h->len, &w->u.pa);
        *handle = w->u.pa.handle;
    } else if (h->type == DDIO_T_SCRUB) {
        rc = ddio_dec_scrub(w->payload, h->len, &w->u.sc);
        *handle = w->u.sc.handle;
    } else if (h->type == DDIO_T_REPAIR) {
        rc = ddio_dec_repair(w->payload, h->len, &w->u.rp);
        *handle = w->u.rp.handle;
    } else if (h->type == DDIO_T_ECREAD) {
        rc = ddio_dec_ecread(w->payload, h->len, &w->u.er);
        *handle = w->u.er.handle;
    } else {
        struct ddio_handle_req m;
        rc = ddio_dec_handle_req(w->payload, h->len, &m);
        *handle = m.handle;
    }
    return rc;
}

/* a request that did not start: its payload and itself */
static void work_free(struct work *w)
{
    changed_end(w->c->srv, w->changed_gen);
    free(w->payload);
    free(w);
}

/* requests that may wait run on their own thread */
int on_slow(struct conn *c, const struct ddio_hdr *h, uint8_t **payload)
{
    static void (*const fns[])(struct work *) = {
        [DDIO_T_XFER] = do_xfer, [DDIO_T_SYNC] = do_sync,
        [DDIO_T_PREALLOC] = do_prealloc, [DDIO_T_LOCK] = do_lock,
        [DDIO_T_SCRUB] = do_scrub, [DDIO_T_REPAIR] = do_repair, [DDIO_T_ECREAD] = do_ecread,
    };
    struct work *w = work_new(c, h, payload, fns[h->type]);
    if (!w)
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, ENOMEM, "out of memory"), 0;
    uint64_t handle;
    int rc = decode_slow(w, &handle);
    if (rc == -EINVAL) {
        work_free(w);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EINVAL,
                             "lock: bad command or type"), 0;
    }
    if (rc == 0 && h->type == DDIO_T_XFER && w->u.x.desc_len > c->srv->cfg.max_desc) {
        uint32_t len = w->u.x.desc_len;
        work_free(w);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EMSGSIZE, "descriptor of %u "
                             "bytes exceeds the limit of %" PRIu64 " bytes (--max-desc)", len,
                             c->srv->cfg.max_desc), 0;
    }
    int writable = 0;
    if (rc || !(w->of = handle_retain(c, h, handle, &writable))) {
        work_free(w);
        return rc ? bad_payload(c, h) : 0;
    }
    if (!writable && ((h->type == DDIO_T_XFER && w->u.x.op == DDIO_X_WRITE) ||
                      h->type == DDIO_T_PREALLOC)) {
        store_release(&c->srv->store, w->of);
        work_free(w);
        return read_only(c, h, handle);
    }
    int changes = (h->type == DDIO_T_XFER && w->u.x.op == DDIO_X_WRITE)
        || h->type == DDIO_T_PREALLOC;
    /* a copied file's LOCK only from the view of who is out that makes
     * this server the one holding its locks (an unlock always) */
    int unlock = h->type == DDIO_T_LOCK && w->u.lk.cmd == DDIO_LK_UNLCK;
    if (!unlock && (member_refused_on(c, h, ddio_layout_redundancy(&w->of->layout), w->of->path)
                                   || (changes && member_note_change(c, h,
                                                                     ddio_layout_redundancy(&w->of->layout),
                                                                     w->of->path,
                                                                     &w->changed_gen))
                                   || (changes && handle_changing(c, h, handle, w->of)))) {
        store_release(&c->srv->store, w->of);
        work_free(w);
        return 0;
    }
    /* a lock that never waits is answered here, in order with other replies */
    if (h->type == DDIO_T_LOCK && w->u.lk.cmd != DDIO_LK_SETLKW) {
        do_lock(w);
        work_free(w);
        return 0;
    }
    if (work_runs_inline(w))
        work_run_inline(c, w);
    else
        work_spawn(c, w);
    return 0;
}
