/* REBUILD on one server (index 0 of 2 of a mirrored file). Fences: a file
 * open on another connection is not fenced (EBUSY); a fenced file cannot
 * be opened or deleted by another connection (EBUSY) until UNFENCE, or
 * until the fencing connection ends. BEGIN: the file is created with the layout
 * given and marked unbuilt (the mark in .ddio/unbuilt), so its reads and
 * its size are refused with ENODATA while writes go in; DONE syncs and
 * clears the mark, after which the bytes written read back; a second
 * BEGIN says built and changes nothing. ADOPT of another id on a server
 * not started with --replacement is EPERM (its own id: 0). An unknown op
 * is a malformed message. */
#include "srv_harness.h"

#include <stdlib.h>
#include <string.h>

#define UNIT 65536u

static int rb(struct cl *c, uint32_t op, const char *path, const struct ddio_layout_rec *l,
              const uint8_t *id, uint32_t *state)
{
    struct ddio_rebuild m = {.op = op, .path = (char *)path};
    struct ddio_rebuild_r r = {0};
    struct ddio_wbuf w;
    struct msg rep;
    if (l)
        m.layout = *l;
    if (id)
        memcpy(m.id, id, DDIO_ID_LEN);
    ddio_wbuf_init(&w);
    ddio_enc_rebuild(&w, &m);
    int st = call(c, DDIO_T_REBUILD, &w, &rep);
    if (st == 0)
        CHECK(ddio_dec_rebuild_r(rep.p, rep.h.len, &r) == 0, "REBUILD|R does not decode");
    free(rep.p);
    if (state)
        *state = r.state;
    return st;
}

/* a file open elsewhere is not fenced; a fenced one is not opened elsewhere */
static void fences(struct ddio_layout_rec *l)
{
    struct cl *a = cl_connect(), *b = cl_connect();
    struct ddio_open_r o;
    char p[128];
    path_name(p, sizeof(p), "rbfence");
    CHECK(cl_open(a, p, DDIO_O_RDWR | DDIO_O_CREAT | DDIO_O_EXCL, l, &o) == 0, "create %s", p);
    CHECK(rb(b, DDIO_RB_FENCE, p, NULL, NULL, NULL) == EBUSY, "FENCE of a file open elsewhere");
    CHECK(cl_handle_op(a, DDIO_T_CLOSE, o.handle, NULL) == 0, "CLOSE");
    CHECK(rb(b, DDIO_RB_FENCE, p, NULL, NULL, NULL) == 0, "FENCE of a closed file");
    CHECK(rb(b, DDIO_RB_FENCE, p, NULL, NULL, NULL) == 0, "FENCE again by its owner");
    CHECK(cl_open(a, p, DDIO_O_RDWR, l, &o) == EBUSY, "OPEN of a fenced file");
    CHECK(rb(a, DDIO_RB_FENCE, p, NULL, NULL, NULL) == EBUSY, "FENCE over another's");
    CHECK(cl_delete(a, p) == EBUSY, "DELETE of a fenced file");
    CHECK(cl_open(b, p, DDIO_O_RDWR, l, &o) == 0, "OPEN by the fence's owner");
    CHECK(cl_handle_op(b, DDIO_T_CLOSE, o.handle, NULL) == 0, "CLOSE");
    CHECK(rb(b, DDIO_RB_UNFENCE, p, NULL, NULL, NULL) == 0, "UNFENCE");
    CHECK(cl_open(a, p, DDIO_O_RDWR, l, &o) == 0, "OPEN after UNFENCE");
    CHECK(cl_handle_op(a, DDIO_T_CLOSE, o.handle, NULL) == 0, "CLOSE");
    CHECK(rb(b, DDIO_RB_FENCE, p, NULL, NULL, NULL) == 0, "FENCE");
    cl_close(b);
    int st = EBUSY;
    for (int i = 0; i < 200 && st == EBUSY; i++) {    /* the server notices the close */
        st = cl_open(a, p, DDIO_O_RDWR, l, &o);
        if (st == EBUSY)
            usleep(10000);
    }
    CHECK(st == 0, "OPEN after the fencing connection ended: %d", st);
    CHECK(cl_handle_op(a, DDIO_T_CLOSE, o.handle, NULL) == 0, "CLOSE");
    cl_close(a);
    printf("    open files not fenced, fenced files not opened, fences end with their owner\n");
}

