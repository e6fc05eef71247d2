/* Deterministic fault points, for tests of what clients see when a server
 * dies or hangs in a given phase (`ddio-server --fault POINT:N[:ACTION]`).
 *
 * Killing a server with a signal from outside races with the phase under
 * test; a fault point fires at the N-th time the server reaches that place,
 * so "killed after its 2nd collective write block" is the same every run. */
#ifndef DDIO_SRV_FAULT_H
#define DDIO_SRV_FAULT_H

#include <stddef.h>

enum fault_point {
    FAULT_OPEN,          /* an OPEN request, before it is served */
    FAULT_SYNC,          /* a SYNC request, before fdatasync */
    FAULT_COLL_READ,     /* a block read by a collective XFER, before its PUTs */
    FAULT_COLL_WRITE,    /* a block of a collective XFER, before its write */
    FAULT_INDEP_READ,    /* the same for independent XFERs */
    FAULT_INDEP_WRITE,
    FAULT_DIRECT_SEND,   /* a reply sent by the thread that queued it (conn.c) */
    FAULT_CLOSE,         /* a CLOSE request, before it is served */
    FAULT_DONE,          /* a successful XFER's DONE (tcp.c): action drop
                          * closes the connection instead of sending it, crash
                          * kills the server instead of sending it (the write
                          * done and its answer noted: replay.h), kill
                          * kills the server 0.2 s after it was queued (the
                          * call's other ranks get none) */
    FAULT_CREATED,       /* an OPEN that created the file, before its answer */
    FAULT_CREATE_HALF,   /* a create's layout written (a record, or the
                          * first datafile with it), its other datafiles
                          * not yet (store.c) */
    FAULT_SUMS,          /* a flush of a datafile's checksums: its data
                          * written (and at a sync, durable), its sums not
                          * yet (sums.c) */
    FAULT_FOLD,          /* a fold's XFER (an erasure-coded file's partial
                          * groups folded into parity), before it writes:
                          * the 1st of a fold its parity step, the 2nd its
                          * data step, the parity durable everywhere */
    FAULT_LET_GO,        /* a request thread letting go of its file after
                          * its reply (workers.c): action pause sleeps 2 s
                          * there, at the N-th pass and every one after */
    FAULT_NPOINTS
};

/* Parse "POINT:N[:kill|stop|short|drop|crash|pause]" (POINT: open sync
 * coll-read coll-write indep-read indep-write direct-send close done created
 * create-half sums fold let-go; N >= 1; default action
 * kill; short only with direct-send, drop and crash only with done, done
 * only with drop, crash or kill, pause only with let-go and let-go only
 * with pause) and arm it. 0, or -1 with one line in err. */
int fault_arm(const char *spec, char *err, size_t errlen);

/* Count a pass through point p; at the armed count, SIGKILL (or SIGSTOP)
 * this process. Cheap when nothing is armed. */
void fault_hit(enum fault_point p);

/* Point p armed with pause: from the N-th pass on, each pass sleeps 2 s */
void fault_pause(enum fault_point p);

/* Point p armed with crash: SIGKILL at the N-th pass (before the send the
 * caller is about to make). */
void fault_crash(enum fault_point p);

/* Point p armed with drop: 1 at the N-th pass (the caller then closes the
 * connection instead of sending), else 0. */
int fault_drop(enum fault_point p);

/* For a send of hlen header + plen payload bytes at point p: how many bytes
 * the socket may take. hlen + plen unless "p:N:short" is armed; then from
 * the N-th pass on every send is cut, alternately inside the header and
 * inside the payload (at varying offsets), so the writer thread's resume
 * from a partly sent message runs on every reply. The first cuts of each
 * kind are logged (tests check that both were reached). A kill/stop action
 * at p acts as fault_hit. */
size_t fault_cut(enum fault_point p, size_t hlen, size_t plen);

#endif
