/* SetInfo: our hints, then ROMIO's generic ones.
 *
 *   romio_ddio_servers    host:port,...   servers for files created/opened
 *                                         with this info (open time only)
 *   romio_ddio_timeout    seconds         every wait's deadline
 *   romio_ddio_recover_timeout seconds    how long a call rides through a
 *                                         server restart or a dropped
 *                                         connection (reconnect, reopen,
 *                                         resend); 0: fail at once (default:
 *                                         $DDIO_RECOVER_TIMEOUT, else the timeout)
 *   romio_ddio_secret_file path           shared secret for authenticating to the
 *                                         servers (open time only; see ddio_auth.h)
 *   romio_ddio_collective ddio|twophase   collective path: disk-directed
 *                                         (default) or ROMIO's two-phase over
 *                                         independent ddio I/O (the baseline)
 *   romio_ddio_presort    enable|disable  servers sort blocks by disk address
 *   romio_ddio_local_read enable|disable  contiguous reads from servers on this
 *                                         host straight out of their datafiles
 *                                         (default enable, unless
 *                                         DDIO_LOCAL_READ=0; ddio_core_local.c)
 *   romio_ddio_local_write enable|disable independent contiguous writes to
 *                                         servers on this host straight into
 *                                         their datafiles (default enable,
 *                                         unless DDIO_LOCAL_WRITE=0)
 *   romio_ddio_park      enable|disable   a closed file's server handles kept
 *                                         for a moment, taken again by the
 *                                         next open of the same path (default
 *                                         disable, unless DDIO_PARK_MS > 0;
 *                                         common/ddio_core_park.c)
 *   romio_ddio_coll_ranges enable|disable a collective whose parts are
 *                                         separate contiguous ranges goes as
 *                                         each rank's own XFER (default
 *                                         enable; ad_ddio_coll.c)
 *   romio_ddio_coll_speculate enable|disable after such a call, the next one
 *                                         sends first and agrees after: no
 *                                         barrier at entry (default disable;
 *                                         ad_ddio_coll.c)
 *   romio_ddio_check_desc enable|disable  debug: compare every descriptor with
 *                                         ROMIO's flattened view (ad_ddio_check.c),
 *                                         and every tree built from a datatype with
 *                                         the one from ROMIO's flattened list
 *   romio_ddio_type_desc  enable|disable  build trees from the datatype's
 *                                         constructors (ad_ddio_type.c; default)
 *                                         or always from ROMIO's flattened list
 *   romio_ddio_write_behind bytes         small writes gathered per rank and
 *                                         sent as one descriptor (default 0:
 *                                         off; ad_ddio_cache.c says why)
 *   romio_ddio_read_ahead bytes           small reads served from data read
 *                                         ahead (default 0: off)
 *   romio_ddio_transport  auto|ucx|tcp     how XFER data moves (open time only):
 *                                         ucx: UCX active messages (an error at
 *                                         open where a server cannot), tcp: the
 *                                         servers' TCP messages, auto (default,
 *                                         or DDIO_TRANSPORT): UCX for servers it
 *                                         has a one-copy path to (ddio_xport.h)
 *   romio_ddio_redundancy none|mirror|mirror:3  copies of a file this open
 *                                         creates (default none; mirror: 2).
 *                                         An existing file keeps the mode it
 *                                         was created with, and get_info
 *                                         reports that. ec:K+M and anything
 *                                         else: an error on every rank (never
 *                                         a file without the asked copies)
 *   striping_unit, striping_factor        layout of files this open creates
 *   romio_cb_read, romio_cb_write         ROMIO's, with ROMIO's meaning for
 *                                         "disable": that direction's
 *                                         collectives are each rank's
 *                                         independent call (ad_ddio_coll.c)
 *
 * Unknown romio_ddio_* keys and unrecognised values are ignored, as ROMIO
 * does for every hint (MPI: an implementation ignores hints it does not
 * understand), and are not returned by MPI_File_get_info. Values must be the
 * same on every rank (checked with a broadcast, like ROMIO's helpers).
 *
 * MPI_File_get_info also reports, read-only, ddio_transport_in_use ("ucx"
 * when every server moves this file's data by UCX, else "tcp"), and ddio_desc_builder: how the tree
 * of the current view was built, "type" (from its constructors) or "flat"
 * (from ROMIO's flattened list), or "none" before the view's first
 * non-contiguous access (and for contiguous views, which need no tree); and
 * ddio_mem_builder: the same for the memory type of the last access with a
 * non-contiguous one (absent before the first); ddio_flat_types: how many
 * datatypes this process has described from ROMIO's flattened list because
 * the tree builder refused them (ad_ddio_view.c; each is also logged once
 * to stderr), as of this file's last set_view or fallback.
 *
 * Every MPI_File_set_view passes through here (ADIO_Set_view calls
 * ADIO_SetInfo), so this is also where the cached file-view tree is
 * invalidated. */
