/* The client side of an XFER (PROTOCOL.md "XFER"), independent or
 * collective: part of the client core (ddio_core_io.h), reached through
 * ddio_core_io.c, which picks the servers a request touches and does what
 * it can on same-host datafiles itself.
 *
 * After sending one XFER per involved server, the client serves every
 * involved connection until each has sent DONE: PUTs are received straight
 * into the user buffer at their stream offsets (readv for contiguous memory,
 * through a bounded bounce buffer and the memory type's tree otherwise); GETs
 * are answered with DATA written from the user buffer (writev, or gathered
 * chunk by chunk). We never block on one server while another waits for us:
 * poll() picks whichever connection has something, and each message is
 * handled completely before the next poll. A server silent for longer than
 * the timeout fails the call; a busy server that has nothing for this rank
 * yet sends PROGRESS heartbeats, so the deadline is per server and reset by
 * anything it sends. Any malformed message fails the call too (the
 * connection is then closed, since its byte stream can no longer be
 * trusted).
 *
 * With UCX (ddio_ucx.h: a contiguous memory type and a stream of at least
 * DDIO_UCX_MIN_STREAM bytes, on a connection that attached UCX), read data
 * arrives as PUT active messages received straight into the user buffer
 * (ddio_ucx's sink, by rendezvous: one copy), and GETs are answered with
 * DATA active messages sent straight from it. GET and DONE still come on
 * the socket; DONE says how many bytes the server sent, and the server
 * counts as finished once that many landed. The loop also progresses the
 * UCX worker, waking on its fd. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE             /* POLLRDHUP */
#endif
#include "ddio_core_io.h"
#include "ddio_net.h"
#include "ddio_ucx.h"
#include "ddio_xport.h"
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define XFER_BOUNCE_MAX (4u << 20)
/* the server gives up waiting for collective peers after timeout_ms and says
 * so; the client waits a little longer to receive that clear error */
#define XFER_GRACE_MS 5000
/* UCX 1.13's wake-up fd can miss a shared-memory event (seen: a read
 * waiting for its last PUT until the deadline), so waits with UCX in use
 * are sliced: a missed wake-up costs at most this */
#define XFER_UCX_SLICE_MS 1
/* a failed call names a step of this rank longer than this (its servers
 * waited for it meanwhile) */
#define STALL_NOTE_MS 1000

#include "ddio_core_xstate.h"

/* a message handler's "the server is lost and that is already noted"
 * (positive: no errno a send or receive returns can be mistaken for it) */
#define XFER_REPORTED 1

/* the connection slot i's XFER is on: its server's, or a copy holder's */
static struct ddio_conn *conn_of(const xstate *st, int i)
{
    return st->f->srv[st->s[i].via].conn;
}

/* a step that took since t0 (ms clock) while the other servers waited */
static void note_stall(xstate *st, int64_t t0, const char *what, int i)
{
    int64_t d = ddio_now_ms() - t0;
    if (d <= st->stall_ms)
        return;
    st->stall_ms = d;
    struct ddio_conn *c = st->f->srv[i].conn;
    snprintf(st->stall_what, sizeof(st->stall_what), "%s server %s", what, c ? c->name : "?");
}

static void srv_finish(xstate *st, int i)
{
    if (st->s[i].pending) {
        st->s[i].pending = 0;
        st->npending--;
    }
}

/* Server i's XFER ended with err, which recovery may undo (ddio_fh's
 * recover_ms): it is then reconnected and sent again (try_lost), else the
 * error is the call's. 1: taken for recovery. */
static int srv_lose(xstate *st, int i, const struct ddio_err *err)
{
    int64_t now = ddio_now_ms();
    srv_finish(st, i);
    /* a write of a mirrored file whose server answers that it is out: its
     * part went to its copies' holders in the same call */
    if (!st->e->errnum && xfer_write_out(st, i, err))
        return 1;
    /* refused for the handle's older view of who is out: its out servers
     * are taken back (sent the call after this one) and this server is
     * sent it again with the newer epoch, below */
    if (err->errnum == DDIO_E_EPOCH && st->x->op == DDIO_X_WRITE && ddio_fh_redundant(st->f))
        ddio_fh_review(st->f, conn_of(st, i)->epoch, st->back);
    /* a server whose disk returned data that disagrees with its checksum
     * (EILSEQ), a replacement that has not rebuilt the file yet (ENODATA),
     * or one the membership has out (DDIO_E_OUT: what it holds may be
     * stale), is out for this read as a lost one is: a copy has the bytes */
    if (xfer_can_degrade(st) && (err->transport || st->s[i].size_only || err->errnum == EILSEQ
                            || err->errnum == ENODATA || err->errnum == DDIO_E_OUT)
        && !st->e->errnum) {
        if (err->errnum == EILSEQ)
            st->s[i].integrity = *err;
        st->s[i].degraded = 1;
        return 1;
    }
    if (!st->f->recover_ms || !ddio_err_recoverable(err) || st->e->errnum ||
        (st->give_up && now >= st->give_up)) {
        if (!(st->give_up && xfer_out_pending(st, i, err)))
            xfer_note_error(st, err);
        return 0;
    }
    if (!st->give_up)
        st->give_up = now + st->f->recover_ms;
    /* the first loss is resent at once; each further one of this call
     * waits longer: a draining server answers a resent collective with
     * "stopping" on the connection it keeps until the drain ends, and
     * resending at once kept that connection busy, so the drain (and the
     * restart) waited for this call's recovery to run out (CI) */
    st->s[i].lost = 1;
    st->s[i].next_try = now + st->s[i].backoff_ms;
    st->s[i].backoff_ms = ddio_backoff_next(st->s[i].backoff_ms);
    st->nlost++;
    return 1;
}

