/* Unit tests for the wire protocol (ddio_proto.c), the socket helpers
 * (ddio_net.c) and the log level parser (ddio_log.c).
 *
 * Decoders are hostile-input code, so besides round trips every sample
 * message is fed truncated at every prefix length, with a trailing byte, with
 * oversized counts and lengths, and mutated at random (fixed seed). Inputs
 * are copied into exactly-sized heap buffers so a sanitizer build catches any
 * read past the end. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "ddio_proto.h"
#include "suite_run.h"

/* ---- sample messages -------------------------------------------------------- */

static void fill_layout(struct ddio_layout_rec *l, uint32_t count)
{
    memset(l, 0, sizeof(*l));
    l->stripe_unit = 1u << 20;
    l->stripe_count = count;
    l->server_index = count - 1;
    l->ndisks = 3;
    l->block_size = 4u << 20;
    l->copies = count >= 2 ? 2 : 1;         /* mirrored where it can be */
    for (uint32_t i = 0; i < count; i++)
        for (uint32_t j = 0; j < DDIO_ID_LEN; j++)
            l->ids[i][j] = (uint8_t)(i * 31 + j + 1);
}

static const uint8_t sample_desc[] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0xff };
static const struct ddio_seg sample_segs[] = { { 0, 5 }, { 100, 3 }, { 1ull << 40, 2 } };
static const uint8_t sample_data[10] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j' };
static struct ddio_kv sample_kv[] = { { "xfers", 7 }, { "last.io_us", 1ull << 50 }, { "", 0 } };

static void enc_hello(struct ddio_wbuf *w)
{
    struct ddio_hello m = { .pid = 4242, .flags = 0, .client = "node17.cluster" };
    ddio_enc_hello(w, &m);
}

static void enc_hello_r(struct ddio_wbuf *w)
{
    struct ddio_hello_r m = { .ndisks = 2, .flags = DDIO_SRV_AUTH_REQUIRED,
                              .block_size = 1u << 22, .name = "127.0.0.1:4711" };
    for (unsigned i = 0; i < DDIO_ID_LEN; i++)
        m.server_id[i] = (uint8_t)(0xA0 + i);
    for (unsigned i = 0; i < DDIO_NONCE_LEN; i++)
        m.nonce[i] = (uint8_t)(3 * i);
    ddio_enc_hello_r(w, &m);
}

static void enc_auth(struct ddio_wbuf *w)
{
    struct ddio_auth m;
    for (unsigned i = 0; i < DDIO_NONCE_LEN; i++)
        m.nonce[i] = (uint8_t)(7 * i + 1);
    for (unsigned i = 0; i < DDIO_MAC_LEN; i++)
        m.mac[i] = (uint8_t)(0xF0 - i);
    ddio_enc_auth(w, &m);
}

static void enc_auth_r(struct ddio_wbuf *w)
{
    struct ddio_auth_r m;
    for (unsigned i = 0; i < DDIO_MAC_LEN; i++)
        m.mac[i] = (uint8_t)(5 * i + 2);
    ddio_enc_auth_r(w, &m);
}

static void enc_open(struct ddio_wbuf *w)
{
    static struct ddio_open m;
    m.path = "data/matrix.bin";
    m.amode = DDIO_O_RDWR | DDIO_O_CREAT;
    fill_layout(&m.layout, 3);
    ddio_enc_open(w, &m);
}

static void enc_open_r(struct ddio_wbuf *w)
{
    static struct ddio_open_r m;
    m.handle = 0x1122334455667788ull;
    m.local_size = 12345;
    m.created = 1;
    fill_layout(&m.layout, 2);
    ddio_enc_open_r(w, &m);
}

static void enc_handle_req(struct ddio_wbuf *w)
{
    struct ddio_handle_req m = { .handle = 0xdeadbeefcafef00dull };
    ddio_enc_handle_req(w, &m);
}

static void enc_u64_r(struct ddio_wbuf *w)
{
    struct ddio_u64_r m = { .value = UINT64_MAX - 1 };
    ddio_enc_u64_r(w, &m);
}

static void enc_path_req(struct ddio_wbuf *w)
{
    struct ddio_path_req m = { .path = "a/b/c" };
    ddio_enc_path_req(w, &m);
}

static void enc_setsize(struct ddio_wbuf *w)
{
    struct ddio_setsize m = { .handle = 5, .local_size = 1ull << 33,
                              .logical_size = 3ull << 33, .flags = DDIO_SS_GROW };
    ddio_enc_setsize(w, &m);
}

static void enc_prealloc(struct ddio_wbuf *w)
{
    struct ddio_prealloc m = { .handle = 6, .local_off = 4096, .local_len = 1ull << 31,
                               .logical_size = 3ull << 31 };
    ddio_enc_prealloc(w, &m);
}

static void enc_xfer(struct ddio_wbuf *w)
{
    struct ddio_xfer m = { .handle = 9, .op = DDIO_X_WRITE, .flags = DDIO_XF_COLLECTIVE,
                           .group = 0x0102030405060708ull, .seq = 77, .nparticipants = 4,
                           .rank = 3, .timeout_ms = 30000, .desc_len = sizeof(sample_desc),
                           .desc = sample_desc };
    ddio_enc_xfer(w, &m);
}

static void enc_xfer_r(struct ddio_wbuf *w)
{
    struct ddio_xfer_r m = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
    ddio_enc_xfer_r(w, &m);
}

static void enc_put(struct ddio_wbuf *w)
{
    struct ddio_segs m = { .nseg = 3, .seg = (struct ddio_seg *)sample_segs, .total = 10 };
    ddio_enc_put(w, &m);
    ddio_put_bytes(w, sample_data, sizeof(sample_data));
}

static void enc_get(struct ddio_wbuf *w)
{
    struct ddio_segs m = { .tag = 99, .nseg = 3, .seg = (struct ddio_seg *)sample_segs };
    ddio_enc_get(w, &m);
}

static void enc_data(struct ddio_wbuf *w)
{
    ddio_enc_data(w, 99);
    ddio_put_bytes(w, sample_data, sizeof(sample_data));
}

static void enc_lock(struct ddio_wbuf *w)
{
    struct ddio_lock m = { .handle = 3, .cmd = DDIO_LK_SETLKW, .type = DDIO_LK_WR,
                           .start = 1000, .len = 0, .timeout_ms = 500 };
    ddio_enc_lock(w, &m);
}

static void enc_stats_r(struct ddio_wbuf *w)
{
    struct ddio_stats_r m = { .n = 3, .kv = sample_kv };
    ddio_enc_stats_r(w, &m);
}

static void enc_err(struct ddio_wbuf *w)
{
    ddio_enc_err(w, "server 127.0.0.1:4711: open data/x: ENOENT");
}

static void enc_pstat_file(struct ddio_wbuf *w)
{
    struct ddio_pstat_r m = { .kind = DDIO_K_FILE, .mode = 0644, .local_size = 12345,
                              .mtime_ns = 1700000000123456789ull };
    fill_layout(&m.layout, 3);
    m.layout.server_index = 2;
    ddio_enc_pstat_r(w, &m);
}

static void enc_pstat_dir(struct ddio_wbuf *w)
{
    struct ddio_pstat_r m = { .kind = DDIO_K_DIR, .mode = 0755, .mtime_ns = 42 };
    ddio_enc_pstat_r(w, &m);
}

static void enc_readdir(struct ddio_wbuf *w)
{
    struct ddio_readdir m = { .path = "a/b", .after = "f1023", .max = DDIO_READDIR_MAX };
    ddio_enc_readdir(w, &m);
}

static struct ddio_dirent sample_ents[] = { { "x", DDIO_K_FILE }, { "sub", DDIO_K_DIR },
                                            { "..x", DDIO_K_FILE } };

static void enc_readdir_r(struct ddio_wbuf *w)
{
    struct ddio_readdir_r m = { .more = 1, .n = 3, .ent = sample_ents };
    ddio_enc_readdir_r(w, &m);
}

static void enc_mkdir(struct ddio_wbuf *w)
{
    struct ddio_mkdir m = { .path = "a/b/c", .mode = 0750 };
    ddio_enc_mkdir(w, &m);
}

static void enc_setattr(struct ddio_wbuf *w)
{
    struct ddio_setattr m = { .path = "a/x", .what = DDIO_SA_MODE | DDIO_SA_OWNER,
                              .mode = 01777, .uid = 4201, .gid = 4300 };
    ddio_enc_setattr(w, &m);
}

static void enc_actas(struct ddio_wbuf *w)
{
    struct ddio_actas m = { .uid = 4202, .gid = 4300 };
    ddio_enc_actas(w, &m);
}

static void enc_watch(struct ddio_wbuf *w)
{
    struct ddio_watch m = { .client = 0x5eed0000cafeull };
    ddio_enc_watch(w, &m);
}

static void enc_inval(struct ddio_wbuf *w)
{
    struct ddio_inval m = { .what = DDIO_IV_NAME | DDIO_IV_TREE, .path = "a/dir" };
    ddio_enc_inval(w, &m);
}

static const uint8_t scrub_bytes[2 * DDIO_SCRUB_SECTOR] = { 1, 2, 3, [8191] = 9 };
static uint64_t scrub_bad[3] = { 0, 4096, 1ull << 40 };

static void enc_scrub(struct ddio_wbuf *w)
{
    struct ddio_scrub m = { .handle = 9, .copy = 1, .flags = DDIO_SC_DATA, .off = 1ull << 32,
                            .len = DDIO_SCRUB_DATA_MAX };
    ddio_enc_scrub(w, &m);
}

static void enc_scrub_r(struct ddio_wbuf *w)
{
    struct ddio_scrub_r m = { .next = 8192, .size = 5000, .verified = 1, .unknown = 1,
                              .nbad = 3, .bad = scrub_bad, .data_len = sizeof(scrub_bytes),
                              .data = scrub_bytes };
    ddio_enc_scrub_r(w, &m);
}

static void enc_repair(struct ddio_wbuf *w)
{
    struct ddio_repair m = { .handle = 3, .copy = 2, .off = 1ull << 33,
                             .data_len = sizeof(scrub_bytes), .data = scrub_bytes };
    ddio_enc_repair(w, &m);
}

static void enc_repair_r(struct ddio_wbuf *w)
{
    struct ddio_repair_r m = { .repaired = 5, .good = 1, .refused = 0xFFFFFFFFu };
    ddio_enc_repair_r(w, &m);
}

static void enc_rebuild_begin(struct ddio_wbuf *w)
{
    struct ddio_rebuild m = { .op = DDIO_RB_BEGIN, .path = "d/e/f" };
    m.layout.stripe_unit = 1 << 20;
    m.layout.stripe_count = 3;
    m.layout.server_index = 2;
    m.layout.ndisks = 1;
    m.layout.block_size = 1 << 20;
    m.layout.copies = 2;
    for (int i = 0; i < 3; i++)
        memset(m.layout.ids[i], 0x10 + i, DDIO_ID_LEN);
    ddio_enc_rebuild(w, &m);
}

static void enc_rebuild_adopt(struct ddio_wbuf *w)
{
    struct ddio_rebuild m = { .op = DDIO_RB_ADOPT };
    memset(m.id, 0xAB, DDIO_ID_LEN);
    ddio_enc_rebuild(w, &m);
}

static void enc_rebuild_progress(struct ddio_wbuf *w)
{
    struct ddio_rebuild m = { .op = DDIO_RB_PROGRESS, .done = 5u << 20, .total = 3ull << 32,
                              .rate = 50000000 };
    ddio_enc_rebuild(w, &m);
}

static void enc_rebuild_r(struct ddio_wbuf *w)
{
    struct ddio_rebuild_r m = { .state = DDIO_RB_BUILT };
    ddio_enc_rebuild_r(w, &m);
}

/* a value of 3 members, the last one out */
static void fill_members(struct ddio_member_val *v)
{
    memset(v, 0, sizeof(*v));
    v->n = 3;
    for (int i = 0; i < 3; i++)
        memset(v->ids[i], 0x10 + i, DDIO_ID_LEN);
    v->out[2] = 1;
}

static void enc_member(struct ddio_wbuf *w)
{
    static struct ddio_member m = { .op = DDIO_MB_ACCEPT, .epoch = 7, .ballot = 1ull << 40 };
    fill_members(&m.val);
    ddio_enc_member(w, &m);
}

static void enc_member_r(struct ddio_wbuf *w)
{
    static struct ddio_member_r m = { .epoch = 6, .promised = 99, .acc_ballot = 98,
                                      .sealed = 1ull << 35 };
    fill_members(&m.val);
    m.val.out[2] = 0;
    fill_members(&m.acc);
    ddio_enc_member_r(w, &m);
}

static void enc_localstat(struct ddio_wbuf *w)
{
    struct ddio_localstat m = { .handle = 7, .read = 1ull << 40, .written = 5000000 };
    ddio_enc_localstat(w, &m);
}

static void enc_open_mode(struct ddio_wbuf *w)
{
    struct ddio_open m = { .path = "a/new", .amode = DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_MODE,
                           .mode = 0600 };
    fill_layout(&m.layout, 2);
    ddio_enc_open(w, &m);
}

static void enc_rename(struct ddio_wbuf *w)
{
    struct ddio_rename m = { .from = "a/x", .to = "b/y", .once_client = 0xabcdefull,
                             .once_call = 12 };
    ddio_enc_rename(w, &m);
}

/* ---- decoders behind one signature (decode, free, return status) ------------ */

static int d_hello(const uint8_t *p, size_t n)
{
    struct ddio_hello m;
    int rc = ddio_dec_hello(p, n, &m);
    free(m.client);
    return rc;
}

static int d_hello_r(const uint8_t *p, size_t n)
{
    struct ddio_hello_r m;
    int rc = ddio_dec_hello_r(p, n, &m);
    free(m.name);
    return rc;
}

static int d_auth(const uint8_t *p, size_t n)
{
    struct ddio_auth m;
    return ddio_dec_auth(p, n, &m);
}

/* DDIO_O_LOCAL: a LOCAL's name and nonce after the layout; only on a
 * read-only open, and only a name under ddio's prefix */
START_TEST(rt_open_local)
{
    struct ddio_wbuf w;
    struct ddio_open m = {.path = "f", .amode = DDIO_O_RDONLY | DDIO_O_LOCAL,
                          .local_name = DDIO_LOCAL_PREFIX "1/ab"}, y;
    fill_layout(&m.layout, 1);
    memset(m.local_nonce, 0xa5, DDIO_LOCAL_NONCE);
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, &m);
    ck_assert_int_eq(ddio_dec_open(w.p, w.len, &y), 0);
    ck_assert_str_eq(y.local_name, DDIO_LOCAL_PREFIX "1/ab");
    ck_assert_int_eq(memcmp(y.local_nonce, m.local_nonce, DDIO_LOCAL_NONCE), 0);
    free(y.path);
    free(y.local_name);
    ck_assert_int_ne(ddio_dec_open(w.p, w.len - 1, &y), 0);         /* truncated */
    ck_assert_ptr_null(y.local_name);
    ddio_wbuf_free(&w);
    const uint32_t bad[] = {DDIO_O_RDWR, DDIO_O_WRONLY, DDIO_O_RDONLY | DDIO_O_CREAT, 0};
    for (unsigned i = 0; i < 4; i++) {          /* not read-only */
        m.amode = bad[i] | DDIO_O_LOCAL;
        ddio_wbuf_init(&w);
        ddio_enc_open(&w, &m);
        ck_assert_int_eq(ddio_dec_open(w.p, w.len, &y), -EPROTO);
        ddio_wbuf_free(&w);
    }
    m.amode = DDIO_O_RDONLY | DDIO_O_LOCAL;
    m.local_name = "other-program";             /* another program's socket */
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, &m);
    ck_assert_int_eq(ddio_dec_open(w.p, w.len, &y), -EPROTO);
    ddio_wbuf_free(&w);
}
END_TEST

static int d_auth_r(const uint8_t *p, size_t n)
{
    struct ddio_auth_r m;
    return ddio_dec_auth_r(p, n, &m);
}

static int d_open(const uint8_t *p, size_t n)
{
    struct ddio_open m;
    int rc = ddio_dec_open(p, n, &m);
    free(m.path);
    free(m.local_name);
    return rc;
}

static int d_open_r(const uint8_t *p, size_t n)
{
    struct ddio_open_r m;
    return ddio_dec_open_r(p, n, &m);
}

static int d_handle_req(const uint8_t *p, size_t n)
{
    struct ddio_handle_req m;
    return ddio_dec_handle_req(p, n, &m);
}

static int d_u64_r(const uint8_t *p, size_t n)
{
    struct ddio_u64_r m;
    return ddio_dec_u64_r(p, n, &m);
}

static int d_path_req(const uint8_t *p, size_t n)
{
    struct ddio_path_req m;
    int rc = ddio_dec_path_req(p, n, &m);
    free(m.path);
    return rc;
}

static int d_setsize(const uint8_t *p, size_t n)
{
    struct ddio_setsize m;
    return ddio_dec_setsize(p, n, &m);
}

static int d_prealloc(const uint8_t *p, size_t n)
{
    struct ddio_prealloc m;
    return ddio_dec_prealloc(p, n, &m);
}

static int d_xfer(const uint8_t *p, size_t n)
{
    struct ddio_xfer m;
    int rc = ddio_dec_xfer(p, n, &m);
    if (rc == 0)   /* the descriptor must lie inside the payload */
        ck_assert(m.desc >= p && m.desc + m.desc_len <= p + n);
    return rc;
}

static int d_xfer_r(const uint8_t *p, size_t n)
{
    struct ddio_xfer_r m;
    return ddio_dec_xfer_r(p, n, &m);
}

static int d_put(const uint8_t *p, size_t n)
{
    struct ddio_segs m;
    size_t hl;
    int rc = ddio_dec_put(p, n, &m, &hl);
    if (rc == 0)
        ck_assert_uint_eq(hl + m.total, n);
    ddio_segs_free(&m);
    return rc;
}

static int d_get(const uint8_t *p, size_t n)
{
    struct ddio_segs m;
    int rc = ddio_dec_get(p, n, &m);
    ddio_segs_free(&m);
    return rc;
}

