/* Independent reads and writes: ReadContig, WriteContig, ReadStrided,
 * WriteStrided. A contiguous call goes through the client cache
 * (common/ddio_core_cache.c: write-behind, read-ahead, else one LEAF XFER);
 * a strided one flushes that cache and becomes one descriptor (the cached
 * file-view tree) and ONE XFER per server that may hold any of its bytes,
 * whatever the number of pieces; the transfer loop in the client core
 * (common/ddio_core_xfer.c) then moves the data. */
#include "ad_ddio.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- contiguous ------------------------------------------------------------------ */

static void contig_io(ADIO_File fd, uint32_t op, const void *buf, int count,
                      MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                      ADIO_Status * status, int *error_code, const char *myname)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    ADIOI_DDIO_Err e;
    MPI_Count size;
    uint64_t len, bytes = 0;

    ADIOI_DDIO_Err_clear(&e);   /* (not its whole message buffer: per call) */
    MPI_Type_size_x(datatype, &size);
    len = (uint64_t) size *(uint64_t) count;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;
    /* A file used with a shared file pointer (ROMIO opened its pointer
     * file) writes through: programs order write_shared/read_shared by
     * the pointer and a barrier alone (ROMIO's own shared_fp test does) */
    if (fd->shared_fp_fd && f->fh.cache.wb_max && !ADIOI_DDIO_Cache_flush(fd, 0, &e))
        f->fh.cache.wb_max = 0;
    /* through the client cache (ddio_core_cache.c): buffered, read ahead,
     * or one XFER per server involved */
    buf = ADIOI_DDIO_Contig_mem(fd, buf, datatype);     /* (its true lb) */
    if (op == DDIO_X_WRITE && !ddio_cache_pwrite(&f->fh.cache, &f->fh, (uint64_t) offset, buf,
                                                 len, &e))
        bytes = len;
    else if (op == DDIO_X_READ)
        ddio_cache_pread(&f->fh.cache, &f->fh, (uint64_t) offset, (void *) buf, len, &bytes, &e);
    if (!e.errnum) {
        fd->fp_sys_posn = offset + (ADIO_Offset) bytes;
        if (file_ptr_type == ADIO_INDIVIDUAL)
            fd->fp_ind += (ADIO_Offset) bytes;
        if (op == DDIO_X_WRITE && bytes)
            ADIOI_DDIO_Set_dirty(fd, 1);
#ifdef HAVE_STATUS_SET_BYTES
        MPIR_Status_set_bytes(status, datatype, (MPI_Count) bytes);
#endif
    } else
        fd->fp_sys_posn = -1;
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}

void ADIOI_DDIO_ReadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                           int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                           int *error_code)
{
    static char myname[] = "ADIOI_DDIO_READCONTIG";
    contig_io(fd, DDIO_X_READ, buf, count, datatype, file_ptr_type, offset, status,
              error_code, myname);
}

void ADIOI_DDIO_WriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code)
{
    static char myname[] = "ADIOI_DDIO_WRITECONTIG";
    contig_io(fd, DDIO_X_WRITE, buf, count, datatype, file_ptr_type, offset, status,
              error_code, myname);
}

/* ---- strided ------------------------------------------------------------------- */

/* atomic mode: the servers each run an XFER atomically, but not together, so
 * the whole byte range is locked (as ROMIO's generic strided code does) */
static int atomic_lock(ADIO_File fd, const struct ddio_desc *d, uint32_t cmd, uint32_t type,
                       ADIOI_DDIO_Err * e)
{
    int64_t first, end;
    if (!fd->atomicity)
        return 0;
    ddio_desc_bounds(d, &first, &end);
    if (end <= first)
        return 0;
    return ADIOI_DDIO_Lock(fd->fs_ptr, cmd, type, (uint64_t) first, (uint64_t) (end - first),
                           e);
}

static int strided_run(ADIO_File fd, uint32_t op, const struct ddio_desc *d,
                       const ADIOI_DDIO_Mem * mem, uint64_t * bytes, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_Err ue;
    int rc;

    memset(&ue, 0, sizeof(ue));
    uint32_t type = op == DDIO_X_WRITE ? DDIO_LK_WR : DDIO_LK_RD;
    if (ADIOI_DDIO_Cache_flush(fd, op == DDIO_X_WRITE, e))
        return -1;
    if (atomic_lock(fd, d, DDIO_LK_SETLKW, type, e))
        return -1;
    rc = ddio_xfer_one(&((ADIOI_DDIO_File *) fd->fs_ptr)->fh, op,
                       ADIOI_DDIO_Xfer_flags(fd->fs_ptr), d, mem, bytes, e);
    atomic_lock(fd, d, DDIO_LK_UNLCK, type, rc ? &ue : e);
    return e->errnum ? -1 : 0;
}

