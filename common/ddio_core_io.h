/* The client core's I/O layer (ddio_core.h), above the file handles
 * (ddio_core_file.h): what moves bytes, and what keeps a closed file's
 * handles. Calls run one way, from each file to the ones before it (and
 * down to the layers below):
 *
 *   ddio_core_local.c  I/O on same-host servers' datafiles, through
 *                      descriptors the servers hand over
 *   ddio_core_park.c   a closed file's handles kept for a moment
 *   ddio_core_xfer.c   one XFER to each involved server, served until DONE:
 *                      PUTs into the caller's buffer, GETs answered from it,
 *                      on TCP or UCX (docs/PROTOCOL.md "XFER"); a server
 *                      lost meanwhile reconnected and sent its XFER again
 *                      (PROTOCOL.md "Resending")
 *   ddio_core_io.c     what a read or write sends: the servers involved,
 *                      the same-host shortcut, ordered reads, the entry
 *                      points for a descriptor's bytes or a byte range
 *   ddio_core_cache.c  a file's client cache: write-behind of small writes,
 *                      read-ahead of small reads (MPI-IO's nonatomic rules)
 */
#ifndef DDIO_CORE_IO_H
#define DDIO_CORE_IO_H

#include "ddio_core_file.h"
#include "ddio_desc.h"

/* ---- ddio_core_local.c: I/O on same-host servers' datafiles ------------------ */

/* File bytes [off, off+len) into buf straight from the stripe servers'
 * datafiles, when every server needed runs on this host and handed its
 * descriptors over (LOCAL; asked once per server and file). only (NULL:
 * all) limits the servers read; raw: bytes past a server's size are left
 * alone and *bytes counts those found, else holes read as zeros and *bytes
 * is the bytes below the end of file. 1: done; 0: not done (read through
 * the servers: not local, off, a server that may have gone, a read error). */
/* A collective's plain-range part shorter than ddio_stream_min() (ddio_stream.h)
 * is read, and written, here too: the servers would move it through the
 * page cache as well; a longer one is their sorted O_DIRECT stream.
 * Same-host writers start their own writeback, so large parts stay fast
 * here too (docs/PERFORMANCE.md, collectives). */
int ddio_local_pread(struct ddio_fh *f, uint64_t off, void *buf, uint64_t len,
                     const char *only, int raw, uint64_t *bytes);
/* Buf into file bytes [off, off+len) straight into the datafiles of the
 * stripe servers the range touches (of those, only the ones `only` marks;
 * NULL: all), when each runs on this host and handed over writable
 * descriptors (a handle opened for writing, f->local_write): each server's
 * size page is raised first, then its bytes written. 1: done; 0: not done
 * (write through the servers, which redo any part done). */
int ddio_local_pwrite(struct ddio_fh *f, uint64_t off, const void *buf, uint64_t len,
                      const char *only);
/* close the descriptors of every stripe server (before f->srv goes) */
void ddio_local_release(struct ddio_fh *f);
/* LOCALSTAT to each live stripe server whose descriptors moved bytes since
 * the last report (kept across renewed descriptors), posted: at a close
 * (before the CLOSE, or before the handles are parked) and before a SYNC
 * (ddio_core_fh.c), so the server's counters see what this process read
 * and wrote in its datafiles itself. Counts a broken connection did not
 * take stay for the next report. */
void ddio_local_report(struct ddio_fh *f);
/* 1: L's first datafile is still where it was handed over: not deleted,
 * not renamed (so the path it was opened by still names the same file);
 * -1: it is not; 0: no descriptors (none handed over, another host) */
int ddio_local_same_file(const struct ddio_local *L);
/* A read-only open (f->local_read) asks for the read descriptors with its
 * OPEN (struct ddio_local_ask; ddio_fh_open passes these as its
 * ddio_open_hooks): begin (1: asked; the process's listener is held until
 * end), the fan-out, then end, which takes every handover queued and gives
 * each to the stripe server whose connection it came for (f->srv set by
 * then, or not: all are dropped). */
