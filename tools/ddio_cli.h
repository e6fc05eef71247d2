/* tools/ddio: the administration command line (ddio.c parses options and
 * dispatches; one file per family of commands). Every command talks to the
 * servers through common/ddio_client (the protocol and authentication live
 * there, not here). Commands return the process exit status: 0 ok, 1 a
 * failure reported on stderr, 2 a usage error. */
#ifndef DDIO_CLI_H
#define DDIO_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "ddio_client.h"

struct cli {
    const char *servers;      /* -s/--servers, $DDIO_SERVERS, DDIO_CONFIG servers */
    const char *secret_file;  /* --secret-file (NULL: $DDIO_SECRET_FILE, DDIO_CONFIG) */
    double timeout_s;         /* -t/--timeout, $DDIO_TIMEOUT, DDIO_CONFIG, 30 */
    int timeout_default;      /* none of those gave it (status and stats then
                               * wait CLI_LOOK_TIMEOUT_S for a server) */
    int json;                 /* --json: ls, stat, layout, status */
    int longfmt;              /* ls -l */
    uint64_t unit;            /* cp --stripe-unit (new files; 0: 1 MiB) */
    int redundancy;           /* cp --redundancy (new files; 0: the servers') */
    int progress;             /* cp: -1 when stderr is a terminal, 0 never, 1 always */
    int buffered;             /* cp --buffered: the local destination through the
                               * page cache, not synced (as cp(1)) */
    double interval_s;        /* status --interval */
    double rate_mb;           /* scrub --rate (MB/s, 10^6 bytes; 0: no limit) */
    int all;                  /* scrub --all, fold --all */
    int server_index;         /* rebuild --server N (-1: not given) */
    int force;                /* member out --force: with another server out too */
    double grace_s;           /* watch --grace */
    double fold_every_s;      /* watch --fold-every (0: never) */
    int once;                 /* watch --once */
    int argc;                 /* the command's operands */
    char **argv;
};

/* "ddio: <message>" on stderr; returns 1 (the exit status of a failure) */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* a usage mistake: one line, exit status 2 */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* a client for o->servers; NULL after printing why */
struct ddio_client *cli_client(const struct cli *o);
/* the namespace path of an operand: "ddio:/a/b" and "/a/b" -> "/a/b" */
const char *cli_ns_path(const char *arg);
/* JSON string literal (quotes and escapes) */
void cli_json_str(FILE *f, const char *s);
/* "1.50 GiB" (binary units) into buf */
const char *cli_human(uint64_t bytes, char *buf, size_t n);
double cli_now(void);         /* monotonic seconds */

int cmd_ls(struct cli *o);
int cmd_stat(struct cli *o);
int cmd_rm(struct cli *o);
int cmd_mkdir(struct cli *o);
int cmd_mv(struct cli *o);
int cmd_chmod(struct cli *o);
int cmd_chown(struct cli *o);
int cmd_layout(struct cli *o);
int cmd_cp(struct cli *o);
int cmd_status(struct cli *o);
int cmd_stats(struct cli *o);
int cmd_scrub(struct cli *o);
int cmd_rebuild(struct cli *o);
int cmd_member(struct cli *o);
/* a returning member n brought up to date and declared in (ddio member
 * in): every file the other servers noted for it while it was out copied
 * onto it from the copies, the notes cleared, then, with changes that
 * would note it refused for a moment, declared in (*m the new record); 0,
 * or 1 said on stderr (ddio_cli_rebuild.c) */
struct ddio_members;
int cli_resync(struct cli *o, int n, struct ddio_members *m);
/* "membership: epoch E, out: ...\n", or with json {"epoch": E, "out":
 * [...]} (null when unknown) (ddio_cli_member.c) */
void cli_member_line(struct ddio_client *cl, FILE *f, int json);

/* Mirrored files a failed write left in doubt (ddio_cli_settle.c): every
 * server's list gathered into *out (each path once; 0, or 1 said on
 * stderr); one of them made to agree (its primaries written over its
 * copies, the file fenced) and settled, a line said (0, or 1 said) */
struct cli_paths {
    char **p;
    size_t n, cap;
};
int cli_doubt_gather(struct ddio_client *cl, struct cli_paths *out);
int cli_paths_has(const struct cli_paths *s, const char *path);
void cli_paths_free(struct cli_paths *s);
int cli_settle(struct ddio_client *cl, const char *path);
/* REBUILD op (FENCE, UNFENCE, SETTLED) of path on every server: 0, or the
 * first failure (-errno, msg); a FENCE that fails lifts those it put up */
int cli_on_all(struct ddio_client *cl, const char *path, uint32_t op, char *msg,
               size_t msglen);
int cmd_fold(struct cli *o);
int cmd_watch(struct cli *o);

#endif
