/* The harness of srv_client (the protocol test client for ddio-server, no
 * MPI): the shared state, a minimal client (connect and handshake, requests
 * and replies, XFERs with their GET/PUT/DATA streams), raw connections and
 * the checks they share. The cases are in srv_t_*.c, main in srv_client.c. */
#ifndef SRV_HARNESS_H
#define SRV_HARNESS_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <ftw.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddio_auth.h"
#include "ddio_dial.h"
#include "ddio_desc.h"
#include "ddio_layout.h"
#include "ddio_net.h"
#include "ddio_proto.h"
#include "ddio_ucx.h"

#define TMO 20000
#define SENTINEL 0xA5

extern char g_host[256];
extern char g_addr[300];          /* host:port, for the handshake's messages */
extern int g_port;
extern const char *g_root;
extern unsigned g_run;            /* makes file names unique per run */
extern struct ddio_secret g_secret;   /* $DDIO_SECRET_FILE */
extern int g_have_secret;
extern const char *g_log;         /* the server's log file (refusals must be logged) */

/* a failed check: reported, and the case ends (see run_case) */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
#define CHECK(c, ...) do { if (!(c)) die(__VA_ARGS__); } while (0)

/* cases (srv_harness.c): run_case runs one, prints "PASS: NAME" or
 * "FAIL: NAME: why", and returns either way; case_summary prints
 * "srv-client: N passed, N failed" and returns the exit status */
void run_case(const char *name, void (*fn)(void));
int case_summary(void);
/* a thread of a case: its own recovery point (a failure there returns to
 * the setjmp(*jb) point of that thread) */
void case_thread_recover(jmp_buf *jb);
/* called after a failed case, e.g. to drop a connection shared by cases */
void case_on_failure(void (*reset)(void));

struct cl {
    int fd;
    uint64_t req;
    uint8_t id[DDIO_ID_LEN];
    uint32_t ndisks;
    uint64_t bsize;
    uint32_t flags;              /* HELLO reply's DDIO_SRV_* */
};

struct msg {
    struct ddio_hdr h;
    uint8_t *p;
};


struct dspec {                     /* disp + tiles of `count` blocks of `len` at `stride` */
    int64_t disp;
    uint64_t count, len;
    int64_t stride, extent;
    uint64_t start, length;
};


struct xres {
    int status;
    struct ddio_xfer_r r;
    uint64_t put_bytes, get_bytes;
    unsigned progress;            /* PROGRESS heartbeats received */
    int64_t max_gap_ms;           /* longest silence: XFER sent .. last message */
    int64_t elapsed_ms;           /* XFER sent .. DONE */
    char err[256];                /* an error reply's text ("" if none could be decoded) */
};


/* ---- the harness (srv_harness.c) ---- */
int recv_msg(struct cl *c, struct msg *m);
void send_w(struct cl *c, uint16_t type, uint64_t req, struct ddio_wbuf *w);
int call(struct cl *c, uint16_t type, struct ddio_wbuf *w, struct msg *m);
int call_simple(struct cl *c, uint16_t type, struct ddio_wbuf *w);
struct cl *cl_connect(void);
void cl_close(struct cl *c);
void layout_for(struct cl *c, struct ddio_layout_rec *l, uint64_t unit, uint32_t count);
/* OPEN with the whole message (ids, flags) as given; the reply into r */
int cl_open_m(struct cl *c, const struct ddio_open *o, struct ddio_open_r *r);
/* one STATS counter of the server; UINT64_MAX if it has none by that name */
uint64_t cl_stat(struct cl *c, const char *key);
int cl_open(struct cl *c, const char *path, uint32_t amode, const struct ddio_layout_rec *l,
                   struct ddio_open_r *r);
int cl_handle_op(struct cl *c, uint16_t type, uint64_t handle, uint64_t *value);
int cl_delete(struct cl *c, const char *path);
int cl_lock(struct cl *c, uint64_t h, uint32_t cmd, uint32_t type, uint64_t start,
                   uint64_t len, uint32_t tmo);
/* a LOCK with flags (DDIO_LK_RECLAIM) and the client id it is held for */
int cl_lock_as(struct cl *c, uint64_t h, uint32_t cmd, uint32_t type, uint64_t start,
               uint64_t len, uint32_t tmo, uint32_t flags, uint64_t client);
void build_desc(const struct dspec *s, struct ddio_desc *d);
/* ucx_token: with DDIO_XF_UCX the PUT sinks' token, with DDIO_XF_COPY the copy */
struct xres cl_xfer_hold(struct cl *c, uint64_t handle, uint32_t op, uint32_t flags,
                                uint64_t group, uint64_t seq, uint32_t n, uint32_t rank,
                                const struct ddio_desc *d, uint8_t *buf, uint8_t *got,
                                uint32_t tmo, int hold_ms, uint64_t ucx_token);
struct xres cl_xfer(struct cl *c, uint64_t handle, uint32_t op, uint32_t flags,
                           uint64_t group, uint64_t seq, uint32_t n, uint32_t rank,
                           const struct ddio_desc *d, uint8_t *buf, uint8_t *got, uint32_t tmo);
void fill_pattern(uint8_t *b, uint64_t n, unsigned seed);
void path_name(char *out, size_t n, const char *base);
struct cl *connect_create(const char *name, struct ddio_open_r *r);
void open_pair(const char *name, struct cl **a, struct cl **b, struct ddio_open_r *ra,
                      struct ddio_open_r *rb);
int raw_conn(void);
void expect_closed(int fd, const char *what);
void send_hello_raw(int fd);
void local_name(int fd, char *out, size_t n);
int log_has(const char *a, const char *b);
void expect_refusal(int fd, int status, const char *text, const char *what);
void hello_only(int fd, struct ddio_hello_r *r);
void send_auth(int fd, const struct ddio_auth *a);
int xfer_call(struct cl *c, const struct ddio_xfer *x, char *msg, size_t n);
/* (srv_t_xfer.c) one inline write of w (4000 bytes, or a read into w) at
 * local offset 0, with DDIO_XF_ONCE ids when client != 0: the status; the
 * 4000 bytes at local offset 0 into out */
int once_write(struct cl *c, uint64_t handle, const struct ddio_desc *d, const uint8_t *w,
               uint64_t client, uint64_t call, uint32_t op);
void read_4000(struct cl *c, uint64_t handle, const struct ddio_desc *d, uint8_t *out);

/* ---- the cases (srv_t_*.c) ---- */
void test_independent(uint64_t unit, uint32_t count, const char *name);
void test_independent_1m(void);
void test_independent_64k_of_2(void);
void test_independent_4k_of_2(void);
void test_inline(void);
void test_inline_own(void);
void test_once(void);
void test_local(void);
void test_localstat(void);
void test_mirror(void);
void test_ec(void);
void test_scrub(void);
void test_rebuild(void);
void test_member(void);
void test_collective(void);
void test_resent_gate(void);
void test_write_order(void);
void test_heartbeat(void);
void test_unanswered_get(void);
void test_files(void);
void test_stats(void);
void test_readdir_big(void);
void test_watch(void);
void test_page_cache(void);
void test_locks(void);
void test_lock_grace_before(void);
void test_lock_grace_after(void);
void test_malformed_before_auth(void);
void test_malformed_after_auth(void);
void test_malformed_truncated(void);
void test_malformed_descriptor(void);
void test_security(void);
void test_limits(void);
void test_ucx(int offered);
void test_ucx_offered(void);
void test_ucx_not_offered(void);
void test_ucx_refused_tls(void);
void test_replay_before(void);
void test_replay_after(void);

#endif