#include "ad_ddio.h"
#include "hint_fns.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int info_has(MPI_Info info, const char *key)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;
    ADIOI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    return flag;
}

/* a string hint used at open: kept in *dst and reported by get_info */
static void install_string(ADIO_File fd, MPI_Info info, const char *key, char **dst)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int flag;

    ADIOI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        return;
    ADIOI_Info_set(fd->info, key, value);
    free(*dst);
    *dst = strdup(value);
}

/* Max and min at once: a difference fails the call on EVERY rank (comparing
 * with rank 0's value would let rank 0 succeed alone). 1 when v is the same
 * everywhere. */
static int same_everywhere(ADIO_File fd, int v, const char *key, char *myname, int *error_code)
{
    int in[2] = { v, -v }, out[2];

    MPI_Allreduce(in, out, 2, MPI_INT, MPI_MAX, fd->comm);
    if (out[0] != -out[1]) {
        ADIOI_DDIO_File *f = ADIOI_DDIO_File_get(fd);
        if (!f->hint_msg[0])
            snprintf(f->hint_msg, sizeof(f->hint_msg), "ddio: hint %s is not the same on "
                     "every rank (it must be)", key);
        MPIO_ERR_CREATE_CODE_INFO_NOT_SAME(myname, key, error_code);
        return 0;
    }
    return 1;
}

/* A hint every rank must give alike: its text in value, parse's value of
 * it (-1: not understood) in *v. 1 when given and alike on every rank; 0
 * when absent or different (a difference fails the call on every rank). */
static int agreed_hint(ADIO_File fd, MPI_Info info, const char *key, int (*parse) (const char *),
                       char *value, int *v, char *myname, int *error_code)
{
    int flag;

    ADIOI_Info_get(info, (char *) key, MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        return 0;
    *v = parse(value);
    return same_everywhere(fd, *v, key, myname, error_code);
}

static int collective_parse(const char *value)
{
    if (!strcmp(value, "ddio") || !strcmp(value, "DDIO"))
        return ADIOI_DDIO_COLL_DDIO;
    if (!strcmp(value, "twophase") || !strcmp(value, "TWOPHASE"))
        return ADIOI_DDIO_COLL_TWOPHASE;
    return -1;
}

/* an unrecognised collective or transport is ignored (after the check for
 * sameness) */
static void install_collective(ADIO_File fd, ADIOI_DDIO_File * f, MPI_Info info,
                               char *myname, int *error_code)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int v;

    if (agreed_hint(fd, info, "romio_ddio_collective", collective_parse, value, &v, myname,
                    error_code) && v >= 0) {
        f->collective = v;
        ADIOI_Info_set(fd->info, "romio_ddio_collective", value);
    }
}

