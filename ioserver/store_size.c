/* A file's sizes in the store: its size (with what same-host writers
 * published in its size page), truncation and growth of its datafiles,
 * preallocation, and which disk holds a local offset (and a read across
 * them). Under store.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE      /* fallocate */
#endif
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cond.h"
#include "ddio_net.h"
#include "store_int.h"
#include "sums.h"

/* of->mu held: same-host clients see the new size (local.c). A growth is
 * a compare-and-swap maximum, since a same-host writer may be raising the
 * page at the same moment; a set size (truncate) is stored as it is. */
void size_publish(struct ofile *of, int set)
{
    if (!of->sizemap)
        return;
    if (set)
        __atomic_store_n(of->sizemap, of->size, __ATOMIC_RELEASE);
    else
        ddio_size_raise(of->sizemap, of->size);
}

/* of->mu held: what same-host writers wrote (they raise the page first) */
void size_fold(struct ofile *of)
{
    if (of->sizemap && __atomic_load_n(&of->local_writers, __ATOMIC_ACQUIRE)) {
        uint64_t v = __atomic_load_n(of->sizemap, __ATOMIC_ACQUIRE);
        if (v > of->size)
            of->size = v;
    }
}

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

int store_pread(struct ofile *of, uint64_t off, void *buf, size_t len)
{
    const uint64_t B = of->disks.unit;
    for (uint64_t o = off, e; o < off + len; o = e) {
        e = (o / B + 1) * B < off + len ? (o / B + 1) * B : off + len;
        uint64_t doff;
        int d = store_disk_of(of, o, &doff);
        uint8_t *to = (uint8_t *)buf + (o - off);
        ssize_t n = pread(of->bfds[d] >= 0 ? of->bfds[d] : of->fds[d], to, (size_t)(e - o),
                          (off_t)doff);
        if (n < 0)
            return -errno;
        memset(to + n, 0, (size_t)(e - o - (uint64_t)n));
    }
    return 0;
}

/* before datafile d of `of` goes down to ds bytes (of->mu held): no
 * mapping of it may be held (store_map_hold) */
static int shrink_ok(struct ofile *of, int d, uint64_t ds)
{
    struct stat sb;
    if (of->maps == 0 || (fstat(of->fds[d], &sb) == 0 && (uint64_t)sb.st_size <= ds))
        return 0;
    int64_t dl = ddio_now_ms() + STORE_MAP_WAIT_MS;
    while (of->maps > 0) {
        if (ddio_now_ms() >= dl)
            return -EBUSY;
        cond_wait_ms(&of->blk_cv, &of->mu, dl);
    }
    return 0;
}

static int truncate_all(struct ofile *of, uint64_t size)
{
    for (int d = 0; d < of->ndisks; d++) {
        uint64_t ds = ddio_layout_local_size(&of->disks, (uint32_t)d, size);
        int rc = shrink_ok(of, d, ds);
        if (rc)
            return rc;
        rc = of->sums ? sums_begin_write(of->sums[d]) : 0;
        if (rc)
            return rc;
        rc = ftruncate(of->fds[d], (off_t)ds) ? -errno : 0;
        if (of->sums && rc == 0)
            sums_truncate(of->sums[d], ds);
        if (of->sums)
            sums_end_write(of->sums[d]);
        if (rc)
            return rc;
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

/* of->mu held: the size page, made on first use */
int size_page(struct ofile *of)
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

int store_grow(struct ofile *of, uint64_t local_size)
{
    pthread_mutex_lock(&of->mu);
    size_fold(of);
    int rc = 0;
    if (local_size > of->size && (rc = truncate_all(of, local_size)) == 0) {
        of->size = local_size;
        size_publish(of, 0);
    }
    pthread_mutex_unlock(&of->mu);
    return rc;
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
        else if ((uint64_t)sb.st_size > ds && (rc = shrink_ok(of, d, ds)) == 0 &&
                 ftruncate(of->fds[d], (off_t)ds))
            rc = -errno;
    }
    pthread_mutex_unlock(&of->mu);
    return rc;
}
