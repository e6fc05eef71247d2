/* The deployment's membership, from the client (ddio_core_member.c;
 * DESIGN.md 6.1 "Who is out is decided once"): read it from every server
 * (catching up those behind), and change it by majority. Members are the
 * servers of the list in list order (the proposer of the first epoch names
 * them so), which every client of a deployment shares. Above the
 * connection layer (ddio_core_conn.h) only. */
#ifndef DDIO_CORE_MEMBER_H
#define DDIO_CORE_MEMBER_H

#include "ddio_core_conn.h"
#include "ddio_core_file.h"

struct ddio_members {
    uint32_t epoch;              /* the newest committed record found */
    struct ddio_member_val val;  /* its value (n 0: epoch 0, none yet) */
    int n;                       /* servers of the list */
    int reached[DDIO_MAX_SERVERS];   /* answered this time */
    uint32_t seen[DDIO_MAX_SERVERS]; /* the epoch each was at before (reached) */
};

/* Every server's record: m set from the newest, and every server behind
 * sent it (COMMIT: a committed record is a chosen one). An unreachable
 * server is noted, not an error; -1 (e set) when none answered, or a
 * server's record names other members (another deployment, or a server
 * list in another order). When no epoch was ever agreed and every server
 * answered, epoch 1 (everyone in) is agreed first: a member that is out
 * later must already be named. */
int ddio_members_read(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                      struct ddio_members *m, struct ddio_err *e);
/* Server `who` of the list declared out (out = DDIO_MEMBER_OUT or
 * _OUT_ALONE) or in again (DDIO_MEMBER_IN), by a majority of the members
 * (Paxos: PROTOCOL.md "MEMBER"); m is the record after. 0: the record has
 * it so (already, or now); -1 with e set: no majority (fewer than half the
 * members answered, or other proposers kept winning), or _OUT_ALONE with
 * another server out already (EBUSY: a mirrored file striped on both
 * could have units with no copy in). */
#define DDIO_MEMBER_IN 0
#define DDIO_MEMBER_OUT 1         /* whoever else is out: a server lost is out anyway */
#define DDIO_MEMBER_OUT_ALONE 2   /* by choice: refused while another is out */
int ddio_members_set(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms, int who,
                     int out, struct ddio_members *m, struct ddio_err *e);

/* After ddio_pool_get_all left some servers unconnected (conns[i] NULL):
 * when the membership record (read from the others) has every one of them
 * out, each gets its unconnected connection, named by the record's id and
 * marked member_out (an open goes on without it): 0, e cleared; else -1,
 * e kept. Connected ones get member_out cleared. */
int ddio_members_fill_out(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                          struct ddio_conn **conns, struct ddio_err *e);
/* Every server's connection for an open: dialled once without waiting;
 * those that do not answer and are out of the record filled in as
 * ddio_members_fill_out does; any other waited for, the recovery time
 * (ddio_pool_get_all with recover_ms: a restart), and if it is still
 * unreachable then, filled in too, marked gone (ddio_conn.gone: the open
 * sends it nothing; a mirrored file's open declares it out). 0, or -1
 * with e set (no server reached, or no membership record naming them) */
int ddio_members_dial(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                      int recover_ms, struct ddio_conn **conns, struct ddio_err *e);
/* The servers' own notes of the mirrored files they changed (PROTOCOL.md
 * "MEMBER" SEAL and CONFIRM) confirmed: each server reached seals its
 * current generation; then, if a majority is at one epoch with no next
 * one accepted, each server in at that epoch drops the generations it
 * sealed. How many servers confirmed, or -1 (no such majority) */
int ddio_members_confirm(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms);
/* After an open of a mirrored file: epoch 1 agreed now if a server has no
 * membership epoch yet, while every server answers (a member must be
 * named before it can be declared out); and, at most every 30 s per
 * process and when every server of the file answered, the servers' notes
 * confirmed (ddio_members_confirm). Failures change nothing. */
void ddio_members_name_first(struct ddio_pool *p, char *const *addrs, int n, int timeout_ms,
                             const struct ddio_fh *f);

#endif
