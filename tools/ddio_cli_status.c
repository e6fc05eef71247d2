/* tools/ddio status and stats: the servers' STATS counters (ioserver/stats.c),
 * raw (stats) or as a per-server health report (status). Rates need two
 * samples: status reads every server's counters, waits --interval seconds,
 * reads them again and reports the difference per second; with
 * --interval 0 it reports averages since the server started. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddio_cli.h"

/* ---- stats: unchanged output, "HOST:PORT KEY VALUE" ---------------------------- */

static int want_key(const char *k, int nkeys, char **keys)
{
    if (nkeys == 0)
        return 1;
    for (int i = 0; i < nkeys; i++)
        if (strcmp(k, keys[i]) == 0)
            return 1;
    return 0;
}

/* status and stats look, they do not wait: with no timeout given, a
 * server down is reported after CLI_LOOK_TIMEOUT_S, not after a restart's
 * worth of retries (30 s, twice for status) */
#define CLI_LOOK_TIMEOUT_S 5
static struct ddio_client *look_client(const struct cli *o)
{
    struct cli q = *o;
    if (q.timeout_default)
        q.timeout_s = CLI_LOOK_TIMEOUT_S;
    return cli_client(&q);
}

int cmd_stats(struct cli *o)
{
    struct ddio_client *cl = look_client(o);
    char msg[DDIO_CLIENT_MSG_LEN];
    int rc = 0;
    if (!cl)
        return 1;
    for (int i = 0; i < ddio_client_nservers(cl); i++) {
        struct ddio_stats_r r;
        const char *addr = ddio_client_server_addr(cl, i);
        if (ddio_client_stats(cl, i, &r, msg, sizeof msg)) {
            rc = cli_fail("%s", msg);
            continue;
        }
        for (uint32_t k = 0; k < r.n; k++)
            if (want_key(r.kv[k].key, o->argc, o->argv))
                printf("%s %s %" PRIu64 "\n", addr, r.kv[k].key, r.kv[k].val);
        ddio_stats_r_free(&r);
    }
    ddio_client_free(cl);
    return rc;
}

/* ---- status --------------------------------------------------------------------- */

/* short for the many lookups below */
static uint64_t get(const struct ddio_stats_r *r, const char *key, int *found)
{
    return ddio_stats_r_get(r, key, found);
}

static uint64_t geti(const struct ddio_stats_r *r, const char *kind, int i, const char *key,
                     int *found)
{
    char k[64];
    snprintf(k, sizeof k, "%s.%d.%s", kind, i, key);
    return get(r, k, found);
}

struct sample {
    int ok;
    char msg[DDIO_CLIENT_MSG_LEN];
    struct ddio_stats_r r;
    double t;                 /* when taken (client clock) */
};

/* per second between a and b (or since start when a is NULL) */
static double rate(const struct sample *a, const struct sample *b, const char *kind, int i,
                   const char *key)
{
    double v1 = (double)geti(&b->r, kind, i, key, NULL);
    if (!a) {
        double up = (double)get(&b->r, "uptime_ms", NULL) / 1000;
        return up > 0 ? v1 / up : 0;
    }
    double dt = b->t - a->t;
    double v0 = (double)geti(&a->r, kind, i, key, NULL);
    return dt > 0 && v1 >= v0 ? (v1 - v0) / dt : 0;
}

static void fmt_uptime(uint64_t ms, char *buf, size_t n)
{
    uint64_t s = ms / 1000;
    if (s >= 86400)
        snprintf(buf, n, "%" PRIu64 "d%02" PRIu64 "h%02" PRIu64 "m", s / 86400,
                 s / 3600 % 24, s / 60 % 60);
    else
        snprintf(buf, n, "%" PRIu64 "h%02" PRIu64 "m%02" PRIu64 "s", s / 3600, s / 60 % 60,
                 s % 60);
}

/* STATS checksums: which files the server keeps sums for */
static const char *sums_mode(uint64_t v)
{
    return v == 2 ? "mirrored" : v ? "on" : "off";
}

/* the checksums (ioserver/sums.h): 4 KiB sectors read from disk and found
 * right, found bad, rewritten from a copy, read without a sum to check */
