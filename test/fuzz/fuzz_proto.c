/* libFuzzer harness for every hostile-input decoder: the message header, all
 * payload decoders of ddio_proto.h, and the distribution descriptor decoder
 * with the evaluators the server runs on a decoded descriptor.
 *
 * Input: first byte selects the target (fuzz_targets.h), the rest is the
 * payload. Besides "no crash, no sanitizer report", two properties abort:
 * a decoder returning anything but 0 / -EPROTO / -ENOMEM, and a successful
 * decode whose re-encoding differs from the input (the encoding is
 * canonical, so a decoder that accepts bytes its encoder would not produce
 * is misreading them).
 *
 * Build: test/fuzz/run-fuzz.sh (clang -fsanitize=fuzzer,address,undefined).
 * Build with -DDDIO_FUZZ_NO_DESC to leave out the descriptor target. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_proto.h"
#ifndef DDIO_FUZZ_NO_DESC
#include "ddio_desc.h"
#endif
#include "fuzz_targets.h"

#define FAIL(...) do { fprintf(stderr, "fuzz_proto: " __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)

static void check_rc(const char *what, int rc)
{
    if (rc != 0 && rc != -EPROTO && rc != -ENOMEM)
        FAIL("%s returned %d", what, rc);
}

/* the re-encoding of a decoded message must be the input itself */
static void check_same(const char *what, struct ddio_wbuf *w, const uint8_t *p, size_t n)
{
    if (w->err)
        FAIL("%s: re-encode failed %d", what, w->err);
    if (w->len != n || (n && memcmp(w->p, p, n) != 0))
        FAIL("%s: re-encoding differs (%zu vs %zu bytes)", what, w->len, n);
    ddio_wbuf_free(w);
}

#ifndef DDIO_FUZZ_NO_DESC
static int count_piece(void *arg, int64_t addr, uint64_t len, uint64_t stream_off)
{
    uint64_t *total = arg;
    (void)addr;
    (void)stream_off;
    if (len == 0)
        FAIL("desc walk: empty piece");
    *total += len;
    return 0;
}

/* What the server does with a descriptor from the wire: decode, check it is
 * monotone, then evaluate it. The walks are bounded so a huge (valid)
 * stream does not turn into a timeout. */
static void fuzz_desc(const uint8_t *p, size_t n)
{
    struct ddio_desc d;
    int rc = ddio_desc_decode(p, n, DDIO_DESC_MAX_NODES, &d);
    check_rc("desc_decode", rc);
    if (rc)
        return;
    if (!d.root)
        FAIL("desc_decode: success without a root");

    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_desc_encode(&w, &d);
    if (ddio_desc_encoded_size(&d) != w.len)
        FAIL("desc: encoded_size %zu != %zu", ddio_desc_encoded_size(&d), w.len);
    check_same("desc", &w, p, n);

    /* Like the server: evaluate only descriptors that pass the monotone
     * check (wire descriptors are file-side; the walkers on non-monotone
     * ones are for locally built memory types, not hostile input). */
    if (d.length && ddio_desc_check_monotone(&d) == 0) {
        uint64_t span = d.length < 4096 ? d.length : 4096, total = 0;
        ddio_desc_walk_stream(&d, 0, span, count_piece, &total);
        if (total != span)
            FAIL("desc walk_stream: %llu of %llu bytes", (unsigned long long)total,
                 (unsigned long long)span);
        int64_t first, end;
        ddio_desc_bounds(&d, &first, &end);
        if (ddio_desc_addr(&d, 0) != first)
            FAIL("desc: addr(0) != bounds first");
        if (ddio_desc_stream_before(&d, first) != 0 ||
            ddio_desc_stream_before(&d, end) != d.length)
            FAIL("desc: stream_before inconsistent with bounds");
        if (ddio_desc_next(&d, first) != first)
            FAIL("desc: next(first) != first");
        int64_t hi = end - first > 4096 ? first + 4096 : end;
        total = 0;
        ddio_desc_walk_file(&d, first, hi, count_piece, &total);
        if (total != ddio_desc_stream_before(&d, hi))
            FAIL("desc walk_file: byte count mismatch");
    }
    ddio_desc_free(&d);
}
#endif