static int d_data(const uint8_t *p, size_t n)
{
    uint32_t tag;
    size_t hl;
    int rc = ddio_dec_data(p, n, &tag, &hl);
    if (rc == 0)
        ck_assert_uint_le(hl, n);
    return rc;
}

static int d_lock(const uint8_t *p, size_t n)
{
    struct ddio_lock m;
    return ddio_dec_lock(p, n, &m);
}

static int d_stats_r(const uint8_t *p, size_t n)
{
    struct ddio_stats_r m;
    int rc = ddio_dec_stats_r(p, n, &m);
    ddio_stats_r_free(&m);
    return rc;
}

static int d_err(const uint8_t *p, size_t n)
{
    char *msg;
    int rc = ddio_dec_err(p, n, &msg);
    free(msg);
    return rc;
}

static int d_pstat_r(const uint8_t *p, size_t n)
{
    struct ddio_pstat_r m;
    return ddio_dec_pstat_r(p, n, &m);
}

static int d_readdir(const uint8_t *p, size_t n)
{
    struct ddio_readdir m;
    int rc = ddio_dec_readdir(p, n, &m);
    free(m.path);
    free(m.after);
    return rc;
}

static int d_readdir_r(const uint8_t *p, size_t n)
{
    struct ddio_readdir_r m;
    int rc = ddio_dec_readdir_r(p, n, &m);
    ddio_readdir_r_free(&m);
    return rc;
}

static int d_mkdir(const uint8_t *p, size_t n)
{
    struct ddio_mkdir m;
    int rc = ddio_dec_mkdir(p, n, &m);
    free(m.path);
    return rc;
}

static int d_actas(const uint8_t *p, size_t n)
{
    struct ddio_actas m;
    return ddio_dec_actas(p, n, &m);
}

static int d_watch(const uint8_t *p, size_t n)
{
    struct ddio_watch m;
    return ddio_dec_watch(p, n, &m);
}

static int d_inval(const uint8_t *p, size_t n)
{
    struct ddio_inval m;
    int rc = ddio_dec_inval(p, n, &m);
    free(m.path);
    return rc;
}

static int d_scrub(const uint8_t *p, size_t n)
{
    struct ddio_scrub m;
    return ddio_dec_scrub(p, n, &m);
}

static int d_scrub_r(const uint8_t *p, size_t n)
{
    struct ddio_scrub_r m;
    int rc = ddio_dec_scrub_r(p, n, &m);
    ddio_scrub_r_free(&m);
    return rc;
}

static int d_repair(const uint8_t *p, size_t n)
{
    struct ddio_repair m;
    return ddio_dec_repair(p, n, &m);
}

static int d_member(const uint8_t *p, size_t n)
{
    struct ddio_member m;
    return ddio_dec_member(p, n, &m);
}

static int d_member_r(const uint8_t *p, size_t n)
{
    struct ddio_member_r m;
    return ddio_dec_member_r(p, n, &m);
}

static int d_repair_r(const uint8_t *p, size_t n)
{
    struct ddio_repair_r m;
    return ddio_dec_repair_r(p, n, &m);
}

static int d_rebuild(const uint8_t *p, size_t n)
{
    struct ddio_rebuild m;
    int rc = ddio_dec_rebuild(p, n, &m);
    free(m.path);
    return rc;
}

static int d_rebuild_r(const uint8_t *p, size_t n)
{
    struct ddio_rebuild_r m;
    int rc = ddio_dec_rebuild_r(p, n, &m);
    ddio_rebuild_r_free(&m);
    return rc;
}

static int d_localstat(const uint8_t *p, size_t n)
{
    struct ddio_localstat m;
    return ddio_dec_localstat(p, n, &m);
}

static int d_setattr(const uint8_t *p, size_t n)
{
    struct ddio_setattr m;
    int rc = ddio_dec_setattr(p, n, &m);
    free(m.path);
    return rc;
}

static int d_rename(const uint8_t *p, size_t n)
{
    struct ddio_rename m;
    int rc = ddio_dec_rename(p, n, &m);
    free(m.from);
    free(m.to);
    return rc;
}

struct sample {
    const char *name;
    void (*enc)(struct ddio_wbuf *w);
    int (*dec)(const uint8_t *p, size_t n);
    size_t min_ok;   /* shortest prefix that may decode (DATA: its 4-byte tag) */
};

#define FULL SIZE_MAX
static const struct sample samples[] = {
    { "setattr", enc_setattr, d_setattr, FULL },
    { "actas", enc_actas, d_actas, FULL },
    { "localstat", enc_localstat, d_localstat, FULL },
    { "watch", enc_watch, d_watch, FULL },
    { "inval", enc_inval, d_inval, FULL },
    { "scrub", enc_scrub, d_scrub, FULL },
    { "scrub_r", enc_scrub_r, d_scrub_r, FULL },
    { "repair", enc_repair, d_repair, FULL },
    { "repair_r", enc_repair_r, d_repair_r, FULL },
    { "rebuild_begin", enc_rebuild_begin, d_rebuild, FULL },
    { "rebuild_adopt", enc_rebuild_adopt, d_rebuild, FULL },
    { "rebuild_progress", enc_rebuild_progress, d_rebuild, FULL },
    { "rebuild_r", enc_rebuild_r, d_rebuild_r, FULL },
    { "member", enc_member, d_member, FULL },
    { "member_r", enc_member_r, d_member_r, FULL },
    { "open_mode", enc_open_mode, d_open, FULL },
    { "hello", enc_hello, d_hello, FULL },
    { "hello_r", enc_hello_r, d_hello_r, FULL },
    { "auth", enc_auth, d_auth, FULL },
    { "auth_r", enc_auth_r, d_auth_r, FULL },
    { "open", enc_open, d_open, FULL },
    { "open_r", enc_open_r, d_open_r, FULL },
    { "handle_req", enc_handle_req, d_handle_req, FULL },
    { "u64_r", enc_u64_r, d_u64_r, FULL },
    { "path_req", enc_path_req, d_path_req, FULL },
    { "setsize", enc_setsize, d_setsize, FULL },
    { "prealloc", enc_prealloc, d_prealloc, FULL },
    { "xfer", enc_xfer, d_xfer, FULL },
    { "xfer_r", enc_xfer_r, d_xfer_r, FULL },
    { "put", enc_put, d_put, FULL },
    { "get", enc_get, d_get, FULL },
    { "data", enc_data, d_data, 4 },
    { "lock", enc_lock, d_lock, FULL },
    { "stats_r", enc_stats_r, d_stats_r, FULL },
    { "err", enc_err, d_err, FULL },
    { "pstat_file", enc_pstat_file, d_pstat_r, FULL },
    { "pstat_dir", enc_pstat_dir, d_pstat_r, FULL },
    { "readdir", enc_readdir, d_readdir, FULL },
    { "readdir_r", enc_readdir_r, d_readdir_r, FULL },
    { "mkdir", enc_mkdir, d_mkdir, FULL },
    { "rename", enc_rename, d_rename, FULL },
};
#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

static size_t scrub_sample(const char *name)
{
    for (size_t i = 0; i < NSAMPLES; i++)
        if (strcmp(samples[i].name, name) == 0)
            return i;
    ck_abort_msg("no sample %s", name);
    return 0;
}

/* Decode from an exactly sized heap copy, so ASan sees any overread. */
static int dec_copy(int (*dec)(const uint8_t *, size_t), const uint8_t *p, size_t n)
{
    uint8_t *c = malloc(n ? n : 1);
    ck_assert_ptr_nonnull(c);
    if (n)
        memcpy(c, p, n);
    int rc = dec(c, n);
    free(c);
    return rc;
}

static void encode_sample(const struct sample *s, struct ddio_wbuf *w)
{
    ddio_wbuf_init(w);
    s->enc(w);
    ck_assert_int_eq(w->err, 0);
}

/* ---- header --------------------------------------------------------------------- */

START_TEST(hdr_roundtrip)
{
    struct ddio_hdr h, g;
    uint8_t b[DDIO_HDR_SIZE];
    ddio_hdr_init(&h, DDIO_T_XFER | DDIO_REPLY, 0x0102030405060708ull, 4096);
    h.status = -5;   /* any int32 survives, even if replies only use errno >= 0 */
    h.epoch = 0x0A0B0C0Du;
    ddio_hdr_encode(&h, b);
    /* the documented byte layout: "DDIO", version, type, ... little-endian */
    ck_assert_int_eq(memcmp(b, "DDIO", 4), 0);
    ck_assert_uint_eq(b[4], DDIO_VERSION);
    ck_assert_uint_eq(b[6], DDIO_T_XFER);
    ck_assert_uint_eq(b[7], 0x80);
    ck_assert_uint_eq(b[8], 0x0D);      /* the membership epoch, little-endian */
    ck_assert_uint_eq(b[11], 0x0A);
    ck_assert_uint_eq(b[16], 0x08);
    ck_assert_uint_eq(b[23], 0x01);
    ck_assert_uint_eq(b[25], 0x10);
    ck_assert_int_eq(ddio_hdr_decode(b, &g, DDIO_MAX_PAYLOAD), 0);
    ck_assert_int_eq(memcmp(&h, &g, sizeof(h)), 0);
}
END_TEST

static int hdr_try(void (*mut)(struct ddio_hdr *), uint64_t maxp)
{
    struct ddio_hdr h, g;
    uint8_t b[DDIO_HDR_SIZE];
    ddio_hdr_init(&h, DDIO_T_OPEN, 1, 10);
    mut(&h);
    ddio_hdr_encode(&h, b);
    return ddio_hdr_decode(b, &g, maxp);
}

static void m_magic(struct ddio_hdr *h) { h->magic = 0x4F494445u; }
static void m_version(struct ddio_hdr *h) { h->version = DDIO_VERSION + 1; }
static void m_version0(struct ddio_hdr *h) { h->version = 0; }
static void m_type0(struct ddio_hdr *h) { h->type = 0; }
static void m_typemax(struct ddio_hdr *h) { h->type = DDIO_T_MAX; }
static void m_typemaxr(struct ddio_hdr *h) { h->type = DDIO_T_MAX | DDIO_REPLY; }
static void m_typeheld(struct ddio_hdr *h) { h->type = DDIO_T_RESERVED_LO; }
static void m_typebit(struct ddio_hdr *h) { h->type = DDIO_T_OPEN | 0x4000; }
static void m_typereply0(struct ddio_hdr *h) { h->type = DDIO_REPLY; }
static void m_reply(struct ddio_hdr *h) { h->type = DDIO_T_STATS | DDIO_REPLY; }
static void m_progress(struct ddio_hdr *h) { h->type = DDIO_T_PROGRESS; h->len = 0; }
static void m_len_max(struct ddio_hdr *h) { h->len = DDIO_MAX_PAYLOAD; }
static void m_len_over(struct ddio_hdr *h) { h->len = (uint64_t)DDIO_MAX_PAYLOAD + 1; }
static void m_len_huge(struct ddio_hdr *h) { h->len = UINT64_MAX; }
static void m_len_100(struct ddio_hdr *h) { h->len = 100; }

START_TEST(hdr_reject)
{
    ck_assert_int_eq(hdr_try(m_magic, DDIO_MAX_PAYLOAD), -EPROTO);
    ck_assert_int_eq(hdr_try(m_version, DDIO_MAX_PAYLOAD), -EPROTONOSUPPORT);
    ck_assert_int_eq(hdr_try(m_version0, DDIO_MAX_PAYLOAD), -EPROTONOSUPPORT);
    ck_assert_int_eq(hdr_try(m_type0, DDIO_MAX_PAYLOAD), -EPROTO);
    ck_assert_int_eq(hdr_try(m_typemax, DDIO_MAX_PAYLOAD), -EPROTO);
    ck_assert_int_eq(hdr_try(m_typemaxr, DDIO_MAX_PAYLOAD), -EPROTO);
    ck_assert_int_eq(hdr_try(m_typeheld, DDIO_MAX_PAYLOAD), -EPROTO);
    ck_assert_int_eq(hdr_try(m_typebit, DDIO_MAX_PAYLOAD), -EPROTO);
    ck_assert_int_eq(hdr_try(m_typereply0, DDIO_MAX_PAYLOAD), -EPROTO);
    ck_assert_int_eq(hdr_try(m_reply, DDIO_MAX_PAYLOAD), 0);
    ck_assert_int_eq(hdr_try(m_progress, DDIO_MAX_PAYLOAD), 0);   /* last known type */
    ck_assert_int_eq(hdr_try(m_len_max, DDIO_MAX_PAYLOAD), 0);
    ck_assert_int_eq(hdr_try(m_len_over, DDIO_MAX_PAYLOAD), -EPROTO);
    /* the hard cap holds even when the caller allows more */
    ck_assert_int_eq(hdr_try(m_len_over, UINT64_MAX), -EPROTO);
    ck_assert_int_eq(hdr_try(m_len_huge, UINT64_MAX), -EPROTO);
    ck_assert_int_eq(hdr_try(m_len_100, 100), 0);
    ck_assert_int_eq(hdr_try(m_len_100, 99), -EPROTO);
}
END_TEST

START_TEST(type_names)
{
    ck_assert_str_eq(ddio_type_name(DDIO_T_HELLO), "HELLO");
    ck_assert_str_eq(ddio_type_name(DDIO_T_XFER | DDIO_REPLY), "XFER|R");
    ck_assert_str_eq(ddio_type_name(DDIO_T_STATS), "STATS");
    ck_assert_str_eq(ddio_type_name(DDIO_T_PROGRESS), "PROGRESS");
    ck_assert_str_eq(ddio_type_name(0), "UNKNOWN");
    ck_assert_str_eq(ddio_type_name(DDIO_T_MAX), "UNKNOWN");
    ck_assert_str_eq(ddio_type_name(0xffff), "UNKNOWN");
    for (uint16_t t = DDIO_T_HELLO; t < DDIO_T_MAX; t++) {
        if (t >= DDIO_T_RESERVED_LO && t < DDIO_T_RESERVED_HI) {   /* held, not valid */
            ck_assert_str_eq(ddio_type_name(t), "UNKNOWN");
            continue;
        }
        ck_assert_str_ne(ddio_type_name(t), "UNKNOWN");
        ck_assert_str_ne(ddio_type_name(t | DDIO_REPLY), "UNKNOWN");
    }
}
END_TEST

/* ---- wbuf / rbuf ---------------------------------------------------------------- */

START_TEST(buf_little_endian)
{
    struct ddio_wbuf w;
    static const uint8_t want[] = { 0xAB, 0x02, 0x01, 0x04, 0x03, 0x02, 0x01,
                                    8, 7, 6, 5, 4, 3, 2, 1, 2, 0, 0, 0, 'h', 'i' };
    ddio_wbuf_init(&w);
    ddio_put_u8(&w, 0xAB);
    ddio_put_u16(&w, 0x0102);
    ddio_put_u32(&w, 0x01020304);
    ddio_put_u64(&w, 0x0102030405060708ull);
    ddio_put_str(&w, "hi");
    ck_assert_int_eq(w.err, 0);
    ck_assert_uint_eq(w.len, sizeof(want));
    ck_assert_int_eq(memcmp(w.p, want, sizeof(want)), 0);

    struct ddio_rbuf r;
    ddio_rbuf_init(&r, w.p, w.len);
    ck_assert_uint_eq(ddio_get_u8(&r), 0xAB);
    ck_assert_uint_eq(ddio_get_u16(&r), 0x0102);
    ck_assert_uint_eq(ddio_get_u32(&r), 0x01020304);
    ck_assert_uint_eq(ddio_get_u64(&r), 0x0102030405060708ull);
    char *s = ddio_get_str(&r, 2);
    ck_assert_str_eq(s, "hi");
    free(s);
    ck_assert_int_eq(ddio_rbuf_done(&r), 0);
    ddio_wbuf_free(&w);
    ck_assert_ptr_null(w.p);
}
END_TEST

START_TEST(buf_grow)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    for (uint32_t i = 0; i < 100000; i++)
        ddio_put_u32(&w, i);
    ck_assert_int_eq(w.err, 0);
    ck_assert_uint_eq(w.len, 400000);
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, w.p, w.len);
    for (uint32_t i = 0; i < 100000; i++)
        ck_assert_uint_eq(ddio_get_u32(&r), i);
    ck_assert_int_eq(ddio_rbuf_done(&r), 0);
    /* put_space hands back writable room at the end */
    uint8_t *sp = ddio_put_space(&w, 3);
    ck_assert_ptr_nonnull(sp);
    ck_assert_ptr_eq(sp, w.p + 400000);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(rbuf_sticky)
{
    static const uint8_t b[6] = { 1, 2, 3, 4, 5, 6 };
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, b, sizeof(b));
    ck_assert_uint_eq(ddio_get_u32(&r), 0x04030201u);
    ck_assert_uint_eq(ddio_get_u32(&r), 0);     /* overrun: 2 bytes left */
    ck_assert_int_eq(r.err, -EPROTO);
    ck_assert_uint_eq(ddio_get_u8(&r), 0);      /* sticky even when it would fit */
    ck_assert_ptr_null(ddio_get_bytes(&r, 0));
    ck_assert_int_eq(ddio_rbuf_done(&r), -EPROTO);

    /* an empty payload: zero-length reads succeed, anything else fails */
    ddio_rbuf_init(&r, NULL, 0);
    ck_assert_ptr_nonnull(ddio_get_bytes(&r, 0));
    ck_assert_int_eq(ddio_rbuf_done(&r), 0);
    ck_assert_uint_eq(ddio_get_u8(&r), 0);
    ck_assert_int_eq(ddio_rbuf_done(&r), -EPROTO);

    /* not all consumed */
    ddio_rbuf_init(&r, b, sizeof(b));
    ddio_get_u8(&r);
    ck_assert_int_eq(ddio_rbuf_done(&r), -EPROTO);
    ck_assert_ptr_null(ddio_get_bytes(&r, SIZE_MAX));
}
END_TEST

