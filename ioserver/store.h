/* Storage: roots ("disks"), path confinement, datafiles, stored layout
 * records, the persistent server id, and the table of open files.
 *
 * A file `path` is stored as ROOT_d/path on every disk d (the server's local
 * byte space striped over its disks in blocks of B: local block k on disk
 * k % D at offset (k / D) * B) and its layout in ROOT_1/path's extended
 * attribute STORE_LAYOUT_XATTR, or as a record ROOT_1/.ddio/meta/path
 * (store_layout.h says which). Open files are shared by path (refcounted). */
#ifndef DDIO_SRV_STORE_H
#define DDIO_SRV_STORE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "ddio_layout.h"
#include "ddio_proto.h"
#include "ddio_wb.h"
#include "locks.h"
#include "store_list.h"

#define STORE_META_MAGIC   0x4D4C4444u   /* "DDLM" */
#define STORE_META_VERSION 3u   /* 2: the creator's ids after the layout
                                  * (1, still read: none); 3: the layout's
                                  * copies (1 and 2, still read: one) */

/* the extended attribute of a file's first datafile that holds its layout
 * (compact, naming its server list: store_layout.c) */
#define STORE_LAYOUT_XATTR "user.ddio.layout"

/* who created a file: the create's DDIO_O_ONCE ids (client 0: not known) */
struct store_creator { uint64_t client, call; };

/* Besides its own datafiles a file may have, on this server, the mirrors
 * of other indexes (slots 1..DDIO_MAX_COPIES-1), an ec:K+M file's parity
 * (slot STORE_PARITY) and its overlay (STORE_OVERLAY: partial groups'
 * writes, overlay.h): each a datafile set of its own under .ddio. */
#define STORE_PARITY DDIO_MAX_COPIES
#define STORE_OVERLAY (DDIO_MAX_COPIES + 1)
#define STORE_VIEWS (DDIO_MAX_COPIES + 2)

/* a file kept redundantly (mirrored or erasure coded) */
static inline int layout_redundant(const struct ddio_layout_rec *l)
{
    return l->copies > 1 || l->ec.k > 0;
}

struct ofile {
    char *path;                  /* normalized relative path */
    int refs;                    /* under store.mu */
    int answered;                /* under store.mu: of refs, passes that have
                                  * answered their call and not let go yet
                                  * (store_answered) */
    int deleted;                 /* unlinked while open: not found by path */
    int opening;                 /* under store.mu: its opener is still at the
                                  * file system (store_open), others wait */
    int ndisks;
    int *fds;                    /* one datafile per disk */
    int *bfds;                   /* the same files without O_DIRECT (-1: none) */
    struct ddio_wb *dirty;       /* per disk: page-cache writes not yet pushed
                                  * to writeback (under mu) */
    uint64_t block_size;
    struct ddio_stripe disks;    /* {block_size, ndisks}: local -> disk math */
    struct ddio_layout_rec layout;
    struct store_creator creator;   /* stored with the layout */
    pthread_mutex_t mu;          /* size, block locks */
    pthread_cond_t blk_cv;       /* CLOCK_MONOTONIC */
    uint64_t size;               /* local size (bytes of local space) */
    int sizefd;                  /* memfd whose first 8 bytes mirror size, for
                                  * same-host readers (-1: none yet) */
    uint64_t *sizemap;           /* its mapping (under mu); with local
                                  * writers also raised by them (atomics) */
    int local_writers;           /* a same-host client was given writable
                                  * descriptors (atomic; never reset while
                                  * open): partly covered blocks are written
                                  * byte-exact, never read-modify-written,
                                  * and the datafiles are never trimmed */
    uint64_t *blk;               /* local blocks locked for read-modify-write */
    unsigned nblk, capblk;
    unsigned maps;               /* mappings of its datafiles held (under mu):
                                  * store_map_hold */
    struct fmap **fmaps;         /* per disk: its datafile's read mappings,
                                  * newest first (under mu; store_fmap.c) */
    struct lk_mgr locks;         /* byte-range locks (LOCK requests) */
    int doubt_writers;           /* handles that changed it, open (indoubt.c) */
    int doubt_keep;              /* in doubt until settled: a writer went
                                  * without a clean close, a write failed, or
                                  * it was in doubt before */
    struct ofile *copy[STORE_VIEWS];   /* copy[c], 1 <= c < DDIO_MAX_COPIES:
                                  * the mirror of index (me - c) mod N this
                                  * server holds; copy[STORE_PARITY]: an
                                  * ec:K+M file's parity units held here,
                                  * copy[STORE_OVERLAY] its overlay; NULL
                                  * where the file has none */
    struct ovl *ovl;             /* an overlay view's extents (overlay.h) */
    struct sums **sums;          /* per disk: its datafile's checksums (sums.h);
                                  * NULL with --checksums off */
    struct meta_job *meta;       /* under store.meta.mu: created (by this
                                  * process), its layout record and directory
                                  * entries not known durable yet: the job
                                  * (store_meta.c) store_sync does, or waits
                                  * for if the lazy thread is doing it */
    struct ofile *next;
};

