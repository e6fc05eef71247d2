/* ddio-server command line parsing: strict, one clear line per mistake. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ddio_desc.h"
#include "ddio_layout.h"
#include "ddio_log.h"
#include "ddio_net.h"
#include "ddio_tls.h"
#include "ddio_ucx.h"

void config_defaults(struct srv_config *c)
{
    memset(c, 0, sizeof(*c));
    c->listen_port = -1;
    c->root_squash = 1;
    c->admin_uid = -1;
    c->block_size = 1u << 20;
    c->buffers = 4;
    c->log_level = DDIO_LOG_INFO;
    c->max_conns = 1024;
    c->max_unauth = 64;
    c->auth_timeout_s = 10;
    c->max_msg = DDIO_MAX_PAYLOAD;
    c->max_desc = 16u << 20;      /* irregular types flattened to lists reach MiBs */
    c->max_depth = DDIO_DESC_MAX_DEPTH;
    c->max_call_mem = 1u << 30;
    c->max_inflight = 64;
    c->stop_timeout_s = 30;
    c->lock_grace_ms = 3000;
    c->page_cache = 1;
    c->checksums = SUMS_MIRRORED;
    c->copies = 1;
}

void config_usage(FILE *f)
{
    fprintf(f,
        "usage: ddio-server --listen HOST:PORT --root DIR [--root DIR2 ...] [options]\n"
        "       ddio-server --config FILE [options]\n"
        "  --config FILE        read settings from FILE first: one 'option = value' per\n"
        "                       line, any long option below without its dashes ('#'\n"
        "                       starts a comment); flags on the command line override\n"
        "                       it (--root flags replace the file's roots)\n"
        "  --listen HOST:PORT   address to listen on (port 0 = any free port, auto = a\n"
        "                       free port below the ephemeral range); clients\n"
        "                       list it in their servers (-s/--servers, DDIO_SERVERS)\n"
        "  --port-file F        write the bound port to F (atomically) after listen\n"
        "  --root DIR           storage root, one per disk (repeatable)\n"
        "  --block-size BYTES   transfer block size, multiple of 4096 (default 1048576)\n"
        "  --buffers N          aligned I/O buffers per disk (default 4)\n"
        "  --rotate             start each server's block list at a different point\n"
        "  --page-cache on|off  on (default): independent I/O of any size and collective\n"
        "                       reads of data the page cache holds go through it (hot\n"
        "                       re-reads from memory); collective writes and cold\n"
        "                       collective reads stay O_DIRECT but for a rank's one-range\n"
        "                       part shorter than DDIO_STREAM_MIN (1/64 of memory).\n"
        "                       off: only I/O of at most\n"
        "                       64 KiB of a block goes through the page cache\n"
        "  --redundancy MODE    none (default) | mirror | mirror:3: the copies of a file\n"
        "                       created without a mode of its own (romio_ddio_redundancy,\n"
        "                       ddio cp, the mount); every server of a layout must have\n"
        "                       the same; a file on fewer servers gets as many as fit\n"
        "  --replacement        this server, on an empty root, replaces a lost one: it\n"
        "                       refuses opens until `ddio rebuild --server N` gives it\n"
        "                       the lost server's id (kept after that)\n"
        "  --checksums on|off|mirrored\n"
        "                       on: a CRC32C per 4 KiB sector of every block written,\n"
        "                       checked at every read from disk (a mismatch: read from\n"
        "                       a copy, or the read fails); kept under each root's\n"
        "                       .ddio/sums/; same-host clients then go through the\n"
        "                       server. mirrored (default): for files with copies\n"
        "                       only. off: none, as before\n"
        "  --throttle-mbps N    emulate slow disks: each disk moves at most N MiB/s\n"
        "                       (tests and demos; default 0 = off)\n"
        "  --log-level L        error|warn|info|debug (default info); debug logs one line\n"
        "                       per XFER with its counters (blocks, bytes, time)\n"
        "  --syslog             log to syslog (facility daemon) instead of stderr\n"
        "  --stop-timeout S     on SIGTERM/SIGINT stop accepting, let calls in flight\n"
        "                       finish for at most S seconds, then exit 0 (default 30;\n"
        "                       a second signal stops at once)\n"
        "  --lock-grace MS      after a restart, or a connection holding byte-range\n"
        "                       locks dropped, grant only their holders' reclaims for\n"
        "                       MS milliseconds; other locks wait (default 3000; 0: off)\n"
        "  --transport T        auto|ucx|tcp: offer clients UCX for XFER data (active\n"
        "                       messages received straight into place); auto (default):\n"
        "                       where UCX has a one-copy path (RDMA device, or cross-\n"
        "                       memory attach for local clients); ucx: always (no\n"
        "                       UCX: refuse to start); tcp: never\n"
        "  --secret-file F      the shared secret: a file owned by you, mode 0600;\n"
        "                       clients must prove they hold it (HMAC-SHA-256\n"
        "                       challenge-response). Required unless --insecure\n"
        "  --insecure           no authentication: anyone who reaches the port reads and\n"
        "                       writes every file (local experiments only)\n"        "  --auth MODE          secret (default: --secret-file), munge (each connection\n"
        "                       proves its uid and gid with a MUNGE credential; no\n"
        "                       secret file) or none (= --insecure)\n"
        "  --munge-socket PATH  munged's socket (default: libmunge's own)\n"        "  --root-squash on|off with --auth munge: clients' uid 0 acts as nobody\n"
        "                       (65534; default on)\n"
        "  --admin-uid N        with --auth munge: this uid may read, write, remove,\n"
        "                       chmod and chown everything (default: none)\n"        "  --mount-hosts A,...  with --auth munge: IPv4 addresses of hosts whose root\n"
        "                       may act for other users (ddio-fuse --as-caller)\n"
        "  --tls MODE           off (default), optional or required: TCP connections\n"
        "                       run over TLS 1.3 (clients: DDIO_TLS=on); required\n"
        "                       refuses plain clients, and UCX from other hosts\n"
        "  --tls-cert FILE      the server's certificate chain (PEM)\n"
        "  --tls-key FILE       its private key (PEM)\n"
        "  --fault POINT:N[:kill|stop|short|drop|crash|pause]\n"
        "                       tests: SIGKILL (or SIGSTOP) the server the N-th time it\n"
        "                       reaches POINT: open, sync, coll-read, coll-write,\n"
        "                       indep-read, indep-write (a block of that kind of XFER),\n"
        "                       direct-send (a reply sent without the writer thread),\n"
        "                       close, created (an OPEN that created its file, before\n"
        "                       the answer), create-half (a create's layout record\n"
        "                       written, its datafiles not yet), sums (a flush of\n"
        "                       checksums, before they are written), fold (a fold's\n"
        "                       XFER of an erasure-coded file, before it writes: its\n"
        "                       parity step, then its data step);\n"
        "                       direct-send:N:short cuts every such send from the N-th\n"
        "                       on, so the writer thread sends the rest;\n"
        "                       done:N:drop closes the connection instead of sending\n"
        "                       the N-th successful XFER DONE (a lost answer);\n"
        "                       done:N:crash SIGKILLs the server in place of sending it\n"
        "                       (the write done, its answer unsent);\n"
        "                       done:N:kill SIGKILLs the server 0.2 s after sending it;\n"
        "                       let-go:N:pause sleeps 2 s between each reply of a\n"
        "                       request holding a file (sync, preallocate, lock, a\n"
        "                       degraded read, scrub) and its letting go of the file,\n"
        "                       from the N-th on\n"
        "limits (a client exceeding one gets a clear error; others are not affected):\n"
        "  --max-connections N  connections at once (default 1024)\n"
        "  --max-unauth N       connections not yet authenticated; the oldest is closed\n"
        "                       to make room for a new one (default 64)\n"
        "  --auth-timeout S     seconds a connection has to authenticate (default 10)\n"
        "  --max-message BYTES  request payload size (default 64M)\n"
        "  --max-desc BYTES     encoded descriptor size in one XFER (default 16M)\n"
        "  --max-desc-depth N   descriptor nesting depth, 1..16 (default 16)\n"
        "  --max-call-memory B  memory for one XFER's descriptors and block plan\n"
        "                       (default 1G)\n"
        "  --max-inflight N     requests waiting at once per connection (default 64)\n"
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
    const char *colon = strrchr(arg, ':');
    if (colon && strcmp(colon + 1, "auto") == 0) {
        char hp[300];
        snprintf(hp, sizeof(hp), "%.*s:0", (int)(colon - arg), arg);
        if (ddio_parse_hostport(hp, c->listen_host, sizeof(c->listen_host), &port) != 0)
            goto bad;
        c->listen_port = LISTEN_PORT_AUTO;
        return 0;
    }
    if (ddio_parse_hostport(arg, c->listen_host, sizeof(c->listen_host), &port) != 0
        || port < 0 || port > 65535)
        goto bad;
    c->listen_port = port;
    return 0;
bad:
    snprintf(err, errlen, "--listen: '%s' is not HOST:PORT (port 0..65535 or auto)", arg);
    return -1;
}

static int limit_opt(struct srv_config *c, int opt, const char *arg, char *err, size_t errlen);

/* --redundancy: the layouts' names (ddio_layout.h); erasure coding is
 * chosen per file (its K+M is its stripe count), refused here by name
 * rather than as a typo */
static int redundancy(struct srv_config *c, const char *arg, char *err, size_t errlen)
{
    int v = ddio_redundancy_parse(arg);
    if (v > 0 && ddio_redundancy_ec_k((uint32_t)v)) {
        snprintf(err, errlen, "--redundancy: '%s': erasure coding is chosen per file "
                 "(romio_ddio_redundancy), not as a server's default (none, mirror or "
                 "mirror:3)", arg);
        return -1;
    }
    if (v < 1) {
        snprintf(err, errlen, "--redundancy: '%s' is not one of none|mirror|mirror:3", arg);
        return -1;
    }
    c->copies = (unsigned)v;
    return 0;
}

/* yes/no values of the flag options (rotate, insecure) and of --page-cache */
static int parse_bool(const char *v)
{
    static const char *const yes[] = {"1", "yes", "true", "on"}, *const no[] = {"0", "no", "false", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(v, yes[i]))
            return 1;
        if (!strcasecmp(v, no[i]))
            return 0;
    }
    return -1;
}

