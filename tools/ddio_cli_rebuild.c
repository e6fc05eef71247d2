/* ddio rebuild --server N [--rate MB/s]: a replacement server (started with
 * --replacement on an empty root, at the lost server's address) takes the
 * lost one's place (DESIGN.md 6.3). The namespace is walked on the other
 * servers; the replacement adopts the lost server's id (the one id of the
 * layouts that no other server has), gets every directory, and for each
 * mirrored file it belongs to, its layout record and datafiles, copied from
 * the survivors while the file is fenced on all its servers. A file done
 * before (here and not marked unbuilt) is skipped and said so: the
 * replacement's marks are the progress record. A `none` file it belonged
 * to is reported lost. Exit status 0 all rebuilt, 1 something was not. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddio_cli.h"
#include "ddio_core_member.h"

#define DEFAULT_RATE_MB 50.0     /* MB/s without --rate, the disks not measured */

/* an entry's mode and owner, as the survivors have them */
struct rb_attr {
    uint32_t mode, uid, gid;
};

struct rb_file {
    char *path;
    struct rb_attr attr;
    struct ddio_layout_rec layout;  /* a survivor's record */
    uint64_t size;                  /* the survivors' stat (an estimate), then the copy's */
    int k;                          /* the lost server's index in it (-1: not in it) */
    int ok;                         /* rebuilt or skipped; or nothing to copy */
    int cleared;                    /* a resync's: its notes cleared (under its fence) */
    int gone;                       /* a resync's: no other server has it (deleted
                                     * while the member was out) */
    int dir;                        /* a resync's: a directory the others have (made
                                     * while the member was out) */
};

struct rb_run {
    struct ddio_client *cl;
    const struct cli *o;
    int redo;                       /* a returning member's resync: REDO, not BEGIN */
    int n;                          /* the replacement's index in the server list */
    uint8_t known[DDIO_MAX_SERVERS][DDIO_ID_LEN];   /* the others' ids */
    uint8_t lost[DDIO_ID_LEN];
    int have_lost;
    char **dirs;
    struct rb_attr *dattr;
    size_t ndirs;
    struct rb_file *files;
    size_t nfiles, cap;
    uint64_t total, done;
    double said;                    /* when progress was last printed */
    unsigned rebuilt, skipped, lost_files, failed, busy;
    double t0;
    uint64_t rate;                  /* bytes a second the copy is paced at */
    struct cli_paths doubt;         /* files a failed write left in doubt */
    int doubt_read;
};

/* ---- the walk: directories and files, each file's layout from a survivor ---- */

static int is_known(const struct rb_run *r, const uint8_t *id)
{
    for (int i = 0; i < ddio_client_nservers(r->cl); i++)
        if (i != r->n && !memcmp(r->known[i], id, DDIO_ID_LEN))
            return 1;
    return 0;
}

/* the file's index whose server is none of the others (-1: none; -2: more
 * than one: two servers of its layout are gone) */
static int unknown_index(const struct rb_run *r, const struct ddio_layout_rec *l)
{
    int k = -1;
    for (uint32_t j = 0; j < l->stripe_count; j++)
        if (!is_known(r, l->ids[j]))
            k = k == -1 ? (int)j : -2;
    return k;
}

/* path's layout and size from the first server other than the replacement
 * that has it; 0 or 1 (said on stderr) */
static int survey(struct rb_run *r, const char *path, struct rb_file *f)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_pstat_r p;
    struct ddio_cstat st;
    int rc = -ENOENT;
    for (int i = 0; i < ddio_client_nservers(r->cl) && rc == -ENOENT; i++)
        if (i != r->n)
            rc = ddio_client_pstat_on(r->cl, i, path, &p, msg, sizeof msg);
    if (rc)
        return cli_fail("rebuild: %s: no layout on any other server: %s", path, msg);
    f->layout = p.layout;
    f->attr = (struct rb_attr){p.mode, p.uid, p.gid};
    f->k = unknown_index(r, &p.layout);
    if (ddio_client_stat(r->cl, path, &st, msg, sizeof msg))
        return cli_fail("rebuild: %s", msg);
    f->size = st.size;
    return 0;
}

