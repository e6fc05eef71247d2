/* Connecting to a server (ddio_dial.h): TCP, TLS, the handshake, and
 * backing off from a busy server. */
#include "ddio_dial.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddio_net.h"
#include "ddio_tls.h"

/* ---- the client's TLS setting ---------------------------------------------------------- */

static struct {
    pthread_mutex_t mu;
    int loaded;
    struct ddio_tls_ctx *ctx;
    char err[512];
} ctls = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void tls_load(void)
{
    char mode[64] = "", ca[1024] = "";
    const char *e = getenv("DDIO_TLS"), *c = getenv("DDIO_TLS_CA");
    if (e && *e)
        snprintf(mode, sizeof(mode), "%s", e);
    else
        ddio_config_value("tls", mode, sizeof(mode));
    if (c && *c)
        snprintf(ca, sizeof(ca), "%s", c);
    else
        ddio_config_value("tls_ca", ca, sizeof(ca));
    if (!*mode || !strcmp(mode, "off"))
        return;
    if (strcmp(mode, "on")) {
        snprintf(ctls.err, sizeof(ctls.err), "DDIO_TLS (or tls = in DDIO_CONFIG): '%s' is not "
                 "on or off", mode);
        return;
    }
    char why[400];
    ctls.ctx = ddio_tls_client_new(ca, why, sizeof(why));
    if (!ctls.ctx)
        snprintf(ctls.err, sizeof(ctls.err), "ddio: %s", why);
}

static struct ddio_tls_ctx *tls_ctx(char *err, size_t errlen, int *bad)
{
    pthread_mutex_lock(&ctls.mu);
    if (!ctls.loaded) {
        tls_load();
        ctls.loaded = 1;
    }
    *bad = ctls.err[0] != '\0';
    if (*bad)
        snprintf(err, errlen, "%s", ctls.err);
    struct ddio_tls_ctx *x = ctls.ctx;
    pthread_mutex_unlock(&ctls.mu);
    return x;
}

/* ---- dialling ------------------------------------------------------------------------------- */

void ddio_hangup(int fd)
{
    if (fd < 0)
        return;
    ddio_tls_drop(fd);
    close(fd);
}

/* How long to wait before try `k` (1, 2, ...) after a busy refusal: 20 ms
 * doubling to 1 s, each drawn from [half, whole] so that the ranks of a
 * job refused together do not come back together. */
static int64_t busy_backoff_ms(unsigned k, unsigned *seed)
{
    int64_t whole = k >= 6 ? 1000 : 20 << (k - 1);
    *seed = *seed * 1103515245u + 12345u;
    return whole / 2 + (int64_t)((*seed >> 8) % (uint32_t)(whole / 2 + 1));
}

static int connect_err(int fd, const char *addr, char *err, size_t errlen)
{
    if (fd == -ETIMEDOUT)
        snprintf(err, errlen, "ddio: cannot connect to server %s before the deadline", addr);
    else
        snprintf(err, errlen, "ddio: cannot connect to server %s: %s (%s)", addr,
                 strerror(-fd), ddio_errno_name(-fd));
    return fd;
}

/* TLS on a fresh connection; a server that answers in the clear refused
 * (busy, or no TLS there): its reason is the error */
static int secure(struct ddio_tls_ctx *x, int fd, const char *host, const char *addr,
                  int64_t deadline_ms, char *err, size_t errlen)
{
    char why[512];
    int rc = ddio_tls_connect(x, fd, host, deadline_ms, why, sizeof(why));
    if (rc == -ENOPROTOOPT)
        return ddio_read_refusal(fd, addr, deadline_ms, err, errlen);
    if (rc)
        snprintf(err, errlen, "ddio server %s: %s", addr, why);
    return rc;
}

int ddio_dial_secure(int fd, const char *host, const char *addr, int64_t deadline_ms, char *err,
                     size_t errlen)
{
    int bad;
    struct ddio_tls_ctx *tls = tls_ctx(err, errlen, &bad);
    if (bad)
        return -EINVAL;
    return tls ? secure(tls, fd, host, addr, deadline_ms, err, errlen) : 0;
}

int ddio_dial(const char *host, int port, const char *addr, const char *client_name,
              const struct ddio_secret *secret, int64_t deadline_ms, struct ddio_hello_r *hr,
              char *err, size_t errlen)
{
    int64_t t0 = ddio_now_ms();
    unsigned seed = (unsigned)getpid() * 2654435761u ^ (unsigned)t0;
    int bad;
    struct ddio_tls_ctx *tls = tls_ctx(err, errlen, &bad);
    if (bad)
        return -EINVAL;
    memset(&ddio_dial_stages, 0, sizeof(ddio_dial_stages));
    for (unsigned k = 1;; k++) {
        int64_t c0 = ddio_now_us();
        int fd = ddio_connect(host, port, deadline_ms);
        ddio_dial_stages.connect += ddio_now_us() - c0;
        if (fd < 0)
            return connect_err(fd, addr, err, errlen);
        int rc = tls ? secure(tls, fd, host, addr, deadline_ms, err, errlen) : 0;
        if (rc == 0)
            rc = ddio_handshake(fd, addr, client_name, secret, deadline_ms, hr, err, errlen);
        if (rc == 0)
            return fd;
        ddio_hangup(fd);
        int64_t wait = busy_backoff_ms(k, &seed);
        if (rc != -EBUSY || ddio_now_ms() + wait >= deadline_ms) {
            if (rc == -EBUSY && k > 1) {
                size_t l = strlen(err);
                snprintf(err + l, errlen - l, " (refused %u times over %.1f s)", k,
                         (double)(ddio_now_ms() - t0) / 1000.0);
            }
            return rc;
        }
        usleep((useconds_t)wait * 1000);
    }
}
