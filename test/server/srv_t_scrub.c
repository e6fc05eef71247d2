/* SCRUB and REPAIR on one server (index 0 of 2 of a mirrored file: it
 * holds its own units and the mirror of index 1's). With checksums kept: a
 * byte flipped in the datafile behind the server's back is listed by
 * SCRUB, DDIO_SC_DATA of it says it is bad, a REPAIR with bytes that
 * disagree with the sum is refused and writes nothing, one with the right
 * bytes rewrites the sector (the datafile has them again, sums_repaired
 * counts it), a second one finds it good; a sum that rotted in the
 * sidecar is rewritten, the data left; a write of new data after the
 * rot is never undone by a REPAIR carrying the old bytes. A copy the
 * server does not hold is ENOENT. Without checksums: EOPNOTSUPP. */
#include "srv_harness.h"

#include <stdlib.h>
#include <string.h>

#define UNIT 65536u
#define SEC 4096u

static int scrub(struct cl *c, uint64_t h, uint32_t copy, uint32_t flags, uint64_t off,
                 uint64_t len, struct ddio_scrub_r *r, struct msg *m)
{
    struct ddio_scrub s = {.handle = h, .copy = copy, .flags = flags, .off = off, .len = len};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_scrub(&w, &s);
    int st = call(c, DDIO_T_SCRUB, &w, m);
    if (st == 0)
        CHECK(ddio_dec_scrub_r(m->p, m->h.len, r) == 0, "SCRUB|R does not decode");
    return st;
}

static struct ddio_repair_r repair(struct cl *c, uint64_t h, uint64_t off, const uint8_t *data)
{
    struct ddio_repair rp = {.handle = h, .copy = 0, .off = off, .data_len = SEC, .data = data};
    struct ddio_repair_r r;
    struct ddio_wbuf w;
    struct msg m;
    ddio_wbuf_init(&w);
    ddio_enc_repair(&w, &rp);
    CHECK(call(c, DDIO_T_REPAIR, &w, &m) == 0, "REPAIR failed");
    CHECK(ddio_dec_repair_r(m.p, m.h.len, &r) == 0, "REPAIR|R does not decode");
    free(m.p);
    return r;
}

/* the datafile's bytes [off, off + n) into out */
static void datafile(const char *p, uint64_t off, uint8_t *out, size_t n)
{
    char fn[512];
    snprintf(fn, sizeof(fn), "%s/%s", g_root, p);
    FILE *f = fopen(fn, "rb");
    CHECK(f && fseek(f, (long)off, SEEK_SET) == 0 && fread(out, 1, n, f) == n, "read %s", fn);
    fclose(f);
}

static void flip(const char *p, uint64_t off)
{
    char fn[512];
    uint8_t b;
    snprintf(fn, sizeof(fn), "%s/%s", g_root, p);
    FILE *f = fopen(fn, "r+b");
    CHECK(f && fseek(f, (long)off, SEEK_SET) == 0 && fread(&b, 1, 1, f) == 1, "flip %s", fn);
    b ^= 0xFF;
    CHECK(fseek(f, (long)off, SEEK_SET) == 0 && fwrite(&b, 1, 1, f) == 1 && fclose(f) == 0,
          "flip %s", fn);
}

