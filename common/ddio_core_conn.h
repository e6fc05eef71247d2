/* The client core's bottom layer (ddio_core.h): errors, configuration,
 * connections, and riding through a lost server at the connection level.
 * Calls run one way, from each file to the ones before it:
 *
 *   ddio_core_err.c      struct ddio_err, and which errors are worth a retry
 *   ddio_core_conf.c     where the servers, the secret and the timeout come
 *                        from (hint, environment, DDIO_CONFIG)
 *   ddio_core_conn.c     pools keyed by host:port, connect + HELLO + AUTH
 *                        (+ UCX), one request/reply, fan-out to several
 *   ddio_core_recover.c  call ids for resends, backoff, a fan-out resent and
 *                        a connect retried through a lost server, every
 *                        server of a file dialled at once
 *
 * Nothing here knows about files: ddio_core_file.h is the layer above. */
#ifndef DDIO_CORE_CONN_H
#define DDIO_CORE_CONN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "ddio_proto.h"

#define DDIO_ERR_LEN        512
#define DDIO_DFLT_UNIT      (1u << 20)  /* stripe unit of new files */
#define DDIO_DFLT_TIMEOUT_S 30

/* ---- ddio_core_err.c: errors ------------------------------------------------- */

struct ddio_err {
    int errnum;
    int transport;              /* the connection failed (not a server's answer) */
    char msg[DDIO_ERR_LEN];
};
void ddio_err_set(struct ddio_err *e, int errnum, const char *fmt, ...)
    __attribute__ ((format(printf, 3, 4)));
/* e is worth a recovery (the connection broke, or a collective peer's did) */
int ddio_err_recoverable(const struct ddio_err *e);
/* a failed reconnect attempt (e) worth another one */
int ddio_err_reconnectable(const struct ddio_err *e);

/* ---- ddio_core_conf.c: configuration ----------------------------------------- */

/* Server list: spec when given (remembered for later calls without one),
 * else $DDIO_SERVERS, else "servers" in $DDIO_CONFIG, else the last spec
 * given in this process. Free with ddio_free_list. */
int ddio_server_list(const char *spec, char ***list, int *n, struct ddio_err *e);
void ddio_free_list(char **list, int n);
/* Secret file for connections made from now on: the hint when given (and
 * remembered), else $DDIO_SECRET_FILE, else "secret_file" in $DDIO_CONFIG. */
void ddio_secret_hint(const char *hint);
const char *ddio_secret_hint_get(void);
/* default striping of new files from $DDIO_CONFIG: 0 where not given */
void ddio_config_striping(long long *unit, int *factor);
/* timeout: hint_s (> 0), else $DDIO_TIMEOUT, else config, else 30 s */
int ddio_timeout_ms(int hint_s);
/* how long a call rides through a lost server (reconnecting, reopening,
 * resending): hint_s (>= 0; 0 turns recovery off), else
 * $DDIO_RECOVER_TIMEOUT, else timeout_ms */
int ddio_recover_ms(int hint_s, int timeout_ms);
/* stream bytes an ordered read (ddio_mem.ordered) reads and places at a
 * time: its whole cost in memory ($DDIO_ORDERED_WINDOW, bytes; the tests
 * make it small to cross many windows) */
#define DDIO_ORDERED_WINDOW_DFLT (4u << 20)
uint64_t ddio_ordered_window(void);
/* same-host reads on unless DDIO_LOCAL_READ=0 (hint: 1 on, 0 off, -1 none) */
int ddio_local_read_on(int hint);
int ddio_local_write_on(int hint);   /* the same for writes: DDIO_LOCAL_WRITE */

/* ---- ddio_core_conn.c: connections ------------------------------------------- */

struct ddio_pool;

/* replies a connection may owe for requests nobody waits on */
#define DDIO_CONN_POSTED 16

