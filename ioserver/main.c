/* ddio-server: the disk-directed I/O server daemon. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "devprobe.h"
#include "ddio_log.h"
#include "engine.h"
#include "grace.h"
#include "fault.h"
#include "handlers.h"
#include "identity.h"
#include "listener.h"
#include "missed.h"
#include "ucx.h"
#include "notify.h"
#include "rebuild.h"
#include "replay.h"
#include "server.h"
#include "tlsgate.h"

#define SHUTDOWN_WAIT_MS 10000

static struct server g_srv;

static void on_signal(int sig)
{
    (void)sig;
    atomic_fetch_add(&g_srv.signals, 1);
    atomic_store(&g_srv.stopping, 1);   /* lock-free atomics: signal safe */
}

static int install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL))
        return -errno;
    sa.sa_handler = SIG_IGN;            /* a vanished client is an error return */
    return sigaction(SIGPIPE, &sa, NULL) ? -errno : 0;
}

/* write the bound port to path atomically: tmp file, then rename */
static int write_port_file(const char *path, int port)
{
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -errno;
    int ok = fprintf(f, "%d\n", port) > 0;
    ok &= fflush(f) == 0 && fsync(fileno(f)) == 0;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path)) {
        int e = errno ? errno : EIO;
        unlink(tmp);
        return -e;
    }
    return 0;
}

