/* ddio: ROMIO driver for disk-directed I/O servers (prefix "ddio:").
 *
 * The driver keeps no data: every read and write is one XFER per involved
 * server carrying a compact distribution descriptor; the servers push read
 * data (PUT) and pull write data (GET) in disk order while the client core's
 * transfer loop (common/ddio_core_xfer.c) moves bytes straight between the
 * socket and the user buffer. Connections, open files and transfers are the
 * client core's (common/ddio_core.h), shared with the tools and the mount.
 * Wire protocol: docs/PROTOCOL.md; shared library: common/ddio_*.h; the design
 * and the ROMIO pitfalls that shaped this driver: docs/DESIGN.md (section 9).
 */
#ifndef AD_DDIO_H_INCLUDED
#define AD_DDIO_H_INCLUDED

#include "adio.h"
#include "adioi.h"
#include "ad_ddio_compat.h"
#include <stdint.h>
#include <stddef.h>
#include <limits.h>
#include <errno.h>
#include "ddio_proto.h"
#include "ddio_desc.h"
#include "ddio_layout.h"
#include "ddio_net.h"
#include "ddio_auth.h"
#include "ddio_ucx.h"
#include "ddio_core.h"

#define ADIOI_DDIO_DFLT_UNIT      DDIO_DFLT_UNIT        /* striping_unit default */
#define ADIOI_DDIO_MSG_LEN        DDIO_ERR_LEN
#define ADIOI_DDIO_SERVERS_LEN    8192          /* a server list (xattr value) */

/* romio_ddio_collective */
#define ADIOI_DDIO_COLL_TWOPHASE  0
#define ADIOI_DDIO_COLL_DDIO      1

/* errnum of a failed internal consistency check (romio_ddio_check_desc):
 * reported as MPI_ERR_INTERN */
#define ADIOI_DDIO_EINTERN        ENOTRECOVERABLE

/* The client core (common/ddio_core.h) under ROMIO's names: errors (errno +
 * a message naming the server; turned into an MPI error code only at the
 * table entries), connections, a file's stripe servers. */
typedef struct ddio_err ADIOI_DDIO_Err;
/* no error yet, without clearing the message buffer */
static inline void ADIOI_DDIO_Err_clear(ADIOI_DDIO_Err * e)
{
    e->errnum = 0;
    e->transport = 0;
    e->msg[0] = '\0';
}
typedef struct ddio_conn ADIOI_DDIO_Conn;
typedef struct ddio_srv ADIOI_DDIO_Srv;

/* The file view compressed to a nested-strided tree, cached per fd. */
typedef struct ADIOI_DDIO_View {
    int valid;
    unsigned gen;               /* ADIOI_DDIO_File.view_gen when built */
    MPI_Datatype filetype;
    int from_type;              /* built by Tree_from_type (else from a flat list) */
    int by_map;                 /* by MPI's type map (not ROMIO's flattened list) */
    int monotone;               /* a tile's pieces are in order (else only
                                 * read-only set_view takes it, and no call) */
    int tiles_apart;            /* each tile's data end before the next tile's
                                 * start (else a call stays within one tile) */
    struct ddio_node *root;     /* addresses relative to base */
    int64_t base;               /* offset of the type's first data byte */
    int64_t extent;
    uint64_t size;
} ADIOI_DDIO_View;

