/* A file's sectors checked against their checksums and bad ones mended
 * (DESIGN.md 6.2), by the client: SCRUB asks the server holding a view
 * (copy c of stripe index p: server (p + c) % N) which sectors disagree;
 * each bad one's bytes come from another copy (SCRUB with DDIO_SC_DATA,
 * which reads right there) and go to the bad one's server (REPAIR), which
 * writes them only if the sector still disagrees and the bytes agree with
 * its sum; an erasure-coded file's bad sector's bytes are decoded from its
 * group's other units instead. Used by `ddio scrub` and after a read that
 * met a bad sector. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_core_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddio_log.h"
#include "ddio_net.h"

#define SCRUB_CHUNK (8u << 20)          /* local bytes one SCRUB asks for */

_Static_assert(DDIO_SCRUB_COPIES == DDIO_MAX_COPIES, "SCRUB's copies are the layout's");

struct scrub_call {
    uint16_t type;
    struct ddio_scrub sc;
    struct ddio_repair rp;
};

static void enc_call(struct ddio_wbuf *w, uint64_t handle, uint64_t arg)
{
    struct scrub_call *c = (struct scrub_call *) (uintptr_t) arg;
    if (c->type == DDIO_T_SCRUB) {
        c->sc.handle = handle;
        ddio_enc_scrub(w, &c->sc);
    } else {
        c->rp.handle = handle;
        ddio_enc_repair(w, &c->rp);
    }
}

/* SCRUB of copy c [off, off + len) on server q, decoded into r; 0 or -1 */
static int scrub_ask(struct ddio_fh *f, int q, uint32_t c, uint32_t flags, uint64_t off,
                     uint64_t len, struct ddio_scrub_r *r, uint8_t **reply,
                     struct ddio_err *e)
{
    struct scrub_call call = {.type = DDIO_T_SCRUB,
        .sc = {.copy = c,.flags = flags,.off = off,.len = len}
    };
    size_t n = 0;
    *reply = NULL;
    if (ddio_fh_call(f, q, DDIO_T_SCRUB, enc_call, (uint64_t) (uintptr_t) &call, reply, &n, e))
        return -1;
    if (ddio_dec_scrub_r(*reply, n, r)) {
        ddio_err_set(e, EPROTO, "ddio: server %s: malformed SCRUB reply", f->srv[q].conn->name);
        return -1;
    }
    return 0;
}

/* the bytes of the sector at local off of index p from a copy other than
 * bad_c that reads right, into sec: 0, or -1 when none does */
static int fetch_good(struct ddio_fh *f, uint32_t p, uint32_t bad_c, uint64_t off, uint8_t *sec)
{
    for (uint32_t c = 0; c < f->copies; c++) {
        int q = (int) ddio_copy_server(f->stripe.count, p, c);
        struct ddio_scrub_r r;
        struct ddio_err e;
        uint8_t *reply;
        memset(&e, 0, sizeof(e));
        if (c == bad_c || scrub_ask(f, q, c, DDIO_SC_DATA, off, DDIO_SCRUB_SECTOR, &r, &reply, &e))
            continue;
        int ok = r.nbad == 0 && r.data_len == DDIO_SCRUB_SECTOR;
        if (ok)
            memcpy(sec, r.data, DDIO_SCRUB_SECTOR);
        ddio_scrub_r_free(&r);
        free(reply);
        if (ok)
            return 0;
    }
    return -1;
}

/* the server holding view c of index p: a copy's holder; an erasure-coded
 * file's parity and overlay views are index p's own server's */
static int view_server(const struct ddio_fh *f, uint32_t p, uint32_t c)
{
    return c < DDIO_SCRUB_COPIES ? (int) ddio_copy_server(f->stripe.count, p, c) : (int) p;
}

/* sec, the right bytes of the sector at local off of copy c of index p,
 * offered to its server (REPAIR): counted in t */
