/* srv_client's cases: data transfers: independent XFERs against a model of the server's bytes, collective XFERs, write order, heartbeats. */
#include "srv_harness.h"

/* ---- model: the server's local bytes ------------------------------------------------------ */

struct model {
    struct ddio_stripe S;
    uint8_t *local;              /* this server's local byte space */
    uint64_t cap, size;
};

static void model_init(struct model *md, uint64_t unit, uint32_t count, uint64_t cap)
{
    md->S.unit = unit;
    md->S.count = count;
    md->local = calloc(cap, 1);
    md->cap = cap;
    md->size = 0;
}

struct mw { struct model *md; const uint8_t *buf; int write; uint8_t *out; const uint8_t *got; };

static int model_piece(void *arg, int64_t addr, uint64_t len, uint64_t s)
{
    struct mw *a = arg;
    for (uint64_t i = 0; i < len; i++) {
        uint64_t L = (uint64_t)addr + i;
        if (ddio_layout_server(&a->md->S, L) != 0) {
            if (!a->write)   /* another server's byte: never sent by this one */
                CHECK(!a->got[s + i], "byte at %" PRIu64 " of another server was sent", L);
            continue;
        }
        uint64_t loc = ddio_layout_local(&a->md->S, L);
        CHECK(loc < a->md->cap, "model too small");
        if (a->write) {
            a->md->local[loc] = a->buf[s + i];
            if (loc + 1 > a->md->size)
                a->md->size = loc + 1;
        } else if (loc < a->md->size) {
            CHECK(a->got[s + i], "stream byte %" PRIu64 " (file %" PRIu64 ") not sent", s + i, L);
            CHECK(a->out[s + i] == a->md->local[loc], "stream byte %" PRIu64 " (file %" PRIu64
                  ") is %02x, expected %02x", s + i, L, a->out[s + i], a->md->local[loc]);
        } else {
            CHECK(!a->got[s + i], "byte beyond local EOF was sent (file %" PRIu64 ")", L);
        }
    }
    return 0;
}

static void model_write(struct model *md, const struct ddio_desc *d, const uint8_t *buf)
{
    struct mw a = {md, buf, 1, NULL, NULL};
    ddio_desc_walk_stream(d, 0, d->length, model_piece, &a);
}

static void model_check_read(struct model *md, const struct ddio_desc *d, uint8_t *out,
                             const uint8_t *got)
{
    struct mw a = {md, NULL, 0, out, got};
    ddio_desc_walk_stream(d, 0, d->length, model_piece, &a);
}

static void write_read(struct cl *c, uint64_t h, struct model *md, const struct dspec *ws,
                       const struct dspec *rs, unsigned seed, const char *what)
{
    struct ddio_desc wd, rd;
    build_desc(ws, &wd);
    build_desc(rs, &rd);
    uint8_t *wb = malloc(wd.length ? wd.length : 1);
    fill_pattern(wb, wd.length, seed);
    struct xres x = cl_xfer(c, h, DDIO_X_WRITE, 0, 0, 0, 1, 0, &wd, wb, NULL, TMO);
    CHECK(x.status == 0, "%s: write failed (%s)", what, strerror(x.status));
    model_write(md, &wd, wb);
    CHECK(x.r.local_size == md->size, "%s: local size %" PRIu64 ", model %" PRIu64, what,
          x.r.local_size, md->size);
    CHECK(x.r.bytes_from_rank == x.get_bytes, "%s: DONE bytes_from_rank %" PRIu64 " != %" PRIu64,
          what, x.r.bytes_from_rank, x.get_bytes);
    uint8_t *rb = malloc(rd.length ? rd.length : 1), *got = calloc(rd.length + 1, 1);
    memset(rb, SENTINEL, rd.length);
    x = cl_xfer(c, h, DDIO_X_READ, 0, 0, 0, 1, 0, &rd, rb, got, TMO);
    CHECK(x.status == 0, "%s: read failed (%s)", what, strerror(x.status));
    CHECK(x.r.bytes == x.put_bytes && x.r.bytes_to_rank == x.put_bytes,
          "%s: DONE bytes %" PRIu64 " vs PUT bytes %" PRIu64, what, x.r.bytes, x.put_bytes);
    model_check_read(md, &rd, rb, got);
    printf("ok   %s: wrote %" PRIu64 ", read %" PRIu64 " (blocks r/w %" PRIu64 "/-, nonconsec %"
           PRIu64 ", sorted %" PRIu64 ")\n", what, wd.length, x.put_bytes, x.r.blocks_read,
           x.r.nonconsec, x.r.sorted);
    free(wb);
    free(rb);
    free(got);
    ddio_node_free(wd.root);
    ddio_node_free(rd.root);
}

