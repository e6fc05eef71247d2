/* The deployment's membership from the client (ddio_core_member.h): the
 * proposer of single-decree Paxos, one instance per epoch, whose acceptors
 * are the servers (ioserver/member.c). The servers have no connections to
 * each other (DESIGN.md 6.2), so a client carries the rounds: PREPARE to
 * every server, ACCEPT of the value a majority allows, COMMIT of the value
 * a majority accepted. A value a majority accepted is the only one any
 * later ballot can carry, so every client that finishes an epoch's rounds
 * finishes them with the same value. */
#include "ddio_core_member.h"
#include "ddio_net.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MEMBER_TRIES 8

/* one attempt at the membership: the servers, their last answers */
struct mround {
    struct ddio_conn *conns[DDIO_MAX_SERVERS];   /* NULL: unreachable */
    int n, timeout_ms;
    struct ddio_member_r *rs;    /* n answers */
    int ok[DDIO_MAX_SERVERS];    /* answered (rs[i] valid) */
    struct ddio_err err;         /* the first server's refusal, if any */
};

static int mround_open(struct mround *r, struct ddio_pool *p, char *const *addrs, int n,
                       int timeout_ms, struct ddio_err *e)
{
    memset(r, 0, sizeof(*r));
    r->n = n;
    r->timeout_ms = timeout_ms;
    r->rs = calloc(n > 0 ? (size_t)n : 1, sizeof(*r->rs));
    if (!r->rs || n <= 0 || n > (int)DDIO_MAX_SERVERS) {
        ddio_err_set(e, r->rs ? EINVAL : ENOMEM, "ddio: membership: %s",
                     r->rs ? "bad server list" : "out of memory");
        return -1;
    }
    struct ddio_err ignored;     /* an unreachable server is a "no" */
    ddio_pool_get_all(p, addrs, n, timeout_ms, 0, r->conns, &ignored, NULL);
    return 0;
}

/* q to every reachable server (with ballots: server i only if ballots[i],
 * with that ballot), their states in r->rs: how many answered */
static int mround_send_each(struct mround *r, const struct ddio_member *q,
                            const uint64_t *ballots)
{
    struct ddio_call *calls = calloc((size_t)r->n, sizeof(*calls));
    struct ddio_member *one = calloc(1, sizeof(*one));
    if (!calls || !one) {
        free(calls);
        free(one);
        return 0;
    }
    *one = *q;
    for (int i = 0; i < r->n; i++) {
        calls[i].conn = ballots && !ballots[i] ? NULL : r->conns[i];
        ddio_wbuf_init(&calls[i].req);
        if (ballots)
            one->ballot = ballots[i];
        if (calls[i].conn)
            ddio_enc_member(&calls[i].req, one);
    }
    free(one);
    ddio_fanout(calls, r->n, DDIO_T_MEMBER, r->timeout_ms);
    int got = 0;
    for (int i = 0; i < r->n; i++) {
        struct ddio_call *c = &calls[i];
        r->ok[i] = c->conn && !c->err.errnum
            && ddio_dec_member_r(c->reply, c->reply_len, &r->rs[i]) == 0;
        if (c->conn && c->err.errnum && !r->err.errnum)
            r->err = c->err;
        got += r->ok[i];
    }
    ddio_calls_free(calls, r->n);
    return got;
}

static int mround_send(struct mround *r, const struct ddio_member *q)
{
    return mround_send_each(r, q, NULL);
}

#define BALLOT_TAG_BITS 22

/* bits that tell this proposal from any other's: the process's random id
 * (ddio_client_id) mixed with a number of its own, so two threads differ */
static uint64_t proposer_bits(void)
{
    uint64_t x = ddio_client_id() + ddio_call_id() * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    return x * 0xBF58476D1CE4E5B9ull;
}

/* A ballot no acceptor promised yet and no other proposer can pick: a
 * round (the clock's milliseconds, or one above the highest round any
 * answer showed) over tag bits of this proposal (Paxos needs ballots
 * unique; two proposers bumping past the same promise differ in them) */
static uint64_t fresh_ballot(const struct mround *r)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t round = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
    for (int i = 0; i < r->n; i++)
        if (r->ok[i] && (r->rs[i].promised >> BALLOT_TAG_BITS) >= round)
            round = (r->rs[i].promised >> BALLOT_TAG_BITS) + 1;
    uint64_t tag = proposer_bits() & ((1ull << BALLOT_TAG_BITS) - 1);
    return round << BALLOT_TAG_BITS | tag;
}