static void install_transport(ADIO_File fd, ADIOI_DDIO_File * f, MPI_Info info,
                              char *myname, int *error_code)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int v;

    if (agreed_hint(fd, info, "romio_ddio_transport", ddio_xport_parse, value, &v, myname,
                    error_code) && v >= 0)
        f->transport = v;
}

/* Unlike other hints, a value not understood is an error: a typo must
 * not quietly create a file without the copies it asked for. SetInfo's
 * error at open is dropped by ROMIO's ADIO_Open, so the refusal is noted
 * (f->copies < 0) and the open fails with it (ad_ddio_open.c). */
static void install_redundancy(ADIO_File fd, ADIOI_DDIO_File * f, MPI_Info info,
                               char *myname, int *error_code)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int v;

    if (agreed_hint(fd, info, "romio_ddio_redundancy", ddio_redundancy_parse, value, &v, myname,
                    error_code) && !f->fh.srv)    /* an open file keeps its stored mode */
        f->copies = v;
}

static void publish_defaults(ADIO_File fd, ADIOI_DDIO_File * f);

/* A hint refused (given differently on the ranks, or not understood).
 * ROMIO's generic hints are still set up, since ADIO_Open goes on to use
 * them (cb_config_list: a mismatch crashed the open before), and as ROMIO
 * drops SetInfo's error at open, the open fails with it (ad_ddio_open.c). */
static void hints_refused(ADIO_File fd, ADIOI_DDIO_File * f, MPI_Info users_info, int error_code)
{
    int ignored = MPI_SUCCESS;

    if (!f->fh.srv && f->hint_err == MPI_SUCCESS)
        f->hint_err = error_code;
    if (!f->hint_msg[0])
        snprintf(f->hint_msg, sizeof(f->hint_msg), "ddio: a hint given at open was refused "
                 "(a ROMIO hint not the same on every rank, or not understood)");
    publish_defaults(fd, f);
    ADIOI_GEN_SetInfo(fd, users_info, &ignored);
}

static void publish_defaults(ADIO_File fd, ADIOI_DDIO_File * f)
{
    char value[32];
    ADIOI_Info_set(fd->info, "romio_ddio_collective",
                   f->collective == ADIOI_DDIO_COLL_DDIO ? "ddio" : "twophase");
    ADIOI_Info_set(fd->info, "romio_ddio_presort",
                   f->presort == ADIOI_HINT_DISABLE ? "disable" : "enable");
    ADIOI_Info_set(fd->info, "romio_ddio_local_read",
                   ADIOI_DDIO_Local_read(f) ? "enable" : "disable");
    ADIOI_Info_set(fd->info, "romio_ddio_local_write",
                   ADIOI_DDIO_Local_write(f) ? "enable" : "disable");
    ADIOI_Info_set(fd->info, "romio_ddio_park", ADIOI_DDIO_Park(f) ? "enable" : "disable");
    ADIOI_Info_set(fd->info, "romio_ddio_coll_ranges",
                   f->coll_ranges == ADIOI_HINT_DISABLE ? "disable" : "enable");
    ADIOI_Info_set(fd->info, "romio_ddio_coll_speculate",
                   f->coll_speculate == ADIOI_HINT_ENABLE ? "enable" : "disable");
    ADIOI_Info_set(fd->info, "romio_ddio_check_desc",
                   f->check_desc == ADIOI_HINT_ENABLE ? "enable" : "disable");
    ADIOI_Info_set(fd->info, "romio_ddio_type_desc",
                   f->type_desc == ADIOI_HINT_DISABLE ? "disable" : "enable");
    /* an open file's own mode (its layout's), else what a create would ask */
    if (f->fh.srv || f->copies >= 0)
        ADIOI_Info_set(fd->info, "romio_ddio_redundancy",
                       ddio_redundancy_name(f->fh.srv ? ddio_fh_redundancy(&f->fh)
                                            : (uint32_t) f->copies));
    if (f->transport >= 0)
        ADIOI_Info_set(fd->info, "romio_ddio_transport", f->transport == DDIO_XPORT_UCX ? "ucx"
                       : f->transport == DDIO_XPORT_TCP ? "tcp" : "auto");
    /* the view may change here: view_get says how its tree was built */
    ADIOI_Info_set(fd->info, "ddio_desc_builder", "none");
    snprintf(value, sizeof(value), "%ld", ADIOI_DDIO_Flat_types());
    ADIOI_Info_set(fd->info, "ddio_flat_types", value);
    snprintf(value, sizeof(value), "%d", ddio_timeout_ms(f->timeout_s) / 1000);
    ADIOI_Info_set(fd->info, "romio_ddio_timeout", value);
    snprintf(value, sizeof(value), "%d", ADIOI_DDIO_Recover_ms(f) / 1000);
    ADIOI_Info_set(fd->info, "romio_ddio_recover_timeout", value);
    snprintf(value, sizeof(value), "%zu", ADIOI_DDIO_Cache_bytes(f->write_behind));
    ADIOI_Info_set(fd->info, "romio_ddio_write_behind", value);
    snprintf(value, sizeof(value), "%zu", ADIOI_DDIO_Cache_bytes(f->read_ahead));
    ADIOI_Info_set(fd->info, "romio_ddio_read_ahead", value);
}

