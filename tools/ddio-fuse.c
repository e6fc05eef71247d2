/* ddio-fuse: the ddio namespace mounted as a file system (libfuse3).
 *
 *   ddio-fuse [--servers H:P,...] [--timeout S] [--stripe-unit B] [--attr-timeout S]
 *             [--cache-timeout S] [-o ...] MOUNTPOINT
 * (also --servers=H:P,... etc.)
 *
 * Servers default to $DDIO_SERVERS, then the "servers = " line of
 * $DDIO_CONFIG. POSIX tools see the files MPI programs write; MPI programs
 * given a plain path under the mount go to the servers directly (ROMIO asks
 * the user.ddio.* extended attributes below; see adio/ad_ddio/ad_ddio_mount.c).
 *
 * Coherence with writers that bypass the mount (docs/SEMANTICS.md "The
 * mount"): the servers tell the mount of every other client's change before
 * that change returns (a watch: ddio_watch_start), and only then does it
 * keep names and attributes, in its own cache (ddio_fuse_cache.c) and the
 * kernel's; what they cannot tell (a size another client's open file grows
 * to) shows within --cache-timeout. File bytes are never cached
 * (direct_io), so `cat` sees the new bytes at once. Every path has two extended attributes:
 * user.ddio.servers (the server list) and user.ddio.path (the path inside
 * the ddio namespace). File times are the servers' datafile times: utimens
 * is accepted and has no effect (documented in README "The ddio mount"). */
#define FUSE_USE_VERSION 31
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ddio_auth.h"
#include "ddio_client.h"
#include "ddio_fuse_cache.h"
#include "ddio_fuse_file.h"
#include "ddio_fuse_held.h"
#include "ddio_proto.h"

#define XATTR_SERVERS "user.ddio.servers"
#define XATTR_PATH    "user.ddio.path"

static struct ddio_client *cl;
static uint64_t mount_time_ns;      /* the root's times */

struct opts {
    char *servers;
    int timeout_s;
    char *attr_timeout;
    char *cache_timeout;
    char *unit;
    char *secret;
    int as_caller;
    int help;
};
static struct opts o;
static uint64_t unit;
/* Seconds the kernel may trust what it was told (-1: not given). A
 * process's own MPI-IO create or delete under the mount goes to the servers
 * directly, and its next look through the mount must not find the old
 * entry (PnetCDF's tests do exactly this): so by default 10 s only while
 * the servers are watched (their word drops the kernel's attributes of a
 * changed path, and an open of a name gone meanwhile is looked up again:
 * op_open), else 0. While a server's watch is down the kernel keeps what
 * it is given at most KERNEL_TIMEOUT_DOWN (kernel_bound). 10 s, not 1: a
 * metadata job's stats a few seconds after its creates (mdtest's) were
 * answered by the kernel in some launches and asked of this process in
 * others (0.08-0.79x a local stat at 1 s, 0.44-0.49x at 10). */
#define KERNEL_TIMEOUT_DFLT 10.0
#define KERNEL_TIMEOUT_DOWN 1.0
static double attr_timeout = -1;
static struct fuse_config *kcfg;    /* libfuse reads its timeouts at each reply */
/* seconds the mount itself keeps attributes the servers have not said
 * changed (ddio_fuse_cache.h): what a watch cannot hear of, a size another
 * process's open file grows to, shows within it. 60, as NFS's acregmax:
 * 10 let a metadata job's stats (mdtest's, a phase after its creates)
 * find its first files' attributes gone and ask the servers again */
#define CACHE_TIMEOUT_DFLT 60.0
static double cache_timeout = CACHE_TIMEOUT_DFLT;
static struct ddio_client *wcl;     /* the watch's own */
static struct ddio_watcher *watch;

/* --as-caller: one client per calling user, each connection acting for it
 * (ACTAS; the servers allow it to root on a --mount-hosts host) */
#define MAX_USERS 1024
static struct user {
    uid_t uid;
    gid_t gid;
    struct ddio_client *cl;
} users[MAX_USERS];
static int nusers;
static pthread_mutex_t users_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ddio_client *nobody;  /* for a caller whose own client cannot be made */

/* A client for FUSE's requests: its read-only opens hand the same-host
 * descriptors over at the first read, not at the open (stat-like opens,
 * mdtest's, read nothing) */
static struct ddio_client *mount_client(char *msg, size_t n)
{
    struct ddio_client *c = ddio_client_new(o.servers, (o.timeout_s ? o.timeout_s : 30) * 1000,
                                            unit, o.secret, msg, n);
    if (c)
        ddio_client_local_lazy(c, 1);
    return c;
}

