/* SCRUB and REPAIR: see scrub.h. A scrub reads with pread outside the
 * engine (one piece of at most a block at a time, so one disk), checks each
 * sector against its sum, and confirms a bad one under its block lock
 * (a write holds it until its sums are in, as the engine's reads confirm).
 * A repair writes a sector only while holding that lock and only if the
 * bytes on disk still disagree with the sum and the offered bytes agree
 * with it: a write that landed meanwhile changed both data and sum, so the
 * sector reads right, and a repair never puts older bytes over newer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "scrub.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "reply.h"
#include "server.h"
#include "sums.h"
#include "workers.h"

#define SCRUB_PIECE (1u << 20)          /* bytes read at once */
#define SCRUB_LOCK_MS 60000             /* the longest wait for a block lock */

_Static_assert(DDIO_SCRUB_PARITY == STORE_PARITY && DDIO_SCRUB_OVERLAY == STORE_OVERLAY,
               "SCRUB's views are the store's slots");

/* the view `copy` of of this server holds, or NULL */
static struct ofile *view_of(struct ofile *of, uint32_t copy)
{
    if (copy == 0)
        return of;
    return copy < DDIO_SCRUB_VIEWS ? of->copy[copy] : NULL;
}

/* the file's logical offset of the view's local offset a (for the log;
 * a parity sector's: its group's first byte's) */
static uint64_t logical_of(const struct ofile *of, uint32_t copy, uint64_t a)
{
    struct ddio_stripe L = {.unit = of->layout.stripe_unit, .count = of->layout.stripe_count};
    const struct ddio_ec *E = &of->layout.ec;
    uint32_t me = of->layout.server_index;
    if (copy == DDIO_SCRUB_OVERLAY)
        return ddio_ec_ovl_logical(E, L.unit, me, a);
    if (copy == DDIO_SCRUB_PARITY) {
        uint64_t g = ddio_ec_parity_group(E, me, a / L.unit);
        return g == UINT64_MAX ? g : g * E->k * L.unit + a % L.unit;
    }
    uint32_t p = ddio_copy_of(L.count, me, copy);
    return ddio_layout_logical(&L, p, a);
}

static int rw_fd(const struct ofile *vf, int d)
{
    return vf->bfds && vf->bfds[d] >= 0 ? vf->bfds[d] : vf->fds[d];
}

/* the sector at local a of vf read from disk into buf (4 KiB aligned,
 * zeros past the end): its bytes, or -errno */
static ssize_t read_sector(struct ofile *vf, uint64_t a, void *buf)
{
    uint64_t doff;
    int d = store_disk_of(vf, a, &doff);
    ssize_t got = pread(vf->fds[d], buf, SUMS_SECTOR, (off_t)doff);
    if (got < 0)
        return -errno;
    memset((uint8_t *)buf + got, 0, SUMS_SECTOR - (size_t)got);
    return got;
}

/* ---- SCRUB ---------------------------------------------------------------------------- */

struct scan {
    struct ofile *of, *vf;       /* the handle's file, the view scanned */
    uint32_t copy;
    const char *srv;             /* the server's name, for the log */
    struct ddio_scrub_r r;
    uint64_t bad[DDIO_SCRUB_MAX_BAD];
};

int scrub_confirm_bad(struct ofile *vf, uint64_t a, uint8_t *sec)
{
    uint64_t k = a / vf->block_size, doff, bad;
    if (store_blk_lock(vf, k, 1, ddio_now_ms() + SCRUB_LOCK_MS))
        return -ETIMEDOUT;
    int d = store_disk_of(vf, a, &doff);
    ssize_t got = read_sector(vf, a, sec);
    int rc = got < 0 ? (int)got : sums_verify(vf->sums[d], doff, sec, SUMS_SECTOR, &bad) ? 1 : 0;
    store_blk_unlock(vf, k);
    return rc;
}

/* sectors of buf (local a, n bytes, whole sectors) checked; 0 or -errno */
static int check_piece(struct scan *sc, uint64_t a, uint8_t *buf, uint64_t n)
{
    for (uint64_t o = 0; o < n; o += SUMS_SECTOR) {
        uint64_t doff, bad;
        int d = store_disk_of(sc->vf, a + o, &doff);
        struct sums *su = sc->vf->sums[d];
        enum sum_state st = sums_state(su, doff / SUMS_SECTOR, NULL);
        if (st != SUM_OK && st != SUM_SUSPECT) {
            sc->r.unknown++;
            atomic_fetch_add(&sums_ctr.unknown, 1);
            continue;
        }
        if (sums_verify(su, doff, buf + o, SUMS_SECTOR, &bad) == 0) {
            sc->r.verified++;
            continue;
        }
        int rc = scrub_confirm_bad(sc->vf, a + o, buf + o);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            sc->r.verified++;
            continue;
        }
        atomic_fetch_add(&sums_ctr.bad, 1);
        DDIO_ERR("data integrity: %s (copy %u): sector at offset %" PRIu64 " (local %" PRIu64
                 ") on server %s disagrees with its checksum (scrub)", sc->of->path, sc->copy,
                 logical_of(sc->of, sc->copy, a + o), a + o, sc->srv);
        sc->bad[sc->r.nbad++] = a + o;
        if (sc->r.nbad == DDIO_SCRUB_MAX_BAD) {
            sc->r.next = a + o + SUMS_SECTOR;
            return 1;
        }
    }
    return 0;
}

