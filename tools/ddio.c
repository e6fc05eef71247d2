/* ddio: the administration tool. Options, help and dispatch; the commands
 * are in ddio_cli_ns.c (ls, stat, rm, mkdir, mv, layout), ddio_cli_cp.c (cp)
 * and ddio_cli_status.c (status, stats), shared helpers in ddio_cli_util.c.
 *
 * Options may come before or after the command (`ddio -s H:P ls` and
 * `ddio ls -s H:P` are the same), so the existing `ddio stats -s ... KEY`
 * form used by tests and benchmarks keeps working. A mistake in the command
 * line is one line on stderr and exit status 2. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_auth.h"
#include "ddio_cli.h"
#include "ddio_net.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: ddio [options] COMMAND [ARGS...]\n"
        "\n"
        "Administer the ddio servers and copy files in and out of the ddio namespace.\n"
        "A ddio file is written ddio:/path (ls, stat, rm, mkdir, mv and layout also take a\n"
        "plain /path).\n"
        "\n"
        "commands:\n"
        "  ls [-l] [PATH]       list a directory (default /); -l: type, mode, size, mtime\n"
        "  stat PATH            type, size, mode, mtime and stripe of a file or directory\n"
        "  rm PATH              remove a file, or an empty directory\n"
        "  mkdir PATH           make a directory (on every server)\n"
        "  mv FROM TO           rename a file or directory (TO replaced if it is a file)\n"
        "  chmod MODE PATH      set the permission bits (octal) of a file or directory\n"
        "  chown UID[:GID] PATH set the owner (and group); numeric ids\n"
        "  layout FILE          stripe unit, stripe count, and per stripe its server and\n"
        "                       the bytes it holds (they add up to the file size)\n"
        "  cp SRC DST           copy a local file to ddio:/path or back, striped and in\n"
        "                       parallel (one thread per server); a progress bar on stderr\n"
        "                       when it is a terminal; checks the size at the end and\n"
        "                       prints bytes, seconds and MiB/s\n"
        "  status               per server: uptime, connections, calls in flight, bytes\n"
        "                       read and written, per-disk throughput and queue depth,\n"
        "                       free space of each storage root\n"
        "  stats [KEY...]       every server's raw counters, \"HOST:PORT KEY VALUE\" lines\n"
        "  scrub PATH | --all   read every sector of every copy of a file (--all: of\n"
        "                       every file) and check it against its checksum; a bad\n"
        "                       sector of a mirrored file is rewritten from a copy that\n"
        "                       reads right. One line per file (verified, unknown: no\n"
        "                       checksum, bad, repaired, unrepairable); exit status 1\n"
        "                       when a bad sector could not be repaired. A mirrored\n"
        "                       file a failed write left in doubt (ddio status) first\n"
        "                       has its copies made to agree (read, written back)\n"
        "  fold PATH | --all    fold an erasure-coded file's partial groups (held as\n"
        "                       copies in the overlays) into parity: its parity made\n"
        "                       that of the merged data, then the data laid in place;\n"
        "                       the file fenced meanwhile (a file open now is passed\n"
        "                       by). A fold cut off is finished by running it again\n"
        "  rebuild --server N   after server N was lost and a fresh one started in its\n"
        "                       place (ddio-server --replacement, same address): copy\n"
        "                       onto it every mirrored file it held, from the copies,\n"
        "                       and every erasure-coded one's part (its units decoded);\n"
        "                       one line per file, progress on stderr; a second run\n"
        "                       skips what is done. Exit status 1 when a file could\n"
        "                       not be rebuilt (a `none` file it held is lost)\n"
        "  member [out [--force]|in SERVER]\n"
        "                       the servers' membership: its epoch and who is out; with\n"
        "                       out/in, SERVER (its index in the list, or HOST:PORT) is\n"
        "                       declared out of it, or in again, by a majority of the\n"
        "                       servers (mirrored files are refused by an out server);\n"
        "                       out is refused while another server is out, unless\n"
        "                       --force\n"
        "  watch                run the repairs when due, every --interval: a server\n"
        "                       unreachable for --grace seconds is declared out (not\n"
        "                       while another is out); a --replacement at a server's\n"
        "                       address is rebuilt onto (rebuild --server N); a server\n"
        "                       out and reachable for --grace is resynced (member in);\n"
        "                       every --fold-every seconds, fold --all. A line per\n"
        "                       action. Until killed, or one pass: --once\n"
        "\n"
        "options:\n"
        "  -s, --servers HOST:PORT,...\n"
        "                       the ddio servers, in stripe order (default: $DDIO_SERVERS,\n"
        "                       else the 'servers =' line of $DDIO_CONFIG)\n"
        "      --secret-file F  the shared secret: a file owned by you, mode 0600\n"
        "                       (default: $DDIO_SECRET_FILE, else the 'secret_file =' line\n"
        "                       of $DDIO_CONFIG)\n"
        "  -t, --timeout S      seconds any wait may take before the command fails\n"
        "                       (default: $DDIO_TIMEOUT, else 'timeout =' of $DDIO_CONFIG,\n"
        "                       else 30; status and stats: 5, so a server that is down\n"
        "                       is reported as such without waiting for it to restart)\n"
        "      --json           ls, stat, layout, status, member: print JSON\n"
        "  -l                   ls: long listing\n"
        "  -u, --stripe-unit B  cp: stripe unit of a new ddio file in bytes, K/M/G\n"
        "                       suffixes (default 1M)\n"
        "  -r, --redundancy M   cp: redundancy of a new ddio file: none, mirror,\n"
        "                       mirror:3 or ec:K+M (K+M servers; default: the servers')\n"
        "      --progress, --no-progress\n"
        "                       cp: force the progress bar on or off\n"
        "      --buffered       cp out of ddio: write the local file through the page\n"
        "                       cache and do not sync it, as cp(1) (default: writeback\n"
        "                       started as it is written, then fdatasync, so the copy\n"
        "                       is durable when it ends, as a copy into ddio is)\n"
        "  -i, --interval S     status: seconds between the two samples throughput is\n"
        "                       measured over (default 1; 0: one sample, averages since\n"
        "                       start); watch: seconds between passes (default 1)\n"
        "      --grace S        watch: how long a server is unreachable, or out and\n"
        "                       back, before it is acted on (default 60)\n"
        "      --once           watch: one pass, then exit (with --grace 0: act now)\n"
        "      --fold-every S   watch: seconds between folds of every erasure-coded\n"
        "                       file (default 3600, the first at the start; 0: never)\n"
        "      --rate MB/s      scrub: read at most this many MB (10^6 bytes) a second\n"
        "                       (default: no limit); rebuild: copy at most this many\n"
        "                       (default: a quarter of what the replacement measured\n"
        "                       of its disks at its start, else 50)\n"
        "      --server N       rebuild: the replacement's index in the server list\n"
        "      --all            scrub, fold: every file of the namespace\n"
        "      --force          member out: even with another server out already\n"
        "  -h, --help           this text\n"
        "\n"
        "exit status: 0 ok, 1 a command failed (the cause on stderr), 2 a usage error.\n");
}

/* which options each command takes (beyond the shared -s, --secret-file, -t) */
struct command {
    const char *name;
    int (*fn)(struct cli *);
    const char *opts;         /* short names of the options it accepts */
    int min_args, max_args;   /* operands; -1: any */
};
static const struct command commands[] = {
    {"ls", cmd_ls, "lj", 0, 1},
    {"stat", cmd_stat, "j", 1, 1},
    {"rm", cmd_rm, "", 1, 1},
    {"mkdir", cmd_mkdir, "", 1, 1},
    {"mv", cmd_mv, "", 2, 2},
    {"chmod", cmd_chmod, "", 2, 2},
    {"chown", cmd_chown, "", 2, 2},
    {"layout", cmd_layout, "j", 1, 1},
    {"cp", cmd_cp, "uPNBr", 2, 2},
    {"status", cmd_status, "ji", 0, 0},
    {"stats", cmd_stats, "", 0, -1},
    {"scrub", cmd_scrub, "RA", 0, 1},
    {"fold", cmd_fold, "A", 0, 1},
    {"watch", cmd_watch, "iGOE", 0, 0},
    {"rebuild", cmd_rebuild, "RS", 0, 0},
    {"member", cmd_member, "jF", 0, 2},
};