static void show_sums(const struct ddio_stats_r *r)
{
    int f;
    uint64_t on = get(r, "checksums", &f);
    if (!f)
        return;                   /* a server without checksums */
    printf("  checksums %s: sectors verified %" PRIu64 ", bad %" PRIu64 ", repaired %" PRIu64
           ", unknown %" PRIu64 "\n", sums_mode(on), get(r, "sums_verified", NULL),
           get(r, "sums_bad", NULL), get(r, "sums_repaired", NULL),
           get(r, "sums_unknown", NULL));
}

/* a rebuild stops reporting for this long: it was cut off (it reports at
 * least every second while it copies) */
#define REBUILD_SILENT_MS 15000

/* the bytes of the rebuild onto this server, as `ddio rebuild` last
 * reported them: copied of all, rate and what is left at that rate */
static void show_rebuild_bytes(const struct ddio_stats_r *r)
{
    uint64_t total = get(r, "rebuild_bytes_total", NULL), done = get(r, "rebuild_bytes_done",
                                                                      NULL);
    uint64_t bps = get(r, "rebuild_rate", NULL), age = get(r, "rebuild_report_age_ms", NULL);
    char h1[32], h2[32], h3[32];
    if (!total)
        return;
    if (done >= total) {
        printf("  rebuild: %s copied, finished %" PRIu64 " s ago\n",
               cli_human(done, h1, sizeof h1), age / 1000);
        return;
    }
    printf("  rebuild: %s of %s copied (%.0f %%), %s/s, about %.0f s left", cli_human(done, h1,
           sizeof h1), cli_human(total, h2, sizeof h2), 100.0 * (double)done / (double)total,
           cli_human(bps, h3, sizeof h3), bps ? (double)(total - done) / (double)bps : 0.0);
    if (age > REBUILD_SILENT_MS)
        printf(" (no report for %" PRIu64 " s: cut off? run ddio rebuild again)", age / 1000);
    printf("\n");
}

/* a replacement's rebuild (ddio rebuild): files marked not rebuilt yet,
 * files rebuilt since the server started; shown while there is any */
static void show_rebuild(const struct ddio_stats_r *r)
{
    uint64_t left = get(r, "rebuild_unbuilt", NULL), done = get(r, "rebuild_done", NULL);
    if (get(r, "rebuild_adopt_pending", NULL))
        printf("  rebuild: a replacement waiting for `ddio rebuild` (opens refused)\n");
    else if (left || done)
        printf("  rebuild: %" PRIu64 " file(s) rebuilt, %" PRIu64 " begun and not done%s\n",
               done, left, left ? " (being copied, or cut off: run ddio rebuild again)" : "");
    show_rebuild_bytes(r);
}

