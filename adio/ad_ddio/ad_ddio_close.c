/* Close: CLOSE the file's handle on each of its servers. Independent (no
 * collectives): ROMIO's ADIO_Close runs delete-on-close and the barrier. */
#include "ad_ddio.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void ADIOI_DDIO_Close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_CLOSE";
    ADIOI_DDIO_File *f = fd->fs_ptr;
    ADIOI_DDIO_Err e;

    memset(&e, 0, sizeof(e));
    int64_t t[4] = { ddio_now_us() };
    ADIOI_DDIO_Async_close(fd, &e);
    t[1] = ddio_now_us();
    if (f && f->fh.srv)
        ddio_fh_close(&f->fh, e.errnum ? NULL : &e);
    t[2] = ddio_now_us();
    ADIOI_DDIO_File_free(fd);
    t[3] = ddio_now_us();
    if (ADIOI_DDIO_Timing_on())
        fprintf(stderr, "ddio-timing pid %d close async_ms %.2f close_ms %.2f free_ms %.2f\n",
                (int) getpid(), (t[1] - t[0]) / 1e3, (t[2] - t[1]) / 1e3, (t[3] - t[2]) / 1e3);
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}