/* a slot at the end of r->files (0, or 1 said) */
static int grow_files(struct rb_run *r)
{
    if (r->nfiles == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        struct rb_file *v = realloc(r->files, cap * sizeof(*v));
        if (!v)
            return cli_fail("rebuild: out of memory");
        r->files = v;
        r->cap = cap;
    }
    return 0;
}

/* path at the end of r->files, surveyed on the others; gone: a noted path
 * no other server has (nothing to copy, its note cleared) */
static int add_file(struct rb_run *r, const char *path, int gone)
{
    if (grow_files(r))
        return 1;
    struct rb_file *f = &r->files[r->nfiles];
    memset(f, 0, sizeof(*f));
    if (gone) {
        f->k = -1;
        f->ok = 1;
    } else if (survey(r, path, f))
        return 1;
    if (!(f->path = strdup(path)))
        return cli_fail("rebuild: out of memory");
    r->nfiles++;
    if (f->k >= 0)
        r->total += f->size;
    return 0;
}

static int add_dir(struct rb_run *r, const char *path)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_cstat st;
    if (ddio_client_stat(r->cl, path, &st, msg, sizeof msg))
        return cli_fail("rebuild: %s", msg);
    char **v = realloc(r->dirs, (r->ndirs + 1) * sizeof(*v));
    if (v)
        r->dirs = v;
    struct rb_attr *a = v ? realloc(r->dattr, (r->ndirs + 1) * sizeof(*a)) : NULL;
    if (a)
        r->dattr = a;
    if (!a || !(v[r->ndirs] = strdup(path)))
        return cli_fail("rebuild: out of memory");
    a[r->ndirs++] = (struct rb_attr){st.mode, st.uid, st.gid};
    return 0;
}

struct names {
    char **v;
    int *dir;
    size_t n;
};

static int collect(void *arg, const char *name, int is_dir)
{
    struct names *nm = arg;
    char **v = realloc(nm->v, (nm->n + 1) * sizeof(*v));
    int *d = v ? realloc(nm->dir, (nm->n + 1) * sizeof(*d)) : NULL;
    if (v)
        nm->v = v;
    if (!d)
        return -ENOMEM;
    nm->dir = d;
    if (!(v[nm->n] = strdup(name)))
        return -ENOMEM;
    d[nm->n++] = is_dir;
    return 0;
}

/* every directory (parents first) and file under dir into r; failures counted */
static void walk(struct rb_run *r, const char *dir)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct names nm = {0};
    if (ddio_client_readdir(r->cl, dir, collect, &nm, msg, sizeof msg))
        r->failed += cli_fail("rebuild: %s: %s", dir, msg);
    for (size_t i = 0; i < nm.n; i++) {
        char *path;
        if (asprintf(&path, "%s/%s", strcmp(dir, "/") ? dir : "", nm.v[i]) < 0) {
            r->failed += cli_fail("rebuild: out of memory");
        } else {
            if (nm.dir[i] && !(r->failed += add_dir(r, path)))
                walk(r, path);
            else if (!nm.dir[i])
                r->failed += add_file(r, path, 0);
            free(path);
        }
        free(nm.v[i]);
    }
    free(nm.v);
    free(nm.dir);
}

/* ---- the replacement takes the lost server's id --------------------------- */

/* the lost server's id: the one id of the files' layouts no other server
 * has (files naming another unknown id fail); 0 or 1 */
static int find_lost(struct rb_run *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        struct rb_file *f = &r->files[i];
        if (f->k == -2) {
            r->failed += cli_fail("rebuild: %s: more than one of its servers is gone", f->path);
            f->k = -1;
        } else if (f->k >= 0 && !r->have_lost) {
            memcpy(r->lost, f->layout.ids[f->k], DDIO_ID_LEN);
            r->have_lost = 1;
        } else if (f->k >= 0 && memcmp(r->lost, f->layout.ids[f->k], DDIO_ID_LEN)) {
            r->failed += cli_fail("rebuild: %s: its layout names a server that is neither "
                                  "here nor the one server %d replaces", f->path, r->n);
            r->total -= f->size;
            f->k = -1;
        }
    }
    return 0;
}

