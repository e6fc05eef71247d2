/* An erasure-coded file on one live server (index 0 of an ec:2+1 file on
 * 3): a write of whole groups stores the server's own data units and
 * computes, in the same pass, the parity of the groups whose parity it
 * holds (groups 2, 5, 8, ...: parity unit j of group g is on server
 * (2g + 2 + j) mod 3), equal to ISA-L's encoding of the group's data; a
 * second write of one group changes that group's parity only. A write
 * covering a group in part leaves the data in place and the parity alone:
 * its bytes go to the overlay (the server's own units, read back merged
 * over the in-place bytes) and, as copies, to the overlay of the group's
 * parity server; a later whole write of the group wins over the overlay;
 * the overlay is kept across a close, and one past the end grows the
 * file. */
#include "srv_harness.h"

#include <stdlib.h>
#include <string.h>

#include "ddio_ec.h"

#define UNIT 65536u

/* server 0's parity datafile (one disk), or NULL */
static uint8_t *parity_file(const char *p, size_t *len)
{
    char fn[512];
    snprintf(fn, sizeof(fn), "%s/.ddio/parity/%s", g_root, p);
    FILE *f = fopen(fn, "rb");
    if (!f)
        return NULL;
    uint8_t *b = malloc(16 * UNIT);
    *len = fread(b, 1, 16 * UNIT, f);
    fclose(f);
    return b;
}

/* the parity of group g of the logical bytes w (starting at offset 0) */
static void parity_of(const struct ddio_ec_codec *codec, const uint8_t *w, uint64_t g, uint8_t *out)
{
    uint8_t *data[2] = {(uint8_t *)w + (2 * g) * UNIT, (uint8_t *)w + (2 * g + 1) * UNIT};
    uint32_t row = 0;
    ddio_ec_encode(codec, UNIT, data, 1, &row, &out);
}

static struct xres write_range(struct cl *c, uint64_t h, uint64_t off, uint64_t len, uint8_t *buf)
{
    struct dspec s = {.disp = (int64_t)off, .count = 1, .len = len, .extent = (int64_t)len,
                      .length = len};
    struct ddio_desc d;
    build_desc(&s, &d);
    struct xres x = cl_xfer(c, h, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, buf, NULL, TMO);
    ddio_desc_free(&d);
    return x;
}

/* logical unit u of the file (one of server 0's: u % 3 == 0), read */
static int read_unit(struct cl *c, uint64_t h, uint64_t u, uint8_t *out)
{
    struct dspec s = {.disp = (int64_t)(u * UNIT), .count = 1, .len = UNIT, .extent = UNIT,
                      .length = UNIT};
    struct ddio_desc d;
    build_desc(&s, &d);
    uint8_t *got = calloc(UNIT + 1, 1);
    memset(out, 0, UNIT);
    struct xres x = cl_xfer(c, h, DDIO_X_READ, 0, 0, 0, 1, 0, &d, out, got, TMO);
    ddio_desc_free(&d);
    free(got);
    return x.status == 0;
}

/* n bytes at off of server 0's datafile ("") or view ("overlay") on a
 * server of one disk: 1 when read */
static int file_bytes(const char *p, const char *view, uint64_t off, size_t n, uint8_t *out)
{
    char fn[512];
    if (!g_root)
        return 0;
    if (*view)
        snprintf(fn, sizeof(fn), "%s/.ddio/%s/%s", g_root, view, p);
    else
        snprintf(fn, sizeof(fn), "%s/%s", g_root, p);
    FILE *f = fopen(fn, "rb");
    if (!f)
        return 0;
    size_t got = fseek(f, (long)off, SEEK_SET) == 0 ? fread(out, 1, n, f) : 0;
    fclose(f);
    return got == n;
}

static void check_parity(const char *p, const struct ddio_ec_codec *codec, const uint8_t *w,
                         const char *when)
{
    size_t len = 0;
    uint8_t *pf = parity_file(p, &len), *want = malloc(UNIT);
    CHECK(pf && len >= 2 * UNIT, "%s: parity datafile has %zu bytes", when, len);
    for (uint64_t i = 0; i < 2; i++) {   /* parity units 0, 1: groups 2, 5 */
        parity_of(codec, w, 3 * i + 2, want);
        CHECK(!memcmp(pf + i * UNIT, want, UNIT), "%s: parity unit %" PRIu64 " (group %" PRIu64
              ") is not the group's encoding", when, i, 3 * i + 2);
    }
    free(pf);
    free(want);
}