static int start_disks(struct server *srv, char *err, size_t errlen)
{
    srv->ndisks = srv->store.ndisks;
    srv->disks = calloc((size_t)srv->ndisks, sizeof(*srv->disks));
    if (!srv->disks) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    for (int d = 0; d < srv->ndisks; d++) {
        int rc = disk_start(&srv->disks[d], d, srv->cfg.block_size, srv->cfg.buffers,
                            (uint64_t)srv->cfg.throttle_mibps << 20, err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

static void stop_disks(struct server *srv)
{
    for (int d = 0; srv->disks && d < srv->ndisks; d++)
        disk_stop(&srv->disks[d]);
    free(srv->disks);
    srv->disks = NULL;
}

static void server_init_sync(struct server *srv)
{
    pthread_mutex_init(&srv->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&srv->cv, &ca);
    pthread_condattr_destroy(&ca);
    stats_init(&srv->stats);
    srv->lfd = -1;
    /* two blocks of PUT data queued per connection keep the socket busy
     * without letting a slow client pin unbounded memory */
    srv->queue_cap = 2 * srv->cfg.block_size + (256u << 10);
}

/* the answers of resent requests, as the previous process left them */
static void replay_load(struct server *srv)
{
    char path[4096], err[4200];
    struct replay_info in;
    struct timespec t0, t1;
    store_state_path(&srv->store, "replay", path, sizeof(path));
    clock_gettime(CLOCK_MONOTONIC, &t0);
    replay_open(path, &in, err, sizeof(err));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (in.clients)     /* clients of the previous process may hold locks */
        srv_lock_grace(srv, "a restart");
    if (!in.persistent)
        DDIO_WARN("answers of resent writes kept in memory only (lost with a restart): %s", err);
    else
        DDIO_INFO("answers table %s: %s%u answers of %u clients reloaded, %u torn dropped "
                  "(%.1f ms)", path, in.fresh ? "new; " : "", in.answers, in.clients, in.torn,
                  ms);
}

/* the membership as this server last agreed to it (member.h) */
static int member_start(struct server *srv, char *err, size_t errlen)
{
    char path[4096];
    store_state_path(&srv->store, "member", path, sizeof(path));
    int rc = member_load(&srv->member, path, srv->store.id, err, errlen);
    if (rc == 0)
        rc = missed_init(srv, err, errlen);
    return rc ? rc : changed_init(srv, err, errlen);
}

static int startup(struct server *srv, char *err, size_t errlen)
{
    int rc = store_init(&srv->store, &srv->cfg, err, errlen);
    if (rc == 0)
        rc = rebuild_init(srv, err, errlen);
    if (rc == 0)
        devprobe_run(srv);
    if (rc == 0)
        replay_load(srv);
    if (rc == 0)
        rc = member_start(srv, err, errlen);
    if (rc == 0)
        rc = start_disks(srv, err, errlen);
    if (rc == 0 && (rc = engine_create(srv)) != 0)
        snprintf(err, errlen, "out of memory");
    if (rc == 0)
        rc = ucx_start(srv, err, errlen);
    if (rc == 0)
        rc = listener_open(srv, err, errlen);
    if (rc == 0 && srv->cfg.port_file && (rc = write_port_file(srv->cfg.port_file, srv->port)))
        snprintf(err, errlen, "--port-file %s: %s", srv->cfg.port_file, strerror(-rc));
    return rc;
}

int main(int argc, char **argv)
{
    struct server *srv = &g_srv;
    char err[1024] = "";
    int rc = config_parse(&srv->cfg, argc, argv, err, sizeof(err));
    if (rc == 1)
        return 0;
    if (rc == 0 && srv->cfg.fault)
        rc = fault_arm(srv->cfg.fault, err, sizeof(err));
    if (rc < 0) {
        fprintf(stderr, "ddio-server: %s\n", err);
        return 2;
    }
    ddio_log_init("ddio-server", srv->cfg.log_level);
    ddio_log_use_syslog(srv->cfg.use_syslog);
    server_init_sync(srv);
    if (install_signals()) {
        DDIO_ERR("sigaction: %s", strerror(errno));
        return 1;
    }
    if (srv->cfg.munge) {
        if (identity_startup(srv, err, sizeof(err))) {
            DDIO_ERR("%s", err);
            return 1;
        }
    } else if (srv->cfg.insecure)
        DDIO_WARN("--insecure: connections are NOT authenticated: anyone who can reach "
                  "the port can read and write every file under the roots");
    else if (ddio_secret_load(srv->cfg.secret_file, &srv->secret, err, sizeof(err)) != 0) {
        DDIO_ERR("--secret-file: %s", err);
        return 1;
    }
    if (tlsgate_start(srv, err, sizeof(err))) {
        DDIO_ERR("--tls: %s", err);
        return 1;
    }
    rc = startup(srv, err, sizeof(err));
    if (rc) {
        DDIO_ERR("%s", err);
        listener_stop(srv, 0);
        stop_disks(srv);
        store_fini(&srv->store);
        return 1;
    }
    DDIO_INFO("listening on %s, %d disk(s), block size %llu, %u buffers per disk%s",
              srv->name, srv->ndisks, (unsigned long long)srv->cfg.block_size,
              srv->cfg.buffers, srv->cfg.rotate ? ", rotation on" : "");
    if (srv->cfg.fault)
        DDIO_WARN("fault point armed: %s (--fault: testing only)", srv->cfg.fault);
    if (srv->cfg.throttle_mibps)
        DDIO_WARN("disks throttled to %u MiB/s each (--throttle-mbps: testing only)",
                  srv->cfg.throttle_mibps);
    int nrc = srv_notify("READY=1");
    if (nrc)
        DDIO_WARN("NOTIFY_SOCKET %s: %s", getenv("NOTIFY_SOCKET"), strerror(-nrc));
    listener_serve(srv);
    /* SIGTERM/SIGINT: no new connections, calls in flight finish (bounded) */
    srv_notify("STOPPING=1");
    DDIO_INFO("stopping: no new connections; calls in flight may finish within %u s "
              "(--stop-timeout)", srv->cfg.stop_timeout_s);
    int busy = listener_drain(srv, (int)srv->cfg.stop_timeout_s * 1000);
    /* how often clients came back while we drained: a few per waiting rank
     * (they back off); thousands would mean a resend loop holding the drain */
    if (atomic_load(&srv->stop_refused))
        DDIO_INFO("stopping: %d collective request(s) refused while draining (resent to "
                  "the restart)", atomic_load(&srv->stop_refused));
    if (busy)
        DDIO_WARN("%d connection(s) still busy %s: their calls fail", busy,
                  atomic_load(&srv->signals) > 1 ? "at a second signal" : "at --stop-timeout");
    DDIO_INFO("shutting down");
    listener_stop(srv, SHUTDOWN_WAIT_MS);
    ucx_stop(srv);
    int clean = srv->nconns == 0;
    if (clean) {                      /* threads may still use them otherwise */
        stop_disks(srv);
        store_fini(&srv->store);
        rebuild_fini(srv);
        missed_fini(srv);
        engine_destroy(srv);
        ucx_destroy(srv);
        replay_close();
    }
    ddio_secret_clear(&srv->secret);
    if (clean)
        tlsgate_stop(srv);
    DDIO_INFO("stopped");
    return 0;
}