/* ADOPT on the replacement, then a new client (its HELLO says the new id) */
static int adopt(struct rb_run *r)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_rebuild m = {.op = DDIO_RB_ADOPT};
    uint8_t id[DDIO_ID_LEN];
    memcpy(m.id, r->lost, DDIO_ID_LEN);
    if (ddio_client_rebuild_op(r->cl, r->n, &m, NULL, msg, sizeof msg))
        return cli_fail("rebuild: server %d (%s): %s", r->n,
                        ddio_client_server_addr(r->cl, r->n), msg);
    ddio_client_free(r->cl);
    if (!(r->cl = cli_client(r->o)))
        return 1;
    if (ddio_client_server_id(r->cl, r->n, id, msg, sizeof msg))
        return cli_fail("rebuild: server %d: %s", r->n, msg);
    if (memcmp(id, r->lost, DDIO_ID_LEN))
        return cli_fail("rebuild: server %d still says another id after taking the lost "
                        "one's", r->n);
    return 0;
}

/* ---- one file ----------------------------------------------------------------- */

/* FENCE on every server of f but the replacement (BEGIN fences there):
 * 0, or -EBUSY when one has it open (those fenced already are unfenced);
 * UNFENCE on every server of f */
static int fence_all(struct rb_run *r, const struct rb_file *f, uint32_t op, char *msg,
                     size_t msglen)
{
    struct ddio_rebuild m = {.op = op, .path = f->path};
    int rc = 0, i;
    for (i = 0; i < ddio_client_nservers(r->cl) && !rc; i++)
        for (uint32_t j = 0; j < f->layout.stripe_count && !rc && i != r->n; j++)
            if (!memcmp(r->known[i], f->layout.ids[j], DDIO_ID_LEN))
                rc = ddio_client_rebuild_op(r->cl, i, &m, NULL, msg, msglen);
    if (rc && op == DDIO_RB_FENCE) {
        char other[DDIO_CLIENT_MSG_LEN];
        struct ddio_rebuild u = {.op = DDIO_RB_UNFENCE, .path = f->path};
        for (int q = 0; q < i - 1; q++)     /* an UNFENCE where none stands is harmless */
            if (q != r->n)
                ddio_client_rebuild_op(r->cl, q, &u, NULL, other, sizeof other);
    }
    /* the replacement's own fence (BEGIN's) too, when DONE did not lift it */
    if (op == DDIO_RB_UNFENCE)
        ddio_client_rebuild_op(r->cl, r->n, &m, NULL, msg, msglen);
    return rc;
}

/* where the rebuild stands, told to the replacement for `ddio status`
 * (an old report there shows the rebuild was cut off); failing to tell
 * it does not stop the rebuild */
static void report(struct rb_run *r, uint64_t done, uint64_t total, double rate)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_rebuild m = {.op = DDIO_RB_PROGRESS, .done = done,
                             .total = total > done ? total : done,
                             .rate = rate > 0 ? (uint64_t)rate : 0};
    (void)ddio_client_rebuild_op(r->cl, r->n, &m, NULL, msg, sizeof msg);
}

static void progress(void *arg, uint64_t done)
{
    struct rb_run *r = arg;
    double now = cli_now(), dt = now - r->t0, rate = dt > 0 ? done / dt : 0;
    /* the total is the files' sizes as stat gave them while a server was
     * lost: short when a file's last units were on it */
    if (done > r->total)
        r->total = done;
    if (now - r->said < 1 && done < r->total)
        return;                     /* a line a second at most */
    r->said = now;
    double left = rate > 0 && r->total > done ? (r->total - done) / rate : 0;
    fprintf(stderr, "rebuild: %" PRIu64 " of %" PRIu64 " bytes, %.1f MB/s, about %.0f s left\n",
            done, r->total, rate / 1e6, left);
    /* one more than what is copied while files are left: finished is
     * said by the end of the run, not by a last chunk */
    report(r, done, r->total > done ? r->total : done + 1, rate);
}

