/* Mirrored files whose copies a failed write may have left different
 * (DESIGN.md 6.1 "A failed write of a mirrored file"). A file is in doubt
 * here from the first change made through a handle until every handle
 * that changed it is closed cleanly with no write failed on it: a client
 * killed or cut off mid-call, or a write that failed here, leaves it in
 * doubt, durably (ROOT_1/.ddio/indoubt/, marks.h), since the holders of
 * a unit may then hold different bytes, all of them "in" and none noted.
 * `ddio scrub` makes such a file's copies agree (its primaries written
 * over them, the file fenced) and settles it (REBUILD DOUBT, SETTLED). */
#ifndef DDIO_SRV_INDOUBT_H
#define DDIO_SRV_INDOUBT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct server;
struct ofile;

/* a change of mirrored file of is about to be made through a handle whose
 * flag is *changed (set here on its first): durably in doubt before. 0,
 * or -errno with msg set (the change must not be made) */
int indoubt_change(struct server *srv, struct ofile *of, atomic_int *changed, char *msg,
                   size_t n);
/* the handle closed cleanly (CLOSE): the file settles when no other handle
 * that changed it is open and nothing failed on it meanwhile */
void indoubt_closed(struct server *srv, struct ofile *of, int changed);
/* the handle went with its connection: the file stays in doubt */
void indoubt_dropped(struct server *srv, struct ofile *of, int changed);
/* a write of of failed here: it stays in doubt */
void indoubt_failed(struct server *srv, struct ofile *of);
/* up to max paths in doubt (malloc'd each): how many, or -errno */
int indoubt_list(struct server *srv, char **paths, int max);
/* norm settled (its copies made to agree): 0 or -errno */
int indoubt_settle(struct server *srv, const char *norm);
/* files in doubt (STATS indoubt_files) */
uint64_t indoubt_count(struct server *srv);

#endif
