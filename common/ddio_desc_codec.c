/* Descriptor wire format: encoder and the hostile-input decoder the server runs. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_desc_int.h"

/* disp, extent, start, length (u64 each), then the tree in prefix order:
 *   LEAF: u8 1, u64 len
 *   VEC:  u8 2, u64 count, i64 stride, child
 *   LIST: u8 3, u32 n, n x (i64 disp, child)
 * A NULL root (only meaningful with length 0) is sent as a 1-byte leaf so the
 * receiver always gets a valid tree. */

#define ENC_LEAF 9u
#define ENC_VEC  17u
#define ENC_LIST 5u
#define ENC_ENTRY 8u
#define ENC_HDR  32u

static void enc_node(struct ddio_wbuf *w, const struct ddio_node *n)
{
    ddio_put_u8(w, n->kind);
    switch (n->kind) {
    case DDIO_N_LEAF:
        ddio_put_u64(w, n->u.leaf.len);
        break;
    case DDIO_N_VEC:
        ddio_put_u64(w, n->u.vec.count);
        ddio_put_u64(w, (uint64_t)n->u.vec.stride);
        enc_node(w, n->u.vec.child);
        break;
    case DDIO_N_LIST:
        ddio_put_u32(w, n->u.list.n);
        for (uint32_t j = 0; j < n->u.list.n; j++) {
            ddio_put_u64(w, (uint64_t)n->u.list.disp[j]);
            enc_node(w, n->u.list.child[j]);
        }
        break;
    }
}

void ddio_desc_encode(struct ddio_wbuf *w, const struct ddio_desc *d)
{
    ddio_put_u64(w, (uint64_t)d->disp);
    ddio_put_u64(w, (uint64_t)d->extent);
    ddio_put_u64(w, d->start);
    ddio_put_u64(w, d->length);
    if (d->root) {
        enc_node(w, d->root);
    } else {
        ddio_put_u8(w, DDIO_N_LEAF);
        ddio_put_u64(w, 1);
    }
}

static size_t node_enc_size(const struct ddio_node *n)
{
    size_t s;
    switch (n->kind) {
    case DDIO_N_LEAF:
        return ENC_LEAF;
    case DDIO_N_VEC:
        return ENC_VEC + node_enc_size(n->u.vec.child);
    default:
        s = ENC_LIST;
        for (uint32_t j = 0; j < n->u.list.n; j++)
            s += ENC_ENTRY + node_enc_size(n->u.list.child[j]);
        return s;
    }
}

size_t ddio_desc_encoded_size(const struct ddio_desc *d)
{
    return ENC_HDR + (d->root ? node_enc_size(d->root) : ENC_LEAF);
}

struct dec {
    struct ddio_rbuf r;
    uint32_t budget;     /* nodes + list entries still allowed */
    int max_depth;
};

static int dec_node(struct dec *x, int depth, struct ddio_node **out);

static int dec_list(struct dec *x, int depth, struct ddio_node *n)
{
    uint32_t cnt = ddio_get_u32(&x->r);
    size_t left = x->r.len - x->r.off;
    if (x->r.err || cnt == 0 || (uint64_t)cnt * (ENC_ENTRY + ENC_LEAF) > left)
        return -EPROTO;                                   /* before allocating */
    if (cnt > x->budget)
        return -E2BIG;
    x->budget -= cnt;
    n->u.list.disp = malloc(cnt * sizeof(int64_t));
    n->u.list.child = calloc(cnt, sizeof(struct ddio_node *));
    n->u.list.before = malloc(cnt * sizeof(uint64_t));
    if (!n->u.list.disp || !n->u.list.child || !n->u.list.before)
        return -ENOMEM;
    n->u.list.n = cnt;   /* children are NULL until decoded: free copes */
    for (uint32_t j = 0; j < cnt; j++) {
        int rc;
        n->u.list.disp[j] = (int64_t)ddio_get_u64(&x->r);
        rc = dec_node(x, depth + 1, &n->u.list.child[j]);
        if (rc)
            return rc;
    }
    return 0;
}