/* store_meta.c: created files' layout records made durable (at their sync,
 * or by a thread a moment after the create if none comes) */
#define META_INDEX 4096             /* buckets of the queued jobs' paths */
struct store_meta {
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* the thread's: stop, tests' hold */
    pthread_cond_t settled;      /* a job done or failed (for `waiting`) */
    int waiting;                 /* syncs waiting for the thread's job */
    struct meta_job *q, *qtail;  /* pending and running jobs, oldest first */
    struct meta_job *index[META_INDEX];   /* the same by path (store_meta.c) */
    uint64_t seq;                /* jobs queued */
    int stop;
    int hold;                    /* tests: the thread takes no job */
    int started;
    pthread_t th;
};

struct store {
    int ndisks;
    const char **roots;
    int *rootfd;                 /* O_PATH|O_DIRECTORY fds of the roots */
    int *direct;                 /* 1: root accepts O_DIRECT */
    int metafd;                  /* ROOT_1/.ddio/meta */
    int layout_xattr;            /* 1: a create keeps the layout in its first
                                  * datafile, 0: in a record (store_layout.h) */
    int tmpfd;                   /* ROOT_1/.ddio/tmp (atomic writes) */
    int setsfd;                  /* ROOT_1/.ddio/sets (store_layout.c) */
    pthread_mutex_t sets_mu;
    struct store_set *sets;      /* server sets read or written, a few */
    unsigned nsets;
    uint64_t block_size;
    int checksums;               /* --checksums: SUMS_ON, _OFF, _MIRRORED */
    uint32_t copies;             /* --redundancy: a create without a mode gets it */
    uint8_t id[DDIO_ID_LEN];
    pthread_mutex_t mu;          /* open table, create/delete */
    pthread_cond_t open_cv;      /* an open left the file system (opening) */
    int opening;                 /* opens at the file system outside mu */
    int ns_waiting;              /* namespace changes waiting for them */
    struct ofile *files;
    struct store_closing *closing;   /* paths whose last close is flushing */
    unsigned tmpseq;             /* atomic */
    struct store_meta meta;
    struct store_lists lists;    /* READDIR's listings between pages */
};

/* Open roots, load or create the server id, detect O_DIRECT per root.
 * 0, or -errno with a message in err. */
int store_init(struct store *st, const struct srv_config *cfg, char *err, size_t errlen);
void store_fini(struct store *st);
/* the path of the server's state file `name` (ROOT_1/.ddio/NAME) into out */
void store_state_path(const struct store *st, const char *name, char *out, size_t n);

/* Normalize a client path into out: strip leading '/', refuse empty paths,
 * empty / "." / ".." components and the reserved ".ddio" top directory.
 * 0, -EACCES (escape attempt) or -ENAMETOOLONG / -EINVAL. */
int store_norm_path(const char *path, char *out, size_t outlen);
/* store_norm_path for a namespace request: "" or "/" is the root (out "");
 * a refusal explained in msg */
int store_norm_ns(const char *path, char *out, size_t outlen, char *msg, size_t msglen);

