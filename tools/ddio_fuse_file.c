/* The mount's open files and their deferred opens (ddio_fuse_file.h). The
 * deferred ones are in one list under one mutex, which is never held over
 * a server's round trip: mfile_make_under takes references, lets go of the
 * list and then opens each file under its own mutex. A deferred open leaves
 * the list (its path freed) only under both mutexes, its own first: so its
 * path may be read under either. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ddio_fuse_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t list_mu = PTHREAD_MUTEX_INITIALIZER;
static struct mfile *deferred;

static struct mfile *mfile_alloc(void)
{
    struct mfile *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    pthread_mutex_init(&m->mu, NULL);
    m->refs = 1;
    return m;
}

struct mfile *mfile_new(struct ddio_cfile *f)
{
    struct mfile *m = mfile_alloc();
    if (m)
        m->f = f;
    return m;
}

struct mfile *mfile_deferred(const char *path, int flags)
{
    struct mfile *m = mfile_alloc();
    if (!m)
        return NULL;
    if (!(m->path = strdup(path))) {
        free(m);
        return NULL;
    }
    m->flags = flags;
    pthread_mutex_lock(&list_mu);
    m->next = deferred;
    if (deferred)
        deferred->prev = m;
    deferred = m;
    pthread_mutex_unlock(&list_mu);
    return m;
}

/* m out of the list of deferred opens (list_mu held); idempotent */
static void unlist(struct mfile *m)
{
    if (!m->path)
        return;
    if (m->prev)
        m->prev->next = m->next;
    else if (deferred == m)
        deferred = m->next;
    if (m->next)
        m->next->prev = m->prev;
    m->prev = m->next = NULL;
    free(m->path);
    m->path = NULL;
}

static void unref(struct mfile *m)
{
    pthread_mutex_lock(&list_mu);
    int last = --m->refs == 0;
    pthread_mutex_unlock(&list_mu);
    if (!last)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

int mfile_get(struct mfile *m, struct ddio_client *cl, struct ddio_cfile **f, char *msg,
              size_t msglen)
{
    int rc = 0;
    pthread_mutex_lock(&m->mu);
    if (!m->f && !m->released) {
        rc = ddio_client_open(cl, m->path, m->flags, &m->f, msg, msglen);
        if (rc == -ENOENT)
            rc = -ESTALE;       /* gone since its open: the NFS answer */
        if (rc == 0) {
            pthread_mutex_lock(&list_mu);
            unlist(m);
            pthread_mutex_unlock(&list_mu);
        }
    } else if (!m->f) {
        rc = -EBADF;
        snprintf(msg, msglen, "closed");
    }
    *f = m->f;
    pthread_mutex_unlock(&m->mu);
    return rc;
}

struct ddio_cfile *mfile_opened(struct mfile *m)
{
    pthread_mutex_lock(&m->mu);
    struct ddio_cfile *f = m->f;
    pthread_mutex_unlock(&m->mu);
    return f;
}

static int under(const char *p, const char *path, size_t n)
{
    return !strncmp(p, path, n) && (p[n] == 0 || p[n] == '/' || (n == 1 && path[0] == '/'));
}

void mfile_make_under(const char *path, struct ddio_client *cl)
{
    size_t n = strlen(path), k = 0, cap = 0;
    struct mfile **v = NULL;
    pthread_mutex_lock(&list_mu);
    for (struct mfile *m = deferred; m; m = m->next) {
        if (!under(m->path, path, n))
            continue;
        if (k == cap) {
            struct mfile **nv = realloc(v, (cap = cap ? 2 * cap : 8) * sizeof(*v));
            if (!nv)
                break;
            v = nv;
        }
        m->refs++;
        v[k++] = m;
    }
    pthread_mutex_unlock(&list_mu);
    for (size_t i = 0; i < k; i++) {
        char msg[DDIO_CLIENT_MSG_LEN];
        struct ddio_cfile *f;
        /* a failure shows at the handle's next use, as it would have */
        mfile_get(v[i], cl, &f, msg, sizeof(msg));
        unref(v[i]);
    }
    free(v);
}

void mfile_release(struct mfile *m)
{
    pthread_mutex_lock(&m->mu);
    pthread_mutex_lock(&list_mu);
    unlist(m);
    pthread_mutex_unlock(&list_mu);
    m->released = 1;
    struct ddio_cfile *f = m->f;
    m->f = NULL;
    pthread_mutex_unlock(&m->mu);
    if (f)
        ddio_client_close(f);
    unref(m);
}