static void srv_broken(xstate *st, int i, int errnum, const char *what)
{
    struct ddio_err err;
    struct ddio_conn *c = conn_of(st, i);
    if (errnum == ETIMEDOUT)
        ddio_err_set(&err, errnum, "ddio server %s: %s: no progress within the "
                     "timeout (romio_ddio_timeout / DDIO_TIMEOUT = %d s)", c->name,
                     what, st->f->timeout_ms / 1000);
    else
        ddio_err_set(&err, errnum, "ddio server %s: %s: %s (%s)", c->name, what,
                     strerror(errnum), ddio_errno_name(errnum));
    err.transport = 1;  /* the connection, not the server's answer */
    ddio_conn_fail(c);
    srv_lose(st, i, &err);
}

/* ---- sending the XFERs ------------------------------------------------------ */

/* a PUT's segment landed in the user buffer (under the UCX lock) */
static void landed(void *arg, const struct ddio_seg *g)
{
    xstate *st = arg;
    if (xfer_note_got(st, g))
        st->got_err = 1;
}

/* The connections this call's data moves on by UCX and that wait to be
 * attached are attached first, before any XFER is out (nothing of ours is
 * in flight then, and no PUT can land while one attaches). A connection
 * that broke is lost like one that breaks on sending (recovered, the XFER
 * then by TCP); a forced UCX that came to nothing fails the call. */
static int attach_ucx(xstate *st, int64_t deadline)
{
    for (int i = 0; i < st->f->nsrv; i++) {
        struct ddio_conn *c = conn_of(st, i);
        struct ddio_err err;
        if (!st->conns[i] || c->ucx || !xfer_ucx_fits(st, i))
            continue;
        memset(&err, 0, sizeof(err));
        if (ddio_conn_ucx(c, deadline, &err) && !err.transport) {
            xfer_note_error(st, &err);
            return -1;
        }
    }
    return 0;
}

/* data of the XFER to server i by UCX: a sink for its PUTs */
static int want_ucx(xstate *st, int i)
{
    struct ddio_xfer_req *x = st->x;
    struct ddio_conn *c = conn_of(st, i);
    char why[200];
    struct ddio_ucx_sink *sk;

    if (!c->ucx || !xfer_ucx_fits(st, i))
        return 0;
    if (!st->ucx && !(st->ucx = ddio_ucx_client(why, sizeof(why))))
        return 0;
    if (!st->sends && !(st->sends = calloc(1, sizeof(*st->sends))))
        return 0;
    if (!(sk = calloc(1, sizeof(*sk))))
        return 0;
    sk->buf = (uint8_t *) x->mem->buf;
    sk->len = x->fdesc->length;
    sk->landed = landed;
    sk->arg = st;
    ddio_ucx_sink_add(st->ucx, sk);
    st->s[i].sink = sk;
    return 1;
}

