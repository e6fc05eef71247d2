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

/* room for any record: its ids and words */
static size_t record_cap(void)
{
    return 64 + sizeof(struct ddio_layout_rec) + 4 * DDIO_MAX_SERVERS;
}

int load_meta(struct store *st, const char *path, struct ddio_layout_rec *l,
              struct store_creator *cr, char *msg, size_t msglen)
{
    size_t cap = record_cap();
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

int layout_from_fd(int fd, struct ddio_layout_rec *l, struct store_creator *cr)
{
    size_t cap = record_cap();
    uint8_t *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    ssize_t n = fgetxattr(fd, STORE_LAYOUT_XATTR, buf, cap);
    int rc = n >= 0                                  ? store_meta_decode(buf, (size_t)n, l, cr)
             : errno == ENODATA || errno == ENOTSUP ? -ENODATA
             : errno == ERANGE                      ? -EPROTO
                                                    : -errno;
    free(buf);
    return rc;
}

int load_layout(struct store *st, const char *path, struct ddio_layout_rec *l,
                struct store_creator *cr, int *in_record, char *msg, size_t msglen)
{
    /* (a directory or a datafile without one: no such attribute) */
    int fd = open_beneath(st->rootfd[0], path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
    if (fd >= 0) {
        int rc = layout_from_fd(fd, l, cr);
        close(fd);
        if (rc != -ENODATA) {
            *in_record = 0;
            if (rc)
                snprintf(msg, msglen, "layout of %s: %s", path,
                         rc == -EPROTO ? "corrupt" : ddio_errno_name(-rc));
            return rc;
        }
    }
    *in_record = 1;
    return load_meta(st, path, l, cr, msg, msglen);
}

int create_with_layout(struct store *st, const char *path, int flags, const void *rec,
                       size_t n)
{
    const char *name;
    int pfd = open_parent(st->rootfd[0], path, &name);
    if (pfd < 0)
        return pfd;
    int fd = openat(pfd, ".", flags | O_TMPFILE | O_CLOEXEC, 0644);
    int rc = fd < 0 ? -errno : 0;
    if (rc == 0 && fsetxattr(fd, STORE_LAYOUT_XATTR, rec, n, XATTR_CREATE))
        rc = -errno;
    if (rc == 0) {
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (linkat(AT_FDCWD, proc, pfd, name, AT_SYMLINK_FOLLOW))
            rc = -errno;
    }
    close(pfd);
    if (rc && fd >= 0)
        close(fd);
    return rc ? rc : fd;
}
