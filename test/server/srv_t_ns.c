/* srv_client's cases: namespace and metadata requests: OPEN/CLOSE/STAT/SETSIZE/PREALLOC/SYNC/DELETE, confinement, STATS. */
#include "srv_harness.h"

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
    struct ddio_setsize ss = {h, 100000};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_setsize(&w, &ss);
    CHECK(call_simple(c, DDIO_T_SETSIZE, &w) == 0, "setsize failed");
    CHECK(cl_handle_op(c, DDIO_T_STAT, h, &v) == 0 && v == 100000, "stat after setsize: %" PRIu64, v);
    struct ddio_prealloc pa = {h, 0, 300000};
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
    int have_xfers = 0, have_last = 0;
    for (uint32_t i = 0; i < s.n; i++) {
        have_xfers |= strcmp(s.kv[i].key, "xfers") == 0 && s.kv[i].val > 0;
        have_last |= strcmp(s.kv[i].key, "last.blocks") == 0;
    }
    CHECK(have_xfers && have_last, "STATS lacks xfers / last.*");
    ddio_stats_r_free(&s);
    free(m.p);
    cl_close(c);
    printf("ok   STATS\n");
}