/* OPEN: see PROTOCOL.md. cr: a create's ids (DDIO_O_ONCE; NULL: none),
 * stored with the file; a create (CREAT|EXCL) that finds a file made with
 * the same ids is its own resend: opened, *created = 1, not EEXIST. On
 * success *of holds a reference. msg gets the cause on failure (without
 * the server prefix). */
int store_open(struct store *st, const char *path, uint32_t amode,
               const struct ddio_layout_rec *proposed, const struct store_creator *cr,
               struct ofile **of, int *created, char *msg, size_t msglen);
/* take another reference (an XFER in flight keeps the file open) */
void store_retain(struct store *st, struct ofile *of);
/* 1: the normalized path is open here (by anyone). Holders that are
 * only passes which have answered their call (their client may have closed
 * since) are waited for, up to wait_ms: they end in their last sends' sync
 * or a writeback start */
int store_is_open(struct store *st, const char *norm, int wait_ms);
/* a pass holding of answered its call; it lets go with
 * store_release_pass(.., 1) */
void store_answered(struct store *st, struct ofile *of);
/* norm's open file, retained (the caller releases it), or NULL */
struct ofile *store_find_open(struct store *st, const char *norm);
void store_release(struct store *st, struct ofile *of);
/* store_release of a pass's reference; answered: it called store_answered */
void store_release_pass(struct store *st, struct ofile *of, int answered);
int store_delete(struct store *st, const char *path, char *msg, size_t msglen);

/* Namespace (store_ns.c; PROTOCOL.md "Namespace"): "" or "/" is the root
 * for pstat and readdir. A file is a path with a layout record; a directory
 * is a directory on disk 0 (mkdir/rmdir/rename apply to every disk). 0 or
 * -errno with the cause in msg. readdir: the entries sorting after
 * `after` ("" for the first page), r->ent malloc'd (ddio_readdir_r_free). */
int store_pstat(struct store *st, const char *path, struct ddio_pstat_r *r,
                char *msg, size_t msglen);
int store_readdir(struct store *st, const char *path, const char *after, uint32_t max,
                  struct ddio_readdir_r *r, char *msg, size_t msglen);
int store_mkdir(struct store *st, const char *path, uint32_t mode, char *msg, size_t msglen);
int store_rmdir(struct store *st, const char *path, char *msg, size_t msglen);
int store_rename(struct store *st, const char *from, const char *to, char *msg, size_t msglen);

uint64_t store_size(struct ofile *of);
int store_setsize(struct ofile *of, uint64_t local_size);
/* A descriptor of a page whose first 8 bytes are the local size, kept
 * current (same-host clients map it: local.c), and descriptors of the
 * datafiles (fds[0..ndisks)), buffered: read-only, or with *write set
 * read-write (the page too: a same-host writer raises the size itself, and
 * of->local_writers is set; *write is cleared when no block went unlocked
 * for a moment to set it). 0 or -errno; the caller closes what it got. */
int store_local_fds(struct ofile *of, int *write, int *sizefd, int *fds);
int store_prealloc(struct ofile *of, uint64_t off, uint64_t len);

/* A mirrored file's copies on this server (store_copy.c; DESIGN.md 6.1):
 * each copy's local size set from the file's logical size (grow: never
 * shrink), or allocated for [0, logical) of it. 0 or -errno. */
int store_copies_setsize(struct ofile *of, uint64_t logical, int grow);
int store_copies_prealloc(struct ofile *of, uint64_t logical);
/* An erasure-coded file's parity and overlay on this server emptied, the
 * overlay's extents dropped (a resync or rebuild writes them whole again,
 * DESIGN.md 6.4). 0 or -errno. */
int store_ec_empty(struct ofile *of);
/* An erasure-coded file cut to logical size `logical` on this server: its
 * parity datafile to the groups left, its overlay's extents past the end
 * dropped, the size it notes lowered (the cut group itself was written
 * whole first, with zeros past the end, by the client). 0 or -errno. */
int store_ec_cut(struct ofile *of, uint64_t logical);
/* MPI_File_sync: fdatasync of every datafile. Both descriptors of a
 * datafile (O_DIRECT and its buffered twin) name one inode, so one
 * fdatasync writes the pages dirtied through either. */
