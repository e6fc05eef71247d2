/* One XFER's pass: plan its blocks, issue them to the slots, react to the
 * events of the disks and the transports until every block is done (or
 * the XFER failed and its I/O drained), then DONE to every participant. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine_pass.h"
#include "engine_parity.h"
#include "engine_getput.h"
#include "engine_slots.h"
#include "engine_sums.h"
#include "engine_write.h"
#include "indoubt.h"
#include "planner.h"

#include <errno.h>
#include <inttypes.h>

#include "ddio_log.h"
#include "ddio_net.h"             /* the clock and errno names only */
#include "replay.h"

/* ---- the pass ----------------------------------------------------------------------------- */

static int io_error(struct xfer *x, struct slot *s, const char *what)
{
    if (s->dr.res >= 0)
        return 0;
    FAIL(x, -s->dr.res, "%s of %s on disk %d: %s", what, x->of->path, s->disk->idx,
         ddio_errno_name(-s->dr.res));
    return 1;
}

static void process(struct xfer *x, struct slot *s)
{
    int did_io = s->io_busy;
    if (s->io_busy) {             /* S_READ, S_RMW, or S_WRITE of a byte or more */
        x->ctr.disk_us += s->dr.us;
        slot_count_io(x, s);
    }
    s->io_busy = 0;
    switch (s->state) {
    case S_READ:
        if (esums_check(x, s) == 0 && eparity_merge(x, s) == 0 && put_read_block(x, s)) {
            s->state = S_SENT;
            x->nsent++;
            break;
        }
        slot_release(x, s);
        break;
    case S_RMW:
        if (io_error(x, s, "read"))
            break;
        write_rmw_zero_tail(x, s);
        if (esums_check(x, s))
            break;
        x->ctr.blocks_read++;
        x->ctr.nonconsec += (uint64_t)s->dr.nonconsec;
        write_pull_next(x, s);
        break;
    case S_DATA:                  /* every GET of the step was answered */
        write_pull_next(x, s);
        break;
    case S_WRITE:
        if (io_error(x, s, "write")) {
            esums_unsure(x, s);
            break;
        }
        if (did_io)
            esums_written(x, s);
        if (s->kind == V_OVERLAY) {
            int rc = eparity_written(x, s);
            if (rc)
                FAIL(x, -rc, "overlay of %s: %s", x->of->path, ddio_errno_name(-rc));
        }
        x->ctr.blocks_written++;
        x->ctr.nonconsec += (uint64_t)s->dr.nonconsec;
        slot_release(x, s);
        break;
    }
}

/* Start block k. wait = 0: -EAGAIN when a buffer or the block lock is busy
 * (the caller first finishes its own in-flight blocks). */
static int issue_block(struct xfer *x, uint64_t id, int wait)
{
    struct slot *s = slot_find_free(x);
    if (!s)
        return -EAGAIN;
    const struct xview *v = &x->views[plan_view_of(id)];
    uint64_t k = plan_block_of(id), doff;
    int d = store_disk_of(v->of, k * x->B, &doff);
    struct disk *disk = &x->srv->disks[d];
    int64_t dl = deadline_of(x);
    int write = x->op == DDIO_X_WRITE;
    if (write) {
        int rc = slot_lock_block(x, v->of, k, wait, dl);
        if (rc == -ETIMEDOUT)
            FAIL(x, ETIMEDOUT, "block %" PRIu64 " of %s stayed locked for %u ms",
                 k, v->of->path, x->timeout_ms);
        if (rc)
            return rc;
    }
    void *buf = slot_get_buffer(x, disk, wait, dl);
    if (!buf) {
        if (write)
            store_blk_unlock(v->of, k);
        if (!wait)
            return -EAGAIN;
        FAIL(x, ETIMEDOUT, "no free buffer on disk %d for %u ms", d, x->timeout_ms);
        return -ETIMEDOUT;
    }
    uint64_t size = store_size(v->of), a = k * x->B;
    s->k = k;
    s->a = a;
    s->of = v->of;
    s->me = v->me;
    s->kind = v->kind;
    s->disk = disk;
    s->buf = buf;
    s->src = NULL;
    s->locked = write;
    s->io_lo = 0;
    s->old_valid = size > a ? (size - a < x->B ? size - a : x->B) : 0;
    x->inflight++;
    if (write) {
        s->ord = x->w_issued[d]++;
        write_start(x, s);
    } else if (s->old_valid == 0) {
        slot_release(x, s);       /* truncated meanwhile: nothing to send */
    } else {
        uint64_t lo, hi;
        slot_read_range(x, s, &lo, &hi);
        if (hi == lo) {
            slot_release(x, s);
            return 0;
        }
        s->state = S_READ;
        s->io_lo = lo;
        slot_submit_io(x, s, 0, (size_t)(hi - lo));
    }
    return 0;
}