START_TEST(str_limits)
{
    struct ddio_wbuf w;
    struct ddio_rbuf r;
    char *big = malloc(DDIO_MAX_STR + 2);
    memset(big, 'x', DDIO_MAX_STR + 1);
    big[DDIO_MAX_STR + 1] = '\0';
    ddio_wbuf_init(&w);
    ddio_put_str(&w, big + 1);          /* exactly DDIO_MAX_STR */
    ddio_put_str(&w, big);              /* one more */
    ddio_put_str(&w, NULL);             /* encodes as "" */
    ck_assert_int_eq(w.err, 0);
    ddio_rbuf_init(&r, w.p, w.len);
    char *s = ddio_get_str(&r, DDIO_MAX_STR);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(strlen(s), DDIO_MAX_STR);
    free(s);
    ck_assert_ptr_null(ddio_get_str(&r, DDIO_MAX_STR));
    ck_assert_int_eq(r.err, -EPROTO);
    ddio_wbuf_free(&w);

    ddio_wbuf_init(&w);
    ddio_put_str(&w, NULL);
    ddio_rbuf_init(&r, w.p, w.len);
    s = ddio_get_str(&r, 0);
    ck_assert_str_eq(s, "");
    free(s);
    ck_assert_int_eq(ddio_rbuf_done(&r), 0);
    ddio_wbuf_free(&w);

    /* embedded NUL */
    static const uint8_t nul[] = { 3, 0, 0, 0, 'a', 0, 'b' };
    ddio_rbuf_init(&r, nul, sizeof(nul));
    ck_assert_ptr_null(ddio_get_str(&r, 100));
    ck_assert_int_eq(r.err, -EPROTO);
    /* length field far beyond the payload: no allocation, clean failure */
    static const uint8_t huge[] = { 0xff, 0xff, 0xff, 0xff, 'a' };
    ddio_rbuf_init(&r, huge, sizeof(huge));
    ck_assert_ptr_null(ddio_get_str(&r, SIZE_MAX));
    ck_assert_int_eq(r.err, -EPROTO);
    ck_assert_int_eq(d_err(huge, sizeof(huge)), -EPROTO);
    free(big);
}
END_TEST

/* ---- round trips ------------------------------------------------------------------ */

#define ENCODE(fn, w) do { ddio_wbuf_init(&(w)); fn(&(w)); ck_assert_int_eq((w).err, 0); } while (0)

