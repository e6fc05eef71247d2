/* Page-cache policy and residency (pcache.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pcache.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_cachestat
#define SYS_cachestat 451        /* the same number on every architecture */
#endif

/* linux/mman.h of older headers lacks them (uapi, Linux 6.5) */
struct pc_range { uint64_t off, len; };
struct pc_stat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

static uint64_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (uint64_t)p : 4096;
}

/* pages of [off, off + len) counted from its first page's start */
static uint64_t pages_of(uint64_t off, uint64_t len, uint64_t pg)
{
    uint64_t lo = off / pg, hi = (off + len + pg - 1) / pg;
    return hi - lo;
}

/* mincore over a mapping of the range: where cachestat is missing */
static int resident_mincore(int fd, uint64_t off, uint64_t len, uint64_t pg)
{
    uint64_t lo = off / pg * pg, n = pages_of(off, len, pg);
    void *m = mmap(NULL, n * pg, PROT_READ, MAP_SHARED, fd, (off_t)lo);
    if (m == MAP_FAILED)
        return 0;
    unsigned char *vec = malloc(n);
    int all = vec && mincore(m, n * pg, vec) == 0;
    for (uint64_t i = 0; all && i < n; i++)
        all = vec[i] & 1;
    free(vec);
    munmap(m, n * pg);
    return all;
}

int pcache_resident(int fd, uint64_t off, uint64_t len)
{
    static atomic_int no_cachestat;   /* ENOSYS once: the kernel will not grow it */
    if (fd < 0 || len == 0)
        return 0;
    uint64_t pg = page_size();
    if (!no_cachestat) {
        struct pc_range r = {off / pg * pg, pages_of(off, len, pg) * pg};
        struct pc_stat cs = {0};
        if (syscall(SYS_cachestat, fd, &r, &cs, 0) == 0)
            return cs.nr_cache >= pages_of(off, len, pg);
        if (errno != ENOSYS)
            return 0;
        no_cachestat = 1;
    }
    return resident_mincore(fd, off, len, pg);
}

int pcache_choose(const struct pcache_ask *a)
{
    if (!a->twin)
        return 0;
    if (a->len <= PCACHE_SMALL_IO && a->len < a->block)
        return 1;                 /* a few sectors: policy before --page-cache */
    if (!a->enabled)
        return 0;
    if (!a->collective)
        return 1;
    return !a->write && pcache_resident(a->fd, a->off, a->len);
}
