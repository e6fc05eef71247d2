/* Storage roots, path confinement, datafiles, layout records, open files. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE      /* O_DIRECT, O_PATH, fallocate */
#endif
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cond.h"
#include "ddio_log.h"
#include "ddio_net.h"
#include "fault.h"
#include "store_int.h"

/* ---- path confinement ------------------------------------------------------ */

int store_norm_path(const char *path, char *out, size_t outlen)
{
    while (*path == '/')
        path++;
    size_t n = strlen(path);
    if (n == 0)
        return -EINVAL;
    if (n >= outlen)
        return -ENAMETOOLONG;
    const char *p = path;
    int first = 1;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
            return -EACCES;
        if (first && len == strlen(META_DIR) && memcmp(p, META_DIR, len) == 0)
            return -EACCES;               /* the server's own metadata */
        if (!e)
            break;
        if (e[1] == '\0')
            return -EACCES;               /* trailing '/': empty component */
        p = e + 1;
        first = 0;
    }
    memcpy(out, path, n + 1);
    return 0;
}

/* Symlink-refusing fallback when openat2 is unavailable: walk components
 * with O_NOFOLLOW, so no symlink (escaping or not) is ever followed. */
static int open_walk(int dirfd, const char *rel, int flags, mode_t mode)
{
    char buf[DDIO_MAX_STR + 1];
    snprintf(buf, sizeof(buf), "%s", rel);
    int cur = dup(dirfd);
    char *save = NULL;
    char *comp = strtok_r(buf, "/", &save);
    while (comp && cur >= 0) {
        char *nextc = strtok_r(NULL, "/", &save);
        int fl = nextc ? (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                       : (flags | O_NOFOLLOW | O_CLOEXEC);
        int fd = openat(cur, comp, fl, mode);
        int e = errno;
        close(cur);
        if (fd < 0)
            return e == ELOOP ? -EACCES : -e;
        cur = fd;
        comp = nextc;
    }
    return cur;
}

/* open rel under dirfd; resolution never leaves dirfd (symlinks that stay
 * inside are followed, escapes and magic links are refused with EACCES) */
int open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
    struct open_how how = {
        .flags = (uint64_t)(flags | O_CLOEXEC),
        .mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
    };
    long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
    if (fd >= 0)
        return (int)fd;
    if (errno == ENOSYS)
        return open_walk(dirfd, rel, flags, mode);
    if (errno == EXDEV || errno == ELOOP)
        return -EACCES;
    return -errno;
}

/* create every directory of rel's parent chain under dirfd */
int mkdir_parents(int dirfd, const char *rel)
{
    char buf[DDIO_MAX_STR + 1];
    snprintf(buf, sizeof(buf), "%s", rel);
    for (char *s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
        *s = '\0';
        int fd = open_beneath(dirfd, buf, O_PATH | O_DIRECTORY, 0);
        if (fd == -ENOENT) {
            char *slash = strrchr(buf, '/');
            int parent = slash ? (*slash = '\0', open_beneath(dirfd, buf, O_PATH | O_DIRECTORY, 0))
                               : dup(dirfd);
            if (slash)
                *slash = '/';
            if (parent < 0)
                return parent;
            const char *name = slash ? slash + 1 : buf;
            int rc = mkdirat(parent, name, 0755);
            int e = errno;
            close(parent);
            if (rc && e != EEXIST)
                return -e;
        } else if (fd < 0) {
            return fd;
        } else {
            close(fd);
        }
        *s = '/';
    }
    return 0;
}

/* the parent directory of rel under dirfd (O_PATH) and rel's last component */
int open_parent(int dirfd, const char *rel, const char **name)
{
    char parent[DDIO_MAX_STR + 1];
    snprintf(parent, sizeof(parent), "%s", rel);
    char *slash = strrchr(parent, '/');
    *name = slash ? rel + (slash - parent) + 1 : rel;
    if (!slash) {
        int fd = dup(dirfd);
        return fd < 0 ? -errno : fd;
    }
    *slash = '\0';
    return open_beneath(dirfd, parent, O_PATH | O_DIRECTORY, 0);
}

/* unlink (flags 0) or rmdir (AT_REMOVEDIR) rel under dirfd through its
 * confined parent directory, so a symlinked directory in the path can never
 * redirect it outside */
int unlink_beneath(int dirfd, const char *rel, int flags)
{
    const char *name;
    int pfd = open_parent(dirfd, rel, &name);
    if (pfd < 0)
        return pfd;
    int rc = unlinkat(pfd, name, flags) ? -errno : 0;
    close(pfd);
    return rc;
}

/* ---- small file helpers ------------------------------------------------------ */

