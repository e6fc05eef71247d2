/* A lost server's place taken by a replacement (DESIGN.md 6.3): REBUILD's
 * ops, the unbuilt marks and the fences.
 *
 * An unbuilt mark is ROOT_1/.ddio/unbuilt/<hash of the path>, holding the
 * path: made (durable) before a file is created here by BEGIN, removed by
 * DONE after the datafiles are synced. While it stands the file's reads
 * are refused with ENODATA, which a mirrored file's client takes as "this
 * server is out" and reads a copy: never the empty datafile's zeros, also
 * after a crash of the rebuild or of this server. A fence is in memory,
 * owned by a connection: while it stands no other connection may open the
 * path here, so nobody writes the file while the rebuild copies it (the
 * rebuild's rule for concurrent jobs: a file open elsewhere is not
 * fenced, and is left for a later pass). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "rebuild.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access.h"
#include "marks.h"
#include "overlay.h"
#include "indoubt.h"
#include "missed.h"
#include "ddio_log.h"
#include "ddio_net.h"
#include "reply.h"
#include "store_roots.h"

#define RB_MAX_FENCES 64         /* a rebuild fences one file's servers at a time */
/* a call answers its ranks before its pass lets go of the file (a read's
 * last sends, a write's writeback start: engine_pass.c), so the client
 * may close and fence the file first */
#define FENCE_WAIT_MS 5000

struct rb_fence {
    uint64_t conn;
    char *path;
};

struct rb_state {
    pthread_mutex_t mu;
    int ddiofd;                  /* ROOT_1/.ddio */
    int adopt_pending;           /* --replacement, not adopted yet */
    atomic_int unbuilt;          /* marks standing (0: reads never look) */
    atomic_uint_fast64_t done;   /* files DONE since the start (STATS) */
    struct rebuild_progress pr;  /* the last PROGRESS (under mu) */
    struct rb_fence fences[RB_MAX_FENCES];
};

/* ---- unbuilt marks ---------------------------------------------------------------- */

/* 1: norm's mark stands */
static int mark_read(struct rb_state *rb, const char *norm)
{
    return marks_has(rb->ddiofd, "unbuilt", norm);
}

static int mark_set(struct server *srv, const char *norm)
{
    int rc = marks_put(&srv->store, srv->rb->ddiofd, "unbuilt", norm);
    if (rc == 1)
        atomic_fetch_add(&srv->rb->unbuilt, 1);
    return rc < 0 ? rc : 0;
}

static int mark_clear(struct rb_state *rb, const char *norm)
{
    int rc = marks_drop(rb->ddiofd, "unbuilt", norm);
    if (rc == 1)
        atomic_fetch_sub(&rb->unbuilt, 1);
    return rc < 0 ? rc : 0;
}

int rebuild_unbuilt(struct server *srv, const char *norm)
{
    return srv->rb && atomic_load(&srv->rb->unbuilt) > 0 && mark_read(srv->rb, norm);
}

/* ---- fences ------------------------------------------------------------------------ */

/* the fence on norm (rb->mu held), or NULL */
static struct rb_fence *fence_find(struct rb_state *rb, const char *norm)
{
    for (int i = 0; i < RB_MAX_FENCES; i++)
        if (rb->fences[i].path && strcmp(rb->fences[i].path, norm) == 0)
            return &rb->fences[i];
    return NULL;
}

/* 1: norm is fenced by a connection other than conn */
static int fenced_by_other(struct rb_state *rb, const char *norm, uint64_t conn)
{
    pthread_mutex_lock(&rb->mu);
    struct rb_fence *f = fence_find(rb, norm);
    int other = f && f->conn != conn;
    pthread_mutex_unlock(&rb->mu);
    return other;
}

static void fence_drop(struct rb_state *rb, const char *norm, uint64_t conn)
{
    pthread_mutex_lock(&rb->mu);
    struct rb_fence *f = fence_find(rb, norm);
    if (f && f->conn == conn) {
        free(f->path);
        f->path = NULL;
    }
    pthread_mutex_unlock(&rb->mu);
}

