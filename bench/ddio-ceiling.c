/* ddio-ceiling: the storage ceiling for the benchmark. Reads or writes one
 * file sequentially with O_DIRECT, large blocks and a deep libaio queue
 * (QD requests in flight), the best a single stream can get from the device
 * through the file system. The benchmark reports every method as a ratio to
 * this number, measured in the same run on a file of the same size in the
 * same directory.
 *
 * usage: ddio-ceiling [-s SIZE_MiB] [-b BLOCK_KiB] [-q QD] [-r|-w] FILE
 *
 * The submission loop follows fio's libaio engine: io_submit may take fewer
 * iocbs than offered (the rest stay queued), -EAGAIN means "reap something
 * first", a completion shorter than asked (not at end of file) is resubmitted
 * for the remainder, and io_getevents is restarted after EINTR.
 *
 * Output: a human line, then one machine-readable line
 *   ceiling,OP,MiB,block_KiB,qd,seconds,MiB/s,FILE
 * Exit status 0 on success, 1 on an I/O error, 2 on bad usage, 3 when the
 * file system refuses O_DIRECT (or the file cannot be opened at all).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <libaio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ALIGN 4096

struct slot {
    struct iocb cb;
    unsigned char *buf;
    long long off;          /* file offset of the current request */
    size_t len;             /* bytes still to transfer for it */
    size_t done;            /* bytes of it already transferred */
    int busy;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: ddio-ceiling [-s SIZE_MiB] [-b BLOCK_KiB] [-q QUEUE_DEPTH] [-r|-w] FILE\n"
            "  -s  bytes to transfer, in MiB (write: required unless the file exists;\n"
            "      read: default the whole file)\n"
            "  -b  request size in KiB, a multiple of 4 (default 1024)\n"
            "  -q  requests in flight (default 16)\n"
            "  -r  read (default)    -w  write, then fsync (included in the time)\n"
            "Prints a human line and 'ceiling,OP,MiB,block_KiB,qd,seconds,MiB/s,FILE'.\n");
}

