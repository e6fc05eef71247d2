/* Distribution descriptors: one participant's part of one I/O call, compact.
 *
 * A descriptor describes a "stream" of `length` bytes (the data the rank
 * reads or writes, in its order) and where each stream byte lives:
 *
 *   view data byte v = start + s               (s = stream offset)
 *   tile t = v / tile_size,  w = v % tile_size  (tile_size = root->size)
 *   address = disp + t * extent + map(root, w)
 *
 * `root` is a nested-strided tree describing one filetype (or memory type)
 * instance: a LEAF is `len` contiguous bytes at relative offset 0; a VEC is
 * `count` copies of its child, the i-th at offset i * stride; a LIST is `n`
 * children, the j-th at offset disp[j] (only for truly irregular parts).
 * Data order inside a node is children in index order.
 *
 * For the file side (what the server evaluates per block) the descriptor must
 * be monotone: every stream byte lives at a strictly higher file offset than
 * the previous one (MPI file views guarantee this). ddio_desc_check_monotone()
 * verifies it; the evaluators below that take file offsets require it and run
 * in time proportional to the tree depth (plus log n per LIST level), never
 * to the file size or the number of pieces.
 *
 * The same structure describes a rank's memory layout (memory type), where
 * offsets may be negative and need not be monotone; only the stream-ordered
 * walker is used there. No MPI dependency.
 */
#ifndef DDIO_DESC_H
#define DDIO_DESC_H

#include <stddef.h>
#include <stdint.h>
#include "ddio_proto.h"

enum ddio_node_kind { DDIO_N_LEAF = 1, DDIO_N_VEC = 2, DDIO_N_LIST = 3 };

#define DDIO_DESC_MAX_DEPTH  16       /* decoder bound on nesting */
#define DDIO_DESC_MAX_NODES  (1u << 20)  /* decoder bound on nodes + list entries */

struct ddio_node {
    uint8_t kind;
    uint64_t size;            /* data bytes in this node (derived) */
    int64_t  lo, hi;          /* lowest / one-past-highest byte offset touched,
                               * relative to the node's origin (derived) */
    union {
        struct { uint64_t len; } leaf;
        struct { uint64_t count; int64_t stride; struct ddio_node *child; } vec;
        struct {
            uint32_t n;
            int64_t *disp;            /* n displacements */
            struct ddio_node **child; /* n children */
            uint64_t *before;         /* derived: data bytes before child j */
        } list;
    } u;
};

struct ddio_desc {
    int64_t  disp;            /* view displacement / buffer origin */
    int64_t  extent;          /* tile period (type extent), > 0 unless 1 tile */
    struct ddio_node *root;   /* one tile; never NULL in a valid descriptor */
    uint64_t start;           /* first view data byte of the stream */
    uint64_t length;          /* stream length in bytes */
};

/* ---- construction -------------------------------------------------------- */
struct ddio_node *ddio_node_leaf(uint64_t len);
struct ddio_node *ddio_node_vec(uint64_t count, int64_t stride, struct ddio_node *child);
struct ddio_node *ddio_node_list(uint32_t n, const int64_t *disp, struct ddio_node **child);
void ddio_node_free(struct ddio_node *n);
/* recompute derived fields (size, lo, hi, before) bottom-up; -EINVAL on
 * overflow or a zero-size node */
int ddio_node_finish(struct ddio_node *n);
struct ddio_node *ddio_node_clone(const struct ddio_node *n);
int ddio_node_equal(const struct ddio_node *a, const struct ddio_node *b);

/* Build a compressed tree from a flattened type: `count` (offset, length)
 * pairs in type order (ROMIO's ADIOI_Flatlist_node indices/blocklens).
 * Zero-length pieces are dropped, adjacent pieces merged; runs of equal
 * pieces at a constant stride become VEC nodes, recursively (repeating groups
 * of several pieces too), and whatever stays irregular becomes a LIST.
 * Returns NULL if there are no data bytes or on allocation failure. */
struct ddio_node *ddio_node_from_flat(uint64_t count, const int64_t *off,
                                      const int64_t *len);
/* The same with every offset taken as off[i] - bias: callers pass their own
 * arrays (e.g. ROMIO's flattened list) without copying them. */
struct ddio_node *ddio_node_from_flat_at(uint64_t count, const int64_t *off,
                                         const int64_t *len, int64_t bias);

void ddio_desc_free(struct ddio_desc *d);     /* frees d->root */

