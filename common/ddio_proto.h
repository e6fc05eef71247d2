/* ddio wire protocol: message header, types, and payload encoders/decoders.
 *
 * Every message is a 32-byte little-endian header followed by `len` payload
 * bytes. Replies to a request carry the request's type with DDIO_REPLY set,
 * the request's `req` id, and a status (0, or a Linux errno value). A reply
 * whose status is non-zero carries a single string payload: a human-readable
 * message naming the server and the cause.
 *
 * The decoder treats every byte as hostile: every length and count is bounded
 * before anything is allocated or read, and all decoding goes through the
 * bounds-checked reader below. No MPI dependency.
 */
#ifndef DDIO_PROTO_H
#define DDIO_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "ddio_ec.h"

#define DDIO_MAGIC        0x4F494444u   /* "DDIO" little-endian */
#define DDIO_VERSION      16u   /* 2: HELLO|R nonce + AUTH handshake; 3: XFER once ids;
                                 * 4: LOCAL; 5: LOCAL flags (same-host writes);
                                 * 6: OPEN's and RENAME's once ids;
                                 * 7: DELETE's, MKDIR's and RMDIR's once ids,
                                 * LOCK's flags and client; 8: OPEN's
                                 * DDIO_O_LOCAL; 9: PSTAT|R's owner,
                                 * SETATTR, ACTAS, LOCALSTAT, OPEN's
                                 * DDIO_O_MODE; 10: the layout's copies,
                                 * XFER's DDIO_XF_COPY, SETSIZE's and
                                 * PREALLOC's logical size; 11: READDIR
                                 * resumes after a name, its reply says
                                 * whether more follow; 12: WATCH and
                                 * INVAL (a mount's cache kept coherent);
                                 * 13: SCRUB and REPAIR (checksums checked
                                 * and bad sectors rewritten from a copy);
                                 * 14: REBUILD (a replacement server takes
                                 * a lost one's place), the header's
                                 * epoch, MEMBER (the deployment's agreed
                                 * membership); 15: inline writes up to
                                 * 512 KiB; 16: inline writes of a server's
                                 * own bytes (DDIO_XF_INLINE_OWN) */
#define DDIO_HDR_SIZE     32u
#define DDIO_MAX_PAYLOAD  (64u << 20)   /* hard cap on any message payload */
#define DDIO_MAX_STR      4096u         /* path / message string cap */
#define DDIO_MAX_SERVERS  256u          /* stripe count cap */
#define DDIO_MAX_SEGS     65536u        /* segments in one PUT/GET */
#define DDIO_SEG_WIRE     16u           /* one segment on the wire: u64 off, u64 len */
#define DDIO_ID_LEN       16u           /* server identity (random, persistent) */
#define DDIO_NONCE_LEN    32u
#define DDIO_MAC_LEN      32u          /* HMAC-SHA-256 */

/* message types */
enum ddio_type {
    DDIO_T_HELLO    = 1,   /* client -> server: first message on a connection */
    DDIO_T_AUTH     = 2,   /* client -> server: challenge response (ddio_auth.h) */
    DDIO_T_OPEN     = 3,
    DDIO_T_CLOSE    = 4,
    DDIO_T_DELETE   = 5,
    DDIO_T_STAT     = 6,   /* local size of an open file */
    DDIO_T_SETSIZE  = 7,
    DDIO_T_PREALLOC = 8,
    DDIO_T_SYNC     = 9,
    DDIO_T_XFER     = 10,  /* read/write of a described region; reply = DONE */
    DDIO_T_PUT      = 11,  /* server -> client: read data, stream-addressed */
    DDIO_T_GET      = 12,  /* server -> client: pull write data */
    DDIO_T_DATA     = 13,  /* client -> server: answer to a GET */
    DDIO_T_LOCK     = 14,
    DDIO_T_STATS    = 15,  /* server counters (for tests, bench, admin) */
    DDIO_T_PROGRESS = 16,  /* server -> client: XFER heartbeat, no payload */
    DDIO_T_PSTAT    = 17,  /* stat by path: kind, mode, mtime, local size, layout */
    DDIO_T_READDIR  = 18,  /* names and kinds in a directory, paginated */
    DDIO_T_MKDIR    = 19,
    DDIO_T_RMDIR    = 20,
    DDIO_T_RENAME   = 21,  /* file or directory */
    DDIO_T_UCXADDR  = 22,  /* client -> server, after AUTH: UCX wanted (reply: address) */
    DDIO_T_CANCEL   = 23,  /* client -> server: fail an XFER of ours now (no reply) */
    DDIO_T_LOCAL    = 24,  /* client -> server: hand me this file's datafile
                            * descriptors over my local socket (same host) */
    DDIO_T_SETATTR  = 25,  /* chmod / chown of a path (every server) */
    DDIO_T_ACTAS    = 26,  /* client -> server, right after AUTH: a mount acts for
                            * this user (trusted mount hosts only) */
    DDIO_T_LOCALSTAT = 27, /* client -> server: bytes its same-host descriptors
                            * moved for a handle (for the counters) */
    DDIO_T_WATCH    = 28,  /* client -> server: this connection hears INVAL */
    DDIO_T_INVAL    = 29,  /* server -> watcher: a path changed; answered INVAL|R */
    DDIO_T_SCRUB    = 30,  /* client -> server: check a copy's sectors against
                            * their checksums (and send their bytes) */
    DDIO_T_REPAIR   = 31,  /* client -> server: rewrite bad sectors of a copy
                            * with a good copy's bytes */
    DDIO_T_REBUILD  = 32,  /* client -> server: a replacement's id, a file
                            * rebuilt on it, writers fenced off */
    DDIO_T_ECREAD   = 33,  /* client -> server: bytes of an erasure-coded
                            * file's view (a lost server's units decoded) */
    /* DDIO_T_RESERVED_LO..HI-1 (34-39): unused numbers, never valid */
    DDIO_T_MEMBER   = 40,  /* client -> server: the deployment's membership
                            * record, read or changed (PROTOCOL.md "MEMBER") */
    DDIO_T_MAX      = 41
};
#define DDIO_T_RESERVED_LO 34u
#define DDIO_T_RESERVED_HI 40u
#define DDIO_REPLY 0x8000u

/* Errors of the membership (PROTOCOL.md "MEMBER"): a request on a
 * mirrored file whose epoch is not the server's (the reply's header
 * carries the server's), and a server the membership has out */
#define DDIO_E_EPOCH   EKEYEXPIRED
#define DDIO_E_OUT     EL2NSYNC

struct ddio_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;     /* enum ddio_type, | DDIO_REPLY for replies */
    uint32_t epoch;    /* requests: the membership epoch the client knows of
                        * the server; replies: the server's (PROTOCOL.md) */
    int32_t  status;   /* replies: 0 or errno */
    uint64_t req;      /* request id, echoed by replies and by PUT/GET/DATA */
    uint64_t len;      /* payload bytes following the header */
};

/* Header encode/decode. Decode returns 0, or -EPROTO (bad magic/type/len),
 * -EPROTONOSUPPORT (version mismatch). `max_payload` bounds hdr->len. */
void ddio_hdr_encode(const struct ddio_hdr *h, uint8_t out[DDIO_HDR_SIZE]);
int  ddio_hdr_decode(const uint8_t in[DDIO_HDR_SIZE], struct ddio_hdr *h,
                     uint64_t max_payload);
void ddio_hdr_init(struct ddio_hdr *h, uint16_t type, uint64_t req, uint64_t len);

/* ---- bounds-checked little-endian writer/reader ------------------------ */
struct ddio_wbuf {           /* growable output buffer */
    uint8_t *p;
    size_t len, cap;
    int err;                 /* sticky: -ENOMEM on allocation failure */
};
void ddio_wbuf_init(struct ddio_wbuf *w);
void ddio_wbuf_free(struct ddio_wbuf *w);
void ddio_put_u8(struct ddio_wbuf *w, uint8_t v);
void ddio_put_u16(struct ddio_wbuf *w, uint16_t v);
void ddio_put_u32(struct ddio_wbuf *w, uint32_t v);
void ddio_put_u64(struct ddio_wbuf *w, uint64_t v);
void ddio_put_bytes(struct ddio_wbuf *w, const void *p, size_t n);
void ddio_put_str(struct ddio_wbuf *w, const char *s);   /* u32 len + bytes */
/* reserve n bytes, return pointer to them (NULL on error) */
uint8_t *ddio_put_space(struct ddio_wbuf *w, size_t n);

struct ddio_rbuf {           /* reader over a received payload */
    const uint8_t *p;
    size_t len, off;
    int err;                 /* sticky: -EPROTO on any overrun/bad value */
};
void ddio_rbuf_init(struct ddio_rbuf *r, const void *p, size_t len);
uint8_t  ddio_get_u8(struct ddio_rbuf *r);
uint16_t ddio_get_u16(struct ddio_rbuf *r);
uint32_t ddio_get_u32(struct ddio_rbuf *r);
uint64_t ddio_get_u64(struct ddio_rbuf *r);
/* returns pointer into the payload, or NULL (and sets err) if n overruns */
const uint8_t *ddio_get_bytes(struct ddio_rbuf *r, size_t n);
/* copies a string of at most maxlen bytes into a malloc'd NUL-terminated
 * buffer; rejects embedded NULs. NULL + err on failure. */
char *ddio_get_str(struct ddio_rbuf *r, size_t maxlen);
/* 0 if the reader consumed everything without error, else -EPROTO */
int ddio_rbuf_done(const struct ddio_rbuf *r);

/* ---- message payloads ---------------------------------------------------
 * Each message has a struct, an encoder appending to a wbuf, and a decoder
 * returning 0 or a negative errno (-EPROTO for malformed input). Decoders that
 * allocate document what the caller frees (ddio_*_free). */

/* HELLO (client -> server) */
struct ddio_hello {
    uint32_t pid;
    uint32_t flags;          /* reserved, 0 */
    char *client;            /* host name, informational */
};
/* HELLO reply */
#define DDIO_SRV_AUTH_REQUIRED 1u
#define DDIO_SRV_UCX           2u   /* accepts UCXADDR: XFER data by UCX (ddio_ucx.h) */
#define DDIO_SRV_AUTH_MUNGE    8u   /* AUTH carries a MUNGE credential (ddio_munge.h) */
#define DDIO_SRV_UCX_EP        4u   /* an ATTACH may carry the client's worker
                                     * address: the server's own endpoint back */
struct ddio_hello_r {
    uint8_t  server_id[DDIO_ID_LEN];
    uint32_t ndisks;
    uint32_t flags;          /* DDIO_SRV_* */
    uint64_t block_size;     /* server transfer block size (bytes) */
    uint8_t  nonce[DDIO_NONCE_LEN];  /* server's challenge for AUTH, fresh per connection */
    char *name;              /* server's "host:port", for error messages */
};

/* AUTH (client -> server): the client's own nonce and its proof
 * HMAC(secret, client role, server id, server nonce, client nonce);
 * AUTH reply: the server's proof over the same nonces (server role). */
struct ddio_auth {
    uint8_t nonce[DDIO_NONCE_LEN];
    uint8_t mac[DDIO_MAC_LEN];
};
struct ddio_auth_r {
    uint8_t mac[DDIO_MAC_LEN];
};
/* AUTH to a DDIO_SRV_AUTH_MUNGE server: the client's nonce and a MUNGE
 * credential over ddio_munge_payload(client, id, Ns, Nc); the reply: the
 * server's credential over ddio_munge_payload(server, ...), for the
 * client's uid only. */
struct ddio_auth_munge {
    uint8_t nonce[DDIO_NONCE_LEN];
    char *cred;
};
struct ddio_auth_munge_r {
    char *cred;
};

/* A file's striping layout, stored with the file on every server holding it. */
struct ddio_layout_rec {
    uint64_t stripe_unit;
    uint32_t stripe_count;   /* number of servers holding stripes */
    uint32_t server_index;   /* this server's position, 0..stripe_count-1 */
    uint32_t ndisks;         /* disks of this server when created */
    uint64_t block_size;     /* server block size when created */
    uint8_t  ids[DDIO_MAX_SERVERS][DDIO_ID_LEN];  /* server ids in stripe order */
    uint32_t copies;         /* 1 (redundancy none), 2 or 3 (mirror): copy c of
                              * index p's units on server (p + c) % count
                              * (ddio_layout.h); 0 is sent as 1 */
    struct ddio_ec ec;       /* ec:K+M (ddio_ec.h; copies 1, K+M servers), or
                              * {0, 0}. On the wire in the copies word: copies
                              * | K << 8 | M << 16 */
};

/* the layout's redundancy word (ddio_layout.h): copies, or ec:K+M */
static inline uint32_t ddio_layout_redundancy(const struct ddio_layout_rec *l)
{
    return l->ec.k ? 1u | l->ec.k << 8 | l->ec.m << 16 : l->copies;
}

/* OPEN amode bits */
#define DDIO_O_RDONLY  0x01u
#define DDIO_O_WRONLY  0x02u
#define DDIO_O_RDWR    0x04u
#define DDIO_O_CREAT   0x08u
#define DDIO_O_EXCL    0x10u
#define DDIO_O_ONCE    0x20u     /* a create (CREAT|EXCL only) with the
                                  * creator's ids: stored with the file, so
                                  * its resend finds the file its own */
#define DDIO_O_LOCAL   0x40u     /* (RDONLY only) a LOCAL's socket name and
                                  * nonce: the read-only descriptors handed
                                  * over with the open, before its answer */
#define DDIO_O_MODE    0x80u     /* (with CREAT) the new file's permission
                                  * bits follow: 0666 less the creator's
                                  * umask; without it 0644 */
#define DDIO_LOCAL_NONCE 16u
#define DDIO_LOCAL_PREFIX "ddio-local/"
struct ddio_open {
    char *path;              /* relative to the storage root; confined */
    uint32_t amode;
    struct ddio_layout_rec layout;  /* proposed (used on create) */
    /* with DDIO_O_ONCE: the client process's id (non-zero) and its number
     * for the create, the same in every resend */
    uint64_t once_client, once_call;
    /* with DDIO_O_LOCAL (decoded: malloc'd, the caller frees it) */
    char *local_name;
    uint8_t local_nonce[DDIO_LOCAL_NONCE];
    uint32_t mode;           /* with DDIO_O_MODE: <= 07777 */
};
struct ddio_open_r {
    uint64_t handle;
    uint64_t local_size;
    uint32_t created;        /* 1 if this request created the file */
    struct ddio_layout_rec layout;  /* as stored */
};

struct ddio_handle_req {     /* CLOSE, STAT, SYNC */
    uint64_t handle;
};
struct ddio_u64_r {          /* STAT reply (local size), generic u64 reply */
    uint64_t value;
};
struct ddio_path_req {       /* DELETE, RMDIR, PSTAT */
    char *path;
    /* DELETE, RMDIR: the client's id and its number for the call, the same
     * in every resend (0, 0: none; PSTAT sends none): a done change's answer
     * is kept by them */
    uint64_t once_client, once_call;
};
#define DDIO_SS_GROW 0x1u    /* SETSIZE: copies only grow (an extending set_size) */
struct ddio_setsize {        /* SETSIZE: local size to truncate/extend to */
    uint64_t handle;
    uint64_t local_size;
    /* the logical size the local one comes from: a server holding copies
     * of other indices sizes each copy by it (UINT64_MAX: none given, the
     * copies are left alone) */
    uint64_t logical_size;
    uint32_t flags;          /* DDIO_SS_* */
};
struct ddio_prealloc {       /* PREALLOC: local byte range */
    uint64_t handle;
    uint64_t local_off;
    uint64_t local_len;
    uint64_t logical_size;   /* copies allocated for [0, this) (0: none) */
};

/* XFER: one participant's part of a read or write.
 * Independent I/O: nparticipants = 1, rank = 0, group = 0.
 * Collective I/O: the server waits until all nparticipants' XFERs with the
 * same (group, seq) have arrived, then runs them as one disk-directed pass. */
#define DDIO_X_READ   1u
#define DDIO_X_WRITE  2u
#define DDIO_XF_COLLECTIVE 0x1u
#define DDIO_XF_NOSORT     0x2u   /* do not sort blocks by physical address */
#define DDIO_XF_UCX        0x4u   /* data by UCX active messages: token and stream
                                   * length follow (docs/TRANSPORT.md) */
#define DDIO_XF_INLINE     0x8u   /* a one-participant write whose whole stream
                                   * follows the descriptor: no GET/DATA */
#define DDIO_XF_ONCE      0x10u   /* a write that must not run twice: client and
                                   * call id follow; a resend of a call the
                                   * server remembers gets the first DONE */
#define DDIO_XF_RESENT    0x20u   /* sent again after a lost connection or a
                                   * restarted server: a collective's gate runs
                                   * the participants that came (PROTOCOL.md
                                   * "Resending") */
#define DDIO_XF_COPY      0x40u   /* (reads of one participant only) served from
                                   * the mirror datafile of copy `copy` this
                                   * server holds (u32 tail, 1..2): the lost
                                   * server's part of a read of a mirrored file */
#define DDIO_XF_FOLD_PARITY 0x80u  /* (writes of whole groups of an erasure-coded
                                   * file) a fold's parity: each server writes
                                   * only the parity it holds of the groups,
                                   * drops its copies of their partial writes
                                   * and notes the parity as matching the
                                   * merged data (DESIGN.md 6.4 "The fold") */
