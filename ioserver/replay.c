/* The answers of writes that must not run twice (replay.h). One table per
 * server process: a bounded ring of answers per client, clients in
 * least-recently-used order. A client resends only the calls it had in
 * flight when its connection dropped (one per connection and thread), so a
 * few dozen answers per client cover every resend; the table lives in
 * memory and a restarted server has forgotten it (PROTOCOL.md says what
 * that means). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "replay.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct answer {
    uint64_t call;
    uint8_t *p;                  /* NULL: slot unused */
    size_t len;
};

struct client {
    uint64_t id;
    uint64_t used;               /* tick of the last note or find */
    unsigned next;               /* ring position of the next note */
    struct answer a[REPLAY_PER_CLIENT];
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct client *clients;   /* REPLAY_CLIENTS slots, allocated on first note */
static uint64_t tick;

static struct client *client_find(uint64_t id)
{
    for (int i = 0; clients && i < REPLAY_CLIENTS; i++)
        if (clients[i].used && clients[i].id == id)
            return &clients[i];
    return NULL;
}

/* a free slot, or the least recently used client's, emptied */
static struct client *client_take(uint64_t id)
{
    struct client *old = NULL;
    if (!clients && !(clients = calloc(REPLAY_CLIENTS, sizeof(*clients))))
        return NULL;
    for (int i = 0; i < REPLAY_CLIENTS; i++)
        if (!old || clients[i].used < old->used)
            old = &clients[i];
    for (int k = 0; k < REPLAY_PER_CLIENT; k++)
        free(old->a[k].p);
    memset(old, 0, sizeof(*old));
    old->id = id;
    return old;
}

int replay_find(uint64_t client, uint64_t call, uint8_t **p, size_t *len)
{
    int hit = 0;
    pthread_mutex_lock(&mu);
    struct client *c = client_find(client);
    for (int k = 0; c && k < REPLAY_PER_CLIENT && !hit; k++)
        if (c->a[k].p && c->a[k].call == call && (*p = malloc(c->a[k].len + 1))) {
            memcpy(*p, c->a[k].p, c->a[k].len);
            *len = c->a[k].len;
            c->used = ++tick;
            hit = 1;
        }
    pthread_mutex_unlock(&mu);
    return hit;
}

void replay_note(uint64_t client, uint64_t call, const uint8_t *p, size_t len)
{
    uint8_t *copy = malloc(len + 1);
    if (!copy)
        return;         /* a resend is then done again: the same bytes */
    memcpy(copy, p, len);
    pthread_mutex_lock(&mu);
    struct client *c = client_find(client);
    if (!c)
        c = client_take(client);
    if (c) {
        struct answer *a = &c->a[c->next];
        free(a->p);
        a->call = call;
        a->p = copy;
        a->len = len;
        c->next = (c->next + 1) % REPLAY_PER_CLIENT;
        c->used = ++tick;
        copy = NULL;
    }
    pthread_mutex_unlock(&mu);
    free(copy);
}
