/* The membership from the driver (client core, common/ddio_core_member.h;
 * DESIGN.md 6.1): a server of a mirrored file lost for the whole recovery
 * time during a write is declared out by a majority, so the job goes on
 * without it; and epoch 1 is named at the first open of a mirrored file,
 * while every server answers (a member must be named before it can be
 * declared out). Members are the server list, in its order. */
#include "ad_ddio.h"
#include "ddio_core_member.h"

static int server_list(ADIOI_DDIO_File * f, char ***list, int *n, ADIOI_DDIO_Err * e)
{
    return ddio_server_list(ADIOI_DDIO_Servers_spec(f->servers_hint, f->mount_servers), list,
                            n, e);
}

int ADIOI_DDIO_Declare_out(void *arg, const struct ddio_conn *c, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_File *f = arg;
    char **list = NULL;
    int n = 0, who = -1, rc = server_list(f, &list, &n, e);
    struct ddio_members *m = rc ? NULL : calloc(1, sizeof(*m));
    for (int i = 0; m && i < n; i++)
        if (!strcmp(list[i], c->addr))
            who = i;
    if (!rc && (!m || who < 0)) {
        ddio_err_set(e, m ? EINVAL : ENOMEM, "ddio: server %s is not in the server list",
                     c->addr);
        rc = -1;
    }
    if (!rc)
        rc = ddio_members_set(ADIOI_DDIO_Pool(ADIOI_DDIO_POOL_MAIN), list, n,
                              f->fh.timeout_ms, who, DDIO_MEMBER_OUT, m, e);
    free(m);
    ddio_free_list(list, n);
    return rc;
}

void ADIOI_DDIO_Name_first(ADIOI_DDIO_File * f)
{
    char **list = NULL;
    int n = 0;
    ADIOI_DDIO_Err e;
    memset(&e, 0, sizeof(e));
    if (!ddio_fh_redundant(&f->fh) || server_list(f, &list, &n, &e))
        return;
    ddio_members_name_first(ADIOI_DDIO_Pool(ADIOI_DDIO_POOL_MAIN), list, n, f->fh.timeout_ms,
                            &f->fh);
    ddio_free_list(list, n);
}
