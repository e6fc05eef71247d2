/* Stored layouts (store_layout.c): a file's layout kept where its create
 * put it, and read back. A create keeps it in the file's first datafile
 * (ROOT_1/PATH), as the extended attribute STORE_LAYOUT_XATTR set before
 * the datafile is linked into its directory: the file appears with its
 * layout or not at all, and a create makes one inode per server, not two.
 * Files made before, by a server whose users share it (--auth munge), on a
 * file system without user xattrs, or whose server list's hash names
 * another list keep a record ROOT_1/.ddio/meta/PATH instead. A reader looks in the
 * datafile first, then for a record. The attribute is compact, so that it
 * fits in the inode (ext4's 256-byte inodes leave 60 bytes for its value;
 * an attribute block costs more than the record it replaces): the
 * server ids, 16 bytes each, are kept once per server list in
 * ROOT_1/.ddio/sets/HASH and the attribute names the list by its hash.
 * The record's encoding and the ESTALE check are store.h's. */
#ifndef DDIO_SRV_STORE_LAYOUT_H
#define DDIO_SRV_STORE_LAYOUT_H

#include <stddef.h>

#include "store.h"

/* a path's layout record (and its creator, cr may be NULL); -ENOENT if none, else the cause in msg */
int load_meta(struct store *st, const char *path, struct ddio_layout_rec *l,
              struct store_creator *cr, char *msg, size_t msglen);

/* a path's layout from fd, its first datafile opened by the caller (< 0:
 * none), else from its record (*in_record: 1 from the record); -ENOENT if
 * neither keeps one, else the cause in msg */
int layout_at(struct store *st, const char *path, int fd, struct ddio_layout_rec *l,
              struct store_creator *cr, int *in_record, char *msg, size_t msglen);

/* the same, the first datafile opened (read-only) and closed here */
int load_layout(struct store *st, const char *path, struct ddio_layout_rec *l,
                struct store_creator *cr, int *in_record, char *msg, size_t msglen);

/* of's first datafile made with its layout and creator, opened with flags
 * (O_RDWR, O_DIRECT), linked in place once it has the layout: its fd;
 * -EEXIST if the name is taken, else -errno (the caller keeps the layout
 * in a record instead) */
int create_with_layout(struct store *st, const struct ofile *of, int flags);

/* the server sets remembered, forgotten (store_fini) */
void store_sets_fini(struct store *st);

#endif
