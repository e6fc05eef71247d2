/* The tools' and the mount's API over the client core (ddio_core.h): the
 * namespace (stat, readdir, mkdir, rmdir, unlink, rename), byte-range reads
 * and writes of striped files (one core XFER with a contiguous descriptor to
 * every stripe server holding part of the range), STATS and layouts. Used
 * by tools/ddio and the ddio mount (tools/ddio-fuse.c); MPI programs use the
 * ROMIO driver, on the same core. Not compiled into libmpi.
 *
 * One connection per server, shared by every thread: a request holds that
 * connection's mutex from send to reply (an XFER until its DONE), so calls
 * from several threads interleave per server. Every call has a deadline
 * (the client's timeout; an XFER's is reset by anything the server sends).
 * An open file whose connection dropped (a server restart, a timeout) is
 * opened again on a new connection at its next call. Functions return 0 (or
 * a byte count) or -errno; a server that cannot be reached or dies mid-call
 * gives -EIO. msg (may be NULL) gets the cause, naming the server. */
#ifndef DDIO_CLIENT_H
#define DDIO_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ddio_layout.h"
#include "ddio_proto.h"

#define DDIO_CLIENT_MSG_LEN 512

struct ddio_client;
struct ddio_cfile;

/* servers: "host:port,..." (the order is the stripe order of new files);
 * unit: stripe unit of new files (0: 1 MiB); secret_file: the shared secret
 * (NULL: $DDIO_SECRET_FILE, else DDIO_CONFIG's secret_file; none named:
 * only servers started with --insecure are accepted). Loads the secret, does
 * not connect yet. */
struct ddio_client *ddio_client_new(const char *servers, int timeout_ms, uint64_t unit,
                                    const char *secret_file, char *msg, size_t msglen);
void ddio_client_free(struct ddio_client *cl);
const char *ddio_client_servers(const struct ddio_client *cl);
/* the servers of the list, in list order (tools/ddio: per-server reports) */
int ddio_client_nservers(const struct ddio_client *cl);
const char *ddio_client_server_addr(const struct ddio_client *cl, int i);

/* STATS of list server i: every counter as (key, value); free with
 * ddio_stats_r_free. */
int ddio_client_stats(struct ddio_client *cl, int i, struct ddio_stats_r *r,
                      char *msg, size_t msglen);

/* The deployment's membership (DESIGN.md 6.1 "Who is out"; struct
 * ddio_members in ddio_core_member.h): read from every server, those
 * behind caught up (and, when every server answered, the servers' own
 * notes of their changes confirmed: ddio_members_confirm); and server
 * `who` of the list declared out (out: DDIO_MEMBER_OUT, or _OUT_ALONE to be
 * refused while another is out) or in again (DDIO_MEMBER_IN) by a majority
 * of the servers (ddio_members_set). */
struct ddio_members;
int ddio_client_members(struct ddio_client *cl, struct ddio_members *m, char *msg,
                        size_t msglen);
int ddio_client_member_set(struct ddio_client *cl, int who, int out, struct ddio_members *m,
                           char *msg, size_t msglen);

struct ddio_cstat {
    int is_dir;
    uint32_t mode;               /* permission bits */
    uint32_t uid, gid;           /* owner and group */
    uint64_t size;               /* logical size (files) */
    uint64_t mtime_ns;
    struct ddio_stripe stripe;   /* files */
    uint32_t copies;             /* files: 1 (redundancy none, ec), 2 or 3 (mirror) */
    uint32_t redundancy;         /* files: the mode's word (ddio_layout.h) */
};
int ddio_client_stat(struct ddio_client *cl, const char *path, struct ddio_cstat *st,
                     char *msg, size_t msglen);
/* fn(arg, name, is_dir) once per entry, names sorted, merged over servers */
int ddio_client_readdir(struct ddio_client *cl, const char *path,
                        int (*fn)(void *arg, const char *name, int is_dir), void *arg,
                        char *msg, size_t msglen);
int ddio_client_mkdir(struct ddio_client *cl, const char *path, uint32_t mode,
                      char *msg, size_t msglen);
int ddio_client_rmdir(struct ddio_client *cl, const char *path, char *msg, size_t msglen);
int ddio_client_unlink(struct ddio_client *cl, const char *path, char *msg, size_t msglen);
int ddio_client_rename(struct ddio_client *cl, const char *from, const char *to,
                       char *msg, size_t msglen);