enum { OPT_SECRET = 1000, OPT_JSON = 'j', OPT_PROGRESS = 'P', OPT_NOPROGRESS = 'N',
       OPT_BUFFERED = 'B', OPT_RATE = 'R', OPT_ALL = 'A', OPT_SERVER = 'S', OPT_FORCE = 'F',
       OPT_GRACE = 'G', OPT_ONCE = 'O', OPT_FOLD_EVERY = 'E' };
static const struct option long_opts[] = {
    {"servers", required_argument, NULL, 's'},
    {"secret-file", required_argument, NULL, OPT_SECRET},
    {"timeout", required_argument, NULL, 't'},
    {"json", no_argument, NULL, OPT_JSON},
    {"stripe-unit", required_argument, NULL, 'u'},
    {"redundancy", required_argument, NULL, 'r'},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NOPROGRESS},
    {"buffered", no_argument, NULL, OPT_BUFFERED},
    {"interval", required_argument, NULL, 'i'},
    {"rate", required_argument, NULL, OPT_RATE},
    {"all", no_argument, NULL, OPT_ALL},
    {"server", required_argument, NULL, OPT_SERVER},
    {"force", no_argument, NULL, OPT_FORCE},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"once", no_argument, NULL, OPT_ONCE},
    {"fold-every", required_argument, NULL, OPT_FOLD_EVERY},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
