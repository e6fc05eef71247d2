/* tools/ddio cp: a local file to ddio:/path and back, striped and parallel.
 *
 * One worker thread per stripe server moves that server's part of a window
 * of the file (ddio_client_{pread,pwrite}_part: one XFER on that server's
 * connection only, so the servers work at the same time), while the main
 * thread reads the next window from the local file (to ddio) or writes the
 * previous one out (from ddio): two windows, so local I/O and the network
 * overlap. A window is a whole number of stripe rows, WINDOW_PER_SERVER
 * bytes per server, so every server gets an equal part of it. (Into an
 * erasure-coded file, one worker writes each window whole.) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddio_cli.h"

#define WINDOW_PER_SERVER (16u << 20)

struct pool {
    struct ddio_cfile *f;
    int write;                /* to ddio */
    uint32_t nk;              /* stripe servers = workers */
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t gen;             /* bumped per window posted */
    char *buf;                /* the posted window */
    size_t len;
    uint64_t off;
    uint32_t busy;            /* workers still on the posted window */
    int stop;
    int err;                  /* first failure, its message */
    char msg[DDIO_CLIENT_MSG_LEN];
};

struct worker {
    struct pool *p;
    uint32_t k;               /* its stripe server, or WHOLE */
};
/* an erasure-coded file's window is written whole, by one worker: a
 * server's part alone covers its groups in part (written to the
 * overlays, and sent to every server of the file once per part) */
