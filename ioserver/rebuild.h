/* A lost server's place taken by a replacement (DESIGN.md 6.3, PROTOCOL.md
 * "REBUILD"): the id it adopts, the files it holds that are not rebuilt yet
 * (their reads refused so clients read a copy), and the fences that keep
 * other connections from opening a file while it is copied. */
#ifndef DDIO_SRV_REBUILD_H
#define DDIO_SRV_REBUILD_H

#include "conn.h"

/* the state made at startup: a --replacement server without
 * ROOT_1/.ddio/adopted waits for ADOPT; unbuilt marks counted. 0 or -errno */
int rebuild_init(struct server *srv, char *err, size_t errlen);
void rebuild_fini(struct server *srv);
/* REBUILD on the reader thread (its ops are short: a create, a sync) */
int on_rebuild(struct conn *c, const struct ddio_hdr *h, const uint8_t *p);
/* an OPEN of norm by c: 0, -ESTALE (waiting for ADOPT) or -EBUSY (fenced
 * by another connection), with the reason in msg */
int rebuild_open_refused(struct conn *c, const char *norm, char *msg, size_t msglen);
/* a DELETE or RENAME of norm by c: 0, or -EBUSY (fenced by another
 * connection: the file is being copied) */
int rebuild_fenced(struct conn *c, const char *norm, char *msg, size_t msglen);
/* 1: norm is marked unbuilt here (its reads refused with ENODATA) */
int rebuild_unbuilt(struct server *srv, const char *norm);
/* for STATS: files marked unbuilt, files done (DONE) since the start,
 * 1 while waiting for ADOPT */
void rebuild_counts(struct server *srv, uint64_t *unbuilt, uint64_t *done, uint64_t *pending);
/* where the running (or last) rebuild onto this server stands, as its
 * client last reported it (REBUILD PROGRESS); reported 0: never */
struct rebuild_progress {
    uint64_t done, total, rate;  /* bytes, bytes, bytes a second */
    int64_t at_ms;               /* when (ddio_now_ms clock) */
    int reported;
};
void rebuild_progress_get(struct server *srv, struct rebuild_progress *p);
/* 1: c holds the fence on norm (a rebuild or resync copying it: its own
 * requests pass the membership check, member_req.c) */
int rebuild_fence_held(struct conn *c, const char *norm);
/* c's fences lifted (its connection ended) */
void rebuild_conn_gone(struct conn *c);

#endif
