/* The collective gate: an XFER's arrival (engine_xfer: checked, answered
 * from the replay table when it is a resend of a write done here), and the
 * gate where a collective's participants meet before its pass runs, a
 * resent collective's with the ranks that came. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine_int.h"
#include "engine_pass.h"
#include "cond.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "ddio_log.h"
#include "ddio_net.h"             /* the clock and errno names only */
#include "replay.h"

#define MAX_PARTICIPANTS (1u << 16)
/* a resent collective (DDIO_XF_RESENT) runs with the participants that came
 * when no other one came for this long: the rest got their DONE before the
 * server restarted and will never come */
#define RESEND_GRACE_MS 1000

/* a collective failed (or refused) because the server stops (SIGTERM): the
 * clients resend it, to the server's restart (ECONNRESET is recoverable) */
#define STOPPING_MSG "server stopping: a collective is resent to its restart"

/* ---- arrival and the collective gate ------------------------------------------------------- */

/* decode one participant's descriptor; on failure the message says why */
static int load_desc(const struct srv_config *cfg, struct part *p, const struct ddio_xfer *m,
                     char *why, size_t n)
{
    uint64_t nodes = cfg->max_call_mem / 2 / DESC_NODE_BYTES / m->nparticipants;
    int rc = ddio_desc_decode_lim(m->desc, m->desc_len,
                                  (uint32_t)(nodes < DDIO_DESC_MAX_NODES ? nodes : DDIO_DESC_MAX_NODES),
                                  cfg->max_depth, &p->d);
    if (rc == -E2BIG) {
        snprintf(why, n, "rank %u: descriptor deeper than %u levels or larger than "
                 "%" PRIu64 " nodes (server limits --max-desc-depth, --max-call-memory)",
                 m->rank, cfg->max_depth, nodes);
        return -E2BIG;
    }
    if (rc) {
        snprintf(why, n, "rank %u: malformed descriptor (%s)", m->rank, ddio_errno_name(-rc));
        return -EPROTO;
    }
    p->have_desc = 1;
    if (ddio_desc_check_monotone(&p->d)) {
        snprintf(why, n, "rank %u: descriptor is not monotone in the file", m->rank);
        return -EINVAL;
    }
    ddio_desc_bounds(&p->d, &p->first, &p->end);
    return 0;
}

/* DDIO_XF_INLINE_OWN: participant p's stream is one range of a file whose
 * units are each on one server; *lo and *n: the local range of this
 * server's bytes in it (the inline bytes). -1: not such a call. */
static int own_bytes(const struct ofile *of, const struct part *p, uint64_t *lo, uint64_t *n)
{
    const struct ddio_layout_rec *l = &of->layout;
    if (layout_redundant(l) || p->end - p->first != (int64_t)p->d.length || p->d.length == 0)
        return -1;
    struct ddio_stripe S = {l->stripe_unit, l->stripe_count};
    uint64_t hi;
    ddio_layout_local_range(&S, l->server_index, (uint64_t)p->first, p->d.length, lo, &hi);
    *n = hi - *lo;
    return 0;
}

static void add_part(struct xfer *x, struct xp *ep, uint64_t req, const struct ddio_xfer *m,
                     int *bad, char *why, size_t whylen)
{
    struct part *p = &x->parts[m->rank];
    xp_ref(ep);
    p->ep = ep;
    p->req = req;
    p->rank = m->rank;
    p->present = 1;
    p->last_ms = ddio_now_ms();   /* its client's deadline starts now */
    p->once = (m->flags & DDIO_XF_ONCE) != 0;
    p->once_client = m->once_client;
    p->once_call = m->once_call;
    x->arrived++;
    x->resent |= (m->flags & DDIO_XF_RESENT) != 0;
    x->last_arrival_ms = p->last_ms;
    x->ctr.desc_bytes += m->desc_len;
    *bad = load_desc(&x->srv->cfg, p, m, why, whylen);
    if (!*bad && (m->flags & DDIO_XF_INLINE)) {
        uint64_t want = p->d.length;
        if ((m->flags & DDIO_XF_INLINE_OWN) && own_bytes(x->of, p, &p->inl_lo, &want)) {
            snprintf(why, whylen, "rank %u: inline bytes of its own for a call that is not "
                     "one range of a file without copies or parity", m->rank);
            *bad = -EPROTO;
        } else if (m->inline_len == want) {
            p->inl = m->inline_data;
            p->inl_own = (m->flags & DDIO_XF_INLINE_OWN) != 0;
        } else {
            snprintf(why, whylen, "rank %u: %u inline bytes for %" PRIu64 " of the stream's",
                     m->rank, m->inline_len, want);
            *bad = -EPROTO;
        }
    }
}