int main(int argc, char **argv)
{
    long long size_mib = -1;
    long block_kib = 1024, qd = 16;
    int writing = 0, c;
    while ((c = getopt(argc, argv, "s:b:q:rwh")) != -1) {
        switch (c) {
        case 's': size_mib = atoll(optarg); break;
        case 'b': block_kib = atol(optarg); break;
        case 'q': qd = atol(optarg); break;
        case 'r': writing = 0; break;
        case 'w': writing = 1; break;
        default: usage(); return 2;
        }
    }
    if (optind != argc - 1 || block_kib <= 0 || block_kib % 4 != 0 || qd <= 0 || qd > 4096
        || (size_mib != -1 && size_mib <= 0)) {
        usage();
        return 2;
    }
    const char *path = argv[optind];
    size_t bs = (size_t) block_kib * 1024;

    int flags = (writing ? O_WRONLY | O_CREAT : O_RDONLY) | O_DIRECT;
    int fd = open(path, flags, 0644);
    if (fd < 0) {
        int e = errno;
        if (e == EINVAL) {
            /* Distinguish "no O_DIRECT here" from other EINVALs. */
            int fd2 = open(path, flags & ~O_DIRECT, 0644);
            if (fd2 >= 0) {
                close(fd2);
                fprintf(stderr,
                        "ddio-ceiling: %s: the file system refuses O_DIRECT (tmpfs, some "
                        "FUSE/overlay mounts); no ceiling can be measured here. Put the file "
                        "on a block-device file system.\n", path);
                return 3;
            }
        }
        fprintf(stderr, "ddio-ceiling: open %s: %s\n", path, strerror(e));
        return 3;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        perror("ddio-ceiling: fstat");
        return 1;
    }
    long long total;
    if (size_mib > 0)
        total = size_mib << 20;
    else if (sb.st_size > 0)
        total = sb.st_size;
    else {
        fprintf(stderr, "ddio-ceiling: %s is empty: give the size with -s\n", path);
        return 2;
    }
    if (!writing && total > sb.st_size) {
        fprintf(stderr, "ddio-ceiling: %s has only %lld bytes; reading those\n", path,
                (long long) sb.st_size);
        total = sb.st_size;
    }
    long long fsize = writing ? total : (long long) sb.st_size;

    io_context_t ctx = 0;
    int rc = io_setup((int) qd, &ctx);
    if (rc < 0) {
        fprintf(stderr, "ddio-ceiling: io_setup(%ld): %s%s\n", qd, strerror(-rc),
                rc == -EAGAIN ? " (raise /proc/sys/fs/aio-max-nr or lower -q)" : "");
        return 1;
    }
    struct slot *slots = calloc((size_t) qd, sizeof(*slots));
    struct iocb **pend = calloc((size_t) qd, sizeof(*pend));
    struct io_event *ev = calloc((size_t) qd, sizeof(*ev));
    if (!slots || !pend || !ev) {
        fprintf(stderr, "ddio-ceiling: out of memory\n");
        return 1;
    }
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (long i = 0; i < qd; i++) {
        if (posix_memalign((void **) &slots[i].buf, ALIGN, bs) != 0) {
            fprintf(stderr, "ddio-ceiling: cannot allocate %ld aligned buffers of %zu bytes\n",
                    qd, bs);
            return 1;
        }
        /* Non-zero, non-repeating content for writes (no zero-page tricks). */
        for (size_t b = 0; b < bs; b += 8) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            memcpy(slots[i].buf + b, &x, 8);
        }
    }

    long long next = 0;         /* next file offset to hand out */
    long long moved = 0;        /* bytes completed */
    int inflight = 0;           /* submitted, not yet completed */
    int npend = 0;              /* prepared, not yet accepted by io_submit */
    int eof = 0, err = 0, idle_waits = 0;
    double t0 = now();
    while (!err) {
        /* Fill free slots with new requests. */
        for (long i = 0; i < qd && next < total && !eof; i++) {
            struct slot *s = &slots[i];
            if (s->busy)
                continue;
            s->off = next;
            s->len = (size_t) (total - next < (long long) bs ? total - next : (long long) bs);
            /* O_DIRECT needs aligned lengths; a read of the unaligned tail is
             * rounded up (the kernel returns the short count at EOF). */
            size_t ask = (s->len + ALIGN - 1) / ALIGN * ALIGN;
            if (writing && ask != s->len) {
                fprintf(stderr, "ddio-ceiling: write size must be a multiple of 4 KiB\n");
                err = 1;
                break;
            }
            s->done = 0;
            s->busy = 1;
            next += (long long) s->len;
            if (writing)
                io_prep_pwrite(&s->cb, fd, s->buf, ask, s->off);
            else
                io_prep_pread(&s->cb, fd, s->buf, ask, s->off);
            s->cb.data = s;
            pend[npend++] = &s->cb;
        }
        if (err)
            break;
        /* Submit what is pending; a partial submit leaves the rest queued. */
        while (npend > 0) {
            rc = io_submit(ctx, npend, pend);
            if (rc > 0) {
                idle_waits = 0;
                inflight += rc;
                memmove(pend, pend + rc, sizeof(*pend) * (size_t) (npend - rc));
                npend -= rc;
                continue;
            }
            if (rc == -EAGAIN || rc == 0) {
                if (inflight == 0) {        /* nothing to reap: back off a moment */
                    if (++idle_waits > 10000) {
                        fprintf(stderr, "ddio-ceiling: io_submit keeps returning EAGAIN with "
                                "nothing in flight (10 s); giving up\n");
                        err = 1;
                        break;
                    }
                    usleep(1000);
                    continue;
                }
                break;                      /* reap below, then try again */
            }
            if (rc == -EINTR)
                continue;
            fprintf(stderr, "ddio-ceiling: io_submit: %s%s\n", strerror(-rc),
                    rc == -EINVAL ? " (misaligned O_DIRECT request?)" : "");
            err = 1;
            break;
        }
        if (err || (inflight == 0 && npend == 0))
            break;
        if (inflight == 0)
            continue;
        rc = io_getevents(ctx, 1, inflight, ev, NULL);
        if (rc == -EINTR)
            continue;
        if (rc < 0) {
            fprintf(stderr, "ddio-ceiling: io_getevents: %s\n", strerror(-rc));
            err = 1;
            break;
        }
        for (int k = 0; k < rc; k++) {
            struct slot *s = ev[k].data;
            long res = (long) ev[k].res;
            inflight--;
            if (res < 0) {
                fprintf(stderr, "ddio-ceiling: %s at offset %lld: %s\n",
                        writing ? "write" : "read", s->off + (long long) s->done,
                        strerror((int) -res));
                err = 1;
                continue;
            }
            size_t want = s->len - s->done;
            size_t got = (size_t) res < want ? (size_t) res : want;
            s->done += got;
            moved += (long long) got;
            if (s->done >= s->len) {
                s->busy = 0;
                continue;
            }
            /* Short completion. At EOF on a read: stop handing out more. */
            if (!writing && s->off + (long long) s->done >= fsize) {
                eof = 1;
                s->busy = 0;
                continue;
            }
            if (res == 0) {
                fprintf(stderr, "ddio-ceiling: zero-byte %s at offset %lld\n",
                        writing ? "write" : "read", s->off + (long long) s->done);
                err = 1;
                continue;
            }
            if (s->done % ALIGN != 0) {
                fprintf(stderr, "ddio-ceiling: unaligned short %s (%zu of %zu bytes) at "
                        "offset %lld cannot be resumed with O_DIRECT\n",
                        writing ? "write" : "read", s->done, s->len, s->off);
                err = 1;
                continue;
            }
            /* Resubmit the remainder of this request. */
            size_t rest = s->len - s->done, ask = (rest + ALIGN - 1) / ALIGN * ALIGN;
            if (writing)
                io_prep_pwrite(&s->cb, fd, s->buf + s->done, ask, s->off + (long long) s->done);
            else
                io_prep_pread(&s->cb, fd, s->buf + s->done, ask, s->off + (long long) s->done);
            s->cb.data = s;
            pend[npend++] = &s->cb;
        }
    }
    /* Drain anything still in flight after an error. */
    while (inflight > 0) {
        rc = io_getevents(ctx, 1, inflight, ev, NULL);
        if (rc == -EINTR)
            continue;
        if (rc < 0)
            break;
        inflight -= rc;
    }
    if (!err && writing && fsync(fd) != 0) {
        perror("ddio-ceiling: fsync");
        err = 1;
    }
    double t1 = now();
    io_destroy(ctx);
    close(fd);
    if (err)
        return 1;
    double secs = t1 - t0, mib = (double) moved / 1048576.0;
    printf("ddio-ceiling: %s %.1f MiB of %s, %ld KiB requests, QD %ld, O_DIRECT: "
           "%.3f s, %.1f MiB/s\n", writing ? "wrote" : "read", mib, path, block_kib, qd, secs,
           mib / secs);
    printf("ceiling,%s,%.1f,%ld,%ld,%.4f,%.2f,%s\n", writing ? "write" : "read", mib, block_kib,
           qd, secs, mib / secs, path);
    return 0;
}
