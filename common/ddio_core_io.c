/* What a read or write of an open file sends (ddio_core_io.h): the stripe
 * servers a request touches, the part this process does itself on
 * same-host datafiles (ddio_core_local.c) instead of an XFER, a read into
 * memory whose pieces share bytes done in ordered windows, and the entry
 * points for a file descriptor's bytes or a byte range, independent or one
 * rank's part of a collective; the file's size with a server out, from
 * its copies. The XFER itself, sent and served until DONE, is
 * ddio_core_xfer.c's. */
#include "ddio_core_io.h"
#include "ddio_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- done here, on same-host datafiles ---------------------------------------- */

/* a read of one participant that the client can do itself on this host
 * (ddio_core_local.c): a contiguous file range into contiguous memory; of
 * a collective, only a plain-range part the servers would cache too */
static int read_here(struct ddio_xfer_req *x, const char *involved)
{
    const struct ddio_desc *d = x->fdesc;
    int64_t first, end;

    if (x->op != DDIO_X_READ || x->nparticipants != 1 || !x->mem->contig || !d->length
        || d->root->kind != DDIO_N_LEAF || (x->group && d->length >= ddio_stream_min()))
        return 0;
    ddio_desc_bounds(d, &first, &end);
    return end - first == (int64_t) d->length
        && ddio_local_pread(x->f, (uint64_t) first, x->mem->buf, d->length, involved, x->raw,
                            &x->bytes);
}

/* an independent write of a contiguous range from contiguous memory, which
 * the client can do itself on this host (ddio_core_local.c) */
static int write_here(struct ddio_xfer_req *x, const char *involved)
{
    const struct ddio_desc *d = x->fdesc;
    int64_t first, end;

    if (x->op != DDIO_X_WRITE || x->nparticipants != 1 || x->group || !x->mem->contig
        || !d->length || d->root->kind != DDIO_N_LEAF)
        return 0;
    ddio_desc_bounds(d, &first, &end);
    if (end - first != (int64_t) d->length
        || !ddio_local_pwrite(x->f, (uint64_t) first, x->mem->buf, d->length, involved))
        return 0;
    x->bytes = d->length;
    return 1;
}

/* x done by this process itself where it can, else by the servers */
static int xfer_run(struct ddio_xfer_req *x, const char *involved, struct ddio_err *e)
{
    x->bytes = 0;
    if (read_here(x, involved) || write_here(x, involved))
        return 0;
    return ddio_xfer_servers(x, involved, e);
}

/* ---- reads into memory whose pieces share bytes -------------------------------- */

/* An ordered read's part in its collective call: the servers' gate waits
 * for every participant, so this one joins with nothing (its bytes follow
 * in windows: a collective read changes no byte of the file, so they see
 * what the call's XFER would have) */
static int ordered_join(struct ddio_xfer_req *x, const char *involved, struct ddio_err *e)
{
    const struct ddio_desc *d = x->fdesc;
    const struct ddio_mem *m = x->mem;
    struct ddio_desc none = *d;
    struct ddio_mem cm = {.contig = 1 };
    int rc;

    none.length = 0;
    x->fdesc = &none;
    x->mem = &cm;
    rc = xfer_run(x, involved, e);
    x->fdesc = d;
    x->mem = m;
    return rc;
}

/* stream bytes [at, at+n) of x into contiguous cm, as independent I/O of
 * the servers holding them; *got: the bytes below the end of file */
static int ordered_window(const struct ddio_xfer_req *x, struct ddio_mem *cm, uint64_t at,
                          uint64_t n, uint64_t *got, struct ddio_err *e)
{
    struct ddio_desc w = *x->fdesc;
    struct ddio_xfer_req s = *x;
    char *inv;
    int rc;

    w.start += at;
    w.length = n;
    s.fdesc = &w;
    s.mem = cm;
    s.flags &= ~DDIO_XF_COLLECTIVE;
    s.group = s.seq = 0;
    s.nparticipants = 1;
    s.rank = 0;
    if (!(inv = ddio_xfer_involved(x->f, &w))) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    rc = xfer_run(&s, inv, e);
    free(inv);
    *got = rc ? 0 : s.bytes;
    return rc;
}

