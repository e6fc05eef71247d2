/* The membership record and its acceptor (member.h; PROTOCOL.md "MEMBER").
 * Each epoch's value is decided by single-decree Paxos among the
 * deployment's servers, driven by a client (common/ddio_core_member.c):
 * a value chosen by a majority can never be replaced by another for the
 * same epoch, whatever the order of proposers, crashes and partitions. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "member.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddio_layout.h"
#include "ddio_log.h"

#define MEMBER_FILE_MAX (64u << 10)

static int self_index(const struct member *m, const struct ddio_member_val *v)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (!memcmp(v->ids[i], m->self, DDIO_ID_LEN))
            return (int)i;
    return -1;
}

static void adopt_out(struct member *m)
{
    int i = self_index(m, &m->st.val), n = 0;
    for (uint32_t j = 0; j < m->st.val.n; j++)
        n += m->st.val.out[j] != 0;
    atomic_store(&m->out, i >= 0 && m->st.val.out[i]);
    atomic_store(&m->nout, n);
    atomic_store(&m->epoch, m->st.epoch);
}

int member_out_list(struct member *m, uint32_t *out)
{
    int k = 0;
    if (atomic_load(&m->nout) == 0)
        return 0;
    pthread_mutex_lock(&m->mu);
    int self = self_index(m, &m->st.val);
    for (uint32_t j = 0; j < m->st.val.n; j++)
        if (m->st.val.out[j] && (int)j != self)
            out[k++] = j;
    pthread_mutex_unlock(&m->mu);
    return k;
}

int member_load(struct member *m, const char *path, const uint8_t self[DDIO_ID_LEN],
                char *err, size_t n)
{
    pthread_mutex_init(&m->mu, NULL);
    pthread_mutex_init(&m->fmu, NULL);
    pthread_cond_init(&m->fcv, NULL);
    m->noting = 0;
    m->frozen = 0;
    memset(&m->st, 0, sizeof(m->st));
    m->ddiofd = -1;
    memcpy(m->self, self, DDIO_ID_LEN);
    snprintf(m->path, sizeof(m->path), "%s", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        adopt_out(m);
        return 0;
    }
    uint8_t *b = calloc(1, MEMBER_FILE_MAX + 8);
    ssize_t got = fd >= 0 && b ? read(fd, b, MEMBER_FILE_MAX) : -1;
    int rc = got < 0 ? -errno : ddio_dec_member_r(b, (size_t)got, &m->st);
    /* a record saved before replies had their last word (`sealed`, 0) */
    if (rc == -EPROTO && got >= 0)
        rc = ddio_dec_member_r(b, (size_t)got + 8, &m->st);
    if (fd >= 0)
        close(fd);
    free(b);
    if (rc) {
        snprintf(err, n, "membership record %s: %s", path, strerror(-rc));
        return -1;
    }
    adopt_out(m);
    DDIO_INFO("membership epoch %u%s", m->st.epoch, atomic_load(&m->out) ? ": this server "
              "is out (it serves mirrored files again once resynced and declared in)" : "");
    return 0;
}

/* st made durable: written beside, fsynced, renamed over, directory
 * fsynced; an answer that depends on st is sent only after this */
static int member_save(struct member *m, const struct ddio_member_r *st)
{
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    ddio_enc_member_r(&w, st);
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.new", m->path);
    int rc = w.err;
    int fd = rc ? -1 : open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (!rc && fd < 0)
        rc = -errno;
    if (!rc && (write(fd, w.p, w.len) != (ssize_t)w.len || fdatasync(fd)))
        rc = -EIO;
    if (fd >= 0)
        close(fd);
    if (!rc && rename(tmp, m->path))
        rc = -errno;
    ddio_wbuf_free(&w);
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", m->path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    int dfd = rc || !slash ? -1 : open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        if (fsync(dfd))
            rc = -EIO;
        close(dfd);
    }
    return rc;
}

int member_self_index(struct member *m)
{
    pthread_mutex_lock(&m->mu);
    int i = self_index(m, &m->st.val);
    pthread_mutex_unlock(&m->mu);
    return i;
}