/* rel under dirfd, written to a temporary file and renamed into place (a
 * reader sees the old record or the new one, never half of one); durable:
 * fsynced before the rename, else whoever needs it durable syncs it later
 * (sync_meta) */
static int write_atomic(struct store *st, int dirfd, const char *rel, const void *p, size_t n,
                        int durable)
{
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "w.%d.%u", (int)getpid(),
             __atomic_fetch_add(&st->tmpseq, 1, __ATOMIC_RELAXED));
    int fd = openat(st->tmpfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    ssize_t w = write(fd, p, n);
    int rc = (w == (ssize_t)n) ? 0 : (w < 0 ? -errno : -EIO);
    if (rc == 0 && durable && fsync(fd))
        rc = -errno;
    close(fd);
    if (rc == 0) {
        rc = mkdir_parents(dirfd, rel);
        if (rc == 0) {
            /* rel is confined already; rename into the directory fd */
            const char *name;
            int pfd = open_parent(dirfd, rel, &name);
            if (pfd < 0) {
                rc = pfd;
            } else {
                if (renameat(st->tmpfd, tmp, pfd, name))
                    rc = -errno;
                close(pfd);
            }
        }
    }
    if (rc)
        unlinkat(st->tmpfd, tmp, 0);
    return rc;
}

static ssize_t read_small(int dirfd, const char *rel, void *buf, size_t cap)
{
    int fd = open_beneath(dirfd, rel, O_RDONLY | O_NOFOLLOW, 0);
    if (fd < 0)
        return fd;
    ssize_t n = read(fd, buf, cap);
    int e = errno;
    close(fd);
    return n < 0 ? -e : n;
}

/* ---- server id and O_DIRECT detection ---------------------------------------- */

static int load_server_id(struct store *st, int ddiofd, char *err, size_t errlen)
{
    uint8_t buf[DDIO_ID_LEN + 1];
    ssize_t n = read_small(ddiofd, "server-id", buf, sizeof(buf));
    if (n == DDIO_ID_LEN) {
        memcpy(st->id, buf, DDIO_ID_LEN);
        return 0;
    }
    if (n != -ENOENT) {
        snprintf(err, errlen, "%s/%s/server-id: %s", st->roots[0], META_DIR,
                 n < 0 ? strerror((int)-n) : "wrong length (corrupt?)");
        return n < 0 ? (int)n : -EINVAL;
    }
    if (getrandom(st->id, DDIO_ID_LEN, 0) != DDIO_ID_LEN) {
        snprintf(err, errlen, "getrandom: %s", strerror(errno));
        return -errno;
    }
    int rc = write_atomic(st, ddiofd, "server-id", st->id, DDIO_ID_LEN, 1);
    if (rc)
        snprintf(err, errlen, "%s/%s/server-id: %s", st->roots[0], META_DIR, strerror(-rc));
    else
        DDIO_INFO("created server id in %s/%s/server-id", st->roots[0], META_DIR);
    return rc;
}

/* O_DIRECT support is a property of the file system: probe once per root */
static int probe_direct(int ddiofd)
{
    char name[64];
    snprintf(name, sizeof(name), "odirect-probe.%d", (int)getpid());
    int fd = openat(ddiofd, name, O_RDWR | O_CREAT | O_DIRECT | O_CLOEXEC, 0600);
    int ok = fd >= 0;
    if (fd >= 0)
        close(fd);
    else {
        fd = openat(ddiofd, name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0)
            close(fd);
    }
    unlinkat(ddiofd, name, 0);
    return ok;
}

static int open_dir_at(int dirfd, const char *name, int create)
{
    if (create && mkdirat(dirfd, name, 0755) && errno != EEXIST)
        return -errno;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

static int init_root(struct store *st, int d, char *err, size_t errlen)
{
    int fd = open(st->roots[d], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "--root %s: %s", st->roots[d], strerror(errno));
        return -errno;
    }
    st->rootfd[d] = fd;
    int ddiofd = open_dir_at(fd, META_DIR, 1);
    if (ddiofd < 0) {
        snprintf(err, errlen, "%s/%s: %s", st->roots[d], META_DIR, strerror(-ddiofd));
        return ddiofd;
    }
    st->direct[d] = probe_direct(ddiofd);
    DDIO_INFO("disk %d: root %s, %s", d, st->roots[d],
              st->direct[d] ? "O_DIRECT" : "buffered I/O (file system refuses O_DIRECT)");
    int rc = 0;
    if (d == 0) {
        st->metafd = open_dir_at(ddiofd, "meta", 1);
        st->tmpfd = open_dir_at(ddiofd, "tmp", 1);
        if (st->metafd < 0 || st->tmpfd < 0) {
            rc = st->metafd < 0 ? st->metafd : st->tmpfd;
            snprintf(err, errlen, "%s/%s/meta: %s", st->roots[0], META_DIR, strerror(-rc));
        } else {
            rc = load_server_id(st, ddiofd, err, errlen);
        }
    }
    close(ddiofd);
    return rc;
}