/* the XFER to server i (its handle made usable): pending once sent */
static void send_one(xstate *st, int i, int64_t deadline)
{
    struct ddio_xfer_req *x = st->x;
    struct ddio_fh *f = st->f;
    struct ddio_wbuf w;
    struct ddio_err err;
    struct xfer_own o;
    struct ddio_xfer m = {
        .handle = f->srv[st->s[i].via].handle,.op = x->op,.flags = x->flags,
        .group = x->group,.seq = x->seq,.nparticipants = x->nparticipants,
        .rank = x->rank,.timeout_ms = (uint32_t) f->timeout_ms,
        .desc_len = (uint32_t) st->dw.len,.desc = st->dw.p
    };
    if (st->s[i].copy) {        /* a lost server's part, alone (PROTOCOL.md) */
        m.flags = (m.flags & ~DDIO_XF_COLLECTIVE) | DDIO_XF_COPY;
        m.copy = st->s[i].copy;
        m.group = m.seq = 0;
        m.nparticipants = 1;
        m.rank = 0;
    } else if (xfer_inline(st, i, &m, &o)) {
        /* its bytes in the XFER (ddio_core_xinline.c) */
    } else if (want_ucx(st, i)) {
        m.flags |= DDIO_XF_UCX;
        m.ucx_token = st->s[i].sink->token;
        m.ucx_len = x->fdesc->length;
    }
    if (st->s[i].resent)        /* a collective's gate runs without the ranks
                                 * answered before a restart */
        m.flags |= DDIO_XF_RESENT;
    if (st->once_call) {
        m.flags |= DDIO_XF_ONCE;
        m.once_client = ddio_client_id();
        m.once_call = st->once_call;
    }
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &m);
    uint32_t view = x->op == DDIO_X_WRITE ? ddio_fh_change_epoch(f) : 0;
    if (!w.err && !ddio_conn_send_view(conn_of(st, i), DDIO_T_XFER, w.p, w.len, view,
                                       &st->s[i].req, deadline, &err)) {
        st->s[i].pending = 1;
        st->npending++;
        st->s[i].deadline = ddio_now_ms() + f->timeout_ms + XFER_GRACE_MS;
    } else if (w.err)
        ddio_err_set(&err, ENOMEM, "ddio: out of memory encoding an XFER");
    if (!st->s[i].pending && !(err.transport && srv_lose(st, i, &err)))
        xfer_note_error(st, &err);
    ddio_wbuf_free(&w);
}

static void send_xfers(xstate *st)
{
    struct ddio_fh *f = st->f;
    int64_t deadline = ddio_now_ms() + f->timeout_ms;
    struct ddio_err err;

    ddio_wbuf_init(&st->dw);
    ddio_desc_encode(&st->dw, st->x->fdesc);
    if (st->dw.err) {
        ddio_err_set(&err, ENOMEM, "ddio: out of memory encoding a descriptor");
        xfer_note_error(st, &err);
        return;
    }
    if (attach_ucx(st, deadline))
        return;
    for (int i = 0; i < f->nsrv; i++)
        if (st->inv[i]) {       /* else not involved, or not ready: noted or degraded */
            int64_t t0 = ddio_now_ms();
            send_one(st, i, deadline);
            note_stall(st, t0, "sending the XFER to", i);
        }
}

/* ---- recovery: reconnect, open again, resend ------------------------------ */

/* Server i is sent its XFER again: from scratch (a write's bytes are written
 * again, the same ones: PROTOCOL.md "Resending"), by TCP (its UCX sink may
 * hold bytes of the first attempt). */
static void slot_restart(xstate *st, int i)
{
    xsrv *s = &st->s[i];
    if (s->sink) {
        if (ddio_ucx_sink_remove(st->ucx, s->sink, ddio_now_ms() + 200) == 0)
            free(s->sink);
        s->sink = NULL;
    }
    s->no_ucx = 1;
    s->done = 0;
    s->have_size = 0;
    s->expect = 0;
    st->resent = 1;
}

static void resend(xstate *st, int i)
{
    int64_t t0 = ddio_now_ms();
    slot_restart(st, i);
    st->s[i].resent = 1;
    send_one(st, i, t0 + st->f->timeout_ms);
    note_stall(st, t0, "sending the XFER again to", i);
}

/* one reconnect attempt for every lost server that is due; the lost ones
 * past the deadline (or refused for good) fail the call */
static void try_lost(xstate *st)
{
    for (int i = 0; i < st->f->nsrv && st->nlost > 0; i++) {
        xsrv *s = &st->s[i];
        int64_t now = ddio_now_ms(), left = st->give_up - now;
        struct ddio_err err;
        if (!s->lost || (now < s->next_try && !st->e->errnum))
            continue;
        memset(&err, 0, sizeof(err));
        if (st->e->errnum)      /* the call failed elsewhere: no point */
            ddio_err_set(&err, ECANCELED, "not resent");
        int64_t t0 = now;
        int renewed = !st->e->errnum
            && !ddio_fh_renew_locked(st->f, i, left > 1000 ? 1000 : (int) left + 1, &err);
        if (!st->e->errnum)
            note_stall(st, t0, "reconnecting to", i);
        if (renewed) {
            s->lost = 0;
            st->nlost--;
            resend(st, i);
            continue;
        }
        s->backoff_ms = ddio_backoff_next(s->backoff_ms);
        s->next_try = ddio_now_ms() + s->backoff_ms;
        if (st->e->errnum || !ddio_err_reconnectable(&err) || s->next_try > st->give_up) {
            s->lost = 0;
            st->nlost--;
            if (!st->e->errnum) {
                size_t l = strlen(err.msg);
                snprintf(err.msg + l, sizeof(err.msg) - l, " (gave up reconnecting after "
                         "%d ms: romio_ddio_recover_timeout / DDIO_RECOVER_TIMEOUT)",
                         st->f->recover_ms);
            }
            struct ddio_err lost = err;     /* a loss, whatever the last try said */
            lost.transport = 1;
            if (!xfer_out_pending(st, i, &lost))
                xfer_note_error(st, &err);
        }
    }
}

