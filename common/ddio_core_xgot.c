/* A read's received stream ranges (ddio_core_xstate.h): noted as PUTs land,
 * merged when a resend or a copy's read sent some twice, and at the end
 * of file the count and the holes (zero-filled) worked out from them. */
#include "ddio_core_xstate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int seg_cmp(const void *a, const void *b)
{
    const struct ddio_seg *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

int xfer_note_got(xstate *st, const struct ddio_seg *g)
{
    struct ddio_seg *last = st->ngot ? &st->got[st->ngot - 1] : NULL;
    st->got_bytes += g->len;
    if (last && last->off + last->len == g->off) {
        last->len += g->len;
        return 0;
    }
    if (st->ngot == st->capgot) {
        size_t cap = st->capgot ? 2 * st->capgot : 64;
        struct ddio_seg *p = realloc(st->got, cap * sizeof(*p));
        if (!p)
            return -ENOMEM;
        st->got = p;
        st->capgot = cap;
    }
    st->got[st->ngot++] = *g;
    return 0;
}

/* after a resend a read's ranges may repeat: count each byte once */
void xfer_got_merge(xstate *st)
{
    size_t m = 0;
    if (st->ngot)               /* (none: got may be NULL) */
        qsort(st->got, st->ngot, sizeof(*st->got), seg_cmp);
    st->got_bytes = 0;
    for (size_t k = 0; k < st->ngot; k++) {
        struct ddio_seg g = st->got[k];
        if (m && st->got[m - 1].off + st->got[m - 1].len >= g.off) {
            uint64_t end = g.off + g.len, pend = st->got[m - 1].off + st->got[m - 1].len;
            if (end > pend)
                st->got[m - 1].len = end - st->got[m - 1].off;
        } else
            st->got[m++] = g;
    }
    st->ngot = m;
    for (size_t k = 0; k < m; k++)
        st->got_bytes += st->got[k].len;
}

/* ---- end of file: short counts and holes ----------------------------------- */

static int zero_piece(void *arg, int64_t addr, uint64_t len, uint64_t stream_off)
{
    (void) stream_off;
    memset((char *) arg + addr, 0, len);
    return 0;
}

static void zero_range(xstate *st, uint64_t lo, uint64_t hi)
{
    const struct ddio_mem *m = st->x->mem;
    if (lo >= hi)
        return;
    if (m->contig)
        memset(m->buf + lo, 0, hi - lo);
    else
        ddio_desc_walk_stream(&m->desc, lo, hi, zero_piece, m->buf);
}

/* The stream bytes below the file's logical size count as read; those no
 * server sent are holes and read as zeros. */
void xfer_finish_read(xstate *st)
{
    struct ddio_fh *f = st->f;
    char *skip = calloc(f->nsrv, 1);
    uint64_t *known = calloc(f->nsrv, sizeof(*known)), size = 0, n, cur = 0;

    for (int i = 0; skip && known && i < f->nsrv; i++) {
        skip[i] = (char) st->s[i].have_size;
        known[i] = st->s[i].local_size;
    }
    if (!skip || !known)
        ddio_err_set(st->e, ENOMEM, "ddio: out of memory");
    else if (!ddio_fh_size(f, skip, known, &size, st->e)) {
        n = ddio_desc_stream_before(st->x->fdesc, (int64_t) size);
        if (st->ngot)           /* none: every byte a hole (qsort of NULL is undefined) */
            qsort(st->got, st->ngot, sizeof(*st->got), seg_cmp);
        for (size_t k = 0; k < st->ngot && cur < n; k++) {
            zero_range(st, cur, st->got[k].off < n ? st->got[k].off : n);
            if (st->got[k].off + st->got[k].len > cur)
                cur = st->got[k].off + st->got[k].len;
        }
        zero_range(st, cur, n);
        st->x->bytes = n > st->got_bytes ? n : st->got_bytes;
    }
    free(skip);
    free(known);
}

