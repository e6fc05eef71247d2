/* The client cache of a ddio file (write-behind, read-ahead: the client
 * core's ddio_core_cache.c) as MPI-IO sees it: its sizes from the hints
 * romio_ddio_write_behind and romio_ddio_read_ahead (bytes, 0 off; default
 * 4 MiB each), off in atomic mode, flushed where other processes may look
 * (sync, collectives, set_view, set_size, preallocate, get_size, nonblocking
 * and strided calls of this process, close). */
#include "ad_ddio.h"
#include <string.h>

#define ADIOI_DDIO_CACHE_DFLT (4 << 20)

int ADIOI_DDIO_Cache_flush(ADIO_File fd, int drop, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    int rc;

    if (!f || !f->fh.srv)
        return 0;
    rc = ddio_cache_flush(&f->fh.cache, &f->fh, e);
    if (drop)
        ddio_cache_drop(&f->fh.cache);
    return rc;
}

static size_t size_of(int hint)
{
    return hint < 0 ? ADIOI_DDIO_CACHE_DFLT : (size_t) hint;
}

int ADIOI_DDIO_Cache_setup(ADIO_File fd, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    size_t wb = fd->atomicity ? 0 : size_of(f->write_behind);
    size_t ra = fd->atomicity ? 0 : size_of(f->read_ahead);
    struct ddio_cache *c = &f->fh.cache;
    int rc = 0;

    if (f->fh.srv && (c->wb_max != wb || c->ra_max != ra)) {
        rc = ADIOI_DDIO_Cache_flush(fd, 1, e);
        ddio_cache_free(c);
        ddio_cache_init(c, wb, ra);
    }
    c->xflags = ADIOI_DDIO_Xfer_flags(f);
    return rc;
}