/* the gate this XFER joins (e->mu held); a resend passes by a failed one
 * (its first attempt's, still waiting for late participants) */
static struct xfer *find_gate(struct engine *e, const struct ofile *of, const struct ddio_xfer *m)
{
    for (struct xfer *x = e->gates; x; x = x->next) {
        if (x->of != of || x->group != m->group || x->seq != m->seq)
            continue;
        if (!(m->flags & DDIO_XF_RESENT) || !xfer_failed(x))
            return x;
    }
    return NULL;
}

/* Until when the gate waits: the deadline, or for a resent call (x->mu
 * held) RESEND_GRACE_MS after the latest arrival. A collective's parts are
 * independent (each rank's bytes are its own; the gate only buys one sorted
 * sweep), so a resent call runs with the participants that came: the others
 * were answered before a restart, or come later and run on their own. */
static int64_t gate_until(const struct xfer *x, int64_t dl)
{
    return x->resent ? min64(dl, x->last_arrival_ms + RESEND_GRACE_MS) : dl;
}

/* nobody else came in time: a resent call runs with those present, another
 * fails; x->mu held */
static void gate_expired(struct xfer *x)
{
    if (x->resent) {
        DDIO_INFO("collective %s seq %" PRIu64 " resent: running %u of %u participants "
                  "(the others were answered before, or run on their own)", op_name(x->op),
                  x->seq, x->arrived, x->n);
        return;
    }
    xfer_fail_locked(x, ETIMEDOUT, "collective %s seq %" PRIu64 ": %u of %u participants "
                "arrived within %u ms", op_name(x->op), x->seq, x->arrived, x->n,
                x->timeout_ms);
}

/* every participant that came has lost its connection (a job that died):
 * x->mu held */
static int arrived_all_dropped(const struct xfer *x)
{
    for (uint32_t r = 0; r < x->n; r++)
        if (x->parts[r].present && !xfer_part_dropped(&x->parts[r]))
            return 0;
    return 1;
}

/* The creator waits for the others (or the deadline) and runs the pass.
 * After a failure the gate stays until everyone arrived or the deadline, so
 * late participants get the error at once instead of waiting in vain; but
 * not once every participant that came is gone (the job died: its request
 * threads and connections are let go now, and a late rank, if any, meets
 * a gate of its own and its deadline). */
static void gate_wait(struct server *srv, struct xfer *x)
{
    int64_t dl = x->t_first_us / 1000 + x->timeout_ms;
    pthread_mutex_lock(&x->mu);
    while (x->arrived < x->n) {
        if (x->status) {
            pthread_mutex_unlock(&x->mu);
            for (uint32_t r = 0; r < x->n; r++)
                pass_send_done(x, &x->parts[r]);   /* parts are stable: only added */
            pthread_mutex_lock(&x->mu);
            if (atomic_load(&srv->stopping))
                break;            /* nobody waits for late ones: they resend */
            if (arrived_all_dropped(x))
                break;
        }
        int64_t wake = xfer_beat_locked(x);
        if (x->arrived >= x->n)
            break;                /* the last one came while the lock was dropped */
        if (cond_wait_ms(&x->cv, &x->mu, min64(wake, gate_until(x, dl))) == ETIMEDOUT
            && x->arrived < x->n && ddio_now_ms() >= gate_until(x, dl)) {
            gate_expired(x);
            break;
        }
    }
    pthread_mutex_unlock(&x->mu);
    pthread_mutex_lock(&srv->eng->mu);
    xfer_list_remove(&srv->eng->gates, x);
    pthread_mutex_unlock(&srv->eng->mu);
    pass_execute(srv, x);
}

static int same_op(const struct xfer *x, const struct ddio_xfer *m)
{
    return x->op == m->op && x->n == m->nparticipants
        && (x->flags & DDIO_XF_NOSORT) == (m->flags & DDIO_XF_NOSORT);
}

