/* The names the kernel may keep (ddio-fuse.c): every path whose attributes
 * this mount gave the kernel, until its entry and attributes run out
 * there. A change another client makes to a directory's tree (a rename, a
 * removal) must reach every name the kernel keeps under it. The mount's
 * own cache (ddio_fuse_cache.h) cannot tell: it keeps nothing a
 * concurrent change may have made stale, though the kernel was given it. */
#ifndef DDIO_FUSE_HELD_H
#define DDIO_FUSE_HELD_H

/* the kernel keeps what it is given for timeout_s seconds (0: nothing) */
void held_init(double timeout_s);
/* path's attributes were just given to the kernel */
void held_note(const char *path);
/* the paths strictly under path the kernel may still keep (malloc'd,
 * each and the array); their count */
int held_under(const char *path, char ***out);

#endif
