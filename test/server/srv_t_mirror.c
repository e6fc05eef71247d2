/* A mirrored file on one live server (index 0 of 2, 2 copies: it holds
 * its own units and the mirror of index 1's): a write covers both in one
 * pass, a plain read returns its own units only, DDIO_XF_COPY returns the
 * mirrored ones, the mirror datafile is index 1's units byte for byte,
 * SETSIZE sizes the mirror by the logical size; a copy the file does not
 * have is EINVAL. */
#include "srv_harness.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define UNIT 65536u

static void copy_file_check(const struct cl *c, const char *p, const uint8_t *w, uint64_t len)
{
    char fn[512];
    struct stat sb;
    if (!g_root || c->ndisks != 1)
        return;
    snprintf(fn, sizeof(fn), "%s/.ddio/copy1/%s", g_root, p);
    FILE *f = fopen(fn, "rb");
    CHECK(f, "mirror datafile %s missing", fn);
    uint8_t *fb = malloc(len);
    size_t got = fread(fb, 1, len, f);
    fclose(f);
    /* index 1's units (1 and 3 of the range) stored densely */
    CHECK(got == 2 * UNIT && !memcmp(fb, w + UNIT, UNIT) && !memcmp(fb + UNIT, w + 3 * UNIT, UNIT),
          "mirror datafile is not index 1's units (%zu bytes)", got);
    CHECK(stat(fn, &sb) == 0 && (uint64_t)sb.st_size == 2 * UNIT, "mirror datafile size");
    free(fb);
}

void test_mirror(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    char p[128];
    layout_for(c, &l, UNIT, 2);
    l.copies = 2;
    path_name(p, sizeof(p), "mirror");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create %s", p);
    CHECK(r.layout.copies == 2, "stored copies %u", r.layout.copies);
    uint64_t len = 4 * UNIT, before = cl_stat(c, "copy_reads");
    struct dspec s = {.disp = 0, .count = 1, .len = len, .extent = len, .length = len};
    struct ddio_desc d;
    build_desc(&s, &d);
    uint8_t *w = malloc(len), *b = calloc(len, 1), *got = calloc(len + 1, 1);
    fill_pattern(w, len, 43);
    struct xres x = cl_xfer(c, r.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, w, NULL, TMO);
    CHECK(x.status == 0, "mirrored write: %s", x.err);
    /* every byte GETted: its own units and the mirror's */
    CHECK(x.get_bytes == len, "write pulled %" PRIu64 " bytes, wanted %" PRIu64, x.get_bytes, len);
    x = cl_xfer(c, r.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, b, got, TMO);
    CHECK(x.status == 0 && x.put_bytes == 2 * UNIT && !memcmp(b, w, UNIT) &&
          !memcmp(b + 2 * UNIT, w + 2 * UNIT, UNIT), "plain read: own units only (%" PRIu64 ")",
          x.put_bytes);
    memset(b, 0, len);
    x = cl_xfer_hold(c, r.handle, DDIO_X_READ, DDIO_XF_COPY, 0, 0, 1, 0, &d, b, got, TMO, 0, 1);
    CHECK(x.status == 0 && x.put_bytes == 2 * UNIT && !memcmp(b + UNIT, w + UNIT, UNIT) &&
          !memcmp(b + 3 * UNIT, w + 3 * UNIT, UNIT), "copy read: index 1's units (%" PRIu64 ")",
          x.put_bytes);
    CHECK(x.r.local_size == 2 * UNIT, "copy read's local size %" PRIu64, x.r.local_size);
    CHECK(cl_stat(c, "copy_reads") == before + 1, "copy_reads not counted");
    x = cl_xfer_hold(c, r.handle, DDIO_X_READ, DDIO_XF_COPY, 0, 0, 1, 0, &d, b, got, TMO, 0, 2);
    CHECK(x.status == EINVAL, "a third copy of a 2-copy file: status %d", x.status);
    copy_file_check(c, p, w, len);
    /* SETSIZE by a logical size of 1.5 units: index 1's mirror empties */
    struct ddio_setsize ss = {r.handle, UNIT, UNIT + UNIT / 2, 0};
    struct ddio_wbuf sw;
    ddio_wbuf_init(&sw);
    ddio_enc_setsize(&sw, &ss);
    CHECK(call_simple(c, DDIO_T_SETSIZE, &sw) == 0, "SETSIZE");
    x = cl_xfer_hold(c, r.handle, DDIO_X_READ, DDIO_XF_COPY, 0, 0, 1, 0, &d, b, got, TMO, 0, 1);
    CHECK(x.status == 0 && x.r.local_size == UNIT / 2 && x.put_bytes == UNIT / 2,
          "copy after SETSIZE: local size %" PRIu64 ", %" PRIu64 " bytes", x.r.local_size,
          x.put_bytes);
    ddio_desc_free(&d);
    free(w);
    free(b);
    free(got);
    CHECK(cl_delete(c, p) == 0, "delete");
    cl_close(c);
}