int store_init(struct store *st, const struct srv_config *cfg, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->open_cv, NULL);
    store_meta_start(st);
    st->ndisks = cfg->nroots;
    st->block_size = cfg->block_size;
    st->roots = calloc((size_t)st->ndisks, sizeof(*st->roots));
    st->rootfd = calloc((size_t)st->ndisks, sizeof(int));
    st->direct = calloc((size_t)st->ndisks, sizeof(int));
    st->metafd = st->tmpfd = -1;
    if (!st->roots || !st->rootfd || !st->direct) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (int d = 0; d < st->ndisks; d++) {
        st->roots[d] = cfg->roots[d];
        st->rootfd[d] = -1;
    }
    for (int d = 0; d < st->ndisks; d++) {
        int rc = init_root(st, d, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

void store_state_path(const struct store *st, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s/%s", st->roots[0], META_DIR, name);
}

static void ofile_free(struct ofile *of)
{
    for (int d = 0; d < of->ndisks; d++) {
        if (of->fds && of->fds[d] >= 0)
            close(of->fds[d]);
        if (of->bfds && of->bfds[d] >= 0)
            close(of->bfds[d]);
    }
    if (of->sizemap)
        munmap(of->sizemap, sizeof(*of->sizemap));
    if (of->sizefd >= 0)
        close(of->sizefd);
    free(of->fds);
    free(of->bfds);
    free(of->dirty);
    free(of->blk);
    free(of->path);
    store_meta_release(of);
    lk_destroy(&of->locks);
    pthread_cond_destroy(&of->blk_cv);
    pthread_mutex_destroy(&of->mu);
    free(of);
}

void store_fini(struct store *st)
{
    store_meta_stop(st);
    while (st->files) {
        struct ofile *n = st->files->next;
        ofile_free(st->files);
        st->files = n;
    }
    for (int d = 0; d < st->ndisks; d++)
        if (st->rootfd && st->rootfd[d] >= 0)
            close(st->rootfd[d]);
    if (st->metafd >= 0)
        close(st->metafd);
    if (st->tmpfd >= 0)
        close(st->tmpfd);
    free(st->roots);
    free(st->rootfd);
    free(st->direct);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->open_cv);
    memset(st, 0, sizeof(*st));
}

/* ---- layout records ---------------------------------------------------------------- */

int store_meta_encode(const struct ddio_layout_rec *l, const struct store_creator *cr,
                      struct ddio_wbuf *w)
{
    ddio_put_u32(w, STORE_META_MAGIC);
    ddio_put_u32(w, STORE_META_VERSION);
    ddio_enc_layout(w, l);
    ddio_put_u64(w, cr ? cr->client : 0);
    ddio_put_u64(w, cr ? cr->call : 0);
    return w->err;
}

/* version 1 (before creators were kept) is read as made by nobody known */
int store_meta_decode(const void *p, size_t n, struct ddio_layout_rec *l,
                      struct store_creator *cr)
{
    struct ddio_rbuf r;
    struct store_creator none = {0, 0};
    ddio_rbuf_init(&r, p, n);
    uint32_t magic = ddio_get_u32(&r);
    uint32_t ver = ddio_get_u32(&r);
    if (r.err || magic != STORE_META_MAGIC || ver < 1 || ver > STORE_META_VERSION)
        return -EPROTO;
    memset(l, 0, sizeof(*l));
    if (ddio_dec_layout(&r, l))
        return -EPROTO;
    if (ver >= 2) {
        none.client = ddio_get_u64(&r);
        none.call = ddio_get_u64(&r);
    }
    if (ddio_rbuf_done(&r))
        return -EPROTO;
    if (cr)
        *cr = none;
    return 0;
}

static void hex_id(const uint8_t *id, char *out)
{
    for (unsigned i = 0; i < DDIO_ID_LEN; i++)
        sprintf(out + 2 * i, "%02x", id[i]);
}

int store_layout_check(const struct store *st, const struct ddio_layout_rec *l,
                       char *msg, size_t msglen)
{
    char a[2 * DDIO_ID_LEN + 1], b[2 * DDIO_ID_LEN + 1];
    if (l->stripe_count == 0 || l->stripe_count > DDIO_MAX_SERVERS
        || l->server_index >= l->stripe_count) {
        snprintf(msg, msglen, "stored layout is invalid (index %u of %u)",
                 l->server_index, l->stripe_count);
        return -ESTALE;
    }
    if (memcmp(l->ids[l->server_index], st->id, DDIO_ID_LEN) != 0) {
        hex_id(l->ids[l->server_index], a);
        hex_id(st->id, b);
        snprintf(msg, msglen, "layout names server %s at index %u, but this server is %s",
                 a, l->server_index, b);
        return -ESTALE;
    }
    if (l->ndisks != (uint32_t)st->ndisks || l->block_size != st->block_size) {
        snprintf(msg, msglen, "file was created with %u disks / block size %" PRIu64
                 ", server now has %d disks / block size %" PRIu64,
                 l->ndisks, l->block_size, st->ndisks, st->block_size);
        return -ESTALE;
    }
    return 0;
}

/* ---- open / create / delete --------------------------------------------------------- */

struct ofile *find_open(struct store *st, const char *path)
{
    for (struct ofile *of = st->files; of; of = of->next)
        if (!of->deleted && strcmp(of->path, path) == 0)
            return of;
    return NULL;
}

static struct ofile *ofile_new(struct store *st, const char *path)
{
    struct ofile *of = calloc(1, sizeof(*of));
    if (!of)
        return NULL;
    of->path = strdup(path);
    of->fds = malloc(sizeof(int) * (size_t)st->ndisks);
    of->bfds = malloc(sizeof(int) * (size_t)st->ndisks);
    of->dirty = calloc((size_t)st->ndisks, sizeof(*of->dirty));
    if (!of->path || !of->fds || !of->bfds || !of->dirty) {
        free(of->path);
        free(of->fds);
        free(of->bfds);
        free(of->dirty);
        free(of);
        return NULL;
    }
    of->ndisks = st->ndisks;
    for (int d = 0; d < st->ndisks; d++)
        of->fds[d] = of->bfds[d] = -1;
    of->sizefd = -1;
    of->block_size = st->block_size;
    of->disks.unit = st->block_size;
    of->disks.count = (uint32_t)st->ndisks;
    pthread_mutex_init(&of->mu, NULL);
    cond_init_mono(&of->blk_cv);
    lk_init(&of->locks);
    return of;
}

/* A second descriptor of the same file without O_DIRECT, for I/O of a few
 * sectors: small independent calls (HDF5 and PnetCDF metadata) then hit
 * the page cache instead of the disk each time. Linux keeps the two
 * coherent: a direct read writes back dirty cached pages of its range first,
 * a direct write invalidates them; fdatasync on either syncs the inode.
 * Through /proc so it is the same inode even if the path was renamed. */
static int buffered_twin(int fd)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    int b = open(p, O_RDWR | O_CLOEXEC);
    return b >= 0 ? b : -1;
}