static struct ddio_client *user_client(uid_t uid, gid_t gid)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_client *c = NULL;
    pthread_mutex_lock(&users_mu);
    for (int i = 0; i < nusers && !c; i++)
        if (users[i].uid == uid && users[i].gid == gid)
            c = users[i].cl;
    if (!c && nusers < MAX_USERS) {
        c = mount_client(msg, sizeof(msg));
        if (c) {
            ddio_client_act_as(c, uid, gid);
            users[nusers++] = (struct user){uid, gid, c};
        } else
            fprintf(stderr, "ddio-fuse: uid %u: %s (it acts as nobody)\n", (unsigned)uid, msg);
    }
    pthread_mutex_unlock(&users_mu);
    return c ? c : nobody;           /* never the mount's own (root's) client */
}

/* The mount's own clients: a client has one connection per server and a
 * request holds it until its reply, so one client would make the kernel's
 * concurrent requests (several processes' creates and stats) wait in turn;
 * each FUSE thread takes one of NCL, round robin. */
#define NCL 4
static struct ddio_client *cls[NCL];
static atomic_uint next_cl;

static struct ddio_client *thread_client(void)
{
    static _Thread_local struct ddio_client *mine;
    if (!mine)
        mine = cls[atomic_fetch_add(&next_cl, 1) % NCL];
    return mine;
}

/* the client for this request: the caller's with --as-caller, else the mount's */
static struct ddio_client *me(void)
{
    const struct fuse_context *fc = o.as_caller ? fuse_get_context() : NULL;
    return fc ? user_client(fc->uid, fc->gid) : thread_client();
}

#define OPT(t, p) { t, offsetof(struct opts, p), 1 }
static const struct fuse_opt opt_spec[] = {
    OPT("--servers=%s", servers), OPT("--timeout=%d", timeout_s),
    OPT("--attr-timeout=%s", attr_timeout), OPT("attr_timeout=%s", attr_timeout),
    OPT("--cache-timeout=%s", cache_timeout), OPT("cache_timeout=%s", cache_timeout),
    OPT("--stripe-unit=%s", unit), OPT("--secret-file=%s", secret), OPT("--as-caller", as_caller),
    OPT("-h", help), OPT("--help", help),
    FUSE_OPT_END
};

/* failures are logged with the servers' message; FUSE gets the errno */
static int fail(const char *op, const char *path, int rc, const char *msg)
{
    if (rc != -ENOENT && rc != -EEXIST && rc != -ENOTEMPTY)
        fprintf(stderr, "ddio-fuse: %s %s: %s\n", op, path, msg);
    return rc;
}

static void fill_stat(struct stat *sb, const struct ddio_cstat *st)
{
    memset(sb, 0, sizeof(*sb));
    sb->st_mode = (st->is_dir ? S_IFDIR : S_IFREG) | (st->mode & 07777);
    sb->st_nlink = st->is_dir ? 2 : 1;
    sb->st_uid = o.as_caller ? (uid_t)st->uid : getuid();
    sb->st_gid = o.as_caller ? (gid_t)st->gid : getgid();
    sb->st_size = (off_t)st->size;
    sb->st_blksize = st->is_dir || !st->stripe.unit ? 4096 : (blksize_t)st->stripe.unit;
    sb->st_blocks = (blkcnt_t)((st->size + 511) / 512);
    sb->st_mtim.tv_sec = (time_t)(st->mtime_ns / 1000000000u);
    sb->st_mtim.tv_nsec = (long)(st->mtime_ns % 1000000000u);
    sb->st_atim = sb->st_ctim = sb->st_mtim;
}

/* An open file (ddio_fuse_file.h): the client's handle or a deferred open,
 * and for a file this open created, what its stat is (new, empty, ours):
 * FUSE asks for it right after the create, and the servers need not be
 * asked what we just told them. */
static struct mfile *mf(const struct fuse_file_info *fi)
{
    return (struct mfile *)(uintptr_t)fi->fh;
}

static struct fuse *the_fuse;      /* for the kernel's invalidations (op_init) */
static pthread_mutex_t kcfg_mu = PTHREAD_MUTEX_INITIALIZER;
static int live;                    /* under kcfg_mu: from op_init to op_destroy */

/* another process's change, heard before it returns: forgotten here, and
 * by the kernel too where it keeps attributes (--attr-timeout) */
