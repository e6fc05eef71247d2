/* The answers of requests that must not run twice (replay.h).
 *
 * One table per server process: a ring of answers per client, clients in
 * least-recently-used order. A client resends only the calls it had in
 * flight when its connection dropped (one per connection and thread), so a
 * few dozen answers per client cover every resend.
 *
 * The table is its own storage: a fixed-size file (the first root's
 * .ddio/replay) mapped MAP_SHARED, read and written in place. A store into
 * the mapping is in the page cache at once, so a server that is SIGKILLed
 * (or crashes) after noting an answer leaves it for the next process, and
 * the write path gains no system call. Only a store cut by the kill is
 * lost: each entry carries a checksum, and a torn one reads as absent (the
 * resend then runs again, as before this table was kept). The file is
 * never synced: after a power loss it may come back older or torn, which
 * loses answers only for writes no acknowledged SYNC covered (a client
 * syncs after its write's DONE, and a write whose DONE was lost is one no
 * SYNC of its client covered); such a write may be lost itself, and
 * running it again writes the same bytes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "replay.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLE_MAGIC   "DDIOrply"
#define TABLE_VERSION 1u
#define HDR_SIZE 4096u

struct file_hdr {               /* at offset 0; the slots follow at HDR_SIZE */
    char magic[8];
    uint32_t version, clients, per_client, max_answer;
};

struct slot {                   /* a client */
    uint64_t id;
    uint64_t used;              /* tick of the last note or find; 0: free */
    uint32_t next;              /* ring position of the next note */
    uint32_t pad[3];
};

struct entry {                  /* an answer: 128 bytes */
    uint64_t client, call;      /* client 0: empty */
    uint32_t len, pad;
    uint64_t sum;               /* entry_sum: a torn entry does not match */
    uint8_t p[REPLAY_MAX_ANSWER];
};

#define SLOTS_SIZE ((size_t) REPLAY_CLIENTS * sizeof(struct slot))
#define ENTS_SIZE  ((size_t) REPLAY_CLIENTS * REPLAY_PER_CLIENT * sizeof(struct entry))
#define MAP_SIZE   (HDR_SIZE + SLOTS_SIZE + ENTS_SIZE)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *base;           /* the mapping (file or anonymous); NULL: none yet */
static int fd = -1;             /* the file, flock'ed while mapped */
static uint64_t tick;

static struct slot *slot_at(int i)
{
    return (struct slot *) (base + HDR_SIZE) + i;
}

static struct entry *entry_at(int i, int k)
{
    return (struct entry *) (base + HDR_SIZE + SLOTS_SIZE) + (size_t) i * REPLAY_PER_CLIENT + k;
}

/* FNV-1a over the entry's fields and answer: any store of the entry's
 * write left out (a kill between two) changes it */