/* an on|off flag's value into *field (left at on when not one), or -1 and err */
static int on_off(int *field, const char *flag, const char *arg, char *err, size_t errlen)
{
    int b = parse_bool(arg);
    *field = b < 0 ? 1 : b;
    if (b < 0)
        snprintf(err, errlen, "%s: '%s' is not on or off", flag, arg);
    return b < 0 ? -1 : 0;
}

/* on|off, or mirrored: sums for the files with copies, where a bad sector
 * is served from a good one (none files keep the same-host shortcuts) */
static int set_checksums(struct srv_config *c, const char *arg, char *err, size_t errlen)
{
    if (!strcmp(arg, "mirrored")) {
        c->checksums = SUMS_MIRRORED;
        return 0;
    }
    int b = parse_bool(arg);
    if (b < 0) {
        snprintf(err, errlen, "--checksums: '%s' is not on, off or mirrored", arg);
        return -1;
    }
    c->checksums = b ? SUMS_ON : SUMS_OFF;
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
    case 'V':
        c->replacement = 1;
        return 0;
    case 'K':
        return on_off(&c->page_cache, "--page-cache", arg, err, errlen);
    case 'J':
        return set_checksums(c, arg, err, errlen);
    case 'Z':
        return redundancy(c, arg, err, errlen);
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
    case 'G':
        c->use_syslog = 1;
        return 0;
    case 'X':
        c->fault = arg;
        return 0;
    case 'P':
        c->transport = ddio_xport_parse(arg);
        if (c->transport < 0 || !*arg) {
            c->transport = DDIO_XPORT_AUTO;
            snprintf(err, errlen, "--transport: '%s' is not one of auto|ucx|tcp", arg);
            return -1;
        }
        return 0;
    case 'a':
        if (strcmp(arg, "munge") == 0) {
            c->munge = 1;
        } else if (strcmp(arg, "secret") == 0) {
            c->munge = 0;
        } else if (strcmp(arg, "none") == 0) {
            c->munge = 0;
            c->insecure = 1;
        } else {
            snprintf(err, errlen, "--auth: '%s' is not one of secret|munge|none", arg);
            return -1;
        }
        return 0;
    case 'm':
        c->munge_socket = *arg ? arg : NULL;
        return 0;
    case 'q':
        return on_off(&c->root_squash, "--root-squash", arg, err, errlen);
    case 'H':
        c->mount_hosts = arg;
        return 0;
    case 'e':
        if ((c->tls = ddio_tls_mode_parse(arg)) < 0) {
            c->tls = DDIO_TLS_OFF;
            snprintf(err, errlen, "--tls: '%s' is not one of off|optional|required", arg);
            return -1;
        }
        return 0;
    case 'k':
        c->tls_cert = arg;
        return 0;
    case 'y':
        c->tls_key = arg;
        return 0;
    case 'u': {
        char *end;
        long uid = strtol(arg, &end, 10);
        if (!*arg || *end || uid < 0 || uid > 0x7fffffffL) {
            snprintf(err, errlen, "--admin-uid: '%s' is not a uid", arg);
            return -1;
        }
        c->admin_uid = uid;
        return 0;
    }
    case 'S':
        if (!*arg) {
            snprintf(err, errlen, "--secret-file: empty file name");
            return -1;
        }
        c->secret_file = arg;
        return 0;
    default:
        return limit_opt(c, opt, arg, err, errlen);
    }
}

