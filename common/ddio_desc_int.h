/* Private to the ddio_desc_*.c files: the tree invariants they all rely on
 * and the few helpers more than one of them needs. Not part of the API. */
#ifndef DDIO_DESC_INT_H
#define DDIO_DESC_INT_H

#include <stdint.h>
#include <stdlib.h>

#include "ddio_desc.h"

/*
 * Invariants every ddio_desc_*.c function relies on (established by
 * ddio_node_finish / the constructors / the decoder):
 *   - every node has size > 0 and size <= INT64_MAX;
 *   - lo < hi, and every relative offset inside a node fits in int64;
 *   - a VEC's child and a LIST's children are valid nodes;
 *   - LIST before[j] = data bytes of children 0..j-1 (strictly increasing).
 * Descriptor-level arithmetic (tile origins) is done in 128 bits where the
 * inputs are not known to be validated, so no evaluator can overflow.
 */

typedef __int128 i128;

/* Derive size/lo/hi/before of one node from its (already derived) children;
 * -EINVAL if they are invalid (ddio_desc_tree.c). */
int ddio_desc_node_derive(struct ddio_node *n);

/* a zeroed node of the given kind (the constructors and the decoder) */
static inline struct ddio_node *node_alloc(uint8_t kind)
{
    struct ddio_node *n = calloc(1, sizeof(*n));
    if (n)
        n->kind = kind;
    return n;
}

/* index of the LIST child holding data byte w: the last j with before[j] <= w */
static inline uint32_t list_child_of_byte(const struct ddio_node *n, uint64_t w)
{
    uint32_t lo = 0, hi = n->u.list.n;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (n->u.list.before[mid] <= w)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* address of tile t's origin, in 128 bits (the evaluators and gather/scatter) */
static inline i128 tile_origin(const struct ddio_desc *d, uint64_t t)
{
    return (i128)d->disp + (i128)t * d->extent;
}

#endif
