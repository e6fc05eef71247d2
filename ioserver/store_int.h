/* Private to store.c and store_ns.c: what the namespace (store_ns.c)
 * takes from the file store's open table. Not for the rest of the server. */
#ifndef DDIO_SRV_STORE_INT_H
#define DDIO_SRV_STORE_INT_H

#include <errno.h>
#include <stdio.h>

#include "store.h"

/* the open file of a normalized path, not deleted; under st->mu */
struct ofile *find_open(struct store *st, const char *path);
/* st->mu taken for a namespace change (delete, rename, mkdir, rmdir,
 * pstat): once no open is at the file system (store_open) */
void store_ns_lock(struct store *st);

/* A mirrored file's copies (store.c: opened, sized, synced, deleted with
 * the file; store_ns.c: renamed with it), ROOT_d/.ddio/copyC/PATH, and an
 * erasure-coded file's parity and overlay, ROOT_d/.ddio/parity/PATH and
 * ROOT_d/.ddio/overlay/PATH (its extents' log: overlay.h): the path of view
 * c into out; -ENAMETOOLONG if it does not fit */
static inline int store_copy_path(char *out, size_t n, uint32_t c, const char *path)
{
    int len = c == STORE_PARITY    ? snprintf(out, n, ".ddio/parity/%s", path)
              : c == STORE_OVERLAY ? snprintf(out, n, ".ddio/overlay/%s", path)
                                   : snprintf(out, n, ".ddio/copy%u/%s", c, path);
    return len < 0 || (size_t)len >= n ? -ENAMETOOLONG : 0;
}
/* store_size.c, of->mu held: same-host clients see the new size (set: a
 * truncate, else a growth); what same-host writers wrote folded in; the
 * size page made on first use (0 or -errno) */
void size_publish(struct ofile *of, int set);
void size_fold(struct ofile *of);
int size_page(struct ofile *of);
#endif