/* --max-* and --auth-timeout: a number (K/M/G suffixes) within bounds */
static int limit_opt(struct srv_config *c, int opt, const char *arg, char *err, size_t errlen)
{
    static const struct { int opt; const char *name; uint64_t lo, hi; } lim[] = {
        {'C', "--max-connections", 1, 1000000}, {'U', "--max-unauth", 1, 1000000},
        {'A', "--auth-timeout", 1, 3600}, {'M', "--max-message", 4096, DDIO_MAX_PAYLOAD},
        {'D', "--max-desc", 64, DDIO_MAX_PAYLOAD}, {'E', "--max-desc-depth", 1, DDIO_DESC_MAX_DEPTH},
        {'Y', "--max-call-memory", 1u << 20, UINT64_C(1) << 40}, {'F', "--max-inflight", 1, 4096},
        {'W', "--stop-timeout", 0, 86400}, {'g', "--lock-grace", 0, 600000},
    };
    for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++) {
        if (lim[i].opt != opt)
            continue;
        uint64_t v;
        if (parse_size(arg, &v) || v < lim[i].lo || v > lim[i].hi) {
            snprintf(err, errlen, "%s: '%s' is not a number in %" PRIu64 "..%" PRIu64,
                     lim[i].name, arg, lim[i].lo, lim[i].hi);
            return -1;
        }
        switch (opt) {
        case 'C': c->max_conns = (unsigned)v; break;
        case 'U': c->max_unauth = (unsigned)v; break;
        case 'A': c->auth_timeout_s = (unsigned)v; break;
        case 'M': c->max_msg = v; break;
        case 'D': c->max_desc = v; break;
        case 'E': c->max_depth = (unsigned)v; break;
        case 'Y': c->max_call_mem = v; break;
        case 'W': c->stop_timeout_s = (unsigned)v; break;
        case 'g': c->lock_grace_ms = (unsigned)v; break;
        default: c->max_inflight = (unsigned)v; break;
        }
        return 0;
    }
    snprintf(err, errlen, "unknown option (try ddio-server --help)");
    return -1;
}