/* the earliest reconnect attempt due */
static int64_t next_try(const xstate *st)
{
    int64_t t = INT64_MAX;
    for (int i = 0; i < st->f->nsrv; i++)
        if (st->s[i].lost && st->s[i].next_try < t)
            t = st->s[i].next_try;
    return t;
}

/* ---- segments ----------------------------------------------------------------- */

static int segs_valid(const xstate *st, const struct ddio_segs *sg)
{
    return ddio_segs_fit(sg, st->x->fdesc->length);
}

static int bounce_get(xstate *st)
{
    if (!st->bounce) {
        uint64_t len = st->x->fdesc->length;
        st->bounce_len = len < XFER_BOUNCE_MAX ? (size_t) len : XFER_BOUNCE_MAX;
        st->bounce = malloc(st->bounce_len ? st->bounce_len : 1);
    }
    return st->bounce ? 0 : -ENOMEM;
}

/* ---- PUT: read data into the user buffer ----------------------------------- */

/* the user-buffer pieces of sg, stream-adjacent ones merged (a contiguous
 * buffer is one piece: UCX moves it in one rendezvous); lead slots first */
static int user_iov(const xstate *st, const struct ddio_segs *sg, int lead, struct iovec **iov,
                    int *n)
{
    return ddio_segs_iov(sg, st->x->mem->buf, st->x->fdesc->length, lead, iov, n);
}

static int recv_contig(xstate *st, int sock, const struct ddio_segs *sg, int64_t dl)
{
    int n, rc;
    struct iovec *iov;
    rc = user_iov(st, sg, 0, &iov, &n);
    if (!rc)
        rc = ddio_recvv_all(sock, iov, n, dl);
    free(iov);
    return rc;
}

static int recv_scatter(xstate *st, int sock, const struct ddio_segs *sg, int64_t dl)
{
    const struct ddio_mem *m = st->x->mem;
    int rc = bounce_get(st);
    for (uint32_t k = 0; k < sg->nseg && !rc; k++) {
        uint64_t lo = sg->seg[k].off, hi = lo + sg->seg[k].len;
        while (lo < hi && !rc) {
            size_t n = hi - lo < st->bounce_len ? (size_t) (hi - lo) : st->bounce_len;
            rc = ddio_recv_all(sock, st->bounce, n, dl);
            if (!rc)
                ddio_desc_scatter(&m->desc, m->buf, 0, lo, lo + n, st->bounce);
            lo += n;
        }
    }
    return rc;
}

static int on_put(xstate *st, int i, const struct ddio_hdr *h, int64_t dl)
{
    int sock = conn_of(st, i)->sock, rc;
    struct ddio_segs sg;

    memset(&sg, 0, sizeof(sg));
    if (st->x->op != DDIO_X_READ)
        return -EPROTO;
    rc = ddio_recv_put_list(sock, h->len, &sg, dl);
    if (!rc && !segs_valid(st, &sg))
        rc = -EPROTO;
    if (!rc)
        rc = st->x->mem->contig ? recv_contig(st, sock, &sg, dl) : recv_scatter(st, sock, &sg,
                                                                                  dl);
    if (st->ucx)        /* PUT handlers may note ranges from another thread */
        ddio_ucx_lock(st->ucx);
    for (uint32_t k = 0; k < sg.nseg && !rc; k++)
        rc = xfer_note_got(st, &sg.seg[k]);
    if (st->ucx)
        ddio_ucx_unlock(st->ucx);
    ddio_segs_free(&sg);
    return rc;
}

/* ---- GET: answer with DATA from the user buffer -------------------------- */

/* by UCX: one DATA active message sent straight from the user buffer */
static int send_ucx(xstate *st, int i, uint64_t req, const struct ddio_segs *sg)
{
    struct ddio_conn *c = conn_of(st, i);
    int n, rc;
    struct iovec *iov;

    rc = user_iov(st, sg, 0, &iov, &n);
    if (!rc)
        rc = ddio_ucx_send_data(st->ucx, c->ucx, c->ucx_cookie, req, sg->tag, iov, n,
                                st->sends);
    free(iov);
    return rc;
}

static int send_contig(xstate *st, int sock, struct iovec *head, const struct ddio_segs *sg,
                       int64_t dl)
{
    struct iovec *iov;
    int n, rc = user_iov(st, sg, 2, &iov, &n);
    if (rc)
        return rc;
    iov[0] = head[0];
    iov[1] = head[1];
    rc = ddio_sendv_all(sock, iov, n + 2, dl);
    free(iov);
    return rc;
}