static void fuzz_hdr(const uint8_t *p, size_t n)
{
    struct ddio_hdr h;
    uint8_t b[DDIO_HDR_SIZE];
    if (n < DDIO_HDR_SIZE)
        return;
    int rc = ddio_hdr_decode(p, &h, DDIO_MAX_PAYLOAD);
    if (rc != 0 && rc != -EPROTO && rc != -EPROTONOSUPPORT)
        FAIL("hdr_decode returned %d", rc);
    if (rc == 0) {
        if (h.len > DDIO_MAX_PAYLOAD)
            FAIL("hdr_decode accepted len %llu", (unsigned long long)h.len);
        ddio_hdr_encode(&h, b);
        if (memcmp(b, p, DDIO_HDR_SIZE) != 0)
            FAIL("hdr: re-encoding differs");
    }
}

/* One block per message type: decode, and when it succeeds, re-encode into
 * a fresh wbuf and compare (PUT/DATA: the list part, then the data). */
#define SIMPLE(TAG, type, dec, enc)                           \
    case TAG: {                                               \
        type m;                                               \
        int rc = dec(p, n, &m);                               \
        check_rc(#dec, rc);                                   \
        if (rc == 0) {                                        \
            ddio_wbuf_init(&w);                               \
            enc(&w, &m);                                      \
            check_same(#dec, &w, p, n);                       \
        }                                                     \
        CLEANUP;                                              \
        break;                                                \
    }

static void fuzz_one(enum fz_target t, const uint8_t *p, size_t n)
{
    struct ddio_wbuf w;
    switch (t) {
    case FZ_HDR:
        fuzz_hdr(p, n);
        break;
#define CLEANUP free(m.client)
    SIMPLE(FZ_HELLO, struct ddio_hello, ddio_dec_hello, ddio_enc_hello)
#undef CLEANUP
#define CLEANUP free(m.name)
    SIMPLE(FZ_HELLO_R, struct ddio_hello_r, ddio_dec_hello_r, ddio_enc_hello_r)
#undef CLEANUP
#define CLEANUP (free(m.path), free(m.local_name))
    SIMPLE(FZ_OPEN, struct ddio_open, ddio_dec_open, ddio_enc_open)
#undef CLEANUP
#define CLEANUP free(m.path)
    SIMPLE(FZ_PATH_REQ, struct ddio_path_req, ddio_dec_path_req, ddio_enc_path_req)
#undef CLEANUP
#define CLEANUP (void)0
    SIMPLE(FZ_OPEN_R, struct ddio_open_r, ddio_dec_open_r, ddio_enc_open_r)
    SIMPLE(FZ_HANDLE_REQ, struct ddio_handle_req, ddio_dec_handle_req, ddio_enc_handle_req)
    SIMPLE(FZ_U64_R, struct ddio_u64_r, ddio_dec_u64_r, ddio_enc_u64_r)
    SIMPLE(FZ_SETSIZE, struct ddio_setsize, ddio_dec_setsize, ddio_enc_setsize)
    SIMPLE(FZ_PREALLOC, struct ddio_prealloc, ddio_dec_prealloc, ddio_enc_prealloc)
    SIMPLE(FZ_XFER_R, struct ddio_xfer_r, ddio_dec_xfer_r, ddio_enc_xfer_r)
    SIMPLE(FZ_LOCK, struct ddio_lock, ddio_dec_lock, ddio_enc_lock)
    SIMPLE(FZ_AUTH, struct ddio_auth, ddio_dec_auth, ddio_enc_auth)
    SIMPLE(FZ_AUTH_R, struct ddio_auth_r, ddio_dec_auth_r, ddio_enc_auth_r)
#undef CLEANUP
#define CLEANUP ddio_segs_free(&m)
    SIMPLE(FZ_GET, struct ddio_segs, ddio_dec_get, ddio_enc_get)
#undef CLEANUP
#define CLEANUP ddio_stats_r_free(&m)
    SIMPLE(FZ_STATS_R, struct ddio_stats_r, ddio_dec_stats_r, ddio_enc_stats_r)
#undef CLEANUP
#define CLEANUP (void)0
    SIMPLE(FZ_PSTAT_R, struct ddio_pstat_r, ddio_dec_pstat_r, ddio_enc_pstat_r)
#undef CLEANUP
#define CLEANUP (free(m.path), free(m.after))
    SIMPLE(FZ_READDIR, struct ddio_readdir, ddio_dec_readdir, ddio_enc_readdir)
#undef CLEANUP
#define CLEANUP free(m.path)
    SIMPLE(FZ_SETATTR, struct ddio_setattr, ddio_dec_setattr, ddio_enc_setattr)
    SIMPLE(FZ_INVAL, struct ddio_inval, ddio_dec_inval, ddio_enc_inval)
    SIMPLE(FZ_MKDIR, struct ddio_mkdir, ddio_dec_mkdir, ddio_enc_mkdir)
#undef CLEANUP
#define CLEANUP ddio_readdir_r_free(&m)
    SIMPLE(FZ_READDIR_R, struct ddio_readdir_r, ddio_dec_readdir_r, ddio_enc_readdir_r)
#undef CLEANUP
#define CLEANUP (free(m.from), free(m.to))
    SIMPLE(FZ_RENAME, struct ddio_rename, ddio_dec_rename, ddio_enc_rename)
#undef CLEANUP
#define CLEANUP free(m.name)
    SIMPLE(FZ_LOCAL_REQ, struct ddio_local_req, ddio_dec_local_req, ddio_enc_local_req)
#undef CLEANUP
#define CLEANUP (void)0
    SIMPLE(FZ_LOCAL_MSG, struct ddio_local_msg, ddio_dec_local_msg, ddio_enc_local_msg)
    SIMPLE(FZ_ACTAS, struct ddio_actas, ddio_dec_actas, ddio_enc_actas)
    SIMPLE(FZ_LOCALSTAT, struct ddio_localstat, ddio_dec_localstat, ddio_enc_localstat)
    SIMPLE(FZ_WATCH, struct ddio_watch, ddio_dec_watch, ddio_enc_watch)
    SIMPLE(FZ_SCRUB, struct ddio_scrub, ddio_dec_scrub, ddio_enc_scrub)
    SIMPLE(FZ_REPAIR, struct ddio_repair, ddio_dec_repair, ddio_enc_repair)
    SIMPLE(FZ_REPAIR_R, struct ddio_repair_r, ddio_dec_repair_r, ddio_enc_repair_r)
    SIMPLE(FZ_MEMBER, struct ddio_member, ddio_dec_member, ddio_enc_member)
    SIMPLE(FZ_MEMBER_R, struct ddio_member_r, ddio_dec_member_r, ddio_enc_member_r)
#undef CLEANUP
#define CLEANUP ddio_scrub_r_free(&m)
    SIMPLE(FZ_SCRUB_R, struct ddio_scrub_r, ddio_dec_scrub_r, ddio_enc_scrub_r)
#undef CLEANUP
#define CLEANUP (void)0
    SIMPLE(FZ_ECREAD, struct ddio_ecread, ddio_dec_ecread, ddio_enc_ecread)
#undef CLEANUP
#define CLEANUP ddio_ecread_r_free(&m)
    SIMPLE(FZ_ECREAD_R, struct ddio_ecread_r, ddio_dec_ecread_r, ddio_enc_ecread_r)
#undef CLEANUP
#define CLEANUP free(m.path)
    SIMPLE(FZ_REBUILD, struct ddio_rebuild, ddio_dec_rebuild, ddio_enc_rebuild)
#undef CLEANUP
#define CLEANUP ddio_rebuild_r_free(&m)
    SIMPLE(FZ_REBUILD_R, struct ddio_rebuild_r, ddio_dec_rebuild_r, ddio_enc_rebuild_r)
#undef CLEANUP
#define CLEANUP free(m.cred)
    SIMPLE(FZ_AUTH_MUNGE, struct ddio_auth_munge, ddio_dec_auth_munge, ddio_enc_auth_munge)
    SIMPLE(FZ_AUTH_MUNGE_R, struct ddio_auth_munge_r, ddio_dec_auth_munge_r,
           ddio_enc_auth_munge_r)
#undef CLEANUP
    case FZ_XFER: {
        struct ddio_xfer m;
        int rc = ddio_dec_xfer(p, n, &m);
        check_rc("dec_xfer", rc);
        if (rc == 0) {
            if (m.desc < p || m.desc + m.desc_len > p + n)
                FAIL("dec_xfer: desc outside the payload");
            ddio_wbuf_init(&w);
            ddio_enc_xfer(&w, &m);
            check_same("dec_xfer", &w, p, n);
#ifndef DDIO_FUZZ_NO_DESC
            fuzz_desc(m.desc, m.desc_len);   /* the server's next step */
#endif
        }
        break;
    }
    case FZ_PUT: {
        struct ddio_segs m;
        size_t hl;
        int rc = ddio_dec_put(p, n, &m, &hl);
        check_rc("dec_put", rc);
        if (rc == 0) {
            if (hl > n || m.total != n - hl)
                FAIL("dec_put: data length %zu, total %llu", n - hl,
                     (unsigned long long)m.total);
            ddio_wbuf_init(&w);
            ddio_enc_put(&w, &m);
            ddio_put_bytes(&w, p + hl, n - hl);
            check_same("dec_put", &w, p, n);
        }
        ddio_segs_free(&m);
        break;
    }
    case FZ_DATA: {
        uint32_t tag;
        size_t hl;
        int rc = ddio_dec_data(p, n, &tag, &hl);
        check_rc("dec_data", rc);
        if (rc == 0) {
            if (hl > n)
                FAIL("dec_data: hdr_len %zu > %zu", hl, n);
            ddio_wbuf_init(&w);
            ddio_enc_data(&w, tag);
            ddio_put_bytes(&w, p + hl, n - hl);
            check_same("dec_data", &w, p, n);
        }
        break;
    }
    case FZ_ERR: {
        char *msg;
        int rc = ddio_dec_err(p, n, &msg);
        check_rc("dec_err", rc);
        if (rc == 0) {
            ddio_wbuf_init(&w);
            ddio_enc_err(&w, msg);
            check_same("dec_err", &w, p, n);
        }
        free(msg);
        break;
    }
    case FZ_UCXADDR_R: {
        const uint8_t *a;
        uint32_t len;
        uint64_t cookie;
        int rc = ddio_dec_ucxaddr_r(p, n, &cookie, &a, &len);
        check_rc("dec_ucxaddr_r", rc);
        if (rc == 0) {
            if (a < p || a + len > p + n)
                FAIL("dec_ucxaddr_r: address outside the payload");
            ddio_wbuf_init(&w);
            ddio_enc_ucxaddr_r(&w, cookie, a, len);
            check_same("dec_ucxaddr_r", &w, p, n);
        }
        break;
    }
    case FZ_AM_PUT: {
        struct ddio_segs m;
        uint64_t token;
        int rc = ddio_dec_am_put(p, n, &token, &m);
        check_rc("dec_am_put", rc);
        if (rc == 0) {
            ddio_wbuf_init(&w);
            ddio_enc_am_put(&w, token, &m);
            check_same("dec_am_put", &w, p, n);
        }
        ddio_segs_free(&m);
        break;
    }
    case FZ_AM_DATA: {
        uint64_t cookie, req;
        uint32_t tag;
        uint8_t b[DDIO_AM_DATA_HDR];
        int rc = ddio_dec_am_data(p, n, &cookie, &req, &tag);
        check_rc("dec_am_data", rc);
        if (rc == 0) {
            ddio_enc_am_data(b, cookie, req, tag);
            if (n != sizeof(b) || memcmp(b, p, n))
                FAIL("dec_am_data: re-encoding differs");
        }
        break;
    }
    case FZ_DESC:
#ifndef DDIO_FUZZ_NO_DESC
        fuzz_desc(p, n);
#endif
        break;
    case FZ_N:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    /* libFuzzer's buffer is exactly sized, so ASan flags any overread */
    fuzz_one((enum fz_target)(data[0] % FZ_N), data + 1, size - 1);
    return 0;
}
