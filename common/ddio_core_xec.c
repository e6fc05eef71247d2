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

/* ECREAD of len bytes at off of server i's view into buf; extents (overlay)
 * applied from it to out when out is given; *size: the logical size it
 * knows (the largest kept). 0 or -1 with st->e set. */
static int ecread(xstate *st, int i, uint32_t view, uint64_t off, uint8_t *buf, uint64_t len,
                  uint8_t *out, uint64_t *size)
{
    struct ddio_conn *c = st->conns[i];
    if (!c) {
        ddio_err_set(st->e, EHOSTDOWN, "ddio: %s: server %d, needed to decode a lost "
                     "server's part, is not reachable either", st->f->path, i);
        return -1;
    }
    for (uint64_t done = 0; done < len;) {
        uint32_t n = len - done > DDIO_ECREAD_MAX ? DDIO_ECREAD_MAX : (uint32_t) (len - done);
        struct ddio_ecread m = {.handle = st->f->srv[i].handle, .view = view, .len = n,
                                .off = off + done};
        struct ddio_wbuf w;
        struct ddio_ecread_r r;
        uint8_t *reply = NULL;
        size_t rlen = 0;
        ddio_wbuf_init(&w);
        ddio_enc_ecread(&w, &m);
        int rc = ddio_conn_call_locked(c, DDIO_T_ECREAD, &w, ddio_now_ms() + st->f->timeout_ms,
                                       &reply, &rlen, st->e);
        ddio_wbuf_free(&w);
        if (rc == 0 && ddio_dec_ecread_r(reply, rlen, &r) != 0) {
            ddio_err_set(st->e, EPROTO, "ddio: %s: server %s sent a malformed ECREAD answer",
                         st->f->path, c->name);
            rc = -1;
        }
        if (rc == 0) {
            memcpy(buf + done, r.data, r.data_len);
            for (uint32_t k = 0; out && k < r.next; k++)   /* extents: local offsets */
                memcpy(out + (r.ext[2 * k] - off), buf + (r.ext[2 * k] - off),
                       r.ext[2 * k + 1] - r.ext[2 * k]);
            *size = r.logical_size > *size ? r.logical_size : *size;
            done += r.data_len ? r.data_len : n;
            ddio_ecread_r_free(&r);
        }
        free(reply);
        if (rc)
            return -1;
    }
    return 0;
}

/* The in-place bytes [lo, hi) of lost unit u decoded into out from K of
 * its group's other units; then its overlay copy's bytes over them */
