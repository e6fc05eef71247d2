/* The survivors' log of what an out member missed (missed.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "missed.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ddio_log.h"
#include "ddio_net.h"
#include "changed.h"
#include "marks.h"
#include "store_roots.h"

static void dir_of(uint32_t member, char *out, size_t n)
{
    snprintf(out, n, "missed/%u", member);
}

int missed_init(struct server *srv, char *err, size_t errlen)
{
    char dir[4200];
    store_state_path(&srv->store, ".", dir, sizeof(dir));
    srv->member.ddiofd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (srv->member.ddiofd < 0 || (mkdirat(srv->member.ddiofd, "missed", 0700)
                                   && errno != EEXIST)) {
        snprintf(err, errlen, "%s/missed: %s", dir, strerror(errno));
        return -EIO;
    }
    uint64_t n = missed_count(srv);
    if (n)
        DDIO_INFO("%llu file(s) noted for members that were out: `ddio member in` resyncs "
                  "them", (unsigned long long)n);
    return 0;
}

void missed_fini(struct server *srv)
{
    if (srv->member.ddiofd >= 0)
        close(srv->member.ddiofd);
    srv->member.ddiofd = -1;
}

#define FREEZE_MS 30000         /* a resync cut off does not stall writers longer */
#define FREEZE_WAIT_MS 5000     /* for the notes being made */

/* (m->fmu held) one of the n members in out[] is frozen */
static int frozen_for(struct member *m, const uint32_t *out, int n)
{
    if (!m->frozen || ddio_now_ms() >= m->frozen_until)
        return 0;
    for (int i = 0; i < n; i++)
        if (out[i] == m->frozen - 1)
            return 1;
    return 0;
}

int missed_freeze(struct server *srv, uint32_t member, char *msg, size_t msglen)
{
    struct member *m = &srv->member;
    int64_t give_up = ddio_now_ms() + FREEZE_WAIT_MS;
    pthread_mutex_lock(&m->fmu);
    m->frozen = member + 1;
    m->frozen_until = ddio_now_ms() + FREEZE_MS;
    while (m->noting > 0 && ddio_now_ms() < give_up) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 50 * 1000000L;
        if (ts.tv_nsec >= 1000000000L)
            ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&m->fcv, &m->fmu, &ts);
    }
    int busy = m->noting > 0;
    if (busy)
        m->frozen = 0;
    pthread_mutex_unlock(&m->fmu);
    if (busy)
        snprintf(msg, msglen, "notes for member %u still being made after %d ms", member,
                 FREEZE_WAIT_MS);
    return busy ? -EBUSY : 0;
}

void missed_thaw(struct server *srv, uint32_t member)
{
    pthread_mutex_lock(&srv->member.fmu);
    if (srv->member.frozen == member + 1)
        srv->member.frozen = 0;
    pthread_mutex_unlock(&srv->member.fmu);
}

int missed_note(struct server *srv, const char *norm, char *msg, size_t msglen)
{
    uint32_t out[DDIO_MAX_SERVERS];
    struct member *m = &srv->member;
    int n = member_out_list(m, out), rc = 0;
    if (n == 0)
        return 0;
    pthread_mutex_lock(&m->fmu);
    int frozen = frozen_for(m, out, n);
    m->noting += !frozen;
    pthread_mutex_unlock(&m->fmu);
    if (frozen) {
        snprintf(msg, msglen, "a member out is being declared in (ddio member in): a change of "
                 "%.300s is refused for a moment; send again", norm);
        return -DDIO_E_EPOCH;
    }
    for (int i = 0; i < n && rc >= 0; i++) {
        char dir[32];
        dir_of(out[i], dir, sizeof(dir));
        rc = marks_put(&srv->store, srv->member.ddiofd, dir, norm);
    }
    pthread_mutex_lock(&m->fmu);
    if (--m->noting == 0)
        pthread_cond_broadcast(&m->fcv);
    pthread_mutex_unlock(&m->fmu);
    if (rc < 0)
        snprintf(msg, msglen, "noting %.300s for a member that is out: %s (the change is "
                 "not made)", norm, ddio_errno_name(-rc));
    return rc < 0 ? rc : 0;
}

int missed_list(struct server *srv, uint32_t member, char **paths, int max)
{
    char dir[32];
    if ((int)member == member_self_index(&srv->member))
        return changed_list(srv, paths, max);
    dir_of(member, dir, sizeof(dir));
    return marks_list(srv->member.ddiofd, dir, paths, max);
}

int missed_clear(struct server *srv, uint32_t member, const char *norm)
{
    char dir[32];
    if ((int)member == member_self_index(&srv->member))
        return changed_clear(srv, norm);
    dir_of(member, dir, sizeof(dir));
    int rc = marks_drop(srv->member.ddiofd, dir, norm);
    return rc < 0 ? rc : 0;
}

uint64_t missed_count(struct server *srv)
{
    uint64_t n = 0;
    pthread_mutex_lock(&srv->member.mu);
    uint32_t members = srv->member.st.val.n;
    pthread_mutex_unlock(&srv->member.mu);
    for (uint32_t i = 0; i < members; i++) {
        char dir[32];
        dir_of(i, dir, sizeof(dir));
        n += (uint64_t)marks_count(srv->member.ddiofd, dir);
    }
    return n;
}