static int mark_count(void)
{
    char d[512];
    snprintf(d, sizeof(d), "%s/.ddio/unbuilt", g_root);
    DIR *dir = opendir(d);
    int n = 0;
    struct dirent *e;
    while (dir && (e = readdir(dir)))
        n += e->d_name[0] != '.';
    if (dir)
        closedir(dir);
    return n;
}

/* BEGIN marks and creates, reads and size refused until DONE */
static void begin_done(struct ddio_layout_rec *l)
{
    struct cl *c = cl_connect();
    struct ddio_open_r o;
    uint32_t state = 0;
    uint64_t size;
    char p[128];
    path_name(p, sizeof(p), "rbfile");
    int marks = g_root ? mark_count() : 0;
    CHECK(rb(c, DDIO_RB_BEGIN, p, l, NULL, &state) == 0 && state == DDIO_RB_BEGUN, "BEGIN");
    CHECK(!g_root || mark_count() == marks + 1, "no unbuilt mark");
    CHECK(cl_open(c, p, DDIO_O_RDWR, l, &o) == 0, "OPEN of a begun file");
    uint64_t len = 2 * UNIT;
    struct dspec s = {.disp = 0, .count = 1, .len = len, .extent = len, .length = len};
    struct ddio_desc d;
    build_desc(&s, &d);
    uint8_t *w = malloc(len), *g = malloc(len);
    fill_pattern(w, len, 91);
    struct xres x = cl_xfer(c, o.handle, DDIO_X_WRITE, 0, 0, 0, 1, 0, &d, w, NULL, TMO);
    CHECK(x.status == 0, "write to an unbuilt file: %s", x.err);
    x = cl_xfer(c, o.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, g, NULL, TMO);
    CHECK(x.status == ENODATA, "read of an unbuilt file: %d %s", x.status, x.err);
    CHECK(cl_handle_op(c, DDIO_T_STAT, o.handle, &size) == ENODATA, "STAT of an unbuilt file");
    CHECK(rb(c, DDIO_RB_DONE, p, NULL, NULL, NULL) == 0, "DONE");
    CHECK(!g_root || mark_count() == marks, "the mark stayed after DONE");
    memset(g, 0, len);          /* unit 0 is this server's own (unit 1 its mirror of index 1) */
    x = cl_xfer(c, o.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, g, NULL, TMO);
    CHECK(x.status == 0 && !memcmp(g, w, UNIT), "read after DONE: %d %s", x.status, x.err);
    CHECK(cl_handle_op(c, DDIO_T_STAT, o.handle, &size) == 0, "STAT after DONE");
    CHECK(cl_handle_op(c, DDIO_T_CLOSE, o.handle, NULL) == 0, "CLOSE");
    CHECK(rb(c, DDIO_RB_BEGIN, p, l, NULL, &state) == 0 && state == DDIO_RB_BUILT,
          "a second BEGIN: state %u", state);
    CHECK(cl_open(c, p, DDIO_O_RDONLY, l, &o) == 0, "OPEN after a second BEGIN (no fence)");
    x = cl_xfer(c, o.handle, DDIO_X_READ, 0, 0, 0, 1, 0, &d, g, NULL, TMO);
    CHECK(x.status == 0 && !memcmp(g, w, UNIT), "bytes after a second BEGIN");
    ddio_desc_free(&d);
    free(w);
    free(g);
    cl_close(c);
    printf("    begun: marked, reads and size refused, writes taken; done: all served\n");
}

void test_rebuild(void)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    uint8_t other[DDIO_ID_LEN];
    layout_for(c, &l, UNIT, 2);
    l.copies = 2;
    fences(&l);
    begin_done(&l);
    memcpy(other, c->id, DDIO_ID_LEN);
    other[0] ^= 1;
    CHECK(rb(c, DDIO_RB_ADOPT, "", NULL, other, NULL) == EPERM, "ADOPT without --replacement");
    CHECK(rb(c, DDIO_RB_ADOPT, "", NULL, c->id, NULL) == 0, "ADOPT of its own id");
    /* op 9 is no op: a malformed message, the connection closed */
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_put_u32(&w, 9);
    ddio_put_str(&w, "x");
    send_w(c, DDIO_T_REBUILD, ++c->req, &w);
    expect_closed(c->fd, "REBUILD with an unknown op");
    free(c);
    printf("    ADOPT refused without --replacement, an unknown op closes the connection\n");
}