/* Read-only opens of cl ask for the same-host datafile descriptors at
 * their first read, not with the OPEN (on: 1): for callers whose opens
 * often read nothing (a mount: stat-like tools open and close) */
void ddio_client_local_lazy(struct ddio_client *cl, int on);
/* the redundancy word (ddio_layout.h) of the files cl creates (0: the
 * servers' default) */
void ddio_client_create_redundancy(struct ddio_client *cl, uint32_t word);
/* Before the first call: every connection of cl acts for uid/gid (ACTAS;
 * servers allow it only to root on a trusted mount host: ddio-fuse) */
void ddio_client_act_as(struct ddio_client *cl, uint32_t uid, uint32_t gid);
/* chmod (what & DDIO_SA_MODE) and/or chown (DDIO_SA_OWNER) on every server
 * holding path; under --auth munge the servers check who may */
int ddio_client_setattr(struct ddio_client *cl, const char *path, uint32_t what,
                        uint32_t mode, uint32_t uid, uint32_t gid, char *msg, size_t msglen);
/* chown; uid or gid < 0: that one kept as it is (a stat first) */
int ddio_client_chown(struct ddio_client *cl, const char *path, long uid, long gid,
                      char *msg, size_t msglen);

/* Where a file's bytes are: its stripe and, per stripe index k, the list
 * server holding it (server[k], -1 when no server of the list has it) and
 * that server's local size. size is the logical size (max over servers). */
struct ddio_clayout {
    struct ddio_stripe stripe;
    uint64_t size;
    int server[DDIO_MAX_SERVERS];
    uint64_t local[DDIO_MAX_SERVERS];
};
int ddio_client_layout(struct ddio_client *cl, const char *path, struct ddio_clayout *l,
                       char *msg, size_t msglen);

/* open flags */
#define DDIO_CO_CREAT 1
#define DDIO_CO_EXCL  2
#define DDIO_CO_TRUNC 4
#define DDIO_CO_RDONLY 8          /* read only (else read and write) */
int ddio_client_open(struct ddio_client *cl, const char *path, int flags,
                     struct ddio_cfile **out, char *msg, size_t msglen);
/* the same, a new file getting permission bits mode (not 0666 less the umask) */
int ddio_client_open_mode(struct ddio_client *cl, const char *path, int flags, uint32_t mode,
                          struct ddio_cfile **out, char *msg, size_t msglen);
int ddio_client_close(struct ddio_cfile *f);
/* 1 when the open that made f created the file (new and empty), else 0 */
int ddio_client_created(const struct ddio_cfile *f);
ssize_t ddio_client_pread(struct ddio_cfile *f, void *buf, size_t len, uint64_t off,
                          char *msg, size_t msglen);
ssize_t ddio_client_pwrite(struct ddio_cfile *f, const void *buf, size_t len, uint64_t off,
                           char *msg, size_t msglen);
int ddio_client_size(struct ddio_cfile *f, uint64_t *size, char *msg, size_t msglen);
int ddio_client_truncate(struct ddio_cfile *f, uint64_t size, char *msg, size_t msglen);
int ddio_client_sync(struct ddio_cfile *f, char *msg, size_t msglen);

/* Striped parallel transfers (tools/ddio cp): an open file's stripe, and the
 * part of [off, off + len) that stripe server k holds, moved between that
 * server and buf (buf[0] is logical byte off; other bytes are untouched, so
 * a read's holes keep what buf held). One XFER on server k's connection
 * only, so threads working on different k run in parallel. 0 or -errno. */
void ddio_client_file_stripe(const struct ddio_cfile *f, struct ddio_stripe *s);
/* an open file's redundancy word (ddio_layout.h) */
uint32_t ddio_client_file_redundancy(const struct ddio_cfile *f);
int ddio_client_pread_part(struct ddio_cfile *f, uint32_t k, void *buf, size_t len,
                           uint64_t off, char *msg, size_t msglen);
int ddio_client_pwrite_part(struct ddio_cfile *f, uint32_t k, const void *buf, size_t len,
                            uint64_t off, char *msg, size_t msglen);