void test_independent(uint64_t unit, uint32_t count, const char *name)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    char p[128];
    layout_for(c, &l, unit, count);
    path_name(p, sizeof(p), name);
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create %s", p);
    uint64_t B = c->bsize;
    struct model md;
    model_init(&md, unit, count, 64u << 20);
    /* contiguous, unaligned start, spanning blocks */
    struct dspec a = {.disp = 1000, .count = 1, .len = 3 * B + 123, .extent = 3 * B + 123,
                      .length = 3 * B + 123};
    write_read(c, r.handle, &md, &a, &a, 1, "contiguous unaligned");
    /* strided records (8-byte and 8 KiB), read back through another view */
    struct dspec s8 = {.disp = 40, .count = 1000, .len = 8, .stride = 24, .extent = 24000,
                       .start = 16, .length = 8 * 5000 - 40};
    struct dspec all = {.disp = 0, .count = 1, .len = 8 * B, .extent = 8 * B, .length = 8 * B};
    write_read(c, r.handle, &md, &s8, &all, 2, "8-byte strided records");
    struct dspec s8k = {.disp = 0, .count = 64, .len = 8192, .stride = 3 * 8192,
                        .extent = 64 * 3 * 8192, .length = 64 * 8192 * 3};
    struct dspec r8k = {.disp = 4096, .count = 50, .len = 5000, .stride = 9000,
                        .extent = 450000, .length = 50 * 5000 * 4};
    write_read(c, r.handle, &md, &s8k, &r8k, 3, "8 KiB strided records");
    /* partial block overwrite in the middle (read-modify-write) */
    struct dspec mid = {.disp = (int64_t)B + 17, .count = 1, .len = 100, .extent = 100,
                        .length = 100};
    write_read(c, r.handle, &md, &mid, &all, 4, "read-modify-write");
    /* a read past the end: only bytes below the size come back */
    struct dspec far = {.disp = (int64_t)(20 * B), .count = 1, .len = B, .extent = B, .length = B};
    write_read(c, r.handle, &md, &mid, &far, 5, "read past EOF");
    uint64_t v;
    CHECK(cl_handle_op(c, DDIO_T_STAT, r.handle, &v) == 0 && v == md.size,
          "STAT %" PRIu64 " != model %" PRIu64, v, md.size);
    if (g_root && count == 1 && c->ndisks == 1) {
        char fn[512];
        snprintf(fn, sizeof(fn), "%s/%s", g_root, p);
        FILE *f = fopen(fn, "rb");
        CHECK(f, "datafile %s missing", fn);
        uint8_t *fb = malloc(md.size + 1);
        size_t got = fread(fb, 1, md.size + 1, f);
        fclose(f);
        CHECK(got == md.size && memcmp(fb, md.local, md.size) == 0,
              "datafile differs from the model (%zu bytes vs %" PRIu64 ")", got, md.size);
        free(fb);
        printf("ok   datafile is the file, byte for byte (%" PRIu64 " bytes)\n", md.size);
    }
    cl_handle_op(c, DDIO_T_CLOSE, r.handle, NULL);
    cl_close(c);
    free(md.local);
}

/* ---- collective ------------------------------------------------------------------------------- */

struct coll_arg {
    uint32_t rank, n, op;
    uint64_t group, seq;
    const char *path;
    struct dspec spec;
    uint8_t *buf, *got;
    struct xres res;
    uint32_t tmo;
    int skip;                     /* do not send (timeout test) */
    uint32_t flags;               /* more XFER flags (DDIO_XF_RESENT) */
    int hold_ms;                  /* answer GETs late and newest first */
    int failed;                   /* a check of this participant's thread failed */
};

static void *coll_thread(void *p)
{
    struct coll_arg *a = p;
    jmp_buf jb;
    if (setjmp(jb)) {             /* a failed check (reported): this participant is out */
        a->failed = 1;
        return NULL;
    }
    case_thread_recover(&jb);
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    layout_for(c, &l, 1u << 20, 1);
    CHECK(cl_open(c, a->path, DDIO_O_RDWR | DDIO_O_CREAT, &l, &r) == 0, "coll open");
    struct ddio_desc d;
    build_desc(&a->spec, &d);
    if (!a->skip)
        a->res = cl_xfer_hold(c, r.handle, a->op, DDIO_XF_COLLECTIVE | a->flags, a->group,
                              a->seq, a->n,
                              a->rank, &d, a->buf, a->got, a->tmo, a->hold_ms, 0);
    ddio_node_free(d.root);
    cl_close(c);
    return NULL;
}