static uint64_t entry_sum(const struct entry *e)
{
    uint64_t h = 0xcbf29ce484222325ull;
    uint64_t f[3] = {e->client, e->call, e->len};
    const uint8_t *b = (const uint8_t *) f;
    for (size_t i = 0; i < sizeof(f); i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    for (uint32_t i = 0; i < e->len && i < REPLAY_MAX_ANSWER; i++)
        h = (h ^ e->p[i]) * 0x100000001b3ull;
    return h | 1;               /* never 0, the sum of an empty entry */
}

static int entry_valid(const struct entry *e)
{
    return e->client && e->len <= REPLAY_MAX_ANSWER && e->sum == entry_sum(e);
}

/* ---- the mapping ---------------------------------------------------------------- */

static int map_anon(void)
{
    void *p = mmap(NULL, MAP_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -errno;
    base = p;
    return 0;
}

static int header_ok(void)
{
    const struct file_hdr *h = (const struct file_hdr *) base;
    return !memcmp(h->magic, TABLE_MAGIC, sizeof(h->magic)) && h->version == TABLE_VERSION &&
           h->clients == REPLAY_CLIENTS && h->per_client == REPLAY_PER_CLIENT &&
           h->max_answer == REPLAY_MAX_ANSWER;
}

/* an empty table in the file (zeros already: a new file): the header
 * cleared first and written last, so a start cut short in between makes
 * the next one start empty again */
static void file_reset(int zeros)
{
    if (!zeros)
        memset(base, 0, MAP_SIZE);
    struct file_hdr h = {.version = TABLE_VERSION, .clients = REPLAY_CLIENTS,
                         .per_client = REPLAY_PER_CLIENT, .max_answer = REPLAY_MAX_ANSWER};
    memcpy(h.magic, TABLE_MAGIC, sizeof(h.magic));
    memcpy(base, &h, sizeof(h));
}

static int map_file(const char *path, struct replay_info *info)
{
    struct stat sb;
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return -errno;
    /* a second server on the same roots must not share the table */
    if (flock(fd, LOCK_EX | LOCK_NB) || fstat(fd, &sb))
        return -errno;
    if ((size_t) sb.st_size != MAP_SIZE && ftruncate(fd, (off_t) MAP_SIZE))
        return -errno;
    /* every block allocated now: a store into a hole of a full file system
     * would be SIGBUS, not an error */
    int e = posix_fallocate(fd, 0, (off_t) MAP_SIZE);
    if (e)
        return -e;
    void *p = mmap(NULL, MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return -errno;
    base = p;
    if ((size_t) sb.st_size == MAP_SIZE && header_ok())
        return 0;
    info->fresh = 1;
    file_reset(sb.st_size == 0);
    return 0;
}

/* a slot reloaded: its tick counted, entries not its own or torn dropped */
static void load_slot(int i, struct replay_info *info)
{
    struct slot *s = slot_at(i);
    if (!s->used) {             /* free, or taken by a process killed then */
        if (s->id)
            memset(entry_at(i, 0), 0, REPLAY_PER_CLIENT * sizeof(struct entry));
        memset(s, 0, sizeof(*s));
        return;
    }
    info->clients++;
    s->next %= REPLAY_PER_CLIENT;
    if (s->used > tick)
        tick = s->used;
    for (int k = 0; k < REPLAY_PER_CLIENT; k++) {
        struct entry *e = entry_at(i, k);
        if (!e->client)
            continue;
        if (e->client == s->id && entry_valid(e))
            info->answers++;
        else {
            memset(e, 0, sizeof(*e));
            info->torn++;
        }
    }
}

static void unmap(void)
{
    if (base)
        munmap(base, MAP_SIZE);
    if (fd >= 0)
        close(fd);              /* drops the flock */
    base = NULL;
    fd = -1;
}

void replay_open(const char *path, struct replay_info *info, char *err, size_t errlen)
{
    memset(info, 0, sizeof(*info));
    *err = '\0';
    pthread_mutex_lock(&mu);
    unmap();
    tick = 0;
    int rc = path ? map_file(path, info) : -ENOENT;
    if (rc) {
        if (path)
            snprintf(err, errlen, "%s: %s%s", path, strerror(-rc),
                     rc == -EWOULDBLOCK ? " (another server uses these roots?)" : "");
        unmap();
        info->fresh = 1;
        rc = map_anon();
        if (rc)
            snprintf(err, errlen, "answers table: %s", strerror(-rc));
    } else {
        info->persistent = 1;
        for (int i = 0; i < REPLAY_CLIENTS; i++)
            load_slot(i, info);
    }
    pthread_mutex_unlock(&mu);
}

void replay_close(void)
{
    pthread_mutex_lock(&mu);
    unmap();
    pthread_mutex_unlock(&mu);
}

/* ---- lookups and notes ------------------------------------------------------------ */

static int table(void)
{
    return base || map_anon() == 0;
}

static int client_find(uint64_t id)
{
    for (int i = 0; i < REPLAY_CLIENTS; i++)
        if (slot_at(i)->used && slot_at(i)->id == id)
            return i;
    return -1;
}

/* a free slot, or the least recently used client's, emptied */
static int client_take(uint64_t id)
{
    int old = 0;
    for (int i = 1; i < REPLAY_CLIENTS && slot_at(old)->used; i++)
        if (slot_at(i)->used < slot_at(old)->used)
            old = i;
    struct slot *s = slot_at(old);
    s->used = 0;                /* a kill from here on leaves the slot free */
    memset(entry_at(old, 0), 0, REPLAY_PER_CLIENT * sizeof(struct entry));
    s->id = id;
    s->next = 0;
    return old;
}

int replay_find(uint64_t client, uint64_t call, uint8_t **p, size_t *len)
{
    int hit = 0;
    pthread_mutex_lock(&mu);
    int i = table() ? client_find(client) : -1;
    for (int k = 0; i >= 0 && k < REPLAY_PER_CLIENT && !hit; k++) {
        const struct entry *e = entry_at(i, k);
        if (e->client == client && e->call == call && entry_valid(e) &&
            (*p = malloc(e->len + 1))) {
            memcpy(*p, e->p, e->len);
            *len = e->len;
            slot_at(i)->used = ++tick;
            hit = 1;
        }
    }
    pthread_mutex_unlock(&mu);
    return hit;
}

void replay_note(uint64_t client, uint64_t call, const uint8_t *p, size_t len)
{
    if (len > REPLAY_MAX_ANSWER || !client)
        return;         /* a resend is then done again: the same bytes */
    pthread_mutex_lock(&mu);
    if (table()) {
        int i = client_find(client);
        if (i < 0)
            i = client_take(client);
        struct slot *s = slot_at(i);
        struct entry *e = entry_at(i, (int) (s->next % REPLAY_PER_CLIENT));
        e->client = client;
        e->call = call;
        e->len = (uint32_t) len;
        memcpy(e->p, p, len);
        e->sum = entry_sum(e);
        s->next = (s->next + 1) % REPLAY_PER_CLIENT;
        s->used = ++tick;
    }
    pthread_mutex_unlock(&mu);
}
