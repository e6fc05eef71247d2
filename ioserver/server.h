/* Shared server structures: the server, its connections. */
#ifndef DDIO_SRV_SERVER_H
#define DDIO_SRV_SERVER_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "ddio_auth.h"
#include "ddio_proto.h"
#include "disk.h"
#include "stats.h"
#include "store.h"

struct engine;
struct pget;

/* a queued outgoing message; the connection's writer thread sends it */
struct outmsg {
    struct outmsg *next;
    uint8_t hdr[DDIO_HDR_SIZE];
    uint8_t *payload;            /* malloc'd, owned */
    size_t plen;
    int64_t deadline_ms;
    int bounded;                 /* counted against the queue's byte cap */
};

struct handle {
    uint64_t id;
    struct ofile *of;
    struct handle *next;
};

struct conn {
    struct server *srv;
    int fd;
    uint64_t id;                 /* also the lock owner */
    char peer[96];
    atomic_int refs;
    pthread_mutex_t mu;          /* everything below */
    pthread_cond_t cv;           /* CLOCK_MONOTONIC: queue, pgets, workers */
    int dead;
    int hello;
    atomic_int authed;           /* AUTH verified (or --insecure); read by the acceptor */
    int pending;                 /* counted in srv->npending (under srv->mu) */
    atomic_int evicted;          /* closed to make room (--max-unauth) */
    int64_t born_ms;             /* accepted at; the authentication deadline runs from here */
    uint8_t snonce[DDIO_NONCE_LEN];  /* this connection's challenge */
    struct outmsg *qhead, *qtail;
    size_t qbytes;               /* bounded messages queued */
    int writing;                 /* the writer is sending a dequeued message */
    struct handle *handles;
    uint64_t next_handle;
    struct pget *pgets;          /* GETs waiting for DATA (engine.c) */
    int workers;                 /* request threads running for this conn */
    struct work *held;           /* requests counted against --max-inflight: */
    int nheld;                   /* a slot is free once the final reply is queued */
    pthread_t writer;
    int writer_started;
    uint8_t *scratch;            /* DATA receive buffer (reader thread only) */
    size_t scratch_len;
    struct conn *next;           /* server's list */
};

struct server {
    struct srv_config cfg;
    struct store store;
    struct disk *disks;
    int ndisks;
    char name[320];              /* "host:port", in every error message */
    int lfd;
    int port;
    atomic_int stopping;         /* SIGTERM/SIGINT: stop accepting (net_serve returns) */
    atomic_int signals;          /* how many arrived: a second one ends the drain */
    atomic_int closing;          /* readers stop: connections are being closed */
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
};

/* net.c: connection services used by the engine */
void conn_ref(struct conn *c);
void conn_unref(struct conn *c);
/* mark dead, shut the socket down (wakes the reader), drop queued output */
void conn_kill(struct conn *c, const char *why);
/* Queue a message. payload (may be NULL) is taken over and freed.
 * bounded = 1: wait (until deadline_ms) while the connection's queue holds
 * more than queue_cap bytes. 0, -ETIMEDOUT, -ECONNRESET (dead). */
int conn_send(struct conn *c, uint16_t type, uint64_t req, int32_t status,
              uint8_t *payload, size_t plen, int bounded, int64_t deadline_ms);
/* Queue a PROGRESS for req unless something is already queued (never
 * waits for queue space). 0 or -errno. */
int conn_send_progress(struct conn *c, uint64_t req, int64_t deadline_ms);
/* Error reply: "server HOST:PORT: <cause>" */
int conn_send_err(struct conn *c, uint16_t type, uint64_t req, int err,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void srv_errmsg(const struct server *srv, char *out, size_t n, const char *fmt, va_list ap);

#endif