static void on_inval(void *arg, uint32_t what, const char *path)
{
    char **under = NULL;
    int n = (what & DDIO_IV_TREE) && attr_timeout > 0 && the_fuse ? held_under(path, &under) : 0;
    mc_inval(arg, what, path);
    pthread_mutex_lock(&kcfg_mu);    /* (none once the session ended: op_destroy) */
    if (attr_timeout > 0 && the_fuse && live)
        fuse_invalidate_path(the_fuse, path);
    for (int i = 0; i < n; i++) {
        if (live)
            fuse_invalidate_path(the_fuse, under[i]);
        free(under[i]);
    }
    pthread_mutex_unlock(&kcfg_mu);
    free(under);
}

/* The kernel's bound follows the watch: attr_timeout while every server is
 * watched, at most KERNEL_TIMEOUT_DOWN while one is not (nothing tells the
 * kernel of a change then), and what it kept is dropped when a watch goes
 * down. (kcfg is libfuse's own configuration, read at each reply; an
 * aligned double store, seen whole.) */
static void kernel_bound(int watching)
{
    static int was = -1;
    pthread_mutex_lock(&kcfg_mu);
    if (!kcfg || attr_timeout <= 0 || watching == was) {
        pthread_mutex_unlock(&kcfg_mu);
        return;
    }
    was = watching;
    double t = watching || attr_timeout < KERNEL_TIMEOUT_DOWN ? attr_timeout
                                                              : KERNEL_TIMEOUT_DOWN;
    kcfg->attr_timeout = kcfg->entry_timeout = t;
    char **under = NULL;
    int n = watching ? 0 : held_under("/", &under);
    for (int i = 0; i < n; i++) {     /* (under kcfg_mu: op_destroy waits) */
        fuse_invalidate_path(the_fuse, under[i]);
        free(under[i]);
    }
    free(under);
    pthread_mutex_unlock(&kcfg_mu);
}

/* the session ends: the watch, stopped after it, tells the kernel nothing */
static void op_destroy(void *private_data)
{
    (void)private_data;
    pthread_mutex_lock(&kcfg_mu);
    kcfg = NULL;
    live = 0;
    pthread_mutex_unlock(&kcfg_mu);
}

/* a server's watch up, down or refused: the mount's cache, then the kernel's bound */
static void on_up(void *arg, int server, int state)
{
    mc_up(arg, server, state);
    kernel_bound(mc_watching());
}

/* The watch that keeps the cache coherent: started here, in the mounted
 * process (fuse_main forks before it unless -f). Without it nothing is
 * kept. */
static void start_watch(void)
{
    static const struct ddio_watch_ops ops = {on_inval, on_up};
    char msg[DDIO_CLIENT_MSG_LEN];
    if (cache_timeout <= 0)
        return;
    wcl = ddio_client_new(o.servers, (o.timeout_s ? o.timeout_s : 30) * 1000, unit, o.secret,
                          msg, sizeof(msg));
    if (wcl)
        watch = ddio_watch_start(wcl, &ops, NULL, msg, sizeof(msg));
    if (!watch)
        fprintf(stderr, "ddio-fuse: watch: %s (names and attributes are not kept)\n", msg);
    /* the mount's first operations find the cache on (up to 2 s: a server
     * that is down is watched when it comes back) */
    for (int i = 0; watch && i < 200 && !mc_watching(); i++)
        usleep(10000);
}

/* The coherence rule (docs/SEMANTICS.md "The mount"): the kernel keeps
 * attributes and names for attr_timeout seconds and then asks again;
 * another client's change drops the kernel's attributes of the path as it
 * is heard (on_inval), so a stat after it asks this process, whose cache
 * heard it too. This mount's own changes update the kernel's copy as they
 * are made. Absent names are not kept by the kernel (negative timeout 0):
 * a file an MPI job creates under the mount, which the job's ROMIO looked
 * up before it existed, is seen at once. File bytes are never cached
 * (direct_io): a read always reaches the servers. */
static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    the_fuse = fuse_get_context()->fuse;
    pthread_mutex_lock(&kcfg_mu);
    live = 1;
    pthread_mutex_unlock(&kcfg_mu);
    start_watch();
    if (attr_timeout < 0)
        attr_timeout = mc_watching() ? KERNEL_TIMEOUT_DFLT : 0;
    cfg->attr_timeout = attr_timeout;
    held_init(attr_timeout);
    cfg->entry_timeout = attr_timeout;
    if (watch) {                 /* (without one, --attr-timeout holds as given) */
        pthread_mutex_lock(&kcfg_mu);
        kcfg = cfg;
        pthread_mutex_unlock(&kcfg_mu);
        kernel_bound(mc_watching());
    }
    cfg->negative_timeout = 0;
    cfg->direct_io = 1;
    cfg->hard_remove = 1;        /* the servers keep unlinked open files usable */
    cfg->use_ino = 0;
    return NULL;
}

/* a path's stat from the cache, else from the servers (their answer kept
 * unless a change was heard meanwhile) */
