/* A TCP connection (struct conn), shared by the modules that serve it, and
 * its send side (conn.c). Private to the server's TCP side: the engine sees
 * a connection only as its struct xp (transport.h). */
#ifndef DDIO_SRV_CONN_H
#define DDIO_SRV_CONN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ddio_auth.h"
#include "ddio_proto.h"
#include "server.h"
#include "transport.h"

#define PAYLOAD_TIMEOUT_MS 60000
/* how long a refusal may take to reach the client before the close */
#define FLUSH_TIMEOUT_MS 1000

struct handle {
    uint64_t id;
    struct ofile *of;
    int writable;                /* opened for writing (same-host writes) */
    atomic_int wrote;            /* written, resized or allocated through it: its
                                  * CLOSE tells the watchers (watch.h) */
    atomic_int changed;          /* a mirrored file changed through it: in doubt
                                  * until it closes (indoubt.h) */
    struct handle *next;
};

/* who is calling: proven by --auth munge (known), else nobody in particular */
#define IDENT_MAX_GROUPS 64
#define SQUASH_ID 65534u          /* nobody / nogroup: a client's root, squashed */
struct ident {
    int known;
    int squashed;                 /* the credential said uid 0 */
    uint32_t cred_uid;            /* the credential's uid, before squashing */
    int asserted;                 /* a trusted mount's ACTAS set uid and gid */
    uint32_t uid, gid;
    int ngroups;                  /* supplementary, from the server's name service */
    uint32_t groups[IDENT_MAX_GROUPS];
};

struct conn {
    struct xp xp;                /* what the engine holds (transport.h) */
    struct server *srv;
    int fd;
    uint64_t id;                 /* also the lock owner */
    atomic_int lock_noted;       /* its client noted as a lock holder (replay.h);
                                  * LOCKs of one connection run on several threads */
    char peer[96];
    atomic_uint_fast64_t client; /* its process's id, from its requests (watch.h) */
    atomic_int refs;
    pthread_mutex_t mu;          /* everything below */
    pthread_cond_t cv;           /* CLOCK_MONOTONIC: queue, gets, workers */
    int dead;
    int hello;
    atomic_int authed;           /* AUTH verified (or --insecure); read by the acceptor */
    int pending;                 /* counted in srv->npending (under srv->mu) */
    atomic_int evicted;          /* closed to make room (--max-unauth) */
    int64_t born_ms;             /* accepted at; the authentication deadline runs from here */
    uint8_t snonce[DDIO_NONCE_LEN];  /* this connection's challenge */
    struct ident who;            /* set once by AUTH, read-only after */
    struct outmsg *qhead, *qtail;
    size_t qbytes;               /* bounded messages queued */
    int writing;                 /* the writer is sending a dequeued message */
    struct handle *handles;
    uint64_t next_handle;
    struct xp_get *gets;         /* GETs waiting for their DATA */
    const void *filling;         /* owner of the GET whose DATA the reader receives */
    int workers;                 /* request threads of this conn (running or idle) */
    int idle;                    /* of those, waiting for a request (wq) */
    struct work *wq;             /* requests handed to idle threads, not yet taken */
    pthread_cond_t wcv;          /* CLOCK_MONOTONIC: wq, dead (idle threads wait here) */
    pthread_cond_t ocv;          /* the writer waits here: queue, writing, dead */
    int flushers;                /* threads in conn_flush (waiting on cv) */
    struct work *held;           /* requests counted against --max-inflight: */
    int nheld;                   /* a slot is free once the final reply is queued */
    pthread_t writer;
    int writer_started;
    struct uep *uep;             /* UCX endpoint after UCXADDR (ucx.c), else NULL */
    uint8_t *scratch;            /* DATA receive buffer (reader thread only) */
    size_t scratch_len;
    struct conn *next;           /* server's list */
};

struct work {
    struct conn *c;
    struct ddio_hdr h;
    uint8_t *payload;
    struct ofile *of;             /* referenced */
    void (*fn)(struct work *w);
    struct work *next_held;       /* in c->held while it counts as in flight */
    struct work *next_queued;    /* in c->wq, waiting for an idle thread */
    int holding;
    int of_answered;              /* its hold on of is marked answered */
    uint64_t changed_gen;         /* its change's note (changed.h), ended with it */
    union {
        struct ddio_xfer x;
        struct ddio_lock lk;
        struct ddio_prealloc pa;
        struct ddio_scrub sc;
        struct ddio_repair rp;   /* its data in payload */
        struct ddio_ecread er;
    } u;
};

void conn_ref(struct conn *c);
void conn_unref(struct conn *c);
/* mark dead, shut the socket down (wakes the reader), drop queued output */
void conn_kill(struct conn *c, const char *why);
/* --max-inflight (c->mu held): hold_slot counts w, or returns 0 (too many);
 * release_slot frees w's slot, or (w NULL) that of request (type, req) */
int hold_slot(struct conn *c, struct work *w);
void release_slot(struct conn *c, struct work *w, uint16_t type, uint64_t req);
/* Queue a message. payload (may be NULL) is taken over and freed.
 * bounded = 1: wait (until deadline_ms) while the connection's queue holds
 * more than queue_cap bytes. 0, -ETIMEDOUT, -ECONNRESET (dead). */
int conn_send(struct conn *c, uint16_t type, uint64_t req, int32_t status,
              uint8_t *payload, size_t plen, int bounded, int64_t deadline_ms);
/* The most pieces conn_send_iov takes (more: -ENOMEM; the caller packs) */
#define CONN_IOV_MAX 64
/* A message whose payload is iov[0..cnt), sent from there when the output
 * is idle (what the socket does not take at once is copied and queued);
 * copied and queued behind the rest otherwise. The caller's bytes are free
 * once it returns. Not for replies (no --max-inflight slot is freed).
 * bounded as conn_send. 0, -ETIMEDOUT, -ECONNRESET, -ENOMEM. */
int conn_send_iov(struct conn *c, uint16_t type, uint64_t req, const struct iovec *iov, int cnt,
                  int bounded, int64_t deadline_ms);
/* a heartbeat, only on an idle connection */
int conn_send_progress(struct conn *c, uint64_t req, int64_t deadline_ms);
/* the writer thread (arg: the connection) */
void *writer_main(void *arg);
/* Wait (bounded) until everything queued went out. */
void conn_flush(struct conn *c, int64_t deadline_ms);
/* "host:port" of the socket's peer */
void peer_name(int fd, char *out, size_t n);

#endif
