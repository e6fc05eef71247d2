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

int missed_note(struct server *srv, const char *norm, char *msg, size_t msglen)
{
    uint32_t out[DDIO_MAX_SERVERS];
    int n = member_out_list(&srv->member, out), rc = 0;
    for (int i = 0; i < n && rc >= 0; i++) {
        char dir[32];
        dir_of(out[i], dir, sizeof(dir));
        rc = marks_put(&srv->store, srv->member.ddiofd, dir, norm);
    }
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
