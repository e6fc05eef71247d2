/* Descriptor tree nodes: constructors, derived fields, clone/equal/free (see ddio_desc.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_desc_int.h"

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Derive size/lo/hi/before of one node from its (already derived) children. */
int ddio_desc_node_derive(struct ddio_node *n)
{
    switch (n->kind) {
    case DDIO_N_LEAF:
        if (n->u.leaf.len == 0 || n->u.leaf.len > INT64_MAX)
            return -EINVAL;
        n->size = n->u.leaf.len;
        n->lo = 0;
        n->hi = (int64_t)n->u.leaf.len;
        return 0;
    case DDIO_N_VEC: {
        const struct ddio_node *c = n->u.vec.child;
        uint64_t size;
        int64_t span, lo, hi;
        if (!c || n->u.vec.count == 0 || n->u.vec.count > INT64_MAX)
            return -EINVAL;
        if (__builtin_mul_overflow(c->size, n->u.vec.count, &size) || size > INT64_MAX)
            return -EINVAL;
        if (__builtin_mul_overflow((int64_t)(n->u.vec.count - 1), n->u.vec.stride, &span))
            return -EINVAL;
        if (__builtin_add_overflow(c->lo, min64(0, span), &lo) ||
            __builtin_add_overflow(c->hi, max64(0, span), &hi))
            return -EINVAL;
        n->size = size;
        n->lo = lo;
        n->hi = hi;
        return 0;
    }
    case DDIO_N_LIST: {
        uint64_t size = 0;
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        if (n->u.list.n == 0 || !n->u.list.disp || !n->u.list.child || !n->u.list.before)
            return -EINVAL;
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            const struct ddio_node *c = n->u.list.child[j];
            int64_t clo, chi;
            if (!c)
                return -EINVAL;
            n->u.list.before[j] = size;
            if (__builtin_add_overflow(size, c->size, &size) || size > INT64_MAX)
                return -EINVAL;
            if (__builtin_add_overflow(n->u.list.disp[j], c->lo, &clo) ||
                __builtin_add_overflow(n->u.list.disp[j], c->hi, &chi))
                return -EINVAL;
            lo = min64(lo, clo);
            hi = max64(hi, chi);
        }
        n->size = size;
        n->lo = lo;
        n->hi = hi;
        return 0;
    }
    default:
        return -EINVAL;
    }
}

struct ddio_node *ddio_node_leaf(uint64_t len)
{
    struct ddio_node *n = node_alloc(DDIO_N_LEAF);
    if (!n)
        return NULL;
    n->u.leaf.len = len;
    (void)ddio_desc_node_derive(n);   /* invalid values are reported by ddio_node_finish */
    return n;
}

/* Takes ownership of `child`, also on failure, so calls can be nested:
 * ddio_node_vec(n, s, ddio_node_leaf(8)) leaks nothing and a NULL child
 * propagates as NULL. */
struct ddio_node *ddio_node_vec(uint64_t count, int64_t stride, struct ddio_node *child)
{
    struct ddio_node *n;
    if (!child)
        return NULL;
    n = node_alloc(DDIO_N_VEC);
    if (!n) {
        ddio_node_free(child);
        return NULL;
    }
    n->u.vec.count = count;
    n->u.vec.stride = stride;
    n->u.vec.child = child;
    (void)ddio_desc_node_derive(n);
    return n;
}

/* Copies disp[] and the child pointer array; takes ownership of the children
 * (also on failure, like ddio_node_vec). */
struct ddio_node *ddio_node_list(uint32_t n, const int64_t *disp, struct ddio_node **child)
{
    struct ddio_node *x = NULL;
    bool ok = n > 0 && disp && child;
    for (uint32_t j = 0; ok && j < n; j++)
        ok = child[j] != NULL;
    if (ok)
        x = node_alloc(DDIO_N_LIST);
    if (x) {
        x->u.list.n = n;
        x->u.list.disp = malloc(n * sizeof(int64_t));
        x->u.list.child = malloc(n * sizeof(struct ddio_node *));
        x->u.list.before = malloc(n * sizeof(uint64_t));
        if (x->u.list.disp && x->u.list.child && x->u.list.before) {
            memcpy(x->u.list.disp, disp, n * sizeof(int64_t));
            memcpy(x->u.list.child, child, n * sizeof(struct ddio_node *));
            (void)ddio_desc_node_derive(x);
            return x;
        }
        free(x->u.list.disp);
        free(x->u.list.child);
        free(x->u.list.before);
        free(x);
    }
    for (uint32_t j = 0; child && j < n; j++)
        ddio_node_free(child[j]);
    return NULL;
}

void ddio_node_free(struct ddio_node *n)
{
    if (!n)
        return;
    if (n->kind == DDIO_N_VEC) {
        ddio_node_free(n->u.vec.child);
    } else if (n->kind == DDIO_N_LIST) {
        for (uint32_t j = 0; n->u.list.child && j < n->u.list.n; j++)
            ddio_node_free(n->u.list.child[j]);
        free(n->u.list.disp);
        free(n->u.list.child);
        free(n->u.list.before);
    }
    free(n);
}

int ddio_node_finish(struct ddio_node *n)
{
    if (!n)
        return -EINVAL;
    if (n->kind == DDIO_N_VEC) {
        int rc = ddio_node_finish(n->u.vec.child);
        if (rc)
            return rc;
    } else if (n->kind == DDIO_N_LIST) {
        if (!n->u.list.child)
            return -EINVAL;
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            int rc = ddio_node_finish(n->u.list.child[j]);
            if (rc)
                return rc;
        }
    }
    return ddio_desc_node_derive(n);
}

struct ddio_node *ddio_node_clone(const struct ddio_node *n)
{
    if (!n)
        return NULL;
    switch (n->kind) {
    case DDIO_N_LEAF:
        return ddio_node_leaf(n->u.leaf.len);
    case DDIO_N_VEC:
        return ddio_node_vec(n->u.vec.count, n->u.vec.stride, ddio_node_clone(n->u.vec.child));
    case DDIO_N_LIST: {
        struct ddio_node **ch = calloc(n->u.list.n, sizeof(*ch));
        struct ddio_node *x;
        if (!ch)
            return NULL;
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            ch[j] = ddio_node_clone(n->u.list.child[j]);
            if (!ch[j]) {
                for (uint32_t i = 0; i < j; i++)
                    ddio_node_free(ch[i]);
                free(ch);
                return NULL;
            }
        }
        x = ddio_node_list(n->u.list.n, n->u.list.disp, ch);
        free(ch);
        return x;
    }
    default:
        return NULL;
    }
}

int ddio_node_equal(const struct ddio_node *a, const struct ddio_node *b)
{
    if (a == b)
        return 1;
    if (!a || !b || a->kind != b->kind)
        return 0;
    switch (a->kind) {
    case DDIO_N_LEAF:
        return a->u.leaf.len == b->u.leaf.len;
    case DDIO_N_VEC:
        return a->u.vec.count == b->u.vec.count && a->u.vec.stride == b->u.vec.stride &&
               ddio_node_equal(a->u.vec.child, b->u.vec.child);
    case DDIO_N_LIST:
        if (a->u.list.n != b->u.list.n)
            return 0;
        for (uint32_t j = 0; j < a->u.list.n; j++)
            if (a->u.list.disp[j] != b->u.list.disp[j] ||
                !ddio_node_equal(a->u.list.child[j], b->u.list.child[j]))
                return 0;
        return 1;
    default:
        return 0;
    }
}

void ddio_desc_free(struct ddio_desc *d)
{
    if (!d)
        return;
    ddio_node_free(d->root);
    d->root = NULL;
}
