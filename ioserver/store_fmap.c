/* A datafile's long-lived read mapping: a cached read sent from the page
 * cache's pages (engine_slots.c map_cached) takes its range from one
 * mapping of the whole datafile that lives as long as the open file,
 * where a mapping per block cost an mmap with MAP_POPULATE and a munmap
 * (with its TLB shootdown) on every block: 27-31 us per 1 MiB here, and
 * hot 1 MiB reads over UCX 0.90x the time without it. Pages once mapped
 * stay mapped (a send that touches a page first faults it in, 16 pages at
 * a time); populating each range again (MADV_POPULATE_READ) cost 14 us
 * per MiB even when mapped, more than it saved. The mapping reaches past
 * the end of the file (legal; a touch there would fault), and nothing
 * reads past the end: a user checks its range is cached while it holds
 * the file against shrinking (store_map_hold), and pages past the end are
 * never cached. A file that outgrows its mapping gets a larger one; an
 * older one goes when its last user does. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "ddio_log.h"
#include "store.h"
#include "store_int.h"

#define FMAP_MIN (1ull << 30)     /* address space only: page tables as touched */

struct fmap {
    uint8_t *base;
    uint64_t len;
    unsigned users;               /* under of->mu */
    int d;                        /* its disk */
    struct fmap *next;            /* older mappings of the same datafile */
};

/* mappings kept after their file closed, for sends that never ended
 * (UCX may still read them): held here, never unmapped */
static pthread_mutex_t kept_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fmap *kept;

static uint64_t fmap_size(uint64_t end)
{
    uint64_t n = FMAP_MIN;
    while (n < 2 * end && n < (1ull << 62))
        n <<= 1;
    return n;
}

static void fmap_unlink(struct fmap **head, struct fmap *m)
{
    for (struct fmap **pp = head; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            return;
        }
}

static void fmap_free(struct fmap *m)
{
    munmap(m->base, m->len);
    free(m);
}

/* of->mu held: the newest mapping of disk d reaching end, made if need be */
static struct fmap *fmap_reaching(struct ofile *of, int d, uint64_t end)
{
    if (!of->fmaps && !(of->fmaps = calloc((size_t)of->ndisks, sizeof(*of->fmaps))))
        return NULL;
    struct fmap *m = of->fmaps[d];
    if (m && end <= m->len)
        return m;
    uint64_t len = fmap_size(end);
    struct fmap *n = malloc(sizeof(*n));
    void *p = n ? mmap(NULL, len, PROT_READ, MAP_SHARED, of->bfds[d], 0) : MAP_FAILED;
    if (p == MAP_FAILED) {
        free(n);
        return NULL;
    }
    *n = (struct fmap){p, len, 0, d, m};
    of->fmaps[d] = n;
    if (m && !m->users) {         /* nobody reads the older one any more */
        fmap_unlink(&of->fmaps[d], m);
        fmap_free(m);
    }
    return n;
}

void *store_fmap_get(struct ofile *of, int d, uint64_t off, uint64_t len, struct fmap **out)
{
    if (of->bfds[d] < 0)
        return NULL;
    pthread_mutex_lock(&of->mu);
    struct fmap *m = fmap_reaching(of, d, off + len);
    if (m)
        m->users++;
    pthread_mutex_unlock(&of->mu);
    if (!m)
        return NULL;
    *out = m;
    return m->base + off;
}

void store_fmap_put(struct ofile *of, struct fmap *m)
{
    pthread_mutex_lock(&of->mu);
    int gone = --m->users == 0 && m != of->fmaps[m->d];
    if (gone)
        fmap_unlink(&of->fmaps[m->d], m);
    pthread_mutex_unlock(&of->mu);
    if (gone)
        fmap_free(m);
}

void store_fmap_close(struct ofile *of)
{
    for (int d = 0; of->fmaps && d < of->ndisks; d++)
        for (struct fmap *m = of->fmaps[d], *next; m; m = next) {
            next = m->next;
            if (!m->users) {
                fmap_free(m);
                continue;
            }
            DDIO_WARN("%s: a mapping of disk %d's datafile is kept for sends still "
                      "in flight", of->path, d);
            pthread_mutex_lock(&kept_mu);
            m->next = kept;
            kept = m;
            pthread_mutex_unlock(&kept_mu);
        }
    free(of->fmaps);
    of->fmaps = NULL;
}