static int cached_stat(const char *path, struct ddio_cstat *st, char *msg, size_t msglen)
{
    int k = mc_get(path, st);
    if (k >= 0)
        return k ? 0 : (snprintf(msg, msglen, "%s: no such file (kept)", path), -ENOENT);
    uint64_t g = mc_gen();
    int rc = ddio_client_stat(me(), path, st, msg, msglen);
    if (rc == 0 || rc == -ENOENT)
        mc_put(path, rc ? NULL : st, g);
    return rc;
}

/* cached_stat, but the root always exists: a dead server must not make
 * the mount point itself unreachable (unmount tools stat it) */
static int path_stat(const char *path, struct ddio_cstat *st, char *msg, size_t msglen)
{
    if (strcmp(path, "/"))
        return cached_stat(path, st, msg, msglen);
    *st = (struct ddio_cstat){.is_dir = 1, .mode = 0755, .mtime_ns = mount_time_ns};
    return 0;
}

static int op_getattr(const char *path, struct stat *sb, struct fuse_file_info *fi)
{
    struct ddio_cstat st;
    char msg[DDIO_CLIENT_MSG_LEN];
    /* FUSE's stat of the file it just created: what the create made */
    if (fi && fi->fh && atomic_exchange(&mf(fi)->fresh, 0)) {
        fill_stat(sb, &mf(fi)->st);
        held_note(path);
        return 0;
    }
    int rc = path_stat(path, &st, msg, sizeof(msg));
    if (rc)
        return fail("stat", path, rc, msg);
    fill_stat(sb, &st);
    held_note(path);
    return 0;
}

/* access(2) on a name the kernel still keeps (entry timeout) after another
 * client removed it: the kernel asks no getattr for F_OK, only this, so
 * the answer comes from what the watch told the cache. Permissions stay
 * the servers' to enforce, as before: an existing path is granted. */
static int op_access(const char *path, int mask)
{
    struct ddio_cstat st;
    char msg[DDIO_CLIENT_MSG_LEN];
    (void)mask;
    int rc = path_stat(path, &st, msg, sizeof(msg));
    return rc ? fail("access", path, rc, msg) : 0;
}

struct fill {
    void *buf;
    fuse_fill_dir_t fn;
};

static int fill_one(void *arg, const char *name, int is_dir)
{
    struct fill *f = arg;
    struct stat sb = {.st_mode = is_dir ? S_IFDIR : S_IFREG};
    return f->fn(f->buf, name, &sb, 0, 0) ? -ENOBUFS : 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t fn, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    struct fill f = {buf, fn};
    char msg[DDIO_CLIENT_MSG_LEN];
    (void)off;
    (void)fi;
    (void)flags;
    fn(buf, ".", NULL, 0, 0);
    fn(buf, "..", NULL, 0, 0);
    int rc = ddio_client_readdir(me(), path, fill_one, &f, msg, sizeof(msg));
    return rc && rc != -ENOBUFS ? fail("readdir", path, rc, msg) : 0;
}

static int op_mkdir(const char *path, mode_t mode)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    uint64_t g = mc_gen();
    int rc = ddio_client_mkdir(me(), path, mode & 07777, msg, sizeof(msg));
    if (rc == 0)            /* new and empty: every name in it is known */
        mc_own_name(path, 1, NULL, 1, g);
    return rc ? fail("mkdir", path, rc, msg) : 0;
}

static int op_rmdir(const char *path)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    uint64_t g = mc_gen();
    int rc = ddio_client_rmdir(me(), path, msg, sizeof(msg));
    if (rc == 0)
        mc_own_name(path, 0, NULL, 0, g);
    return rc ? fail("rmdir", path, rc, msg) : 0;
}

static int op_unlink(const char *path)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    uint64_t g = mc_gen();
    mfile_make_under(path, me());   /* its open handles keep the file */
    int rc = ddio_client_unlink(me(), path, msg, sizeof(msg));
    if (rc == 0 || rc == -ENOENT)
        mc_own_name(path, 0, NULL, 0, g);
    return rc ? fail("unlink", path, rc, msg) : 0;
}

static int op_rename(const char *from, const char *to, unsigned int flags)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_cstat st;
    if (flags & RENAME_EXCHANGE)
        return -EINVAL;
    if ((flags & RENAME_NOREPLACE) && ddio_client_stat(me(), to, &st, msg, sizeof(msg)) != -ENOENT)
        return -EEXIST;
    mfile_make_under(from, me());   /* open handles follow their files */
    mfile_make_under(to, me());
    int rc = ddio_client_rename(me(), from, to, msg, sizeof(msg));
    mc_own_tree(from);      /* whatever came of it */
    mc_own_tree(to);
    return rc ? fail("rename", from, rc, msg) : 0;
}

