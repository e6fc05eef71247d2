/* An erasure-coded file on one live server (index 0 of an ec:2+1 file on
 * 3): a write of whole groups stores the server's own data units and
 * computes, in the same pass, the parity of the groups whose parity it
 * holds (groups 2, 5, 8, ...: parity unit j of group g is on server
 * (2g + 2 + j) mod 3), equal to ISA-L's encoding of the group's data; a
 * second write of one group changes that group's parity only; a write
 * covering a group in part is refused before a byte is written. */
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
    /* one group and a half: refused, nothing written */
    uint8_t *other = malloc(3 * UNIT);
    fill_pattern(other, 3 * UNIT, 99);
    x = write_range(c, r.handle, 0, 3 * UNIT, other);
    CHECK(x.status == ENOTSUP && strstr(x.err, "in part"), "a partial group's write: status %d (%s)",
          x.status, x.err);
    memset(back, 0, len);
    x = cl_xfer(c, r.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, back, got, TMO);
    CHECK(x.status == 0 && !memcmp(back, w, UNIT), "unit 0 changed by a refused write");
    ddio_desc_free(&d);
    ddio_ec_codec_free(codec);
    free(other);
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
