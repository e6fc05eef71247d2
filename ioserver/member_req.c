/* MEMBER requests and the membership check of requests on mirrored files
 * (member_req.h; PROTOCOL.md "MEMBER"). A proposal the acceptor refuses is
 * answered with its state like one it took: the proposer learns from it
 * whether it was promised or accepted, or which epoch to catch up to. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "member_req.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "changed.h"
#include "grace.h"
#include "missed.h"
#include "rebuild.h"
#include "reply.h"

int on_member(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_member *q = calloc(1, sizeof(*q));      /* zeros: not decoded without r */
    struct ddio_member_r *r = calloc(1, sizeof(*r));
    if (q && r && ddio_dec_member(p, h->len, q)) {
        free(q);
        free(r);
        return bad_payload(c, h);
    }
    char msg[300] = "out of memory";
    uint32_t op = q ? q->op : 0, epoch = q ? q->epoch : 0;
    uint64_t gen = q ? q->ballot : 0;
    if (op == DDIO_MB_SEAL || op == DDIO_MB_CONFIRM)
        memset(q, 0, sizeof(*q)), q->op = DDIO_MB_GET;     /* answered with the state */
    uint32_t before = member_epoch(&c->srv->member);
    int rc = q && r ? member_handle(&c->srv->member, q, r, msg, sizeof(msg)) : ENOMEM;
    free(q);
    /* who is out changed: a copied file's locks may move to or from this
     * server, and their holders reclaim them first */
    if (member_epoch(&c->srv->member) != before)
        srv_lock_grace(c->srv, "the membership changed");
    if (rc == 0 && op == DDIO_MB_SEAL)
        r->sealed = changed_seal(c->srv);
    /* confirmed only for the epoch this server is at, and in */
    if (rc == 0 && op == DDIO_MB_CONFIRM && r->epoch == epoch
        && !member_self_out(&c->srv->member)) {
        int dropped = changed_confirm(c->srv, gen);
        r->sealed = dropped > 0 ? (uint64_t)dropped : 0;
    }
    /* a proposal refused (another ballot promised, another epoch) is
     * answered with the state: the proposer reads its outcome there */
    if (rc && rc != EBUSY && rc != DDIO_E_EPOCH) {
        free(r);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, rc, "membership: %s", msg), 0;
    }
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_member_r(&w, r);
    free(r);
    return reply_w(c, h, &w);
}

int member_refused(struct conn *c, const struct ddio_hdr *h, uint32_t redundancy)
{
    return member_refused_on(c, h, redundancy, NULL);
}

int member_refused_on(struct conn *c, const struct ddio_hdr *h, uint32_t redundancy,
                      const char *norm)
{
    char msg[300];
    /* the resync of an out member writes the file it fenced there (an
     * admin's connection, ddio member in) */
    if (norm && rebuild_fence_held(c, norm))
        return 0;
    int rc = member_admit(&c->srv->member, redundancy, h->epoch, msg, sizeof(msg));
    if (rc) {
        struct srv_stats *st = &c->srv->stats;
        stats_bump(st, rc == DDIO_E_OUT ? &st->out_refused : &st->epoch_refused);
        conn_send_err(c, h->type | DDIO_REPLY, h->req, rc, "%s", msg);
    }
    return rc != 0;
}

int member_note_change(struct conn *c, const struct ddio_hdr *h, uint32_t redundancy,
                       const char *norm, uint64_t *gen)
{
    char msg[400];
    *gen = 0;
    if (!ddio_redundancy_kept(redundancy))
        return 0;
    int rc = missed_note(c->srv, norm, msg, sizeof(msg));
    if (rc == 0)
        rc = changed_begin(c->srv, norm, gen, msg, sizeof(msg));
    if (rc)
        conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "%s", msg);
    return rc != 0;
}
