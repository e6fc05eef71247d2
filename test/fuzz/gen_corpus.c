/* Writes the fuzz seed corpus: one file per real encoded message (and a few
 * descriptors), each prefixed with its fuzz_targets.h selector byte.
 *
 *   gen_corpus DIR
 *
 * Seeds give the fuzzer valid structure to mutate from; without them it
 * would spend most of its time failing the first length check. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_desc.h"
#include "ddio_proto.h"
#include "fuzz_targets.h"

static const char *outdir;
static int nwritten;

static void emit(const char *name, enum fz_target t, struct ddio_wbuf *w)
{
    char path[4096];
    uint8_t sel = (uint8_t)t;
    if (w->err) {
        fprintf(stderr, "gen_corpus: encoding %s failed (%d)\n", name, w->err);
        exit(1);
    }
    snprintf(path, sizeof(path), "%s/%s", outdir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(&sel, 1, 1, f) != 1 || (w->len && fwrite(w->p, 1, w->len, f) != w->len) ||
        fclose(f) != 0) {
        perror(path);
        exit(1);
    }
    ddio_wbuf_free(w);
    nwritten++;
}

static void layout(struct ddio_layout_rec *l, uint32_t count)
{
    memset(l, 0, sizeof(*l));
    l->stripe_unit = 1u << 20;
    l->stripe_count = count;
    l->server_index = 0;
    l->ndisks = 2;
    l->block_size = 1u << 22;
    l->copies = count >= 2 ? 2 : 1;
    for (uint32_t i = 0; i < count; i++)
        memset(l->ids[i], (int)(i + 1), DDIO_ID_LEN);
}

static void gen_messages(void)
{
    struct ddio_wbuf w;
    uint8_t hb[DDIO_HDR_SIZE];
    struct ddio_hdr h;

    ddio_hdr_init(&h, DDIO_T_XFER, 17, 128);
    ddio_hdr_encode(&h, hb);
    ddio_wbuf_init(&w);
    ddio_put_bytes(&w, hb, sizeof(hb));
    emit("hdr-xfer", FZ_HDR, &w);
    ddio_hdr_init(&h, DDIO_T_OPEN | DDIO_REPLY, 3, 0);
    h.status = 2;
    ddio_hdr_encode(&h, hb);
    ddio_wbuf_init(&w);
    ddio_put_bytes(&w, hb, sizeof(hb));
    emit("hdr-open-reply-err", FZ_HDR, &w);

    struct ddio_hello he = { .pid = 1234, .client = "node01" };
    ddio_wbuf_init(&w);
    ddio_enc_hello(&w, &he);
    emit("hello", FZ_HELLO, &w);

    struct ddio_hello_r hr = { .ndisks = 2, .block_size = 1u << 22, .name = "127.0.0.1:4711" };
    memset(hr.server_id, 0xab, sizeof(hr.server_id));
    ddio_wbuf_init(&w);
    ddio_enc_hello_r(&w, &hr);
    emit("hello_r", FZ_HELLO_R, &w);

    struct ddio_auth au;
    memset(au.nonce, 0x5c, sizeof(au.nonce));
    memset(au.mac, 0xc5, sizeof(au.mac));
    ddio_wbuf_init(&w);
    ddio_enc_auth(&w, &au);
    emit("auth", FZ_AUTH, &w);
    struct ddio_auth_r aur;
    memset(aur.mac, 0x3a, sizeof(aur.mac));
    ddio_wbuf_init(&w);
    ddio_enc_auth_r(&w, &aur);
    emit("auth_r", FZ_AUTH_R, &w);
    struct ddio_auth_munge am = {.cred = "MUNGE:AwQFAAC0aGVsbG8gY3JlZGVudGlhbA==:"};
    memset(am.nonce, 0x6d, sizeof(am.nonce));
    ddio_wbuf_init(&w);
    ddio_enc_auth_munge(&w, &am);
    emit("auth_munge", FZ_AUTH_MUNGE, &w);
    struct ddio_auth_munge_r amr = {.cred = "MUNGE:AwQFAAC0c2VydmVyIGNyZWRlbnRpYWw=:"};
    ddio_wbuf_init(&w);
    ddio_enc_auth_munge_r(&w, &amr);
    emit("auth_munge_r", FZ_AUTH_MUNGE_R, &w);

    static const uint8_t uaddr[] = "ucx-worker-address-bytes";
    ddio_wbuf_init(&w);
    ddio_enc_ucxaddr_r(&w, 0x1122334455667788ull, uaddr, sizeof(uaddr));
    emit("ucxaddr_r", FZ_UCXADDR_R, &w);
    static struct ddio_seg amseg[2] = {{0, 4096}, {1u << 20, 8192}};
    struct ddio_segs ams = {.tag = 0, .nseg = 2, .seg = amseg, .total = 12288};
    ddio_wbuf_init(&w);
    ddio_enc_am_put(&w, 42, &ams);
    emit("am_put", FZ_AM_PUT, &w);
    ddio_wbuf_init(&w);
    ddio_enc_am_data(ddio_put_space(&w, DDIO_AM_DATA_HDR), 0xabcdefull, 9, 3);
    emit("am_data", FZ_AM_DATA, &w);

    static struct ddio_open op;
    op.path = "data/file.bin";
    op.amode = DDIO_O_RDWR | DDIO_O_CREAT;
    layout(&op.layout, 4);
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, &op);
    emit("open", FZ_OPEN, &w);
    op.amode = DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL | DDIO_O_ONCE;
    op.once_client = 0x5eedull;
    op.once_call = 9;
    ddio_wbuf_init(&w);
    ddio_enc_open(&w, &op);
    emit("open_once", FZ_OPEN, &w);

    static struct ddio_open_r orr;
    orr.handle = 7;
    orr.local_size = 1u << 20;
    layout(&orr.layout, 1);
    ddio_wbuf_init(&w);
    ddio_enc_open_r(&w, &orr);
    emit("open_r", FZ_OPEN_R, &w);

    struct ddio_handle_req hq = { .handle = 7 };
    ddio_wbuf_init(&w);
    ddio_enc_handle_req(&w, &hq);
    emit("handle_req", FZ_HANDLE_REQ, &w);

    struct ddio_u64_r u = { .value = 4096 };
    ddio_wbuf_init(&w);
    ddio_enc_u64_r(&w, &u);
    emit("u64_r", FZ_U64_R, &w);

    struct ddio_path_req pr = { .path = "a/b" };
    ddio_wbuf_init(&w);
    ddio_enc_path_req(&w, &pr);
    emit("path_req", FZ_PATH_REQ, &w);

    struct ddio_setsize ss = { .handle = 7, .local_size = 100, .logical_size = 300,
                               .flags = DDIO_SS_GROW };
    ddio_wbuf_init(&w);
    ddio_enc_setsize(&w, &ss);
    emit("setsize", FZ_SETSIZE, &w);

    struct ddio_prealloc pa = { .handle = 7, .local_off = 0, .local_len = 1u << 20,
                                .logical_size = 3u << 20 };
    ddio_wbuf_init(&w);
    ddio_enc_prealloc(&w, &pa);
    emit("prealloc", FZ_PREALLOC, &w);

    struct ddio_xfer_r xr = { .bytes = 100, .local_size = 200, .sorted = 1 };
    ddio_wbuf_init(&w);
    ddio_enc_xfer_r(&w, &xr);
    emit("xfer_r", FZ_XFER_R, &w);

    struct ddio_seg segs[3] = { { 0, 4 }, { 16, 4 }, { 64, 8 } };
    struct ddio_segs sg = { .tag = 5, .nseg = 3, .seg = segs, .total = 16 };
    ddio_wbuf_init(&w);
    ddio_enc_put(&w, &sg);
    ddio_put_bytes(&w, "0123456789abcdef", 16);
    emit("put", FZ_PUT, &w);
    ddio_wbuf_init(&w);
    ddio_enc_get(&w, &sg);
    emit("get", FZ_GET, &w);
    ddio_wbuf_init(&w);
    ddio_enc_data(&w, 5);
    ddio_put_bytes(&w, "0123456789abcdef", 16);
    emit("data", FZ_DATA, &w);

    struct ddio_lock lk = { .handle = 7, .cmd = DDIO_LK_SETLKW, .type = DDIO_LK_WR,
                            .start = 0, .len = 4096, .timeout_ms = 1000 };
    ddio_wbuf_init(&w);
    ddio_enc_lock(&w, &lk);
    emit("lock", FZ_LOCK, &w);

    struct ddio_kv kv[2] = { { "xfers", 3 }, { "last.io_us", 12345 } };
    struct ddio_stats_r st = { .n = 2, .kv = kv };
    ddio_wbuf_init(&w);
    ddio_enc_stats_r(&w, &st);
    emit("stats_r", FZ_STATS_R, &w);

    ddio_wbuf_init(&w);
    ddio_enc_err(&w, "server 127.0.0.1:4711: open data/x: ENOENT");
    emit("err", FZ_ERR, &w);

    struct ddio_pstat_r *ps = calloc(1, sizeof(*ps));
    if (ps) {
        ps->kind = DDIO_K_FILE;
        ps->mode = 0644;
        ps->uid = 4201;
        ps->gid = 4201;
        ps->local_size = 4096;
        ps->layout.stripe_unit = 1u << 20;
        ps->layout.stripe_count = 2;
        ps->layout.server_index = 1;
        ddio_wbuf_init(&w);
        ddio_enc_pstat_r(&w, ps);
        emit("pstat_r", FZ_PSTAT_R, &w);
        free(ps);
    }
    struct ddio_readdir rd = { .path = "a/b", .after = "f", .max = 1024 };
    ddio_wbuf_init(&w);
    ddio_enc_readdir(&w, &rd);
    emit("readdir", FZ_READDIR, &w);
    struct ddio_dirent de[2] = { { "f", DDIO_K_FILE }, { "d", DDIO_K_DIR } };
    struct ddio_readdir_r rr = { .more = 1, .n = 2, .ent = de };
    ddio_wbuf_init(&w);
    ddio_enc_readdir_r(&w, &rr);
    emit("readdir_r", FZ_READDIR_R, &w);
    struct ddio_mkdir mk = { .path = "a/b", .mode = 0755 };
    ddio_wbuf_init(&w);
    ddio_enc_mkdir(&w, &mk);
    emit("mkdir", FZ_MKDIR, &w);
    struct ddio_setattr sa = { .path = "a/b", .what = DDIO_SA_MODE | DDIO_SA_OWNER,
                               .mode = 0640, .uid = 4201, .gid = 4201 };
    ddio_wbuf_init(&w);
    ddio_enc_setattr(&w, &sa);
    emit("setattr", FZ_SETATTR, &w);
    struct ddio_actas aa = { .uid = 4202, .gid = 4202 };
    ddio_wbuf_init(&w);
    ddio_enc_actas(&w, &aa);
    emit("actas", FZ_ACTAS, &w);
    struct ddio_localstat ls = { .handle = 3, .read = 4096, .written = 1 << 20 };
    ddio_wbuf_init(&w);
    ddio_enc_localstat(&w, &ls);
    emit("localstat", FZ_LOCALSTAT, &w);
    struct ddio_watch wa = { .client = 0x5eedull };
    ddio_wbuf_init(&w);
    ddio_enc_watch(&w, &wa);
    emit("watch", FZ_WATCH, &w);
    struct ddio_inval iv = { .what = DDIO_IV_NAME | DDIO_IV_ATTR, .path = "a/b" };
    ddio_wbuf_init(&w);
    ddio_enc_inval(&w, &iv);
    emit("inval", FZ_INVAL, &w);
    struct ddio_scrub sc = { .handle = 3, .copy = 1, .flags = DDIO_SC_DATA, .off = 8192,
                             .len = 4096 };
    ddio_wbuf_init(&w);
    ddio_enc_scrub(&w, &sc);
    emit("scrub", FZ_SCRUB, &w);
    static const uint8_t sector[4096] = { 1, 2, 3 };
    uint64_t bad[2] = { 4096, 12288 };
    struct ddio_scrub_r sr = { .next = 16384, .size = 20000, .verified = 2, .nbad = 2,
                               .bad = bad, .data_len = 4096, .data = sector };
    ddio_wbuf_init(&w);
    ddio_enc_scrub_r(&w, &sr);
    emit("scrub_r", FZ_SCRUB_R, &w);
    struct ddio_ecread er = { .handle = 3, .view = DDIO_EV_OVERLAY, .len = 4096, .off = 65536 };
    ddio_wbuf_init(&w);
    ddio_enc_ecread(&w, &er);
    emit("ecread", FZ_ECREAD, &w);
    uint64_t ext[4] = { 65536, 65636, 66000, 69632 };
    struct ddio_ecread_r err_ = { .logical_size = 1 << 20, .data_len = 4096, .data = sector,
                                  .next = 2, .ext = ext };
    ddio_wbuf_init(&w);
    ddio_enc_ecread_r(&w, &err_);
    emit("ecread_r", FZ_ECREAD_R, &w);
    struct ddio_repair rp = { .handle = 3, .copy = 0, .off = 4096, .data_len = 4096,
                              .data = sector };
    ddio_wbuf_init(&w);
    ddio_enc_repair(&w, &rp);
    emit("repair", FZ_REPAIR, &w);
    struct ddio_repair_r rpr = { .repaired = 1, .good = 2, .refused = 0 };
    ddio_wbuf_init(&w);
    ddio_enc_repair_r(&w, &rpr);
    emit("repair_r", FZ_REPAIR_R, &w);
    struct ddio_rebuild rb = { .op = DDIO_RB_BEGIN, .path = "d/f",
                               .layout = { .stripe_unit = 65536, .stripe_count = 2,
                                           .server_index = 1, .ndisks = 1,
                                           .block_size = 65536, .copies = 2 } };
    ddio_wbuf_init(&w);
    ddio_enc_rebuild(&w, &rb);
    emit("rebuild", FZ_REBUILD, &w);
    struct ddio_rebuild ra = { .op = DDIO_RB_ADOPT, .id = { 7 } };
    ddio_wbuf_init(&w);
    ddio_enc_rebuild(&w, &ra);
    emit("rebuild_adopt", FZ_REBUILD, &w);
    struct ddio_rebuild rbp = { .op = DDIO_RB_PROGRESS, .done = 1 << 20, .total = 1 << 30,
                                .rate = 1 << 25 };
    ddio_wbuf_init(&w);
    ddio_enc_rebuild(&w, &rbp);
    emit("rebuild_progress", FZ_REBUILD, &w);
    struct ddio_rebuild rm = { .op = DDIO_RB_MISSED, .member = 1 };
    ddio_wbuf_init(&w);
    ddio_enc_rebuild(&w, &rm);
    emit("rebuild_missed", FZ_REBUILD, &w);
    struct ddio_rebuild rbredo = { .op = DDIO_RB_REDO, .path = "d/g",
                                   .layout = { .stripe_unit = 65536, .stripe_count = 2,
                                               .server_index = 0, .ndisks = 1,
                                               .block_size = 65536, .copies = 2 } };
    ddio_wbuf_init(&w);
    ddio_enc_rebuild(&w, &rbredo);
    emit("rebuild_redo", FZ_REBUILD, &w);
    static char *mp[] = { "d/f", "g" };
    struct ddio_rebuild_r rmr = { .npaths = 2, .paths = mp };
    ddio_wbuf_init(&w);
    ddio_enc_rebuild_r(&w, &rmr);
    emit("rebuild_missed_r", FZ_REBUILD_R, &w);
    struct ddio_rebuild_r rbr = { .state = DDIO_RB_BEGUN };
    ddio_wbuf_init(&w);
    ddio_enc_rebuild_r(&w, &rbr);
    emit("rebuild_r", FZ_REBUILD_R, &w);
    static struct ddio_member mb = { .op = DDIO_MB_ACCEPT, .epoch = 2, .ballot = 77,
                                     .val = { .n = 3, .out = { 0, 0, 1 } } };
    for (int i = 0; i < 3; i++)
        memset(mb.val.ids[i], 0xa0 + i, DDIO_ID_LEN);
    ddio_wbuf_init(&w);
    ddio_enc_member(&w, &mb);
    emit("member", FZ_MEMBER, &w);
    static struct ddio_member_r mr = { .epoch = 1, .promised = 77, .acc_ballot = 77 };
    mr.val = mb.val;
    mr.val.out[2] = 0;
    mr.acc = mb.val;
    ddio_wbuf_init(&w);
    ddio_enc_member_r(&w, &mr);
    emit("member_r", FZ_MEMBER_R, &w);
    struct ddio_rename rn = { .from = "a/x", .to = "a/y", .once_client = 0x5eedull,
                              .once_call = 3 };
    ddio_wbuf_init(&w);
    ddio_enc_rename(&w, &rn);
    emit("rename", FZ_RENAME, &w);
    struct ddio_local_req lq = { .handle = 3, .name = DDIO_LOCAL_PREFIX "42/00ff" };
    memset(lq.nonce, 7, sizeof(lq.nonce));
    ddio_wbuf_init(&w);
    ddio_enc_local_req(&w, &lq);
    emit("local_req", FZ_LOCAL_REQ, &w);
    struct ddio_local_msg lm = { .ndisks = 2, .block_size = 1 << 20 };
    memset(lm.nonce, 9, sizeof(lm.nonce));
    ddio_wbuf_init(&w);
    ddio_enc_local_msg(&w, &lm);
    emit("local_msg", FZ_LOCAL_MSG, &w);
}

/* A descriptor as its own target, and inside an XFER like on the wire. */
static void emit_desc(const char *name, struct ddio_node *root, int64_t disp, int64_t extent,
                      uint64_t start, uint64_t length)
{
    char xname[256];
    struct ddio_desc d = { .disp = disp, .extent = extent, .root = root,
                           .start = start, .length = length };
    struct ddio_wbuf w, x;
    if (!root || ddio_node_finish(root) != 0) {
        fprintf(stderr, "gen_corpus: building %s failed\n", name);
        exit(1);
    }
    ddio_wbuf_init(&w);
    ddio_desc_encode(&w, &d);
    struct ddio_xfer xf = { .handle = 7, .op = DDIO_X_READ, .flags = DDIO_XF_COLLECTIVE,
                            .group = 99, .seq = 1, .nparticipants = 4, .rank = 2,
                            .timeout_ms = 5000, .desc_len = (uint32_t)w.len, .desc = w.p };
    ddio_wbuf_init(&x);
    ddio_enc_xfer(&x, &xf);
    snprintf(xname, sizeof(xname), "xfer-%s", name);
    emit(xname, FZ_XFER, &x);
    xf.flags |= DDIO_XF_UCX;      /* the UCX tail: token, stream length */
    xf.ucx_token = 5;
    xf.ucx_len = length;
    ddio_wbuf_init(&x);
    ddio_enc_xfer(&x, &xf);
    snprintf(xname, sizeof(xname), "xfer-ucx-%s", name);
    emit(xname, FZ_XFER, &x);
    xf.flags = DDIO_XF_COPY;      /* a lost server's part from a copy */
    xf.nparticipants = 1;
    xf.rank = 0;
    xf.copy = 1;
    ddio_wbuf_init(&x);
    ddio_enc_xfer(&x, &xf);
    snprintf(xname, sizeof(xname), "xfer-copy-%s", name);
    emit(xname, FZ_XFER, &x);
    static const uint8_t own[48];  /* a write's own bytes, in two pieces */
    const struct ddio_span v[2] = {{own, 16}, {own + 16, 32}};
    xf.op = DDIO_X_WRITE;
    xf.flags = DDIO_XF_INLINE | DDIO_XF_INLINE_OWN;
    xf.copy = 0;
    xf.inline_len = 48;
    xf.inline_pieces = v;
    xf.inline_npieces = 2;
    ddio_wbuf_init(&x);
    ddio_enc_xfer(&x, &xf);
    snprintf(xname, sizeof(xname), "xfer-own-%s", name);
    emit(xname, FZ_XFER, &x);
    emit(name, FZ_DESC, &w);
    ddio_desc_free(&d);
}

