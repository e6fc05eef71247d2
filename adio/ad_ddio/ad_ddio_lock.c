/* SetLock: byte-range locks kept by the file's stripe server 0 (owned by our
 * connection, released by the server if it drops). ROMIO builds shared file
 * pointers (the hidden .shfp file, opened through this driver) and atomic
 * mode on them. MPICH 4.0's ROMIO calls SetLock from its function table;
 * ROMIO 3.2.1's lock macros call ADIOI_DDIO_Set_lock_hook instead
 * (ad_ddio_compat.h, scripts/build-ompi-romio.sh's add_lock_hook). */
#include "ad_ddio.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the client core keeps the locks held and takes them again after a
 * reconnect (ddio_fh_lock) */
int ADIOI_DDIO_Lock(ADIOI_DDIO_File * f, uint32_t cmd, uint32_t type, uint64_t start,
                    uint64_t len, ADIOI_DDIO_Err * e)
{
    return ddio_fh_lock(&f->fh, cmd, type, start, len, e);
}

static int is_blocking(int cmd)
{
#ifdef F_SETLKW64
    if (cmd == F_SETLKW64)
        return 1;
#endif
    return cmd == F_SETLKW;
}

int ADIOI_DDIO_SetLock(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                       ADIO_Offset len)
{
    static char myname[] = "ADIOI_DDIO_SETLOCK";
    ADIOI_DDIO_Err e;
    uint32_t dcmd, dtype;

    /* as ADIOI_GEN_SetLock: a zero-length request locks nothing */
    if (len == 0)
        return MPI_SUCCESS;
    memset(&e, 0, sizeof(e));
    if (whence != SEEK_SET || offset < 0 || len < 0) {
        ddio_err_set(&e, EINVAL, "ddio: lock range must be absolute (SEEK_SET)");
        return ADIOI_DDIO_Err_code(myname, &e);
    }
    dcmd = type == F_UNLCK ? DDIO_LK_UNLCK : is_blocking(cmd) ? DDIO_LK_SETLKW : DDIO_LK_SETLK;
    dtype = type == F_RDLCK ? DDIO_LK_RD : DDIO_LK_WR;
    /* a lock orders this process against others (the shared pointer file
     * is read and written under one): the client cache must not carry
     * writes or old reads across it */
    if (ADIOI_DDIO_Cache_flush(fd, 1, &e) == 0 &&
        ADIOI_DDIO_Lock(fd->fs_ptr, dcmd, dtype, (uint64_t) offset, (uint64_t) len, &e) == 0)
        return MPI_SUCCESS;
    /* ROMIO's callers (shared pointers, atomic mode) ignore the return value
     * and would go on without the lock; like ADIOI_GEN_SetLock, say why and
     * stop rather than silently break their guarantees */
    if (dcmd != DDIO_LK_SETLK) {
        fprintf(stderr, "ddio: file locking failed in %s (offset %lld, length %lld): %s\n",
                myname, (long long) offset, (long long) len, e.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return ADIOI_DDIO_Err_code(myname, &e);
}

#ifdef ADIOI_DDIO_LOCK_HOOK
/* ROMIO 3.2.1's ADIOI_WRITE_LOCK / _READ_LOCK / _UNLOCK (build-ompi-romio.sh's
 * add_lock_hook): a ddio file's lock is ours, any other file's fcntl(2) as before */
int ADIOI_DDIO_Set_lock_hook(ADIO_File fd, int cmd, int type, ADIO_Offset offset, int whence,
                             ADIO_Offset len)
{
    if (fd->file_system == ADIO_DDIO)
        return ADIOI_DDIO_SetLock(fd, cmd, type, offset, whence, len);
    return ADIOI_Set_lock(fd->fd_sys, cmd, type, offset, whence, len);
}
#endif