int ddio_local_ask_begin(struct ddio_fh *f, struct ddio_conn **conns, int n, uint32_t amode,
                         struct ddio_local_ask *a);
void ddio_local_ask_end(struct ddio_fh *f, struct ddio_conn **conns, struct ddio_local_ask *a);

/* ---- ddio_core_park.c: a closed file's handles kept for a moment ------------- */

/* DDIO_PARK_MS: -1 unset (parking off unless the hint asks: 1 s then),
 * 0 off, else how long (ms, at most 60000) */
int ddio_park_ms(void);
/* close: park f's handles (1: f->srv moved away) or not (0) */
int ddio_park_put(struct ddio_fh *f);
/* open: take this process's parked handles of path if they still name
 * the same file on conns[0..n) and allow amode (1: f->srv, nsrv, stripe
 * set); a stale one is closed */
int ddio_park_take(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                   uint32_t amode);
/* close this process's parked handles of path for real, now */
void ddio_park_drop(const char *path);
/* ---- ddio_core_xfer.c: transfers --------------------------------------------- */

/* Memory side of a transfer: contiguous at buf, or laid out by desc. */
struct ddio_mem {
    char *buf;
    int contig;
    struct ddio_desc desc;      /* !contig: memory type, addresses from buf */
    int ordered;                /* !contig, pieces that may share bytes
                                 * (ddio_desc_overlaps): a read is received
                                 * a window at a time (ddio_ordered_window),
                                 * each placed in stream order, so the last
                                 * piece's bytes stay */
};

/* One participant's XFER, independent or collective. */
struct ddio_xfer_req {
    struct ddio_fh *f;
    uint32_t op;                /* DDIO_X_READ / DDIO_X_WRITE */
    uint32_t flags;             /* DDIO_XF_* */
    uint64_t group, seq;        /* 0, 0 for independent I/O */
    uint32_t nparticipants, rank;
    const struct ddio_desc *fdesc;
    const struct ddio_mem *mem;
    int raw;                    /* reads: only what servers send is written (no
                                 * zeros for holes, no size lookup) */
    int exact;                  /* writes: to the servers involved only, not
                                 * also to those holding copies of their
                                 * units (a rebuild writes one server) */
    uint64_t bytes;             /* out: stream bytes transferred (reads: below
                                 * the end of file) */
    uint64_t *local_sizes;      /* out if not NULL (ddio_xfer_servers): each
                                 * server's local size as its DONE, or its
                                 * copy's, said it; UINT64_MAX: none came */
};
/* ddio_fh_size of the whole file, also with servers the open found out
 * (ddio_srv.out): their local sizes from servers holding their copies (a
 * copy's size is its primary's; ddio_core_io.c). 0, or -1 with e set */
int ddio_xfer_file_size(struct ddio_fh *f, uint64_t *size, struct ddio_err *e);
/* ddio_xfer_run by the servers alone: one XFER to each
 * stripe server involved, served until its DONE */
int ddio_xfer_servers(struct ddio_xfer_req *x, const char *involved, struct ddio_err *e);
/* [off, off + len) of f moved between buf and the servers in `only` alone
 * (exact: for a write, not also to those holding copies of those units),
 * or with only NULL, the servers the call touches (an erasure-coded
 * file's write: all); flags: the XFER's (DDIO_XF_*). 0, or -1 with e. */
int ddio_move(struct ddio_fh *f, uint32_t op, uint32_t flags, uint64_t off, char *buf,
              uint64_t len, const char *only, struct ddio_err *e);

/* ---- ddio_core_xec.c: an erasure-coded file's lost unit decoded --------------- */

/* The in-place bytes [lo, hi) (in-unit offsets) of logical unit u decoded
 * into out from K of its group's other units, read with ECREAD from the
 * servers not lost[] (and not u's own): on the connections locked (a
 * transfer's), or with NULL each by ddio_fh_call; overlay: its partial
 * writes, from a parity server's copy, laid over. *size: the largest
 * logical size the servers know. 0, or -1 with e set. */