static int open_datafiles(struct store *st, struct ofile *of, int create, char *msg, size_t msglen)
{
    if (create)
        for (int d = 0; d < st->ndisks; d++) {
            int rc = mkdir_parents(st->rootfd[d], of->path);
            if (rc) {
                snprintf(msg, msglen, "create %s on %s: %s", of->path, st->roots[d],
                         ddio_errno_name(-rc));
                return rc;
            }
        }
    for (int d = 0; d < st->ndisks; d++) {
        int flags = O_RDWR | (create ? O_CREAT : 0) | (st->direct[d] ? O_DIRECT : 0);
        int fd = open_beneath(st->rootfd[d], of->path, flags, 0644);
        if (fd == -EINVAL && st->direct[d])   /* e.g. a bind mount of another fs */
            fd = open_beneath(st->rootfd[d], of->path, flags & ~O_DIRECT, 0644);
        if (fd < 0) {
            snprintf(msg, msglen, "open %s on %s: %s", of->path, st->roots[d],
                     ddio_errno_name(-fd));
            return fd;
        }
        of->fds[d] = fd;
        of->bfds[d] = st->direct[d] ? buffered_twin(fd) : -1;
    }
    return 0;
}

static int init_size(struct ofile *of)
{
    uint64_t size = 0;
    for (int d = 0; d < of->ndisks; d++) {
        struct stat sb;
        if (fstat(of->fds[d], &sb))
            return -errno;
        uint64_t e = ddio_layout_logical_end(&of->disks, (uint32_t)d, (uint64_t)sb.st_size);
        if (e > size)
            size = e;
    }
    of->size = size;
    return 0;
}

/* of->mu held: same-host clients see the new size (local.c). A growth is
 * a compare-and-swap maximum, since a same-host writer may be raising the
 * page at the same moment; a set size (truncate) is stored as it is. */
static void size_publish(struct ofile *of, int set)
{
    if (!of->sizemap)
        return;
    if (set)
        __atomic_store_n(of->sizemap, of->size, __ATOMIC_RELEASE);
    else
        ddio_size_raise(of->sizemap, of->size);
}

