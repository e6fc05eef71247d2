/* The deployment's membership as this server keeps it (DESIGN.md 6.1
 * "Who is out"): the committed record (epoch, every member, who is out),
 * and, as an acceptor of the single-decree Paxos that decides each next
 * epoch, the ballot it promised and the value it accepted. Kept in
 * .ddio/member under the first root, replaced by rename and fsynced before
 * any answer that depends on it, so a promise survives a crash. */
#ifndef DDIO_MEMBER_H
#define DDIO_MEMBER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ddio_proto.h"

struct member {
    pthread_mutex_t mu;          /* st, and the file */
    struct ddio_member_r st;
    _Atomic uint32_t epoch;      /* st.epoch, read without the lock */
    atomic_int out;              /* the committed record has this server out */
    char path[4096];
    uint8_t self[DDIO_ID_LEN];
    int ddiofd;                  /* ROOT_1/.ddio: the missed log (missed.c) */
    atomic_int nout;             /* members the committed record has out */
    /* the resync's last round (missed.c): notes for member frozen - 1
     * refused until frozen_until (ms, monotonic), once those being made
     * (noting) are made */
    pthread_mutex_t fmu;
    pthread_cond_t fcv;
    int noting;
    uint32_t frozen;
    int64_t frozen_until;
};

/* load path's record (none: epoch 0); -1 with err set when it is there
 * but unreadable (a server must not forget a promise it made) */
int member_load(struct member *m, const char *path, const uint8_t self[DDIO_ID_LEN],
                char *err, size_t n);
/* the indexes of the members the committed record has out, this server
 * not among them, into out[] (DDIO_MAX_SERVERS): how many */
int member_out_list(struct member *m, uint32_t *out);
/* this server's index in the committed record (-1: none yet) */
int member_self_index(struct member *m);
/* 1: the committed record has this server out */
int member_self_out(struct member *m);
/* the committed epoch (every reply's header carries it) */
uint32_t member_epoch(struct member *m);
/* May a request carrying `epoch` proceed on a file of that redundancy
 * word (ddio_layout.h)? 0, or the errno of the refusal (DDIO_E_OUT,
 * DDIO_E_EPOCH) with msg set. `none` files never depend on the membership. */
int member_admit(struct member *m, uint32_t redundancy, uint32_t epoch, char *msg, size_t n);
/* One MEMBER request: the server's state after it in *r; 0, or the errno
 * of a refusal (msg set; *r still the state, which the reply carries) */
int member_handle(struct member *m, const struct ddio_member *q, struct ddio_member_r *r,
                  char *msg, size_t n);

#endif
