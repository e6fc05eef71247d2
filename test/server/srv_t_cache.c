/* srv_client's case for the server's page-cache policy (ioserver/pcache.h):
 * which path each read and write takes, seen in STATS (read_cache_bytes,
 * read_disk_bytes, write_cache_bytes, write_direct_bytes), and that the
 * bytes are right whichever path the previous access took (the O_DIRECT
 * and buffered descriptors of one datafile stay coherent). */
#include "srv_harness.h"
#include "ddio_stream.h"   /* ddio_stream_min: run-server-tests.sh sets it to 16 MiB */

#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#define TMPFS_MAGIC 0x01021994

#define NKEYS 4
static const char *const KEYS[NKEYS] = {"read_cache_bytes", "read_disk_bytes",
                                        "write_cache_bytes", "write_direct_bytes"};
struct pc_ctr { uint64_t v[NKEYS]; };

static struct pc_ctr stats_now(struct cl *c)
{
    struct msg m;
    CHECK(call(c, DDIO_T_STATS, NULL, &m) == 0, "STATS failed");
    struct ddio_stats_r s;
    CHECK(ddio_dec_stats_r(m.p, m.h.len, &s) == 0, "STATS malformed");
    struct pc_ctr r;
    for (int k = 0; k < NKEYS; k++) {
        int found;
        r.v[k] = ddio_stats_r_get(&s, KEYS[k], &found);
        CHECK(found, "STATS lacks %s", KEYS[k]);
    }
    ddio_stats_r_free(&s);
    free(m.p);
    return r;
}

/* one XFER of [off, off + len) (n = 1; collective: DDIO_XF_COLLECTIVE, as
 * the driver sends a collective's plain ranges), the counters' change in d */
static void xfer_range(struct cl *c, uint64_t h, uint32_t op, int coll, uint64_t off,
                       uint64_t len, uint8_t *buf, struct pc_ctr *d, const char *what)
{
    struct dspec sp = {.disp = (int64_t)off, .count = 1, .len = len, .extent = (int64_t)len,
                       .length = len};
    struct ddio_desc desc;
    build_desc(&sp, &desc);
    uint8_t *got = op == DDIO_X_READ ? calloc(len + 1, 1) : NULL;
    if (got)
        memset(buf, SENTINEL, len);
    struct pc_ctr before = stats_now(c);
    struct xres x = cl_xfer(c, h, op, coll ? DDIO_XF_COLLECTIVE : 0, 0, 0, 1, 0, &desc, buf,
                            got, TMO);
    CHECK(x.status == 0, "%s failed (%s)", what, strerror(x.status));
    struct pc_ctr after = stats_now(c);
    for (int k = 0; k < NKEYS; k++)
        d->v[k] = after.v[k] - before.v[k];
    free(got);
    ddio_node_free(desc.root);
}

/* the path the counters show: exactly len bytes on key k, none on other */
static void expect(const struct pc_ctr *d, int k, int other, uint64_t len, const char *what)
{
    CHECK(d->v[k] == len, "%s: %s grew by %" PRIu64 ", expected %" PRIu64, what, KEYS[k],
          d->v[k], len);
    CHECK(d->v[other] == 0, "%s: %s grew by %" PRIu64 ", expected 0", what, KEYS[other],
          d->v[other]);
}

enum { RC, RD, WC, WD };

static void read_check(struct cl *c, uint64_t h, int coll, uint64_t len, const uint8_t *model,
                       int k, int other, const char *what)
{
    uint8_t *b = malloc(len);
    struct pc_ctr d;
    xfer_range(c, h, DDIO_X_READ, coll, 0, len, b, &d, what);
    CHECK(memcmp(b, model, len) == 0, "%s: bytes differ from what was written", what);
    expect(&d, k, other, len, what);
    printf("ok   %s: %" PRIu64 " bytes right, %s\n", what, len, KEYS[k]);
    free(b);
}

static void write_pat(struct cl *c, uint64_t h, int coll, uint64_t len, uint8_t *model,
                      unsigned seed, int k, int other, const char *what)
{
    fill_pattern(model, len, seed);
    struct pc_ctr d;
    xfer_range(c, h, DDIO_X_WRITE, coll, 0, len, model, &d, what);
    CHECK(d.v[k] >= len && d.v[other] == 0, "%s: %s grew by %" PRIu64 ", %s by %" PRIu64,
          what, KEYS[k], d.v[k], KEYS[other], d.v[other]);
    printf("ok   %s: %" PRIu64 " bytes, %s\n", what, len, KEYS[k]);
}

/* The server's (first) root takes O_DIRECT, as the server itself probes
 * it: only then does a collective write show on write_direct_bytes. And
 * only off tmpfs does that write leave the pages uncached (tmpfs takes
 * O_DIRECT since Linux 6.6, but its pages are the data), so that the next
 * collective read is a cold one. Without a root given, every access is
 * assumed cached. */