static int open_flags(int posix)
{
    return ((posix & O_CREAT) ? DDIO_CO_CREAT : 0) | ((posix & O_EXCL) ? DDIO_CO_EXCL : 0) |
           ((posix & O_TRUNC) ? DDIO_CO_TRUNC : 0) |
           ((posix & O_ACCMODE) == O_RDONLY ? DDIO_CO_RDONLY : 0);  /* a reader needs no
                                                                       * write permission */
}

/* the stat of a file this open just created with permission bits mode;
 * under --as-caller the owner is the caller (root may be squashed by the
 * servers: then they are asked) */
static void set_fresh(struct mfile *m, uint32_t mode)
{
    const struct fuse_context *fc = fuse_get_context();
    struct timespec now;
    if (o.as_caller && (!fc || fc->uid == 0))
        return;
    clock_gettime(CLOCK_REALTIME, &now);
    m->st = (struct ddio_cstat){.mode = mode & 07777,
                                .mtime_ns = (uint64_t)now.tv_sec * 1000000000u +
                                            (uint64_t)now.tv_nsec};
    if (fc) {
        m->st.uid = fc->uid;
        m->st.gid = fc->gid;
    }
    ddio_client_file_stripe(mfile_opened(m), &m->st.stripe);
    atomic_store(&m->fresh, 1);
}

static void give_handle(struct fuse_file_info *fi, struct mfile *m)
{
    fi->fh = (uint64_t)(uintptr_t)m;
    fi->direct_io = 1;           /* MPI-IO writers bypass the page cache too */
}

/* mode >= 0: a create's permission bits (the caller's umask applied by the kernel) */
static int do_open(const char *path, int flags, long mode, struct fuse_file_info *fi)
{
    struct ddio_cfile *f;
    char msg[DDIO_CLIENT_MSG_LEN];
    uint64_t g = mc_gen();
    int rc = mode >= 0 ? ddio_client_open_mode(me(), path, flags, (uint32_t)mode & 07777, &f,
                                               msg, sizeof(msg))
                       : ddio_client_open(me(), path, flags, &f, msg, sizeof(msg));
    if (rc)
        return fail("open", path, rc, msg);
    struct mfile *m = mfile_new(f);
    if (!m) {
        ddio_client_close(f);
        return -ENOMEM;
    }
    if (mode >= 0 && ddio_client_created(f)) {
        set_fresh(m, (uint32_t)mode);
        mc_own_name(path, 1, atomic_load(&m->fresh) ? &m->st : NULL, 0, g);
    } else if (flags & DDIO_CO_TRUNC)
        mc_own_attr(path);
    give_handle(fi, m);
    return 0;
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    return do_open(path, open_flags(fi->flags) | DDIO_CO_CREAT, (long)(mode & 07777), fi);
}

/* Whether an open of path may be deferred (ddio_fuse_file.h): the servers
 * are watched, so what the mount keeps of path is their word; it is a file
 * the mount keeps, not truncated by this open; and its permission bits
 * surely allow the access to this mount's user (owner bits when it owns the
 * file, else both group and other bits); otherwise the servers decide. */
static int deferrable(const char *path, int posix)
{
    struct ddio_cstat st;
    if (o.as_caller || (posix & (O_TRUNC | O_CREAT)) || !mc_watching()
        || mc_get(path, &st) != 1 || st.is_dir)
        return 0;
    int acc = posix & O_ACCMODE;
    uint32_t need = acc == O_RDONLY ? 4 : acc == O_WRONLY ? 2 : 6;
    uint32_t bits = st.uid == (uint32_t)geteuid() ? (st.mode >> 6) & 7
                                                   : (st.mode >> 3) & st.mode & 7;
    return (bits & need) == need;
}

/* Close-to-open, as NFS: an open drops the kernel's attributes of the
 * file, so the opener's fstat (HDF5 checks the size it finds against the
 * size it stored) asks the servers, whatever another client changed within
 * the bound. Not under O_TRUNC: the kernel holds the inode then and sets
 * the size itself. (An inval_inode notification is not "related" to an
 * open: libfuse's rule for deadlocks names setattr, getattr, read, write.)
 * Not needed while the servers are watched: a writer's close is heard
 * before it returns (on_inval). */