int member_self_out(struct member *m)
{
    return atomic_load(&m->out);
}

uint32_t member_epoch(struct member *m)
{
    return atomic_load(&m->epoch);
}

int member_admit(struct member *m, uint32_t redundancy, uint32_t epoch, char *msg, size_t n)
{
    if (!ddio_redundancy_kept(redundancy))
        return 0;
    uint32_t mine = atomic_load(&m->epoch);
    if (atomic_load(&m->out)) {
        snprintf(msg, n, "this server is out of the membership since epoch %u: it serves "
                 "mirrored and erasure-coded files again once resynced and declared in", mine);
        return DDIO_E_OUT;
    }
    /* 0: a connection that has heard no epoch yet (its first request) */
    if (epoch != 0 && epoch != mine) {
        snprintf(msg, n, "membership epoch %u of the request is not the server's %u: the "
                 "membership changed; send again", epoch, mine);
        return DDIO_E_EPOCH;
    }
    return 0;
}

/* a value of the same deployment as the record: the same members (once
 * there is a record), this server among them */
static int same_deployment(const struct member *m, const struct ddio_member_val *v)
{
    if (self_index(m, v) < 0)
        return 0;
    if (m->st.val.n == 0)
        return 1;
    if (v->n != m->st.val.n)
        return 0;
    for (uint32_t i = 0; i < v->n; i++)
        if (memcmp(v->ids[i], m->st.val.ids[i], DDIO_ID_LEN))
            return 0;
    return 1;
}

/* Paxos, one epoch after the committed one at a time; st is the state
 * after the request, saved before the answer when it changed */
static int member_step(struct member *m, const struct ddio_member *q, struct ddio_member_r *st,
                       char *msg, size_t n)
{
    if (q->op == DDIO_MB_GET)
        return 0;
    if (q->op == DDIO_MB_COMMIT) {
        if (q->epoch <= st->epoch)
            return 0;           /* known already: a commit is sent to everyone */
        st->epoch = q->epoch;
        st->val = q->val;
        st->promised = st->acc_ballot = 0;
        memset(&st->acc, 0, sizeof(st->acc));
        return 0;
    }
    if (q->epoch != st->epoch + 1) {
        snprintf(msg, n, "membership epoch %u proposed; this server is at %u", q->epoch,
                 st->epoch);
        return DDIO_E_EPOCH;
    }
    if (q->ballot < st->promised || (q->op == DDIO_MB_PREPARE && q->ballot == st->promised)) {
        snprintf(msg, n, "ballot %llu refused: %llu promised", (unsigned long long)q->ballot,
                 (unsigned long long)st->promised);
        return EBUSY;
    }
    st->promised = q->ballot;
    if (q->op == DDIO_MB_ACCEPT) {
        st->acc_ballot = q->ballot;
        st->acc = q->val;
    }
    return 0;
}

int member_handle(struct member *m, const struct ddio_member *q, struct ddio_member_r *r,
                  char *msg, size_t n)
{
    pthread_mutex_lock(&m->mu);
    *r = m->st;
    int rc = 0;
    if (q->val.n && !same_deployment(m, &q->val)) {
        snprintf(msg, n, "the membership offered is not this server's deployment");
        rc = EINVAL;
    }
    if (rc == 0)
        rc = member_step(m, q, r, msg, n);
    int newer = rc == 0 && r->epoch > m->st.epoch;
    if (rc == 0 && memcmp(r, &m->st, sizeof(*r))) {
        int src = member_save(m, r);
        if (src) {
            snprintf(msg, n, "membership record %s not saved: %s", m->path, strerror(-src));
            *r = m->st;
            rc = EIO;
            newer = 0;
        } else {
            m->st = *r;
            adopt_out(m);
        }
    }
    pthread_mutex_unlock(&m->mu);
    if (newer)
        DDIO_INFO("membership epoch %u committed%s", r->epoch,
                  atomic_load(&m->out) ? ": this server is out" : "");
    return rc;
}
