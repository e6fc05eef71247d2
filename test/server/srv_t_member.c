/* The membership on one server (PROTOCOL.md "MEMBER"), with this client as
 * the proposer: the acceptor's rules (a promise refuses lower ballots, a
 * prepare returns the value accepted before, proposals of another epoch
 * or another deployment are refused, a commit is adopted and survives on
 * disk), then what the record does to requests on mirrored files: one
 * carrying another epoch is refused with the server's epoch in the reply's
 * header, and a server the record has out refuses mirrored files (not
 * others) until a later epoch has it in again. */
#include "srv_harness.h"

#include <stdlib.h>
#include <string.h>

/* one MEMBER request; the state after it into *r; the status */
static int member(struct cl *c, const struct ddio_member *q, struct ddio_member_r *r)
{
    struct ddio_wbuf w;
    struct msg m;
    ddio_wbuf_init(&w);
    ddio_enc_member(&w, q);
    int st = call(c, DDIO_T_MEMBER, &w, &m);
    if (st == 0)
        CHECK(ddio_dec_member_r(m.p, m.h.len, r) == 0, "MEMBER reply malformed");
    CHECK(st != 0 || m.h.epoch == r->epoch, "reply header's epoch %u, record's %u", m.h.epoch,
          r->epoch);
    free(m.p);
    return st;
}

static struct ddio_member_r *get(struct cl *c)
{
    static struct ddio_member_r r;
    struct ddio_member q = {.op = DDIO_MB_GET};
    CHECK(member(c, &q, &r) == 0, "GET");
    return &r;
}

/* a request carrying `epoch` in its header; the reply in *m */
static int call_ep(struct cl *c, uint16_t type, uint32_t epoch, struct ddio_wbuf *w,
                   struct msg *m)
{
    uint64_t req = ++c->req;
    int rc = ddio_send_req_ep(c->fd, type, req, epoch, w->p, w->len, ddio_now_ms() + TMO);
    ddio_wbuf_free(w);
    CHECK(rc == 0, "send: %s", strerror(-rc));
    CHECK(recv_msg(c, m) == 0 && m->h.req == req, "reply to %s", ddio_type_name(type));
    return m->h.status;
}

/* OPEN (create) of path with `copies` carrying epoch; status, reply's epoch */
static int open_ep(struct cl *c, const char *path, uint32_t copies, uint32_t epoch,
                   uint32_t *their, uint64_t *handle)
{
    struct ddio_open o = {.path = (char *)path, .amode = DDIO_O_RDWR | DDIO_O_CREAT};
    layout_for(c, &o.layout, 65536, 2);
    o.layout.copies = copies;
    struct ddio_wbuf w;
    struct msg m;
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, &o);
    int st = call_ep(c, DDIO_T_OPEN, epoch, &w, &m);
    struct ddio_open_r r;
    if (st == 0 && handle)
        CHECK(ddio_dec_open_r(m.p, m.h.len, &r) == 0 && (*handle = r.handle), "OPEN reply");
    *their = m.h.epoch;
    free(m.p);
    return st;
}

/* the deployment's value: the record's, or this server and two others */
static void members_of(struct cl *c, const struct ddio_member_r *r, struct ddio_member_val *v)
{
    if (r->val.n) {
        *v = r->val;
        return;
    }
    memset(v, 0, sizeof(*v));
    v->n = 3;
    memcpy(v->ids[0], c->id, DDIO_ID_LEN);
    memset(v->ids[1], 0xB1, DDIO_ID_LEN);
    memset(v->ids[2], 0xB2, DDIO_ID_LEN);
}

static int self_at(const struct cl *c, const struct ddio_member_val *v)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (!memcmp(v->ids[i], c->id, DDIO_ID_LEN))
            return (int)i;
    return -1;
}

/* commit a value for the next epoch (the acceptor takes a client's word) */
static uint32_t commit(struct cl *c, const struct ddio_member_val *v)
{
    static struct ddio_member q;
    struct ddio_member_r *r = get(c);
    q = (struct ddio_member){.op = DDIO_MB_COMMIT, .epoch = r->epoch + 1, .val = *v};
    static struct ddio_member_r after;
    CHECK(member(c, &q, &after) == 0 && after.epoch == q.epoch, "COMMIT of epoch %u", q.epoch);
    return after.epoch;
}