static int dec_node(struct dec *x, int depth, struct ddio_node **out)
{
    struct ddio_node *n;
    uint8_t kind;
    int rc = 0;

    if (depth > x->max_depth || x->budget == 0)
        return -E2BIG;
    kind = ddio_get_u8(&x->r);
    if (x->r.err || kind < DDIO_N_LEAF || kind > DDIO_N_LIST)
        return -EPROTO;
    x->budget--;
    n = node_alloc(kind);
    if (!n)
        return -ENOMEM;
    *out = n;   /* the caller frees the partial tree on error */
    if (kind == DDIO_N_LEAF) {
        n->u.leaf.len = ddio_get_u64(&x->r);
    } else if (kind == DDIO_N_VEC) {
        n->u.vec.count = ddio_get_u64(&x->r);
        n->u.vec.stride = (int64_t)ddio_get_u64(&x->r);
        if (x->r.err)
            return -EPROTO;
        rc = dec_node(x, depth + 1, &n->u.vec.child);
    } else {
        rc = dec_list(x, depth, n);
    }
    if (rc)
        return rc;
    if (x->r.err || ddio_desc_node_derive(n))
        return -EPROTO;
    return 0;
}

/* Every address the stream can touch must fit in int64: the tile origin is
 * linear in the tile number, so checking the first and last tile suffices. */
static bool desc_fits(const struct ddio_desc *d)
{
    uint64_t last, end, t[2];
    if (d->length == 0)
        return true;
    /* the walkers use start + length as the stream's end: it must exist */
    if (__builtin_add_overflow(d->start, d->length, &end))
        return false;
    last = end - 1;
    t[0] = d->start / d->root->size;
    t[1] = last / d->root->size;
    for (int k = 0; k < 2; k++) {
        i128 base = (i128)d->disp + (i128)t[k] * d->extent;
        if (base + d->root->lo < INT64_MIN || base + d->root->hi > INT64_MAX)
            return false;
    }
    return true;
}

uint64_t ddio_desc_peek_length(const void *p, size_t n)
{
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, p, n);
    for (int i = 0; i < 3; i++)
        (void) ddio_get_u64(&r);        /* disp, extent, start */
    uint64_t len = ddio_get_u64(&r);
    return r.err ? UINT64_MAX : len;
}

int ddio_desc_decode(const void *p, size_t n, uint32_t max_nodes, struct ddio_desc *d)
{
    int rc = ddio_desc_decode_lim(p, n, max_nodes, DDIO_DESC_MAX_DEPTH, d);
    return rc == -E2BIG ? -EPROTO : rc;
}

int ddio_desc_decode_lim(const void *p, size_t n, uint32_t max_nodes, unsigned max_depth,
                         struct ddio_desc *d)
{
    struct dec x;
    int rc;

    memset(d, 0, sizeof(*d));
    ddio_rbuf_init(&x.r, p, n);
    /* DDIO_DESC_MAX_NODES / _DEPTH are hard caps whatever the caller asks for */
    x.budget = max_nodes < DDIO_DESC_MAX_NODES ? max_nodes : DDIO_DESC_MAX_NODES;
    x.max_depth = max_depth < DDIO_DESC_MAX_DEPTH ? (int)max_depth : DDIO_DESC_MAX_DEPTH;
    d->disp = (int64_t)ddio_get_u64(&x.r);
    d->extent = (int64_t)ddio_get_u64(&x.r);
    d->start = ddio_get_u64(&x.r);
    d->length = ddio_get_u64(&x.r);
    if (x.r.err)
        return -EPROTO;
    rc = dec_node(&x, 1, &d->root);
    if (!rc && (ddio_rbuf_done(&x.r) || !desc_fits(d)))
        rc = -EPROTO;
    if (rc) {
        ddio_desc_free(d);
        memset(d, 0, sizeof(*d));
    }
    return rc;
}
