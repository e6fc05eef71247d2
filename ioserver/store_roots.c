/* The store's roots: each root ("disk") opened, its O_DIRECT support
 * probed, the server id loaded or made; client paths normalized and
 * confined beneath a root (no escape, no symlink out); small files read
 * and written atomically. The bottom of the store: it calls nothing of
 * the other store files. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE      /* O_DIRECT, O_PATH */
#endif
#include "store_roots.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <limits.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"

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
        if (len > NAME_MAX)
            return -ENAMETOOLONG;         /* no file system takes it */
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

int pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = pwrite(fd, b, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        b += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

/* rel under dirfd, written to a temporary file and renamed into place (a
 * reader sees the old record or the new one, never half of one); durable:
 * fsynced before the rename, else whoever needs it durable syncs it later
 * (sync_meta) */
int write_atomic(struct store *st, int dirfd, const char *rel, const void *p, size_t n,
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

ssize_t read_small(int dirfd, const char *rel, void *buf, size_t cap)
{
    int fd = open_beneath(dirfd, rel, O_RDONLY | O_NOFOLLOW, 0);
    if (fd < 0)
        return fd;
    ssize_t n = read(fd, buf, cap);
    int e = errno;
    close(fd);
    return n < 0 ? -e : n;
}

/* ---- server id, O_DIRECT and xattr detection --------------------------------- */

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

/* 1: the root keeps a user xattr on a file made O_TMPFILE and linked in
 * afterwards (how a create stores a file's layout, store_layout.c) */
static int probe_layout_xattr(int ddiofd)
{
    char name[64];
    snprintf(name, sizeof(name), "xattr-probe.%d", (int)getpid());
    int fd = openat(ddiofd, ".", O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
    if (fd < 0)
        return 0;
    char proc[64], back[4];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    int ok = fsetxattr(fd, STORE_LAYOUT_XATTR, "ddio", 4, XATTR_CREATE) == 0
             && linkat(AT_FDCWD, proc, ddiofd, name, AT_SYMLINK_FOLLOW) == 0;
    close(fd);
    ok = ok && (fd = openat(ddiofd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0;
    if (ok) {
        ok = fgetxattr(fd, STORE_LAYOUT_XATTR, back, sizeof(back)) == 4
             && !memcmp(back, "ddio", 4);
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

static int init_root(struct store *st, const struct srv_config *cfg, int d, char *err,
                     size_t errlen)
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
        /* where users share the servers (--auth munge) layouts stay in
         * records: a user's write descriptor of a datafile (the same-host
         * shortcut) could set a user xattr, not touch .ddio */
        st->layout_xattr = !cfg->munge && probe_layout_xattr(ddiofd);
        DDIO_INFO("layouts in %s", st->layout_xattr ? "datafiles' xattrs" : "records");
        st->metafd = open_dir_at(ddiofd, "meta", 1);
        st->tmpfd = open_dir_at(ddiofd, "tmp", 1);
        st->setsfd = open_dir_at(ddiofd, "sets", 1);
        if (st->metafd < 0 || st->tmpfd < 0 || st->setsfd < 0) {
            const char *dir = st->metafd < 0 ? "meta" : st->tmpfd < 0 ? "tmp" : "sets";
            rc = st->metafd < 0 ? st->metafd : st->tmpfd < 0 ? st->tmpfd : st->setsfd;
            snprintf(err, errlen, "%s/%s/%s: %s", st->roots[0], META_DIR, dir, strerror(-rc));
        } else {
            rc = load_server_id(st, ddiofd, err, errlen);
        }
    }
    close(ddiofd);
    return rc;
}

int store_roots_init(struct store *st, const struct srv_config *cfg, char *err, size_t errlen)
{
    st->ndisks = cfg->nroots;
    st->block_size = cfg->block_size;
    st->copies = cfg->copies ? cfg->copies : 1;
    st->roots = calloc((size_t)st->ndisks, sizeof(*st->roots));
    st->rootfd = calloc((size_t)st->ndisks, sizeof(int));
    st->direct = calloc((size_t)st->ndisks, sizeof(int));
    st->metafd = st->tmpfd = st->setsfd = -1;
    if (!st->roots || !st->rootfd || !st->direct) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (int d = 0; d < st->ndisks; d++) {
        st->roots[d] = cfg->roots[d];
        st->rootfd[d] = -1;
    }
    for (int d = 0; d < st->ndisks; d++) {
        int rc = init_root(st, cfg, d, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

void store_roots_fini(struct store *st)
{
    for (int d = 0; d < st->ndisks; d++)
        if (st->rootfd && st->rootfd[d] >= 0)
            close(st->rootfd[d]);
    if (st->metafd >= 0)
        close(st->metafd);
    if (st->tmpfd >= 0)
        close(st->tmpfd);
    if (st->setsfd >= 0)
        close(st->setsfd);
    free(st->roots);
    free(st->rootfd);
    free(st->direct);
}

void store_state_path(const struct store *st, const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s/%s/%s", st->roots[0], META_DIR, name);
}

/* store_norm_path, with the refusal explained in msg */
/* the reason first: a long path would push it off the end of msg */
int norm_or_refuse(const char *path, char *norm, size_t n, char *msg, size_t msglen)
{
    int rc = store_norm_path(path, norm, n);
    if (rc == -ENAMETOOLONG)
        snprintf(msg, msglen, "name too long (%zu bytes; a name at most %d, a path at most %zu): "
                 "'%.64s...'", strlen(path), NAME_MAX, n - 1, path);
    else if (rc)
        snprintf(msg, msglen, "path '%s' refused: %s", path, ddio_errno_name(-rc));
    return rc;
}

int store_norm_ns(const char *path, char *out, size_t outlen, char *msg, size_t msglen)
{
    const char *p = path;
    while (*p == '/')
        p++;
    if (!*p) {
        out[0] = '\0';
        return 0;
    }
    return norm_or_refuse(path, out, outlen, msg, msglen);
}

char *renamed_path(const char *path, const char *from, const char *to)
{
    size_t fl = strlen(from);
    if (strncmp(path, from, fl) || (path[fl] != '\0' && path[fl] != '/'))
        return NULL;
    char *np = malloc(strlen(to) + strlen(path + fl) + 1);
    if (np)
        sprintf(np, "%s%s", to, path + fl);
    return np;
}