static const struct option opts[] = {
    {"config", required_argument, NULL, 'c'},
    {"listen", required_argument, NULL, 'l'},
    {"port-file", required_argument, NULL, 'p'},
    {"root", required_argument, NULL, 'r'},
    {"block-size", required_argument, NULL, 'b'},
    {"buffers", required_argument, NULL, 'n'},
    {"rotate", no_argument, NULL, 'R'},
    {"replacement", no_argument, NULL, 'V'},
    {"page-cache", required_argument, NULL, 'K'},
    {"redundancy", required_argument, NULL, 'Z'},
    {"checksums", required_argument, NULL, 'J'},
    {"throttle-mbps", required_argument, NULL, 'T'},
    {"log-level", required_argument, NULL, 'L'},
    {"insecure", no_argument, NULL, 'I'},
    {"syslog", no_argument, NULL, 'G'},
    {"fault", required_argument, NULL, 'X'},
    {"secret-file", required_argument, NULL, 'S'},
    {"auth", required_argument, NULL, 'a'},
    {"munge-socket", required_argument, NULL, 'm'},
    {"root-squash", required_argument, NULL, 'q'},
    {"admin-uid", required_argument, NULL, 'u'},
    {"mount-hosts", required_argument, NULL, 'H'},
    {"tls", required_argument, NULL, 'e'},
    {"tls-cert", required_argument, NULL, 'k'},
    {"tls-key", required_argument, NULL, 'y'},
    {"max-connections", required_argument, NULL, 'C'},
    {"max-unauth", required_argument, NULL, 'U'},
    {"auth-timeout", required_argument, NULL, 'A'},
    {"max-message", required_argument, NULL, 'M'},
    {"max-desc", required_argument, NULL, 'D'},
    {"max-desc-depth", required_argument, NULL, 'E'},
    {"max-call-memory", required_argument, NULL, 'Y'},
    {"max-inflight", required_argument, NULL, 'F'},
    {"stop-timeout", required_argument, NULL, 'W'},
    {"lock-grace", required_argument, NULL, 'g'},
    {"transport", required_argument, NULL, 'P'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* ---- the configuration file (--config) ------------------------------------------- */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && strchr(" \t\r\n", s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* The file's values, which the configuration points into: kept in one list
 * (reachable, so no leak) until config_release(). */
static char **kept;
static size_t nkept, capkept;

static char *keep(const char *v)
{
    if (nkept == capkept) {
        size_t cap = capkept ? 2 * capkept : 16;
        char **k = realloc(kept, cap * sizeof(*k));
        if (!k)
            return NULL;
        kept = k;
        capkept = cap;
    }
    char *copy = strdup(v);
    if (copy)
        kept[nkept++] = copy;
    return copy;
}

void config_release(void)
{
    for (size_t i = 0; i < nkept; i++)
        free(kept[i]);
    free(kept);
    kept = NULL;
    nkept = capkept = 0;
}

/* One 'option = value' line: any long option but config and help; '_' may
 * stand for '-' in the name. */
static int file_line(struct srv_config *c, const char *path, int lno, char *line,
                     char *err, size_t errlen)
{
    char msg[512];
    char *eq = strchr(line, '=');
    if (!eq) {
        snprintf(err, errlen, "%s:%d: expected 'option = value'", path, lno);
        return -1;
    }
    *eq = '\0';
    char *key = trim(line), *val = trim(eq + 1);
    for (char *k = key; *k; k++)
        if (*k == '_')
            *k = '-';
    const struct option *o = opts;
    while (o->name && strcmp(o->name, key))
        o++;
    if (!o->name || o->val == 'c' || o->val == 'h') {
        snprintf(err, errlen, "%s:%d: unknown option '%s'", path, lno, key);
        return -1;
    }
    if (o->has_arg == no_argument) {
        int b = parse_bool(val);
        if (b < 0) {
            snprintf(err, errlen, "%s:%d: %s: '%s' is not yes or no", path, lno, key, val);
            return -1;
        }
        if (o->val == 'R')
            c->rotate = b;
        else if (o->val == 'I')
            c->insecure = b;
        else if (b && handle_opt(c, o->val, NULL, msg, sizeof(msg))) {
            snprintf(err, errlen, "%s:%d: %s", path, lno, msg);
            return -1;
        }                         /* other flags are off unless given */
        return 0;
    }
    char *copy = keep(val);       /* lives as long as the configuration */
    if (!copy) {
        snprintf(err, errlen, "%s:%d: out of memory", path, lno);
        return -1;
    }
    if (handle_opt(c, o->val, copy, msg, sizeof(msg))) {
        snprintf(err, errlen, "%s:%d: %s", path, lno, msg);
        return -1;
    }
    return 0;
}

int config_read_file(struct srv_config *c, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "--config %s: %s", path, strerror(errno));
        return -1;
    }
    char line[4096];
    int lno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        lno++;
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(err, errlen, "%s:%d: line too long", path, lno);
            rc = -1;
            break;
        }
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *t = trim(line);
        if (*t)
            rc = file_line(c, path, lno, t, err, errlen);
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "--config %s: read error", path);
        rc = -1;
    }
    fclose(f);
    return rc;
}

