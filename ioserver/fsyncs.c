/* Several fsyncs at once (fsyncs.h). A few io_contexts shared by the
 * process, made as needed and kept: io_setup costs more than the fsyncs it
 * saves, and one per request thread (those come and go, hundreds with as
 * many clients) would use up the host's aio-max-nr, which the disk
 * engines of servers started later need. A sync that finds none free does
 * its fsyncs in turn. */
#include <errno.h>
#include <libaio.h>
#include <pthread.h>
#include <unistd.h>

#include "fsyncs.h"

#define FSYNCS_BATCH 32
#define FSYNCS_CTXS 16

static pthread_mutex_t ctx_mu = PTHREAD_MUTEX_INITIALIZER;
static io_context_t ctx_free[FSYNCS_CTXS];
static int nfree, nmade;
static int no_aio;              /* under ctx_mu: in turn from now on (tests) */

static io_context_t ctx_take(void)
{
    io_context_t ctx = 0;
    pthread_mutex_lock(&ctx_mu);
    if (!no_aio && nfree)
        ctx = ctx_free[--nfree];
    else if (!no_aio && nmade < FSYNCS_CTXS) {
        /* (EAGAIN: the host's aio-max-nr is used up) */
        if (io_setup(FSYNCS_BATCH, &ctx) == 0)      /* (else ctx stays 0) */
            nmade++;
    }
    pthread_mutex_unlock(&ctx_mu);
    return ctx;
}

/* lost: destroyed (it waits for what is in flight, so no stale event
 * reaches a later call) */
static void ctx_give(io_context_t ctx, int lost)
{
    if (lost)
        io_destroy(ctx);
    pthread_mutex_lock(&ctx_mu);
    if (lost)
        nmade--;
    else
        ctx_free[nfree++] = ctx;
    pthread_mutex_unlock(&ctx_mu);
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

/* ops[0..n), n <= FSYNCS_BATCH: submitted, what is not taken done in
 * turn; 1 if ctx lost track of its events (cannot happen but for a bad
 * ctx: the caller destroys it) */
static int batch(io_context_t ctx, struct fsync_op *ops, int n)
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
        for (int i = 0; i < sent; i++)
            one(&ops[i]);
        return 1;
    }
    return 0;
}

void fsyncs_force_serial(int on)
{
    pthread_mutex_lock(&ctx_mu);
    no_aio = on;
    pthread_mutex_unlock(&ctx_mu);
}

int fsyncs_contexts(void)
{
    pthread_mutex_lock(&ctx_mu);
    int n = nmade;
    pthread_mutex_unlock(&ctx_mu);
    return n;
}

int fsyncs_run(struct fsync_op *ops, int n)
{
    for (int i = 0; i < n; i += FSYNCS_BATCH) {
        int k = n - i < FSYNCS_BATCH ? n - i : FSYNCS_BATCH;
        io_context_t ctx = k > 1 ? ctx_take() : 0;
        if (ctx)
            ctx_give(ctx, batch(ctx, ops + i, k));
        else
            for (int j = 0; j < k; j++)
                one(&ops[i + j]);
    }
    for (int i = 0; i < n; i++)
        if (ops[i].rc)
            return ops[i].rc;
    return 0;
}