/* norm fenced for c: 0, -EBUSY (another's fence, or the file open here:
 * its writers would not be kept off) or -ENOMEM/-ENOSPC. The fence goes
 * up before the open files are looked at, and an OPEN looks at the fences
 * again after it opened (rebuild_open_refused): one of the two sees the
 * other. */
static int fence_put(struct conn *c, const char *norm, char *msg, size_t msglen)
{
    struct rb_state *rb = c->srv->rb;
    int rc = 0;
    pthread_mutex_lock(&rb->mu);
    struct rb_fence *f = fence_find(rb, norm);
    if (f && f->conn != c->id)
        rc = -EBUSY;
    for (int i = 0; !f && !rc && i < RB_MAX_FENCES; i++)
        if (!rb->fences[i].path) {
            f = &rb->fences[i];
            rc = (f->path = strdup(norm)) ? 0 : -ENOMEM;
            f->conn = c->id;
        }
    if (!f && !rc)
        rc = -ENOSPC;
    pthread_mutex_unlock(&rb->mu);
    if (rc) {
        snprintf(msg, msglen, "fence %.300s: %s", norm, rc == -EBUSY ? "another rebuild has it"
                 : ddio_errno_name(-rc));
        return rc;
    }
    if (store_is_open(&c->srv->store, norm, FENCE_WAIT_MS)) {
        fence_drop(rb, norm, c->id);
        snprintf(msg, msglen, "%.300s is open on this server (a job has it): not fenced", norm);
        return -EBUSY;
    }
    return 0;
}

void rebuild_counts(struct server *srv, uint64_t *unbuilt, uint64_t *done, uint64_t *pending)
{
    struct rb_state *rb = srv->rb;
    int n = rb ? atomic_load(&rb->unbuilt) : 0;
    *unbuilt = n > 0 ? (uint64_t)n : 0;
    *done = rb ? (uint64_t)atomic_load(&rb->done) : 0;
    *pending = rb && rb->adopt_pending;
}

void rebuild_conn_gone(struct conn *c)
{
    struct rb_state *rb = c->srv->rb;
    if (!rb)
        return;
    pthread_mutex_lock(&rb->mu);
    for (int i = 0; i < RB_MAX_FENCES; i++)
        if (rb->fences[i].path && rb->fences[i].conn == c->id) {
            free(rb->fences[i].path);
            rb->fences[i].path = NULL;
        }
    pthread_mutex_unlock(&rb->mu);
}

int rebuild_fenced(struct conn *c, const char *norm, char *msg, size_t msglen)
{
    struct rb_state *rb = c->srv->rb;
    if (!rb || !fenced_by_other(rb, norm, c->id))
        return 0;
    snprintf(msg, msglen, "%.300s is being rebuilt onto a replacement server: try again "
             "when it is done", norm);
    return -EBUSY;
}

int rebuild_open_refused(struct conn *c, const char *norm, char *msg, size_t msglen)
{
    struct rb_state *rb = c->srv->rb;
    if (!rb)
        return 0;
    if (rb->adopt_pending) {
        snprintf(msg, msglen, "this server replaces a lost one and has no id yet: run "
                 "`ddio rebuild --server N` first");
        return -ESTALE;         /* not yet the server the layout names (EAGAIN would
                                 * be retried as a create in progress) */
    }
    return rebuild_fenced(c, norm, msg, msglen);
}

/* ---- the ops ----------------------------------------------------------------------- */

/* a file (a layout record, a datafile) stops the walk; the server's own
 * state (ROOT_1/.ddio) is not looked into */
static int a_file(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    if (type == FTW_D && ftw->level == 1 && !strcmp(path + ftw->base, ".ddio"))
        return FTW_SKIP_SUBTREE;
    return type == FTW_F ? FTW_STOP : FTW_CONTINUE;
}

/* 1: a layout record stands under ROOT_1/.ddio/meta, or a datafile (with
 * its layout or without) under ROOT_1 */
