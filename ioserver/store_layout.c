/* Stored layouts: a file's striping and its creator's ids (magic, version,
 * record) in its first datafile's xattr or in ROOT_1/.ddio/meta/PATH
 * (store_layout.h), read back, and checked against this server (ESTALE). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE      /* O_TMPFILE */
#endif
#include "store_layout.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ddio_net.h"             /* errno names */
#include "store_roots.h"

/* ---- layout records ---------------------------------------------------------------- */

int store_meta_encode(const struct ddio_layout_rec *l, const struct store_creator *cr,
                      struct ddio_wbuf *w)
{
    ddio_put_u32(w, STORE_META_MAGIC);
    ddio_put_u32(w, STORE_META_VERSION);
    ddio_enc_layout(w, l);
    ddio_put_u64(w, cr ? cr->client : 0);
    ddio_put_u64(w, cr ? cr->call : 0);
    return w->err;
}

/* version 1 (before creators were kept) is read as made by nobody known;
 * versions 1 and 2 (before copies) as one copy */
int store_meta_decode(const void *p, size_t n, struct ddio_layout_rec *l,
                      struct store_creator *cr)
{
    struct ddio_rbuf r;
    struct store_creator none = {0, 0};
    ddio_rbuf_init(&r, p, n);
    uint32_t magic = ddio_get_u32(&r);
    uint32_t ver = ddio_get_u32(&r);
    if (r.err || magic != STORE_META_MAGIC || ver < 1 || ver > STORE_META_VERSION)
        return -EPROTO;
    memset(l, 0, sizeof(*l));
    if ((ver >= 3 ? ddio_dec_layout(&r, l) : ddio_dec_layout_base(&r, l)) != 0)
        return -EPROTO;
    if (ver >= 2) {
        none.client = ddio_get_u64(&r);
        none.call = ddio_get_u64(&r);
    }
    if (ddio_rbuf_done(&r))
        return -EPROTO;
    if (cr)
        *cr = none;
    return 0;
}

static void hex_id(const uint8_t *id, char *out)
{
    for (unsigned i = 0; i < DDIO_ID_LEN; i++)
        sprintf(out + 2 * i, "%02x", id[i]);
}

int store_layout_check(const struct store *st, const struct ddio_layout_rec *l,
                       char *msg, size_t msglen)
{
    char a[2 * DDIO_ID_LEN + 1], b[2 * DDIO_ID_LEN + 1];
    if (l->stripe_count == 0 || l->stripe_count > DDIO_MAX_SERVERS
        || l->server_index >= l->stripe_count) {
        snprintf(msg, msglen, "stored layout is invalid (index %u of %u)",
                 l->server_index, l->stripe_count);
        return -ESTALE;
    }
    if (memcmp(l->ids[l->server_index], st->id, DDIO_ID_LEN) != 0) {
        hex_id(l->ids[l->server_index], a);
        hex_id(st->id, b);
        snprintf(msg, msglen, "layout names server %s at index %u, but this server is %s",
                 a, l->server_index, b);
        return -ESTALE;
    }
    if (l->ndisks != (uint32_t)st->ndisks || l->block_size != st->block_size) {
        snprintf(msg, msglen, "file was created with %u disks / block size %" PRIu64
                 ", server now has %d disks / block size %" PRIu64,
                 l->ndisks, l->block_size, st->ndisks, st->block_size);
        return -ESTALE;
    }
    return 0;
}

int load_meta(struct store *st, const char *path, struct ddio_layout_rec *l,
              struct store_creator *cr, char *msg, size_t msglen)
{
    size_t cap = 64 + sizeof(*l) + 4 * DDIO_MAX_SERVERS;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    ssize_t n = read_small(st->metafd, path, buf, cap);
    /* empty: a create whose record never reached the disk (renamed, not yet
     * synced, then the host crashed): the file was never made durable */
    int rc = n < 0 ? (int)n : n == 0 ? -ENOENT : store_meta_decode(buf, (size_t)n, l, cr);
    free(buf);
    if (rc && rc != -ENOENT)
        snprintf(msg, msglen, "layout record of %s: %s", path,
                 rc == -EPROTO ? "corrupt" : ddio_errno_name(-rc));
    return rc;
}

/* ---- server sets: a layout's ids, once per server list ------------------------------ */

#define SET_MAGIC    0x53534444u   /* "DDSS": count, ids */
#define XATTR_MAGIC  0x344C4444u   /* "DDL4": the compact layout */
#define SETS_KEPT    256           /* sets remembered; more are read again */

struct store_set {
    struct store_set *next;
    uint64_t hash;
    uint32_t count;
    uint8_t ids[][DDIO_ID_LEN];
};