/* the copy of a begun file: open, bytes, DONE; 0 or -errno with msg */
static int copy_file(struct rb_run *r, struct rb_file *f, char *msg, size_t msglen)
{
    struct ddio_cfile *cf;
    struct ddio_rebuild m = {.op = DDIO_RB_DONE, .path = f->path};
    double mb = r->o->rate_mb ? r->o->rate_mb : DEFAULT_RATE_MB;   /* (a resync) */
    struct ddio_rebuild_opt ro = {.rate = r->rate ? r->rate : (uint64_t)(mb * 1e6),
                                  .t0_ms = (int64_t)(r->t0 * 1000), .base = 0,
                                  .done = &r->done, .progress = progress, .arg = r};
    /* an erasure-coded file in doubt is written whole to every server */
    if (!r->doubt_read && cli_doubt_gather(r->cl, &r->doubt) == 0)
        r->doubt_read = 1;
    char slash[DDIO_MAX_STR + 2];
    snprintf(slash, sizeof slash, "/%s", f->path[0] == '/' ? f->path + 1 : f->path);
    ro.whole = cli_paths_has(&r->doubt, slash);
    int rc = ddio_client_open(r->cl, f->path, 0, &cf, msg, msglen);
    if (rc)
        return rc;
    rc = ddio_client_rebuild_copy(cf, (uint32_t)f->k, &ro, &f->size, msg, msglen);
    ddio_client_close(cf);
    if (rc == 0)
        rc = ddio_client_rebuild_op(r->cl, r->n, &m, NULL, msg, msglen);
    return rc;
}

static void clear_note(struct rb_run *r, struct rb_file *f);

/* one file the replacement belongs to: rebuilt, skipped, busy or failed */
static void rebuild_file(struct rb_run *r, struct rb_file *f, int last_pass)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    uint32_t state = 0;
    struct ddio_rebuild b = {.op = r->redo ? DDIO_RB_REDO : DDIO_RB_BEGIN, .path = f->path,
                             .layout = f->layout};
    b.layout.server_index = (uint32_t)f->k;
    if (!ddio_redundancy_kept(ddio_layout_redundancy(&f->layout))) {
        printf("%s: none: lost (its stripe on server %d had no copy)\n", f->path, r->n);
        r->lost_files++;
        f->k = -1;
        return;
    }
    int rc = fence_all(r, f, DDIO_RB_FENCE, msg, sizeof msg);
    if (rc == -EBUSY && !last_pass) {
        r->busy++;
        return;                 /* a job has it open: tried again after the others */
    }
    if (rc == 0)
        rc = ddio_client_rebuild_op(r->cl, r->n, &b, &state, msg, sizeof msg);
    if (rc == 0 && state == DDIO_RB_BUILT) {
        printf("%s: %s: already rebuilt (skipped)\n", f->path,
               ddio_redundancy_name(ddio_layout_redundancy(&f->layout)));
        r->skipped++;
        f->ok = 1;
        r->total -= f->size;        /* the estimate counts what is left to copy */
    } else if (rc == 0 && (rc = ddio_client_setattr_on(r->cl, r->n, f->path, f->attr.mode,
                                                       f->attr.uid, f->attr.gid, msg,
                                                       sizeof msg)) == 0
               && (rc = copy_file(r, f, msg, sizeof msg)) == 0) {
        printf("%s: %s: %s, %" PRIu64 " bytes\n", f->path,
               ddio_redundancy_name(ddio_layout_redundancy(&f->layout)), r->redo ? "resynced" : "rebuilt",
               f->size);
        r->rebuilt++;
        f->ok = 1;
    }
    /* a resync's note is cleared while the fence keeps writers off: a
     * write after the fence is lifted is noted again, never cleared */
    if (rc == 0 && r->redo)
        clear_note(r, f);
    char other[DDIO_CLIENT_MSG_LEN];
    fence_all(r, f, DDIO_RB_UNFENCE, other, sizeof other);
    if (rc)
        r->failed += cli_fail("rebuild: %s: %s%s", f->path, msg,
                              rc != -EBUSY ? "" : r->redo ? " (run ddio member in again "
                              "when the job closed it)" : " (rerun ddio rebuild when the job "
                              "closed it)");
    fflush(stdout);             /* a rebuild cut off still said what it finished */
    f->k = -1;
}

/* ---- the command ------------------------------------------------------------- */

static int setup(struct rb_run *r)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    for (int i = 0; i < ddio_client_nservers(r->cl); i++)
        if (i != r->n && ddio_client_server_id(r->cl, i, r->known[i], msg, sizeof msg))
            return cli_fail("rebuild: server %d: %s (a second server is out: rebuild needs "
                            "every other one)", i, msg);
    walk(r, "/");
    return find_lost(r);
}

