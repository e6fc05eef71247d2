/* The server's shared state. Connections are conn.h's (struct conn); the
 * engine sees them only through transport.h. */
#ifndef DDIO_SRV_SERVER_H
#define DDIO_SRV_SERVER_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include "changed.h"
#include "config.h"
#include "ddio_auth.h"
#include "ddio_proto.h"
#include "disk.h"
#include "member.h"
#include "stats.h"
#include "store.h"

struct conn;                     /* a TCP connection (conn.h) */
struct engine;
struct rb_state;                 /* a replacement's rebuild (rebuild.c) */

struct server {
    struct srv_config cfg;
    struct store store;
    struct disk *disks;
    int ndisks;
    uint64_t device_bps;         /* a replacement's disks, measured at start
                                  * (devprobe.h); 0: not measured */
    char name[320];              /* "host:port", in every error message */
    int lfd;
    int port;
    atomic_int stopping;         /* SIGTERM/SIGINT: stop accepting (listener_serve returns) */
    atomic_int signals;          /* how many arrived: a second one ends the drain */
    atomic_int closing;          /* readers stop: connections are being closed */
    atomic_int stop_refused;     /* collective XFERs refused while draining (logged) */
    pthread_mutex_t mu;          /* connection list */
    pthread_cond_t cv;
    struct conn *conns;
    int nconns;
    int npending;                /* connections not yet authenticated */
    uint64_t refused;            /* connections refused at --max-connections */
    struct ddio_secret secret;   /* loaded at start (not with --insecure) */
    uint64_t next_conn_id;
    struct engine *eng;
    struct srv_stats stats;
    size_t queue_cap;            /* bytes of PUT/GET queued per connection */
    struct srv_ucx *ucx;         /* the UCX transport (ucx.c), NULL when not offered */
    struct ddio_tls_ctx *tls;    /* --tls optional|required: the certificate (tlsgate.c) */
    /* CLOCK_MONOTONIC ms until which only reclaimed locks are granted (0:
     * none): after a restart, or a connection holding locks dropped, their
     * holders take them again first (grace.c, srv_lock_grace) */
    _Atomic int64_t lock_grace_until;
    struct rb_state *rb;         /* fences, unbuilt files, a pending ADOPT */
    struct member member;        /* the deployment's membership (member.h) */
    struct changed changed;      /* its own notes of mirrored files changed (changed.h) */
};

/* "server HOST:PORT: <cause>" (server.c) */
void srv_errmsg(const struct server *srv, char *out, size_t n, const char *fmt, va_list ap);

#endif
