/* The replacement's disks measured at start (devprobe.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "devprobe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "server.h"

#define PROBE_CHUNK (4u << 20)
#define PROBE_MAX   (128ull << 20)
#define PROBE_MS    500

uint64_t devprobe_dir_bps(const char *dir, int64_t budget_ms, uint64_t max_bytes)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/.ddio-devprobe.%d", dir, (int)getpid());
    /* O_DIRECT: the device, not the page cache; a file system without it
     * (tmpfs) is measured through the cache, fdatasync included */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EINVAL)
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return 0;
    unlink(path);       /* gone whatever happens next; the fd keeps it */
    void *buf = NULL;
    uint64_t done = 0;
    if (posix_memalign(&buf, 4096, PROBE_CHUNK) == 0) {
        memset(buf, 0x5a, PROBE_CHUNK);
        int64_t t0 = ddio_now_us();
        while (done < max_bytes && (ddio_now_us() - t0) / 1000 < budget_ms) {
            ssize_t n = pwrite(fd, buf, PROBE_CHUNK, (off_t)done);
            if (n != (ssize_t)PROBE_CHUNK) {
                done = 0;
                break;
            }
            done += PROBE_CHUNK;
        }
        if (done && fdatasync(fd) != 0)
            done = 0;
        int64_t us = ddio_now_us() - t0;
        done = done && us > 0 ? (uint64_t)((double)done * 1e6 / (double)us) : 0;
    }
    free(buf);
    close(fd);
    return done;
}

void devprobe_run(struct server *srv)
{
    const struct srv_config *c = &srv->cfg;
    uint64_t bps = 0;
    if (!c->replacement)
        return;
    if (c->throttle_mibps)
        bps = (uint64_t)c->throttle_mibps * 1048576u * (uint64_t)c->nroots;
    for (int i = 0; !c->throttle_mibps && i < c->nroots; i++) {
        uint64_t d = devprobe_dir_bps(c->roots[i], PROBE_MS, PROBE_MAX);
        if (!d) {
            DDIO_WARN("--replacement: could not measure %s (ddio rebuild's default rate "
                      "stays fixed)", c->roots[i]);
            return;
        }
        bps += d;
    }
    srv->device_bps = bps;
    DDIO_INFO("--replacement: the disks take %.1f MB/s sequentially%s", bps / 1e6,
              c->throttle_mibps ? " (--throttle-mbps)" : "");
}
