/* One datafile's sector checksums, in memory and in their sidecar
 * (sums.h has the states and the crash rule). The sidecar: a header
 * {magic, version, state, sector, datafile inode}, then one record
 * {crc u32, state u32} per sector, host byte order. Written in batches:
 * the header DIRTY once per writing period, the changed records and the
 * header CLEAN at a flush (MPI_File_sync, close). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sums.h"

#include <errno.h>
#include <fcntl.h>
#include <isa-l/crc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fault.h"
#include "store_roots.h"

struct sums_counters sums_ctr;

struct sum_rec { uint32_t crc, state; };

struct sums_hdr {
    uint32_t magic, version, state, sector;
    uint64_t ino;
    uint8_t pad[SUMS_HDR - 24];
};

struct sums {
    pthread_mutex_t mu;
    int rootfd;
    char *rel;                   /* the sidecar's path under rootfd */
    int fd;                      /* the sidecar, -1 until the first write */
    uint64_t ino;                /* the datafile's inode */
    struct sum_rec *r;
    uint64_t n, cap;             /* sectors known of, allocated */
    uint64_t dlo, dhi;           /* records changed since the last flush */
    uint64_t cut;                /* the sidecar must be cut to n records */
    int hdr;                     /* what the sidecar's header says now
                                  * (0: nothing valid) */
    int born;                    /* no sidecar was on disk at the open and
                                  * none has said CLEAN since: a crash can
                                  * leave none or a DIRTY one, never sums
                                  * that look trusted, so marking it DIRTY
                                  * needs no fdatasync */
    uint64_t nstale;
    uint64_t writing;            /* writes begun whose sums are not in yet:
                                  * while any is, the header stays DIRTY */
    uint64_t ended;              /* writes ended since the open (sums_gen) */
};

static const uint8_t zeros[SUMS_SECTOR];

uint32_t sums_crc(const void *buf, size_t n)
{
    uint32_t c = crc32_iscsi((unsigned char *)buf, (int)n, 0xFFFFFFFFu);
    if (n < SUMS_SECTOR)
        c = crc32_iscsi((unsigned char *)zeros, (int)(SUMS_SECTOR - n), c);
    return c;
}

/* ---- records --------------------------------------------------------------------------- */

static void touch(struct sums *s, uint64_t i)
{
    if (s->dlo >= s->dhi) {
        s->dlo = i;
        s->dhi = i + 1;
        return;
    }
    if (i < s->dlo)
        s->dlo = i;
    if (i + 1 > s->dhi)
        s->dhi = i + 1;
}

/* sector i exists in memory (new ones UNKNOWN); 0 or -ENOMEM */
static int grow(struct sums *s, uint64_t i)
{
    if (i < s->n)
        return 0;
    if (i >= s->cap) {
        uint64_t cap = s->cap ? s->cap : 256;
        while (cap <= i)
            cap *= 2;
        struct sum_rec *r = realloc(s->r, cap * sizeof(*r));
        if (!r)
            return -ENOMEM;
        s->r = r;
        s->cap = cap;
    }
    memset(s->r + s->n, 0, (i + 1 - s->n) * sizeof(*s->r));
    /* the new records are written too: after a cut, the sidecar may still
     * hold old sums there (it is cut to n only at the flush) */
    touch(s, s->n);
    touch(s, i);
    s->n = i + 1;
    return 0;
}

static void set_state(struct sums *s, uint64_t i, uint32_t st, uint32_t crc)
{
    if (s->r[i].state == SUM_STALE)
        s->nstale--;
    if (st == SUM_STALE)
        s->nstale++;
    s->r[i] = (struct sum_rec){.crc = crc, .state = st};
    touch(s, i);
}

/* ---- the sidecar ------------------------------------------------------------------------ */

