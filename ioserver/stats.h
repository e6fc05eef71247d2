/* Server counters: cumulative since start, and the last collective's. */
#ifndef DDIO_SRV_STATS_H
#define DDIO_SRV_STATS_H

#include <pthread.h>
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
};

struct srv_stats {
    pthread_mutex_t mu;
    uint64_t xfers, coll_xfers, xfer_errors;
    uint64_t blocks_read, blocks_written, bytes_read, bytes_written;
    uint64_t nonconsec, desc_bytes;
    uint64_t connections, connections_total;
    uint64_t opens, locks;
    int have_last;
    struct xfer_counters last;   /* last collective */
};

void stats_init(struct srv_stats *s);
void stats_destroy(struct srv_stats *s);
void stats_xfer(struct srv_stats *s, const struct xfer_counters *c, int collective, int failed);
void stats_conn(struct srv_stats *s, int delta);
void stats_bump(struct srv_stats *s, uint64_t *field);
/* Fill a STATS reply; free with ddio_stats_r_free. 0 or -ENOMEM. */
int stats_snapshot(struct srv_stats *s, struct ddio_stats_r *r);

#endif