#define DDIO_XF_FOLD_DATA  0x100u /* a fold's data: each server writes only its
                                   * data units in place and drops their
                                   * overlay extents */
#define DDIO_XF_INLINE_OWN 0x200u /* (with DDIO_XF_INLINE) the inline bytes are
                                   * only the server's own: the descriptor is
                                   * one range of a file without copies or
                                   * parity, and stream byte s is inline byte
                                   * local(first + s) - local(first), local()
                                   * the server's local offset (ddio_layout.h) */
#define DDIO_MAX_INLINE    (512u << 10) /* the largest inline stream */
#define DDIO_MAX_UCXADDR   16384u /* UCX worker address */
struct ddio_span {
    const uint8_t *p;
    uint64_t len;
};
struct ddio_xfer {
    uint64_t handle;
    uint32_t op;             /* DDIO_X_READ / DDIO_X_WRITE */
    uint32_t flags;          /* DDIO_XF_* */
    uint64_t group;          /* collective group id (random per open), 0 = none */
    uint64_t seq;            /* collective sequence number within group */
    uint32_t nparticipants;
    uint32_t rank;
    uint32_t timeout_ms;     /* how long the server may wait for the others */
    uint32_t desc_len;
    const uint8_t *desc;     /* encoded ddio_desc (points into the payload) */
    /* with DDIO_XF_UCX: what the client's PUT messages name (its own
     * handle for this call on this server) and the stream's length */
    uint64_t ucx_token, ucx_len;
    /* with DDIO_XF_INLINE: the stream's bytes (point into the payload) */
    uint32_t inline_len;
    const uint8_t *inline_data;
    /* with DDIO_XF_ONCE (writes only): the client process's random id and
     * its number for the call, the same in every resend */
    uint64_t once_client, once_call;
    uint32_t copy;           /* with DDIO_XF_COPY: 1..DDIO_MAX_COPIES-1 */
    /* encoding only: inline_npieces > 0, the inline bytes are these
     * pieces in turn (DDIO_XF_INLINE_OWN), not inline_data */
    const struct ddio_span *inline_pieces;
    uint32_t inline_npieces;
};
/* XFER reply (DONE) */
struct ddio_xfer_r {
    uint64_t bytes;          /* stream bytes this server moved for this rank */
    uint64_t local_size;     /* server's local size after the call */
    /* per-call counters for this server (same for every participant) */
    uint64_t desc_bytes;     /* descriptor bytes received, all participants */
    uint64_t blocks_read;
    uint64_t blocks_written;
    uint64_t nonconsec;      /* disk accesses not following the previous one */
    uint64_t bytes_to_rank;  /* bytes sent to this rank (PUT payload data) */
    uint64_t bytes_from_rank;/* bytes received from this rank (DATA) */
    uint64_t wait_us;        /* time waiting for all participants */
    uint64_t io_us;          /* time from plan to last block done */
    uint64_t sorted;         /* 1 if blocks were issued in physical order */
};

