/* A block's checksums in the engine: computed while the written data is in
 * the block buffer anyway, checked there as a read's data arrives from
 * disk (O_DIRECT or the page cache alike), so the cost is one CRC32C pass
 * over bytes already in the cache, never an extra read. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "engine_sums.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddio_log.h"
#include "engine_slots.h"
#include "sums.h"

/* the sums of block s's datafile and the block's datafile offset, or NULL */
static struct sums *sums_of(const struct slot *s, int *d, uint64_t *doff)
{
    *d = store_disk_of(s->of, s->a, doff);
    return s->of->sums ? s->of->sums[*d] : NULL;
}

int esums_begin(struct xfer *x, struct slot *s)
{
    int d;
    uint64_t doff;
    struct sums *su = sums_of(s, &d, &doff);
    int rc = su ? sums_begin_write(su) : 0;
    if (rc)
        FAIL(x, -rc, "checksums of %s on disk %d: %s", s->of->path, d, ddio_errno_name(-rc));
    s->sums_begun = rc == 0 ? su : NULL;
    return rc;
}

/* bytes [lo, hi) of the block at datafile offset doff written from buf:
 * whole sectors summed, the partial ones at either end STALE */
static void written_range(struct sums *su, uint64_t doff, const uint8_t *buf, uint64_t lo,
                          uint64_t hi)
{
    uint64_t in_lo = (lo + SUMS_SECTOR - 1) & ~(uint64_t)(SUMS_SECTOR - 1);
    uint64_t in_hi = hi & ~(uint64_t)(SUMS_SECTOR - 1);
    if (in_hi <= in_lo) {
        sums_stale(su, doff + lo, doff + hi);
        return;
    }
    sums_set(su, doff + in_lo, buf + in_lo, in_hi - in_lo);
    sums_stale(su, doff + lo, doff + in_lo);
    sums_stale(su, doff + in_hi, doff + hi);
}

void esums_written(struct xfer *x, struct slot *s)
{
    int d;
    uint64_t doff;
    struct sums *su = sums_of(s, &d, &doff);
    if (!su || s->dr.res < 0)
        return;
    const uint8_t *buf = s->buf;
    if (s->exact == EXACT_RUNS) {
        for (size_t i = 0; i < s->nruns; i++)
            written_range(su, doff, buf, s->runs[i].lo, s->runs[i].hi);
    } else if (s->exact) {
        written_range(su, doff, buf, s->write_lo, s->write_hi);
    } else {                      /* whole sectors in the buffer (read-modify-write
                                   * or zeros around the bytes written) */
        uint64_t hi = sector_end(x, s->write_hi);
        sums_set(su, doff + s->io_lo, buf + s->io_lo, hi - s->io_lo);
    }
}

void esums_unsure(struct xfer *x, struct slot *s)
{
    int d;
    uint64_t doff;
    struct sums *su = sums_of(s, &d, &doff);
    if (!su || !s->dr.write)
        return;
    uint64_t hi = sector_end(x, s->write_hi);
    if (s->io_lo + s->dr.len > hi)
        hi = s->io_lo + s->dr.len;
    sums_stale(su, doff + s->io_lo, doff + hi);
}

/* The sector at datafile offset off disagreed with its sum. A write of the
 * block may have landed between our read and its sums' update (reads take
 * no block lock): read it again under the lock, which a write holds until
 * its sums are in. 1: still bad; 0: it agrees now (its bytes copied into
 * dst, the newer data); -errno: could not tell (counted bad). */
static int confirm(struct xfer *x, struct slot *s, struct sums *su, int d, uint64_t off,
                   uint8_t *dst)
{
    int locked = 0, rc = 1;
    if (!s->locked) {
        if (slot_lock_block(x, s->of, s->k, 1, deadline_of(x)))
            return -ETIMEDOUT;
        locked = 1;
    }
    void *tmp;
    if (posix_memalign(&tmp, SUMS_SECTOR, SUMS_SECTOR)) {
        rc = -ENOMEM;
    } else {
        ssize_t got = pread(s->of->fds[d], tmp, SUMS_SECTOR, (off_t)off);
        uint64_t bad;
        if (got < 0) {
            rc = -errno;
        } else {
            memset((uint8_t *)tmp + got, 0, SUMS_SECTOR - (size_t)got);
            if (sums_verify(su, off, tmp, SUMS_SECTOR, &bad) == 0) {
                memcpy(dst, tmp, SUMS_SECTOR);
                rc = 0;
            }
        }
        free(tmp);
    }
    if (locked)
        store_blk_unlock(s->of, s->k);
    return rc;
}

static void integrity_error(struct xfer *x, struct slot *s, int d, uint64_t doff, uint64_t bad)
{
    uint64_t local = s->a + (bad - doff);
    uint64_t logical = ddio_layout_logical(&x->S, s->me, local);
    atomic_fetch_add(&sums_ctr.bad, 1);
    ddio_log(DDIO_LOG_ERROR, "data integrity: %s: sector at offset %" PRIu64 " (datafile "
             "offset %" PRIu64 " on disk %d) disagrees with its checksum", s->of->path,
             logical, bad, d);
    FAIL(x, EILSEQ, "data integrity error: %s at offset %" PRIu64 " (disk %d, datafile "
         "offset %" PRIu64 "): the data read from disk disagrees with its checksum",
         x->of->path, logical, d, bad);
}

/* sectors [lo, hi) of the block (sector-aligned, in the buffer) checked;
 * 0 or -EILSEQ with x failed */
static int check_range(struct xfer *x, struct slot *s, struct sums *su, int d, uint64_t doff,
                       uint64_t lo, uint64_t hi)
{
    uint8_t *buf = (uint8_t *)s->buf + lo;
    uint64_t off = doff + lo, n = hi > lo ? hi - lo : 0, bad;
    while (n > 0) {
        if (sums_verify(su, off, buf, n, &bad) == 0)
            return 0;
        uint64_t skip = bad - off;
        if (confirm(x, s, su, d, bad, buf + skip) != 0) {
            integrity_error(x, s, d, doff, bad);
            return -EILSEQ;
        }
        skip += SUMS_SECTOR;      /* the rest after the sector that is right now */
        buf += skip;
        off += skip;
        n -= skip;
    }
    return 0;
}

int esums_check(struct xfer *x, struct slot *s)
{
    int d;
    uint64_t doff;
    struct sums *su = sums_of(s, &d, &doff);
    if (!su || s->dr.res < 0 || s->dr.done == 0)
        return 0;
    uint64_t lo = s->io_lo, hi = s->io_lo + round4k(s->dr.done);
    memset((uint8_t *)s->buf + lo + s->dr.done, 0, hi - lo - s->dr.done);   /* past the end */
    if (s->state != S_RMW || !s->contig)
        return check_range(x, s, su, d, doff, lo, hi);
    /* a read-modify-write of one range: the sectors the write covers whole
     * are replaced, their old bytes matter to nobody (a write over a bad
     * sector is how its owner mends it); only the two at its ends are kept */
    uint64_t in_lo = round4k(s->write_lo), in_hi = s->write_hi & ~(uint64_t)4095;
    if (in_hi <= in_lo)
        return check_range(x, s, su, d, doff, lo, hi);
    int rc = check_range(x, s, su, d, doff, lo, in_lo < hi ? in_lo : hi);
    return rc ? rc : check_range(x, s, su, d, doff, in_hi > lo ? in_hi : lo, hi);
}