static void show_text(const char *addr, const struct sample *a, const struct sample *b,
                      double interval)
{
    const struct ddio_stats_r *r = &b->r;
    char up[32], h1[32], h2[32];
    int nd = (int)get(r, "ndisks", NULL);
    fmt_uptime(get(r, "uptime_ms", NULL), up, sizeof up);
    printf("server %s  up %s  connections %" PRIu64 "  calls in flight %" PRIu64 "\n", addr,
           up, get(r, "connections", NULL), get(r, "inflight", NULL));
    printf("  refused: %" PRIu64 " authentications, %" PRIu64 " requests by permissions\n",
           get(r, "auth_refused", NULL), get(r, "access_denied", NULL));
    uint64_t lr = get(r, "local_read_bytes", NULL), lw = get(r, "local_write_bytes", NULL);
    char h3[32], h4[32];
    /* totals: what the server moved and what same-host clients moved in its
     * datafiles themselves (reported at close) */
    printf("  read %s  written %s  xfers %" PRIu64 " (%" PRIu64 " collective, %" PRIu64
           " failed)\n", cli_human(get(r, "bytes_read", NULL) + lr, h1, sizeof h1),
           cli_human(get(r, "bytes_written", NULL) + lw, h2, sizeof h2), get(r, "xfers", NULL),
           get(r, "coll_xfers", NULL), get(r, "xfer_errors", NULL));
    printf("  of which same-host clients read %s and wrote %s themselves\n",
           cli_human(lr, h3, sizeof h3), cli_human(lw, h4, sizeof h4));
    show_sums(r);
    show_rebuild(r);
    if (get(r, "missed_files", NULL))
        printf("  noted for members out: %" PRIu64 " file(s) (ddio member in resyncs them)\n",
               get(r, "missed_files", NULL));
    if (get(r, "indoubt_files", NULL))
        printf("  in doubt after a failed write: %" PRIu64 " file(s) (ddio scrub makes their "
               "copies agree)\n", get(r, "indoubt_files", NULL));
    for (int d = 0; d < nd; d++) {
        double busy = rate(a, b, "disk", d, "busy_us") / 1e4;   /* us per s -> % */
        printf("  disk %d  read %8.1f MiB/s  write %8.1f MiB/s  queue %" PRIu64
               "  busy %3.0f%%  (%s: read %s, written %s)\n", d,
               rate(a, b, "disk", d, "bytes_read") / (1 << 20),
               rate(a, b, "disk", d, "bytes_written") / (1 << 20),
               geti(r, "disk", d, "queue", NULL), busy > 100 ? 100 : busy,
               a ? "total" : "since start",
               cli_human(geti(r, "disk", d, "bytes_read", NULL), h1, sizeof h1),
               cli_human(geti(r, "disk", d, "bytes_written", NULL), h2, sizeof h2));
    }
    for (int i = 0;; i++) {
        int f;
        uint64_t fr = geti(r, "root", i, "free_bytes", &f);
        if (!f)
            break;
        uint64_t tot = geti(r, "root", i, "total_bytes", NULL);
        printf("  root %d  free %s of %s (%.0f%%)\n", i, cli_human(fr, h1, sizeof h1),
               cli_human(tot, h2, sizeof h2), tot ? 100.0 * (double)fr / (double)tot : 0.0);
    }
    (void)interval;
}

static void show_json(const char *addr, const struct sample *a, const struct sample *b,
                      double interval, int first)
{
    const struct ddio_stats_r *r = &b->r;
    int nd = (int)get(r, "ndisks", NULL);
    printf("%s\n  {\"server\": ", first ? "" : ",");
    cli_json_str(stdout, addr);
    if (!b->ok) {
        printf(", \"ok\": false, \"error\": ");
        cli_json_str(stdout, b->msg);
        printf("}");
        return;
    }
    printf(", \"ok\": true, \"uptime_s\": %.3f, \"connections\": %" PRIu64
           ", \"inflight\": %" PRIu64 ", \"bytes_read\": %" PRIu64 ", \"bytes_written\": %"
           PRIu64 ", \"xfers\": %" PRIu64 ", \"xfer_errors\": %" PRIu64
           ", \"auth_refused\": %" PRIu64 ", \"access_denied\": %" PRIu64
           ", \"local_read_bytes\": %" PRIu64 ", \"local_write_bytes\": %" PRIu64
           ", \"checksums\": \"%s\", \"sums_verified\": %" PRIu64 ", \"sums_bad\": %" PRIu64
           ", \"sums_repaired\": %" PRIu64 ", \"sums_unknown\": %" PRIu64
           ", \"rebuild_done\": %" PRIu64 ", \"rebuild_unbuilt\": %" PRIu64
           ", \"rebuild_adopt_pending\": %s, \"rebuild_bytes_done\": %" PRIu64
           ", \"rebuild_bytes_total\": %" PRIu64 ", \"rebuild_rate\": %" PRIu64
           ", \"rebuild_report_age_ms\": %" PRIu64 ", \"interval_s\": %g, \"disks\": [",
           (double)get(r, "uptime_ms", NULL) / 1000, get(r, "connections", NULL),
           get(r, "inflight", NULL), get(r, "bytes_read", NULL), get(r, "bytes_written", NULL),
           get(r, "xfers", NULL), get(r, "xfer_errors", NULL), get(r, "auth_refused", NULL),
           get(r, "access_denied", NULL), get(r, "local_read_bytes", NULL),
           get(r, "local_write_bytes", NULL), sums_mode(get(r, "checksums", NULL)),
           get(r, "sums_verified", NULL), get(r, "sums_bad", NULL),
           get(r, "sums_repaired", NULL), get(r, "sums_unknown", NULL),
           get(r, "rebuild_done", NULL), get(r, "rebuild_unbuilt", NULL),
           get(r, "rebuild_adopt_pending", NULL) ? "true" : "false",
           get(r, "rebuild_bytes_done", NULL), get(r, "rebuild_bytes_total", NULL),
           get(r, "rebuild_rate", NULL), get(r, "rebuild_report_age_ms", NULL),
           a ? interval : 0.0);
    for (int d = 0; d < nd; d++) {
        double busy = rate(a, b, "disk", d, "busy_us") / 1e4;
        printf("%s{\"index\": %d, \"read_mibps\": %.3f, \"write_mibps\": %.3f, \"queue\": %"
               PRIu64 ", \"busy_pct\": %.1f, \"bytes_read\": %" PRIu64 ", \"bytes_written\": %"
               PRIu64 ", \"ops\": %" PRIu64 "}", d ? ", " : "", d,
               rate(a, b, "disk", d, "bytes_read") / (1 << 20),
               rate(a, b, "disk", d, "bytes_written") / (1 << 20),
               geti(r, "disk", d, "queue", NULL), busy > 100 ? 100 : busy,
               geti(r, "disk", d, "bytes_read", NULL), geti(r, "disk", d, "bytes_written", NULL),
               geti(r, "disk", d, "ops", NULL));
    }
    printf("], \"roots\": [");
    for (int i = 0;; i++) {
        int f;
        uint64_t fr = geti(r, "root", i, "free_bytes", &f);
        if (!f)
            break;
        printf("%s{\"index\": %d, \"free_bytes\": %" PRIu64 ", \"total_bytes\": %" PRIu64 "}",
               i ? ", " : "", i, fr, geti(r, "root", i, "total_bytes", NULL));
    }
    printf("]}");
}

