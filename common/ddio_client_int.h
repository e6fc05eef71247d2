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
    uint32_t redundancy;         /* their mode's word (0: the servers' default) */
    char *servers;
    int xport;                   /* DDIO_TRANSPORT */
    int local_lazy;              /* ddio_client_local_lazy */
};

/* ddio_fh.declare_out of the tools' files (arg: the client): the server
 * declared out by a majority (ddio_client_member.c) */
int ddio_client_declare_out(void *arg, const struct ddio_conn *c, struct ddio_err *e);

/* shared by the files of the tools' API (ddio_client.c) */
void ddio_cl_say(char *msg, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* a core error as this API's: the message, and -errno (-EIO for a
 * connection that failed, whatever its errno) */
int ddio_cl_fail(const struct ddio_err *e, char *msg, size_t msglen);
/* every server's connection, as an open dials them */
int ddio_cl_conns_all(struct ddio_client *cl, struct ddio_conn **conns, struct ddio_err *e);
/* server i's connection (one down and out fails at once) */
int ddio_cl_conn_of(struct ddio_client *cl, int i, struct ddio_conn **c, struct ddio_err *e);
/* one request and its reply on server i: 0 with the reply in *rp (may be
 * NULL), or -errno with the message in msg */
int ddio_cl_call(struct ddio_client *cl, int i, uint16_t type, const struct ddio_wbuf *req,
                 uint8_t **rp, size_t *rn, char *msg, size_t msglen);

#endif