static int has_files(const struct store *st)
{
    char meta[4200];
    store_state_path(st, "meta", meta, sizeof(meta));
    return nftw(meta, a_file, 16, FTW_PHYS | FTW_ACTIONRETVAL) == FTW_STOP
           || nftw(st->roots[0], a_file, 16, FTW_PHYS | FTW_ACTIONRETVAL) == FTW_STOP;
}

/* ADOPT: the lost server's id made this one's (durable), once */
static int op_adopt(struct conn *c, const struct ddio_rebuild *m, char *msg, size_t msglen)
{
    struct server *srv = c->srv;
    struct rb_state *rb = srv->rb;
    if (!memcmp(srv->store.id, m->id, DDIO_ID_LEN))
        return 0;               /* adopted already (a rebuild run again) */
    if (!rb->adopt_pending) {
        snprintf(msg, msglen, "this server has an id of its own (not started with "
                 "--replacement on an empty root): it does not take another's");
        return -EPERM;
    }
    /* files made under its own id would no longer open under the new one
     * (directories are harmless: a MKDIR is not refused meanwhile) */
    if (has_files(&srv->store)) {
        snprintf(msg, msglen, "this replacement's roots are not empty (it holds files of "
                 "its own): start it on empty roots");
        return -ENOTEMPTY;
    }
    int rc = write_atomic(&srv->store, rb->ddiofd, "server-id", m->id, DDIO_ID_LEN, 1);
    if (rc == 0)
        rc = write_atomic(&srv->store, rb->ddiofd, "adopted", "", 0, 1);
    if (rc == 0)
        rc = marks_sync_dir(rb->ddiofd, ".");
    if (rc) {
        snprintf(msg, msglen, "adopting the lost server's id: %s", ddio_errno_name(-rc));
        return rc;
    }
    memcpy(srv->store.id, m->id, DDIO_ID_LEN);
    rb->adopt_pending = 0;
    DDIO_WARN("rebuild: this server took the place of a lost one (its id adopted)");
    return 0;
}

/* REDO's part for a file that is here: marked unbuilt, then its datafile
 * and the copies it keeps (an erasure-coded file's parity and overlay)
 * emptied (the copy that follows writes them whole) */
static int redo_here(struct server *srv, const char *norm, char *msg, size_t msglen)
{
    struct ofile *of;
    int created = 0, rc = mark_set(srv, norm);
    if (rc) {
        snprintf(msg, msglen, "unbuilt mark of %.300s: %s", norm, ddio_errno_name(-rc));
        return rc;
    }
    rc = store_open(&srv->store, norm, DDIO_O_RDWR, NULL, NULL, &of, &created, msg, msglen);
    if (rc)
        return rc;
    if ((rc = store_setsize(of, 0)) == 0 && (rc = store_copies_setsize(of, 0, 0)) == 0)
        rc = store_ec_empty(of);
    if (rc)
        snprintf(msg, msglen, "emptying %.300s: %s", norm, ddio_errno_name(-rc));
    store_release(&srv->store, of);
    return rc;
}

/* BEGIN: built already (here and not marked), else marked, created with
 * the survivors' layout and fenced; REDO the same, but a file here is
 * emptied and marked too; *state the reply's */