/* the scan of [off, end) into sc (data: the bytes, or NULL); 0 or -errno */
static int scan(struct scan *sc, uint64_t off, uint64_t end, uint8_t *buf, uint8_t *data)
{
    uint64_t B = sc->vf->block_size;
    for (uint64_t a = off; a < end;) {
        uint64_t n = end - a, bend = (a / B + 1) * B, doff;
        if (n > SCRUB_PIECE)
            n = SCRUB_PIECE;
        if (n > bend - a)
            n = bend - a;
        int d = store_disk_of(sc->vf, a, &doff);
        ssize_t got = pread(sc->vf->fds[d], buf, n, (off_t)doff);
        if (got < 0)
            return -errno;
        memset(buf + got, 0, n - (uint64_t)got);
        sc->r.next = a + n;
        int rc = check_piece(sc, a, buf, n);
        if (data)
            memcpy(data + (a - off), buf, n);
        if (rc)
            return rc < 0 ? rc : 0;
        a += n;
    }
    return 0;
}

static int scrub_refuse(struct work *w, uint32_t copy, int err, const char *what)
{
    work_answering(w);
    return conn_send_err(w->c, w->h.type | DDIO_REPLY, w->h.req, err, "%s of %s (copy %u): %s",
                         w->h.type == DDIO_T_SCRUB ? "scrub" : "repair", w->of->path, copy,
                         what);
}

/* the view's sums, or NULL with the refusal sent */
static struct ofile *checked_view(struct work *w, uint32_t copy)
{
    struct ofile *vf = view_of(w->of, copy);
    if (!vf)
        scrub_refuse(w, copy, ENOENT, "this server holds no such copy");
    else if (!vf->sums)
        scrub_refuse(w, copy, EOPNOTSUPP, "no checksums are kept for it (--checksums)");
    return vf && vf->sums ? vf : NULL;
}

static void scrub_run(struct work *w, struct ofile *vf)
{
    const struct ddio_scrub *m = &w->u.sc;
    struct scan sc = {.of = w->of, .vf = vf, .copy = m->copy, .srv = w->c->srv->name};
    uint64_t size = store_size(vf);
    uint64_t end = (size + SUMS_SECTOR - 1) / SUMS_SECTOR * SUMS_SECTOR;
    uint64_t want = m->off + (m->len + SUMS_SECTOR - 1) / SUMS_SECTOR * SUMS_SECTOR;
    if (end > want)
        end = want;         /* whole sectors: the last one asked for included */
    sc.r.size = size;
    sc.r.next = m->off > end ? m->off : end;
    uint8_t *buf = NULL, *data = NULL;
    int rc = posix_memalign((void **)&buf, SUMS_SECTOR, SCRUB_PIECE) ? -ENOMEM : 0;
    if (rc == 0 && (m->flags & DDIO_SC_DATA) && end > m->off && !(data = malloc(end - m->off)))
        rc = -ENOMEM;
    if (rc == 0 && end > m->off)
        rc = scan(&sc, m->off, end, buf, data);
    if (rc) {
        scrub_refuse(w, m->copy, -rc, ddio_errno_name(-rc));
    } else {
        sc.r.bad = sc.bad;
        sc.r.data = data;
        sc.r.data_len = data ? (uint32_t)(sc.r.next - m->off) : 0;
        struct ddio_wbuf wb;
        ddio_wbuf_init(&wb);
        ddio_enc_scrub_r(&wb, &sc.r);
        work_answering(w);
        reply_w(w->c, &w->h, &wb);
    }
    free(buf);
    free(data);
}

void do_scrub(struct work *w)
{
    struct ofile *vf = checked_view(w, w->u.sc.copy);
    if (vf)
        scrub_run(w, vf);
    work_let_go(w);
}

/* ---- REPAIR --------------------------------------------------------------------------- */

enum mend { MEND_GOOD, MEND_DATA, MEND_SUM, MEND_REFUSED };

/* sector at local a of vf (block lock held, its bytes now in cur) against
 * the offered good bytes: what to do */
