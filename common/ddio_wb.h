/* Writeback started as data is written through the page cache, by the
 * servers' engine (store_note_cached_write) and by same-host clients
 * (ddio_core_local.c): every DDIO_WB_KICK bytes written into a datafile,
 * the range they lie in goes to sync_file_range(SYNC_FILE_RANGE_WRITE),
 * so a later fdatasync finds little left to write (a sync of 1 GiB of
 * dirty pages would take as long as the whole write did) and the device
 * works while the writers still write. */
#ifndef DDIO_WB_H
#define DDIO_WB_H

#include <stdint.h>

#define DDIO_WB_KICK (256u << 10)

/* a datafile's bytes written since its writeback was last started, and
 * the range they lie in */
struct ddio_wb {
    uint64_t bytes, lo, hi;
};

/* Note a write of [off, off+len). 1 when DDIO_WB_KICK bytes have been
 * noted since the last 1: *lo, *hi and *bytes are then their range and
 * count, and the count starts again; 0 otherwise. */
static inline int ddio_wb_note(struct ddio_wb *t, uint64_t off, uint64_t len, uint64_t *lo,
                               uint64_t *hi, uint64_t *bytes)
{
    if (!t->bytes || off < t->lo)
        t->lo = off;
    if (!t->bytes || off + len > t->hi)
        t->hi = off + len;
    if ((t->bytes += len) < DDIO_WB_KICK)
        return 0;
    *lo = t->lo;
    *hi = t->hi;
    *bytes = t->bytes;
    t->bytes = 0;
    return 1;
}

#endif