static int decode_unit(xstate *st, const struct ddio_ec_codec *codec, uint64_t u, uint64_t lo,
                       uint64_t hi, uint8_t *out, uint64_t *size)
{
    const struct ddio_fh *f = st->f;
    const struct ddio_ec *E = &f->ec;
    const uint64_t U = f->stripe.unit, N = f->stripe.count, len = hi - lo, g = u / E->k;
    uint32_t have[DDIO_EC_MAX_K], nh = 0, want = (uint32_t) (u % E->k);
    uint8_t *in[DDIO_EC_MAX_K] = {0};
    int rc = 0;
    for (uint32_t idx = 0; idx < E->k + E->m && nh < E->k && rc == 0; idx++) {
        uint64_t du = g * E->k + idx;
        uint32_t q = idx < E->k ? (uint32_t) (du % N) : ddio_ec_parity_server(E, g, idx - E->k);
        if (is_lost(st, q) || !st->conns[q] || !(in[nh] = malloc(len)))
            continue;
        if (idx < E->k)
            rc = ecread(st, (int) q, DDIO_EV_DATA, (du / N) * U + lo, in[nh], len, NULL, size);
        else
            rc = ecread(st, (int) q, DDIO_EV_PARITY,
                        ddio_ec_parity_local(E, q, g) * U + lo, in[nh], len, NULL, size);
        have[nh++] = idx;
    }
    char why[200];
    if (rc == 0 && nh < E->k)
        ddio_err_set(st->e, EHOSTDOWN, "ddio: %s: more than %u of the %u servers of a group "
                     "are lost: its bytes cannot be decoded", f->path, E->m, E->k + E->m);
    else if (rc == 0 && ddio_ec_decode(codec, len, have, in, 1, &want, &out, why, sizeof(why)))
        ddio_err_set(st->e, EIO, "ddio: %s: decoding a lost unit: %s", f->path, why);
    for (uint32_t k = 0; k < nh; k++)
        free(in[k]);
    if (st->e->errnum)
        return -1;
    /* the partial writes of the unit, copied on a parity server of its group */
    for (uint32_t j = 0; j < E->m; j++) {
        uint32_t q = ddio_ec_parity_server(E, g, j);
        if (is_lost(st, q) || !st->conns[q])
            continue;
        uint8_t *ov = malloc(len);
        rc = ov ? ecread(st, (int) q, DDIO_EV_OVERLAY, ddio_ec_ovl_local(E, U, q, u * U + lo),
                         ov, len, out, size) : -1;
        free(ov);
        return rc;
    }
    ddio_err_set(st->e, EHOSTDOWN, "ddio: %s: no parity server of group %llu is left to hold "
                 "the lost unit's partial writes", f->path, (unsigned long long) g);
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
static int serve_unit(xstate *st, const struct ddio_ec_codec *codec, const struct lpiece *v,
                      size_t n, uint64_t *size)
{
    const uint64_t U = st->f->stripe.unit;
    uint64_t lo = v[0].L % U, hi = (v[n - 1].L + v[n - 1].len - 1) % U + 1;
    uint8_t *out = calloc(1, hi - lo);
    if (!out) {
        ddio_err_set(st->e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    int rc = decode_unit(st, codec, v[0].u, lo, hi, out, size);
    for (size_t k = 0; rc == 0 && k < n; k++)
        place(st, v[k].L, v[k].len, v[k].s, out + (v[k].L % U - lo), *size);
    free(out);
    return rc;
}

/* the logical size from any server still there (a lost server holding none
 * of the call's bytes: the end of file may need it) */
static int size_only(xstate *st, uint64_t *size)
{
    uint8_t b;
    for (int i = 0; i < st->f->nsrv; i++)
        if (!is_lost(st, (uint32_t) i) && st->conns[i])
            return ecread(st, i, DDIO_EV_DATA, 0, &b, 1, NULL, size);
    ddio_err_set(st->e, EHOSTDOWN, "ddio: %s: no server is left", st->f->path);
    return -1;
}

void xfer_ec_decode(xstate *st)
{
    const struct ddio_fh *f = st->f;
    struct lost l = {.st = st};
    uint64_t size = 0;
    int any = 0;
    for (int i = 0; i < f->nsrv; i++)
        any |= is_lost(st, (uint32_t) i);
    if (!any || st->e->errnum || !f->ec.k)
        return;
    char why[200];
    struct ddio_ec_codec *codec = ddio_ec_codec_new(&f->ec, why, sizeof(why));
    if (!codec) {
        ddio_err_set(st->e, ENOTSUP, "ddio: %s: %s", f->path, why);
        return;
    }
    int64_t first, end;
    ddio_desc_bounds(st->x->fdesc, &first, &end);
    ddio_desc_walk_file(st->x->fdesc, first, end, collect, &l);
    if (l.err)
        ddio_err_set(st->e, ENOMEM, "ddio: out of memory");
    for (size_t k = 0, n; !st->e->errnum && k < l.n; k += n) {
        for (n = 1; k + n < l.n && l.v[k + n].u == l.v[k].u; n++)
            ;
        serve_unit(st, codec, l.v + k, n, &size);
    }
    if (!st->e->errnum && l.n == 0)
        size_only(st, &size);
    for (int i = 0; !st->e->errnum && i < f->nsrv; i++)
        if (is_lost(st, (uint32_t) i)) {
            st->s[i].degraded = 2;
            st->s[i].have_size = 1;
            st->s[i].local_size = ddio_layout_local_size(&f->stripe, (uint32_t) i, size);
        }
    st->decoded = 1;
    free(l.v);
    ddio_ec_codec_free(codec);
}