/* ---- wire ------------------------------------------------------------------ */
/* Encoding: disp, extent, start, length, then the tree in prefix order. */
void ddio_desc_encode(struct ddio_wbuf *w, const struct ddio_desc *d);
size_t ddio_desc_encoded_size(const struct ddio_desc *d);
/* Hostile-input decoder: depth <= DDIO_DESC_MAX_DEPTH, node + list entries
 * <= max_nodes, no zero sizes, no arithmetic overflow, all bytes consumed.
 * Returns 0 or -EPROTO / -ENOMEM. On success *d owns its tree. */
int ddio_desc_decode(const void *p, size_t n, uint32_t max_nodes, struct ddio_desc *d);
/* The same with a tighter depth bound (a server's limits); a well-formed
 * descriptor beyond max_depth or max_nodes gives -E2BIG here. */
int ddio_desc_decode_lim(const void *p, size_t n, uint32_t max_nodes, unsigned max_depth,
                         struct ddio_desc *d);
/* the stream length an encoded descriptor names, without decoding it
 * (UINT64_MAX if p is too short to hold one) */
uint64_t ddio_desc_peek_length(const void *p, size_t n);

/* ---- file-side evaluation (requires monotone) ----------------------------- */
/* 0 if every stream byte is at a strictly higher offset than the one before
 * and all offsets are >= 0; else -EINVAL. O(nodes). */
int ddio_desc_check_monotone(const struct ddio_desc *d);
/* file offset of stream byte s (s < length) */
int64_t ddio_desc_addr(const struct ddio_desc *d, uint64_t s);
/* number of stream bytes whose file offset is < off (0..length) */
uint64_t ddio_desc_stream_before(const struct ddio_desc *d, int64_t off);
/* smallest file offset >= off holding a stream byte; -1 if none */
int64_t ddio_desc_next(const struct ddio_desc *d, int64_t off);
/* [first, end): file offset of the first stream byte, and one past the last;
 * both 0 when length is 0 */
void ddio_desc_bounds(const struct ddio_desc *d, int64_t *first, int64_t *end);

/* ---- walkers ------------------------------------------------------------- */
/* fn(arg, addr, len, stream_off): one contiguous piece. Non-zero return stops
 * the walk and is returned. */
typedef int (*ddio_piece_fn)(void *arg, int64_t addr, uint64_t len, uint64_t stream_off);
/* pieces of stream bytes [s_lo, s_hi) in stream order (any descriptor;
 * this is the memory-side walker). Time: depth + pieces visited. */
int ddio_desc_walk_stream(const struct ddio_desc *d, uint64_t s_lo, uint64_t s_hi,
                          ddio_piece_fn fn, void *arg);
/* pieces whose addresses lie in [lo, hi), clipped to it, in order (monotone
 * descriptors only). Equivalent to walk_stream over
 * [stream_before(lo), stream_before(hi)). */
int ddio_desc_walk_file(const struct ddio_desc *d, int64_t lo, int64_t hi,
                        ddio_piece_fn fn, void *arg);

/* 1 if two stream bytes of d may share an address (memory side: a read
 * then lands in stream order only if the pieces are applied in it): two
 * pieces of one tile overlap, or the stream spans several tiles and a
 * tile's address range is wider than |extent| (conservative there); else
 * 0. Also 1 when out of memory. Time: a tile's pieces, sorted. */
int ddio_desc_overlaps(const struct ddio_desc *d);

/* Copy between a buffer laid out by `d` and a packed stream buffer, for
 * stream bytes [s_lo, s_hi). `buf` holds addresses starting at `buf_addr`
 * (buf[0] is address buf_addr); every piece in the range must fall inside it.
 * gather: buf -> packed; scatter: packed -> buf. Used with a block buffer on
 * the server (buf_addr = the block's first logical offset) and with a user
 * buffer in the driver (buf_addr = 0, noncontiguous memory). */
void ddio_desc_gather(const struct ddio_desc *d, const void *buf, int64_t buf_addr,
                      uint64_t s_lo, uint64_t s_hi, void *packed);
void ddio_desc_scatter(const struct ddio_desc *d, void *buf, int64_t buf_addr,
                       uint64_t s_lo, uint64_t s_hi, const void *packed);
/* Mark the addresses of stream bytes [s_lo, s_hi) in a bitmap (one bit per
 * byte, bit i = address bm_addr + i; every piece must fall inside it).
 * Returns how many bits were newly set; *overlap = 1 if any was already set
 * (left alone otherwise). The write path's coverage test. */
uint64_t ddio_desc_cover(const struct ddio_desc *d, uint64_t *bm, int64_t bm_addr,
                         uint64_t s_lo, uint64_t s_hi, int *overlap);

#endif
