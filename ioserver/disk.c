/* Disk threads. Each waits (poll) on two eventfds: one the engine writes
 * when it queues requests, one the kernel signals on aio completion
 * (io_set_eventfd), so the thread never sleeps in io_getevents while new
 * work is waiting. Partial io_submit, EAGAIN and short completions are
 * handled as fio's libaio engine does: resubmit what is left. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "disk.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "ddio_log.h"

#define DISK_ALIGN 4096

static int64_t mono_us(void);

static void kick(int fd)
{
    uint64_t one = 1;
    ssize_t w = write(fd, &one, sizeof(one));
    (void)w;                    /* eventfd counter full is still a wakeup */
}

static void drain(int fd)
{
    uint64_t v;
    ssize_t r = read(fd, &v, sizeof(v));
    (void)r;
}

void *disk_buf_get(struct disk *d, int wait, int64_t deadline_ms)
{
    pthread_mutex_lock(&d->mu);
    while (d->nfree == 0 && wait) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 >= deadline_ms)
            break;
        struct timespec ts = {.tv_sec = deadline_ms / 1000,
                              .tv_nsec = (deadline_ms % 1000) * 1000000};
        pthread_cond_timedwait(&d->pool_cv, &d->mu, &ts);
    }
    void *b = d->nfree ? d->freebufs[--d->nfree] : NULL;
    pthread_mutex_unlock(&d->mu);
    return b;
}

void disk_buf_put(struct disk *d, void *buf)
{
    pthread_mutex_lock(&d->mu);
    d->freebufs[d->nfree++] = buf;
    pthread_cond_signal(&d->pool_cv);
    pthread_mutex_unlock(&d->mu);
}

void disk_buf_abandon(struct disk *d, void *buf)
{
    void *nb = NULL;
    void **ex = NULL;
    pthread_mutex_lock(&d->mu);
    if (posix_memalign(&nb, DISK_ALIGN, (size_t)d->bsize) == 0 &&
        (ex = realloc(d->extra, (d->nextra + 1) * sizeof(void *))) != NULL) {
        d->extra = ex;
        d->extra[d->nextra++] = nb;
        d->freebufs[d->nfree++] = nb;
        pthread_cond_signal(&d->pool_cv);
    } else {
        free(nb);
        nb = NULL;
    }
    pthread_mutex_unlock(&d->mu);
    DDIO_WARN("disk %d: block buffer %p given up%s", d->idx, buf,
              nb ? "" : " and no memory for a new one: one buffer fewer");
}

/* d->mu held: the request starts now (fields reset, submit time), counts as
 * queued (depth, busy time) and as the disk's next access (nonconsec: not
 * where the previous one ended) */
static void account_start(struct disk *d, struct disk_req *r)
{
    r->done = 0;
    r->res = 0;
    r->next = NULL;
    r->t_submit_us = mono_us();
    if (d->depth++ == 0)
        d->busy_since_us = r->t_submit_us;
    r->nonconsec = r->off != d->last_end;
    d->last_end = r->off + r->len;
}

void disk_submit(struct disk *d, struct disk_req *r)
{
    pthread_mutex_lock(&d->mu);
    account_start(d, r);
    if (d->qtail)
        d->qtail->next = r;
    else
        d->qhead = r;
    d->qtail = r;
    pthread_mutex_unlock(&d->mu);
    kick(d->wakefd);
}

/* a request is finished (done or failed): count it, then its callback */
static void finish(struct disk *d, struct disk_req *r)
{
    atomic_fetch_add(r->write ? &d->bytes_written : &d->bytes_read, r->done);
    atomic_fetch_add(&d->ops, 1);
    int64_t now = mono_us();
    r->us = (uint64_t)(now - r->t_submit_us);
    pthread_mutex_lock(&d->mu);
    if (--d->depth == 0)
        d->busy_us += (uint64_t)(now - d->busy_since_us);
    pthread_mutex_unlock(&d->mu);
    r->cb(r);
}

void disk_get_counters(struct disk *d, struct disk_counters *c)
{
    c->bytes_read = atomic_load(&d->bytes_read);
    c->bytes_written = atomic_load(&d->bytes_written);
    c->ops = atomic_load(&d->ops);
    pthread_mutex_lock(&d->mu);
    c->depth = d->depth;
    c->busy_us = d->busy_us + (d->depth ? (uint64_t)(mono_us() - d->busy_since_us) : 0);
    pthread_mutex_unlock(&d->mu);
}

