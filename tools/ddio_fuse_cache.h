/* The mount's cache of names and attributes (docs/SEMANTICS.md "The
 * mount"): what the servers said of a path, kept while every server's
 * watch is up (ddio_watch_start) and for at most the cache timeout, and
 * forgotten the moment a server says the path changed. */
#ifndef DDIO_FUSE_CACHE_H
#define DDIO_FUSE_CACHE_H

#include <stdint.h>

#include "ddio_client.h"

/* nservers watches to wait for; timeout_s: how long attributes are kept
 * (0: nothing is kept) */
void mc_init(int nservers, double timeout_s);
/* the generation: a lookup's answer is kept only if no change was heard
 * since it was taken before asking */
uint64_t mc_gen(void);
/* 1: *st (the path exists); 0: it does not; -1: not known, ask */
int mc_get(const char *path, struct ddio_cstat *st);
/* what the servers said (st NULL: no such path), taken at gen */
void mc_put(const char *path, const struct ddio_cstat *st, uint64_t gen);
/* This mount's own change of path, begun at gen: it now exists (st its
 * stat, or NULL: not known; empty_dir: a new directory, so every name in
 * it is known) or not (exists 0) */
void mc_own_name(const char *path, int exists, const struct ddio_cstat *st, int empty_dir,
                 uint64_t gen);
/* path's attributes changed here (a write, a truncate, a chmod): forgotten */
void mc_own_attr(const char *path);
/* path and everything under it forgotten (a rename) */
void mc_own_tree(const char *path);
/* every server's watch is up: things are kept */
int mc_watching(void);
/* the watch's word (ddio_watch_ops) */
void mc_inval(void *arg, uint32_t what, const char *path);
void mc_up(void *arg, int server, int on);

/* FNV-1a of a path: the mount's tables' hash */
uint64_t mc_hash(const char *path);

#endif
