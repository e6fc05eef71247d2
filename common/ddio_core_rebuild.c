/* A mirrored file's bytes copied onto a replacement server (DESIGN.md 6.3),
 * by the client, for the reason repairs are (6.2): the servers have no
 * connections to each other. Each chunk is one read XFER to the file's
 * servers for the units the replacement holds, each server reading its
 * part in its sorted pass (the replacement's own units from a copy holder,
 * DDIO_XF_COPY, since the replacement refuses reads of a file it has not
 * rebuilt), then one write XFER to the replacement alone, which writes the
 * views it holds in its own sorted pass and sums them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_core_io.h"
#include "ddio_core.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define REBUILD_CHUNK (8u << 20)        /* logical bytes one read and write move */

/* The pieces of [off, off + len) in units server k holds (its own, the
 * copies it keeps), as a tree relative to off: what a rebuild of k must
 * read. NULL with *n 0: none; NULL with *n set: out of memory. */
static struct ddio_node *held_tree(const struct ddio_fh *f, uint32_t k, uint64_t off,
                                   uint64_t len, uint64_t *n)
{
    uint64_t cap = len / f->stripe.unit + 2;
    int64_t *po = malloc(cap * sizeof(*po)), *pl = malloc(cap * sizeof(*pl));
    struct ddio_node *t = NULL;
    *n = 0;
    for (uint64_t pos = off; po && pl && pos < off + len && *n < cap;) {
        uint64_t end = ddio_layout_unit_end(&f->stripe, pos);
        end = end > off + len ? off + len : end;
        if (ddio_copy_held(f->stripe.count, f->copies, k, ddio_layout_server(&f->stripe, pos))
            >= 0) {
            po[*n] = (int64_t) (pos - off);
            pl[(*n)++] = (int64_t) (end - pos);
        }
        pos = end;
    }
    if (po && pl && *n)
        t = ddio_node_from_flat(*n, po, pl);
    else if (!po || !pl)
        *n = 1;
    free(po);
    free(pl);
    return t;
}

/* The units k holds of [off, off + len) read into buf at their places
 * (what k does not hold is left as it was), every server's local size
 * reported (k's by a copy holder): *eof the file's end. 0, or -1 with e. */
static int read_held(struct ddio_fh *f, uint32_t k, uint64_t off, char *buf, uint64_t len,
                     const char *all, uint64_t *eof, struct ddio_err *e)
{
    uint64_t n;
    struct ddio_node *t = held_tree(f, k, off, len, &n);
    struct ddio_node *mt = t ? ddio_node_clone(t) : NULL;
    uint64_t *local = calloc((size_t) f->nsrv, sizeof(*local));
    int rc = 0;
    if (!t || !mt || !local) {
        ddio_err_set(e, ENOMEM, n ? "ddio: out of memory" : "ddio: %s: server %u holds "
                     "nothing of [%" PRIu64 ", +%" PRIu64 ")", f->path, k, off, len);
        rc = -1;
    }
    struct ddio_desc d = {.disp = (int64_t) off,.extent = (int64_t) len,.root = t,
        .length = t ? t->size : 0
    };
    struct ddio_mem mem = {.buf = buf,.desc = {.extent = (int64_t) len,.root = mt,
                                                .length = t ? t->size : 0}
    };
    struct ddio_xfer_req x = {.f = f,.op = DDIO_X_READ,.nparticipants = 1,.fdesc = &d,
        .mem = &mem,.exact = 1,.local_sizes = local
    };
    if (!rc)
        rc = ddio_xfer_run(&x, all, e);
    *eof = 0;
    for (int i = 0; !rc && i < f->nsrv; i++) {
        if (local[i] == UINT64_MAX) {
            ddio_err_set(e, EIO, "ddio: %s: no local size from server %d (its part's copy "
                         "holder): the end of file is unknown", f->path, i);
            rc = -1;
        } else if (local[i]) {
            uint64_t end = ddio_layout_logical_end(&f->stripe, (uint32_t) i, local[i]);
            *eof = end > *eof ? end : *eof;
        }
    }
    free(local);
    ddio_desc_free(&d);
    ddio_node_free(mt);
    return rc;
}

/* one chunk's read, on a thread of its own while the previous chunk is
 * written: the units server k holds (read_held), or with whole the chunk
 * as the file reads (an erasure-coded rewrite) */
struct chunk_read {
    struct ddio_fh *f;
    int whole;
    uint32_t k;
    const char *all;
    uint64_t off, len, eof;
    char *buf;
    int rc;
    struct ddio_err e;
};

