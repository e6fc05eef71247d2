/* ddio-server command line parsing: strict, one clear line per mistake. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_log.h"
#include "ddio_net.h"

void config_defaults(struct srv_config *c)
{
    memset(c, 0, sizeof(*c));
    c->listen_port = -1;
    c->block_size = 1u << 20;
    c->buffers = 4;
    c->log_level = DDIO_LOG_INFO;
}

void config_usage(FILE *f)
{
    fprintf(f,
        "usage: ddio-server --listen HOST:PORT --root DIR [--root DIR2 ...] [options]\n"
        "  --listen HOST:PORT   address to listen on (port 0 = any free port)\n"
        "  --port-file F        write the bound port to F (atomically) after listen\n"
        "  --root DIR           storage root, one per disk (repeatable)\n"
        "  --block-size BYTES   transfer block size, multiple of 4096 (default 1048576)\n"
        "  --buffers N          aligned I/O buffers per disk (default 4)\n"
        "  --rotate             start each server's block list at a different point\n"
        "  --throttle-mbps N    emulate slow disks: each disk moves at most N MiB/s\n"
        "                       (tests and demos; default 0 = off)\n"
        "  --log-level L        error|warn|info|debug (default info)\n"
        "  --insecure           accept unauthenticated connections (testing)\n"
        "  --fault POINT:N[:kill|stop]\n"
        "                       tests: SIGKILL (or SIGSTOP) the server the N-th time it\n"
        "                       reaches POINT: open, sync, coll-read, coll-write,\n"
        "                       indep-read, indep-write (a block of that kind of XFER)\n"
        "  --help               this text\n");
}

/* strict unsigned parse with optional K/M/G suffix (powers of 1024) */
static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    if (!s || !*s || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K') shift = 10, end++;
    else if (*end == 'm' || *end == 'M') shift = 20, end++;
    else if (*end == 'g' || *end == 'G') shift = 30, end++;
    if (*end)
        return -1;
    if (shift && v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

static int set_listen(struct srv_config *c, const char *arg, char *err, size_t errlen)
{
    int port;
    if (ddio_parse_hostport(arg, c->listen_host, sizeof(c->listen_host), &port) != 0
        || port < 0 || port > 65535) {
        snprintf(err, errlen, "--listen: expected HOST:PORT, got '%s'", arg);
        return -1;
    }
    c->listen_port = port;
    return 0;
}

static int handle_opt(struct srv_config *c, int opt, const char *arg, char *err, size_t errlen)
{
    uint64_t v;
    switch (opt) {
    case 'l':
        return set_listen(c, arg, err, errlen);
    case 'p':
        c->port_file = arg;
        return 0;
    case 'r':
        if (c->nroots >= DDIO_MAX_ROOTS) {
            snprintf(err, errlen, "--root: at most %d roots", DDIO_MAX_ROOTS);
            return -1;
        }
        if (!*arg) {
            snprintf(err, errlen, "--root: empty directory name");
            return -1;
        }
        c->roots[c->nroots++] = arg;
        return 0;
    case 'b':
        if (parse_size(arg, &v) || v == 0 || v % 4096 || v > (1u << 30)) {
            snprintf(err, errlen, "--block-size: '%s' is not a multiple of 4096 in (0, 1 GiB]", arg);
            return -1;
        }
        c->block_size = v;
        return 0;
    case 'n':
        if (parse_size(arg, &v) || v == 0 || v > 1024) {
            snprintf(err, errlen, "--buffers: '%s' is not a number in 1..1024", arg);
            return -1;
        }
        c->buffers = (unsigned)v;
        return 0;
    case 'R':
        c->rotate = 1;
        return 0;
    case 'T':
        if (!*arg || arg[strspn(arg, "0123456789")] || parse_size(arg, &v) || v > 1000000) {
            snprintf(err, errlen, "--throttle-mbps: '%s' is not a number in 0..1000000", arg);
            return -1;
        }
        c->throttle_mibps = (unsigned)v;
        return 0;
    case 'L':
        c->log_level = ddio_log_parse_level(arg);
        if (c->log_level < 0) {
            snprintf(err, errlen, "--log-level: '%s' is not one of error|warn|info|debug", arg);
            return -1;
        }
        return 0;
    case 'I':
        c->insecure = 1;
        return 0;
    case 'F':
        c->fault = arg;
        return 0;
    default:
        snprintf(err, errlen, "unknown option (try --help)");
        return -1;
    }
}

int config_parse(struct srv_config *c, int argc, char **argv, char *err, size_t errlen)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"port-file", required_argument, NULL, 'p'},
        {"root", required_argument, NULL, 'r'},
        {"block-size", required_argument, NULL, 'b'},
        {"buffers", required_argument, NULL, 'n'},
        {"rotate", no_argument, NULL, 'R'},
        {"throttle-mbps", required_argument, NULL, 'T'},
        {"log-level", required_argument, NULL, 'L'},
        {"insecure", no_argument, NULL, 'I'},
        {"fault", required_argument, NULL, 'F'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    config_defaults(c);
    optind = 1;
    opterr = 0;                   /* we print our own single line */
    int opt;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (opt == 'h') {
            config_usage(stdout);
            return 1;
        }
        if (opt == '?' || opt == ':') {
            const char *bad = (optind > 0 && optind <= argc) ? argv[optind - 1] : "?";
            snprintf(err, errlen, "%s option '%s' (try --help)",
                     opt == ':' ? "missing argument for" : "unknown or malformed", bad);
            return -1;
        }
        if (handle_opt(c, opt, optarg, err, errlen))
            return -1;
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (try --help)", argv[optind]);
        return -1;
    }
    if (c->listen_port < 0) {
        snprintf(err, errlen, "--listen HOST:PORT is required");
        return -1;
    }
    if (c->nroots == 0) {
        snprintf(err, errlen, "at least one --root DIR is required");
        return -1;
    }
    return 0;
}
