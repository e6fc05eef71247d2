/* This server's own notes of the mirrored files it changed (changed.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "changed.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "marks.h"
#include "server.h"

#define MAX_GENS 4096            /* generations looked at in one pass */

static void gen_dir(uint64_t gen, char *out, size_t n)
{
    snprintf(out, n, "changed/%" PRIu64, gen);
}

/* the mark's hash, never 0 (an empty slot of recent[]) */
static uint64_t path_hash(const char *norm)
{
    return marks_hash(norm) | 1;
}

struct gens {
    uint64_t *g;
    int n, max;
};

static int gen_one(void *arg, const char *name)
{
    struct gens *l = arg;
    char *end;
    unsigned long long v = strtoull(name, &end, 10);
    if (name[0] >= '1' && name[0] <= '9' && !*end)
        l->g[l->n++] = v;
    return l->n == l->max;
}

/* every generation there, ascending, into *g (malloc'd, the caller
 * frees it): how many, or -errno */
static int gens_all(struct server *srv, uint64_t **g)
{
    *g = malloc(MAX_GENS * sizeof(**g));
    struct gens l = {.g = *g, .max = MAX_GENS};
    int rc = l.g ? marks_each(srv->member.ddiofd, "changed", gen_one, &l) : -ENOMEM;
    if (rc)
        return rc;
    for (int i = 1; i < l.n; i++)           /* few: insertion sort */
        for (int j = i; j > 0 && l.g[j - 1] > l.g[j]; j--) {
            uint64_t t = l.g[j];
            l.g[j] = l.g[j - 1];
            l.g[j - 1] = t;
        }
    return l.n;
}

int changed_init(struct server *srv, char *err, size_t errlen)
{
    struct changed *ch = &srv->changed;
    pthread_mutex_init(&ch->mu, NULL);
    memset(ch->busy, 0, sizeof(ch->busy));
    memset(ch->recent, 0, sizeof(ch->recent));
    uint64_t *g;
    int n = gens_all(srv, &g);
    if (n >= 0 && mkdirat(srv->member.ddiofd, "changed", 0700) && errno != EEXIST)
        n = -errno;
    if (n < 0) {
        snprintf(err, errlen, ".ddio/changed: %s", strerror(-n));
        free(g);
        return n;
    }
    ch->gen = n ? g[n - 1] + 1 : 1;      /* a restart seals what was noted before */
    free(g);
    uint64_t files = changed_count(srv);
    if (files)
        DDIO_INFO("%llu change(s) of mirrored files not yet confirmed by a majority's "
                  "membership (kept for a resync should this server be out)",
                  (unsigned long long)files);
    return 0;
}

static void busy_add(struct changed *ch, uint64_t gen, int d)
{
    int free_slot = -1;
    for (int i = 0; i < CHANGED_SLOTS; i++) {
        if (ch->busy[i].n && ch->busy[i].gen == gen) {
            ch->busy[i].n = (uint32_t)((int)ch->busy[i].n + d);
            return;
        }
        if (!ch->busy[i].n && free_slot < 0)
            free_slot = i;
    }
    if (d > 0 && free_slot >= 0) {
        ch->busy[free_slot].gen = gen;
        ch->busy[free_slot].n = 1;
    }
}

/* the oldest generation with a change in flight (UINT64_MAX: none; a
 * change that finds no slot is refused, so every one in flight has one) */
static uint64_t busy_oldest(const struct changed *ch)
{
    uint64_t o = UINT64_MAX;
    for (int i = 0; i < CHANGED_SLOTS; i++)
        if (ch->busy[i].n && ch->busy[i].gen < o)
            o = ch->busy[i].gen;
    return o;
}

int changed_begin(struct server *srv, const char *norm, uint64_t *gen, char *msg, size_t n)
{
    struct changed *ch = &srv->changed;
    *gen = 0;
    if (member_self_out(&srv->member))
        return 0;
    uint64_t h = path_hash(norm);
    pthread_mutex_lock(&ch->mu);
    uint64_t g = ch->gen;
    int known = ch->recent[h % 64] == h;
    int slots = 0;
    for (int i = 0; i < CHANGED_SLOTS; i++)
        slots += ch->busy[i].n == 0 || ch->busy[i].gen == g;
    if (!slots) {
        pthread_mutex_unlock(&ch->mu);
        snprintf(msg, n, "noting a change of %.300s: too many generations in flight; send "
                 "again", norm);
        return -EAGAIN;
    }
    busy_add(ch, g, 1);
    pthread_mutex_unlock(&ch->mu);
    char dir[48];
    gen_dir(g, dir, sizeof(dir));
    int rc = known ? 0 : marks_put(&srv->store, srv->member.ddiofd, dir, norm);
    if (rc < 0) {
        changed_end(srv, g);
        snprintf(msg, n, "noting a change of %.300s: %s (the change is not made)", norm,
                 ddio_errno_name(-rc));
        return rc;
    }
    pthread_mutex_lock(&ch->mu);
    if (ch->gen == g)
        ch->recent[h % 64] = h;
    pthread_mutex_unlock(&ch->mu);
    *gen = g;
    return 0;
}

