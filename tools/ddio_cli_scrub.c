/* ddio scrub PATH | --all [--rate MB/s]: every sector of every copy of the
 * file(s) checked against its checksum by the server holding it, bad
 * sectors of mirrored files rewritten from a copy that reads right
 * (ddio_client_scrub; DESIGN.md 6.2). One line per file; exit status 1
 * when a bad sector could not be mended or a file could not be scrubbed.
 * ddio fold PATH | --all: an erasure-coded file's partial groups folded
 * into parity (ddio_client_fold; DESIGN.md 6.4), the file fenced on every
 * server meanwhile; a file open now is passed by. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_cli.h"

struct scrub_run {
    struct ddio_client *cl;
    struct cli_paths doubt;      /* files a failed write left in doubt */
    uint64_t rate;
    struct ddio_scrub_tally all;
    unsigned files, failed;
    int fold, whole_tree;        /* ddio fold; --all */
    uint64_t groups, folded;     /* fold: groups and bytes folded */
    unsigned busy;               /* fold: files open, passed by */
};

static void add(struct ddio_scrub_tally *a, const struct ddio_scrub_tally *t)
{
    a->verified += t->verified;
    a->unknown += t->unknown;
    a->bad += t->bad;
    a->repaired += t->repaired;
    a->unrepairable += t->unrepairable;
    a->no_sums += t->no_sums;
    a->bytes += t->bytes;
}

static void report(const char *path, const char *mode, const struct ddio_scrub_tally *t)
{
    printf("%s: %s: verified %" PRIu64 ", unknown %" PRIu64 ", bad %" PRIu64 ", repaired %"
           PRIu64 ", unrepairable %" PRIu64 "%s\n", path, mode, t->verified, t->unknown, t->bad,
           t->repaired, t->unrepairable,
           t->no_sums ? " (some copies keep no checksums: not checked)" : "");
}

/* one file scrubbed and reported; 0, or 1 (a failure, said on stderr) */
static int scrub_file(struct scrub_run *r, const char *path)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_cstat st;
    struct ddio_cfile *f;
    struct ddio_scrub_tally t;
    memset(&t, 0, sizeof(t));
    r->files++;
    if (ddio_client_stat(r->cl, path, &st, msg, sizeof msg))
        return cli_fail("scrub: %s", msg);
    if (st.is_dir)
        return cli_fail("scrub: %s: is a directory (scrub --all walks every file)", path);
    /* copies a failed write left different agree first; then their sums */
    if (cli_paths_has(&r->doubt, path) && cli_settle(r->cl, path))
        return 1;
    if (ddio_client_open(r->cl, path, DDIO_CO_RDONLY, &f, msg, sizeof msg))
        return cli_fail("scrub: %s", msg);
    int rc = ddio_client_scrub(f, r->rate, &t, msg, sizeof msg);
    ddio_client_close(f);
    add(&r->all, &t);
    report(path, ddio_redundancy_name(st.redundancy), &t);
    if (rc)
        return cli_fail("scrub: %s: %s", path, msg);
    if (t.unrepairable)
        return cli_fail("scrub: %s: %" PRIu64 " bad sector(s) could not be repaired%s", path,
                        t.unrepairable, st.copies > 1 ? " (every copy bad)"
                        : " (redundancy none: no copy to repair from)");
    return 0;
}

/* one erasure-coded file folded and reported (others passed by); 0, or 1 */
static int fold_file(struct scrub_run *r, const char *path)
{
    char msg[DDIO_CLIENT_MSG_LEN], other[DDIO_CLIENT_MSG_LEN];
    struct ddio_cstat st;
    struct ddio_cfile *f;
    uint64_t groups = 0, bytes = 0;
    r->files++;
    if (ddio_client_stat(r->cl, path, &st, msg, sizeof msg))
        return cli_fail("fold: %s", msg);
    if (st.is_dir)
        return cli_fail("fold: %s: is a directory (fold --all walks every file)", path);
    if (!ddio_redundancy_ec_k(st.redundancy)) {
        if (!r->whole_tree)
            printf("%s: %s: nothing to fold (not erasure coded)\n", path,
                   ddio_redundancy_name(st.redundancy));
        return 0;
    }
    double t0 = cli_now();
    int rc = cli_on_all(r->cl, path, DDIO_RB_FENCE, msg, sizeof msg);
    if (rc == -EBUSY) {
        r->busy++;
        printf("%s: open now: not folded (fold it again when no job has it open)\n", path);
        return 0;
    }
    if (rc == 0 && (rc = ddio_client_open(r->cl, path, 0, &f, msg, sizeof msg)) == 0) {
        rc = ddio_client_fold(f, &groups, &bytes, msg, sizeof msg);
        ddio_client_close(f);
    }
    cli_on_all(r->cl, path, DDIO_RB_UNFENCE, other, sizeof other);
    if (rc)
        return cli_fail("fold: %s: %s (fold it again: every step is redone)", path, msg);
    r->groups += groups;
    r->folded += bytes;
    printf("%s: %s: %" PRIu64 " group(s) folded, %" PRIu64 " bytes in %.2f s\n", path,
           ddio_redundancy_name(st.redundancy), groups, bytes, cli_now() - t0);
    return 0;
}

