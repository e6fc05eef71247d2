/* The driver's connection pools (client core, common/ddio_core.h).
 *
 * One TCP connection per server host:port serves every file this process has
 * open there (PROTOCOL.md: one conversation at a time per connection); the
 * progress thread of nonblocking I/O has a second pool of its own, so a
 * background transfer never shares a byte stream with a call of the main
 * thread. */
#include "ad_ddio.h"

static struct ddio_pool pools[2] = { DDIO_POOL_INIT, DDIO_POOL_INIT };

struct ddio_pool *ADIOI_DDIO_Pool(int pool)
{
    return &pools[pool];
}

int ADIOI_DDIO_Conn_get(const char *addr, int timeout_ms, int recover_ms,
                        ADIOI_DDIO_Conn ** out, ADIOI_DDIO_Err * e)
{
    return ddio_pool_get_recover(&pools[ADIOI_DDIO_POOL_MAIN], addr, timeout_ms, recover_ms,
                                 out, e);
}
