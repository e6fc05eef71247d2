/* When a contiguous part is a stream (ddio_stream.c): the length from which
 * a collective's plain-range part (one rank's one range) goes the sorted
 * O_DIRECT way on the servers rather than through the page cache, and is
 * no longer moved by a same-host rank itself. The driver and the servers
 * ask the same function, so both take the same side. */
#ifndef DDIO_STREAM_H
#define DDIO_STREAM_H

#include <stdint.h>

/* at least this, whatever the node's memory */
#define DDIO_STREAM_MIN_FLOOR (16u << 20)

/* DDIO_STREAM_MIN (bytes, k/m/g suffixes) if set and valid, else 1/64 of
 * the node's memory (384 MiB on 24 GiB), never below the floor. Read once. */
uint64_t ddio_stream_min(void);

#endif
