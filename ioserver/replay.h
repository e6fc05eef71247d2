/* Answers remembered for resent writes (PROTOCOL.md "Resending"): the DONE
 * of each XFER with DDIO_XF_ONCE that succeeded, by (client id, call id),
 * so a client that lost the answer with its connection and sends the call
 * again gets the first answer instead of the write done a second time. */
#ifndef DDIO_REPLAY_H
#define DDIO_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#define REPLAY_PER_CLIENT 64    /* answers kept per client, newest first */
#define REPLAY_CLIENTS    1024  /* clients remembered (least recent forgotten) */

/* the DONE payload of (client, call) into *p (malloc'd): 1, or 0 if none */
int replay_find(uint64_t client, uint64_t call, uint8_t **p, size_t *len);
/* remember (client, call)'s DONE payload (a copy of p) */
void replay_note(uint64_t client, uint64_t call, const uint8_t *p, size_t len);

#endif
