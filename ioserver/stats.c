/* Server counters. A single mutex: counters change once per XFER or
 * connection, never per block, so contention is negligible. */
#include "stats.h"
#include "sums.h"

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "ddio_net.h"

void stats_init(struct srv_stats *s)
{
    memset(s, 0, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    s->start_ms = ddio_now_ms();
}

void stats_destroy(struct srv_stats *s)
{
    pthread_mutex_destroy(&s->mu);
}

void stats_xfer(struct srv_stats *s, const struct xfer_counters *c, int collective, int failed)
{
    pthread_mutex_lock(&s->mu);
    s->xfers++;
    if (collective)
        s->coll_xfers++;
    if (failed)
        s->xfer_errors++;
    s->blocks_read += c->blocks_read;
    s->blocks_written += c->blocks_written;
    s->bytes_read += c->bytes_sent;
    s->bytes_written += c->bytes_recv;
    s->nonconsec += c->nonconsec;
    s->desc_bytes += c->desc_bytes;
    s->disk_us += c->disk_us;
    s->net_us += c->net_us;
    s->read_cache_bytes += c->read_cache_bytes;
    s->read_disk_bytes += c->read_disk_bytes;
    s->write_cache_bytes += c->write_cache_bytes;
    s->write_direct_bytes += c->write_direct_bytes;
    s->read_mapped_bytes += c->read_mapped_bytes;
    if (collective) {
        s->last = *c;
        s->have_last = 1;
    }
    pthread_mutex_unlock(&s->mu);
}

void stats_conn(struct srv_stats *s, int delta)
{
    pthread_mutex_lock(&s->mu);
    s->connections += (uint64_t)(int64_t)delta;
    if (delta > 0)
        s->connections_total++;
    pthread_mutex_unlock(&s->mu);
}

void stats_bump(struct srv_stats *s, uint64_t *field)
{
    pthread_mutex_lock(&s->mu);
    (*field)++;
    pthread_mutex_unlock(&s->mu);
}

void stats_request(struct srv_stats *s, uint16_t type)
{
    if (type < DDIO_T_MAX)
        atomic_fetch_add_explicit(&s->requests[type], 1, memory_order_relaxed);
}

void stats_inflight(struct srv_stats *s, int delta)
{
    pthread_mutex_lock(&s->mu);
    s->inflight += (uint64_t)(int64_t)delta;
    pthread_mutex_unlock(&s->mu);
}

void stats_ucx(struct srv_stats *s, uint64_t put, uint64_t get, uint64_t staged)
{
    pthread_mutex_lock(&s->mu);
    s->ucx_put_bytes += put;
    s->ucx_get_bytes += get;
    s->ucx_staged_bytes += staged;
    pthread_mutex_unlock(&s->mu);
}

/* the reply grows as keys are added: per-disk and per-root keys make its
 * length depend on the configuration */
static int add(struct ddio_stats_r *r, const char *key, uint64_t v)
{
    if ((r->n & (r->n - 1)) == 0 && r->n >= 32) {   /* full at 32, 64, 128, ... */
        struct ddio_kv *kv = realloc(r->kv, 2 * (size_t)r->n * sizeof(*kv));
        if (!kv)
            return -ENOMEM;
        r->kv = kv;
    }
    char *k = strdup(key);
    if (!k)
        return -ENOMEM;
    r->kv[r->n].key = k;
    r->kv[r->n].val = v;
    r->n++;
    return 0;
}

/* "req.PSTAT" and so on: the types received at least once */
static int add_requests(struct ddio_stats_r *r, struct srv_stats *s)
{
    int rc = 0;
    for (uint16_t t = 1; t < DDIO_T_MAX; t++) {
        uint64_t n = atomic_load_explicit(&s->requests[t], memory_order_relaxed);
        char k[64];
        if (!n)
            continue;
        snprintf(k, sizeof(k), "req.%s", ddio_type_name(t));
        rc |= add(r, k, n);
    }
    return rc;
}

/* bytes the server has allocated and not freed (all malloc arenas): the
 * figure that must not grow under load; RSS also counts freed memory the
 * arenas keep */
static uint64_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
}

/* "disk.3.busy_us" */
static int addi(struct ddio_stats_r *r, const char *kind, int i, const char *key, uint64_t v)
{
    char k[64];
    snprintf(k, sizeof(k), "%s.%d.%s", kind, i, key);
    return add(r, k, v);
}

/* per-disk counters and the roots' space: outside the counters' mutex
 * (statvfs may block on a slow file system) */