/* A read into memory whose pieces share bytes (ROMIO's flattening of some
 * types: docs/DESIGN.md 9.5): the servers' PUTs arrive in any order, so
 * placing them as they come would leave whichever came last. ROMIO's ufs:
 * places in stream order; so does this, a window of at most
 * ddio_ordered_window() stream bytes at a time (a fixed cost, whatever the
 * request's size): each read into a contiguous buffer, then scattered in
 * order before the next (holes and the end of file as there). */
static int ordered_read(struct ddio_xfer_req *x, const char *involved, struct ddio_err *e)
{
    uint64_t len = x->fdesc->length, win = ddio_ordered_window(), done = 0, got, n;
    struct ddio_mem cm = {.contig = 1 };
    int rc = 0;

    x->bytes = 0;
    if (x->nparticipants > 1 && ordered_join(x, involved, e))
        return -1;
    if (!(cm.buf = malloc(len < win ? (len ? len : 1) : win))) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    for (; !rc && done < len; done += got) {
        n = len - done < win ? len - done : win;
        rc = ordered_window(x, &cm, done, n, &got, e);
        if (!rc)
            ddio_desc_scatter(&x->mem->desc, x->mem->buf, 0, done, done + got, cm.buf);
        if (!rc && got < n) {   /* the end of file: nothing more to read */
            done += got;
            break;
        }
    }
    free(cm.buf);
    x->bytes = rc ? 0 : done;
    return rc;
}

int ddio_xfer_run(struct ddio_xfer_req *x, const char *involved, struct ddio_err *e)
{
    if (x->op == DDIO_X_READ && !x->raw && !x->mem->contig && x->mem->ordered)
        return ordered_read(x, involved, e);
    return xfer_run(x, involved, e);
}

/* (ddio_core_io.h) a range of a file moved as one participant's call */
int ddio_move(struct ddio_fh *f, uint32_t op, uint32_t flags, uint64_t off, char *buf,
              uint64_t len, const char *only, struct ddio_err *e)
{
    struct ddio_desc d = {.disp = (int64_t) off,.extent = (int64_t) len,.start = 0,
        .length = len
    };
    struct ddio_mem mem = {.buf = buf,.contig = 1 };
    struct ddio_xfer_req x = {.f = f,.op = op,.flags = flags,.nparticipants = 1,.fdesc = &d,
        .mem = &mem,.exact = only != NULL
    };
    int rc = (d.root = ddio_node_leaf(len)) ? ddio_xfer_run(&x, only, e)
        : (ddio_err_set(e, ENOMEM, "ddio: out of memory"), -1);
    ddio_desc_free(&d);
    return rc;
}


/* ---- which servers a request touches -------------------------------------------- */

typedef struct mark_arg {
    char *involved;
    uint32_t left;
} mark_arg;

static int mark_server(void *arg, uint32_t server, uint64_t logical_off, uint64_t local_off,
                       uint64_t len)
{
    mark_arg *a = arg;
    (void) logical_off;
    (void) local_off;
    (void) len;
    if (!a->involved[server]) {
        a->involved[server] = 1;
        a->left--;
    }
    return a->left == 0;        /* every server marked: stop early */
}

char *ddio_xfer_involved(const struct ddio_fh *f, const struct ddio_desc *d)
{
    char *inv = calloc(f->nsrv ? f->nsrv : 1, 1);
    mark_arg a = {.involved = inv,.left = (uint32_t) f->nsrv };
    int64_t first, end;

    if (!inv)
        return NULL;
    ddio_desc_bounds(d, &first, &end);
    if (end > first)
        ddio_layout_foreach(&f->stripe, (uint64_t) first, (uint64_t) (end - first),
                            mark_server, &a);
    return inv;
}

/* ---- one participant ------------------------------------------------------------ */

static int xfer_one(struct ddio_fh *f, uint32_t op, uint32_t flags, uint64_t group,
                    uint64_t seq, const struct ddio_desc *d, const struct ddio_mem *mem,
                    uint64_t *bytes, struct ddio_err *e)
{
    struct ddio_xfer_req x = {.f = f,.op = op,.flags = flags,.group = group,.seq = seq,
        .nparticipants = 1,.fdesc = d,.mem = mem
    };
    char *inv = ddio_xfer_involved(f, d);
    int rc = inv ? ddio_xfer_run(&x, inv, e) : (ddio_err_set(e, ENOMEM, "ddio: out of memory"), -1);
    free(inv);
    *bytes = rc ? 0 : x.bytes;
    return rc;
}