/* An erasure-coded file's group g parity unit j, bytes [lo, hi) of it,
 * computed from K of the group's other units that read right (its data
 * in place): what a scrub mends a bad parity sector with. 0, or -1 with e. */
int ddio_ec_parity_bytes(struct ddio_fh *f, uint64_t g, uint32_t j, uint64_t lo, uint64_t hi,
                         uint8_t *out, struct ddio_err *e);
/* len bytes at overlay offset off of server q, as another holder of that
 * unit's partial writes (its own server, or a parity server of its group)
 * has them: what a scrub mends a bad overlay sector with. 0, or -1 with e. */
int ddio_ec_overlay_copy(struct ddio_fh *f, uint32_t q, uint64_t off, uint64_t len,
                         uint8_t *out, struct ddio_err *e);
int ddio_ec_decode_unit(struct ddio_fh *f, struct ddio_conn **locked, const char *lost,
                        uint64_t u, uint64_t lo, uint64_t hi, int overlay, uint8_t *out,
                        uint64_t *size, struct ddio_err *e);

/* ---- ddio_core_io.c: what a read or write sends ------------------------------ */

/* involved[i] != 0: send the XFER to stripe server i (NULL: all) */
int ddio_xfer_run(struct ddio_xfer_req *x, const char *involved, struct ddio_err *e);
/* the stripe servers holding any byte between d's first and last (malloc'd) */
char *ddio_xfer_involved(const struct ddio_fh *f, const struct ddio_desc *d);
/* one participant's XFER of d to the servers involved (independent I/O, and
 * a collective's plain ranges); *bytes as ddio_xfer_req's (0 on error) */
int ddio_xfer_one(struct ddio_fh *f, uint32_t op, uint32_t flags, const struct ddio_desc *d,
                  const struct ddio_mem *mem, uint64_t *bytes, struct ddio_err *e);
/* the same for file bytes [off, off+len) from / into contiguous buf */
int ddio_xfer_range(struct ddio_fh *f, uint32_t op, uint32_t flags, uint64_t off, void *buf,
                    uint64_t len, uint64_t *bytes, struct ddio_err *e);
/* the same as this rank's part of collective call (group, seq) of the file:
 * still one participant, but a failure cancels the call's XFERs of every
 * rank on the servers (CANCEL names the call). *local (if not NULL): 1 when
 * this process moved the bytes itself (same-host datafiles), the servers
 * doing nothing */
int ddio_xfer_range_of(struct ddio_fh *f, uint32_t op, uint32_t flags, uint64_t group,
                       uint64_t seq, uint64_t off, void *buf, uint64_t len, uint64_t *bytes,
                       int *local, struct ddio_err *e);

/* ---- ddio_core_cache.c: the client cache of an open file --------------------- */

/* wb_max, ra_max: bytes (0 turns that half off) */
void ddio_cache_init(struct ddio_cache *c, size_t wb_max, size_t ra_max);
/* A contiguous write of this process: buffered, or (large, or the cache
 * off) sent at once after the buffered bytes it overlaps. 0 or -1. */
int ddio_cache_pwrite(struct ddio_cache *c, struct ddio_fh *f, uint64_t off, const void *buf,
                      uint64_t len, struct ddio_err *e);
/* A contiguous read: from what was read ahead, or from the servers (after
 * the buffered writes it overlaps, or that move the end of file it met).
 * *got: bytes below the end of file. 0 or -1. */
int ddio_cache_pread(struct ddio_cache *c, struct ddio_fh *f, uint64_t off, void *buf,
                     uint64_t len, uint64_t *got, struct ddio_err *e);
/* send the buffered writes (one XFER per server); they are gone either way */
int ddio_cache_flush(struct ddio_cache *c, struct ddio_fh *f, struct ddio_err *e);
/* forget what was read ahead */
void ddio_cache_drop(struct ddio_cache *c);
/* this process wrote [off, off+len) by another path: read-ahead holding
 * those bytes goes (and buffered writes under it must have been flushed) */
void ddio_cache_written(struct ddio_cache *c, uint64_t off, uint64_t len);
void ddio_cache_free(struct ddio_cache *c);