static int val_eq(const struct ddio_member_val *a, const struct ddio_member_val *b)
{
    if (a->n != b->n)
        return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->out[i] != b->out[i] || memcmp(a->ids[i], b->ids[i], DDIO_ID_LEN))
            return 0;
    return 1;
}

/* a random wait that grows with the attempt: proposers that keep
 * preempting each other fall out of step */
static void backoff(int attempt)
{
    struct timespec ts = {0, (long)(10 + proposer_bits() % (20u << attempt)) * 1000000L};
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    nanosleep(&ts, NULL);
}

/* 1: some server has decided `epoch` (or a later one) already */
static int decided(const struct mround *r, uint32_t epoch)
{
    for (int i = 0; i < r->n; i++)
        if (r->ok[i] && r->rs[i].epoch >= epoch)
            return 1;
    return 0;
}

/* Phase 1: promises for ballot b; *v becomes the value the highest
 * accepted ballot among them carries (Paxos: a value possibly chosen
 * already must be proposed again). How many promised; -1: decided. */
static int prepare(struct mround *r, uint32_t epoch, uint64_t b, struct ddio_member_val *v)
{
    struct ddio_member q = {.op = DDIO_MB_PREPARE, .epoch = epoch, .ballot = b};
    mround_send(r, &q);
    if (decided(r, epoch))
        return -1;
    int yes = 0;
    uint64_t hi = 0;
    for (int i = 0; i < r->n; i++) {
        const struct ddio_member_r *s = &r->rs[i];
        if (!r->ok[i] || s->epoch + 1 != epoch || s->promised != b)
            continue;
        yes++;
        if (s->acc.n && s->acc_ballot > hi) {
            hi = s->acc_ballot;
            *v = s->acc;
        }
    }
    return yes;
}

/* Phase 2: how many accepted v under b; -1: decided */
static int accept_round(struct mround *r, uint32_t epoch, uint64_t b, const struct ddio_member_val *v)
{
    struct ddio_member *q = calloc(1, sizeof(*q));
    if (!q)
        return 0;
    *q = (struct ddio_member){.op = DDIO_MB_ACCEPT, .epoch = epoch, .ballot = b, .val = *v};
    mround_send(r, q);
    free(q);
    if (decided(r, epoch))
        return -1;
    int yes = 0;
    for (int i = 0; i < r->n; i++)
        yes += r->ok[i] && r->rs[i].epoch + 1 == epoch && r->rs[i].acc_ballot == b;
    return yes;
}

static void commit(struct mround *r, uint32_t epoch, const struct ddio_member_val *v)
{
    struct ddio_member *q = calloc(1, sizeof(*q));
    if (!q)
        return;
    *q = (struct ddio_member){.op = DDIO_MB_COMMIT, .epoch = epoch, .val = *v};
    mround_send(r, q);
    free(q);
}

/* Paxos for `epoch` among `members` acceptors, proposing want; *chosen
 * the value chosen (maybe another proposer's). 0 chosen, 1 the epoch was
 * decided by someone else meanwhile, -1 no majority */
static int propose(struct mround *r, uint32_t members, uint32_t epoch,
                   const struct ddio_member_val *want, struct ddio_member_val *chosen)
{
    for (int t = 0; t < MEMBER_TRIES; t++) {
        uint64_t b = fresh_ballot(r);
        *chosen = *want;
        int yes = prepare(r, epoch, b, chosen);
        if (yes > 0 && 2 * (uint32_t)yes > members)
            yes = accept_round(r, epoch, b, chosen);
        if (yes < 0)
            return 1;
        if (2 * (uint32_t)yes > members) {
            commit(r, epoch, chosen);
            return 0;
        }
        backoff(t);
    }
    return -1;
}

/* the newest record among the answers into m; -1 (e set) when a server's
 * members are not the list's servers in list order */