START_TEST(rt_hello)
{
    struct ddio_wbuf w;
    struct ddio_hello m;
    ENCODE(enc_hello, w);
    ck_assert_int_eq(ddio_dec_hello(w.p, w.len, &m), 0);
    ck_assert_uint_eq(m.pid, 4242);
    ck_assert_uint_eq(m.flags, 0);
    ck_assert_str_eq(m.client, "node17.cluster");
    free(m.client);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(rt_hello_r)
{
    struct ddio_wbuf w;
    struct ddio_hello_r m;
    ENCODE(enc_hello_r, w);
    ck_assert_int_eq(ddio_dec_hello_r(w.p, w.len, &m), 0);
    for (unsigned i = 0; i < DDIO_ID_LEN; i++)
        ck_assert_uint_eq(m.server_id[i], 0xA0 + i);
    for (unsigned i = 0; i < DDIO_NONCE_LEN; i++)
        ck_assert_uint_eq(m.nonce[i], (uint8_t)(3 * i));
    ck_assert_uint_eq(m.ndisks, 2);
    ck_assert_uint_eq(m.flags, DDIO_SRV_AUTH_REQUIRED);
    ck_assert_uint_eq(m.block_size, 1u << 22);
    ck_assert_str_eq(m.name, "127.0.0.1:4711");
    free(m.name);
    ddio_wbuf_free(&w);
}
END_TEST

/* AUTH with a MUNGE credential: nonce and string; a cut one is refused */
START_TEST(rt_auth_munge)
{
    struct ddio_wbuf w;
    struct ddio_auth_munge m = {.cred = "MUNGE:cred:"}, back;
    struct ddio_auth_munge_r r = {.cred = "MUNGE:server:"}, rback;
    memset(m.nonce, 0x42, sizeof(m.nonce));
    ddio_wbuf_init(&w);
    ddio_enc_auth_munge(&w, &m);
    ck_assert_int_eq(w.err, 0);
    ck_assert_int_eq(ddio_dec_auth_munge(w.p, w.len, &back), 0);
    ck_assert_str_eq(back.cred, "MUNGE:cred:");
    ck_assert_uint_eq(back.nonce[DDIO_NONCE_LEN - 1], 0x42);
    free(back.cred);
    ck_assert_int_eq(ddio_dec_auth_munge(w.p, w.len - 1, &back), -EPROTO);
    ck_assert_ptr_null(back.cred);
    ck_assert_int_eq(ddio_dec_auth_munge(w.p, DDIO_NONCE_LEN - 1, &back), -EPROTO);
    ddio_wbuf_free(&w);
    ddio_wbuf_init(&w);
    ddio_enc_auth_munge_r(&w, &r);
    ck_assert_int_eq(ddio_dec_auth_munge_r(w.p, w.len, &rback), 0);
    ck_assert_str_eq(rback.cred, "MUNGE:server:");
    free(rback.cred);
    ck_assert_int_eq(ddio_dec_auth_munge_r(w.p, w.len - 1, &rback), -EPROTO);
    ck_assert_ptr_null(rback.cred);
    ddio_wbuf_free(&w);
}
END_TEST

/* AUTH messages have a fixed size: exactly nonce + MAC, and MAC */
START_TEST(rt_auth)
{
    struct ddio_wbuf w;
    struct ddio_auth m;
    struct ddio_auth_r r;
    ENCODE(enc_auth, w);
    ck_assert_uint_eq(w.len, DDIO_NONCE_LEN + DDIO_MAC_LEN);
    ck_assert_int_eq(ddio_dec_auth(w.p, w.len, &m), 0);
    for (unsigned i = 0; i < DDIO_NONCE_LEN; i++)
        ck_assert_uint_eq(m.nonce[i], (uint8_t)(7 * i + 1));
    for (unsigned i = 0; i < DDIO_MAC_LEN; i++)
        ck_assert_uint_eq(m.mac[i], (uint8_t)(0xF0 - i));
    ck_assert_int_eq(ddio_dec_auth_r(w.p, w.len, &r), -EPROTO);   /* too long */
    ddio_wbuf_free(&w);
    ENCODE(enc_auth_r, w);
    ck_assert_uint_eq(w.len, DDIO_MAC_LEN);
    ck_assert_int_eq(ddio_dec_auth_r(w.p, w.len, &r), 0);
    for (unsigned i = 0; i < DDIO_MAC_LEN; i++)
        ck_assert_uint_eq(r.mac[i], (uint8_t)(5 * i + 2));
    ck_assert_int_eq(ddio_dec_auth(w.p, w.len, &m), -EPROTO);     /* too short */
    for (unsigned i = 0; i < DDIO_NONCE_LEN; i++)
        ck_assert_uint_eq(m.nonce[i], 0);                            /* cleared on error */
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(rt_open)
{
    struct ddio_wbuf w;
    struct ddio_open m;
    struct ddio_layout_rec want;
    ENCODE(enc_open, w);
    /* only stripe_count ids go on the wire */
    ck_assert_uint_eq(w.len, 4 + strlen("data/matrix.bin") + 4 + 32 + 3 * DDIO_ID_LEN);
    ck_assert_int_eq(ddio_dec_open(w.p, w.len, &m), 0);
    ck_assert_str_eq(m.path, "data/matrix.bin");
    ck_assert_uint_eq(m.amode, DDIO_O_RDWR | DDIO_O_CREAT);
    fill_layout(&want, 3);
    ck_assert_int_eq(memcmp(&m.layout, &want, sizeof(want)), 0);
    free(m.path);
    ddio_wbuf_free(&w);
}
END_TEST

/* DDIO_O_ONCE: the create's ids after the layout; only on a create
 * (CREAT|EXCL) of a client (non-zero id) */
START_TEST(rt_open_once)
{
    struct ddio_wbuf w;
    struct ddio_open m = {.path = "f", .amode = DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL |
                          DDIO_O_ONCE, .once_client = 0x1234567890abcdefull, .once_call = 5}, y;
    fill_layout(&m.layout, 1);
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, &m);
    ck_assert_int_eq(ddio_dec_open(w.p, w.len, &y), 0);
    ck_assert_uint_eq(y.once_client, 0x1234567890abcdefull);
    ck_assert_uint_eq(y.once_call, 5);
    free(y.path);
    ck_assert_int_ne(ddio_dec_open(w.p, w.len - 1, &y), 0);         /* truncated */
    ddio_wbuf_free(&w);
    const uint32_t bad[] = {DDIO_O_RDWR | DDIO_O_ONCE, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_ONCE};
    for (unsigned i = 0; i < 2; i++) {          /* not a create */
        m.amode = bad[i];
        ddio_wbuf_init(&w);
        ddio_enc_open(&w, &m);
        ck_assert_int_eq(ddio_dec_open(w.p, w.len, &y), -EPROTO);
        ddio_wbuf_free(&w);
    }
    m.amode = DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL | DDIO_O_ONCE;
    m.once_client = 0;                          /* no client */
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, &m);
    ck_assert_int_eq(ddio_dec_open(w.p, w.len, &y), -EPROTO);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(rt_open_r)
{
    struct ddio_wbuf w;
    struct ddio_open_r m;
    struct ddio_layout_rec want;
    ENCODE(enc_open_r, w);
    ck_assert_int_eq(ddio_dec_open_r(w.p, w.len, &m), 0);
    ck_assert_uint_eq(m.handle, 0x1122334455667788ull);
    ck_assert_uint_eq(m.local_size, 12345);
    ck_assert_uint_eq(m.created, 1);
    fill_layout(&want, 2);
    ck_assert_int_eq(memcmp(&m.layout, &want, sizeof(want)), 0);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(rt_layout_max)
{
    struct ddio_wbuf w;
    struct ddio_rbuf r;
    struct ddio_layout_rec l, g;
    fill_layout(&l, DDIO_MAX_SERVERS);
    ddio_wbuf_init(&w);
    ddio_enc_layout(&w, &l);
    ck_assert_int_eq(w.err, 0);
    ck_assert_uint_eq(w.len, 32 + DDIO_MAX_SERVERS * DDIO_ID_LEN);
    ddio_rbuf_init(&r, w.p, w.len);
    ck_assert_int_eq(ddio_dec_layout(&r, &g), 0);
    ck_assert_int_eq(ddio_rbuf_done(&r), 0);
    ck_assert_int_eq(memcmp(&l, &g, sizeof(l)), 0);
    ddio_wbuf_free(&w);

    /* the encoder refuses what the decoder would refuse, without overrunning ids */
    l.stripe_count = DDIO_MAX_SERVERS + 1;
    ddio_wbuf_init(&w);
    ddio_enc_layout(&w, &l);
    ck_assert_int_eq(w.err, -EINVAL);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(rt_small)
{
    struct ddio_wbuf w;
    struct ddio_handle_req h;
    struct ddio_u64_r u;
    struct ddio_path_req pr;
    struct ddio_setsize ss;
    struct ddio_prealloc pa;
    struct ddio_lock lk;

    ENCODE(enc_handle_req, w);
    ck_assert_int_eq(ddio_dec_handle_req(w.p, w.len, &h), 0);
    ck_assert_uint_eq(h.handle, 0xdeadbeefcafef00dull);
    ddio_wbuf_free(&w);

    ENCODE(enc_u64_r, w);
    ck_assert_int_eq(ddio_dec_u64_r(w.p, w.len, &u), 0);
    ck_assert_uint_eq(u.value, UINT64_MAX - 1);
    ddio_wbuf_free(&w);

    ENCODE(enc_path_req, w);
    ck_assert_int_eq(ddio_dec_path_req(w.p, w.len, &pr), 0);
    ck_assert_str_eq(pr.path, "a/b/c");
    free(pr.path);
    ddio_wbuf_free(&w);

    ENCODE(enc_setsize, w);
    ck_assert_int_eq(ddio_dec_setsize(w.p, w.len, &ss), 0);
    ck_assert_uint_eq(ss.handle, 5);
    ck_assert_uint_eq(ss.local_size, 1ull << 33);
    ck_assert_uint_eq(ss.logical_size, 3ull << 33);
    ck_assert_uint_eq(ss.flags, DDIO_SS_GROW);
    w.p[w.len - 4] = 2;                                     /* an unknown flag */
    ck_assert_int_eq(ddio_dec_setsize(w.p, w.len, &ss), -EPROTO);
    ddio_wbuf_free(&w);

    ENCODE(enc_prealloc, w);
    ck_assert_int_eq(ddio_dec_prealloc(w.p, w.len, &pa), 0);
    ck_assert_uint_eq(pa.handle, 6);
    ck_assert_uint_eq(pa.local_off, 4096);
    ck_assert_uint_eq(pa.local_len, 1ull << 31);
    ck_assert_uint_eq(pa.logical_size, 3ull << 31);
    ddio_wbuf_free(&w);

    ENCODE(enc_lock, w);
    ck_assert_int_eq(ddio_dec_lock(w.p, w.len, &lk), 0);
    ck_assert_uint_eq(lk.handle, 3);
    ck_assert_uint_eq(lk.cmd, DDIO_LK_SETLKW);
    ck_assert_uint_eq(lk.type, DDIO_LK_WR);
    ck_assert_uint_eq(lk.start, 1000);
    ck_assert_uint_eq(lk.len, 0);
    ck_assert_uint_eq(lk.timeout_ms, 500);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(rt_xfer)
{
    struct ddio_wbuf w;
    struct ddio_xfer m;
    struct ddio_xfer_r x;
    ENCODE(enc_xfer, w);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &m), 0);
    ck_assert_uint_eq(m.handle, 9);
    ck_assert_uint_eq(m.op, DDIO_X_WRITE);
    ck_assert_uint_eq(m.flags, DDIO_XF_COLLECTIVE);
    ck_assert_uint_eq(m.group, 0x0102030405060708ull);
    ck_assert_uint_eq(m.seq, 77);
    ck_assert_uint_eq(m.nparticipants, 4);
    ck_assert_uint_eq(m.rank, 3);
    ck_assert_uint_eq(m.timeout_ms, 30000);
    ck_assert_uint_eq(m.desc_len, sizeof(sample_desc));
    ck_assert_ptr_eq(m.desc, w.p + w.len - sizeof(sample_desc));
    ck_assert_int_eq(memcmp(m.desc, sample_desc, sizeof(sample_desc)), 0);
    ddio_wbuf_free(&w);

    ENCODE(enc_xfer_r, w);
    ck_assert_int_eq(ddio_dec_xfer_r(w.p, w.len, &x), 0);
    const uint64_t got[] = { x.bytes, x.local_size, x.desc_bytes, x.blocks_read,
                             x.blocks_written, x.nonconsec, x.bytes_to_rank,
                             x.bytes_from_rank, x.wait_us, x.io_us, x.sorted };
    for (unsigned i = 0; i < 11; i++)
        ck_assert_uint_eq(got[i], i + 1);
    ddio_wbuf_free(&w);
}
END_TEST

/* DDIO_XF_COPY: a lost server's part read from a copy; one participant,
 * a read, copy 1..2 */
static int xfer_copy(uint32_t op, uint32_t flags, uint32_t n, uint32_t copy, struct ddio_xfer *y)
{
    struct ddio_wbuf w;
    struct ddio_xfer m = { .handle = 9, .op = op, .flags = flags | DDIO_XF_COPY,
                           .nparticipants = n, .timeout_ms = 1000,
                           .desc_len = sizeof(sample_desc), .desc = sample_desc, .copy = copy };
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &m);
    int rc = ddio_dec_xfer(w.p, w.len, y);
    if (rc == 0)
        ck_assert_int_ne(ddio_dec_xfer(w.p, w.len - 1, y), 0);   /* truncated tail */
    if (rc == 0)
        rc = ddio_dec_xfer(w.p, w.len, y);
    ddio_wbuf_free(&w);
    return rc;
}

START_TEST(rt_xfer_copy)
{
    struct ddio_xfer y;
    ck_assert_int_eq(xfer_copy(DDIO_X_READ, 0, 1, 1, &y), 0);
    ck_assert_uint_eq(y.copy, 1);
    ck_assert_uint_eq(y.flags, DDIO_XF_COPY);
    ck_assert_int_eq(xfer_copy(DDIO_X_READ, DDIO_XF_NOSORT, 1, 2, &y), 0);
    ck_assert_uint_eq(y.copy, 2);
    ck_assert_int_eq(xfer_copy(DDIO_X_READ, 0, 1, 0, &y), -EPROTO);
    ck_assert_int_eq(xfer_copy(DDIO_X_READ, 0, 1, 3, &y), -EPROTO);
    ck_assert_int_eq(xfer_copy(DDIO_X_WRITE, 0, 1, 1, &y), -EPROTO);
    ck_assert_int_eq(xfer_copy(DDIO_X_READ, 0, 2, 1, &y), -EPROTO);
    ck_assert_int_eq(xfer_copy(DDIO_X_READ, DDIO_XF_COLLECTIVE, 1, 1, &y), -EPROTO);
}
END_TEST

START_TEST(rt_segs)
{
    struct ddio_wbuf w;
    struct ddio_segs m;
    size_t hl;
    uint32_t tag;

    ENCODE(enc_put, w);
    ck_assert_int_eq(ddio_dec_put(w.p, w.len, &m, &hl), 0);
    ck_assert_uint_eq(m.tag, 0);
    ck_assert_uint_eq(m.nseg, 3);
    ck_assert_uint_eq(m.total, 10);
    ck_assert_uint_eq(hl, 4 + 3 * 16);
    ck_assert_int_eq(memcmp(m.seg, sample_segs, sizeof(sample_segs)), 0);
    ck_assert_int_eq(memcmp(w.p + hl, sample_data, sizeof(sample_data)), 0);
    ddio_segs_free(&m);
    ck_assert_ptr_null(m.seg);
    /* the data itself is never read: a buffer holding only the list, with n
     * the full payload length, decodes the same (streaming receivers) */
    uint8_t *list = malloc(hl);
    memcpy(list, w.p, hl);
    ck_assert_int_eq(ddio_dec_put(list, w.len, &m, &hl), 0);
    ck_assert_uint_eq(m.total, 10);
    ddio_segs_free(&m);
    free(list);
    ddio_wbuf_free(&w);

    ENCODE(enc_get, w);
    ck_assert_int_eq(ddio_dec_get(w.p, w.len, &m), 0);
    ck_assert_uint_eq(m.tag, 99);
    ck_assert_uint_eq(m.nseg, 3);
    ck_assert_uint_eq(m.total, 10);
    ck_assert_int_eq(memcmp(m.seg, sample_segs, sizeof(sample_segs)), 0);
    ddio_segs_free(&m);
    ddio_wbuf_free(&w);

    ENCODE(enc_data, w);
    ck_assert_int_eq(ddio_dec_data(w.p, w.len, &tag, &hl), 0);
    ck_assert_uint_eq(tag, 99);
    ck_assert_uint_eq(hl, 4);
    ck_assert_int_eq(memcmp(w.p + hl, sample_data, sizeof(sample_data)), 0);
    ddio_wbuf_free(&w);

    /* empty lists are legal */
    struct ddio_segs e = { .tag = 1 };
    ddio_wbuf_init(&w);
    ddio_enc_get(&w, &e);
    ck_assert_int_eq(ddio_dec_get(w.p, w.len, &m), 0);
    ck_assert_uint_eq(m.nseg, 0);
    ck_assert_uint_eq(m.total, 0);
    ddio_segs_free(&m);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(rt_stats_err)
{
    struct ddio_wbuf w;
    struct ddio_stats_r m;
    char *msg;
    ENCODE(enc_stats_r, w);
    ck_assert_int_eq(ddio_dec_stats_r(w.p, w.len, &m), 0);
    ck_assert_uint_eq(m.n, 3);
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_str_eq(m.kv[i].key, sample_kv[i].key);
        ck_assert_uint_eq(m.kv[i].val, sample_kv[i].val);
    }
    int found = 0;
    ck_assert_uint_eq(ddio_stats_r_get(&m, "last.io_us", &found), 1ull << 50);
    ck_assert_int_eq(found, 1);
    ck_assert_uint_eq(ddio_stats_r_get(&m, "last", &found), 0);
    ck_assert_int_eq(found, 0);
    ck_assert_uint_eq(ddio_stats_r_get(&m, "xfers", NULL), 7);
    ddio_stats_r_free(&m);
    ck_assert_ptr_null(m.kv);
    ddio_wbuf_free(&w);

    ENCODE(enc_err, w);
    ck_assert_int_eq(ddio_dec_err(w.p, w.len, &msg), 0);
    ck_assert_str_eq(msg, "server 127.0.0.1:4711: open data/x: ENOENT");
    free(msg);
    ddio_wbuf_free(&w);
}
END_TEST

/* ---- namespace messages ------------------------------------------------------------------ */

START_TEST(rt_namespace)
{
    struct ddio_wbuf w;
    struct ddio_pstat_r ps;
    encode_sample(&samples[NSAMPLES - 6], &w);
    ck_assert_int_eq(ddio_dec_pstat_r(w.p, w.len, &ps), 0);
    ck_assert_uint_eq(ps.kind, DDIO_K_FILE);
    ck_assert_uint_eq(ps.mode, 0644);
    ck_assert_uint_eq(ps.local_size, 12345);
    ck_assert_uint_eq(ps.mtime_ns, 1700000000123456789ull);
    ck_assert_uint_eq(ps.layout.stripe_count, 3);
    ck_assert_uint_eq(ps.layout.server_index, 2);
    ddio_wbuf_free(&w);

    struct ddio_readdir_r rr;
    encode_sample(&samples[NSAMPLES - 3], &w);
    ck_assert_int_eq(ddio_dec_readdir_r(w.p, w.len, &rr), 0);
    ck_assert_uint_eq(rr.more, 1);
    ck_assert_uint_eq(rr.n, 3);
    ck_assert_str_eq(rr.ent[1].name, "sub");
    ck_assert_uint_eq(rr.ent[1].kind, DDIO_K_DIR);
    ck_assert_str_eq(rr.ent[2].name, "..x");
    ddio_readdir_r_free(&rr);
    ddio_wbuf_free(&w);

    struct ddio_rename rn;
    encode_sample(&samples[NSAMPLES - 1], &w);
    ck_assert_int_eq(ddio_dec_rename(w.p, w.len, &rn), 0);
    ck_assert_str_eq(rn.from, "a/x");
    ck_assert_str_eq(rn.to, "b/y");
    ck_assert_uint_eq(rn.once_client, 0xabcdefull);
    ck_assert_uint_eq(rn.once_call, 12);
    free(rn.from);
    free(rn.to);
    ddio_wbuf_free(&w);

    struct ddio_mkdir mk;
    encode_sample(&samples[NSAMPLES - 2], &w);
    ck_assert_int_eq(ddio_dec_mkdir(w.p, w.len, &mk), 0);
    ck_assert_str_eq(mk.path, "a/b/c");
    ck_assert_uint_eq(mk.mode, 0750);
    free(mk.path);
    ddio_wbuf_free(&w);
}
END_TEST

/* one READDIR reply entry, raw */
static int readdir_r_more(uint32_t more, uint32_t n_field, const char *name, uint32_t kind)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_put_u32(&w, more);
    ddio_put_u32(&w, n_field);
    ddio_put_str(&w, name);
    ddio_put_u32(&w, kind);
    int rc = dec_copy(d_readdir_r, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

static int readdir_r_with(uint32_t n_field, const char *name, uint32_t kind)
{
    return readdir_r_more(0, n_field, name, kind);
}

/* a READDIR reply of no entries */
static int readdir_r_empty(uint32_t more)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_put_u32(&w, more);
    ddio_put_u32(&w, 0);
    int rc = dec_copy(d_readdir_r, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

/* a READDIR request resuming after `after` */
static int readdir_after(const char *after)
{
    struct ddio_wbuf w;
    struct ddio_readdir q = { .path = "a", .after = (char *)after, .max = 16 };
    ddio_wbuf_init(&w);
    ddio_enc_readdir(&w, &q);
    int rc = dec_copy(d_readdir, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

static int pstat_with(uint32_t kind, uint32_t mode, uint64_t size)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_put_u32(&w, kind);
    ddio_put_u32(&w, mode);
    ddio_put_u32(&w, 4201);        /* uid */
    ddio_put_u32(&w, 4201);        /* gid */
    ddio_put_u64(&w, size);
    ddio_put_u64(&w, 0);
    int rc = dec_copy(d_pstat_r, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

/* SCRUB, REPAIR and their replies decode to what was encoded */
START_TEST(rt_scrub)
{
    struct ddio_wbuf w;
    struct ddio_scrub sc;
    encode_sample(&samples[scrub_sample("scrub")], &w);
    ck_assert_int_eq(ddio_dec_scrub(w.p, w.len, &sc), 0);
    ck_assert(sc.handle == 9 && sc.copy == 1 && sc.flags == DDIO_SC_DATA);
    ck_assert(sc.off == 1ull << 32 && sc.len == DDIO_SCRUB_DATA_MAX);
    ddio_wbuf_free(&w);
    struct ddio_scrub_r r;
    encode_sample(&samples[scrub_sample("scrub_r")], &w);
    ck_assert_int_eq(ddio_dec_scrub_r(w.p, w.len, &r), 0);
    ck_assert(r.next == 8192 && r.size == 5000 && r.verified == 1 && r.unknown == 1);
    ck_assert_uint_eq(r.nbad, 3);
    ck_assert(r.bad[0] == 0 && r.bad[1] == 4096 && r.bad[2] == 1ull << 40);
    ck_assert_uint_eq(r.data_len, sizeof(scrub_bytes));
    ck_assert_int_eq(memcmp(r.data, scrub_bytes, sizeof(scrub_bytes)), 0);
    ddio_scrub_r_free(&r);
    ddio_wbuf_free(&w);
    struct ddio_repair rp;
    encode_sample(&samples[scrub_sample("repair")], &w);
    ck_assert_int_eq(ddio_dec_repair(w.p, w.len, &rp), 0);
    ck_assert(rp.handle == 3 && rp.copy == 2 && rp.off == 1ull << 33);
    ck_assert_uint_eq(rp.data_len, sizeof(scrub_bytes));
    ck_assert_int_eq(memcmp(rp.data, scrub_bytes, sizeof(scrub_bytes)), 0);
    ddio_wbuf_free(&w);
    struct ddio_repair_r rr;
    encode_sample(&samples[scrub_sample("repair_r")], &w);
    ck_assert_int_eq(ddio_dec_repair_r(w.p, w.len, &rr), 0);
    ck_assert(rr.repaired == 5 && rr.good == 1 && rr.refused == 0xFFFFFFFFu);
    ddio_wbuf_free(&w);
    ck_assert_str_eq(ddio_type_name(DDIO_T_SCRUB), "SCRUB");
    ck_assert_str_eq(ddio_type_name(DDIO_T_REPAIR | DDIO_REPLY), "REPAIR|R");
}
END_TEST

static int scrub_try(const struct ddio_scrub *m)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_scrub(&w, m);
    int rc = dec_copy(d_scrub, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

static int repair_try(const struct ddio_repair *m)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_repair(&w, m);
    int rc = dec_copy(d_repair, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

/* values the decoders refuse: unaligned offsets, empty or oversized
 * ranges, unknown copies and flags, too many bad sectors */
START_TEST(bad_scrub)
{
    struct ddio_scrub ok = { .handle = 1, .copy = 0, .off = 4096, .len = 1 };
    ck_assert_int_eq(scrub_try(&ok), 0);
    struct ddio_scrub m = ok;
    m.off = 4097;
    ck_assert_int_eq(scrub_try(&m), -EPROTO);
    m = ok; m.len = 0;
    ck_assert_int_eq(scrub_try(&m), -EPROTO);
    m = ok; m.len = DDIO_SCRUB_MAX + 1;
    ck_assert_int_eq(scrub_try(&m), -EPROTO);
    m = ok; m.flags = DDIO_SC_DATA; m.len = DDIO_SCRUB_DATA_MAX + 1;
    ck_assert_int_eq(scrub_try(&m), -EPROTO);
    m = ok; m.flags = 2;
    ck_assert_int_eq(scrub_try(&m), -EPROTO);
    m = ok; m.copy = DDIO_SCRUB_OVERLAY;                        /* ec's views: taken */
    ck_assert_int_eq(scrub_try(&m), 0);
    m = ok; m.copy = DDIO_SCRUB_VIEWS;
    ck_assert_int_eq(scrub_try(&m), -EPROTO);
    m = ok; m.off = UINT64_MAX - 4095; m.len = 1;
    ck_assert_int_eq(scrub_try(&m), -EPROTO);
    struct ddio_repair rok = { .handle = 1, .off = 8192, .data_len = 4096,
                               .data = scrub_bytes };
    ck_assert_int_eq(repair_try(&rok), 0);
    struct ddio_repair r = rok;
    r.data_len = 100;                                           /* not whole sectors */
    ck_assert_int_eq(repair_try(&r), -EPROTO);
    r = rok; r.off = 100;
    ck_assert_int_eq(repair_try(&r), -EPROTO);
    r = rok; r.copy = DDIO_SCRUB_PARITY;
    ck_assert_int_eq(repair_try(&r), 0);
    r = rok; r.copy = DDIO_SCRUB_VIEWS;
    ck_assert_int_eq(repair_try(&r), -EPROTO);
    /* a reply claiming more bad sectors than the cap */
    uint64_t many[DDIO_SCRUB_MAX_BAD + 1] = { 0 };
    struct ddio_scrub_r sr = { .nbad = DDIO_SCRUB_MAX_BAD + 1, .bad = many };
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_scrub_r(&w, &sr);
    ck_assert_int_eq(dec_copy(d_scrub_r, w.p, w.len), -EPROTO);
    ddio_wbuf_free(&w);
}
END_TEST

/* REBUILD and its reply decode to what was encoded */
START_TEST(rt_rebuild)
{
    struct ddio_wbuf w;
    struct ddio_rebuild m;
    encode_sample(&samples[scrub_sample("rebuild_begin")], &w);
    ck_assert_int_eq(ddio_dec_rebuild(w.p, w.len, &m), 0);
    ck_assert(m.op == DDIO_RB_BEGIN && strcmp(m.path, "d/e/f") == 0);
    ck_assert(m.layout.stripe_count == 3 && m.layout.server_index == 2 && m.layout.copies == 2
              && m.layout.stripe_unit == 1 << 20 && m.layout.ids[2][0] == 0x12);
    free(m.path);
    ddio_wbuf_free(&w);
    encode_sample(&samples[scrub_sample("rebuild_adopt")], &w);
    ck_assert_int_eq(ddio_dec_rebuild(w.p, w.len, &m), 0);
    ck_assert(m.op == DDIO_RB_ADOPT && m.path == NULL && m.id[0] == 0xAB
              && m.id[DDIO_ID_LEN - 1] == 0xAB);
    ddio_wbuf_free(&w);
    struct ddio_rebuild d = { .op = DDIO_RB_DONE, .path = "x" };
    ddio_wbuf_init(&w);
    ddio_enc_rebuild(&w, &d);
    ck_assert_int_eq(ddio_dec_rebuild(w.p, w.len, &m), 0);
    ck_assert(m.op == DDIO_RB_DONE && strcmp(m.path, "x") == 0 && m.layout.stripe_count == 0);
    free(m.path);
    ddio_wbuf_free(&w);
    encode_sample(&samples[scrub_sample("rebuild_progress")], &w);
    ck_assert_int_eq(ddio_dec_rebuild(w.p, w.len, &m), 0);
    ck_assert(m.op == DDIO_RB_PROGRESS && m.path == NULL && m.done == 5u << 20
              && m.total == 3ull << 32 && m.rate == 50000000);
    ddio_wbuf_free(&w);
    struct ddio_rebuild_r r;
    encode_sample(&samples[scrub_sample("rebuild_r")], &w);
    ck_assert_int_eq(ddio_dec_rebuild_r(w.p, w.len, &r), 0);
    ck_assert_uint_eq(r.state, DDIO_RB_BUILT);
    ck_assert_uint_eq(r.npaths, 0);
    ddio_wbuf_free(&w);
    /* MISSED and its paths, RESYNCED, REDO */
    char *paths[] = { "a/b", "c" };
    struct ddio_rebuild_r rp = { .npaths = 2, .paths = paths };
    ddio_wbuf_init(&w);
    ddio_enc_rebuild_r(&w, &rp);
    ck_assert_int_eq(ddio_dec_rebuild_r(w.p, w.len, &r), 0);
    ck_assert(r.npaths == 2 && !strcmp(r.paths[0], "a/b") && !strcmp(r.paths[1], "c"));
    ddio_rebuild_r_free(&r);
    ddio_wbuf_free(&w);
    struct ddio_rebuild q[] = { { .op = DDIO_RB_MISSED, .member = 2 },
                                { .op = DDIO_RB_RESYNCED, .member = 1, .path = "x/y" },
                                { .op = DDIO_RB_REDO, .path = "z",
                                  .layout = { .stripe_unit = 4096, .stripe_count = 2,
                                              .server_index = 1, .copies = 2 } },
                                { .op = DDIO_RB_DOUBT },
                                { .op = DDIO_RB_SETTLED, .path = "d/e" },
                                { .op = DDIO_RB_FREEZE, .member = 2 },
                                { .op = DDIO_RB_THAW, .member = 1 },
                                { .op = DDIO_RB_FOLD, .path = "f", .glo = 3, .ghi = 9 },
                                { .op = DDIO_RB_FOLDED, .path = "f", .glo = 0, .ghi = 1 } };
    for (int i = 0; i < 9; i++) {
        ddio_wbuf_init(&w);
        ddio_enc_rebuild(&w, &q[i]);
        ck_assert_int_eq(ddio_dec_rebuild(w.p, w.len, &m), 0);
        ck_assert(m.op == q[i].op && m.member == q[i].member);
        ck_assert(m.glo == q[i].glo && m.ghi == q[i].ghi);
        ck_assert(q[i].path ? !strcmp(m.path, q[i].path) : m.path == NULL);
        ck_assert_uint_eq(m.layout.stripe_count, q[i].layout.stripe_count);
        free(m.path);
        ddio_wbuf_free(&w);
    }
    ck_assert_str_eq(ddio_type_name(DDIO_T_REBUILD), "REBUILD");
    ck_assert_str_eq(ddio_type_name(DDIO_T_REBUILD | DDIO_REPLY), "REBUILD|R");
}
END_TEST

static int rebuild_try(const struct ddio_rebuild *m)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_rebuild(&w, m);
    int rc = dec_copy(d_rebuild, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

/* values the decoders refuse: an op that is none, an empty path (the
 * root is no file), a BEGIN's layout that is no layout, a PROGRESS past
 * its total, a FOLD of no group, a state that is none */
START_TEST(bad_rebuild)
{
    struct ddio_rebuild ok = { .op = DDIO_RB_FENCE, .path = "a" };
    ck_assert_int_eq(rebuild_try(&ok), 0);
    struct ddio_rebuild m = ok;
    m.op = 0;
    ck_assert_int_eq(rebuild_try(&m), -EPROTO);
    m.op = DDIO_RB_FOLDED + 1;
    ck_assert_int_eq(rebuild_try(&m), -EPROTO);
    struct ddio_rebuild fo = { .op = DDIO_RB_FOLD, .path = "a", .glo = 4, .ghi = 4 };
    ck_assert_int_eq(rebuild_try(&fo), -EPROTO);     /* no group */
    fo.ghi = 5;
    ck_assert_int_eq(rebuild_try(&fo), 0);
    struct ddio_rebuild sd = { .op = DDIO_RB_SETTLED, .path = "" };
    ck_assert_int_eq(rebuild_try(&sd), -EPROTO);     /* the root is no file */
    /* DOUBT carries nothing: a path after it is a trailing byte */
    uint8_t db[5] = { DDIO_RB_DOUBT, 0, 0, 0, 0 };
    ck_assert_int_eq(dec_copy(d_rebuild, db, 4), 0);
    ck_assert_int_eq(dec_copy(d_rebuild, db, 5), -EPROTO);
    struct ddio_rebuild ms = { .op = DDIO_RB_MISSED, .member = DDIO_MAX_SERVERS };
    ck_assert_int_eq(rebuild_try(&ms), -EPROTO);     /* no such member index */
    ms.member = DDIO_MAX_SERVERS - 1;
    ck_assert_int_eq(rebuild_try(&ms), 0);
    /* FREEZE and THAW carry a member, and nothing after it */
    struct ddio_rebuild fz = { .op = DDIO_RB_FREEZE, .member = DDIO_MAX_SERVERS };
    ck_assert_int_eq(rebuild_try(&fz), -EPROTO);
    uint8_t tb[9] = { DDIO_RB_THAW, 0, 0, 0, 1, 0, 0, 0, 0 };
    ck_assert_int_eq(dec_copy(d_rebuild, tb, 8), 0);
    ck_assert_int_eq(dec_copy(d_rebuild, tb, 9), -EPROTO);
    struct ddio_rebuild rs = { .op = DDIO_RB_RESYNCED, .member = 0, .path = "" };
    ck_assert_int_eq(rebuild_try(&rs), -EPROTO);     /* the root is no file */
    struct ddio_rebuild rd = { .op = DDIO_RB_REDO, .path = "a" };
    ck_assert_int_eq(rebuild_try(&rd), -EPROTO);     /* no layout */
    struct ddio_rebuild pr = { .op = DDIO_RB_PROGRESS, .done = 10, .total = 10 };
    ck_assert_int_eq(rebuild_try(&pr), 0);
    pr.done = 11;                           /* more copied than there is */
    ck_assert_int_eq(rebuild_try(&pr), -EPROTO);
    m = ok; m.path = "";
    ck_assert_int_eq(rebuild_try(&m), -EPROTO);
    m = ok; m.op = DDIO_RB_BEGIN;           /* stripe count 0: no layout */
    ck_assert_int_eq(rebuild_try(&m), -EPROTO);
    m.layout.stripe_unit = 4096;
    m.layout.stripe_count = 2;
    m.layout.server_index = 1;
    m.layout.copies = 2;
    ck_assert_int_eq(rebuild_try(&m), 0);
    m.layout.copies = 3;                    /* more copies than servers */
    ck_assert_int_eq(rebuild_try(&m), -EPROTO);
    uint8_t st[8] = { 3, 0, 0, 0, 0, 0, 0, 0 };
    ck_assert_int_eq(dec_copy(d_rebuild_r, st, sizeof(st)), -EPROTO);
    st[0] = 1;
    ck_assert_int_eq(dec_copy(d_rebuild_r, st, sizeof(st)), 0);
    st[4] = 1;                              /* a path said, none there */
    ck_assert_int_eq(dec_copy(d_rebuild_r, st, sizeof(st)), -EPROTO);
    uint8_t many[8] = { 0, 0, 0, 0, (DDIO_RB_MAX_PATHS + 1) & 0xFF,
                        (DDIO_RB_MAX_PATHS + 1) >> 8, 0, 0 };
    ck_assert_int_eq(dec_copy(d_rebuild_r, many, sizeof(many)), -EPROTO);
}
END_TEST

START_TEST(rt_member)
{
    struct ddio_wbuf w;
    struct ddio_member m;
    encode_sample(&samples[scrub_sample("member")], &w);
    ck_assert_int_eq(ddio_dec_member(w.p, w.len, &m), 0);
    ck_assert(m.op == DDIO_MB_ACCEPT && m.epoch == 7 && m.ballot == 1ull << 40);
    ck_assert_uint_eq(m.val.n, 3);
    ck_assert(m.val.ids[1][0] == 0x11 && m.val.ids[2][15] == 0x12);
    ck_assert(m.val.out[0] == 0 && m.val.out[1] == 0 && m.val.out[2] == 1);
    ddio_wbuf_free(&w);
    struct ddio_member_r r;
    encode_sample(&samples[scrub_sample("member_r")], &w);
    ck_assert_int_eq(ddio_dec_member_r(w.p, w.len, &r), 0);
    ck_assert(r.epoch == 6 && r.promised == 99 && r.acc_ballot == 98 && r.sealed == 1ull << 35);
    ck_assert(r.val.n == 3 && r.val.out[2] == 0 && r.acc.n == 3 && r.acc.out[2] == 1);
    ck_assert_int_eq(memcmp(r.acc.ids[2], r.val.ids[2], DDIO_ID_LEN), 0);
    ddio_wbuf_free(&w);
    /* GET is the op with nothing else: 16 bytes */
    struct ddio_member g = { .op = DDIO_MB_GET };
    ddio_wbuf_init(&w);
    ddio_enc_member(&w, &g);
    ck_assert_uint_eq(w.len, 20);
    ck_assert_int_eq(dec_copy(d_member, w.p, w.len), 0);
    ddio_wbuf_free(&w);
    ck_assert_str_eq(ddio_type_name(DDIO_T_MEMBER | DDIO_REPLY), "MEMBER|R");
}
END_TEST

static int member_try(const struct ddio_member *m)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_member(&w, m);
    int rc = w.err ? w.err : dec_copy(d_member, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

static int member_r_try(const struct ddio_member_r *m)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_member_r(&w, m);
    int rc = w.err ? w.err : dec_copy(d_member_r, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

/* values the decoders refuse: an op's missing or extra parts, unknown ops,
 * duplicate members, nobody in, out flags other than 0/1, a reply whose
 * parts contradict each other */
START_TEST(bad_member)
{
    static struct ddio_member ok, m;
    ok = (struct ddio_member){ .op = DDIO_MB_ACCEPT, .epoch = 2, .ballot = 5 };
    fill_members(&ok.val);
    ck_assert_int_eq(member_try(&ok), 0);
    m = ok; m.op = 0;
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.op = DDIO_MB_CONFIRM + 1;
    ck_assert_int_eq(member_try(&m), -EPROTO);
    /* SEAL carries nothing; CONFIRM an epoch and a generation (the ballot) */
    m = (struct ddio_member){ .op = DDIO_MB_SEAL };
    ck_assert_int_eq(member_try(&m), 0);
    m.epoch = 1;
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = (struct ddio_member){ .op = DDIO_MB_CONFIRM, .epoch = 3, .ballot = 9 };
    ck_assert_int_eq(member_try(&m), 0);
    m.ballot = 0;
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = (struct ddio_member){ .op = DDIO_MB_CONFIRM, .ballot = 9 };
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.op = DDIO_MB_CONFIRM;                             /* CONFIRM with a value */
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.epoch = 0;                                        /* ACCEPT of epoch 0 */
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.ballot = 0;
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.val.n = 0;                                        /* ACCEPT of nothing */
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.op = DDIO_MB_PREPARE;                             /* PREPARE with a value */
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.op = DDIO_MB_COMMIT;                              /* COMMIT with a ballot */
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.op = DDIO_MB_GET;
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; memcpy(m.val.ids[2], m.val.ids[0], DDIO_ID_LEN);    /* a member twice */
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.val.out[0] = m.val.out[1] = 1;                    /* nobody in */
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.val.out[1] = 2;
    ck_assert_int_eq(member_try(&m), -EPROTO);
    m = ok; m.val.n = DDIO_MAX_SERVERS + 1;                     /* the encoder refuses */
    ck_assert_int_eq(member_try(&m), -EINVAL);
    /* a count larger than the bytes that follow */
    uint8_t big[16] = { DDIO_MB_ACCEPT, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 };
    uint8_t cnt[4] = { 0xff, 0, 0, 0 };
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_put_bytes(&w, big, sizeof(big));
    ddio_put_bytes(&w, cnt, sizeof(cnt));
    ck_assert_int_eq(dec_copy(d_member, w.p, w.len), -EPROTO);
    ddio_wbuf_free(&w);
    static struct ddio_member_r rok, r;
    rok = (struct ddio_member_r){ .epoch = 1, .promised = 3, .acc_ballot = 3 };
    fill_members(&rok.val);
    fill_members(&rok.acc);
    ck_assert_int_eq(member_r_try(&rok), 0);
    r = rok; r.epoch = 0;                                       /* epoch 0 names nobody */
    ck_assert_int_eq(member_r_try(&r), -EPROTO);
    r = rok; r.acc_ballot = 0;                                  /* a value without a ballot */
    ck_assert_int_eq(member_r_try(&r), -EPROTO);
    r = rok; r.promised = 2;                                    /* accepted above the promise */
    ck_assert_int_eq(member_r_try(&r), -EPROTO);
    r = rok; r.acc.n = 0; r.acc_ballot = 0;
    ck_assert_int_eq(member_r_try(&r), 0);
}
END_TEST

START_TEST(bad_namespace)
{
    char longname[DDIO_NAME_MAX + 2];
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    ck_assert_int_eq(readdir_r_with(1, "ok", DDIO_K_FILE), 0);
    ck_assert_int_eq(readdir_r_with(1, "", DDIO_K_FILE), -EPROTO);
    ck_assert_int_eq(readdir_r_with(1, ".", DDIO_K_DIR), -EPROTO);
    ck_assert_int_eq(readdir_r_with(1, "..", DDIO_K_DIR), -EPROTO);
    ck_assert_int_eq(readdir_r_with(1, "a/b", DDIO_K_FILE), -EPROTO);
    ck_assert_int_eq(readdir_r_with(1, longname, DDIO_K_FILE), -EPROTO);
    ck_assert_int_eq(readdir_r_with(1, "ok", 0), -EPROTO);
    ck_assert_int_eq(readdir_r_with(1, "ok", 3), -EPROTO);
    ck_assert_int_eq(readdir_r_with(2, "ok", DDIO_K_FILE), -EPROTO);        /* count > entries */
    ck_assert_int_eq(readdir_r_with(UINT32_MAX, "ok", DDIO_K_FILE), -EPROTO);
    ck_assert_int_eq(readdir_r_with(DDIO_READDIR_MAX + 1, "ok", DDIO_K_FILE), -EPROTO);
    ck_assert_int_eq(readdir_r_more(1, 1, "ok", DDIO_K_FILE), 0);
    ck_assert_int_eq(readdir_r_more(2, 1, "ok", DDIO_K_FILE), -EPROTO);    /* more is 0 or 1 */
    ck_assert_int_eq(readdir_r_empty(0), 0);
    ck_assert_int_eq(readdir_r_empty(1), -EPROTO);  /* more, but no name to resume after */
    ck_assert_int_eq(readdir_after(""), 0);
    ck_assert_int_eq(readdir_after("f1"), 0);
    ck_assert_int_eq(readdir_after("."), -EPROTO);
    ck_assert_int_eq(readdir_after(".."), -EPROTO);
    ck_assert_int_eq(readdir_after("a/b"), -EPROTO);
    ck_assert_int_eq(readdir_after(longname), -EPROTO);
    ck_assert_int_eq(pstat_with(DDIO_K_DIR, 0755, 0), 0);
    ck_assert_int_eq(pstat_with(DDIO_K_DIR, 0755, 1), -EPROTO);            /* dir with a size */
    ck_assert_int_eq(pstat_with(DDIO_K_DIR, 010000, 0), -EPROTO);
    ck_assert_int_eq(pstat_with(0, 0755, 0), -EPROTO);
    ck_assert_int_eq(pstat_with(DDIO_K_FILE, 0644, 0), -EPROTO);           /* no layout */

    struct ddio_wbuf w;
    struct ddio_readdir q = { .path = "a", .after = "", .max = 0 };
    ddio_wbuf_init(&w);
    ddio_enc_readdir(&w, &q);
    ck_assert_int_eq(dec_copy(d_readdir, w.p, w.len), -EPROTO);            /* max 0 */
    ddio_wbuf_free(&w);
    q.max = DDIO_READDIR_MAX + 1;
    ddio_wbuf_init(&w);
    ddio_enc_readdir(&w, &q);
    ck_assert_int_eq(dec_copy(d_readdir, w.p, w.len), -EPROTO);
    ddio_wbuf_free(&w);
    struct ddio_mkdir mk = { .path = "a", .mode = 010000 };
    ddio_wbuf_init(&w);
    ddio_enc_mkdir(&w, &mk);
    ck_assert_int_eq(dec_copy(d_mkdir, w.p, w.len), -EPROTO);
    ddio_wbuf_free(&w);
    struct ddio_inval iv = { .what = 0, .path = "a" };
    ddio_wbuf_init(&w);
    ddio_enc_inval(&w, &iv);
    ck_assert_int_eq(dec_copy(d_inval, w.p, w.len), -EPROTO);              /* nothing changed */
    ddio_wbuf_free(&w);
    iv.what = DDIO_IV_ALL + 1;
    ddio_wbuf_init(&w);
    ddio_enc_inval(&w, &iv);
    ck_assert_int_eq(dec_copy(d_inval, w.p, w.len), -EPROTO);              /* an unknown bit */
    ddio_wbuf_free(&w);
    struct ddio_setattr sa = { .path = "a", .what = 0 };
    ddio_wbuf_init(&w);
    ddio_enc_setattr(&w, &sa);
    ck_assert_int_eq(dec_copy(d_setattr, w.p, w.len), -EPROTO);            /* nothing to set */
    ddio_wbuf_free(&w);
    sa.what = DDIO_SA_MODE;
    sa.mode = 010000;
    ddio_wbuf_init(&w);
    ddio_enc_setattr(&w, &sa);
    ck_assert_int_eq(dec_copy(d_setattr, w.p, w.len), -EPROTO);            /* not a mode */
    ddio_wbuf_free(&w);
    struct ddio_open om = { .path = "a", .amode = DDIO_O_RDWR | DDIO_O_MODE, .mode = 0644 };
    fill_layout(&om.layout, 1);
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, &om);
    ck_assert_int_eq(dec_copy(d_open, w.p, w.len), -EPROTO);               /* MODE without CREAT */
    ddio_wbuf_free(&w);
    struct ddio_readdir_r big = { .n = DDIO_READDIR_MAX + 1, .ent = sample_ents };
    ddio_wbuf_init(&w);
    ddio_enc_readdir_r(&w, &big);
    ck_assert_int_eq(w.err, -EINVAL);                                      /* refused to encode */
    ddio_wbuf_free(&w);
}
END_TEST

/* ---- truncation and trailing bytes ---------------------------------------------------- */

START_TEST(truncated_every_prefix)
{
    for (size_t i = 0; i < NSAMPLES; i++) {
        struct ddio_wbuf w;
        encode_sample(&samples[i], &w);
        ck_assert_msg(dec_copy(samples[i].dec, w.p, w.len) == 0, "%s: full", samples[i].name);
        for (size_t k = 0; k < w.len; k++) {
            int rc = dec_copy(samples[i].dec, w.p, k);
            if (k >= samples[i].min_ok)
                ck_assert_msg(rc == 0, "%s: prefix %zu rc %d", samples[i].name, k, rc);
            else
                ck_assert_msg(rc == -EPROTO, "%s: prefix %zu of %zu rc %d",
                              samples[i].name, k, w.len, rc);
        }
        ddio_wbuf_free(&w);
    }
}
END_TEST

START_TEST(trailing_byte)
{
    for (size_t i = 0; i < NSAMPLES; i++) {
        if (samples[i].min_ok != FULL)
            continue;   /* DATA: any length of data is structurally fine */
        struct ddio_wbuf w;
        encode_sample(&samples[i], &w);
        ddio_put_u8(&w, 0);
        ck_assert_msg(dec_copy(samples[i].dec, w.p, w.len) == -EPROTO, "%s", samples[i].name);
        ddio_wbuf_free(&w);
    }
}
END_TEST

/* ---- oversized and inconsistent fields ---------------------------------------------------- */

static void put_layout_raw(struct ddio_wbuf *w, uint64_t unit, uint32_t count,
                           uint32_t index, uint32_t nids, uint32_t copies)
{
    ddio_put_u64(w, unit);
    ddio_put_u32(w, count);
    ddio_put_u32(w, index);
    ddio_put_u32(w, 1);
    ddio_put_u64(w, 4096);
    for (uint32_t i = 0; i < nids; i++)
        ddio_put_space(w, DDIO_ID_LEN);
    ddio_put_u32(w, copies);
}

static int open_r_copies(uint64_t unit, uint32_t count, uint32_t index, uint32_t nids,
                         uint32_t copies)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_put_u64(&w, 1);
    ddio_put_u64(&w, 0);
    ddio_put_u32(&w, 0);
    put_layout_raw(&w, unit, count, index, nids, copies);
    int rc = dec_copy(d_open_r, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

static int open_r_with(uint64_t unit, uint32_t count, uint32_t index, uint32_t nids)
{
    return open_r_copies(unit, count, index, nids, 1);
}

START_TEST(bad_layout)
{
    ck_assert_int_eq(open_r_with(4096, 1, 0, 1), 0);
    ck_assert_int_eq(open_r_with(4096, 256, 255, 256), 0);
    ck_assert_int_eq(open_r_with(4096, 0, 0, 0), -EPROTO);
    ck_assert_int_eq(open_r_with(4096, 257, 0, 257), -EPROTO);
    ck_assert_int_eq(open_r_with(4096, UINT32_MAX, 0, 2), -EPROTO);
    ck_assert_int_eq(open_r_with(4096, 2, 2, 2), -EPROTO);   /* index out of range */
    ck_assert_int_eq(open_r_with(0, 2, 0, 2), -EPROTO);      /* zero unit */
    ck_assert_int_eq(open_r_with(4096, 3, 0, 2), -EPROTO);   /* ids missing */
    ck_assert_int_eq(open_r_with(4096, 2, 0, 3), -EPROTO);   /* extra id */
    /* copies: 1..3, never more than the servers */
    ck_assert_int_eq(open_r_copies(4096, 3, 0, 3, 3), 0);
    ck_assert_int_eq(open_r_copies(4096, 3, 0, 3, 2), 0);
    ck_assert_int_eq(open_r_copies(4096, 3, 0, 3, 0), -EPROTO);
    ck_assert_int_eq(open_r_copies(4096, 4, 0, 4, 4), -EPROTO);
    ck_assert_int_eq(open_r_copies(4096, 2, 0, 2, 3), -EPROTO);
    /* ec:K+M in the copies word: one copy, exactly K+M servers */
#define EC(k, m) (1u | (k) << 8 | (m) << 16)
    ck_assert_int_eq(open_r_copies(4096, 3, 0, 3, EC(2u, 1u)), 0);
    ck_assert_int_eq(open_r_copies(4096, 6, 5, 6, EC(4u, 2u)), 0);
    ck_assert_int_eq(open_r_copies(4096, 4, 0, 4, EC(2u, 1u)), -EPROTO);  /* K+M != count */
    ck_assert_int_eq(open_r_copies(4096, 3, 0, 3, EC(2u, 1u) + 1), -EPROTO); /* 2 copies */
    ck_assert_int_eq(open_r_copies(4096, 3, 0, 3, EC(3u, 0u)), -EPROTO);
    ck_assert_int_eq(open_r_copies(4096, 5, 0, 5, EC(0u, 5u)), -EPROTO);
    ck_assert_int_eq(open_r_copies(4096, 22, 0, 22, EC(17u, 5u)), -EPROTO);  /* past the bounds */
    ck_assert_int_eq(open_r_copies(4096, 3, 0, 3, EC(2u, 1u) | 1u << 24), -EPROTO);
#undef EC
}
END_TEST

/* ECREAD and its answer survive the trip (a parity's fold state too; the
 * extents view takes any length); a view past the folding one, a length
 * of 0 or (with bytes) over the limit, an unknown fold state, unsorted or
 * overlapping extents, and too many extents for the bytes left are
 * refused */
START_TEST(ecread_msgs)
{
    struct ddio_ecread m = {.handle = 9, .view = DDIO_EV_PARITY, .len = 4096, .off = 1 << 20}, b;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_ecread(&w, &m);
    ck_assert_int_eq(ddio_dec_ecread(w.p, w.len, &b), 0);
    ck_assert(b.handle == 9 && b.view == DDIO_EV_PARITY && b.len == 4096 && b.off == 1 << 20);
    ddio_wbuf_free(&w);
    m = (struct ddio_ecread){.handle = 9, .view = DDIO_EV_EXTENTS, .len = UINT32_MAX, .off = 0};
    ddio_wbuf_init(&w);
    ddio_enc_ecread(&w, &m);
    ck_assert_int_eq(ddio_dec_ecread(w.p, w.len, &b), 0);
    ck_assert(b.view == DDIO_EV_EXTENTS && b.len == UINT32_MAX);
    ddio_wbuf_free(&w);
    struct ddio_ecread bad[] = {{1, DDIO_EV_FOLDING + 1, 10, 0}, {1, 0, 0, 0},
                                {1, DDIO_EV_MERGED, DDIO_ECREAD_MAX + 1, 0},
                                {1, 0, 10, UINT64_MAX - 5}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ddio_wbuf_init(&w);
        ddio_enc_ecread(&w, &bad[i]);
        ck_assert_int_eq(ddio_dec_ecread(w.p, w.len, &b), -EPROTO);
        ddio_wbuf_free(&w);
    }
    static const uint8_t data[100] = {7};
    uint64_t ext[4] = {10, 20, 30, 40};
    struct ddio_ecread_r r = {.logical_size = 12345, .pstate = DDIO_PS_MERGED, .data_len = 100,
                              .data = data, .next = 2, .ext = ext}, rb;
    ddio_wbuf_init(&w);
    ddio_enc_ecread_r(&w, &r);
    ck_assert_int_eq(ddio_dec_ecread_r(w.p, w.len, &rb), 0);
    ck_assert(rb.logical_size == 12345 && rb.pstate == DDIO_PS_MERGED && rb.data_len == 100
              && rb.data[0] == 7 && rb.next == 2 && rb.ext[3] == 40);
    ddio_ecread_r_free(&rb);
    ddio_wbuf_free(&w);
    uint64_t unsorted[4] = {30, 40, 10, 20}, empty[2] = {5, 5};
    struct ddio_ecread_r bads[] = {{1, 0, 100, data, 2, unsorted}, {1, 0, 100, data, 1, empty},
                                   {1, DDIO_PS_MERGED + 1, 100, data, 2, ext}};
    for (size_t i = 0; i < 3; i++) {
        ddio_wbuf_init(&w);
        ddio_enc_ecread_r(&w, &bads[i]);
        ck_assert_int_eq(ddio_dec_ecread_r(w.p, w.len, &rb), -EPROTO);
        ddio_wbuf_free(&w);
    }
    ddio_wbuf_init(&w);           /* 1000 extents claimed, none there */
    ddio_put_u64(&w, 1);
    ddio_put_u32(&w, 0);
    ddio_put_u32(&w, 0);
    ddio_put_u32(&w, 1000);
    ck_assert_int_eq(ddio_dec_ecread_r(w.p, w.len, &rb), -EPROTO);
    ddio_wbuf_free(&w);
}
END_TEST

/* an ec:K+M layout survives the trip, K and M apart from the copies */
START_TEST(ec_layout_roundtrip)
{
    struct ddio_layout_rec l, back;
    memset(&l, 0, sizeof(l));
    l.stripe_unit = 65536;
    l.stripe_count = 6;
    l.server_index = 4;
    l.ndisks = 1;
    l.block_size = 1 << 20;
    l.copies = 1;
    l.ec = (struct ddio_ec){4, 2};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_layout(&w, &l);
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, w.p, w.len);
    ck_assert_int_eq(ddio_dec_layout(&r, &back), 0);
    ck_assert_uint_eq(back.copies, 1);
    ck_assert_uint_eq(back.ec.k, 4);
    ck_assert_uint_eq(back.ec.m, 2);
    ddio_wbuf_free(&w);
    l.ec = (struct ddio_ec){0, 0};
    l.copies = 3;
    ddio_wbuf_init(&w);
    ddio_enc_layout(&w, &l);
    ddio_rbuf_init(&r, w.p, w.len);
    ck_assert_int_eq(ddio_dec_layout(&r, &back), 0);
    ck_assert(back.copies == 3 && back.ec.k == 0 && back.ec.m == 0);
    ddio_wbuf_free(&w);
}
END_TEST

static int segs_msg(int put, uint32_t nseg_field, const struct ddio_seg *seg, uint32_t nseg,
                    size_t data)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    if (!put)
        ddio_put_u32(&w, 7);
    ddio_put_u32(&w, nseg_field);
    for (uint32_t i = 0; i < nseg; i++) {
        ddio_put_u64(&w, seg[i].off);
        ddio_put_u64(&w, seg[i].len);
    }
    uint8_t *d = ddio_put_space(&w, data);
    if (d && data)
        memset(d, 0x5a, data);
    ck_assert_int_eq(w.err, 0);
    int rc = dec_copy(put ? d_put : d_get, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

START_TEST(bad_segs)
{
    const struct ddio_seg ok[2] = { { 0, 4 }, { 10, 6 } };
    const struct ddio_seg zero[2] = { { 0, 4 }, { 10, 0 } };
    const struct ddio_seg segovf[1] = { { UINT64_MAX - 3, 5 } };
    const struct ddio_seg segtop[1] = { { UINT64_MAX - 5, 5 } };
    const struct ddio_seg totovf[2] = { { 0, UINT64_MAX - 1 }, { 0, 2 } };

    ck_assert_int_eq(segs_msg(1, 2, ok, 2, 10), 0);
    ck_assert_int_eq(segs_msg(1, 2, ok, 2, 9), -EPROTO);    /* data short */
    ck_assert_int_eq(segs_msg(1, 2, ok, 2, 11), -EPROTO);   /* data long */
    ck_assert_int_eq(segs_msg(1, 2, ok, 1, 10), -EPROTO);   /* count > present */
    ck_assert_int_eq(segs_msg(1, 2, zero, 2, 4), -EPROTO);
    ck_assert_int_eq(segs_msg(0, 2, ok, 2, 0), 0);
    ck_assert_int_eq(segs_msg(0, 2, ok, 2, 1), -EPROTO);    /* GET has no data */
    ck_assert_int_eq(segs_msg(0, 2, zero, 2, 0), -EPROTO);
    ck_assert_int_eq(segs_msg(0, 1, segovf, 1, 0), -EPROTO);
    ck_assert_int_eq(segs_msg(0, 1, segtop, 1, 0), 0);      /* ends exactly at 2^64-1 */
    ck_assert_int_eq(segs_msg(0, 2, totovf, 2, 0), -EPROTO);
    ck_assert_int_eq(segs_msg(0, UINT32_MAX, ok, 2, 0), -EPROTO);
    ck_assert_int_eq(segs_msg(1, UINT32_MAX, ok, 2, 10), -EPROTO);

    /* DDIO_MAX_SEGS is accepted, one more is not, even with all bytes present */
    struct ddio_seg *many = malloc((DDIO_MAX_SEGS + 1) * sizeof(*many));
    for (uint32_t i = 0; i <= DDIO_MAX_SEGS; i++)
        many[i] = (struct ddio_seg){ (uint64_t)i * 2, 1 };
    ck_assert_int_eq(segs_msg(0, DDIO_MAX_SEGS, many, DDIO_MAX_SEGS, 0), 0);
    ck_assert_int_eq(segs_msg(0, DDIO_MAX_SEGS + 1, many, DDIO_MAX_SEGS + 1, 0), -EPROTO);
    ck_assert_int_eq(segs_msg(1, DDIO_MAX_SEGS + 1, many, DDIO_MAX_SEGS + 1,
                              DDIO_MAX_SEGS + 1), -EPROTO);
    free(many);

    uint32_t tag;
    size_t hl;
    static const uint8_t three[3] = { 1, 2, 3 };
    ck_assert_int_eq(ddio_dec_data(three, 3, &tag, &hl), -EPROTO);
    ck_assert_int_eq(ddio_dec_data(three, 0, &tag, &hl), -EPROTO);
}
END_TEST

static int xfer_with(uint32_t np, uint32_t rank, uint32_t desc_len, size_t present)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_put_u64(&w, 1);
    ddio_put_u32(&w, DDIO_X_READ);
    ddio_put_u32(&w, 0);
    ddio_put_u64(&w, 0);
    ddio_put_u64(&w, 0);
    ddio_put_u32(&w, np);
    ddio_put_u32(&w, rank);
    ddio_put_u32(&w, 1000);
    ddio_put_u32(&w, desc_len);
    ddio_put_space(&w, present);
    int rc = dec_copy(d_xfer, w.p, w.len);
    ddio_wbuf_free(&w);
    return rc;
}

START_TEST(bad_xfer)
{
    ck_assert_int_eq(xfer_with(1, 0, 5, 5), 0);
    ck_assert_int_eq(xfer_with(1, 0, 0, 0), 0);
    ck_assert_int_eq(xfer_with(0, 0, 5, 5), -EPROTO);
    ck_assert_int_eq(xfer_with(4, 4, 5, 5), -EPROTO);
    ck_assert_int_eq(xfer_with(4, UINT32_MAX, 5, 5), -EPROTO);
    ck_assert_int_eq(xfer_with(1, 0, 6, 5), -EPROTO);
    ck_assert_int_eq(xfer_with(1, 0, 4, 5), -EPROTO);
    ck_assert_int_eq(xfer_with(1, 0, UINT32_MAX, 5), -EPROTO);
}
END_TEST

START_TEST(bad_ranges)
{
    struct ddio_wbuf w;
    /* LOCK: start + len must not wrap (len 0 = to EOF is fine anywhere) */
    const uint64_t lk[][3] = { { UINT64_MAX, 0, 0 }, { UINT64_MAX - 9, 9, 0 },
                               { UINT64_MAX - 9, 10, 1 }, { UINT64_MAX - 9, 11, 1 },
                               { 1, UINT64_MAX, 1 } };
    for (unsigned i = 0; i < 5; i++) {
        struct ddio_lock m = { .cmd = DDIO_LK_SETLK, .type = DDIO_LK_RD,
                               .start = lk[i][0], .len = lk[i][1] };
        ddio_wbuf_init(&w);
        ddio_enc_lock(&w, &m);
        ck_assert_int_eq(dec_copy(d_lock, w.p, w.len), lk[i][2] ? -EPROTO : 0);
        ddio_wbuf_free(&w);

        struct ddio_prealloc p = { .local_off = lk[i][0], .local_len = lk[i][1] };
        ddio_wbuf_init(&w);
        ddio_enc_prealloc(&w, &p);
        ck_assert_int_eq(dec_copy(d_prealloc, w.p, w.len), lk[i][2] ? -EPROTO : 0);
        ddio_wbuf_free(&w);
    }
}
END_TEST

START_TEST(bad_stats)
{
    struct ddio_wbuf w;
    /* a count far beyond what the bytes could hold is refused before calloc */
    ddio_wbuf_init(&w);
    ddio_put_u32(&w, UINT32_MAX);
    ddio_put_str(&w, "k");
    ddio_put_u64(&w, 1);
    ck_assert_int_eq(dec_copy(d_stats_r, w.p, w.len), -EPROTO);
    ddio_wbuf_free(&w);
    /* count 2 with one entry present */
    ddio_wbuf_init(&w);
    ddio_put_u32(&w, 2);
    ddio_put_str(&w, "key-number-one");
    ddio_put_u64(&w, 1);
    ck_assert_int_eq(dec_copy(d_stats_r, w.p, w.len), -EPROTO);
    ddio_wbuf_free(&w);
    /* a key over the cap */
    char *big = malloc(DDIO_MAX_STR + 2);
    memset(big, 'k', DDIO_MAX_STR + 1);
    big[DDIO_MAX_STR + 1] = '\0';
    ddio_wbuf_init(&w);
    ddio_put_u32(&w, 1);
    ddio_put_str(&w, big);
    ddio_put_u64(&w, 1);
    ck_assert_int_eq(dec_copy(d_stats_r, w.p, w.len), -EPROTO);
    ddio_wbuf_free(&w);
    free(big);
    /* failing on the second key frees the first (leak check under ASan) */
    ddio_wbuf_init(&w);
    ddio_put_u32(&w, 2);
    ddio_put_str(&w, "first");
    ddio_put_u64(&w, 1);
    ddio_put_u32(&w, 3);
    ddio_put_bytes(&w, "a\0b", 3);
    ddio_put_u64(&w, 2);
    ck_assert_int_eq(dec_copy(d_stats_r, w.p, w.len), -EPROTO);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(bad_strings)
{
    struct ddio_wbuf w;
    char *big = malloc(DDIO_MAX_STR + 2);
    memset(big, 'p', DDIO_MAX_STR + 1);
    big[DDIO_MAX_STR + 1] = '\0';
    struct ddio_path_req pr = { .path = big };
    ddio_wbuf_init(&w);
    ddio_enc_path_req(&w, &pr);
    ck_assert_int_eq(dec_copy(d_path_req, w.p, w.len), -EPROTO);
    ddio_wbuf_free(&w);
    pr.path = big + 1;
    ddio_wbuf_init(&w);
    ddio_enc_path_req(&w, &pr);
    ck_assert_int_eq(dec_copy(d_path_req, w.p, w.len), 0);
    ddio_wbuf_free(&w);

    struct ddio_hello h = { .client = big };
    ddio_wbuf_init(&w);
    ddio_enc_hello(&w, &h);
    ck_assert_int_eq(dec_copy(d_hello, w.p, w.len), -EPROTO);
    ddio_wbuf_free(&w);
    free(big);
}
END_TEST

/* ---- the UCX transport's messages ---------------------------------------------------------- */

START_TEST(rt_ucx)
{
    struct ddio_wbuf w;
    static const uint8_t addr[] = {1, 2, 3, 4, 5, 6, 7};
    const uint8_t *a;
    uint32_t len;
    uint64_t cookie, req, token;
    uint32_t tag;

    ddio_wbuf_init(&w);
    ddio_enc_ucxaddr_r(&w, 0x8877665544332211ull, addr, sizeof(addr));
    ck_assert_int_eq(ddio_dec_ucxaddr_r(w.p, w.len, &cookie, &a, &len), 0);
    ck_assert_uint_eq(cookie, 0x8877665544332211ull);
    ck_assert_uint_eq(len, sizeof(addr));
    ck_assert_mem_eq(a, addr, sizeof(addr));
    ck_assert_int_eq(ddio_dec_ucxaddr_r(w.p, 7, &cookie, &a, &len), -EPROTO);
    ck_assert_int_eq(ddio_dec_ucxaddr_r(w.p, w.len - 1, &cookie, &a, &len), -EPROTO);
    ddio_wbuf_free(&w);

    struct ddio_seg seg[2] = {{4096, 100}, {1u << 20, 8192}};
    struct ddio_segs m = {.tag = 0, .nseg = 2, .seg = seg, .total = 8292}, got;
    ddio_wbuf_init(&w);
    ddio_enc_am_put(&w, 77, &m);
    ck_assert_int_eq(ddio_dec_am_put(w.p, w.len, &token, &got), 0);
    ck_assert_uint_eq(token, 77);
    ck_assert_uint_eq(got.nseg, 2);
    ck_assert_uint_eq(got.total, 8292);
    ck_assert_uint_eq(got.seg[1].off, 1u << 20);
    ddio_segs_free(&got);
    ddio_wbuf_free(&w);

    uint8_t h[DDIO_AM_DATA_HDR];
    ddio_enc_am_data(h, 0xfeedull, 12, 34);
    ck_assert_int_eq(ddio_dec_am_data(h, sizeof(h), &cookie, &req, &tag), 0);
    ck_assert_uint_eq(cookie, 0xfeedull);
    ck_assert_uint_eq(req, 12);
    ck_assert_uint_eq(tag, 34);
    ck_assert_int_eq(ddio_dec_am_data(h, sizeof(h) - 1, &cookie, &req, &tag), -EPROTO);

    struct ddio_xfer x = {.handle = 1, .op = DDIO_X_READ, .flags = DDIO_XF_UCX,
                          .nparticipants = 1, .desc_len = 3, .desc = addr,
                          .ucx_token = 99, .ucx_len = 1u << 30}, y;
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &x);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), 0);
    ck_assert_uint_eq(y.ucx_token, 99);
    ck_assert_uint_eq(y.ucx_len, 1u << 30);
    /* the flag without its tail, and a tail without the flag */
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len - 16, &y), -EPROTO);
    w.p[12] &= (uint8_t)~DDIO_XF_UCX;
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), -EPROTO);
    ddio_wbuf_free(&w);
}
END_TEST

/* DDIO_XF_INLINE: a one-participant write's bytes after the descriptor */
START_TEST(xfer_inline)
{
    static const uint8_t desc[3] = {1, 2, 3}, data[5] = {9, 8, 7, 6, 5};
    struct ddio_xfer x = {.handle = 1, .op = DDIO_X_WRITE, .flags = DDIO_XF_INLINE,
                          .nparticipants = 1, .desc_len = 3, .desc = desc,
                          .inline_len = 5, .inline_data = data}, y;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &x);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), 0);
    ck_assert_uint_eq(y.inline_len, 5);
    ck_assert_mem_eq(y.inline_data, data, 5);
    /* short of its bytes; one byte too many */
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len - 1, &y), -EPROTO);
    ddio_put_u8(&w, 0);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), -EPROTO);
    ddio_wbuf_free(&w);
    /* only a write, of one participant, without UCX, of at most the limit */
    struct ddio_xfer bad[4] = {x, x, x, x};
    bad[0].op = DDIO_X_READ;
    bad[1].nparticipants = 2;
    bad[2].flags |= DDIO_XF_UCX;
    bad[3].inline_len = DDIO_MAX_INLINE + 1;
    static uint8_t big[DDIO_MAX_INLINE + 1];
    bad[3].inline_data = big;
    for (int i = 0; i < 4; i++) {
        ddio_wbuf_init(&w);
        ddio_enc_xfer(&w, &bad[i]);
        ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), -EPROTO);
        ddio_wbuf_free(&w);
    }
}
END_TEST