static int op_begin(struct conn *c, struct ddio_rebuild *m, uint32_t *state, char *msg,
                    size_t msglen)
{
    struct server *srv = c->srv;
    char norm[DDIO_MAX_STR + 1];
    struct ofile *of;
    int created = 0, rc = norm_or_refuse(m->path, norm, sizeof(norm), msg, msglen);
    if (rc)
        return rc;
    if ((rc = fence_put(c, norm, msg, msglen)))
        return rc;
    rc = store_open(&srv->store, norm, DDIO_O_RDONLY, NULL, NULL, &of, &created, msg, msglen);
    if (rc == 0 && m->op == DDIO_RB_REDO) {
        store_release(&srv->store, of);
        if ((rc = redo_here(srv, norm, msg, msglen)))
            fence_drop(srv->rb, norm, c->id);
        *state = DDIO_RB_BEGUN;
        return rc;
    }
    if (rc == 0) {
        store_release(&srv->store, of);
        if (!mark_read(srv->rb, norm)) {
            fence_drop(srv->rb, norm, c->id);
            *state = DDIO_RB_BUILT;
            return 0;
        }
    } else if (rc != -ENOENT) {
        fence_drop(srv->rb, norm, c->id);
        return rc;
    }
    if ((rc = mark_set(srv, norm)))
        snprintf(msg, msglen, "unbuilt mark of %.300s: %s", norm, ddio_errno_name(-rc));
    if (rc == 0)
        rc = store_open(&srv->store, norm, DDIO_O_RDWR | DDIO_O_CREAT, &m->layout, NULL, &of,
                        &created, msg, msglen);
    if (rc == 0 && created)
        rc = access_own(c, norm, 0644, msg, msglen);
    if (rc == 0)
        store_release(&srv->store, of);
    if (rc)
        fence_drop(srv->rb, norm, c->id);
    *state = DDIO_RB_BEGUN;
    return rc;
}

/* DONE: the file's datafiles durable, then its mark gone, then its fence */
static int op_done(struct conn *c, const struct ddio_rebuild *m, char *msg, size_t msglen)
{
    struct server *srv = c->srv;
    char norm[DDIO_MAX_STR + 1];
    struct ofile *of;
    int created = 0, rc = norm_or_refuse(m->path, norm, sizeof(norm), msg, msglen);
    if (rc == 0)
        rc = store_open(&srv->store, norm, DDIO_O_RDONLY, NULL, NULL, &of, &created, msg,
                        msglen);
    if (rc)
        return rc;
    if ((rc = store_sync(&srv->store, of)) == 0 && (rc = mark_clear(srv->rb, norm)) != 0)
        snprintf(msg, msglen, "unbuilt mark of %.300s: %s", norm, ddio_errno_name(-rc));
    else if (rc)
        snprintf(msg, msglen, "fdatasync %.300s: %s", norm, ddio_errno_name(-rc));
    store_release(&srv->store, of);
    if (rc == 0) {
        fence_drop(srv->rb, norm, c->id);
        atomic_fetch_add(&srv->rb->done, 1);
    }
    return rc;
}

/* PROGRESS: kept for STATS, so `ddio status` shows where the rebuild
 * stands and how long it has left (the rebuild itself runs in a client) */
static void op_progress(struct server *srv, const struct ddio_rebuild *m)
{
    struct rb_state *rb = srv->rb;
    pthread_mutex_lock(&rb->mu);
    rb->pr = (struct rebuild_progress){.done = m->done, .total = m->total, .rate = m->rate,
                                       .at_ms = ddio_now_ms(), .reported = 1};
    pthread_mutex_unlock(&rb->mu);
}

void rebuild_progress_get(struct server *srv, struct rebuild_progress *p)
{
    memset(p, 0, sizeof(*p));
    if (!srv->rb)
        return;
    pthread_mutex_lock(&srv->rb->mu);
    *p = srv->rb->pr;
    pthread_mutex_unlock(&srv->rb->mu);
}

/* MISSED: the paths this server noted for a member while it was out;
 * RESYNCED: one of them cleared (missed.h). DOUBT: the files a failed
 * write left in doubt here; SETTLED: one of them made to agree
 * (indoubt.h). */
