/* The client core's file layer (ddio_core.h), above the connections
 * (ddio_core_conn.h):
 *
 *   ddio_core_file.c    a file by its path on its stripe servers: open,
 *                       create, open again (another pool, or one server's
 *                       handle after a lost connection), delete
 *   ddio_core_handle.c  the handles of an open file: alive or renewed
 *                       (reconnect with backoff for up to recover_ms,
 *                       reopen, relock), byte-range locks, requests on every
 *                       stripe server (sizes, SETSIZE, PREALLOC, SYNC),
 *                       CLOSE, UCX attachment
 *
 * struct ddio_fh holds the state of the layers above too (its client cache,
 * the same-host descriptors, whether close parks it), which they work on;
 * the one thing the file layer asks of them during an OPEN comes through
 * struct ddio_open_hooks. */
#ifndef DDIO_CORE_FILE_H
#define DDIO_CORE_FILE_H

#include "ddio_core_conn.h"
#include "ddio_layout.h"

/* ---- ddio_core_file.c: a file on its stripe servers -------------------------- */

/* One stripe server of an open file. */
struct ddio_srv {
    struct ddio_conn *conn;
    unsigned gen;               /* conn->gen when the handle was opened */
    uint64_t handle;
    int is_open;
    int out;                    /* the membership has it out: a read-only open
                                 * of a mirrored file left it closed, and its
                                 * parts are read from copies and written to
                                 * them (reopened once the handle's view moves:
                                 * ddio_fh_review) */
    struct ddio_local *local;   /* same-host reads (ddio_core_local.c), or NULL */
};

/* A handle's client cache (its functions: ddio_core_io.h, ddio_core_cache.c). */
#define DDIO_CACHE_CHUNKS 16

struct ddio_wext {              /* a buffered write: file bytes [off, off+len) */
    uint64_t off, len;
    size_t pos;                 /* where its bytes are in the buffer */
};

struct ddio_chunk {             /* clean bytes: count blocks of blen every stride */
    uint64_t off, blen, stride, count;
    uint64_t valid;             /* bytes of the stream below end of file */
    char *data;
    uint64_t tick;              /* last use */
};

struct ddio_cache {
    size_t wb_max;              /* write-behind buffer bytes (0: off) */
    size_t ra_max;              /* read-ahead bytes held (0: off) */
    uint32_t xflags;            /* DDIO_XF_* of the XFERs it sends */
    /* write-behind: extents, non-overlapping, in one buffer */
    struct ddio_wext *wext;
    size_t nwext;
    char *wbuf;
    size_t wused;
    uint64_t dlo, dhi;          /* bounds of the buffered bytes */
    int sorted;                 /* extents appended in file order */
    /* read-ahead */
    struct ddio_chunk ch[DDIO_CACHE_CHUNKS];
    int nch;
    uint64_t ra_used, tick;
    uint64_t last_off, last_len, nreads;
    int64_t last_stride;
    /* counters */
    uint64_t hits, misses, flushes;
};

/* A byte-range lock this process holds (on stripe server 0). */
struct ddio_lk {
    uint32_t type;              /* DDIO_LK_RD / DDIO_LK_WR */
    uint64_t start, len;
};

/* A file open on its stripe servers. */
struct ddio_fh {
    int timeout_ms;
    int nsrv;                   /* stripe count */
    struct ddio_srv *srv;       /* stripe order */
    struct ddio_stripe stripe;
    uint32_t copies;            /* the file's (layout): 1, or 2..3 mirrored:
                                 * copy c of index p's units on server
                                 * (p + c) % nsrv (ddio_layout.h) */
    struct ddio_ec ec;          /* an erasure-coded file's K and M (copies 1,
                                 * nsrv K+M, ddio_ec.h), else {0, 0} */
    int xport;                  /* enum ddio_xport: DDIO_XPORT_TCP keeps XFERs off UCX */
    /* renewal: with renew set, a handle lost with its connection (a restart,
     * a timeout) is opened again by path on first use; without, the call
     * fails with EPIPE ("the file must be reopened") */
    int renew;
    /* recovery: a server whose connection dropped (or that restarted) is
     * reconnected with backoff, the handle opened again and the call resent,
     * for up to recover_ms from the loss; 0: the call fails at once */
    int recover_ms;
    /* a server of a mirrored file lost for the whole recovery time during
     * a write: the membership asked to declare it out (the server list's
     * owner knows the deployment: ddio_client.c, the driver); 0: it is out
     * (the write then goes on without it), -1 with e set. NULL: the write
     * fails */
    int (*declare_out)(void *arg, const struct ddio_conn *c, struct ddio_err *e);
    void *declare_arg;
    struct ddio_lk *locks;      /* held: taken again when the connection of
                                 * the server holding them is renewed, and
                                 * where they move (ddio_core_lock.c) */
    int nlocks, caplocks;
    int lock_at;                /* the stripe server holding them: 0, or for
                                 * a copied file the first the view has in */
    /* set by the first lock: takes them again (reclaims) on the renewed
     * handle of server lock_at, its connection's mutex held */
    int (*relock)(struct ddio_fh *f, struct ddio_err *e);
    char *path;                 /* namespace path (set by ddio_fh_open) */
    uint32_t amode;
    int local_read;             /* read from same-host servers' datafiles
                                 * directly (ddio_local_pread); 0: never */
    int local_lazy;             /* a read-only open does not ask for the
                                 * descriptors (DDIO_O_LOCAL): the first
                                 * local read does (an open that reads
                                 * nothing, as a mount's often, pays no
                                 * handover) */
    int local_write;            /* write independent contiguous ranges into
                                 * them (ddio_local_pwrite); 0: never */
    struct ddio_cache cache;    /* off unless the opener sets its sizes
                                 * (ddio_cache_init); close and sync flush it */
    int park;                   /* close parks the handles (ddio_core_park.c) */
    int created;                /* the last ddio_fh_open_servers made the file (new,
                                 * empty): the mount answers its stat without asking */
    uint32_t view_epoch;        /* a mirrored file's: the membership epoch its
                                 * servers' `out` was decided at (the lowest
                                 * its open heard); its writes carry it, so a
                                 * server at a newer one refuses them and the
                                 * handle takes its out servers back first
                                 * (ddio_fh_review) */
};