/* DDIO_XF_INLINE_OWN: pieces encoded in turn decode as one run of bytes;
 * the flag only with DDIO_XF_INLINE */
START_TEST(xfer_inline_own)
{
    static const uint8_t desc[3] = {1, 2, 3}, a[3] = {1, 2, 3}, b[2] = {4, 5};
    const struct ddio_span v[2] = {{a, 3}, {b, 2}};
    const uint8_t both[5] = {1, 2, 3, 4, 5};
    struct ddio_xfer x = {.handle = 1, .op = DDIO_X_WRITE,
                          .flags = DDIO_XF_INLINE | DDIO_XF_INLINE_OWN, .nparticipants = 1,
                          .desc_len = 3, .desc = desc, .inline_len = 5, .inline_pieces = v,
                          .inline_npieces = 2}, y;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &x);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), 0);
    ck_assert_uint_eq(y.flags, DDIO_XF_INLINE | DDIO_XF_INLINE_OWN);
    ck_assert_uint_eq(y.inline_len, 5);
    ck_assert_mem_eq(y.inline_data, both, 5);
    ddio_wbuf_free(&w);
    x.flags = DDIO_XF_INLINE_OWN;
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &x);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), -EPROTO);
    ddio_wbuf_free(&w);
}
END_TEST

/* DDIO_XF_ONCE: client and call id after the other tails (writes only) */
START_TEST(xfer_once)
{
    static const uint8_t desc[3] = {1, 2, 3}, data[5] = {9, 8, 7, 6, 5};
    struct ddio_xfer x = {.handle = 1, .op = DDIO_X_WRITE,
                          .flags = DDIO_XF_INLINE | DDIO_XF_ONCE, .nparticipants = 1,
                          .desc_len = 3, .desc = desc, .inline_len = 5, .inline_data = data,
                          .once_client = 0x1234567890abcdefull, .once_call = 77}, y;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &x);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), 0);
    ck_assert_uint_eq(y.once_client, 0x1234567890abcdefull);
    ck_assert_uint_eq(y.once_call, 77);
    ck_assert_mem_eq(y.inline_data, data, 5);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len - 1, &y), -EPROTO);     /* ids cut short */
    ddio_wbuf_free(&w);
    /* without the flag the ids are not on the wire */
    x.flags = DDIO_XF_INLINE;
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &x);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), 0);
    ck_assert_uint_eq(y.once_client, 0);
    ddio_wbuf_free(&w);
    /* a read's DONE says nothing of its data: refused */
    struct ddio_xfer r = {.handle = 1, .op = DDIO_X_READ, .flags = DDIO_XF_ONCE,
                          .nparticipants = 1, .desc_len = 3, .desc = desc, .once_client = 1,
                          .once_call = 1};
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &r);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), -EPROTO);
    ddio_wbuf_free(&w);
}
END_TEST

