/* Planner: the local blocks an XFER touches, in the order to issue them. */
#ifndef DDIO_SRV_PLANNER_H
#define DDIO_SRV_PLANNER_H

#include <stddef.h>
#include <stdint.h>

#include "ddio_desc.h"
#include "ddio_ec.h"
#include "ddio_layout.h"

/* One local byte space the call is planned on: the server's own datafiles
 * (stripe index me), a mirror of index me it holds (ddio_layout.h), or the
 * parity units server me holds of an ec:K+M file (ddio_ec.h). A mirrored
 * or erasure-coded write plans all of them into one sorted stream. */
struct plan_view {
    uint32_t me;                 /* the stripe index whose units it holds */
    const int *fds;              /* its datafile per disk, for FIEMAP */
    int kind;                    /* PLAN_DATA (own units or a mirror's),
                                  * PLAN_PARITY or PLAN_OVERLAY (ec:K+M) */
    const struct ddio_ec *ec;    /* an ec:K+M file's K and M (those two kinds) */
    const uint64_t *partial;     /* the groups the call covers in part, sorted */
    size_t npartial;
};
enum { PLAN_DATA = 0, PLAN_COPY = 1, PLAN_PARITY = 2, PLAN_OVERLAY = 3 };   /* = the engine's V_* */

/* is x in the sorted v[0..n)? (an ec:K+M write's groups covered in part) */
static inline int plan_sorted_has(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v[mid] == x)
            return 1;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}
#define PLAN_MAX_VIEWS 4u

/* A planned block's id: its view in the top bits, its local block number
 * below (every view has the same disks and block size: a local block k of
 * any view lives on disk k % D) */
#define PLAN_VIEW_SHIFT 56
static inline uint64_t plan_id(uint32_t view, uint64_t k)
{
    return ((uint64_t)view << PLAN_VIEW_SHIFT) | k;
}
static inline uint32_t plan_view_of(uint64_t id)
{
    return (uint32_t)(id >> PLAN_VIEW_SHIFT);
}
static inline uint64_t plan_block_of(uint64_t id)
{
    return id & ((UINT64_C(1) << PLAN_VIEW_SHIFT) - 1);
}

struct plan_in {
    const struct ddio_desc *const *descs;  /* participants (NULL = none) */
    uint32_t n;
    struct ddio_stripe stripe;   /* the file's striping over servers */
    const struct plan_view *views;   /* views[0]: the primary, or the one copy read */
    uint32_t nviews;             /* 1..PLAN_MAX_VIEWS */
    struct ddio_stripe disks;    /* {block size, ndisks}: local -> disk */
    uint64_t limit;              /* only blocks starting below this local offset */
    int nosort;
    int rotate;                  /* start at me * n / stripe.count, wrap */
    size_t max_blocks;           /* bound on block entries collected (all
                                  * participants, before merging); 0 = none */
};

/* *blocks: malloc'd block ids (plan_id) in issue order. *sorted = 1 when
 * the order came from physical addresses. 0 or -ENOMEM / -EOVERFLOW, or
 * -E2BIG when more than max_blocks entries would be needed.
 *
 * Order: per disk, blocks FIEMAP maps come first by physical address, then
 * the unmapped ones (holes, beyond EOF, file systems without FIEMAP) in
 * logical order; disks are interleaved round-robin so all of them work at
 * once. Enumeration skips ranges no participant touches with
 * ddio_desc_next(), so planning costs O(blocks touched * depth). */
int plan_blocks(const struct plan_in *in, uint64_t **blocks, size_t *n, int *sorted);

/* Proof of the issue order, independent of how it was made: look the
 * blocks up in FIEMAP again and count, per disk, the blocks issued at a
 * lower physical address than the previous mapped block of that disk
 * (unmapped blocks are skipped). 0 for a sorted plan without rotation. */
uint64_t plan_out_of_order(const struct plan_in *in, const uint64_t *blocks, size_t n);

#endif
