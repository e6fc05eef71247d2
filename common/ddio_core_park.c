/* Parked handles (off unless asked for: romio_ddio_park=enable, or
 * DDIO_PARK_MS > 0; see the end of this comment for why): a file this
 * process closes keeps its server handles for a moment (DDIO_PARK_MS,
 * default 1 s), so that opening the same path again, as a
 * program's (or a benchmark phase's) open-write-close-open-read does,
 * costs no round trip, and the close none either. With the servers on
 * the ranks' own cores a round trip at open or close waits for a server
 * thread to be scheduled among busy ranks: milliseconds, where ufs: pays
 * one system call.
 *
 * Only a file that can be checked without asking its servers is parked:
 * each handle on the connection it was opened on, the datafiles of one
 * server at least handed over (ddio_core_local.c: a server on this host;
 * a delete or rename goes to every server of the file), no byte-range
 * lock held. It is taken again only if
 * the handed-over datafiles are still at the paths they were at (not
 * deleted, not renamed: then the path still names this file), every
 * connection is the one the handle was opened on and belongs to this
 * open's connections, and the handle allows the access asked for. A
 * parked handle not taken again is closed for real by a reaper thread
 * after DDIO_PARK_MS, at once when more than DDIO_PARK_MAX are parked,
 * when it no longer checks out, and before this process deletes the path
 * (so its space is freed at once).
 *
 * Why it is off by default: a file another process deletes keeps its
 * space until the reaper closes the parked handle (up to DDIO_PARK_MS), as
 * an open descriptor keeps an unlinked file's. A job whose rank 0 deletes
 * a file every rank had open, then writes on a nearly full file system,
 * gets ENOSPC that ufs: would not give (t_errors nospace did). It is
 * inherent: taking a handle again without a round trip needs its
 * datafiles' descriptors kept, and they keep the space (the servers' own
 * too); a reaper watching for deletes would shorten that, not end it.
 *
 * Nothing MPI-IO promises at close is deferred: the client cache is
 * flushed before a handle is parked (ddio_fh_close), the bytes are on the
 * servers (or in the page cache, written locally) and visible to every
 * other process, and durability is MPI_File_sync's, as before. */
#include "ddio_core_io.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ddio_net.h"

#define DDIO_PARK_MAX 16

struct park {
    struct ddio_fh fh;          /* srv, nsrv, stripe, path, amode, timeout */
    pid_t pid;                  /* a forked child's copy is not its own */
    int64_t until_ms;
    struct park *next;
};

static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cv;
static pthread_once_t park_once = PTHREAD_ONCE_INIT;
static struct park *parked;
static int nparked;
static pid_t reaper_pid;        /* this process's reaper runs */

static void park_init(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&park_cv, &a);
    pthread_condattr_destroy(&a);
}

int ddio_park_ms(void)
{
    static int ms = -2;
    if (ms == -2) {
        const char *v = getenv("DDIO_PARK_MS");
        char *end;
        long n = v && *v ? strtol(v, &end, 10) : -1;
        ms = !v || !*v || *end || n < 0 ? -1 : n > 60000 ? 60000 : (int) n;
    }
    return ms;
}

/* how long a handle stays parked: DDIO_PARK_MS, else 1 s */
static int hold_ms(void)
{
    return ddio_park_ms() > 0 ? ddio_park_ms() : 1000;
}

/* CLOSE for real (park_mu not held); in a forked child only the copies
 * of the descriptors are let go: the handles are the parent's. (A parked
 * handle has no cache, no locks and is not parked again: the file layer's
 * close of its servers is the whole of ddio_fh_close for it.) */
static void park_close(struct park *p)
{
    if (p->pid == getpid())
        ddio_fh_close_servers(&p->fh);
    ddio_local_release(&p->fh);
    free(p->fh.srv);
    free(p->fh.path);
    free(p);
}

static void close_list(struct park *p)
{
    while (p) {
        struct park *n = p->next;
        park_close(p);
        p = n;
    }
}

/* park_mu held: the entries due by now (or all of a forked parent's)
 * moved to the returned list; *next: the earliest deadline left */
static struct park *take_due(int64_t now, int64_t *next)
{
    struct park *due = NULL;
    *next = INT64_MAX;
    for (struct park **pp = &parked; *pp;) {
        struct park *p = *pp;
        if (p->until_ms <= now || p->pid != getpid()) {
            *pp = p->next;
            p->next = due;
            due = p;
            nparked--;
        } else {
            if (p->until_ms < *next)
                *next = p->until_ms;
            pp = &p->next;
        }
    }
    return due;
}

