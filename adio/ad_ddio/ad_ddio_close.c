/* Close: CLOSE the file's handle on each of its servers. Independent (no
 * collectives): ROMIO's ADIO_Close runs delete-on-close and the barrier. */
#include "ad_ddio.h"
#include <stdlib.h>
#include <string.h>

/* Close every live handle of the file in parallel; a server whose connection
 * dropped has already released the handle. Returns the first error. */
static void close_handles(ADIOI_DDIO_File * f, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_Call *calls = calloc(f->nsrv, sizeof(*calls));
    ADIOI_DDIO_Err dead;

    for (int i = 0; i < f->nsrv; i++) {
        struct ddio_handle_req m = {.handle = f->srv[i].handle };
        ddio_wbuf_init(&calls[i].req);
        if (ADIOI_DDIO_Srv_check(&f->srv[i], &dead))
            continue;
        calls[i].conn = f->srv[i].conn;
        ddio_enc_handle_req(&calls[i].req, &m);
    }
    ADIOI_DDIO_Fanout(calls, f->nsrv, DDIO_T_CLOSE, f->timeout_ms);
    for (int i = 0; i < f->nsrv && e && !e->errnum; i++)
        if (calls[i].err.errnum)
            *e = calls[i].err;
    ADIOI_DDIO_Calls_free(calls, f->nsrv);
    free(f->srv);
    f->srv = NULL;
    f->nsrv = 0;
}

void ADIOI_DDIO_Close_handles(ADIOI_DDIO_File * f)
{
    close_handles(f, NULL);
}

void ADIOI_DDIO_Close(ADIO_File fd, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_CLOSE";
    ADIOI_DDIO_File *f = fd->fs_ptr;
    ADIOI_DDIO_Err e;

    memset(&e, 0, sizeof(e));
    ADIOI_DDIO_Async_close(fd, &e);
    if (f && f->srv)
        close_handles(f, e.errnum ? NULL : &e);
    ADIOI_DDIO_File_free(fd);
    *error_code = ADIOI_DDIO_Err_code(myname, &e);
}