static void prep(struct disk *d, struct disk_req *r)
{
    void *p = (char *)r->buf + r->done;
    size_t n = r->len - r->done;
    long long off = (long long)(r->off + r->done);
    if (r->write)
        io_prep_pwrite(&r->iocb, r->fd, p, n, off);
    else
        io_prep_pread(&r->iocb, r->fd, p, n, off);
    io_set_eventfd(&r->iocb, d->evfd);
    r->iocb.data = r;
}

/* give the pending list to the kernel; what it does not take stays pending */
static struct disk_req *submit_list(struct disk *d, struct disk_req *pend, unsigned *inflight)
{
    struct iocb *cbs[64];
    while (pend) {
        int n = 0;
        struct disk_req *r = pend;
        for (; r && n < 64; r = r->next) {
            prep(d, r);
            cbs[n++] = &r->iocb;
        }
        int got = io_submit(d->ctx, n, cbs);
        if (got == -EAGAIN || got == 0)
            return pend;          /* retry after a completion frees slots */
        if (got < 0) {
            for (int i = 0; i < n; i++) {   /* the batch failed as a whole */
                struct disk_req *x = pend;
                pend = pend->next;
                x->res = got;
                finish(d, x);
            }
            continue;
        }
        *inflight += (unsigned)got;
        for (int i = 0; i < got; i++)
            pend = pend->next;
    }
    return NULL;
}

static struct disk_req *append(struct disk_req *list, struct disk_req *r)
{
    r->next = NULL;
    if (!list)
        return r;
    struct disk_req *t = list;
    while (t->next)
        t = t->next;
    t->next = r;
    return list;
}

/* handle one completion: finished, failed, or resubmit the rest */
static struct disk_req *complete(struct disk *d, struct disk_req *r, long res,
                                 struct disk_req *pend)
{
    if (res < 0) {
        r->res = (int)res;
    } else if (res == 0) {
        if (r->write)
            r->res = -EIO;        /* a write making no progress */
        /* a read of 0 bytes is end of file: done, short */
    } else {
        r->done += (size_t)res;
        /* a read ending off a 4 KiB boundary hit end of file; resubmitting
         * it would be an unaligned O_DIRECT read (EINVAL) */
        int eof = !r->write && (r->done % DISK_ALIGN) != 0;
        if (r->done < r->len && !eof)
            return append(pend, r);
    }
    finish(d, r);
    return pend;
}

static struct disk_req *reap(struct disk *d, struct disk_req *pend, unsigned *inflight)
{
    struct io_event ev[64];
    struct timespec zero = {0, 0};
    for (;;) {
        int n = io_getevents(d->ctx, 0, 64, ev, &zero);
        if (n <= 0)
            return pend;
        *inflight -= (unsigned)n;
        for (int i = 0; i < n; i++)
            pend = complete(d, ev[i].data, (long)ev[i].res, pend);
    }
}

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* --throttle-mbps: a new request waits until the emulated disk would have
 * moved its bytes, so the disk never exceeds the configured bandwidth. The
 * wait is on the disk thread, as a slow device would hold its queue. */