static void repair(struct ddio_fh *f, uint32_t p, uint32_t c, uint64_t off, uint8_t *sec,
                   struct ddio_scrub_tally *t)
{
    struct scrub_call call = {.type = DDIO_T_REPAIR,
        .rp = {.copy = c,.off = off,.data_len = DDIO_SCRUB_SECTOR,.data = sec}
    };
    struct ddio_repair_r r = { 0 };
    struct ddio_err e;
    uint8_t *reply = NULL;
    size_t n = 0;
    int q = view_server(f, p, c);
    memset(&e, 0, sizeof(e));
    if (ddio_fh_call(f, q, DDIO_T_REPAIR, enc_call, (uint64_t) (uintptr_t) &call, &reply, &n,
                     &e) == 0
        && ddio_dec_repair_r(reply, n, &r) == 0 && (r.repaired || r.good)) {
        if (r.repaired)
            t->repaired++;
        else
            t->bad--;           /* a write mended it meanwhile */
    } else {
        t->unrepairable++;
    }
    free(reply);
}

/* the bad sector at local off of copy c of index p mended from another
 * copy: counted in t */
static void mend(struct ddio_fh *f, uint32_t p, uint32_t c, uint64_t off,
                 struct ddio_scrub_tally *t)
{
    uint8_t sec[DDIO_SCRUB_SECTOR];
    if (fetch_good(f, p, c, off, sec) == 0)
        repair(f, p, c, off, sec, t);
    else
        t->unrepairable++;
}

/* the bad sector at local off of index p of an erasure-coded file mended
 * with its bytes decoded from its group's other units (DESIGN.md 6.4):
 * counted in t. A stripe unit that is not whole sectors: unrepairable. */
static void mend_ec(struct ddio_fh *f, uint32_t p, uint64_t off, struct ddio_scrub_tally *t)
{
    const uint64_t U = f->stripe.unit, N = f->stripe.count;
    uint64_t size = 0, lo = off % U;
    char lost[DDIO_MAX_SERVERS] = { 0 };
    uint8_t sec[DDIO_SCRUB_SECTOR];
    struct ddio_err e;
    memset(&e, 0, sizeof(e));
    if (U % DDIO_SCRUB_SECTOR == 0
        && ddio_ec_decode_unit(f, NULL, lost, (off / U) * N + p, lo, lo + DDIO_SCRUB_SECTOR, 0,
                               sec, &size, &e) == 0)
        repair(f, p, 0, off, sec, t);
    else
        t->unrepairable++;
}

/* a bad sector at local off of server p's parity view (computed again
 * from its group's data) or overlay view (another holder's bytes of the
 * same partial writes): counted in t */
static void mend_ec_view(struct ddio_fh *f, uint32_t p, uint32_t c, uint64_t off,
                         struct ddio_scrub_tally *t)
{
    const struct ddio_ec *E = &f->ec;
    const uint64_t U = f->stripe.unit, lo = off % U;
    uint8_t sec[DDIO_SCRUB_SECTOR];
    struct ddio_err e;
    memset(&e, 0, sizeof(e));
    int rc = U % DDIO_SCRUB_SECTOR ? -1 : 0;
    if (rc == 0 && c == DDIO_SCRUB_PARITY) {
        uint64_t g = ddio_ec_parity_group(E, p, off / U);
        int j = g == UINT64_MAX ? -1 : ddio_ec_parity_held(E, p, g);
        rc = j < 0 ? -1 : ddio_ec_parity_bytes(f, g, (uint32_t) j, lo, lo + DDIO_SCRUB_SECTOR,
                                                sec, &e);
    } else if (rc == 0) {
        rc = ddio_ec_overlay_copy(f, p, off, DDIO_SCRUB_SECTOR, sec, &e);
    }
    if (rc == 0)
        repair(f, p, c, off, sec, t);
    else
        t->unrepairable++;
}

void ddio_pace(const struct ddio_pacer *pc, uint64_t rate, uint64_t now_bytes)
{
    uint64_t bytes = now_bytes - pc->base;
    if (!rate)
        return;
    int64_t due = pc->t0 + (int64_t) (bytes * 1000 / rate), now = ddio_now_ms();
    if (due > now) {
        int64_t ms = due - now;
        struct timespec ts = {.tv_sec = ms / 1000,.tv_nsec = ms % 1000 * 1000000 };
        nanosleep(&ts, NULL);
    }
}

