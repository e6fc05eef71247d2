/* The client core: everything a client of the ddio servers does, once, with
 * no MPI dependency. The ROMIO driver (adio/ad_ddio), the command-line tool
 * and the mount (through ddio_client.h) are all built on it.
 *
 *   ddio_core_conf.c  where the servers, the secret and the timeout come from
 *                     (hint, environment, DDIO_CONFIG)
 *   ddio_core_conn.c  connections: pools keyed by host:port, connect + HELLO
 *                     + AUTH (+ UCX), one request/reply, fan-out to several
 *   ddio_core_file.c  a file open on its stripe servers: open / create /
 *                     close, size, set size, sync, locks, and the renewal of
 *                     a handle that died with its connection (reconnect with
 *                     backoff for up to recover_ms, reopen, relock, resend)
 *   ddio_core_xfer.c  one XFER to each involved server, served until DONE:
 *                     PUTs into the caller's buffer, GETs answered from it,
 *                     on TCP or UCX (docs/PROTOCOL.md "XFER"); a server
 *                     lost meanwhile reconnected and sent its XFER again
 *                     (PROTOCOL.md "Resending")
 *   ddio_core_cache.c a file's client cache: write-behind of small writes,
 *                     read-ahead of small reads (MPI-IO's nonatomic rules)
 *
 * Threads: a connection carries one conversation at a time; every function
 * here that talks on a connection holds its mutex from the first byte sent to
 * the last byte received (an XFER until its DONE), locking several in one
 * global order, so threads may share connections (the tools and the mount do;
 * the driver's progress thread uses a pool of its own so that a background
 * transfer never waits for the main thread's).
 *
 * Errors: functions return 0 or -1 with a struct ddio_err set (errno value
 * plus a message naming the server and the cause). */
#ifndef DDIO_CORE_H
#define DDIO_CORE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "ddio_desc.h"
#include "ddio_layout.h"
#include "ddio_proto.h"

#define DDIO_ERR_LEN        512
#define DDIO_DFLT_UNIT      (1u << 20)  /* stripe unit of new files */
#define DDIO_DFLT_TIMEOUT_S 30

/* ---- ddio_core_err.c: errors -------------------------------------------------- */

struct ddio_err {
    int errnum;
    int transport;              /* the connection failed (not a server's answer) */
    char msg[DDIO_ERR_LEN];
};
void ddio_err_set(struct ddio_err *e, int errnum, const char *fmt, ...)
    __attribute__ ((format(printf, 3, 4)));
/* e is worth a recovery (the connection broke, or a collective peer's did) */
int ddio_err_recoverable(const struct ddio_err *e);
/* a failed reconnect attempt (e) worth another one */
int ddio_err_reconnectable(const struct ddio_err *e);

/* ---- ddio_core_conf.c: configuration ---------------------------------------- */

/* Server list: spec when given (remembered for later calls without one),
 * else $DDIO_SERVERS, else "servers" in $DDIO_CONFIG, else the last spec
 * given in this process. Free with ddio_free_list. */
int ddio_server_list(const char *spec, char ***list, int *n, struct ddio_err *e);
void ddio_free_list(char **list, int n);
/* Secret file for connections made from now on: the hint when given (and
 * remembered), else $DDIO_SECRET_FILE, else "secret_file" in $DDIO_CONFIG. */
void ddio_secret_hint(const char *hint);
const char *ddio_secret_hint_get(void);
/* default striping of new files from $DDIO_CONFIG: 0 where not given */
void ddio_config_striping(long long *unit, int *factor);
/* timeout: hint_s (> 0), else $DDIO_TIMEOUT, else config, else 30 s */
int ddio_timeout_ms(int hint_s);
/* how long a call rides through a lost server (reconnecting, reopening,
 * resending): hint_s (>= 0; 0 turns recovery off), else
 * $DDIO_RECOVER_TIMEOUT, else timeout_ms */
int ddio_recover_ms(int hint_s, int timeout_ms);
/* stream bytes an ordered read (ddio_mem.ordered) reads and places at a
 * time: its whole cost in memory ($DDIO_ORDERED_WINDOW, bytes; the tests
 * make it small to cross many windows) */
