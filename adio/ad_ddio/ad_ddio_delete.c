/* Delete (MPI_File_delete, independent): there is no fd and so no hints;
 * the servers come from DDIO_SERVERS, a ddio mount's user.ddio.servers (a
 * plain path on the mount), DDIO_CONFIG, or the list last given by hint in
 * this process. DELETE goes to every server, since the stripe
 * count is stored with the file; ENOENT only if no server had it. A server
 * lost meanwhile is reconnected and asked again (DDIO_RECOVER_TIMEOUT);
 * one down and out of the membership is not asked (the others note the
 * delete for its resync). */
#include "ad_ddio.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int delete_on(char **list, int n, const char *path, int timeout_ms, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_Conn **conns = calloc(n, sizeof(*conns));
    int recover_ms = ddio_recover_ms(-1, timeout_ms);   /* no hints here: the environment's */

    if (!conns) {
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return -1;
    }
    ddio_members_dial(ADIOI_DDIO_Pool(ADIOI_DDIO_POOL_MAIN), list, n, timeout_ms, recover_ms,
                      conns, e);
    if (!e->errnum)
        ddio_delete(conns, n, path, timeout_ms, recover_ms, e);
    free(conns);
    return e->errnum ? -1 : 0;
}

void ADIOI_DDIO_Delete(const char *filename, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_DELETE";
    ADIOI_DDIO_Err e;
    char **list = NULL;
    int n = 0;

    char path[PATH_MAX], servers[ADIOI_DDIO_SERVERS_LEN];

    memset(&e, 0, sizeof(e));
    ADIOI_DDIO_Target(filename, path, sizeof(path), servers, sizeof(servers));
    if (ddio_server_list(ADIOI_DDIO_Servers_spec(NULL, servers), &list, &n, &e) == 0) {
        delete_on(list, n, path, ddio_timeout_ms(0), &e);
        ddio_free_list(list, n);
    }
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}
