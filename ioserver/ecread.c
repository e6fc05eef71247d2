/* ECREAD: an erasure-coded file's view read for a decoding client
 * (ecread.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ecread.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_log.h"
#include "ddio_net.h"             /* errno names */
#include "overlay.h"
#include "reply.h"
#include "scrub.h"
#include "server.h"
#include "store.h"
#include "sums.h"
#include "workers.h"

struct exts { uint64_t *v; uint32_t n; uint64_t stop; };

static int take_ext(void *arg, uint64_t lo, uint64_t hi)
{
    struct exts *x = arg;
    if (x->n == DDIO_ECREAD_MAX_EXT) {
        x->stop = lo;             /* the bytes sent stop where the extents do */
        return 1;
    }
    x->v[2 * x->n] = lo;
    x->v[2 * x->n + 1] = hi;
    x->n++;
    return 0;
}

/* len bytes at off of view vf into buf, every sector they touch checked
 * against its sum (a decode must not take rotted bytes for the lost
 * unit's): 0, -EILSEQ (*bad: the sector's local offset), or -errno */
static int read_checked(struct ofile *vf, uint64_t off, uint8_t *buf, uint32_t len,
                        uint64_t *bad)
{
    if (!vf->sums)
        return store_pread(vf, off, buf, len);
    uint64_t lo = off / SUMS_SECTOR * SUMS_SECTOR;
    uint64_t hi = (off + len + SUMS_SECTOR - 1) / SUMS_SECTOR * SUMS_SECTOR;
    uint8_t *t = NULL;
    if (posix_memalign((void **)&t, SUMS_SECTOR, hi - lo))
        return -ENOMEM;
    int rc = store_pread(vf, lo, t, hi - lo);
    for (uint64_t a = lo, doff, b; rc == 0 && a < hi; a += SUMS_SECTOR) {
        int d = store_disk_of(vf, a, &doff);
        if (!vf->sums[d] || sums_verify(vf->sums[d], doff, t + (a - lo), SUMS_SECTOR, &b) == 0)
            continue;
        if ((rc = scrub_confirm_bad(vf, a, t + (a - lo))) > 0) {
            atomic_fetch_add(&sums_ctr.bad, 1);
            *bad = a;
            rc = -EILSEQ;
        }
    }
    if (rc == 0)
        memcpy(buf, t + (off - lo), len);
    free(t);
    return rc;
}

struct lay { struct ofile *ov; uint8_t *buf; uint64_t base; uint64_t *bad; int rc; };

/* overlay bytes [lo, hi) over the buffer (which holds overlay offset base),
 * checked as the in-place ones are */
static int lay_one(void *arg, uint64_t lo, uint64_t hi)
{
    struct lay *l = arg;
    return l->rc = read_checked(l->ov, lo, l->buf + (lo - l->base), (uint32_t)(hi - lo), l->bad);
}

/* DDIO_EV_MERGED: the data in place with this server's own units' overlay
 * bytes laid over (eparity_merge's, for a decode that a fold's parity,
 * written from the merged data, must match) */
static int read_merged(struct ofile *of, struct ofile *ov, uint64_t off, uint8_t *buf,
                       uint32_t len, uint64_t *bad)
{
    const uint64_t U = of->layout.stripe_unit;
    const uint64_t N = of->layout.ec.k + of->layout.ec.m;
    int rc = read_checked(of, off, buf, len, bad);
    for (uint64_t o = off, e; rc == 0 && o < off + len; o = e) {
        e = (o / U + 1) * U < off + len ? (o / U + 1) * U : off + len;
        uint64_t ob = (o / U) * N * U + o % U;       /* its own unit: c = 0 */
        struct lay l = {ov, buf + (o - off), ob, bad, 0};
        ovl_each(ov->ovl, ob, ob + (e - o), lay_one, &l);
        rc = l.rc;
    }
    return rc;
}