/* copy c of index p scrubbed over o's range; 0 or -1 with e */
static int scrub_view(struct ddio_fh *f, uint32_t p, uint32_t c, const struct ddio_scrub_opt *o,
                      struct ddio_scrub_tally *t, const struct ddio_pacer *pc,
                      struct ddio_err *e)
{
    int q = view_server(f, p, c);
    uint64_t off = o->lo / DDIO_SCRUB_SECTOR * DDIO_SCRUB_SECTOR;
    uint64_t chunk = o->rate && o->rate / 4 < SCRUB_CHUNK ? o->rate / 4 : SCRUB_CHUNK;
    chunk = chunk < DDIO_SCRUB_SECTOR ? DDIO_SCRUB_SECTOR
        : chunk / DDIO_SCRUB_SECTOR * DDIO_SCRUB_SECTOR;
    for (;;) {
        uint64_t len = o->hi && o->hi - off < chunk ? o->hi - off : chunk;
        struct ddio_scrub_r r;
        uint8_t *reply;
        if (scrub_ask(f, q, c, 0, off, len, &r, &reply, e)) {
            if (e->errnum != EOPNOTSUPP)
                return -1;
            memset(e, 0, sizeof(*e));
            t->no_sums++;       /* no sums kept for this view: nothing to check */
            return 0;
        }
        t->verified += r.verified;
        t->unknown += r.unknown;
        t->bad += r.nbad;
        t->bytes += r.next > off ? r.next - off : 0;
        for (uint32_t i = 0; i < r.nbad; i++) {
            if (f->copies > 1)
                mend(f, p, c, r.bad[i], t);
            else if (f->ec.k && c >= DDIO_SCRUB_COPIES)
                mend_ec_view(f, p, c, r.bad[i], t);
            else if (f->ec.k)
                mend_ec(f, p, r.bad[i], t);
            else
                t->unrepairable++;
        }
        int done = r.next <= off || r.next >= r.size || (o->hi && r.next >= o->hi);
        off = r.next;
        ddio_scrub_r_free(&r);
        free(reply);
        ddio_pace(pc, o->rate, t->bytes);
        if (done)
            return 0;
    }
}

int ddio_scrub_fh(struct ddio_fh *f, const struct ddio_scrub_opt *o, struct ddio_scrub_tally *t,
                  struct ddio_err *e)
{
    struct ddio_pacer pc = {.t0 = ddio_now_ms(),.base = t->bytes };
    for (uint32_t p = 0; p < f->stripe.count; p++) {
        if (o->index >= 0 && p != (uint32_t) o->index)
            continue;
        for (uint32_t c = 0; c < f->copies; c++)
            if (scrub_view(f, p, c, o, t, &pc, e))
                return -1;
        /* an erasure-coded file's parity and overlay, on index p's server
         * (a read's after-scrub checks the data it read only) */
        for (uint32_t c = DDIO_SCRUB_PARITY; f->ec.k && !o->data_only && c <= DDIO_SCRUB_OVERLAY;
             c++)
            if (scrub_view(f, p, c, o, t, &pc, e))
                return -1;
    }
    return 0;
}

void ddio_scrub_after_read(struct ddio_fh *f, const char *bad, uint64_t first, uint64_t end)
{
    for (int i = 0; i < f->nsrv; i++) {
        struct ddio_scrub_opt o = {.index = i,.data_only = 1 };
        struct ddio_scrub_tally t;
        struct ddio_err e;
        if (!bad[i] || end <= first
            || !ddio_layout_local_range(&f->stripe, (uint32_t) i, first, end - first, &o.lo, &o.hi))
            continue;
        memset(&t, 0, sizeof(t));
        memset(&e, 0, sizeof(e));
        if (ddio_scrub_fh(f, &o, &t, &e))
            DDIO_WARN("checksums: %s: mending stripe index %d after a bad read failed: %s",
                      f->path, i, e.msg);
        else if (t.unrepairable)
            DDIO_WARN("checksums: %s: %llu bad sector(s) of stripe index %d could not be "
                      "mended from a copy", f->path, (unsigned long long) t.unrepairable, i);
    }
}