/* PUT / GET / DATA carry a list of stream segments.
 * PUT:  segs, then the segments' data concatenated (in segment order).
 * GET:  tag, segs; no data.
 * DATA: tag, then the data of the GET's segments concatenated. */
struct ddio_seg {
    uint64_t off;            /* stream offset */
    uint64_t len;
};
struct ddio_segs {
    uint32_t tag;            /* GET/DATA matching tag; 0 for PUT */
    uint32_t nseg;
    struct ddio_seg *seg;    /* decoded: malloc'd, caller frees */
    uint64_t total;          /* sum of lengths (computed, checked) */
};

/* LOCK: byte-range lock on logical file offsets (kept by stripe server 0).
 * cmd: SETLK (non-blocking, EAGAIN on conflict), SETLKW (blocking, up to the
 * request's timeout, then ETIMEDOUT), UNLCK. len 0 = to end of file; any
 * other range must not wrap past 2^64 (decoder: EPROTO, as PREALLOC). */
#define DDIO_LK_SETLK   1u
#define DDIO_LK_SETLKW  2u
#define DDIO_LK_UNLCK   3u
#define DDIO_LK_RD      1u
#define DDIO_LK_WR      2u
#define DDIO_LK_RECLAIM 1u   /* flags: a lock held before a reconnect, taken
                              * again (granted during the server's grace) */
struct ddio_lock {
    uint64_t handle;
    uint32_t cmd;
    uint32_t type;
    uint64_t start;
    uint64_t len;
    uint32_t timeout_ms;
    uint32_t flags;          /* DDIO_LK_RECLAIM; other bits must be 0 */
    uint64_t client;         /* the client process's id (ddio_client_id) */
};

/* ---- namespace (the ddio mount, tools/ddio-fuse) ----
 * PSTAT and RMDIR carry a ddio_path_req; "" or "/" names the root (PSTAT,
 * READDIR only). Names in a READDIR reply are single components. */
#define DDIO_K_FILE 1u
#define DDIO_K_DIR  2u
#define DDIO_NAME_MAX    255u           /* one path component */
#define DDIO_READDIR_MAX 4096u          /* entries per READDIR reply */
struct ddio_pstat_r {
    uint32_t kind;           /* DDIO_K_FILE / DDIO_K_DIR */
    uint32_t mode;           /* permission bits (<= 07777) */
    uint32_t uid, gid;       /* owner and group */
    uint64_t local_size;     /* file: this server's local size; dir: 0 */
    uint64_t mtime_ns;       /* ns since the epoch (newest datafile) */
    struct ddio_layout_rec layout;  /* file only (on the wire only then) */
};
struct ddio_readdir {
    char *path;
    char *after;             /* "" for the first page, else the last name
                              * of the page before: entries sorting after
                              * it (a name, or "", on the wire) */
    uint32_t max;            /* 1..DDIO_READDIR_MAX entries wanted */
};
struct ddio_dirent {
    char *name;
    uint32_t kind;
};
struct ddio_readdir_r {
    uint32_t more;           /* 1: entries follow the last one (then n >= 1); 0: the end */
    uint32_t n;
    struct ddio_dirent *ent; /* malloc'd; free with ddio_readdir_r_free */
};
struct ddio_mkdir {
    char *path;
    uint32_t mode;           /* <= 07777 */
    uint64_t once_client, once_call;   /* as RENAME's */
};
/* SETATTR: what says which of mode (chmod) and uid/gid (chown) to set */
#define DDIO_SA_MODE  1u
#define DDIO_SA_OWNER 2u
struct ddio_setattr {
    char *path;
    uint32_t what;           /* DDIO_SA_*, at least one */
    uint32_t mode;           /* <= 07777 */
    uint32_t uid, gid;
};
/* LOCALSTAT: what a handle's same-host descriptors read and wrote */
struct ddio_localstat {
    uint64_t handle, read, written;
};
/* WATCH: the watching client's id (its own changes are not sent back) */
struct ddio_watch {
    uint64_t client;
};
/* INVAL: what changed at path (DDIO_IV_*, at least one) */
#define DDIO_IV_NAME  1u     /* created, removed or renamed: its parent's names */
#define DDIO_IV_ATTR  2u     /* size, times, mode or owner */
#define DDIO_IV_TREE  4u     /* everything under the path (a directory renamed) */
#define DDIO_IV_ALL   7u
struct ddio_inval {
    uint32_t what;
    char *path;              /* normalized, relative to the root */
};
/* SCRUB: sectors of local bytes [off, off + len) of the view `copy` of the
 * handle's file this server holds (0: its own units; c >= 1: its mirror of
 * index (me - c) mod N; an erasure-coded file's parity, DDIO_SCRUB_PARITY,
 * and overlay, DDIO_SCRUB_OVERLAY) read from disk and checked against
 * their sums.
 * off sector-aligned; len <= DDIO_SCRUB_MAX, with DDIO_SC_DATA <=
 * DDIO_SCRUB_DATA_MAX (the bytes read come back, zeros past the end). */
#define DDIO_SCRUB_SECTOR   4096u
#define DDIO_SCRUB_MAX      (64u << 20)
#define DDIO_SCRUB_DATA_MAX (1u << 20)
#define DDIO_SCRUB_MAX_BAD  256u
#define DDIO_SC_DATA        1u
#define DDIO_SCRUB_COPIES   3u     /* copies: copy < this (DDIO_MAX_COPIES) */
#define DDIO_SCRUB_PARITY   DDIO_SCRUB_COPIES         /* ec: the parity view */
#define DDIO_SCRUB_OVERLAY  (DDIO_SCRUB_COPIES + 1u)  /* ec: the overlay view */
#define DDIO_SCRUB_VIEWS    (DDIO_SCRUB_COPIES + 2u)  /* views: copy < this */
struct ddio_scrub {
    uint64_t handle;
    uint32_t copy, flags;
    uint64_t off, len;
};
/* SCRUB|R: where it stopped (resume there; >= size: the end), the view's
 * local size, sectors found right, without a sum to check, and the local
 * offsets of those that disagree (at most DDIO_SCRUB_MAX_BAD: it stops at
 * the last); DDIO_SC_DATA: the bytes of [off, next) */
struct ddio_scrub_r {
    uint64_t next, size, verified, unknown;
    uint32_t nbad;
    uint64_t *bad;           /* malloc'd (ddio_scrub_r_free) */
    uint32_t data_len;
    const uint8_t *data;     /* into the payload */
};
/* ECREAD: len bytes (1..DDIO_ECREAD_MAX) at local offset off of a view of
 * an erasure-coded file on this server: DDIO_EV_DATA its data in place
 * (without the overlay), DDIO_EV_PARITY its parity units, DDIO_EV_OVERLAY
 * its overlay (ddio_ec.h's byte space); zeros past the view's end. What a
 * read that lost a server decodes that server's units from (DESIGN.md
 * 6.4). Another file's handle: EINVAL. */
#define DDIO_ECREAD_MAX     (1u << 20)
#define DDIO_ECREAD_MAX_EXT 4096u
#define DDIO_EV_DATA    0u
#define DDIO_EV_PARITY  1u
#define DDIO_EV_OVERLAY 2u
#define DDIO_EV_MERGED  3u   /* its data with its own overlay's bytes laid over
                              * (what a read returns) */
#define DDIO_EV_EXTENTS 4u   /* the overlay's extents alone (no bytes; len
                              * any size up to 2^32-1) */