/* DDIO_XF_RESENT: a flag only, passed through, no tail on the wire */
START_TEST(xfer_resent)
{
    static const uint8_t desc[3] = {1, 2, 3};
    struct ddio_xfer x = {.handle = 1, .op = DDIO_X_READ,
                          .flags = DDIO_XF_COLLECTIVE | DDIO_XF_RESENT, .group = 5, .seq = 9,
                          .nparticipants = 4, .rank = 3, .desc_len = 3, .desc = desc}, y;
    struct ddio_wbuf w, plain;
    ddio_wbuf_init(&w);
    ddio_enc_xfer(&w, &x);
    ck_assert_int_eq(ddio_dec_xfer(w.p, w.len, &y), 0);
    ck_assert_uint_eq(y.flags, DDIO_XF_COLLECTIVE | DDIO_XF_RESENT);
    ck_assert_uint_eq(y.rank, 3);
    ck_assert_uint_eq(y.seq, 9);
    x.flags = DDIO_XF_COLLECTIVE;
    ddio_wbuf_init(&plain);
    ddio_enc_xfer(&plain, &x);
    ck_assert_uint_eq(plain.len, w.len);                       /* no tail */
    ddio_wbuf_free(&plain);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(cancel_msg)
{
    struct ddio_wbuf w;
    struct ddio_cancel m;
    ddio_wbuf_init(&w);
    ddio_enc_cancel(&w, 42, "server a:1: gone", 0, 0);
    ck_assert_int_eq(ddio_dec_cancel(w.p, w.len, &m), 0);
    ck_assert_uint_eq(m.req, 42);
    ck_assert_str_eq(m.why, "server a:1: gone");
    ck_assert_uint_eq(m.group, 0);
    free(m.why);
    ck_assert_int_eq(ddio_dec_cancel(w.p, w.len - 1, &m), -EPROTO);
    ck_assert_ptr_null(m.why);
    ddio_wbuf_free(&w);
    /* naming a collective call: both fields back; a cut one refused */
    ddio_wbuf_init(&w);
    ddio_enc_cancel(&w, 0, "rank 2 failed", 0x1234abcdull, 77);
    ck_assert_int_eq(ddio_dec_cancel(w.p, w.len, &m), 0);
    ck_assert_uint_eq(m.req, 0);
    ck_assert_uint_eq(m.group, 0x1234abcdull);
    ck_assert_uint_eq(m.seq, 77);
    free(m.why);
    ck_assert_int_eq(ddio_dec_cancel(w.p, w.len - 4, &m), -EPROTO);
    ck_assert_ptr_null(m.why);
    ddio_wbuf_free(&w);
    /* a reason longer than the limit is cut by the encoder, refused by
     * the decoder */
    char big[DDIO_MAX_CANCEL_WHY + 50];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = 0;
    ddio_wbuf_init(&w);
    ddio_enc_cancel(&w, 1, big, 0, 0);
    ck_assert_int_eq(ddio_dec_cancel(w.p, w.len, &m), 0);
    ck_assert_uint_eq(strlen(m.why), DDIO_MAX_CANCEL_WHY);
    free(m.why);
    ddio_wbuf_free(&w);
    ddio_wbuf_init(&w);
    ddio_put_u64(&w, 1);
    ddio_put_u32(&w, DDIO_MAX_CANCEL_WHY + 1);
    for (unsigned i = 0; i < DDIO_MAX_CANCEL_WHY + 1; i++)
        ddio_put_u8(&w, 'y');
    ck_assert_int_eq(ddio_dec_cancel(w.p, w.len, &m), -EPROTO);
    ddio_wbuf_free(&w);
}
END_TEST

START_TEST(local_msgs)
{
    struct ddio_wbuf w;
    struct ddio_local_req q = {.handle = 9, .name = DDIO_LOCAL_PREFIX "12/ab",
                               .flags = DDIO_LOCAL_WRITE}, rq;
    struct ddio_local_msg m = {.ndisks = 3, .block_size = 65536, .flags = DDIO_LOCAL_WRITE}, rm;
    memset(q.nonce, 0x5a, sizeof(q.nonce));
    ddio_wbuf_init(&w);
    ddio_enc_local_req(&w, &q);
    ck_assert_int_eq(ddio_dec_local_req(w.p, w.len, &rq), 0);
    ck_assert_uint_eq(rq.handle, 9);
    ck_assert_str_eq(rq.name, q.name);
    ck_assert_mem_eq(rq.nonce, q.nonce, sizeof(q.nonce));
    ck_assert_uint_eq(rq.flags, DDIO_LOCAL_WRITE);
    free(rq.name);
    ck_assert_int_eq(ddio_dec_local_req(w.p, w.len - 1, &rq), -EPROTO);
    ck_assert_ptr_null(rq.name);
    ddio_wbuf_free(&w);
    /* an unknown flag: refused */
    q.flags = 0x2;
    ddio_wbuf_init(&w);
    ddio_enc_local_req(&w, &q);
    ck_assert_int_eq(ddio_dec_local_req(w.p, w.len, &rq), -EPROTO);
    ck_assert_ptr_null(rq.name);
    ddio_wbuf_free(&w);
    q.flags = 0;
    /* the server connects to the name: another program's socket refused */
    q.name = "/tmp/.X11-unix/X0";
    ddio_wbuf_init(&w);
    ddio_enc_local_req(&w, &q);
    ck_assert_int_eq(ddio_dec_local_req(w.p, w.len, &rq), -EPROTO);
    ck_assert_ptr_null(rq.name);
    ddio_wbuf_free(&w);
    memset(m.nonce, 0xa5, sizeof(m.nonce));
    ddio_wbuf_init(&w);
    ddio_enc_local_msg(&w, &m);
    ck_assert_int_eq(ddio_dec_local_msg(w.p, w.len, &rm), 0);
    ck_assert_uint_eq(rm.ndisks, 3);
    ck_assert_uint_eq(rm.block_size, 65536);
    ck_assert_uint_eq(rm.flags, DDIO_LOCAL_WRITE);
    ck_assert_mem_eq(rm.nonce, m.nonce, sizeof(m.nonce));
    ddio_wbuf_free(&w);
    /* no disks, too many, a zero block size, an unknown flag: refused */
    for (int k = 0; k < 4; k++) {
        struct ddio_local_msg bad = m;
        if (k == 0) bad.ndisks = 0;
        if (k == 1) bad.ndisks = DDIO_MAX_LOCAL_DISKS + 1;
        if (k == 2) bad.block_size = 0;
        if (k == 3) bad.flags = 0x80;
        ddio_wbuf_init(&w);
        ddio_enc_local_msg(&w, &bad);
        ck_assert_int_eq(ddio_dec_local_msg(w.p, w.len, &rm), -EPROTO);
        ddio_wbuf_free(&w);
    }
}
END_TEST

/* LOCALSTAT: the counts come back exactly, to 2^64-1 (a long job's); 24
 * bytes and nothing else, whatever the values */
START_TEST(localstat_msgs)
{
    struct ddio_localstat m = {.handle = 0x0123456789abcdefull, .read = UINT64_MAX,
                               .written = 5000000}, r;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_localstat(&w, &m);
    ck_assert_uint_eq(w.len, 24);
    memset(&r, 0xee, sizeof(r));
    ck_assert_int_eq(ddio_dec_localstat(w.p, w.len, &r), 0);
    ck_assert_uint_eq(r.handle, m.handle);
    ck_assert_uint_eq(r.read, UINT64_MAX);
    ck_assert_uint_eq(r.written, 5000000);
    ck_assert_int_eq(ddio_dec_localstat(w.p, 0, &r), -EPROTO);
    ck_assert_int_eq(ddio_dec_localstat(w.p, 16, &r), -EPROTO);   /* no written */
    ck_assert_int_eq(ddio_dec_localstat(NULL, 0, &r), -EPROTO);
    ddio_put_u64(&w, 1);                                             /* a 4th field */
    ck_assert_int_eq(ddio_dec_localstat(w.p, w.len, &r), -EPROTO);
    ddio_wbuf_free(&w);
    ck_assert_str_eq(ddio_type_name(DDIO_T_LOCALSTAT), "LOCALSTAT");
    ck_assert_str_eq(ddio_type_name(DDIO_T_LOCALSTAT | DDIO_REPLY), "LOCALSTAT|R");
}
END_TEST

START_TEST(bad_ucx)
{
    struct ddio_wbuf w;
    const uint8_t *a;
    uint32_t len;
    uint64_t token;
    struct ddio_segs got;

    uint64_t cookie;
    /* empty and oversized addresses */
    ddio_wbuf_init(&w);
    ddio_put_u64(&w, 1);
    ddio_put_u32(&w, 0);
    ck_assert_int_eq(ddio_dec_ucxaddr_r(w.p, w.len, &cookie, &a, &len), -EPROTO);
    ddio_wbuf_free(&w);
    uint8_t *big = calloc(1, DDIO_MAX_UCXADDR + 1);
    ddio_wbuf_init(&w);
    ddio_enc_ucxaddr_r(&w, 1, big, DDIO_MAX_UCXADDR + 1);
    ck_assert_int_eq(ddio_dec_ucxaddr_r(w.p, w.len, &cookie, &a, &len), -EPROTO);
    ddio_wbuf_free(&w);
    free(big);
    /* a length claiming more than the payload */
    ddio_wbuf_init(&w);
    ddio_put_u64(&w, 1);
    ddio_put_u32(&w, 100);
    ddio_put_u32(&w, 1);
    ck_assert_int_eq(ddio_dec_ucxaddr_r(w.p, w.len, &cookie, &a, &len), -EPROTO);
    ddio_wbuf_free(&w);
    /* a PUT header with a tag, with no segments, with a zero-length one */
    struct ddio_seg seg[1] = {{0, 10}};
    struct ddio_segs m = {.tag = 5, .nseg = 1, .seg = seg, .total = 10};
    ddio_wbuf_init(&w);
    ddio_enc_am_put(&w, 1, &m);
    ck_assert_int_eq(ddio_dec_am_put(w.p, w.len, &token, &got), -EPROTO);
    ddio_wbuf_free(&w);
    m.tag = 0;
    m.nseg = 0;
    ddio_wbuf_init(&w);
    ddio_enc_am_put(&w, 1, &m);
    ck_assert_int_eq(ddio_dec_am_put(w.p, w.len, &token, &got), -EPROTO);
    ddio_wbuf_free(&w);
    seg[0].len = 0;
    m.nseg = 1;
    ddio_wbuf_init(&w);
    ddio_enc_am_put(&w, 1, &m);
    ck_assert_int_eq(ddio_dec_am_put(w.p, w.len, &token, &got), -EPROTO);
    ddio_wbuf_free(&w);
    ck_assert_int_eq(ddio_dec_am_put(w.p, 3, &token, &got), -EPROTO);
}
END_TEST

/* ---- random garbage and mutations (fixed seed) ------------------------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static int (*const all_decoders[])(const uint8_t *, size_t) = {
    d_hello, d_hello_r, d_open, d_open_r, d_handle_req, d_u64_r, d_path_req,
    d_setsize, d_prealloc, d_xfer, d_xfer_r, d_put, d_get, d_data, d_lock,
    d_stats_r, d_err,
};

static void feed_all(const uint8_t *p, size_t n, unsigned *ok)
{
    for (size_t d = 0; d < sizeof(all_decoders) / sizeof(all_decoders[0]); d++) {
        int rc = dec_copy(all_decoders[d], p, n);
        ck_assert_msg(rc == 0 || rc == -EPROTO, "decoder %zu rc %d", d, rc);
        *ok += rc == 0;
    }
    if (n >= DDIO_HDR_SIZE) {
        struct ddio_hdr h;
        int rc = ddio_hdr_decode(p, &h, DDIO_MAX_PAYLOAD);
        ck_assert(rc == 0 || rc == -EPROTO || rc == -EPROTONOSUPPORT);
    }
}

START_TEST(garbage_random)
{
    uint8_t buf[512];
    unsigned ok = 0;
    for (int it = 0; it < 20000; it++) {
        size_t n = rnd() % sizeof(buf);
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)rnd();
        /* small counts and lengths are the interesting ones: bias some words */
        if (n >= 8 && (rnd() & 1))
            memset(buf + (rnd() % (n - 3)), 0, 3);
        feed_all(buf, n, &ok);
    }
    ck_assert_uint_gt(ok, 0);   /* fixed-size messages decode sometimes */
}
END_TEST

