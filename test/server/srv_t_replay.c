/* srv_client's cases: what a restarted server remembers of the requests it
 * answered before (run-server-tests.sh runs "before", kills the server
 * with SIGKILL or stops it with SIGTERM, starts it again on the same root,
 * and runs "after", as a client whose answers were all lost would resend):
 *   - a create (CREAT|EXCL with DDIO_O_ONCE ids) resent finds the file its
 *     own (the ids are stored with the file); other ids, or none, EEXIST
 *   - a write (DDIO_XF_ONCE) resent is answered from the reloaded table of
 *     answers, not written again over another writer's bytes written in
 *     between (and the new process's datafile writes count that writer's
 *     alone)
 *   - a RENAME with ids resent is answered done from the table; the same
 *     rename with other ids or none is ENOENT (the source is gone)
 *   - so are MKDIR, RMDIR and DELETE (protocol 7): a rerun would be EEXIST
 *     or ENOENT, which the same request with other ids or none still gets
 * The client id comes from $SRV_REPLAY_ID (both runs use the same). */
#include "srv_harness.h"

#define R_CREATE 1              /* call numbers of the first run */
#define R_WRITE  2
#define R_RENAME 3
#define R_MKDIR  4
#define R_RMDIR  5
#define R_DELETE 6

static uint64_t me(void)
{
    const char *s = getenv("SRV_REPLAY_ID");
    uint64_t id = s ? strtoull(s, NULL, 0) : 0;
    CHECK(id != 0, "SRV_REPLAY_ID (a non-zero client id) not set");
    return id;
}

/* this client's files: one directory per id */
static void rpath(char *out, size_t n, const char *name)
{
    snprintf(out, n, "replay-%" PRIx64 "/%s", me(), name);
}

static int create_once(struct cl *c, const char *path, uint64_t client, uint64_t num,
                       struct ddio_open_r *r)
{
    struct ddio_layout_rec l;
    layout_for(c, &l, 1u << 20, 1);
    struct ddio_open o = {.path = (char *)path, .amode = DDIO_O_RDWR | DDIO_O_CREAT |
                          DDIO_O_EXCL | (client ? DDIO_O_ONCE : 0), .layout = l,
                          .once_client = client, .once_call = num};
    return cl_open_m(c, &o, r);
}

static int rename_once(struct cl *c, const char *from, const char *to, uint64_t client,
                       uint64_t call)
{
    struct ddio_rename m = {.from = (char *)from, .to = (char *)to, .once_client = client,
                            .once_call = call};
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_rename(&w, &m);
    return call_simple(c, DDIO_T_RENAME, &w);
}

/* MKDIR, or with a NULL mode pointer RMDIR/DELETE (type), with ids */
static int ns_once(struct cl *c, uint16_t type, const char *path, uint64_t client, uint64_t call)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    if (type == DDIO_T_MKDIR) {
        struct ddio_mkdir m = {.path = (char *)path, .mode = 0755, .once_client = client,
                               .once_call = call};
        ddio_enc_mkdir(&w, &m);
    } else {
        struct ddio_path_req m = {.path = (char *)path, .once_client = client,
                                  .once_call = call};
        ddio_enc_path_req(&w, &m);
    }
    return call_simple(c, type, &w);
}

static uint64_t stat_of(struct cl *c, const char *key)
{
    uint64_t v = cl_stat(c, key);
    CHECK(v != UINT64_MAX, "STATS has no %s", key);
    return v;
}

/* bytes the server wrote to its datafiles, either path */
static uint64_t disk_written(struct cl *c)
{
    return stat_of(c, "write_cache_bytes") + stat_of(c, "write_direct_bytes");
}

static void desc_4000(struct ddio_desc *d)
{
    struct dspec s = {.disp = 0, .count = 1, .len = 4000, .extent = 4000, .length = 4000};
    build_desc(&s, d);
}

/* the first run: every request done, its answer (as if) lost */
void test_replay_before(void)
{
    struct cl *c = cl_connect();
    struct ddio_open_r r;
    struct ddio_desc d;
    char f[160], g[160], h[160];
    uint8_t a[4000];
    rpath(f, sizeof(f), "f");
    rpath(g, sizeof(g), "g");
    rpath(h, sizeof(h), "h");
    CHECK(create_once(c, f, me(), R_CREATE, &r) == 0 && r.created == 1, "create of %s", f);
    desc_4000(&d);
    fill_pattern(a, sizeof(a), 21);
    CHECK(once_write(c, r.handle, &d, a, me(), R_WRITE, DDIO_X_WRITE) == 0, "write");
    CHECK(create_once(c, g, 0, 0, &r) == 0, "create of %s", g);
    CHECK(rename_once(c, g, h, me(), R_RENAME) == 0, "rename %s -> %s", g, h);
    char dm[160], dr[160], fd[160];
    rpath(dm, sizeof(dm), "made");
    rpath(dr, sizeof(dr), "removed");
    rpath(fd, sizeof(fd), "deleted");
    CHECK(ns_once(c, DDIO_T_MKDIR, dr, 0, 0) == 0, "mkdir %s", dr);
    CHECK(create_once(c, fd, 0, 0, &r) == 0, "create of %s", fd);
    CHECK(ns_once(c, DDIO_T_MKDIR, dm, me(), R_MKDIR) == 0, "mkdir %s with ids", dm);
    CHECK(ns_once(c, DDIO_T_RMDIR, dr, me(), R_RMDIR) == 0, "rmdir %s with ids", dr);
    CHECK(ns_once(c, DDIO_T_DELETE, fd, me(), R_DELETE) == 0, "delete %s with ids", fd);
    ddio_node_free(d.root);
    cl_close(c);
    printf("ok   before: created, written, renamed, mkdir, rmdir and delete with ids\n");
}

