/* Ownership and permissions (access.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "access.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ddio_log.h"
#include "server.h"
#include "stats.h"
#include "store_roots.h"

int access_on(const struct conn *c)
{
    return c->who.known;
}

/* uid 0 (not squashed) and the admin are not checked */
static int privileged(const struct conn *c)
{
    return c->who.uid == 0 || (c->srv->cfg.admin_uid >= 0
                               && c->who.uid == (uint32_t)c->srv->cfg.admin_uid);
}

int access_admin(const struct conn *c)
{
    return !access_on(c) || privileged(c);
}

static int in_group(const struct ident *w, uint32_t gid)
{
    if (w->gid == gid)
        return 1;
    for (int i = 0; i < w->ngroups; i++)
        if (w->groups[i] == gid)
            return 1;
    return 0;
}

/* the permission bits (rwx) that apply to w on an entry */
static int bits_for(const struct ident *w, const struct stat *sb)
{
    if (sb->st_uid == w->uid)
        return (int)(sb->st_mode >> 6) & 7;
    if (in_group(w, sb->st_gid))
        return (int)(sb->st_mode >> 3) & 7;
    return (int)sb->st_mode & 7;
}

/* stat of norm's entry under the first root, not following a last symlink */
static int entry_stat(const struct conn *c, const char *norm, struct stat *sb)
{
    const struct store *st = &c->srv->store;
    if (!*norm)
        return fstat(st->rootfd[0], sb) ? -errno : 0;
    int fd = open_beneath(st->rootfd[0], norm, O_PATH | O_NOFOLLOW, 0);
    if (fd < 0)
        return fd;
    int rc = fstat(fd, sb) ? -errno : 0;
    close(fd);
    return rc;
}

static int deny(const struct conn *c, const char *norm, const char *what,
                const struct stat *sb, char *msg, size_t n)
{
    snprintf(msg, n, "permission denied: /%s: uid %u may not %s (owner %u, group %u, mode %04o)",
             norm, c->who.uid, what, (unsigned)sb->st_uid, (unsigned)sb->st_gid,
             (unsigned)(sb->st_mode & 07777));
    stats_bump(&c->srv->stats, &c->srv->stats.access_denied);
    static atomic_ulong logged;
    unsigned long k = atomic_fetch_add(&logged, 1) + 1;
    if (k <= 20 || k % 100 == 0)
        DDIO_WARN("connection %" PRIu64 " from %s: %s (refusal %lu)", c->id, c->peer, msg, k);
    return -EACCES;
}

/* What one walk down a path found: the parent directory's stat, and the
 * entry's when it exists. */
struct walked {
    struct stat parent, ent;
    int found;                  /* the entry exists */
    int complete;               /* every directory above it exists and is one */
};

/* Walk norm from the root with one stat per component (fstatat, openat
 * without following symlinks: a symlink or a missing directory ends the
 * walk, and the store's own refusal follows), checking search permission
 * on each directory passed. 0 (w filled), or -EACCES with the reason. */
static int walk(const struct conn *c, const char *norm, struct walked *w, char *msg, size_t n)
{
    char comp[NAME_MAX + 1];
    int fd = c->srv->store.rootfd[0], rc = 0;
    size_t at = 0, len = strlen(norm);
    memset(w, 0, sizeof(*w));
    if (fstat(fd, &w->parent))
        return 0;
    if (!len) {
        w->ent = w->parent;
        w->found = w->complete = 1;
        return 0;
    }
    while (rc == 0) {
        size_t e = at;
        while (e < len && norm[e] != '/')
            e++;
        if (e - at > NAME_MAX)
            break;
        if (!(bits_for(&c->who, &w->parent) & ACC_SEARCH)) {
            char dir[DDIO_MAX_STR + 1];
            snprintf(dir, sizeof(dir), "%.*s", at ? (int)(at - 1) : 0, norm);
            rc = deny(c, dir, "search this directory", &w->parent, msg, n);
            break;
        }
        snprintf(comp, sizeof(comp), "%.*s", (int)(e - at), norm + at);
        struct stat sb;
        if (fstatat(fd, comp, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            w->complete = e == len;          /* only the entry itself is missing */
            break;
        }
        if (e == len) {
            w->ent = sb;
            w->found = w->complete = 1;
            break;
        }
        int next = S_ISDIR(sb.st_mode) ? openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW
                                                              | O_CLOEXEC) : -1;
        if (next < 0)
            break;
        if (fd != c->srv->store.rootfd[0])
            close(fd);
        fd = next;
        w->parent = sb;
        at = e + 1;
    }
    if (fd != c->srv->store.rootfd[0])
        close(fd);
    return rc;
}

static const char *want_name(int want)
{
    return want == ACC_READ ? "read" : want == ACC_WRITE ? "write"
           : want == (ACC_READ | ACC_WRITE) ? "read and write" : "list or search";
}

int access_path(const struct conn *c, const char *norm, int want, char *msg, size_t n)
{
    struct walked w;
    if (!access_on(c) || privileged(c))
        return 0;
    int rc = walk(c, norm, &w, msg, n);
    if (rc || !want || !w.found)
        return rc;
    if ((bits_for(&c->who, &w.ent) & want) != want)
        return deny(c, norm, want_name(want), &w.ent, msg, n);
    return 0;
}