/* fd->fs_ptr */
typedef struct ADIOI_DDIO_File {
    /* hints (SetInfo runs before Open) */
    char *servers_hint;         /* romio_ddio_servers, or NULL */
    char *mount_servers;        /* user.ddio.servers of a path on a ddio mount, or NULL */
    char *secret_hint;          /* romio_ddio_secret_file, or NULL */
    int timeout_s;              /* romio_ddio_timeout, 0 = not given */
    int recover_s;              /* romio_ddio_recover_timeout (recover_given) */
    int recover_given;
    int collective;             /* ADIOI_DDIO_COLL_* */
    int presort;                /* ADIOI_HINT_ENABLE / ADIOI_HINT_DISABLE */
    int local_read;             /* romio_ddio_local_read: ADIOI_HINT_*, 0 = not given */
    int local_write;            /* romio_ddio_local_write: the same */
    int park;                   /* romio_ddio_park: ADIOI_HINT_DISABLE closes for real */
    int coll_ranges;            /* romio_ddio_coll_ranges: ADIOI_HINT_DISABLE keeps
                                 * collectives of plain ranges disk-directed */
    int coll_speculate;         /* romio_ddio_coll_speculate: ADIOI_HINT_ENABLE lets
                                 * them agree after sending (ad_ddio_coll.c) */
    int check_desc;             /* romio_ddio_check_desc (debug): ADIOI_HINT_* */
    int type_desc;              /* romio_ddio_type_desc: ADIOI_HINT_DISABLE forces the
                                 * flattened-list path (Tree_from_flat) */
    int mem_builder;            /* ddio_mem_builder published: 0 none yet, else
                                 * 1 + from_type (Info_set only on a change) */
    int copies;                 /* romio_ddio_redundancy for files this open
                                 * creates: 0 not given (none), else its word
                                 * (ddio_layout.h: copies, or ec:K+M);
                                 * DDIO_REDUNDANCY_BAD: refused at open */
    int hint_err;               /* an MPI error of the hints given at open
                                 * (SetInfo's is dropped by ADIO_Open): the
                                 * open fails with it, and hint_msg */
    char hint_msg[ADIOI_DDIO_MSG_LEN];
    int striping_factor;        /* <= 0: all servers */
    int striping_factor_given;  /* the hint was present */
    int transport;              /* romio_ddio_transport: enum ddio_xport, -1 = not given
                                 * (DDIO_TRANSPORT, else auto) */
    int write_behind;           /* romio_ddio_write_behind: bytes, -1 = not given */
    int read_ahead;             /* romio_ddio_read_ahead: bytes, -1 = not given */
    /* open state */
    struct ddio_fh fh;          /* the stripe servers' handles, timeout, transport
                                 * in force since open (client core) */
    uint64_t group;             /* collective group id, agreed at open */
    uint64_t seq;               /* collective sequence number: bumped by every
                                 * disk-directed collective, on every rank */
    unsigned view_gen;          /* bumped by SetInfo: every set_view passes there */
    int coll_spec;              /* the last collective was plain ranges, agreed: the
                                 * next one under the same view goes first, agrees
                                 * after (ad_ddio_coll.c); the same on every rank */
    unsigned coll_spec_gen;     /* view_gen when coll_spec was set */
    int coll_quick;             /* this rank's part of the last collective was
                                 * small or moved here, so no server works long
                                 * for it: the next call's agreements spin a
                                 * little first */
    ADIOI_DDIO_View view;
    struct ADIOI_DDIO_Afile *async;     /* nonblocking I/O state (ad_ddio_async.c) */
} ADIOI_DDIO_File;

/* Memory side of a transfer, one participant's XFER, a request of a fan-out
 * (client core) */
typedef struct ddio_mem ADIOI_DDIO_Mem;
typedef struct ddio_xfer_req ADIOI_DDIO_Xfer;
typedef struct ddio_call ADIOI_DDIO_Call;

/* ---- table entries ---- */
void ADIOI_DDIO_Open(ADIO_File fd, int *error_code);
void ADIOI_DDIO_OpenColl(ADIO_File fd, int rank, int access_mode, int *error_code);
void ADIOI_DDIO_Close(ADIO_File fd, int *error_code);
void ADIOI_DDIO_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int *error_code);
void ADIOI_DDIO_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code);
void ADIOI_DDIO_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code);
void ADIOI_DDIO_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code);
void ADIOI_DDIO_ReadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                int *error_code);
void ADIOI_DDIO_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status * status, int *error_code);
void ADIOI_DDIO_IreadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Request * request, int *error_code);
void ADIOI_DDIO_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Request * request, int *error_code);
void ADIOI_DDIO_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                            int *error_code);
void ADIOI_DDIO_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code);
void ADIOI_DDIO_IreadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code);
void ADIOI_DDIO_IwriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                              int *error_code);
void ADIOI_DDIO_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code);
void ADIOI_DDIO_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code);
/* the open's error for hints SetInfo refused (f->hint_err set) */
int ADIOI_DDIO_Hint_err_code(const char *myname, const ADIOI_DDIO_File * f);
void ADIOI_DDIO_Flush(ADIO_File fd, int *error_code);
void ADIOI_DDIO_Resize(ADIO_File fd, ADIO_Offset size, int *error_code);
void ADIOI_DDIO_Delete(const char *filename, int *error_code);
int ADIOI_DDIO_Feature(ADIO_File fd, int flag);
int ADIOI_DDIO_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                       ADIO_Offset len);