static void *chunk_read_run(void *arg)
{
    struct chunk_read *r = arg;
    memset(&r->e, 0, sizeof(r->e));
    if (r->whole)
        r->rc = r->len ? ddio_move(r->f, DDIO_X_READ, 0, r->off, r->buf, r->len, NULL, &r->e) : 0;
    else
        r->rc = read_held(r->f, r->k, r->off, r->buf, r->len, r->all, &r->eof, &r->e);
    return NULL;
}

/* a chunk of len bytes copied: counted, reported, paced */
static void chunk_done(const struct ddio_rebuild_opt *o, struct ddio_pacer *pc, uint64_t len,
                       uint64_t *copied)
{
    *o->done += len;
    *copied += len;
    if (o->progress)
        o->progress(o->arg, *o->done);
    ddio_pace(pc, o->rate, *o->done);
}

int ddio_rebuild_copy(struct ddio_fh *f, struct ddio_fh *rf, uint32_t k,
                      const struct ddio_rebuild_opt *o, uint64_t *copied, struct ddio_err *e)
{
    char only[DDIO_MAX_SERVERS] = { 0 }, all[DDIO_MAX_SERVERS];
    uint64_t chunk = o->rate && o->rate / 4 < REBUILD_CHUNK ? o->rate / 4 : REBUILD_CHUNK;
    chunk = chunk < 65536 ? 65536 : chunk;
    *copied = 0;
    char *buf[2] = { malloc(chunk), rf ? malloc(chunk) : NULL };
    if (!buf[0] || (rf && !buf[1]) || k >= (uint32_t) f->nsrv) {
        free(buf[0]);
        free(buf[1]);
        ddio_err_set(e, buf[0] ? EINVAL : ENOMEM, "ddio: %s: no stripe server %u", f->path, k);
        return -1;
    }
    only[k] = 1;
    /* every server takes part in each read, those holding none of it too:
     * each DONE carries its local size (k's from a copy holder), so the
     * end of file needs no STAT, which k refuses for a file it has not
     * rebuilt; each reads only the units k holds, not the whole chunk */
    memset(all, 1, sizeof(all));
    /* the reading handle never asks k (which refuses, and whose connection
     * the writes hold): its part and its local size come from a copy
     * holder at once, as for a member out */
    if (rf)
        rf->srv[k].out = 1;
    struct ddio_pacer pc = {.t0 = o->t0_ms,.base = o->base };
    struct chunk_read cur = {.f = rf ? rf : f,.k = k,.all = all,.len = chunk,.buf = buf[0] };
    chunk_read_run(&cur);
    int rc = 0;
    for (int i = 1; !rc; i++) {
        if (cur.rc) {
            *e = cur.e;
            rc = -1;
            break;
        }
        uint64_t len = cur.eof <= cur.off ? 0 : cur.eof - cur.off < chunk ? cur.eof - cur.off
            : chunk;
        if (!len)
            break;
        /* with a second handle, the next chunk is read while this one is
         * written: the survivors' disks and the replacement's overlap */
        struct chunk_read next = cur;
        next.off += chunk;
        next.buf = rf ? buf[i % 2] : buf[0];
        pthread_t th;
        int ahead = rf && next.off < cur.eof && !pthread_create(&th, NULL, chunk_read_run, &next);
        rc = ddio_move(f, DDIO_X_WRITE, 0, cur.off, cur.buf, len, only, e);
        if (ahead)
            pthread_join(th, NULL);
        else if (!rc && next.off < cur.eof)
            chunk_read_run(&next);
        if (!rc)
            chunk_done(o, &pc, len, copied);
        if (next.off >= cur.eof)
            break;
        cur = next;
    }
    free(buf[0]);
    free(buf[1]);
    return rc;
}

/* the chunk at off: at most `chunk`, and with a server named, the whole
 * groups before the last one apart from it (they go to that server alone) */
static uint64_t ec_chunk(uint64_t off, uint64_t size, uint64_t chunk, uint64_t last, int one)
{
    uint64_t len = off >= size ? 0 : size - off < chunk ? size - off : chunk;
    return one && off < last && off + len > last ? last - off : len;
}

/* [0, size) read through rf and written through f (to `only`'s server
 * for the whole groups before `last`, else to every server), the next
 * chunk read while one is written: the survivors' disks and the
 * replacement's overlap */
