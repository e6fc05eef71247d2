/* Input format shared by the fuzz harness (fuzz_proto.c) and the seed
 * generator (gen_corpus.c): the first byte, modulo FZ_N, selects the
 * decoder; the rest of the input is what that decoder gets. */
#ifndef DDIO_FUZZ_TARGETS_H
#define DDIO_FUZZ_TARGETS_H

enum fz_target {
    FZ_HDR = 0, FZ_HELLO, FZ_HELLO_R, FZ_OPEN, FZ_OPEN_R, FZ_HANDLE_REQ,
    FZ_U64_R, FZ_PATH_REQ, FZ_SETSIZE, FZ_PREALLOC, FZ_XFER, FZ_XFER_R,
    FZ_PUT, FZ_GET, FZ_DATA, FZ_LOCK, FZ_STATS_R, FZ_ERR, FZ_DESC,
    FZ_PSTAT_R, FZ_READDIR, FZ_READDIR_R, FZ_MKDIR, FZ_RENAME,
    FZ_AUTH, FZ_AUTH_R,
    FZ_UCXADDR_R, FZ_AM_PUT, FZ_AM_DATA,
    FZ_LOCAL_REQ, FZ_LOCAL_MSG,
    FZ_AUTH_MUNGE, FZ_AUTH_MUNGE_R, FZ_SETATTR, FZ_ACTAS,
    FZ_LOCALSTAT, FZ_WATCH, FZ_INVAL,
    FZ_SCRUB, FZ_SCRUB_R, FZ_REPAIR, FZ_REPAIR_R,
    FZ_REBUILD, FZ_REBUILD_R,
    FZ_MEMBER, FZ_MEMBER_R,
    FZ_ECREAD, FZ_ECREAD_R,
    FZ_N
};

#endif
