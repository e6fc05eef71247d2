/* Fault points (see fault.h). */
#include "fault.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddio_log.h"

static const char *const names[FAULT_NPOINTS] = {
    [FAULT_OPEN] = "open",             [FAULT_SYNC] = "sync",
    [FAULT_COLL_READ] = "coll-read",   [FAULT_COLL_WRITE] = "coll-write",
    [FAULT_INDEP_READ] = "indep-read", [FAULT_INDEP_WRITE] = "indep-write",
    [FAULT_DIRECT_SEND] = "direct-send", [FAULT_CLOSE] = "close",
    [FAULT_DONE] = "done",             [FAULT_CREATED] = "created",
    [FAULT_CREATE_HALF] = "create-half",
    [FAULT_SUMS] = "sums",
    [FAULT_FOLD] = "fold",
    [FAULT_LET_GO] = "let-go",
};
#define CUTS_LOGGED 2              /* of each kind (header, payload) */
#define DONE_KILL_DELAY_NS 200000000L  /* done:N:kill: the answer has left by then */

static int armed = -1;            /* enum fault_point, -1 = none */
static unsigned long target;      /* fire at this hit */
static int sig = SIGKILL;           /* 0: short (fault_cut) or drop (fault_drop) */
static int crash;                 /* done:N:crash: killed in place of the send */
static int pause_s;               /* let-go:N:pause: seconds slept */
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
    int is_short = act && strcmp(act, "short") == 0;
    int is_drop = act && strcmp(act, "drop") == 0;
    int is_crash = act && strcmp(act, "crash") == 0;
    int is_pause = act && strcmp(act, "pause") == 0;
    if (act && strcmp(act, "kill") != 0 && strcmp(act, "stop") != 0 && !is_short && !is_drop
        && !is_crash && !is_pause)
        goto bad;
    if (is_pause != (p == FAULT_LET_GO))
        goto bad;
    /* done: drop, crash, or kill after the answer left (not stop, not the default) */
    if ((is_short && p != FAULT_DIRECT_SEND) || ((is_drop || is_crash) && p != FAULT_DONE) ||
        (p == FAULT_DONE && !is_drop && !is_crash && !(act && strcmp(act, "kill") == 0)))
        goto bad;
    crash = is_crash;
    pause_s = is_pause ? 2 : 0;
    sig = is_short || is_drop || is_pause ? 0
        : (act && strcmp(act, "stop") == 0) ? SIGSTOP : SIGKILL;
    armed = p;
    target = v;
    return 0;
bad:
    snprintf(err, errlen, "--fault: expected POINT:N[:kill|stop|short|drop|crash|pause] with "
             "POINT one of open, sync, coll-read, coll-write, indep-read, indep-write, "
             "direct-send, close, done, created, create-half, sums, fold, let-go, N >= 1, "
             "short only for direct-send, done only with drop, crash or kill, let-go only "
             "with pause, got '%s'", spec);
    return -1;
}

void fault_hit(enum fault_point p)
{
    if ((int)p != armed || !sig || crash)
        return;
    if (atomic_fetch_add(&hits, 1) + 1 != target)
        return;
    DDIO_WARN("fault point %s:%lu reached: %s", names[p], target,
              sig == SIGKILL ? "SIGKILL" : "SIGSTOP");
    if (p == FAULT_DONE) {        /* after the answer: let the writer send it */
        struct timespec ts = {0, DONE_KILL_DELAY_NS};
        nanosleep(&ts, NULL);
    }
    raise(sig);
}

void fault_crash(enum fault_point p)
{
    if ((int)p != armed || !crash || atomic_fetch_add(&hits, 1) + 1 != target)
        return;
    DDIO_WARN("fault point %s:%lu reached: SIGKILL in place of the send", names[p], target);
    raise(SIGKILL);
}

void fault_pause(enum fault_point p)
{
    if ((int)p != armed || !pause_s || atomic_fetch_add(&hits, 1) + 1 < target)
        return;
    struct timespec ts = {pause_s, 0};
    nanosleep(&ts, NULL);
}

int fault_drop(enum fault_point p)
{
    if ((int)p != armed || sig || atomic_fetch_add(&hits, 1) + 1 != target)
        return 0;
    DDIO_WARN("fault point %s:%lu reached: connection closed instead", names[p], target);
    return 1;
}

size_t fault_cut(enum fault_point p, size_t hlen, size_t plen)
{
    static atomic_uint logged[2];
    if ((int)p != armed || hlen == 0)
        return hlen + plen;
    if (sig) {
        fault_hit(p);
        return hlen + plen;
    }
    unsigned long n = atomic_fetch_add(&hits, 1) + 1;
    if (n < target)
        return hlen + plen;
    /* odd passes cut the header, even ones the payload (if any); the
     * offsets walk through each so many different splits are taken */
    int in_payload = (n % 2 == 0) && plen > 0;
    size_t cut = in_payload ? hlen + (n / 2) % plen : (n / 2) % hlen;
    if (atomic_fetch_add(&logged[in_payload], 1) < CUTS_LOGGED)
        DDIO_WARN("fault point direct-send:%lu: sent %zu of %zu bytes, cut in the %s",
                  target, cut, hlen + plen, in_payload ? "payload" : "header");
    return cut;
}