static int op_open(const char *path, struct fuse_file_info *fi)
{
    if (deferrable(path, fi->flags)) {
        struct mfile *m = mfile_deferred(path, open_flags(fi->flags));
        if (m) {
            give_handle(fi, m);
            return 0;
        }
    }
    int rc = do_open(path, open_flags(fi->flags), -1, fi);
    if (rc == 0 && attr_timeout > 0 && !(fi->flags & O_TRUNC) && !mc_watching())
        fuse_invalidate_path(fuse_get_context()->fuse, path);
    /* The kernel kept a name another client removed since (it asks no
     * lookup of a kept name, and never tells an open it has O_CREAT):
     * ESTALE makes it look the name up again and open anew, creating if
     * asked to. */
    return rc == -ENOENT && attr_timeout > 0 ? -ESTALE : rc;
}

static int op_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_cfile *f;
    int rc = mfile_get(mf(fi), me(), &f, msg, sizeof(msg));
    if (rc)
        return fail("read", path, rc, msg);
    ssize_t n = ddio_client_pread(f, buf, len, (uint64_t)off, msg, sizeof(msg));
    return n < 0 ? fail("read", path, (int)n, msg) : (int)n;
}

static int op_write(const char *path, const char *buf, size_t len, off_t off,
                    struct fuse_file_info *fi)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    uint64_t at = (uint64_t)off;
    struct ddio_cfile *f;
    int rc = mfile_get(mf(fi), me(), &f, msg, sizeof(msg));
    if (rc == 0 && (fi->flags & O_APPEND))
        rc = ddio_client_size(f, &at, msg, sizeof(msg));
    if (rc)
        return fail("write", path, rc, msg);
    ssize_t n = ddio_client_pwrite(f, buf, len, at, msg, sizeof(msg));
    mc_own_attr(path);
    return n < 0 ? fail("write", path, (int)n, msg) : (int)n;
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    struct ddio_cfile *f = NULL;
    char msg[DDIO_CLIENT_MSG_LEN];
    int rc = 0;
    if (size < 0)
        return -EINVAL;
    if (fi)
        rc = mfile_get(mf(fi), me(), &f, msg, sizeof(msg));
    else
        rc = ddio_client_open(me(), path, 0, &f, msg, sizeof(msg));
    if (!rc)
        rc = ddio_client_truncate(f, (uint64_t)size, msg, sizeof(msg));
    if (!fi && f)
        ddio_client_close(f);
    mc_own_attr(path);
    return rc ? fail("truncate", path, rc, msg) : 0;
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    (void)datasync;
    struct ddio_cfile *f = mfile_opened(mf(fi));   /* none: nothing written through it */
    int rc = f ? ddio_client_sync(f, msg, sizeof(msg)) : 0;
    return rc ? fail("fsync", path, rc, msg) : 0;
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    mfile_release(mf(fi));
    return 0;
}

/* No server call: ROMIO's file system detection statfs()es every plain path
 * it opens, and that must not depend on the servers being up. */
static int op_statfs(const char *path, struct statvfs *sv)
{
    (void)path;
    memset(sv, 0, sizeof(*sv));
    sv->f_bsize = sv->f_frsize = 4096;
    sv->f_namemax = DDIO_NAME_MAX;
    return 0;
}

/* times live on the servers' datafiles; accepted so touch and cp work */
static int op_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    (void)path;
    (void)tv;
    (void)fi;
    return 0;
}

/* chmod and chown: the servers' SETATTR (who may: theirs to say) */
static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    (void)fi;
    mfile_make_under(path, me());   /* an open handle keeps its access */
    int rc = ddio_client_setattr(me(), path, DDIO_SA_MODE, mode & 07777, 0, 0, msg, sizeof(msg));
    mc_own_attr(path);
    return rc ? fail("chmod", path, rc, msg) : 0;
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    (void)fi;
    mfile_make_under(path, me());
    int rc = ddio_client_chown(me(), path, uid == (uid_t)-1 ? -1 : (long)uid,
                               gid == (gid_t)-1 ? -1 : (long)gid, msg, sizeof(msg));
    mc_own_attr(path);
    return rc ? fail("chown", path, rc, msg) : 0;
}

static int xattr_value(const char *path, const char *name, char *out, size_t cap)
{
    if (!strcmp(name, XATTR_SERVERS))
        return snprintf(out, cap, "%s", ddio_client_servers(me()));
    if (!strcmp(name, XATTR_PATH))
        return snprintf(out, cap, "%s", path);
    return -ENODATA;
}

static int op_getxattr(const char *path, const char *name, char *value, size_t size)
{
    char buf[8192];
    int n = xattr_value(path, name, buf, sizeof(buf));
    if (n < 0)
        return n;
    if ((size_t)n >= sizeof(buf))
        return -E2BIG;
    if (size == 0)
        return n;
    if ((size_t)n > size)
        return -ERANGE;
    memcpy(value, buf, (size_t)n);
    return n;
}

