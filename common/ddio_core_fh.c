/* An open file as the driver and the tools use it (ddio_core.h): open,
 * sync, close, free and delete, each bringing the layers below together.
 * The top of the client core: the file layer (ddio_core_file.c,
 * ddio_core_handle.c) opens, syncs, closes and deletes on the stripe
 * servers; around it the client cache is flushed first
 * (ddio_core_cache.c), handles are taken from and given to the parked ones
 * (ddio_core_park.c), and the same-host descriptors are asked for with a
 * read-only OPEN and let go at close (ddio_core_local.c). Nothing below
 * calls up into this file. */
#include "ddio_core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* a read-only OPEN asks for the same-host read descriptors */
static const struct ddio_open_hooks local_ask = {
    .ask_begin = ddio_local_ask_begin,
    .ask_end = ddio_local_ask_end,
};

int ddio_fh_open(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                 uint32_t amode, const struct ddio_create *cr, struct ddio_err *e)
{
    free(f->path);
    f->path = strdup(path);
    f->amode = amode;
    if (!f->path) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    if (f->park && !(cr && cr->excl) && ddio_park_take(f, conns, n, path, amode))
        return 0;
    return ddio_fh_open_servers(f, conns, n, path, amode, cr, &local_ask, e);
}

/* this process's buffered writes go first; what was read ahead is dropped:
 * after a sync others' synced writes must be seen. The same-host counts
 * ride along (posted; the SYNC's send reads the reply first), so a file
 * held open long (a mount's, a job's) shows in the servers' counters at
 * each sync, not only at its close. */
int ddio_fh_sync(struct ddio_fh *f, struct ddio_err *e)
{
    int rc = ddio_cache_flush(&f->cache, f, e);
    ddio_cache_drop(&f->cache);
    ddio_local_report(f);
    return rc ? rc : ddio_fh_sync_servers(f, e);
}

int ddio_fh_close(struct ddio_fh *f, struct ddio_err *e)
{
    struct ddio_err ignored;
    int rc = 0;

    memset(&ignored, 0, sizeof(ignored));
    if (f->srv)         /* buffered writes first; their error is the close's */
        rc = ddio_cache_flush(&f->cache, f, e ? e : &ignored);
    ddio_cache_free(&f->cache);
    /* posted before the CLOSE, or before parking: a parked handle moves no
     * bytes, and one still parked when the process ends is never closed */
    if (f->srv)
        ddio_local_report(f);
    if (f->srv && rc == 0 && ddio_park_put(f))
        return 0;
    if (f->srv)
        ddio_fh_close_servers(f);
    ddio_local_release(f);
    free(f->srv);
    f->srv = NULL;
    f->nsrv = 0;
    return rc;
}

void ddio_fh_free(struct ddio_fh *f)
{
    free(f->locks);
    f->locks = NULL;
    f->nlocks = f->caplocks = 0;
    ddio_cache_free(&f->cache);
    ddio_local_release(f);
    free(f->srv);
    f->srv = NULL;
    free(f->path);
    f->path = NULL;
}

int ddio_delete(struct ddio_conn **conns, int n, const char *path, int timeout_ms,
                int recover_ms, struct ddio_err *e)
{
    ddio_park_drop(path);       /* this process's parked handles: space freed now */
    return ddio_delete_servers(conns, n, path, timeout_ms, recover_ms, e);
}