static void strided_io(ADIO_File fd, uint32_t op, const void *buf, int count,
                       MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                       ADIO_Status * status, int *error_code, const char *myname)
{
    ADIOI_DDIO_Err e;
    ADIOI_DDIO_Mem mem;
    struct ddio_desc d;
    MPI_Count size, ftsize;
    uint64_t len, bytes = 0;
    int owns = 0, rc;

    memset(&e, 0, sizeof(e));
    memset(&d, 0, sizeof(d));
    MPI_Type_size_x(datatype, &size);
    MPI_Type_size_x(fd->filetype, &ftsize);
    len = (uint64_t) size *(uint64_t) count;
    if (len == 0 || ftsize == 0)
        goto done;
    rc = ADIOI_DDIO_Mem_init(fd, &mem, buf, count, datatype, &e);
    if (!rc)
        rc = ADIOI_DDIO_File_desc(fd, file_ptr_type, offset, len, &d, &owns, &e);
    if (rc && !e.errnum)        /* (a failed descriptor check has explained itself) */
        ddio_err_set(&e, -rc, "ddio: cannot describe the request (%s)", strerror(-rc));
    else if (!rc && !ADIOI_DDIO_Check_desc(fd, file_ptr_type, offset, &d, &e) &&
             !strided_run(fd, op, &d, &mem, &bytes, &e))
        ADIOI_DDIO_Advance_fp(fd, file_ptr_type, &d, bytes);
    if (owns && d.root)
        ddio_node_free(d.root);
    ADIOI_DDIO_Mem_free(&mem);
    if (op == DDIO_X_WRITE && bytes)
        ADIOI_DDIO_Set_dirty(fd, 1);
  done:
    fd->fp_sys_posn = -1;       /* as ROMIO's strided paths do */
#ifdef HAVE_STATUS_SET_BYTES
    if (!e.errnum)
        MPIR_Status_set_bytes(status, datatype, (MPI_Count) bytes);
#endif
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}

void ADIOI_DDIO_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                            int *error_code)
{
    static char myname[] = "ADIOI_DDIO_READSTRIDED";
    strided_io(fd, DDIO_X_READ, buf, count, datatype, file_ptr_type, offset, status,
               error_code, myname);
}

void ADIOI_DDIO_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                             int *error_code)
{
    static char myname[] = "ADIOI_DDIO_WRITESTRIDED";
    strided_io(fd, DDIO_X_WRITE, buf, count, datatype, file_ptr_type, offset, status,
               error_code, myname);
}

/* ---- nonblocking (ad_ddio_async.c runs them) ------------------------------------ */

/* A request with nothing to move completes at once. Otherwise the pointer
 * moves by the whole request at the call, as ROMIO's nonblocking entries
 * do (a read stopping short at end of file does not move it back). */
static void icontig(ADIO_File fd, uint32_t op, const void *buf, int count,
                    MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                    ADIO_Request * request, int *error_code, const char *myname)
{
    ADIOI_DDIO_Iop iop;
    ADIOI_DDIO_Err e;
    MPI_Count size;
    uint64_t len;

    memset(&iop, 0, sizeof(iop));
    memset(&e, 0, sizeof(e));
    MPI_Type_size_x(datatype, &size);
    len = (uint64_t) size *(uint64_t) count;
    if (file_ptr_type == ADIO_INDIVIDUAL)
        offset = fd->fp_ind;
    if (len == 0) {
        MPIO_Completed_request_create(&fd, 0, error_code, request);
        return;
    }
    iop.op = op;
    iop.mem.buf = ADIOI_DDIO_Contig_mem(fd, buf, datatype);
    iop.mem.contig = 1;
    if (ADIOI_DDIO_Contig_desc(&iop.d, offset, len) ||
        !(iop.involved = ddio_xfer_involved(&((ADIOI_DDIO_File *) fd->fs_ptr)->fh, &iop.d))) {
        ddio_err_set(&e, ENOMEM, "ddio: out of memory");
        if (iop.d.root)
            ddio_node_free(iop.d.root);
        *request = MPI_REQUEST_NULL;
        *error_code = ADIOI_DDIO_Err_code(myname, &e);
        return;
    }
    if (file_ptr_type == ADIO_INDIVIDUAL)
        fd->fp_ind += (ADIO_Offset) len;
    fd->fp_sys_posn = -1;
    if (op == DDIO_X_WRITE)
        ADIOI_DDIO_Set_dirty(fd, 1);
    ADIOI_DDIO_Async_start(fd, &iop, request, error_code, myname);
}

