/* Unit tests of the storage layer (ioserver/store_roots.c,
 * store_layout.c, store.c, store_ns.c, store_meta.c, fsyncs.c): path
 * confinement, create / EXCL / open / delete, stored layouts (in the first
 * datafile's xattr, in records, and a store holding both), ESTALE refusal,
 * sizes. The core cases run twice: layouts in datafiles, then in records
 * (a server whose users share it, or a file system without xattrs). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <pthread.h>
#include <unistd.h>

#include "config.h"
#include "fsyncs.h"
#include "ddio_log.h"
#include "ddio_net.h"
#include "store.h"
#include "sums.h"
#include "suite_run.h"

static char base[256], root1[300], root2[300], outside[300];
static struct store st;
static struct srv_config cfg;
static int records;                    /* the "records" case: no layout in datafiles */
static _Thread_local char msg[1024];   /* (per thread: t_concurrent_opens) */

static void rm_rf(const char *p)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p);
    if (system(cmd) != 0)
        fprintf(stderr, "cleanup of %s failed\n", p);
}

static void start(int ndisks)
{
    config_defaults(&cfg);
    cfg.block_size = 65536;
    cfg.roots[cfg.nroots++] = root1;
    if (ndisks > 1)
        cfg.roots[cfg.nroots++] = root2;
    char err[512];
    ck_assert_msg(store_init(&st, &cfg, err, sizeof(err)) == 0, "store_init: %s", err);
    if (records)
        st.layout_xattr = 0;
}

/* 1: a layout is kept in path's datafile on the first root */
static int in_xattr(const char *path)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/%s", root1, path);
    return lgetxattr(p, STORE_LAYOUT_XATTR, NULL, 0) > 0;
}

/* 1: path has a layout record */
static int in_record(const char *path)
{
    char p[600];
    snprintf(p, sizeof(p), "%s/.ddio/meta/%s", root1, path);
    return access(p, F_OK) == 0;
}

