/* Private to the client side of an XFER (ddio_core_xfer.c, ddio_core_xgot.c):
 * the state of one call and of each server in it. */
#ifndef DDIO_CORE_XSTATE_H
#define DDIO_CORE_XSTATE_H

#include "ddio_core_io.h"
#include "ddio_ucx.h"

typedef struct xsrv {
    uint64_t req;
    int pending;
    struct ddio_ucx_sink *sink; /* data by UCX (heap: outlives a stuck call) */
    uint64_t ucx_seen;          /* sink bytes seen landed: more resets deadline */
    int done;                   /* DONE came; (UCX) waiting for its bytes */
    uint64_t expect;            /* the bytes DONE says were sent */
    int have_size;
    uint64_t local_size;
    int64_t deadline;           /* fail if it sends nothing until then */
    int lost;                   /* connection lost: to reconnect and resend */
    int64_t next_try;           /* lost: the next reconnect attempt */
    int backoff_ms;             /* lost: the wait before the next attempt (grows) */
    int no_ucx;                 /* resent: by TCP (its sink counted old bytes) */
    int resent;                 /* sent again: DDIO_XF_RESENT */
    int via;                    /* the server whose connection and handle carry
                                 * this XFER: itself, or a copy's holder */
    uint32_t copy;              /* via another: the copy read there (DDIO_XF_COPY) */
    int degraded;               /* a read of a mirrored file lost this server:
                                 * its part goes to a copy (1: to send, 2: sent) */
    uint32_t tried;             /* degraded: the copies tried (bit c) */
    int size_only;              /* degraded, holding none of the call's bytes: a
                                 * copy's DONE still gives its local size (the
                                 * end of file), or nothing if no copy can */
    struct ddio_err integrity;  /* degraded by a data-integrity error (EILSEQ):
                                 * the call's error if no copy can serve it */
    int out;                    /* a write that skips it: the membership has it
                                 * out, its copies' holders write its part */
    int out_pending;            /* a write lost it for the recovery time: to be
                                 * declared out after the call (its loss in
                                 * lost_err fails the call if that fails) */
    struct ddio_err lost_err;
} xsrv;

typedef struct xstate {
    struct ddio_xfer_req *x;
    struct ddio_ucx *ucx;       /* some server moves data by UCX */
    struct ddio_ucx_sends *sends;       /* DATA in flight (heap, like sinks) */
    int got_err;                /* out of memory noting received ranges */
    struct ddio_fh *f;
    xsrv *s;
    int npending;
    struct ddio_seg *got;       /* stream ranges received (reads) */
    size_t ngot, capgot;
    uint64_t got_bytes;
    char *bounce;
    size_t bounce_len;
    struct ddio_conn **conns;   /* the connection of each server this XFER goes
                                 * to with a usable handle (else NULL), locked
                                 * during the XFER; a mirrored file's read
                                 * also holds its copies' servers */
    char *inv;                  /* the servers sent this call's XFER */
    struct ddio_err *e;
    int cancelled;              /* CANCEL sent to the servers still working */
    struct ddio_wbuf dw;        /* the encoded descriptor (kept for resends) */
    int nlost;                  /* servers lost and not given up yet */
    int64_t give_up;            /* recovery ends (0: nothing lost yet) */
    int resent;                 /* some XFER was sent again */
    uint64_t once_call;         /* writes with recovery: the call's id */
    int64_t stall_ms;           /* the longest step that kept this rank from
                                 * serving its other servers (a reconnect, a
                                 * send), and what it was: named when the
                                 * call fails, since a server that timed out
                                 * waiting for this rank cannot say why */
    char stall_what[320];
    /* a mirrored file's write refused for the handle's older view of who
     * is out: the out servers taken back (ddio_fh_review) are sent the
     * call after it, alone (rejoin: their copies' holders took it) */
    char back[DDIO_MAX_SERVERS];
    int rejoin;
    int decoded;                /* an erasure-coded read decoded lost parts */
} xstate;