#define DDIO_ORDERED_WINDOW_DFLT (4u << 20)
uint64_t ddio_ordered_window(void);
/* same-host reads on unless DDIO_LOCAL_READ=0 (hint: 1 on, 0 off, -1 none) */
int ddio_local_read_on(int hint);
int ddio_local_write_on(int hint);   /* the same for writes: DDIO_LOCAL_WRITE */

/* ---- ddio_core_conn.c: connections ---------------------------------------- */

struct ddio_pool;

/* replies a connection may owe for requests nobody waits on */
#define DDIO_CONN_POSTED 16

struct ddio_conn {
    pthread_mutex_t mu;         /* one conversation at a time */
    struct ddio_pool *pool;     /* how to (re)connect: secret, transport */
    char addr[256];             /* "host:port" as configured */
    char name[256];             /* the server's own name, for messages */
    int sock;                   /* -1 when not connected */
    unsigned gen;               /* bumped at every (re)connect */
    uint64_t next_req;
    uint8_t id[DDIO_ID_LEN];
    uint32_t ndisks;
    uint64_t block_size;
    struct ddio_ucx_ep *ucx;    /* XFER data may move by UCX; NULL: TCP only */
    int ucx_lazy;               /* UCX wanted and offered, not attached yet:
                                 * the first XFER that wants it attaches */
    int ucx_forced;             /* DDIO_TRANSPORT (or the pool) said ucx */
    int ucx_own_ep;             /* the server makes its own endpoint back
                                 * (DDIO_SRV_UCX_EP): ATTACH sends our address */
    uint64_t ucx_cookie;        /* the server's name for this connection */
    char ucx_why[200];          /* why not UCX */
    int nposted;                /* requests sent without waiting (ddio_conn_post) */
    uint64_t posted_req[DDIO_CONN_POSTED];
    uint16_t posted_type[DDIO_CONN_POSTED];
    int local_no;               /* LOCAL refused as another host: not asked
                                 * again on this connection */
    unsigned fork_gen;          /* ddio_fork_gen() when connected */
};

/* Connections to servers by address, made on first use. */
struct ddio_pool {
    pthread_mutex_t mu;         /* the list */
    struct ddio_conn **conns;
    int n, cap;
    char *secret_file;          /* NULL: ddio_secret_hint / environment / config */
    const char *client_name;    /* our name in HELLO; NULL: the host name */
    int xport;                  /* enum ddio_xport to ask for; -1: DDIO_TRANSPORT */
    int strict_ucx;             /* UCX forced and not had: the connect fails */
};
#define DDIO_POOL_INIT { .mu = PTHREAD_MUTEX_INITIALIZER, .xport = -1 }

/* how many forks this process's line has been through since the first
 * connection (pthread_atfork): a connection made before the last one, or a
 * call id taken then, is the parent's (ddio_conn_send lets go of such a
 * connection and the call reconnects; ddio_client_id draws a new id) */
unsigned ddio_fork_gen(void);
/* DDIO_TIMING set (not "0"): print each connection's stages to stderr */
int ddio_timing_on(void);

/* Send a request whose reply nobody waits for (conversation held): what
 * cannot fail its caller, a read-only handle's CLOSE. The reply is read
 * and dropped before c's next conversation (ddio_conn_send,
 * ddio_conn_drain), a server's error with it. -1 with e set when the
 * connection broke. */
int ddio_conn_post(struct ddio_conn *c, uint16_t type, const void *payload, size_t len,
                   int64_t deadline_ms, struct ddio_err *e);
/* read and drop the replies c owes for posted requests, oldest first: -1
 * (e set, c failed) when the connection broke */
int ddio_conn_drain(struct ddio_conn *c, int64_t deadline_ms, struct ddio_err *e);

/* XFER data may move by UCX on c: attached, or to be at first use */
static inline int ddio_conn_has_ucx(const struct ddio_conn *c)
{
    return c->ucx != NULL || c->ucx_lazy;
}
/* Attach c to UCX now if it is waiting to (conversation held, none in
 * flight): 0 (attached, or it stays on TCP with the reason in c->ucx_why),
 * -1 with e set when the connection broke (e->transport, c failed) or UCX
 * was forced (DDIO_TRANSPORT = ucx) and c has none: this attachment, or an
 * earlier one, came to nothing. */
