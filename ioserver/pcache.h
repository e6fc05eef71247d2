/* The page-cache policy of the disk engine: which block I/O goes through a
 * datafile's buffered twin descriptor (the page cache) and which through
 * its O_DIRECT descriptor, and how much of a range the page cache holds.
 * docs/DESIGN.md "Hot data: the page cache" says why. */
#ifndef DDIO_SRV_PCACHE_H
#define DDIO_SRV_PCACHE_H

#include <stdint.h>

/* I/O of at most this many bytes of a block always goes through the page
 * cache (also with --page-cache off): metadata-sized calls of HDF5 and
 * PnetCDF would otherwise cost a device access each. */
#define PCACHE_SMALL_IO 65536u

/* One block request to decide. */
struct pcache_ask {
    int enabled;                 /* --page-cache on */
    int twin;                    /* the datafile has a buffered twin (O_DIRECT root) */
    int collective;              /* a collective stream (engine stream_is_collective:
                                  * several ranks, or a long plain-range part) */
    int write;
    uint64_t len, block;         /* bytes of this request; the block size */
    int fd;                      /* for the residency check: the twin */
    uint64_t off;                /* datafile offset of the request */
};

/* 1: the twin (page cache), 0: O_DIRECT. Independent I/O of any size uses
 * the page cache; a collective write never does (a large stream must not
 * evict everything, and would copy twice); a collective read does only
 * when every page of its range is resident (pcache_resident), so data
 * written or read before is served from memory and cold streams stay
 * disk-directed. */
int pcache_choose(const struct pcache_ask *a);

/* Is every page of [off, off + len) of fd in the page cache? 1 yes, 0 no
 * (or unknown: the check failed). cachestat(2) (Linux 6.5), else mincore
 * on a mapping of the range. */
int pcache_resident(int fd, uint64_t off, uint64_t len);

#endif