/* The servers f has out taken back (out cleared: opened again on use),
 * and its view moved to epoch (a server refused a change carrying the old
 * one): how many, each marked in back[] when not NULL. DESIGN.md 6.1. */
int ddio_fh_review(struct ddio_fh *f, uint32_t epoch, char *back);
/* the epoch f's changes carry (0: their connection's) */
uint32_t ddio_fh_change_epoch(const struct ddio_fh *f);
/* f has just marked a server out: a view not set yet (its open heard no
 * epoch: none agreed then) is set to the newest its servers told */
void ddio_fh_view_pin(struct ddio_fh *f);

/* How to create a file that does not exist yet. */
/* the file's redundancy word (ddio_layout.h): its name, its mode */
static inline uint32_t ddio_fh_redundancy(const struct ddio_fh *f)
{
    return f->ec.k ? DDIO_REDUNDANCY_EC_WORD(f->ec.k, f->ec.m) : f->copies;
}

/* mirrored or erasure-coded: its servers' membership decides who is out
 * (DESIGN.md 6.1) */
static inline int ddio_fh_redundant(const struct ddio_fh *f)
{
    return ddio_redundancy_kept(ddio_fh_redundancy(f));
}

struct ddio_create {
    uint64_t unit;              /* stripe unit */
    int count;                  /* stripe count (<= 0 or > servers: all) */
    int excl;                   /* an existing file is an error (EEXIST) */
    int copies;                 /* 0: the servers' default (--redundancy); else
                                 * a redundancy word (ddio_layout.h): 1 none,
                                 * 2..DDIO_MAX_COPIES mirror (more than the
                                 * stripe count: EINVAL), or ec:K+M (its
                                 * stripe count is K+M) */
    int mode_set;               /* mode given (a mount's caller's), else 0666 less
                                 * this process's umask */
    uint32_t mode;
};

/* What a read-only OPEN asks besides the handle: conns[i]'s read
 * descriptors (DDIO_O_LOCAL: name and nonce[i] where asked[i]), which saves
 * the LOCAL round trip of its first read (ddio_core_local.c fills it in). */
struct ddio_local_ask {
    int n;                      /* conns (0: nothing asked) */
    char *asked;
    uint8_t (*nonce)[DDIO_LOCAL_NONCE];
    const char *name;           /* the listener's */
};
/* The layer above's part in each OPEN of an existing file (ddio_fh_open:
 * ddio_local_ask_begin / _end): ask_begin before the fan-out (1: asked),
 * ask_end after it, f->srv set by then or not. */
struct ddio_open_hooks {
    int (*ask_begin)(struct ddio_fh *f, struct ddio_conn **conns, int n, uint32_t amode,
                     struct ddio_local_ask *a);
    void (*ask_end)(struct ddio_fh *f, struct ddio_conn **conns, struct ddio_local_ask *a);
};
/* Open path on the servers conns[0..n) (stripe order of a new file): an
 * existing file anywhere on them (retried while another process is halfway
 * through creating or deleting it), else, with cr, a new one (O_EXCL on each
 * stripe server; stripe server 0 decides between racing creators). hooks
 * (or NULL) take part in each OPEN of an existing file. f->path and
 * f->amode are the caller's to set. */