/* the resends, to the restarted server */
void test_replay_after(void)
{
    struct cl *c = cl_connect();
    struct ddio_open_r r, r2;
    struct ddio_desc d;
    char f[160], g[160], h[160];
    uint8_t a[4000], b[4000], back[4000];
    rpath(f, sizeof(f), "f");
    rpath(g, sizeof(g), "g");
    rpath(h, sizeof(h), "h");
    CHECK(stat_of(c, "replayed") == 0 && disk_written(c) == 0, "a new process counts from 0");
    /* the create */
    CHECK(create_once(c, f, me(), R_CREATE, &r) == 0, "the resent create was refused");
    CHECK(r.created == 1, "the resent create was not answered as the create");
    CHECK(create_once(c, f, me(), R_CREATE + 100, &r2) == EEXIST, "a create with other ids");
    CHECK(create_once(c, f, me() ^ 2, R_CREATE, &r2) == EEXIST, "another client's create");
    CHECK(create_once(c, f, 0, 0, &r2) == EEXIST, "a create without ids");
    /* the write, after another writer's */
    desc_4000(&d);
    fill_pattern(a, sizeof(a), 21);
    fill_pattern(b, sizeof(b), 22);
    CHECK(once_write(c, r.handle, &d, b, 0, 0, DDIO_X_WRITE) == 0, "another writer's write");
    uint64_t w1 = disk_written(c);
    CHECK(w1 >= 4000, "the other writer's write counted %" PRIu64 " bytes", w1);
    CHECK(once_write(c, r.handle, &d, a, me(), R_WRITE, DDIO_X_WRITE) == 0, "the resent write");
    CHECK(disk_written(c) == w1, "the resent write wrote %" PRIu64 " bytes",
          disk_written(c) - w1);
    read_4000(c, r.handle, &d, back);
    CHECK(memcmp(back, b, sizeof(b)) == 0,
          "the resent write ran again over the other writer's bytes");
    /* the rename */
    CHECK(rename_once(c, g, h, me(), R_RENAME) == 0, "the resent rename was not answered done");
    CHECK(rename_once(c, g, h, me(), R_RENAME + 100) == ENOENT, "a rename with other ids");
    CHECK(rename_once(c, g, h, 0, 0) == ENOENT, "a rename without ids");
    CHECK(cl_open(c, h, DDIO_O_RDONLY, &r.layout, &r2) == 0, "%s gone", h);
    /* mkdir, rmdir, delete: a rerun would be EEXIST / ENOENT, which the
     * same requests with other ids still get */
    char dm[160], dr[160], fd[160];
    rpath(dm, sizeof(dm), "made");
    rpath(dr, sizeof(dr), "removed");
    rpath(fd, sizeof(fd), "deleted");
    CHECK(ns_once(c, DDIO_T_MKDIR, dm, me(), R_MKDIR) == 0, "the resent mkdir not answered done");
    CHECK(ns_once(c, DDIO_T_MKDIR, dm, me(), R_MKDIR + 100) == EEXIST, "a mkdir with other ids");
    CHECK(ns_once(c, DDIO_T_RMDIR, dr, me(), R_RMDIR) == 0, "the resent rmdir not answered done");
    CHECK(ns_once(c, DDIO_T_RMDIR, dr, 0, 0) == ENOENT, "an rmdir without ids");
    CHECK(ns_once(c, DDIO_T_DELETE, fd, me(), R_DELETE) == 0,
          "the resent delete not answered done");
    CHECK(ns_once(c, DDIO_T_DELETE, fd, me() ^ 2, R_DELETE) == ENOENT,
          "another client's delete");
    CHECK(stat_of(c, "replayed") == 5, "replayed %" PRIu64 ", not 5 (the write, the rename, "
          "the mkdir, the rmdir and the delete)", stat_of(c, "replayed"));
    ddio_node_free(d.root);
    cl_close(c);
    printf("ok   after the restart: create, write, rename, mkdir, rmdir and delete answered as "
           "their first run\n");
}