/* FNV-1a over the count and the ids */
static uint64_t set_hash(uint32_t count, const uint8_t (*ids)[DDIO_ID_LEN])
{
    uint64_t h = 0xcbf29ce484222325ull;
    const uint8_t *p = (const uint8_t *)&count;
    for (size_t i = 0; i < sizeof(count); i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    p = ids[0];
    for (size_t i = 0; i < (size_t)count * DDIO_ID_LEN; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void set_name(uint64_t h, char *out, size_t n)
{
    snprintf(out, n, "%016" PRIx64, h);
}

/* sets_mu held */
static struct store_set *set_find(struct store *st, uint64_t h)
{
    for (struct store_set *s = st->sets; s; s = s->next)
        if (s->hash == h)
            return s;
    return NULL;
}

static void set_keep(struct store *st, uint64_t h, uint32_t count,
                     const uint8_t (*ids)[DDIO_ID_LEN])
{
    pthread_mutex_lock(&st->sets_mu);
    struct store_set *s = NULL;
    if (!set_find(st, h) && st->nsets < SETS_KEPT
        && (s = malloc(sizeof(*s) + (size_t)count * DDIO_ID_LEN))) {
        s->hash = h;
        s->count = count;
        memcpy(s->ids, ids, (size_t)count * DDIO_ID_LEN);
        s->next = st->sets;
        st->sets = s;
        st->nsets++;
    }
    pthread_mutex_unlock(&st->sets_mu);
}

void store_sets_fini(struct store *st)
{
    while (st->sets) {
        struct store_set *n = st->sets->next;
        free(st->sets);
        st->sets = n;
    }
    st->nsets = 0;
}

/* set h's ids into l (l->stripe_count of them): remembered, else read
 * from its file; -EPROTO if missing or another list */
static int set_get(struct store *st, uint64_t h, struct ddio_layout_rec *l)
{
    size_t len = (size_t)l->stripe_count * DDIO_ID_LEN;
    pthread_mutex_lock(&st->sets_mu);
    struct store_set *s = set_find(st, h);
    int rc = !s ? -ENOENT : s->count == l->stripe_count ? 0 : -EPROTO;
    if (rc == 0)
        memcpy(l->ids, s->ids, len);
    pthread_mutex_unlock(&st->sets_mu);
    if (rc != -ENOENT)
        return rc;
    char name[32];
    uint8_t buf[8 + sizeof(l->ids)];
    set_name(h, name, sizeof(name));
    ssize_t n = read_small(st->setsfd, name, buf, sizeof(buf));
    struct ddio_rbuf r;
    ddio_rbuf_init(&r, buf, n > 0 ? (size_t)n : 0);
    uint32_t magic = ddio_get_u32(&r), count = ddio_get_u32(&r);
    const uint8_t *ids = r.err || count != l->stripe_count ? NULL : ddio_get_bytes(&r, len);
    if (!ids || magic != SET_MAGIC || ddio_rbuf_done(&r)
        || set_hash(count, (const uint8_t (*)[DDIO_ID_LEN])ids) != h)
        return -EPROTO;
    memcpy(l->ids, ids, len);
    set_keep(st, h, count, l->ids);
    return 0;
}

/* l's server list stored once (made durable before any file names it):
 * its hash in *h; -EEXIST if another list has that hash */
static int set_put(struct store *st, const struct ddio_layout_rec *l, uint64_t *h)
{
    struct ddio_layout_rec back;
    *h = set_hash(l->stripe_count, l->ids);
    back.stripe_count = l->stripe_count;
    int rc = set_get(st, *h, &back);
    if (rc == 0)
        return memcmp(back.ids, l->ids, (size_t)l->stripe_count * DDIO_ID_LEN) ? -EEXIST : 0;
    char name[32];
    set_name(*h, name, sizeof(name));
    if (rc == -EPROTO && faccessat(st->setsfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        return -EEXIST;               /* another list (or a bad file): not replaced */
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_put_u32(&w, SET_MAGIC);
    ddio_put_u32(&w, l->stripe_count);
    ddio_put_bytes(&w, l->ids, (size_t)l->stripe_count * DDIO_ID_LEN);
    rc = w.err ? w.err : write_atomic(st, st->setsfd, name, w.p, w.len, 1);
    ddio_wbuf_free(&w);
    if (rc == 0 && fsync(st->setsfd))
        rc = -errno;
    if (rc == 0)
        set_keep(st, *h, l->stripe_count, l->ids);
    return rc;
}

/* ---- the compact layout, in the first datafile's xattr -------------------------------- */

static void compact_encode(const struct ddio_layout_rec *l, uint64_t set,
                           const struct store_creator *cr, struct ddio_wbuf *w)
{
    ddio_put_u32(w, XATTR_MAGIC);
    ddio_put_u64(w, l->stripe_unit);
    ddio_put_u64(w, set);
    ddio_put_u16(w, (uint16_t)l->stripe_count);
    ddio_put_u16(w, (uint16_t)l->server_index);
    ddio_put_u16(w, (uint16_t)l->ndisks);
    ddio_put_u64(w, l->block_size);
    ddio_put_u32(w, l->copies | (uint32_t)l->ec.k << 8 | (uint32_t)l->ec.m << 16);
    ddio_put_u64(w, cr->client);
    ddio_put_u64(w, cr->call);
}

/* a decoded layout checked as any stored one is (ddio_dec_layout) */
static int layout_valid(const struct ddio_layout_rec *l)
{
    struct ddio_wbuf w;
    struct ddio_rbuf r;
    struct ddio_layout_rec back;
    ddio_wbuf_init(&w);
    ddio_enc_layout(&w, l);
    ddio_rbuf_init(&r, w.p, w.len);
    int rc = w.err ? w.err : ddio_dec_layout(&r, &back) ? -EPROTO : 0;
    ddio_wbuf_free(&w);
    return rc;
}

static int compact_decode(struct store *st, const uint8_t *p, size_t n,
                          struct ddio_layout_rec *l, struct store_creator *cr)
{
    struct ddio_rbuf r;
    struct store_creator c;
    ddio_rbuf_init(&r, p, n);
    memset(l, 0, sizeof(*l));
    if (ddio_get_u32(&r) != XATTR_MAGIC)
        return -EPROTO;
    l->stripe_unit = ddio_get_u64(&r);
    uint64_t set = ddio_get_u64(&r);
    l->stripe_count = ddio_get_u16(&r);
    l->server_index = ddio_get_u16(&r);
    l->ndisks = ddio_get_u16(&r);
    l->block_size = ddio_get_u64(&r);
    uint32_t word = ddio_get_u32(&r);
    l->copies = word & 0xffu;
    l->ec = (struct ddio_ec){word >> 8 & 0xffu, word >> 16 & 0xffu};
    c.client = ddio_get_u64(&r);
    c.call = ddio_get_u64(&r);
    if (r.err || ddio_rbuf_done(&r) || word >> 24 || l->stripe_count == 0
        || l->stripe_count > DDIO_MAX_SERVERS)
        return -EPROTO;
    int rc = set_get(st, set, l);
    if (rc == 0)
        rc = layout_valid(l);
    if (rc == 0 && cr)
        *cr = c;
    return rc;
}

/* the layout kept on fd, a first datafile: 0, -ENODATA if it keeps none,
 * -EPROTO if it is corrupt */
static int layout_from_fd(struct store *st, int fd, struct ddio_layout_rec *l,
                          struct store_creator *cr)
{
    uint8_t buf[256];
    ssize_t n = fgetxattr(fd, STORE_LAYOUT_XATTR, buf, sizeof(buf));
    if (n >= 0)
        return compact_decode(st, buf, (size_t)n, l, cr);
    return errno == ENODATA || errno == ENOTSUP ? -ENODATA : errno == ERANGE ? -EPROTO : -errno;
}

int layout_at(struct store *st, const char *path, int fd, struct ddio_layout_rec *l,
              struct store_creator *cr, int *in_record, char *msg, size_t msglen)
{
    /* (a directory or a datafile without one: no such attribute) */
    int rc = fd >= 0 ? layout_from_fd(st, fd, l, cr) : -ENODATA;
    *in_record = rc == -ENODATA;
    if (*in_record)
        return load_meta(st, path, l, cr, msg, msglen);
    if (rc)
        snprintf(msg, msglen, "layout of %s: %s", path,
                 rc == -EPROTO ? "corrupt" : ddio_errno_name(-rc));
    return rc;
}

int load_layout(struct store *st, const char *path, struct ddio_layout_rec *l,
                struct store_creator *cr, int *in_record, char *msg, size_t msglen)
{
    int fd = open_beneath(st->rootfd[0], path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
    int rc = layout_at(st, path, fd, l, cr, in_record, msg, msglen);
    if (fd >= 0)
        close(fd);
    return rc;
}

int create_with_layout(struct store *st, const struct ofile *of, int flags)
{
    uint64_t set;
    int rc = set_put(st, &of->layout, &set);
    if (rc)
        return rc;
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    compact_encode(&of->layout, set, &of->creator, &w);
    const char *name;
    int pfd = w.err ? w.err : open_parent(st->rootfd[0], of->path, &name);
    if (pfd < 0) {
        ddio_wbuf_free(&w);
        return pfd;
    }
    int fd = openat(pfd, ".", flags | O_TMPFILE | O_CLOEXEC, 0644);
    rc = fd < 0 ? -errno : 0;
    if (rc == 0 && fsetxattr(fd, STORE_LAYOUT_XATTR, w.p, w.len, XATTR_CREATE))
        rc = -errno;
    ddio_wbuf_free(&w);
    if (rc == 0) {
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (linkat(AT_FDCWD, proc, pfd, name, AT_SYMLINK_FOLLOW))
            rc = -errno;
    }
    /* opened again by its name: a descriptor of the O_TMPFILE names it
     * "#INODE (deleted)" for good, and a same-host client that gets one
     * (its path, /proc/self/fd) could not see the file deleted later
     * (ddio_local_same_file); nothing renames or deletes it meanwhile
     * (the file is opening: store_ns_lock waits) */
    int named = rc == 0 ? openat(pfd, name, flags | O_NOFOLLOW | O_CLOEXEC) : -1;
    struct stat a, b;
    if (rc == 0 && (named < 0 || fstat(fd, &a) || fstat(named, &b) || a.st_ino != b.st_ino))
        rc = named < 0 ? -errno : -ESTALE;
    close(pfd);
    if (fd >= 0)
        close(fd);
    if (rc && named >= 0)
        close(named);
    return rc ? rc : named;
}