/* Paxos' acceptor: promises, refusals, the accepted value returned */
static void acceptor(struct cl *c, const struct ddio_member_val *v)
{
    static struct ddio_member q;
    static struct ddio_member_r r;
    uint32_t e = get(c)->epoch + 1;
    uint64_t b = ((uint64_t)time(NULL) << 20) | 5;
    q = (struct ddio_member){.op = DDIO_MB_PREPARE, .epoch = e, .ballot = b};
    CHECK(member(c, &q, &r) == 0 && r.promised == b && r.epoch == e - 1, "PREPARE %u", e);
    q.ballot = b - 1;                               /* below the promise: refused */
    CHECK(member(c, &q, &r) == 0 && r.promised == b, "a lower PREPARE moved the promise");
    q = (struct ddio_member){.op = DDIO_MB_ACCEPT, .epoch = e, .ballot = b - 1, .val = *v};
    CHECK(member(c, &q, &r) == 0 && r.acc_ballot != b - 1, "a lower ballot was accepted");
    q.ballot = b;
    CHECK(member(c, &q, &r) == 0 && r.acc_ballot == b && r.acc.n == v->n, "ACCEPT refused");
    /* a later proposer learns the value accepted: it must propose it */
    q = (struct ddio_member){.op = DDIO_MB_PREPARE, .epoch = e, .ballot = b + 7};
    CHECK(member(c, &q, &r) == 0 && r.promised == b + 7 && r.acc_ballot == b
          && !memcmp(&r.acc.ids[1], v->ids[1], DDIO_ID_LEN), "PREPARE lost the accepted value");
    q = (struct ddio_member){.op = DDIO_MB_PREPARE, .epoch = e + 1, .ballot = b + 9};
    CHECK(member(c, &q, &r) == 0 && r.promised == b + 7, "a PREPARE two epochs ahead taken");
    /* another deployment's value: this server is not among its members */
    static struct ddio_member_val other;
    other = *v;
    memset(other.ids[self_at(c, v)], 0xEE, DDIO_ID_LEN);
    q = (struct ddio_member){.op = DDIO_MB_ACCEPT, .epoch = e, .ballot = b + 7, .val = other};
    struct ddio_member_r dummy;
    CHECK(member(c, &q, &dummy) == EINVAL, "another deployment's value accepted");
    CHECK(commit(c, v) == e, "COMMIT");
    CHECK(get(c)->promised == 0 && get(c)->acc.n == 0, "the decided epoch's votes kept");
}

/* requests on a mirrored file carrying another epoch are refused; a
 * file without copies does not depend on the membership */
static void stale_epochs(struct cl *c, uint32_t e)
{
    char pm[128], pn[128];
    uint32_t their = 0;
    uint64_t h = 0;
    path_name(pm, sizeof(pm), "member-m");
    path_name(pn, sizeof(pn), "member-n");
    CHECK(open_ep(c, pm, 2, e - 1, &their, NULL) == DDIO_E_EPOCH && their == e,
          "a stale epoch's OPEN of a mirrored file: not refused with epoch %u (%u)", e, their);
    CHECK(open_ep(c, pm, 2, e + 1, &their, NULL) == DDIO_E_EPOCH, "a future epoch's OPEN");
    CHECK(open_ep(c, pn, 1, e - 1, &their, NULL) == 0, "a file without copies refused");
    CHECK(open_ep(c, pm, 2, e, &their, &h) == 0, "the right epoch's OPEN refused");
    struct ddio_handle_req s = {h};
    struct ddio_wbuf w;
    struct msg m;
    ddio_wbuf_init(&w);
    ddio_enc_handle_req(&w, &s);
    CHECK(call_ep(c, DDIO_T_SYNC, e - 1, &w, &m) == DDIO_E_EPOCH && m.h.epoch == e,
          "a stale SYNC of a mirrored file");
    free(m.p);
    ddio_wbuf_init(&w);
    ddio_enc_handle_req(&w, &s);
    CHECK(call_ep(c, DDIO_T_SYNC, e, &w, &m) == 0, "SYNC at the epoch");
    free(m.p);
    CHECK(cl_delete(c, pm) == 0 && cl_delete(c, pn) == 0, "delete");
}

/* out: mirrored files refused (their reads too), others served; in again */
static void out_and_in(struct cl *c, const struct ddio_member_val *v)
{
    static struct ddio_member_val out;
    out = *v;
    out.out[self_at(c, v)] = 1;
    uint32_t e = commit(c, &out), their;
    char pm[128], pn[128];
    path_name(pm, sizeof(pm), "member-out-m");
    path_name(pn, sizeof(pn), "member-out-n");
    CHECK(open_ep(c, pm, 2, e, &their, NULL) == DDIO_E_OUT, "an out server opened a mirrored file");
    CHECK(open_ep(c, pn, 1, e, &their, NULL) == 0, "an out server refused a file without copies");
    out.out[self_at(c, v)] = 0;
    e = commit(c, &out);
    CHECK(open_ep(c, pm, 2, e, &their, NULL) == 0, "declared in again, still refused");
    CHECK(cl_delete(c, pm) == 0 && cl_delete(c, pn) == 0, "delete");
}

void test_member(void)
{
    struct cl *c = cl_connect();
    static struct ddio_member_val v;
    members_of(c, get(c), &v);
    CHECK(self_at(c, &v) >= 0, "this server is not in its own record");
    acceptor(c, &v);
    commit(c, &v);              /* epoch >= 2: a stale epoch is not 0 (none heard yet) */
    stale_epochs(c, get(c)->epoch);
    out_and_in(c, &v);
    if (g_root) {               /* the record is on disk, in the state file */
        char fn[600];
        struct stat sb;
        snprintf(fn, sizeof(fn), "%s/.ddio/member", g_root);
        CHECK(stat(fn, &sb) == 0 && sb.st_size > 20, "%s missing", fn);
    }
    cl_close(c);
}
