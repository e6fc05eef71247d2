/* Durable marks that name a path (marks.c): a small file per path under a
 * directory of ROOT_1/.ddio, named by a hash of the path and holding it,
 * made and removed with the directory synced. The rebuild's unbuilt marks
 * (rebuild.c) and the survivors' log of what an out member missed
 * (missed.c) are such sets. */
#ifndef DDIO_SRV_MARKS_H
#define DDIO_SRV_MARKS_H

#include <stddef.h>

#include "store.h"

/* the hash that names norm's mark (FNV-1a of the path) */
uint64_t marks_hash(const char *norm);
/* 1: dir (under ddiofd) holds norm's mark (a hash collision is no mark) */
int marks_has(int ddiofd, const char *dir, const char *norm);
/* norm's mark made durable: 1 made, 0 there already, or -errno */
int marks_put(struct store *st, int ddiofd, const char *dir, const char *norm);
/* norm's mark removed durably: 1 removed, 0 none, or -errno */
int marks_drop(int ddiofd, const char *dir, const char *norm);
/* up to max paths of dir's marks into paths[] (malloc'd each; the caller
 * frees them): how many, or -errno */
int marks_list(int ddiofd, const char *dir, char **paths, int max);
/* the marks in dir (none, or no dir: 0) */
int marks_count(int ddiofd, const char *dir);
/* dir's entries (under ddiofd; none, or no dir: 0) but "." names, each
 * given to fn(arg, name) until it says stop (1): 0 or -errno */
int marks_each(int ddiofd, const char *dir, int (*fn)(void *, const char *), void *arg);
/* dir (relative to dirfd) fsynced: 0 or -errno */
int marks_sync_dir(int dirfd, const char *rel);

#endif
