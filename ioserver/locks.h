/* Byte-range lock manager (POSIX-like record locks on logical offsets).
 *
 * One manager per open file. Locks are owned by an opaque 64-bit owner (the
 * server uses the connection id): an owner's own locks never conflict with
 * each other, and a new lock over an owner's existing ones replaces them in
 * that range (splitting as needed), like fcntl(F_SETLK). No networking here,
 * so it is unit-tested alone. */
#ifndef DDIO_SRV_LOCKS_H
#define DDIO_SRV_LOCKS_H

#include <pthread.h>
#include <stdint.h>

#define LK_RD 1
#define LK_WR 2
#define LK_EOF UINT64_MAX        /* range end meaning "to end of file" */

struct lk_range;
struct lk_waiter;

struct lk_mgr {
    pthread_mutex_t mu;
    pthread_cond_t cv;           /* CLOCK_MONOTONIC; broadcast on release */
    struct lk_range *head;       /* sorted by start */
    struct lk_waiter *waiters;   /* blocked SETLKW callers, for cancellation */
    unsigned nlocks;
};

void lk_init(struct lk_mgr *m);
void lk_destroy(struct lk_mgr *m);

/* Lock [start, end) (end = LK_EOF for "to the end") with type LK_RD/LK_WR,
 * not before not_before_ms (the server's grace after a restart, during which
 * only reclaims pass: 0). wait = 0: -EAGAIN on conflict or before then.
 * wait = 1: block until granted, -ETIMEDOUT at deadline_ms (CLOCK_MONOTONIC
 * ms), or -ECANCELED when lk_release_owner() runs for this owner meanwhile.
 * -EINVAL on a bad range/type, -ENOMEM. */
int lk_lock(struct lk_mgr *m, uint64_t owner, int type, uint64_t start, uint64_t end,
            int wait, int64_t deadline_ms, int64_t not_before_ms);
/* Release the owner's locks within [start, end), splitting ranges. */
int lk_unlock(struct lk_mgr *m, uint64_t owner, uint64_t start, uint64_t end);
/* Release everything the owner holds and cancel its waiters: how many
 * ranges it held. */
unsigned lk_release_owner(struct lk_mgr *m, uint64_t owner);
/* Number of ranges held (by anyone), for tests. */
unsigned lk_count(struct lk_mgr *m);
/* 1 if some owner other than `owner` holds a lock conflicting with
 * (type, [start, end)); for tests and diagnostics. */
int lk_would_conflict(struct lk_mgr *m, uint64_t owner, int type, uint64_t start, uint64_t end);

/* Convert a wire (start, len) into [start, end): len 0 = to EOF. */
static inline uint64_t lk_end_of(uint64_t start, uint64_t len)
{
    if (len == 0 || len > LK_EOF - start)
        return LK_EOF;
    return start + len;
}

#endif
