/* The engine's own types and its core's calls (engine.c), shared by the
 * engine's files (engine_slots.c, engine_getput.c, engine_write.c,
 * engine_pass.c, gate.c); the rest of the server uses engine.h. */
#ifndef DDIO_SRV_ENGINE_INT_H
#define DDIO_SRV_ENGINE_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "ddio_desc.h"
#include "ddio_layout.h"
#include "ddio_net.h"             /* the clock */
#include "disk.h"
#include "engine.h"
#include "planner.h"
#include "stats.h"
#include "store.h"

/* --max-call-memory: half for the participants' decoded descriptors, half
 * for the block plan; what one node / one collected block entry costs
 * (the node, a list entry's arrays; the entry, its sort and order copies) */
#define DESC_NODE_BYTES  96u
#define PLAN_BLOCK_BYTES 48u
#define SEGS_PER_MSG 1024u

struct part {
    struct xp *ep;               /* referenced */
    uint64_t req;
    uint32_t rank;
    int present, answered;
    struct ddio_desc d;
    int have_desc;
    int64_t first, end;          /* descriptor bounds (logical) */
    uint64_t bytes, to, from;
    int64_t last_ms;             /* last message queued to it (heartbeats) */
    const uint8_t *inl;          /* DDIO_XF_INLINE: its stream, in the request's
                                  * payload (one participant: the payload lives
                                  * until the XFER ends) */
    int inl_own;                 /* DDIO_XF_INLINE_OWN: inl holds only this
                                  * server's bytes, local offset inl_lo first */
    uint64_t inl_lo;
    int once;                    /* DDIO_XF_ONCE: its DONE is remembered (replay.h) */
    uint64_t once_client, once_call;
    uint32_t gets_out;           /* its GETs not answered yet (x->mu): named
                                  * when the XFER times out */
};

/* what a view's local bytes are (struct xview, slot.kind) */
enum { V_DATA = 0,               /* the server's own units */
       V_COPY,                   /* a mirror of another index's units */
       V_PARITY,                 /* an ec:K+M file's parity units held here */
       V_OVERLAY };              /* its overlay: partial groups' writes */

enum { S_FREE = 0, S_READ, S_RMW, S_DATA, S_HELD, S_WRITE,
       S_SENT };                 /* a mapped read block whose puts left without
                                  * a sync yet (put_flush_sent) */
enum { EXACT_RUNS = 2 };         /* slot.exact: several ranges */

struct slot {
    struct xfer *x;
    unsigned idx;
    int state;
    int io_busy;                 /* disk request outstanding */
    int locked;                  /* holds the block lock */
    struct sums *sums_begun;     /* its write counted by sums_begin_write on
                                  * these sums, not ended yet (slot_release) */
    uint64_t k, a;               /* local block number and first local offset */
    struct ofile *of;            /* the datafiles the block is in: the file's,
                                  * a mirror this server holds, or its parity
                                  * (its view) */
    int kind;                    /* its view's V_* (engine_parity.h: V_PARITY,
                                  * V_OVERLAY) */
    uint8_t *scratch;            /* a parity block's K data blocks, pulled */
    uint32_t me;                 /* the stripe index of its view */
    struct disk *disk;
    void *buf;
    uint64_t old_valid;          /* block bytes below the local size at issue */
    uint64_t write_hi;           /* one past the highest byte written in block */
    uint64_t write_lo;           /* first byte written in block */
    uint64_t io_lo;              /* first block byte read or written (4 KiB aligned,
                                  * but for an exact write) */
    int full, overlap;
    int abandon;                 /* a send that never ended may read it: never reuse */
    int cached;                  /* its disk request goes through the page cache */
    int contig;                  /* writes: one writer, one range [write_lo, write_hi) */
    int exact;                   /* writes: only [write_lo, write_hi) goes to the file,
                                  * through the page cache (no read-modify-write);
                                  * EXACT_RUNS: only the bytes written (runs) */
    struct disk_seg *runs;       /* EXACT_RUNS: the block's written ranges */
    size_t nruns, capruns;
    uint32_t pending;            /* GET answers outstanding (x->mu) */
    uint32_t next_part;          /* overlap mode: next participant to pull */
    uint64_t ord;                /* writes: issue order among its disk's blocks */
    int64_t t_pull_us;           /* writes: when the block's first GET went out */
    struct disk_req dr;
    const uint8_t *src;          /* writes: block bytes [src_lo, src_hi) are at
                                  * src, in place in an inline XFER's message
                                  * (get_send), not copied into buf; NULL:
                                  * buf holds the block's bytes */
    uint64_t src_lo, src_hi;
    void *map;                   /* reads: block byte io_lo in the datafile's
                                  * mapping (store_fmap_get) of its cached
                                  * pages, that the puts send from instead of
                                  * buf (engine_slots.c "one copy"); NULL: buf */
    struct fmap *fmap;           /* that mapping, held until its sends end */
};