/* ddio_core_xinline.c: what an XFER carries */
/* would the XFER to server i move its data by UCX, were its connection
 * attached */
int xfer_ucx_fits(const xstate *st, int i);
/* server i's own bytes of a one-range write, as pieces of the user's
 * buffer (DDIO_XF_INLINE_OWN); m points into it until it is encoded */
#define XFER_OWN_PIECES 64
struct xfer_own {
    struct ddio_span v[XFER_OWN_PIECES];
    int n;
    uint32_t server;
    uint64_t len;
    const uint8_t *base;
    uint64_t first;
};
/* the XFER m to server i carries the write's bytes (1: its inline fields
 * set, o holding server i's pieces where only they go), or not (0) */
int xfer_inline(const xstate *st, int i, struct ddio_xfer *m, struct xfer_own *o);

/* ddio_core_xgot.c: a read's received stream ranges */
/* note range g as received (0, or -ENOMEM) */
int xfer_note_got(xstate *st, const struct ddio_seg *g);
/* after a resend (or a copy's read) ranges may repeat: count each byte once */
void xfer_got_merge(xstate *st);
/* the stream bytes below the file's logical size count as read; those no
 * server sent are holes, zero-filled */
void xfer_finish_read(xstate *st);

/* ddio_core_xcopy.c: a mirrored file's lost servers */
/* a copy of lost server i's units on a server still there, not tried for
 * it yet and not busy this round: its index (slot i now goes there); -2
 * when the only ones left are busy this round, -1 when none is left */
int xfer_pick_copy(xstate *st, int i, const char *busy);
/* some lost server's part still to send to a copy */
int xfer_copies_due(const xstate *st);
/* the error when no copy of server i's part is left */
void xfer_no_copy_err(const xstate *st, int i, struct ddio_err *err);

/* A read of a mirrored file rides through a lost server (DESIGN.md 6.1):
 * its part is read from a copy (read_copies) instead of waiting out the
 * recovery time, since a copy holds the same bytes; an erasure-coded
 * file's is decoded from the others (6.4, xfer_ec_decode). */
static inline int xfer_can_degrade(const xstate *st)
{
    return st->x->op == DDIO_X_READ && (st->f->copies > 1 || st->f->ec.k);
}

/* ddio_core_xec.c: an erasure-coded file's read that lost servers: their
 * parts decoded from the others (ECREAD), placed and noted as received,
 * their local sizes from the servers' logical size (errors in st->e) */
void xfer_ec_decode(xstate *st);

static inline void xfer_note_error(xstate *st, const struct ddio_err *err)
{
    if (!st->e->errnum)
        *st->e = *err;
}

/* which servers the call goes to (conns, inv), each one's handle made
 * usable; a mirrored file's read also holds its other servers'
 * connections to read copies from (ddio_core_xprep.c). 0, or -1 out of
 * memory (st->e set) */
int xfer_prepare(xstate *st, const char *involved);
/* after the connections are locked: a server held only for copies whose
 * server closed its connection is out for this call */
void xfer_spare_check(xstate *st);
/* a mirrored file's write and server i out (err DDIO_E_OUT): 1, skipped
 * (its copies' holders write its part, and the servers note what it
 * missed); else 0 */
int xfer_write_out(xstate *st, int i, const struct ddio_err *err);
/* a write's out servers whose own units it touches (involved) each have a
 * holder of a copy among the servers sent the XFER, else the call's error
 * (EHOSTDOWN); 0 */
int xfer_write_covered(xstate *st, const char *involved);
/* a mirrored file's write gave up on server i (err: lost for the recovery
 * time): 1, taken as out pending (xfer_declare_outs decides after the
 * call), when the file's handle can have it declared out; else 0 */
int xfer_out_pending(xstate *st, int i, const struct ddio_err *err);
/* after the call, its connections unlocked: each pending server declared
 * out, and the file noted for it by the others (their parts of the call
 * were taken before it was out); a server that cannot be declared out,
 * or that no holder of its copy covered, fails the call with its loss */
void xfer_declare_outs(xstate *st, const char *involved);

#endif
