/* Striping math (see ddio_layout.h).
 *
 * Stripe s = off / unit covers logical [s*unit, (s+1)*unit); it lives on
 * server s % count as that server's local stripe s / count. Every function
 * is O(1) except foreach, and none overflows for any offset in uint64:
 * results that would not fit (a logical offset beyond UINT64_MAX for a huge
 * local offset, the end of the last unit) saturate at UINT64_MAX, which is
 * never a byte inside a representable range [off, off + len).
 */
#include "ddio_layout.h"
#include "ddio_ec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

uint32_t ddio_layout_server(const struct ddio_stripe *L, uint64_t off)
{
    return (uint32_t)((off / L->unit) % L->count);
}

/* (s / count) * unit <= s * unit <= off, so this cannot overflow. */
uint64_t ddio_layout_local(const struct ddio_stripe *L, uint64_t off)
{
    uint64_t s = off / L->unit;
    return (s / L->count) * L->unit + off % L->unit;
}

uint64_t ddio_layout_logical(const struct ddio_stripe *L, uint32_t server, uint64_t local)
{
    uint64_t ls = local / L->unit;          /* local stripe */
    uint64_t in = local % L->unit;
    if (ls > (UINT64_MAX - server) / L->count)
        return UINT64_MAX;
    uint64_t s = ls * L->count + server;    /* logical stripe */
    if (s > (UINT64_MAX - in) / L->unit)
        return UINT64_MAX;
    return s * L->unit + in;
}

uint64_t ddio_layout_unit_end(const struct ddio_stripe *L, uint64_t off)
{
    uint64_t start = off - off % L->unit;
    if (start > UINT64_MAX - L->unit)
        return UINT64_MAX;
    return start + L->unit;
}

/* Stripes 0..full-1 are complete; stripe `full` has `rem` bytes. Server s
 * holds full/count complete stripes, one more if s < full % count, and the
 * partial one if it is s's turn. The result is <= size: no overflow. */
uint64_t ddio_layout_local_size(const struct ddio_stripe *L, uint32_t server, uint64_t size)
{
    if (server >= L->count)
        return 0;
    uint64_t full = size / L->unit, rem = size % L->unit;
    uint64_t mine = full / L->count + (server < full % L->count ? 1 : 0);
    return mine * L->unit + (full % L->count == server ? rem : 0);
}

uint64_t ddio_layout_logical_end(const struct ddio_stripe *L, uint32_t server, uint64_t local_size)
{
    if (local_size == 0)
        return 0;
    uint64_t last = ddio_layout_logical(L, server, local_size - 1);
    return last == UINT64_MAX ? UINT64_MAX : last + 1;
}

/* Local space is compacted and monotone, so the server's bytes of [0, x)
 * are exactly local [0, local_size(x)): the range's local image is
 * [local_size(off), local_size(off + len)). */
int ddio_layout_local_range(const struct ddio_stripe *L, uint32_t server,
                            uint64_t off, uint64_t len, uint64_t *lo, uint64_t *hi)
{
    uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
    *lo = ddio_layout_local_size(L, server, off);
    *hi = ddio_layout_local_size(L, server, end);
    return *hi > *lo;
}

int ddio_layout_foreach(const struct ddio_stripe *L, uint64_t off, uint64_t len,
                        ddio_layout_fn fn, void *arg)
{
    if (len > UINT64_MAX - off)
        return -EINVAL;
    if (len == 0)
        return 0;
    /* the divisions once (an 8-byte call paid them per piece and per
     * helper); then unit by unit: the next server, a row down after the
     * last. row * unit <= s * unit <= off, and rows only grow while the
     * unit they start is below end: no overflow */
    uint64_t end = off + len, s = off / L->unit, in = off % L->unit;
    uint64_t row = s / L->count;
    uint32_t server = (uint32_t)(s % L->count);
    while (off < end) {
        uint64_t n = L->unit - in < end - off ? L->unit - in : end - off;
        int rc = fn(arg, server, off, row * L->unit + in, n);
        if (rc)
            return rc;
        off += n;
        in = 0;
        if (++server == L->count) {
            server = 0;
            row++;
        }
    }
    return 0;
}

int ddio_copy_held(uint32_t count, uint32_t copies, uint32_t s, uint32_t p)
{
    if (count == 0 || s >= count || p >= count)
        return -1;
    for (uint32_t c = 0; c < copies && c < count; c++)
        if (ddio_copy_server(count, p, c) == s)
            return (int)c;
    return -1;
}

int ddio_copy_touched(const struct ddio_stripe *L, uint32_t copies, uint32_t s,
                      uint64_t off, uint64_t len)
{
    uint64_t lo, hi;
    for (uint32_t c = 0; c < copies && c < L->count; c++)
        if (ddio_layout_local_range(L, ddio_copy_of(L->count, s, c), off, len, &lo, &hi))
            return 1;
    return 0;
}

int ddio_redundancy_parse(const char *s)
{
    if (!strcmp(s, "none"))
        return 1;
    if (!strcmp(s, "mirror") || !strcmp(s, "mirror:2"))
        return 2;
    if (!strcmp(s, "mirror:3"))
        return 3;
    struct ddio_ec E;
    char err[160];
    if (!strncmp(s, "ec:", 3) && ddio_ec_parse(s, &E, err, sizeof(err)) == 0)
        return (int)DDIO_REDUNDANCY_EC_WORD(E.k, E.m);
    return DDIO_REDUNDANCY_BAD;
}

const char *ddio_redundancy_name(uint32_t word)
{
    static _Thread_local char ec[24];
    if (ddio_redundancy_ec_k(word)) {
        snprintf(ec, sizeof(ec), "ec:%u+%u", ddio_redundancy_ec_k(word), ddio_redundancy_ec_m(word));
        return ec;
    }
    uint32_t copies = ddio_redundancy_copies(word);
    return copies <= 1 ? "none" : copies == 2 ? "mirror" : "mirror:3";
}
