/* Overlay extents of an erasure-coded file's partial writes (overlay.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_roots.h"

#define OVX_MAGIC "DDIOOVX1"
enum { OP_ADD = 1, OP_DEL = 2, OP_SIZE = 3, OP_CUT = 4,   /* OP_CUT: the size set lower */
       OP_PSTATE = 5 };          /* lo: a group, hi: its fold state (overlay.h) */

struct ext { uint64_t lo, hi; };
struct rec { uint64_t op, lo, hi; };

struct ovl {
    pthread_mutex_t mu;
    int rootfd;
    char *rel;                   /* the log's path under rootfd */
    uint64_t ino;                /* the overlay datafile's inode */
    struct ext *e;               /* sorted, disjoint, not touching */
    size_t n, cap;
    struct rec *pend;            /* changes not in the log yet */
    size_t npend, cappend;
    uint64_t size;               /* the logical size noted (OP_SIZE) */
    struct ext *ps;              /* fold states other than in place: {group, state} */
    size_t nps, capps;
    uint64_t logged;             /* records in the log file */
    int own;                     /* the log file is this datafile's */
};

int ovl_log_path(char *out, size_t n, const char *rel)
{
    int len = snprintf(out, n, ".ddio/ovx/%s", rel);
    return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return -ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

/* [lo, hi) out of the extents (o->mu held) */
static int cut(struct ovl *o, uint64_t lo, uint64_t hi)
{
    size_t w = 0;
    struct ext tail = {0, 0};
    for (size_t i = 0; i < o->n; i++) {
        struct ext x = o->e[i];
        if (x.hi <= lo || x.lo >= hi) {
            o->e[w++] = x;
            continue;
        }
        if (x.lo < lo)
            o->e[w++] = (struct ext){x.lo, lo};
        if (x.hi > hi)
            tail = (struct ext){hi, x.hi};   /* at most one extent reaches past hi */
    }
    o->n = w;
    if (tail.hi > tail.lo) {
        if (grow((void **)&o->e, &o->cap, o->n + 1, sizeof(struct ext)))
            return -ENOMEM;
        size_t i = o->n;
        while (i > 0 && o->e[i - 1].lo > tail.lo) {
            o->e[i] = o->e[i - 1];
            i--;
        }
        o->e[i] = tail;
        o->n++;
    }
    return 0;
}

/* [lo, hi) into the extents, merged with what it meets or touches (into
 * a new array: an insertion in place would overwrite extents not read yet) */
static int join(struct ovl *o, uint64_t lo, uint64_t hi)
{
    struct ext *ne = malloc((o->n + 1) * sizeof(*ne));
    if (!ne)
        return -ENOMEM;
    size_t w = 0, i = 0;
    while (i < o->n && o->e[i].hi < lo)
        ne[w++] = o->e[i++];
    for (; i < o->n && o->e[i].lo <= hi; i++) {
        lo = o->e[i].lo < lo ? o->e[i].lo : lo;
        hi = o->e[i].hi > hi ? o->e[i].hi : hi;
    }
    ne[w++] = (struct ext){lo, hi};
    while (i < o->n)
        ne[w++] = o->e[i++];
    free(o->e);
    o->e = ne;
    o->n = w;
    o->cap = o->n;
    return 0;
}

/* group r->lo's fold state set to r->hi (o->mu held) */
static int pstate_apply(struct ovl *o, const struct rec *r)
{
    if (r->lo == UINT64_MAX) {
        o->nps = 0;
        return 0;
    }
    size_t i = 0;               /* kept sorted by group (ovl_pstate_each) */
    while (i < o->nps && o->ps[i].lo < r->lo)
        i++;
    int here = i < o->nps && o->ps[i].lo == r->lo;
    if (here && r->hi == OVL_PS_INPLACE)
        memmove(o->ps + i, o->ps + i + 1, (--o->nps - i) * sizeof(struct ext));
    else if (here)
        o->ps[i].hi = r->hi;
    else if (r->hi != OVL_PS_INPLACE) {
        if (grow((void **)&o->ps, &o->capps, o->nps + 1, sizeof(struct ext)))
            return -ENOMEM;
        memmove(o->ps + i + 1, o->ps + i, (o->nps++ - i) * sizeof(struct ext));
        o->ps[i] = (struct ext){r->lo, r->hi};
    }
    return 0;
}

static int apply(struct ovl *o, const struct rec *r)
{
    if (r->op == OP_PSTATE)
        return pstate_apply(o, r);
    if (r->op == OP_SIZE) {
        o->size = r->lo > o->size ? r->lo : o->size;
        return 0;
    }
    if (r->op == OP_CUT) {
        o->size = r->lo;
        return 0;
    }
    if (r->hi <= r->lo)
        return 0;
    return r->op == OP_ADD ? join(o, r->lo, r->hi) : cut(o, r->lo, r->hi);
}

static void load(struct ovl *o)
{
    int fd = open_beneath(o->rootfd, o->rel, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return;
    char hdr[16];
    uint64_t ino;
    struct rec r;
    if (read(fd, hdr, sizeof(hdr)) == (ssize_t)sizeof(hdr) && !memcmp(hdr, OVX_MAGIC, 8)) {
        memcpy(&ino, hdr + 8, sizeof(ino));
        /* a log of another datafile (deleted and made again) says nothing */
        o->own = ino == o->ino;
        while (o->own && read(fd, &r, sizeof(r)) == (ssize_t)sizeof(r))
            if (apply(o, &r) == 0)
                o->logged++;
    }
    close(fd);
}

int ovl_repath(struct ovl *o, const char *rel)
{
    char p[4096 + 16];
    char *np = ovl_log_path(p, sizeof(p), rel) ? NULL : strdup(p);
    if (!np)
        return -ENOMEM;
    pthread_mutex_lock(&o->mu);
    free(o->rel);
    o->rel = np;
    pthread_mutex_unlock(&o->mu);
    return 0;
}

struct ovl *ovl_open(int rootfd, const char *rel, int datafd, int fresh)
{
    struct ovl *o = calloc(1, sizeof(*o));
    char p[4096 + 16];
    if (!o || ovl_log_path(p, sizeof(p), rel) || !(o->rel = strdup(p))) {
        free(o);
        return NULL;
    }
    pthread_mutex_init(&o->mu, NULL);
    o->rootfd = rootfd;
    struct stat sb;
    o->ino = fstat(datafd, &sb) == 0 ? (uint64_t)sb.st_ino : 0;
    if (fresh)
        (void)unlink_beneath(rootfd, o->rel, 0);
    else
        load(o);
    return o;
}

void ovl_close(struct ovl *o, int durable)
{
    if (!o)
        return;
    if (durable)
        (void)ovl_flush(o);
    pthread_mutex_destroy(&o->mu);
    free(o->e);
    free(o->ps);
    free(o->pend);
    free(o->rel);
    free(o);
}

static int change(struct ovl *o, uint64_t op, uint64_t lo, uint64_t hi)
{
    if (op != OP_SIZE && op != OP_CUT && op != OP_PSTATE && hi <= lo)
        return 0;
    struct rec r = {op, lo, hi};
    pthread_mutex_lock(&o->mu);
    int rc = grow((void **)&o->pend, &o->cappend, o->npend + 1, sizeof(struct rec));
    if (rc == 0 && (rc = apply(o, &r)) == 0)
        o->pend[o->npend++] = r;
    pthread_mutex_unlock(&o->mu);
    return rc;
}

int ovl_add(struct ovl *o, uint64_t lo, uint64_t hi) { return change(o, OP_ADD, lo, hi); }

int ovl_note_size(struct ovl *o, uint64_t size)
{
    return size > ovl_size(o) ? change(o, OP_SIZE, size, 0) : 0;
}

int ovl_cut_size(struct ovl *o, uint64_t size)
{
    return size < ovl_size(o) ? change(o, OP_CUT, size, 0) : 0;
}

uint64_t ovl_size(struct ovl *o)
{
    pthread_mutex_lock(&o->mu);
    uint64_t s = o->size;
    pthread_mutex_unlock(&o->mu);
    return s;
}
int ovl_del(struct ovl *o, uint64_t lo, uint64_t hi) { return change(o, OP_DEL, lo, hi); }

int ovl_pstate_set(struct ovl *o, uint64_t g, int state)
{
    if (g != UINT64_MAX && ovl_pstate(o, g) == state)
        return 0;
    return change(o, OP_PSTATE, g, (uint64_t)state);
}

int ovl_pstate(struct ovl *o, uint64_t g)
{
    int st = OVL_PS_INPLACE;
    pthread_mutex_lock(&o->mu);
    for (size_t i = 0; i < o->nps; i++)
        if (o->ps[i].lo == g)
            st = (int)o->ps[i].hi;
    pthread_mutex_unlock(&o->mu);
    return st;
}

int ovl_pstate_each(struct ovl *o, uint64_t lo, uint64_t hi, ovl_fn fn, void *arg)
{
    int rc = 0;
    pthread_mutex_lock(&o->mu);
    for (size_t i = 0; i < o->nps && rc == 0 && o->ps[i].lo < hi; i++)
        if (o->ps[i].lo >= lo)
            rc = fn(arg, o->ps[i].lo, o->ps[i].lo + 1);
    pthread_mutex_unlock(&o->mu);
    return rc;
}

size_t ovl_pstate_count(struct ovl *o)
{
    pthread_mutex_lock(&o->mu);
    size_t n = o->nps;
    pthread_mutex_unlock(&o->mu);
    return n;
}

int ovl_each(struct ovl *o, uint64_t lo, uint64_t hi, ovl_fn fn, void *arg)
{
    int rc = 0;
    pthread_mutex_lock(&o->mu);
    for (size_t i = 0; i < o->n && rc == 0 && o->e[i].lo < hi; i++)
        if (o->e[i].hi > lo)
            rc = fn(arg, o->e[i].lo > lo ? o->e[i].lo : lo, o->e[i].hi < hi ? o->e[i].hi : hi);
    pthread_mutex_unlock(&o->mu);
    return rc;
}

static int yes(void *arg, uint64_t lo, uint64_t hi)
{
    (void)arg, (void)lo, (void)hi;
    return 1;
}

int ovl_any(struct ovl *o, uint64_t lo, uint64_t hi) { return ovl_each(o, lo, hi, yes, NULL); }

int ovl_dirty(struct ovl *o)
{
    pthread_mutex_lock(&o->mu);
    int d = o->npend > 0;
    pthread_mutex_unlock(&o->mu);
    return d;
}

/* o->mu held: the log made again from the extents (it only grows
 * otherwise), through a new file renamed over it */
static int rewrite(struct ovl *o)
{
    char tmp[4096 + 32];
    snprintf(tmp, sizeof(tmp), "%s.new", o->rel);
    int fd = open_beneath(o->rootfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return fd;
    char hdr[16];
    memcpy(hdr, OVX_MAGIC, 8);
    memcpy(hdr + 8, &o->ino, 8);
    int rc = pwrite_all(fd, hdr, sizeof(hdr), 0);
    uint64_t at = sizeof(hdr);
    struct rec sz = {OP_SIZE, o->size, 0};
    if (rc == 0 && o->size && (rc = pwrite_all(fd, &sz, sizeof(sz), at)) == 0)
        at += sizeof(sz);
    for (size_t i = 0; i < o->n && rc == 0; i++, at += sizeof(struct rec)) {
        struct rec r = {OP_ADD, o->e[i].lo, o->e[i].hi};
        rc = pwrite_all(fd, &r, sizeof(r), at);
    }
    for (size_t i = 0; i < o->nps && rc == 0; i++, at += sizeof(struct rec)) {
        struct rec r = {OP_PSTATE, o->ps[i].lo, o->ps[i].hi};
        rc = pwrite_all(fd, &r, sizeof(r), at);
    }
    if (rc == 0 && fdatasync(fd))
        rc = -errno;
    close(fd);
    const char *tn, *fn;
    int td = rc ? -1 : open_parent(o->rootfd, tmp, &tn);
    int fdir = td < 0 ? -1 : open_parent(o->rootfd, o->rel, &fn);
    if (rc == 0 && (td < 0 || fdir < 0))
        rc = td < 0 ? td : fdir;
    if (rc == 0 && renameat(td, tn, fdir, fn))
        rc = -errno;
    if (rc == 0) {                /* the rename made durable (fdir is O_PATH) */
        int dfd = openat(fdir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        rc = dfd < 0 ? -errno : fsync(dfd) ? -errno : 0;
        if (dfd >= 0)
            close(dfd);
    }
    if (td >= 0)
        close(td);
    if (fdir >= 0)
        close(fdir);
    if (rc == 0) {
        o->logged = o->n + o->nps + (o->size != 0);
        o->npend = 0;
        o->own = 1;
    }
    return rc;
}

int ovl_flush(struct ovl *o)
{
    pthread_mutex_lock(&o->mu);
    int rc = 0;
    if (o->npend == 0)
        goto out;
    if ((rc = mkdir_parents(o->rootfd, o->rel)) != 0)
        goto out;
    if (o->logged + o->npend > 1024 && o->logged + o->npend > 8 * o->n) {
        rc = rewrite(o);
        goto out;
    }
    int fd = open_beneath(o->rootfd, o->rel, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = fd;
        goto out;
    }
    /* cut a torn last record (a crash in an append), or another
     * datafile's log, before appending */
    off_t want = o->own ? (off_t)(16 + o->logged * sizeof(struct rec)) : 0;
    if (ftruncate(fd, want))
        rc = -errno;
    if (rc == 0 && !o->own) {
        char hdr[16];
        memcpy(hdr, OVX_MAGIC, 8);
        memcpy(hdr + 8, &o->ino, 8);
        if ((rc = pwrite_all(fd, hdr, sizeof(hdr), 0)) == 0)
            o->own = 1;
        want = sizeof(hdr);
    }
    if (rc == 0)
        rc = pwrite_all(fd, o->pend, o->npend * sizeof(struct rec), (uint64_t)want);
    if (rc == 0 && fdatasync(fd))
        rc = -errno;
    close(fd);
    if (rc == 0) {
        o->logged += o->npend;
        o->npend = 0;
    }
out:
    pthread_mutex_unlock(&o->mu);
    return rc;
}
