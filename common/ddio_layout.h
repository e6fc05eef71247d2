/* Striping math: logical file offsets <-> (server, local datafile offset),
 * and a server's local offsets <-> (disk, offset in that disk's datafile).
 *
 * A file is striped round-robin over `count` servers in units of `unit`
 * bytes: logical stripe s lives on server s % count, as local stripe s / count
 * of that server's datafile (stripes are stored compacted). A server with D
 * disks spreads its local space over them in units of its block size B:
 * local block k lives on disk k % D at offset (k / D) * B. With one server and
 * one disk the datafile is the file, byte for byte. No MPI dependency. */
#ifndef DDIO_LAYOUT_H
#define DDIO_LAYOUT_H

#include <stdint.h>

struct ddio_stripe {
    uint64_t unit;    /* stripe unit, bytes, > 0 */
    uint32_t count;   /* servers, > 0 */
};

/* logical offset -> server index */
uint32_t ddio_layout_server(const struct ddio_stripe *L, uint64_t off);
/* logical offset -> local offset on its server */
uint64_t ddio_layout_local(const struct ddio_stripe *L, uint64_t off);
/* (server, local offset) -> logical offset */
uint64_t ddio_layout_logical(const struct ddio_stripe *L, uint32_t server, uint64_t local);
/* first logical offset after `off` that starts a new stripe unit */
uint64_t ddio_layout_unit_end(const struct ddio_stripe *L, uint64_t off);
/* bytes of the logical range [0, size) stored on `server` */
uint64_t ddio_layout_local_size(const struct ddio_stripe *L, uint32_t server, uint64_t size);
/* logical end of file implied by `server` holding `local_size` bytes
 * (0 if local_size is 0). The file size is the max over servers. */
uint64_t ddio_layout_logical_end(const struct ddio_stripe *L, uint32_t server, uint64_t local_size);
/* The part of the logical range [off, off+len) stored on `server`, as the
 * local range [*lo, *hi) (every local byte in it belongs to the range, since
 * local space is compacted and monotone). Returns 0 if the server holds none
 * of it. */
int ddio_layout_local_range(const struct ddio_stripe *L, uint32_t server,
                            uint64_t off, uint64_t len, uint64_t *lo, uint64_t *hi);

/* Visit the pieces of the logical range [off, off+len) in logical order, one
 * per stripe unit touched: fn(arg, server, logical_off, local_off, len).
 * Stops and returns fn's value when it is non-zero. */
typedef int (*ddio_layout_fn)(void *arg, uint32_t server, uint64_t logical_off,
                              uint64_t local_off, uint64_t len);
int ddio_layout_foreach(const struct ddio_stripe *L, uint64_t off, uint64_t len,
                        ddio_layout_fn fn, void *arg);

/* The usual small call: [off, off+len) (len > 0) inside one stripe unit.
 * Then *server and *local are its server and local offset and 1 is
 * returned; 0 when it spans units (walk it with foreach). */
static inline int ddio_layout_one(const struct ddio_stripe *L, uint64_t off, uint64_t len,
                                  uint32_t *server, uint64_t *local)
{
    uint64_t s = off / L->unit, in = off % L->unit;
    if (len > L->unit - in)
        return 0;
    *server = (uint32_t)(s % L->count);
    *local = (s / L->count) * L->unit + in;
    return 1;
}

/* Copies (romio_ddio_redundancy=mirror; DESIGN.md section 6.1). A file of
 * `copies` copies (1: none, 2 or 3: mirror) keeps copy c (0 = the primary)
 * of the stripe units of stripe index p on server (p + c) % count, in a
 * datafile that is byte for byte server p's: the same local offsets, so one
 * local block number names the same bytes in every copy. Copies of one
 * index are on different servers because copies <= count. */
#define DDIO_MAX_COPIES 3u

/* the server (stripe index) holding copy c of index p's units */
static inline uint32_t ddio_copy_server(uint32_t count, uint32_t p, uint32_t c)
{
    return (uint32_t)(((uint64_t)p + c) % count);
}

/* the index whose copy c server s holds */
static inline uint32_t ddio_copy_of(uint32_t count, uint32_t s, uint32_t c)
{
    return (uint32_t)(((uint64_t)s + count - c % count) % count);
}

/* which copy of index p server s holds (0: p's primary is s), or -1 when s
 * holds none of p's units */
int ddio_copy_held(uint32_t count, uint32_t copies, uint32_t s, uint32_t p);

/* Does server s hold (a copy of) any of the logical range [off, off+len)?
 * The range touches index p when ddio_layout_local_range says so for p. */
int ddio_copy_touched(const struct ddio_stripe *L, uint32_t copies, uint32_t s,
                      uint64_t off, uint64_t len);

/* The redundancy modes by name (romio_ddio_redundancy, ddio stat), as a
 * word: the copies (1: "none", 2: "mirror" or "mirror:2", 3: "mirror:3"),
 * or for "ec:K+M" (erasure coding, ddio_ec.h) 1 | K << 8 | M << 16, the
 * layout record's wire form. parse: the word, or DDIO_REDUNDANCY_BAD. */
#define DDIO_REDUNDANCY_BAD (-1)
#define DDIO_REDUNDANCY_EC_WORD(k, m) (1u | (uint32_t)(k) << 8 | (uint32_t)(m) << 16)
static inline uint32_t ddio_redundancy_ec_k(uint32_t word) { return word >> 8 & 0xffu; }
static inline uint32_t ddio_redundancy_ec_m(uint32_t word) { return word >> 16 & 0xffu; }
static inline uint32_t ddio_redundancy_copies(uint32_t word) { return word & 0xffu; }
/* does a file of this mode keep its bytes on more than one server (mirror,
 * ec): then it depends on the membership (DESIGN.md 6.1) */
static inline int ddio_redundancy_kept(uint32_t word)
{
    return ddio_redundancy_copies(word) > 1 || ddio_redundancy_ec_k(word) != 0;
}
int ddio_redundancy_parse(const char *s);
/* the word's name (a buffer of the calling thread for "ec:K+M") */
const char *ddio_redundancy_name(uint32_t word);

/* A server's local space over its disks is the same math with
 * struct ddio_stripe { .unit = B, .count = D }: ddio_layout_server() gives the
 * disk, ddio_layout_local() the offset in that disk's datafile. */

#endif