/* ---- ad_ddio_err.c: errors as MPI codes; rank 0's outcome to every rank ---- */
int ADIOI_DDIO_Err_code(const char *myname, const ADIOI_DDIO_Err * e);
void ADIOI_DDIO_Bcast_err(ADIO_File fd, ADIOI_DDIO_Err * e);
/* collective: every rank learns whether any failed (the lowest failing
 * rank's message where it did not); non-zero when one did */
int ADIOI_DDIO_Agree_err(ADIO_File fd, ADIOI_DDIO_Err * e);
/* (collective) the error of rank who, broadcast: the error of every rank that has none */
void ADIOI_DDIO_Adopt_err(ADIO_File fd, ADIOI_DDIO_Err * e, int who);
/* the client cache (ddio_core_cache.c) of fd: flush its buffered writes and,
 * drop set, forget its read-ahead; 0 or -1 with e */
int ADIOI_DDIO_Cache_flush(ADIO_File fd, int drop, ADIOI_DDIO_Err * e);
/* the cache's sizes from the hints (atomic mode: none), applied at open and
 * at every SetInfo / set_atomicity; xflags: its XFERs' (Xfer_flags) */
int ADIOI_DDIO_Cache_setup(ADIO_File fd, uint32_t xflags, ADIOI_DDIO_Err * e);
/* bytes a cache hint means (-1, not given: 0, off) */
size_t ADIOI_DDIO_Cache_bytes(int hint);

/* ---- ad_ddio_conn.c: the connection pools ---- */
/* connection pools: the main one, and the progress thread's */
#define ADIOI_DDIO_POOL_MAIN  0
#define ADIOI_DDIO_POOL_ASYNC 1
struct ddio_pool *ADIOI_DDIO_Pool(int pool);
/* how long a call rides through a lost server (ddio_recover_ms) */
int ADIOI_DDIO_Recover_ms(const ADIOI_DDIO_File * f);
/* same-host reads from the servers' datafiles: the hint, else DDIO_LOCAL_READ */
int ADIOI_DDIO_Local_read(const ADIOI_DDIO_File * f);
int ADIOI_DDIO_Local_write(const ADIOI_DDIO_File * f);
int ADIOI_DDIO_Park(const ADIOI_DDIO_File * f);
/* the main pool's connection to addr; a refused connect tried again with
 * backoff for up to recover_ms (a server restarting meanwhile) */
int ADIOI_DDIO_Conn_get(const char *addr, int timeout_ms, int recover_ms,
                        ADIOI_DDIO_Conn ** out, ADIOI_DDIO_Err * e);

/* ---- ad_ddio_file.c: fd->fs_ptr ---- */
ADIOI_DDIO_File *ADIOI_DDIO_File_get(ADIO_File fd);
void ADIOI_DDIO_File_free(ADIO_File fd);

/* ---- ad_ddio_mount.c: names, and plain paths on a ddio mount (tools/ddio-fuse) ---- */
/* "ddio:/a/b" and "/a/b" -> "a/b": relative to every server's storage root */
const char *ADIOI_DDIO_Server_path(const char *filename);
/* 1 if filename (not "ddio:"-prefixed) is on a ddio mount: nspath gets its
 * path inside the namespace and servers the mount's server list; else 0 */
int ADIOI_DDIO_Mount_resolve(const char *filename, char *nspath, size_t cap,
                             char *servers, size_t scap);
/* called by ROMIO's ad_fstype.c (scripts/romio-register.sh) */
int ADIOI_DDIO_Is_mount_path(const char *filename);
/* the namespace path of any name the driver gets ("ddio:/a", "/a", a plain
 * path on a ddio mount) relative to the servers' roots, and the mount's
 * server list ("" when not on a mount) */
void ADIOI_DDIO_Target(const char *filename, char *path, size_t cap, char *servers,
                       size_t scap);
/* the spec for ADIOI_DDIO_Server_list: the hint, else (no $DDIO_SERVERS)
 * the mount's servers, else NULL (config, or the last hint) */