/* after a failure: let disk I/O finish, then give everything back */
static void drain(struct xfer *x)
{
    get_cancel_all(x);
    put_flush_sent(x);
    for (;;) {
        unsigned busy = 0;
        for (unsigned i = 0; i < x->nslots; i++)
            busy += (unsigned)x->slots[i].io_busy;
        if (!busy)
            break;
        struct slot *s = xfer_wait_event(x, 1);
        if (s && s->io_busy && s->state == S_WRITE)
            esums_unsure(x, s);   /* it may have landed, unsummed */
        if (s)
            s->io_busy = 0;
    }
    for (unsigned i = 0; i < x->nslots; i++)
        if (x->slots[i].state != S_FREE)
            slot_release(x, &x->slots[i]);
}

static void answer_all(struct xfer *x);

/* Every block was sent, and only mapped blocks' sends are still ending:
 * the participants are answered now, as their ranks finish once the bytes
 * DONE counts have landed (TRANSPORT.md), and the sync that ends the sends
 * runs after, off the call's path. Counted first, as finish() does. */
static void answer_early(struct xfer *x)
{
    x->answered_early = 1;
    x->ctr.io_us = (uint64_t)(ddio_now_us() - x->t_run_us);
    answer_all(x);
}

static void pipeline(struct xfer *x)
{
    size_t next = 0;
    while (!xfer_failed(x)) {
        while (next < x->nblocks) {
            int rc = issue_block(x, x->blocks[next], x->inflight == 0);
            if (rc == -EAGAIN)
                break;
            if (rc) {
                FAIL(x, -rc, "%s block %" PRIu64 ": %s", op_name(x->op),
                     plan_block_of(x->blocks[next]),
                     ddio_errno_name(-rc));
                break;
            }
            next++;
        }
        if (xfer_failed(x) || (next == x->nblocks && x->inflight == 0))
            break;
        if (next == x->nblocks && x->inflight == x->nsent && !x->answered_early)
            answer_early(x);
        if (x->nsent && !xfer_has_event(x)) {
            put_flush_sent(x);    /* nothing else to do: end the batch's sends */
            continue;
        }
        struct slot *s = xfer_wait_event(x, 0);
        if (s)
            process(x, s);
    }
}

static void run(struct xfer *x)
{
    x->S.unit = x->of->layout.stripe_unit;
    x->S.count = x->of->layout.stripe_count;
    x->me = x->of->layout.server_index;
    x->B = x->of->block_size;
    int64_t t0 = ddio_now_us();
    x->t_run_us = t0;
    int rc = xfer_views(x);
    if (rc == 0)
        rc = eparity_check(x);
    if (rc == 0)
        rc = slots_alloc(x);
    if (rc == 0)
        rc = slots_plan(x);
    if (rc == -E2BIG)
        FAIL(x, E2BIG, "planning %s: the call touches more than %" PRIu64 " blocks here "
             "(server limit --max-call-memory %" PRIu64 " bytes)", op_name(x->op),
             x->srv->cfg.max_call_mem / 2 / PLAN_BLOCK_BYTES, x->srv->cfg.max_call_mem);
    else if (rc && !xfer_failed(x))
        FAIL(x, -rc, "planning %s: %s", op_name(x->op), ddio_errno_name(-rc));
    else if (rc == 0)
        pipeline(x);
    if (xfer_failed(x))
        drain(x);
    if (!xfer_failed(x))
        eparity_done(x);
    for (uint32_t v = 0; x->op == DDIO_X_WRITE && v < x->nviews; v++)
        if ((rc = store_trim(x->views[v].of)) != 0)
            FAIL(x, -rc, "truncate %s after write: %s", x->views[v].of->path,
                 ddio_errno_name(-rc));
    x->ctr.io_us = (uint64_t)(ddio_now_us() - t0);
}

/* ---- DONE ------------------------------------------------------------------------------------ */

