/* The survivors' log of what an out member missed (DESIGN.md 6.1, "What
 * an out member missed"): while the membership has a member out, every
 * file of which this server takes a change (a write, a set_size, a
 * preallocation, a create) is noted for each out member, durably, before
 * the change is made; `ddio member in` resyncs those files onto the
 * member from the copies and clears the notes (REBUILD MISSED, RESYNCED).
 * Kept as marks (marks.h) under ROOT_1/.ddio/missed/<index>, the member's
 * index in the record. */
#ifndef DDIO_SRV_MISSED_H
#define DDIO_SRV_MISSED_H

#include <stdint.h>

#include "server.h"

/* ROOT_1/.ddio opened for the log; 0 or -errno with err set */
int missed_init(struct server *srv, char *err, size_t errlen);
void missed_fini(struct server *srv);
/* norm changed here: noted for every member out (none out: nothing,
 * without touching the disk). 0, or -errno with msg set (the change must
 * then not be made: a note lost would be a copy never resynced) */
int missed_note(struct server *srv, const char *norm, char *msg, size_t msglen);
/* up to max paths noted for member into paths[] (malloc'd each): how
 * many, or -errno. For this server itself: the changes it made that no
 * majority confirmed yet (changed.h), which a resync onto it copies too */
int missed_list(struct server *srv, uint32_t member, char **paths, int max);
/* FREEZE: until THAW (or FREEZE_MS), a change that would note member is
 * refused with DDIO_E_EPOCH (the client sends it again), so that no note
 * is made between the resync's last round and the epoch that declares
 * it in; returns once the notes being made are made: 0, or -EBUSY (msg
 * set) when they took too long */
int missed_freeze(struct server *srv, uint32_t member, char *msg, size_t msglen);
void missed_thaw(struct server *srv, uint32_t member);
/* norm's note for member cleared (resynced): 0 or -errno */
int missed_clear(struct server *srv, uint32_t member, const char *norm);
/* the paths noted in all (STATS missed_files) */
uint64_t missed_count(struct server *srv);

#endif
