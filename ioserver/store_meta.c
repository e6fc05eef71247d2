/* A created file's layout record and directory entries made durable: by
 * the file's MPI_File_sync on the server that created it (store_sync, after
 * the datafiles' fdatasync), or, if no sync comes, by a thread of the
 * server META_LAZY_MS after the create, so that files never synced do not
 * pile up here and their existence is durable a moment later anyway.
 *
 * The job belongs to the path, not to the open file: a file created,
 * closed without a sync and opened again finds its job still queued, and
 * that open's sync does it (when a flag on the open file said what was
 * pending, such a sync left the record unsynced). A job whose path is gone
 * (deleted) has nothing left to make durable; a rename moves the queued
 * jobs' paths with it. An fsync that fails leaves the job to the file's
 * next sync, which does it again and answers its error.
 *
 * Not done at the create, in the background: the three fsyncs then held up
 * the other ranks' opens of the same file, which come right after it
 * (IOR-style shared-file opens at P = 8: 6 -> 12 ms), for a sync 0.5-2.5
 * ms shorter at P = 4 only; nor handed to the thread at the sync, side by
 * side with the fdatasync: no difference measured
 * (bench/results/2026-11-29-close-meta). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include "cond.h"
#include "store_int.h"

/* a job no sync asked for waits this long (its file's opens are over) */
#define META_LAZY_MS 1000

enum { MJ_PENDING, MJ_RUNNING, MJ_DONE, MJ_FAILED };

struct meta_job {
    char *path;                 /* under meta.mu (a rename moves it) */
    int state;                  /* MJ_*, under meta.mu */
    int refs;                   /* atomic: the queue's and the ofiles' */
    int64_t due_ms;             /* run by then anyway */
    struct meta_job *next;      /* in the queue while PENDING or RUNNING */
};

static void job_put(struct meta_job *j)
{
    if (j && __atomic_sub_fetch(&j->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free(j->path);
        free(j);
    }
}

/* rel's directory entry durable, and with self its inode and data too */
static int fsync_entry(int dirfd, const char *rel, int self)
{
    const char *name;
    int rc = 0;
    if (self) {
        int fd = open_beneath(dirfd, rel, O_RDONLY | O_NOFOLLOW, 0);
        if (fd < 0)
            return fd;
        if (fsync(fd))
            rc = -errno;
        close(fd);
    }
    int pfd = rc ? -1 : open_parent(dirfd, rel, &name);
    if (pfd >= 0) {
        /* (an O_PATH parent cannot be fsynced: reopen it for reading) */
        int dfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd))
            rc = -errno;
        if (dfd >= 0)
            close(dfd);
        close(pfd);
    } else if (!rc)
        rc = pfd;
    return rc;
}

/* the record with its directory, and the datafiles' directory entries (the
 * datafiles themselves are store_sync's fdatasync: an fsync of them too
 * would cost another journal commit, for their times); a path gone has
 * nothing left to make durable */
static int run(struct store *st, const char *path)
{
    int rc = fsync_entry(st->metafd, path, 1);
    for (int d = 0; d < st->ndisks && !rc; d++)
        rc = fsync_entry(st->rootfd[d], path, 0);
    return rc == -ENOENT ? 0 : rc;
}

/* meta.mu held; j RUNNING: run it unlocked, then settle it */
static int run_locked(struct store *st, struct meta_job *j)
{
    struct store_meta *m = &st->meta;
    char *path = strdup(j->path);
    pthread_mutex_unlock(&m->mu);
    int rc = path ? run(st, path) : -ENOMEM;
    free(path);
    pthread_mutex_lock(&m->mu);
    j->state = rc ? MJ_FAILED : MJ_DONE;
    for (struct meta_job **pp = &m->q; *pp; pp = &(*pp)->next)
        if (*pp == j) {                 /* out of the queue either way */
            *pp = j->next;
            job_put(j);
            break;
        }
    if (m->waiting)
        pthread_cond_broadcast(&m->settled);
    return rc;
}

/* meta.mu held: the job to run now, else NULL with *wake_ms the next due
 * (nobody wakes the thread for a new job: a futex wake and a context switch
 * per create, on a host whose cores the ranks share, for work that waits a
 * second anyway) */