void pass_send_done(struct xfer *x, struct part *p)
{
    if (!p->present || p->answered)
        return;
    p->answered = 1;
    /* its client may close now, before the pass lets go of the file (an
     * early DONE, a write's writeback start after it): a fence waits for
     * the pass rather than finding the file open (store_is_open) */
    if (!x->of_answered) {
        x->of_answered = 1;
        store_answered(&x->srv->store, x->of);
    }
    if (x->status) {              /* x->msg already names the server */
        struct ddio_wbuf e;
        ddio_wbuf_init(&e);
        ddio_enc_err(&e, x->msg);
        if (!e.err)
            xp_reply(p->ep, DDIO_T_XFER | DDIO_REPLY, p->req, x->status, e.p, e.len,
                     deadline_of(x));
        else
            ddio_wbuf_free(&e);
        return;
    }
    struct ddio_xfer_r r = {
        .bytes = p->bytes, .local_size = xfer_local_size(x),
        .desc_bytes = x->ctr.desc_bytes, .blocks_read = x->ctr.blocks_read,
        .blocks_written = x->ctr.blocks_written, .nonconsec = x->ctr.nonconsec,
        .bytes_to_rank = p->to, .bytes_from_rank = p->from,
        .wait_us = x->ctr.wait_us, .io_us = x->ctr.io_us, .sorted = x->ctr.sorted,
    };
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_xfer_r(&w, &r);
    if (w.err) {
        ddio_wbuf_free(&w);
        xp_reply_err(p->ep, DDIO_T_XFER | DDIO_REPLY, p->req, ENOMEM, "DONE: out of memory");
        return;
    }
    if (p->once)
        replay_note(p->once_client, p->once_call, w.p, w.len);
    xp_reply(p->ep, DDIO_T_XFER | DDIO_REPLY, p->req, 0, w.p, w.len, deadline_of(x));
}

static void answer_all(struct xfer *x)
{
    /* counted before DONE: a client that reads STATS after its call sees it */
    x->ctr.nparticipants = x->n;
    stats_xfer(&x->srv->stats, &x->ctr, is_collective(x), x->status != 0);
    for (uint32_t r = 0; r < x->n; r++)
        pass_send_done(x, &x->parts[r]);
}

static void finish(struct xfer *x)
{
    /* a mirrored file's write that failed here may have reached its other
     * holders: in doubt until scrubbed */
    if (x->op == DDIO_X_WRITE && x->status)
        indoubt_failed(x->srv, x->of);
    if (!x->answered_early)
        answer_all(x);
    if (x->kick_due)              /* the writeback the DONE did not wait for */
        store_kick(&x->kick);
    DDIO_DEBUG("xfer %s %s group %" PRIx64 " seq %" PRIu64 " P=%u: status %s blocks %" PRIu64
               " read %" PRIu64 " written %" PRIu64 " nonconsec %" PRIu64 " sent %" PRIu64
               " recv %" PRIu64 " desc %" PRIu64 " wait %" PRIu64 "us io %" PRIu64 "us disk %"
               PRIu64 "us net %" PRIu64 "us sorted %"
               PRIu64 " out_of_order %" PRIu64, op_name(x->op), x->of->path, x->group, x->seq,
               x->n, x->status ? ddio_errno_name(x->status) : "ok", x->ctr.blocks,
               x->ctr.blocks_read, x->ctr.blocks_written, x->ctr.nonconsec, x->ctr.bytes_sent,
               x->ctr.bytes_recv, x->ctr.desc_bytes, x->ctr.wait_us, x->ctr.io_us,
               x->ctr.disk_us, x->ctr.net_us, x->ctr.sorted, x->ctr.out_of_order);
}

/* run an XFER (all participants present, or those of a re-formed resend)
 * and answer everyone */
void pass_execute(struct server *srv, struct xfer *x)
{
    struct engine *e = srv->eng;
    pthread_mutex_lock(&e->mu);
    x->next = e->running;
    e->running = x;
    xfer_fail_if_dropped(x);
    pthread_mutex_unlock(&e->mu);
    x->ctr.wait_us = (uint64_t)(ddio_now_us() - x->t_first_us);
    if (!xfer_failed(x))
        run(x);
    for (uint32_t r = 0; r < x->n; r++)
        x->ctr.bytes_recv += x->parts[r].from;
    pthread_mutex_lock(&e->mu);
    xfer_list_remove(&e->running, x);
    pthread_mutex_unlock(&e->mu);
    finish(x);
    xfer_free(x);
}
