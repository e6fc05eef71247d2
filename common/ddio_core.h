/* The client core: everything a client of the ddio servers does, once, with
 * no MPI dependency. The ROMIO driver (adio/ad_ddio), the command-line tool
 * and the mount (through ddio_client.h) are all built on it.
 *
 * Three layers, each calling only itself and the layers below (checked by
 * scripts/check-layers.sh), and this file's functions on top:
 *
 *   ddio_core_conn.h  errors, configuration, connections, recovery at the
 *                     connection level
 *   ddio_core_file.h  a file on its stripe servers: open, create, delete,
 *                     and the handles of an open file
 *   ddio_core_io.h    same-host I/O, parked handles, transfers, the client
 *                     cache
 *   ddio_core_fh.c    (declared here) open, sync, close, free and delete as
 *                     callers use them, bringing the layers together
 *
 * Threads: a connection carries one conversation at a time; every function
 * here that talks on a connection holds its mutex from the first byte sent to
 * the last byte received (an XFER until its DONE), locking several in one
 * global order, so threads may share connections (the tools and the mount do;
 * the driver's progress thread uses a pool of its own so that a background
 * transfer never waits for the main thread's).
 *
 * Errors: functions return 0 or -1 with a struct ddio_err set (errno value
 * plus a message naming the server and the cause). */
#ifndef DDIO_CORE_H
#define DDIO_CORE_H

#include "ddio_core_conn.h"
#include "ddio_core_file.h"
#include "ddio_core_io.h"

/* ---- ddio_core_fh.c: an open file as callers use it -------------------------- */

/* ddio_fh_open_servers, this process's parked handles of path taken
 * instead when f->park allows (ddio_park_take), the same-host read
 * descriptors asked for with a read-only OPEN; sets f->path, f->amode. */
int ddio_fh_open(struct ddio_fh *f, struct ddio_conn **conns, int n, const char *path,
                 uint32_t amode, const struct ddio_create *cr, struct ddio_err *e);
/* the buffered writes flushed, what was read ahead dropped, then SYNC on
 * every server */
int ddio_fh_sync(struct ddio_fh *f, struct ddio_err *e);
/* The buffered writes flushed (their error is the close's), then CLOSE
 * every live handle (in parallel); frees srv. 0 or -1 (first error).
 * With f->park, handles that can be taken again without asking the
 * servers are parked instead (ddio_park_put). */
int ddio_fh_close(struct ddio_fh *f, struct ddio_err *e);
/* free what f holds (cache, descriptors, handles' memory, path, locks) */
void ddio_fh_free(struct ddio_fh *f);
/* this process's parked handles of path closed, then ddio_delete_servers */
int ddio_delete(struct ddio_conn **conns, int n, const char *path, int timeout_ms,
                int recover_ms, struct ddio_err *e);

#endif
