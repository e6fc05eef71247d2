/* srv_client's cases: namespace and metadata requests: OPEN/CLOSE/STAT/SETSIZE/PREALLOC/SYNC/DELETE, confinement, STATS. */
#include "srv_harness.h"

/* a handle opened read-only changes nothing: a write, SETSIZE and PREALLOC
 * through it are EBADF and leave the file as it was; a read works */
static void read_only_refusals(struct cl *c, const char *p, const struct ddio_layout_rec *l)
{
    struct ddio_open_r ro;
    uint64_t before = 0, after = 1;
    uint8_t b[64] = {0};
    CHECK(cl_open(c, p, DDIO_O_RDONLY, l, &ro) == 0, "read-only open");
    CHECK(cl_handle_op(c, DDIO_T_STAT, ro.handle, &before) == 0, "stat");
    struct dspec sp = {.disp = 0, .count = 1, .len = 64, .extent = 64, .length = 64};
    struct ddio_desc d;
    build_desc(&sp, &d);
    struct xres x = cl_xfer(c, ro.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, b, NULL, TMO);
    CHECK(x.status == EBADF, "a write through a read-only handle: %d, not EBADF", x.status);
    struct ddio_setsize ss = {ro.handle, before + 4096, UINT64_MAX, 0};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_setsize(&w, &ss);
    CHECK(call_simple(c, DDIO_T_SETSIZE, &w) == EBADF, "SETSIZE through a read-only handle");
    struct ddio_prealloc pa = {ro.handle, 0, before + 8192, 0};
    ddio_wbuf_init(&w);
    ddio_enc_prealloc(&w, &pa);
    CHECK(call_simple(c, DDIO_T_PREALLOC, &w) == EBADF, "PREALLOC through a read-only handle");
    CHECK(cl_handle_op(c, DDIO_T_STAT, ro.handle, &after) == 0 && after == before,
          "the file's size moved through a read-only handle: %" PRIu64 " -> %" PRIu64,
          before, after);
    uint8_t got[65] = {0};
    x = cl_xfer(c, ro.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, b, got, TMO);
    CHECK(x.status == 0, "a read through a read-only handle failed (%d)", x.status);
    ddio_node_free(d.root);
    CHECK(cl_handle_op(c, DDIO_T_CLOSE, ro.handle, NULL) == 0, "close");
}