int ddio_conn_ucx(struct ddio_conn *c, int64_t deadline_ms, struct ddio_err *e);

/* the pool's connection to addr, connected (and handshaken) if it was not */
int ddio_pool_get(struct ddio_pool *p, const char *addr, int timeout_ms,
                  struct ddio_conn **out, struct ddio_err *e);
/* close and free every connection (the pool itself is the caller's) */
void ddio_pool_clear(struct ddio_pool *p);
/* the pool's connection to addr, made (not connected) if it was not there;
 * NULL: out of memory */
struct ddio_conn *ddio_pool_find(struct ddio_pool *p, const char *addr);
/* connect c if it is not (c->mu held) */
int ddio_conn_ready(struct ddio_conn *c, int timeout_ms, struct ddio_err *e);
/* drop the connection (its byte stream can no longer be trusted) */
void ddio_conn_fail(struct ddio_conn *c);
/* lock / unlock n connections (NULLs and repeats allowed) in one global order */
void ddio_conns_lock(struct ddio_conn *const *v, int n);
void ddio_conns_unlock(struct ddio_conn *const *v, int n);

/* the pieces of a conversation (c->mu held) */
int ddio_conn_send(struct ddio_conn *c, uint16_t type, const void *payload, size_t len,
                   uint64_t *req, int64_t deadline, struct ddio_err *e);
int ddio_conn_recv_payload(struct ddio_conn *c, const struct ddio_hdr *h, int64_t deadline,
                           uint8_t **payload, struct ddio_err *e);
int ddio_conn_recv_reply(struct ddio_conn *c, uint16_t type, uint64_t req, int64_t deadline,
                         uint8_t **payload, size_t *len, struct ddio_err *e);
/* a server's error reply: its message, or one made from the status */
void ddio_conn_server_error(const struct ddio_conn *c, int status, const uint8_t *p, size_t n,
                            struct ddio_err *e);
/* a transport failure on c: the message, and the connection dropped */
void ddio_conn_transport_error(struct ddio_conn *c, int rc, const char *what,
                               struct ddio_err *e);

/* A request to one server, part of a fan-out. */
struct ddio_call {
    struct ddio_conn *conn;     /* NULL: not sent (its err, if any, stays) */
    struct ddio_wbuf req;       /* request payload, filled by the caller */
    uint64_t id;
    int sent;
    uint8_t *reply;             /* reply payload (malloc'd) */
    size_t reply_len;
    struct ddio_err err;
};
/* Send every call's request, then collect every reply (the servers work in
 * parallel); each call gets its own outcome. Locks the connections. At most
 * DDIO_MAX_SERVERS calls (a server list's length). */
void ddio_fanout(struct ddio_call *calls, int n, uint16_t type, int timeout_ms);
void ddio_calls_free(struct ddio_call *calls, int n);
/* one request and its reply on c (locks c; _locked: c->mu held) */
int ddio_conn_call(struct ddio_conn *c, uint16_t type, const struct ddio_wbuf *req,
                   int64_t deadline, uint8_t **reply, size_t *len, struct ddio_err *e);
int ddio_conn_call_locked(struct ddio_conn *c, uint16_t type, const struct ddio_wbuf *req,
                          int64_t deadline, uint8_t **reply, size_t *len, struct ddio_err *e);

/* ---- ddio_core_recover.c: riding through a lost server ----------------------- */

/* ids of calls that must not run twice (PROTOCOL.md "Resending": XFER's
 * DDIO_XF_ONCE, OPEN's DDIO_O_ONCE, RENAME's): this process's random id
 * (non-zero), and a new call number */
uint64_t ddio_client_id(void);
uint64_t ddio_call_id(void);
/* the wait before the next reconnect attempt, after waiting ms (0: first) */
int ddio_backoff_next(int ms);
/* ddio_fanout riding through lost connections: a call whose connection
 * failed (ddio_err_recoverable) is sent again, the same request, after
 * reconnecting with backoff, for up to recover_ms (0: plain ddio_fanout);
 * its `resent` is then set, so the caller can read the answer of a request
 * that may have run before the loss (a DELETE's ENOENT) */