const char *ADIOI_DDIO_Servers_spec(const char *hint, const char *mount_servers);
/* ad_ddio_member.c: a lost server of a mirrored file declared out
 * (ddio_fh.declare_out, arg the file); epoch 1 named at an open */
int ADIOI_DDIO_Declare_out(void *arg, const struct ddio_conn *c, ADIOI_DDIO_Err * e);
void ADIOI_DDIO_Name_first(ADIOI_DDIO_File * f);

/* ad_ddio_hints.c: DDIO_TIMING set: print per-call phase times to stderr;
 * the XFER flags the file's hints ask for (romio_ddio_presort) */
int ADIOI_DDIO_Timing_on(void);
uint32_t ADIOI_DDIO_Xfer_flags(const ADIOI_DDIO_File * f);
/* collectives whose waiting ranks nap instead of spinning (ad_ddio_nap.c) */
void ADIOI_DDIO_Nap_wait(MPI_Request * r);
/* this thread's agreements spin (polling, yielding) up to us microseconds
 * before they nap (0: nap at once) */
void ADIOI_DDIO_Nap_spin(int us);
void ADIOI_DDIO_Nap_barrier(MPI_Comm comm);
void ADIOI_DDIO_Nap_bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm);
void ADIOI_DDIO_Nap_allgather(const void *in, void *out, int n, MPI_Datatype t, MPI_Comm comm);
void ADIOI_DDIO_Nap_allreduce(const void *in, void *out, int n, MPI_Datatype t, MPI_Op op,
                              MPI_Comm comm);

/* ---- ad_ddio_view.c: descriptors ---- */
/* File_desc and Mem_init return 0 or -errno; with romio_ddio_check_desc a
 * tree that differs from MPI's type map gives
 * -ADIOI_DDIO_EINTERN with *e set */
int ADIOI_DDIO_File_desc(ADIO_File fd, int file_ptr_type, ADIO_Offset offset, uint64_t len,
                         struct ddio_desc *d, int *owns_root, ADIOI_DDIO_Err * e);
int ADIOI_DDIO_Contig_desc(struct ddio_desc *d, int64_t off, uint64_t len);
int ADIOI_DDIO_Mem_init(ADIO_File fd, ADIOI_DDIO_Mem * m, const void *buf, int count,
                        MPI_Datatype datatype, ADIOI_DDIO_Err * e);
void ADIOI_DDIO_Mem_free(ADIOI_DDIO_Mem * m);
/* where the data of a contiguous memory type t at buf starts: at its true
 * lb (MPI's type map: a contiguous type may have a negative one, which
 * ROMIO's drivers ignore), or at buf with romio_ddio_type_desc=disable
 * (memory placed as ROMIO places it) */
char *ADIOI_DDIO_Contig_mem(ADIO_File fd, const void *buf, MPI_Datatype t);
void ADIOI_DDIO_View_free(ADIOI_DDIO_View * v);
/* the tree of fd's current (non-contiguous) view, built once per view: 0, or
 * -errno (-ENOMEM also when the filetype has no data) */
int ADIOI_DDIO_View_get(ADIO_File fd, ADIOI_DDIO_View ** out, ADIOI_DDIO_Err * e);
/* view data bytes that lie below the address `rel`, relative to the view's
 * first data byte (disp + base), in O(tree depth) */
uint64_t ADIOI_DDIO_View_bytes_before(const ADIOI_DDIO_View * v, int64_t rel);
/* datatypes this process described from a flattened list because the
 * tree builder gave up on them (each logged once with DDIO_VERBOSE=1):
 * get_info's ddio_flat_types */
long ADIOI_DDIO_Flat_types(void);

/* ---- ad_ddio_pos.c: set_view and positions in the view, from the tree ---- */
/* (ADIOI_DDIO_Set_view, _Get_position, _Get_byte_offset, _Get_eof_offset are
 * declared in ROMIO's adioi_fs_proto.h: ROMIO's own functions call them) */
ADIO_Offset ADIOI_DDIO_SeekIndividual(ADIO_File fd, ADIO_Offset offset, int whence,
                                      int *error_code);
/* fd->fp_ind after `len` stream bytes of d (ROMIO: one past the last byte) */
void ADIOI_DDIO_Advance_fp(ADIO_File fd, int file_ptr_type, const struct ddio_desc *d,
                           uint64_t len);

