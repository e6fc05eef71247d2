/* The store's namespace: paths as directories across every root, stat of
 * files and directories, listing, mkdir/rmdir/rename. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE      /* O_PATH */
#endif
#include "store_int.h"
#include "overlay.h"
#include "store_layout.h"
#include "store_list.h"
#include "store_meta.h"
#include "store_roots.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"

/* ---- namespace: stat, readdir, mkdir, rmdir, rename (the ddio mount) -------------- */

/* load_layout's answer for a path without a layout: nothing there, a file
 * as a path component, or a directory (layout records mirror them) */
static int not_a_file(int rc)
{
    return rc == -ENOENT || rc == -ENOTDIR || rc == -EISDIR;
}

/* open a directory (the root for "") under dirfd */
static int open_dir_beneath(int dirfd, const char *rel)
{
    if (!*rel) {
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
    }
    return open_beneath(dirfd, rel, O_RDONLY | O_DIRECTORY, 0);
}

static uint64_t stat_mtime_ns(const struct stat *sb)
{
    return (uint64_t)sb->st_mtim.tv_sec * 1000000000u + (uint64_t)sb->st_mtim.tv_nsec;
}

/* local size and newest mtime of a file's datafiles (not open here); the
 * first root's stat in *first (its owner and mode are the file's) */
static int datafile_stat(struct store *st, const char *path, uint64_t *size, uint64_t *mtime,
                         struct stat *first)
{
    struct ddio_stripe disks = {st->block_size, (uint32_t)st->ndisks};
    *size = *mtime = 0;
    for (int d = 0; d < st->ndisks; d++) {
        struct stat sb;
        int fd = open_beneath(st->rootfd[d], path, O_PATH, 0);
        if (fd < 0)
            return fd;
        int rc = fstat(fd, &sb) ? -errno : 0;
        close(fd);
        if (rc)
            return rc;
        if (d == 0)
            *first = sb;
        uint64_t e = ddio_layout_logical_end(&disks, (uint32_t)d, (uint64_t)sb.st_size);
        if (e > *size)
            *size = e;
        if (stat_mtime_ns(&sb) > *mtime)
            *mtime = stat_mtime_ns(&sb);
    }
    return 0;
}

static int stat_file(struct store *st, const char *norm, struct ddio_pstat_r *r,
                     char *msg, size_t msglen)
{
    uint64_t dsize;
    struct stat sb = {0};
    int rc = datafile_stat(st, norm, &dsize, &r->mtime_ns, &sb);
    if (rc) {
        snprintf(msg, msglen, "stat %s: %s", norm, ddio_errno_name(-rc));
        return rc;
    }
    /* an open file's size is exact (its datafiles may be padded by O_DIRECT) */
    struct ofile *of = find_open(st, norm);
    r->local_size = of ? store_size(of) : dsize;
    r->kind = DDIO_K_FILE;
    r->mode = sb.st_mode & 07777;
    r->uid = (uint32_t)sb.st_uid;
    r->gid = (uint32_t)sb.st_gid;
    return 0;
}

int store_pstat(struct store *st, const char *path, struct ddio_pstat_r *r,
                char *msg, size_t msglen)
{
    char norm[DDIO_MAX_STR + 1];
    memset(r, 0, sizeof(*r));
    int rc = store_norm_ns(path, norm, sizeof(norm), msg, msglen);
    if (rc)
        return rc;
    store_ns_lock(st);
    int in_record;
    if (*norm && (rc = load_layout(st, norm, &r->layout, NULL, &in_record, msg, msglen)) == 0)
        rc = stat_file(st, norm, r, msg, msglen);
    else if (!*norm || not_a_file(rc)) {
        struct stat sb;
        int fd = open_dir_beneath(st->rootfd[0], norm);
        rc = fd < 0 ? fd : (fstat(fd, &sb) ? -errno : 0);
        if (fd >= 0)
            close(fd);
        if (rc == -ENOTDIR)      /* a datafile without its layout */
            rc = -ENOENT;
        if (rc == 0) {
            r->kind = DDIO_K_DIR;
            r->mode = sb.st_mode & 07777;
            r->uid = (uint32_t)sb.st_uid;
            r->gid = (uint32_t)sb.st_gid;
            r->mtime_ns = stat_mtime_ns(&sb);
        } else
            snprintf(msg, msglen, "stat %s: %s", norm, ddio_errno_name(-rc));
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

/* kind of entry `name` of a directory (dirfd, on the first root; mfd its
 * layout records' mirror, -1 when it has none): a directory, a file (with
 * its layout, in the datafile or a record), or 0 (a leftover datafile, or
 * gone: not shown) */
static uint32_t entry_kind(int dirfd, int mfd, const char *name)
{
    struct stat sb;
    if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW))
        return 0;
    if (S_ISDIR(sb.st_mode))
        return DDIO_K_DIR;
    /* one component in a confined directory: no walk, nothing to escape by
     * (and a regular file: lgetxattr follows no link) */
    char at[64 + NAME_MAX];
    snprintf(at, sizeof(at), "/proc/self/fd/%d/%s", dirfd, name);
    if (S_ISREG(sb.st_mode) && lgetxattr(at, STORE_LAYOUT_XATTR, NULL, 0) > 0)
        return DDIO_K_FILE;
    return mfd >= 0 && !fstatat(mfd, name, &sb, AT_SYMLINK_NOFOLLOW) && S_ISREG(sb.st_mode)
               ? DDIO_K_FILE
               : 0;
}

