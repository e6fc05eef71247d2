/* A mirrored file's bytes copied onto a replacement server (DESIGN.md 6.3),
 * by the client, for the reason repairs are (6.2): the servers have no
 * connections to each other. Each chunk is one read XFER to the file's
 * servers, each reading its part in its sorted pass (the replacement's
 * part from a copy holder, DDIO_XF_COPY, since the replacement refuses
 * reads of a file it has not rebuilt), then one write XFER to the
 * replacement alone, which writes the views it holds in its own sorted
 * pass and sums them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_core_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define REBUILD_CHUNK (8u << 20)        /* logical bytes one read and write move */

/* [off, off + len) of f between buf and the servers in involved (NULL:
 * those it touches); exact: those only (a write not sent to copy holders).
 * *got: a read's bytes below the end of file (the lost part's local size
 * comes from its copy's DONE, so this is the file's true end) */
static int move(struct ddio_fh *f, uint32_t op, uint64_t off, char *buf, uint64_t len,
                const char *involved, uint64_t *got, struct ddio_err *e)
{
    struct ddio_desc d = {.disp = (int64_t) off,.extent = (int64_t) len,.start = 0,
        .length = len
    };
    struct ddio_mem mem = {.buf = buf,.contig = 1 };
    struct ddio_xfer_req x = {.f = f,.op = op,.nparticipants = 1,.fdesc = &d,.mem = &mem,
        .exact = involved != NULL
    };
    char *inv = NULL;
    int rc = 0;
    if (!(d.root = ddio_node_leaf(len))
        || (!involved && !(involved = inv = ddio_xfer_involved(f, &d)))) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        rc = -1;
    }
    if (!rc)
        rc = ddio_xfer_run(&x, involved, e);
    *got = rc ? 0 : x.bytes;
    free(inv);
    ddio_desc_free(&d);
    return rc;
}

int ddio_rebuild_copy(struct ddio_fh *f, uint32_t k, const struct ddio_rebuild_opt *o,
                      uint64_t *copied, struct ddio_err *e)
{
    char only[DDIO_MAX_SERVERS] = { 0 }, all[DDIO_MAX_SERVERS];
    uint64_t chunk = o->rate && o->rate / 4 < REBUILD_CHUNK ? o->rate / 4 : REBUILD_CHUNK;
    chunk = chunk < 65536 ? 65536 : chunk;
    *copied = 0;
    char *buf = malloc(chunk);
    if (!buf || k >= (uint32_t) f->nsrv) {
        free(buf);
        ddio_err_set(e, buf ? EINVAL : ENOMEM, "ddio: %s: no stripe server %u", f->path, k);
        return -1;
    }
    only[k] = 1;
    /* every server reads each chunk, those holding none of it too: each
     * DONE carries its local size (k's from a copy holder), so the end of
     * file needs no STAT, which k refuses for a file it has not rebuilt */
    memset(all, 1, sizeof(all));
    struct ddio_pacer pc = {.t0 = o->t0_ms,.base = o->base };
    int rc = 0;
    /* until a read comes back short: the end of file, which a stat from
     * the survivors alone may put too early (the lost server's last unit) */
    for (uint64_t off = 0, got = chunk, put; got == chunk && !rc; off += got) {
        rc = move(f, DDIO_X_READ, off, buf, chunk, all, &got, e);
        if (!rc && got)
            rc = move(f, DDIO_X_WRITE, off, buf, got, only, &put, e);
        *o->done += rc ? 0 : got;
        *copied += rc ? 0 : got;
        if (!rc && o->progress)
            o->progress(o->arg, *o->done);
        if (!rc)
            ddio_pace(&pc, o->rate, *o->done);
    }
    free(buf);
    return rc;
}