static void root_kind(int *direct, int *evicts)
{
    *direct = *evicts = 0;
    if (!g_root)
        return;
    char fn[512];
    snprintf(fn, sizeof fn, "%s/.pcache-probe.%u", g_root, g_run);
    int fd = open(fn, O_RDWR | O_CREAT | O_DIRECT, 0600);
    if (fd >= 0) {
        close(fd);
        unlink(fn);
    }
    struct statfs sf;
    *direct = fd >= 0;
    *evicts = *direct && statfs(g_root, &sf) == 0 && sf.f_type != TMPFS_MAGIC;
}

/* Dirty or under-writeback pages of the file at path (cachestat(2),
 * Linux 6.5; -1 where it is missing) */
static long unwritten_pages(const char *path)
{
    struct { uint64_t off, len; } range = {0, 0};          /* 0, 0: the whole file */
    struct { uint64_t cache, dirty, writeback, evicted, recently; } cs = {0};
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open datafile %s: %s", path, strerror(errno));
    long rc = syscall(451, fd, &range, &cs, 0);
    close(fd);
    return rc == 0 ? (long)(cs.dirty + cs.writeback) : -1;
}

/* SYNC makes what went through the page cache durable: afterwards the
 * datafile has no dirty page (one disk, off tmpfs, whose pages are never
 * written anywhere) */
static void sync_check(struct cl *c, uint64_t h, const char *path, int evicts)
{
    CHECK(cl_handle_op(c, DDIO_T_SYNC, h, NULL) == 0, "SYNC failed");
    if (!evicts || c->ndisks != 1)
        return;
    char fn[512];
    snprintf(fn, sizeof fn, "%s/%s", g_root, path);
    long n = unwritten_pages(fn);
    if (n < 0) {
        printf("note cachestat(2) missing: SYNC's effect on dirty pages not checked\n");
        return;
    }
    CHECK(n == 0, "after SYNC the datafile still has %ld dirty or writeback pages", n);
    printf("ok   SYNC left no dirty page in the datafile\n");
}

/* Whole blocks on one server, more than ddio_stream_min() of them: this one
 * client's "collective" XFERs (one participant) stand for a collective
 * stream, which only that length sends O_DIRECT (a shorter one-participant
 * part is cached like independent I/O: checked at the end). On a root
 * without O_DIRECT every access is a page-cache one. */
void test_page_cache(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    char p[128];
    uint64_t B = c->bsize, len = (ddio_stream_min() / B + 2) * B;
    layout_for(c, &l, B, 1);
    path_name(p, sizeof(p), "pcache");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create %s", p);
    int direct, evicts;
    root_kind(&direct, &evicts);
    int cr = evicts ? RD : RC, cw = direct ? WD : WC;   /* a collective's cold path */
    uint8_t *model = malloc(len), *part = malloc(len);
    write_pat(c, r.handle, 0, len, model, 11, WC, WD, "independent write");
    sync_check(c, r.handle, p, evicts);
    read_check(c, r.handle, 0, len, model, RC, RD, "re-read (independent) from the cache");
    read_check(c, r.handle, 1, len, model, RC, RD, "collective read of hot data");
    write_pat(c, r.handle, 1, len, model, 12, cw, cw == WD ? WC : WD, "collective write");
    /* O_DIRECT write, then buffered read: the cached pages of the first
     * write must not be served (the kernel invalidates them) */
    read_check(c, r.handle, 0, len, model, RC, RD, "independent read after collective write");
    write_pat(c, r.handle, 1, len, model, 13, cw, cw == WD ? WC : WD, "collective write again");
    read_check(c, r.handle, 1, len, model, cr, cr == RD ? RC : RD, "collective read of cold data");
    /* buffered write of half a block into cold data (whole pages: nothing
     * is read first, so nothing is read ahead), then an O_DIRECT read (the
     * block is only half resident): it must see the dirty pages */
    memcpy(part, model, len);
    struct pc_ctr d;
    fill_pattern(part, B / 2, 14);
    xfer_range(c, r.handle, DDIO_X_WRITE, 0, 0, B / 2, part, &d, "half-block write");
    CHECK(d.v[WC] >= B / 2 && d.v[WD] == 0, "half-block write: write_cache_bytes %" PRIu64
          ", write_direct_bytes %" PRIu64, d.v[WC], d.v[WD]);
    memcpy(model, part, B / 2);
    read_check(c, r.handle, 1, len, model, cr, cr == RD ? RC : RD,
               "collective read after an independent write");
    /* a collective's short part (IOR's contiguous -c calls) is cached */
    write_pat(c, r.handle, 1, 2 * B, model, 15, WC, WD, "short collective part written");
    read_check(c, r.handle, 1, 2 * B, model, RC, RD, "short collective part re-read");
    free(model);
    free(part);
    cl_close(c);
}
