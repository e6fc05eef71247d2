/* srv_client's cases: byte-range locks over the wire. */
#include "srv_harness.h"

/* ---- locks ---------------------------------------------------------------------------------- */

/* a fresh connection with a new file `name` created on it (64 KiB stripes) */
void test_locks(void)
{
    struct cl *a, *b;
    struct ddio_open_r ra, rb;
    open_pair("locked", &a, &b, &ra, &rb);
    /* a restarted server starts in its lock grace (restart-keeps-server-id
     * runs these cases again on one): wait it out first */
    CHECK(cl_lock(a, ra.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 1000, 1, 15000) == 0,
          "no lock after the grace");
    CHECK(cl_lock(a, ra.handle, DDIO_LK_UNLCK, 0, 1000, 1, 0) == 0, "unlock");
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
    cl_close(a);                   /* dropping a releases its locks, after the grace */
    usleep(200000);
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_WR, 0, 0, 0) == EAGAIN,
          "a lock granted during the grace after a holder dropped");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 0, 0, 15000) == 0,
          "locks not released on drop");
    cl_close(b);
    printf("ok   byte-range locks over the wire (conflict, timeout, split, release on drop "
           "after the grace)\n");
}

/* ---- the lock grace (--lock-grace; run-server-tests.sh runs these around a
 * SIGKILL and restart on the same root, with the same $SRV_REPLAY_ID) ---- */

static uint64_t lock_client(void)
{
    const char *s = getenv("SRV_REPLAY_ID");
    uint64_t id = s ? strtoull(s, NULL, 0) : 0;
    CHECK(id != 0, "SRV_REPLAY_ID (a non-zero client id) not set");
    return id;
}

/* a new connection with the file open (by a name both runs know) */
static struct cl *open_graced(struct ddio_open_r *r, int create)
{
    struct cl *c = cl_connect();
    struct ddio_layout_rec l;
    char p[128];
    snprintf(p, sizeof(p), "grace-%" PRIx64 "/graced", lock_client());
    layout_for(c, &l, 65536, 1);
    CHECK(cl_open(c, p, DDIO_O_RDWR | (create ? DDIO_O_CREAT : 0), &l, r) == 0, "open %s", p);
    return c;
}

/* the holder, on a new connection, takes its lock again: granted at once */
static struct cl *reclaim(void)
{
    struct ddio_open_r r;
    struct cl *a = open_graced(&r, 0);
    int64_t t0 = ddio_now_ms();
    CHECK(cl_lock_as(a, r.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 0, 100, 5000, DDIO_LK_RECLAIM,
                     lock_client()) == 0, "the reclaim refused");
    CHECK(ddio_now_ms() - t0 < 1000, "the reclaim waited %" PRId64 " ms", ddio_now_ms() - t0);
    return a;
}

/* a holder's connection drops: until it reclaims, nobody else gets a lock;
 * after, its range stays its own */
void test_lock_grace_before(void)
{
    struct ddio_open_r ra, rb;
    struct cl *a = open_graced(&ra, 1), *b = open_graced(&rb, 0);
    CHECK(cl_lock_as(a, ra.handle, DDIO_LK_SETLK, DDIO_LK_WR, 0, 100, 0, 0, lock_client()) == 0,
          "a WR lock");
    cl_close(a);
    usleep(200000);
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_WR, 0, 100, 0) == EAGAIN,
          "another process took the range between the holder's drop and its reclaim");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_WR, 200, 10, 0) == EAGAIN,
          "a lock granted during the grace");
    struct cl *a2 = reclaim();
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 0, 100, 300) == ETIMEDOUT,
          "the reclaimed range granted to another");
    cl_close(b);
    cl_close(a2);
    printf("ok   lock grace after a holder's drop: others wait, the holder reclaims\n");
}

/* after a restart (the locks of the first run held when the server was
 * killed): the same, from the table of answers that names the holder */
void test_lock_grace_after(void)
{
    struct ddio_open_r rb;
    struct cl *b = open_graced(&rb, 0);
    int64_t t0 = ddio_now_ms();
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLK, DDIO_LK_WR, 0, 100, 0) == EAGAIN,
          "another process took the range between the restart and the holder's reclaim");
    struct cl *a = reclaim();
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 0, 100, 300) == ETIMEDOUT,
          "the reclaimed range granted to another");
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 200, 10, 15000) == 0,
          "a free range not granted after the grace");
    int64_t waited = ddio_now_ms() - t0;
    cl_close(a);
    CHECK(cl_lock(b, rb.handle, DDIO_LK_SETLKW, DDIO_LK_WR, 0, 100, 15000) == 0,
          "the range not free after its holder dropped and the grace");
    cl_close(b);
    printf("ok   lock grace after a restart: others waited %" PRId64 " ms, the holder "
           "reclaimed at once\n", waited);
}