#define SHORT_OPTS ":s:t:lu:i:hr:"

/* a number of seconds: the whole string, finite, within [lo, hi] */
static int parse_seconds(const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* bytes with an optional K/M/G suffix (powers of 1024) */
static int parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K') shift = 10, end++;
    else if (*end == 'm' || *end == 'M') shift = 20, end++;
    else if (*end == 'g' || *end == 'G') shift = 30, end++;
    if (errno || end == s || *end || v == 0 || v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

/* every entry HOST:PORT with a port in 1..65535 */
static int check_servers(const char *list)
{
    char *copy = strdup(list), *save = NULL, host[256];
    int port, rc = copy && *copy ? 0 : -1;
    for (char *s = copy ? strtok_r(copy, ",", &save) : NULL; s && !rc;
         s = strtok_r(NULL, ",", &save))
        if (ddio_parse_hostport(s, host, sizeof host, &port) || port < 1 || port > 65535)
            rc = -1;
    free(copy);
    return rc;
}

/* command options given before the command, and how they were spelled */
static char early_opts[16];
static const char *early_names[16];

/* one option; the command (NULL before it is known) must take it */
static int take_opt(struct cli *o, const struct command *cmd, int c, const char *arg,
                    const char *optname)
{
    if (cmd && strchr("lujPNBiRASGOE", c) && !strchr(cmd->opts, c))
        return cli_usage_error("%s: option '%s' does not apply to '%s' (try ddio --help)",
                               cmd->name, optname, cmd->name);
    if (!cmd && strchr("lujPNBiRASGOE", c)) {    /* before the command: checked once it is known */
        size_t n = strlen(early_opts);
        if (n + 1 < sizeof early_opts) {
            early_opts[n] = (char)c;
            early_names[n] = optname;
        }
    }
    switch (c) {
    case 's': o->servers = arg; return 0;
    case OPT_SECRET:
        if (!*arg)
            return cli_usage_error("--secret-file: empty file name");
        o->secret_file = arg;
        return 0;
    case 't':
        if (parse_seconds(arg, 0.001, 86400 * 365, &o->timeout_s))
            return cli_usage_error("--timeout: '%s' is not a number of seconds > 0", arg);
        return 0;
    case 'j': o->json = 1; return 0;
    case 'l': o->longfmt = 1; return 0;
    case 'u':
        if (parse_bytes(arg, &o->unit))
            return cli_usage_error("--stripe-unit: '%s' is not a size in bytes > 0 "
                                   "(K/M/G suffixes)", arg);
        return 0;
    case 'r':
        if ((o->redundancy = ddio_redundancy_parse(arg)) == DDIO_REDUNDANCY_BAD)
            return cli_usage_error("--redundancy: '%s' is not none, mirror, mirror:3 or "
                                   "ec:K+M", arg);
        return 0;
    case 'P': o->progress = 1; return 0;
    case 'N': o->progress = 0; return 0;
    case 'B': o->buffered = 1; return 0;
    case 'A': o->all = 1; return 0;
    case 'F': o->force = 1; return 0;
    case 'S': {
        char *end;
        errno = 0;
        long v = strtol(arg, &end, 10);
        if (!*arg || *end || errno || v < 0 || v >= (long)DDIO_MAX_SERVERS)
            return cli_usage_error("--server: '%s' is not a server index (0, 1, ...)", arg);
        o->server_index = (int)v;
        return 0;
    }
    case 'R':
        if (parse_seconds(arg, 0.001, 1e6, &o->rate_mb))
            return cli_usage_error("--rate: '%s' is not a number of MB/s in 0.001..1000000",
                                   arg);
        return 0;
    case 'G':
        if (parse_seconds(arg, 0, 86400 * 30, &o->grace_s))
            return cli_usage_error("--grace: '%s' is not a number of seconds in 0..2592000",
                                   arg);
        return 0;
    case 'O': o->once = 1; return 0;
    case 'E':
        if (parse_seconds(arg, 0, 86400 * 30, &o->fold_every_s))
            return cli_usage_error("--fold-every: '%s' is not a number of seconds in "
                                   "0..2592000", arg);
        return 0;
    case 'i':
        if (parse_seconds(arg, 0, 3600, &o->interval_s))
            return cli_usage_error("--interval: '%s' is not a number of seconds in 0..3600",
                                   arg);
        return 0;
    }
    return cli_usage_error("internal: option %c", c);
}

/* getopt over argv[from..]: stop_at_operand for the options before the command */
static int parse_opts(struct cli *o, const struct command *cmd, int argc, char **argv,
                      int stop_at_operand, int *help)
{
    char shorts[64];
    snprintf(shorts, sizeof shorts, "%s%s", stop_at_operand ? "+" : "", SHORT_OPTS);
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
        const char *name = argv[optind - 1];
        if (c == 'h') {
            *help = 1;
            continue;
        }
        if (c == '?') {
            char shortname[3] = {'-', (char)optopt, 0};
            return cli_usage_error("unknown option '%s' (try ddio --help)",
                                   optopt > 0 && optopt < 256 ? shortname : name);
        }
        if (c == ':')
            return cli_usage_error("option '%s' needs a value (try ddio --help)", name);
        if (take_opt(o, cmd, c, optarg, name))
            return 2;
    }
    return 0;
}

/* defaults from the environment and DDIO_CONFIG, as the driver takes them */
static int apply_defaults(struct cli *o)
{
    static char cfg_servers[8192];
    char v[64];
    if (!o->servers && getenv("DDIO_SERVERS") && *getenv("DDIO_SERVERS"))
        o->servers = getenv("DDIO_SERVERS");
    if (!o->servers && ddio_config_value("servers", cfg_servers, sizeof cfg_servers))
        o->servers = cfg_servers;
    if (o->timeout_s == 0) {
        const char *t = getenv("DDIO_TIMEOUT");
        if (!(t && *t) && ddio_config_value("timeout", v, sizeof v))
            t = v;
        if (t && *t && parse_seconds(t, 0.001, 86400 * 365, &o->timeout_s))
            return cli_usage_error("DDIO_TIMEOUT: '%s' is not a number of seconds > 0", t);
        if (o->timeout_s == 0) {
            o->timeout_s = 30;
            o->timeout_default = 1;
        }
    }
    if (!o->servers || !*o->servers)
        return cli_usage_error("no servers: pass -s HOST:PORT,... or set DDIO_SERVERS "
                               "(or DDIO_CONFIG)");
    if (check_servers(o->servers))
        return cli_usage_error("--servers: '%s' is not a list HOST:PORT,... (ports 1..65535)",
                               o->servers);
    return 0;
}

int main(int argc, char **argv)
{
    struct cli o = {.progress = -1, .interval_s = 1, .server_index = -1, .grace_s = 60,
                  .fold_every_s = 3600};
    int help = 0;

    optind = 0;               /* 0: glibc re-reads the ordering flag ("+") of the option string */
    if (parse_opts(&o, NULL, argc, argv, 1, &help))
        return 2;
    if (optind >= argc) {
        if (help) {
            usage(stdout);
            return 0;
        }
        return cli_usage_error("no command given (try ddio --help)");
    }
    const char *name = argv[optind];
    const struct command *cmd = NULL;
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            cmd = &commands[i];
    if (!cmd && !help)
        return cli_usage_error("unknown command '%s' (try ddio --help)", name);
    /* the rest: options anywhere, operands in order (getopt permutes them to
     * the end); "--" ends the options */
    int rest = argc - optind;
    char **rv = argv + optind;        /* rv[0] is the command, getopt's "program" */
    optind = 0;               /* 0: glibc re-reads the ordering flag ("+") of the option string */
    if (parse_opts(&o, cmd, rest, rv, 0, &help))
        return 2;
    if (help) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; early_opts[i]; i++)
        if (!strchr(cmd->opts, early_opts[i]))
            return cli_usage_error("%s: option '%s' does not apply to '%s' (try ddio --help)",
                                   cmd->name, early_names[i], cmd->name);
    o.argc = rest - optind;
    o.argv = rv + optind;
    if (o.argc < cmd->min_args || (cmd->max_args >= 0 && o.argc > cmd->max_args))
        return cli_usage_error("%s: expected %s (try ddio --help)", cmd->name,
                               cmd->min_args == cmd->max_args
                                   ? (cmd->min_args == 1 ? "one operand" : "two operands")
                                   : cmd->max_args == 0 ? "no operands" : "at most one operand");
    if (apply_defaults(&o))
        return 2;
    return cmd->fn(&o);
}
