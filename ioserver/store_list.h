/* Sorted listings of directories, kept between the pages of a READDIR
 * (store_ns.c), so a listing of N entries costs one read and one sort of
 * the directory, not one per page.
 *
 * A listing is a snapshot of a directory's names, sorted; a page resumes
 * after the last name the client got (a binary search), so entries
 * created or removed meanwhile neither shift nor repeat the others.
 * The first page of a listing always reads the directory afresh, and the
 * snapshot it makes replaces the directory's cached one: a later page
 * therefore finds a snapshot taken no earlier than its listing began,
 * which holds every entry present since then (POSIX readdir's promise;
 * entries removed since are dropped by the caller's check of each one). */
#ifndef DDIO_SRV_STORE_LIST_H
#define DDIO_SRV_STORE_LIST_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define STORE_LISTS_MAX   64              /* directories kept */
#define STORE_LISTS_BYTES (64u << 20)     /* their names' memory, about */

struct store_listing {
    dev_t dev;                   /* the directory, on the first root */
    ino_t ino;
    char **names;                /* sorted (strcmp) */
    size_t n;
    size_t bytes;                /* what it holds, for the cache's bound */
    int refs;                    /* under store_lists.mu; the cache holds one */
    int cached;                  /* in the cache's list (under mu) */
    struct store_listing *next;  /* the cache's list, most recently used first */
};

struct store_lists {
    pthread_mutex_t mu;
    struct store_listing *head;
    size_t count, bytes;         /* of the cached listings */
    uint64_t reads;              /* directories read (under mu; tests see
                                  * that a listing reads its directory once) */
};

void store_lists_init(struct store_lists *l);
void store_lists_fini(struct store_lists *l);

/* The sorted names of directory dirfd (not ".", "..", longer names, nor
 * .ddio when at_root): a fresh snapshot (fresh != 0, or none cached for
 * it), which then replaces the cached one, or the cached one. dirfd stays
 * the caller's. A reference the caller returns with store_list_put, or
 * NULL with -errno in *rc. */
struct store_listing *store_list_get(struct store_lists *l, int dirfd, int at_root, int fresh,
                                     int *rc);
void store_list_put(struct store_lists *l, struct store_listing *ls);

/* the index of the first name sorting after `after` ("": 0) */
size_t store_list_seek(const struct store_listing *ls, const char *after);

#endif
