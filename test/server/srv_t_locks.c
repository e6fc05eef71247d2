/* srv_client's cases: byte-range locks over the wire. */
#include "srv_harness.h"

/* ---- locks ---------------------------------------------------------------------------------- */

/* a fresh connection with a new file `name` created on it (64 KiB stripes) */
void test_locks(void)
{
    struct cl *a, *b;
    struct ddio_open_r ra, rb;
    open_pair("locked", &a, &b, &ra, &rb);
    CHECK(cl_lock(a, ra.handle, DDIO_LK_SETLK, DDIO_LK_WR, 0, 100, 0) == 0, "a WR lock");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_RD, 50, 10, 0) == EAGAIN, "b conflict");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_WR, 100, 10, 0) == 0, "b adjacent");
    int64_t t0 = ddio_now_ms();
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 0, 10, 300) == ETIMEDOUT,
          "SETLKW timeout");
    CHECK(ddio_now_ms() - t0 >= 250, "SETLKW returned early");
    CHECK(cl_lock(a, ra.handle, DDIO_LK_UNLCK, 0, 0, 50, 0) == 0, "a unlock part");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_WR, 0, 50, 0) == 0, "b after split");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_WR, 50, 1, 0) == EAGAIN, "a keeps 50..100");
    cl_close(a);                   /* dropping a releases its locks */
    usleep(200000);
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 0, 0, 2000) == 0,
          "locks not released on drop");
    cl_close(b);
    printf("ok   byte-range locks over the wire (conflict, timeout, split, release on drop)\n");
}