static int op_listxattr(const char *path, char *list, size_t size)
{
    static const char names[] = XATTR_SERVERS "\0" XATTR_PATH;
    (void)path;
    if (size == 0)
        return sizeof(names);
    if (size < sizeof(names))
        return -ERANGE;
    memcpy(list, names, sizeof(names));
    return sizeof(names);
}

static const struct fuse_operations ops = {
    .init = op_init,
    .destroy = op_destroy,
    .getattr = op_getattr,
    .access = op_access,
    .readdir = op_readdir,
    .mkdir = op_mkdir,
    .rmdir = op_rmdir,
    .unlink = op_unlink,
    .rename = op_rename,
    .create = op_create,
    .open = op_open,
    .read = op_read,
    .write = op_write,
    .truncate = op_truncate,
    .fsync = op_fsync,
    .release = op_release,
    .statfs = op_statfs,
    .utimens = op_utimens,
    .chmod = op_chmod,
    .chown = op_chown,
    .getxattr = op_getxattr,
    .listxattr = op_listxattr,
};

/* the value of "key = value" in $DDIO_CONFIG, malloc'd, or NULL */
static char *config_str(const char *key)
{
    char val[4096];
    return ddio_config_value(key, val, sizeof(val)) ? strdup(val) : NULL;
}

static void usage(const char *prog)
{
    printf("usage: %s [--servers=H:P,...] [--timeout=S] [--stripe-unit=B] [--secret-file=F]\n"
           "       [--attr-timeout=S] [--as-caller] [FUSE options] MOUNTPOINT\n"
           "  --attr-timeout=S (also -o attr_timeout=S): seconds the kernel keeps\n"
           "  attributes and names (not absent names) before asking this process\n"
           "  again; file bytes are never cached. Default $DDIO_ATTR_TIMEOUT, then\n"
           "  DDIO_CONFIG's 'attr_timeout =', then 10 while the servers are watched\n"
           "  (below; at most 1 while a watch is down), else 0 (nothing kept: without\n"
           "  a watch another client's change shows within S).\n"
           "  --cache-timeout=S (also -o cache_timeout=S): the mount's own cache of\n"
           "  names and attributes, kept coherent by the servers (they tell it of\n"
           "  every other client's change before that change returns); S bounds\n"
           "  only what they cannot tell: the size of a file another client has open\n"
           "  and is writing. Default $DDIO_CACHE_TIMEOUT, then DDIO_CONFIG's\n"
           "  'cache_timeout =', then 60; 0 keeps nothing. Off with --as-caller.\n"
           "  --as-caller (as root, servers under --auth munge listing this host in\n"
           "  --mount-hosts): every request acts for the user who makes it, and files\n"
           "  show their owners; implies -o allow_other.\n"
           "  mounts the ddio namespace; servers default to $DDIO_SERVERS, then the\n"
           "  'servers =' line of $DDIO_CONFIG; timeout (s) to $DDIO_TIMEOUT, then\n"
           "  DDIO_CONFIG's 'timeout =', then 30; stripe unit of new files to\n"
           "  DDIO_CONFIG's 'striping_unit =' (bytes), then 1 MiB; the shared secret to\n"
           "  $DDIO_SECRET_FILE, then the 'secret_file =' line of $DDIO_CONFIG.\n"
           "  Unmount with fusermount3 -u MOUNTPOINT.\n\n",
           prog);
}

/* a bound in seconds (0..3600): the option's value, else $env, else
 * DDIO_CONFIG's "key =", else what *out holds */
static int parse_seconds(const char *opt, const char *env, const char *key, double *out)
{
    char *v = opt ? strdup(opt) : NULL, *end = NULL;
    if (!v && getenv(env) && *getenv(env))
        v = strdup(getenv(env));
    if (!v)
        v = config_str(key);
    if (!v)
        return 0;
    double t = strtod(v, &end);
    int ok = end != v && !*end && t >= 0 && t <= 3600;
    if (ok)
        *out = t;
    else
        fprintf(stderr, "ddio-fuse: bad %s '%s' (seconds, 0..3600)\n", key, v);
    free(v);
    return ok ? 0 : -1;
}

/* "--servers X" -> "--servers=X" (also --timeout, --stripe-unit): fuse_opt
 * applies every template that matches, so "--servers %s" would also match
 * "--servers=X" and take "=X" */
