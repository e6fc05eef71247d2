/* A created file's layout (its record, or its first datafile holding it)
 * and directory entries made durable: by
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
 * next sync, which does it again and answers its error. A sync's
 * fdatasyncs and its job's fsyncs go in one batch (fsyncs.c): one journal
 * commit and merged cache flushes, where in turn each paid a flush.
 *
 * Not done at the create, in the background: the three fsyncs then held up
 * the other ranks' opens of the same file, which come right after it
 * (IOR-style shared-file opens at P = 8: 6 -> 12 ms), for a sync 0.5-2.5
 * ms shorter at P = 4 only; nor handed to the thread at the sync, side by
 * side with the fdatasync: no difference measured, the thread's fsyncs
 * being in turn still. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "cond.h"
#include "fsyncs.h"
#include "store_int.h"
#include "store_meta.h"
#include "store_roots.h"

/* a job no sync asked for waits this long (its file's opens are over) */
#define META_LAZY_MS 1000
/* due jobs the thread makes durable together: one journal commit for all
 * (a metadata benchmark queues thousands a second; one commit each kept
 * the disk busy under the creates and removes that followed) */
#define META_BATCH 128

enum { MJ_PENDING, MJ_RUNNING, MJ_DONE, MJ_FAILED };

struct meta_job {
    char *path;                 /* under meta.mu (a rename moves it) */
    int state;                  /* MJ_*, under meta.mu */
    int refs;                   /* atomic: the queue's and the ofiles' */
    int64_t due_ms;             /* run by then anyway */
    uint64_t seq;               /* queue order */
    struct meta_job *next, *prev;   /* in the queue while PENDING or RUNNING */
    struct meta_job *hnext;     /* its path's bucket (store_meta.index) */
};

/* ---- the queue: oldest first, so also by due time; and an index by path ----
 * (a create appends, an open looks its path up, a job done leaves from
 * anywhere: each O(1), where walking the list cost a create loop of 10,000
 * files 8% of the server's CPU) */

static struct meta_job **bucket(struct store_meta *m, const char *path)
{
    uint64_t h = 1469598103934665603ull;          /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    return &m->index[h & (META_INDEX - 1)];
}

static void index_add(struct store_meta *m, struct meta_job *j)
{
    struct meta_job **b = bucket(m, j->path);
    j->hnext = *b;
    *b = j;
}

static void index_del(struct store_meta *m, struct meta_job *j)
{
    for (struct meta_job **pp = bucket(m, j->path); *pp; pp = &(*pp)->hnext)
        if (*pp == j) {
            *pp = j->hnext;
            return;
        }
}

static void q_append(struct store_meta *m, struct meta_job *j)
{
    j->seq = ++m->seq;
    j->next = NULL;
    j->prev = m->qtail;
    if (m->qtail)
        m->qtail->next = j;
    else
        m->q = j;
    m->qtail = j;
    index_add(m, j);
}

/* out of the queue (the caller drops the queue's reference) */
static void q_remove(struct store_meta *m, struct meta_job *j)
{
    if (j->prev)
        j->prev->next = j->next;
    else
        m->q = j->next;
    if (j->next)
        j->next->prev = j->prev;
    else
        m->qtail = j->prev;
    index_del(m, j);
    j->next = j->prev = NULL;
}