/* norm's parent directory ("" for a top-level entry) */
static void parent_of(const char *norm, char *out, size_t n)
{
    const char *slash = strrchr(norm, '/');
    size_t len = slash ? (size_t)(slash - norm) : 0;
    snprintf(out, n, "%.*s", (int)len, norm);
}

/* write and search on the walked parent */
static int may_change_parent(const struct conn *c, const char *norm, const struct walked *w,
                             char *msg, size_t n)
{
    char parent[DDIO_MAX_STR + 1];
    if (!w->complete || (bits_for(&c->who, &w->parent) & (ACC_WRITE | ACC_SEARCH))
                            == (ACC_WRITE | ACC_SEARCH))
        return 0;
    parent_of(norm, parent, sizeof(parent));
    return deny(c, parent, "add or remove entries here", &w->parent, msg, n);
}

int access_create(const struct conn *c, const char *norm, char *msg, size_t n)
{
    struct walked w;
    if (!access_on(c) || privileged(c))
        return 0;
    int rc = walk(c, norm, &w, msg, n);
    return rc ? rc : may_change_parent(c, norm, &w, msg, n);
}

int access_remove(const struct conn *c, const char *norm, char *msg, size_t n)
{
    struct walked w;
    if (!access_on(c) || privileged(c))
        return 0;
    int rc = walk(c, norm, &w, msg, n);
    if (!rc)
        rc = may_change_parent(c, norm, &w, msg, n);
    if (rc || !w.found || !(w.parent.st_mode & S_ISVTX))
        return rc;
    if (w.ent.st_uid != c->who.uid && w.parent.st_uid != c->who.uid)
        return deny(c, norm, "remove another user's entry from a sticky directory", &w.ent,
                    msg, n);
    return 0;
}

int access_open(const struct conn *c, const char *norm, uint32_t amode, char *msg, size_t n)
{
    struct walked w;
    if (!access_on(c) || privileged(c))
        return 0;
    int want = ((amode & (DDIO_O_WRONLY | DDIO_O_RDWR)) ? ACC_WRITE : 0)
               | ((amode & (DDIO_O_RDONLY | DDIO_O_RDWR)) ? ACC_READ : 0);
    int rc = walk(c, norm, &w, msg, n);
    if (rc)
        return rc;
    if (w.found && (bits_for(&c->who, &w.ent) & want) != want)
        return deny(c, norm, want_name(want), &w.ent, msg, n);
    if (!w.found && (amode & DDIO_O_CREAT))
        return may_change_parent(c, norm, &w, msg, n);
    return 0;
}

/* chown and/or chmod norm's entry on every root */
static int apply(const struct conn *c, const char *norm, int own, uint32_t uid, uint32_t gid,
                 int chmodit, uint32_t mode, char *msg, size_t n)
{
    const struct store *st = &c->srv->store;
    for (int d = 0; d < st->ndisks; d++) {
        char proc[64];
        int fd = *norm ? open_beneath(st->rootfd[d], norm, O_PATH | O_NOFOLLOW, 0)
                       : dup(st->rootfd[d]);
        int rc = fd < 0 ? (*norm ? fd : -errno) : 0;
        if (rc == 0 && own && fchownat(fd, "", (uid_t)uid, (gid_t)gid, AT_EMPTY_PATH))
            rc = -errno;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (rc == 0 && chmodit && chmod(proc, (mode_t)mode))
            rc = -errno;
        if (fd >= 0)
            close(fd);
        if (rc == -ENOENT && d > 0)
            continue;                      /* a directory's entry on one root only */
        if (rc) {
            snprintf(msg, n, "/%s: cannot set owner or mode on root %d: %s", norm, d,
                     strerror(-rc));
            return rc;
        }
    }
    return 0;
}

int access_own(const struct conn *c, const char *norm, uint32_t mode, char *msg, size_t n)
{
    return apply(c, norm, access_on(c), c->who.uid, c->who.gid, 1, mode & 07777, msg, n);
}

/* one walk: search permission on the way, the entry's owner at the end */
static int may_setattr(const struct conn *c, const char *norm, const struct ddio_setattr *m,
                       char *msg, size_t n)
{
    struct walked w;
    if (!access_on(c) || privileged(c))
        return 0;
    int rc = walk(c, norm, &w, msg, n);
    if (rc || !w.found)
        return rc;
    if (w.ent.st_uid != c->who.uid)
        return deny(c, norm, "change the mode or owner of another user's entry", &w.ent, msg,
                    n);
    if ((m->what & DDIO_SA_OWNER) && (m->uid != c->who.uid || !in_group(&c->who, m->gid)))
        return deny(c, norm, "give it away, or to a group it is not in", &w.ent, msg, n);
    return 0;
}

int access_setattr(const struct conn *c, const char *norm, const struct ddio_setattr *m,
                   char *msg, size_t n)
{
    struct stat sb;
    int rc = entry_stat(c, norm, &sb);
    if (rc) {
        snprintf(msg, n, "/%s: %s", norm, strerror(-rc));
        return rc;
    }
    if ((rc = may_setattr(c, norm, m, msg, n)) != 0)
        return rc;
    return apply(c, norm, (m->what & DDIO_SA_OWNER) != 0, m->uid, m->gid,
                 (m->what & DDIO_SA_MODE) != 0, m->mode, msg, n);
}