static void take(struct ddio_client *cl, int i, struct sample *s)
{
    s->ok = ddio_client_stats(cl, i, &s->r, s->msg, sizeof s->msg) == 0;
    s->t = cli_now();
}

int cmd_status(struct cli *o)
{
    struct ddio_client *cl = look_client(o);
    if (!cl)
        return 1;
    int n = ddio_client_nservers(cl), rc = 0;
    struct sample *a = calloc((size_t)n, sizeof(*a)), *b = calloc((size_t)n, sizeof(*b));
    if (!a || !b) {
        free(a);
        free(b);
        ddio_client_free(cl);
        return cli_fail("out of memory");
    }
    int two = o->interval_s > 0;
    if (two) {
        for (int i = 0; i < n; i++)
            take(cl, i, &a[i]);
        struct timespec ts = {(time_t)o->interval_s,
                              (long)((o->interval_s - (double)(time_t)o->interval_s) * 1e9)};
        nanosleep(&ts, NULL);
    }
    for (int i = 0; i < n; i++)
        take(cl, i, &b[i]);
    if (o->json)
        printf("{\"servers\": [");
    else
        cli_member_line(cl, stdout, 0);
    for (int i = 0; i < n; i++) {
        const char *addr = ddio_client_server_addr(cl, i);
        const struct sample *prev = two && a[i].ok ? &a[i] : NULL;
        if (!b[i].ok)
            rc = 1;
        if (o->json)
            show_json(addr, prev, &b[i], o->interval_s, i == 0);
        else if (b[i].ok)
            show_text(addr, prev, &b[i], o->interval_s);
        else
            printf("server %s  DOWN: %s\n", addr, b[i].msg);
        if (!b[i].ok)
            fprintf(stderr, "ddio: status: %s\n", b[i].msg);
    }
    if (o->json) {
        printf("\n], \"membership\": ");
        cli_member_line(cl, stdout, 1);
        printf("}\n");
    }
    for (int i = 0; i < n; i++) {
        if (a[i].ok)
            ddio_stats_r_free(&a[i].r);
        if (b[i].ok)
            ddio_stats_r_free(&b[i].r);
    }
    free(a);
    free(b);
    ddio_client_free(cl);
    return rc;
}
