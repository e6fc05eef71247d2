/* Answers remembered for resent requests (PROTOCOL.md "Resending"): the
 * answer of each request that must not run twice and succeeded (an XFER
 * with DDIO_XF_ONCE: its DONE payload; a RENAME with ids: empty), by
 * (client id, call id), so a client that lost the answer with its
 * connection and sends the call again gets the first answer instead of the
 * work done a second time.
 *
 * The table is a file mapped MAP_SHARED (replay_open): a server killed or
 * stopped and started again on the same roots finds its answers there. */
#ifndef DDIO_REPLAY_H
#define DDIO_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#define REPLAY_PER_CLIENT 64    /* answers kept per client, newest first */
#define REPLAY_CLIENTS    1024  /* clients remembered (least recent forgotten) */
#define REPLAY_MAX_ANSWER 96    /* bytes of one answer (a DONE is 88) */

/* what replay_open found */
struct replay_info {
    int persistent;             /* 1: in the file; 0: in memory only */
    unsigned clients, answers;  /* reloaded */
    unsigned torn;              /* entries dropped: half-written or stale */
    int fresh;                  /* the file was made (or remade) empty */
};

/* Map the table in the file at path (made at first use; an existing one is
 * validated: header and geometry, then every entry by its checksum, a torn
 * one dropped). If that fails the table lives in memory (what fails is
 * in err, the server warns). The first find or note without an open
 * table makes one in memory. */
void replay_open(const char *path, struct replay_info *info, char *err, size_t errlen);
/* unmap it (the next open reloads it) */
void replay_close(void);

/* the answer of (client, call) into *p (malloc'd): 1, or 0 if none */
int replay_find(uint64_t client, uint64_t call, uint8_t **p, size_t *len);
/* remember (client, call)'s answer (a copy of p; over REPLAY_MAX_ANSWER
 * bytes: not remembered) */
void replay_note(uint64_t client, uint64_t call, const uint8_t *p, size_t len);

#endif
