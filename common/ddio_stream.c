/* When a contiguous part is a stream (ddio_stream.h).
 *
 * Parts that fit in memory many times over are kept in the page cache, as
 * ufs: keeps them, so data just written (a checkpoint, HDF5's contiguous
 * rows) is read back from memory; only parts that are a large share of the
 * node's memory stream O_DIRECT in disk order, where the page cache would
 * copy twice and evict everything else. */
#include "ddio_stream.h"

#include <stdlib.h>
#include <unistd.h>

static uint64_t parse_bytes(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return 0;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    return *end ? 0 : (uint64_t)v;
}

static uint64_t from_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), pg = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || pg <= 0)
        return DDIO_STREAM_MIN_FLOOR;
    uint64_t m = (uint64_t)pages * (uint64_t)pg / 64;
    return m > DDIO_STREAM_MIN_FLOOR ? m : DDIO_STREAM_MIN_FLOOR;
}

uint64_t ddio_stream_min(void)
{
    static uint64_t v;            /* a race only computes the same value twice */
    if (!v) {
        const char *e = getenv("DDIO_STREAM_MIN");
        uint64_t given = e && *e ? parse_bytes(e) : 0;
        v = given ? given : from_memory();
    }
    return v;
}
