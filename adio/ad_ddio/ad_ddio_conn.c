/* The driver's side of the client core (common/ddio_core.h): errors as MPI
 * error codes, and the process's two connection pools.
 *
 * One TCP connection per server host:port serves every file this process has
 * open there (PROTOCOL.md: one conversation at a time per connection); the
 * progress thread of nonblocking I/O has a second pool of its own, so a
 * background transfer never shares a byte stream with a call of the main
 * thread. */
#include "ad_ddio.h"
#include <errno.h>
#include <string.h>

/* ---- errors --------------------------------------------------------------------- */

/* errno -> MPI error class, as ADIOI_Err_create_code does, but keeping the
 * server's message (which names the server and the cause) in the string */
static int err_class(int errnum)
{
    switch (errnum) {
        case ENOENT:
            return MPI_ERR_NO_SUCH_FILE;
        case EEXIST:
            return MPI_ERR_FILE_EXISTS;
        case EACCES:
        case EPERM:
            return MPI_ERR_ACCESS;
        case ENOSPC:
            return MPI_ERR_NO_SPACE;
        case EDQUOT:
            return MPI_ERR_QUOTA;
        case EROFS:
            return MPI_ERR_READ_ONLY;
        case ENAMETOOLONG:
        case EISDIR:
        case ENOTDIR:
        case ELOOP:
            return MPI_ERR_BAD_FILE;
        case EINVAL:
            return MPI_ERR_ARG;
        case ADIOI_DDIO_EINTERN:
            return MPI_ERR_INTERN;
        default:
            return MPI_ERR_IO;
    }
}

int ADIOI_DDIO_Err_code(const char *myname, const ADIOI_DDIO_Err * e)
{
    if (!e->errnum)
        return MPI_SUCCESS;
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                err_class(e->errnum), "**io", "**io %s", e->msg);
}

/* ---- connection pools ------------------------------------------------------------ */

static struct ddio_pool pools[2] = { DDIO_POOL_INIT, DDIO_POOL_INIT };

struct ddio_pool *ADIOI_DDIO_Pool(int pool)
{
    return &pools[pool];
}

int ADIOI_DDIO_Conn_get(const char *addr, int timeout_ms, ADIOI_DDIO_Conn ** out,
                        ADIOI_DDIO_Err * e)
{
    return ddio_pool_get(&pools[ADIOI_DDIO_POOL_MAIN], addr, timeout_ms, out, e);
}
