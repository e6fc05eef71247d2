/* The client cache of one open file: write-behind and read-ahead within
 * MPI-IO's consistency rules (MPI 4.0 §14.6.1). In nonatomic mode another
 * process need only see this one's writes after sync-barrier-sync or
 * close/open, and this process must see its own writes at once. So:
 *
 *  - small writes are kept as extents in one buffer and sent together, as
 *    ONE descriptor (ddio_cache_flush), when the buffer or its extent table
 *    fills, before any read or write that overlaps them goes elsewhere, and
 *    at the points where others may look: sync, close, collectives, set_view,
 *    set_size (the caller flushes there);
 *  - small reads are served from clean chunks fetched ahead: the next K
 *    requests of a regular stride (sequential, or IOR's interleaved
 *    segments), or the 32 KiB page(s) holding a small read at random. A write of this
 *    process drops the chunks it touches (and those ending at end of file,
 *    whose size it may change); sync drops them all.
 *
 * The owner (the driver) turns both off for atomic mode. A process that dies
 * loses its unflushed writes, which MPI allows. Not thread-safe: one thread
 * at a time per file (ROMIO serialises MPI-IO calls). */
#include "ddio_core_io.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WB_MAX_EXT  4096        /* an overlap check scans the table */
#define RA_PAGE     32768       /* what a random small read fetches */
#define RA_SMALL    4096        /* random reads up to this size fetch a page */
#define RA_PROBE    16          /* misses before pages must have paid */
/* Calls from this size on are gathered or read ahead only where they join
 * into one range (sequential): scattered pieces of that size cost the
 * servers as much gathered as one by one (each block is still a round trip
 * and a lock), measured 2x slower for IOR's interleaved 64 KiB segments. */
#define CACHE_SMALL 16384

static int overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return a < b + blen && b < a + alen;
}

void ddio_cache_init(struct ddio_cache *c, size_t wb_max, size_t ra_max)
{
    memset(c, 0, sizeof(*c));
    c->wb_max = wb_max;
    c->ra_max = ra_max;
}

/* ---- read chunks --------------------------------------------------------- */

static uint64_t chunk_end(const struct ddio_chunk *k)
{
    return k->off + (k->count - 1) * k->stride + k->blen;
}

static void chunk_free(struct ddio_cache *c, int i)
{
    c->ra_used -= c->ch[i].count * c->ch[i].blen;
    free(c->ch[i].data);
    c->ch[i] = c->ch[--c->nch];
}

void ddio_cache_drop(struct ddio_cache *c)
{
    while (c->nch)
        chunk_free(c, c->nch - 1);
}

/* this process wrote [off, off+len): chunks holding old bytes of it, or
 * ending at end of file (which may have moved), go */
static void drop_written(struct ddio_cache *c, uint64_t off, uint64_t len)
{
    for (int i = c->nch - 1; i >= 0; i--) {
        const struct ddio_chunk *k = &c->ch[i];
        if (k->valid < k->count * k->blen || overlaps(off, len, k->off, chunk_end(k) - k->off))
            chunk_free(c, i);
    }
}

/* copy [off, off+len) out of a chunk holding all of it */
static int chunk_copy(struct ddio_chunk *k, uint64_t off, void *buf, uint64_t len)
{
    if (off < k->off)
        return 0;
    uint64_t rel = off - k->off, i = rel / k->stride, in = rel % k->stride;
    uint64_t pos = i * k->blen + in;
    if (i >= k->count || in + len > k->blen || pos + len > k->valid)
        return 0;
    memcpy(buf, k->data + pos, len);
    return 1;
}

static int cache_hit(struct ddio_cache *c, uint64_t off, void *buf, uint64_t len)
{
    for (int i = 0; i < c->nch; i++)
        if (chunk_copy(&c->ch[i], off, buf, len)) {
            c->ch[i].tick = ++c->tick;
            c->hits++;
            return 1;
        }
    return 0;
}

