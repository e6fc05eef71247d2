/* The mount's open files (ddio-fuse.c). An open of a file the mount knows
 * exists and allows the access asked for (its attributes kept coherent by
 * the servers' watch: ddio_fuse_cache.h) asks no server at open: the
 * servers' OPEN is made at the handle's first read, write or truncate, as
 * NFSv3 opens nothing and checks each read and write. An open-close that
 * moves no byte then costs no round trip (mdtest's open-close phase, a
 * program probing its files). What it changes: a file another client
 * removes or renames between such an open and its first read or write
 * gives ESTALE there (docs/SEMANTICS.md "The mount"). This mount's own
 * unlink, rename, chmod and chown make the deferred opens of the paths
 * they change first (mfile_make_under), so open-unlink-write works. */
#ifndef DDIO_FUSE_FILE_H
#define DDIO_FUSE_FILE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "ddio_client.h"

struct mfile {
    pthread_mutex_t mu;
    struct ddio_cfile *f;        /* NULL while the open is deferred */
    atomic_int fresh;            /* st is the file's stat, until its first use
                                  * (a create's: set by ddio-fuse.c) */
    struct ddio_cstat st;
    char *path;                  /* a deferred open's path and DDIO_CO_ flags */
    int flags;
    int refs;                    /* the handle's, and mfile_make_under's */
    int released;
    struct mfile *prev, *next;   /* in the list of deferred opens */
};

/* a handle of an open made (takes f); NULL when out of memory */
struct mfile *mfile_new(struct ddio_cfile *f);
/* a handle whose open is deferred; NULL when out of memory */
struct mfile *mfile_deferred(const char *path, int flags);
/* m's file, its deferred open made now with cl (-ESTALE for a file gone
 * since); 0 or -errno with msg */
int mfile_get(struct mfile *m, struct ddio_client *cl, struct ddio_cfile **f, char *msg,
              size_t msglen);
/* m's file, or NULL while its open is deferred (nothing written through it) */
struct ddio_cfile *mfile_opened(struct mfile *m);
/* every deferred open of path or of a path under it made now, with cl */
void mfile_make_under(const char *path, struct ddio_client *cl);
/* the handle closed (its file's close, if it was opened) and let go of */
void mfile_release(struct mfile *m);

#endif
