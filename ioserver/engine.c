/* The XFER engine's core: an XFER's record, its failure, heartbeats and
 * events, and the engine's lists of XFERs at the gate and running, which
 * connection drops, cancels and shutdown fail. The engine's other files:
 * engine_slots.c, engine_getput.c, engine_write.c, engine_pass.c, gate.c.
 *
 * Threads: the request thread that completes a collective's gate (or the
 * thread of an independent XFER) runs the whole pass: it plans, issues
 * blocks to the disk threads, and reacts to events (disk completions
 * posted by disk threads, GET answers posted by transport threads).
 * It only ever waits on its own condition variable, a disk buffer, a block
 * lock or an endpoint's send space, each with the XFER's timeout, and it
 * only blocks on a buffer or block lock while it has nothing in flight, so
 * two XFERs cannot hold resources the other waits for.
 *
 * Clients are endpoints of a transport (transport.h; TCP in tcp.c): the
 * engine says what to send and where GET answers go, the transport moves
 * the bytes. Its threads never wait for the engine: an answer is stored
 * into the block buffer by the transport's thread itself (engine_get_sink).
 * A client that stops reading blocks nobody but the engine that feeds it
 * (up to the deadline). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine_int.h"
#include "cond.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "ddio_log.h"
#include "ddio_net.h"             /* the clock and errno names only */

#define DEFAULT_TIMEOUT_MS 60000u
#define MIN_BEAT_MS 250u

/* ---- failure ----------------------------------------------------------------------------- */

/* record the first failure (x->mu held); the message names the server */
void xfer_fail_locked(struct xfer *x, int err, const char *fmt, ...)
{
    if (x->status)
        return;
    va_list ap;
    va_start(ap, fmt);
    srv_errmsg(x->srv, x->msg, sizeof(x->msg), fmt, ap);
    va_end(ap);
    x->status = err;
    pthread_cond_broadcast(&x->cv);
}

int xfer_failed(struct xfer *x)
{
    pthread_mutex_lock(&x->mu);
    int s = x->status;
    pthread_mutex_unlock(&x->mu);
    return s;
}

/* ---- heartbeats ------------------------------------------------------------------ */

/* A client fails the call after a silence of its timeout, but a busy server
 * may legitimately send a participant nothing for much longer (its blocks
 * come last, or the gate waits for late ranks). So every present, not yet
 * answered participant that was sent nothing for beat_ms gets a PROGRESS.
 * It is sent from the engine's own waits: a hung engine stays silent and
 * still trips the client's deadline. x->mu held; dropped while queueing
 * (the progress op never waits for send space). Returns when the next
 * one is due. */
int64_t xfer_beat_locked(struct xfer *x)
{
    int64_t now = ddio_now_ms();
    if (now < x->next_beat_ms)
        return x->next_beat_ms;
    int64_t next = now + x->beat_ms;
    for (uint32_t r = 0; r < x->n; r++) {
        struct part *p = &x->parts[r];
        if (!p->present || p->answered)
            continue;
        if (now - p->last_ms >= (int64_t)x->beat_ms) {
            p->last_ms = now;
            pthread_mutex_unlock(&x->mu);
            xp_progress(p->ep, p->req, now + x->timeout_ms);
            pthread_mutex_lock(&x->mu);
        }
        if (p->last_ms + x->beat_ms < next)
            next = p->last_ms + x->beat_ms;
    }
    x->next_beat_ms = next;
    return next;
}

/* the end of the next wait slice: the next heartbeat or the deadline */
int64_t xfer_beat_slice(struct xfer *x, int64_t deadline_ms)
{
    pthread_mutex_lock(&x->mu);
    int64_t next = xfer_beat_locked(x);
    pthread_mutex_unlock(&x->mu);
    return next < deadline_ms ? next : deadline_ms;
}

/* ---- xfer lifetime ---------------------------------------------------------------- */

struct xfer *xfer_new(struct server *srv, const struct ddio_xfer *m, struct ofile *of)
{
    struct xfer *x = calloc(1, sizeof(*x));
    if (!x)
        return NULL;
    x->parts = calloc(m->nparticipants, sizeof(*x->parts));
    if (!x->parts) {
        free(x);
        return NULL;
    }
    x->srv = srv;
    x->of = of;
    x->group = m->group;
    x->seq = m->seq;
    x->op = m->op;
    x->flags = m->flags;
    x->copy = (m->flags & DDIO_XF_COPY) ? m->copy : 0;
    x->n = m->nparticipants;
    x->timeout_ms = m->timeout_ms ? m->timeout_ms : DEFAULT_TIMEOUT_MS;
    x->t_first_us = ddio_now_us();
    x->beat_ms = x->timeout_ms / 4 > MIN_BEAT_MS ? x->timeout_ms / 4 : MIN_BEAT_MS;
    x->next_beat_ms = ddio_now_ms() + x->beat_ms;
    pthread_mutex_init(&x->mu, NULL);
    cond_init_mono(&x->cv);
    return x;
}