static void join(struct server *srv, struct xp *ep, uint64_t req, const struct ddio_xfer *m,
                 struct ofile *of)
{
    struct engine *e = srv->eng;
    char why[256];
    int bad = 0;
    pthread_mutex_lock(&e->mu);
    if (atomic_load(&srv->stopping)) {
        /* a gate now could wait for ranks that cannot connect any more.
         * Checked under e->mu: engine_stopping fails the gates under it
         * after the flag is set, so a join racing the signal either sees
         * the flag here or its gate is failed there (CI: a gate made in
         * that window held the drain for the whole timeout) */
        pthread_mutex_unlock(&e->mu);
        store_release(&srv->store, of);
        atomic_fetch_add(&srv->stop_refused, 1);
        xp_reply_err(ep, DDIO_T_XFER | DDIO_REPLY, req, ECONNRESET, "%s", STOPPING_MSG);
        return;
    }
    struct xfer *x = find_gate(e, of, m);
    if (x) {
        store_release(&srv->store, of);   /* the gate holds the file already */
        pthread_mutex_lock(&x->mu);
        if (!same_op(x, m) || x->parts[m->rank].present) {
            xfer_fail_locked(x, EINVAL, "collective seq %" PRIu64 ": rank %u disagrees (op, count "
                        "or duplicate rank)", m->seq, m->rank);
            pthread_mutex_unlock(&x->mu);
            pthread_mutex_unlock(&e->mu);
            xp_reply_err(ep, DDIO_T_XFER | DDIO_REPLY, req, EINVAL,
                         "collective seq %" PRIu64 ": participant mismatch (rank %u)",
                         m->seq, m->rank);
            return;
        }
        add_part(x, ep, req, m, &bad, why, sizeof(why));
        if (bad)
            xfer_fail_locked(x, -bad, "%s", why);
        else
            xfer_fail_if_dropped_locked(x);
        pthread_cond_broadcast(&x->cv);
        pthread_mutex_unlock(&x->mu);
        pthread_mutex_unlock(&e->mu);
        return;                   /* the creator runs it */
    }
    x = xfer_new(srv, m, of);
    if (!x) {
        pthread_mutex_unlock(&e->mu);
        store_release(&srv->store, of);
        xp_reply_err(ep, DDIO_T_XFER | DDIO_REPLY, req, ENOMEM, "xfer: out of memory");
        return;
    }
    add_part(x, ep, req, m, &bad, why, sizeof(why));
    if (bad)
        FAIL(x, -bad, "%s", why);
    x->next = e->gates;
    e->gates = x;
    xfer_fail_if_dropped(x);
    pthread_mutex_unlock(&e->mu);
    gate_wait(srv, x);
}

static int check_header(const struct ddio_xfer *m, char *why, size_t n)
{
    if (m->op != DDIO_X_READ && m->op != DDIO_X_WRITE)
        snprintf(why, n, "xfer: unknown op %u", m->op);
    else if (m->nparticipants == 0 || m->nparticipants > MAX_PARTICIPANTS)
        snprintf(why, n, "xfer: %u participants (1..%u)", m->nparticipants, MAX_PARTICIPANTS);
    else if (m->rank >= m->nparticipants)
        snprintf(why, n, "xfer: rank %u of %u", m->rank, m->nparticipants);
    else
        return 0;
    return -EINVAL;
}

void engine_xfer(struct server *srv, struct xp *ep, uint64_t req,
                 const struct ddio_xfer *m, struct ofile *of)
{
    char why[256];
    uint8_t *done;
    size_t n;
    if (check_header(m, why, sizeof(why))) {
        store_release(&srv->store, of);
        xp_reply_err(ep, DDIO_T_XFER | DDIO_REPLY, req, EINVAL, "%s", why);
        return;
    }
    if ((m->flags & DDIO_XF_ONCE) && replay_find(m->once_client, m->once_call, &done, &n)) {
        /* a resend of a write done here already: its first answer */
        store_release(&srv->store, of);
        stats_bump(&srv->stats, &srv->stats.replayed);
        xp_reply(ep, DDIO_T_XFER | DDIO_REPLY, req, 0, done, n, ddio_now_ms() + XP_REPLY_TIMEOUT_MS);
        return;
    }
    if (m->nparticipants > 1) {
        join(srv, ep, req, m, of);
        return;
    }
    struct xfer *x = xfer_new(srv, m, of);
    if (!x) {
        store_release(&srv->store, of);
        xp_reply_err(ep, DDIO_T_XFER | DDIO_REPLY, req, ENOMEM, "xfer: out of memory");
        return;
    }
    int bad = 0;
    add_part(x, ep, req, m, &bad, why, sizeof(why));
    if (bad)
        FAIL(x, -bad, "%s", why);
    pass_execute(srv, x);
}

void engine_stopping(struct server *srv)
{
    struct engine *e = srv->eng;
    pthread_mutex_lock(&e->mu);
    for (struct xfer *x = e->gates; x; x = x->next)
        FAIL(x, ECONNRESET, "%s", STOPPING_MSG);
    pthread_mutex_unlock(&e->mu);
}