#define WHOLE UINT32_MAX

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct pool *p = w->p;
    uint64_t seen = 0;
    char msg[DDIO_CLIENT_MSG_LEN];
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop)
            break;
        seen = p->gen;
        char *buf = p->buf;
        size_t len = p->len;
        uint64_t off = p->off;
        pthread_mutex_unlock(&p->mu);
        ssize_t rc = !p->write ? ddio_client_pread_part(p->f, w->k, buf, len, off, msg, sizeof msg)
            : w->k == WHOLE ? ddio_client_pwrite(p->f, buf, len, off, msg, sizeof msg)
            : ddio_client_pwrite_part(p->f, w->k, buf, len, off, msg, sizeof msg);
        rc = rc < 0 ? rc : 0;
        pthread_mutex_lock(&p->mu);
        if (rc && !p->err) {
            p->err = (int)rc;
            snprintf(p->msg, sizeof p->msg, "%s", msg);
        }
        if (--p->busy == 0)
            pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static void post(struct pool *p, char *buf, size_t len, uint64_t off)
{
    pthread_mutex_lock(&p->mu);
    p->buf = buf;
    p->len = len;
    p->off = off;
    p->busy = p->nk;
    p->gen++;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

/* until every worker is done with the posted window; its error or 0 */
static int wait_window(struct pool *p)
{
    pthread_mutex_lock(&p->mu);
    while (p->busy)
        pthread_cond_wait(&p->cv, &p->mu);
    int rc = p->err;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

static struct worker *pool_start(struct pool *p)
{
    struct worker *w = calloc(p->nk, sizeof(*w));
    p->th = calloc(p->nk, sizeof(*p->th));
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (!w || !p->th)
        return free(w), NULL;
    int whole = p->write && ddio_redundancy_ec_k(ddio_client_file_redundancy(p->f));
    for (uint32_t k = 0; k < p->nk; k++) {
        w[k] = (struct worker){p, whole ? WHOLE : k};
        if (pthread_create(&p->th[k], NULL, worker_main, &w[k])) {
            p->nk = k;            /* stop the ones started */
            return w;
        }
    }
    return w;
}

static void pool_stop(struct pool *p, struct worker *w)
{
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (uint32_t k = 0; p->th && k < p->nk; k++)
        pthread_join(p->th[k], NULL);
    free(p->th);
    free(w);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
}

/* ---- progress ------------------------------------------------------------------ */

struct progress {
    int on;
    double t0, last;
};

static void progress_show(struct progress *pg, uint64_t done, uint64_t total, int final)
{
    double now = cli_now();
    if (!pg->on || (!final && now - pg->last < 0.1))
        return;
    pg->last = now;
    char a[32], b[32];
    int width = 30, fill = total ? (int)((double)done / (double)total * width) : width;
    double mibs = now > pg->t0 ? (double)done / (1 << 20) / (now - pg->t0) : 0;
    fprintf(stderr, "\r[%.*s%.*s] %3d%% %s / %s  %.1f MiB/s   ", fill,
            "##############################", width - fill, "..............................",
            total ? (int)(100.0 * (double)done / (double)total) : 100,
            cli_human(done, a, sizeof a), cli_human(total, b, sizeof b), mibs);
    if (final)
        fputc('\n', stderr);
}

/* ---- local file I/O -------------------------------------------------------------- */

static int pread_full(int fd, char *buf, size_t len, uint64_t off)
{
    while (len) {
        ssize_t n = pread(fd, buf, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;   /* shorter than its size: changed under us */
        buf += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

/* at most this much per pwrite to the local file: a 30 MiB window in one
 * pwrite now and then took 3x as long (300 MiB out of ddio, 12 runs each:
 * 883-2150 MiB/s, 6 below 1.7 GB/s, against 1440-2173 and 1 in 4 MiB
 * pieces; plain dd showed the same with 30 MiB blocks) */
#define LOCAL_WRITE_MAX (4u << 20)

static int pwrite_full(int fd, const char *buf, size_t len, uint64_t off)
{
    while (len) {
        ssize_t n = pwrite(fd, buf, len > LOCAL_WRITE_MAX ? LOCAL_WRITE_MAX : len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        buf += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

/* ---- the copy ---------------------------------------------------------------------- */

struct copy {
    struct cli *o;
    struct ddio_client *cl;
    struct ddio_cfile *f;
    const char *src, *dst;    /* as the user wrote them, for messages */
    int fd;                   /* the local file */
    int stream;               /* out of ddio: a regular file written as write_local says */
    uint64_t dropped;         /* write_local: written back and dropped below this */
    uint64_t size;
    struct pool pool;
    struct progress pg;
    char *buf[2];
    size_t window;
};

/* Out of ddio the local file is written through the page cache, each
 * piece's writeback started as it is written (sync_file_range WRITE) and
 * the pieces STREAM_LAG behind waited for and dropped, then fdatasynced at
 * the end: the copy is durable when it ends, as one into ddio is (its
 * servers sync), the device always has STREAM_LAG bytes queued, and the
 * copy reuses the same few pages instead of asking the kernel for fresh
 * ones, which were much slower here; nothing of it stays in the page
 * cache, as the servers' large writes stream past theirs. Faster than
 * O_DIRECT and than plain buffered writes (docs/PERFORMANCE.md, ddio cp).
 * --buffered: as cp(1), no sync. */
#define STREAM_LAG (16u << 20)

static int write_local(struct copy *c, const char *buf, size_t len, uint64_t off)
{
    if (!c->stream)
        return pwrite_full(c->fd, buf, len, off);
    while (len) {
        size_t n = len > LOCAL_WRITE_MAX ? LOCAL_WRITE_MAX : len;
        int rc = pwrite_full(c->fd, buf, n, off);
        if (rc)
            return rc;
        /* a hint: what it does not start, the waits below and the
         * fdatasync at the end write */
        (void)sync_file_range(c->fd, (off_t)off, (off_t)n, SYNC_FILE_RANGE_WRITE);
        buf += n;
        len -= n;
        off += n;
        if (off - c->dropped <= STREAM_LAG)
            continue;
        uint64_t upto = off - STREAM_LAG;
        /* its error must be taken here: a later fdatasync would not
         * report it again */
        if (sync_file_range(c->fd, (off_t)c->dropped, (off_t)(upto - c->dropped),
                            SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                            SYNC_FILE_RANGE_WAIT_AFTER))
            return -errno;
        (void)posix_fadvise(c->fd, (off_t)c->dropped, (off_t)(upto - c->dropped),
                            POSIX_FADV_DONTNEED);
        c->dropped = upto;
    }
    return 0;
}

static size_t window_of(struct ddio_cfile *f, uint32_t *nk)
{
    struct ddio_stripe s;
    ddio_client_file_stripe(f, &s);
    *nk = s.count;
    uint64_t rows = (WINDOW_PER_SERVER + s.unit - 1) / s.unit;
    return (size_t)(rows * s.unit * s.count);
}

static int to_ddio(struct copy *c)
{
    uint64_t off = 0;
    int cur = 0, rc = 0;
    size_t len = c->size < c->window ? (size_t)c->size : c->window;
    if (len && (rc = pread_full(c->fd, c->buf[0], len, 0)))
        return cli_fail("cp: read %s: %s", c->src, strerror(-rc));
    while (off < c->size) {
        len = c->size - off < c->window ? (size_t)(c->size - off) : c->window;
        post(&c->pool, c->buf[cur], len, off);
        uint64_t next = off + len;
        size_t nlen = c->size - next < c->window ? (size_t)(c->size - next) : c->window;
        int lrc = nlen ? pread_full(c->fd, c->buf[cur ^ 1], nlen, next) : 0;
        if ((rc = wait_window(&c->pool)))
            return cli_fail("cp: write %s: %s", c->dst, c->pool.msg);
        if (lrc)
            return cli_fail("cp: read %s: %s", c->src, strerror(-lrc));
        off = next;
        cur ^= 1;
        progress_show(&c->pg, off, c->size, 0);
    }
    char msg[DDIO_CLIENT_MSG_LEN];
    if ((rc = ddio_client_sync(c->f, msg, sizeof msg)))
        return cli_fail("cp: sync %s: %s", c->dst, msg);
    return 0;
}

static int from_ddio(struct copy *c)
{
    uint64_t off = 0, prev_off = 0;
    size_t prev_len = 0;
    int cur = 0, rc;
    while (off < c->size) {
        size_t len = c->size - off < c->window ? (size_t)(c->size - off) : c->window;
        memset(c->buf[cur], 0, len);   /* holes read as zeros */
        post(&c->pool, c->buf[cur], len, off);
        int lrc = prev_len ? write_local(c, c->buf[cur ^ 1], prev_len, prev_off) : 0;
        if ((rc = wait_window(&c->pool)))
            return cli_fail("cp: read %s: %s", c->src, c->pool.msg);
        if (lrc)
            return cli_fail("cp: write %s: %s", c->dst, strerror(-lrc));
        prev_off = off;
        prev_len = len;
        off += len;
        cur ^= 1;
        progress_show(&c->pg, prev_off, c->size, 0);
    }
    if (prev_len && (rc = write_local(c, c->buf[cur ^ 1], prev_len, prev_off)))
        return cli_fail("cp: write %s: %s", c->dst, strerror(-rc));
    if (!c->o->buffered && c->size && fdatasync(c->fd) && errno != EINVAL)
        return cli_fail("cp: sync %s: %s", c->dst, strerror(errno));
    if (c->stream)              /* its last STREAM_LAG too: nothing of it left cached */
        (void)posix_fadvise(c->fd, 0, 0, POSIX_FADV_DONTNEED);
    return 0;
}

/* the size at the destination must be the source's */
static int verify(struct copy *c, int write)
{
    uint64_t got = 0;
    char msg[DDIO_CLIENT_MSG_LEN];
    if (write) {
        if (ddio_client_size(c->f, &got, msg, sizeof msg))
            return cli_fail("cp: size of %s: %s", c->dst, msg);
    } else {
        struct stat sb;
        if (fstat(c->fd, &sb))
            return cli_fail("cp: %s: %s", c->dst, strerror(errno));
        if (S_ISCHR(sb.st_mode))  /* /dev/null: measures the read side alone */
            return 0;
        got = (uint64_t)sb.st_size;
    }
    if (got != c->size)
        return cli_fail("cp: %s has %" PRIu64 " bytes after the copy, %s has %" PRIu64,
                        c->dst, got, c->src, c->size);
    return 0;
}

/* DST naming a directory gets SRC's last component appended */
static char *dest_name(struct ddio_client *cl, const char *dst, const char *src, int ddio)
{
    char *s = strdup(src), *out = NULL;
    if (!s)
        return NULL;
    const char *base = basename(s);
    int is_dir;
    if (ddio) {
        /* the servers refuse "/d/" (a path names no empty component) */
        char d[4096];
        size_t dl = (size_t)snprintf(d, sizeof d, "%s", dst);
        while (dl > 1 && dl < sizeof d && d[dl - 1] == '/')
            d[--dl] = '\0';
        struct ddio_cstat st;
        char msg[DDIO_CLIENT_MSG_LEN];
        is_dir = ddio_client_stat(cl, d, &st, msg, sizeof msg) == 0 && st.is_dir;
        if (!is_dir && dl < strlen(dst)) {
            free(s);
            return strdup(d);     /* "ddio:/f/" with no directory f: the file f */
        }
        dst = is_dir ? strdup(d) : dst;
        if (!dst)
            return free(s), NULL;
    } else {
        struct stat sb;
        is_dir = stat(dst, &sb) == 0 && S_ISDIR(sb.st_mode);
    }
    size_t l = strlen(dst);
    if (is_dir && asprintf(&out, "%s%s%s", dst, l && dst[l - 1] == '/' ? "" : "/", base) < 0)
        out = NULL;
    else if (!is_dir)
        out = strdup(dst);
    if (ddio && is_dir)
        free((char *)dst);
    free(s);
    return out;
}

static int run_copy(struct copy *c, int write)
{
    uint32_t nk;
    c->window = window_of(c->f, &nk);
    if (write && ddio_redundancy_ec_k(ddio_client_file_redundancy(c->f)))
        nk = 1;                 /* (WHOLE) */
    c->pool = (struct pool){.f = c->f, .write = write, .nk = nk};
    c->buf[0] = malloc(c->window);
    c->buf[1] = malloc(c->window);
    struct worker *w = c->buf[0] && c->buf[1] ? pool_start(&c->pool) : NULL;
    int rc;
    if (!w || c->pool.nk != nk)
        rc = cli_fail("cp: out of memory or threads (%zu-byte windows, %u servers)",
                      c->window, nk);
    else {
        c->pg.t0 = c->pg.last = cli_now();
        rc = write ? to_ddio(c) : from_ddio(c);
    }
    if (w)
        pool_stop(&c->pool, w);
    free(c->buf[0]);
    free(c->buf[1]);
    return rc;
}

int cmd_cp(struct cli *o)
{
    const char *src = o->argv[0], *dst = o->argv[1];
    int sd = strncmp(src, "ddio:", 5) == 0, dd = strncmp(dst, "ddio:", 5) == 0;
    if (sd == dd)
        return cli_usage_error("cp: exactly one of SRC and DST must be a ddio file "
                               "(ddio:/path), got '%s' and '%s'", src, dst);
    struct copy c = {.o = o, .src = src, .fd = -1};
    char msg[DDIO_CLIENT_MSG_LEN], *dpath = NULL;
    int rc = 1;
    c.pg.on = o->progress < 0 ? isatty(2) : o->progress;
    if (!(c.cl = cli_client(o)))
        return 1;
    ddio_client_create_redundancy(c.cl, (uint32_t)o->redundancy);
    double t0 = cli_now();
    if (dd) {                                   /* local -> ddio */
        struct stat sb;
        c.fd = open(src, O_RDONLY | O_CLOEXEC);
        if (c.fd < 0 || fstat(c.fd, &sb)) {
            rc = cli_fail("cp: %s: %s", src, strerror(errno));
            goto out;
        }
        if (!S_ISREG(sb.st_mode)) {
            rc = cli_fail("cp: %s: not a regular file", src);
            goto out;
        }
        c.size = (uint64_t)sb.st_size;
        if (!(dpath = dest_name(c.cl, cli_ns_path(dst), src, 1))) {
            rc = cli_fail("cp: out of memory");
            goto out;
        }
        c.dst = dst;
        if (ddio_client_open(c.cl, dpath, DDIO_CO_CREAT | DDIO_CO_TRUNC, &c.f, msg, sizeof msg)) {
            rc = cli_fail("cp: %s", msg);
            goto out;
        }
    } else {                                    /* ddio -> local */
        if (ddio_client_open(c.cl, cli_ns_path(src), DDIO_CO_RDONLY, &c.f, msg, sizeof msg)
            || ddio_client_size(c.f, &c.size, msg, sizeof msg)) {
            rc = cli_fail("cp: %s", msg);     /* msg names the file */
            goto out;
        }
        if (!(dpath = dest_name(c.cl, dst, cli_ns_path(src), 0))) {
            rc = cli_fail("cp: out of memory");
            goto out;
        }
        c.dst = dpath;
        c.fd = open(dpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (c.fd < 0) {
            rc = cli_fail("cp: %s: %s", dpath, strerror(errno));
            goto out;
        }
        struct stat sb;
        c.stream = !o->buffered && fstat(c.fd, &sb) == 0 && S_ISREG(sb.st_mode);
    }
    rc = run_copy(&c, dd);
    if (!rc)
        rc = verify(&c, dd);
    double secs = cli_now() - t0;
    if (!rc) {
        progress_show(&c.pg, c.size, c.size, 1);
        printf("%" PRIu64 " bytes in %.3f s, %.1f MiB/s\n", c.size, secs,
               secs > 0 ? (double)c.size / (1 << 20) / secs : 0.0);
    } else if (c.pg.on)
        fputc('\n', stderr);
out:
    if (c.f)
        ddio_client_close(c.f);
    if (c.fd >= 0 && close(c.fd) && !rc)
        rc = cli_fail("cp: close %s: %s", c.dst, strerror(errno));
    free(dpath);
    ddio_client_free(c.cl);
    return rc;
}