/* room for need bytes: the least recently used chunks go */
static void make_room(struct ddio_cache *c, uint64_t need)
{
    while (c->nch && (c->ra_used + need > c->ra_max || c->nch == DDIO_CACHE_CHUNKS)) {
        int old = 0;
        for (int i = 1; i < c->nch; i++)
            if (c->ch[i].tick < c->ch[old].tick)
                old = i;
        chunk_free(c, old);
    }
}

/* read a chunk: count blocks of blen bytes every stride bytes from off */
static int fetch(struct ddio_cache *c, struct ddio_fh *f, struct ddio_chunk *k,
                 struct ddio_err *e)
{
    struct ddio_desc d = {.disp = (int64_t) k->off,.extent = (int64_t) (chunk_end(k) - k->off),
        .start = 0,.length = k->count * k->blen
    };
    struct ddio_node *leaf = ddio_node_leaf(k->blen);
    d.root = k->count == 1 ? leaf : leaf ? ddio_node_vec(k->count, k->stride, leaf) : NULL;
    if (!d.root && leaf)
        ddio_node_free(leaf);
    k->data = d.root ? malloc(d.length) : NULL;
    if (!k->data) {
        if (d.root)
            ddio_node_free(d.root);
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    struct ddio_mem m = {.buf = k->data,.contig = 1 };
    int rc = ddio_xfer_one(f, DDIO_X_READ, c->xflags, &d, &m, &k->valid, e);
    ddio_node_free(d.root);
    if (rc) {
        free(k->data);
        k->data = NULL;
    }
    return rc;
}

/* every read: is this one the next of a regular stride (the same size, the
 * same distance from the previous one as that one from its own)? */
static int note_read(struct ddio_cache *c, uint64_t off, uint64_t len)
{
    int64_t s = (int64_t) (off - c->last_off);
    int regular = c->nreads >= 2 && len == c->last_len && s > 0 && s == c->last_stride;
    c->last_stride = c->nreads ? s : 0;
    c->last_off = off;
    c->last_len = len;
    c->nreads++;
    return regular;
}

/* What to fetch for a small read that missed: the next requests of a
 * regular stride, else (a small one) the page around it; 0: nothing. */
static int plan_chunk(struct ddio_cache *c, uint64_t off, uint64_t len, int regular,
                      struct ddio_chunk *k)
{
    uint64_t s = (uint64_t) c->last_stride;
    memset(k, 0, sizeof(*k));
    if (len * 4 > c->ra_max)
        return 0;
    if (regular && (s <= len || len < CACHE_SMALL)) {
        uint64_t n = c->ra_max / 2 / len;
        k->off = off;
        if (s <= len) {      /* sequential (or overlapping): one range */
            k->blen = k->stride = (n - 1) * s + len;
            k->count = 1;
        } else {
            k->blen = len;
            k->stride = s;
            k->count = n;
        }
        return 1;
    }
    /* random small reads: a page pays only where reads come back near each
     * other; where they do not (a quarter of the misses or fewer turned
     * into hits) each fetch would cost a 32 KiB transfer for nothing
     * (measured: 8-byte random reads 75 -> 150-170 us p50 with pages) */
    if (len > RA_SMALL || (c->misses > RA_PROBE && c->hits * 4 < c->misses))
        return 0;
    k->off = off / RA_PAGE * RA_PAGE;
    k->blen = k->stride = (off + len + RA_PAGE - 1) / RA_PAGE * RA_PAGE - k->off;
    k->count = 1;
    return 1;
}

/* from what was read ahead (fetching ahead first where that pays):
 * 1 served, 0 not, -1 error */
static int cached_read(struct ddio_cache *c, struct ddio_fh *f, uint64_t off, void *buf,
                       uint64_t len, struct ddio_err *e)
{
    struct ddio_chunk k;
    int regular;

    if (!c->ra_max)
        return 0;
    regular = note_read(c, off, len);
    if (cache_hit(c, off, buf, len))
        return 1;
    c->misses++;
    if (!plan_chunk(c, off, len, regular, &k))
        return 0;
    make_room(c, k.count * k.blen);
    if (fetch(c, f, &k, e))
        return -1;
    c->ch[c->nch] = k;
    c->ch[c->nch].tick = ++c->tick;
    c->ra_used += k.count * k.blen;
    c->nch++;
    return chunk_copy(&c->ch[c->nch - 1], off, buf, len);   /* 0: past end of file */
}

int ddio_cache_pread(struct ddio_cache *c, struct ddio_fh *f, uint64_t off, void *buf,
                     uint64_t len, uint64_t *got, struct ddio_err *e)
{
    int rc;

    *got = 0;
    if (len == 0)
        return 0;
    if (c->nwext && overlaps(off, len, c->dlo, c->dhi - c->dlo) && ddio_cache_flush(c, f, e))
        return -1;
    if ((rc = cached_read(c, f, off, buf, len, e)))
        return rc < 0 ? -1 : (*got = len, 0);
    if (ddio_xfer_range(f, DDIO_X_READ, c->xflags, off, buf, len, got, e))
        return -1;
    /* short: the servers' end of file, which buffered writes beyond it
     * move (the bytes between read as zeros then) */
    if (*got < len && c->nwext && c->dhi > off + *got
        && (ddio_cache_flush(c, f, e) || ddio_xfer_range(f, DDIO_X_READ, c->xflags, off, buf, len, got, e)))
        return -1;
    return 0;
}

/* ---- write-behind ---------------------------------------------------------- */

static int ext_cmp(const void *a, const void *b)
{
    const struct ddio_wext *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

/* the extents, sorted and non-overlapping, as one file descriptor over a
 * contiguous buffer of their bytes in file order */
static int flush_desc(struct ddio_cache *c, struct ddio_desc *d, char **data, char **owned)
{
    int64_t *off = malloc(sizeof(*off) * c->nwext), *len = malloc(sizeof(*len) * c->nwext);
    size_t pos = 0;

    *owned = NULL;
    if (!c->sorted) {
        qsort(c->wext, c->nwext, sizeof(*c->wext), ext_cmp);
        *owned = malloc(c->wused);
    }
    if (!off || !len || (!c->sorted && !*owned)) {
        free(off);
        free(len);
        free(*owned);
        *owned = NULL;
        return -ENOMEM;
    }
    for (size_t i = 0; i < c->nwext; i++) {
        off[i] = (int64_t) c->wext[i].off;
        len[i] = (int64_t) c->wext[i].len;
        if (*owned)
            memcpy(*owned + pos, c->wbuf + c->wext[i].pos, c->wext[i].len);
        pos += c->wext[i].len;
    }
    memset(d, 0, sizeof(*d));
    d->disp = off[0];
    d->extent = (int64_t) c->dhi - off[0];
    d->length = pos;
    d->root = ddio_node_from_flat_at(c->nwext, off, len, off[0]);
    free(off);
    free(len);
    *data = *owned ? *owned : c->wbuf;
    return d->root ? 0 : -ENOMEM;
}

int ddio_cache_flush(struct ddio_cache *c, struct ddio_fh *f, struct ddio_err *e)
{
    struct ddio_desc d;
    char *data, *owned;
    int rc;

    if (!c->nwext)
        return 0;
    c->flushes++;
    rc = flush_desc(c, &d, &data, &owned);
    if (rc)
        ddio_err_set(e, -rc, "ddio: out of memory");
    else {
        struct ddio_mem m = {.buf = data,.contig = 1 };
        uint64_t bytes;
        rc = ddio_xfer_one(f, DDIO_X_WRITE, c->xflags, &d, &m, &bytes, e);
        ddio_node_free(d.root);
    }
    free(owned);
    /* written or failed: a failed flush's bytes are lost (the error says
     * so), not retried at every later call */
    c->nwext = c->wused = 0;
    c->dlo = c->dhi = 0;
    c->sorted = 1;
    return rc ? -1 : 0;
}

/* a write wholly inside one buffered extent: overwrite it there */
static int wb_overwrite(struct ddio_cache *c, uint64_t off, const void *buf, uint64_t len)
{
    for (size_t i = 0; i < c->nwext; i++) {
        struct ddio_wext *x = &c->wext[i];
        if (off >= x->off && off + len <= x->off + x->len) {
            memcpy(c->wbuf + x->pos + (off - x->off), buf, len);
            return 1;
        }
    }
    return 0;
}

static int wb_overlaps(const struct ddio_cache *c, uint64_t off, uint64_t len)
{
    if (!c->nwext || !overlaps(off, len, c->dlo, c->dhi - c->dlo))
        return 0;
    for (size_t i = 0; i < c->nwext; i++)
        if (overlaps(off, len, c->wext[i].off, c->wext[i].len))
            return 1;
    return 0;
}

static int wb_alloc(struct ddio_cache *c)
{
    if (!c->wbuf)
        c->wbuf = malloc(c->wb_max);
    if (!c->wext)
        c->wext = malloc(sizeof(*c->wext) * WB_MAX_EXT);
    return c->wbuf && c->wext ? 0 : -1;
}

static void wb_append(struct ddio_cache *c, uint64_t off, const void *buf, uint64_t len)
{
    struct ddio_wext *last = c->nwext ? &c->wext[c->nwext - 1] : NULL;

    memcpy(c->wbuf + c->wused, buf, len);
    if (last && last->off + last->len == off && last->pos + last->len == c->wused)
        last->len += len;       /* sequential: one extent grows */
    else {
        if (last && off < last->off + last->len)
            c->sorted = 0;
        c->wext[c->nwext++] = (struct ddio_wext) {.off = off,.len = len,.pos = c->wused };
    }
    if (c->wused == 0 || off < c->dlo)
        c->dlo = off;
    if (c->wused == 0 || off + len > c->dhi)
        c->dhi = off + len;
    c->wused += len;
}

/* 1 buffered, 0 to be written straight, -1 error */
static int buffer_write(struct ddio_cache *c, struct ddio_fh *f, uint64_t off, const void *buf,
                        uint64_t len, struct ddio_err *e)
{
    drop_written(c, off, len);
    if (!c->wb_max || len * 4 > c->wb_max) {   /* large: straight to the servers, after
                                                 * older bytes it overlaps */
        return wb_overlaps(c, off, len) && ddio_cache_flush(c, f, e) ? -1 : 0;
    }
    if (wb_alloc(c)) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    if (c->nwext && overlaps(off, len, c->dlo, c->dhi - c->dlo) && wb_overwrite(c, off, buf, len))
        return 1;
    if (len >= CACHE_SMALL && c->nwext
        && c->wext[c->nwext - 1].off + c->wext[c->nwext - 1].len != off)
        return wb_overlaps(c, off, len) && ddio_cache_flush(c, f, e) ? -1 : 0;
    if ((wb_overlaps(c, off, len) || c->wused + len > c->wb_max || c->nwext == WB_MAX_EXT)
        && ddio_cache_flush(c, f, e))
        return -1;
    if (!c->nwext)
        c->sorted = 1;
    wb_append(c, off, buf, len);
    return 1;
}

int ddio_cache_pwrite(struct ddio_cache *c, struct ddio_fh *f, uint64_t off, const void *buf,
                      uint64_t len, struct ddio_err *e)
{
    uint64_t bytes;
    int rc;

    if (len == 0)
        return 0;
    if ((rc = buffer_write(c, f, off, buf, len, e)))
        return rc < 0 ? -1 : 0;
    return ddio_xfer_range(f, DDIO_X_WRITE, c->xflags, off, (void *) buf, len, &bytes, e);
}

void ddio_cache_free(struct ddio_cache *c)
{
    ddio_cache_drop(c);
    free(c->wbuf);
    free(c->wext);
    c->wbuf = NULL;
    c->wext = NULL;
    c->nwext = c->wused = 0;
}

void ddio_cache_written(struct ddio_cache *c, uint64_t off, uint64_t len)
{
    drop_written(c, off, len);
}