static void rebuild_all(struct rb_run *r)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    for (size_t i = 0; i < r->ndirs; i++) {
        const struct rb_attr *a = &r->dattr[i];
        if (ddio_client_mkdir_on(r->cl, r->n, r->dirs[i], a->mode, msg, sizeof msg)
            || ddio_client_setattr_on(r->cl, r->n, r->dirs[i], a->mode, a->uid, a->gid, msg,
                                      sizeof msg))
            r->failed += cli_fail("rebuild: directory %s: %s", r->dirs[i], msg);
    }
    report(r, 0, r->total ? r->total : 1, 0);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && r->busy)
            sleep(1);
        r->busy = 0;
        for (size_t i = 0; i < r->nfiles; i++)
            if (r->files[i].k >= 0)
                rebuild_file(r, &r->files[i], pass == 1);
    }
}

static void run_free(struct rb_run *r)
{
    for (size_t i = 0; i < r->ndirs; i++)
        free(r->dirs[i]);
    for (size_t i = 0; i < r->nfiles; i++)
        free(r->files[i].path);
    free(r->dirs);
    free(r->dattr);
    free(r->files);
    cli_paths_free(&r->doubt);
    ddio_client_free(r->cl);
}

/* ---- a returning member's resync (ddio member in) -------------------------------- */

/* PSTAT of path on the servers other than member n until one has it:
 * -ENOENT when none does, else the first other answer (p) */
static int pstat_others(struct rb_run *r, const char *path, struct ddio_pstat_r *p)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    int rc = -ENOENT;
    for (int i = 0; i < ddio_client_nservers(r->cl) && rc == -ENOENT; i++)
        if (i != r->n)
            rc = ddio_client_pstat_on(r->cl, i, path, p, msg, sizeof msg);
    return rc;
}

/* a directory made while member n was out: made there by the round, with
 * the others' mode and owner, before any file is copied */
static int add_noted_dir(struct rb_run *r, const char *path, const struct ddio_pstat_r *p)
{
    if (grow_files(r))
        return 1;
    struct rb_file *f = &r->files[r->nfiles];
    memset(f, 0, sizeof(*f));
    if (!(f->path = strdup(path)))
        return cli_fail("resync: out of memory");
    f->k = -1;
    f->dir = 1;
    f->attr = (struct rb_attr){p->mode, p->uid, p->gid};
    r->nfiles++;
    return 0;
}

/* path noted for member n by some other server: added once (its layout
 * from a survivor; one that no survivor has any more has nothing to copy) */
static int add_noted(struct rb_run *r, const char *path)
{
    int rc;
    for (size_t i = 0; i < r->nfiles; i++)
        if (!strcmp(r->files[i].path, path))
            return 0;
    struct ddio_pstat_r *p = malloc(sizeof(*p));        /* a layout is 4 KiB */
    if (!p)
        return cli_fail("resync: out of memory");
    rc = pstat_others(r, path, p);
    int dir = rc == 0 && p->kind != DDIO_K_FILE;
    if (dir)
        rc = add_noted_dir(r, path, p);
    free(p);
    if (dir)
        return rc;
    if (rc != -ENOENT) {
        if ((rc = add_file(r, path, 0)) == 0)
            r->files[r->nfiles - 1].ok = r->files[r->nfiles - 1].k < 0;
        return rc;
    }
    /* removed since: nothing to copy; the member's copy of it is removed
     * and its note goes, under the fence (clear_noted) */
    if (add_file(r, path, 1))
        return 1;
    r->files[r->nfiles - 1].gone = 1;
    return 0;
}

/* every other server's notes for member n, and member n's own notes of
 * changes no majority confirmed (made while the others may have had it
 * out already: a client on its side of a partition), into r->files: 0,
 * or 1 when a server could not say (the resync needs every server) */
