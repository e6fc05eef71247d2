/* Erasure-coded files (romio_ddio_redundancy=ec:K+M; DESIGN.md 6.4): where a
 * group's parity lives, and the parity arithmetic. No MPI dependency.
 *
 * An ec:K+M file has exactly N = K+M stripe servers and its data striped as
 * a `none` file's. Group g is the stripe units [gK, gK+K); its parity unit
 * j (0 <= j < M) lives on server (gK + K + j) mod N, the servers the
 * group's data does not use. A server keeps the parity units it holds
 * compacted in group order, one unit each, in its parity datafile. Parity
 * row j is row K+j of a Cauchy matrix over GF(2^8): any K of a group's K+M
 * units give back the others. */
#ifndef DDIO_EC_H
#define DDIO_EC_H

#include <stddef.h>
#include <stdint.h>

#define DDIO_EC_MAX_K 16u
#define DDIO_EC_MAX_M 4u

struct ddio_ec {
    uint32_t k;   /* data units per group, 1..DDIO_EC_MAX_K */
    uint32_t m;   /* parity units per group, 1..DDIO_EC_MAX_M */
};

/* "ec:K+M" -> *E. 0, or -1 with one line in err (malformed, or K or M out
 * of range). */
int ddio_ec_parse(const char *s, struct ddio_ec *E, char *err, size_t errlen);

/* the server (stripe index) of group g's parity unit j */
uint32_t ddio_ec_parity_server(const struct ddio_ec *E, uint64_t g, uint32_t j);

/* which parity unit of group g server q holds: j, or -1 when it holds one
 * of g's data units (or none of g) */
int ddio_ec_parity_held(const struct ddio_ec *E, uint32_t q, uint64_t g);

/* How many groups' parity server q holds among the first `groups`. */
uint64_t ddio_ec_parity_count(const struct ddio_ec *E, uint32_t q, uint64_t groups);

/* Group g's parity on server q (ddio_ec_parity_held(E, q, g) >= 0): its
 * place in q's parity datafile, in units (multiply by the stripe unit). */
static inline uint64_t ddio_ec_parity_local(const struct ddio_ec *E, uint32_t q, uint64_t g)
{
    return ddio_ec_parity_count(E, q, g);
}

/* The group whose parity is unit i of server q's parity datafile, or
 * UINT64_MAX when q holds no parity at all. */
uint64_t ddio_ec_parity_group(const struct ddio_ec *E, uint32_t q, uint64_t i);

/* A server's overlay datafile (partial groups' writes, DESIGN.md 6.4)
 * holds, unit by unit, its own units' overlay and the copies of other
 * servers' units whose group's parity it holds: the unit at local offset
 * i*U of server p (its i-th unit) goes to overlay unit i*N + c of server
 * (p + c) mod N, N = K+M, so every server's overlay is one byte space.
 * The logical offset of overlay offset off of server me, or UINT64_MAX
 * when that overlay unit belongs to no group whose parity me holds (c > 0
 * only). */
uint64_t ddio_ec_ovl_logical(const struct ddio_ec *E, uint64_t unit, uint32_t me, uint64_t off);
/* Where server me keeps the overlay of logical offset L: its overlay
 * offset, or UINT64_MAX when me is neither L's data server nor a parity
 * server of its group. */
uint64_t ddio_ec_ovl_local(const struct ddio_ec *E, uint64_t unit, uint32_t me, uint64_t L);

/* ---- parity arithmetic (ISA-L, loaded at run time) ---- */

struct ddio_ec_codec;

/* The codec of (k, m), or NULL with one line in err (libisal.so.2 missing,
 * or k/m out of range). Immutable once made: share it between threads. */
struct ddio_ec_codec *ddio_ec_codec_new(const struct ddio_ec *E, char *err, size_t errlen);
void ddio_ec_codec_free(struct ddio_ec_codec *c);

/* The parity units rows[0..n) (each < m) of the k data units data[0..k),
 * len bytes each, into out[0..n). */
void ddio_ec_encode(const struct ddio_ec_codec *c, size_t len, uint8_t *const *data, uint32_t n,
                    const uint32_t *rows, uint8_t **out);

/* Data unit i changed by delta (old XOR new, len bytes): the parity units
 * rows[0..n) in out[0..n) are brought up to date in place. */
void ddio_ec_update(const struct ddio_ec_codec *c, size_t len, uint32_t i, const uint8_t *delta,
                    uint32_t n, const uint32_t *rows, uint8_t **out);

/* Units are numbered 0..k-1 (data) and k..k+m-1 (parity). From k units
 * have[0..k) (distinct numbers, buffers in in[0..k)), the units want[0..n)
 * into out[0..n), len bytes each. 0, or -1 with one line in err (numbers
 * out of range or repeated). */
int ddio_ec_decode(const struct ddio_ec_codec *c, size_t len, const uint32_t *have,
                   uint8_t *const *in, uint32_t n, const uint32_t *want, uint8_t **out, char *err,
                   size_t errlen);

#endif