static int send_gather(xstate *st, int sock, struct iovec *head, const struct ddio_segs *sg,
                       int64_t dl)
{
    const struct ddio_mem *m = st->x->mem;
    int rc = bounce_get(st);
    if (!rc)
        rc = ddio_sendv_all(sock, head, 2, dl);
    for (uint32_t k = 0; k < sg->nseg && !rc; k++) {
        uint64_t lo = sg->seg[k].off, hi = lo + sg->seg[k].len;
        while (lo < hi && !rc) {
            size_t n = hi - lo < st->bounce_len ? (size_t) (hi - lo) : st->bounce_len;
            ddio_desc_gather(&m->desc, m->buf, 0, lo, lo + n, st->bounce);
            rc = ddio_send_all(sock, st->bounce, n, dl);
            lo += n;
        }
    }
    return rc;
}

static int on_get(xstate *st, int i, const struct ddio_hdr *h, int64_t dl)
{
    struct ddio_conn *c = conn_of(st, i);
    int sock = c->sock, rc = 0;
    struct ddio_segs sg;
    struct ddio_hdr dh;
    struct ddio_wbuf tw;
    uint8_t hb[DDIO_HDR_SIZE], *p = NULL;
    struct ddio_err err;

    memset(&sg, 0, sizeof(sg));
    if (st->x->op != DDIO_X_WRITE)
        return -EPROTO;
    if (ddio_conn_recv_payload(c, h, dl, &p, &err)) {
        srv_lose(st, i, &err);
        return XFER_REPORTED;
    }
    if (ddio_dec_get(p, h->len, &sg) || !segs_valid(st, &sg) ||
        sg.total > DDIO_MAX_PAYLOAD - 4)
        rc = -EPROTO;
    free(p);
    if (!rc && st->s[i].sink) {
        rc = send_ucx(st, i, h->req, &sg);
        ddio_segs_free(&sg);
        return rc;
    }
    ddio_wbuf_init(&tw);
    ddio_enc_data(&tw, sg.tag);
    if (!rc && tw.err)
        rc = -ENOMEM;
    if (!rc) {
        struct iovec head[2] = { {hb, DDIO_HDR_SIZE}, {tw.p, tw.len} };
        ddio_hdr_init(&dh, DDIO_T_DATA, h->req, tw.len + sg.total);
        ddio_hdr_encode(&dh, hb);
        rc = st->x->mem->contig ? send_contig(st, sock, head, &sg, dl)
            : send_gather(st, sock, head, &sg, dl);
    }
    ddio_wbuf_free(&tw);
    ddio_segs_free(&sg);
    return rc;
}

/* ---- DONE ---------------------------------------------------------------------- */

static int on_done(xstate *st, int i, const struct ddio_hdr *h, int64_t dl)
{
    struct ddio_conn *c = conn_of(st, i);
    struct ddio_xfer_r r;
    uint8_t *p = NULL;
    struct ddio_err err;

    if (ddio_conn_recv_payload(c, h, dl, &p, &err)) {
        srv_lose(st, i, &err);
        return XFER_REPORTED;
    }
    if (h->status) {
        ddio_conn_server_error(c, h->status, p, h->len, &err);
        free(p);
        srv_lose(st, i, &err);  /* a collective whose peer dropped: resent */
        return 0;
    } else if (ddio_dec_xfer_r(p, h->len, &r)) {
        free(p);
        return -EPROTO;
    } else {
        st->s[i].have_size = 1;
        st->s[i].local_size = r.local_size;
        if (st->s[i].sink && st->x->op == DDIO_X_READ) {
            st->s[i].done = 1;  /* finished once its PUT bytes landed */
            st->s[i].expect = r.bytes;
            free(p);
            return 0;
        }
    }
    free(p);
    srv_finish(st, i);
    return 0;
}

static int64_t silence_deadline(const struct ddio_fh *f);

/* servers that sent DONE and whose UCX PUT bytes have all landed. Bytes
 * landing count as word from their server: it sends no heartbeat to a
 * rank it is sending data, and those go by UCX, not on the connection */
static void ucx_check_done(xstate *st)
{
    uint64_t got;
    int e;

    for (int i = 0; i < st->f->nsrv; i++) {
        if (!st->s[i].pending || !st->s[i].sink)
            continue;
        ddio_ucx_sink_peek(st->ucx, st->s[i].sink, &got, &e);
        if (got != st->s[i].ucx_seen) {
            st->s[i].ucx_seen = got;
            st->s[i].deadline = silence_deadline(st->f);
        }
        if (e) {
            srv_broken(st, i, e, e == EPROTO ? "malformed PUT message (UCX)"
                       : "receiving read data by UCX");
        } else if (st->s[i].done && got >= st->s[i].expect) {
            srv_finish(st, i);
        }
    }
}

/* a read that failed with UCX in use: what arrived here by UCX (a server's
 * send that never completed: was it ever seen, or fetched and stuck?) */