static void run_coll(struct coll_arg *a, uint32_t n)
{
    pthread_t t[8];
    for (uint32_t i = 0; i < n; i++) {
        a[i].failed = 0;
        pthread_create(&t[i], NULL, coll_thread, &a[i]);
    }
    for (uint32_t i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    for (uint32_t i = 0; i < n; i++)
        CHECK(!a[i].failed, "participant %u failed", a[i].rank);
}

/* Collective write arguments: P ranks writing rec-byte records cyclically
 * (rank r owns records r, r + P, ...), each rank's stream filled from seed
 * + r; `file` gets the expected content. */
static void cyclic_writes(struct coll_arg *a, uint32_t P, uint64_t rec, uint64_t nrec,
                          uint64_t group, const char *path, unsigned seed, uint8_t *file)
{
    for (uint32_t r = 0; r < P; r++) {
        uint64_t cnt = nrec / P + (r < nrec % P);
        a[r] = (struct coll_arg){.rank = r, .n = P, .op = DDIO_X_WRITE, .group = group,
                                 .seq = 1, .path = path, .tmo = TMO,
                                 .spec = {.disp = (int64_t)(r * rec), .count = 1, .len = rec,
                                          .extent = (int64_t)(P * rec), .length = cnt * rec}};
        a[r].buf = malloc(cnt * rec);
        fill_pattern(a[r].buf, cnt * rec, seed + r);
        for (uint64_t i = 0; i < cnt; i++)
            memcpy(file + (i * P + r) * rec, a[r].buf + i * rec, rec);
    }
}

void test_collective(void)
{
    enum { P = 3, REC = 8, NREC = 200000 };
    char p[128];
    path_name(p, sizeof(p), "coll");
    uint64_t total = (uint64_t)REC * NREC;           /* 1.6 MB: several blocks */
    uint8_t *file = calloc(total, 1);
    struct coll_arg a[P];
    memset(a, 0, sizeof(a));
    /* write: cyclic 8-byte records, rank r owns records r, r+3, ... */
    cyclic_writes(a, P, REC, NREC, 77 + g_run, p, 10, file);
    /* rank 2 additionally overlaps rank 0's first record?  No: views of one
     * collective are disjoint here; overlap is tested separately below. */
    run_coll(a, P);
    for (uint32_t r = 0; r < P; r++) {
        CHECK(a[r].res.status == 0, "collective write rank %u failed: status %d (%s), %" PRId64
              " ms", r, a[r].res.status, a[r].res.err, a[r].res.elapsed_ms);
        CHECK(a[r].res.r.bytes == a[r].spec.length, "rank %u moved %" PRIu64, r, a[r].res.r.bytes);
        free(a[r].buf);
    }
    printf("ok   collective write, 3 ranks cyclic 8-byte records (blocks written %" PRIu64
           ", desc bytes %" PRIu64 ", sorted %" PRIu64 ")\n", a[0].res.r.blocks_written,
           a[0].res.r.desc_bytes, a[0].res.r.sorted);
    /* overlapping collective write: all ranks write [0, 4096): rank 2 wins */
    for (uint32_t r = 0; r < P; r++) {
        a[r].seq = 2;
        a[r].spec = (struct dspec){.disp = 0, .count = 1, .len = 4096, .extent = 4096,
                                   .length = 4096};
        a[r].buf = malloc(4096);
        memset(a[r].buf, 0x30 + (int)r, 4096);
    }
    run_coll(a, P);
    for (uint32_t r = 0; r < P; r++) {
        CHECK(a[r].res.status == 0, "overlapping write rank %u failed", r);
        free(a[r].buf);
    }
    memset(file, 0x32, 4096);
    printf("ok   overlapping collective write (higher rank wins)\n");
    /* collective read: block distribution, rank 1 empty */
    uint64_t half = total / 2;
    for (uint32_t r = 0; r < P; r++) {
        uint64_t off = r == 0 ? 0 : half, len = r == 1 ? 0 : (r == 0 ? half : total - half);
        a[r] = (struct coll_arg){.rank = r, .n = P, .op = DDIO_X_READ, .group = 77 + g_run,
                                 .seq = 3, .path = p, .tmo = TMO,
                                 .spec = {.disp = (int64_t)off, .count = 1, .len = len ? len : 1,
                                          .extent = (int64_t)(len ? len : 1), .length = len}};
        a[r].buf = malloc(len + 1);
        a[r].got = calloc(len + 1, 1);
    }
    run_coll(a, P);
    for (uint32_t r = 0; r < P; r++) {
        CHECK(a[r].res.status == 0, "collective read rank %u failed: status %d (%s), %" PRId64
              " ms", r, a[r].res.status, a[r].res.err, a[r].res.elapsed_ms);
        uint64_t off = (uint64_t)a[r].spec.disp, len = a[r].spec.length;
        CHECK(a[r].res.r.bytes == len, "rank %u read %" PRIu64 " of %" PRIu64, r,
              a[r].res.r.bytes, len);
        for (uint64_t i = 0; i < len; i++)
            CHECK(a[r].buf[i] == file[off + i], "rank %u: byte %" PRIu64 " is %02x, expected %02x",
                  r, off + i, a[r].buf[i], file[off + i]);
        free(a[r].buf);
        free(a[r].got);
    }
    printf("ok   collective read, 3 ranks (one empty) (blocks read %" PRIu64 ", io %" PRIu64
           " us)\n", a[0].res.r.blocks_read, a[0].res.r.io_us);
    /* gate timeout: rank 2 never comes */
    for (uint32_t r = 0; r < P; r++) {
        a[r].seq = 4;
        a[r].tmo = 500;
        a[r].skip = r == 2;
        a[r].spec = (struct dspec){.disp = 0, .count = 1, .len = 10, .extent = 10, .length = 10};
        a[r].buf = malloc(10);
        a[r].got = calloc(10, 1);
    }
    run_coll(a, P);
    for (uint32_t r = 0; r < 2; r++) {
        CHECK(a[r].res.status == ETIMEDOUT, "gate timeout: rank %u got %d", r, a[r].res.status);
        free(a[r].buf);
        free(a[r].got);
    }
    free(a[2].buf);
    free(a[2].got);
    printf("ok   collective gate timeout -> ETIMEDOUT for every participant present\n");
    free(file);
}

/* A collective resent after a restart (DDIO_XF_RESENT) by only some of its
 * ranks (the others got their DONE before): the gate runs those that came
 * after its 1 s grace, not at the 10 s deadline, and their bytes land; the
 * absent rank's records stay holes. */
void test_resent_gate(void)
{
    enum { P = 3, REC = 8, NREC = 30000 };
    char p[128];
    path_name(p, sizeof(p), "resent");
    uint64_t total = (uint64_t)REC * NREC;
    uint8_t *file = calloc(total, 1), *back = calloc(total, 1), *got = calloc(total + 1, 1);
    struct coll_arg a[P];
    memset(a, 0, sizeof(a));
    cyclic_writes(a, P, REC, NREC, 99 + g_run, p, 20, file);
    for (uint64_t i = 2; i < NREC; i += P)
        memset(file + i * REC, 0, REC);   /* rank 2 never comes */
    for (uint32_t r = 0; r < P; r++) {
        a[r].tmo = 10000;
        a[r].skip = r == 2;
        a[r].flags = DDIO_XF_RESENT;
    }
    int64_t t0 = ddio_now_ms();
    run_coll(a, P);
    int64_t dt = ddio_now_ms() - t0;
    for (uint32_t r = 0; r < 2; r++) {
        CHECK(a[r].res.status == 0, "resent rank %u: %s", r, strerror(a[r].res.status));
        CHECK(a[r].res.r.bytes == a[r].spec.length, "rank %u moved %" PRIu64, r, a[r].res.r.bytes);
    }
    CHECK(dt >= 900 && dt < 5000, "the re-formed call took %" PRId64 " ms (grace 1 s)", dt);
    for (uint32_t r = 0; r < P; r++)
        free(a[r].buf);
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r o;
    struct ddio_desc d;
    struct dspec all = {.disp = 0, .count = 1, .len = total, .extent = (int64_t)total,
                        .length = total};
    layout_for(c, &l, 1u << 20, 1);
    CHECK(cl_open(c, p, DDIO_O_RDWR, &l, &o) == 0, "open %s", p);
    build_desc(&all, &d);
    struct xres x = cl_xfer(c, o.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, back, got, TMO);
    CHECK(x.status == 0 && memcmp(back, file, total) == 0, "bytes after the re-formed "
          "write differ (read %d)", x.status);
    printf("ok   resent collective, 2 of 3 ranks: run after %" PRId64 " ms, bytes right\n", dt);
    ddio_node_free(d.root);
    cl_close(c);
    free(file);
    free(back);
    free(got);
}

/* Writes reach the disk in planned order whatever order the data comes in:
 * 2 ranks write 8-byte records cyclically over 16 blocks; rank 1 answers
 * every batch of GETs late and newest first, so the last block of each
 * batch is complete first. The server must still write the blocks in
 * ascending order (nonconsec counts writes that do not start where the
 * previous one on the disk ended: only a disk's first write, or the wrap
 * of --rotate, may), and the bytes must be right. */
void test_write_order(void)
{
    enum { P = 2, REC = 8 };
    struct cl *probe = cl_connect();
    uint64_t total = 16 * probe->bsize, nrec = total / REC;
    uint32_t ndisks = probe->ndisks;
    cl_close(probe);
    char p[128];
    path_name(p, sizeof(p), "worder");
    struct coll_arg a[P];
    memset(a, 0, sizeof(a));
    uint8_t *file = malloc(total);
    cyclic_writes(a, P, REC, nrec, 91 + g_run, p, 40, file);
    a[1].hold_ms = 60;
    run_coll(a, P);
    for (uint32_t r = 0; r < P; r++) {
        CHECK(a[r].res.status == 0, "write-order: rank %u failed", r);
        free(a[r].buf);
    }
    uint64_t nc = a[0].res.r.nonconsec;
    CHECK(a[0].res.r.blocks_written == 16, "write-order: %" PRIu64 " blocks written, want 16",
          a[0].res.r.blocks_written);
    CHECK(nc <= 2 * ndisks, "write-order: %" PRIu64 " of 16 writes out of order (disks %u)", nc,
          ndisks);
    /* read it all back as one participant */
    struct coll_arg rd = {.rank = 0, .n = 1, .op = DDIO_X_READ, .group = 92 + g_run, .seq = 1,
                          .path = p, .tmo = TMO,
                          .spec = {.disp = 0, .count = 1, .len = total, .extent = (int64_t)total,
                                   .length = total}};
    rd.buf = malloc(total);
    rd.got = calloc(total, 1);
    run_coll(&rd, 1);
    CHECK(rd.res.status == 0 && rd.res.r.bytes == total, "write-order: read back failed");
    CHECK(memcmp(rd.buf, file, total) == 0, "write-order: data differs after reordered pulls");
    printf("ok   writes in planned order with late, reversed DATA (nonconsec %" PRIu64
           " of 16, disks %u, data verified)\n", nc, ndisks);
    free(rd.buf);
    free(rd.got);
    free(file);
}

/* Heartbeats: rank 0 of 2 arrives, rank 1 never does. While the gate waits,
 * the server must send rank 0 a PROGRESS at least every timeout/4 (500 ms
 * here; checked with slack at 1 s), then ETIMEDOUT after the 2 s timeout. */
void test_heartbeat(void)
{
    char p[128];
    path_name(p, sizeof(p), "beat");
    struct coll_arg a[2];
    memset(a, 0, sizeof(a));
    for (uint32_t r = 0; r < 2; r++) {
        a[r] = (struct coll_arg){.rank = r, .n = 2, .op = DDIO_X_READ, .group = 99 + g_run,
                                 .seq = 1, .path = p, .tmo = 2000, .skip = r == 1,
                                 .spec = {.disp = 0, .count = 1, .len = 10, .extent = 10,
                                          .length = 10}};
        a[r].buf = malloc(10);
        a[r].got = calloc(10, 1);
    }
    run_coll(a, 2);
    const struct xres *x = &a[0].res;
    printf("    (%u PROGRESS, longest silence %" PRId64 " ms, DONE after %" PRId64 " ms)\n",
           x->progress, x->max_gap_ms, x->elapsed_ms);
    CHECK(x->status == ETIMEDOUT, "heartbeat: rank 0 got status %d, want ETIMEDOUT", x->status);
    CHECK(x->progress >= 3, "heartbeat: only %u PROGRESS in a 2 s gate wait", x->progress);
    CHECK(x->max_gap_ms <= 1000, "heartbeat: %" PRId64 " ms without a message", x->max_gap_ms);
    CHECK(x->elapsed_ms >= 1900 && x->elapsed_ms <= 3500,
          "heartbeat: gate timed out after %" PRId64 " ms, want ~2000", x->elapsed_ms);
    for (uint32_t r = 0; r < 2; r++) {
        free(a[r].buf);
        free(a[r].got);
    }
    printf("ok   PROGRESS heartbeats while the gate waits, then ETIMEDOUT\n");
}

/* A collective write whose rank 1 never answers its GETs: the XFER fails
 * at its deadline for both, and the message names what it waited for (the
 * GETs of rank 1), not just "client data or disk": a stalled job must be
 * explainable from its error alone. */
void test_unanswered_get(void)
{
    char p[128];
    path_name(p, sizeof(p), "unanswered");
    struct coll_arg a[2];
    memset(a, 0, sizeof(a));
    for (uint32_t r = 0; r < 2; r++) {
        a[r] = (struct coll_arg){.rank = r, .n = 2, .op = DDIO_X_WRITE, .group = 199 + g_run,
                                 .seq = 1, .path = p, .tmo = 1500, .hold_ms = r ? 60000 : 0,
                                 .spec = {.disp = (int64_t)r * 4096, .count = 1, .len = 4096,
                                          .extent = 4096, .length = 4096}};
        a[r].buf = malloc(4096);
        a[r].got = calloc(4096, 1);
        fill_pattern(a[r].buf, 4096, r + 5);
    }
    run_coll(a, 2);
    for (uint32_t r = 0; r < 2; r++) {
        CHECK(a[r].res.status == ETIMEDOUT, "unanswered GET: rank %u got status %d, want "
              "ETIMEDOUT", r, a[r].res.status);
        CHECK(strstr(a[r].res.err, "GET") && strstr(a[r].res.err, "of rank 1"),
              "unanswered GET: rank %u's error does not name rank 1's GETs: %s", r,
              a[r].res.err);
        CHECK(a[r].res.elapsed_ms >= 1400 && a[r].res.elapsed_ms <= 5000,
              "unanswered GET: failed after %" PRId64 " ms, want ~1500", a[r].res.elapsed_ms);
        free(a[r].buf);
        free(a[r].got);
    }
    printf("ok   a write whose rank never answers fails at the deadline, naming its GETs\n");
}

/* the three stripings of the independent cases */
void test_independent_1m(void)
{
    test_independent(1u << 20, 1, "ind1");
}

void test_independent_64k_of_2(void)   /* index 0 of 2: only its stripes */
{
    test_independent(65536, 2, "ind2");
}

void test_independent_4k_of_2(void)    /* stripe unit below the block size */
{
    test_independent(4096, 2, "ind3");
}

/* DDIO_XF_INLINE: a small write's bytes come with the XFER, no GET is sent;
 * an inline length that is not the stream's is refused (EPROTO) and the
 * connection goes on */
void test_inline(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    char p[128];
    layout_for(c, &l, 1u << 20, 1);
    path_name(p, sizeof(p), "inline");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create %s", p);
    uint64_t B = c->bsize;
    /* 100 pieces of 40 bytes every 700, across a block boundary */
    struct dspec s = {.disp = (int64_t)B - 30000, .count = 100, .len = 40, .stride = 700,
                      .extent = 70000, .length = 4000};
    struct ddio_desc d, all;
    build_desc(&s, &d);
    uint8_t w[4000], *back = malloc(70000), *got = calloc(70001, 1);
    fill_pattern(w, sizeof(w), 7);
    struct xres x = cl_xfer(c, r.handle, DDIO_X_WRITE, DDIO_XF_INLINE, 0, 0, 1, 0, &d, w, NULL,
                            TMO);
    CHECK(x.status == 0, "inline write failed (%s)", strerror(x.status));
    CHECK(x.get_bytes == 0, "inline write: the server asked for %" PRIu64 " bytes", x.get_bytes);
    CHECK(x.r.bytes_from_rank == 4000, "inline write: bytes_from_rank %" PRIu64,
          x.r.bytes_from_rank);
    struct dspec a = {.disp = (int64_t)B - 30000, .count = 1, .len = 70000, .extent = 70000,
                      .length = 70000};
    build_desc(&a, &all);
    x = cl_xfer(c, r.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &all, back, got, TMO);
    CHECK(x.status == 0, "read back failed (%s)", strerror(x.status));
    for (int i = 0; i < 100; i++)
        CHECK(memcmp(back + 700 * i, w + 40 * i, 40) == 0, "inline piece %d differs", i);
    /* one byte short of the stream */
    struct ddio_wbuf dw, m;
    ddio_wbuf_init(&dw);
    ddio_desc_encode(&dw, &d);
    struct ddio_xfer bad = {.handle = r.handle, .op = DDIO_X_WRITE, .flags = DDIO_XF_INLINE,
                            .nparticipants = 1, .timeout_ms = TMO, .desc_len = (uint32_t)dw.len,
                            .desc = dw.p, .inline_len = 3999, .inline_data = w};
    ddio_wbuf_init(&m);
    ddio_enc_xfer(&m, &bad);
    send_w(c, DDIO_T_XFER, ++c->req, &m);
    struct msg rep;
    CHECK(recv_msg(c, &rep) == 0, "no answer to a short inline write");
    CHECK(rep.h.type == (DDIO_T_XFER | DDIO_REPLY) && rep.h.status == EPROTO,
          "short inline write: type %u status %d", rep.h.type, rep.h.status);
    free(rep.p);
    ddio_wbuf_free(&dw);
    x = cl_xfer(c, r.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &all, back, got, TMO);
    CHECK(x.status == 0 && memcmp(back, w, 40) == 0, "after the refusal: read %d",
          x.status);
    /* the largest inline stream, one range across a block boundary */
    uint64_t n = DDIO_MAX_INLINE;
    struct dspec bs = {.disp = (int64_t)B / 2, .count = 1, .len = n,
                       .extent = (int64_t)n, .length = n};
    struct ddio_desc big;
    build_desc(&bs, &big);
    uint8_t *bw = malloc(n), *bb = malloc(n), *bg = calloc(n + 1, 1);
    fill_pattern(bw, n, 11);
    x = cl_xfer(c, r.handle, DDIO_X_WRITE, DDIO_XF_INLINE, 0, 0, 1, 0, &big, bw, NULL, TMO);
    CHECK(x.status == 0 && x.get_bytes == 0 && x.r.bytes_from_rank == n,
          "inline write of %" PRIu64 " bytes: status %d, %" PRIu64 " asked for, %" PRIu64
          " taken", n, x.status, x.get_bytes, x.r.bytes_from_rank);
    x = cl_xfer(c, r.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &big, bb, bg, TMO);
    CHECK(x.status == 0 && memcmp(bb, bw, n) == 0, "the %" PRIu64 "-byte inline write read "
          "back differs (read %d)", n, x.status);
    printf("ok   inline write: 4000 bytes in 100 pieces, no GET; a short one refused; "
           "%" PRIu64 " bytes across a block boundary\n", n);
    ddio_node_free(d.root);
    ddio_node_free(all.root);
    ddio_node_free(big.root);
    free(back);
    free(got);
    free(bw);
    free(bb);
    free(bg);
    cl_close(c);
}

/* an XFER of one participant with DDIO_XF_INLINE_OWN: its reply's status */
static int own_write(struct cl *c, uint64_t h, const struct ddio_desc *d, const uint8_t *w,
                     uint32_t len)
{
    struct ddio_wbuf dw, m;
    ddio_wbuf_init(&dw);
    ddio_desc_encode(&dw, d);
    struct ddio_xfer x = {.handle = h, .op = DDIO_X_WRITE,
                          .flags = DDIO_XF_INLINE | DDIO_XF_INLINE_OWN, .nparticipants = 1,
                          .timeout_ms = TMO, .desc_len = (uint32_t)dw.len, .desc = dw.p,
                          .inline_len = len, .inline_data = w};
    ddio_wbuf_init(&m);
    ddio_enc_xfer(&m, &x);
    ddio_wbuf_free(&dw);
    send_w(c, DDIO_T_XFER, ++c->req, &m);
    struct msg rep;
    CHECK(recv_msg(c, &rep) == 0, "no answer to an own-bytes inline write");
    CHECK(rep.h.type == (DDIO_T_XFER | DDIO_REPLY), "own-bytes write: reply type %u",
          rep.h.type);
    free(rep.p);
    return rep.h.status;
}

/* DDIO_XF_INLINE_OWN: a write of one range of a file striped over 2 servers
 * (this one index 0, units of 4 KiB) carries this server's units only, in
 * local order; read back, they are in place and the other server's are
 * not here. Its length other than this server's part, or a descriptor
 * that is not one range, is refused (EPROTO). */
void test_inline_own(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    char p[128];
    layout_for(c, &l, 4096, 2);
    path_name(p, sizeof(p), "inline-own");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create %s", p);
    /* logical [1000, 1000 + 30000): units 0, 2, 4, 6 here, from byte 1000 */
    enum { FIRST = 1000, LEN = 30000 };
    struct dspec s = {.disp = FIRST, .count = 1, .len = LEN, .extent = LEN, .length = LEN};
    struct ddio_desc d, strided;
    build_desc(&s, &d);
    uint8_t *all = malloc(LEN), own[LEN], *back = calloc(LEN, 1), *got = calloc(LEN + 1, 1);
    fill_pattern(all, LEN, 13);
    uint32_t n = 0;
    for (uint32_t o = FIRST; o < FIRST + LEN; o++)
        if ((o / 4096) % 2 == 0)
            own[n++] = all[o - FIRST];
    CHECK(own_write(c, r.handle, &d, own, n - 1) == EPROTO, "an own length one short accepted");
    CHECK(own_write(c, r.handle, &d, own, n) == 0, "own-bytes inline write of %u bytes", n);
    struct xres x = cl_xfer(c, r.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, back, got, TMO);
    CHECK(x.status == 0, "read back failed (%s)", strerror(x.status));
    for (uint32_t o = FIRST; o < FIRST + LEN; o++) {
        int mine = (o / 4096) % 2 == 0;
        CHECK(!mine || back[o - FIRST] == all[o - FIRST], "own byte at %u differs", o);
        CHECK(mine || back[o - FIRST] == 0, "the other server's byte at %u is here", o);
    }
    struct dspec v = {.disp = FIRST, .count = 10, .len = 100, .stride = 200, .extent = 2000,
                      .length = 1000};
    build_desc(&v, &strided);
    CHECK(own_write(c, r.handle, &strided, own, 1000) == EPROTO,
          "own bytes of a descriptor that is not one range accepted");
    printf("ok   own-bytes inline write: %u of %u bytes here, in place; a short one and a "
           "strided one refused\n", n, (unsigned)LEN);
    ddio_node_free(d.root);
    ddio_node_free(strided.root);
    free(all);
    free(back);
    free(got);
    cl_close(c);
}

/* one inline write of w at local offset 0 (4000 bytes), with or without
 * DDIO_XF_ONCE ids; the reply's status */
int once_write(struct cl *c, uint64_t handle, const struct ddio_desc *d,
                      const uint8_t *w, uint64_t client, uint64_t call, uint32_t op)
{
    struct ddio_wbuf dw;
    char msg[256];
    ddio_wbuf_init(&dw);
    ddio_desc_encode(&dw, d);
    struct ddio_xfer x = {.handle = handle, .op = op, .nparticipants = 1, .timeout_ms = TMO,
                          .desc_len = (uint32_t)dw.len, .desc = dw.p,
                          .flags = (op == DDIO_X_WRITE ? DDIO_XF_INLINE : 0)
                                   | (client ? DDIO_XF_ONCE : 0),
                          .inline_len = op == DDIO_X_WRITE ? 4000 : 0, .inline_data = w,
                          .once_client = client, .once_call = call};
    int st = xfer_call(c, &x, msg, sizeof(msg));
    ddio_wbuf_free(&dw);
    return st;
}

void read_4000(struct cl *c, uint64_t handle, const struct ddio_desc *d, uint8_t *out)
{
    uint8_t *got = calloc(4001, 1);
    struct xres x = cl_xfer(c, handle, DDIO_X_READ, 0, 0, 0, 1, 0, d, out, got, TMO);
    CHECK(x.status == 0, "read back failed (%s)", strerror(x.status));
    free(got);
}

/* A write resent with the same DDIO_XF_ONCE ids (as after a lost DONE and a
 * reconnect) is answered, not done again: another writer's bytes written
 * in between stay. New ids run; a read with the flag is refused. (The
 * client id is this run's: the table outlives the server process, and
 * srv_client runs more than once against one root.) */
void test_once(void)
{
    const uint64_t me = 0x4200000000ull | g_run;
    struct cl *c = cl_connect(), *c2;
    struct ddio_layout_rec l;
    struct ddio_open_r r, r2;
    struct ddio_desc d;
    char p[128];
    uint8_t a[4000], b[4000], back[4000];
    struct dspec s = {.disp = 0, .count = 1, .len = 4000, .extent = 4000, .length = 4000};

    layout_for(c, &l, 1u << 20, 1);
    path_name(p, sizeof(p), "once");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create %s", p);
    build_desc(&s, &d);
    fill_pattern(a, sizeof(a), 11);
    fill_pattern(b, sizeof(b), 12);
    CHECK(once_write(c, r.handle, &d, a, me, 7, DDIO_X_WRITE) == 0, "first write");
    CHECK(once_write(c, r.handle, &d, b, 0, 0, DDIO_X_WRITE) == 0, "another writer's write");
    cl_close(c);
    c2 = cl_connect();          /* the resend comes on a new connection */
    CHECK(cl_open(c2, p, DDIO_O_RDWR, &l, &r2) == 0, "open again");
    CHECK(once_write(c2, r2.handle, &d, a, me, 7, DDIO_X_WRITE) == 0, "resent write");
    read_4000(c2, r2.handle, &d, back);
    CHECK(memcmp(back, b, sizeof(b)) == 0, "the resent write was done a second time");
    CHECK(once_write(c2, r2.handle, &d, a, me, 8, DDIO_X_WRITE) == 0, "a new call");
    read_4000(c2, r2.handle, &d, back);
    CHECK(memcmp(back, a, sizeof(a)) == 0, "a new call id was not run");
    CHECK(once_write(c2, r2.handle, &d, back, me, 9, DDIO_X_READ) == EPROTO,
          "a read with DDIO_XF_ONCE was not refused");
    printf("ok   once: a resent write answered from the table, not run again\n");
    ddio_node_free(d.root);
    cl_close(c2);
}
