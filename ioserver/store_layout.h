/* Layout records (store_layout.c): a file's stored layout read back.
 * Their encoding and the ESTALE check are store.h's. */
#ifndef DDIO_SRV_STORE_LAYOUT_H
#define DDIO_SRV_STORE_LAYOUT_H

#include <stddef.h>

#include "store.h"

/* a path's layout record (and its creator, cr may be NULL); -ENOENT if none, else the cause in msg */
int load_meta(struct store *st, const char *path, struct ddio_layout_rec *l,
              struct store_creator *cr, char *msg, size_t msglen);

#endif