struct ddio_conn {
    pthread_mutex_t mu;         /* one conversation at a time */
    struct ddio_pool *pool;     /* how to (re)connect: secret, transport */
    char addr[256];             /* "host:port" as configured */
    char name[256];             /* the server's own name, for messages */
    int sock;                   /* -1 when not connected */
    unsigned gen;               /* bumped at every (re)connect */
    uint64_t next_req;
    uint8_t id[DDIO_ID_LEN];
    uint32_t ndisks;
    uint64_t block_size;
    struct ddio_ucx_ep *ucx;    /* XFER data may move by UCX; NULL: TCP only */
    int ucx_lazy;               /* UCX wanted and offered, not attached yet:
                                 * the first XFER that wants it attaches */
    int ucx_forced;             /* DDIO_TRANSPORT (or the pool) said ucx */
    int ucx_own_ep;             /* the server makes its own endpoint back
                                 * (DDIO_SRV_UCX_EP): ATTACH sends our address */
    uint64_t ucx_cookie;        /* the server's name for this connection */
    char ucx_why[200];          /* why not UCX */
    int nposted;                /* requests sent without waiting (ddio_conn_post) */
    uint64_t posted_req[DDIO_CONN_POSTED];
    uint16_t posted_type[DDIO_CONN_POSTED];
    int local_no;               /* LOCAL refused as another host: not asked
                                 * again on this connection */
    unsigned fork_gen;          /* ddio_fork_gen() when connected */
    int member_out;             /* unreachable at the last connect, and out in the
                                 * membership record (id from there): opens go
                                 * on without it (ddio_members_fill_out) */
    int gone;                   /* unreachable for the whole recovery time of
                                 * the last open's dial, and not out: that
                                 * open decides (a mirrored file's declares
                                 * it out); gone_err says why */
    struct ddio_err gone_err;
    int64_t silent_until;       /* a connect with the whole timeout got no
                                 * handshake (a stopped or hung server): until
                                 * then (one timeout later) a connect is a
                                 * short probe, so an operation's further
                                 * steps, and the next operations, do not each
                                 * wait the timeout again (ddio_conn_ready) */
    int timeout_ms;             /* the last connect's timeout: the silent
                                 * window after a request got no answer */
    uint32_t epoch;             /* the membership epoch the server's last reply
                                 * carried, sent with every request (0: none
                                 * heard yet); kept across reconnects, so a
                                 * request after a change is refused once */
};

/* Connections to servers by address, made on first use. */
struct ddio_pool {
    pthread_mutex_t mu;         /* the list */
    struct ddio_conn **conns;
    int n, cap;
    char *secret_file;          /* NULL: ddio_secret_hint / environment / config */
    const char *client_name;    /* our name in HELLO; NULL: the host name */
    int xport;                  /* enum ddio_xport to ask for; -1: DDIO_TRANSPORT */
    int strict_ucx;             /* UCX forced and not had: the connect fails */
    long act_uid, act_gid;      /* >= 0: each connection asks to act for this
                                 * user (ACTAS: a trusted mount); -1: not */
};
#define DDIO_POOL_INIT { .mu = PTHREAD_MUTEX_INITIALIZER, .xport = -1, .act_uid = -1, \
                         .act_gid = -1 }

/* how many forks this process's line has been through since the first
 * connection (pthread_atfork): a connection made before the last one, or a
 * call id taken then, is the parent's (ddio_conn_send lets go of such a
 * connection and the call reconnects; ddio_client_id draws a new id) */
unsigned ddio_fork_gen(void);
/* DDIO_TIMING set (not "0"): print each connection's stages to stderr */
int ddio_timing_on(void);

/* Send a request whose reply nobody waits for (conversation held): what
 * cannot fail its caller, a read-only handle's CLOSE. The reply is read
 * and dropped before c's next conversation (ddio_conn_send,
 * ddio_conn_drain), a server's error with it. -1 with e set when the
 * connection broke. */
int ddio_conn_post(struct ddio_conn *c, uint16_t type, const void *payload, size_t len,
                   int64_t deadline_ms, struct ddio_err *e);
/* read and drop the replies c owes for posted requests, oldest first: -1
 * (e set, c failed) when the connection broke */
int ddio_conn_drain(struct ddio_conn *c, int64_t deadline_ms, struct ddio_err *e);

/* XFER data may move by UCX on c: attached, or to be at first use */
static inline int ddio_conn_has_ucx(const struct ddio_conn *c)
{
    return c->ucx != NULL || c->ucx_lazy;
}
/* Attach c to UCX now if it is waiting to (conversation held, none in
 * flight): 0 (attached, or it stays on TCP with the reason in c->ucx_why),
 * -1 with e set when the connection broke (e->transport, c failed) or UCX
 * was forced (DDIO_TRANSPORT = ucx) and c has none: this attachment, or an
 * earlier one, came to nothing. */
int ddio_conn_ucx(struct ddio_conn *c, int64_t deadline_ms, struct ddio_err *e);

/* the pool's connection to addr, connected (and handshaken) if it was not */
int ddio_pool_get(struct ddio_pool *p, const char *addr, int timeout_ms,
                  struct ddio_conn **out, struct ddio_err *e);
/* close and free every connection (the pool itself is the caller's) */
void ddio_pool_clear(struct ddio_pool *p);
/* the pool's connection to addr, made (not connected) if it was not there;
 * NULL: out of memory */
struct ddio_conn *ddio_pool_find(struct ddio_pool *p, const char *addr);
/* connect c if it is not (c->mu held); within c's silent window, with a
 * probe's deadline (DDIO_PROBE_MS) rather than timeout_ms */
int ddio_conn_ready(struct ddio_conn *c, int timeout_ms, struct ddio_err *e);
/* c timed out at its last connect and its silent window is still open:
 * connecting again now is a probe, and waiting for it is pointless */
int ddio_conn_silent(struct ddio_conn *c);
#define DDIO_PROBE_MS 500
/* c (may be NULL) is not connected and silent: 1 with the reason in *e,
 * for a look at who answers now, which skips it rather than probe it */
