/* The names the kernel may keep (ddio_fuse_held.h): one hash table of
 * paths with the time the kernel's copy runs out, under one mutex. An
 * entry past its time is dropped when the table is scanned or grows. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_fuse_held.h"

#include "ddio_fuse_cache.h"
#include "ddio_net.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NBUCKETS (1u << 14)
#define SLACK_MS 200             /* the kernel's clock and ours: err long */

struct held {
    struct held *next;
    uint64_t hash;
    int64_t until;
    char path[];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct held *tab[NBUCKETS];
static unsigned nheld, prune_at = 4096;
static int64_t keep_ms;

void held_init(double timeout_s)
{
    keep_ms = timeout_s > 0 ? (int64_t)(timeout_s * 1000) + SLACK_MS : 0;
}

/* every entry past its time dropped (mu held) */
static void prune(int64_t t)
{
    for (unsigned b = 0; b < NBUCKETS; b++)
        for (struct held **pp = &tab[b]; *pp;) {
            struct held *e = *pp;
            if (e->until <= t) {
                *pp = e->next;
                free(e);
                nheld--;
            } else
                pp = &e->next;
        }
}

void held_note(const char *path)
{
    if (!keep_ms)
        return;
    uint64_t h = mc_hash(path);
    int64_t t = ddio_now_ms();
    pthread_mutex_lock(&mu);
    struct held *e = tab[h % NBUCKETS];
    while (e && (e->hash != h || strcmp(e->path, path)))
        e = e->next;
    if (!e && nheld >= prune_at) {
        prune(t);
        prune_at = nheld * 2 > 4096 ? nheld * 2 : 4096;
    }
    if (!e && (e = malloc(sizeof(*e) + strlen(path) + 1))) {
        strcpy(e->path, path);
        e->hash = h;
        e->next = tab[h % NBUCKETS];
        tab[h % NBUCKETS] = e;
        nheld++;
    }
    if (e)
        e->until = t + keep_ms;
    pthread_mutex_unlock(&mu);
}

int held_under(const char *path, char ***out)
{
    size_t n = strlen(path);
    int root = !strcmp(path, "/"), k = 0, cap = 0;
    *out = NULL;
    pthread_mutex_lock(&mu);
    prune(ddio_now_ms());
    for (unsigned b = 0; b < NBUCKETS; b++)
        for (struct held *e = tab[b]; e; e = e->next) {
            if (root ? !strcmp(e->path, "/") : strncmp(e->path, path, n) || e->path[n] != '/')
                continue;
            if (k == cap) {
                char **v = realloc(*out, (size_t)(cap = cap ? 2 * cap : 16) * sizeof(*v));
                if (!v)
                    goto done;
                *out = v;
            }
            if (((*out)[k] = strdup(e->path)))
                k++;
        }
done:
    pthread_mutex_unlock(&mu);
    return k;
}
