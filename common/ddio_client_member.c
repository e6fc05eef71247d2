/* The tools' API to the deployment's membership (ddio_client.h): read it,
 * and declare a server out or in again (ddio_core_member.h). */
#include "ddio_client.h"
#include "ddio_client_int.h"
#include "ddio_core_member.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int member_fail(const struct ddio_err *e, char *msg, size_t msglen)
{
    if (msg && msglen)
        snprintf(msg, msglen, "%s", e->msg);
    return -(e->errnum ? e->errnum : EIO);
}

int ddio_client_members(struct ddio_client *cl, struct ddio_members *m, char *msg,
                        size_t msglen)
{
    struct ddio_err e = {0};
    if (ddio_members_read(&cl->pool, cl->addr, cl->n, cl->timeout_ms, m, &e))
        return member_fail(&e, msg, msglen);
    /* every server answered: their own notes of changes made before now
     * confirmed too (ddio_members_confirm) */
    int all = 1;
    for (int i = 0; i < cl->n; i++)
        all &= m->reached[i];
    if (all)
        (void) ddio_members_confirm(&cl->pool, cl->addr, cl->n, cl->timeout_ms);
    return 0;
}

int ddio_client_member_set(struct ddio_client *cl, int who, int out, struct ddio_members *m,
                           char *msg, size_t msglen)
{
    struct ddio_err e = {0};
    if (ddio_members_set(&cl->pool, cl->addr, cl->n, cl->timeout_ms, who, out, m, &e))
        return member_fail(&e, msg, msglen);
    return 0;
}

int ddio_client_declare_out(void *arg, const struct ddio_conn *c, struct ddio_err *e)
{
    struct ddio_client *cl = arg;
    struct ddio_members *m = calloc(1, sizeof(*m));
    int who = -1;
    for (int i = 0; i < cl->n; i++)
        if (!strcmp(cl->addr[i], c->addr))
            who = i;
    if (who < 0 || !m) {
        free(m);
        ddio_err_set(e, m ? EINVAL : ENOMEM, "server %s is not in the server list", c->addr);
        return -1;
    }
    int rc = ddio_members_set(&cl->pool, cl->addr, cl->n, cl->timeout_ms, who, DDIO_MEMBER_OUT,
                              m, e);
    free(m);
    return rc;
}
