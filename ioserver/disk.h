/* Per-disk I/O thread: libaio submission/completion and a fixed pool of
 * 4 KiB-aligned block buffers. Memory per disk is buffers * block_size, set
 * at startup, independent of file sizes and of the number of XFERs. */
#ifndef DDIO_SRV_DISK_H
#define DDIO_SRV_DISK_H

#include <libaio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* one range of a request made of several (disk_run_now only): offsets
 * relative to the request's buf and off */
struct disk_seg { uint64_t lo, hi; };

struct disk_req {
    int fd;
    int write;
    void *buf;
    uint64_t off;           /* datafile offset */
    size_t len;             /* with segs: the sum of their lengths */
    const struct disk_seg *segs;   /* NULL: [0, len); else these ranges */
    size_t nsegs;
    size_t done;            /* bytes transferred so far (short completions) */
    int res;                /* 0 or -errno when complete */
    int nonconsec;          /* set at first submission: off != previous end */
    int64_t t_submit_us;    /* disk_submit's time */
    uint64_t us;            /* submit to completion, set before cb runs */
    void (*cb)(struct disk_req *r);   /* called on the disk thread when done */
    void *arg;
    struct iocb iocb;
    struct disk_req *next;
};

struct disk {
    int idx;
    uint64_t bsize;
    unsigned nbuf;
    io_context_t ctx;
    int evfd;               /* eventfd signalled by aio completions */
    int wakefd;             /* eventfd: new requests / stop */
    pthread_t th;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t pool_cv; /* CLOCK_MONOTONIC */
    struct disk_req *qhead, *qtail;   /* submitted, not yet given to the kernel */
    int stop;
    void *bufmem;
    void **freebufs;
    unsigned nfree;
    void **extra;           /* buffers that replaced abandoned ones (freed at stop) */
    unsigned nextra;
    uint64_t last_end;      /* end of the previous access (under mu) */
    uint64_t throttle_bps;  /* emulated bandwidth, 0 = none (set before start) */
    int64_t busy_until_us;  /* throttle: when the emulated disk is free (under mu) */
    /* counters for STATS (tools/ddio status): bytes and ops written by the
     * disk thread, read by anyone, hence atomics; depth and busy time change
     * in disk_submit and at completion, under mu */
    atomic_uint_fast64_t bytes_read, bytes_written, ops;
    unsigned depth;         /* requests submitted and not yet completed */
    uint64_t busy_us;       /* time with depth > 0, up to busy_since_us */
    int64_t busy_since_us;  /* when depth last became > 0 */
};

struct disk_counters {
    uint64_t bytes_read, bytes_written;
    uint64_t ops;           /* requests completed */
    uint64_t busy_us;       /* time with at least one request submitted and not
                             * completed (iostat's %util, as a time) */
    uint64_t depth;         /* queue depth now: submitted, not completed */
};

/* throttle_bps > 0 emulates a disk of that bandwidth (requests are held
 * back by their transfer time; for tests and demos of slow disks) */
int disk_start(struct disk *d, int idx, uint64_t bsize, unsigned nbuf, uint64_t throttle_bps,
               char *err, size_t errlen);
void disk_stop(struct disk *d);
/* A free buffer, or NULL: at once if wait = 0, else at deadline_ms. */
void *disk_buf_get(struct disk *d, int wait, int64_t deadline_ms);
void disk_buf_put(struct disk *d, void *buf);
/* buf cannot be reused (a send may still read it): it is left where it is
 * and a new buffer takes its place in the pool. */
void disk_buf_abandon(struct disk *d, void *buf);
/* Queue a request; r->cb runs on the disk thread when it completes. */
void disk_submit(struct disk *d, struct disk_req *r);
/* Do a request now on the caller's thread (pread/pwrite), counted as the
 * disk's like any other, then r->cb, also on the caller's thread. For
 * page-cache I/O of a few sectors: through the disk thread it would cost two
 * thread wakeups (submit, completion), more than the copy itself, and the
 * kernel runs a buffered aio synchronously in io_submit anyway. */
void disk_run_now(struct disk *d, struct disk_req *r);
void disk_get_counters(struct disk *d, struct disk_counters *c);

#endif
