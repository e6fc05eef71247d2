/* Condition variables on CLOCK_MONOTONIC, waited on until a deadline in
 * ddio_now_ms() milliseconds (the server's one clock for deadlines). */
#ifndef DDIO_COND_H
#define DDIO_COND_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "ddio_net.h"

static inline void cond_init_mono(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
}

/* wait on cv (mu held) until woken or deadline_ms: 0, or ETIMEDOUT (also
 * at once when the deadline has passed) */
static inline int cond_wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, int64_t deadline_ms)
{
    if (ddio_now_ms() >= deadline_ms)
        return ETIMEDOUT;
    struct timespec ts = {.tv_sec = deadline_ms / 1000,
                          .tv_nsec = (deadline_ms % 1000) * 1000000};
    return pthread_cond_timedwait(cv, mu, &ts);
}

#endif