static void note_ucx(xstate *st)
{
    char c[160];
    size_t l = strlen(st->e->msg);
    ddio_ucx_put_counts(st->ucx, c, sizeof(c));
    snprintf(st->e->msg + l, sizeof(st->e->msg) - l, " (UCX: %s)", c);
}

/* ---- the loop -------------------------------------------------------------------- */

static void handle_msg(xstate *st, int i)
{
    struct ddio_conn *c = conn_of(st, i);
    int64_t dl = ddio_now_ms() + st->f->timeout_ms;
    struct ddio_hdr h;
    int rc = ddio_recv_hdr(c->sock, &h, dl);

    if (rc) {
        srv_broken(st, i, -rc, "receiving during a transfer");
        return;
    }
    c->epoch = h.epoch;
    if (h.req != st->s[i].req)
        rc = -EPROTO;
    else if (h.type == DDIO_T_PUT)
        rc = on_put(st, i, &h, dl);
    else if (h.type == DDIO_T_GET)
        rc = on_get(st, i, &h, dl);
    else if (h.type == (DDIO_T_XFER | DDIO_REPLY))
        rc = on_done(st, i, &h, dl);
    else if (h.type == DDIO_T_PROGRESS)
        rc = h.len ? -EPROTO : 0;       /* heartbeat: the caller resets the deadline */
    else
        rc = -EPROTO;
    if (rc == XFER_REPORTED) {  /* (a send's own -EPIPE is an error to report) */
        ddio_conn_fail(c);
        srv_finish(st, i);
    } else if (rc)
        srv_broken(st, i, -rc, h.req != st->s[i].req || rc == -EPROTO ?
                   "malformed or unexpected message during a transfer" : "transfer");
}

static int64_t silence_deadline(const struct ddio_fh *f)
{
    return ddio_now_ms() + f->timeout_ms + XFER_GRACE_MS;
}

/* the pending servers' sockets into pf; returns how many, *first = the
 * earliest deadline among them */
static int poll_set(xstate *st, struct pollfd *pf, int *which, int64_t *first)
{
    int k = 0;
    *first = INT64_MAX;
    for (int i = 0; i < st->f->nsrv; i++) {
        if (!st->s[i].pending)
            continue;
        /* after DONE (UCX: waiting for its bytes) nothing may come on it */
        pf[k].fd = st->s[i].done ? -1 : conn_of(st, i)->sock;
        pf[k].events = POLLIN;
        pf[k].revents = 0;
        which[k++] = i;
        if (st->s[i].deadline < *first)
            *first = st->s[i].deadline;
    }
    return k;
}

/* UCX in use: the worker's fd joins the poll set, and a poll does not sleep
 * while the worker has more to do */
static int ucx_wait_slot(xstate *st, struct pollfd *pf, int k, int64_t *left)
{
    if (!st->ucx)
        return k;
    if (ddio_ucx_prepare_wait(st->ucx))
        *left = 0;
    else if (*left > XFER_UCX_SLICE_MS)
        *left = XFER_UCX_SLICE_MS;
    pf[k].fd = ddio_ucx_efd(st->ucx);
    pf[k].events = POLLIN;
    pf[k].revents = 0;
    return k + 1;
}

/* The call failed (a server died, hung or refused): the servers still
 * running their part would otherwise run all of it for nothing, and the
 * other ranks of a collective would wait for that. CANCEL makes each fail
 * its XFER now, for every participant (its DONE says why). */
static void cancel_rest(xstate *st)
{
    struct ddio_fh *f = st->f;
    struct ddio_err ignored;
    uint64_t id;

    st->cancelled = 1;
    for (int i = 0; i < f->nsrv; i++) {
        struct ddio_conn *c = conn_of(st, i);
        int mine = st->s[i].pending && !st->s[i].done;
        /* a collective's other ranks may still be running their XFERs of
         * the call on a server this rank is done with (plain-range parts
         * are separate XFERs): name the call to every server */
        if (!(mine || st->x->group) || !c || c->sock < 0 || !st->conns[i])
            continue;
        struct ddio_wbuf w;
        ddio_wbuf_init(&w);
        ddio_enc_cancel(&w, mine ? st->s[i].req : 0, st->e->msg, st->x->group, st->x->seq);
        if (!w.err)
            ddio_conn_send(c, DDIO_T_CANCEL, w.p, w.len, &id, ddio_now_ms() + 1000, &ignored);
        ddio_wbuf_free(&w);
    }
}