/* of->mu held: what same-host writers wrote (they raise the page first) */
static void size_fold(struct ofile *of)
{
    if (of->sizemap && __atomic_load_n(&of->local_writers, __ATOMIC_ACQUIRE)) {
        uint64_t v = __atomic_load_n(of->sizemap, __ATOMIC_ACQUIRE);
        if (v > of->size)
            of->size = v;
    }
}

static int datafile_exists(struct store *st, const char *path)
{
    for (int d = 0; d < st->ndisks; d++) {
        int fd = open_beneath(st->rootfd[d], path, O_PATH, 0);
        if (fd >= 0) {
            close(fd);
            return 1;
        }
    }
    return 0;
}

static int check_proposed(struct store *st, struct ddio_layout_rec *l, char *msg, size_t msglen)
{
    if (l->stripe_unit == 0 || l->stripe_count == 0 || l->stripe_count > DDIO_MAX_SERVERS
        || l->server_index >= l->stripe_count) {
        snprintf(msg, msglen, "invalid layout (unit %" PRIu64 ", index %u of %u)",
                 l->stripe_unit, l->server_index, l->stripe_count);
        return -EINVAL;
    }
    l->ndisks = (uint32_t)st->ndisks;
    l->block_size = st->block_size;
    return store_layout_check(st, l, msg, msglen);
}

static int create_file(struct store *st, struct ofile *of, const struct ddio_layout_rec *proposed,
                       const struct store_creator *cr, char *msg, size_t msglen)
{
    of->layout = *proposed;
    if (cr)
        of->creator = *cr;
    int rc = check_proposed(st, &of->layout, msg, msglen);
    if (rc)
        return rc;
    /* The record first, with the creator's ids: a server killed before the
     * datafiles exist leaves a file its create's resend finds its own
     * (create_again) and completes below. Datafiles first would leave ones
     * without a record, which a create must refuse (EEXIST). */
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    rc = store_meta_encode(&of->layout, &of->creator, &w);
    if (rc == 0)
        rc = write_atomic(st, st->metafd, of->path, w.p, w.len, 0);
    ddio_wbuf_free(&w);
    if (rc) {
        snprintf(msg, msglen, "store layout of %s: %s", of->path, ddio_errno_name(-rc));
        return rc;
    }
    fault_hit(FAULT_CREATE_HALF);
    rc = open_datafiles(st, of, 1, msg, msglen);
    if (rc) {
        unlink_beneath(st->metafd, of->path, 0);
        return rc;
    }
    /* durable by the file's first MPI_File_sync, like its data (or a
     * moment later in the background): a create costs no fsync (one per
     * stripe server, in turn, on the create path) */
    store_meta_created(st, of);
    return 0;
}

int load_meta(struct store *st, const char *path, struct ddio_layout_rec *l,
              struct store_creator *cr, char *msg, size_t msglen)
{
    size_t cap = 64 + sizeof(*l) + 4 * DDIO_MAX_SERVERS;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    ssize_t n = read_small(st->metafd, path, buf, cap);
    /* empty: a create whose record never reached the disk (renamed, not yet
     * synced, then the host crashed): the file was never made durable */
    int rc = n < 0 ? (int)n : n == 0 ? -ENOENT : store_meta_decode(buf, (size_t)n, l, cr);
    free(buf);
    if (rc && rc != -ENOENT)
        snprintf(msg, msglen, "layout record of %s: %s", path,
                 rc == -EPROTO ? "corrupt" : ddio_errno_name(-rc));
    return rc;
}

/* a create (CREAT|EXCL) that finds the file: its own resend if the file
 * was made with its ids (the first run's answer was lost), opened as a
 * create; else EEXIST */
static int create_again(const struct ofile *of, uint32_t amode, const struct store_creator *cr,
                        int *created, char *msg, size_t msglen)
{
    if (!(amode & DDIO_O_CREAT) || !(amode & DDIO_O_EXCL))
        return 0;
    if (cr && cr->client && of->creator.client == cr->client && of->creator.call == cr->call) {
        *created = 1;
        return 0;
    }
    snprintf(msg, msglen, "create %s: EEXIST", of->path);
    return -EEXIST;
}