void test_files(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    struct ddio_open_r r;
    char p[128];
    layout_for(c, &l, 65536, 1);
    path_name(p, sizeof(p), "dir/sub/f1");
    CHECK(cl_open(c, p, DDIO_O_RDWR, &l, &r) == ENOENT, "open of a missing file is not ENOENT");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r) == 0, "create failed");
    CHECK(r.created == 1 && r.local_size == 0, "create reply wrong");
    CHECK(memcmp(r.layout.ids[0], c->id, DDIO_ID_LEN) == 0 && r.layout.stripe_unit == 65536,
          "stored layout wrong");
    uint64_t h = r.handle, v = 99;
    struct ddio_open_r r2;
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, &l, &r2) == EEXIST,
          "EXCL create of an existing file is not EEXIST");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT, &l, &r2) == 0 && r2.created == 0,
          "reopen with CREAT failed");
    CHECK(cl_handle_op(c, DDIO_T_CLOSE, r2.handle, NULL) == 0, "close failed");
    CHECK(cl_handle_op(c, DDIO_T_CLOSE, r2.handle, NULL) == EBADF, "double close not EBADF");
    CHECK(cl_handle_op(c, DDIO_T_STAT, h, &v) == 0 && v == 0, "stat of new file");
    struct ddio_setsize ss = {h, 100000, UINT64_MAX, 0};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_setsize(&w, &ss);
    CHECK(call_simple(c, DDIO_T_SETSIZE, &w) == 0, "setsize failed");
    CHECK(cl_handle_op(c, DDIO_T_STAT, h, &v) == 0 && v == 100000, "stat after setsize: %" PRIu64, v);
    struct ddio_prealloc pa = {h, 0, 300000, 0};
    ddio_wbuf_init(&w);
    ddio_enc_prealloc(&w, &pa);
    CHECK(call_simple(c, DDIO_T_PREALLOC, &w) == 0, "prealloc failed");
    CHECK(cl_handle_op(c, DDIO_T_STAT, h, &v) == 0 && v == 300000, "stat after prealloc: %" PRIu64, v);
    ss.local_size = 5000;
    ddio_wbuf_init(&w);
    ddio_enc_setsize(&w, &ss);
    CHECK(call_simple(c, DDIO_T_SETSIZE, &w) == 0, "shrink failed");
    CHECK(cl_handle_op(c, DDIO_T_STAT, h, &v) == 0 && v == 5000, "stat after shrink");
    CHECK(cl_handle_op(c, DDIO_T_SYNC, h, NULL) == 0, "sync failed");
    CHECK(cl_handle_op(c, DDIO_T_STAT, 12345, &v) == EBADF, "stat of a bad handle not EBADF");
    /* confinement */
    const char *bad[] = {"../escape", "a/../../b", "a//b", "/", "", ".ddio/server-id", "a/./b"};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        int st = cl_open(c, bad[i], DDIO_O_RDWR | DDIO_O_CREAT, &l, &r2);
        CHECK(st == EACCES || st == EINVAL, "path '%s' accepted (%d)", bad[i], st);
    }
    char abs[160];
    snprintf(abs, sizeof(abs), "/%s", p);   /* leading '/' is stripped: same file */
    CHECK(cl_open(c, abs, DDIO_O_RDWR, &l, &r2) == 0, "open with a leading / failed");
    /* layout mismatch: another server's id at our index */
    struct ddio_layout_rec bl = l;
    memset(bl.ids[0], 0x77, DDIO_ID_LEN);
    path_name(p, sizeof(p), "stale");
    CHECK(cl_open(c, p, DDIO_O_RDWR | DDIO_O_CREAT, &bl, &r2) == ESTALE,
          "create naming another server id not refused");
    /* delete */
    path_name(p, sizeof(p), "dir/sub/f1");
    read_only_refusals(c, p, &l);
    CHECK(cl_delete(c, p) == 0, "delete failed");
    CHECK(cl_delete(c, p) == ENOENT, "second delete not ENOENT");
    CHECK(cl_open(c, p, DDIO_O_RDWR, &l, &r2) == ENOENT, "open after delete not ENOENT");
    CHECK(cl_delete(c, "../x") == EACCES, "delete of ../x not EACCES");
    /* a second AUTH is a protocol error (the server then closes) */
    CHECK(call_simple(c, DDIO_T_AUTH, NULL) == EPROTO, "second AUTH not EPROTO");
    cl_close(c);
    printf("ok   file operations, EXCL, confinement, ESTALE, delete, second AUTH\n");
}

void test_stats(void)
{
    struct cl *c = cl_connect();
    struct msg m;
    CHECK(call(c, DDIO_T_STATS, NULL, &m) == 0, "STATS failed");
    struct ddio_stats_r s;
    CHECK(ddio_dec_stats_r(m.p, m.h.len, &s) == 0, "STATS malformed");
    int have_last;
    int have_xfers = ddio_stats_r_get(&s, "xfers", NULL) > 0;
    (void)ddio_stats_r_get(&s, "last.blocks", &have_last);
    CHECK(have_xfers && have_last, "STATS lacks xfers / last.*");
    ddio_stats_r_free(&s);
    free(m.p);
    cl_close(c);
    printf("ok   STATS\n");
}


#define RD_BIG 5000
#define RD_PAGE 250u

static int ns_mkdir(struct cl *c, const char *path)
{
    struct ddio_mkdir m = {.path = (char *)path, .mode = 0755};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_mkdir(&w, &m);
    return call_simple(c, DDIO_T_MKDIR, &w);
}

static int ns_rmdir(struct cl *c, const char *path)
{
    struct ddio_path_req p = {.path = (char *)path};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_path_req(&w, &p);
    return call_simple(c, DDIO_T_RMDIR, &w);
}

/* one READDIR page of dir after `after` (updated to its last name): the
 * names appended to got[*n]; 1 if more follow */
