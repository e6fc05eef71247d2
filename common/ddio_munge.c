/* MUNGE credentials through a run-time loaded libmunge (ddio_munge.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_munge.h"

#include <dlfcn.h>
#include <errno.h>
#include <munge.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    munge_ctx_t (*ctx_create)(void);
    void (*ctx_destroy)(munge_ctx_t);
    munge_err_t (*ctx_set)(munge_ctx_t, int, ...);
    munge_err_t (*ctx_get)(munge_ctx_t, int, ...);
    const char *(*ctx_strerror)(munge_ctx_t);
    munge_err_t (*encode)(char **, munge_ctx_t, const void *, int);
    munge_err_t (*decode)(const char *, munge_ctx_t, void **, int *, uid_t *, gid_t *);
    const char *(*strerror)(munge_err_t);
    int loaded;                   /* 1 loaded, -1 not found */
    char why[256];
} lm;
static pthread_once_t lm_once = PTHREAD_ONCE_INIT;

static void load_libmunge(void)
{
    void *h = dlopen("libmunge.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(lm.why, sizeof(lm.why), "cannot load libmunge.so.2 (%s); install MUNGE "
                 "(Debian: libmunge2)", dlerror());
        lm.loaded = -1;
        return;
    }
    *(void **)&lm.ctx_create = dlsym(h, "munge_ctx_create");
    *(void **)&lm.ctx_destroy = dlsym(h, "munge_ctx_destroy");
    *(void **)&lm.ctx_set = dlsym(h, "munge_ctx_set");
    *(void **)&lm.ctx_get = dlsym(h, "munge_ctx_get");
    *(void **)&lm.ctx_strerror = dlsym(h, "munge_ctx_strerror");
    *(void **)&lm.encode = dlsym(h, "munge_encode");
    *(void **)&lm.decode = dlsym(h, "munge_decode");
    *(void **)&lm.strerror = dlsym(h, "munge_strerror");
    if (!lm.ctx_create || !lm.ctx_destroy || !lm.ctx_set || !lm.ctx_get || !lm.ctx_strerror
        || !lm.encode || !lm.decode || !lm.strerror) {
        snprintf(lm.why, sizeof(lm.why), "libmunge.so.2 lacks a function ddio needs");
        lm.loaded = -1;
        return;
    }
    lm.loaded = 1;
}

static int have_libmunge(char *err, size_t errlen)
{
    pthread_once(&lm_once, load_libmunge);
    if (lm.loaded == 1)
        return 0;
    snprintf(err, errlen, "%s", lm.why);
    return -ENOSYS;
}

void ddio_munge_payload(enum ddio_munge_role role, const uint8_t id[DDIO_ID_LEN],
                        const uint8_t snonce[DDIO_NONCE_LEN],
                        const uint8_t cnonce[DDIO_NONCE_LEN],
                        uint8_t out[DDIO_MUNGE_PAYLOAD_LEN])
{
    memset(out, 0, 16);
    memcpy(out, "ddio-munge-v1", 13);
    out[16] = (uint8_t)role;
    memcpy(out + 17, id, DDIO_ID_LEN);
    memcpy(out + 17 + DDIO_ID_LEN, snonce, DDIO_NONCE_LEN);
    memcpy(out + 17 + DDIO_ID_LEN + DDIO_NONCE_LEN, cnonce, DDIO_NONCE_LEN);
}

/* libmunge loaded and a context on socket (NULL: libmunge's default), or
 * NULL with *rc (-ENOSYS: no libmunge, -EIO) and err set */
static munge_ctx_t new_ctx(const char *socket, int *rc, char *err, size_t errlen)
{
    if ((*rc = have_libmunge(err, errlen)) != 0)
        return NULL;
    *rc = -EIO;
    munge_ctx_t ctx = lm.ctx_create();
    if (!ctx) {
        snprintf(err, errlen, "munge: out of memory");
        return NULL;
    }
    if (socket && lm.ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
        snprintf(err, errlen, "munge: cannot use socket %s: %s", socket, lm.ctx_strerror(ctx));
        lm.ctx_destroy(ctx);
        return NULL;
    }
    *rc = 0;
    return ctx;
}

/* munged unreachable or broken: -EIO; a credential it refuses: -EACCES */
static int munge_errno(munge_err_t e)
{
    switch (e) {
    case EMUNGE_CRED_INVALID: case EMUNGE_CRED_EXPIRED: case EMUNGE_CRED_REWOUND:
    case EMUNGE_CRED_REPLAYED: case EMUNGE_CRED_UNAUTHORIZED: case EMUNGE_BAD_CRED:
    case EMUNGE_BAD_VERSION: case EMUNGE_BAD_CIPHER: case EMUNGE_BAD_MAC:
    case EMUNGE_BAD_ZIP: case EMUNGE_BAD_REALM: case EMUNGE_BAD_LENGTH:
        return -EACCES;
    default:
        return -EIO;
    }
}

int ddio_munge_encode(const char *socket, const void *data, size_t n, int ttl, long uid,
                      char **cred, char *err, size_t errlen)
{
    int rc;
    *cred = NULL;
    munge_ctx_t ctx = new_ctx(socket, &rc, err, errlen);
    if (!ctx)
        return rc;
    munge_err_t e = EMUNGE_SUCCESS;
    if (ttl > 0)
        e = lm.ctx_set(ctx, MUNGE_OPT_TTL, ttl);
    if (e == EMUNGE_SUCCESS && uid >= 0)
        e = lm.ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, (uid_t)uid);
    if (e == EMUNGE_SUCCESS)
        e = lm.encode(cred, ctx, data, (int)n);
    if (e != EMUNGE_SUCCESS) {
        snprintf(err, errlen, "munge: cannot make a credential (%s): %s",
                 socket ? socket : "munged's default socket", lm.ctx_strerror(ctx));
        rc = -EIO;
    }
    lm.ctx_destroy(ctx);
    return rc;
}

int ddio_munge_decode(const char *socket, const char *cred, void **data, size_t *n,
                      struct ddio_munge_id *id, char *err, size_t errlen)
{
    *data = NULL;
    *n = 0;
    memset(id, 0, sizeof(*id));
    int rc;
    munge_ctx_t ctx = new_ctx(socket, &rc, err, errlen);
    if (!ctx)
        return rc;
    int len = 0;
    uid_t uid = (uid_t)-1;
    gid_t gid = (gid_t)-1;
    munge_err_t e = lm.decode(cred, ctx, data, &len, &uid, &gid);
    if (e == EMUNGE_SUCCESS) {
        *n = (size_t)len;
        id->uid = (uint32_t)uid;
        id->gid = (uint32_t)gid;
        if (lm.ctx_get(ctx, MUNGE_OPT_ADDR4, &id->addr) != EMUNGE_SUCCESS)
            id->addr.s_addr = 0;
    } else {
        snprintf(err, errlen, "munge: %s", lm.ctx_strerror(ctx) ? lm.ctx_strerror(ctx)
                                                              : lm.strerror(e));
        rc = munge_errno(e);
        free(*data);
        *data = NULL;
    }
    lm.ctx_destroy(ctx);
    return rc;
}
