/* An erasure-coded file's read that lost servers (DESIGN.md 6.4): each
 * lost unit's part of the call decoded from K of its group's other units
 * (their data in place and their parity, read with ECREAD), the overlay's
 * bytes of it (partial writes, copied on the group's parity servers) laid
 * over, and the result placed in the caller's buffer as the PUTs would
 * have. The end of file comes from the servers' noted logical size. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_core_xstate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_core_conn.h"
#include "ddio_ec.h"
#include "ddio_net.h"             /* the clock */

/* a piece of the call in a lost server's unit */
struct lpiece { uint64_t u, L, len, s; };
struct lost { struct lpiece *v; size_t n, cap; const xstate *st; int err; };

static int is_lost(const xstate *st, uint32_t srv)
{
    return st->s[srv].degraded == 1;
}

static int collect(void *arg, int64_t addr, uint64_t len, uint64_t stream_off)
{
    struct lost *l = arg;
    const struct ddio_fh *f = l->st->f;
    uint64_t U = f->stripe.unit;
    for (uint64_t L = (uint64_t) addr, s = stream_off, end = L + len, e; L < end; L = e) {
        e = (L / U + 1) * U < end ? (L / U + 1) * U : end;
        uint64_t u = L / U;
        if (is_lost(l->st, (uint32_t) (u % f->stripe.count))) {
            if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 64;
                struct lpiece *p = realloc(l->v, cap * sizeof(*p));
                if (!p)
                    return l->err = -ENOMEM;
                l->v = p;
                l->cap = cap;
            }
            l->v[l->n++] = (struct lpiece) {u, L, e - L, s};
        }
        s += e - L;
    }
    return 0;
}

/* Where the decode reads from: the file, the servers lost to it, and the
 * connections (a transfer's, locked: NULL for the file's own, each call
 * taking its server's lock) */
struct ecsrc {
    struct ddio_fh *f;
    struct ddio_conn **locked;
    const char *lost;
    struct ddio_err *e;
};

static void enc_ecread(struct ddio_wbuf *w, uint64_t handle, uint64_t arg)
{
    struct ddio_ecread m = *(const struct ddio_ecread *) (uintptr_t) arg;
    m.handle = handle;
    ddio_enc_ecread(w, &m);
}

static int usable(const struct ecsrc *x, uint32_t q)
{
    return !x->lost[q] && (!x->locked || x->locked[q]);
}

/* one ECREAD on server i; 0 or -1 with x->e set */
static int ecread_one(const struct ecsrc *x, int i, struct ddio_ecread *m, uint8_t **reply,
                      size_t *rlen)
{
    if (!x->locked)
        return ddio_fh_call(x->f, i, DDIO_T_ECREAD, enc_ecread, (uint64_t) (uintptr_t) m,
                            reply, rlen, x->e);
    struct ddio_wbuf w;
    m->handle = x->f->srv[i].handle;
    ddio_wbuf_init(&w);
    ddio_enc_ecread(&w, m);
    int rc = ddio_conn_call_locked(x->locked[i], DDIO_T_ECREAD, &w,
                                   ddio_now_ms() + x->f->timeout_ms, reply, rlen, x->e);
    ddio_wbuf_free(&w);
    return rc;
}

/* len bytes at off of server i's view into buf; extents (overlay) applied
 * from it to out when out is given; *size: the logical size it knows (the
 * largest kept). 0 or -1 with x->e set. */
static int ecread_ps(const struct ecsrc *x, int i, uint32_t view, uint64_t off, uint8_t *buf,
                     uint64_t len, uint8_t *out, uint64_t *size, uint32_t *pstate)
{
    for (uint64_t done = 0; done < len;) {
        uint32_t n = len - done > DDIO_ECREAD_MAX ? DDIO_ECREAD_MAX : (uint32_t) (len - done);
        struct ddio_ecread m = {.view = view, .len = n, .off = off + done};
        struct ddio_ecread_r r;
        uint8_t *reply = NULL;
        size_t rlen = 0;
        int rc = ecread_one(x, i, &m, &reply, &rlen);
        if (rc == 0 && ddio_dec_ecread_r(reply, rlen, &r) != 0) {
            ddio_err_set(x->e, EPROTO, "ddio: %s: server %d sent a malformed ECREAD answer",
                         x->f->path, i);
            rc = -1;
        }
        if (rc == 0) {
            memcpy(buf + done, r.data, r.data_len);
            for (uint32_t k = 0; out && k < r.next; k++)   /* extents: local offsets */
                memcpy(out + (r.ext[2 * k] - off), buf + (r.ext[2 * k] - off),
                       r.ext[2 * k + 1] - r.ext[2 * k]);
            *size = r.logical_size > *size ? r.logical_size : *size;
            if (pstate)
                *pstate = r.pstate;
            done += r.data_len ? r.data_len : n;
            ddio_ecread_r_free(&r);
        }
        free(reply);
        if (rc)
            return -1;
    }
    return 0;
}