void xfer_free(struct xfer *x)
{
    for (uint32_t i = 0; i < x->n; i++) {
        struct part *p = &x->parts[i];
        if (p->have_desc)
            ddio_desc_free(&p->d);
        if (p->ep)
            xp_unref(p->ep);
    }
    store_release_pass(&x->srv->store, x->of, x->of_answered);
    free(x->parts);
    free(x->blocks);
    for (unsigned i = 0; x->slots && i < x->nslots; i++)
    {
        free(x->slots[i].runs);
        free(x->slots[i].scratch);
    }
    free(x->slots);
    ddio_ec_codec_free(x->codec);
    free(x->partial);
    free(x->ready);
    free(x->bitmap);
    free(x->w_issued);
    free(x->w_next);
    pthread_cond_destroy(&x->cv);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

void xfer_list_remove(struct xfer **head, struct xfer *x)
{
    for (struct xfer **pp = head; *pp; pp = &(*pp)->next)
        if (*pp == x) {
            *pp = x->next;
            return;
        }
}

/* ---- views ------------------------------------------------------------------------ */

/* A write of a mirrored file covers the server's own units and every
 * mirror it holds in one pass; a read, its own units, or with DDIO_XF_COPY
 * (a lost server's part) only that copy. */
int xfer_views(struct xfer *x)
{
    const struct ddio_layout_rec *l = &x->of->layout;
    uint32_t copies = l->copies ? l->copies : 1;
    x->nviews = 0;
    if (x->copy) {
        if (x->copy >= copies || !x->of->copy[x->copy]) {
            FAIL(x, EINVAL, "read of copy %u of %s: the file has %u cop%s", x->copy,
                 x->of->path, copies, copies == 1 ? "y" : "ies");
            return -EINVAL;
        }
        x->views[x->nviews++] = (struct xview){x->of->copy[x->copy],
                                               ddio_copy_of(x->S.count, x->me, x->copy), V_COPY};
        stats_bump(&x->srv->stats, &x->srv->stats.copy_reads);
        return 0;
    }
    if (x->op == DDIO_X_WRITE && (x->flags & DDIO_XF_FOLD_PARITY)) {   /* a fold's steps */
        x->views[x->nviews++] = (struct xview){x->of->copy[STORE_PARITY], x->me, V_PARITY};
        return 0;
    }
    x->views[x->nviews++] = (struct xview){x->of, x->me, V_DATA};
    if (x->op == DDIO_X_WRITE && (x->flags & DDIO_XF_FOLD_DATA))
        return 0;
    for (uint32_t c = 1; x->op == DDIO_X_WRITE && c < copies; c++)
        x->views[x->nviews++] = (struct xview){x->of->copy[c],
                                               ddio_copy_of(x->S.count, x->me, c), V_COPY};
    if (x->op == DDIO_X_WRITE && x->of->layout.ec.k) {   /* whole groups, partial ones */
        x->views[x->nviews++] = (struct xview){x->of->copy[STORE_PARITY], x->me, V_PARITY};
        x->views[x->nviews++] = (struct xview){x->of->copy[STORE_OVERLAY], x->me, V_OVERLAY};
    }
    return 0;
}

uint64_t xfer_local_size(struct xfer *x)
{
    return store_size(x->nviews && x->views[0].kind != V_PARITY ? x->views[0].of : x->of);
}

/* ---- per-block segments --------------------------------------------------------------- */

/* Fill up to cap segments of participant p in local [*o, end) (one per
 * stripe-unit piece holding p's bytes); advances *o. */
/* The logical offset of local offset o of block s's view, or -1 where an
 * ec:K+M write puts nothing in that view: the units of groups it covers in
 * part are written to the overlays, not in place, and the overlay holds
 * nothing of the groups it covers whole. */
static int64_t block_logical(const struct xfer *x, const struct slot *s, uint64_t o)
{
    const uint64_t gsz = x->S.unit * (x->of->layout.ec.k ? x->of->layout.ec.k : 1);
    if (s->kind == V_OVERLAY) {
        uint64_t L = ddio_ec_ovl_logical(&x->of->layout.ec, x->S.unit, x->me, o);
        return L == UINT64_MAX || !ec_partial(x, L / gsz) ? -1 : (int64_t)L;
    }
    uint64_t L = ddio_layout_logical(&x->S, s->me, o);
    return x->npartial && s->kind == V_DATA && ec_partial(x, L / gsz) ? -1 : (int64_t)L;
}

size_t xfer_block_segs(const struct xfer *x, const struct slot *s, const struct part *p,
                       uint64_t *o, uint64_t end, struct bseg *out, size_t cap)
{
    uint64_t a = s->a;
    size_t n = 0;
    while (*o < end && n < cap) {
        uint64_t uend = (*o / x->S.unit + 1) * x->S.unit;
        uint64_t e = uend < end ? uend : end;
        int64_t L = block_logical(x, s, *o);
        int64_t Lend = L + (int64_t)(e - *o);
        if (L >= 0 && p->have_desc && p->d.length && L < p->end && Lend > p->first) {
            uint64_t s_lo = ddio_desc_stream_before(&p->d, L);
            uint64_t s_hi = ddio_desc_stream_before(&p->d, Lend);
            if (s_hi > s_lo)
                out[n++] = (struct bseg){s_lo, s_hi, *o - a, L};
        }
        *o = e;
    }
    return n;
}

/* ---- events --------------------------------------------------------------------------- */

void xfer_post_locked(struct xfer *x, struct slot *s)
{
    x->ready[x->nready++] = s->idx;
    pthread_cond_broadcast(&x->cv);
}

/* What a stalled XFER waits for, for its timeout's message (x->mu held,
 * engine thread: the slots are its own): the participants whose GETs are
 * unanswered, else the disk. A stall the log cannot explain is a stall
 * nobody can fix. */
static void xfer_waiting_for(const struct xfer *x, char *out, size_t len)
{
    size_t o = 0;
    unsigned disk = 0, held = 0, named = 0;
    for (unsigned i = 0; x->slots && i < x->nslots; i++) {
        disk += x->slots[i].io_busy != 0;
        held += x->slots[i].state == S_HELD;
    }
    for (uint32_t r = 0; r < x->n && o < len; r++) {
        const struct part *p = &x->parts[r];
        if (!p->gets_out)
            continue;
        o += (size_t)snprintf(out + o, len - o, "%s%u GET%s of rank %u (%s)", named++ ? ", " : "",
                              p->gets_out, p->gets_out == 1 ? "" : "s", p->rank,
                              p->ep ? xp_name(p->ep) : "gone");
    }
    if (o < len)
        snprintf(out + o, len - o, "%s%u disk request%s, %u block%s held for order",
                 named ? "; " : "client data or disk: ", disk, disk == 1 ? "" : "s", held,
                 held == 1 ? "" : "s");
}

int xfer_has_event(struct xfer *x)
{
    pthread_mutex_lock(&x->mu);
    int n = x->nready != 0;
    pthread_mutex_unlock(&x->mu);
    return n;
}

/* next event, or NULL when the XFER failed (or drain = 1 and nothing is
 * left on disk) */
struct slot *xfer_wait_event(struct xfer *x, int drain)
{
    pthread_mutex_lock(&x->mu);
    int64_t dl = deadline_of(x);
    for (;;) {
        /* also when an event is ready: a pipeline that never waits still
         * owes the participants without data their heartbeats */
        int64_t wake = xfer_beat_locked(x);
        if (x->nready || (!drain && x->status))
            break;
        if (drain) {              /* disk I/O always completes: no deadline */
            cond_wait_ms(&x->cv, &x->mu, wake);
            continue;
        }
        if (cond_wait_ms(&x->cv, &x->mu, min64(wake, dl)) == ETIMEDOUT && x->nready == 0
            && ddio_now_ms() >= dl) {
            char what[256];
            xfer_waiting_for(x, what, sizeof(what));
            xfer_fail_locked(x, ETIMEDOUT, "%s timed out after %u ms waiting for %s",
                             op_name(x->op), x->timeout_ms, what);
        }
    }
    struct slot *s = NULL;
    if (x->nready && (drain || !x->status))
        s = &x->slots[x->ready[--x->nready]];
    pthread_mutex_unlock(&x->mu);
    return s;
}

/* ---- connection drops, shutdown ---------------------------------------------------------------- */

/* a participant whose endpoint engine_conn_dropped saw go */
int xfer_part_dropped(const struct part *p)
{
    return p->present && __atomic_load_n(&p->ep->dropped, __ATOMIC_ACQUIRE);
}

/* An XFER whose participant's endpoint was dropped before the XFER was
 * listed (its request thread was between reading it and joining when the
 * client died) fails now instead of at the gate's deadline: the drop's scan
 * of the lists did not see it. x->mu held (and e->mu, or the XFER is
 * not listed yet). */
void xfer_fail_if_dropped_locked(struct xfer *x)
{
    for (uint32_t r = 0; r < x->n; r++)
        if (xfer_part_dropped(&x->parts[r])) {
            xfer_fail_locked(x, ECONNRESET, "rank %u (%s) disconnected", r, xp_name(x->parts[r].ep));
            break;
        }
}

void xfer_fail_if_dropped(struct xfer *x)
{
    pthread_mutex_lock(&x->mu);
    xfer_fail_if_dropped_locked(x);
    pthread_mutex_unlock(&x->mu);
}

static void fail_if_member(struct xfer *x, struct xp *ep)
{
    pthread_mutex_lock(&x->mu);
    for (uint32_t r = 0; r < x->n; r++)
        if (x->parts[r].present && x->parts[r].ep == ep) {
            xfer_fail_locked(x, ECONNRESET, "rank %u (%s) disconnected", r, xp_name(ep));
            pthread_cond_broadcast(&x->cv);   /* a failed gate rechecks who is left */
            break;
        }
    pthread_mutex_unlock(&x->mu);
}

void engine_conn_dropped(struct server *srv, struct xp *ep)
{
    struct engine *e = srv->eng;
    pthread_mutex_lock(&e->mu);
    __atomic_store_n(&ep->dropped, 1, __ATOMIC_RELEASE);
    for (struct xfer *x = e->gates; x; x = x->next)
        fail_if_member(x, ep);
    for (struct xfer *x = e->running; x; x = x->next)
        fail_if_member(x, ep);
    pthread_mutex_unlock(&e->mu);
}

static int cancel_if_member(struct xfer *x, struct xp *a, struct xp *b, uint64_t req,
                            const char *why)
{
    int hit = 0;
    pthread_mutex_lock(&x->mu);
    for (uint32_t r = 0; r < x->n && !hit; r++) {
        const struct part *p = &x->parts[r];
        if (p->present && p->req == req && (p->ep == a || (b && p->ep == b))) {
            xfer_fail_locked(x, ECANCELED, "cancelled by rank %u (%s): %s", r, xp_name(p->ep), why);
            hit = 1;
        }
    }
    pthread_mutex_unlock(&x->mu);
    return hit;
}

/* every XFER of collective call (group, seq), whichever rank sent it: the
 * plain-range parts of a collective run as separate one-participant XFERs */
static int cancel_if_call(struct xfer *x, uint64_t group, uint64_t seq, const char *why)
{
    if (!group || x->group != group || x->seq != seq)
        return 0;
    FAIL(x, ECANCELED, "collective seq %" PRIu64 " cancelled: %s", seq, why);
    return 1;
}

int engine_cancel(struct server *srv, struct xp *a, struct xp *b, uint64_t req, uint64_t group,
                  uint64_t seq, const char *why)
{
    struct engine *e = srv->eng;
    int hit = 0;
    pthread_mutex_lock(&e->mu);
    for (int list = 0; list < 2; list++)
        for (struct xfer *x = list ? e->running : e->gates; x; x = x->next)
            hit += cancel_if_call(x, group, seq, why) || cancel_if_member(x, a, b, req, why);
    pthread_mutex_unlock(&e->mu);
    return hit;
}

/* what the drain waits for, in the log (listener_drain): each collective
 * still at the gate or running, how far it got */
void engine_report(struct server *srv)
{
    struct engine *e = srv->eng;
    pthread_mutex_lock(&e->mu);
    for (int list = 0; list < 2; list++)
        for (struct xfer *x = list ? e->running : e->gates; x; x = x->next) {
            pthread_mutex_lock(&x->mu);
            DDIO_WARN("  %s: %s%s seq %" PRIu64 ", %u of %u participants arrived, "
                      "%" PRId64 " ms since the first, status %d%s%s",
                      list ? "running" : "at the gate", is_collective(x) ? "collective " : "",
                      x->op == DDIO_X_READ ? "read" : "write", x->seq, x->arrived, x->n,
                      (ddio_now_us() - x->t_first_us) / 1000, x->status,
                      x->status ? ": " : "", x->status ? x->msg : "");
            pthread_mutex_unlock(&x->mu);
        }
    pthread_mutex_unlock(&e->mu);
}

void engine_shutdown(struct server *srv)
{
    struct engine *e = srv->eng;
    if (!e)
        return;                   /* start-up failed before the engine existed */
    pthread_mutex_lock(&e->mu);
    for (struct xfer *x = e->gates; x; x = x->next)
        FAIL(x, ESHUTDOWN, "server shutting down");
    for (struct xfer *x = e->running; x; x = x->next)
        FAIL(x, ESHUTDOWN, "server shutting down");
    pthread_mutex_unlock(&e->mu);
}

int engine_create(struct server *srv)
{
    struct engine *e = calloc(1, sizeof(*e));
    if (!e)
        return -ENOMEM;
    pthread_mutex_init(&e->mu, NULL);
    srv->eng = e;
    return 0;
}

void engine_destroy(struct server *srv)
{
    if (!srv->eng)
        return;
    pthread_mutex_destroy(&srv->eng->mu);
    free(srv->eng);
    srv->eng = NULL;
}