static int op_notes(struct conn *c, const struct ddio_rebuild *m, struct ddio_rebuild_r *r,
                    char *msg, size_t msglen)
{
    int doubt = m->op == DDIO_RB_DOUBT || m->op == DDIO_RB_SETTLED;
    if (m->op == DDIO_RB_RESYNCED || m->op == DDIO_RB_SETTLED) {
        char norm[DDIO_MAX_STR + 1];
        int rc = norm_or_refuse(m->path, norm, sizeof(norm), msg, msglen);
        if (rc == 0 && (rc = doubt ? indoubt_settle(c->srv, norm)
                        : missed_clear(c->srv, m->member, norm)) != 0)
            snprintf(msg, msglen, "%s %.300s: %s", doubt ? "settling" : "clearing the note of",
                     norm, ddio_errno_name(-rc));
        return rc;
    }
    if (!(r->paths = calloc(DDIO_RB_MAX_PATHS, sizeof(*r->paths))))
        return -ENOMEM;
    int n = doubt ? indoubt_list(c->srv, r->paths, DDIO_RB_MAX_PATHS)
        : missed_list(c->srv, m->member, r->paths, DDIO_RB_MAX_PATHS);
    if (n < 0) {
        snprintf(msg, msglen, "listing %s: %s", doubt ? "the files in doubt" : "the notes",
                 ddio_errno_name(-n));
        return n;
    }
    r->npaths = (uint32_t)n;
    return 0;
}

/* FOLD: the parity this server holds of the groups marked being written,
 * durably, before a fold's parity step writes it; FOLDED: the fold done on
 * every server (the data in place), the parity's data in place again. Only
 * by the connection fencing the file (no other may write it meanwhile). */
#define FOLD_MAX_GROUPS (1u << 20)
static int op_fold(struct conn *c, const struct ddio_rebuild *m, char *msg, size_t msglen)
{
    struct server *srv = c->srv;
    char norm[DDIO_MAX_STR + 1];
    struct ofile *of;
    int created = 0, rc = norm_or_refuse(m->path, norm, sizeof(norm), msg, msglen);
    if (rc)
        return rc;
    if (!rebuild_fence_held(c, norm) || m->ghi - m->glo > FOLD_MAX_GROUPS) {
        snprintf(msg, msglen, "fold of %.300s: %s", norm, m->ghi - m->glo > FOLD_MAX_GROUPS
                 ? "too many groups at once" : "the file is not fenced by this connection");
        return m->ghi - m->glo > FOLD_MAX_GROUPS ? -EINVAL : -EPERM;
    }
    rc = store_open(&srv->store, norm, DDIO_O_RDWR, NULL, NULL, &of, &created, msg, msglen);
    if (rc)
        return rc;
    struct ofile *ov = of->copy[STORE_OVERLAY];
    const struct ddio_ec *E = &of->layout.ec;
    if (!E->k || !ov || !ov->ovl) {
        snprintf(msg, msglen, "fold of %.300s: not an erasure-coded file", norm);
        rc = -EINVAL;
    }
    for (uint64_t g = m->glo; rc == 0 && g < m->ghi; g++) {
        if (ddio_ec_parity_held(E, of->layout.server_index, g) < 0)
            continue;
        if (m->op == DDIO_RB_FOLD)
            rc = ovl_pstate_set(ov->ovl, g, OVL_PS_WRITING);
        else if (ovl_pstate(ov->ovl, g) == OVL_PS_NEW)
            rc = ovl_pstate_set(ov->ovl, g, OVL_PS_INPLACE);
    }
    if (rc == 0 && (rc = store_sync(&srv->store, of)) != 0)
        snprintf(msg, msglen, "fold of %.300s: fdatasync: %s", norm, ddio_errno_name(-rc));
    else if (rc && !msg[0])
        snprintf(msg, msglen, "fold of %.300s: %s", norm, ddio_errno_name(-rc));
    store_release(&srv->store, of);
    return rc;
}

int rebuild_fence_held(struct conn *c, const char *norm)
{
    struct rb_state *rb = c->srv->rb;
    if (!rb)
        return 0;
    pthread_mutex_lock(&rb->mu);
    struct rb_fence *f = fence_find(rb, norm);
    int mine = f && f->conn == c->id;
    pthread_mutex_unlock(&rb->mu);
    return mine;
}

