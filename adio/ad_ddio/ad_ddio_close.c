/* Close: CLOSE the file's handle on each of its servers. Independent (no
 * collectives): ROMIO's ADIO_Close runs delete-on-close and the barrier. */
#include "ad_ddio.h"
#include <string.h>

void ADIOI_DDIO_Close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_CLOSE";
    ADIOI_DDIO_File *f = fd->fs_ptr;
    ADIOI_DDIO_Err e;

    memset(&e, 0, sizeof(e));
    ADIOI_DDIO_Async_close(fd, &e);
    if (f && f->fh.srv)
        ddio_fh_close(&f->fh, e.errnum ? NULL : &e);
    ADIOI_DDIO_File_free(fd);
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}