void ddio_fanout_recover(struct ddio_call *calls, int n, uint16_t type, int timeout_ms,
                         int recover_ms);
/* ddio_pool_get, a refused or dropped connect tried again with backoff for
 * up to recover_ms (a server restarting while a job opens its files) */
int ddio_pool_get_recover(struct ddio_pool *p, const char *addr, int timeout_ms, int recover_ms,
                          struct ddio_conn **out, struct ddio_err *e);
/* ddio_pool_get_recover for each of n addresses into conns[i], those not
 * connected yet dialled at the same time (a thread each but the first):
 * a job's first open waits for its slowest server, not for the sum of them
 * (TCP connect, HELLO, AUTH, UCX endpoint). Each keeps its own deadline and
 * retries; e is the first failure in list order, as one after another. */
int ddio_pool_get_all(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                      int recover_ms, struct ddio_conn **conns, struct ddio_err *e);

/* ---- ddio_core_file.c: open files ---------------------------------------------- */

/* One stripe server of an open file. */
struct ddio_srv {
    struct ddio_conn *conn;
    unsigned gen;               /* conn->gen when the handle was opened */
    uint64_t handle;
    int is_open;
    struct ddio_local *local;   /* same-host reads (ddio_core_local.c), or NULL */
};

/* ---- ddio_core_cache.c: the client cache (types; functions below) ---------- */

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
    int xport;                  /* enum ddio_xport: DDIO_XPORT_TCP keeps XFERs off UCX */
    /* renewal: with renew set, a handle lost with its connection (a restart,
     * a timeout) is opened again by path on first use; without, the call
     * fails with EPIPE ("the file must be reopened") */
    int renew;
    /* recovery: a server whose connection dropped (or that restarted) is
     * reconnected with backoff, the handle opened again and the call resent,
     * for up to recover_ms from the loss; 0: the call fails at once */
    int recover_ms;
    struct ddio_lk *locks;      /* held: taken again when server 0's
                                 * connection is renewed (ddio_fh_lock) */
    int nlocks, caplocks;
    char *path;                 /* namespace path (set by ddio_fh_open) */
    uint32_t amode;
    int local_read;             /* read from same-host servers' datafiles
                                 * directly (ddio_local_pread); 0: never */
    int local_write;            /* write independent contiguous ranges into
                                 * them (ddio_local_pwrite); 0: never */
    struct ddio_cache cache;    /* off unless the opener sets its sizes
                                 * (ddio_cache_init); close and sync flush it */
    int park;                   /* close parks the handles (ddio_core_park.c) */
};

/* How to create a file that does not exist yet. */
struct ddio_create {
    uint64_t unit;              /* stripe unit */
    int count;                  /* stripe count (<= 0 or > servers: all) */
    int excl;                   /* an existing file is an error (EEXIST) */
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
/* CLOSE every live handle, sent to every server at once and answered
 * (errors dropped) before it returns; srv stays */
void ddio_fh_close_servers(struct ddio_fh *f);
/* Attach f's connections that wait to move data by UCX (ddio_conn_ucx) now,
 * outside any data call: the driver's set_view of a described filetype.
 * What fails is for the next call to meet: a broken connection its
 * recovery, a forced UCX that came to nothing its error. */
void ddio_fh_ucx_attach(struct ddio_fh *f);
/* the handle is open on the connection it was opened on */
int ddio_srv_live(const struct ddio_srv *s);

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
/* stripe server i usable: alive, or renewed (f->renew, or with backoff for
 * up to f->recover_ms); else -1 with e */
int ddio_fh_ready(struct ddio_fh *f, int i, struct ddio_err *e);
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
/* one request on stripe server i's handle: enc(w, handle, arg) builds it */
typedef void (*ddio_henc_fn)(struct ddio_wbuf *w, uint64_t handle, uint64_t arg);
int ddio_fh_call(struct ddio_fh *f, int i, uint16_t type, ddio_henc_fn enc, uint64_t arg,
                 uint8_t **reply, size_t *len, struct ddio_err *e);
/* LOCK on stripe server 0 (cmd DDIO_LK_SETLK / SETLKW / UNLCK): the locks
 * held are remembered and taken again (SETLKW) on a renewed connection,
 * and the request itself is resent like the others (f->recover_ms) */
int ddio_fh_lock(struct ddio_fh *f, uint32_t cmd, uint32_t type, uint64_t start, uint64_t len,
                 struct ddio_err *e);

/* DELETE path on every server of the list (ENOENT everywhere: ENOENT);
 * resent to a server lost meanwhile for up to recover_ms (a resent DELETE's
 * ENOENT counts as done: the first one may have run) */
int ddio_delete_servers(struct ddio_conn **conns, int n, const char *path, int timeout_ms,
                        int recover_ms, struct ddio_err *e);

/* ---- ddio_core_xfer.c: transfers ------------------------------------------------ */

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
    uint64_t bytes;             /* out: stream bytes transferred (reads: below
                                 * the end of file) */
};
/* involved[i] != 0: send the XFER to stripe server i (NULL: all) */
int ddio_xfer_run(struct ddio_xfer_req *x, const char *involved, struct ddio_err *e);
/* ddio_xfer_run by the servers alone (ddio_core_xfer.c): one XFER to each
 * stripe server involved, served until its DONE */
