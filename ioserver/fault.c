/* Fault points (see fault.h). */
#include "fault.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_log.h"

static const char *const names[FAULT_NPOINTS] = {
    [FAULT_OPEN] = "open",             [FAULT_SYNC] = "sync",
    [FAULT_COLL_READ] = "coll-read",   [FAULT_COLL_WRITE] = "coll-write",
    [FAULT_INDEP_READ] = "indep-read", [FAULT_INDEP_WRITE] = "indep-write",
};

static int armed = -1;            /* enum fault_point, -1 = none */
static unsigned long target;      /* fire at this hit */
static int sig = SIGKILL;
static atomic_ulong hits;

int fault_arm(const char *spec, char *err, size_t errlen)
{
    char buf[64];
    if (strlen(spec) >= sizeof(buf))
        goto bad;
    strcpy(buf, spec);
    char *n = strchr(buf, ':');
    if (!n)
        goto bad;
    *n++ = '\0';
    char *act = strchr(n, ':');
    if (act)
        *act++ = '\0';
    int p = -1;
    for (int i = 0; i < FAULT_NPOINTS; i++)
        if (strcmp(buf, names[i]) == 0)
            p = i;
    char *end;
    errno = 0;
    unsigned long v = strtoul(n, &end, 10);
    if (p < 0 || errno || end == n || *end || v == 0 || *n == '-')
        goto bad;
    if (act && strcmp(act, "kill") != 0 && strcmp(act, "stop") != 0)
        goto bad;
    sig = (act && strcmp(act, "stop") == 0) ? SIGSTOP : SIGKILL;
    armed = p;
    target = v;
    return 0;
bad:
    snprintf(err, errlen, "--fault: expected POINT:N[:kill|stop] with POINT one of open, sync, "
             "coll-read, coll-write, indep-read, indep-write and N >= 1, got '%s'", spec);
    return -1;
}

void fault_hit(enum fault_point p)
{
    if ((int)p != armed)
        return;
    if (atomic_fetch_add(&hits, 1) + 1 != target)
        return;
    DDIO_WARN("fault point %s:%lu reached: %s", names[p], target,
              sig == SIGKILL ? "SIGKILL" : "SIGSTOP");
    raise(sig);
}