/* one page of listing ls from index *i: the entries still there, at most
 * max, into r (r->ent allocated); *i left at the first one not looked at */
static int readdir_page(struct store *st, int dirfd, const char *norm,
                        const struct store_listing *ls, size_t *i, uint32_t max,
                        struct ddio_readdir_r *r)
{
    size_t left = ls->n - *i;
    if (left && !(r->ent = calloc(left < max ? left : max, sizeof(*r->ent))))
        return -ENOMEM;
    /* the layout records' mirror of the directory, opened once a page (none
     * until a file was created in it: then every other entry is a leftover) */
    int mfd = left ? open_dir_beneath(st->metafd, norm) : -1;
    int rc = 0;
    for (; *i < ls->n && r->n < max && !rc; ++*i) {
        /* looked at now, not when listed: an entry removed since is not shown */
        uint32_t kind = entry_kind(dirfd, mfd, ls->names[*i]);
        if (!kind)
            continue;
        if (!(r->ent[r->n].name = strdup(ls->names[*i])))
            rc = -ENOMEM;
        else
            r->ent[r->n++].kind = kind;
    }
    if (mfd >= 0)
        close(mfd);
    return rc;
}

int store_readdir(struct store *st, const char *path, const char *after, uint32_t max,
                  struct ddio_readdir_r *r, char *msg, size_t msglen)
{
    char norm[DDIO_MAX_STR + 1];
    struct store_listing *ls = NULL;
    size_t i = 0;
    memset(r, 0, sizeof(*r));
    int rc = store_norm_ns(path, norm, sizeof(norm), msg, msglen);
    if (rc)
        return rc;
    int dirfd = open_dir_beneath(st->rootfd[0], norm);
    /* the first page reads the directory afresh; the others resume in the
     * listing it made (store_list.h) */
    if (dirfd < 0)
        rc = dirfd;
    else if ((ls = store_list_get(&st->lists, dirfd, !*norm, !*after, &rc)))
        i = store_list_seek(ls, after);
    if (ls)
        rc = readdir_page(st, dirfd, norm, ls, &i, max, r);
    r->more = rc == 0 && ls && i < ls->n;
    if (ls)
        store_list_put(&st->lists, ls);
    if (dirfd >= 0)
        close(dirfd);
    if (rc) {
        ddio_readdir_r_free(r);
        snprintf(msg, msglen, "readdir %s: %s", *norm ? norm : "/", ddio_errno_name(-rc));
    }
    return rc;
}

int store_mkdir(struct store *st, const char *path, uint32_t mode, char *msg, size_t msglen)
{
    char norm[DDIO_MAX_STR + 1];
    int rc = norm_or_refuse(path, norm, sizeof(norm), msg, msglen), made = 0;
    if (rc)
        return rc;
    store_ns_lock(st);
    /* on every disk; EEXIST only when it was everywhere already */
    for (int d = 0; d < st->ndisks && rc == 0; d++) {
        const char *name;
        int pfd = open_parent(st->rootfd[d], norm, &name);
        if (pfd < 0) {
            rc = pfd;
            break;
        }
        if (mkdirat(pfd, name, (mode_t)(mode & 07777)) == 0)
            made = 1;
        else if (errno != EEXIST)
            rc = -errno;
        close(pfd);
    }
    pthread_mutex_unlock(&st->mu);
    if (rc == 0 && !made)
        rc = -EEXIST;
    if (rc)
        snprintf(msg, msglen, "mkdir %s: %s", norm, ddio_errno_name(-rc));
    return rc;
}

/* 0 if directory rel under dirfd has no entries, -ENOTEMPTY, or -errno
 * (read up to its first entry only) */
