/* A file's block locks: a write holds its block from the read of a
 * read-modify-write to its sums' update (engine_write.c), so two writes of
 * one block never interleave and a read that disagrees with a sum can look
 * again (engine_sums.c confirm); and the count of the same-host mappings
 * that the truncation waits out. Moved out of store.c, which keeps the
 * table of open files. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>

#include "cond.h"
#include "ddio_net.h"
#include "store.h"
#include "store_int.h"

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

void store_map_hold(struct ofile *of)
{
    pthread_mutex_lock(&of->mu);
    of->maps++;
    pthread_mutex_unlock(&of->mu);
}

void store_map_drop(struct ofile *of)
{
    pthread_mutex_lock(&of->mu);
    of->maps--;
    pthread_cond_broadcast(&of->blk_cv);
    pthread_mutex_unlock(&of->mu);
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