static void setup(void)
{
    ddio_log_init("check_store", DDIO_LOG_ERROR);
    snprintf(base, sizeof(base), "/tmp/check_store.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(base));
    snprintf(root1, sizeof(root1), "%s/r1", base);
    snprintf(root2, sizeof(root2), "%s/r2", base);
    snprintf(outside, sizeof(outside), "%s/outside", base);
    mkdir(root1, 0755);
    mkdir(root2, 0755);
    mkdir(outside, 0755);
}

static void teardown(void)
{
    store_fini(&st);
    rm_rf(base);
}

static void setup_records(void)
{
    records = 1;
    setup();
}

static void teardown_records(void)
{
    teardown();
    records = 0;
}

static struct ddio_layout_rec layout(uint64_t unit, uint32_t count)
{
    struct ddio_layout_rec l;
    memset(&l, 0, sizeof(l));
    l.stripe_unit = unit;
    l.stripe_count = count;
    l.server_index = 0;
    memcpy(l.ids[0], st.id, DDIO_ID_LEN);
    for (uint32_t i = 1; i < count; i++)
        memset(l.ids[i], (int)i, DDIO_ID_LEN);
    return l;
}

static int open_f(const char *path, uint32_t amode, struct ofile **of, int *created)
{
    struct ddio_layout_rec l = layout(1 << 20, 1);
    return store_open(&st, path, amode, &l, NULL, of, created, msg, sizeof(msg));
}

START_TEST(t_norm_path)
{
    char out[64];
    ck_assert_int_eq(store_norm_path("/a/b", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "a/b");
    ck_assert_int_eq(store_norm_path("///x", out, sizeof(out)), 0);
    ck_assert_str_eq(out, "x");
    ck_assert_int_eq(store_norm_path("..", out, sizeof(out)), -EACCES);
    ck_assert_int_eq(store_norm_path("a/../b", out, sizeof(out)), -EACCES);
    ck_assert_int_eq(store_norm_path("a/..", out, sizeof(out)), -EACCES);
    ck_assert_int_eq(store_norm_path("a//b", out, sizeof(out)), -EACCES);
    ck_assert_int_eq(store_norm_path("a/", out, sizeof(out)), -EACCES);
    ck_assert_int_eq(store_norm_path("./a", out, sizeof(out)), -EACCES);
    ck_assert_int_eq(store_norm_path(".ddio/meta/x", out, sizeof(out)), -EACCES);
    ck_assert_int_eq(store_norm_path("x/.ddio", out, sizeof(out)), 0);   /* only at top */
    ck_assert_int_eq(store_norm_path("", out, sizeof(out)), -EINVAL);
    ck_assert_int_eq(store_norm_path("/", out, sizeof(out)), -EINVAL);
    ck_assert_int_eq(store_norm_path("..a/b..", out, sizeof(out)), 0);
    char longp[100];
    memset(longp, 'a', sizeof(longp) - 1);
    longp[sizeof(longp) - 1] = 0;
    ck_assert_int_eq(store_norm_path(longp, out, sizeof(out)), -ENAMETOOLONG);
}
END_TEST

START_TEST(t_server_id_persists)
{
    start(1);
    uint8_t id[DDIO_ID_LEN];
    memcpy(id, st.id, DDIO_ID_LEN);
    store_fini(&st);
    start(1);
    ck_assert_mem_eq(id, st.id, DDIO_ID_LEN);
}
END_TEST

START_TEST(t_create_excl_open_delete)
{
    start(1);
    struct ofile *of, *of2;
    int created;
    ck_assert_int_eq(open_f("d1/d2/f", DDIO_O_RDWR, &of, &created), -ENOENT);
    /* a create makes no directories (as open(2)); a directory is no file */
    ck_assert_int_eq(open_f("d1/d2/f", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created),
                     -ENOENT);
    ck_assert_int_eq(store_mkdir(&st, "d1", 0755, msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_mkdir(&st, "d1/d2", 0755, msg, sizeof(msg)), 0);
    ck_assert_int_eq(open_f("d1/d2", DDIO_O_RDWR, &of, &created), -EISDIR);
    ck_assert_int_eq(open_f("d1/d2/f", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), 0);
    ck_assert_int_eq(created, 1);
    ck_assert_int_eq(open_f("d1/d2/f", DDIO_O_CREAT | DDIO_O_EXCL, &of2, &created), -EEXIST);
    ck_assert_int_eq(open_f("/d1/d2/f", DDIO_O_RDWR, &of2, &created), 0);
    ck_assert_ptr_eq(of, of2);                               /* shared by path */
    ck_assert_int_eq(created, 0);
    store_release(&st, of2);
    store_release(&st, of);
    /* still exists after close: EXCL refuses, plain open works */
    ck_assert_int_eq(open_f("d1/d2/f", DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), -EEXIST);
    ck_assert_int_eq(store_delete(&st, "d1/d2/f", msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_delete(&st, "d1/d2/f", msg, sizeof(msg)), -ENOENT);
    ck_assert_int_eq(open_f("d1/d2/f", DDIO_O_RDWR, &of, &created), -ENOENT);
    /* a datafile without layout record: EXCL refuses it */
    char p[400];
    snprintf(p, sizeof(p), "%s/raw", root1);
    close(open(p, O_CREAT | O_WRONLY, 0644));
    ck_assert_int_eq(open_f("raw", DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), -EEXIST);
}
END_TEST

/* a create's layout record and directory entries are made durable in the
 * background, or by the file's first sync if that comes first (also when
 * the file was closed and opened again in between); a record left empty (a
 * create that never reached the disk before the host crashed) reads as no
 * file */
static void meta_hold(int on)
{
    pthread_mutex_lock(&st.meta.mu);
    st.meta.hold = on;
    pthread_cond_broadcast(&st.meta.cv);
    pthread_mutex_unlock(&st.meta.mu);
}

/* several fsyncs at once, or in turn: each op answered, none skipped for
 * another's failure, the first failure in order returned */
static void fsyncs_case(void)
{
    enum { N = 40 };            /* more than one batch */
    struct fsync_op ops[N];
    char p[400];
    for (int i = 0; i < N; i++) {
        if (i == 2) {
            ops[i] = (struct fsync_op){ .fd = open(base, O_RDONLY | O_DIRECTORY) };
        } else {
            snprintf(p, sizeof(p), "%s/fs%d", base, i);
            int fd = open(p, O_CREAT | O_RDWR, 0644);
            ck_assert_int_eq(pwrite(fd, "12345678", 8, 0), 8);
            ops[i] = (struct fsync_op){ .fd = fd, .data_only = i % 2 };
        }
        ck_assert_int_ge(ops[i].fd, 0);
        ops[i].rc = 1;
    }
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    close(ops[5].fd);
    ops[5].fd = -1;             /* no file: EBADF (a closed number could be reused) */
    int pipe_at = 33;           /* in the second batch: no fsync for a pipe */
    close(ops[pipe_at].fd);
    ops[pipe_at].fd = pfd[0];
    ck_assert_int_eq(fsyncs_run(ops, N), -EBADF);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(ops[i].rc, i == 5 ? -EBADF : i == pipe_at ? -EINVAL : 0);
    for (int i = 0; i < N; i++)
        if (i != 5)
            close(ops[i].fd);
    close(pfd[1]);
}

/* many threads at once (a server's request threads): every op answered,
 * and no more than the few io_contexts the process shares */
static void *fsyncs_thread(void *arg)
{
    int fd = *(int *) arg, fails = 0;
    for (int i = 0; i < 20; i++) {
        struct fsync_op ops[3] = { {.fd = fd}, {.fd = fd, .data_only = 1}, {.fd = fd} };
        fails += fsyncs_run(ops, 3) != 0 || ops[0].rc || ops[1].rc || ops[2].rc;
    }
    return (void *) (intptr_t) fails;
}

START_TEST(t_fsyncs)
{
    start(1);                   /* (the fixture's teardown ends a store) */
    fsyncs_case();
    fsyncs_force_serial(1);
    fsyncs_case();
    fsyncs_force_serial(0);
    enum { T = 24 };
    pthread_t th[T];
    int fds[T];
    char p[400];
    for (int i = 0; i < T; i++) {
        snprintf(p, sizeof(p), "%s/ft%d", base, i);
        ck_assert_int_ge(fds[i] = open(p, O_CREAT | O_RDWR, 0644), 0);
        ck_assert_int_eq(pwrite(fds[i], "x", 1, 0), 1);
        ck_assert_int_eq(pthread_create(&th[i], NULL, fsyncs_thread, &fds[i]), 0);
    }
    for (int i = 0; i < T; i++) {
        void *fails;
        pthread_join(th[i], &fails);
        ck_assert_int_eq((int) (intptr_t) fails, 0);
        close(fds[i]);
    }
    ck_assert_int_ge(fsyncs_contexts(), 1);
    ck_assert_int_le(fsyncs_contexts(), 16);
}
END_TEST

/* the thread makes many due files durable in batches (more than one
 * batch, files of two directories sharing them, one deleted before its
 * turn): every job done, none failed, the queue empty */
START_TEST(t_meta_batches)
{
    enum { N = 300 };
    static struct ofile *of[N];
    char p[64];
    int created;
    start(2);
    meta_hold(1);
    ck_assert_int_eq(store_mkdir(&st, "b0", 0755, msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_mkdir(&st, "b1", 0755, msg, sizeof(msg)), 0);
    for (int i = 0; i < N; i++) {
        snprintf(p, sizeof(p), "b%d/f%d", i % 2, i);
        ck_assert_int_eq(open_f(p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of[i], &created),
                         0);
        ck_assert_int_eq(store_meta_pending(&st, of[i]), 1);
    }
    ck_assert_int_eq(store_delete(&st, "b1/f7", msg, sizeof(msg)), 0);
    /* one closed and opened again among them finds its job by its path */
    store_release(&st, of[151]);
    ck_assert_int_eq(open_f("b1/f151", DDIO_O_RDWR, &of[151], &created), 0);
    ck_assert_int_eq(store_meta_pending(&st, of[151]), 1);
    meta_hold(0);
    int waited = 0, pending = N;
    while (pending && waited++ < 20000) {
        usleep(1000);
        pending = 0;
        for (int i = 0; i < N; i++)
            pending += store_meta_pending(&st, of[i]);
    }
    ck_assert_int_eq(pending, 0);
    pthread_mutex_lock(&st.meta.mu);
    ck_assert_ptr_null(st.meta.q);          /* (pending: not DONE, so none FAILED) */
    ck_assert_ptr_null(st.meta.qtail);
    for (int b = 0; b < META_INDEX; b++)
        ck_assert_ptr_null(st.meta.index[b]);
    pthread_mutex_unlock(&st.meta.mu);
    for (int i = 0; i < N; i++)
        store_release(&st, of[i]);
}
END_TEST

START_TEST(t_meta_durable_at_sync)
{
    start(2);
    struct ofile *of;
    int created;
    meta_hold(1);               /* the lazy thread takes nothing */
    ck_assert_int_eq(store_mkdir(&st, "m", 0755, msg, sizeof(msg)), 0);
    ck_assert_int_eq(open_f("m/f", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), 0);
    ck_assert_int_eq(store_meta_pending(&st, of), 1);
    ck_assert_int_eq(store_sync(&st, of), 0);
    ck_assert_int_eq(store_meta_pending(&st, of), 0);
    ck_assert_int_eq(store_sync(&st, of), 0);
    store_release(&st, of);
    /* opened again: not created here, nothing pending */
    ck_assert_int_eq(open_f("m/f", DDIO_O_RDWR, &of, &created), 0);
    ck_assert_int_eq(store_meta_pending(&st, of), 0);
    store_release(&st, of);
    /* closed before any sync and opened again: still pending, and the
     * reopened file's sync does it */
    ck_assert_int_eq(open_f("m/g", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), 0);
    store_release(&st, of);
    ck_assert_int_eq(open_f("m/g", DDIO_O_RDWR, &of, &created), 0);
    ck_assert_int_eq(store_meta_pending(&st, of), 1);
    ck_assert_int_eq(store_sync(&st, of), 0);
    ck_assert_int_eq(store_meta_pending(&st, of), 0);
    store_release(&st, of);
    /* renamed before its sync: the sync still does it (the job moved) */
    ck_assert_int_eq(open_f("m/h", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), 0);
    ck_assert_int_eq(store_rename(&st, "m/h", "m/h2", msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_meta_pending(&st, of), 1);
    ck_assert_int_eq(store_sync(&st, of), 0);
    ck_assert_int_eq(store_meta_pending(&st, of), 0);
    store_release(&st, of);
    /* closed, renamed, opened again under the new name: its job found */
    ck_assert_int_eq(open_f("m/k", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), 0);
    store_release(&st, of);
    ck_assert_int_eq(store_rename(&st, "m/k", "m/k2", msg, sizeof(msg)), 0);
    ck_assert_int_eq(open_f("m/k2", DDIO_O_RDWR, &of, &created), 0);
    ck_assert_int_eq(store_meta_pending(&st, of), 1);
    ck_assert_int_eq(store_sync(&st, of), 0);
    ck_assert_int_eq(store_meta_pending(&st, of), 0);
    store_release(&st, of);
    /* without a sync, the thread does it by itself a moment later */
    meta_hold(0);
    ck_assert_int_eq(open_f("m/i", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), 0);
    int waited = 0;
    while (store_meta_pending(&st, of) && waited < 10000) {
        usleep(1000);
        waited++;
    }
    ck_assert_int_eq(store_meta_pending(&st, of), 0);
    pthread_mutex_lock(&st.meta.mu);
    ck_assert_ptr_null(st.meta.q);
    pthread_mutex_unlock(&st.meta.mu);
    /* deleted before the thread got to it: nothing left to make durable */
    meta_hold(1);
    struct ofile *of2;
    ck_assert_int_eq(open_f("m/j", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of2, &created), 0);
    ck_assert_int_eq(store_delete(&st, "m/j", msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_sync(&st, of2), 0);
    store_release(&st, of2);
    store_release(&st, of);
    /* a layout that never reached the disk (an empty record; an xattr is
     * set whole or not at all): the file was never made durable */
    char p[400];
    snprintf(p, sizeof(p), st.layout_xattr ? "%s/m/f" : "%s/.ddio/meta/m/f", root1);
    ck_assert_int_eq(st.layout_xattr ? removexattr(p, STORE_LAYOUT_XATTR) : truncate(p, 0), 0);
    ck_assert_int_eq(open_f("m/f", DDIO_O_RDWR, &of, &created), -ENOENT);
}
END_TEST

START_TEST(t_confinement)
{
    start(1);
    struct ofile *of;
    int created;
    char p[400], t[400];
    ck_assert_int_eq(open_f("../x", DDIO_O_CREAT, &of, &created), -EACCES);
    ck_assert_int_eq(open_f("a/../../x", DDIO_O_CREAT, &of, &created), -EACCES);
    ck_assert_int_eq(open_f(".ddio/server-id", DDIO_O_RDWR, &of, &created), -EACCES);
    /* a directory symlink leaving the root */
    snprintf(p, sizeof(p), "%s/esc", root1);
    ck_assert_int_eq(symlink(outside, p), 0);
    ck_assert_int_eq(open_f("esc/file", DDIO_O_CREAT, &of, &created), -EACCES);
    snprintf(t, sizeof(t), "%s/file", outside);
    ck_assert_int_ne(access(t, F_OK), 0);                   /* nothing created outside */
    /* an absolute file symlink */
    snprintf(p, sizeof(p), "%s/abs", root1);
    ck_assert_int_eq(symlink("/etc/passwd", p), 0);
    ck_assert_int_eq(open_f("abs", DDIO_O_CREAT | DDIO_O_RDWR, &of, &created), -EACCES);
    /* a relative symlink climbing out */
    snprintf(p, sizeof(p), "%s/up", root1);
    ck_assert_int_eq(symlink("../outside", p), 0);
    ck_assert_int_eq(open_f("up/f", DDIO_O_CREAT, &of, &created), -EACCES);
    /* delete through an escaping symlink is refused and deletes nothing */
    close(open(t, O_CREAT | O_WRONLY, 0644));
    ck_assert_int_eq(store_delete(&st, "esc/file", msg, sizeof(msg)), -EACCES);
    ck_assert_int_eq(access(t, F_OK), 0);
    /* a symlink that stays inside the root is fine */
    snprintf(p, sizeof(p), "%s/in", root1);
    mkdir(p, 0755);
    snprintf(p, sizeof(p), "%s/alias", root1);
    ck_assert_int_eq(symlink("in", p), 0);
    ck_assert_int_eq(open_f("alias/f", DDIO_O_CREAT, &of, &created), 0);
    store_release(&st, of);
}
END_TEST

/* a create resent by its creator (same DDIO_O_ONCE ids) finds its own
 * file, open or not, and across a restart of the store; anyone else's
 * create gets EEXIST */
START_TEST(t_create_resent)
{
    start(1);
    struct ddio_layout_rec l = layout(1 << 20, 1);
    struct store_creator me = {42, 7}, other = {42, 8}, stranger = {43, 7};
    const uint32_t cx = DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL | DDIO_O_ONCE;
    struct ofile *of, *of2;
    int created;
    ck_assert_int_eq(store_open(&st, "mine", cx, &l, &me, &of, &created, msg, sizeof(msg)), 0);
    ck_assert_int_eq(created, 1);
    ck_assert_int_eq(store_open(&st, "mine", cx, &l, &me, &of2, &created, msg, sizeof(msg)), 0);
    ck_assert_int_eq(created, 1);               /* open: its resend */
    store_release(&st, of2);
    ck_assert_int_eq(store_open(&st, "mine", cx, &l, &other, &of2, &created, msg, sizeof(msg)),
                     -EEXIST);
    ck_assert_int_eq(store_open(&st, "mine", cx & ~DDIO_O_ONCE, &l, NULL, &of2, &created, msg,
                                sizeof(msg)), -EEXIST);
    store_release(&st, of);
    store_fini(&st);
    start(1);                                   /* a restart: from the layout record */
    ck_assert_int_eq(store_open(&st, "mine", cx, &l, &stranger, &of, &created, msg, sizeof(msg)),
                     -EEXIST);
    ck_assert_int_eq(store_open(&st, "mine", cx, &l, &me, &of, &created, msg, sizeof(msg)), 0);
    ck_assert_int_eq(created, 1);
    store_release(&st, of);
    ck_assert_int_eq(store_rename(&st, "mine", "moved", msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_open(&st, "moved", cx, &l, &me, &of, &created, msg, sizeof(msg)), 0);
    store_release(&st, of);                     /* the creator moves with the file */
}
END_TEST

/* a server killed halfway through a create, its layout written (a record,
 * or the first datafile with it) and its other datafiles not: the layout
 * carries the creator's ids, so the resend completes the create and anyone
 * else still gets EEXIST */
/* where a create keeps the layout, and a store holding both kinds: files
 * made with records by an earlier server open, stat, list, rename and
 * delete under one that keeps layouts in datafiles; a datafile without a
 * layout is no file; a corrupt one is refused, not misread */
START_TEST(t_layout_kept_where)
{
    /* this file system's answer, found apart from the server's probe */
    char p[600];
    snprintf(p, sizeof(p), "%s/probe", base);
    int fd = open(p, O_RDWR | O_CREAT, 0644);
    ck_assert_int_ge(fd, 0);
    int xattrs = fsetxattr(fd, STORE_LAYOUT_XATTR, "x", 1, 0) == 0;
    close(fd);
    records = 1;
    start(2);
    ck_assert_int_eq(store_mkdir(&st, "d", 0755, msg, sizeof(msg)), 0);
    struct ofile *of;
    int created;
    ck_assert_int_eq(open_f("d/old", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), 0);
    store_release(&st, of);
    ck_assert(in_record("d/old") && !in_xattr("d/old"));
    store_fini(&st);
    records = 0;
    start(2);
    ck_assert_int_eq(st.layout_xattr, xattrs);
    ck_assert_int_eq(open_f("d/new", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), 0);
    /* the created datafile's descriptor names it (a same-host client
     * checks a parked handle's file by that name: ddio_local_same_file) */
    char link[600], want[600];
    snprintf(p, sizeof(p), "/proc/self/fd/%d", of->fds[0]);
    ssize_t ln = readlink(p, link, sizeof(link) - 1);
    ck_assert_int_gt(ln, 0);
    link[ln] = '\0';
    ck_assert_ptr_nonnull(realpath(root1, want));
    strcat(want, "/d/new");
    ck_assert_str_eq(link, want);
    store_release(&st, of);
    ck_assert_int_eq(in_xattr("d/new"), xattrs);
    ck_assert_int_eq(in_record("d/new"), !xattrs);
    /* both kinds: opened, stated, listed, renamed, deleted */
    const char *names[] = {"d/old", "d/new"};
    for (int i = 0; i < 2; i++) {
        struct ddio_pstat_r r;
        ck_assert_int_eq(open_f(names[i], DDIO_O_RDWR, &of, &created), 0);
        ck_assert_int_eq(of->layout.stripe_unit, 1 << 20);
        store_release(&st, of);
        ck_assert_int_eq(store_pstat(&st, names[i], &r, msg, sizeof(msg)), 0);
        ck_assert_int_eq(r.kind, DDIO_K_FILE);
        ck_assert_int_eq(r.layout.stripe_unit, 1 << 20);
    }
    struct ddio_readdir_r r;
    ck_assert_int_eq(store_readdir(&st, "d", "", 16, &r, msg, sizeof(msg)), 0);
    ck_assert_int_eq(r.n, 2);
    ck_assert_int_eq(r.ent[0].kind, DDIO_K_FILE);
    ck_assert_int_eq(r.ent[1].kind, DDIO_K_FILE);
    ddio_readdir_r_free(&r);
    ck_assert_int_eq(store_rename(&st, "d/old", "d/old2", msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_rename(&st, "d/new", "d/new2", msg, sizeof(msg)), 0);
    ck_assert(in_record("d/old2") && !in_record("d/old"));
    ck_assert_int_eq(in_xattr("d/new2"), xattrs);
    ck_assert_int_eq(open_f("d/old2", DDIO_O_RDWR, &of, &created), 0);
    store_release(&st, of);
    ck_assert_int_eq(open_f("d/new2", DDIO_O_RDWR, &of, &created), 0);
    store_release(&st, of);
    ck_assert_int_eq(store_delete(&st, "d/old2", msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_delete(&st, "d/new2", msg, sizeof(msg)), 0);
    ck_assert(!in_record("d/old2"));
    snprintf(p, sizeof(p), "%s/d/new2", root1);
    ck_assert_int_eq(access(p, F_OK), -1);
    ck_assert_int_eq(open_f("d/new2", DDIO_O_RDWR, &of, &created), -ENOENT);
    /* a datafile without a layout: not a file, not listed; an exclusive
     * create refuses it, a plain one makes it the file's */
    snprintf(p, sizeof(p), "%s/d/left", root1);
    ck_assert_int_ge(fd = open(p, O_RDWR | O_CREAT, 0644), 0);
    close(fd);
    ck_assert_int_eq(open_f("d/left", DDIO_O_RDWR, &of, &created), -ENOENT);
    ck_assert_int_eq(store_readdir(&st, "d", "", 16, &r, msg, sizeof(msg)), 0);
    ck_assert_int_eq(r.n, 0);
    ddio_readdir_r_free(&r);
    ck_assert_int_eq(open_f("d/left", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created),
                     -EEXIST);
    ck_assert_int_eq(open_f("d/left", DDIO_O_RDWR | DDIO_O_CREAT, &of, &created), 0);
    ck_assert_int_eq(created, 1);
    store_release(&st, of);
    ck_assert_int_eq(open_f("d/left", DDIO_O_RDWR, &of, &created), 0);
    store_release(&st, of);
    /* a corrupt layout: refused, with the reason */
    if (xattrs) {
        ck_assert_int_eq(open_f("d/bad", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created), 0);
        store_release(&st, of);
        snprintf(p, sizeof(p), "%s/d/bad", root1);
        ck_assert_int_eq(setxattr(p, STORE_LAYOUT_XATTR, "DDLM\3\0\0\0garbage", 15, 0), 0);
        ck_assert_int_eq(open_f("d/bad", DDIO_O_RDWR, &of, &created), -EPROTO);
        ck_assert_msg(strstr(msg, "corrupt") != NULL, "%s", msg);
        struct ddio_pstat_r ps;
        ck_assert_int_eq(store_pstat(&st, "d/bad", &ps, msg, sizeof(msg)), -EPROTO);
    }
}
END_TEST

/* the attribute is small enough for the inode (ext4's 256-byte inodes
 * leave 60 bytes), whatever the server count: the ids are a server set's,
 * kept once (ROOT_1/.ddio/sets); a set file gone or not the list its hash
 * says fails the files naming it (EPROTO), and a create whose list's hash
 * names another list keeps its layout in a record */
START_TEST(t_layout_sets)
{
    start(1);
    if (!st.layout_xattr)
        return;                 /* (records only: t_layout_kept_where says why) */
    struct ofile *of;
    int created;
    const uint32_t cx = DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL;
    struct ddio_layout_rec two = layout(1 << 20, 2), wide = layout(65536, DDIO_MAX_SERVERS);
    ck_assert_int_eq(store_open(&st, "two", cx, &two, NULL, &of, &created, msg, sizeof(msg)), 0);
    store_release(&st, of);
    ck_assert_int_eq(store_open(&st, "wide", cx, &wide, NULL, &of, &created, msg, sizeof(msg)), 0);
    store_release(&st, of);
    char p[600];
    snprintf(p, sizeof(p), "%s/two", root1);
    ck_assert_int_le(lgetxattr(p, STORE_LAYOUT_XATTR, NULL, 0), 60);
    snprintf(p, sizeof(p), "%s/wide", root1);
    ck_assert_int_le(lgetxattr(p, STORE_LAYOUT_XATTR, NULL, 0), 60);
    ck_assert(!in_record("two") && !in_record("wide"));
    /* in the inode where this file system keeps 60 bytes there: an empty
     * datafile takes no block */
    char q[600];
    struct stat sb, sq;
    snprintf(q, sizeof(q), "%s/probe", base);
    int fd = open(q, O_RDWR | O_CREAT, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fsetxattr(fd, STORE_LAYOUT_XATTR, q, 60, 0), 0);
    ck_assert_int_eq(fstat(fd, &sq), 0);
    close(fd);
    ck_assert_int_eq(stat(p, &sb), 0);
    ck_assert_msg(sq.st_blocks > 0 || sb.st_blocks == 0, "the layout took a block");
    /* read back after a restart, from the set files */
    store_fini(&st);
    start(1);
    ck_assert_int_eq(open_f("wide", DDIO_O_RDWR, &of, &created), 0);
    ck_assert_int_eq(of->layout.stripe_count, DDIO_MAX_SERVERS);
    ck_assert_int_eq(memcmp(of->layout.ids, wide.ids, sizeof(wide.ids)), 0);
    store_release(&st, of);
    ck_assert_int_eq(open_f("two", DDIO_O_RDWR, &of, &created), 0);
    ck_assert_int_eq(memcmp(of->layout.ids, two.ids, 2 * DDIO_ID_LEN), 0);
    store_release(&st, of);
    /* a valid attribute with bytes changed (a same-host user may write
     * one): refused or read, never a crash (the ASan build runs this) */
    snprintf(p, sizeof(p), "%s/wide", root1);
    uint8_t good[64], bad[64];
    ssize_t n = lgetxattr(p, STORE_LAYOUT_XATTR, good, sizeof(good));
    ck_assert_int_gt(n, 8);
    srandom(7);
    for (int i = 0; i < 300; i++) {
        memcpy(bad, good, (size_t)n);
        for (int k = 0; k < 1 + i % 3; k++)
            bad[4 + random() % (n - 4)] = (uint8_t)random();
        ck_assert_int_eq(lsetxattr(p, STORE_LAYOUT_XATTR, bad, (size_t)(n - (i % 7 == 0)), 0), 0);
        int rc = open_f("wide", DDIO_O_RDWR, &of, &created);
        ck_assert_msg(rc == 0 || rc == -EPROTO || rc == -ESTALE, "rc %d: %s", rc, msg);
        if (rc == 0)
            store_release(&st, of);
    }
    ck_assert_int_eq(lsetxattr(p, STORE_LAYOUT_XATTR, good, (size_t)n, 0), 0);
    ck_assert_int_eq(open_f("wide", DDIO_O_RDWR, &of, &created), 0);
    store_release(&st, of);
    /* two lists, two set files; each rewritten with the other's bytes */
    char cmd[800];
    snprintf(cmd, sizeof(cmd), "test $(ls %s/.ddio/sets | wc -l) = 2", root1);
    ck_assert_int_eq(system(cmd), 0);
    store_fini(&st);
    snprintf(cmd, sizeof(cmd), "cd %s/.ddio/sets && a=$(ls | head -1) && b=$(ls | tail -1) && "
             "cp $a t && cp $b $a && mv t $b", root1);
    ck_assert_int_eq(system(cmd), 0);
    start(1);
    ck_assert_int_eq(open_f("two", DDIO_O_RDWR, &of, &created), -EPROTO);
    ck_assert_msg(strstr(msg, "corrupt") != NULL, "%s", msg);
    ck_assert_int_eq(store_open(&st, "two2", cx, &two, NULL, &of, &created, msg, sizeof(msg)), 0);
    store_release(&st, of);
    ck_assert(in_record("two2") && !in_xattr("two2"));
    ck_assert_int_eq(store_open(&st, "two2", DDIO_O_RDWR, &two, NULL, &of, &created, msg,
                                sizeof(msg)), 0);
    store_release(&st, of);
    /* gone: the same */
    snprintf(cmd, sizeof(cmd), "rm %s/.ddio/sets/*", root1);
    ck_assert_int_eq(system(cmd), 0);
    store_fini(&st);
    start(1);
    ck_assert_int_eq(open_f("wide", DDIO_O_RDWR, &of, &created), -EPROTO);
}
END_TEST

START_TEST(t_create_half_done)
{
    start(2);
    struct ddio_layout_rec l = layout(1 << 20, 1);
    struct store_creator me = {42, 9}, other = {43, 9};
    const uint32_t cx = DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL | DDIO_O_ONCE;
    struct ofile *of;
    int created;
    char p[400];
    ck_assert_int_eq(store_open(&st, "half", cx, &l, &me, &of, &created, msg, sizeof(msg)), 0);
    store_release(&st, of);
    store_fini(&st);
    snprintf(p, sizeof(p), "%s/half", root1);    /* as the kill left it */
    ck_assert_int_eq(in_xattr("half"), !records);
    if (records)
        ck_assert_int_eq(unlink(p), 0);
    snprintf(p, sizeof(p), "%s/half", root2);
    ck_assert_int_eq(unlink(p), 0);
    start(2);
    ck_assert_int_eq(store_open(&st, "half", cx, &l, &other, &of, &created, msg, sizeof(msg)),
                     -EEXIST);
    ck_assert_int_eq(access(p, F_OK), -1);
    ck_assert_int_eq(store_open(&st, "half", cx, &l, &me, &of, &created, msg, sizeof(msg)), 0);
    ck_assert_int_eq(created, 1);
    store_release(&st, of);
    ck_assert_int_eq(access(p, F_OK), 0);         /* the datafiles made by the resend */
    snprintf(p, sizeof(p), "%s/half", root1);
    ck_assert_int_eq(access(p, F_OK), 0);
}
END_TEST

START_TEST(t_layout_roundtrip)
{
    start(1);
    struct ddio_layout_rec l = layout(4096, 3), back;
    l.server_index = 0;
    l.ndisks = 1;
    l.block_size = 65536;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    struct store_creator cr = {0x1234567890abcdefull, 77}, crb;
    ck_assert_int_eq(store_meta_encode(&l, &cr, &w), 0);
    memset(&back, 0, sizeof(back));
    ck_assert_int_eq(store_meta_decode(w.p, w.len, &back, &crb), 0);
    ck_assert(crb.client == cr.client && crb.call == cr.call);
    ck_assert_uint_eq(back.stripe_unit, 4096);
    ck_assert_uint_eq(back.stripe_count, 3);
    ck_assert_mem_eq(back.ids[0], st.id, DDIO_ID_LEN);
    ck_assert_mem_eq(back.ids[2], l.ids[2], DDIO_ID_LEN);
    ck_assert_int_eq(store_layout_check(&st, &back, msg, sizeof(msg)), 0);
    w.p[0] ^= 1;                                             /* bad magic */
    ck_assert_int_eq(store_meta_decode(w.p, w.len, &back, NULL), -EPROTO);
    w.p[0] ^= 1;
    ck_assert_int_eq(store_meta_decode(w.p, w.len - 1, &back, NULL), -EPROTO);   /* truncated */
    ck_assert_uint_eq(back.copies, 1);
    w.p[4] = 4;                                              /* a later version */
    ck_assert_int_eq(store_meta_decode(w.p, w.len, &back, NULL), -EPROTO);
    /* a version 1 record (no creator, no copies) still reads: made by
     * nobody known, one copy */
    w.p[4] = 1;
    ck_assert_int_eq(store_meta_decode(w.p, w.len, &back, &crb), -EPROTO);
    ck_assert_int_eq(store_meta_decode(w.p, w.len - 16 - 4, &back, &crb), 0);
    ck_assert(crb.client == 0 && crb.call == 0);
    ck_assert_uint_eq(back.copies, 1);
    ddio_wbuf_free(&w);
    back.block_size = 4096;
    ck_assert_int_eq(store_layout_check(&st, &back, msg, sizeof(msg)), -ESTALE);
    back.block_size = 65536;
    back.ids[0][0] ^= 0xff;
    ck_assert_int_eq(store_layout_check(&st, &back, msg, sizeof(msg)), -ESTALE);
}
END_TEST

static int exists_in(const char *root, const char *rel)
{
    char p[600];
    struct stat sb;
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    return stat(p, &sb) == 0;
}

static uint64_t size_in(const char *root, const char *rel)
{
    char p[600];
    struct stat sb;
    snprintf(p, sizeof(p), "%s/%s", root, rel);
    return stat(p, &sb) == 0 ? (uint64_t)sb.st_size : UINT64_MAX;
}

/* A mirrored file (2 copies of 3 servers; this one index 0): the create
 * makes the mirror of index 2 beside the datafile, under .ddio; sizes,
 * rename (of the file and of its directory) and delete carry it along; the
 * same-host write handover is refused */
START_TEST(t_copies)
{
    start(1);
    struct ddio_layout_rec l = layout(65536, 3);
    struct ofile *of;
    int created, w = 1, sfd, fds[4];
    l.copies = 2;
    ck_assert_int_eq(store_mkdir(&st, "d", 0755, msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_open(&st, "d/m", DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, NULL,
                                &of, &created, msg, sizeof(msg)), 0);
    ck_assert(exists_in(root1, "d/m") && exists_in(root1, ".ddio/copy1/d/m"));
    ck_assert(!exists_in(root1, ".ddio/copy2/d/m"));
    ck_assert_ptr_nonnull(of->copy[1]);
    ck_assert_ptr_null(of->copy[2]);
    ck_assert_uint_eq(of->copy[1]->layout.server_index, 2);
    /* 3 units and 100 bytes: index 2 holds one unit, index 0 two */
    uint64_t logical = 3 * 65536 + 100;
    ck_assert_int_eq(store_setsize(of, 65536 + 100), 0);
    ck_assert_int_eq(store_copies_setsize(of, logical, 0), 0);
    ck_assert_uint_eq(size_in(root1, ".ddio/copy1/d/m"), 65536);
    ck_assert_int_eq(store_copies_setsize(of, 100, 1), 0);      /* grow: no shrink */
    ck_assert_uint_eq(size_in(root1, ".ddio/copy1/d/m"), 65536);
    ck_assert_int_eq(store_copies_setsize(of, 100, 0), 0);
    ck_assert_uint_eq(size_in(root1, ".ddio/copy1/d/m"), 0);
    ck_assert_int_eq(store_copies_prealloc(of, logical), 0);
    ck_assert_uint_eq(size_in(root1, ".ddio/copy1/d/m"), 65536);
    ck_assert_int_eq(store_sync(&st, of), 0);
    ck_assert_int_eq(store_local_fds(of, &w, &sfd, fds), 0);
    ck_assert_int_eq(w, 0);                                     /* read-only */
    close(sfd);
    close(fds[0]);
    ck_assert_int_eq(store_rename(&st, "d/m", "d/n", msg, sizeof(msg)), 0);
    ck_assert(exists_in(root1, ".ddio/copy1/d/n") && !exists_in(root1, ".ddio/copy1/d/m"));
    ck_assert_int_eq(store_rename(&st, "d", "e", msg, sizeof(msg)), 0);
    ck_assert(exists_in(root1, ".ddio/copy1/e/n") && !exists_in(root1, ".ddio/copy1/d"));
    ck_assert_str_eq(of->copy[1]->path, ".ddio/copy1/e/n");
    store_release(&st, of);
    ck_assert_int_eq(store_open(&st, "e/n", DDIO_O_RDWR, &l, NULL, &of, &created, msg,
                                sizeof(msg)), 0);
    ck_assert_ptr_nonnull(of->copy[1]);
    ck_assert_uint_eq(of->layout.copies, 2);
    store_release(&st, of);
    ck_assert_int_eq(store_delete(&st, "e/n", msg, sizeof(msg)), 0);
    ck_assert(!exists_in(root1, "e/n") && !exists_in(root1, ".ddio/copy1/e/n"));
    ck_assert_int_eq(store_rmdir(&st, "e", msg, sizeof(msg)), 0);
    ck_assert(!exists_in(root1, ".ddio/copy1/e"));
    /* a file without copies has none */
    ck_assert_int_eq(open_f("plain", DDIO_O_RDWR | DDIO_O_CREAT, &of, &created), 0);
    ck_assert_ptr_null(of->copy[1]);
    ck_assert(!exists_in(root1, ".ddio/copy1/plain"));
    store_release(&st, of);
}
END_TEST

START_TEST(t_stored_layout_and_stale)
{
    start(1);
    struct ofile *of;
    int created;
    struct ddio_layout_rec l = layout(8192, 2);
    ck_assert_int_eq(store_open(&st, "lay", DDIO_O_CREAT, &l, NULL, &of, &created, msg, sizeof(msg)), 0);
    store_release(&st, of);
    ck_assert_int_eq(open_f("lay", DDIO_O_RDWR, &of, &created), 0);     /* proposal ignored */
    ck_assert_uint_eq(of->layout.stripe_unit, 8192);
    ck_assert_uint_eq(of->layout.stripe_count, 2);
    ck_assert_uint_eq(of->layout.ndisks, 1);
    ck_assert_uint_eq(of->layout.block_size, 65536);
    store_release(&st, of);
    /* same root, other block size: refused */
    store_fini(&st);
    config_defaults(&cfg);
    cfg.block_size = 131072;
    cfg.roots[cfg.nroots++] = root1;
    char err[256];
    ck_assert_int_eq(store_init(&st, &cfg, err, sizeof(err)), 0);
    ck_assert_int_eq(open_f("lay", DDIO_O_RDWR, &of, &created), -ESTALE);
    ck_assert_ptr_nonnull(strstr(msg, "block size"));
    /* another server's id at our index: refused on create too */
    l = layout(8192, 1);
    memset(l.ids[0], 0x42, DDIO_ID_LEN);
    ck_assert_int_eq(store_open(&st, "other", DDIO_O_CREAT, &l, NULL, &of, &created, msg, sizeof(msg)),
                     -ESTALE);
}
END_TEST

START_TEST(t_sizes_two_disks)
{
    start(2);
    struct ofile *of;
    int created;
    ck_assert_int_eq(open_f("s", DDIO_O_CREAT | DDIO_O_RDWR, &of, &created), 0);
    ck_assert_uint_eq(store_size(of), 0);
    /* 3 blocks + 100 bytes: disk 0 has blocks 0,2 (131072), disk 1 block 1 + 100 */
    ck_assert_int_eq(store_setsize(of, 3 * 65536 + 100), 0);
    struct stat sa, sb;
    char p[400];
    snprintf(p, sizeof(p), "%s/s", root1);
    stat(p, &sa);
    snprintf(p, sizeof(p), "%s/s", root2);
    stat(p, &sb);
    ck_assert_int_eq(sa.st_size, 2 * 65536);
    ck_assert_int_eq(sb.st_size, 65536 + 100);
    ck_assert_int_eq(store_prealloc(of, 0, 5 * 65536), 0);
    ck_assert_uint_eq(store_size(of), 5 * 65536);
    ck_assert_int_eq(store_sync(&st, of), 0);
    store_note_write(of, 6 * 65536 + 7);
    ck_assert_uint_eq(store_size(of), 6 * 65536 + 7);
    store_release(&st, of);
    /* reopening derives the size from the datafiles */
    ck_assert_int_eq(open_f("s", DDIO_O_RDWR, &of, &created), 0);
    ck_assert_uint_eq(store_size(of), 5 * 65536);
    uint64_t doff;
    ck_assert_int_eq(store_disk_of(of, 3 * 65536 + 5, &doff), 1);
    ck_assert_uint_eq(doff, 65536 + 5);
    /* block locks */
    ck_assert_int_eq(store_blk_lock(of, 7, 0, 0), 0);
    ck_assert_int_eq(store_blk_lock(of, 7, 0, 0), -EAGAIN);
    ck_assert_int_eq(store_blk_lock(of, 8, 0, 0), 0);
    store_blk_unlock(of, 7);
    ck_assert_int_eq(store_blk_lock(of, 7, 0, 0), 0);
    store_blk_unlock(of, 7);
    store_blk_unlock(of, 8);
    store_release(&st, of);
}
END_TEST

/* the namespace operations on two disks: kinds, sizes, listing, mkdir /
 * rmdir / rename across disks, errors, confinement */
static int names_of(const char *path, char *out, size_t n)
{
    struct ddio_readdir_r r;
    int rc = store_readdir(&st, path, "", DDIO_READDIR_MAX, &r, msg, sizeof(msg));
    out[0] = '\0';
    for (uint32_t i = 0; rc == 0 && i < r.n; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s%s%s", i ? "," : "", r.ent[i].name,
                 r.ent[i].kind == DDIO_K_DIR ? "/" : "");
    ddio_readdir_r_free(&r);
    return rc;
}

START_TEST(t_namespace)
{
    struct ofile *of;
    struct ddio_pstat_r ps;
    char names[512], p[600];
    int created;
    start(2);
    ck_assert_int_eq(store_mkdir(&st, "d", 0750, msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_mkdir(&st, "d", 0750, msg, sizeof(msg)), -EEXIST);
    ck_assert_int_eq(store_mkdir(&st, "x/y", 0755, msg, sizeof(msg)), -ENOENT);
    snprintf(p, sizeof(p), "%s/d", root2);     /* on every disk */
    struct stat sb;
    ck_assert_int_eq(stat(p, &sb), 0);
    ck_assert(S_ISDIR(sb.st_mode));
    ck_assert_int_eq(store_pstat(&st, "/", &ps, msg, sizeof(msg)), 0);
    ck_assert_uint_eq(ps.kind, DDIO_K_DIR);
    ck_assert_int_eq(store_pstat(&st, "d", &ps, msg, sizeof(msg)), 0);
    ck_assert_uint_eq(ps.kind, DDIO_K_DIR);
    ck_assert_uint_eq(ps.mode, 0750);
    ck_assert_int_eq(store_pstat(&st, "nope", &ps, msg, sizeof(msg)), -ENOENT);

    ck_assert_int_eq(open_f("d/f", DDIO_O_RDWR | DDIO_O_CREAT, &of, &created), 0);
    ck_assert_int_eq(store_setsize(of, 200000), 0);   /* spans both disks (64 KiB blocks) */
    ck_assert_int_eq(store_pstat(&st, "d/f", &ps, msg, sizeof(msg)), 0);
    ck_assert_uint_eq(ps.kind, DDIO_K_FILE);
    ck_assert_uint_eq(ps.local_size, 200000);
    ck_assert_uint_eq(ps.layout.stripe_unit, 1 << 20);
    ck_assert_int_eq(names_of("", names, sizeof(names)), 0);
    ck_assert_str_eq(names, "d/");                    /* .ddio is not listed */
    ck_assert_int_eq(names_of("d", names, sizeof(names)), 0);
    ck_assert_str_eq(names, "f");
    ck_assert_int_eq(names_of("d/f", names, sizeof(names)), -ENOTDIR);
    ck_assert_int_eq(names_of("nope", names, sizeof(names)), -ENOENT);

    ck_assert_int_eq(store_rmdir(&st, "d", msg, sizeof(msg)), -ENOTEMPTY);
    ck_assert_int_eq(store_rename(&st, "d", "d/sub", msg, sizeof(msg)), -EINVAL);
    ck_assert_int_eq(store_rename(&st, "d/f", "d/g", msg, sizeof(msg)), 0);
    ck_assert_str_eq(of->path, "d/g");                /* the open file follows */
    ck_assert_int_eq(store_pstat(&st, "d/f", &ps, msg, sizeof(msg)), -ENOENT);
    ck_assert_int_eq(store_pstat(&st, "d/g", &ps, msg, sizeof(msg)), 0);
    ck_assert_uint_eq(ps.local_size, 200000);
    ck_assert_int_eq(store_rename(&st, "d", "e", msg, sizeof(msg)), 0);
    ck_assert_str_eq(of->path, "e/g");
    store_release(&st, of);
    ck_assert_int_eq(store_pstat(&st, "e/g", &ps, msg, sizeof(msg)), 0);
    ck_assert_uint_eq(ps.local_size, 200000);         /* from the datafiles now */
    ck_assert_int_eq(store_rename(&st, "nope", "x", msg, sizeof(msg)), -ENOENT);
    ck_assert_int_eq(store_delete(&st, "e/g", msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_rmdir(&st, "e", msg, sizeof(msg)), 0);
    ck_assert_int_eq(store_rmdir(&st, "e", msg, sizeof(msg)), -ENOENT);
    snprintf(p, sizeof(p), "%s/e", root2);
    ck_assert_int_ne(stat(p, &sb), 0);

    /* confinement: nothing outside the roots, nothing of .ddio */
    ck_assert_int_eq(store_mkdir(&st, "../evil", 0755, msg, sizeof(msg)), -EACCES);
    ck_assert_int_eq(store_rename(&st, "a", "../../x", msg, sizeof(msg)), -EACCES);
    ck_assert_int_eq(store_pstat(&st, ".ddio/server-id", &ps, msg, sizeof(msg)), -EACCES);
    ck_assert_int_eq(names_of(".ddio", names, sizeof(names)), -EACCES);
    ck_assert_int_eq(store_rmdir(&st, ".ddio", msg, sizeof(msg)), -EACCES);
    ck_assert_int_eq(store_rmdir(&st, "", msg, sizeof(msg)), -EINVAL);
    snprintf(p, sizeof(p), "%s/link", root1);         /* a symlink out of the root */
    ck_assert_int_eq(symlink(outside, p), 0);
    ck_assert_int_eq(names_of("link", names, sizeof(names)), -EACCES);
    ck_assert_int_eq(store_mkdir(&st, "link/x", 0755, msg, sizeof(msg)), -EACCES);
}
END_TEST

/* one READDIR page of path after `after`, its names appended to out (a
 * NUL-separated list of n names); 1 if more follow */
static int page_into(const char *path, char *after, uint32_t max, char (*out)[16], int *n,
                     int cap)
{
    struct ddio_readdir_r r;
    int rc = store_readdir(&st, path, after, max, &r, msg, sizeof(msg));
    if (rc || r.n > max || *n + (int)r.n > cap)
        ck_abort_msg("readdir %s after '%s': %d, %u names (%s)", path, after, rc, r.n, msg);
    /* (checks without a passing assertion each: in a forked test every
     * passing one is a message to the parent, 5000 of them a second) */
    for (uint32_t i = 0; i < r.n; i++) {
        if (strlen(r.ent[i].name) >= 16)
            ck_abort_msg("name %s too long for the test", r.ent[i].name);
        strcpy(out[(*n)++], r.ent[i].name);
    }
    int more = (int)r.more;
    if (more) {
        if (r.n != max)                           /* a page stops early only at the end */
            ck_abort_msg("a page of %u names, not %u, with more to come", r.n, max);
        strcpy(after, r.ent[r.n - 1].name);
    }
    ddio_readdir_r_free(&r);
    return more;
}

START_TEST(t_readdir_pages)
{
    struct ofile *of;
    char name[32], after[DDIO_NAME_MAX + 1] = "", got[32][16];
    int created, n = 0;
    start(1);
    for (int i = 0; i < 25; i++) {
        snprintf(name, sizeof(name), "f%02d", i);
        ck_assert_int_eq(open_f(name, DDIO_O_RDWR | DDIO_O_CREAT, &of, &created), 0);
        store_release(&st, of);
    }
    int pages = 1;
    while (page_into("/", after, 10, got, &n, 32))
        pages++;
    ck_assert_int_eq(pages, 3);
    ck_assert_int_eq(n, 25);
    for (int i = 0; i < 25; i++) {
        snprintf(name, sizeof(name), "f%02d", i);
        ck_assert_str_eq(got[i], name);
    }
    /* a page after the last name, or after one past every name: empty, the end */
    struct ddio_readdir_r r;
    ck_assert_int_eq(store_readdir(&st, "/", "f24", 10, &r, msg, sizeof(msg)), 0);
    ck_assert_uint_eq(r.n, 0);
    ck_assert_uint_eq(r.more, 0);
    ck_assert_int_eq(store_readdir(&st, "/", "f10x", 4, &r, msg, sizeof(msg)), 0);
    ck_assert_uint_eq(r.n, 4);                     /* resumes after a name never listed */
    ck_assert_str_eq(r.ent[0].name, "f11");
    ck_assert_uint_eq(r.more, 1);
    ddio_readdir_r_free(&r);
}
END_TEST

static uint64_t dir_reads(void)
{
    pthread_mutex_lock(&st.lists.mu);
    uint64_t n = st.lists.reads;
    pthread_mutex_unlock(&st.lists.mu);
    return n;
}

static int index_of(char (*v)[16], int n, const char *name)
{
    int at = -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i], name)) {
            if (at >= 0)
                ck_abort_msg("%s listed twice", name);
            at = i;
        }
    return at;
}

/* A directory of 5000 entries listed in pages while entries are created
 * and removed on both sides of the position: sorted, none twice, every
 * entry present throughout listed once, one removed before the listing
 * reaches it not listed; the directory read once for all the pages. */
#define BIG 5000
START_TEST(t_readdir_big_changing)
{
    static char got[BIG + 16][16];
    char name[32], after[DDIO_NAME_MAX + 1] = "";
    struct ofile *of;
    int created, n = 0, pages = 0;
    start(1);
    ck_assert_int_eq(store_mkdir(&st, "big", 0755, msg, sizeof(msg)), 0);
    for (int i = 0; i < BIG; i++) {        /* even numbers: room for new ones between */
        snprintf(name, sizeof(name), "big/e%05d", 2 * i);
        if (i % 500 == 0) {                /* some files among the directories */
            ck_assert_int_eq(open_f(name, DDIO_O_RDWR | DDIO_O_CREAT, &of, &created), 0);
            store_release(&st, of);
        } else if (store_mkdir(&st, name, 0755, msg, sizeof(msg))) {
            ck_abort_msg("mkdir %s: %s", name, msg);
        }
    }
    uint64_t reads = dir_reads();
    int more = 1;
    while (more) {
        more = page_into("big", after, 97, got, &n, BIG + 16);
        if (++pages == 10) {               /* listed up to e01938 */
            ck_assert_str_eq(after, "e01938");
            ck_assert_int_eq(store_rmdir(&st, "big/e00010", msg, sizeof(msg)), 0);
            ck_assert_int_eq(store_rmdir(&st, "big/e09002", msg, sizeof(msg)), 0);
            ck_assert_int_eq(store_delete(&st, "big/e08000", msg, sizeof(msg)), 0);
            ck_assert_int_eq(store_mkdir(&st, "big/e00011", 0755, msg, sizeof(msg)), 0);
            ck_assert_int_eq(store_mkdir(&st, "big/e09001", 0755, msg, sizeof(msg)), 0);
        }
    }
    ck_assert_uint_eq(dir_reads() - reads, 1);
    for (int i = 1; i < n; i++)
        if (strcmp(got[i - 1], got[i]) >= 0)
            ck_abort_msg("%s listed before %s", got[i - 1], got[i]);
    for (int i = 0; i < BIG; i++) {
        snprintf(name, sizeof(name), "e%05d", 2 * i);
        int at = index_of(got, n, name), removed = 2 * i == 9002 || 2 * i == 8000;
        if ((at >= 0) == removed)
            ck_abort_msg("%s %s", name, removed ? "listed after its removal" : "not listed");
    }
    ck_assert_int_lt(index_of(got, n, "e00011"), 0);   /* behind the position: not seen */
    /* ahead of it: new since the listing began, so POSIX leaves it open; the
     * listing is the snapshot of its first page, which predates it */
    ck_assert_int_lt(index_of(got, n, "e09001"), 0);
    ck_assert_int_eq(n, BIG - 2);

    /* a new listing sees the directory as it is now */
    n = 0;
    after[0] = '\0';
    while (page_into("big", after, DDIO_READDIR_MAX, got, &n, BIG + 16))
        ;
    ck_assert_int_eq(n, BIG - 1);
    ck_assert_int_ge(index_of(got, n, "e00011"), 0);
    ck_assert_int_ge(index_of(got, n, "e09001"), 0);
    ck_assert_int_lt(index_of(got, n, "e00010"), 0);
    ck_assert_uint_eq(dir_reads() - reads, 2);
}
END_TEST

/* A listing whose snapshot was dropped (more directories listed since
 * than the cache keeps) resumes after its last name in a fresh read:
 * still complete, none twice. */
START_TEST(t_readdir_evicted)
{
    char name[32], after[DDIO_NAME_MAX + 1] = "", got[64][16], other[8][16];
    int n = 0, m;
    start(1);
    ck_assert_int_eq(store_mkdir(&st, "d", 0755, msg, sizeof(msg)), 0);
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "d/n%02d", i);
        ck_assert_int_eq(store_mkdir(&st, name, 0755, msg, sizeof(msg)), 0);
    }
    for (int i = 0; i <= STORE_LISTS_MAX; i++) {
        snprintf(name, sizeof(name), "o%02d", i);
        ck_assert_int_eq(store_mkdir(&st, name, 0755, msg, sizeof(msg)), 0);
    }
    ck_assert_int_eq(page_into("d", after, 15, got, &n, 64), 1);
    uint64_t reads = dir_reads();
    for (int i = 0; i <= STORE_LISTS_MAX; i++) {     /* d's listing pushed out */
        char none[DDIO_NAME_MAX + 1] = "";
        snprintf(name, sizeof(name), "o%02d", i);
        m = 0;
        ck_assert_int_eq(page_into(name, none, 5, other, &m, 8), 0);
    }
    pthread_mutex_lock(&st.lists.mu);
    ck_assert_uint_eq(st.lists.count, STORE_LISTS_MAX);
    pthread_mutex_unlock(&st.lists.mu);
    while (page_into("d", after, 15, got, &n, 64))
        ;
    ck_assert_uint_eq(dir_reads() - reads, STORE_LISTS_MAX + 1 + 1);   /* d read again */
    ck_assert_int_eq(n, 40);
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "n%02d", i);
        ck_assert_str_eq(got[i], name);
    }
}
END_TEST

/* Listings paged by several threads at once while another lists more
 * directories than the cache keeps, so the shared listing is dropped and
 * read again under pages in flight: every listing complete and in order. */
#define SHARED_N 600
#define CHURN_DIRS (STORE_LISTS_MAX + 6)
static void *list_shared(void *arg)
{
    static _Thread_local char got[SHARED_N][16];
    char name[16];
    (void)arg;
    for (int round = 0; round < 10; round++) {
        char after[DDIO_NAME_MAX + 1] = "";
        int n = 0;
        while (page_into("shared", after, 23, got, &n, SHARED_N))
            ;
        ck_assert_int_eq(n, SHARED_N);
        for (int i = 0; i < SHARED_N; i++) {
            snprintf(name, sizeof(name), "s%04d", i);
            if (strcmp(got[i], name))
                ck_abort_msg("name %d of the listing is %s, not %s", i, got[i], name);
        }
    }
    return NULL;
}

static void *list_churn(void *arg)
{
    char name[16], got[1][16];
    (void)arg;
    for (int round = 0; round < 5; round++)
        for (int i = 0; i < CHURN_DIRS; i++) {
            char after[DDIO_NAME_MAX + 1] = "";
            int n = 0;
            snprintf(name, sizeof(name), "c%02d", i);
            ck_assert_int_eq(page_into(name, after, 1, got, &n, 1), 0);
        }
    return NULL;
}

START_TEST(t_readdir_concurrent)
{
    char name[32];
    pthread_t t[4];
    start(1);
    ck_assert_int_eq(store_mkdir(&st, "shared", 0755, msg, sizeof(msg)), 0);
    for (int i = 0; i < SHARED_N; i++) {
        snprintf(name, sizeof(name), "shared/s%04d", i);
        if (store_mkdir(&st, name, 0755, msg, sizeof(msg)))
            ck_abort_msg("mkdir %s: %s", name, msg);
    }
    for (int i = 0; i < CHURN_DIRS; i++) {
        snprintf(name, sizeof(name), "c%02d", i);
        ck_assert_int_eq(store_mkdir(&st, name, 0755, msg, sizeof(msg)), 0);
    }
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, i ? list_shared : list_churn, NULL), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    pthread_mutex_lock(&st.lists.mu);
    size_t count = 0;
    for (struct store_listing *ls = st.lists.head; ls; ls = ls->next, count++)
        ck_assert_int_eq(ls->refs, 1);            /* only the cache's: no page kept one */
    ck_assert_uint_eq(count, st.lists.count);
    ck_assert_uint_le(count, STORE_LISTS_MAX);
    pthread_mutex_unlock(&st.lists.mu);
}
END_TEST

/* Opens do their file-system work outside the table's lock (store_open):
 * threads opening, creating (EXCL or not), deleting and renaming a few
 * paths at once get only the answers a serial order could give, and
 * nothing is left in the table or halfway open. */
#define RACE_THREADS 4
#define RACE_ROUNDS 300
static void *race(void *arg)
{
    unsigned r = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    char path[32], to[32];
    for (int k = 0; k < RACE_ROUNDS; k++) {
        r = r * 1103515245u + 12345u;
        snprintf(path, sizeof(path), "race/f%u", (r >> 8) % 3);
        unsigned op = (r >> 16) % 10;
        struct ofile *of = NULL, *of2 = NULL;
        int created, rc;
        char m[512];
        if (op < 5) {
            rc = open_f(path, DDIO_O_RDWR | DDIO_O_CREAT, &of, &created);
            ck_assert_msg(rc == 0, "open %s: %d", path, rc);
            ck_assert_int_eq(of->layout.stripe_unit, 1 << 20);  /* (a rename may move its path) */
            /* (deleted or renamed meanwhile: ENOENT, or another file) */
            rc = open_f(path, DDIO_O_RDWR, &of2, &created);
            ck_assert_msg(rc == 0 || rc == -ENOENT, "open again %s: %d", path, rc);
            if (rc == 0)
                store_release(&st, of2);
            store_release(&st, of);
        } else if (op < 7) {
            rc = open_f(path, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &of, &created);
            ck_assert_msg(rc == 0 || rc == -EEXIST, "create %s: %d", path, rc);
            if (rc == 0) {
                ck_assert_int_eq(created, 1);
                store_release(&st, of);
            }
        } else if (op < 9) {
            rc = store_delete(&st, path, m, sizeof(m));
            ck_assert_msg(rc == 0 || rc == -ENOENT, "delete %s: %d (%s)", path, rc, m);
        } else {
            snprintf(to, sizeof(to), "race/g%u", (r >> 4) % 2);
            rc = store_rename(&st, path, to, m, sizeof(m));
            ck_assert_msg(rc == 0 || rc == -ENOENT || rc == -EEXIST, "rename %s: %d (%s)",
                          path, rc, m);
        }
    }
    return NULL;
}

START_TEST(t_concurrent_opens)
{
    start(2);
    ck_assert_int_eq(store_mkdir(&st, "race", 0755, msg, sizeof(msg)), 0);
    pthread_t t[RACE_THREADS];
    for (int i = 0; i < RACE_THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, race, (void *)(uintptr_t)(i + 1)), 0);
    for (int i = 0; i < RACE_THREADS; i++)
        pthread_join(t[i], NULL);
    ck_assert_ptr_null(st.files);
    ck_assert_int_eq(st.opening, 0);
    ck_assert_int_eq(st.ns_waiting, 0);
    /* each name: a layout and both datafiles, or none of them (a delete
     * between a create's layout and its datafiles leaves one) */
    for (int i = 0; i < 5; i++) {
        char d1[400], d2[400], n[16];
        snprintf(n, sizeof(n), i < 3 ? "race/f%d" : "race/g%d", i < 3 ? i : i - 3);
        snprintf(d1, sizeof(d1), "%s/%s", root1, n);
        snprintf(d2, sizeof(d2), "%s/%s", root2, n);
        int a = in_record(n) || in_xattr(n), b = access(d1, F_OK) == 0,
            c = access(d2, F_OK) == 0;
        ck_assert_msg(a == b && b == c, "%s: layout %d, datafiles %d %d", n, a, b, c);
    }
}
END_TEST

/* The last close of a file writes its sums (and CLEAN) after the file left
 * the open table; an open meanwhile waits for it, else the closing file's
 * older sums could land over those of what the new open wrote, and a later
 * open trust them: a false integrity error (store.c store_closing). */
static void write_sector(struct ofile *of, int byte)
{
    void *b;
    ck_assert_int_eq(posix_memalign(&b, 4096, 4096), 0);
    memset(b, byte, 4096);
    ck_assert_int_eq(sums_begin_write(of->sums[0]), 0);
    ck_assert_int_eq(pwrite(of->fds[0], b, 4096, 0), 4096);
    sums_set(of->sums[0], 0, b, 4096);
    sums_end_write(of->sums[0]);
    store_note_write(of, 4096);
    free(b);
}

/* the closing thread's syncs take 50 ms (this binary's fdatasync is the
 * store's): the new open's whole write and close fit in its close */
static _Thread_local int slow_sync;
int fdatasync(int fd)
{
    if (slow_sync)
        usleep(50000);
    return (int)syscall(SYS_fdatasync, fd);
}

static void *release_thread(void *of)
{
    slow_sync = 1;
    store_release(&st, of);
    return NULL;
}

START_TEST(t_close_then_open_sums)
{
    config_defaults(&cfg);
    cfg.checksums = SUMS_ON;
    cfg.roots[cfg.nroots++] = root1;
    char err[512];
    ck_assert_msg(store_init(&st, &cfg, err, sizeof(err)) == 0, "store_init: %s", err);
    void *b;
    ck_assert_int_eq(posix_memalign(&b, 4096, 4096), 0);
    for (int i = 0; i < 4; i++) {
        struct ofile *a, *n, *c;
        int created;
        pthread_t t;
        ck_assert_int_eq(open_f("cs", DDIO_O_RDWR | DDIO_O_CREAT, &a, &created), 0);
        write_sector(a, 2 * i);
        ck_assert_int_eq(pthread_create(&t, NULL, release_thread, a), 0);
        while (store_is_open(&st, "cs", 0))   /* its last close has begun */
            usleep(100);
        ck_assert_int_eq(open_f("cs", DDIO_O_RDWR, &n, &created), 0);
        write_sector(n, 2 * i + 1);
        store_release(&st, n);
        pthread_join(t, NULL);
        ck_assert_int_eq(open_f("cs", DDIO_O_RDWR, &c, &created), 0);
        ck_assert_int_eq(pread(c->fds[0], b, 4096, 0), 4096);
        uint64_t bad = 0;
        ck_assert_msg(sums_verify(c->sums[0], 0, b, 4096, &bad) == 0,
                      "round %d: sector 0 (byte %02x) disagrees with its sum", i,
                      ((uint8_t *)b)[0]);
        store_release(&st, c);
    }
    free(b);
}
END_TEST

static void *pass_end_thread(void *of)
{
    usleep(50000);                /* the pass's last sends end */
    store_release_pass(&st, of, 1);
    return NULL;
}

/* A read answers its ranks before its pass lets go of the file, so the
 * client's close can come first: a fence then waits for such a pass (and
 * only for such): the file is not "open" for it, nor closed too early. */
START_TEST(t_open_answered_pass)
{
    config_defaults(&cfg);
    cfg.roots[cfg.nroots++] = root1;
    char err[512];
    ck_assert_msg(store_init(&st, &cfg, err, sizeof(err)) == 0, "store_init: %s", err);
    struct ofile *h;
    int created;
    ck_assert_int_eq(open_f("ap", DDIO_O_RDWR | DDIO_O_CREAT, &h, &created), 0);
    store_retain(&st, h);         /* the pass */
    store_answered(&st, h);
    ck_assert_int_eq(store_is_open(&st, "ap", 0), 1);
    int64_t t0 = ddio_now_ms();
    ck_assert_int_eq(store_is_open(&st, "ap", 3000), 1);  /* the handle holds it */
    ck_assert_int_lt(ddio_now_ms() - t0, 3000);
    store_release(&st, h);        /* the client's close */
    ck_assert_int_eq(store_is_open(&st, "ap", 0), 1);    /* no wait: still held */
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, pass_end_thread, h), 0);
    ck_assert_int_eq(store_is_open(&st, "ap", 10000), 0);
    pthread_join(t, NULL);
    /* a pass that has not answered is a holder like a handle */
    ck_assert_int_eq(open_f("ap", DDIO_O_RDWR, &h, &created), 0);
    store_retain(&st, h);
    store_release(&st, h);
    ck_assert_int_eq(store_is_open(&st, "ap", 100), 1);
    store_release(&st, h);
    ck_assert_int_eq(store_is_open(&st, "ap", 0), 0);
}
END_TEST

static int mapped(const void *p)
{
    return msync((void *)((uintptr_t)p & ~(uintptr_t)4095), 4096, MS_ASYNC) == 0;
}

/* A datafile's long-lived read mapping: the bytes of the file where it
 * is, a larger one when the file outgrows it, the older one unmapped when
 * its last user lets go, the newest at the close. */
START_TEST(t_fmap)
{
    config_defaults(&cfg);
    cfg.roots[cfg.nroots++] = root1;
    char err[512];
    ck_assert_msg(store_init(&st, &cfg, err, sizeof(err)) == 0, "store_init: %s", err);
    if (!st.direct[0])
        return;                   /* no cached twin to map (tmpfs) */
    struct ofile *of;
    int created;
    ck_assert_int_eq(open_f("fm", DDIO_O_RDWR | DDIO_O_CREAT, &of, &created), 0);
    int bfd = of->bfds[0];
    ck_assert_int_ge(bfd, 0);
    uint8_t b[8192];
    for (size_t i = 0; i < sizeof(b); i++)
        b[i] = (uint8_t)(i * 7 + 3);
    ck_assert_int_eq(pwrite(bfd, b, sizeof(b), 0), (ssize_t)sizeof(b));
    struct fmap *m1, *m2, *m3;
    const uint8_t *p = store_fmap_get(of, 0, 4096, 4096, &m1);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(memcmp(p, b + 4096, 4096), 0);
    /* the file grows past the first mapping (1 GiB): a new one */
    uint64_t far = 3ull << 29;
    ck_assert_int_eq(pwrite(bfd, b, 4096, (off_t)far), 4096);
    const uint8_t *q = store_fmap_get(of, 0, far, 4096, &m2);
    ck_assert_ptr_nonnull(q);
    ck_assert_ptr_ne(m1, m2);
    ck_assert_int_eq(memcmp(q, b, 4096), 0);
    ck_assert_int_eq(memcmp(p, b + 4096, 4096), 0);   /* the old one still read */
    const uint8_t *r = store_fmap_get(of, 0, 0, 4096, &m3);
    ck_assert_ptr_eq(m3, m2);     /* the newest serves every range it reaches */
    ck_assert_int_eq(memcmp(r, b, 4096), 0);
    ck_assert_int_eq(mapped(p), 1);
    store_fmap_put(of, m1);
    ck_assert_int_eq(mapped(p), 0);
    store_fmap_put(of, m2);
    store_fmap_put(of, m3);
    ck_assert_int_eq(mapped(q), 1);   /* the newest stays until the close */
    store_release(&st, of);
    ck_assert_int_eq(mapped(q), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, t_norm_path);
    tcase_add_test(tc, t_server_id_persists);
    tcase_add_test(tc, t_create_excl_open_delete);
    tcase_add_test(tc, t_confinement);
    tcase_add_test(tc, t_meta_durable_at_sync);
    tcase_add_test(tc, t_fsyncs);
    tcase_add_test(tc, t_layout_roundtrip);
    tcase_add_test(tc, t_create_resent);
    tcase_add_test(tc, t_create_half_done);
    tcase_add_test(tc, t_stored_layout_and_stale);
    tcase_add_test(tc, t_copies);
    tcase_add_test(tc, t_sizes_two_disks);
    tcase_add_test(tc, t_namespace);
    tcase_add_test(tc, t_readdir_pages);
    tcase_add_test(tc, t_concurrent_opens);
    tcase_add_test(tc, t_close_then_open_sums);
    tcase_add_test(tc, t_open_answered_pass);
    tcase_add_test(tc, t_fmap);
    tcase_add_test(tc, t_layout_kept_where);
    tcase_add_test(tc, t_layout_sets);
    suite_add_tcase(s, tc);
    /* the same with layouts kept in records */
    TCase *tr = tcase_create("records");
    tcase_add_checked_fixture(tr, setup_records, teardown_records);
    tcase_add_test(tr, t_create_excl_open_delete);
    tcase_add_test(tr, t_meta_durable_at_sync);
    tcase_add_test(tr, t_create_resent);
    tcase_add_test(tr, t_create_half_done);
    tcase_add_test(tr, t_stored_layout_and_stale);
    tcase_add_test(tr, t_copies);
    tcase_add_test(tr, t_namespace);
    tcase_add_test(tr, t_concurrent_opens);
    suite_add_tcase(s, tr);
    /* thousands of entries made and listed, hundreds of files made durable:
     * more than Check's 4 s default on a loaded machine */
    TCase *tl = tcase_create("listing");
    tcase_add_checked_fixture(tl, setup, teardown);
    tcase_set_timeout(tl, 60);
    tcase_add_test(tl, t_readdir_big_changing);
    tcase_add_test(tl, t_readdir_evicted);
    tcase_add_test(tl, t_readdir_concurrent);
    tcase_add_test(tl, t_meta_batches);
    suite_add_tcase(s, tl);
    int failed = check_run(s, 0);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