/* a byte count hint: a non-negative integer, else ignored (as ROMIO does
 * with values it cannot read) */
static void install_bytes(ADIO_File fd, MPI_Info info, const char *key, int *dst)
{
    char value[MPI_MAX_INFO_VAL + 1], *end;
    int flag;
    long v;

    ADIOI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
    if (!flag)
        return;
    v = strtol(value, &end, 10);
    if (end != value && *end == '\0' && v >= 0 && v <= (1L << 30))
        *dst = (int) v;
    (void) fd;
}

int ADIOI_DDIO_Local_read(const ADIOI_DDIO_File * f)
{
    return ddio_local_read_on(f->local_read == ADIOI_HINT_ENABLE ? 1
                              : f->local_read == ADIOI_HINT_DISABLE ? 0 : -1);
}

int ADIOI_DDIO_Local_write(const ADIOI_DDIO_File * f)
{
    return ddio_local_write_on(f->local_write == ADIOI_HINT_ENABLE ? 1
                               : f->local_write == ADIOI_HINT_DISABLE ? 0 : -1);
}

int ADIOI_DDIO_Park(const ADIOI_DDIO_File * f)
{
    return f->park == ADIOI_HINT_ENABLE ? ddio_park_ms() != 0
        : f->park != ADIOI_HINT_DISABLE && ddio_park_ms() > 0;
}

int ADIOI_DDIO_Recover_ms(const ADIOI_DDIO_File * f)
{
    return ddio_recover_ms(f->recover_given ? f->recover_s : -1, ddio_timeout_ms(f->timeout_s));
}