/* Scrub (tools/ddio scrub): every sector of every copy of f read by the
 * server holding it and checked against its checksum; a bad sector of a
 * mirrored file rewritten from a copy that reads right. At most rate bytes
 * a second (0: no limit); what was found added to t. 0 or -errno. */
int ddio_client_scrub(struct ddio_cfile *f, uint64_t rate, struct ddio_scrub_tally *t,
                      char *msg, size_t msglen);
/* An erasure-coded file's partial groups folded into parity
 * (ddio_ec_fold; the caller fenced the file on every server: FENCE).
 * *groups, *bytes: what was folded. 0, or -errno with msg. */
int ddio_client_fold(struct ddio_cfile *f, uint64_t *groups, uint64_t *bytes, char *msg,
                     size_t msglen);

/* Rebuild onto a replacement (tools/ddio rebuild; DESIGN.md 6.3). The id
 * server i said in its HELLO; PSTAT of path on server i alone (r->layout
 * that server's record); MKDIR on server i alone (EEXIST is 0); one
 * REBUILD op on server i (*state: BEGIN's DDIO_RB_BEGUN or _BUILT); f's
 * bytes copied onto its stripe server k (ddio_rebuild_copy; *copied: the
 * file's size); an erasure-coded file's rewritten whole with k's units
 * decoded (ddio_ec_rewrite; k >= its servers: none out, a settle).
 * 0 or -errno with msg. */
int ddio_client_server_id(struct ddio_client *cl, int i, uint8_t id[DDIO_ID_LEN], char *msg,
                          size_t msglen);
int ddio_client_pstat_on(struct ddio_client *cl, int i, const char *path,
                         struct ddio_pstat_r *r, char *msg, size_t msglen);
int ddio_client_mkdir_on(struct ddio_client *cl, int i, const char *path, uint32_t mode,
                         char *msg, size_t msglen);
/* DELETE of path on server i alone (a returning member's copy of a file
 * deleted while it was out) */
int ddio_client_unlink_on(struct ddio_client *cl, int i, const char *path, char *msg,
                          size_t msglen);
/* RMDIR of path on server i alone (a returning member's directory removed
 * while it was out) */
int ddio_client_rmdir_on(struct ddio_client *cl, int i, const char *path, char *msg,
                         size_t msglen);
/* mode and owner of path on server i alone (a replacement's entry made like
 * the survivors') */
int ddio_client_setattr_on(struct ddio_client *cl, int i, const char *path, uint32_t mode,
                           uint32_t uid, uint32_t gid, char *msg, size_t msglen);
int ddio_client_rebuild_op(struct ddio_client *cl, int i, const struct ddio_rebuild *m,
                           uint32_t *state, char *msg, size_t msglen);
/* the same with the whole reply in *r (MISSED's paths; free it with
 * ddio_rebuild_r_free, also on error) */
int ddio_client_rebuild_call(struct ddio_client *cl, int i, const struct ddio_rebuild *m,
                             struct ddio_rebuild_r *r, char *msg, size_t msglen);
int ddio_client_rebuild_copy(struct ddio_cfile *f, uint32_t k, const struct ddio_rebuild_opt *o,
                             uint64_t *copied, char *msg, size_t msglen);

/* Watching the servers (WATCH, INVAL: PROTOCOL.md "WATCH and INVAL"):
 * a thread per server of cl keeps a connection of its own that hears of
 * every change other processes make, and calls inval(arg, what, path)
 * (what: DDIO_IV_*, path: "/" + the server's relative path) before the
 * server is told it was heard, so the change's maker hears it is done only
 * once inval returned. up(arg, i, on) says server i's watch began (1) or
 * ended (0: whatever it said may have been missed), or was refused for
 * good (-errno: EACCES, a server of another version). cl is the watch's
 * own (no other caller may use it). NULL with msg on failure to start. */
struct ddio_watch_ops {
    void (*inval)(void *arg, uint32_t what, const char *path);
    void (*up)(void *arg, int server, int on);
};
struct ddio_watcher;
struct ddio_watcher *ddio_watch_start(struct ddio_client *cl, const struct ddio_watch_ops *ops,
                                    void *arg, char *msg, size_t msglen);
/* stop the threads (their connections closed); cl stays the caller's */
void ddio_watch_stop(struct ddio_watcher *w);

#endif
