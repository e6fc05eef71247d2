/* End-to-end checksums of one datafile: a CRC32C (ISA-L crc32_iscsi) per
 * 4 KiB sector, kept in memory while the datafile is open and stored in a
 * sidecar, ROOT_d/.ddio/sums/DATAFILE (DATAFILE: the datafile's path under
 * its root, a mirror's `.ddio/copyC/PATH` included).
 *
 * A sector's sum covers its 4096 bytes, those past the datafile's end
 * counted as zeros. Its state:
 *   OK       the sum is the sector's: a read that disagrees found corruption
 *   UNKNOWN  no sum (never written with sums on, or cut by a crash)
 *   STALE    written in part by a write that did not hold the whole sector
 *            (byte-exact writes through the page cache): recomputed from
 *            the datafile at the next flush (sync, close)
 *   SUSPECT  loaded from a sidecar left DIRTY (the server died with the
 *            file open for writing): the data may be newer than the sum.
 *            A read that agrees makes it OK; one that disagrees makes it
 *            UNKNOWN (counted, never reported as corruption).
 *
 * The crash rule: the sidecar's header says DIRTY (made durable before the
 * first data write after it said CLEAN) or CLEAN (written only after the
 * sums, synced after the data, are durable, and while no write is between
 * its begin and its end: a write in flight keeps it DIRTY). Loaded CLEAN, every sum is
 * trusted; loaded DIRTY, every sum is SUSPECT. So a crash between a data
 * write and its sums' write never reports good data as corrupt.
 * A sidecar that did not exist when the datafile was opened is marked
 * DIRTY without the sync: until its first CLEAN a crash leaves no
 * sidecar, a DIRTY one or a torn one (ignored), never trusted sums.
 *
 * Thread-safe: every call takes the datafile's own mutex. */
#ifndef DDIO_SRV_SUMS_H
#define DDIO_SRV_SUMS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SUMS_SECTOR 4096u
#define SUMS_MAGIC 0x55534444u    /* "DDSU" */
#define SUMS_VERSION 1u
#define SUMS_HDR 64u              /* header bytes before the records */

enum sum_state { SUM_UNKNOWN = 0, SUM_OK = 1, SUM_STALE = 2, SUM_SUSPECT = 3 };
enum sums_hdr_state { SUMS_DIRTY = 1, SUMS_CLEAN = 2 };

/* the server's counters (STATS sums_*), since start */
struct sums_counters {
    atomic_uint_fast64_t verified;   /* sectors read from disk and found right */
    atomic_uint_fast64_t bad;        /* sectors whose data disagreed with its sum */
    atomic_uint_fast64_t repaired;   /* bad sectors rewritten from a good copy */
    atomic_uint_fast64_t unknown;    /* sectors read without a sum to check */
};
extern struct sums_counters sums_ctr;

struct sums;

/* The sums of datafile `rel` under rootfd, whose descriptor is datafd;
 * loaded from its sidecar if that exists and names this datafile (its
 * inode), else all UNKNOWN. fresh: a file being created (an old sidecar
 * is discarded). NULL only without memory. */
struct sums *sums_open(int rootfd, const char *rel, int datafd, int fresh);
/* 1 while the sidecar says DIRTY: data written since the sums were last
 * made durable with it */
int sums_dirty(struct sums *s);
/* sums_flush(s, fd, durable) unless gone (the file was deleted), then free;
 * durable only once the caller made the data durable */
void sums_close(struct sums *s, int datafd, int gone, int durable);

/* Before a data write: the sidecar says DIRTY, durably (once until the
 * next CLEAN), and stays so until the write ends. 0 or -errno; on 0 the
 * caller calls sums_end_write once its sums are in (or it failed). */
int sums_begin_write(struct sums *s);
void sums_end_write(struct sums *s);
/* how many writes have ended: taken before the caller's data sync, for
 * sums_flush_since */
uint64_t sums_gen(struct sums *s);
/* Sectors [off, off + len) (off sector-aligned) were written from buf,
 * which holds them whole (len rounded up to a sector, the tail zeros
 * past the end). */
void sums_set(struct sums *s, uint64_t off, const void *buf, uint64_t len);
/* Bytes [lo, hi) were written by someone who did not hold their sectors
 * whole: those sectors are STALE until the next flush. */
void sums_stale(struct sums *s, uint64_t lo, uint64_t hi);
/* The datafile was cut or grown to size: the sector it ends in is STALE,
 * the ones past it forgotten. */
void sums_truncate(struct sums *s, uint64_t size);
/* Sectors [off, off + len) were read from disk into buf (whole sectors,
 * zeros past the datafile's end), checked in order up to the first that
 * disagrees with its OK sum: 0, or -EILSEQ with *bad its offset. The
 * sectors checked are counted (verified, unknown); a bad one is the
 * caller's to count once it is sure (sums_ctr.bad). */
int sums_verify(struct sums *s, uint64_t off, const void *buf, uint64_t len, uint64_t *bad);
/* Recompute STALE sectors from datafd, write the changed sums; durable
 * (the caller made the data durable after every write that has ended):
 * fdatasync them, then mark the sidecar CLEAN, unless a write is still
 * in flight (it stays DIRTY). 0 or -errno. */
int sums_flush(struct sums *s, int datafd, int durable);
/* sums_flush, durable when no write ended since sums_gen said gen (taken
 * before the caller's data sync) */
int sums_flush_since(struct sums *s, int datafd, uint64_t gen);

/* tests: the state and sum of sector i (SUM_UNKNOWN past the end) */
enum sum_state sums_state(struct sums *s, uint64_t i, uint32_t *crc);
/* the CRC32C of one sector's bytes (the tail past n counted as zeros) */
uint32_t sums_crc(const void *buf, size_t n);

#endif
