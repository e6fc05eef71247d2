/* Client configuration (ddio_core_conn.h): where the server list, the secret
 * file, the timeout and the default striping come from. One set per process,
 * as the environment and $DDIO_CONFIG are: a hint given once (romio_ddio_servers,
 * romio_ddio_secret_file) is remembered for later opens without it, such as
 * the files ROMIO opens by itself (the shared file pointer's). */
#include "ddio_core_conn.h"
#include "ddio_auth.h"
#include "ddio_net.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int loaded;
    char *servers;              /* "servers = " line of $DDIO_CONFIG */
    int timeout_s;              /* "timeout = " line, 0 if none */
    long long striping_unit;    /* "striping_unit = " line, 0 if none */
    int striping_factor;        /* "striping_factor = " line, 0 if none */
    char *last_hint;            /* last romio_ddio_servers seen by this process */
    char *secret_hint;          /* last romio_ddio_secret_file seen by this process */
} cfg;

/* $DDIO_CONFIG is read once per process: jobs do not edit it under us */
static void config_load(void)
{
    char val[4096];

    if (cfg.loaded)
        return;
    cfg.loaded = 1;
    if (ddio_config_value("servers", val, sizeof(val)))
        cfg.servers = strdup(val);
    if (ddio_config_value("timeout", val, sizeof(val)))
        cfg.timeout_s = atoi(val);
    if (ddio_config_value("striping_unit", val, sizeof(val))) {
        char *end;
        long long v = strtoll(val, &end, 10);
        if (*end == 'k' || *end == 'K')
            v <<= 10, end++;
        else if (*end == 'm' || *end == 'M')
            v <<= 20, end++;
        /* the layout's unit is a 32-bit hint in ROMIO: at most 1 GiB */
        cfg.striping_unit = !*end && v > 0 && v <= (1LL << 30) ? v : 0;
    }
    if (ddio_config_value("striping_factor", val, sizeof(val)))
        cfg.striping_factor = atoi(val) > 0 ? atoi(val) : 0;
}

void ddio_config_striping(long long *unit, int *factor)
{
    config_load();
    *unit = cfg.striping_unit;
    *factor = cfg.striping_factor;
}

void ddio_secret_hint(const char *hint)
{
    if (hint && *hint && (!cfg.secret_hint || strcmp(cfg.secret_hint, hint))) {
        free(cfg.secret_hint);
        cfg.secret_hint = strdup(hint);
    }
}

const char *ddio_secret_hint_get(void)
{
    return cfg.secret_hint;
}

int ddio_timeout_ms(int hint_s)
{
    const char *env = getenv("DDIO_TIMEOUT");
    int s = hint_s;

    if (s <= 0 && env && atoi(env) > 0)
        s = atoi(env);
    if (s <= 0) {
        config_load();
        s = cfg.timeout_s;
    }
    if (s <= 0)
        s = DDIO_DFLT_TIMEOUT_S;
    if (s > 24 * 3600)
        s = 24 * 3600;
    return s * 1000;
}

int ddio_recover_ms(int hint_s, int timeout_ms)
{
    const char *env = getenv("DDIO_RECOVER_TIMEOUT");
    int s = hint_s;

    if (s < 0 && env && *env)
        s = atoi(env);
    if (s < 0)
        return timeout_ms;      /* default: as long as any other wait */
    if (s > 24 * 3600)
        s = 24 * 3600;
    return s * 1000;
}

uint64_t ddio_ordered_window(void)
{
    const char *env = getenv("DDIO_ORDERED_WINDOW");
    long long v = env ? atoll(env) : 0;
    return v > 0 ? (uint64_t) v : DDIO_ORDERED_WINDOW_DFLT;
}

static int on_unless_zero(int hint, const char *var)
{
    const char *env = getenv(var);
    if (hint >= 0)
        return hint;
    return !(env && *env && atoi(env) == 0);
}

int ddio_local_read_on(int hint)
{
    return on_unless_zero(hint, "DDIO_LOCAL_READ");
}

int ddio_local_write_on(int hint)
{
    return on_unless_zero(hint, "DDIO_LOCAL_WRITE");
}

void ddio_free_list(char **list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

static int split_list(const char *spec, char ***list, int *n, struct ddio_err *e)
{
    char *copy = strdup(spec), *save = NULL, *tok;
    char host[256];
    int port;

    *list = calloc(DDIO_MAX_SERVERS, sizeof(char *));
    *n = 0;
    if (!copy || !*list) {
        free(copy);
        ddio_err_set(e, ENOMEM, "ddio: out of memory parsing the server list");
        return -1;
    }
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *t = ddio_trim(tok);
        if (!*t)
            continue;
        if (*n == (int) DDIO_MAX_SERVERS || ddio_parse_hostport(t, host, sizeof(host), &port)) {
            ddio_err_set(e, EDESTADDRREQ, "ddio: bad server address '%s' in '%s' "
                               "(expected host:port, at most %u servers)", t, spec,
                               DDIO_MAX_SERVERS);
            break;
        }
        (*list)[(*n)++] = strdup(t);
    }
    free(copy);
    if (e->errnum || *n == 0) {
        if (!e->errnum)
            ddio_err_set(e, EDESTADDRREQ, "ddio: empty server list '%s'", spec);
        ddio_free_list(*list, *n);
        *list = NULL;
        *n = 0;
        return -1;
    }
    return 0;
}

int ddio_server_list(const char *hint, char ***list, int *n, struct ddio_err *e)
{
    const char *spec = hint, *env = getenv("DDIO_SERVERS");

    if (hint && *hint) {
        /* remembered so that files opened without hints by ROMIO itself (the
         * hidden shared-file-pointer file, delete on close) reach the same
         * servers */
        if (!cfg.last_hint || strcmp(cfg.last_hint, hint)) {
            free(cfg.last_hint);
            cfg.last_hint = strdup(hint);
        }
    } else if (env && *env)
        spec = env;
    else {
        config_load();
        spec = cfg.servers ? cfg.servers : cfg.last_hint;
    }
    if (!spec || !*spec) {
        ddio_err_set(e, EDESTADDRREQ, "ddio: no servers given: set the hint "
                           "romio_ddio_servers or DDIO_SERVERS=host:port,... or a "
                           "DDIO_CONFIG file with a 'servers = host:port,...' line");
        return -1;
    }
    return split_list(spec, list, n, e);
}