int ddio_xfer_one(struct ddio_fh *f, uint32_t op, uint32_t flags, const struct ddio_desc *d,
                  const struct ddio_mem *mem, uint64_t *bytes, struct ddio_err *e)
{
    return xfer_one(f, op, flags, 0, 0, d, mem, bytes, e);
}

int ddio_xfer_range_of(struct ddio_fh *f, uint32_t op, uint32_t flags, uint64_t group,
                       uint64_t seq, uint64_t off, void *buf, uint64_t len, uint64_t *bytes,
                       int *local, struct ddio_err *e)
{
    struct ddio_desc d = {.disp = (int64_t) off,.extent = (int64_t) len,.start = 0,.length = len };
    struct ddio_mem m = {.buf = buf,.contig = 1 };
    int rc, dummy;

    *bytes = 0;
    local = local ? local : &dummy;
    *local = 1;
    /* the common case of read_here (above) without building a descriptor */
    if (op == DDIO_X_READ && (!group || len < ddio_stream_min())
        && ddio_local_pread(f, off, buf, len, NULL, 0, bytes))
        return 0;
    if (op == DDIO_X_WRITE && (!group || len < ddio_stream_min())
        && ddio_local_pwrite(f, off, buf, len, NULL)) {
        *bytes = len;
        return 0;
    }
    *local = 0;
    if (!(d.root = ddio_node_leaf(len))) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    rc = xfer_one(f, op, flags, group, seq, &d, &m, bytes, e);
    ddio_node_free(d.root);
    return rc;
}

int ddio_xfer_range(struct ddio_fh *f, uint32_t op, uint32_t flags, uint64_t off, void *buf,
                    uint64_t len, uint64_t *bytes, struct ddio_err *e)
{
    return ddio_xfer_range_of(f, op, flags, 0, 0, off, buf, len, bytes, NULL, e);
}

/* ---- the size with servers out ---------------------------------------------- */

/* A read of file byte 0 involving no server: the servers that are out
 * (not open) have their empty parts sent to copy holders, whose DONEs
 * carry the copies' sizes (read_copies); the others only held */
static int copy_sizes(struct ddio_fh *f, const char *which, uint64_t *local,
                      struct ddio_err *e)
{
    char none[DDIO_MAX_SERVERS] = { 0 }, byte;
    uint64_t *got = calloc((size_t) f->nsrv, sizeof(*got));
    struct ddio_desc d = {.disp = 0,.extent = 1,.start = 0,.length = 1 };
    struct ddio_mem mem = {.buf = &byte,.contig = 1 };
    struct ddio_xfer_req x = {.f = f,.op = DDIO_X_READ,.nparticipants = 1,.fdesc = &d,
        .mem = &mem,.raw = 1,.local_sizes = got
    };
    int rc = got && (d.root = ddio_node_leaf(1)) ? 0 : -1;
    if (rc)
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
    if (!rc)
        rc = ddio_xfer_servers(&x, none, e);
    for (int i = 0; !rc && i < f->nsrv; i++) {
        if (!which[i])
            continue;
        if (got[i] == UINT64_MAX) {
            ddio_err_set(e, EHOSTDOWN, "ddio: %s: server %s is out and no server holding "
                         "a copy of its part gave its size", f->path ? f->path : "?",
                         f->srv[i].conn->name);
            rc = -1;
        } else
            local[i] = got[i];
    }
    free(got);
    ddio_desc_free(&d);
    return rc;
}

int ddio_xfer_file_size(struct ddio_fh *f, uint64_t *size, struct ddio_err *e)
{
    /* a server the STAT fan-out itself declared out (lost for the recovery
     * time) answered nothing: asked once more, its size then a copy's */
    for (int round = 0;; round++) {
        char out[DDIO_MAX_SERVERS] = { 0 };
        uint64_t known[DDIO_MAX_SERVERS] = { 0 };
        int nout = 0, moved = 0, rc;
        for (int i = 0; i < f->nsrv; i++)
            nout += out[i] = (char) f->srv[i].out;
        if (!nout)
            rc = ddio_fh_size(f, NULL, NULL, size, e);
        else
            rc = copy_sizes(f, out, known, e) ? -1 : ddio_fh_size(f, out, known, size, e);
        for (int i = 0; i < f->nsrv; i++)
            moved |= f->srv[i].out && !out[i];
        if (rc == 0 || !moved || round)
            return rc;
        memset(e, 0, sizeof(*e));
    }
}