static int newest(const struct mround *r, struct ddio_members *m, char *const *addrs,
                  struct ddio_err *e)
{
    for (int i = 0; i < r->n; i++) {
        m->reached[i] = r->ok[i];
        m->seen[i] = r->ok[i] ? r->rs[i].epoch : 0;
        if (r->ok[i] && r->rs[i].epoch > m->epoch) {
            m->epoch = r->rs[i].epoch;
            m->val = r->rs[i].val;
        }
    }
    for (int i = 0; i < r->n && m->val.n; i++)
        if (m->val.n != (uint32_t)r->n
            || (r->ok[i] && memcmp(r->conns[i]->id, m->val.ids[i], DDIO_ID_LEN))) {
            ddio_err_set(e, EINVAL, "ddio: membership epoch %u names %u servers, not this "
                         "list's %d in its order (server %s differs)", m->epoch, m->val.n,
                         r->n, addrs[i]);
            return -1;
        }
    return 0;
}

/* epoch 1, everyone in: named while every server answers */
static void first_epoch(struct mround *r)
{
    struct ddio_member_val *v = calloc(2, sizeof(*v));
    if (!v)
        return;
    v->n = (uint32_t)r->n;
    for (int i = 0; i < r->n; i++)
        memcpy(v->ids[i], r->conns[i]->id, DDIO_ID_LEN);
    propose(r, v->n, 1, &v[0], &v[1]);
    free(v);
}

static int members_read(struct mround *r, char *const *addrs, struct ddio_members *m,
                        struct ddio_err *e)
{
    struct ddio_member q = {.op = DDIO_MB_GET};
    int got = mround_send(r, &q);
    memset(m, 0, sizeof(*m));
    m->n = r->n;
    if (got == 0) {
        if (r->err.errnum)
            *e = r->err;
        else
            ddio_err_set(e, EHOSTDOWN, "ddio: membership: no server answered");
        return -1;
    }
    if (got == r->n && newest(r, m, addrs, e) == 0 && m->epoch == 0) {
        first_epoch(r);
        got = mround_send(r, &q);
        memset(m, 0, sizeof(*m));
        m->n = r->n;
    }
    if (newest(r, m, addrs, e))
        return -1;
    int behind = 0;
    for (int i = 0; i < r->n; i++)
        behind |= r->ok[i] && r->rs[i].epoch < m->epoch;
    if (behind)
        commit(r, m->epoch, &m->val);
    return 0;
}

int ddio_members_read(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                      struct ddio_members *m, struct ddio_err *e)
{
    struct mround r;
    int rc = mround_open(&r, p, addrs, n, timeout_ms, e);
    if (rc == 0)
        rc = members_read(&r, addrs, m, e);
    free(r.rs);
    return rc;
}

/* one try at m's record with server who's flag set to out: 0 done, 1 try
 * again (another value won the epoch), -1 failed (e set) */
static int set_once(struct mround *r, char *const *addrs, int who, int out,
                    struct ddio_members *m, struct ddio_err *e)
{
    if (members_read(r, addrs, m, e))
        return -1;
    if (m->val.n == 0) {
        ddio_err_set(e, EAGAIN, "ddio: membership: no epoch agreed yet; it is named once "
                     "every server answers (ddio member)");
        return -1;
    }
    if (m->val.out[who] == (out != DDIO_MEMBER_IN))
        return 0;
    uint32_t in = 0;
    int other = -1;
    for (uint32_t i = 0; i < m->val.n; i++) {
        in += !m->val.out[i];
        if (m->val.out[i] && other < 0)
            other = (int)i;
    }
    /* checked on every try: of two racing, the second sees the first's */
    if (out == DDIO_MEMBER_OUT_ALONE && other >= 0) {
        ddio_err_set(e, EBUSY, "ddio: membership: server %s is out already (epoch %u); with "
                     "%s out too, a mirrored file striped on both could have units with no "
                     "copy in: declare it in first (or force it)", addrs[other], m->epoch,
                     addrs[who]);
        return -1;
    }
    if (out && in <= 1) {       /* a record with nobody in could not be agreed to again */
        ddio_err_set(e, EINVAL, "ddio: membership: server %s is the last one in (epoch %u); "
                     "declare another in first", addrs[who], m->epoch);
        return -1;
    }
    struct ddio_member_val *v = calloc(2, sizeof(*v));
    if (!v) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    v[0] = m->val;
    v[0].out[who] = out != DDIO_MEMBER_IN;
    int rc = propose(r, m->val.n, m->epoch + 1, &v[0], &v[1]);
    if (rc < 0)
        ddio_err_set(e, EAGAIN, "ddio: membership: no majority of the %u servers agreed to "
                     "epoch %u (%s)", m->val.n, m->epoch + 1,
                     r->err.errnum ? r->err.msg : "too few answered");
    if (rc == 0 && val_eq(&v[0], &v[1])) {
        m->epoch++;
        m->val = v[0];
    } else if (rc == 0)
        rc = 1;
    free(v);
    return rc;
}