static void gen_descs(void)
{
    /* contiguous */
    emit_desc("desc-contig", ddio_node_leaf(1u << 20), 0, 1u << 20, 0, 1u << 20);
    /* HPF (BLOCK, BLOCK) 2-D: rows of 8 bytes every 64 */
    emit_desc("desc-vec", ddio_node_vec(16, 64, ddio_node_leaf(8)), 128, 1024, 0, 1u << 16);
    /* nested: 2-D subarray tiled over the file, stream starting mid-tile */
    emit_desc("desc-nested",
              ddio_node_vec(4, 4096, ddio_node_vec(8, 256, ddio_node_leaf(32))),
              4096, 1u << 16, 100, 3000);
    /* irregular list */
    int64_t off[4] = { 0, 100, 1000, 5000 }, len[4] = { 10, 20, 30, 40 };
    emit_desc("desc-list", ddio_node_from_flat(4, off, len), 0, 8192, 0, 400);
    /* empty stream (a rank with nothing on this server) */
    emit_desc("desc-empty", ddio_node_leaf(8), 0, 8, 0, 0);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_corpus DIR\n");
        return 2;
    }
    outdir = argv[1];
    gen_messages();
    gen_descs();
    printf("gen_corpus: %d seeds in %s\n", nwritten, outdir);
    return 0;
}