static enum mend judge(struct ofile *vf, uint64_t a, const uint8_t *cur, const uint8_t *good,
                       size_t n)
{
    uint64_t doff;
    uint32_t crc;
    int d = store_disk_of(vf, a, &doff);
    if (sums_state(vf->sums[d], doff / SUMS_SECTOR, &crc) != SUM_OK)
        return MEND_GOOD;        /* no sum to judge by: nothing is known bad */
    if (sums_crc(cur, n) == crc)
        return MEND_GOOD;
    if (sums_crc(good, n) == crc)
        return MEND_DATA;
    return memcmp(cur, good, n) == 0 ? MEND_SUM : MEND_REFUSED;
}

/* do what judge said; 0 or -errno */
static int mend(struct ofile *vf, uint64_t a, const uint8_t *good, size_t n, enum mend how)
{
    uint64_t doff;
    int d = store_disk_of(vf, a, &doff);
    int fd = rw_fd(vf, d), rc = 0;
    struct sums *su = vf->sums[d];
    if (how == MEND_DATA) {
        ssize_t wr = pwrite(fd, good, n, (off_t)doff);
        rc = wr < 0 ? -errno : (size_t)wr != n ? -EIO : 0;
        if (rc == 0 && fdatasync(fd))
            rc = -errno;
        return rc;
    }
    /* the bytes are the good copy's, their sum is not: the sum rewritten */
    rc = sums_begin_write(su);
    if (rc == 0) {
        sums_set(su, doff, good, n);
        sums_end_write(su);
        uint64_t gen = sums_gen(su);
        rc = fdatasync(fd) ? -errno : sums_flush_since(su, fd, gen);
    }
    return rc;
}

/* one sector of the repair; its outcome counted in r, 0 or -errno */
static int repair_one(struct work *w, struct ofile *vf, uint64_t a, const uint8_t *good,
                      uint8_t *cur, struct ddio_repair_r *r)
{
    uint64_t size = store_size(vf);
    if (a >= size) {
        r->refused++;            /* past this copy's end: not the same file */
        return 0;
    }
    size_t n = size - a < SUMS_SECTOR ? (size_t)(size - a) : SUMS_SECTOR;
    uint64_t k = a / vf->block_size;
    if (store_blk_lock(vf, k, 1, ddio_now_ms() + SCRUB_LOCK_MS))
        return -ETIMEDOUT;
    ssize_t got = read_sector(vf, a, cur);
    int rc = got < 0 ? (int)got : 0;
    enum mend how = rc ? MEND_REFUSED : judge(vf, a, cur, good, n);
    if (rc == 0 && (how == MEND_DATA || how == MEND_SUM))
        rc = mend(vf, a, good, n, how);
    store_blk_unlock(vf, k);
    uint64_t logical = logical_of(w->of, w->u.rp.copy, a);
    if (rc == 0 && (how == MEND_DATA || how == MEND_SUM)) {
        r->repaired++;
        atomic_fetch_add(&sums_ctr.repaired, 1);
        DDIO_WARN("checksums: repaired %s (copy %u) at offset %" PRIu64 " (local %" PRIu64
                  ") on server %s from a good copy%s", w->of->path, w->u.rp.copy, logical, a,
                  w->c->srv->name, how == MEND_SUM ? ": its checksum was the bad part" : "");
    } else if (rc == 0 && how == MEND_REFUSED) {
        r->refused++;
        DDIO_WARN("checksums: not repaired %s (copy %u) at offset %" PRIu64 " on server %s: "
                  "the offered bytes disagree with its checksum too", w->of->path,
                  w->u.rp.copy, logical, w->c->srv->name);
    } else if (rc == 0) {
        r->good++;
    }
    return rc;
}

void do_repair(struct work *w)
{
    const struct ddio_repair *m = &w->u.rp;
    struct ofile *vf = checked_view(w, m->copy);
    struct ddio_repair_r r = {0};
    uint8_t *cur = NULL;
    int rc = 0;
    if (vf && posix_memalign((void **)&cur, SUMS_SECTOR, SUMS_SECTOR))
        rc = -ENOMEM;
    for (uint32_t o = 0; vf && rc == 0 && o < m->data_len; o += SUMS_SECTOR)
        rc = repair_one(w, vf, m->off + o, m->data + o, cur, &r);
    if (vf && rc) {
        scrub_refuse(w, m->copy, -rc, ddio_errno_name(-rc));
    } else if (vf) {
        struct ddio_wbuf wb;
        ddio_wbuf_init(&wb);
        ddio_enc_repair_r(&wb, &r);
        work_answering(w);
        reply_w(w->c, &w->h, &wb);
    }
    free(cur);
    work_let_go(w);
}