int ddio_members_set(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms, int who,
                     int out, struct ddio_members *m, struct ddio_err *e)
{
    struct mround r;
    int rc = mround_open(&r, p, addrs, n, timeout_ms, e);
    if (rc == 0 && (who < 0 || who >= n)) {
        ddio_err_set(e, EINVAL, "ddio: membership: no server %d in a list of %d", who, n);
        rc = -1;
    }
    int done = -1;
    for (int t = 0; rc == 0 && t < MEMBER_TRIES; t++)
        if ((done = set_once(&r, addrs, who, out, m, e)) != 1)
            break;
    if (rc == 0 && done == 1)
        ddio_err_set(e, EAGAIN, "ddio: membership: other changes kept winning");
    if (done != 0)
        rc = -1;
    free(r.rs);
    return rc;
}

/* fill_out, and with `each` (every server's dial error) the missing ones
 * still in the record too, marked gone with their own error as the reason.
 * A server the record has out may fail to be reached in any way: another
 * deployment's server that took its port after it died refuses our secret
 * (a refusal from a server that is in still fails the call) */
static int fill_missing(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                        struct ddio_conn **conns, struct ddio_err *e,
                        const struct ddio_err *each)
{
    int missing = 0;
    for (int i = 0; i < n; i++)
        if (conns[i])
            conns[i]->member_out = conns[i]->gone = 0;
        else
            missing++;
    if (!missing)
        return 0;
    struct ddio_members *m = calloc(1, sizeof(*m));
    struct ddio_err me = {0};
    int ok = m && ddio_members_read(p, addrs, n, timeout_ms, m, &me) == 0
        && m->val.n == (uint32_t) n;
    for (int i = 0; ok && i < n; i++)
        ok = conns[i] || m->val.out[i] || (each && e->transport);
    for (int i = 0; ok && i < n; i++) {
        struct ddio_conn *c = conns[i] ? NULL : ddio_pool_find(p, addrs[i]);
        if (!conns[i] && !c)
            ok = 0;
        else if (c) {
            pthread_mutex_lock(&c->mu);
            memcpy(c->id, m->val.ids[i], DDIO_ID_LEN);
            c->member_out = m->val.out[i] != 0;
            c->gone = !c->member_out;
            if (c->gone) {
                c->gone_err = each[i].errnum ? each[i] : *e;
                c->gone_err.transport = 1;
            }
            pthread_mutex_unlock(&c->mu);
            conns[i] = c;
        }
    }
    free(m);
    if (ok)
        memset(e, 0, sizeof(*e));
    return ok ? 0 : -1;
}

int ddio_members_fill_out(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                          struct ddio_conn **conns, struct ddio_err *e)
{
    return fill_missing(p, addrs, n, timeout_ms, conns, e, NULL);
}

/* every server not reached waited for just now, the whole timeout (not
 * one skipped as silent from before: that one is probed, it may answer
 * again) */
static int all_waited(struct ddio_conn **conns, const struct ddio_err *each,
                      const char *silent_before, int n)
{
    if (n > (int)DDIO_MAX_SERVERS)
        return 0;
    for (int i = 0; i < n; i++)
        if (!conns[i] && (each[i].errnum != ETIMEDOUT || silent_before[i]))
            return 0;
    return 1;
}

