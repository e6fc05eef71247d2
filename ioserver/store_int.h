/* Private to store.c and store_ns.c: the helpers of store.c that the
 * namespace code (store_ns.c) uses too. Not for the rest of the server. */
#ifndef DDIO_SRV_STORE_INT_H
#define DDIO_SRV_STORE_INT_H

#include <stddef.h>
#include <sys/types.h>

#include "store.h"

#define META_DIR ".ddio"

/* rel confined to dirfd: an fd (open_beneath, open_parent) or 0, else -errno */
int open_beneath(int dirfd, const char *rel, int flags, mode_t mode);
int mkdir_parents(int dirfd, const char *rel);
int open_parent(int dirfd, const char *rel, const char **name);
int unlink_beneath(int dirfd, const char *rel, int flags);

/* the open file of a normalized path, not deleted; under st->mu */
struct ofile *find_open(struct store *st, const char *path);
/* st->mu taken for a namespace change (delete, rename, mkdir, rmdir,
 * pstat): once no open is at the file system (store_open) */
void store_ns_lock(struct store *st);
/* a path's layout record (and its creator, cr may be NULL); -ENOENT if none, else the cause in msg */
int load_meta(struct store *st, const char *path, struct ddio_layout_rec *l,
              struct store_creator *cr, char *msg, size_t msglen);
/* store_norm_path, with the refusal explained in msg */
int norm_or_refuse(const char *path, char *norm, size_t n, char *msg, size_t msglen);
/* (store_ns.c) path after renaming from to to, malloc'd; NULL if path is
 * neither from nor beneath it, or out of memory (kept as it was) */
char *renamed_path(const char *path, const char *from, const char *to);

/* store_meta.c: created files' layout records and directory entries made
 * durable. start/stop: with store_init/store_fini; created: of was created
 * here (its job queued); attach: of opened again while its path's job is
 * queued; sync: store_sync's, the datafiles' (dfds[0..nd)) fdatasyncs and
 * the job if still pending, in one batch (0, or the first -errno, the
 * datafiles' first); release: at of's end; rename: the queued
 * jobs' paths follow a rename (st->mu held). */
void store_meta_start(struct store *st);
void store_meta_stop(struct store *st);
void store_meta_created(struct store *st, struct ofile *of);
void store_meta_attach(struct store *st, struct ofile *of);
int store_meta_sync(struct store *st, struct ofile *of, const int *dfds, int nd);
void store_meta_release(struct ofile *of);
void store_meta_rename(struct store *st, const char *from, const char *to);

#endif