static void poll_loop(xstate *st)
{
    struct ddio_fh *f = st->f;
    struct pollfd *pf = malloc((f->nsrv + 1) * sizeof(*pf));
    int *which = malloc(f->nsrv * sizeof(*which));
    int64_t first;

    for (int i = 0; i < f->nsrv; i++)
        st->s[i].deadline = silence_deadline(f);
    while ((st->npending > 0 || st->nlost > 0) && pf && which) {
        if (st->nlost > 0) {
            try_lost(st);
            if (st->npending == 0 && st->nlost == 0)
                break;  /* recovery gave up, nothing else to wait for (a poll
                         * of nothing would sleep its 60 s cap) */
        }
        int k = poll_set(st, pf, which, &first);
        if (st->nlost > 0 && next_try(st) < first)
            first = next_try(st);
        int64_t left = first - ddio_now_ms();
        if (left < 0)
            left = 0;
        int np = ucx_wait_slot(st, pf, k, &left);
        if (ddio_poll(pf, np, (int) (left > 60000 ? 60000 : left)) < 0)
            continue;   /* EINTR */
        if (st->ucx) {
            ddio_ucx_progress(st->ucx);
            ucx_check_done(st);
        }
        int64_t now = ddio_now_ms();
        for (int j = 0; j < k; j++) {
            int i = which[j];
            if (!st->s[i].pending)
                continue;
            if (pf[j].revents && !st->s[i].done) {
                int64_t t0 = ddio_now_ms();
                handle_msg(st, i);
                note_stall(st, t0, "answering", i);
                st->s[i].deadline = silence_deadline(f);
            } else if (now >= st->s[i].deadline) {
                srv_broken(st, i, ETIMEDOUT, "waiting for the transfer");
            }
        }
        /* A DONE just read may complete a UCX sink that already holds all
         * its bytes: finish it now, not after the next poll slice. */
        if (st->ucx)
            ucx_check_done(st);
        if (st->e->errnum && !st->cancelled && st->npending > 0)
            cancel_rest(st);        /* recovery given up, or not possible */
    }
    if (!pf || !which) {
        struct ddio_err err;
        ddio_err_set(&err, ENOMEM, "ddio: out of memory in the transfer loop");
        xfer_note_error(st, &err);
        for (int i = 0; i < f->nsrv; i++)
            if (st->s[i].pending)
                srv_broken(st, i, ENOMEM, "transfer");
    }
    free(pf);
    free(which);
}

/* ---- a mirrored file's lost servers: their parts from copies -------------------- */

/* The lost servers' parts of a read, each as a one-participant XFER to a
 * server holding a copy (DDIO_XF_COPY), which serves it from its mirror
 * datafile. In rounds of at most one XFER per connection (a connection
 * carries one call's XFER at a time), until every part came, or a part
 * has no copy left. */
static void read_copies(xstate *st)
{
    char *busy = xfer_copies_due(st) ? calloc(st->f->nsrv, 1) : NULL;
    while (busy && !st->e->errnum && xfer_copies_due(st)) {
        memset(busy, 0, st->f->nsrv);
        for (int i = 0; i < st->f->nsrv && !st->e->errnum; i++) {
            if (st->s[i].degraded != 1)
                continue;
            int q = xfer_pick_copy(st, i, busy);
            if (q == -2)
                continue;
            if (q < 0 && st->s[i].size_only) {
                st->s[i].degraded = 0;  /* its size only if the end of file needs it */
                continue;
            }
            if (q < 0) {
                struct ddio_err err;
                xfer_no_copy_err(st, i, &err);
                xfer_note_error(st, &err);
                break;
            }
            busy[q] = 1;
            st->s[i].degraded = 2;
            slot_restart(st, i);
            send_one(st, i, ddio_now_ms() + st->f->timeout_ms);
        }
        poll_loop(st);
    }
    free(busy);
}

/* Stop receiving PUTs and wait for DATA sends. After a failure (a server
 * gone: its sends and receives may never complete) only briefly, so the
 * error is not delayed; what is still running then keeps its sink or
 * counter, never freed. */
static void ucx_end(xstate *st)
{
    int lost = st->resent;      /* sends to a lost connection never complete */
    for (int i = 0; i < st->f->nsrv; i++)
        lost |= st->s[i].out_pending;
    int64_t dl = ddio_now_ms() + (st->e->errnum || lost ? 200 : 5000);
    struct ddio_err err;
    int rc;

    for (int i = 0; st->ucx && i < st->f->nsrv; i++) {
        if (!st->s[i].sink)
            continue;
        if (ddio_ucx_sink_remove(st->ucx, st->s[i].sink, dl) == 0)
            free(st->s[i].sink);
        st->s[i].sink = NULL;
    }
    if (st->sends && (rc = ddio_ucx_sends_wait(st->ucx, st->sends, dl)) != -ETIMEDOUT)
        free(st->sends);
    else if (st->sends)
        rc = -ETIMEDOUT;
    else
        rc = 0;
    /* after a resend (or with a server lost for good, to be declared out),
     * sends still pending went to the endpoint of a lost
     * connection (every server that is still there said DONE, so it had
     * all its DATA): they will never complete, or fail when the endpoint's
     * error handler runs (EIO; CI: a server SIGKILLed while a rank sent it
     * write data failed a call whose resend had succeeded), and count for
     * nothing either way */
    if (rc && lost && !st->e->errnum)
        rc = 0;
    if (rc) {
        ddio_err_set(&err, -rc, "ddio: sending write data by UCX failed (%s)",
                     ddio_errno_name(-rc));
        err.transport = 1;
        xfer_note_error(st, &err);
    }
    if (st->got_err) {
        ddio_err_set(&err, ENOMEM, "ddio: out of memory noting received data");
        xfer_note_error(st, &err);
    }
}

