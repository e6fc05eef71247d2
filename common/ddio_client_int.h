/* struct ddio_client, shared by the files of the tools' API
 * (ddio_client.c, ddio_client_watch.c); callers see it opaque. */
#ifndef DDIO_CLIENT_INT_H
#define DDIO_CLIENT_INT_H

#include "ddio_core.h"

struct ddio_client {
    struct ddio_pool pool;
    int n;
    char **addr;                 /* the server list, in list order */
    int timeout_ms;
    int recover_ms;              /* a lost server: reconnect, resend (ddio_recover_ms) */
    uint64_t unit;               /* of files it creates */
    uint32_t count;              /* their stripe count (0: every server) */
    char *servers;
    int xport;                   /* DDIO_TRANSPORT */
    int local_lazy;              /* ddio_client_local_lazy */
};

/* ddio_fh.declare_out of the tools' files (arg: the client): the server
 * declared out by a majority (ddio_client_member.c) */
int ddio_client_declare_out(void *arg, const struct ddio_conn *c, struct ddio_err *e);


#endif
