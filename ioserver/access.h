/* Ownership and POSIX permissions for proven identities (--auth munge).
 *
 * A file's or directory's owner, group and mode are those of its entry
 * under the first storage root; the server (root) gives every new entry its
 * creator's uid and gid and the mode asked for, on every root. A
 * connection's identity (identity.h) is checked against them as POSIX
 * checks a process: search permission on every directory of the path,
 * read or write permission on the file, write and search permission on the
 * parent to create or remove an entry, and the sticky bit (only the
 * entry's or the directory's owner removes). uid 0 (only when clients'
 * root is not squashed) and the --admin-uid pass every check. Connections
 * without a proven identity (shared secret, --insecure) are not checked. */
#ifndef ACCESS_H
#define ACCESS_H

#include <stddef.h>
#include <stdint.h>
#include "conn.h"
#include "ddio_proto.h"

enum { ACC_READ = 4, ACC_WRITE = 2, ACC_SEARCH = 1 };

/* the checks apply to c */
int access_on(const struct conn *c);
/* c may do what only an administrator may (REBUILD): not checked (no
 * proven identity: the shared secret's holders are trusted alike), or
 * uid 0 / the admin */
int access_admin(const struct conn *c);

/* norm (a normalized path, "" the root): search permission on each of its
 * directories, then `want` (ACC_* bits; 0: none) on norm itself when it
 * exists. 0, or -EACCES with the reason in msg. */
int access_path(const struct conn *c, const char *norm, int want, char *msg, size_t n);
/* a new entry norm: search on the directories, write and search on its parent */
int access_create(const struct conn *c, const char *norm, char *msg, size_t n);
/* removing (or renaming away) norm: as access_create, and the sticky bit */
int access_remove(const struct conn *c, const char *norm, char *msg, size_t n);
/* an OPEN of norm with amode (DDIO_O_*): its read/write bits on an existing
 * file, access_create on a file to create */
int access_open(const struct conn *c, const char *norm, uint32_t amode, char *msg, size_t n);

/* A new entry norm becomes c's (uid, gid) with mode, on every root; with
 * no proven identity only the mode is set. 0 or -errno (msg). */
int access_own(const struct conn *c, const char *norm, uint32_t mode, char *msg, size_t n);
/* SETATTR: chmod by the owner (or uid 0 / the admin); chown by uid 0 or
 * the admin, or by the owner to a group it is in (its uid unchanged).
 * Checked, then applied on every root. */
int access_setattr(const struct conn *c, const char *norm, const struct ddio_setattr *m,
                   char *msg, size_t n);

#endif
