/* The mount's cache (ddio_fuse_cache.h). One table of paths under one
 * mutex: an entry says a path exists with these attributes until a time
 * (or exists, attributes unknown), or does not exist until a time; a
 * directory this mount made empty itself is "complete": every name in it
 * has an entry, so a name without one is absent without asking (a create's
 * lookup costs nothing). Coherence comes from the servers: every change
 * another process makes is heard (mc_inval) before that process is told it
 * is done, and when any server's watch is down nothing is kept at all.
 * Only what no server says at once is bounded by the timeout: the size and
 * times of a file another process is writing and has not closed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_fuse_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddio_net.h"
#include "ddio_proto.h"

#define NBUCKETS (1u << 16)
#define MAX_ENTRIES (1u << 20)     /* more: everything forgotten (a full table is rare) */

struct ent {
    struct ent *next;
    uint64_t hash;
    int exists;
    int have_attr;               /* st is valid until `until` */
    int complete;                /* a directory whose every name has an entry */
    int64_t until;               /* ms: attributes (or absence) kept until then */
    struct ddio_cstat st;
    char path[];
};

/* How many entries lie under a directory path (its descendants, at any
 * depth): a change to a name with none under it (a file's create or
 * unlink, the common case) costs drop_under one lookup, not a pass over
 * the table (with 20,000 names kept, the pass was 76% of the mount's CPU
 * in an unlink-heavy run). */
struct under {
    struct under *next;
    uint64_t hash;
    unsigned n;
    char path[];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct ent *tab[NBUCKETS];
static struct under *utab[NBUCKETS];
static unsigned nents;
static int uncounted;            /* a count could not be kept: drop_under scans */
static uint64_t gen = 1;
static int64_t keep_ms;
static int nservers, nup;        /* watches up; refused: nup never reaches nservers */
static unsigned char *up;

uint64_t mc_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ull;
    return h;
}

void mc_init(int n, double timeout_s)
{
    nservers = n;
    up = calloc((size_t)n, 1);
    keep_ms = (int64_t)(timeout_s * 1000);
}

/* kept at all: a timeout, and every server's watch up (mu held) */
static int on(void)
{
    return keep_ms > 0 && up && nup == nservers;
}

uint64_t mc_gen(void)
{
    pthread_mutex_lock(&mu);
    uint64_t g = gen;
    pthread_mutex_unlock(&mu);
    return g;
}

static struct under *under_find(const char *path, uint64_t h)
{
    for (struct under *u = utab[h % NBUCKETS]; u; u = u->next)
        if (u->hash == h && !strcmp(u->path, path))
            return u;
    return NULL;
}

/* the descendants' count of dir changed by delta (mu held) */
static void under_add(const char *dir, int delta)
{
    uint64_t h = mc_hash(dir);
    struct under *u = under_find(dir, h);
    if (!u && delta > 0) {
        size_t n = strlen(dir) + 1;
        if (!(u = calloc(1, sizeof(*u) + n))) {
            uncounted = 1;  /* until clear_all: never skip a drop */
            return;
        }
        memcpy(u->path, dir, n);
        u->hash = h;
        u->next = utab[h % NBUCKETS];
        utab[h % NBUCKETS] = u;
    }
    if (!u)
        return;
    u->n = delta > 0 ? u->n + 1 : u->n - 1;
    if (u->n == 0)
        for (struct under **pp = &utab[h % NBUCKETS]; *pp; pp = &(*pp)->next)
            if (*pp == u) {
                *pp = u->next;
                free(u);
                break;
            }
}

/* p cut to its parent directory in place; 0 if it has none ("/", or a
 * name without a slash) */
static int to_parent(char *p)
{
    char *slash = strrchr(p, '/');
    if (!slash || !strcmp(p, "/"))
        return 0;
    if (slash == p)
        slash[1] = '\0';
    else
        *slash = '\0';
    return 1;
}

/* every directory above path, nearest first, counts it (delta 1) or stops */
static void ancestors(const char *path, int delta)
{
    char p[DDIO_MAX_STR + 2];
    snprintf(p, sizeof(p), "%s", path);
    while (to_parent(p))
        under_add(p, delta);
}

static unsigned under_count(const char *dir)
{
    struct under *u = under_find(dir, mc_hash(dir));
    return uncounted ? 1 : u ? u->n : 0;
}

static void ent_free(struct ent *e)
{
    ancestors(e->path, -1);
    free(e);
    nents--;
}

static struct ent *find(const char *path)
{
    uint64_t h = mc_hash(path);
    for (struct ent *e = tab[h % NBUCKETS]; e; e = e->next)
        if (e->hash == h && !strcmp(e->path, path))
            return e;
    return NULL;
}

static void clear_all(void)
{
    for (unsigned b = 0; b < NBUCKETS; b++) {
        while (tab[b]) {
            struct ent *e = tab[b];
            tab[b] = e->next;
            free(e);
        }
        while (utab[b]) {
            struct under *u = utab[b];
            utab[b] = u->next;
            free(u);
        }
    }
    nents = 0;
    uncounted = 0;
}