static void *reaper(void *arg)
{
    (void) arg;
    pthread_mutex_lock(&park_mu);
    for (;;) {
        int64_t next;
        struct park *due = take_due(ddio_now_ms(), &next);
        if (due) {
            pthread_mutex_unlock(&park_mu);
            close_list(due);
            pthread_mutex_lock(&park_mu);
            continue;
        }
        if (next == INT64_MAX)
            break;      /* nothing parked: started again by the next park */
        struct timespec t = {.tv_sec = next / 1000,.tv_nsec = (next % 1000) * 1000000L };
        pthread_cond_timedwait(&park_cv, &park_mu, &t);
    }
    reaper_pid = 0;
    pthread_mutex_unlock(&park_mu);
    return NULL;
}

/* park_mu held */
static void reaper_start(void)
{
    pthread_t t;
    pthread_attr_t a;
    if (reaper_pid == getpid())
        return;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, reaper, NULL) == 0)
        reaper_pid = getpid();
    pthread_attr_destroy(&a);
}

/* f's handles may be taken again without asking the servers: every one
 * on the connection it was opened on, and the datafiles handed over (by
 * one server at least: a small file's other servers may have no bytes
 * read or written here) still where they were; a delete or rename goes to
 * every server of the file */
static int checkable(const struct ddio_fh *f)
{
    int seen = 0;
    if (!f->srv || f->nsrv <= 0 || f->nlocks > 0 || !f->path)
        return 0;
    for (int i = 0; i < f->nsrv; i++) {
        int same = ddio_local_same_file(f->srv[i].local);
        if (!ddio_srv_live(&f->srv[i]) || same < 0)
            return 0;
        seen += same;
    }
    return seen > 0;
}

int ddio_park_put(struct ddio_fh *f)
{
    if (!f->park || !checkable(f))
        return 0;
    struct park *p = calloc(1, sizeof(*p));
    char *path = strdup(f->path);
    if (!p || !path) {
        free(p);
        free(path);
        return 0;
    }
    p->fh.timeout_ms = f->timeout_ms;
    p->fh.nsrv = f->nsrv;
    p->fh.srv = f->srv;
    p->fh.stripe = f->stripe;
    p->fh.copies = f->copies;
    p->fh.xport = f->xport;
    p->fh.path = path;
    p->fh.amode = f->amode;
    p->pid = getpid();
    p->until_ms = ddio_now_ms() + hold_ms();
    f->srv = NULL;
    f->nsrv = 0;

    pthread_once(&park_once, park_init);
    pthread_mutex_lock(&park_mu);
    p->next = parked;
    parked = p;
    struct park *old = NULL;
    if (++nparked > DDIO_PARK_MAX) {    /* the oldest (the list's last) goes */
        struct park **pp = &parked;
        while ((*pp)->next)
            pp = &(*pp)->next;
        old = *pp;
        *pp = NULL;
        nparked--;
    }
    reaper_start();
    pthread_mutex_unlock(&park_mu);
    if (old)
        park_close(old);
    return 1;
}

/* park_mu held: this process's entry for path, unlinked */
static struct park *unpark(const char *path)
{
    for (struct park **pp = &parked; *pp; pp = &(*pp)->next)
        if ((*pp)->pid == getpid() && strcmp((*pp)->fh.path, path) == 0) {
            struct park *p = *pp;
            *pp = p->next;
            nparked--;
            return p;
        }
    return NULL;
}

static int fits(const struct park *p, struct ddio_conn **conns, int n, uint32_t amode)
{
    if ((amode & (DDIO_O_WRONLY | DDIO_O_RDWR)) && !(p->fh.amode & (DDIO_O_WRONLY | DDIO_O_RDWR)))
        return 0;
    for (int i = 0; i < p->fh.nsrv; i++) {
        int mine = 0;
        for (int k = 0; k < n && !mine; k++)
            mine = conns[k] == p->fh.srv[i].conn;
        if (!mine)
            return 0;
    }
    return checkable(&p->fh);
}

int ddio_park_take(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                   uint32_t amode)
{
    if (!__atomic_load_n(&parked, __ATOMIC_RELAXED))  /* nothing parked: no lock */
        return 0;
    pthread_mutex_lock(&park_mu);
    struct park *p = unpark(path);
    pthread_mutex_unlock(&park_mu);
    if (!p)
        return 0;
    if (!fits(p, conns, n, amode)) {
        park_close(p);
        return 0;
    }
    f->nsrv = p->fh.nsrv;
    f->srv = p->fh.srv;
    f->stripe = p->fh.stripe;
    f->copies = p->fh.copies;
    free(p->fh.path);
    free(p);
    return 1;
}

void ddio_park_drop(const char *path)
{
    struct park *list = NULL, *p;
    if (!__atomic_load_n(&parked, __ATOMIC_RELAXED))
        return;
    pthread_mutex_lock(&park_mu);
    while ((p = unpark(path)) != NULL) {
        p->next = list;
        list = p;
    }
    pthread_mutex_unlock(&park_mu);
    close_list(list);
}