static int gather_noted(struct rb_run *r, int others_only)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_rebuild m = {.op = DDIO_RB_MISSED, .member = (uint32_t)r->n};
    for (int i = 0; i < ddio_client_nservers(r->cl); i++) {
        if (others_only && i == r->n)
            continue;
        struct ddio_rebuild_r rr;
        char path[DDIO_MAX_STR + 2];
        int rc = ddio_client_rebuild_call(r->cl, i, &m, &rr, msg, sizeof msg);
        for (uint32_t j = 0; rc == 0 && j < rr.npaths; j++) {
            snprintf(path, sizeof path, "/%s", rr.paths[j]);  /* noted normalized */
            rc = add_noted(r, path);
        }
        ddio_rebuild_r_free(&rr);
        if (rc)
            return cli_fail("resync: server %d (%s): %s", i,
                            ddio_client_server_addr(r->cl, i), msg);
    }
    return 0;
}

/* f's notes cleared on every server (its fence held: rebuild_file) */
static void clear_note(struct rb_run *r, struct rb_file *f)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_rebuild m = {.op = DDIO_RB_RESYNCED, .member = (uint32_t)r->n, .path = f->path};
    for (int i = 0; i < ddio_client_nservers(r->cl); i++)
        if (ddio_client_rebuild_op(r->cl, i, &m, NULL, msg, sizeof msg))
            r->failed += cli_fail("resync: %s: its note on server %d: %s", f->path, i, msg);
    f->cleared = 1;
}

/* a file gone from the others (its fence held on every server): gone
 * still (none made it again meanwhile), and so removed on member n, which
 * kept its copy from before; 0, or 1: keep its note (the next round) */
static int remove_gone(struct rb_run *r, struct rb_file *f)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_pstat_r *p = malloc(sizeof(*p));
    int rc = p ? pstat_others(r, f->path, p) : -ENOMEM;
    free(p);
    if (rc != -ENOENT)
        return 1;
    /* a directory removed while n was out: what was in it was removed
     * too, noted, and comes first (clear_noted: children first) */
    rc = ddio_client_unlink_on(r->cl, r->n, f->path, msg, sizeof msg);
    if (rc == -EISDIR && (rc = ddio_client_rmdir_on(r->cl, r->n, f->path, msg, sizeof msg)) == 0) {
        printf("%s: directory removed while server %d was out: removed there\n", f->path, r->n);
        return 0;
    }
    if (rc && rc != -ENOENT) {
        r->failed += cli_fail("resync: %s: removing the copy server %d kept: %s", f->path,
                              r->n, msg);
        return 1;
    }
    printf("%s: deleted while server %d was out: %s\n", f->path, r->n,
           rc ? "it had no copy" : "its copy removed");
    return 0;
}

/* the notes of the files with nothing to copy (gone since, or without a
 * part on the member) cleared, each under a fence on every server, so
 * that a create or write of that path meanwhile keeps its note; one a job
 * has open keeps its note for the next round */
static void clear_noted(struct rb_run *r)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    int nsrv = ddio_client_nservers(r->cl);
    for (size_t f = r->nfiles; f-- > 0;) {     /* sorted: a directory's entries first */
        struct rb_file *rf = &r->files[f];
        struct ddio_rebuild m = {.op = DDIO_RB_FENCE, .path = rf->path};
        int i = 0;
        if (!rf->ok || rf->cleared)
            continue;
        while (i < nsrv && ddio_client_rebuild_op(r->cl, i, &m, NULL, msg, sizeof msg) == 0)
            i++;
        if (i == nsrv && !(rf->gone && remove_gone(r, rf)))
            clear_note(r, rf);
        m.op = DDIO_RB_UNFENCE;
        for (int q = 0; q < nsrv; q++)      /* an UNFENCE where none stands is harmless */
            ddio_client_rebuild_op(r->cl, q, &m, NULL, msg, sizeof msg);
    }
}

static void files_free(struct rb_run *r)
{
    for (size_t i = 0; i < r->nfiles; i++)
        free(r->files[i].path);
    r->nfiles = 0;
}

/* DDIO_TEST_RESYNC_PAUSE=WHERE:DIR (tests only): at point WHERE the
 * resync makes DIR/WHERE.ready and waits (60 s at most) for DIR/WHERE.go,
 * so a test can change files at a known point; once per point */