static void job_put(struct meta_job *j)
{
    if (j && __atomic_sub_fetch(&j->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free(j->path);
        free(j);
    }
}

/* rel's directory, for an fsync (an O_PATH parent cannot be fsynced) */
static int parent_dir(int dirfd, const char *rel)
{
    const char *name;
    int pfd = open_parent(dirfd, rel, &name);
    if (pfd < 0)
        return pfd;
    int dfd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = dfd < 0 ? -errno : dfd;
    close(pfd);
    return rc;
}

/* a mirrored file's copies' directories (ROOT_d/.ddio/copyC/...): those
 * that exist (a file without copies has none) */
static int copy_dirs(struct store *st, const char *path, struct fsync_op *ops, int *n)
{
    char cp[DDIO_MAX_STR + 32];
    for (uint32_t c = 1; c < STORE_VIEWS; c++) {
        if (store_copy_path(cp, sizeof(cp), c, path))
            return -ENAMETOOLONG;
        for (int d = 0; d < st->ndisks; d++) {
            int fd = parent_dir(st->rootfd[d], cp);
            if (fd >= 0)
                ops[(*n)++] = (struct fsync_op){ .fd = fd };
            else if (fd != -ENOENT)
                return fd;
        }
    }
    return 0;
}

/* a job's fsyncs appended to ops: the layout (the record and its
 * directory, or the first datafile, whose fsync covers its xattr) and the
 * datafiles' directories (the datafiles themselves are the sync's
 * fdatasync: an fsync of them too would cost another journal commit, for
 * their times); 0, or the -errno of the first that would not open */
static int job_fds(struct store *st, const char *path, struct fsync_op *ops, int *n)
{
    int fd = open_beneath(st->metafd, path, O_RDONLY | O_NOFOLLOW, 0);
    if (fd >= 0) {
        ops[(*n)++] = (struct fsync_op){ .fd = fd };
        fd = parent_dir(st->metafd, path);
    } else if (fd == -ENOENT)
        fd = open_beneath(st->rootfd[0], path, O_RDONLY | O_NOFOLLOW, 0);
    if (fd >= 0)
        ops[(*n)++] = (struct fsync_op){ .fd = fd };
    for (int d = 0; d < st->ndisks && fd >= 0; d++)
        if ((fd = parent_dir(st->rootfd[d], path)) >= 0)
            ops[(*n)++] = (struct fsync_op){ .fd = fd };
    return fd < 0 ? fd : copy_dirs(st, path, ops, n);
}

/* in one batch (fsyncs.c): the datafiles' fdatasyncs (dfds[0..nd)) and,
 * with a path, its job's fsyncs. Returns the datafiles' first error; the
 * job's in *job_rc (a path gone has nothing left to make durable). */
static int run(struct store *st, const char *path, const int *dfds, int nd, int *job_rc)
{
    /* at most: nd (one per disk and copy) fdatasyncs, the record, its
     * directory, and a directory per disk and copy */
    struct fsync_op ops[2 * STORE_VIEWS * DDIO_MAX_ROOTS + 2];
    int n = 0, rc = 0, jrc = 0;
    for (; n < nd; n++)
        ops[n] = (struct fsync_op){ .fd = dfds[n], .data_only = 1 };
    if (path)
        jrc = job_fds(st, path, ops, &n);
    fsyncs_run(ops, n);
    for (int i = 0; i < n; i++) {
        int *to = i < nd ? &rc : &jrc;
        if (!*to)
            *to = ops[i].rc;
        if (i >= nd)
            close(ops[i].fd);
    }
    if (job_rc)
        *job_rc = jrc == -ENOENT ? 0 : jrc;
    return rc;
}

/* meta.mu held; j RUNNING: run it unlocked, in one batch with the
 * datafiles' fdatasyncs if a sync gives them (their error in *data_rc),
 * then settle it; returns the job's error */
static int run_locked(struct store *st, struct meta_job *j, const int *dfds, int nd,
                      int *data_rc)
{
    struct store_meta *m = &st->meta;
    char *path = strdup(j->path);
    int rc = -ENOMEM, drc;
    pthread_mutex_unlock(&m->mu);
    if (path)
        drc = run(st, path, dfds, nd, &rc);
    else
        drc = run(st, NULL, dfds, nd, NULL);
    free(path);
    pthread_mutex_lock(&m->mu);
    if (data_rc)
        *data_rc = drc;
    j->state = rc ? MJ_FAILED : MJ_DONE;
    q_remove(m, j);                     /* out of the queue either way */
    job_put(j);
    if (m->waiting)
        pthread_cond_broadcast(&m->settled);
    return rc;
}

/* meta.mu held: up to cap jobs due now into v (marked RUNNING), else 0
 * with *wake_ms the next due (nobody wakes the thread for a new job: a
 * futex wake and a context switch per create, on a host whose cores the
 * ranks share, for work that waits a second anyway) */
static int due_jobs(struct store_meta *m, int64_t now, int64_t *wake_ms, struct meta_job **v,
                    int cap)
{
    int n = 0;
    *wake_ms = now + META_LAZY_MS;
    for (struct meta_job *j = m->q; j && !m->hold && n < cap; j = j->next) {
        if (j->state != MJ_PENDING)
            continue;
        if (j->due_ms > now) {          /* and so are all after it */
            *wake_ms = j->due_ms;
            break;
        }
        j->state = MJ_RUNNING;
        v[n++] = j;
    }
    return n;
}

/* a directory already in ops[0..n) (files of one directory share it):
 * closed, the one there does for both */
static int dup_dir(struct fsync_op *ops, int n, int fd)
{
    struct stat a, b;
    if (fstat(fd, &a))
        return 0;
    for (int i = 0; i < n; i++)
        if (!fstat(ops[i].fd, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
            S_ISDIR(b.st_mode)) {
            close(fd);
            return 1;
        }
    return 0;
}

/* the batch's jobs' fsyncs in one go (paths copied under meta.mu); rc[k]
 * each job's outcome */
static void run_batch(struct store *st, char **paths, int nj, int *rc)
{
    int per = 2 + 2 * STORE_VIEWS * DDIO_MAX_ROOTS, n = 0;
    struct fsync_op *ops = malloc(sizeof(*ops) * (size_t)(per * nj));
    int *first = malloc(sizeof(int) * (size_t)(nj + 1));
    if (!ops || !first) {                  /* one at a time instead */
        for (int k = 0; k < nj; k++)
            (void) run(st, paths[k], NULL, 0, &rc[k]);
        free(ops);
        free(first);
        return;
    }
    for (int k = 0; k < nj; k++) {
        struct fsync_op mine[2 + 2 * STORE_VIEWS * DDIO_MAX_ROOTS];
        int m = 0;
        rc[k] = job_fds(st, paths[k], mine, &m);
        first[k] = n;
        for (int i = 0; i < m; i++)
            if (i == 0 || !dup_dir(ops, n, mine[i].fd))
                ops[n++] = mine[i];
    }
    first[nj] = n;
    fsyncs_run(ops, n);
    for (int k = 0; k < nj; k++) {
        for (int i = first[k]; i < first[k + 1]; i++)
            if (!rc[k])
                rc[k] = ops[i].rc;
        if (rc[k] == -ENOENT)
            rc[k] = 0;                     /* gone: nothing left to make durable */
    }
    for (int i = 0; i < n; i++)
        close(ops[i].fd);
    free(ops);
    free(first);
}

/* meta.mu held: the batch v run unlocked, then settled (as run_locked) */
static void batch_locked(struct store *st, struct meta_job **v, int nj)
{
    struct store_meta *m = &st->meta;
    char *paths[META_BATCH];
    int rc[META_BATCH];
    for (int k = 0; k < nj; k++)
        paths[k] = strdup(v[k]->path);
    pthread_mutex_unlock(&m->mu);
    int ok = 1;
    for (int k = 0; k < nj; k++)
        ok &= paths[k] != NULL;
    if (ok)
        run_batch(st, paths, nj, rc);
    for (int k = 0; k < nj; k++) {
        free(paths[k]);
        if (!ok)
            rc[k] = -ENOMEM;
    }
    pthread_mutex_lock(&m->mu);
    for (int k = 0; k < nj; k++) {
        v[k]->state = rc[k] ? MJ_FAILED : MJ_DONE;
        q_remove(m, v[k]);
        job_put(v[k]);
    }
    if (m->waiting)
        pthread_cond_broadcast(&m->settled);
}

static void *syncer(void *arg)
{
    struct store *st = arg;
    struct store_meta *m = &st->meta;
    struct meta_job *v[META_BATCH];
    pthread_mutex_lock(&m->mu);
    while (!m->stop) {
        int64_t wake;
        int nj = due_jobs(m, ddio_now_ms(), &wake, v, META_BATCH);
        if (!nj)
            cond_wait_ms(&m->cv, &m->mu, wake);
        else
            batch_locked(st, v, nj);
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
        q_remove(m, j);
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
        (void) run(st, of->path, NULL, 0, NULL);
        return;
    }
    j->refs = 2;        /* the queue's, the ofile's */
    pthread_mutex_lock(&m->mu);
    j->due_ms = ddio_now_ms() + META_LAZY_MS;   /* under mu: the queue is by due time */
    q_append(m, j);
    of->meta = j;       /* (a fresh ofile: a create, or its resend) */
    pthread_mutex_unlock(&m->mu);
}

void store_meta_attach(struct store *st, struct ofile *of)
{
    struct store_meta *m = &st->meta;
    pthread_mutex_lock(&m->mu);
    struct meta_job *oldest = NULL;     /* of the path's jobs, as the queue's order */
    for (struct meta_job *j = *bucket(m, of->path); j && !of->meta; j = j->hnext)
        if (!strcmp(j->path, of->path) && (!oldest || j->seq < oldest->seq))
            oldest = j;
    if (oldest) {
        __atomic_add_fetch(&oldest->refs, 1, __ATOMIC_ACQ_REL);
        of->meta = oldest;
    }
    pthread_mutex_unlock(&m->mu);
}

int store_meta_sync(struct store *st, struct ofile *of, const int *dfds, int nd)
{
    struct store_meta *m = &st->meta;
    int rc = 0, data_done = 0;
    pthread_mutex_lock(&m->mu);
    for (struct meta_job *j; rc == 0 && (j = of->meta) != NULL;) {
        if (j->state == MJ_DONE) {
            of->meta = NULL;
            job_put(j);
        } else if (j->state == MJ_RUNNING && !data_done) {
            /* the thread's: the datafiles meanwhile */
            pthread_mutex_unlock(&m->mu);
            rc = run(st, NULL, dfds, nd, NULL);
            data_done = 1;
            pthread_mutex_lock(&m->mu);
        } else if (j->state == MJ_RUNNING) {
            /* no deadline of its own: the other thread is in the same
             * bounded kernel calls this one would make */
            m->waiting++;
            pthread_cond_wait(&m->settled, &m->mu);
            m->waiting--;
        } else {          /* PENDING, or FAILED: this sync does it */
            int drc = 0;
            j->state = MJ_RUNNING;
            int jrc = run_locked(st, j, dfds, data_done ? 0 : nd, &drc);
            data_done = 1;
            rc = drc ? drc : jrc;
        }
    }
    pthread_mutex_unlock(&m->mu);
    if (!data_done)
        rc = run(st, NULL, dfds, nd, NULL);
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
            index_del(m, j);
            free(j->path);
            j->path = np;
            index_add(m, j);
        }
    }
    pthread_mutex_unlock(&m->mu);
}
