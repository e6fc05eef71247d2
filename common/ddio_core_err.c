/* Errors of the client core (ddio_core_conn.h): how one is set, and which are
 * worth a recovery (reconnect, reopen, resend) or another reconnect attempt.
 * The bottom of the core: it calls nothing of the rest. */
#include "ddio_core_conn.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

void ddio_err_set(struct ddio_err *e, int errnum, const char *fmt, ...)
{
    va_list ap;
    e->errnum = errnum ? errnum : EIO;
    e->transport = 0;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
}

int ddio_err_recoverable(const struct ddio_err *e)
{
    /* a refused or dropped connection, or a collective whose peer's dropped
     * (the server failed it for every participant: all of them resend);
     * not a silent server: its deadline already took the whole timeout */
    return (e->transport && e->errnum != ETIMEDOUT && e->errnum != EACCES &&
            e->errnum != ENOENT && e->errnum != ESTALE) || e->errnum == ECONNRESET
        /* the membership changed since the server last answered: the reply
         * brought the new epoch, and the request sent again carries it */
        || e->errnum == DDIO_E_EPOCH;
}

int ddio_err_reconnectable(const struct ddio_err *e)
{
    /* a reconnect attempt that timed out (a server still starting, or
     * draining with a full backlog) is tried again too */
    return ddio_err_recoverable(e) || (e->transport && e->errnum == ETIMEDOUT);
}