static struct ent *add(const char *path)
{
    struct ent *e = find(path);
    if (e)
        return e;
    if (nents >= MAX_ENTRIES) {
        clear_all();
        gen++;
    }
    size_t n = strlen(path) + 1;
    if (!(e = calloc(1, sizeof(*e) + n)))
        return NULL;
    memcpy(e->path, path, n);
    e->hash = mc_hash(path);
    e->next = tab[e->hash % NBUCKETS];
    tab[e->hash % NBUCKETS] = e;
    nents++;
    ancestors(path, 1);
    return e;
}

static void drop(const char *path)
{
    uint64_t h = mc_hash(path);
    for (struct ent **pp = &tab[h % NBUCKETS]; *pp; pp = &(*pp)->next)
        if ((*pp)->hash == h && !strcmp((*pp)->path, path)) {
            struct ent *e = *pp;
            *pp = e->next;
            ent_free(e);
            return;
        }
}

/* everything strictly under path */
static void drop_under(const char *path)
{
    if (under_count(path) == 0)
        return;
    size_t n = strlen(path);
    int root = !strcmp(path, "/");
    for (unsigned b = 0; b < NBUCKETS; b++)
        for (struct ent **pp = &tab[b]; *pp;) {
            struct ent *e = *pp;
            if (root ? strcmp(e->path, "/") != 0
                     : !strncmp(e->path, path, n) && e->path[n] == '/') {
                *pp = e->next;
                ent_free(e);
            } else
                pp = &e->next;
        }
}

/* the parent directory's entry of path, or NULL */
static struct ent *parent_of(const char *path)
{
    char p[DDIO_MAX_STR + 2];
    snprintf(p, sizeof(p), "%s", path);
    return to_parent(p) ? find(p) : NULL;
}

int mc_get(const char *path, struct ddio_cstat *st)
{
    int rc = -1;
    pthread_mutex_lock(&mu);
    if (on()) {
        struct ent *e = find(path), *p;
        int64_t t = ddio_now_ms();
        if (e && e->exists && e->have_attr && t < e->until) {
            *st = e->st;
            rc = 1;
        } else if (e && !e->exists && t < e->until)
            rc = 0;
        else if ((!e || !e->exists) && (p = parent_of(path)) && p->exists && p->complete)
            rc = 0;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

void mc_put(const char *path, const struct ddio_cstat *st, uint64_t g)
{
    pthread_mutex_lock(&mu);
    struct ent *e = on() && g == gen ? add(path) : NULL;
    if (e) {
        e->exists = st != NULL;
        e->have_attr = st != NULL;
        if (st)
            e->st = *st;
        if (!st || !st->is_dir)
            e->complete = 0;
        e->until = ddio_now_ms() + keep_ms;
    }
    pthread_mutex_unlock(&mu);
}

/* The parent's names changed: by this mount (names_known), whose parent
 * keeps its attributes with the time of the change as its mtime, as the
 * servers' directories now have (a create's next lookup walks through
 * the parent: asking the servers for it would cost what the create saved);
 * else by another, and what was kept of the parent is forgotten. */
static void parent_changed(const char *path, int names_known)
{
    struct ent *p = parent_of(path);
    struct timespec ts;
    if (!p)
        return;
    if (!names_known) {
        p->have_attr = 0;
        p->complete = 0;
        return;
    }
    clock_gettime(CLOCK_REALTIME, &ts);
    p->st.mtime_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void mc_own_name(const char *path, int exists, const struct ddio_cstat *st, int empty_dir,
                 uint64_t g)
{
    pthread_mutex_lock(&mu);
    int known = on() && g == gen;  /* else another change came between: forget */
    struct ent *e = known ? add(path) : NULL;
    drop_under(path);
    if (!e)
        drop(path);
    else {
        e->exists = exists;
        e->have_attr = exists && st;
        if (st)
            e->st = *st;
        e->complete = exists && empty_dir;
        e->until = ddio_now_ms() + keep_ms;
    }
    parent_changed(path, e != NULL);
    pthread_mutex_unlock(&mu);
}

void mc_own_attr(const char *path)
{
    pthread_mutex_lock(&mu);
    struct ent *e = find(path);
    if (e)
        e->have_attr = 0;
    pthread_mutex_unlock(&mu);
}

void mc_own_tree(const char *path)
{
    pthread_mutex_lock(&mu);
    gen++;
    drop_under(path);
    drop(path);
    parent_changed(path, 0);
    pthread_mutex_unlock(&mu);
}

void mc_inval(void *arg, uint32_t what, const char *path)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    gen++;
    if (what & DDIO_IV_TREE)
        drop_under(path);
    if (what & DDIO_IV_NAME) {
        drop(path);
        parent_changed(path, 0);
    } else if (what & DDIO_IV_ATTR) {
        struct ent *e = find(path);
        if (e)
            e->have_attr = 0;
    }
    pthread_mutex_unlock(&mu);
}

int mc_watching(void)
{
    pthread_mutex_lock(&mu);
    int w = on();
    pthread_mutex_unlock(&mu);
    return w;
}

void mc_up(void *arg, int server, int state)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    gen++;
    clear_all();
    if (up && server >= 0 && server < nservers) {
        int was = up[server] == 1;
        up[server] = state == 1 ? 1 : (state < 0 ? 2 : 0);
        nup += (up[server] == 1) - was;
    }
    pthread_mutex_unlock(&mu);
    if (state < 0)
        fprintf(stderr, "ddio-fuse: server %d refuses WATCH (%s): names and attributes "
                        "are not kept\n", server, strerror(-state));
}