static void test_pause(const char *where)
{
    const char *v = getenv("DDIO_TEST_RESYNC_PAUSE");
    size_t wl = strlen(where);
    static char done[64];
    if (!v || strncmp(v, where, wl) || v[wl] != ':' || strstr(done, where))
        return;
    snprintf(done + strlen(done), sizeof done - strlen(done), "%s,", where);
    char ready[4200], go[4200];
    snprintf(ready, sizeof ready, "%s/%s.ready", v + wl + 1, where);
    snprintf(go, sizeof go, "%s/%s.go", v + wl + 1, where);
    FILE *f = fopen(ready, "w");
    if (f)
        fclose(f);
    for (int i = 0; i < 600 && access(go, F_OK); i++)
        usleep(100000);
}

/* FREEZE (DDIO_RB_FREEZE) or THAW member r->n's notes on every other
 * server: 0, or 1 said (a FREEZE that failed is thawed everywhere) */
static int freeze_others(struct rb_run *r, uint32_t op)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_rebuild m = {.op = op, .member = (uint32_t)r->n};
    int rc = 0;
    for (int i = 0; i < ddio_client_nservers(r->cl); i++)
        if (i != r->n && ddio_client_rebuild_op(r->cl, i, &m, NULL, msg, sizeof msg)
            && op == DDIO_RB_FREEZE && !rc)
            rc = cli_fail("resync: server %d (%s): %s", i, ddio_client_server_addr(r->cl, i),
                          msg);
    if (rc)
        freeze_others(r, DDIO_RB_THAW);
    return rc;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const struct rb_file *)a)->path, ((const struct rb_file *)b)->path);
}

/* the directories made while member n was out, made there (sorted:
 * parents first), with the others' mode and owner */
static void make_noted_dirs(struct rb_run *r)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    for (size_t i = 0; i < r->nfiles; i++) {
        struct rb_file *f = &r->files[i];
        if (!f->dir)
            continue;
        int rc = ddio_client_mkdir_on(r->cl, r->n, f->path, f->attr.mode, msg, sizeof msg);
        if ((rc == 0 || rc == -EEXIST)
            && !ddio_client_setattr_on(r->cl, r->n, f->path, f->attr.mode, f->attr.uid,
                                       f->attr.gid, msg, sizeof msg)) {
            printf("%s: directory made while server %d was out: made there\n", f->path, r->n);
            f->ok = 1;
        } else
            r->failed += cli_fail("resync: directory %s on server %d: %s", f->path, r->n, msg);
    }
}

/* one round: the directories made meanwhile made on member n, the noted
 * files copied onto it, each one's notes cleared under its fence; 0, or
 * 1 when one failed */
static int resync_round(struct rb_run *r)
{
    qsort(r->files, r->nfiles, sizeof(*r->files), by_path);
    make_noted_dirs(r);
    for (size_t i = 0; i < r->nfiles; i++)
        if (r->files[i].k >= 0)
            rebuild_file(r, &r->files[i], 1);
    test_pause("copied");
    clear_noted(r);
    return r->failed != 0;
}

/* The last round: the others refuse changes that would note member n
 * (clients send them again), the notes are gathered once more, and if
 * there are none, n is declared in while they are refused: no change is
 * made between the last round and the epoch that says n is in without
 * reaching n. 0: in (m its record); 1: notes came meanwhile (thawed,
 * another round); -1: failed, said */
static int let_in(struct rb_run *r, struct ddio_members *m)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    if (freeze_others(r, DDIO_RB_FREEZE))
        return -1;
    files_free(r);
    int rc = gather_noted(r, 0) ? -1 : r->nfiles ? 1 : 0;
    if (rc == 0)
        test_pause("frozen");
    if (rc == 0 && ddio_client_member_set(r->cl, r->n, DDIO_MEMBER_IN, m, msg, sizeof msg)) {
        cli_fail("%s", msg);
        rc = -1;
    }
    freeze_others(r, DDIO_RB_THAW);
    return rc;
}