struct xfer {
    struct server *srv;
    struct ofile *of;
    uint64_t group, seq;
    uint32_t op, flags, n, timeout_ms;
    uint32_t beat_ms;            /* PROGRESS after this much silence */
    int64_t next_beat_ms;        /* no participant is due before this (x->mu) */
    struct part *parts;          /* indexed by rank */
    uint32_t arrived;
    int64_t t_first_us;
    int resent;                  /* some participant's XFER is a resend */
    int64_t last_arrival_ms;     /* the latest participant came then */
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* CLOCK_MONOTONIC */
    int status;
    char msg[512];
    struct xfer *next;
    uint32_t copy;               /* DDIO_XF_COPY: the copy read (else 0) */
    /* running */
    struct ddio_stripe S;
    uint32_t me;
    /* the byte spaces the pass covers (planner.h's views): the file's own
     * datafiles (index me); a mirrored write adds the mirrors this server
     * holds; a copy read has only that copy */
    struct xview { struct ofile *of; uint32_t me; int kind; } views[STORE_VIEWS];
    uint32_t nviews;
    uint64_t B;
    uint64_t *blocks;
    size_t nblocks;
    struct slot *slots;
    unsigned nslots, inflight;
    unsigned nsent;              /* slots in S_SENT */
    struct store_kick kick;      /* the last writeback start, due after DONE */
    int kick_due;
    int of_answered;             /* a DONE went out: its hold on of is marked
                                  * answered (store_answered) */
    int answered_early;          /* DONE went out while mapped blocks' sends were
                                  * still ending (engine_pass.c pipeline) */
    int64_t t_run_us;            /* when its pass began */
    unsigned *ready, nready;
    uint32_t next_tag;
    uint64_t *bitmap;
    struct ddio_ec_codec *codec; /* an ec:K+M write's parity arithmetic */
    uint64_t *partial;           /* an ec:K+M write's groups it covers in part
                                  * (sorted): their bytes go to the overlays */
    size_t npartial;
    uint64_t *w_issued, *w_next; /* per disk: writes issued, next one to submit */
    struct xfer_counters ctr;
};

struct engine {
    pthread_mutex_t mu;
    struct xfer *gates;          /* collectives waiting for participants */
    struct xfer *running;
};

/* A GET in flight: the transport's view (g) and where its bytes go. One
 * allocation, freed by engine_get_done / engine_get_drop or after cancel. */
struct pseg { uint8_t *bufp; int64_t L; };   /* block address of stream byte L */
struct pget {
    struct xp_get g;
    struct xfer *x;
    struct slot *s;
    struct part *p;
    struct pseg *seg;            /* one per g.seg */
};

static inline struct pget *pget_of(struct xp_get *g)
{
    return (struct pget *)((char *)g - offsetof(struct pget, g));
}