START_TEST(garbage_mutated)
{
    unsigned ok = 0;
    for (int it = 0; it < 4000; it++) {
        struct ddio_wbuf w;
        encode_sample(&samples[rnd() % NSAMPLES], &w);
        int flips = 1 + (int)(rnd() % 4);
        for (int f = 0; f < flips; f++) {
            size_t at = rnd() % w.len;
            switch (rnd() % 4) {
            case 0: w.p[at] = (uint8_t)rnd(); break;
            case 1: w.p[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
            case 2: w.p[at] = 0xff; break;
            default: w.p[at] = 0; break;
            }
        }
        size_t n = (rnd() % 8 == 0) ? rnd() % (w.len + 1) : w.len;
        feed_all(w.p, n, &ok);
        ddio_wbuf_free(&w);
    }
    ck_assert_uint_gt(ok, 0);
}
END_TEST

/* ---- sockets ------------------------------------------------------------------------------ */

struct pair { int lfd, a, b; };

static void tcp_pair(struct pair *p)
{
    int port = -1;
    p->lfd = ddio_listen("127.0.0.1", 0, &port);
    ck_assert_int_ge(p->lfd, 0);
    ck_assert_int_gt(port, 0);
    p->a = ddio_connect("127.0.0.1", port, ddio_now_ms() + 2000);
    ck_assert_int_ge(p->a, 0);
    p->b = accept(p->lfd, NULL, NULL);
    ck_assert_int_ge(p->b, 0);
}

static void pair_close(struct pair *p)
{
    close(p->a);
    close(p->b);
    close(p->lfd);
}

START_TEST(net_msg_roundtrip)
{
    struct pair p;
    struct ddio_hdr h;
    char pay[7] = "payload", dat[5] = "data!", got[12];
    tcp_pair(&p);
    int64_t dl = ddio_now_ms() + 2000;
    ck_assert_int_eq(ddio_send_msg(p.a, DDIO_T_PUT, 42, 0, pay, 7, dat, 5, dl), 0);
    ck_assert_int_eq(ddio_send_msg(p.a, DDIO_T_CLOSE | DDIO_REPLY, 43, ENOENT, NULL, 0,
                                   NULL, 0, dl), 0);
    ck_assert_int_eq(ddio_recv_hdr(p.b, &h, dl), 0);
    ck_assert_uint_eq(h.type, DDIO_T_PUT);
    ck_assert_uint_eq(h.req, 42);
    ck_assert_int_eq(h.status, 0);
    ck_assert_uint_eq(h.len, 12);
    ck_assert_int_eq(ddio_recv_all(p.b, got, 12, dl), 0);
    ck_assert_int_eq(memcmp(got, "payloaddata!", 12), 0);
    ck_assert_int_eq(ddio_recv_hdr(p.b, &h, dl), 0);
    ck_assert_uint_eq(h.type, DDIO_T_CLOSE | DDIO_REPLY);
    ck_assert_int_eq(h.status, ENOENT);
    ck_assert_uint_eq(h.len, 0);

    /* an oversized message is refused before anything is sent */
    ck_assert_int_eq(ddio_send_msg(p.a, DDIO_T_PUT, 1, 0, pay, 7, dat,
                                   DDIO_MAX_PAYLOAD, dl), -EMSGSIZE);
    /* a bad header on the wire is reported by recv_hdr */
    uint8_t junk[DDIO_HDR_SIZE] = { 'X' };
    ck_assert_int_eq(ddio_send_all(p.a, junk, sizeof(junk), dl), 0);
    ck_assert_int_eq(ddio_recv_hdr(p.b, &h, dl), -EPROTO);

    /* discard skips payload bytes */
    ck_assert_int_eq(ddio_send_msg(p.a, DDIO_T_DATA, 5, 0, NULL, 0, pay, 7, dl), 0);
    ck_assert_int_eq(ddio_send_all(p.a, "Z", 1, dl), 0);
    ck_assert_int_eq(ddio_recv_hdr(p.b, &h, dl), 0);
    ck_assert_int_eq(ddio_discard(p.b, h.len, dl), 0);
    ck_assert_int_eq(ddio_recv_all(p.b, got, 1, dl), 0);
    ck_assert_int_eq(got[0], 'Z');
    pair_close(&p);
}
END_TEST

struct bulk { int fd; uint8_t *buf; size_t n; int rc; };

static void *bulk_sender(void *arg)
{
    struct bulk *b = arg;
    b->rc = ddio_send_msg(b->fd, DDIO_T_DATA, 7, 0, "tag!", 4, b->buf, b->n,
                          ddio_now_ms() + 10000);
    return NULL;
}

/* Bigger than any socket buffer: exercises short writes, polling and the
 * iovec bookkeeping on both sides. */
START_TEST(net_bulk)
{
    struct pair p;
    struct bulk b;
    pthread_t th;
    struct ddio_hdr h;
    size_t n = 8u << 20;
    tcp_pair(&p);
    b.fd = p.a;
    b.n = n;
    b.buf = malloc(n);
    for (size_t i = 0; i < n; i++)
        b.buf[i] = (uint8_t)(i * 7 + (i >> 13));
    ck_assert_int_eq(pthread_create(&th, NULL, bulk_sender, &b), 0);
    int64_t dl = ddio_now_ms() + 10000;
    ck_assert_int_eq(ddio_recv_hdr(p.b, &h, dl), 0);
    ck_assert_uint_eq(h.len, n + 4);
    uint8_t tag[4];
    uint8_t *got = malloc(n);
    /* receive in uneven vectored pieces */
    struct iovec iov[4] = { { tag, 4 }, { got, 1000 }, { got + 1000, 0 },
                            { got + 1000, n - 1000 } };
    ck_assert_int_eq(ddio_recvv_all(p.b, iov, 4, dl), 0);
    pthread_join(th, NULL);
    ck_assert_int_eq(b.rc, 0);
    ck_assert_int_eq(memcmp(tag, "tag!", 4), 0);
    ck_assert_int_eq(memcmp(got, b.buf, n), 0);
    free(got);
    free(b.buf);
    pair_close(&p);
}
END_TEST

START_TEST(net_timeouts)
{
    struct pair p;
    struct ddio_hdr h;
    tcp_pair(&p);

    /* silent peer: recv gives up at the deadline, not before, not much after */
    int64_t t0 = ddio_now_ms();
    ck_assert_int_eq(ddio_recv_hdr(p.b, &h, t0 + 200), -ETIMEDOUT);
    int64_t dt = ddio_now_ms() - t0;
    ck_assert_int_ge(dt, 195);
    ck_assert_int_lt(dt, 1500);

    /* a deadline already passed fails at once */
    t0 = ddio_now_ms();
    char c;
    ck_assert_int_eq(ddio_recv_all(p.b, &c, 1, t0 - 1), -ETIMEDOUT);
    ck_assert_int_lt(ddio_now_ms() - t0, 100);

    /* a peer that never reads: send fills the buffers, then times out */
    size_t n = 64u << 20;
    char *big = calloc(1, n);
    t0 = ddio_now_ms();
    ck_assert_int_eq(ddio_send_all(p.a, big, n, t0 + 200), -ETIMEDOUT);
    dt = ddio_now_ms() - t0;
    ck_assert_int_ge(dt, 195);
    ck_assert_int_lt(dt, 1500);
    free(big);
    pair_close(&p);
}
END_TEST

START_TEST(net_peer_close)
{
    struct pair p;
    char buf[8];
    tcp_pair(&p);
    int64_t dl = ddio_now_ms() + 2000;
    ck_assert_int_eq(ddio_send_all(p.a, "abc", 3, dl), 0);
    close(p.a);
    /* 3 bytes arrive, then the close shows as ECONNRESET mid-message */
    ck_assert_int_eq(ddio_recv_all(p.b, buf, 8, dl), -ECONNRESET);
    /* writing to a closed peer: an error, never SIGPIPE (the test would die) */
    int rc = 0;
    for (int i = 0; i < 100 && rc == 0; i++)
        rc = ddio_send_all(p.b, buf, sizeof(buf), dl);
    ck_assert_int_eq(rc, -ECONNRESET);
    close(p.b);
    close(p.lfd);
}
END_TEST

START_TEST(net_connect_errors)
{
    int port = -1;
    int lfd = ddio_listen("127.0.0.1", 0, &port);
    ck_assert_int_ge(lfd, 0);
    close(lfd);    /* the port is now (almost certainly) closed */
    ck_assert_int_eq(ddio_connect("127.0.0.1", port, ddio_now_ms() + 2000), -ECONNREFUSED);
    ck_assert_int_eq(ddio_connect("127.0.0.1", 0, ddio_now_ms() + 2000), -EINVAL);
    ck_assert_int_eq(ddio_connect(NULL, 80, ddio_now_ms() + 2000), -EINVAL);
    /* (unresolvable names are not tested: without DNS the lookup can hang
     * for the resolver's timeout, which the deadline does not cover) */

    /* by name, and wildcard listen */
    lfd = ddio_listen(NULL, 0, &port);
    ck_assert_int_ge(lfd, 0);
    int fd = ddio_connect("localhost", port, ddio_now_ms() + 2000);
    ck_assert_int_ge(fd, 0);
    close(fd);
    close(lfd);
    ck_assert_int_lt(ddio_listen("127.0.0.1", 70000, &port), 0);
}
END_TEST

START_TEST(net_parse)
{
    char host[64];
    int port;
    ck_assert_int_eq(ddio_parse_hostport("node1:4711", host, sizeof(host), &port), 0);
    ck_assert_str_eq(host, "node1");
    ck_assert_int_eq(port, 4711);
    ck_assert_int_eq(ddio_parse_hostport("10.0.0.2:0", host, sizeof(host), &port), 0);
    ck_assert_str_eq(host, "10.0.0.2");
    ck_assert_int_eq(port, 0);
    ck_assert_int_eq(ddio_parse_hostport("[::1]:65535", host, sizeof(host), &port), 0);
    ck_assert_str_eq(host, "::1");
    ck_assert_int_eq(port, 65535);
    ck_assert_int_eq(ddio_parse_hostport(":99", host, sizeof(host), &port), 0);
    ck_assert_str_eq(host, "");
    const char *bad[] = { "node1", "node1:", "node1:65536", "node1:-1", "node1:12x",
                          "::1:80", "[::1]80", "[::1]:", "[]:80", "[::1:80", "a:b:c",
                          "node1: 80", "" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(ddio_parse_hostport(bad[i], host, sizeof(host), &port) == -EINVAL,
                      "accepted '%s'", bad[i]);
    /* host longer than the caller's buffer */
    ck_assert_int_eq(ddio_parse_hostport("abcdefgh:1", host, 8, &port), -EINVAL);
    ck_assert_int_eq(ddio_parse_hostport("abcdefg:1", host, 8, &port), 0);
}
END_TEST

START_TEST(net_segs_iov)
{
    char buf[100];
    struct ddio_seg seg[] = { {10, 5}, {15, 5}, {0, 4}, {4, 6}, {50, 0}, {50, 50}, {30, 1} };
    struct ddio_segs sg = { .tag = 0, .nseg = 7, .seg = seg, .total = 0 };
    struct iovec *iov;
    int n;
    /* stream-adjacent pieces merge; a piece that starts elsewhere does not */
    ck_assert_int_eq(ddio_segs_iov(&sg, buf, sizeof(buf), 2, &iov, &n), 0);
    ck_assert_int_eq(n, 4);
    ck_assert_ptr_eq(iov[2].iov_base, buf + 10);
    ck_assert_uint_eq(iov[2].iov_len, 10);
    ck_assert_ptr_eq(iov[3].iov_base, buf + 0);
    ck_assert_uint_eq(iov[3].iov_len, 10);
    ck_assert_ptr_eq(iov[4].iov_base, buf + 50);     /* empty piece, then its neighbour */
    ck_assert_uint_eq(iov[4].iov_len, 50);
    ck_assert_ptr_eq(iov[5].iov_base, buf + 30);
    ck_assert_uint_eq(iov[5].iov_len, 1);
    free(iov);
    /* a piece past the buffer's end, or wrapping: EPROTO, nothing allocated */
    struct ddio_seg out[] = { {0, 10}, {95, 6} };
    struct ddio_segs so = { .nseg = 2, .seg = out };
    ck_assert_int_eq(ddio_segs_iov(&so, buf, sizeof(buf), 0, &iov, &n), -EPROTO);
    ck_assert_ptr_null(iov);
    out[1] = (struct ddio_seg){ 101, 0 };
    ck_assert_int_eq(ddio_segs_iov(&so, buf, sizeof(buf), 0, &iov, &n), -EPROTO);
    out[1] = (struct ddio_seg){ 8, UINT64_MAX };
    ck_assert_int_eq(ddio_segs_iov(&so, buf, sizeof(buf), 0, &iov, &n), -EPROTO);
    ck_assert_int_eq(ddio_segs_fit(&so, sizeof(buf)), 0);
    out[1] = (struct ddio_seg){ 100, 0 };            /* empty at the very end: fine */
    ck_assert_int_eq(ddio_segs_fit(&so, sizeof(buf)), 1);
    ck_assert_int_eq(ddio_segs_fit(&so, sizeof(buf) - 1), 0);
    ck_assert_int_eq(ddio_segs_iov(&so, buf, sizeof(buf), 0, &iov, &n), 0);
    ck_assert_int_eq(n, 2);
    free(iov);
    /* no segments: no pieces, the lead slots still there */
    so.nseg = 0;
    ck_assert_int_eq(ddio_segs_iov(&so, buf, sizeof(buf), 2, &iov, &n), 0);
    ck_assert_int_eq(n, 0);
    ck_assert_ptr_nonnull(iov);
    free(iov);
}
END_TEST

START_TEST(misc_names)
{
    ck_assert_str_eq(ddio_errno_name(ENOENT), "ENOENT");
    ck_assert_str_eq(ddio_errno_name(-ETIMEDOUT), "ETIMEDOUT");
    ck_assert_str_eq(ddio_errno_name(EPROTONOSUPPORT), "EPROTONOSUPPORT");
    ck_assert_str_eq(ddio_errno_name(0), "OK");
    ck_assert_str_eq(ddio_errno_name(99999), "EUNKNOWN");
    ck_assert_str_eq(ddio_errno_name(INT32_MIN), "EUNKNOWN");
    ck_assert_int_eq(ddio_log_parse_level("error"), DDIO_LOG_ERROR);
    ck_assert_int_eq(ddio_log_parse_level("WARN"), DDIO_LOG_WARN);
    ck_assert_int_eq(ddio_log_parse_level("info"), DDIO_LOG_INFO);
    ck_assert_int_eq(ddio_log_parse_level("debug"), DDIO_LOG_DEBUG);
    ck_assert_int_eq(ddio_log_parse_level("loud"), -1);
    ck_assert_int_eq(ddio_log_parse_level(NULL), -1);
    ddio_log_init("/usr/bin/ddio-test", DDIO_LOG_ERROR);
    ck_assert_int_eq(ddio_log_level(), DDIO_LOG_ERROR);
    ddio_log_init(NULL, 99);
    ck_assert_int_eq(ddio_log_level(), DDIO_LOG_DEBUG);
}
END_TEST

/* One line per call, prefixed with the program name, pid and level. */
START_TEST(log_format)
{
    char path[] = "/tmp/ddio-log-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    ddio_log_init("/x/ddio-server", DDIO_LOG_INFO);
    DDIO_INFO("hello %d", 42);
    DDIO_DEBUG("not shown %d", 1);
    DDIO_ERR("bad\n");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[256] = { 0 }, want[256];
    ck_assert_int_gt(pread(fd, buf, sizeof(buf) - 1, 0), 0);
    close(fd);
    snprintf(want, sizeof(want), "ddio-server[%ld] INFO: hello 42\nddio-server[%ld] ERROR: bad\n",
             (long)getpid(), (long)getpid());
    ck_assert_str_eq(buf, want);
}
END_TEST

static Suite *proto_suite(void)
{
    Suite *s = suite_create("proto");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, hdr_roundtrip);
    tcase_add_test(tc, hdr_reject);
    tcase_add_test(tc, type_names);
    tcase_add_test(tc, buf_little_endian);
    tcase_add_test(tc, buf_grow);
    tcase_add_test(tc, rbuf_sticky);
    tcase_add_test(tc, str_limits);
    tcase_add_test(tc, rt_hello);
    tcase_add_test(tc, rt_hello_r);
    tcase_add_test(tc, rt_auth);
    tcase_add_test(tc, rt_auth_munge);
    tcase_add_test(tc, rt_open);
    tcase_add_test(tc, rt_open_once);
    tcase_add_test(tc, rt_open_local);
    tcase_add_test(tc, rt_open_r);
    tcase_add_test(tc, rt_layout_max);
    tcase_add_test(tc, rt_small);
    tcase_add_test(tc, rt_xfer);
    tcase_add_test(tc, rt_xfer_copy);
    tcase_add_test(tc, rt_segs);
    tcase_add_test(tc, rt_stats_err);
    tcase_add_test(tc, truncated_every_prefix);
    tcase_add_test(tc, trailing_byte);
    tcase_add_test(tc, bad_layout);
    tcase_add_test(tc, ec_layout_roundtrip);
    tcase_add_test(tc, ecread_msgs);
    tcase_add_test(tc, bad_segs);
    tcase_add_test(tc, bad_xfer);
    tcase_add_test(tc, bad_ranges);
    tcase_add_test(tc, bad_stats);
    tcase_add_test(tc, bad_strings);
    tcase_add_test(tc, rt_ucx);
    tcase_add_test(tc, bad_ucx);
    tcase_add_test(tc, xfer_inline);
    tcase_add_test(tc, xfer_inline_own);
    tcase_add_test(tc, xfer_once);
    tcase_add_test(tc, xfer_resent);
    tcase_add_test(tc, cancel_msg);
    tcase_add_test(tc, local_msgs);
    tcase_add_test(tc, localstat_msgs);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);

    TCase *tg = tcase_create("garbage");
    tcase_add_test(tg, garbage_random);
    tcase_add_test(tg, garbage_mutated);
    tcase_set_timeout(tg, 300);
    suite_add_tcase(s, tg);

    TCase *tn = tcase_create("net");
    tcase_add_test(tn, net_msg_roundtrip);
    tcase_add_test(tn, net_bulk);
    tcase_add_test(tn, net_timeouts);
    tcase_add_test(tn, net_peer_close);
    tcase_add_test(tn, net_connect_errors);
    tcase_add_test(tn, net_parse);
    tcase_add_test(tn, net_segs_iov);
    tcase_add_test(tn, misc_names);
    tcase_add_test(tn, log_format);
    tcase_add_test(tn, rt_namespace);
    tcase_add_test(tn, bad_namespace);
    tcase_add_test(tn, rt_scrub);
    tcase_add_test(tn, bad_scrub);
    tcase_add_test(tn, rt_rebuild);
    tcase_add_test(tn, bad_rebuild);
    tcase_add_test(tn, rt_member);
    tcase_add_test(tn, bad_member);
    tcase_set_timeout(tn, 60);
    suite_add_tcase(s, tn);
    return s;
}

int main(void)
{
    int failed = check_run(proto_suite(), 0);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