static int ecread(const struct ecsrc *x, int i, uint32_t view, uint64_t off, uint8_t *buf,
                  uint64_t len, uint8_t *out, uint64_t *size)
{
    return ecread_ps(x, i, view, off, buf, len, out, size, NULL);
}

/* the partial writes of unit u's [lo, hi), copied on a parity server of
 * its group, laid over out */
static int overlay_unit(const struct ecsrc *x, uint64_t u, uint64_t lo, uint64_t hi, uint8_t *out,
                        uint64_t *size)
{
    const struct ddio_ec *E = &x->f->ec;
    const uint64_t U = x->f->stripe.unit, g = u / E->k;
    struct ddio_err rot = {0};
    for (uint32_t j = 0; j < E->m; j++) {
        uint32_t q = ddio_ec_parity_server(E, g, j);
        if (!usable(x, q))
            continue;
        uint8_t *ov = malloc(hi - lo);
        int rc = ov ? ecread(x, (int) q, DDIO_EV_OVERLAY, ddio_ec_ovl_local(E, U, q, u * U + lo),
                             ov, hi - lo, out, size) : -1;
        free(ov);
        if (rc && x->e->errnum == EILSEQ) {     /* rotted there: another copy */
            rot = *x->e;
            memset(x->e, 0, sizeof(*x->e));
            continue;
        }
        return rc;
    }
    if (rot.errnum)
        *x->e = rot;
    else
        ddio_err_set(x->e, EHOSTDOWN, "ddio: %s: no parity server of group %llu is left to "
                     "hold a lost unit's partial writes", x->f->path, (unsigned long long) g);
    return -1;
}

/* The units a decode read (any order: the codec takes their numbers), and
 * which data the parity read matches: a fold (DESIGN.md 6.4) writes a
 * group's parity from its merged data before the data is laid in place,
 * so the data units are read as the parity says (in place, or merged);
 * a parity being written, or of the other state, is passed over */
struct dsrc {
    uint32_t have[DDIO_EC_MAX_K], nh;
    uint8_t *in[DDIO_EC_MAX_K];
    int mode;                    /* DDIO_PS_*, -1: no parity read yet */
    struct ddio_err rot;         /* the last unit passed over */
};

