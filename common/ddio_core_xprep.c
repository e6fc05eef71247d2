/* Which servers an XFER goes to (ddio_core_xfer.c sends it): those the
 * call touches, a mirrored file's write also its copies' holders, and a
 * mirrored file's read holds the others to read copies from. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_core_xstate.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "ddio_core_conn.h"
#include "ddio_layout.h"
#include "ddio_net.h"

/* An idle connection with something to read, or hung up: its server
 * closed it (a killed server's socket reads as closed before any call has
 * noticed). Not used for this call. */
static int idle_conn_closed(const struct ddio_conn *c)
{
    struct pollfd p = {.fd = c->sock,.events = POLLIN | POLLRDHUP };
    return ddio_poll(&p, 1, 0) != 0;
}

/* Is server i sent the call's XFER? The servers it touches, and for a
 * mirrored file's write every server holding a copy of what it touches:
 * each writes its copies in the same sorted pass as its own units. An
 * erasure-coded file's write goes to all: a touched group's parity
 * servers compute its parity or keep copies of a partial write. An exact
 * write (a rebuild's, of whole groups) goes to those involved alone. */
static int wanted(const xstate *st, const char *involved, int i)
{
    if (!involved || involved[i])
        return 1;
    if (st->x->exact)
        return 0;
    if (st->x->op == DDIO_X_WRITE && st->f->ec.k)
        return 1;
    for (uint32_t c = 1; st->x->op == DDIO_X_WRITE && c < st->f->copies; c++)
        if (involved[ddio_copy_of(st->f->stripe.count, (uint32_t) i, c)])
            return 1;
    return 0;
}

/* which servers to send to, and each one's handle made usable (a renewal
 * talks on the connection, so it happens before the transfer locks them) */