void ADIOI_DDIO_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    int recover_s = -1;

    static char myname[] = "ADIOI_DDIO_SETINFO";
    ADIOI_DDIO_File *f = ADIOI_DDIO_File_get(fd);

    *error_code = MPI_SUCCESS;
    f->view_gen++;
    if (fd->info == MPI_INFO_NULL)
        MPI_Info_create(&fd->info);
    if (users_info != MPI_INFO_NULL) {
        install_string(fd, users_info, "romio_ddio_servers", &f->servers_hint);
        install_string(fd, users_info, "romio_ddio_secret_file", &f->secret_hint);
        ADIOI_Info_check_and_install_int(fd, users_info, "romio_ddio_timeout",
                                         &f->timeout_s, myname, error_code);
        install_collective(fd, f, users_info, myname, error_code);
        install_transport(fd, f, users_info, myname, error_code);
        install_redundancy(fd, f, users_info, myname, error_code);
        ADIOI_Info_check_and_install_enabled(fd, users_info, "romio_ddio_presort",
                                             &f->presort, myname, error_code);
        ADIOI_Info_check_and_install_enabled(fd, users_info, "romio_ddio_local_read",
                                             &f->local_read, myname, error_code);
        ADIOI_Info_check_and_install_enabled(fd, users_info, "romio_ddio_local_write",
                                             &f->local_write, myname, error_code);
        ADIOI_Info_check_and_install_enabled(fd, users_info, "romio_ddio_park",
                                             &f->park, myname, error_code);
        ADIOI_Info_check_and_install_enabled(fd, users_info, "romio_ddio_coll_ranges",
                                             &f->coll_ranges, myname, error_code);
        ADIOI_Info_check_and_install_enabled(fd, users_info, "romio_ddio_coll_speculate",
                                             &f->coll_speculate, myname, error_code);
        ADIOI_Info_check_and_install_enabled(fd, users_info, "romio_ddio_check_desc",
                                             &f->check_desc, myname, error_code);
        ADIOI_Info_check_and_install_enabled(fd, users_info, "romio_ddio_type_desc",
                                             &f->type_desc, myname, error_code);
        install_bytes(fd, users_info, "romio_ddio_write_behind", &f->write_behind);
        install_bytes(fd, users_info, "romio_ddio_read_ahead", &f->read_ahead);
        install_bytes(fd, users_info, "romio_ddio_recover_timeout", &recover_s);
        if (recover_s >= 0) {
            f->recover_s = recover_s;
            f->recover_given = 1;
        }
        f->striping_factor_given |=
            ADIOI_Info_check_and_install_int(fd, users_info, "striping_factor",
                                             &f->striping_factor, myname, error_code) == 0 &&
            info_has(users_info, "striping_factor");
        if (*error_code != MPI_SUCCESS) {
            hints_refused(fd, f, users_info, *error_code);
            return;
        }
    }
    if (f->presort != ADIOI_HINT_DISABLE)       /* "automatic" means the default */
        f->presort = ADIOI_HINT_ENABLE;
    if (f->fh.srv) {       /* a new timeout applies to an open file at once */
        ADIOI_DDIO_Err e;
        memset(&e, 0, sizeof(e));
        f->fh.timeout_ms = ddio_timeout_ms(f->timeout_s);
        f->fh.recover_ms = ADIOI_DDIO_Recover_ms(f);
        f->fh.local_read = ADIOI_DDIO_Local_read(f);
        f->fh.local_write = ADIOI_DDIO_Local_write(f);
        f->fh.park = f->fh.park && ADIOI_DDIO_Park(f);
        /* set_view (it passes here) and new cache sizes: buffered writes go */
        if (ADIOI_DDIO_Cache_flush(fd, 0, &e) || ADIOI_DDIO_Cache_setup(fd, ADIOI_DDIO_Xfer_flags(f), &e)) {
            *error_code = ADIOI_DDIO_Err_code(myname, &e);
            return;
        }
    }
    publish_defaults(fd, f);
    ADIOI_GEN_SetInfo(fd, users_info, error_code);
}

int ADIOI_DDIO_Timing_on(void)
{
    return ddio_timing_on();    /* the client core's connection lines too */
}

uint32_t ADIOI_DDIO_Xfer_flags(const ADIOI_DDIO_File * f)
{
    return f->presort == ADIOI_HINT_DISABLE ? DDIO_XF_NOSORT : 0;
}

int ADIOI_DDIO_Hint_err_code(const char *myname, const ADIOI_DDIO_File * f)
{
    int cls = MPI_ERR_ARG;

    if (f->hint_err == MPI_SUCCESS)
        return MPI_SUCCESS;
    MPI_Error_class(f->hint_err, &cls);
    ADIOI_DDIO_Say_err(myname, EINVAL, f->hint_msg);
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, (char *) myname, __LINE__,
                                cls, "**io", "**io %s", f->hint_msg);
}