int cli_resync(struct cli *o, int n, struct ddio_members *m)
{
    struct rb_run r = {.o = o, .n = n, .redo = 1};
    char msg[DDIO_CLIENT_MSG_LEN];
    if (!(r.cl = cli_client(o)))
        return 1;
    r.t0 = cli_now();
    int rc = 0, in = 0;
    for (int i = 0; i < ddio_client_nservers(r.cl) && !rc; i++)
        if (i != n && ddio_client_server_id(r.cl, i, r.known[i], msg, sizeof msg))
            rc = cli_fail("resync: server %d: %s (the resync needs every other server)", i,
                          msg);
    /* rounds until no server has a note left: a file written again while
     * it was copied is noted again, and copied again */
    for (int round = 0; rc == 0 && !in; round++) {
        files_free(&r);
        if ((rc = gather_noted(&r, 0)))
            break;
        int got = r.nfiles ? 1 : let_in(&r, m);
        if (got < 0) {
            rc = 1;
            break;
        }
        in = got == 0;
        if (!in && round >= 4) {
            rc = cli_fail("resync: files are still being written with server %d out; try "
                          "again when they are not", n);
            break;
        }
        if (!in && (rc = resync_round(&r)))
            break;
    }
    /* none, unless a server lost its freeze (a restart) before it had the
     * new epoch: those files are copied now (unbuilt meanwhile: read from
     * the copies) */
    files_free(&r);
    if (in && gather_noted(&r, 1) == 0 && r.nfiles) {
        printf("resync: %zu file(s) noted while server %d was declared in: resynced now\n",
               r.nfiles, n);
        rc = resync_round(&r);
    }
    printf("resync: server %d: %u file(s) resynced, %u lost, %u failed; %" PRIu64
           " bytes in %.2f s\n", n, r.rebuilt, r.lost_files, r.failed, r.done,
           cli_now() - r.t0);
    run_free(&r);
    return rc || r.failed ? 1 : 0;
}

/* --rate, else a quarter of the replacement's disks as it measured them at
 * its start (STATS device_bps), else DEFAULT_RATE_MB; said once */
static void pace_rate(struct rb_run *r)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_stats_r st = {0};
    uint64_t dev = 0;
    if (r->o->rate_mb) {
        r->rate = (uint64_t)(r->o->rate_mb * 1e6);
        return;
    }
    if (ddio_client_stats(r->cl, r->n, &st, msg, sizeof(msg)) == 0)
        dev = ddio_stats_r_get(&st, "device_bps", NULL);
    ddio_stats_r_free(&st);
    r->rate = dev ? dev / 4 : (uint64_t)(DEFAULT_RATE_MB * 1e6);
    if (dev)
        printf("rebuild: pacing at %.1f MB/s, a quarter of the replacement's disks (%.1f MB/s, "
               "measured at its start); --rate to change\n", r->rate / 1e6, dev / 1e6);
    else
        printf("rebuild: pacing at %.1f MB/s (the replacement did not measure its disks); "
               "--rate to change\n", r->rate / 1e6);
}

int cmd_rebuild(struct cli *o)
{
    struct rb_run r = {.o = o, .n = o->server_index};
    if (o->server_index < 0)
        return cli_usage_error("rebuild: give --server N (try ddio --help)");
    if (!(r.cl = cli_client(o)))
        return 1;
    if (r.n >= ddio_client_nservers(r.cl)) {
        int n = ddio_client_nservers(r.cl);
        ddio_client_free(r.cl);
        return cli_usage_error("rebuild: --server %d: there are %d servers (0..%d)", r.n, n,
                               n - 1);
    }
    r.t0 = cli_now();
    int rc = setup(&r);
    if (rc == 0 && !r.have_lost)
        printf("rebuild: no file names a server that is gone: nothing to rebuild on "
               "server %d\n", r.n);
    else if (rc == 0 && (rc = adopt(&r)) == 0) {
        pace_rate(&r);
        rebuild_all(&r);
    }
    double dt = cli_now() - r.t0;
    if (rc == 0 && r.have_lost)     /* finished only when nothing failed */
        report(&r, r.done, r.failed ? r.done + 1 : r.done,
               dt > 0 ? r.done / dt : 0);
    printf("rebuild: server %d: %u file(s) rebuilt, %u already done, %u lost, %u failed; "
           "%" PRIu64 " bytes in %.2f s\n", r.n, r.rebuilt, r.skipped, r.lost_files,
           r.failed + (unsigned)rc, r.done, dt);
    run_free(&r);
    return rc || r.failed || r.lost_files ? 1 : 0;
}
