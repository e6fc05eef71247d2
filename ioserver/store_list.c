/* Sorted listings of directories kept between READDIR pages (store_list.h). */
#include "store_list.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddio_proto.h"
#include "store_roots.h"

void store_lists_init(struct store_lists *l)
{
    memset(l, 0, sizeof(*l));
    pthread_mutex_init(&l->mu, NULL);
}

static void listing_free(struct store_listing *ls)
{
    for (size_t i = 0; i < ls->n; i++)
        free(ls->names[i]);
    free(ls->names);
    free(ls);
}

void store_lists_fini(struct store_lists *l)
{
    while (l->head) {
        struct store_listing *n = l->head->next;
        listing_free(l->head);       /* no page is being served any more */
        l->head = n;
    }
    pthread_mutex_destroy(&l->mu);
    memset(l, 0, sizeof(*l));
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* a name a listing shows: not ".", "..", nor .ddio at the root, and one a
 * READDIR reply may carry */
static int name_listed(const char *name, int at_root)
{
    return strcmp(name, ".") && strcmp(name, "..") && !(at_root && !strcmp(name, META_DIR)) &&
           strlen(name) <= DDIO_NAME_MAX;
}

static int listing_add(struct store_listing *ls, size_t *cap, const char *name)
{
    if (ls->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        char **nn = realloc(ls->names, nc * sizeof(char *));
        if (!nn)
            return -ENOMEM;
        ls->names = nn;
        *cap = nc;
    }
    if (!(ls->names[ls->n] = strdup(name)))
        return -ENOMEM;
    ls->bytes += strlen(name) + 1 + sizeof(char *);
    ls->n++;
    return 0;
}

/* read directory dirfd (through a descriptor of its own: readdir moves
 * the position, and dirfd stays the caller's) into a new sorted listing */
static struct store_listing *listing_read(int dirfd, int at_root, int *rc)
{
    struct store_listing *ls = calloc(1, sizeof(*ls));
    struct stat sb = {0};
    size_t cap = 0;
    int fd = ls ? openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    *rc = !ls ? -ENOMEM : (!dir ? -errno : 0);
    if (dir && fstat(fd, &sb))
        *rc = -errno;
    if (!dir && fd >= 0)
        close(fd);
    struct dirent *de = NULL;
    while (*rc == 0 && (errno = 0, de = readdir(dir)))
        if (name_listed(de->d_name, at_root))
            *rc = listing_add(ls, &cap, de->d_name);
    if (*rc == 0 && errno)
        *rc = -errno;             /* readdir's own failure */
    if (dir)
        closedir(dir);
    if (*rc) {
        if (ls)
            listing_free(ls);
        return NULL;
    }
    ls->dev = sb.st_dev;
    ls->ino = sb.st_ino;
    ls->bytes += sizeof(*ls);
    if (ls->n > 1)
        qsort(ls->names, ls->n, sizeof(char *), cmp_name);
    return ls;
}

/* take ls out of the cache's list, dropping the cache's reference; under mu */
static void cache_unlink(struct store_lists *l, struct store_listing *ls)
{
    for (struct store_listing **pp = &l->head; *pp; pp = &(*pp)->next)
        if (*pp == ls) {
            *pp = ls->next;
            break;
        }
    ls->cached = 0;
    ls->next = NULL;
    l->count--;
    l->bytes -= ls->bytes;
    if (--ls->refs == 0)
        listing_free(ls);
}

/* the cached listing of directory (dev, ino), moved to the front; under mu */
static struct store_listing *cache_find(struct store_lists *l, dev_t dev, ino_t ino)
{
    for (struct store_listing **pp = &l->head; *pp; pp = &(*pp)->next) {
        struct store_listing *ls = *pp;
        if (ls->dev == dev && ls->ino == ino) {
            *pp = ls->next;
            ls->next = l->head;
            l->head = ls;
            return ls;
        }
    }
    return NULL;
}

/* ls cached in front, replacing its directory's older listing; the least
 * recently used ones dropped while over either bound (never ls: a
 * directory bigger than the bound is still paged in linear time); under mu */
static void cache_insert(struct store_lists *l, struct store_listing *ls)
{
    struct store_listing *old = cache_find(l, ls->dev, ls->ino);
    if (old)
        cache_unlink(l, old);
    ls->next = l->head;
    l->head = ls;
    ls->cached = 1;
    ls->refs++;
    l->count++;
    l->bytes += ls->bytes;
    while (l->count > 1 && (l->count > STORE_LISTS_MAX || l->bytes > STORE_LISTS_BYTES)) {
        struct store_listing *last = l->head;
        while (last->next)
            last = last->next;
        cache_unlink(l, last);
    }
}

/* the cached listing of directory dirfd, referenced, or NULL */
static struct store_listing *cached_listing(struct store_lists *l, int dirfd)
{
    struct stat sb;
    if (fstat(dirfd, &sb))
        return NULL;              /* read afresh: that reports the error */
    pthread_mutex_lock(&l->mu);
    struct store_listing *ls = cache_find(l, sb.st_dev, sb.st_ino);
    if (ls)
        ls->refs++;
    pthread_mutex_unlock(&l->mu);
    return ls;
}

struct store_listing *store_list_get(struct store_lists *l, int dirfd, int at_root, int fresh,
                                     int *rc)
{
    struct store_listing *ls = fresh ? NULL : cached_listing(l, dirfd);
    *rc = 0;
    if (ls)
        return ls;
    /* read and sorted outside the lock: other directories' pages go on */
    if (!(ls = listing_read(dirfd, at_root, rc)))
        return NULL;
    ls->refs = 1;                 /* the caller's */
    pthread_mutex_lock(&l->mu);
    l->reads++;
    cache_insert(l, ls);
    pthread_mutex_unlock(&l->mu);
    return ls;
}

void store_list_put(struct store_lists *l, struct store_listing *ls)
{
    pthread_mutex_lock(&l->mu);
    int last = --ls->refs == 0;
    pthread_mutex_unlock(&l->mu);
    if (last)
        listing_free(ls);
}

size_t store_list_seek(const struct store_listing *ls, const char *after)
{
    size_t lo = 0, hi = ls->n;
    if (!*after)
        return 0;
    while (lo < hi) {             /* the first name > after */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(ls->names[mid], after) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