/* bad sector at local 4096: listed, its data refused, mended only by the right bytes */
static void mend_steps(struct cl *c, uint64_t h, const char *p, const uint8_t *w)
{
    struct ddio_scrub_r r;
    struct msg m;
    uint8_t sec[SEC], wrong[SEC];
    flip(p, 5000);
    CHECK(scrub(c, h, 0, 0, 0, 2 * UNIT, &r, &m) == 0, "SCRUB after the flip");
    CHECK(r.nbad == 1 && r.bad[0] == SEC && r.verified == 2 * UNIT / SEC - 1,
          "SCRUB found %u bad (first %" PRIu64 "), %" PRIu64 " right", r.nbad,
          r.nbad ? r.bad[0] : 0, r.verified);
    ddio_scrub_r_free(&r);
    free(m.p);
    CHECK(scrub(c, h, 0, DDIO_SC_DATA, SEC, SEC, &r, &m) == 0 && r.nbad == 1
          && r.data_len == SEC, "SC_DATA of the bad sector: %u bad, %u bytes", r.nbad,
          r.data_len);
    ddio_scrub_r_free(&r);
    free(m.p);
    /* bytes that are not what was written: refused, nothing written */
    memcpy(wrong, w + SEC, SEC);
    wrong[100] ^= 1;
    struct ddio_repair_r rr = repair(c, h, SEC, wrong);
    datafile(p, SEC, sec, SEC);
    int flipped = sec[5000 - SEC] + w[5000] == 0xFF;     /* b ^ 0xFF == 0xFF - b */
    CHECK(rr.refused == 1 && rr.repaired == 0 && flipped && sec[100] == w[SEC + 100],
          "wrong bytes: refused %u repaired %u", rr.refused,
          rr.repaired);
    uint64_t before = cl_stat(c, "sums_repaired");
    rr = repair(c, h, SEC, w + SEC);
    datafile(p, 0, sec, SEC);
    CHECK(!memcmp(sec, w, SEC), "the sector before the bad one changed");
    datafile(p, SEC, sec, SEC);
    CHECK(rr.repaired == 1 && !memcmp(sec, w + SEC, SEC), "right bytes: repaired %u, datafile "
          "%s the original", rr.repaired, memcmp(sec, w + SEC, SEC) ? "is not" : "is");
    CHECK(cl_stat(c, "sums_repaired") == before + 1, "sums_repaired not counted");
    CHECK(!g_log || log_has("checksums: repaired ", "at offset 4096 (local 4096) on server"),
          "repair not logged");
    rr = repair(c, h, SEC, w + SEC);
    CHECK(rr.good == 1 && rr.repaired == 0, "a second REPAIR: good %u repaired %u", rr.good,
          rr.repaired);
    CHECK(scrub(c, h, 0, 0, 0, 2 * UNIT, &r, &m) == 0 && r.nbad == 0, "SCRUB after the repair");
    ddio_scrub_r_free(&r);
    free(m.p);
}

/* rot, then a write of new data over it: a REPAIR with the old bytes
 * finds the sector right and leaves the new data */
static void newer_wins(struct cl *c, uint64_t h, const char *p, const struct ddio_desc *d,
                       uint8_t *w)
{
    uint8_t sec[SEC];
    flip(p, 3 * SEC + 7);
    uint8_t *old = malloc(SEC);
    memcpy(old, w + 3 * SEC, SEC);
    fill_pattern(w, 4 * UNIT, 77);
    struct xres x = cl_xfer(c, h, DDIO_X_WRITE, 0, 0, 0, 1, 0, d, w, NULL, TMO);
    CHECK(x.status == 0, "rewrite: %s", x.err);
    struct ddio_repair_r rr = repair(c, h, 3 * SEC, old);
    datafile(p, 3 * SEC, sec, SEC);
    CHECK(rr.good == 1 && rr.repaired == 0 && !memcmp(sec, w + 3 * SEC, SEC),
          "old bytes over newer: good %u repaired %u, datafile %s the new data", rr.good,
          rr.repaired, memcmp(sec, w + 3 * SEC, SEC) ? "is not" : "is");
    printf("    bad sector listed, wrong bytes refused, right ones written, newer data kept\n");
    free(old);
}

/* the sum rotted, not the data: closed after a SYNC (sidecar CLEAN),
 * sector 1's CRC flipped in the sidecar, reopened; SCRUB lists the
 * sector, REPAIR with the bytes the datafile holds rewrites the sum (not
 * the data), and the sidecar holds the right CRC again */
