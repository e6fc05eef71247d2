/* ddio watch [--grace S] [--interval S] [--fold-every S] [--once]: the repairs an operator
 * would run, run when they are due (DESIGN.md 6.1, 6.3). Every interval
 * the membership is read and each server looked at:
 *   - unreachable for --grace seconds while in: declared out (alone: never
 *     a second one while another is out, which could take a mirrored
 *     file's last copy out of the writes);
 *   - a fresh --replacement at its address (waiting for the lost one's
 *     id, or holding files not rebuilt yet): ddio rebuild --server N;
 *   - out, and reachable again for --grace seconds: ddio member in N (its
 *     resync, which declares it in);
 * and every --fold-every seconds (from the first pass) ddio fold --all:
 * the erasure-coded files' partial groups folded into parity.
 * One line per action on stdout; the actions' own output as theirs. Runs
 * until killed, or one pass with --once. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddio_cli.h"
#include "ddio_core_member.h"

struct seen {
    double since;                /* when it was first seen in this state (0: not) */
    int state;                   /* 0 fine, 1 unreachable and in, 2 out and back */
};

/* 1: server i is a replacement to rebuild onto (waiting for the lost
 * one's id, or holding files not rebuilt yet), by one STATS; 0: not, or
 * no answer */
static int replacement(struct ddio_client *cl, int i)
{
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_stats_r r;
    int yes = 0;
    if (ddio_client_stats(cl, i, &r, msg, sizeof msg))
        return 0;
    for (uint32_t k = 0; k < r.n; k++)
        yes |= (!strcmp(r.kv[k].key, "rebuild_adopt_pending")
                || !strcmp(r.kv[k].key, "rebuild_unbuilt")) && r.kv[k].val > 0;
    ddio_stats_r_free(&r);
    return yes;
}

/* the state server i is in for the grace to run on (0: none) */
static int state_of(const struct ddio_members *m, int i)
{
    int out = m->val.n && m->val.out[i];
    if (!m->reached[i])
        return out ? 0 : 1;
    return out ? 2 : 0;
}

static int rebuild(struct cli *o, struct ddio_client *cl, int i)
{
    struct cli r = *o;
    r.server_index = i;
    r.argc = 0;
    printf("watch: server %d (%s) is a replacement: ddio rebuild --server %d\n", i,
           ddio_client_server_addr(cl, i), i);
    fflush(stdout);
    return cmd_rebuild(&r);
}

/* one pass; 0, or 1 when an action failed; *again: a server's id changed
 * (a replacement took the lost one's): connect again */
static int pass(struct cli *o, struct ddio_client *cl, struct seen *s, double grace, int *again)
{
    char msg[DDIO_CLIENT_MSG_LEN] = "out of memory";
    int failed = 0, n = ddio_client_nservers(cl);
    struct ddio_members *m = calloc(1, sizeof(*m));
    int known = m && ddio_client_members(cl, m, msg, sizeof msg) == 0;
    /* replacements first (of the servers that answered; all when the
     * membership could not be read: it names the ids, and a replacement
     * has none of them until it is rebuilt onto) */
    for (int i = 0; m && i < n; i++)
        if ((!known || m->reached[i]) && replacement(cl, i)) {
            failed |= rebuild(o, cl, i) != 0;
            s[i] = (struct seen){0, 0};
            *again = 1;         /* the membership read again, connected again */
        }
    if (!known || *again) {
        free(m);
        return failed ? 1 : !known && !*again ? cli_fail("watch: the membership: %s", msg) : 0;
    }
    double now = cli_now();
    for (int i = 0; i < n; i++) {
        const char *addr = ddio_client_server_addr(cl, i);
        int st = state_of(m, i);
        if (st != s[i].state || !st)
            s[i] = (struct seen){st ? now : 0, st};
        if (!st || now - s[i].since < grace)
            continue;
        int rc;
        if (st == 1) {
            printf("watch: server %d (%s) unreachable for %.0f s: declared out\n", i, addr,
                   now - s[i].since);
            rc = ddio_client_member_set(cl, i, DDIO_MEMBER_OUT_ALONE, m, msg, sizeof msg);
            if (rc)
                cli_fail("watch: server %d stays in: %s", i, msg);
        } else {
            printf("watch: server %d (%s) out and reachable for %.0f s: ddio member in %d\n",
                   i, addr, now - s[i].since, i);
            fflush(stdout);
            rc = cli_resync(o, i, m);
        }
        fflush(stdout);
        failed |= rc != 0;
        s[i] = (struct seen){0, 0};
    }
    free(m);
    return failed;
}

int cmd_watch(struct cli *o)
{
    struct ddio_client *cl = cli_client(o);
    if (!cl)
        return 1;
    struct seen s[DDIO_MAX_SERVERS];
    memset(s, 0, sizeof(s));
    int failed = 0;
    double folded = 0;
    for (;;) {
        int again = 0;
        failed |= pass(o, cl, s, o->grace_s, &again);
        if (o->fold_every_s > 0 && (!folded || cli_now() - folded >= o->fold_every_s)) {
            struct cli f = *o;      /* ddio fold --all: a file open now is passed by */
            f.all = 1;
            f.argc = 0;
            printf("watch: ddio fold --all\n");
            fflush(stdout);
            failed |= cmd_fold(&f) != 0;
            fflush(stdout);
            folded = cli_now();
        }
        if (o->once)
            break;
        if (again) {
            ddio_client_free(cl);
            if (!(cl = cli_client(o)))
                return 1;
        }
        struct timespec ts = {(time_t)o->interval_s,
                              (long)((o->interval_s - (double)(time_t)o->interval_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    ddio_client_free(cl);
    return failed;
}
