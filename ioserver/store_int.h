/* Private to store.c and store_ns.c: what the namespace (store_ns.c)
 * takes from the file store's open table. Not for the rest of the server. */
#ifndef DDIO_SRV_STORE_INT_H
#define DDIO_SRV_STORE_INT_H

#include "store.h"

/* the open file of a normalized path, not deleted; under st->mu */
struct ofile *find_open(struct store *st, const char *path);
/* st->mu taken for a namespace change (delete, rename, mkdir, rmdir,
 * pstat): once no open is at the file system (store_open) */
void store_ns_lock(struct store *st);

#endif