static int add_env(struct ddio_stats_r *r, const struct stats_env *env)
{
    int rc = add(r, "ndisks", (uint64_t)env->ndisks) | add(r, "block_size", env->block_size)
        | add(r, "checksums", (uint64_t)env->checksums)
        | add(r, "rebuild_unbuilt", env->rb_unbuilt) | add(r, "rebuild_done", env->rb_done)
        | add(r, "rebuild_adopt_pending", env->rb_pending)
        | add(r, "rebuild_bytes_done", env->rb_bytes_done)
        | add(r, "rebuild_bytes_total", env->rb_bytes_total)
        | add(r, "rebuild_rate", env->rb_rate)
        | add(r, "rebuild_report_age_ms", env->rb_report_age_ms)
        | add(r, "missed_files", env->missed_files)
        | add(r, "changed_unconfirmed", env->changed_files)
        | add(r, "indoubt_files", env->indoubt_files)
        | add(r, "device_bps", env->device_bps);
    for (int i = 0; i < env->ndisks; i++) {
        const struct stats_disk *d = &env->disks[i];
        rc |= addi(r, "disk", i, "bytes_read", d->bytes_read)
            | addi(r, "disk", i, "bytes_written", d->bytes_written)
            | addi(r, "disk", i, "ops", d->ops) | addi(r, "disk", i, "busy_us", d->busy_us)
            | addi(r, "disk", i, "queue", d->depth);
    }
    for (int i = 0; i < env->nroots; i++) {
        struct statvfs v;
        if (statvfs(env->roots[i], &v) != 0)
            continue;             /* no figure rather than a wrong one */
        rc |= addi(r, "root", i, "free_bytes", (uint64_t)v.f_bavail * v.f_frsize)
            | addi(r, "root", i, "total_bytes", (uint64_t)v.f_blocks * v.f_frsize);
    }
    return rc;
}

int stats_snapshot(struct srv_stats *s, const struct stats_env *env, struct ddio_stats_r *r)
{
    r->n = 0;
    r->kv = calloc(32, sizeof(*r->kv));
    if (!r->kv)
        return -ENOMEM;
    pthread_mutex_lock(&s->mu);
    const struct xfer_counters *l = &s->last;
    int rc = add(r, "xfers", s->xfers) | add(r, "coll_xfers", s->coll_xfers)
        | add(r, "xfer_errors", s->xfer_errors)
        | add(r, "blocks_read", s->blocks_read) | add(r, "blocks_written", s->blocks_written)
        | add(r, "bytes_read", s->bytes_read) | add(r, "bytes_written", s->bytes_written)
        | add(r, "nonconsec", s->nonconsec) | add(r, "desc_bytes", s->desc_bytes)
        | add(r, "disk_us", s->disk_us) | add(r, "net_us", s->net_us)
        | add(r, "read_cache_bytes", s->read_cache_bytes)
        | add(r, "read_disk_bytes", s->read_disk_bytes)
        | add(r, "read_mapped_bytes", s->read_mapped_bytes)
        | add(r, "write_cache_bytes", s->write_cache_bytes)
        | add(r, "write_direct_bytes", s->write_direct_bytes)
        | add(r, "connections", s->connections)
        | add(r, "connections_total", s->connections_total)
        | add(r, "opens", s->opens) | add(r, "locks", s->locks)
        | add(r, "local_handovers", s->local_handovers)
        | add(r, "replayed", s->replayed) | add(r, "copy_reads", s->copy_reads)
        | add(r, "epoch_refused", s->epoch_refused) | add(r, "out_refused", s->out_refused)
        | add(r, "auth_refused", s->auth_refused) | add(r, "access_denied", s->access_denied)
        | add(r, "local_read_bytes", s->local_read_bytes)
        | add(r, "local_write_bytes", s->local_write_bytes)
        | add(r, "heap_in_use", heap_in_use())
        | add(r, "inflight", s->inflight)
        | add(r, "ucx_eps", s->ucx_eps) | add(r, "ucx_put_bytes", s->ucx_put_bytes)
        | add(r, "ucx_get_bytes", s->ucx_get_bytes)
        | add(r, "ucx_staged_bytes", s->ucx_staged_bytes)
        | add(r, "uptime_ms", (uint64_t)(ddio_now_ms() - s->start_ms))
        | add(r, "sums_verified", (uint64_t)atomic_load(&sums_ctr.verified))
        | add(r, "sums_bad", (uint64_t)atomic_load(&sums_ctr.bad))
        | add(r, "sums_repaired", (uint64_t)atomic_load(&sums_ctr.repaired))
        | add(r, "sums_unknown", (uint64_t)atomic_load(&sums_ctr.unknown));
    rc |= add_requests(r, s);
    if (s->have_last)
        rc |= add(r, "last.nparticipants", l->nparticipants)
            | add(r, "last.desc_bytes", l->desc_bytes) | add(r, "last.blocks", l->blocks)
            | add(r, "last.blocks_read", l->blocks_read)
            | add(r, "last.blocks_written", l->blocks_written)
            | add(r, "last.nonconsec", l->nonconsec)
            | add(r, "last.bytes_sent", l->bytes_sent)
            | add(r, "last.bytes_recv", l->bytes_recv)
            | add(r, "last.wait_us", l->wait_us) | add(r, "last.io_us", l->io_us)
            | add(r, "last.sorted", l->sorted)
            | add(r, "last.out_of_order", l->out_of_order)
            | add(r, "last.disk_us", l->disk_us) | add(r, "last.net_us", l->net_us);
    pthread_mutex_unlock(&s->mu);
    if (env)
        rc |= add_env(r, env);
    return rc ? -ENOMEM : 0;
}

void stats_local(struct srv_stats *s, uint64_t read, uint64_t written)
{
    pthread_mutex_lock(&s->mu);
    s->local_read_bytes += read;
    s->local_write_bytes += written;
    pthread_mutex_unlock(&s->mu);
}