int ddio_members_dial(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                      int recover_ms, struct ddio_conn **conns, struct ddio_err *e)
{
    /* each one's own reason, for those still gone */
    struct ddio_err *each = calloc(n > 0 ? n : 1, sizeof(*each));
    if (!each) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    char silent_before[DDIO_MAX_SERVERS] = {0};
    for (int i = 0; i < n && i < (int)DDIO_MAX_SERVERS; i++) {
        struct ddio_conn *c = ddio_pool_find(p, addrs[i]);
        silent_before[i] = c && ddio_conn_silent(c);
    }
    if (!ddio_pool_get_all(p, addrs, n, timeout_ms, 0, conns, e, each)
        || !ddio_members_fill_out(p, addrs, n, timeout_ms, conns, e)) {
        free(each);
        return 0;
    }
    /* some not reached: those refused (restarting) are waited for, the
     * recovery time; silent ones were, the whole timeout */
    if (!all_waited(conns, each, silent_before, n)
        && !ddio_pool_get_all(p, addrs, n, timeout_ms, recover_ms, conns, e, each)) {
        free(each);
        return 0;
    }
    /* not back within the recovery time: the open decides (a mirrored
     * file's goes on without it, declaring it out); with none reached
     * there is no one to ask, nor a file to open */
    int reached = 0;
    for (int i = 0; i < n; i++)
        reached += conns[i] != NULL;
    int rc = reached ? fill_missing(p, addrs, n, timeout_ms, conns, e, each) : -1;
    free(each);
    return rc;
}

/* the epoch a majority is at with nothing accepted beyond it (no next
 * epoch can have been chosen before their answers), its value in *v; 0:
 * none such */
static uint32_t quiet_epoch(const struct mround *r, const struct ddio_member_val **v)
{
    uint32_t e = 0;
    int yes = 0;
    for (int i = 0; i < r->n; i++)
        if (r->ok[i] && r->rs[i].epoch > e) {
            e = r->rs[i].epoch;
            *v = &r->rs[i].val;
        }
    for (int i = 0; i < r->n; i++)
        if (r->ok[i] && r->rs[i].epoch == e) {
            if (r->rs[i].acc.n)
                return 0;
            yes++;
        }
    return e && (*v)->n == (uint32_t)r->n && 2 * (uint32_t)yes > (*v)->n ? e : 0;
}

int ddio_members_confirm(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms)
{
    struct mround r;
    struct ddio_err e = {0};
    uint64_t sealed[DDIO_MAX_SERVERS] = {0};
    int confirmed = -1;
    if (mround_open(&r, p, addrs, n, timeout_ms, &e) == 0) {
        struct ddio_member q = {.op = DDIO_MB_SEAL};
        mround_send(&r, &q);
        for (int i = 0; i < n; i++)
            sealed[i] = r.ok[i] ? r.rs[i].sealed : 0;
        q.op = DDIO_MB_GET;        /* after every seal: what the generations held */
        mround_send(&r, &q);
        const struct ddio_member_val *v = NULL;
        uint32_t epoch = quiet_epoch(&r, &v);
        for (int i = 0; i < n; i++)   /* only a server in, at that epoch */
            if (!epoch || !r.ok[i] || r.rs[i].epoch != epoch || v->out[i])
                sealed[i] = 0;
        if (epoch) {
            q = (struct ddio_member){.op = DDIO_MB_CONFIRM, .epoch = epoch};
            confirmed = 0;
            mround_send_each(&r, &q, sealed);
            for (int i = 0; i < n; i++)
                confirmed += sealed[i] && r.ok[i];
        }
    }
    free(r.rs);
    return confirmed;
}

/* confirms at most this often per process (ms): a round of three calls */
#define CONFIRM_EVERY_MS 30000

void ddio_members_name_first(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                             const struct ddio_fh *f)
{
    static _Atomic int64_t next_confirm;
    int unnamed = 0, all = f->nsrv == n;
    for (int i = 0; i < f->nsrv; i++) {
        unnamed |= f->srv[i].conn && f->srv[i].conn->epoch == 0;
        all &= f->srv[i].conn && !f->srv[i].conn->member_out && !f->srv[i].out;
    }
    if (!ddio_fh_redundant(f))
        return;
    struct ddio_members *m = unnamed ? calloc(1, sizeof(*m)) : NULL;
    struct ddio_err e = {0};
    if (m)
        (void) ddio_members_read(p, addrs, n, timeout_ms, m, &e);
    free(m);
    /* every server of the file answered its open: the servers' own notes
     * of changes made before now can be confirmed without waiting on one */
    int64_t now = ddio_now_ms(), due = atomic_load(&next_confirm);
    if (all && now >= due
        && atomic_compare_exchange_strong(&next_confirm, &due, now + CONFIRM_EVERY_MS))
        (void) ddio_members_confirm(p, addrs, n, timeout_ms);
}