int ddio_fh_open_servers(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                         uint32_t amode, const struct ddio_create *cr,
                         const struct ddio_open_hooks *hooks, struct ddio_err *e);
/* Open the same file again through other connections (another pool):
 * addrs/ids are the stripe servers' (as at the first open); the layout must
 * be the one f already has. */
int ddio_fh_open_again(struct ddio_fh *f, struct ddio_pool *pool, char (*addrs)[256],
                       const uint8_t (*ids)[DDIO_ID_LEN], struct ddio_err *e);
/* OPEN f's path again on c (c->mu held) as stripe server i, its answer
 * into r: 0, or -1 with e set (ESTALE: the server answered with another
 * layout than at open) */
int ddio_fh_reopen_locked(const struct ddio_fh *f, int i, struct ddio_conn *c,
                          struct ddio_open_r *r, struct ddio_err *e);
/* DELETE path on every server of the list (ENOENT everywhere: ENOENT);
 * resent to a server lost meanwhile for up to recover_ms (a resent DELETE's
 * ENOENT counts as done: the first one may have run) */
int ddio_delete_servers(struct ddio_conn **conns, int n, const char *path, int timeout_ms,
                        int recover_ms, struct ddio_err *e);

/* ---- ddio_core_handle.c: the handles of an open file ------------------------- */

/* the handle is open on the connection it was opened on */
int ddio_srv_live(const struct ddio_srv *s);

/* stripe server i usable: alive, or renewed (f->renew, or with backoff for
 * up to f->recover_ms); else -1 with e */
int ddio_fh_ready(struct ddio_fh *f, int i, struct ddio_err *e);
/* ddio_fh_ready with one reconnect attempt at most (a connect within the
 * timeout, at most a second), not the recovery time's: for a mirrored
 * file's read, whose lost server's part a copy serves */
int ddio_fh_ready_once(struct ddio_fh *f, int i, struct ddio_err *e);
/* one attempt (server i's connection mutex held): connect if needed (at most
 * conn_ms) and open f's handle there again; 0 or -1 with e */
int ddio_fh_renew_locked(struct ddio_fh *f, int i, int conn_ms, struct ddio_err *e);
/* logical size = max over the stripe servers of their logical end; servers
 * with skip[i] set are not asked (their local size is known[i]) */
int ddio_fh_size(struct ddio_fh *f, const char *skip, const uint64_t *known, uint64_t *size,
                 struct ddio_err *e);
/* SETSIZE on every server to its share of size (grow != NULL: only where
 * the share exceeds grow[i], i.e. extension only) */
int ddio_fh_set_local_sizes(struct ddio_fh *f, uint64_t size, const uint64_t *grow,
                            struct ddio_err *e);
/* local sizes of every server not in skip */
int ddio_fh_local_sizes(struct ddio_fh *f, const char *skip, uint64_t *local,
                        struct ddio_err *e);
/* PREALLOC of each server's share of [0, size) */
int ddio_fh_prealloc(struct ddio_fh *f, uint64_t size, struct ddio_err *e);
/* SYNC on every server */
int ddio_fh_sync_servers(struct ddio_fh *f, struct ddio_err *e);
/* a change that changes nothing (SETSIZE that grows to 0) on every server
 * in: each notes the file for the members out (a write they took before
 * one was declared out) */
int ddio_fh_touch(struct ddio_fh *f, struct ddio_err *e);
/* one request on stripe server i's handle: enc(w, handle, arg) builds it */
typedef void (*ddio_henc_fn)(struct ddio_wbuf *w, uint64_t handle, uint64_t arg);
int ddio_fh_call(struct ddio_fh *f, int i, uint16_t type, ddio_henc_fn enc, uint64_t arg,
                 uint8_t **reply, size_t *len, struct ddio_err *e);
/* LOCK on the server holding f's locks (stripe server 0; for a copied
 * file the first its view has in) (cmd DDIO_LK_SETLK / SETLKW / UNLCK): the locks
 * held are remembered and taken again (SETLKW) on a renewed connection,
 * and the request itself is resent like the others (f->recover_ms) */
int ddio_fh_lock(struct ddio_fh *f, uint32_t cmd, uint32_t type, uint64_t start, uint64_t len,
                 struct ddio_err *e);

/* CLOSE every live handle, sent to every server at once and answered
 * (errors dropped) before it returns; srv stays */
void ddio_fh_close_servers(struct ddio_fh *f);
/* Attach f's connections that wait to move data by UCX (ddio_conn_ucx) now,
 * outside any data call: the driver's set_view of a described filetype.
 * What fails is for the next call to meet: a broken connection its
 * recovery, a forced UCX that came to nothing its error. */
void ddio_fh_ucx_attach(struct ddio_fh *f);

#endif