/* open a file not yet in the table */
static int open_new(struct store *st, const char *path, uint32_t amode,
                    const struct ddio_layout_rec *proposed, const struct store_creator *cr,
                    struct ofile *of, int *created, char *msg, size_t msglen)
{
    int rc = load_meta(st, path, &of->layout, &of->creator, msg, msglen);
    if (rc == 0) {
        if ((rc = create_again(of, amode, cr, created, msg, msglen)) != 0)
            return rc;
        rc = store_layout_check(st, &of->layout, msg, msglen);
        if (rc == 0)
            rc = open_datafiles(st, of, (amode & DDIO_O_CREAT) != 0, msg, msglen);
        /* a create's resend (its first answer lost, maybe with the server
         * that made it) makes it durable as the create would have; a file
         * opened again takes its create's job if still queued */
        if (rc == 0 && *created)
            store_meta_created(st, of);
        else if (rc == 0)
            store_meta_attach(st, of);
        return rc;
    }
    if (rc != -ENOENT)
        return rc;
    if (!(amode & DDIO_O_CREAT)) {
        snprintf(msg, msglen, "open %s: ENOENT", path);
        return -ENOENT;
    }
    if ((amode & DDIO_O_EXCL) && datafile_exists(st, path)) {
        snprintf(msg, msglen, "create %s: EEXIST (datafile without layout)", path);
        return -EEXIST;
    }
    *created = 1;
    return create_file(st, of, proposed, cr, msg, msglen);
}

/* store_norm_path, with the refusal explained in msg */
int norm_or_refuse(const char *path, char *norm, size_t n, char *msg, size_t msglen)
{
    int rc = store_norm_path(path, norm, n);
    if (rc)
        snprintf(msg, msglen, "path '%s' refused: %s", path, ddio_errno_name(-rc));
    return rc;
}

/* Opens run their file-system work (layout record, datafiles, the
 * create) outside st->mu, so one slow open (a thread preempted on a busy
 * host: 5 ms seen with 8 ranks on 2 cores) no longer holds every other
 * open and close of the server. The file is in the table meanwhile as
 * `opening`: an open of the same path waits for it, and namespace changes
 * wait for every such open (store_ns_lock); while one waits, new opens do
 * their work under the lock as before, so it is not starved. */
void store_ns_lock(struct store *st)
{
    pthread_mutex_lock(&st->mu);
    st->ns_waiting++;
    while (st->opening > 0)
        pthread_cond_wait(&st->open_cv, &st->mu);
    st->ns_waiting--;
}

static void unlink_of(struct store *st, struct ofile *of)
{
    for (struct ofile **pp = &st->files; *pp; pp = &(*pp)->next)
        if (*pp == of) {
            *pp = of->next;
            return;
        }
}

/* st->mu held; an open of the same path at the file system waited for */
static struct ofile *find_settled(struct store *st, const char *norm)
{
    struct ofile *of;
    while ((of = find_open(st, norm)) && of->opening)
        pthread_cond_wait(&st->open_cv, &st->mu);
    return of;
}

int store_open(struct store *st, const char *path, uint32_t amode,
               const struct ddio_layout_rec *proposed, const struct store_creator *cr,
               struct ofile **out, int *created, char *msg, size_t msglen)
{
    char norm[DDIO_MAX_STR + 1];
    int rc = norm_or_refuse(path, norm, sizeof(norm), msg, msglen);
    *created = 0;
    if (rc)
        return rc;
    pthread_mutex_lock(&st->mu);
    struct ofile *of = find_settled(st, norm);
    if (of) {
        rc = create_again(of, amode, cr, created, msg, msglen);
        if (rc == 0) {
            of->refs++;
            *out = of;
        }
        pthread_mutex_unlock(&st->mu);
        return rc;
    }
    of = ofile_new(st, norm);
    if (!of) {
        pthread_mutex_unlock(&st->mu);
        snprintf(msg, msglen, "open %s: ENOMEM", norm);
        return -ENOMEM;
    }
    of->refs = 1;
    of->next = st->files;
    st->files = of;
    int outside = st->ns_waiting == 0;
    if (outside) {
        of->opening = 1;
        st->opening++;
        pthread_mutex_unlock(&st->mu);
    }
    rc = open_new(st, norm, amode, proposed, cr, of, created, msg, msglen);
    if (rc == 0 && (rc = init_size(of)) != 0)
        snprintf(msg, msglen, "stat %s: %s", norm, ddio_errno_name(-rc));
    if (outside) {
        pthread_mutex_lock(&st->mu);
        of->opening = 0;
        st->opening--;
        pthread_cond_broadcast(&st->open_cv);
    }
    if (rc) {
        unlink_of(st, of);
        *created = 0;
    } else
        *out = of;
    pthread_mutex_unlock(&st->mu);
    if (rc)
        ofile_free(of);
    return rc;
}

void store_retain(struct store *st, struct ofile *of)
{
    pthread_mutex_lock(&st->mu);
    of->refs++;
    pthread_mutex_unlock(&st->mu);
}

void store_release(struct store *st, struct ofile *of)
{
    pthread_mutex_lock(&st->mu);
    if (--of->refs > 0) {
        pthread_mutex_unlock(&st->mu);
        return;
    }
    unlink_of(st, of);
    pthread_mutex_unlock(&st->mu);
    ofile_free(of);
}

