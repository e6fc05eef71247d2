/* Byte-range locks: a list (kept roughly in start order) of (owner, type, [start, end)) ranges.
 * Lists stay short (one application's locks on one file), so a linked list
 * with linear scans keeps the code obviously correct. */
#include "locks.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

struct lk_range {
    uint64_t owner;
    int type;
    uint64_t start, end;
    struct lk_range *next;
};

struct lk_waiter {
    uint64_t owner;
    int canceled;
    struct lk_waiter *next;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void lk_init(struct lk_mgr *m)
{
    pthread_condattr_t ca;
    pthread_mutex_init(&m->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cv, &ca);
    pthread_condattr_destroy(&ca);
    m->head = NULL;
    m->waiters = NULL;
    m->nlocks = 0;
}

void lk_destroy(struct lk_mgr *m)
{
    struct lk_range *r = m->head;
    while (r) {
        struct lk_range *n = r->next;
        free(r);
        r = n;
    }
    m->head = NULL;
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
}

static int overlaps(const struct lk_range *r, uint64_t start, uint64_t end)
{
    return r->start < end && start < r->end;
}

static int conflicts(const struct lk_mgr *m, uint64_t owner, int type,
                     uint64_t start, uint64_t end)
{
    /* no early exit on start order: cut_owner() may move a range's start
     * past its successors' (the list is only approximately sorted) */
    for (const struct lk_range *r = m->head; r; r = r->next) {
        if (r->owner != owner && overlaps(r, start, end)
            && (type == LK_WR || r->type == LK_WR))
            return 1;
    }
    return 0;
}

static void insert_sorted(struct lk_mgr *m, struct lk_range *n)
{
    struct lk_range **pp = &m->head;
    while (*pp && (*pp)->start < n->start)
        pp = &(*pp)->next;
    n->next = *pp;
    *pp = n;
    m->nlocks++;
}

/* Remove the owner's coverage of [start, end). Needs at most one spare node
 * (a range strictly containing [start, end) splits in two), which the
 * caller preallocates so this cannot fail half way. */
static void cut_owner(struct lk_mgr *m, uint64_t owner, uint64_t start, uint64_t end,
                      struct lk_range **spare)
{
    struct lk_range **pp = &m->head;
    while (*pp) {
        struct lk_range *r = *pp;
        if (r->owner != owner || !overlaps(r, start, end)) {
            pp = &r->next;
            continue;
        }
        if (r->start < start && r->end > end) {          /* split */
            struct lk_range *tail = *spare;
            *spare = NULL;
            *tail = *r;
            tail->start = end;
            r->end = start;
            tail->next = r->next;
            r->next = tail;
            m->nlocks++;
            return;                                       /* nothing else can overlap */
        }
        if (r->start < start) {
            r->end = start;
            pp = &r->next;
        } else if (r->end > end) {
            r->start = end;
            pp = &r->next;
        } else {
            *pp = r->next;
            free(r);
            m->nlocks--;
        }
    }
}

/* Merge the owner's adjacent/overlapping ranges of the same type, so lock
 * and unlock cycles do not grow the list. */
static void coalesce(struct lk_mgr *m, struct lk_range *n)
{
    for (struct lk_range **pp = &m->head; *pp;) {
        struct lk_range *r = *pp;
        if (r != n && r->owner == n->owner && r->type == n->type
            && r->start <= n->end && n->start <= r->end) {
            if (r->start < n->start) n->start = r->start;
            if (r->end > n->end) n->end = r->end;
            *pp = r->next;
            free(r);
            m->nlocks--;
            continue;
        }
        pp = &r->next;
    }
    /* n's start may have moved: re-sort it */
    for (struct lk_range **pp = &m->head; *pp; pp = &(*pp)->next) {
        if (*pp == n) {
            *pp = n->next;
            m->nlocks--;
            break;
        }
    }
    insert_sorted(m, n);
}

static int grant(struct lk_mgr *m, uint64_t owner, int type, uint64_t start, uint64_t end)
{
    struct lk_range *n = malloc(sizeof(*n));
    struct lk_range *spare = malloc(sizeof(*spare));
    if (!n || !spare) {
        free(n);
        free(spare);
        return -ENOMEM;
    }
    cut_owner(m, owner, start, end, &spare);
    free(spare);
    n->owner = owner;
    n->type = type;
    n->start = start;
    n->end = end;
    insert_sorted(m, n);
    coalesce(m, n);
    return 0;
}

static int wait_until(struct lk_mgr *m, int64_t deadline_ms)
{
    struct timespec ts;
    if (deadline_ms <= mono_ms())
        return ETIMEDOUT;
    ts.tv_sec = deadline_ms / 1000;
    ts.tv_nsec = (deadline_ms % 1000) * 1000000;
    return pthread_cond_timedwait(&m->cv, &m->mu, &ts);
}

static void unlink_waiter(struct lk_mgr *m, struct lk_waiter *w)
{
    for (struct lk_waiter **pp = &m->waiters; *pp; pp = &(*pp)->next) {
        if (*pp == w) {
            *pp = w->next;
            return;
        }
    }
}

/* a conflict, or the grace not over */
static int blocked(struct lk_mgr *m, uint64_t owner, int type, uint64_t start, uint64_t end,
                   int64_t not_before_ms)
{
    return (not_before_ms && mono_ms() < not_before_ms) || conflicts(m, owner, type, start, end);
}

static int wait_for_grant(struct lk_mgr *m, uint64_t owner, int type, uint64_t start,
                          uint64_t end, int64_t deadline_ms, int64_t not_before_ms)
{
    struct lk_waiter w = {.owner = owner, .canceled = 0, .next = m->waiters};
    m->waiters = &w;
    int rc = 0;
    while (blocked(m, owner, type, start, end, not_before_ms)) {
        if (w.canceled) {
            rc = -ECANCELED;
            break;
        }
        /* nobody broadcasts the grace's end: wake for it */
        int64_t until = not_before_ms > mono_ms() && not_before_ms < deadline_ms
            ? not_before_ms : deadline_ms;
        if (wait_until(m, until) == ETIMEDOUT && until == deadline_ms
            && blocked(m, owner, type, start, end, not_before_ms)) {
            rc = w.canceled ? -ECANCELED : -ETIMEDOUT;
            break;
        }
    }
    if (rc == 0 && w.canceled)
        rc = -ECANCELED;
    unlink_waiter(m, &w);
    return rc;
}

int lk_lock(struct lk_mgr *m, uint64_t owner, int type, uint64_t start, uint64_t end,
            int wait, int64_t deadline_ms, int64_t not_before_ms)
{
    if ((type != LK_RD && type != LK_WR) || end <= start)
        return -EINVAL;
    pthread_mutex_lock(&m->mu);
    int rc = 0;
    if (blocked(m, owner, type, start, end, not_before_ms))
        rc = wait ? wait_for_grant(m, owner, type, start, end, deadline_ms, not_before_ms)
            : -EAGAIN;
    if (rc == 0)
        rc = grant(m, owner, type, start, end);
    /* a write lock turned into a read lock may unblock readers */
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int lk_unlock(struct lk_mgr *m, uint64_t owner, uint64_t start, uint64_t end)
{
    if (end <= start)
        return -EINVAL;
    struct lk_range *spare = malloc(sizeof(*spare));
    if (!spare)
        return -ENOMEM;
    pthread_mutex_lock(&m->mu);
    cut_owner(m, owner, start, end, &spare);
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    free(spare);
    return 0;
}

unsigned lk_release_owner(struct lk_mgr *m, uint64_t owner)
{
    unsigned n = 0;
    pthread_mutex_lock(&m->mu);
    for (struct lk_range **pp = &m->head; *pp;) {
        struct lk_range *r = *pp;
        if (r->owner == owner) {
            *pp = r->next;
            free(r);
            m->nlocks--;
            n++;
        } else {
            pp = &r->next;
        }
    }
    for (struct lk_waiter *w = m->waiters; w; w = w->next)
        if (w->owner == owner)
            w->canceled = 1;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    return n;
}

unsigned lk_count(struct lk_mgr *m)
{
    pthread_mutex_lock(&m->mu);
    unsigned n = m->nlocks;
    pthread_mutex_unlock(&m->mu);
    return n;
}

int lk_would_conflict(struct lk_mgr *m, uint64_t owner, int type, uint64_t start, uint64_t end)
{
    pthread_mutex_lock(&m->mu);
    int c = conflicts(m, owner, type, start, end);
    pthread_mutex_unlock(&m->mu);
    return c;
}