#define DDIO_EV_FOLDING 5u   /* the groups in [off, off + len) whose parity
                              * here is in a fold (being written, or written
                              * from the merged data), each as an extent
                              * [g, g + 1); no bytes, len as EXTENTS' */
/* ECREAD|R pstate: which data the parity unit read matches */
#define DDIO_PS_INPLACE 0u   /* the data in place (DDIO_EV_DATA) */
#define DDIO_PS_MERGED  1u   /* the data merged (DDIO_EV_MERGED): folded, the
                              * fold not finished */
struct ddio_ecread {
    uint64_t handle;
    uint32_t view;
    uint32_t len;
    uint64_t off;
};
/* ECREAD|R: the file's logical size as this server knows it (the end of
 * every write and extending set_size it took part in), the bytes, and
 * with DDIO_EV_OVERLAY the overlay's extents meeting the range, clipped
 * and sorted (at most DDIO_ECREAD_MAX_EXT: data_len stops at the last) */
struct ddio_ecread_r {
    uint64_t logical_size;
    uint32_t pstate;         /* DDIO_EV_PARITY: DDIO_PS_*; else 0 */
    uint32_t data_len;
    const uint8_t *data;     /* into the payload */
    uint32_t next;           /* extents */
    uint64_t *ext;           /* 2 * next: lo, hi (malloc'd: ddio_ecread_r_free) */
};
void ddio_enc_ecread(struct ddio_wbuf *w, const struct ddio_ecread *m);
int  ddio_dec_ecread(const void *p, size_t n, struct ddio_ecread *m);
void ddio_enc_ecread_r(struct ddio_wbuf *w, const struct ddio_ecread_r *m);
int  ddio_dec_ecread_r(const void *p, size_t n, struct ddio_ecread_r *m);
void ddio_ecread_r_free(struct ddio_ecread_r *m);