int store_sync(struct store *st, struct ofile *of);
/* 1 while a file created here has its layout record and directory entries
 * not known durable (store_meta.c) */
int store_meta_pending(struct store *st, struct ofile *of);
/* a datafile range whose writeback is due */
struct store_kick { int fd; uint64_t lo, hi; };
/* len bytes at datafile offset off of disk d were written through the
 * buffered twin: every DDIO_WB_KICK bytes (ddio_wb.h) their writeback is
 * due: 1 and *k, which store_kick starts (the caller may first answer its
 * call, while it holds the file open) */
int store_note_cached_write(struct ofile *of, int d, uint64_t off, uint64_t len,
                            struct store_kick *k);
/* sync_file_range SYNC_FILE_RANGE_WRITE: starts the writeback, waits for
 * nothing (a hint: if it fails, fdatasync at MPI_File_sync still writes) */
void store_kick(const struct store_kick *k);
/* A write of local bytes [.., end) was submitted: the size grows to end. */
/* the datafiles made at least local_size bytes long (holes), never
 * shorter: an erasure-coded file's partial write past its end, whose bytes
 * went to the overlay (DESIGN.md 6.4). 0 or -errno. */
int store_grow(struct ofile *of, uint64_t local_size);
void store_note_write(struct ofile *of, uint64_t end);
/* Cut each datafile back to its share of the local size (O_DIRECT writes
 * pad to 4 KiB); never below a submitted write, since those are in size.
 * Not with local writers: they write before the size they raised is seen
 * here, and with them no write pads (only whole blocks go O_DIRECT). */
int store_trim(struct ofile *of);
/* disk and in-datafile offset of local offset off */
/* local bytes [off, off + len) of of's datafiles into buf through the
 * page cache, a disk block at a time; zeros past their end. 0 or -errno */
int store_pread(struct ofile *of, uint64_t off, void *buf, size_t len);
int store_disk_of(const struct ofile *of, uint64_t off, uint64_t *disk_off);

/* Per-file block locks serializing read-modify-write of one local block.
 * wait = 0: -EAGAIN if held; else -ETIMEDOUT at deadline_ms. */
int store_blk_lock(struct ofile *of, uint64_t k, int wait, int64_t deadline_ms);
void store_blk_unlock(struct ofile *of, uint64_t k);

/* A mapping of a datafile range that the engine sends from (engine_slots.c
 * "one copy") is held from before its residency check until its sends
 * ended. While any is held no datafile of the file shrinks (set size,
 * trim): a page cut off would raise SIGBUS in the server at its next
 * touch. A shrink waits for the holds to go, at most STORE_MAP_WAIT_MS,
 * then fails with -EBUSY. */
#define STORE_MAP_WAIT_MS 30000
void store_map_hold(struct ofile *of);
void store_map_drop(struct ofile *of);

/* The datafile of disk d's bytes [off, off + len) in its long-lived
 * read-only mapping (store_fmap.c); *m the mapping, held until
 * store_fmap_put. NULL: not mapped (no cached descriptor, no memory or
 * address space). The caller holds the file against shrinking
 * (store_map_hold) and knows the range is cached: a page past the end of
 * the file would fault at its first touch. */
struct fmap;
void *store_fmap_get(struct ofile *of, int d, uint64_t off, uint64_t len, struct fmap **m);
void store_fmap_put(struct ofile *of, struct fmap *m);
/* at the file's last close: mappings still held (sends that never ended)
 * are kept, the others go */
void store_fmap_close(struct ofile *of);

/* Layout record file encoding (magic, version, record). */
int store_meta_encode(const struct ddio_layout_rec *l, const struct store_creator *cr,
                      struct ddio_wbuf *w);
int store_meta_decode(const void *p, size_t n, struct ddio_layout_rec *l,
                      struct store_creator *cr);
/* ESTALE check of a stored record against this server; 0 or -ESTALE */
int store_layout_check(const struct store *st, const struct ddio_layout_rec *l,
                       char *msg, size_t msglen);

#endif
