/* An erasure-coded file's partial groups folded into parity (DESIGN.md 6.4
 * "The fold"; ddio_core_io.h ddio_ec_fold). A partial write sits in the
 * overlays, held M+1 times, with the group's parity still that of the
 * data in place. The fold makes the parity that of the merged data first
 * (its servers' copies dropped with it), and only then lays the overlay
 * in place: at every moment each parity says which data it matches
 * (ECREAD's pstate), so a decode after a crash anywhere in between reads
 * the data that parity was computed from. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_core_io.h"
#include "ddio_core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_ec.h"

#define FOLD_CHUNK (8u << 20)           /* logical bytes one batch moves at most */

struct groups { uint64_t *v; size_t n, cap; };

static int groups_add(struct groups *s, uint64_t g)
{
    if (s->n && s->v[s->n - 1] == g)     /* (an extent's units: one group often) */
        return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        uint64_t *v = realloc(s->v, cap * sizeof(*v));
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = g;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

static void enc_ecread(struct ddio_wbuf *w, uint64_t handle, uint64_t arg)
{
    struct ddio_ecread m = *(const struct ddio_ecread *) (uintptr_t) arg;
    m.handle = handle;
    ddio_enc_ecread(w, &m);
}

/* the groups below `whole` (groups) server q's overlay has extents of
 * (view DDIO_EV_EXTENTS), or whose parity there is in a fold cut off
 * (DDIO_EV_FOLDING) */
static int scan_server(struct ddio_fh *f, int q, uint32_t view, uint64_t whole,
                       struct groups *s, struct ddio_err *e)
{
    const struct ddio_ec *E = &f->ec;
    const uint64_t U = f->stripe.unit, N = E->k + E->m;
    /* overlay offsets of q's groups below `whole`: its units i < whole * K / N + 1 */
    const uint64_t end = view == DDIO_EV_FOLDING ? whole : (whole * E->k / N + 2) * N * U;
    for (uint64_t off = 0; off < end;) {
        uint64_t len = end - off > UINT32_MAX ? UINT32_MAX : end - off;
        struct ddio_ecread m = {.view = view, .len = (uint32_t) len, .off = off };
        struct ddio_ecread_r r;
        uint8_t *reply = NULL;
        size_t rlen = 0;
        int rc = ddio_fh_call(f, q, DDIO_T_ECREAD, enc_ecread, (uint64_t) (uintptr_t) &m,
                              &reply, &rlen, e);
        if (rc == 0 && ddio_dec_ecread_r(reply, rlen, &r) != 0) {
            ddio_err_set(e, EPROTO, "ddio: %s: server %d sent a malformed ECREAD answer",
                         f->path, q);
            rc = -1;
        }
        free(reply);
        if (rc)
            return -1;
        for (uint32_t k = 0; view == DDIO_EV_FOLDING && k < r.next; k++)
            rc |= groups_add(s, r.ext[2 * k]);
        for (uint32_t k = 0; view == DDIO_EV_EXTENTS && k < r.next; k++)
            for (uint64_t j = r.ext[2 * k] / U; j * U < r.ext[2 * k + 1]; j++) {
                uint64_t L = ddio_ec_ovl_logical(E, U, (uint32_t) q, j * U);
                if (L != UINT64_MAX && L / U / E->k < whole && groups_add(s, L / U / E->k))
                    rc = -1;
            }
        /* a full answer stops at its last extent: go on from there */
        off = r.next == DDIO_ECREAD_MAX_EXT ? r.ext[2 * r.next - 1] : off + len;
        ddio_ecread_r_free(&r);
        if (rc) {
            ddio_err_set(e, ENOMEM, "ddio: out of memory");
            return -1;
        }
    }
    return 0;
}

static void enc_rebuild(struct ddio_wbuf *w, uint64_t handle, uint64_t arg)
{
    (void) handle;
    ddio_enc_rebuild(w, (const struct ddio_rebuild *) (uintptr_t) arg);
}

/* FOLD or FOLDED of groups [glo, ghi) on every server of f in the
 * membership (one out is emptied and written whole when it comes back) */
static int fold_op(struct ddio_fh *f, uint32_t op, uint64_t glo, uint64_t ghi,
                   struct ddio_err *e)
{
    struct ddio_rebuild m = {.op = op,.path = f->path,.glo = glo,.ghi = ghi };
    for (int i = 0; i < f->nsrv; i++) {
        if (f->srv[i].out)
            continue;
        uint8_t *reply = NULL;
        size_t rlen = 0;
        int rc = ddio_fh_call(f, i, DDIO_T_REBUILD, enc_rebuild, (uint64_t) (uintptr_t) &m,
                              &reply, &rlen, e);
        free(reply);
        if (rc)
            return -1;
    }
    return 0;
}

/* groups [glo, ghi): the merged bytes read (before the parity is marked:
 * a server lost may need it decoded), the parity, then the data in place */
static int fold_batch(struct ddio_fh *f, uint64_t glo, uint64_t ghi, char *buf,
                      struct ddio_err *e)
{
    const uint64_t gsz = f->stripe.unit * f->ec.k, off = glo * gsz, len = (ghi - glo) * gsz;
    if (ddio_move(f, DDIO_X_READ, 0, off, buf, len, NULL, e)
        || fold_op(f, DDIO_RB_FOLD, glo, ghi, e)
        || ddio_move(f, DDIO_X_WRITE, DDIO_XF_FOLD_PARITY, off, buf, len, NULL, e)
        || ddio_fh_sync_servers(f, e)
        || ddio_move(f, DDIO_X_WRITE, DDIO_XF_FOLD_DATA, off, buf, len, NULL, e)
        || ddio_fh_sync_servers(f, e))
        return -1;
    return fold_op(f, DDIO_RB_FOLDED, glo, ghi, e);
}

int ddio_ec_fold(struct ddio_fh *f, uint64_t *groups, uint64_t *bytes, struct ddio_err *e)
{
    const uint64_t gsz = f->stripe.unit * f->ec.k;
    const uint64_t per = FOLD_CHUNK / gsz ? FOLD_CHUNK / gsz : 1;
    struct groups s = {0};
    uint64_t size = 0;
    *groups = *bytes = 0;
    if (!f->ec.k) {
        ddio_err_set(e, EINVAL, "ddio: %s: not an erasure-coded file", f->path);
        return -1;
    }
    int rc = ddio_xfer_file_size(f, &size, e);
    for (int q = 0; rc == 0 && q < f->nsrv; q++)
        if (!f->srv[q].out && !(rc = scan_server(f, q, DDIO_EV_EXTENTS, size / gsz, &s, e)))
            rc = scan_server(f, q, DDIO_EV_FOLDING, size / gsz, &s, e);
    if (rc == 0 && s.n) {       /* sorted, each group once */
        qsort(s.v, s.n, sizeof(*s.v), cmp_u64);
        size_t w = 1;
        for (size_t k = 1; k < s.n; k++)
            if (s.v[k] != s.v[w - 1])
                s.v[w++] = s.v[k];
        s.n = w;
    }
    char *buf = rc == 0 && s.n ? malloc(per * gsz) : NULL;
    if (rc == 0 && s.n && !buf) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        rc = -1;
    }
    for (size_t k = 0, n; rc == 0 && k < s.n; k += n) {
        /* a run of consecutive groups, at most `per` of them */
        for (n = 1; k + n < s.n && n < per && s.v[k + n] == s.v[k + n - 1] + 1; n++)
            ;
        uint64_t ghi = s.v[k + n - 1] + 1;
        rc = fold_batch(f, s.v[k], ghi, buf, e);
        *groups += rc ? 0 : ghi - s.v[k];
        *bytes += rc ? 0 : (ghi - s.v[k]) * gsz;
    }
    free(buf);
    free(s.v);
    return rc;
}