/* ---- ad_ddio_type.c: trees from the datatype's constructors ---- */
/* Why Tree_from_type gave up on a type: the innermost combiner it was
 * reading (MPI_COMBINER_NAMED: the type as a whole) and a reason (NULL: no
 * data, or out of memory) */
typedef struct ADIOI_DDIO_Refusal {
    int combiner;
    const char *reason;
} ADIOI_DDIO_Refusal;
/* The tree of a non-contiguous type t by MPI's type map, relative to its
 * lowest data byte (*base), in time proportional to t's constructor
 * description; file views and memory types alike (ad_ddio_type.c). NULL
 * when t has no data or its tree would not fit a descriptor (*why, if not
 * NULL, says where and why). */
struct ddio_node *ADIOI_DDIO_Tree_from_type(MPI_Datatype t, int64_t * base,
                                            ADIOI_DDIO_Refusal * why);
/* the same type map for a type Tree_from_type gave up on (its pieces,
 * compressed; cost: the pieces); NULL if it has no data or a constructor
 * the builder does not read */
struct ddio_node *ADIOI_DDIO_Tree_from_pieces(MPI_Datatype t, int64_t * base);
/* the tree of ROMIO's flattened list of t (one entry per contiguous piece),
 * read only as far as t's size, as ROMIO's own walkers read it: ROMIO's
 * placement (romio_ddio_type_desc=disable) */
struct ddio_node *ADIOI_DDIO_Tree_from_flat(MPI_Datatype t, const ADIOI_Flatlist_node * flat,
                                            int64_t * base);
/* MPI's own layout of one element of a committed type t (MPI_Pack of a
 * buffer whose bytes spell their addresses): *n pieces in type-map order,
 * adjacent ones merged, relative to t's origin (malloc'd); 0, or -1 for a
 * true extent over 64 MiB or out of memory */
int ADIOI_DDIO_Type_pieces(MPI_Datatype t, int64_t ** off, int64_t ** len, size_t *n);
/* romio_ddio_check_desc for a type's tree (a view's or memory's): root (at
 * base) has the pieces, in order, of t's type map as ad_ddio_check.c lists
 * them by the constructors' definitions; 0, or -1 with *e set. */
int ADIOI_DDIO_Check_type_tree(MPI_Datatype t, const struct ddio_node *root, int64_t base,
                               ADIOI_DDIO_Err * e);

/* ---- ad_ddio_check.c: romio_ddio_check_desc (debug) ---- */
/* Compare the descriptor's pieces with the filetype's type map (listed by
 * the constructors' definitions, apart from the tree builder) tiled from
 * disp, starting at the call's position; 0, or -1 with *e set at the first
 * mismatch. */
int ADIOI_DDIO_Check_desc(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
                          const struct ddio_desc *d, ADIOI_DDIO_Err * e);


/* ---- ad_ddio_async.c: nonblocking I/O on the driver's progress thread ---- */
/* One nonblocking read or write, described at the call. */
typedef struct ADIOI_DDIO_Iop {
    uint32_t op;                /* DDIO_X_READ / DDIO_X_WRITE */
    int coll;                   /* a collective: every rank, every server */
    struct ddio_desc d;         /* file side; its tree is owned by the request */
    ADIOI_DDIO_Mem mem;         /* memory side, owned by the request */
    char *involved;             /* independent: servers to send to (malloc'd) */
    ADIOI_DDIO_Err e;           /* collective: why this rank could not describe
                                 * its part (it then takes part with nothing) */
} ADIOI_DDIO_Iop;
/* Hand op to the progress thread and return a generalized request that
 * completes (MPI_Test/MPI_Wait) with the bytes moved or the error; op's
 * tree, memory layout and server list are taken over. */
void ADIOI_DDIO_Async_start(ADIO_File fd, ADIOI_DDIO_Iop * op, MPI_Request * request,
                            int *error_code, const char *myname);
/* At close: wait for this file's requests, then close the thread's handles. */
void ADIOI_DDIO_Async_close(ADIO_File fd, ADIOI_DDIO_Err * e);

/* ---- ad_ddio_lock.c ---- */
int ADIOI_DDIO_Lock(ADIOI_DDIO_File * f, uint32_t cmd, uint32_t type, uint64_t start,
                    uint64_t len, ADIOI_DDIO_Err * e);

#endif /* AD_DDIO_H_INCLUDED */