static int write_hdr(struct sums *s, uint32_t state)
{
    struct sums_hdr h = {.magic = SUMS_MAGIC, .version = SUMS_VERSION, .state = state,
                         .sector = SUMS_SECTOR, .ino = s->ino};
    int rc = pwrite_all(s->fd, &h, sizeof(h), 0);
    if (rc == 0)
        s->hdr = (int)state;
    if (state == SUMS_CLEAN)
        s->born = 0;             /* may reach the disk from now on */
    return rc;
}

/* the records of a sidecar whose header h was read; DIRTY: OK ones SUSPECT */
static void load_records(struct sums *s, int fd, const struct sums_hdr *h)
{
    struct stat sb;
    if (fstat(fd, &sb) || (uint64_t)sb.st_size <= SUMS_HDR)
        return;
    uint64_t n = ((uint64_t)sb.st_size - SUMS_HDR) / sizeof(struct sum_rec);
    if (n == 0 || grow(s, n - 1))
        return;
    s->dlo = s->dhi = 0;         /* as stored: nothing to write back */
    ssize_t got = pread(fd, s->r, n * sizeof(*s->r), SUMS_HDR);
    uint64_t have = got > 0 ? (uint64_t)got / sizeof(*s->r) : 0;
    memset(s->r + have, 0, (n - have) * sizeof(*s->r));
    for (uint64_t i = 0; i < n; i++) {
        uint32_t st = s->r[i].state;
        if (st == SUM_OK && h->state == SUMS_DIRTY)
            s->r[i].state = SUM_SUSPECT;
        else if (st != SUM_OK && st != SUM_SUSPECT)
            s->r[i].state = SUM_UNKNOWN;
    }
    s->hdr = (int)h->state;
    if (h->state == SUMS_DIRTY) {  /* stored as SUSPECT before any CLEAN */
        s->dlo = 0;
        s->dhi = n;
    }
}

static void load(struct sums *s)
{
    int fd = open_beneath(s->rootfd, s->rel, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        s->born = fd == -ENOENT;
        return;
    }
    struct sums_hdr h;
    if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) && h.magic == SUMS_MAGIC &&
        h.version == SUMS_VERSION && h.sector == SUMS_SECTOR && h.ino == s->ino &&
        (h.state == SUMS_DIRTY || h.state == SUMS_CLEAN))
        load_records(s, fd, &h);
    s->fd = fd;                  /* a foreign one is rewritten at the first write */
}

struct sums *sums_open(int rootfd, const char *rel, int datafd, int fresh)
{
    struct sums *s = calloc(1, sizeof(*s));
    size_t len = strlen(rel) + sizeof(".ddio/sums/");
    if (!s || !(s->rel = malloc(len))) {
        free(s);
        return NULL;
    }
    snprintf(s->rel, len, ".ddio/sums/%s", rel);
    pthread_mutex_init(&s->mu, NULL);
    s->rootfd = rootfd;
    s->fd = -1;
    struct stat sb;
    s->ino = fstat(datafd, &sb) == 0 ? (uint64_t)sb.st_ino : 0;
    if (fresh)
        s->born = unlink_beneath(rootfd, s->rel, 0) == -ENOENT;
    else
        load(s);
    return s;
}