static int readdir_page(struct cl *c, const char *dir, char *after, char (*got)[16], int *n,
                        int cap)
{
    struct ddio_readdir q = {.path = (char *)dir, .after = after, .max = RD_PAGE};
    struct ddio_readdir_r r;
    struct ddio_wbuf w;
    struct msg m;
    ddio_wbuf_init(&w);
    ddio_enc_readdir(&w, &q);
    CHECK(call(c, DDIO_T_READDIR, &w, &m) == 0, "READDIR %s after '%s' failed", dir, after);
    CHECK(ddio_dec_readdir_r(m.p, m.h.len, &r) == 0, "READDIR reply malformed");
    free(m.p);
    for (uint32_t i = 0; i < r.n; i++) {
        CHECK(*n < cap && strlen(r.ent[i].name) < 16, "READDIR: too many or long names");
        strcpy(got[(*n)++], r.ent[i].name);
    }
    int more = (int)r.more;
    if (more)
        strcpy(after, r.ent[r.n - 1].name);
    ddio_readdir_r_free(&r);
    return more;
}

static int listed(char (*got)[16], int n, const char *name)
{
    int times = 0;
    for (int i = 0; i < n; i++)
        times += !strcmp(got[i], name);
    return times;
}

/* READDIR over the wire on a directory of 5000 entries, pages of 250,
 * entries removed and created on both sides of the position after the
 * fourth page: sorted, none twice, each present throughout once, the one
 * removed ahead of the position not at all; a later listing sees the
 * changes; a page resuming after a name that is not one is refused. */
void test_readdir_big(void)
{
    static char got[RD_BIG + 8][16];
    char dir[64], p[96], after[DDIO_NAME_MAX + 1] = "";
    struct cl *c = cl_connect();
    int n = 0, pages = 0;
    path_name(dir, sizeof(dir), "rd");
    CHECK(ns_mkdir(c, dir) == 0, "mkdir %s", dir);
    for (int i = 0; i < RD_BIG; i++) {
        snprintf(p, sizeof(p), "%s/e%05d", dir, 2 * i);
        CHECK(ns_mkdir(c, p) == 0, "mkdir %s", p);
    }
    while (readdir_page(c, dir, after, got, &n, RD_BIG + 8))
        if (++pages == 4) {                    /* listed up to e01998 */
            CHECK(!strcmp(after, "e01998"), "page 4 ends at %s", after);
            snprintf(p, sizeof(p), "%s/e00100", dir);
            CHECK(ns_rmdir(c, p) == 0, "rmdir %s", p);
            snprintf(p, sizeof(p), "%s/e08000", dir);
            CHECK(ns_rmdir(c, p) == 0, "rmdir %s", p);
            snprintf(p, sizeof(p), "%s/e00101", dir);
            CHECK(ns_mkdir(c, p) == 0, "mkdir %s", p);
            snprintf(p, sizeof(p), "%s/e08001", dir);
            CHECK(ns_mkdir(c, p) == 0, "mkdir %s", p);
        }
    for (int i = 1; i < n; i++)
        CHECK(strcmp(got[i - 1], got[i]) < 0, "%s listed before %s", got[i - 1], got[i]);
    for (int i = 0; i < RD_BIG; i++) {
        snprintf(p, sizeof(p), "e%05d", 2 * i);
        CHECK(listed(got, n, p) == (2 * i == 8000 ? 0 : 1), "%s listed %d times", p,
              listed(got, n, p));
    }
    CHECK(n == RD_BIG - 1 + listed(got, n, "e00101") + listed(got, n, "e08001"),
          "%d names listed", n);
    CHECK(!listed(got, n, "e00101"), "e00101 listed: created behind the position");

    n = 0;
    after[0] = '\0';
    while (readdir_page(c, dir, after, got, &n, RD_BIG + 8))
        ;
    CHECK(n == RD_BIG, "the listing after the changes has %d names, not %d", n, RD_BIG);
    CHECK(listed(got, n, "e00101") == 1 && listed(got, n, "e08001") == 1 &&
          !listed(got, n, "e00100") && !listed(got, n, "e08000"), "changes not seen");

    struct ddio_readdir q = {.path = dir, .after = "a/b", .max = RD_PAGE};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_readdir(&w, &q);
    CHECK(call_simple(c, DDIO_T_READDIR, &w) == EPROTO, "READDIR after 'a/b' not EPROTO");
    cl_close(c);
    printf("ok   READDIR of %d entries in pages, changed while listed\n", RD_BIG);
}