static int refuse(struct work *w, int err, const char *what)
{
    work_answering(w);
    return conn_send_err(w->c, w->h.type | DDIO_REPLY, w->h.req, err, "ecread of %s: %s",
                         w->of->path, what);
}

static void ecread_run(struct work *w)
{
    const struct ddio_ecread *m = &w->u.er;
    struct ofile *of = w->of, *ov = of->copy[STORE_OVERLAY];
    struct ofile *vf = m->view == DDIO_EV_DATA || m->view == DDIO_EV_MERGED ? of
                       : of->copy[m->view == DDIO_EV_PARITY ? STORE_PARITY : STORE_OVERLAY];
    if (!of->layout.ec.k || !vf || !ov || !ov->ovl) {
        refuse(w, EINVAL, "not an erasure-coded file");
        return;
    }
    const int extents = m->view == DDIO_EV_EXTENTS || m->view == DDIO_EV_FOLDING;
    struct ddio_ecread_r r = {.logical_size = ovl_size(ov->ovl), .data_len = extents ? 0 : m->len};
    if (m->view == DDIO_EV_PARITY) {   /* the group's fold state (the range is in one unit) */
        uint64_t g = ddio_ec_parity_group(&of->layout.ec, of->layout.server_index,
                                          m->off / of->layout.stripe_unit);
        int ps = ovl_pstate(ov->ovl, g);
        if (ps == OVL_PS_WRITING) {
            refuse(w, EBUSY, "a fold is writing this parity");
            return;
        }
        r.pstate = ps == OVL_PS_NEW ? DDIO_PS_MERGED : DDIO_PS_INPLACE;
    }
    struct exts x = {calloc(2 * DDIO_ECREAD_MAX_EXT, sizeof(uint64_t)), 0, UINT64_MAX};
    uint8_t *buf = extents ? NULL : malloc(m->len);
    uint64_t bad = 0;
    int rc = (buf || extents) && x.v ? 0 : -ENOMEM;
    if (rc == 0 && m->view == DDIO_EV_MERGED)
        rc = read_merged(of, ov, m->off, buf, m->len, &bad);
    else if (rc == 0 && !extents)
        rc = read_checked(vf, m->off, buf, m->len, &bad);
    if (rc == 0 && extents) {
        if (m->view == DDIO_EV_FOLDING)
            ovl_pstate_each(ov->ovl, m->off, m->off + m->len, take_ext, &x);
        else
            ovl_each(ov->ovl, m->off, m->off + m->len, take_ext, &x);
        r.next = x.n;
        r.ext = x.v;
    } else if (rc == 0 && m->view == DDIO_EV_OVERLAY) {
        ovl_each(ov->ovl, m->off, m->off + m->len, take_ext, &x);
        if (x.stop != UINT64_MAX)
            r.data_len = (uint32_t)(x.stop - m->off);
        r.next = x.n;
        r.ext = x.v;
    }
    if (rc == -EILSEQ) {
        DDIO_ERR("data integrity: %s (%s view): sector at local offset %llu disagrees with "
                 "its checksum (a decode's read)", of->path, m->view == DDIO_EV_DATA ? "data"
                 : m->view == DDIO_EV_PARITY ? "parity" : m->view == DDIO_EV_MERGED
                 ? "merged data" : "overlay", (unsigned long long)bad);
        char why[160];
        snprintf(why, sizeof(why), "sector at local offset %llu disagrees with its checksum",
                 (unsigned long long)bad);
        refuse(w, EILSEQ, why);
    } else if (rc) {
        refuse(w, -rc, ddio_errno_name(-rc));
    } else {
        r.data = buf;
        struct ddio_wbuf wb;
        ddio_wbuf_init(&wb);
        ddio_enc_ecread_r(&wb, &r);
        work_answering(w);
        reply_w(w->c, &w->h, &wb);
    }
    free(buf);
    free(x.v);
}

void do_ecread(struct work *w)
{
    ecread_run(w);
    work_let_go(w);
}