/* s->mu held: the sidecar exists and is ours (a foreign one cut) */
static int own_sidecar(struct sums *s)
{
    if (s->fd < 0) {
        int rc = mkdir_parents(s->rootfd, s->rel);
        if (rc)
            return rc;
        int fd = open_beneath(s->rootfd, s->rel, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
            return fd;
        s->fd = fd;
    }
    if (s->hdr == 0) {           /* new or foreign: every record rewritten */
        if (ftruncate(s->fd, 0))
            return -errno;
        s->dlo = 0;
        s->dhi = s->n;
    }
    return 0;
}

int sums_begin_write(struct sums *s)
{
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    if (s->hdr != SUMS_DIRTY) {
        rc = own_sidecar(s);
        if (rc == 0)
            rc = write_hdr(s, SUMS_DIRTY);
        /* a brand-new sidecar's DIRTY mark is not synced: the sync would
         * commit the new file's journal transaction, and with it every
         * dirty page of the datafile the write is filling (ext4's
         * ordered mode), inside the first write of every new file */
        if (rc == 0 && !s->born && fdatasync(s->fd))
            rc = -errno;
        if (rc)
            s->hdr = 0;
    }
    if (rc == 0)
        s->writing++;
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void sums_end_write(struct sums *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->writing > 0)
        s->writing--;
    s->ended++;
    pthread_mutex_unlock(&s->mu);
}

uint64_t sums_gen(struct sums *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t g = s->ended;
    pthread_mutex_unlock(&s->mu);
    return g;
}

/* ---- writes and reads ------------------------------------------------------------------- */

void sums_set(struct sums *s, uint64_t off, const void *buf, uint64_t len)
{
    const uint8_t *b = buf;
    uint64_t first = off / SUMS_SECTOR, n = (len + SUMS_SECTOR - 1) / SUMS_SECTOR;
    pthread_mutex_lock(&s->mu);
    if (n && grow(s, first + n - 1) == 0)
        for (uint64_t i = 0; i < n; i++) {
            uint64_t part = len - i * SUMS_SECTOR;
            set_state(s, first + i, SUM_OK,
                      sums_crc(b + i * SUMS_SECTOR, part < SUMS_SECTOR ? part : SUMS_SECTOR));
        }
    pthread_mutex_unlock(&s->mu);
}

void sums_stale(struct sums *s, uint64_t lo, uint64_t hi)
{
    if (hi <= lo)
        return;
    uint64_t first = lo / SUMS_SECTOR, last = (hi - 1) / SUMS_SECTOR;
    pthread_mutex_lock(&s->mu);
    if (grow(s, last) == 0)
        for (uint64_t i = first; i <= last; i++)
            set_state(s, i, SUM_STALE, 0);
    pthread_mutex_unlock(&s->mu);
}

void sums_truncate(struct sums *s, uint64_t size)
{
    uint64_t keep = (size + SUMS_SECTOR - 1) / SUMS_SECTOR;
    pthread_mutex_lock(&s->mu);
    for (uint64_t i = keep; i < s->n; i++)
        if (s->r[i].state == SUM_STALE)
            s->nstale--;
    if (keep < s->n) {
        s->n = keep;
        s->cut = 1;
        if (s->dhi > keep)
            s->dhi = keep;
    }
    if (size % SUMS_SECTOR && keep > 0 && grow(s, keep - 1) == 0)
        set_state(s, keep - 1, SUM_STALE, 0);
    pthread_mutex_unlock(&s->mu);
}

int sums_verify(struct sums *s, uint64_t off, const void *buf, uint64_t len, uint64_t *bad)
{
    const uint8_t *b = buf;
    uint64_t first = off / SUMS_SECTOR, n = (len + SUMS_SECTOR - 1) / SUMS_SECTOR;
    uint64_t ok = 0, unknown = 0, nbad = 0;
    pthread_mutex_lock(&s->mu);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t k = first + i;
        uint32_t st = k < s->n ? s->r[k].state : SUM_UNKNOWN;
        if (st != SUM_OK && st != SUM_SUSPECT) {
            unknown++;
            continue;
        }
        uint64_t part = len - i * SUMS_SECTOR;
        uint32_t c = sums_crc(b + i * SUMS_SECTOR, part < SUMS_SECTOR ? part : SUMS_SECTOR);
        if (c == s->r[k].crc) {
            ok++;
            if (st == SUM_SUSPECT)
                set_state(s, k, SUM_OK, c);
        } else if (st == SUM_SUSPECT) {
            unknown++;           /* a crash's leftover, not corruption */
            set_state(s, k, SUM_UNKNOWN, 0);
        } else {
            nbad = 1;
            *bad = k * SUMS_SECTOR;
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    atomic_fetch_add(&sums_ctr.verified, ok);
    atomic_fetch_add(&sums_ctr.unknown, unknown);
    return nbad ? -EILSEQ : 0;
}

/* ---- flush ------------------------------------------------------------------------------ */

/* s->mu held: STALE sectors summed from the datafile as it is now (a write
 * racing with this updates its sectors after its data landed, so it wins) */
static int recompute_stale(struct sums *s, int datafd)
{
    if (s->nstale == 0)
        return 0;
    void *buf;
    if (posix_memalign(&buf, SUMS_SECTOR, SUMS_SECTOR))
        return -ENOMEM;
    int rc = 0;
    for (uint64_t i = 0; i < s->n && s->nstale > 0 && rc == 0; i++) {
        if (s->r[i].state != SUM_STALE)
            continue;
        ssize_t got = pread(datafd, buf, SUMS_SECTOR, (off_t)(i * SUMS_SECTOR));
        if (got < 0)
            rc = -errno;
        else
            set_state(s, i, SUM_OK, sums_crc(buf, (size_t)got));
    }
    free(buf);
    return rc;
}

/* s->mu held; durable: the caller made the data durable after every
 * write that has ended */
static int flush_locked(struct sums *s, int datafd, int durable)
{
    int rc = recompute_stale(s, datafd);
    int changed = s->dhi > s->dlo || s->cut;
    if (rc == 0 && changed && s->hdr != SUMS_DIRTY)
        rc = -EPROTO;            /* changes without begin_write: not ours to store */
    if (rc == 0 && changed) {
        fault_hit(FAULT_SUMS);
        if (s->dhi > s->dlo)
            rc = pwrite_all(s->fd, s->r + s->dlo, (s->dhi - s->dlo) * sizeof(*s->r),
                           SUMS_HDR + s->dlo * sizeof(*s->r));
        if (rc == 0 && s->cut && ftruncate(s->fd, (off_t)(SUMS_HDR + s->n * sizeof(*s->r))))
            rc = -errno;
        if (rc == 0) {
            s->dlo = s->dhi = 0;
            s->cut = 0;
        }
    }
    /* CLEAN only with no write between its DIRTY mark and its sums: one
     * whose data lands after this would be newer than sums said CLEAN,
     * and its own sums could no longer be stored (-EPROTO above) */
    if (rc == 0 && durable && s->writing == 0 && s->hdr == SUMS_DIRTY) {
        if (fdatasync(s->fd))
            rc = -errno;
        else                     /* after the records: a crash before it leaves DIRTY */
            rc = write_hdr(s, SUMS_CLEAN);
    }
    return rc == -EPROTO ? 0 : rc;
}

int sums_flush(struct sums *s, int datafd, int durable)
{
    pthread_mutex_lock(&s->mu);
    int rc = flush_locked(s, datafd, durable);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int sums_flush_since(struct sums *s, int datafd, uint64_t gen)
{
    pthread_mutex_lock(&s->mu);
    int rc = flush_locked(s, datafd, s->ended == gen);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int sums_dirty(struct sums *s)
{
    pthread_mutex_lock(&s->mu);
    int d = s->hdr == SUMS_DIRTY;
    pthread_mutex_unlock(&s->mu);
    return d;
}

void sums_close(struct sums *s, int datafd, int gone, int durable)
{
    if (!s)
        return;
    if (!gone)
        (void)sums_flush(s, datafd, durable);
    if (s->fd >= 0)
        close(s->fd);
    pthread_mutex_destroy(&s->mu);
    free(s->r);
    free(s->rel);
    free(s);
}

enum sum_state sums_state(struct sums *s, uint64_t i, uint32_t *crc)
{
    pthread_mutex_lock(&s->mu);
    enum sum_state st = i < s->n ? (enum sum_state)s->r[i].state : SUM_UNKNOWN;
    if (crc)
        *crc = i < s->n ? s->r[i].crc : 0;
    pthread_mutex_unlock(&s->mu);
    return st;
}
