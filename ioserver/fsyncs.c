/* Several fsyncs at once (fsyncs.h). One io_context per thread that asks,
 * made at its first call and kept: io_setup and io_destroy cost more than
 * the fsyncs they would save. */
#include <errno.h>
#include <libaio.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "fsyncs.h"

#define FSYNCS_BATCH 32

static pthread_key_t ctx_key;
static pthread_once_t ctx_once = PTHREAD_ONCE_INIT;
static int no_aio;              /* atomic: in turn from now on (tests, or no key) */

static void ctx_free(void *p)
{
    io_destroy((io_context_t)p);
}

static void ctx_key_make(void)
{
    if (pthread_key_create(&ctx_key, ctx_free))
        __atomic_store_n(&no_aio, 1, __ATOMIC_RELAXED);
}

static io_context_t thread_ctx(void)
{
    pthread_once(&ctx_once, ctx_key_make);
    if (__atomic_load_n(&no_aio, __ATOMIC_RELAXED))
        return 0;
    io_context_t ctx = pthread_getspecific(ctx_key);
    if (!ctx) {
        /* (EAGAIN: the host's aio-max-nr is used up; this call in turn) */
        if (io_setup(FSYNCS_BATCH, &ctx))
            return 0;
        if (pthread_setspecific(ctx_key, ctx)) {
            io_destroy(ctx);
            return 0;
        }
    }
    return ctx;
}

static void one(struct fsync_op *op)
{
    int r = op->data_only ? fdatasync(op->fd) : fsync(op->fd);
    op->rc = r ? -errno : 0;
}

/* the submitted ops' completions; each op's rc from its event */
static int reap(io_context_t ctx, int n)
{
    struct io_event ev[FSYNCS_BATCH];
    for (int got = 0; got < n;) {
        /* no deadline: each is an fsync, which has none either */
        int r = io_getevents(ctx, 1, n - got, ev, NULL);
        if (r == -EINTR)
            continue;
        if (r < 0)
            return r;
        for (int i = 0; i < r; i++) {
            struct fsync_op *op = ev[i].data;
            op->rc = (long)ev[i].res < 0 ? (int)(long)ev[i].res : 0;
        }
        got += r;
    }
    return 0;
}

/* ops[0..n), n <= FSYNCS_BATCH: submitted, what is not taken done in turn */
static void batch(io_context_t ctx, struct fsync_op *ops, int n)
{
    struct iocb cb[FSYNCS_BATCH], *cbs[FSYNCS_BATCH];
    for (int i = 0; i < n; i++) {
        if (ops[i].data_only)
            io_prep_fdsync(&cb[i], ops[i].fd);
        else
            io_prep_fsync(&cb[i], ops[i].fd);
        cb[i].data = &ops[i];
        cbs[i] = &cb[i];
    }
    int sent = 0;
    while (sent < n) {
        int r = io_submit(ctx, n - sent, cbs + sent);
        if (r > 0) {
            sent += r;
            continue;
        }
        /* EINVAL (no asynchronous fsync: before Linux 4.18, or this
         * file's kind), EAGAIN and the like: the rest in turn, where the
         * one refused gets its own fsync's answer */
        break;
    }
    for (int i = sent; i < n; i++)
        one(&ops[i]);
    if (sent && reap(ctx, sent) < 0) {
        /* lost track (cannot happen but for a bad ctx): io_destroy waits
         * for what is in flight, so no stale event reaches a later call */
        io_destroy(ctx);
        pthread_setspecific(ctx_key, NULL);
        for (int i = 0; i < sent; i++)
            one(&ops[i]);
    }
}

void fsyncs_force_serial(int on)
{
    pthread_once(&ctx_once, ctx_key_make);
    __atomic_store_n(&no_aio, on, __ATOMIC_RELAXED);
}

int fsyncs_run(struct fsync_op *ops, int n)
{
    for (int i = 0; i < n; i += FSYNCS_BATCH) {
        int k = n - i < FSYNCS_BATCH ? n - i : FSYNCS_BATCH;
        io_context_t ctx = k > 1 ? thread_ctx() : 0;
        if (ctx)
            batch(ctx, ops + i, k);
        else
            for (int j = 0; j < k; j++)
                one(&ops[i + j]);
    }
    for (int i = 0; i < n; i++)
        if (ops[i].rc)
            return ops[i].rc;
    return 0;
}