static int join_long_opts(struct fuse_args *args, int argc, char **argv)
{
    static const char *const names[] = {"--servers", "--timeout", "--stripe-unit",
                                        "--secret-file", "--attr-timeout", "--cache-timeout"};
    for (int i = 0; i < argc; i++) {
        char joined[8192];
        int hit = 0;
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]) && !hit; k++)
            if (!strcmp(argv[i], names[k]) && i + 1 < argc) {
                snprintf(joined, sizeof(joined), "%s=%s", names[k], argv[++i]);
                hit = 1;
            }
        if (fuse_opt_add_arg(args, hit ? joined : argv[i]))
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
    char msg[DDIO_CLIENT_MSG_LEN], *end = NULL;

    if (join_long_opts(&args, argc, argv) || fuse_opt_parse(&args, &o, opt_spec, NULL) == -1)
        return 2;
    if (o.help) {
        usage(argv[0]);
        fuse_opt_add_arg(&args, "--help");
        args.argv[0][0] = '\0';
        fuse_main(args.argc, args.argv, &ops, NULL);    /* prints FUSE's options */
        return 0;
    }
    if (!o.servers && getenv("DDIO_SERVERS") && *getenv("DDIO_SERVERS"))
        o.servers = strdup(getenv("DDIO_SERVERS"));
    if (!o.servers)
        o.servers = config_str("servers");
    if (!o.timeout_s && getenv("DDIO_TIMEOUT"))
        o.timeout_s = atoi(getenv("DDIO_TIMEOUT"));
    if (!o.timeout_s) {
        char *t = config_str("timeout");
        o.timeout_s = t ? atoi(t) : 0;
        free(t);
    }
    if (parse_seconds(o.attr_timeout, "DDIO_ATTR_TIMEOUT", "attr_timeout", &attr_timeout) ||
        parse_seconds(o.cache_timeout, "DDIO_CACHE_TIMEOUT", "cache_timeout", &cache_timeout))
        return 2;
    if (!o.unit)
        o.unit = config_str("striping_unit");
    if (o.unit) {
        unit = strtoull(o.unit, &end, 10);
        if (*end == 'k' || *end == 'K')
            unit <<= 10, end++;
        else if (*end == 'm' || *end == 'M')
            unit <<= 20, end++;
        if (!unit || *end || unit > (1u << 30)) {
            fprintf(stderr, "ddio-fuse: bad --stripe-unit '%s' (bytes, K or M suffix, "
                    "1..1G)\n", o.unit);
            return 2;
        }
    }
    if (!o.servers) {
        fprintf(stderr, "ddio-fuse: no servers: pass --servers=H:P,... or set DDIO_SERVERS "
                        "or DDIO_CONFIG\n");
        return 2;
    }
    if (o.timeout_s < 0) {
        fprintf(stderr, "ddio-fuse: bad timeout %d\n", o.timeout_s);
        return 2;
    }
    /* libfuse 3.14 checks its unset idle-thread limit (-1) against the thread
     * maximum and complains on every mount;
     * given first, a user's own -o max_idle_threads=N still wins */
    fuse_opt_insert_arg(&args, 1, "-omax_idle_threads=8");
    if (o.as_caller && getuid() != 0) {
        fprintf(stderr, "ddio-fuse: --as-caller acts for every user: run it as root\n");
        return 2;
    }
    if (o.as_caller)                 /* every user reaches the mount */
        fuse_opt_insert_arg(&args, 1, "-oallow_other");
    mount_time_ns = (uint64_t)time(NULL) * 1000000000u;
    cl = mount_client(msg, sizeof(msg));
    cls[0] = cl;
    for (int i = 1; i < NCL && cl; i++)
        if (!(cls[i] = mount_client(msg, sizeof(msg))))
            cls[i] = cl;    /* (cannot fail after the first: same list, same secret) */
    if (cl && o.as_caller) {
        nobody = mount_client(msg, sizeof(msg));
        if (nobody)
            ddio_client_act_as(nobody, 65534, 65534);
    }
    if (!cl || (o.as_caller && !nobody)) {
        fprintf(stderr, "ddio-fuse: %s\n", msg);
        return 2;
    }
    if (o.as_caller)    /* what one user may see would be shown to every other */
        cache_timeout = 0;
    mc_init(ddio_client_nservers(cl), cache_timeout);
    int rc = fuse_main(args.argc, args.argv, &ops, NULL);
    ddio_watch_stop(watch);
    ddio_client_free(wcl);
    fuse_opt_free_args(&args);
    for (int i = 1; i < NCL; i++)
        if (cls[i] != cl)
            ddio_client_free(cls[i]);
    ddio_client_free(cl);
    for (int i = 0; i < nusers; i++)
        ddio_client_free(users[i].cl);
    ddio_client_free(nobody);
    free(o.servers);
    free(o.unit);
    free(o.secret);
    free(o.attr_timeout);
    free(o.cache_timeout);
    return rc;
}