static int op_fence(struct conn *c, const struct ddio_rebuild *m, char *msg, size_t msglen)
{
    char norm[DDIO_MAX_STR + 1];
    int rc = norm_or_refuse(m->path, norm, sizeof(norm), msg, msglen);
    if (rc)
        return rc;
    if (m->op == DDIO_RB_FENCE)
        return fence_put(c, norm, msg, msglen);
    fence_drop(c->srv->rb, norm, c->id);
    return 0;
}

int on_rebuild(struct conn *c, const struct ddio_hdr *h, const uint8_t *p)
{
    struct ddio_rebuild m;
    struct ddio_rebuild_r r = {0};
    char msg[768] = "";
    int rc;
    if (ddio_dec_rebuild(p, h->len, &m))
        return bad_payload(c, h);
    /* it creates files past the permission checks and fences others off */
    if (!access_admin(c)) {
        free(m.path);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, EACCES, "rebuild: only uid 0 or "
                             "the --admin-uid may rebuild a server"), 0;
    }
    if (m.op == DDIO_RB_ADOPT)
        rc = op_adopt(c, &m, msg, sizeof(msg));
    else if (m.op == DDIO_RB_BEGIN || m.op == DDIO_RB_REDO)
        rc = op_begin(c, &m, &r.state, msg, sizeof(msg));
    else if (m.op == DDIO_RB_MISSED || m.op == DDIO_RB_RESYNCED || m.op == DDIO_RB_DOUBT
             || m.op == DDIO_RB_SETTLED)
        rc = op_notes(c, &m, &r, msg, sizeof(msg));
    else if (m.op == DDIO_RB_DONE)
        rc = op_done(c, &m, msg, sizeof(msg));
    else if (m.op == DDIO_RB_PROGRESS)
        op_progress(c->srv, &m), rc = 0;
    else if (m.op == DDIO_RB_FREEZE)
        rc = missed_freeze(c->srv, m.member, msg, sizeof(msg));
    else if (m.op == DDIO_RB_THAW)
        missed_thaw(c->srv, m.member), rc = 0;
    else if (m.op == DDIO_RB_FOLD || m.op == DDIO_RB_FOLDED)
        rc = op_fold(c, &m, msg, sizeof(msg));
    else
        rc = op_fence(c, &m, msg, sizeof(msg));
    free(m.path);
    if (rc) {
        ddio_rebuild_r_free(&r);
        return conn_send_err(c, h->type | DDIO_REPLY, h->req, -rc, "rebuild: %s", msg), 0;
    }
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_rebuild_r(&w, &r);
    ddio_rebuild_r_free(&r);
    return reply_w(c, h, &w);
}

/* ---- startup ----------------------------------------------------------------------- */

int rebuild_init(struct server *srv, char *err, size_t errlen)
{
    char dir[4200];
    struct rb_state *rb = calloc(1, sizeof(*rb));
    if (!rb) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    store_state_path(&srv->store, ".", dir, sizeof(dir));
    pthread_mutex_init(&rb->mu, NULL);
    rb->ddiofd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rb->ddiofd < 0 || (mkdirat(rb->ddiofd, "unbuilt", 0700) && errno != EEXIST)) {
        snprintf(err, errlen, "%s/unbuilt: %s", dir, strerror(errno));
        if (rb->ddiofd >= 0)
            close(rb->ddiofd);
        free(rb);
        return -EIO;
    }
    struct stat sb;
    rb->adopt_pending = srv->cfg.replacement && fstatat(rb->ddiofd, "adopted", &sb, 0) != 0;
    atomic_store(&rb->unbuilt, marks_count(rb->ddiofd, "unbuilt"));
    if (rb->adopt_pending)
        DDIO_WARN("--replacement: opens refused until `ddio rebuild --server N` names the "
                  "lost server this one replaces");
    srv->rb = rb;
    return 0;
}

void rebuild_fini(struct server *srv)
{
    struct rb_state *rb = srv->rb;
    if (!rb)
        return;
    for (int i = 0; i < RB_MAX_FENCES; i++)
        free(rb->fences[i].path);
    close(rb->ddiofd);
    pthread_mutex_destroy(&rb->mu);
    free(rb);
    srv->rb = NULL;
}