static int dir_empty(int dirfd, const char *rel)
{
    int fd = open_dir_beneath(dirfd, rel);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *de;
    if (!dir) {
        int rc = fd < 0 ? fd : -errno;
        if (fd >= 0)
            close(fd);
        return rc;
    }
    while ((errno = 0, de = readdir(dir)) &&
           (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")))
        ;
    int rc = de ? -ENOTEMPTY : -errno;
    closedir(dir);
    return rc;
}

/* the directory's copy trees, when empty (best effort: a leftover empty
 * directory under .ddio costs nothing and is reused) */
static void store_copies_rmdir(struct store *st, const char *norm)
{
    char cp[DDIO_MAX_STR + 32];
    for (uint32_t c = 1; c < STORE_VIEWS; c++)
        for (int d = 0; d < st->ndisks && !store_copy_path(cp, sizeof(cp), c, norm); d++)
            (void)unlink_beneath(st->rootfd[d], cp, AT_REMOVEDIR);
}

int store_rmdir(struct store *st, const char *path, char *msg, size_t msglen)
{
    char norm[DDIO_MAX_STR + 1];
    int rc = norm_or_refuse(path, norm, sizeof(norm), msg, msglen);
    if (rc)
        return rc;
    store_ns_lock(st);
    /* every disk first, so a refusal leaves all of them as they were */
    for (int d = 0; d < st->ndisks && rc == 0; d++)
        rc = dir_empty(st->rootfd[d], norm);
    for (int d = 0; d < st->ndisks && rc == 0; d++)
        rc = unlink_beneath(st->rootfd[d], norm, AT_REMOVEDIR);
    if (rc == 0) {
        int mrc = unlink_beneath(st->metafd, norm, AT_REMOVEDIR);   /* layout records' mirror, if any */
        if (mrc && mrc != -ENOENT)
            DDIO_WARN("rmdir %s: layout directory: %s", norm, ddio_errno_name(-mrc));
        store_copies_rmdir(st, norm);
    }
    pthread_mutex_unlock(&st->mu);
    if (rc)
        snprintf(msg, msglen, "rmdir %s: %s", norm, ddio_errno_name(-rc));
    return rc;
}

static int rename_at(int dirfd, const char *from, const char *to)
{
    const char *fname, *tname;
    int ffd = open_parent(dirfd, from, &fname);
    if (ffd < 0)
        return ffd;
    int tfd = open_parent(dirfd, to, &tname);
    int rc = tfd < 0 ? tfd : (renameat(ffd, fname, tfd, tname) ? -errno : 0);
    close(ffd);
    if (tfd >= 0)
        close(tfd);
    return rc;
}

static void store_copies_repath(struct ofile *of)
{
    char cp[DDIO_MAX_STR + 32];
    for (uint32_t c = 1; c < STORE_VIEWS; c++) {
        char *np;
        if (!of->copy[c] || store_copy_path(cp, sizeof(cp), c, of->path) || !(np = strdup(cp)))
            continue;           /* (only names in messages) */
        free(of->copy[c]->path);
        of->copy[c]->path = np;
        if (of->copy[c]->ovl)
            (void)ovl_repath(of->copy[c]->ovl, np);   /* (its log follows below) */
    }
}

static int rename_copy(int dirfd, const char *from, const char *to)
{
    const char *fname, *tname;
    int ffd = open_parent(dirfd, from, &fname);
    if (ffd < 0)
        return ffd == -ENOTDIR ? -ENOENT : ffd;
    int rc = mkdir_parents(dirfd, to);
    int tfd = rc ? rc : open_parent(dirfd, to, &tname);
    if (tfd >= 0) {
        rc = renameat(ffd, fname, tfd, tname) ? -errno : 0;
        close(tfd);
    } else {
        rc = tfd;
    }
    close(ffd);
    return rc;
}

/* a file's copies, or a directory's tree of them (there only once a
 * mirrored file was created under it) */
static int store_copies_rename(struct store *st, const char *from, const char *to)
{
    char cf[DDIO_MAX_STR + 32], ct[DDIO_MAX_STR + 32];
    for (uint32_t c = 1; c < STORE_VIEWS; c++) {
        if (store_copy_path(cf, sizeof(cf), c, from) || store_copy_path(ct, sizeof(ct), c, to))
            return -ENAMETOOLONG;
        for (int d = 0; d < st->ndisks; d++) {
            int rc = rename_copy(st->rootfd[d], cf, ct);
            if (rc && rc != -ENOENT)
                return rc;
        }
        char lf[DDIO_MAX_STR + 64], lt[DDIO_MAX_STR + 64];
        if (c == STORE_OVERLAY && ovl_log_path(lf, sizeof(lf), cf) == 0
            && ovl_log_path(lt, sizeof(lt), ct) == 0)
            (void)rename_copy(st->rootfd[0], lf, lt);   /* (none: never flushed) */
    }
    return 0;
}

/* the checksums' sidecars follow (best effort: a file without its sidecar
 * has its sums unknown, never wrong, as a sidecar names its datafile's
 * inode; sums.h) */
static void store_sums_rename(struct store *st, const char *from, const char *to)
{
    char sf[DDIO_MAX_STR + 64], stn[DDIO_MAX_STR + 64];
    char cf[DDIO_MAX_STR + 32], ct[DDIO_MAX_STR + 32];
    for (uint32_t c = 0; c < STORE_VIEWS; c++) {
        if (c && (store_copy_path(cf, sizeof(cf), c, from) || store_copy_path(ct, sizeof(ct), c, to)))
            continue;
        int a = snprintf(sf, sizeof sf, ".ddio/sums/%s", c ? cf : from);
        int b = snprintf(stn, sizeof stn, ".ddio/sums/%s", c ? ct : to);
        if (a < 0 || b < 0 || (size_t)a >= sizeof sf || (size_t)b >= sizeof stn)
            return;
        for (int d = 0; d < st->ndisks; d++)
            (void)rename_copy(st->rootfd[d], sf, stn);
    }
}

/* open files keep working after a rename; their table paths follow it */
static void rename_open(struct store *st, const char *from, const char *to)
{
    for (struct ofile *of = st->files; of; of = of->next) {
        char *np;
        if (of->deleted)
            continue;
        if (!strcmp(of->path, to))
            of->deleted = 1;             /* replaced, like an unlink */
        else if ((np = renamed_path(of->path, from, to))) {
            free(of->path);
            of->path = np;
            store_copies_repath(of);
        }
    }
}

/* datafiles (or directories) on every disk, then the layout record if
 * any (kind: RN_DIR, RN_RECORD a file with one, RN_XATTR a file without) */
enum { RN_DIR, RN_RECORD, RN_XATTR };

static int rename_all(struct store *st, const char *from, const char *to, int kind)
{
    int rc = 0;
    for (int d = 0; d < st->ndisks && rc == 0; d++)
        rc = rename_at(st->rootfd[d], from, to);
    if (rc == 0 && kind != RN_XATTR)
        rc = mkdir_parents(st->metafd, to);
    if (rc == 0 && kind != RN_XATTR) {
        /* a directory has a layout mirror only once a file was created in it */
        int mrc = rename_at(st->metafd, from, to);
        if (mrc && !(mrc == -ENOENT && kind == RN_DIR))
            rc = mrc;
    }
    /* a mirrored file's copies (or a directory's trees of them) follow;
     * after the datafiles, so a failure here leaves copies under the old
     * name, which a reopen reports (ENOENT) rather than misreads */
    if (rc == 0)
        rc = store_copies_rename(st, from, to);
    if (rc == 0)
        store_sums_rename(st, from, to);
    if (rc == 0) {
        rename_open(st, from, to);
        store_meta_rename(st, from, to);
    }
    return rc;
}

int store_rename(struct store *st, const char *from, const char *to, char *msg, size_t msglen)
{
    char nf[DDIO_MAX_STR + 1], nt[DDIO_MAX_STR + 1];
    struct ddio_layout_rec l;
    int rc = norm_or_refuse(from, nf, sizeof(nf), msg, msglen);
    if (rc || (rc = norm_or_refuse(to, nt, sizeof(nt), msg, msglen)))
        return rc;
    size_t fl = strlen(nf);
    if (!strncmp(nt, nf, fl) && nt[fl] == '/') {
        snprintf(msg, msglen, "rename %s to %s: EINVAL (into itself)", nf, nt);
        return -EINVAL;
    }
    store_ns_lock(st);
    int in_record;
    rc = load_layout(st, nf, &l, NULL, &in_record, msg, msglen);
    int kind = rc ? RN_DIR : in_record ? RN_RECORD : RN_XATTR;
    if (not_a_file(rc)) {
        int fd = open_dir_beneath(st->rootfd[0], nf);
        rc = fd < 0 ? (fd == -ENOTDIR ? -ENOENT : fd) : 0;
        if (fd >= 0)
            close(fd);
    }
    if (rc == 0 && strcmp(nf, nt))
        rc = rename_all(st, nf, nt, kind);
    pthread_mutex_unlock(&st->mu);
    if (rc)
        snprintf(msg, msglen, "rename %s to %s: %s", nf, nt, ddio_errno_name(-rc));
    return rc;
}
