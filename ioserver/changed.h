/* This server's own notes of the mirrored files it changed (DESIGN.md 6.1,
 * "Writes on the minority side"): a server cut off from the others may
 * take writes from clients on its side after the others declared it out,
 * writes no copy holder has and no survivor noted. So every change of a
 * mirrored file is noted here too, durably and before it is made, in the
 * current generation (ROOT_1/.ddio/changed/<gen>/, marks.h). A client
 * confirms generations (MEMBER SEAL, then a majority read, then CONFIRM):
 * a generation sealed before a majority showed this server in at the
 * epoch it is at holds only changes made while it was in, which every copy
 * took or the survivors noted, and is dropped. What is left when the
 * server finds itself out is resynced with the survivors' notes (`ddio
 * member in`: MISSED and RESYNCED for the member itself). */
#ifndef DDIO_SRV_CHANGED_H
#define DDIO_SRV_CHANGED_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define CHANGED_SLOTS 32

struct server;

struct changed {
    pthread_mutex_t mu;
    uint64_t gen;                /* notes go to this generation */
    /* changes noted and not yet made, by generation: a seal does not
     * offer a generation with one in flight (its change may land after the
     * read that confirms the seal) */
    struct { uint64_t gen; uint32_t n; } busy[CHANGED_SLOTS];
    uint64_t recent[64];         /* path hashes noted in gen (no syscall again) */
};

/* ROOT_1/.ddio/changed made, the next generation after the newest there;
 * 0 or -errno with err set */
int changed_init(struct server *srv, char *err, size_t errlen);
/* norm is about to change: noted in the current generation, durably;
 * *gen set to it (the caller passes it to changed_end once the change is
 * made or refused). 0, or -errno with msg set (the change must not be
 * made). A server that is out notes nothing (*gen 0): it makes no change
 * but a resync's, which need not be noted. */
int changed_begin(struct server *srv, const char *norm, uint64_t *gen, char *msg, size_t n);
void changed_end(struct server *srv, uint64_t gen);
/* a new generation begun; returned: the newest generation all of whose
 * changes were made by now (the one sealed, or an older one while a
 * change noted earlier is still in flight) */
uint64_t changed_seal(struct server *srv);
/* generations up to gen (sealed) dropped: how many, or -errno */
int changed_confirm(struct server *srv, uint64_t gen);
/* up to max noted paths (every generation, each once) into paths[]:
 * how many, or -errno */
int changed_list(struct server *srv, char **paths, int max);
/* norm's notes dropped from every generation (resynced): 0 or -errno */
int changed_clear(struct server *srv, const char *norm);
/* the paths noted, counted per generation (STATS changed_files) */
uint64_t changed_count(struct server *srv);

#endif