void changed_end(struct server *srv, uint64_t gen)
{
    if (!gen)
        return;
    pthread_mutex_lock(&srv->changed.mu);
    busy_add(&srv->changed, gen, -1);
    pthread_mutex_unlock(&srv->changed.mu);
}

uint64_t changed_seal(struct server *srv)
{
    struct changed *ch = &srv->changed;
    pthread_mutex_lock(&ch->mu);
    uint64_t g = ch->gen++, oldest = busy_oldest(ch);
    memset(ch->recent, 0, sizeof(ch->recent));
    pthread_mutex_unlock(&ch->mu);
    /* a change still in flight may land after the majority's read that
     * follows: its generation (and the later ones) wait for another seal */
    return oldest <= g ? oldest - 1 : g;
}

struct dropper {
    int ddiofd;
    const char *dir;
};

static int drop_one(void *arg, const char *name)
{
    struct dropper *d = arg;
    char rel[128];
    snprintf(rel, sizeof(rel), "%s/%.64s", d->dir, name);
    (void) unlinkat(d->ddiofd, rel, 0);
    return 0;
}

/* a generation's directory removed, marks first (a crash meanwhile leaves
 * some of its notes: more to resync, never less) */
static int gen_drop(int ddiofd, uint64_t gen)
{
    char dir[48];
    gen_dir(gen, dir, sizeof(dir));
    struct dropper d = {ddiofd, dir};
    int rc = marks_each(ddiofd, dir, drop_one, &d);
    if (rc)
        return rc;
    return unlinkat(ddiofd, dir, AT_REMOVEDIR) && errno != ENOENT ? -errno : 0;
}

int changed_confirm(struct server *srv, uint64_t gen)
{
    struct changed *ch = &srv->changed;
    pthread_mutex_lock(&ch->mu);
    uint64_t cur = ch->gen;
    pthread_mutex_unlock(&ch->mu);
    if (gen >= cur)             /* only a sealed generation goes */
        gen = cur - 1;
    uint64_t *g;
    int n = gens_all(srv, &g), dropped = 0;
    for (int i = 0; i < n && g[i] <= gen; i++) {
        int rc = gen_drop(srv->member.ddiofd, g[i]);
        if (rc < 0) {
            n = rc;
            break;
        }
        dropped++;
    }
    free(g);
    if (n >= 0 && dropped)
        (void) marks_sync_dir(srv->member.ddiofd, "changed");
    return n < 0 ? n : dropped;
}

int changed_list(struct server *srv, char **paths, int max)
{
    uint64_t *g;
    int n = gens_all(srv, &g), got = 0;
    for (int i = 0; i < n && got < max; i++) {
        char dir[48];
        gen_dir(g[i], dir, sizeof(dir));
        int k = marks_list(srv->member.ddiofd, dir, paths + got, max - got);
        if (k < 0) {
            n = k;
            break;
        }
        for (int j = got; j < got + k; j++) {   /* each path once */
            int dup = 0;
            for (int q = 0; q < got && !dup; q++)
                dup = !strcmp(paths[q], paths[j]);
            if (dup) {
                free(paths[j]);
                paths[j] = NULL;
            }
        }
        int w = got;
        for (int j = got; j < got + k; j++)
            if (paths[j])
                paths[w++] = paths[j];
        got = w;
    }
    free(g);
    if (n < 0)
        for (int i = 0; i < got; i++)
            free(paths[i]);
    return n < 0 ? n : got;
}

int changed_clear(struct server *srv, const char *norm)
{
    uint64_t *g;
    int n = gens_all(srv, &g), rc = 0;
    for (int i = 0; i < n && rc >= 0; i++) {
        char dir[48];
        gen_dir(g[i], dir, sizeof(dir));
        rc = marks_drop(srv->member.ddiofd, dir, norm);
    }
    free(g);
    pthread_mutex_lock(&srv->changed.mu);
    memset(srv->changed.recent, 0, sizeof(srv->changed.recent));
    pthread_mutex_unlock(&srv->changed.mu);
    return n < 0 ? n : rc < 0 ? rc : 0;
}

uint64_t changed_count(struct server *srv)
{
    uint64_t *g, files = 0;
    int n = gens_all(srv, &g);
    for (int i = 0; i < n; i++) {
        char dir[48];
        gen_dir(g[i], dir, sizeof(dir));
        files += (uint64_t)marks_count(srv->member.ddiofd, dir);
    }
    free(g);
    return files;
}
