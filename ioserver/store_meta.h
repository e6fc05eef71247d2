/* store_meta.c: created files' layout records and directory entries made
 * durable. start/stop: with store_init/store_fini; created: of was created
 * here (its job queued); attach: of opened again while its path's job is
 * queued; sync: store_sync's, the datafiles' (dfds[0..nd)) fdatasyncs and
 * the job if still pending, in one batch (0, or the first -errno, the
 * datafiles' first); release: at of's end; rename: the queued
 * jobs' paths follow a rename (st->mu held). Above store_roots.c, below
 * store.c and store_ns.c. */
#ifndef DDIO_SRV_STORE_META_H
#define DDIO_SRV_STORE_META_H

#include "store.h"

void store_meta_start(struct store *st);
void store_meta_stop(struct store *st);
void store_meta_created(struct store *st, struct ofile *of);
void store_meta_attach(struct store *st, struct ofile *of);
int store_meta_sync(struct store *st, struct ofile *of, const int *dfds, int nd);
void store_meta_release(struct ofile *of);
void store_meta_rename(struct store *st, const char *from, const char *to);

#endif
