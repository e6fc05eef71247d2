/* Server counters: cumulative since start, and the last collective's. */
#ifndef DDIO_SRV_STATS_H
#define DDIO_SRV_STATS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ddio_proto.h"

/* one XFER's counters (reported in DONE and accumulated here) */
struct xfer_counters {
    uint64_t nparticipants;
    uint64_t desc_bytes;
    uint64_t blocks;          /* blocks planned */
    uint64_t blocks_read;
    uint64_t blocks_written;
    uint64_t nonconsec;
    uint64_t bytes_sent;      /* PUT data, all participants */
    uint64_t bytes_recv;      /* DATA, all participants */
    uint64_t wait_us;
    uint64_t io_us;
    uint64_t sorted;
    uint64_t out_of_order;    /* collectives: blocks issued below the previous
                               * one's physical address on the same disk */
    /* where the pass's time went, summed over blocks (they overlap, so each
     * may exceed io_us): */
    uint64_t disk_us;         /* disk requests, submit to completion */
    uint64_t net_us;          /* writes: first GET to last DATA of a block;
                               * reads: waiting for a client to take PUT data */
    /* datafile bytes moved, by path (pcache.h): through the page cache
     * (buffered descriptor) or O_DIRECT; reads include read-modify-write */
    uint64_t read_cache_bytes, read_disk_bytes, write_cache_bytes, write_direct_bytes;
    uint64_t read_mapped_bytes;   /* of read_cache_bytes: sent from a mapping of
                                   * the cached pages, never copied by the server */
};

struct srv_stats {
    pthread_mutex_t mu;
    uint64_t xfers, coll_xfers, xfer_errors;
    uint64_t blocks_read, blocks_written, bytes_read, bytes_written;
    uint64_t nonconsec, desc_bytes;
    uint64_t disk_us, net_us;
    uint64_t read_cache_bytes, read_disk_bytes, write_cache_bytes, write_direct_bytes;
    uint64_t read_mapped_bytes;
    uint64_t connections, connections_total;
    uint64_t opens, locks;
    uint64_t local_handovers;    /* LOCAL: files handed to same-host readers */
    uint64_t replayed;           /* resent writes answered from replay.h */
    uint64_t copy_reads;         /* reads served from a mirror (DDIO_XF_COPY): a
                                  * lost server's part */
    uint64_t epoch_refused;      /* requests about mirrored files refused for
                                  * carrying another membership epoch */
    uint64_t out_refused;        /* ... refused because this server is out */
    uint64_t auth_refused;       /* connections whose AUTH was refused */
    uint64_t access_denied;      /* requests refused by a permission check (access.h) */
    uint64_t local_read_bytes, local_write_bytes;   /* moved by same-host clients
                                                     * themselves (LOCALSTAT) */
    uint64_t inflight;           /* requests running on their own thread now
                                  * (XFER, SETLKW, SYNC, PREALLOC) */
    /* UCX transport: endpoints attached; bytes moved as active messages
     * (put: read data, get: write data); of those, bytes packed through a
     * staging buffer because their pieces were too small to move in place */
    uint64_t ucx_eps, ucx_put_bytes, ucx_get_bytes, ucx_staged_bytes;
    int64_t start_ms;            /* ddio_now_ms() at stats_init: uptime */
    /* requests received, by type (req.NAME): what each client operation
     * costs in round trips; bumped without the mutex, on every request */
    _Atomic uint64_t requests[DDIO_T_MAX];
    int have_last;
    struct xfer_counters last;   /* last collective */
};

void stats_init(struct srv_stats *s);
void stats_destroy(struct srv_stats *s);
void stats_xfer(struct srv_stats *s, const struct xfer_counters *c, int collective, int failed);
void stats_conn(struct srv_stats *s, int delta);
/* bytes a same-host client read and wrote through its own descriptors */
void stats_local(struct srv_stats *s, uint64_t read, uint64_t written);
void stats_bump(struct srv_stats *s, uint64_t *field);
/* one request of type (a DDIO_T_* below DDIO_T_MAX) received */
void stats_request(struct srv_stats *s, uint16_t type);
void stats_inflight(struct srv_stats *s, int delta);
void stats_ucx(struct srv_stats *s, uint64_t put, uint64_t get, uint64_t staged);

/* what the server adds to its counters for `tools/ddio status` */
struct stats_disk {
    uint64_t bytes_read, bytes_written, ops, busy_us, depth;
};
struct stats_env {
    int ndisks;
    const struct stats_disk *disks;   /* ndisks entries */
    int nroots;
    const char *const *roots;         /* storage roots: free space by statvfs */
    uint64_t block_size;
    int checksums;                    /* --checksums on */
    /* a replacement's rebuild (rebuild.h rebuild_counts): files marked
     * unbuilt, files rebuilt since the start, waiting for ADOPT (0/1) */
    uint64_t rb_unbuilt, rb_done, rb_pending;
    /* its client's last PROGRESS (rebuild.h rebuild_progress_get): bytes
     * copied, bytes in all, bytes a second, ms since (total 0: none) */
    uint64_t rb_bytes_done, rb_bytes_total, rb_rate, rb_report_age_ms;
    uint64_t missed_files;            /* notes for members out (missed.h) */
    uint64_t changed_files;           /* own changes not confirmed yet (changed.h) */
    uint64_t indoubt_files;           /* mirrored files in doubt (indoubt.h) */
    uint64_t device_bps;              /* a replacement's disks (devprobe.h) */
};
/* Fill a STATS reply; free with ddio_stats_r_free. 0 or -ENOMEM. env may be
 * NULL (counters only). Keys are listed in docs/PROTOCOL.md (STATS). */
int stats_snapshot(struct srv_stats *s, const struct stats_env *env, struct ddio_stats_r *r);

#endif