/* member idx of group g, [lo, lo + len) of the unit, into d (or passed over) */
static int take_member(const struct ecsrc *x, struct dsrc *d, uint64_t g, uint32_t idx,
                       uint64_t lo, uint64_t len, uint64_t *size)
{
    const struct ddio_ec *E = &x->f->ec;
    const uint64_t U = x->f->stripe.unit, N = x->f->stripe.count, du = g * E->k + idx;
    uint32_t ps = 0, q = idx < E->k ? (uint32_t) (du % N)
        : ddio_ec_parity_server(E, g, idx - E->k);
    uint8_t *b = malloc(len);
    int rc;
    if (!b) {
        ddio_err_set(x->e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    if (idx < E->k)
        rc = ecread(x, (int) q, d->mode == DDIO_PS_MERGED ? DDIO_EV_MERGED : DDIO_EV_DATA,
                    (du / N) * U + lo, b, len, NULL, size);
    else
        rc = ecread_ps(x, (int) q, DDIO_EV_PARITY, ddio_ec_parity_local(E, q, g) * U + lo, b,
                       len, NULL, size, &ps);
    if (rc == 0 && idx >= E->k && d->mode >= 0 && (int) ps != d->mode) {
        ddio_err_set(x->e, EBUSY, "ddio: %s: the parities of group %llu match different "
                     "data (a fold cut off)", x->f->path, (unsigned long long) g);
        rc = -1;
    }
    if (rc && (x->e->errnum == EILSEQ || x->e->errnum == EBUSY)) {   /* passed over */
        d->rot = *x->e;
        memset(x->e, 0, sizeof(*x->e));
        free(b);
        return 0;
    }
    if (rc) {
        free(b);
        return -1;
    }
    if (idx >= E->k)
        d->mode = (int) ps;
    d->in[d->nh] = b;
    d->have[d->nh++] = idx;
    return 0;
}

/* member `want` of group g (0..K-1 its data units, K + j its parity j)
 * [lo, hi) of the unit decoded into out from K others that read right:
 * for a data unit, the parity first (it says which data to read), then the
 * data, then more parity if some data was passed over */
static int decode_member(const struct ecsrc *x, uint64_t g, uint32_t want, uint64_t lo,
                         uint64_t hi, uint8_t *out, uint64_t *size)
{
    struct ddio_fh *f = x->f;
    struct ddio_err *e = x->e;
    const struct ddio_ec *E = &f->ec;
    const uint64_t N = f->stripe.count, len = hi - lo;
    struct dsrc d = {.mode = -1};
    uint32_t ndata = 0, j = 0;
    char why[200];
    struct ddio_ec_codec *codec = ddio_ec_codec_new(E, why, sizeof(why));
    int rc = codec ? 0 : -1;
    if (!codec)
        ddio_err_set(e, ENOTSUP, "ddio: %s: %s", f->path, why);
    for (uint32_t idx = 0; idx < E->k; idx++)
        ndata += idx != want && usable(x, (uint32_t) ((g * E->k + idx) % N));
    for (; rc == 0 && j < E->m && ndata + d.nh < E->k; j++)
        if (E->k + j != want && usable(x, ddio_ec_parity_server(E, g, j)))
            rc = take_member(x, &d, g, E->k + j, lo, len, size);
    for (uint32_t idx = 0; rc == 0 && idx < E->k && d.nh < E->k; idx++)
        if (idx != want && usable(x, (uint32_t) ((g * E->k + idx) % N)))
            rc = take_member(x, &d, g, idx, lo, len, size);
    for (; rc == 0 && j < E->m && d.nh < E->k; j++)
        if (E->k + j != want && usable(x, ddio_ec_parity_server(E, g, j)))
            rc = take_member(x, &d, g, E->k + j, lo, len, size);
    if (rc == 0 && d.nh < E->k && d.rot.errnum)
        *e = d.rot;             /* too few good units left: the integrity error */
    else if (rc == 0 && d.nh < E->k)
        ddio_err_set(e, EHOSTDOWN, "ddio: %s: more than %u of the %u servers of a group "
                     "are lost: its bytes cannot be decoded", f->path, E->m, E->k + E->m);
    else if (rc == 0 && ddio_ec_decode(codec, len, d.have, d.in, 1, &want, &out, why, sizeof(why)))
        ddio_err_set(e, EIO, "ddio: %s: decoding a lost unit: %s", f->path, why);
    for (uint32_t k = 0; k < d.nh; k++)
        free(d.in[k]);
    ddio_ec_codec_free(codec);
    return e->errnum ? -1 : 0;
}

int ddio_ec_decode_unit(struct ddio_fh *f, struct ddio_conn **locked, const char *lost,
                        uint64_t u, uint64_t lo, uint64_t hi, int overlay, uint8_t *out,
                        uint64_t *size, struct ddio_err *e)
{
    const struct ecsrc x = {f, locked, lost, e};
    if (decode_member(&x, u / f->ec.k, (uint32_t) (u % f->ec.k), lo, hi, out, size))
        return -1;
    return overlay ? overlay_unit(&x, u, lo, hi, out, size) : 0;
}

int ddio_ec_parity_bytes(struct ddio_fh *f, uint64_t g, uint32_t j, uint64_t lo, uint64_t hi,
                         uint8_t *out, struct ddio_err *e)
{
    char lost[DDIO_MAX_SERVERS] = {0};
    const struct ecsrc x = {f, NULL, lost, e};
    uint64_t size = 0;
    return decode_member(&x, g, f->ec.k + j, lo, hi, out, &size);
}

int ddio_ec_overlay_copy(struct ddio_fh *f, uint32_t q, uint64_t off, uint64_t len,
                         uint8_t *out, struct ddio_err *e)
{
    const struct ddio_ec *E = &f->ec;
    const uint64_t U = f->stripe.unit, N = f->stripe.count;
    uint64_t L = ddio_ec_ovl_logical(E, U, q, off), size = 0, u = L / U;
    char lost[DDIO_MAX_SERVERS] = {0};
    const struct ecsrc x = {f, NULL, lost, e};
    for (uint32_t c = 0; L != UINT64_MAX && c <= E->m; c++) {
        /* the unit's own server, then its group's parity servers */
        uint32_t h = c == 0 ? (uint32_t) (u % N) : ddio_ec_parity_server(E, u / E->k, c - 1);
        if (h == q)
            continue;
        memset(e, 0, sizeof(*e));
        if (ecread(&x, (int) h, DDIO_EV_OVERLAY, ddio_ec_ovl_local(E, U, h, L), out, len, NULL,
                   &size) == 0)
            return 0;
    }
    if (!e->errnum)
        ddio_err_set(e, ENOENT, "ddio: %s: overlay offset %llu of server %u holds no unit",
                     f->path, (unsigned long long) off, q);
    return -1;
}

/* bytes [L, L + len) of the file (stream offset s) into the caller's
 * buffer, below the end of file, noted as received */
static void place(xstate *st, uint64_t L, uint64_t len, uint64_t s, const uint8_t *b,
                  uint64_t size)
{
    if (L >= size)
        return;
    if (L + len > size)
        len = size - L;
    const struct ddio_mem *m = st->x->mem;
    if (m->contig)
        memcpy(m->buf + s, b, len);
    else
        ddio_desc_scatter(&m->desc, m->buf, 0, s, s + len, b);
    struct ddio_seg g = {s, len};
    if (xfer_note_got(st, &g))
        st->got_err = 1;
}

/* one lost unit's pieces v[0..n) (consecutive in v, unit u) */
static int serve_unit(xstate *st, const char *lost, const struct lpiece *v, size_t n,
                      uint64_t *size)
{
    const uint64_t U = st->f->stripe.unit;
    uint64_t lo = v[0].L % U, hi = (v[n - 1].L + v[n - 1].len - 1) % U + 1;
    uint8_t *out = calloc(1, hi - lo);
    if (!out) {
        ddio_err_set(st->e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    int rc = ddio_ec_decode_unit(st->f, st->conns, lost, v[0].u, lo, hi, 1, out, size, st->e);
    for (size_t k = 0; rc == 0 && k < n; k++)
        place(st, v[k].L, v[k].len, v[k].s, out + (v[k].L % U - lo), *size);
    free(out);
    return rc;
}

/* the logical size from any server still there (a lost server holding none
 * of the call's bytes: the end of file may need it) */
static int size_only(xstate *st, const char *lost, uint64_t *size)
{
    uint8_t b;
    const struct ecsrc x = {st->f, st->conns, lost, st->e};
    for (int i = 0; i < st->f->nsrv; i++)
        if (usable(&x, (uint32_t) i))
            return ecread(&x, i, DDIO_EV_DATA, 0, &b, 1, NULL, size);
    ddio_err_set(st->e, EHOSTDOWN, "ddio: %s: no server is left", st->f->path);
    return -1;
}

void xfer_ec_decode(xstate *st)
{
    const struct ddio_fh *f = st->f;
    struct lost l = {.st = st};
    char lost[DDIO_MAX_SERVERS] = {0};
    uint64_t size = 0;
    int any = 0;
    for (int i = 0; i < f->nsrv; i++)
        any |= lost[i] = (char) is_lost(st, (uint32_t) i);
    if (!any || st->e->errnum || !f->ec.k)
        return;
    int64_t first, end;
    ddio_desc_bounds(st->x->fdesc, &first, &end);
    ddio_desc_walk_file(st->x->fdesc, first, end, collect, &l);
    if (l.err)
        ddio_err_set(st->e, ENOMEM, "ddio: out of memory");
    for (size_t k = 0, n; !st->e->errnum && k < l.n; k += n) {
        for (n = 1; k + n < l.n && l.v[k + n].u == l.v[k].u; n++)
            ;
        serve_unit(st, lost, l.v + k, n, &size);
    }
    if (!st->e->errnum && l.n == 0)
        size_only(st, lost, &size);
    for (int i = 0; !st->e->errnum && i < f->nsrv; i++)
        if (lost[i]) {
            st->s[i].degraded = 2;
            st->s[i].have_size = 1;
            st->s[i].local_size = ddio_layout_local_size(&f->stripe, (uint32_t) i, size);
        }
    st->decoded = 1;
    free(l.v);
}
