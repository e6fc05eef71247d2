/* Fcntl: file size (STAT on every server), preallocation (PREALLOC of each
 * server's local share, then extension to the requested size), atomicity.
 * Independent: ROMIO calls SET_DISKSPACE on one rank only. */
#include "ad_ddio.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* one request per server of the file (NULL payload: that server is skipped) */
static ADIOI_DDIO_Call *calls_new(ADIOI_DDIO_File * f)
{
    ADIOI_DDIO_Call *calls = calloc(f->nsrv, sizeof(*calls));
    for (int i = 0; calls && i < f->nsrv; i++)
        ddio_wbuf_init(&calls[i].req);
    return calls;
}

static int calls_error(ADIOI_DDIO_Call * calls, int n, ADIOI_DDIO_Err * e)
{
    for (int i = 0; i < n; i++)
        if (calls[i].err.errnum) {
            *e = calls[i].err;
            return -1;
        }
    return 0;
}

static void calls_target(ADIOI_DDIO_File * f, ADIOI_DDIO_Call * calls, int i)
{
    if (ADIOI_DDIO_Srv_check(&f->srv[i], &calls[i].err) == 0)
        calls[i].conn = f->srv[i].conn;
}

/* local sizes of every server not in `skip` (whose sizes are in `known`) */
static int stat_all(ADIOI_DDIO_File * f, const char *skip, uint64_t * local, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_Call *calls = calls_new(f);
    int rc = 0;

    if (!calls) {
        ADIOI_DDIO_Err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    for (int i = 0; i < f->nsrv; i++) {
        struct ddio_handle_req m = {.handle = f->srv[i].handle };
        if (skip && skip[i])
            continue;
        calls_target(f, calls, i);
        ddio_enc_handle_req(&calls[i].req, &m);
    }
    ADIOI_DDIO_Fanout(calls, f->nsrv, DDIO_T_STAT, f->timeout_ms);
    rc = calls_error(calls, f->nsrv, e);
    for (int i = 0; !rc && i < f->nsrv; i++) {
        struct ddio_u64_r r;
        if (skip && skip[i])
            continue;
        if (ddio_dec_u64_r(calls[i].reply, calls[i].reply_len, &r)) {
            ADIOI_DDIO_Err_set(e, EPROTO, "ddio server %s: malformed STAT reply",
                               f->srv[i].conn->name);
            rc = -1;
        } else
            local[i] = r.value;
    }
    ADIOI_DDIO_Calls_free(calls, f->nsrv);
    return rc;
}

int ADIOI_DDIO_File_size(ADIOI_DDIO_File * f, const char *skip, const uint64_t * known,
                         uint64_t * size, ADIOI_DDIO_Err * e)
{
    uint64_t *local = calloc(f->nsrv, sizeof(*local));
    int rc;

    *size = 0;
    if (!local) {
        ADIOI_DDIO_Err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    rc = stat_all(f, skip, local, e);
    for (int i = 0; !rc && i < f->nsrv; i++) {
        uint64_t ls = skip && skip[i] ? known[i] : local[i];
        uint64_t end = ddio_layout_logical_end(&f->stripe, (uint32_t) i, ls);
        if (end > *size)
            *size = end;
    }
    free(local);
    return rc;
}

/* SETSIZE on every server to its share of `size` (NULL grow: all servers;
 * else only where the share exceeds grow[i], i.e. extension only) */
int ADIOI_DDIO_Set_local_sizes(ADIOI_DDIO_File * f, uint64_t size, const uint64_t * grow,
                               ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_Call *calls = calls_new(f);
    int rc;

    if (!calls) {
        ADIOI_DDIO_Err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    for (int i = 0; i < f->nsrv; i++) {
        struct ddio_setsize m = {.handle = f->srv[i].handle,
            .local_size = ddio_layout_local_size(&f->stripe, (uint32_t) i, size)
        };
        if (grow && m.local_size <= grow[i])
            continue;
        calls_target(f, calls, i);
        ddio_enc_setsize(&calls[i].req, &m);
    }
    ADIOI_DDIO_Fanout(calls, f->nsrv, DDIO_T_SETSIZE, f->timeout_ms);
    rc = calls_error(calls, f->nsrv, e);
    ADIOI_DDIO_Calls_free(calls, f->nsrv);
    return rc;
}

static int prealloc(ADIOI_DDIO_File * f, uint64_t size, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_Call *calls = calls_new(f);
    uint64_t *local = calloc(f->nsrv, sizeof(*local));
    int rc;

    if (!calls || !local) {
        ADIOI_DDIO_Calls_free(calls, f->nsrv);
        free(local);
        ADIOI_DDIO_Err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    for (int i = 0; i < f->nsrv; i++) {
        struct ddio_prealloc m = {.handle = f->srv[i].handle,.local_off = 0,
            .local_len = ddio_layout_local_size(&f->stripe, (uint32_t) i, size)
        };
        if (m.local_len == 0)
            continue;
        calls_target(f, calls, i);
        ddio_enc_prealloc(&calls[i].req, &m);
    }
    ADIOI_DDIO_Fanout(calls, f->nsrv, DDIO_T_PREALLOC, f->timeout_ms);
    rc = calls_error(calls, f->nsrv, e);
    ADIOI_DDIO_Calls_free(calls, f->nsrv);
    /* MPI_File_preallocate also makes the file at least `size` long: a pure
     * extension of each server's share (never a shrink) */
    if (!rc)
        rc = stat_all(f, NULL, local, e);
    if (!rc)
        rc = ADIOI_DDIO_Set_local_sizes(f, size, local, e);
    free(local);
    return rc;
}

void ADIOI_DDIO_Fcntl(ADIO_File fd, int flag, ADIO_Fcntl_t * fcntl_struct, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_FCNTL";
    ADIOI_DDIO_File *f = fd->fs_ptr;
    ADIOI_DDIO_Err e;
    uint64_t size = 0;

    memset(&e, 0, sizeof(e));
    switch (flag) {
        case ADIO_FCNTL_GET_FSIZE:
            if (!ADIOI_DDIO_File_size(f, NULL, NULL, &size, &e))
                fcntl_struct->fsize = (ADIO_Offset) size;
            break;
        case ADIO_FCNTL_SET_DISKSPACE:
            if (fcntl_struct->diskspace > 0)
                prealloc(f, (uint64_t) fcntl_struct->diskspace, &e);
            break;
        case ADIO_FCNTL_SET_ATOMICITY:
            fd->atomicity = (fcntl_struct->atomicity == 0) ? 0 : 1;
            break;
        default:
            *error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname,
                                               __LINE__, MPI_ERR_ARG, "**flag", "**flag %d",
                                               flag);
            return;
    }
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}
