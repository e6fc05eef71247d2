/* The driver's per-file state (fd->fs_ptr): made by the first SetInfo or
 * Open, whichever ROMIO calls first, and freed at Close or a failed open. */
#include "ad_ddio.h"
#include <stdlib.h>

ADIOI_DDIO_File *ADIOI_DDIO_File_get(ADIO_File fd)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    if (!f) {
        f = ADIOI_Calloc(1, sizeof(*f));
        f->collective = ADIOI_DDIO_COLL_DDIO;
        f->presort = ADIOI_HINT_ENABLE;
        f->check_desc = ADIOI_HINT_DISABLE;
        f->type_desc = ADIOI_HINT_ENABLE;
        f->write_behind = f->read_ahead = -1;
        f->transport = -1;
        fd->fs_ptr = f;
    }
    return f;
}

void ADIOI_DDIO_File_free(ADIO_File fd)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    if (!f)
        return;
    ADIOI_DDIO_View_free(&f->view);
    ddio_fh_free(&f->fh);
    free(f->servers_hint);
    free(f->mount_servers);
    free(f->secret_hint);
    ADIOI_Free(f);
    fd->fs_ptr = NULL;
}