void ADIOI_DDIO_IreadContig(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                            int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                            int *error_code)
{
    static char myname[] = "ADIOI_DDIO_IREADCONTIG";
    icontig(fd, DDIO_X_READ, buf, count, datatype, file_ptr_type, offset, request,
            error_code, myname);
}

void ADIOI_DDIO_IwriteContig(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code)
{
    static char myname[] = "ADIOI_DDIO_IWRITECONTIG";
    icontig(fd, DDIO_X_WRITE, buf, count, datatype, file_ptr_type, offset, request,
            error_code, myname);
}

/* the file view's descriptor and the memory tree; on return iop owns
 * both trees (or has none), also on failure */
static int istrided_describe(ADIO_File fd, ADIOI_DDIO_Iop * iop, const void *buf, int count,
                             MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                             uint64_t len, ADIOI_DDIO_Err * e)
{
    int owns = 0, rc;

    rc = ADIOI_DDIO_Mem_init(fd, &iop->mem, buf, count, datatype, e);
    if (!rc)
        rc = ADIOI_DDIO_File_desc(fd, file_ptr_type, offset, len, &iop->d, &owns, e);
    if (!owns)  /* the view's cached tree may change before the thread runs */
        iop->d.root = rc ? NULL : ddio_node_clone(iop->d.root);
    if (!rc && !iop->d.root)
        rc = -ENOMEM;
    if (rc && !e->errnum)
        ddio_err_set(e, -rc, "ddio: cannot describe the request (%s)", strerror(-rc));
    if (!rc && ADIOI_DDIO_Check_desc(fd, file_ptr_type, offset, &iop->d, e))
        rc = -1;
    if (!rc && !(iop->involved = ddio_xfer_involved(&((ADIOI_DDIO_File *) fd->fs_ptr)->fh, &iop->d))) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        rc = -1;
    }
    return rc;
}

/* Atomic mode keeps ROMIO's generic entries, which run the blocking
 * strided path (it locks the byte range) inside the call. */
static void istrided(ADIO_File fd, uint32_t op, const void *buf, int count,
                     MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                     ADIO_Request * request, int *error_code, const char *myname)
{
    ADIOI_DDIO_Iop iop;
    ADIOI_DDIO_Err e;
    MPI_Count size, ftsize;
    uint64_t len;

    memset(&iop, 0, sizeof(iop));
    memset(&e, 0, sizeof(e));
    MPI_Type_size_x(datatype, &size);
    MPI_Type_size_x(fd->filetype, &ftsize);
    len = (uint64_t) size *(uint64_t) count;
    if (len == 0 || ftsize == 0) {
        MPIO_Completed_request_create(&fd, 0, error_code, request);
        return;
    }
    iop.op = op;
    if (istrided_describe(fd, &iop, buf, count, datatype, file_ptr_type, offset, len, &e)) {
        if (iop.d.root)
            ddio_node_free(iop.d.root);
        ADIOI_DDIO_Mem_free(&iop.mem);
        *request = MPI_REQUEST_NULL;
        *error_code = ADIOI_DDIO_Err_code(myname, &e);
        return;
    }
    ADIOI_DDIO_Advance_fp(fd, file_ptr_type, &iop.d, len);
    fd->fp_sys_posn = -1;
    if (op == DDIO_X_WRITE)
        ADIOI_DDIO_Set_dirty(fd, 1);
    ADIOI_DDIO_Async_start(fd, &iop, request, error_code, myname);
}

void ADIOI_DDIO_IreadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                             int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                             int *error_code)
{
    static char myname[] = "ADIOI_DDIO_IREADSTRIDED";
    if (fd->atomicity)
        ADIOI_FAKE_IreadStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                                error_code);
    else
        istrided(fd, DDIO_X_READ, buf, count, datatype, file_ptr_type, offset, request,
                 error_code, myname);
}

void ADIOI_DDIO_IwriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                              int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                              int *error_code)
{
    static char myname[] = "ADIOI_DDIO_IWRITESTRIDED";
    if (fd->atomicity)
        ADIOI_FAKE_IwriteStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                                 error_code);
    else
        istrided(fd, DDIO_X_WRITE, buf, count, datatype, file_ptr_type, offset, request,
                 error_code, myname);
}