/* ---- ddio_core_scrub.c: checksums checked, bad sectors mended --------------- */

/* when a paced job started (ms clock) and its byte count then */
struct ddio_pacer {
    int64_t t0;
    uint64_t base;
};
/* a pause that keeps the job at rate bytes a second since pc's start
 * (now_bytes: its count now; rate 0: no pause) */
void ddio_pace(const struct ddio_pacer *pc, uint64_t rate, uint64_t now_bytes);

/* What to scrub: every copy of stripe index `index` (-1: of every index),
 * local bytes [lo, hi) of it (hi 0: to its end), at most `rate` bytes a
 * second (0: no limit). */
struct ddio_scrub_opt {
    int index;
    uint64_t lo, hi;
    uint64_t rate;
    int data_only;          /* an erasure-coded file's data view alone */
};
/* SCRUB every view of f that o names on the server holding it; each bad
 * sector's bytes fetched from another copy that reads right and sent to
 * the bad one's server (REPAIR); what was found added to t. 0, or -1 with
 * e (a server could not be asked: t holds what was done until then). */
int ddio_scrub_fh(struct ddio_fh *f, const struct ddio_scrub_opt *o, struct ddio_scrub_tally *t,
                  struct ddio_err *e);
/* after a read of [first, end) of f that found bad[i] for stripe index i
 * (a data-integrity error) and was served from a copy: those indexes'
 * copies over the read's range scrubbed and mended (errors dropped: the
 * read had its bytes) */
void ddio_scrub_after_read(struct ddio_fh *f, const char *bad, uint64_t first, uint64_t end);

/* ---- ddio_core_rebuild.c: a file's bytes copied onto a replacement server ---- */


/* f's bytes read from its servers to the end of file (the units stripe
 * server k holds only; k's own part from a copy: k refuses reads of a file
 * it has not rebuilt) and written to k alone, which writes every view it
 * holds (its own units, the copies it keeps) in its sorted pass, with
 * their checksums; *copied: the file's bytes. rf (may be NULL): a second
 * handle of the file, on which the next chunk is read while one is
 * written. 0, or -1 with e. */
int ddio_rebuild_copy(struct ddio_fh *f, struct ddio_fh *rf, uint32_t k,
                      const struct ddio_rebuild_opt *o, uint64_t *copied, struct ddio_err *e);
/* An erasure-coded file's bytes read through rf in whole groups (with
 * stripe server k out there: its units decoded; k >= nsrv: none out) and
 * written back through f to every server, parity and all, then synced: a
 * server resynced, rebuilt or a file settled after a failed write. 0, or
 * -1 with e. */
int ddio_ec_rewrite(struct ddio_fh *f, struct ddio_fh *rf, uint32_t k,
                    const struct ddio_rebuild_opt *o, uint64_t *copied, struct ddio_err *e);
/* MPI_File_set_size: every server's local size set for the logical size
 * `size` (ddio_fh_set_local_sizes); an erasure-coded file cut mid-group
 * has that group written whole first (its bytes below the end, zeros
 * past it), so its parity stays its data's. 0, or -1 with e. */
int ddio_fh_resize(struct ddio_fh *f, uint64_t size, struct ddio_err *e);

/* ---- ddio_core_fold.c: an erasure-coded file's partial groups folded ---- */

/* Every whole group below the end of file with partial writes in the
 * overlays folded into parity (DESIGN.md 6.4 "The fold"), a batch at a
 * time: FOLD (the parity marked being written), the merged bytes read and
 * written as the parity alone (DDIO_XF_FOLD_PARITY), synced, then as the
 * data in place alone (DDIO_XF_FOLD_DATA), synced, then FOLDED. The
 * caller holds the file's fence on every server. *groups, *bytes: what
 * was folded. 0, or -1 with e (the fold can be run again: every step
 * redoes). */
int ddio_ec_fold(struct ddio_fh *f, uint64_t *groups, uint64_t *bytes, struct ddio_err *e);
#endif