struct walk {
    char **names;
    int *dirs;
    size_t n, cap;
};

static int collect(void *arg, const char *name, int is_dir)
{
    struct walk *w = arg;
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        char **n = realloc(w->names, cap * sizeof(*n));
        if (n)
            w->names = n;
        int *d = n ? realloc(w->dirs, cap * sizeof(*d)) : NULL;
        if (!d)
            return -ENOMEM;
        w->dirs = d;
        w->cap = cap;
    }
    if (!(w->names[w->n] = strdup(name)))
        return -ENOMEM;
    w->dirs[w->n++] = is_dir;
    return 0;
}

/* every file under dir scrubbed; the failures counted in r */
static void scrub_tree(struct scrub_run *r, const char *dir)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct walk w = {0};
    if (ddio_client_readdir(r->cl, dir, collect, &w, msg, sizeof msg)) {
        r->failed += cli_fail("%s: %s: %s", r->fold ? "fold" : "scrub", dir, msg);
        w.cap = w.n;
    }
    for (size_t i = 0; i < w.n; i++) {
        char *path;
        if (asprintf(&path, "%s/%s", strcmp(dir, "/") ? dir : "", w.names[i]) < 0) {
            r->failed += cli_fail("scrub: out of memory");
        } else {
            if (w.dirs[i])
                scrub_tree(r, path);
            else
                r->failed += r->fold ? fold_file(r, path) : scrub_file(r, path);
            free(path);
        }
        free(w.names[i]);
    }
    free(w.names);
    free(w.dirs);
}

int cmd_scrub(struct cli *o)
{
    if (o->all == (o->argc == 1))
        return cli_usage_error("scrub: give one PATH or --all (try ddio --help)");
    struct scrub_run r = {.rate = (uint64_t)(o->rate_mb * 1e6)};
    if (!(r.cl = cli_client(o)))
        return 1;
    double t0 = cli_now();
    if (cli_doubt_gather(r.cl, &r.doubt)) {
        ddio_client_free(r.cl);
        return 1;
    }
    if (o->all)
        scrub_tree(&r, "/");
    else
        r.failed += scrub_file(&r, cli_ns_path(o->argv[0]));
    double dt = cli_now() - t0;
    if (o->all)
        printf("scrub: %u file(s), %" PRIu64 " bytes read in %.2f s: verified %" PRIu64
               ", bad %" PRIu64 ", repaired %" PRIu64 ", unrepairable %" PRIu64 "\n", r.files,
               r.all.bytes, dt, r.all.verified, r.all.bad, r.all.repaired,
               r.all.unrepairable);
    cli_paths_free(&r.doubt);
    ddio_client_free(r.cl);
    return r.failed ? 1 : 0;
}

int cmd_fold(struct cli *o)
{
    if (o->all == (o->argc == 1))
        return cli_usage_error("fold: give one PATH or --all (try ddio --help)");
    struct scrub_run r = {.fold = 1,.whole_tree = o->all };
    if (!(r.cl = cli_client(o)))
        return 1;
    double t0 = cli_now();
    if (o->all)
        scrub_tree(&r, "/");
    else
        r.failed += fold_file(&r, cli_ns_path(o->argv[0]));
    if (o->all)
        printf("fold: %u file(s), %" PRIu64 " group(s), %" PRIu64 " bytes folded in %.2f s%s\n",
               r.files, r.groups, r.folded, cli_now() - t0,
               r.busy ? " (files open now passed by)" : "");
    ddio_client_free(r.cl);
    return r.failed ? 1 : 0;
}