static void sum_rot(struct cl *c, uint64_t *h, const char *p, const uint8_t *w,
                    const struct ddio_layout_rec *l)
{
    char fn[512];
    uint8_t crc[4], now[4];
    struct ddio_open_r o;
    struct ddio_scrub_r r;
    struct msg m;
    CHECK(cl_handle_op(c, DDIO_T_SYNC, *h, NULL) == 0, "SYNC");
    CHECK(cl_handle_op(c, DDIO_T_CLOSE, *h, NULL) == 0, "CLOSE");
    snprintf(fn, sizeof(fn), "%s/.ddio/sums/%s", g_root, p);
    FILE *f = fopen(fn, "r+b");
    CHECK(f && fseek(f, 64 + 8, SEEK_SET) == 0 && fread(crc, 1, 4, f) == 4, "sidecar %s", fn);
    uint8_t bad[4] = {crc[0] ^ 1, crc[1], crc[2], crc[3]};
    CHECK(fseek(f, 64 + 8, SEEK_SET) == 0 && fwrite(bad, 1, 4, f) == 4 && fclose(f) == 0,
          "sidecar write");
    CHECK(cl_open(c, p, DDIO_O_RDWR, l, &o) == 0, "reopen %s", p);
    *h = o.handle;
    CHECK(scrub(c, *h, 0, 0, 0, 2 * UNIT, &r, &m) == 0 && r.nbad == 1 && r.bad[0] == SEC,
          "SCRUB with a rotten sum: %u bad", r.nbad);
    ddio_scrub_r_free(&r);
    free(m.p);
    uint8_t sec[SEC];
    datafile(p, SEC, sec, SEC);
    struct ddio_repair_r rr = repair(c, *h, SEC, sec);
    f = fopen(fn, "rb");
    CHECK(f && fseek(f, 64 + 8, SEEK_SET) == 0 && fread(now, 1, 4, f) == 4, "sidecar reread");
    fclose(f);
    CHECK(rr.repaired == 1 && !memcmp(now, crc, 4) && !memcmp(sec, w + SEC, SEC),
          "rotten sum: repaired %u, sidecar CRC %s", rr.repaired,
          memcmp(now, crc, 4) ? "still wrong" : "right");
    CHECK(scrub(c, *h, 0, 0, 0, 2 * UNIT, &r, &m) == 0 && r.nbad == 0, "SCRUB after");
    ddio_scrub_r_free(&r);
    free(m.p);
    printf("    a rotten checksum rewritten, the data left\n");
}

void test_scrub(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r o;
    struct ddio_scrub_r r;
    struct msg m;
    char p[128];
    layout_for(c, &l, UNIT, 2);
    l.copies = 2;
    path_name(p, sizeof(p), "scrub");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &o) == 0, "create %s", p);
    uint64_t len = 4 * UNIT;
    struct dspec s = {.disp = 0, .count = 1, .len = len, .extent = len, .length = len};
    struct ddio_desc d;
    build_desc(&s, &d);
    uint8_t *w = malloc(len);
    fill_pattern(w, len, 44);
    struct xres x = cl_xfer(c, o.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, w, NULL, TMO);
    CHECK(x.status == 0, "mirrored write: %s", x.err);
    if (cl_stat(c, "checksums") == 0) {
        CHECK(scrub(c, o.handle, 0, 0, 0, UNIT, &r, &m) == EOPNOTSUPP, "SCRUB without sums");
        free(m.p);
    } else {
        CHECK(scrub(c, o.handle, 1, 0, 0, 2 * UNIT, &r, &m) == 0 && r.nbad == 0
              && r.verified == 2 * UNIT / SEC && r.size == 2 * UNIT && r.next == 2 * UNIT,
              "SCRUB of the mirror: %" PRIu64 " right, size %" PRIu64, r.verified, r.size);
        ddio_scrub_r_free(&r);
        free(m.p);
        CHECK(scrub(c, o.handle, 2, 0, 0, UNIT, &r, &m) == ENOENT, "a copy not held");
        free(m.p);
        if (g_root && c->ndisks == 1) {
            mend_steps(c, o.handle, p, w);
            sum_rot(c, &o.handle, p, w, &l);
            newer_wins(c, o.handle, p, &d, w);
        }
    }
    ddio_desc_free(&d);
    free(w);
    cl_close(c);
}
