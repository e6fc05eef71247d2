/* An erasure-coded file's overlay extents (DESIGN.md 6.4): which bytes of
 * a server's overlay datafile hold a partial group's write. A partial write
 * does not touch the group's data in place (its parity would no longer
 * match); its bytes go to the overlay of their data server, where they are
 * newer than the in-place bytes, and as copies to the overlays of the
 * group's parity servers. The extents are byte-exact, sorted and merged in
 * memory, and kept in a log beside the datafile
 * (ROOT/.ddio/ovx/<overlay path>) that is appended to after the datafile
 * is durable (ovl_flush), so an extent on disk always names durable bytes.
 * The log names the datafile's inode: a log of another file is ignored. */
#ifndef DDIO_SRV_OVERLAY_H
#define DDIO_SRV_OVERLAY_H

#include <stddef.h>
#include <stdint.h>

struct ovl;

/* The extents of the overlay datafile datafd, at path rel under rootfd
 * (the log's own path is derived from it); fresh: a new file, any old log
 * is removed. NULL on ENOMEM. A log that cannot be read starts empty. */
struct ovl *ovl_open(int rootfd, const char *rel, int datafd, int fresh);
/* pending records appended (durable: the datafile was synced) and freed */
void ovl_close(struct ovl *o, int durable);

/* [lo, hi) now holds overlay bytes / no longer does. 0 or -ENOMEM. */
int ovl_add(struct ovl *o, uint64_t lo, uint64_t hi);
int ovl_del(struct ovl *o, uint64_t lo, uint64_t hi);

/* the extents meeting [lo, hi), clipped to it, in order: fn(arg, lo, hi);
 * a non-zero return stops the walk and is returned */
typedef int (*ovl_fn)(void *arg, uint64_t lo, uint64_t hi);
int ovl_each(struct ovl *o, uint64_t lo, uint64_t hi, ovl_fn fn, void *arg);
/* any extent meeting [lo, hi)? */
int ovl_any(struct ovl *o, uint64_t lo, uint64_t hi);

/* changes not in the log yet? */
int ovl_dirty(struct ovl *o);

/* The changes since the last flush appended to the log and synced (call
 * after the datafile's fdatasync). 0 or -errno. */
int ovl_flush(struct ovl *o);

/* The file's logical size as this server knows it: the largest noted (the
 * end of every write and extending set_size it took part in), kept in the
 * same log. note: 0 or -ENOMEM. */
int ovl_note_size(struct ovl *o, uint64_t size);
/* the file cut to size (a shrinking set_size): noted lower */
int ovl_cut_size(struct ovl *o, uint64_t size);
uint64_t ovl_size(struct ovl *o);

/* A parity server's fold states (DESIGN.md 6.4 "The fold"): which data
 * the parity it holds of group g matches. OVL_PS_INPLACE (the default:
 * the data in place), OVL_PS_WRITING (a fold is writing it: it matches
 * nothing, a decode passes it over), OVL_PS_NEW (a fold wrote it: it
 * matches the data merged with the overlays, until the fold is done).
 * Kept in the same log (set: 0 or -ENOMEM; g UINT64_MAX with
 * OVL_PS_INPLACE: every group's state cleared). */
enum { OVL_PS_INPLACE = 0, OVL_PS_WRITING = 1, OVL_PS_NEW = 2 };
int ovl_pstate_set(struct ovl *o, uint64_t g, int state);
int ovl_pstate(struct ovl *o, uint64_t g);
/* groups in a state other than OVL_PS_INPLACE: a fold not finished */
size_t ovl_pstate_count(struct ovl *o);
/* those of them in [lo, hi), in order: fn(arg, g, g + 1) as ovl_each */
int ovl_pstate_each(struct ovl *o, uint64_t lo, uint64_t hi, ovl_fn fn, void *arg);

/* the log's path of an overlay datafile's path rel (for rename, unlink) */
int ovl_log_path(char *out, size_t n, const char *rel);
/* the datafile renamed to rel (its log renamed by the caller): 0 or -ENOMEM */
int ovl_repath(struct ovl *o, const char *rel);

#endif