void test_ec(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    char p[128], err[160];
    layout_for(c, &l, UNIT, 3);
    l.copies = 1;
    l.ec = (struct ddio_ec){2, 1};
    path_name(p, sizeof(p), "ec");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create %s", p);
    CHECK(r.layout.ec.k == 2 && r.layout.ec.m == 1 && r.layout.copies == 1,
          "stored ec:%u+%u, %u copies", r.layout.ec.k, r.layout.ec.m, r.layout.copies);
    struct ddio_ec_codec *codec = ddio_ec_codec_new(&l.ec, err, sizeof(err));
    CHECK(codec, "%s", err);
    /* groups 0..5: units 0..11 */
    uint64_t len = 12 * UNIT;
    uint8_t *w = malloc(len), *back = calloc(len, 1), *got = calloc(len + 1, 1);
    fill_pattern(w, len, 51);
    struct xres x = write_range(c, r.handle, 0, len, w);
    CHECK(x.status == 0, "write of whole groups: %s", x.err);
    /* its units 0, 3, 6, 9 and the data of groups 2 and 5 (units 4, 5, 10, 11) */
    CHECK(x.get_bytes == 8 * UNIT, "write pulled %" PRIu64 " bytes, wanted %u", x.get_bytes,
          8 * UNIT);
    struct dspec s = {.disp = 0, .count = 1, .len = len, .extent = (int64_t)len, .length = len};
    struct ddio_desc d;
    build_desc(&s, &d);
    x = cl_xfer(c, r.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, back, got, TMO);
    CHECK(x.status == 0 && x.put_bytes == 4 * UNIT, "read back: %" PRIu64 " bytes", x.put_bytes);
    for (uint64_t u = 0; u < 12; u += 3)
        CHECK(!memcmp(back + u * UNIT, w + u * UNIT, UNIT), "data unit %" PRIu64 " read back wrong",
              u);
    if (g_root && c->ndisks == 1)
        check_parity(p, codec, w, "first write");
    /* group 5 again with other bytes: its parity follows, group 2's stays */
    fill_pattern(w + 10 * UNIT, 2 * UNIT, 77);
    x = write_range(c, r.handle, 10 * UNIT, 2 * UNIT, w + 10 * UNIT);
    CHECK(x.status == 0, "rewrite of group 5: %s", x.err);
    if (g_root && c->ndisks == 1)
        check_parity(p, codec, w, "group 5 rewritten");
    /* group 0 in part (unit 0's second half, unit 1's first): server 0
     * keeps its own unit's half in its overlay, in place stays as it was */
    uint8_t *part = malloc(UNIT);
    fill_pattern(part, UNIT, 99);
    x = write_range(c, r.handle, UNIT / 2, UNIT, part);
    CHECK(x.status == 0 && x.get_bytes == UNIT / 2, "partial write of group 0: %s (%" PRIu64
          " bytes pulled)", x.err, x.get_bytes);
    memcpy(w + UNIT / 2, part, UNIT);
    CHECK(read_unit(c, r.handle, 0, back) && !memcmp(back, w, UNIT),
          "unit 0 after a partial write: not the in-place bytes with the overlay's over them");
    CHECK(c->ndisks != 1 || (file_bytes(p, "", UNIT / 2, UNIT / 2, back)
                             && memcmp(back, part, UNIT / 2) != 0),
          "a partial write changed the data in place");
    /* group 2 in part: unit 4 is server 1's, its copy lands in server 0's
     * overlay (unit 4 -> overlay unit 5), the parity stays the old one */
    x = write_range(c, r.handle, 4 * UNIT + 100, 200, part);
    CHECK(x.status == 0 && x.get_bytes == 200, "partial write of group 2: %s", x.err);
    CHECK(c->ndisks != 1 || (file_bytes(p, "overlay", 5 * UNIT + 100, 200, back)
                             && !memcmp(back, part, 200)),
          "server 1's unit 4 not copied into server 0's overlay");
    if (g_root && c->ndisks == 1)
        check_parity(p, codec, w, "after partial writes");   /* w: still the old group 2 */
    /* group 0 whole again: the overlay's older half is gone from reads */
    fill_pattern(w, 2 * UNIT, 5);
    x = write_range(c, r.handle, 0, 2 * UNIT, w);
    CHECK(x.status == 0, "whole group 0 again: %s", x.err);
    CHECK(read_unit(c, r.handle, 0, back) && !memcmp(back, w, UNIT),
          "unit 0 after a whole write over the overlay: old overlay bytes read");
    /* a partial write kept across a close and an open; one past the end
     * grows the file (unit 12, server 0's 5th) */
    x = write_range(c, r.handle, 3 * UNIT + 7, 11, part);
    CHECK(x.status == 0, "partial write of unit 3: %s", x.err);
    x = write_range(c, r.handle, 12 * UNIT + 10, 10, part + 500);
    CHECK(x.status == 0, "partial write past the end: %s", x.err);
    CHECK(cl_handle_op(c, DDIO_T_CLOSE, r.handle, NULL) == 0, "close");
    CHECK(cl_open(c, p, DDIO_O_RDWR, &l, &r) == 0, "open again");
    memcpy(w + 3 * UNIT + 7, part, 11);
    CHECK(read_unit(c, r.handle, 3, back) && !memcmp(back, w + 3 * UNIT, UNIT),
          "unit 3's overlay bytes lost across a close");
    uint64_t v = 0;
    CHECK(cl_handle_op(c, DDIO_T_STAT, r.handle, &v) == 0 && v == 4 * UNIT + 20,
          "local size %" PRIu64 " after a partial write past the end, wanted %u", v, 4 * UNIT + 20);
    CHECK(read_unit(c, r.handle, 12, back) && back[9] == 0 && !memcmp(back + 10, part + 500, 10),
          "unit 12 after a partial write past the end");
    free(part);
    ddio_desc_free(&d);
    ddio_ec_codec_free(codec);
    free(w);
    free(back);
    free(got);
    CHECK(cl_delete(c, p) == 0, "delete");
    if (g_root && c->ndisks == 1) {
        size_t n;
        uint8_t *gone = parity_file(p, &n);
        CHECK(!gone, "parity datafile left after delete");
    }
    cl_close(c);
}