static struct meta_job *next_job(struct store_meta *m, int64_t now, int64_t *wake_ms)
{
    *wake_ms = now + META_LAZY_MS;
    for (struct meta_job *j = m->q; j && !m->hold; j = j->next) {
        if (j->state != MJ_PENDING)
            continue;
        if (j->due_ms <= now)
            return j;
        if (j->due_ms < *wake_ms)
            *wake_ms = j->due_ms;
    }
    return NULL;
}

static void *syncer(void *arg)
{
    struct store *st = arg;
    struct store_meta *m = &st->meta;
    pthread_mutex_lock(&m->mu);
    while (!m->stop) {
        int64_t wake;
        struct meta_job *j = next_job(m, ddio_now_ms(), &wake);
        if (!j) {
            cond_wait_ms(&m->cv, &m->mu, wake);
            continue;
        }
        j->state = MJ_RUNNING;
        run_locked(st, j);
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

void store_meta_start(struct store *st)
{
    struct store_meta *m = &st->meta;
    pthread_mutex_init(&m->mu, NULL);
    cond_init_mono(&m->cv);
    pthread_cond_init(&m->settled, NULL);
    /* without the thread every sync does its file's as before */
    m->started = pthread_create(&m->th, NULL, syncer, st) == 0;
}

void store_meta_stop(struct store *st)
{
    struct store_meta *m = &st->meta;
    pthread_mutex_lock(&m->mu);
    m->stop = 1;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    if (m->started)
        pthread_join(m->th, NULL);
    /* what is left was never synced: a crash of the host may take it, as
     * it may the file's data */
    while (m->q) {
        struct meta_job *j = m->q;
        m->q = j->next;
        job_put(j);
    }
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->cv);
    pthread_cond_destroy(&m->settled);
}

void store_meta_created(struct store *st, struct ofile *of)
{
    struct store_meta *m = &st->meta;
    struct meta_job *j = calloc(1, sizeof(*j));
    if (j && !(j->path = strdup(of->path))) {
        free(j);
        j = NULL;
    }
    if (!j) {           /* no memory for the job: durable now instead */
        (void) run(st, of->path);
        return;
    }
    j->refs = 2;        /* the queue's, the ofile's */
    j->due_ms = ddio_now_ms() + META_LAZY_MS;
    pthread_mutex_lock(&m->mu);
    struct meta_job **pp = &m->q;
    while (*pp)
        pp = &(*pp)->next;
    *pp = j;
    of->meta = j;       /* (a fresh ofile: a create, or its resend) */
    pthread_mutex_unlock(&m->mu);
}

void store_meta_attach(struct store *st, struct ofile *of)
{
    struct store_meta *m = &st->meta;
    pthread_mutex_lock(&m->mu);
    for (struct meta_job *j = m->q; j && !of->meta; j = j->next)
        if (!strcmp(j->path, of->path)) {
            __atomic_add_fetch(&j->refs, 1, __ATOMIC_ACQ_REL);
            of->meta = j;
        }
    pthread_mutex_unlock(&m->mu);
}

int store_meta_wait(struct store *st, struct ofile *of)
{
    struct store_meta *m = &st->meta;
    int rc = 0;
    pthread_mutex_lock(&m->mu);
    for (struct meta_job *j; (j = of->meta) != NULL;) {
        if (j->state == MJ_DONE) {
            of->meta = NULL;
            job_put(j);
        } else if (j->state == MJ_RUNNING) {
            /* no deadline of its own: the other thread is in the same
             * bounded kernel calls this one would make */
            m->waiting++;
            pthread_cond_wait(&m->settled, &m->mu);
            m->waiting--;
        } else {          /* PENDING, or FAILED: this sync does it */
            j->state = MJ_RUNNING;
            if ((rc = run_locked(st, j)) != 0)
                break;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int store_meta_pending(struct store *st, struct ofile *of)
{
    pthread_mutex_lock(&st->meta.mu);
    int p = of->meta && of->meta->state != MJ_DONE;
    pthread_mutex_unlock(&st->meta.mu);
    return p;
}

void store_meta_release(struct ofile *of)
{
    job_put(of->meta);
    of->meta = NULL;
}

void store_meta_rename(struct store *st, const char *from, const char *to)
{
    struct store_meta *m = &st->meta;
    pthread_mutex_lock(&m->mu);
    for (struct meta_job *j = m->q; j; j = j->next) {
        /* (no memory: the job finds nothing under the old name) */
        char *np = renamed_path(j->path, from, to);
        if (np) {
            free(j->path);
            j->path = np;
        }
    }
    pthread_mutex_unlock(&m->mu);
}
