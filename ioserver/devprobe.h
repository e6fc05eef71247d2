/* How fast a server's disks take a sequential stream: measured once, when
 * a --replacement server starts on empty roots (the one time writing a
 * scratch file costs nothing), so `ddio rebuild` can pace its copy at a
 * quarter of it by default (OPERATIONS.md "Replacing a failed server"). */
#ifndef DDIO_DEVPROBE_H
#define DDIO_DEVPROBE_H

#include <stdint.h>

struct server;

/* srv->device_bps: with --throttle-mbps the throttle times the disks (the
 * emulated device); else each root written for at most ~0.5 s (up to 128
 * MiB, O_DIRECT where the file system allows it, then fdatasync), the
 * rates summed over the disks. 0 when not a replacement or it failed. */
void devprobe_run(struct server *srv);

/* one directory's sequential write rate in bytes a second, writing a
 * scratch file there (removed): > 0, or 0 when it could not be measured */
uint64_t devprobe_dir_bps(const char *dir, int64_t budget_ms, uint64_t max_bytes);

#endif