int store_delete(struct store *st, const char *path, char *msg, size_t msglen)
{
    char norm[DDIO_MAX_STR + 1];
    int rc = norm_or_refuse(path, norm, sizeof(norm), msg, msglen);
    if (rc)
        return rc;
    store_ns_lock(st);
    int found = 0;
    rc = unlink_beneath(st->metafd, norm, 0);
    if (rc == 0)
        found = 1;
    else if (rc == -ENOENT)
        rc = 0;
    for (int d = 0; d < st->ndisks && rc == 0; d++) {
        rc = unlink_beneath(st->rootfd[d], norm, 0);
        if (rc == 0)
            found = 1;
        else if (rc == -ENOENT)
            rc = 0;
    }
    struct ofile *of = find_open(st, norm);
    if (of && (found || rc == 0))
        of->deleted = 1;             /* stays usable by its handles, like unlink */
    pthread_mutex_unlock(&st->mu);
    if (rc == 0 && !found)
        rc = -ENOENT;
    if (rc)
        snprintf(msg, msglen, "delete %s: %s", norm, ddio_errno_name(-rc));
    return rc;
}

/* ---- sizes ------------------------------------------------------------------------- */

uint64_t store_size(struct ofile *of)
{
    pthread_mutex_lock(&of->mu);
    size_fold(of);
    uint64_t s = of->size;
    pthread_mutex_unlock(&of->mu);
    return s;
}

int store_disk_of(const struct ofile *of, uint64_t off, uint64_t *disk_off)
{
    *disk_off = ddio_layout_local(&of->disks, off);
    return (int)ddio_layout_server(&of->disks, off);
}

static int truncate_all(struct ofile *of, uint64_t size)
{
    for (int d = 0; d < of->ndisks; d++) {
        uint64_t ds = ddio_layout_local_size(&of->disks, (uint32_t)d, size);
        if (ftruncate(of->fds[d], (off_t)ds))
            return -errno;
    }
    return 0;
}

int store_setsize(struct ofile *of, uint64_t local_size)
{
    if (local_size > (uint64_t)INT64_MAX)
        return -EFBIG;
    pthread_mutex_lock(&of->mu);
    int rc = truncate_all(of, local_size);
    if (rc == 0) {
        of->size = local_size;
        size_publish(of, 1);
    }
    pthread_mutex_unlock(&of->mu);
    return rc;
}

static int falloc(int fd, uint64_t off, uint64_t len)
{
    if (fallocate(fd, 0, (off_t)off, (off_t)len) == 0)
        return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS)
        return -errno;
    int rc = posix_fallocate(fd, (off_t)off, (off_t)len);
    return -rc;
}

int store_prealloc(struct ofile *of, uint64_t off, uint64_t len)
{
    if (len == 0)
        return 0;
    if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
        return -EFBIG;
    for (int d = 0; d < of->ndisks; d++) {
        uint64_t lo, hi;
        if (!ddio_layout_local_range(&of->disks, (uint32_t)d, off, len, &lo, &hi))
            continue;
        int rc = falloc(of->fds[d], lo, hi - lo);
        if (rc)
            return rc;
    }
    /* fallocate grew some datafiles; make every disk agree on the size */
    pthread_mutex_lock(&of->mu);
    int rc = 0;
    size_fold(of);
    if (off + len > of->size) {
        rc = truncate_all(of, off + len);
        if (rc == 0) {
            of->size = off + len;
            size_publish(of, 0);
        }
    }
    pthread_mutex_unlock(&of->mu);
    return rc;
}

/* a new open file description of fd's file (buffered, whatever fd is) */
static int reopen(int fd, int write)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    int r = open(p, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    return r >= 0 ? r : -errno;
}

