/* Errors: a failure as an MPI error code (only at the table entries), and
 * one rank's outcome made every rank's. */
#include "ad_ddio.h"
#include <errno.h>

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
        case EOPNOTSUPP:
            return MPI_ERR_UNSUPPORTED_OPERATION;
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
    ADIOI_DDIO_Say_err(myname, e->errnum, e->msg);
    return MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, myname, __LINE__,
                                err_class(e->errnum), "**io", "**io %s", e->msg);
}

void ADIOI_DDIO_Bcast_err(ADIO_File fd, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_Nap_bcast(e, sizeof(*e), MPI_BYTE, 0, fd->comm);
}

void ADIOI_DDIO_Adopt_err(ADIO_File fd, ADIOI_DDIO_Err * e, int who)
{
    ADIOI_DDIO_Err first = *e;
    ADIOI_DDIO_Nap_bcast(&first, sizeof(first), MPI_BYTE, who, fd->comm);
    if (!e->errnum)
        ddio_err_set(e, first.errnum, "ddio: failed on rank %d: %s", who, first.msg);
}

int ADIOI_DDIO_Agree_err(ADIO_File fd, ADIOI_DDIO_Err * e)
{
    int rank, in[2], out[2];

    MPI_Comm_rank(fd->comm, &rank);
    in[0] = e->errnum != 0;
    in[1] = rank;
    ADIOI_DDIO_Nap_allreduce(in, out, 1, MPI_2INT, MPI_MAXLOC, fd->comm);
    if (!out[0])
        return 0;
    ADIOI_DDIO_Adopt_err(fd, e, out[1]);
    return 1;
}
