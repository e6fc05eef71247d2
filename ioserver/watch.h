/* Watchers: connections that asked (WATCH) to hear of every change to the
 * namespace and to files' attributes (INVAL), so a mount may keep what it
 * learnt until told otherwise (PROTOCOL.md "WATCH and INVAL"). */
#ifndef DDIO_SRV_WATCH_H
#define DDIO_SRV_WATCH_H

#include <stdint.h>

#include "conn.h"

/* how long a change waits for a watcher's answer; one that stays silent
 * longer is cut off (its mount then forgets everything it kept) */
#define WATCH_ACK_MS 2000

int on_watch(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
/* INVAL|R from a watcher: its answer to INVAL req */
void watch_ack(struct conn *c, uint64_t req);
/* c is going away: no longer a watcher, and no change waits for it */
void watch_drop(struct conn *c);
/* A change c made (path as the client gave it; what: DDIO_IV_*), told to
 * every watcher but c's own process's, each answer awaited before the
 * caller replies to c: when c hears its change is done, every watching
 * mount has forgotten what it changed. */
void watch_changed(struct conn *c, const char *path, uint32_t what);
/* the process behind c, as its requests' ids name it (0: not known yet) */
void watch_note_client(struct conn *c, uint64_t client);

#endif
