/* Durable marks that name a path (marks.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "marks.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddio_proto.h"
#include "store_roots.h"

uint64_t marks_hash(const char *norm)
{
    uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a */
    for (const char *p = norm; *p; p++)
        h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
    return h;
}

static void mark_name(const char *dir, const char *norm, char *out, size_t n)
{
    snprintf(out, n, "%s/%016" PRIx64, dir, marks_hash(norm));
}

int marks_has(int ddiofd, const char *dir, const char *norm)
{
    char name[128], buf[DDIO_MAX_STR + 1];
    mark_name(dir, norm, name, sizeof(name));
    ssize_t n = read_small(ddiofd, name, buf, sizeof(buf) - 1);
    if (n < 0)
        return 0;
    buf[n] = 0;
    return strcmp(buf, norm) == 0;
}

int marks_sync_dir(int dirfd, const char *rel)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) ? -errno : 0;
    close(fd);
    return rc;
}

int marks_put(struct store *st, int ddiofd, const char *dir, const char *norm)
{
    char name[128];
    if (marks_has(ddiofd, dir, norm))
        return 0;
    if (mkdirat(ddiofd, dir, 0700) && errno != EEXIST)
        return -errno;
    mark_name(dir, norm, name, sizeof(name));
    int rc = write_atomic(st, ddiofd, name, norm, strlen(norm), 1);
    if (rc == 0)
        rc = marks_sync_dir(ddiofd, dir);
    return rc ? rc : 1;
}

int marks_drop(int ddiofd, const char *dir, const char *norm)
{
    char name[128];
    if (!marks_has(ddiofd, dir, norm))
        return 0;
    mark_name(dir, norm, name, sizeof(name));
    if (unlinkat(ddiofd, name, 0) && errno != ENOENT)
        return -errno;
    int rc = marks_sync_dir(ddiofd, dir);
    return rc ? rc : 1;
}

int marks_each(int ddiofd, const char *dir, int (*fn)(void *, const char *), void *arg)
{
    int fd = openat(ddiofd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -errno;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && fn(arg, e->d_name))
            break;
    closedir(d);
    return 0;
}

static int count_one(void *arg, const char *name)
{
    (void)name;
    (*(int *)arg)++;
    return 0;
}

int marks_count(int ddiofd, const char *dir)
{
    int n = 0;
    return marks_each(ddiofd, dir, count_one, &n) ? 0 : n;
}

struct lister {
    int ddiofd;
    const char *dir;
    char **paths;
    int n, max, err;
};

static int list_one(void *arg, const char *name)
{
    struct lister *l = arg;
    char rel[128], buf[DDIO_MAX_STR + 1];
    snprintf(rel, sizeof(rel), "%s/%.64s", l->dir, name);
    ssize_t n = read_small(l->ddiofd, rel, buf, sizeof(buf) - 1);
    if (n <= 0)
        return 0;               /* removed meanwhile, or torn: not a mark */
    buf[n] = 0;
    if (!(l->paths[l->n] = strdup(buf))) {
        l->err = -ENOMEM;
        return 1;
    }
    return ++l->n == l->max;
}

int marks_list(int ddiofd, const char *dir, char **paths, int max)
{
    struct lister l = {.ddiofd = ddiofd, .dir = dir, .paths = paths, .max = max};
    int rc = max > 0 ? marks_each(ddiofd, dir, list_one, &l) : 0;
    if (rc == 0 && l.err)
        rc = l.err;
    if (rc)
        for (int i = 0; i < l.n; i++)
            free(paths[i]);
    return rc ? rc : l.n;
}