/* of->mu held: the size page, made on first use */
static int size_page(struct ofile *of)
{
    if (of->sizefd >= 0)
        return 0;
    int fd = memfd_create("ddio-size", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    void *m = MAP_FAILED;
    if (ftruncate(fd, (off_t)sizeof(*of->sizemap)) == 0)
        m = mmap(NULL, sizeof(*of->sizemap), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        int rc = -errno;
        close(fd);
        return rc;
    }
    of->sizefd = fd;
    of->sizemap = m;
    size_publish(of, 1);
    return 0;
}

/* of->mu held: no block of the file is locked for writing, waited for up to
 * LOCAL_QUIESCE_MS. A write already past its choice between byte-exact and
 * read-modify-write holds its block's lock until it is on the page cache or
 * disk, so writers given descriptors after this never race with one. */
#define LOCAL_QUIESCE_MS 200
static int blocks_quiet(struct ofile *of)
{
    int64_t dl = ddio_now_ms() + LOCAL_QUIESCE_MS;
    while (of->nblk > 0 && cond_wait_ms(&of->blk_cv, &of->mu, dl) != ETIMEDOUT)
        ;
    return of->nblk == 0;
}

int store_local_fds(struct ofile *of, int *write, int *sizefd, int *fds)
{
    int n = 0, rc;
    *sizefd = -1;
    pthread_mutex_lock(&of->mu);
    rc = size_page(of);
    /* the first writer: only once no write is halfway through a block */
    if (*write && !__atomic_load_n(&of->local_writers, __ATOMIC_ACQUIRE)) {
        if (blocks_quiet(of))
            __atomic_store_n(&of->local_writers, 1, __ATOMIC_RELEASE);
        else
            *write = 0;         /* a busy file: reads only, this time */
    }
    if (rc == 0 && (*sizefd = reopen(of->sizefd, *write)) < 0)
        rc = *sizefd;
    for (; rc == 0 && n < of->ndisks; n++)
        if ((fds[n] = reopen(of->fds[n], *write)) < 0)
            rc = fds[n];
    pthread_mutex_unlock(&of->mu);
    if (rc) {
        while (n-- > 0)
            if (fds[n] >= 0)
                close(fds[n]);
        if (*sizefd >= 0)
            close(*sizefd);
        *sizefd = -1;
    }
    return rc;
}

int store_sync(struct store *st, struct ofile *of)
{
    return store_meta_sync(st, of, of->fds, of->ndisks);
}

void store_note_cached_write(struct ofile *of, int d, uint64_t off, uint64_t len)
{
    uint64_t lo, hi, bytes;
    pthread_mutex_lock(&of->mu);
    int kick = ddio_wb_note(&of->dirty[d], off, len, &lo, &hi, &bytes);
    int fd = of->bfds[d] >= 0 ? of->bfds[d] : of->fds[d];
    pthread_mutex_unlock(&of->mu);
    /* a hint: if it fails, fdatasync at MPI_File_sync still writes them */
    if (kick)
        (void)sync_file_range(fd, (off_t)lo, (off_t)(hi - lo), SYNC_FILE_RANGE_WRITE);
}

void store_note_write(struct ofile *of, uint64_t end)
{
    pthread_mutex_lock(&of->mu);
    size_fold(of);
    if (end > of->size) {
        of->size = end;
        size_publish(of, 0);
    }
    pthread_mutex_unlock(&of->mu);
}

int store_trim(struct ofile *of)
{
    if (__atomic_load_n(&of->local_writers, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&of->mu);
    int rc = 0;
    for (int d = 0; d < of->ndisks && rc == 0; d++) {
        uint64_t ds = ddio_layout_local_size(&of->disks, (uint32_t)d, of->size);
        struct stat sb;
        if (fstat(of->fds[d], &sb))
            rc = -errno;
        else if ((uint64_t)sb.st_size > ds && ftruncate(of->fds[d], (off_t)ds))
            rc = -errno;
    }
    pthread_mutex_unlock(&of->mu);
    return rc;
}

/* ---- block locks --------------------------------------------------------------------- */

static int blk_held(const struct ofile *of, uint64_t k)
{
    for (unsigned i = 0; i < of->nblk; i++)
        if (of->blk[i] == k)
            return 1;
    return 0;
}

int store_blk_lock(struct ofile *of, uint64_t k, int wait, int64_t deadline_ms)
{
    pthread_mutex_lock(&of->mu);
    int rc = 0;
    while (blk_held(of, k)) {
        if (!wait || ddio_now_ms() >= deadline_ms) {
            rc = wait ? -ETIMEDOUT : -EAGAIN;
            break;
        }
        cond_wait_ms(&of->blk_cv, &of->mu, deadline_ms);
    }
    if (rc == 0 && of->nblk == of->capblk) {
        unsigned cap = of->capblk ? 2 * of->capblk : 16;
        uint64_t *n = realloc(of->blk, cap * sizeof(*n));
        if (n) {
            of->blk = n;
            of->capblk = cap;
        } else {
            rc = -ENOMEM;
        }
    }
    if (rc == 0)
        of->blk[of->nblk++] = k;
    pthread_mutex_unlock(&of->mu);
    return rc;
}

void store_blk_unlock(struct ofile *of, uint64_t k)
{
    pthread_mutex_lock(&of->mu);
    for (unsigned i = 0; i < of->nblk; i++) {
        if (of->blk[i] == k) {
            of->blk[i] = of->blk[--of->nblk];
            break;
        }
    }
    pthread_cond_broadcast(&of->blk_cv);
    pthread_mutex_unlock(&of->mu);
}