static int ec_copy(struct ddio_fh *f, struct ddio_fh *rf, const char *only, uint64_t size,
                   uint64_t last, uint64_t chunk, const struct ddio_rebuild_opt *o,
                   uint64_t *copied, struct ddio_err *e)
{
    const uint64_t group = f->stripe.unit * f->ec.k;
    char *buf[2] = {malloc(chunk), malloc(chunk)};
    struct ddio_pacer pc = {.t0 = o->t0_ms,.base = o->base };
    struct chunk_read cur = {.f = rf,.whole = 1,.len = ec_chunk(0, size, chunk, last,
                                                                 only != NULL),.buf = buf[0] };
    int rc = 0;
    if (!buf[0] || !buf[1]) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        rc = -1;
    } else
        chunk_read_run(&cur);
    for (int i = 1; !rc && cur.len; i++) {
        if (cur.rc) {
            *e = cur.e;
            rc = -1;
            break;
        }
        struct chunk_read next = {.f = rf,.whole = 1,.off = cur.off + cur.len,.buf = buf[i % 2] };
        next.len = ec_chunk(next.off, size, chunk, last, only != NULL);
        pthread_t th;
        int ahead = next.len && !pthread_create(&th, NULL, chunk_read_run, &next);
        /* the last group too is written whole, zeros past the end (cut
         * back by the caller): its parity computed again as well */
        uint64_t whole = (cur.len + group - 1) / group * group;
        memset(cur.buf + cur.len, 0, whole - cur.len);
        rc = ddio_move(f, DDIO_X_WRITE, 0, cur.off, cur.buf, whole,
                       only && cur.off + cur.len <= last ? only : NULL, e);
        if (ahead)
            pthread_join(th, NULL);
        else if (!rc)
            chunk_read_run(&next);
        if (!rc)
            chunk_done(o, &pc, cur.len, copied);
        cur = next;
    }
    free(buf[0]);
    free(buf[1]);
    return rc;
}

/* An erasure-coded file's server k (or none, k >= nsrv) brought up to date
 * (DESIGN.md 6.4): the others' partial groups folded first (k passed
 * by), so that every whole group below the last is its data
 * in place on them; then the file read in whole groups through rf (k's
 * units decoded from K of the others) and written to k alone, which
 * writes its data units and computes the parity it holds; the last group
 * (where the end of file falls, not folded) written whole to every
 * server, zeros past the end, then the file cut back to its size. With
 * no server named (a settle), or a file in doubt (o->whole: the others'
 * parity may disagree with their data), every group is written to every
 * server: each gets its parity computed again and its overlay dropped. The
 * file's servers are synced at its end. */
int ddio_ec_rewrite(struct ddio_fh *f, struct ddio_fh *rf, uint32_t k,
                    const struct ddio_rebuild_opt *o, uint64_t *copied, struct ddio_err *e)
{
    uint64_t group = f->stripe.unit * f->ec.k, size = 0, folded, fbytes;
    uint64_t want = o->rate && o->rate / 4 < REBUILD_CHUNK ? o->rate / 4 : REBUILD_CHUNK;
    uint64_t chunk = (want / group ? want / group : 1) * group;
    char only[DDIO_MAX_SERVERS] = {0};
    const int out = k < (uint32_t) rf->nsrv, one = out && !o->whole;
    *copied = 0;
    if (out)
        rf->srv[k].out = 1;
    if (one)
        only[k] = 1;
    int rc = ddio_xfer_file_size(rf, &size, e);
    if (!rc && one) {           /* through f (rf is read-only), k passed by */
        int was = f->srv[k].out;
        f->srv[k].out = 1;
        rc = ddio_ec_fold(f, &folded, &fbytes, e);
        f->srv[k].out = was;
    }
    if (!rc)
        rc = ec_copy(f, rf, one ? only : NULL, size, size / group * group, chunk, o, copied, e);
    if (!rc && size % group)
        rc = ddio_fh_set_local_sizes(f, size, NULL, e);
    return rc ? rc : ddio_fh_sync(f, e);
}

/* An erasure-coded file cut short mid-group: that group's bytes below the
 * new end read and written back whole, zeros past it, so its parity is
 * its data's once the servers cut the rest (SETSIZE: the parity of the
 * groups past the end and the overlay past it dropped) */
static int ec_cut_group(struct ddio_fh *f, uint64_t size, struct ddio_err *e)
{
    uint64_t gsz = f->stripe.unit * f->ec.k, g0 = size / gsz * gsz, cur = 0;
    if (size % gsz == 0 || ddio_xfer_file_size(f, &cur, e) || cur <= size)
        return e->errnum ? -1 : 0;
    char *buf = calloc(1, gsz);
    if (!buf) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    int rc = ddio_move(f, DDIO_X_READ, 0, g0, buf, size - g0, NULL, e);
    if (!rc)
        rc = ddio_move(f, DDIO_X_WRITE, 0, g0, buf, gsz, NULL, e);
    free(buf);
    return rc;
}

int ddio_fh_resize(struct ddio_fh *f, uint64_t size, struct ddio_err *e)
{
    if (f->ec.k && ec_cut_group(f, size, e))
        return -1;
    return ddio_fh_set_local_sizes(f, size, NULL, e);
}