static void throttle(struct disk *d, const struct disk_req *r)
{
    if (!d->throttle_bps)
        return;
    int64_t now = mono_us();
    pthread_mutex_lock(&d->mu);   /* disk_run_now throttles on other threads */
    if (d->busy_until_us < now)
        d->busy_until_us = now;
    d->busy_until_us += (int64_t)((uint64_t)r->len * 1000000 / d->throttle_bps);
    int64_t t = d->busy_until_us;
    pthread_mutex_unlock(&d->mu);
    struct timespec ts = {.tv_sec = t / 1000000, .tv_nsec = (t % 1000000) * 1000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* bytes [lo, hi) of r (relative to its buf and off); what moved is added
 * to r->done. 0: all of it; 1: end of file (a short read); -1: r->res set */
static int run_range(struct disk_req *r, uint64_t lo, uint64_t hi)
{
    while (lo < hi) {
        void *p = (char *)r->buf + lo;
        size_t n = (size_t)(hi - lo);
        off_t off = (off_t)(r->off + lo);
        ssize_t k = r->write ? pwrite(r->fd, p, n, off) : pread(r->fd, p, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            r->res = -errno;
            return -1;
        }
        if (k == 0) {             /* end of file: a short read; a stuck write */
            if (!r->write)
                return 1;
            r->res = -EIO;
            return -1;
        }
        r->done += (size_t)k;
        lo += (uint64_t)k;
    }
    return 0;
}

void disk_run_now(struct disk *d, struct disk_req *r)
{
    pthread_mutex_lock(&d->mu);
    account_start(d, r);
    pthread_mutex_unlock(&d->mu);
    throttle(d, r);
    if (!r->segs)
        run_range(r, 0, r->len);
    for (size_t i = 0; r->segs && i < r->nsegs; i++)
        if (run_range(r, r->segs[i].lo, r->segs[i].hi))
            break;
    finish(d, r);
}

static void *disk_thread(void *arg)
{
    struct disk *d = arg;
    struct disk_req *pend = NULL;
    unsigned inflight = 0;
    for (;;) {
        pthread_mutex_lock(&d->mu);
        int stop = d->stop;
        struct disk_req *q = d->qhead;
        d->qhead = d->qtail = NULL;
        pthread_mutex_unlock(&d->mu);
        while (q) {
            struct disk_req *n = q->next;
            throttle(d, q);
            pend = append(pend, q);
            q = n;
        }
        pend = submit_list(d, pend, &inflight);
        if (stop && !pend && inflight == 0)
            break;
        struct pollfd pf[2] = {{d->wakefd, POLLIN, 0}, {d->evfd, POLLIN, 0}};
        /* pending but refused (EAGAIN) with nothing in flight: retry soon */
        int timeout = (pend && inflight == 0) ? 1 : -1;
        if (poll(pf, 2, timeout) < 0 && errno != EINTR)
            DDIO_WARN("disk %d: poll: %s", d->idx, strerror(errno));
        if (pf[0].revents & POLLIN)
            drain(d->wakefd);
        if (pf[1].revents & POLLIN) {
            drain(d->evfd);
            pend = reap(d, pend, &inflight);
        }
    }
    return NULL;
}

int disk_start(struct disk *d, int idx, uint64_t bsize, unsigned nbuf, uint64_t throttle_bps,
               char *err, size_t errlen)
{
    memset(d, 0, sizeof(*d));
    d->idx = idx;
    d->throttle_bps = throttle_bps;
    d->bsize = bsize;
    d->nbuf = nbuf;
    d->evfd = d->wakefd = -1;
    pthread_mutex_init(&d->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->pool_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (posix_memalign(&d->bufmem, DISK_ALIGN, (size_t)bsize * nbuf)
        || !(d->freebufs = calloc(nbuf, sizeof(void *)))) {
        snprintf(err, errlen, "disk %d: cannot allocate %u buffers of %llu bytes",
                 idx, nbuf, (unsigned long long)bsize);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < nbuf; i++)
        d->freebufs[d->nfree++] = (char *)d->bufmem + (size_t)i * bsize;
    int rc = io_setup((int)nbuf + 8, &d->ctx);
    if (rc) {
        snprintf(err, errlen, "disk %d: io_setup: %s", idx, strerror(-rc));
        return rc;
    }
    d->evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    d->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (d->evfd < 0 || d->wakefd < 0) {
        snprintf(err, errlen, "disk %d: eventfd: %s", idx, strerror(errno));
        return -errno;
    }
    rc = pthread_create(&d->th, NULL, disk_thread, d);
    if (rc) {
        snprintf(err, errlen, "disk %d: pthread_create: %s", idx, strerror(rc));
        return -rc;
    }
    d->started = 1;
    return 0;
}

void disk_stop(struct disk *d)
{
    if (d->started) {
        pthread_mutex_lock(&d->mu);
        d->stop = 1;
        pthread_mutex_unlock(&d->mu);
        kick(d->wakefd);
        pthread_join(d->th, NULL);
        d->started = 0;
    }
    if (d->ctx)
        io_destroy(d->ctx);
    if (d->evfd >= 0)
        close(d->evfd);
    if (d->wakefd >= 0)
        close(d->wakefd);
    free(d->bufmem);
    free(d->freebufs);
    for (unsigned i = 0; i < d->nextra; i++)
        free(d->extra[i]);
    free(d->extra);
    d->extra = NULL;
    d->nextra = 0;
    pthread_cond_destroy(&d->pool_cv);
    pthread_mutex_destroy(&d->mu);
    d->bufmem = NULL;
    d->freebufs = NULL;
    d->ctx = 0;
    d->evfd = d->wakefd = -1;
}
