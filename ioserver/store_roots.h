/* The store's roots (store_roots.c), the bottom of the store: the roots
 * ("disks") with their O_DIRECT probe and the server id, paths normalized
 * and confined beneath a root, and small files written atomically. Below
 * store_layout.c, store_meta.c, store.c and store_ns.c; not for the rest
 * of the server (store.h). */
#ifndef DDIO_SRV_STORE_ROOTS_H
#define DDIO_SRV_STORE_ROOTS_H

#include <stddef.h>
#include <sys/types.h>

#include "store.h"

#define META_DIR ".ddio"

/* store_init's and store_fini's part: the roots opened (st->ndisks, the
 * descriptors, O_DIRECT per root, ROOT_1/.ddio/{meta,tmp}, the server id);
 * 0, or -errno with a message in err. fini: closed and freed. */
int store_roots_init(struct store *st, const struct srv_config *cfg, char *err, size_t errlen);
void store_roots_fini(struct store *st);

/* rel confined to dirfd: an fd (open_beneath, open_parent) or 0, else -errno */
int open_beneath(int dirfd, const char *rel, int flags, mode_t mode);
int mkdir_parents(int dirfd, const char *rel);
int open_parent(int dirfd, const char *rel, const char **name);
int unlink_beneath(int dirfd, const char *rel, int flags);
/* rel under dirfd written whole through ROOT_1/.ddio/tmp and renamed into
 * place (durable: fsynced first); 0 or -errno */
int write_atomic(struct store *st, int dirfd, const char *rel, const void *p, size_t n,
                 int durable);
/* n bytes at off of fd, through short writes and EINTR: 0 or -errno */
int pwrite_all(int fd, const void *p, size_t n, uint64_t off);
/* up to cap bytes of rel under dirfd: how many, or -errno */
ssize_t read_small(int dirfd, const char *rel, void *buf, size_t cap);
/* store_norm_path, with the refusal explained in msg */
int norm_or_refuse(const char *path, char *norm, size_t n, char *msg, size_t msglen);
/* path after renaming from to to, malloc'd; NULL if path is neither from
 * nor beneath it, or out of memory (kept as it was) */
char *renamed_path(const char *path, const char *from, const char *to);

#endif
