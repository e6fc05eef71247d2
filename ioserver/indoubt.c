/* Mirrored files a failed write may have left with different copies
 * (indoubt.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "indoubt.h"

#include <errno.h>
#include <stdio.h>

#include "ddio_net.h"
#include "marks.h"
#include "server.h"
#include "store.h"

#define DIR_NAME "indoubt"

/* of's writers, keep and mine (store.h), under one lock: a mark is made
 * and dropped with it held, so a drop never races a new writer's put */
static pthread_mutex_t doubt_mu = PTHREAD_MUTEX_INITIALIZER;

int indoubt_change(struct server *srv, struct ofile *of, atomic_int *changed, char *msg,
                   size_t n)
{
    if (!ddio_redundancy_kept(ddio_layout_redundancy(&of->layout)) || atomic_load(changed))
        return 0;
    pthread_mutex_lock(&doubt_mu);
    int rc = 0;
    if (!atomic_load(changed)) {
        if (of->doubt_writers == 0) {
            rc = marks_put(&srv->store, srv->member.ddiofd, DIR_NAME, of->path);
            /* a mark there already is a doubt of before: it stays */
            of->doubt_keep |= rc == 0;
        }
        if (rc >= 0) {
            of->doubt_writers++;
            atomic_store(changed, 1);
            rc = 0;
        }
    }
    pthread_mutex_unlock(&doubt_mu);
    if (rc)
        snprintf(msg, n, "marking %.300s in doubt: %s (the change is not made)", of->path,
                 ddio_errno_name(-rc));
    return rc;
}

void indoubt_closed(struct server *srv, struct ofile *of, int changed)
{
    if (!changed)
        return;
    pthread_mutex_lock(&doubt_mu);
    if (--of->doubt_writers == 0 && !of->doubt_keep)
        (void) marks_drop(srv->member.ddiofd, DIR_NAME, of->path);
    pthread_mutex_unlock(&doubt_mu);
}

void indoubt_dropped(struct server *srv, struct ofile *of, int changed)
{
    (void) srv;
    if (!changed)
        return;
    pthread_mutex_lock(&doubt_mu);
    of->doubt_writers--;
    of->doubt_keep = 1;
    pthread_mutex_unlock(&doubt_mu);
}

void indoubt_failed(struct server *srv, struct ofile *of)
{
    (void) srv;
    if (!ddio_redundancy_kept(ddio_layout_redundancy(&of->layout)))
        return;
    pthread_mutex_lock(&doubt_mu);
    of->doubt_keep = 1;
    pthread_mutex_unlock(&doubt_mu);
}

int indoubt_list(struct server *srv, char **paths, int max)
{
    return marks_list(srv->member.ddiofd, DIR_NAME, paths, max);
}

int indoubt_settle(struct server *srv, const char *norm)
{
    /* the open files of that path forget their doubt too (the settling
     * client has the file fenced: nobody else has it open) */
    struct ofile *of = store_find_open(&srv->store, norm);
    pthread_mutex_lock(&doubt_mu);
    int rc = marks_drop(srv->member.ddiofd, DIR_NAME, norm);
    if (of)
        of->doubt_keep = 0;
    pthread_mutex_unlock(&doubt_mu);
    if (of)
        store_release(&srv->store, of);
    return rc < 0 ? rc : 0;
}

uint64_t indoubt_count(struct server *srv)
{
    return (uint64_t)marks_count(srv->member.ddiofd, DIR_NAME);
}
