/* A mirrored file's read that lost servers: which server holding a copy
 * serves each lost part (ddio_core_xfer.c's read_copies sends them). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_core_xstate.h"

#include <errno.h>

#include "ddio_core_conn.h"
#include "ddio_layout.h"

/* a copy of lost server i's units on a server still there, not tried for
 * it yet and not busy this round: its index (slot i now goes there); -2
 * when the only ones left are busy this round (the next round takes it),
 * -1 when none is left */
int xfer_pick_copy(xstate *st, int i, const char *busy)
{
    int wait = 0;
    for (uint32_t c = 1; c < st->f->copies; c++) {
        int q = (int) ddio_copy_server(st->f->stripe.count, (uint32_t) i, c);
        if ((st->s[i].tried & (1u << c)) || !st->conns[q] || st->s[q].degraded
            || !ddio_srv_live(&st->f->srv[q]))
            continue;
        if (busy[q]) {
            wait = 1;
            continue;
        }
        st->s[i].tried |= 1u << c;
        st->s[i].via = q;
        st->s[i].copy = c;
        return q;
    }
    return wait ? -2 : -1;
}

int xfer_copies_due(const xstate *st)
{
    for (int i = 0; i < st->f->nsrv; i++)
        if (st->s[i].degraded == 1)
            return 1;
    return 0;
}

void xfer_no_copy_err(const xstate *st, int i, struct ddio_err *err)
{
    if (st->s[i].integrity.errnum) {  /* every copy tried disagreed with its sums */
        *err = st->s[i].integrity;
        return;
    }
    ddio_err_set(err, EHOSTDOWN, "ddio: server %s is out, and no server holding a copy "
                 "of its part (%u copies) could serve it", st->f->srv[i].conn->name,
                 st->f->copies);
}