int ddio_xfer_servers(struct ddio_xfer_req *x, const char *involved, struct ddio_err *e);
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

/* ---- ddio_core_local.c: I/O on same-host servers' datafiles -------------------- */

/* File bytes [off, off+len) into buf straight from the stripe servers'
 * datafiles, when every server needed runs on this host and handed its
 * descriptors over (LOCAL; asked once per server and file). only (NULL:
 * all) limits the servers read; raw: bytes past a server's size are left
 * alone and *bytes counts those found, else holes read as zeros and *bytes
 * is the bytes below the end of file. 1: done; 0: not done (read through
 * the servers: not local, off, a server that may have gone, a read error). */
/* A collective's plain-range part up to this size is read, and written,
 * here too: the servers would move it through the page cache as well
 * (their PCACHE_RANGE_MAX); a longer one is their sorted O_DIRECT stream.
 * (Writes stopped at 256 KiB until same-host writers started their own
 * writeback: IOR-style sf-coll 1 and 4 MiB writes, P = 4 and 8, then went
 * 695-1519 -> 1334-1663 MiB/s on TCP, 519-1545 -> 982-1662 on UCX,
 * bench/results/2026-11-29-ab/coll-local.) */
#define DDIO_LOCAL_COLL_MAX (16u << 20)
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
/* 1: L's first datafile is still where it was handed over: not deleted,
 * not renamed (so the path it was opened by still names the same file);
 * -1: it is not; 0: no descriptors (none handed over, another host) */
int ddio_local_same_file(const struct ddio_local *L);
int ddio_local_ask_begin(struct ddio_fh *f, struct ddio_conn **conns, int n, uint32_t amode,
                         struct ddio_local_ask *a);
void ddio_local_ask_end(struct ddio_fh *f, struct ddio_conn **conns, struct ddio_local_ask *a);

/* ---- ddio_core_cache.c: the client cache of an open file ------------------------ */

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

/* ---- ddio_core_fh.c: an open file as callers use it --------------------------- */

/* ddio_fh_open_servers, this process's parked handles of path taken
 * instead when f->park allows (ddio_park_take), the same-host read
 * descriptors asked for with a read-only OPEN; sets f->path, f->amode. */
int ddio_fh_open(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                 uint32_t amode, const struct ddio_create *cr, struct ddio_err *e);
/* the buffered writes flushed, what was read ahead dropped, then SYNC on
 * every server */
int ddio_fh_sync(struct ddio_fh *f, struct ddio_err *e);
/* The buffered writes flushed (their error is the close's), then CLOSE
 * every live handle (in parallel); frees srv. 0 or -1 (first error).
 * With f->park, handles that can be taken again without asking the
 * servers are parked instead (ddio_park_put). */
int ddio_fh_close(struct ddio_fh *f, struct ddio_err *e);
/* free what f holds (cache, descriptors, handles' memory, path, locks) */
void ddio_fh_free(struct ddio_fh *f);
/* this process's parked handles of path closed, then ddio_delete_servers */
int ddio_delete(struct ddio_conn **conns, int n, const char *path, int timeout_ms,
                int recover_ms, struct ddio_err *e);

#endif