/* REPAIR: whole sectors at local offset off (sector-aligned) of view `copy`
 * (as SCRUB's), data_len a multiple of the sector, <= DDIO_SCRUB_DATA_MAX.
 * Each is written only if, under the block lock, its bytes on disk still
 * disagree with their sum and the offered bytes agree with it (or the
 * bytes on disk are the offered ones: then the sum was wrong, and is
 * rewritten). */
struct ddio_repair {
    uint64_t handle;
    uint32_t copy;
    uint64_t off;
    uint32_t data_len;
    const uint8_t *data;     /* into the payload */
};
/* REPAIR|R: sectors rewritten, found right already (or without a sum),
 * refused (the offered bytes disagree with the sum too) */
struct ddio_repair_r {
    uint32_t repaired, good, refused;
};
/* REBUILD (PROTOCOL.md "REBUILD"): op and what it names */
#define DDIO_RB_ADOPT   1u   /* id: a --replacement server takes the lost one's id */
#define DDIO_RB_BEGIN   2u   /* path, layout: the file made here, marked unbuilt, fenced */
#define DDIO_RB_DONE    3u   /* path: datafiles synced, mark removed, fence lifted */
#define DDIO_RB_FENCE   4u   /* path: no other connection may open it (EBUSY if one has) */
#define DDIO_RB_UNFENCE 5u   /* path */
#define DDIO_RB_PROGRESS 6u  /* done, total, rate: where the rebuild stands (ddio status) */
#define DDIO_RB_MISSED  7u   /* member: the paths noted for that member while out */
#define DDIO_RB_RESYNCED 8u  /* member, path: its note cleared (resynced onto it) */
#define DDIO_RB_REDO    9u   /* path, layout: BEGIN, but a file here is emptied and
                              * marked unbuilt too (a returning member's resync) */
#define DDIO_RB_DOUBT   10u  /* the mirrored files a failed write left in doubt here */
#define DDIO_RB_SETTLED 11u  /* path: its copies were made to agree; no longer in doubt */
#define DDIO_RB_FREEZE  12u  /* member: changes that would note it refused (send again) */
#define DDIO_RB_THAW    13u  /* member: FREEZE lifted */
#define DDIO_RB_FOLD    14u  /* path, groups [glo, ghi): the parity held of them
                              * marked being written, durably (a fold begins) */
#define DDIO_RB_FOLDED  15u  /* path, groups: their fold done everywhere; the
                              * parity matches the data in place again */
#define DDIO_RB_MAX_PATHS 256u   /* paths in one MISSED reply */
struct ddio_rebuild {
    uint32_t op;
    uint8_t id[DDIO_ID_LEN];         /* ADOPT; zeros otherwise */
    char *path;                      /* "" for ADOPT, PROGRESS, MISSED and DOUBT */
    uint32_t member;                 /* MISSED's, RESYNCED's, FREEZE's and THAW's:
                                      * an index in the membership record */
    struct ddio_layout_rec layout;   /* BEGIN's and REDO's; zeros (count 0) otherwise */
    uint64_t done, total, rate;      /* PROGRESS's: bytes copied, bytes to copy in all,
                                      * bytes a second lately */
    uint64_t glo, ghi;               /* FOLD's and FOLDED's: the groups */
};
/* REBUILD|R: BEGIN's DDIO_RB_BUILT (the file is here and not marked: a
 * rebuild done, or made here since; nothing was changed) or DDIO_RB_BEGUN;
 * 0 for the other ops */
#define DDIO_RB_BEGUN 1u
#define DDIO_RB_BUILT 2u
struct ddio_rebuild_r {
    uint32_t state;
    uint32_t npaths;                 /* MISSED's, DOUBT's (at most DDIO_RB_MAX_PATHS) */
    char **paths;
};
/* How a client's rebuild copies (not on the wire: ddio_core_io.h
 * ddio_rebuild_copy, ddio_client_rebuild_copy): at most rate bytes a
 * second (0: no limit) since t0_ms (ddio_now_ms clock), when *done was
 * base; each chunk counted up in *done and reported to progress (may be
 * NULL). */
struct ddio_rebuild_opt {
    uint64_t rate;
    int64_t t0_ms;
    uint64_t base;
    uint64_t *done;
    void (*progress)(void *arg, uint64_t done);
    void *arg;
    int whole;               /* an erasure-coded file in doubt (a torn write:
                              * parity that may disagree with its data on
                              * the others too): rewritten whole to every
                              * server, not to the one brought back alone */
};
/* What a client's scrub of a file found, in sectors (not on the wire:
 * ddio_core_io.h ddio_scrub_fh, ddio_client_scrub) */
struct ddio_scrub_tally {
    uint64_t verified, unknown, bad, repaired, unrepairable;
    uint32_t no_sums;        /* views that keep no checksums (not checked) */
    uint64_t bytes;          /* local bytes read by the servers */
};
/* ACTAS: the identity a trusted mount asserts for its connection */
struct ddio_actas {
    uint32_t uid, gid;
};
struct ddio_rename {
    char *from, *to;
    /* the client's id and its number for the call, the same in every
     * resend (0, 0: none): a done rename's answer is kept by them */
    uint64_t once_client, once_call;
};

/* MEMBER (PROTOCOL.md "MEMBER"): the deployment's membership record, one
 * value per epoch agreed by a majority of its servers (single-decree Paxos
 * per epoch: PREPARE and ACCEPT with a ballot, then COMMIT of the chosen
 * value). A value names every member of the deployment and which are out. */
#define DDIO_MB_GET     1u   /* the server's record */
#define DDIO_MB_PREPARE 2u   /* promise no ballot below `ballot` for `epoch` */
#define DDIO_MB_ACCEPT  3u   /* accept `val` for `epoch` under `ballot` */
#define DDIO_MB_COMMIT  4u   /* `val` was chosen for `epoch`: adopt it */
#define DDIO_MB_SEAL    5u   /* begin a new generation of the server's own notes of
                              * changed mirrored files; the reply's `sealed` is the
                              * generation closed */
#define DDIO_MB_CONFIRM 6u   /* `epoch` is current and this server in it, read from a
                              * majority after generation `ballot` was sealed: drop
                              * the notes up to it */
struct ddio_member_val {
    uint32_t n;                                  /* members; 0: none (epoch 0) */
    uint8_t ids[DDIO_MAX_SERVERS][DDIO_ID_LEN];  /* distinct */
    uint8_t out[DDIO_MAX_SERVERS];               /* 1: out; at least one in */
};
struct ddio_member {
    uint32_t op;             /* DDIO_MB_* */
    uint32_t epoch;          /* GET: 0; else the epoch decided, >= 1 */
    uint64_t ballot;         /* PREPARE, ACCEPT: >= 1; else 0 */
    struct ddio_member_val val;   /* ACCEPT, COMMIT: n >= 1; else n = 0 */
};
/* MEMBER|R (and a server's stored state): its committed record, the
 * ballot it promised and the value it accepted for epoch + 1 (acc.n 0,
 * acc_ballot 0: none) */
struct ddio_member_r {
    uint32_t epoch;
    struct ddio_member_val val;
    uint64_t promised, acc_ballot;
    struct ddio_member_val acc;
    /* SEAL: the generation sealed; CONFIRM: generations dropped; else 0 */
    uint64_t sealed;
};

/* STATS reply: key/value counters */
struct ddio_kv { char *key; uint64_t val; };
struct ddio_stats_r {
    uint32_t n;
    struct ddio_kv *kv;      /* malloc'd; free with ddio_stats_r_free */
};

void ddio_enc_hello(struct ddio_wbuf *w, const struct ddio_hello *m);
int  ddio_dec_hello(const void *p, size_t n, struct ddio_hello *m);   /* free m->client */
void ddio_enc_hello_r(struct ddio_wbuf *w, const struct ddio_hello_r *m);
int  ddio_dec_hello_r(const void *p, size_t n, struct ddio_hello_r *m); /* free m->name */

/* fixed size: exactly DDIO_NONCE_LEN + DDIO_MAC_LEN / DDIO_MAC_LEN bytes */
void ddio_enc_auth(struct ddio_wbuf *w, const struct ddio_auth *m);
int  ddio_dec_auth(const void *p, size_t n, struct ddio_auth *m);
void ddio_enc_auth_r(struct ddio_wbuf *w, const struct ddio_auth_r *m);
int  ddio_dec_auth_r(const void *p, size_t n, struct ddio_auth_r *m);
void ddio_enc_auth_munge(struct ddio_wbuf *w, const struct ddio_auth_munge *m);
int  ddio_dec_auth_munge(const void *p, size_t n, struct ddio_auth_munge *m);   /* free m->cred */
void ddio_enc_auth_munge_r(struct ddio_wbuf *w, const struct ddio_auth_munge_r *m);
int  ddio_dec_auth_munge_r(const void *p, size_t n, struct ddio_auth_munge_r *m); /* free m->cred */

/* Only the first stripe_count ids are on the wire. The decoder requires
 * stripe_unit > 0, 1 <= stripe_count <= DDIO_MAX_SERVERS and
 * server_index < stripe_count (also in OPEN requests without CREAT), and
 * 1 <= copies <= stripe_count; an OPEN's proposed layout may carry copies
 * 0: the server's default (--redundancy). An ec:K+M layout has copies 1,
 * K and M in range and K+M == stripe_count. */
void ddio_enc_layout(struct ddio_wbuf *w, const struct ddio_layout_rec *l);
int  ddio_dec_layout(struct ddio_rbuf *r, struct ddio_layout_rec *l);
/* the layout without its copies (records stored before version 3), copies 1 */
int  ddio_dec_layout_base(struct ddio_rbuf *r, struct ddio_layout_rec *l);
void ddio_enc_open(struct ddio_wbuf *w, const struct ddio_open *m);
int  ddio_dec_open(const void *p, size_t n, struct ddio_open *m);     /* free m->path */
void ddio_enc_open_r(struct ddio_wbuf *w, const struct ddio_open_r *m);
int  ddio_dec_open_r(const void *p, size_t n, struct ddio_open_r *m);

/* CANCEL: the req of an XFER on this connection, and why (for the message
 * every participant gets) */
#define DDIO_MAX_CANCEL_WHY 400u
struct ddio_cancel {
    uint64_t req;
    char *why;               /* decoded: malloc'd */
    uint64_t group, seq;     /* optional (0, 0: none): every XFER of this
                              * collective call, whoever sent it */
};
void ddio_enc_cancel(struct ddio_wbuf *w, uint64_t req, const char *why, uint64_t group,
                     uint64_t seq);
int  ddio_dec_cancel(const void *p, size_t n, struct ddio_cancel *m);
/* LOCAL: a handle of this connection, a nonce, the abstract AF_UNIX
 * SOCK_SEQPACKET name (without its leading NUL) the client listens on, and
 * flags. The server connects there and sends one message: struct
 * ddio_local_msg's encoding with SCM_RIGHTS descriptors (the size page, then
 * one datafile per disk: read-only, or read-write when the message's flags
 * grant DDIO_LOCAL_WRITE); then it replies (empty). */
#define DDIO_MAX_LOCAL_NAME 100u
#define DDIO_MAX_LOCAL_DISKS 64u
#define DDIO_LOCAL_WRITE 0x1u /* writes too: read-write descriptors, and the
                               * size page writable (the client raises it) */
struct ddio_local_req {
    uint64_t handle;
    uint8_t nonce[DDIO_LOCAL_NONCE];
    char *name;              /* decoded: malloc'd; starts with DDIO_LOCAL_PREFIX */
    uint32_t flags;          /* DDIO_LOCAL_WRITE: asked for (a writable handle) */
};
struct ddio_local_msg {      /* on the local socket, beside the descriptors */
    uint8_t nonce[DDIO_LOCAL_NONCE];
    uint32_t ndisks;         /* datafile descriptors after the size page's */
    uint64_t block_size;     /* local space -> disk striping unit */
    uint32_t flags;          /* DDIO_LOCAL_WRITE: granted */
};
/* a size page raised to at least v: a compare-and-swap maximum, since the
 * server and every same-host writer raise it concurrently */
static inline void ddio_size_raise(uint64_t *page, uint64_t v)
{
    uint64_t cur = __atomic_load_n(page, __ATOMIC_ACQUIRE);
    while (cur < v && !__atomic_compare_exchange_n(page, &cur, v, 0, __ATOMIC_ACQ_REL,
                                                   __ATOMIC_ACQUIRE))
        ;
}
void ddio_enc_local_req(struct ddio_wbuf *w, const struct ddio_local_req *m);
int  ddio_dec_local_req(const void *p, size_t n, struct ddio_local_req *m); /* free m->name */
void ddio_enc_local_msg(struct ddio_wbuf *w, const struct ddio_local_msg *m);
int  ddio_dec_local_msg(const void *p, size_t n, struct ddio_local_msg *m);
void ddio_enc_handle_req(struct ddio_wbuf *w, const struct ddio_handle_req *m);
int  ddio_dec_handle_req(const void *p, size_t n, struct ddio_handle_req *m);
void ddio_enc_u64_r(struct ddio_wbuf *w, const struct ddio_u64_r *m);
int  ddio_dec_u64_r(const void *p, size_t n, struct ddio_u64_r *m);
void ddio_enc_path_req(struct ddio_wbuf *w, const struct ddio_path_req *m);
int  ddio_dec_path_req(const void *p, size_t n, struct ddio_path_req *m); /* free m->path */
void ddio_enc_setsize(struct ddio_wbuf *w, const struct ddio_setsize *m);
int  ddio_dec_setsize(const void *p, size_t n, struct ddio_setsize *m);
void ddio_enc_prealloc(struct ddio_wbuf *w, const struct ddio_prealloc *m);
int  ddio_dec_prealloc(const void *p, size_t n, struct ddio_prealloc *m);

void ddio_enc_xfer(struct ddio_wbuf *w, const struct ddio_xfer *m);
/* m->desc points into p; the descriptor itself is decoded by ddio_desc_decode.
 * Requires nparticipants >= 1 and rank < nparticipants. */
int  ddio_dec_xfer(const void *p, size_t n, struct ddio_xfer *m);
void ddio_enc_xfer_r(struct ddio_wbuf *w, const struct ddio_xfer_r *m);
int  ddio_dec_xfer_r(const void *p, size_t n, struct ddio_xfer_r *m);

/* Segment lists. The encoders write only the list part; the caller appends
 * data (PUT/DATA). The decoders consume the list part and report, through
 * *hdr_len, where the data begins; they check nseg <= DDIO_MAX_SEGS, that no
 * length is 0, that total fits in the remaining payload (PUT/DATA: exactly).
 * Wire: PUT = nseg, segs, data; GET = tag, nseg, segs; DATA = tag, data.
 * They never read the data bytes, so a receiver may pass a buffer holding
 * only the list part with n = the full payload length (hdr.len).
 * ddio_dec_data checks only the tag: the caller compares n - hdr_len with
 * the total of the GET it answers. */
void ddio_enc_put(struct ddio_wbuf *w, const struct ddio_segs *m);
int  ddio_dec_put(const void *p, size_t n, struct ddio_segs *m, size_t *hdr_len);
void ddio_enc_get(struct ddio_wbuf *w, const struct ddio_segs *m);
int  ddio_dec_get(const void *p, size_t n, struct ddio_segs *m);
void ddio_enc_data(struct ddio_wbuf *w, uint32_t tag);  /* data follows */
int  ddio_dec_data(const void *p, size_t n, uint32_t *tag, size_t *hdr_len);
void ddio_segs_free(struct ddio_segs *m);

/* UCXADDR: no payload. The reply: the server's random cookie for this
 * connection and its UCX worker address (1..DDIO_MAX_UCXADDR bytes; points
 * into the payload). The client connects to that address and sends an
 * ATTACH active message naming the cookie, whose reply endpoint the server
 * keeps: the server never parses an address a client sent. An error reply
 * leaves the connection on TCP. */
void ddio_enc_ucxaddr_r(struct ddio_wbuf *w, uint64_t cookie, const void *addr, uint32_t len);
int  ddio_dec_ucxaddr_r(const void *p, size_t n, uint64_t *cookie, const uint8_t **addr,
                        uint32_t *len);

/* UCX active message headers (the data is the message's body):
 * PUT    (server -> client): the XFER's token, then the stream segments the
 *        body fills, in order (GET's wire form, tag 0);
 * DATA   (client -> server): the connection's cookie, the XFER's request id
 *        and the GET's tag; the body is the GET's bytes;
 * ATTACH (client -> server, with UCX's reply endpoint): the cookie (8 bytes). */
#define DDIO_AM_PUT    1u
#define DDIO_AM_DATA   2u
#define DDIO_AM_ATTACH 3u
#define DDIO_AM_DATA_HDR 20u
void ddio_enc_am_put(struct ddio_wbuf *w, uint64_t token, const struct ddio_segs *m);
int  ddio_dec_am_put(const void *p, size_t n, uint64_t *token, struct ddio_segs *m);
void ddio_enc_am_data(uint8_t out[DDIO_AM_DATA_HDR], uint64_t cookie, uint64_t req, uint32_t tag);
int  ddio_dec_am_data(const void *p, size_t n, uint64_t *cookie, uint64_t *req, uint32_t *tag);

void ddio_enc_lock(struct ddio_wbuf *w, const struct ddio_lock *m);
int  ddio_dec_lock(const void *p, size_t n, struct ddio_lock *m);

void ddio_enc_stats_r(struct ddio_wbuf *w, const struct ddio_stats_r *m);
int  ddio_dec_stats_r(const void *p, size_t n, struct ddio_stats_r *m);
void ddio_stats_r_free(struct ddio_stats_r *m);
/* the value of counter `key`; *found (when not NULL) says whether there
 * is one, else 0 is returned */
uint64_t ddio_stats_r_get(const struct ddio_stats_r *m, const char *key, int *found);

void ddio_enc_pstat_r(struct ddio_wbuf *w, const struct ddio_pstat_r *m);
int  ddio_dec_pstat_r(const void *p, size_t n, struct ddio_pstat_r *m);
void ddio_enc_readdir(struct ddio_wbuf *w, const struct ddio_readdir *m);
int  ddio_dec_readdir(const void *p, size_t n, struct ddio_readdir *m);   /* free m->path, m->after */
/* names: non-empty, no '/', not "." or "..", at most DDIO_NAME_MAX bytes */
void ddio_enc_readdir_r(struct ddio_wbuf *w, const struct ddio_readdir_r *m);
int  ddio_dec_readdir_r(const void *p, size_t n, struct ddio_readdir_r *m);
void ddio_readdir_r_free(struct ddio_readdir_r *m);
void ddio_enc_mkdir(struct ddio_wbuf *w, const struct ddio_mkdir *m);
int  ddio_dec_mkdir(const void *p, size_t n, struct ddio_mkdir *m);       /* free m->path */
void ddio_enc_setattr(struct ddio_wbuf *w, const struct ddio_setattr *m);
int  ddio_dec_setattr(const void *p, size_t n, struct ddio_setattr *m);   /* free path */
void ddio_enc_localstat(struct ddio_wbuf *w, const struct ddio_localstat *m);
int  ddio_dec_localstat(const void *p, size_t n, struct ddio_localstat *m);
void ddio_enc_watch(struct ddio_wbuf *w, const struct ddio_watch *m);
int  ddio_dec_watch(const void *p, size_t n, struct ddio_watch *m);
void ddio_enc_inval(struct ddio_wbuf *w, const struct ddio_inval *m);
int  ddio_dec_inval(const void *p, size_t n, struct ddio_inval *m);       /* free m->path */
void ddio_enc_scrub(struct ddio_wbuf *w, const struct ddio_scrub *m);
int  ddio_dec_scrub(const void *p, size_t n, struct ddio_scrub *m);
void ddio_enc_scrub_r(struct ddio_wbuf *w, const struct ddio_scrub_r *m);
/* free with ddio_scrub_r_free */
int  ddio_dec_scrub_r(const void *p, size_t n, struct ddio_scrub_r *m);
void ddio_scrub_r_free(struct ddio_scrub_r *m);
void ddio_enc_rebuild(struct ddio_wbuf *w, const struct ddio_rebuild *m);
int  ddio_dec_rebuild(const void *p, size_t n, struct ddio_rebuild *m);    /* free m->path */
void ddio_enc_rebuild_r(struct ddio_wbuf *w, const struct ddio_rebuild_r *m);
int  ddio_dec_rebuild_r(const void *p, size_t n, struct ddio_rebuild_r *m);
void ddio_rebuild_r_free(struct ddio_rebuild_r *m);
void ddio_enc_repair(struct ddio_wbuf *w, const struct ddio_repair *m);
int  ddio_dec_repair(const void *p, size_t n, struct ddio_repair *m);
void ddio_enc_repair_r(struct ddio_wbuf *w, const struct ddio_repair_r *m);
int  ddio_dec_repair_r(const void *p, size_t n, struct ddio_repair_r *m);
void ddio_enc_member(struct ddio_wbuf *w, const struct ddio_member *m);
int  ddio_dec_member(const void *p, size_t n, struct ddio_member *m);
void ddio_enc_member_r(struct ddio_wbuf *w, const struct ddio_member_r *m);
int  ddio_dec_member_r(const void *p, size_t n, struct ddio_member_r *m);
void ddio_enc_actas(struct ddio_wbuf *w, const struct ddio_actas *m);
int  ddio_dec_actas(const void *p, size_t n, struct ddio_actas *m);
void ddio_enc_rename(struct ddio_wbuf *w, const struct ddio_rename *m);
int  ddio_dec_rename(const void *p, size_t n, struct ddio_rename *m);     /* free from, to */

/* error reply payload: one string */
void ddio_enc_err(struct ddio_wbuf *w, const char *msg);
int  ddio_dec_err(const void *p, size_t n, char **msg);   /* free *msg */

const char *ddio_type_name(uint16_t type);

#endif