/* a read that met bad sectors and got the bytes from copies: the bad
 * copies mended over its range (ddio_core_scrub.c) */
static void mend_bad(xstate *st)
{
    char bad[DDIO_MAX_SERVERS] = { 0 };
    int any = 0;
    int64_t first, end;
    for (int i = 0; i < st->f->nsrv && i < (int) DDIO_MAX_SERVERS; i++)
        any |= bad[i] = st->s[i].integrity.errnum != 0;
    ddio_desc_bounds(st->x->fdesc, &first, &end);
    if (any)
        ddio_scrub_after_read(st->f, bad, (uint64_t) first, (uint64_t) end);
}

static void xstate_free(xstate *st)
{
    free(st->s);
    free(st->got);
    free(st->bounce);
    free(st->conns);
    free(st->inv);
    ddio_wbuf_free(&st->dw);
}

static int xfer_call(struct ddio_xfer_req *x, const char *involved, char *back, int rejoin,
                     struct ddio_err *e)
{
    xstate st;

    memset(&st, 0, sizeof(st));
    st.rejoin = rejoin;
    st.x = x;
    st.f = x->f;
    st.e = e;
    x->bytes = 0;
    if (x->op == DDIO_X_WRITE && x->f->recover_ms) {
        st.once_call = ddio_call_id();
    }
    st.s = calloc(x->f->nsrv, sizeof(*st.s));
    for (int i = 0; st.s && i < x->f->nsrv; i++)
        st.s[i].via = i;
    if (!st.s)
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
    else if (!xfer_prepare(&st, involved)) {
        ddio_conns_lock(st.conns, x->f->nsrv);
        xfer_spare_check(&st);
        send_xfers(&st);
        poll_loop(&st);
        xfer_ec_decode(&st);
        read_copies(&st);
        ucx_end(&st);
        ddio_conns_unlock(st.conns, x->f->nsrv);
        xfer_declare_outs(&st, involved);
    }
    if (e->errnum && st.stall_ms >= STALL_NOTE_MS) {
        size_t l = strlen(e->msg);
        snprintf(e->msg + l, sizeof(e->msg) - l, " (this rank spent %lld ms %s)",
                 (long long) st.stall_ms, st.stall_what);
    }
    if (e->errnum && st.ucx && x->op == DDIO_X_READ)
        note_ucx(&st);
    if (!e->errnum && (st.resent || st.decoded) && x->op == DDIO_X_READ)
        xfer_got_merge(&st);
    if (!e->errnum && x->op == DDIO_X_WRITE)
        x->bytes = x->fdesc->length;
    else if (!e->errnum && (st.got_bytes == x->fdesc->length || x->raw))
        x->bytes = st.got_bytes;
    else if (!e->errnum)
        xfer_finish_read(&st);
    if (!e->errnum && x->op == DDIO_X_READ)
        mend_bad(&st);
    for (int i = 0; x->local_sizes && st.s && i < x->f->nsrv; i++)
        x->local_sizes[i] = st.s[i].have_size ? st.s[i].local_size : UINT64_MAX;
    if (back)
        memcpy(back, st.back, sizeof(st.back));
    xstate_free(&st);
    return e->errnum ? -1 : 0;
}

/* A mirrored file's write whose handle took servers back (its view of
 * who is out was older than the servers': DESIGN.md 6.1) sends them the
 * call after it, alone and independent (the others' collective is done;
 * each writes this rank's bytes of its units and of the copies it holds);
 * one that is still out, or lost, is out again. */
int ddio_xfer_servers(struct ddio_xfer_req *x, const char *involved, struct ddio_err *e)
{
    char back[DDIO_MAX_SERVERS] = {0};
    int rc = xfer_call(x, involved, back, 0, e), any = 0;
    for (int i = 0; i < x->f->nsrv; i++)
        any |= back[i];
    if (rc || !any || x->op != DDIO_X_WRITE)
        return rc;
    struct ddio_xfer_req alone = *x;
    alone.flags &= ~DDIO_XF_COLLECTIVE;
    alone.group = alone.seq = 0;
    alone.nparticipants = 1;
    alone.rank = 0;
    alone.exact = 1;
    alone.local_sizes = NULL;
    rc = xfer_call(&alone, back, NULL, 1, e);
    x->bytes = rc ? 0 : x->bytes;
    return rc;
}