/* getopt over argv. Pass 0 reads the --config file(s); pass 1 applies the
 * other flags over it. 0, 1 on --help, -1 on error. */
static int scan_argv(struct srv_config *c, int argc, char **argv, int pass, char *err,
                     size_t errlen)
{
    int opt, roots_given = 0, secret_given = 0, insecure_given = 0;
    optind = 1;
    opterr = 0;                   /* we print our own single line */
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (opt == 'h') {
            config_usage(stdout);
            return 1;
        }
        if (opt == '?' || opt == ':') {
            const char *bad = (optind > 0 && optind <= argc) ? argv[optind - 1] : "?";
            snprintf(err, errlen, "%s option '%s' (try ddio-server --help)",
                     opt == ':' ? "missing argument for" : "unknown or malformed", bad);
            return -1;
        }
        if (pass == 0) {          /* only --config now: the file comes first */
            if (opt == 'c' && config_read_file(c, optarg, err, errlen))
                return -1;
            continue;
        }
        if (opt == 'c')
            continue;
        /* a flag beats the file: --root flags replace the file's roots, and
         * --secret-file / --insecure the file's choice of the other */
        if (opt == 'r' && !roots_given++)
            c->nroots = 0;
        if (opt == 'S' && !secret_given++ && !insecure_given)
            c->insecure = 0;
        if (opt == 'I' && !insecure_given++ && !secret_given)
            c->secret_file = NULL;
        if (handle_opt(c, opt, optarg, err, errlen))
            return -1;
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (try ddio-server --help)", argv[optind]);
        return -1;
    }
    return 0;
}
int config_parse(struct srv_config *c, int argc, char **argv, char *err, size_t errlen)
{
    config_defaults(c);
    int rc = scan_argv(c, argc, argv, 0, err, errlen);
    if (rc == 0)
        rc = scan_argv(c, argc, argv, 1, err, errlen);
    if (rc)
        return rc;
    if (c->listen_port < 0) {
        snprintf(err, errlen, "--listen HOST:PORT is required");
        return -1;
    }
    if (c->nroots == 0) {
        snprintf(err, errlen, "at least one --root DIR is required");
        return -1;
    }
    if (c->munge && (c->secret_file || c->insecure)) {
        snprintf(err, errlen, "--auth munge excludes --secret-file and --insecure");
        return -1;
    }
    if (!c->secret_file && !c->insecure && !c->munge) {
        snprintf(err, errlen, "--secret-file FILE is required (clients must authenticate; "
                 "--auth munge proves users by MUNGE instead, --insecure turns it off for "
                 "local experiments)");
        return -1;
    }
    if (c->secret_file && c->insecure) {
        snprintf(err, errlen, "--secret-file and --insecure exclude each other");
        return -1;
    }
    if (c->tls != DDIO_TLS_OFF && (!c->tls_cert || !c->tls_key)) {
        snprintf(err, errlen, "--tls %s needs --tls-cert FILE and --tls-key FILE",
                 c->tls == DDIO_TLS_REQUIRED ? "required" : "optional");
        return -1;
    }
    return 0;
}