int xfer_prepare(xstate *st, const char *involved)
{
    struct ddio_fh *f = st->f;
    struct ddio_err err;

    st->conns = calloc(f->nsrv, sizeof(*st->conns));
    st->inv = calloc(f->nsrv, 1);
    if (!st->conns || !st->inv) {
        ddio_err_set(st->e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    for (int i = 0; i < f->nsrv; i++) {
        int want = wanted(st, involved, i);
        if (!want && xfer_can_degrade(st) && ddio_srv_live(&f->srv[i]))
            st->conns[i] = f->srv[i].conn;      /* may serve a copy (xfer_spare_check) */
        else if (!want && xfer_can_degrade(st))
            st->s[i].degraded = st->s[i].size_only = 1;   /* out, maybe: the end of
                                                           * file may need its size */
        if (!want)
            continue;
        memset(&err, 0, sizeof(err));
        /* a mirrored file's read tries a lost server once, then its copies */
        /* a server taken back is tried once: it was out, or lost */
        if ((xfer_can_degrade(st) || st->rejoin ? ddio_fh_ready_once(f, i, &err)
             : ddio_fh_ready(f, i, &err)) == 0) {
            st->conns[i] = f->srv[i].conn;
            st->inv[i] = 1;
        } else if (xfer_can_degrade(st) && (err.transport || err.errnum == DDIO_E_OUT))
            st->s[i].degraded = 1;
        else if (st->rejoin && err.errnum != DDIO_E_OUT) {
            st->s[i].out_pending = 1;   /* lost: declared out after the call */
            st->s[i].lost_err = err;
        } else if (!xfer_write_out(st, i, &err) && !xfer_out_pending(st, i, &err))
            xfer_note_error(st, &err);
    }
    return xfer_write_covered(st, involved);
}

int xfer_write_out(xstate *st, int i, const struct ddio_err *err)
{
    if (st->x->op != DDIO_X_WRITE || !ddio_fh_redundant(st->f) || err->errnum != DDIO_E_OUT)
        return 0;
    st->f->srv[i].out = 1;      /* until the handle's view moves (ddio_fh_review) */
    ddio_fh_view_pin(st->f);
    st->s[i].out = 1;
    return 1;
}

/* an erasure-coded file's write: at most M of its servers missed it (out,
 * lost, not sent it), so every group it touched is whole in K of them */
static int ec_taken(const xstate *st)
{
    uint32_t missing = 0;
    for (int q = 0; q < st->f->nsrv; q++)
        missing += !st->inv[q] || st->s[q].out_pending || st->s[q].out;
    return missing <= st->f->ec.m;
}

/* a holder of a copy of server i's units took the call's XFER */
static int copy_taken(const xstate *st, int i)
{
    if (st->f->ec.k)
        return ec_taken(st);
    for (uint32_t c = 1; c < st->f->copies; c++) {
        int q = (int) ddio_copy_server(st->f->stripe.count, (uint32_t) i, c);
        if (st->inv[q] && !st->s[q].out_pending && !st->s[q].out)
            return 1;
    }
    return 0;
}

/* server i's part of a write is on some server the call reached: the call
 * does not touch i's units (sent to i only as a copy's holder), or a
 * holder of a copy of them took the XFER */
static int part_covered(const xstate *st, const char *involved, int i)
{
    return st->rejoin || (involved && !involved[i]) || copy_taken(st, i);
}

int xfer_write_covered(xstate *st, const char *involved)
{
    struct ddio_err err;
    for (int i = 0; i < st->f->nsrv && !st->e->errnum; i++) {
        if (st->s[i].out && !part_covered(st, involved, i)) {
            ddio_err_set(&err, EHOSTDOWN, st->f->ec.k ? "ddio: %s: server %s is out, "
                         "and more than M = %u servers of the file missed the write"
                         : "ddio: %s: server %s is out, and no server holding a copy of "
                         "its part took the write", st->f->path, st->f->srv[i].conn->name,
                         st->f->ec.m);
            xfer_note_error(st, &err);
        }
    }
    return 0;
}

/* A server held only to serve copies whose idle connection has something
 * to read, or hung up, was closed by its server: out for this call. Looked
 * at once its connection is locked: before, another thread's transfer on it
 * (ddio cp moves each server's part on its own thread) makes it readable,
 * and a read whose part needed that copy failed (CI). */
void xfer_spare_check(xstate *st)
{
    for (int i = 0; i < st->f->nsrv; i++)
        if (st->conns[i] && !st->inv[i] && !st->s[i].degraded
            && idle_conn_closed(st->conns[i]))
            st->s[i].degraded = st->s[i].size_only = 1;
}

int xfer_out_pending(xstate *st, int i, const struct ddio_err *err)
{
    if (st->x->op != DDIO_X_WRITE || !ddio_fh_redundant(st->f) || !st->f->declare_out
        || st->e->errnum || !err->transport)
        return 0;
    st->s[i].out_pending = 1;
    st->s[i].lost_err = *err;
    return 1;
}

void xfer_declare_outs(xstate *st, const char *involved)
{
    struct ddio_fh *f = st->f;
    int any = 0;
    for (int i = 0; i < f->nsrv && !st->e->errnum; i++) {
        struct ddio_err err;
        if (!st->s[i].out_pending)
            continue;
        memset(&err, 0, sizeof(err));
        if (part_covered(st, involved, i)) {
            if (f->declare_out(f->declare_arg, f->srv[i].conn, &err) == 0) {
                f->srv[i].out = 1;
                ddio_fh_view_pin(f);
                any = 1;
                continue;
            }
        }
        xfer_note_error(st, &st->s[i].lost_err);
        if (err.errnum) {
            size_t l = strlen(st->e->msg);
            snprintf(st->e->msg + l, sizeof(st->e->msg) - l, "; declaring it out: %s", err.msg);
        }
    }
    /* the others took their parts before it was out: noted now */
    if (any && !st->e->errnum)
        ddio_fh_touch(f, st->e);
}