/* a participant's bytes in one stripe-unit piece of a block */
struct bseg { uint64_t s_lo, s_hi, boff; int64_t L; };

/* ---- small helpers ------------------------------------------------------------- */

/* an ec:K+M write covers group g in part (its bytes go to the overlays) */
static inline int ec_partial(const struct xfer *x, uint64_t g)
{
    return plan_sorted_has(x->partial, x->npartial, g);
}

/* a collective call, also with one participant (MPI_COMM_SELF) */
static inline int is_collective(const struct xfer *x)
{
    return x->n > 1 || (x->flags & DDIO_XF_COLLECTIVE) != 0;
}

static inline int64_t deadline_of(const struct xfer *x)
{
    return ddio_now_ms() + x->timeout_ms;
}

static inline int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static inline const char *op_name(uint32_t op)
{
    return op == DDIO_X_READ ? "read" : "write";
}

static inline size_t round4k(uint64_t n)
{
    return (size_t)((n + 4095) & ~(uint64_t)4095);
}

/* block byte boff of a read block as its puts take it: from the mapping
 * of the cached pages, else from the buffer the disk request filled */
static inline uint8_t *slot_bytes(const struct slot *s, uint64_t boff)
{
    return s->map ? (uint8_t *)s->map + (boff - s->io_lo) : (uint8_t *)s->buf + boff;
}

/* end of the sector holding byte n-1 of a block, at most the block's end */
static inline uint64_t sector_end(const struct xfer *x, uint64_t n)
{
    return round4k(n) < x->B ? round4k(n) : x->B;
}

/* offset in the block of p's first byte in segment g */
static inline uint64_t seg_lo(const struct part *p, const struct bseg *g)
{
    return g->boff + (uint64_t)(ddio_desc_addr(&p->d, g->s_lo) - g->L);
}

/* offset in the block one past p's last byte in segment g */
static inline uint64_t seg_hi(const struct part *p, const struct bseg *g)
{
    int64_t last = ddio_desc_addr(&p->d, g->s_hi - 1);
    return g->boff + (uint64_t)(last - g->L) + 1;
}

/* record the first failure (x->mu held); the message names the server */
void xfer_fail_locked(struct xfer *x, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define FAIL(x, err, ...) do { \
        pthread_mutex_lock(&(x)->mu); xfer_fail_locked((x), (err), __VA_ARGS__); \
        pthread_mutex_unlock(&(x)->mu); } while (0)

/* the XFER's status (0, or its first failure's errno) */
int xfer_failed(struct xfer *x);
/* heartbeats: x->mu held, the next one due; the end of the next wait slice */
int64_t xfer_beat_locked(struct xfer *x);
int64_t xfer_beat_slice(struct xfer *x, int64_t deadline_ms);
struct xfer *xfer_new(struct server *srv, const struct ddio_xfer *m, struct ofile *of);
void xfer_free(struct xfer *x);
void xfer_list_remove(struct xfer **head, struct xfer *x);
size_t xfer_block_segs(const struct xfer *x, const struct slot *s, const struct part *p,
                       uint64_t *o, uint64_t end, struct bseg *out, size_t cap);
/* the views of the pass (x->views); 0, or -EINVAL with x failed: a copy
 * this server does not hold */
int xfer_views(struct xfer *x);
/* the local size DONE reports: its first view's (a copy read's: the copy's) */
uint64_t xfer_local_size(struct xfer *x);
/* events: slot s is ready (x->mu held); the next one, or NULL */
void xfer_post_locked(struct xfer *x, struct slot *s);
struct slot *xfer_wait_event(struct xfer *x, int drain);
/* is an event ready (engine thread; it does not wait)? */
int xfer_has_event(struct xfer *x);
/* dropped participants (engine_conn_dropped) */
int xfer_part_dropped(const struct part *p);
void xfer_fail_if_dropped_locked(struct xfer *x);
void xfer_fail_if_dropped(struct xfer *x);

#endif