int ddio_conn_skip_silent(struct ddio_conn *c, struct ddio_err *e);
/* drop the connection (its byte stream can no longer be trusted) */
void ddio_conn_fail(struct ddio_conn *c);
/* lock / unlock n connections (NULLs and repeats allowed) in one global order */
void ddio_conns_lock(struct ddio_conn *const *v, int n);
void ddio_conns_unlock(struct ddio_conn *const *v, int n);

/* the pieces of a conversation (c->mu held) */
int ddio_conn_send(struct ddio_conn *c, uint16_t type, const void *payload, size_t len,
                   uint64_t *req, int64_t deadline, struct ddio_err *e);
/* ddio_conn_send carrying view as its epoch when lower than c->epoch: a
 * mirrored file's change carries its handle's view of who is out
 * (ddio_fh.view_epoch; 0: c->epoch) */
int ddio_conn_send_view(struct ddio_conn *c, uint16_t type, const void *payload, size_t len,
                        uint32_t view, uint64_t *req, int64_t deadline, struct ddio_err *e);
int ddio_conn_recv_payload(struct ddio_conn *c, const struct ddio_hdr *h, int64_t deadline,
                           uint8_t **payload, struct ddio_err *e);
int ddio_conn_recv_reply(struct ddio_conn *c, uint16_t type, uint64_t req, int64_t deadline,
                         uint8_t **payload, size_t *len, struct ddio_err *e);
/* a server's error reply: its message, or one made from the status */
void ddio_conn_server_error(const struct ddio_conn *c, int status, const uint8_t *p, size_t n,
                            struct ddio_err *e);
/* a transport failure on c: the message, and the connection dropped */
void ddio_conn_transport_error(struct ddio_conn *c, int rc, const char *what,
                               struct ddio_err *e);

/* A request to one server, part of a fan-out. */
struct ddio_call {
    struct ddio_conn *conn;     /* NULL: not sent (its err, if any, stays) */
    struct ddio_wbuf req;       /* request payload, filled by the caller */
    uint64_t id;
    int sent;
    uint8_t *reply;             /* reply payload (malloc'd) */
    size_t reply_len;
    struct ddio_err err;
    uint32_t view_epoch;        /* sent as ddio_conn_send_view's view (0: none) */
};
/* Send every call's request, then collect every reply (the servers work in
 * parallel); each call gets its own outcome. Locks the connections. At most
 * DDIO_MAX_SERVERS calls (a server list's length). */
void ddio_fanout(struct ddio_call *calls, int n, uint16_t type, int timeout_ms);
void ddio_calls_free(struct ddio_call *calls, int n);
/* one request and its reply on c (locks c; _locked: c->mu held) */
int ddio_conn_call(struct ddio_conn *c, uint16_t type, const struct ddio_wbuf *req,
                   int64_t deadline, uint8_t **reply, size_t *len, struct ddio_err *e);
int ddio_conn_call_locked(struct ddio_conn *c, uint16_t type, const struct ddio_wbuf *req,
                          int64_t deadline, uint8_t **reply, size_t *len, struct ddio_err *e);

/* ---- ddio_core_recover.c: riding through a lost server ----------------------- */

/* ids of calls that must not run twice (PROTOCOL.md "Resending": XFER's
 * DDIO_XF_ONCE, OPEN's DDIO_O_ONCE, RENAME's): this process's random id
 * (non-zero), and a new call number */
uint64_t ddio_client_id(void);
uint64_t ddio_call_id(void);
/* the wait before the next reconnect attempt, after waiting ms (0: first) */
int ddio_backoff_next(int ms);
/* ddio_fanout riding through lost connections: a call whose connection
 * failed (ddio_err_recoverable) is sent again, the same request, after
 * reconnecting with backoff, for up to recover_ms (0: plain ddio_fanout);
 * its `resent` is then set, so the caller can read the answer of a request
 * that may have run before the loss (a DELETE's ENOENT) */
void ddio_fanout_recover(struct ddio_call *calls, int n, uint16_t type, int timeout_ms,
                         int recover_ms);
/* ddio_pool_get, a refused or dropped connect tried again with backoff for
 * up to recover_ms (a server restarting while a job opens its files) */
int ddio_pool_get_recover(struct ddio_pool *p, const char *addr, int timeout_ms, int recover_ms,
                          struct ddio_conn **out, struct ddio_err *e);
/* ddio_pool_get_recover for each of n addresses into conns[i], those not
 * connected yet dialled at the same time (a thread each but the first):
 * a job's first open waits for its slowest server, not for the sum of them
 * (TCP connect, HELLO, AUTH, UCX endpoint). Each keeps its own deadline and
 * retries; e is the first failure in list order, as one after another,
 * and each (when not NULL, n of them) every server's own. */
int ddio_pool_get_all(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                      int recover_ms, struct ddio_conn **conns, struct ddio_err *e,
                      struct ddio_err *each);

#endif
