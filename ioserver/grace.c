/* The lock grace (grace.h). Alone here: the reader (a dropped holder),
 * main (a restart) and the membership requests start it, the LOCK handler
 * reads it. */
#include "grace.h"

#include <stdatomic.h>

#include "ddio_log.h"
#include "ddio_net.h"

void srv_lock_grace(struct server *srv, const char *why)
{
    if (!srv->cfg.lock_grace_ms)
        return;
    int64_t until = ddio_now_ms() + srv->cfg.lock_grace_ms;
    int64_t was = atomic_load(&srv->lock_grace_until);
    while (was < until && !atomic_compare_exchange_weak(&srv->lock_grace_until, &was, until))
        ;
    DDIO_INFO("lock grace of %u ms (%s): only reclaimed locks are granted meanwhile",
              srv->cfg.lock_grace_ms, why);
}
