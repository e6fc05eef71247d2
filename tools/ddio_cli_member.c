/* tools/ddio member: the deployment's membership (DESIGN.md 6.1 "Who is
 * out is decided once"): shown, or a server declared out or in again by a
 * majority of the servers. Also the line `ddio status` starts with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_cli.h"
#include "ddio_core_member.h"

/* "out"/"in" of list server i, and whether it answered */
static const char *state(const struct ddio_members *m, int i)
{
    if (m->val.n == 0)
        return "in (no epoch agreed yet)";
    return m->val.out[i] ? "out" : "in";
}

void cli_member_line(struct ddio_client *cl, FILE *f, int json)
{
    struct ddio_members *m = calloc(1, sizeof(*m));
    char msg[DDIO_CLIENT_MSG_LEN];
    if (!m || ddio_client_members(cl, m, msg, sizeof msg)) {
        if (json)
            fprintf(f, "null");
        else
            fprintf(f, "membership: unknown (%s)\n", m ? msg : "out of memory");
        free(m);
        return;
    }
    fprintf(f, json ? "{\"epoch\": %u, \"out\": [" : "membership: epoch %u, out:", m->epoch);
    int nout = 0;
    for (int i = 0; i < m->n && m->val.n; i++)
        if (m->val.out[i]) {
            fputs(json ? (nout ? ", " : "") : " ", f);
            if (json)
                cli_json_str(f, ddio_client_server_addr(cl, i));
            else
                fprintf(f, "%s", ddio_client_server_addr(cl, i));
            nout++;
        }
    fputs(json ? "]}" : nout ? "\n" : " none\n", f);
    free(m);
}

static void show(struct ddio_client *cl, const struct ddio_members *m, int json)
{
    if (json)
        printf("{\"epoch\": %u, \"servers\": [", m->epoch);
    else
        printf("epoch %u\n", m->epoch);
    for (int i = 0; i < m->n; i++) {
        const char *addr = ddio_client_server_addr(cl, i);
        if (json) {
            printf("%s{\"server\": ", i ? ", " : "");
            cli_json_str(stdout, addr);
            printf(", \"out\": %s, \"reached\": %s}", m->val.n && m->val.out[i] ? "true" : "false",
                   m->reached[i] ? "true" : "false");
        } else
            printf("server %d %s %s%s\n", i, addr, state(m, i),
                   m->reached[i] ? "" : " (unreachable)");
    }
    if (json)
        printf("]}\n");
}

/* a server operand: its index in the list, or its HOST:PORT there */
static int server_of(struct ddio_client *cl, const char *s)
{
    int n = ddio_client_nservers(cl);
    for (int i = 0; i < n; i++)
        if (strcmp(s, ddio_client_server_addr(cl, i)) == 0)
            return i;
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end && v >= 0 && v < n ? (int)v : -1;
}

/* out alone unless forced: a second server out could leave a mirrored
 * file's unit with no copy in */
static int set_how(const struct cli *o)
{
    if (strcmp(o->argv[0], "out"))
        return DDIO_MEMBER_IN;
    return o->force ? DDIO_MEMBER_OUT : DDIO_MEMBER_OUT_ALONE;
}

int cmd_member(struct cli *o)
{
    int change = o->argc > 0;
    if (change && (o->argc != 2 || (strcmp(o->argv[0], "out") && strcmp(o->argv[0], "in"))))
        return cli_usage_error("member: expected nothing, or 'out [--force] SERVER' / "
                               "'in SERVER' "
                               "(try ddio --help)");
    struct ddio_client *cl = cli_client(o);
    if (!cl)
        return 1;
    struct ddio_members *m = calloc(1, sizeof(*m));
    char msg[DDIO_CLIENT_MSG_LEN] = "out of memory";
    int who = change ? server_of(cl, o->argv[1]) : 0;
    int rc = m ? 0 : -1;
    if (rc == 0 && who < 0) {
        snprintf(msg, sizeof msg, "member: no server '%s' in the list", o->argv[1]);
        rc = -1;
    }
    /* in again: first brought up to date from what the others noted, and
     * declared in by the resync itself */
    int resynced = 0;
    if (rc == 0 && change && !strcmp(o->argv[0], "in")
        && (rc = ddio_client_members(cl, m, msg, sizeof msg)) == 0 && m->val.n
        && m->val.out[who]) {
        resynced = 1;
        if (cli_resync(o, who, m)) {
            snprintf(msg, sizeof msg, m->val.out[who]
                     ? "member: server %d stays out: its resync did not finish (run ddio "
                       "member in again)"
                     : "member: server %d is in, but a file noted while it was declared in "
                       "was not resynced (above)", who);
            rc = -1;
        }
    }
    if (rc == 0 && !resynced)
        rc = change ? ddio_client_member_set(cl, who, set_how(o), m, msg, sizeof msg)
                    : ddio_client_members(cl, m, msg, sizeof msg);
    if (rc == 0)
        show(cl, m, o->json);
    free(m);
    ddio_client_free(cl);
    return rc ? cli_fail("%s", msg) : 0;
}
