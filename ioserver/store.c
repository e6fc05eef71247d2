/* The file store: the table of open files, their datafiles (O_DIRECT and
 * buffered twins), creation and deletion, sync; store_init and store_fini
 * (block locks: store_blk.c; sizes: store_size.c). On top of store_roots.c, store_layout.c and
 * store_meta.c; the namespace (store_ns.c) is above it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE      /* O_DIRECT, O_PATH, fallocate */
#endif
#include "store.h"
#include "overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cond.h"
#include "ddio_log.h"
#include "ddio_net.h"
#include "fault.h"
#include "store_int.h"
#include "store_layout.h"
#include "store_meta.h"
#include "store_roots.h"
#include "sums.h"

/* ---- start and end --------------------------------------------------------------- */

int store_init(struct store *st, const struct srv_config *cfg, char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    pthread_mutex_init(&st->mu, NULL);
    pthread_mutex_init(&st->sets_mu, NULL);
    cond_init_mono(&st->open_cv);
    store_lists_init(&st->lists);
    store_meta_start(st);
    st->checksums = cfg->checksums;
    return store_roots_init(st, cfg, err, errlen);
}

static void store_copies_free(struct ofile *of);
static void store_sums_gens(struct ofile *of, uint64_t *gens);
static int store_sums_flush(struct ofile *of, const uint64_t *gens);

static void ofile_free(struct ofile *of)
{
    for (uint32_t c = 1; c < STORE_VIEWS; c++)
        if (of->copy[c])
            of->copy[c]->deleted = of->deleted;
    store_copies_free(of);
    if (of->ovl) {                /* its extents name only durable bytes */
        int durable = !of->deleted && ovl_dirty(of->ovl);
        for (int d = 0; durable && d < of->ndisks; d++)
            durable = fdatasync(of->fds[d]) == 0;
        ovl_close(of->ovl, durable);
    }
    for (int d = 0; of->sums && d < of->ndisks; d++) {
        /* a file written since its last sync: its data made durable before
         * its sums say CLEAN (sums.h's crash rule holds for a power loss
         * too); one that was not stays DIRTY, its sums suspect */
        int durable = !of->deleted && sums_dirty(of->sums[d]) ? fdatasync(of->fds[d]) == 0 : 1;
        sums_close(of->sums[d], of->bfds[d] >= 0 ? of->bfds[d] : of->fds[d], of->deleted,
                   durable);
    }
    free(of->sums);
    store_fmap_close(of);
    for (int d = 0; d < of->ndisks; d++) {
        if (of->fds && of->fds[d] >= 0)
            close(of->fds[d]);
        if (of->bfds && of->bfds[d] >= 0)
            close(of->bfds[d]);
    }
    if (of->sizemap)
        munmap(of->sizemap, sizeof(*of->sizemap));
    if (of->sizefd >= 0)
        close(of->sizefd);
    free(of->fds);
    free(of->bfds);
    free(of->dirty);
    free(of->blk);
    free(of->path);
    store_meta_release(of);
    lk_destroy(&of->locks);
    pthread_cond_destroy(&of->blk_cv);
    pthread_mutex_destroy(&of->mu);
    free(of);
}

void store_fini(struct store *st)
{
    store_meta_stop(st);
    while (st->files) {
        struct ofile *n = st->files->next;
        ofile_free(st->files);
        st->files = n;
    }
    store_sets_fini(st);
    store_roots_fini(st);
    store_lists_fini(&st->lists);
    pthread_mutex_destroy(&st->sets_mu);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->open_cv);
    memset(st, 0, sizeof(*st));
}
/* ---- open / create / delete --------------------------------------------------------- */

struct ofile *find_open(struct store *st, const char *path)
{
    for (struct ofile *of = st->files; of; of = of->next)
        if (!of->deleted && strcmp(of->path, path) == 0)
            return of;
    return NULL;
}

static struct ofile *ofile_new(struct store *st, const char *path)
{
    struct ofile *of = calloc(1, sizeof(*of));
    if (!of)
        return NULL;
    of->path = strdup(path);
    of->fds = malloc(sizeof(int) * (size_t)st->ndisks);
    of->bfds = malloc(sizeof(int) * (size_t)st->ndisks);
    of->dirty = calloc((size_t)st->ndisks, sizeof(*of->dirty));
    if (!of->path || !of->fds || !of->bfds || !of->dirty) {
        free(of->path);
        free(of->fds);
        free(of->bfds);
        free(of->dirty);
        free(of);
        return NULL;
    }
    of->ndisks = st->ndisks;
    for (int d = 0; d < st->ndisks; d++)
        of->fds[d] = of->bfds[d] = -1;
    of->sizefd = -1;
    of->block_size = st->block_size;
    of->disks.unit = st->block_size;
    of->disks.count = (uint32_t)st->ndisks;
    pthread_mutex_init(&of->mu, NULL);
    cond_init_mono(&of->blk_cv);
    lk_init(&of->locks);
    return of;
}

/* A second descriptor of the same file without O_DIRECT, for I/O of a few
 * sectors: small independent calls (HDF5 and PnetCDF metadata) then hit
 * the page cache instead of the disk each time. Linux keeps the two
 * coherent: a direct read writes back dirty cached pages of its range first,
 * a direct write invalidates them; fdatasync on either syncs the inode.
 * Through /proc so it is the same inode even if the path was renamed. */
static int buffered_twin(int fd)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    int b = open(p, O_RDWR | O_CLOEXEC);
    return b >= 0 ? b : -1;
}

/* disk d's directories of a file to be created */
static int make_parents(struct store *st, const struct ofile *of, int d, char *msg,
                        size_t msglen)
{
    int rc = mkdir_parents(st->rootfd[d], of->path);
    if (rc)
        snprintf(msg, msglen, "create %s on %s: %s", of->path, st->roots[d],
                 ddio_errno_name(-rc));
    return rc;
}

static void set_datafile(struct store *st, struct ofile *of, int d, int fd)
{
    of->fds[d] = fd;
    of->bfds[d] = st->direct[d] ? buffered_twin(fd) : -1;
}

/* disk d's datafile: its fd or -errno */
static int open_datafile(struct store *st, const struct ofile *of, int d, int create)
{
    int flags = O_RDWR | (create ? O_CREAT : 0) | (st->direct[d] ? O_DIRECT : 0);
    int fd = open_beneath(st->rootfd[d], of->path, flags, 0644);
    if (fd == -EINVAL && st->direct[d])   /* e.g. a bind mount of another fs */
        fd = open_beneath(st->rootfd[d], of->path, flags & ~O_DIRECT, 0644);
    return fd;
}

/* the datafiles not open yet */
static int open_datafiles(struct store *st, struct ofile *of, int create, char *msg, size_t msglen)
{
    for (int d = 0; d < st->ndisks; d++) {
        if (of->fds[d] >= 0)
            continue;
        int fd = create ? make_parents(st, of, d, msg, msglen) : 0;
        if (fd == 0 && (fd = open_datafile(st, of, d, create)) < 0)
            snprintf(msg, msglen, "open %s on %s: %s", of->path, st->roots[d],
                     ddio_errno_name(-fd));
        if (fd < 0)
            return fd;
        set_datafile(st, of, d, fd);
    }
    return 0;
}

static int init_size(struct ofile *of)
{
    uint64_t size = 0;
    for (int d = 0; d < of->ndisks; d++) {
        struct stat sb;
        if (fstat(of->fds[d], &sb))
            return -errno;
        uint64_t e = ddio_layout_logical_end(&of->disks, (uint32_t)d, (uint64_t)sb.st_size);
        if (e > size)
            size = e;
    }
    of->size = size;
    return 0;
}

/* ---- a mirrored file's copies ----------------------------------------------------- */

/* A file of k copies keeps copy c of stripe index p's units on server
 * (p + c) % N (ddio_layout.h; DESIGN.md section 6.1): this server holds,
 * besides its own datafiles, copy c (1..k-1) of index (me - c) % N, as
 * ROOT_d/.ddio/copyC/PATH on each disk d, byte for byte what server p keeps
 * as ROOT_d/PATH, so a local offset names the same bytes in both. Under
 * .ddio, so no client path reaches them and no listing shows them. Each
 * copy is an ofile of its own (datafiles, size, block locks), owned by the
 * file's: never in the open table, opened and freed with it. */

static int open_copy(struct store *st, struct ofile *of, uint32_t c, int create,
                     char *msg, size_t msglen)
{
    char cp[DDIO_MAX_STR + 32];
    if (store_copy_path(cp, sizeof(cp), c, of->path)) {
        snprintf(msg, msglen, "copy %u of %s: ENAMETOOLONG", c, of->path);
        return -ENAMETOOLONG;
    }
    struct ofile *cof = ofile_new(st, cp);
    if (!cof) {
        snprintf(msg, msglen, "copy %u of %s: ENOMEM", c, of->path);
        return -ENOMEM;
    }
    of->copy[c] = cof;
    cof->layout = of->layout;
    if (c < DDIO_MAX_COPIES)      /* parity and overlay are this server's own */
        cof->layout.server_index = ddio_copy_of(of->layout.stripe_count,
                                                of->layout.server_index, c);
    int rc = open_datafiles(st, cof, create, msg, msglen);
    if (rc == 0 && (rc = init_size(cof)) != 0)
        snprintf(msg, msglen, "stat copy %u of %s: %s", c, of->path, ddio_errno_name(-rc));
    if (rc == 0 && c == STORE_OVERLAY
        && !(cof->ovl = ovl_open(st->rootfd[0], cof->path, cof->fds[0], create))) {
        snprintf(msg, msglen, "overlay of %s: ENOMEM", of->path);
        rc = -ENOMEM;
    }
    return rc;
}

static int store_copies_open(struct store *st, struct ofile *of, int create, char *msg,
                             size_t msglen)
{
    for (uint32_t c = 1; c < of->layout.copies && c < DDIO_MAX_COPIES; c++) {
        int rc = open_copy(st, of, c, create, msg, msglen);
        if (rc)
            return rc;          /* the file's ofile_free frees what was opened */
    }
    if (!of->layout.ec.k)
        return 0;
    int rc = open_copy(st, of, STORE_PARITY, create, msg, msglen);
    return rc ? rc : open_copy(st, of, STORE_OVERLAY, create, msg, msglen);
}

static void store_copies_free(struct ofile *of)
{
    for (uint32_t c = 1; c < STORE_VIEWS; c++)
        if (of->copy[c]) {
            ofile_free(of->copy[c]);
            of->copy[c] = NULL;
        }
}

static int store_copies_fds(const struct ofile *of, int *fds)
{
    int n = 0;
    for (uint32_t c = 1; c < STORE_VIEWS; c++)
        for (int d = 0; of->copy[c] && d < of->copy[c]->ndisks; d++)
            fds[n++] = of->copy[c]->fds[d];
    return n;
}

static int store_copies_unlink(struct store *st, const char *norm)
{
    char cp[DDIO_MAX_STR + 32];
    for (uint32_t c = 1; c < STORE_VIEWS; c++) {
        if (store_copy_path(cp, sizeof(cp), c, norm))
            return -ENAMETOOLONG;
        for (int d = 0; d < st->ndisks; d++) {
            int rc = unlink_beneath(st->rootfd[d], cp, 0);
            if (rc && rc != -ENOENT && rc != -ENOTDIR)
                return rc;
        }
    }
    char lp[DDIO_MAX_STR + 64];   /* an overlay's extents (best effort: the
                                   * log names its datafile's inode) */
    if (store_copy_path(cp, sizeof(cp), STORE_OVERLAY, norm) == 0
        && ovl_log_path(lp, sizeof(lp), cp) == 0)
        (void)unlink_beneath(st->rootfd[0], lp, 0);
    return 0;
}

/* a deleted file's sidecars (sums.h), its copies' too: best effort, as a
 * sidecar naming another inode is never believed */
static void sums_unlink_all(struct store *st, const char *norm)
{
    char sp[DDIO_MAX_STR + 64], cp[DDIO_MAX_STR + 32];
    for (uint32_t c = 0; c < STORE_VIEWS; c++)
        for (int d = 0; d < st->ndisks; d++) {
            if (c && store_copy_path(cp, sizeof(cp), c, norm))
                continue;
            int len = snprintf(sp, sizeof sp, ".ddio/sums/%s", c ? cp : norm);
            if (len > 0 && (size_t)len < sizeof sp)
                (void)unlink_beneath(st->rootfd[d], sp, 0);
        }
}

static int datafile_exists(struct store *st, const char *path)
{
    for (int d = 0; d < st->ndisks; d++) {
        int fd = open_beneath(st->rootfd[d], path, O_PATH, 0);
        if (fd >= 0) {
            close(fd);
            return 1;
        }
    }
    return 0;
}

static int check_proposed(struct store *st, struct ddio_layout_rec *l, char *msg, size_t msglen)
{
    if (l->stripe_unit == 0 || l->stripe_count == 0 || l->stripe_count > DDIO_MAX_SERVERS
        || l->server_index >= l->stripe_count) {
        snprintf(msg, msglen, "invalid layout (unit %" PRIu64 ", index %u of %u)",
                 l->stripe_unit, l->server_index, l->stripe_count);
        return -EINVAL;
    }
    if (l->copies == 0)           /* no mode of its own: the server's, as many as fit */
        l->copies = st->copies < l->stripe_count ? st->copies : l->stripe_count;
    if (l->copies > DDIO_MAX_COPIES || l->copies > l->stripe_count) {
        snprintf(msg, msglen, "invalid layout (%u copies on %u servers)", l->copies,
                 l->stripe_count);
        return -EINVAL;
    }
    l->ndisks = (uint32_t)st->ndisks;
    l->block_size = st->block_size;
    return store_layout_check(st, l, msg, msglen);
}

/* a new file's layout kept (store_layout.h): in its first datafile, made
 * here, where the store keeps layouts so; else, or where that fails (a
 * datafile left without a layout, a hash shared by another server list),
 * in a record (*in_record 1) */
static int keep_layout(struct store *st, struct ofile *of, int *in_record, char *msg,
                       size_t msglen)
{
    *in_record = 1;
    if (st->layout_xattr) {
        int rc = make_parents(st, of, 0, msg, msglen);
        if (rc)
            return rc;
        int fd = create_with_layout(st, of, O_RDWR | (st->direct[0] ? O_DIRECT : 0));
        if (fd >= 0) {
            set_datafile(st, of, 0, fd);
            *in_record = 0;
            return 0;
        }
    }
    struct ddio_wbuf w;
    ddio_wbuf_init(&w);
    int rc = store_meta_encode(&of->layout, &of->creator, &w);
    if (rc == 0)
        rc = write_atomic(st, st->metafd, of->path, w.p, w.len, 0);
    ddio_wbuf_free(&w);
    if (rc)
        snprintf(msg, msglen, "store layout of %s: %s", of->path, ddio_errno_name(-rc));
    return rc;
}

static int create_file(struct store *st, struct ofile *of, const struct ddio_layout_rec *proposed,
                       const struct store_creator *cr, char *msg, size_t msglen)
{
    of->layout = *proposed;
    if (cr)
        of->creator = *cr;
    int rc = check_proposed(st, &of->layout, msg, msglen);
    if (rc)
        return rc;
    /* The layout first, with the creator's ids: a server killed before the
     * other datafiles exist leaves a file its create's resend finds its own
     * (create_again) and completes below. Datafiles first would leave ones
     * without a layout, which a create must refuse (EEXIST). */
    int in_record;
    if ((rc = keep_layout(st, of, &in_record, msg, msglen)) != 0)
        return rc;
    fault_hit(FAULT_CREATE_HALF);
    rc = open_datafiles(st, of, 1, msg, msglen);
    if (rc == 0)
        rc = store_copies_open(st, of, 1, msg, msglen);
    if (rc) {
        unlink_beneath(in_record ? st->metafd : st->rootfd[0], of->path, 0);
        return rc;
    }
    /* durable by the file's first MPI_File_sync, like its data (or a
     * moment later in the background): a create costs no fsync (one per
     * stripe server, in turn, on the create path) */
    store_meta_created(st, of);
    return 0;
}

/* a create (CREAT|EXCL) that finds the file: its own resend if the file
 * was made with its ids (the first run's answer was lost), opened as a
 * create; else EEXIST */
static int create_again(const struct ofile *of, uint32_t amode, const struct store_creator *cr,
                        int *created, char *msg, size_t msglen)
{
    if (!(amode & DDIO_O_CREAT) || !(amode & DDIO_O_EXCL))
        return 0;
    if (cr && cr->client && of->creator.client == cr->client && of->creator.call == cr->call) {
        *created = 1;
        return 0;
    }
    snprintf(msg, msglen, "create %s: EEXIST", of->path);
    return -EEXIST;
}

/* No layout record for path: a directory of the namespace (EISDIR); or,
 * for a create, a parent that is missing (ENOENT) or not a directory
 * (ENOTDIR), as open(2) says: a create makes no directories. 0: neither */
static int not_a_file(struct store *st, const char *path, int create, char *msg, size_t msglen)
{
    struct stat sb;
    if (fstatat(st->rootfd[0], path, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sb.st_mode)) {
        snprintf(msg, msglen, "open /%s: is a directory", path);
        return -EISDIR;
    }
    const char *slash = strrchr(path, '/');
    if (!create || !slash)
        return 0;
    int plen = (int)(slash - path);
    char parent[DDIO_MAX_STR + 1];
    snprintf(parent, sizeof parent, "%.*s", plen, path);
    if (fstatat(st->rootfd[0], parent, &sb, 0) == 0 && S_ISDIR(sb.st_mode))
        return 0;
    int rc = errno == ENOENT ? -ENOENT : -ENOTDIR;
    snprintf(msg, msglen, "create /%s: /%s %s", path, parent,
             rc == -ENOENT ? "does not exist (make it first: ddio mkdir)" : "is not a directory");
    return rc;
}

/* of's layout, from its first datafile (kept open) or its record */
static int find_layout(struct store *st, struct ofile *of, char *msg, size_t msglen)
{
    int fd = open_datafile(st, of, 0, 0), in_record;
    int rc = layout_at(st, of->path, fd, &of->layout, &of->creator, &in_record, msg, msglen);
    if (rc == 0 && !in_record)
        set_datafile(st, of, 0, fd);
    else if (fd >= 0)
        close(fd);
    return rc;
}

/* open a file not yet in the table */
static int open_new(struct store *st, const char *path, uint32_t amode,
                    const struct ddio_layout_rec *proposed, const struct store_creator *cr,
                    struct ofile *of, int *created, char *msg, size_t msglen)
{
    int rc = find_layout(st, of, msg, msglen);
    if (rc == 0) {
        if ((rc = create_again(of, amode, cr, created, msg, msglen)) != 0)
            return rc;
        rc = store_layout_check(st, &of->layout, msg, msglen);
        if (rc == 0)
            rc = open_datafiles(st, of, (amode & DDIO_O_CREAT) != 0, msg, msglen);
        if (rc == 0)
            rc = store_copies_open(st, of, (amode & DDIO_O_CREAT) != 0, msg, msglen);
        /* a create's resend (its first answer lost, maybe with the server
         * that made it) makes it durable as the create would have; a file
         * opened again takes its create's job if still queued */
        if (rc == 0 && *created)
            store_meta_created(st, of);
        else if (rc == 0)
            store_meta_attach(st, of);
        return rc;
    }
    if (rc != -ENOENT)
        return rc;
    if ((rc = not_a_file(st, path, (amode & DDIO_O_CREAT) != 0, msg, msglen)) != 0)
        return rc;
    if (!(amode & DDIO_O_CREAT)) {
        snprintf(msg, msglen, "open %s: ENOENT", path);
        return -ENOENT;
    }
    if ((amode & DDIO_O_EXCL) && datafile_exists(st, path)) {
        snprintf(msg, msglen, "create %s: EEXIST (datafile without layout)", path);
        return -EEXIST;
    }
    *created = 1;
    return create_file(st, of, proposed, cr, msg, msglen);
}

/* Opens run their file-system work (layout record, datafiles, the
 * create) outside st->mu, so one slow open (a thread preempted on a busy
 * host: 5 ms seen with 8 ranks on 2 cores) no longer holds every other
 * open and close of the server. The file is in the table meanwhile as
 * `opening`: an open of the same path waits for it, and namespace changes
 * wait for every such open (store_ns_lock); while one waits, new opens do
 * their work under the lock as before, so it is not starved. */
void store_ns_lock(struct store *st)
{
    pthread_mutex_lock(&st->mu);
    st->ns_waiting++;
    while (st->opening > 0)
        pthread_cond_wait(&st->open_cv, &st->mu);
    st->ns_waiting--;
}

/* the checksums of every datafile of the file and of its copies; fresh:
 * a create (a sidecar left by an earlier file of the name discarded) */
static int sums_attach_one(struct store *st, struct ofile *of, int fresh)
{
    if (!(of->sums = calloc((size_t)of->ndisks, sizeof(*of->sums))))
        return -ENOMEM;
    for (int d = 0; d < of->ndisks; d++)
        if (!(of->sums[d] = sums_open(st->rootfd[d], of->path, of->fds[d], fresh)))
            return -ENOMEM;
    return 0;
}

static int sums_attach(struct store *st, struct ofile *of, int fresh)
{
    int rc = sums_attach_one(st, of, fresh);
    for (uint32_t c = 1; c < STORE_VIEWS && rc == 0; c++)
        if (of->copy[c])
            rc = sums_attach_one(st, of->copy[c], fresh);
    return rc;
}

static void unlink_of(struct store *st, struct ofile *of)
{
    for (struct ofile **pp = &st->files; *pp; pp = &(*pp)->next)
        if (*pp == of) {
            *pp = of->next;
            return;
        }
}

/* A path whose last close is still writing its checksums (store_release):
 * an open of it waits, or it would load the sidecar before that close
 * wrote it and its CLEAN header, which would then hold the closed file's
 * sums over the newer ones of whatever the new open wrote meanwhile (a
 * read after got a false integrity error, seen under ASan in CI). */
struct store_closing {
    struct store_closing *next;
    char path[];
};

static int is_closing(const struct store *st, const char *norm)
{
    for (const struct store_closing *c = st->closing; c; c = c->next)
        if (strcmp(c->path, norm) == 0)
            return 1;
    return 0;
}

/* st->mu held; an open or the last close of the same path at the file
 * system waited for */
static struct ofile *find_settled(struct store *st, const char *norm)
{
    struct ofile *of;
    while (((of = find_open(st, norm)) && of->opening) || (!of && is_closing(st, norm)))
        pthread_cond_wait(&st->open_cv, &st->mu);
    return of;
}

int store_open(struct store *st, const char *path, uint32_t amode,
               const struct ddio_layout_rec *proposed, const struct store_creator *cr,
               struct ofile **out, int *created, char *msg, size_t msglen)
{
    char norm[DDIO_MAX_STR + 1];
    int rc = norm_or_refuse(path, norm, sizeof(norm), msg, msglen);
    *created = 0;
    if (rc)
        return rc;
    pthread_mutex_lock(&st->mu);
    struct ofile *of = find_settled(st, norm);
    if (of) {
        rc = create_again(of, amode, cr, created, msg, msglen);
        if (rc == 0) {
            of->refs++;
            *out = of;
        }
        pthread_mutex_unlock(&st->mu);
        return rc;
    }
    of = ofile_new(st, norm);
    if (!of) {
        pthread_mutex_unlock(&st->mu);
        snprintf(msg, msglen, "open %s: ENOMEM", norm);
        return -ENOMEM;
    }
    of->refs = 1;
    of->next = st->files;
    st->files = of;
    int outside = st->ns_waiting == 0;
    if (outside) {
        of->opening = 1;
        st->opening++;
        pthread_mutex_unlock(&st->mu);
    }
    rc = open_new(st, norm, amode, proposed, cr, of, created, msg, msglen);
    if (rc == 0 && (rc = init_size(of)) != 0)
        snprintf(msg, msglen, "stat %s: %s", norm, ddio_errno_name(-rc));
    int sums = st->checksums == SUMS_ON ||
               (st->checksums == SUMS_MIRRORED && layout_redundant(&of->layout));
    if (rc == 0 && sums && (rc = sums_attach(st, of, *created)) != 0)
        snprintf(msg, msglen, "checksums of %s: ENOMEM", norm);
    if (outside) {
        pthread_mutex_lock(&st->mu);
        of->opening = 0;
        st->opening--;
        pthread_cond_broadcast(&st->open_cv);
    }
    if (rc) {
        unlink_of(st, of);
        *created = 0;
    } else
        *out = of;
    pthread_mutex_unlock(&st->mu);
    if (rc)
        ofile_free(of);
    return rc;
}

int store_is_open(struct store *st, const char *norm, int wait_ms)
{
    int64_t dl = ddio_now_ms() + wait_ms;
    pthread_mutex_lock(&st->mu);
    struct ofile *of;
    while ((of = find_open(st, norm)) && of->refs == of->answered
           && cond_wait_ms(&st->open_cv, &st->mu, dl) != ETIMEDOUT)
        ;
    pthread_mutex_unlock(&st->mu);
    return of != NULL;
}

void store_answered(struct store *st, struct ofile *of)
{
    pthread_mutex_lock(&st->mu);
    of->answered++;
    pthread_mutex_unlock(&st->mu);
}

struct ofile *store_find_open(struct store *st, const char *norm)
{
    pthread_mutex_lock(&st->mu);
    struct ofile *of = find_open(st, norm);
    if (of && of->opening)
        of = NULL;
    if (of)
        of->refs++;
    pthread_mutex_unlock(&st->mu);
    return of;
}

void store_retain(struct store *st, struct ofile *of)
{
    pthread_mutex_lock(&st->mu);
    of->refs++;
    pthread_mutex_unlock(&st->mu);
}

void store_release(struct store *st, struct ofile *of)
{
    store_release_pass(st, of, 0);
}

void store_release_pass(struct store *st, struct ofile *of, int answered)
{
    pthread_mutex_lock(&st->mu);
    of->answered -= answered;
    if (--of->refs > 0) {
        if (answered)             /* store_is_open may wait for it */
            pthread_cond_broadcast(&st->open_cv);
        pthread_mutex_unlock(&st->mu);
        return;
    }
    unlink_of(st, of);
    /* (a deleted file's sums are not written at its close) */
    struct store_closing *c = of->deleted ? NULL : malloc(sizeof(*c) + strlen(of->path) + 1);
    if (c) {
        strcpy(c->path, of->path);
        c->next = st->closing;
        st->closing = c;
    }
    pthread_mutex_unlock(&st->mu);
    ofile_free(of);
    if (!c)
        return;
    pthread_mutex_lock(&st->mu);
    for (struct store_closing **pp = &st->closing; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    pthread_cond_broadcast(&st->open_cv);
    pthread_mutex_unlock(&st->mu);
    free(c);
}

int store_delete(struct store *st, const char *path, char *msg, size_t msglen)
{
    char norm[DDIO_MAX_STR + 1];
    int rc = norm_or_refuse(path, norm, sizeof(norm), msg, msglen);
    if (rc)
        return rc;
    store_ns_lock(st);
    int found = 0;
    rc = unlink_beneath(st->metafd, norm, 0);
    if (rc == 0)
        found = 1;
    else if (rc == -ENOENT)
        rc = 0;
    for (int d = 0; d < st->ndisks && rc == 0; d++) {
        rc = unlink_beneath(st->rootfd[d], norm, 0);
        if (rc == 0)
            found = 1;
        else if (rc == -ENOENT)
            rc = 0;
    }
    if (rc == 0)
        rc = store_copies_unlink(st, norm);
    if (rc == 0)
        sums_unlink_all(st, norm);
    struct ofile *of = find_open(st, norm);
    if (of && (found || rc == 0))
        of->deleted = 1;             /* stays usable by its handles, like unlink */
    pthread_mutex_unlock(&st->mu);
    if (rc == 0 && !found)
        rc = -ENOENT;
    if (rc)
        snprintf(msg, msglen, "delete %s: %s", norm, ddio_errno_name(-rc));
    return rc;
}

/* ---- copies' sizes ----------------------------------------------------------------- */

static int copy_setsize(struct ofile *cof, uint64_t logical, int grow)
{
    struct ddio_stripe L = {cof->layout.stripe_unit, cof->layout.stripe_count};
    uint64_t want = ddio_layout_local_size(&L, cof->layout.server_index, logical);
    if (grow && want <= store_size(cof))
        return 0;
    return store_setsize(cof, want);
}

int store_copies_setsize(struct ofile *of, uint64_t logical, int grow)
{
    for (uint32_t c = 1; c < DDIO_MAX_COPIES; c++) {
        int rc = of->copy[c] ? copy_setsize(of->copy[c], logical, grow) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

int store_ec_empty(struct ofile *of)
{
    struct ofile *par = of->copy[STORE_PARITY], *ov = of->copy[STORE_OVERLAY];
    int rc = par ? store_setsize(par, 0) : 0;
    if (rc == 0 && ov && ov->ovl)
        rc = ovl_del(ov->ovl, 0, UINT64_MAX);
    if (rc == 0 && ov && ov->ovl)    /* no parity left to be in a fold */
        rc = ovl_pstate_set(ov->ovl, UINT64_MAX, OVL_PS_INPLACE);
    return rc == 0 && ov ? store_setsize(ov, 0) : rc;
}

/* the overlay's bytes past the logical end `size`, gathered (ovl_each
 * holds the overlay's lock: they are dropped after it) */
struct cut_arg {
    const struct ddio_layout_rec *l;
    uint64_t size, *v;
    size_t n, cap;
    int rc;
};

static void cut_add(struct cut_arg *a, uint64_t lo, uint64_t hi)
{
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        uint64_t *v = realloc(a->v, cap * sizeof(*v));
        if (!v) {
            a->rc = -ENOMEM;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = lo;
    a->v[a->n++] = hi;
}

/* extent [lo, hi), overlay unit by unit (unit j at local [jU, (j+1)U)) */
static int cut_ext(void *arg, uint64_t lo, uint64_t hi)
{
    struct cut_arg *a = arg;
    const uint64_t U = a->l->stripe_unit;
    for (uint64_t j = lo / U; j * U < hi && a->rc == 0; j++) {
        uint64_t L = ddio_ec_ovl_logical(&a->l->ec, U, a->l->server_index, j * U);
        if (L == UINT64_MAX || L + U <= a->size)
            continue;
        uint64_t from = j * U + (L >= a->size ? 0 : a->size - L), to = (j + 1) * U;
        from = from > lo ? from : lo;
        to = to < hi ? to : hi;
        if (from < to)
            cut_add(a, from, to);
    }
    return a->rc != 0;
}

int store_ec_cut(struct ofile *of, uint64_t logical)
{
    struct ofile *par = of->copy[STORE_PARITY], *ov = of->copy[STORE_OVERLAY];
    const struct ddio_layout_rec *l = &of->layout;
    uint64_t gsz = l->stripe_unit * l->ec.k, groups = (logical + gsz - 1) / gsz;
    uint64_t keep = ddio_ec_parity_count(&l->ec, l->server_index, groups) * l->stripe_unit;
    int rc = par && store_size(par) > keep ? store_setsize(par, keep) : 0;
    if (rc == 0 && ov && ov->ovl) {
        struct cut_arg a = {.l = l, .size = logical};
        ovl_each(ov->ovl, 0, UINT64_MAX, cut_ext, &a);
        rc = a.rc;
        for (size_t k = 0; rc == 0 && k < a.n; k += 2)
            rc = ovl_del(ov->ovl, a.v[k], a.v[k + 1]);
        free(a.v);
        if (rc == 0)
            rc = ovl_cut_size(ov->ovl, logical);
    }
    return rc;
}

int store_copies_prealloc(struct ofile *of, uint64_t logical)
{
    for (uint32_t c = 1; c < DDIO_MAX_COPIES; c++) {
        struct ofile *cof = of->copy[c];
        if (!cof)
            continue;
        struct ddio_stripe L = {cof->layout.stripe_unit, cof->layout.stripe_count};
        int rc = store_prealloc(cof, 0, ddio_layout_local_size(&L, cof->layout.server_index,
                                                               logical));
        if (rc)
            return rc;
    }
    return 0;
}

/* a new open file description of fd's file (buffered, whatever fd is) */
static int reopen(int fd, int write)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    int r = open(p, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    return r >= 0 ? r : -errno;
}

/* of->mu held: no block of the file is locked for writing, waited for up to
 * LOCAL_QUIESCE_MS. A write already past its choice between byte-exact and
 * read-modify-write holds its block's lock until it is on the page cache or
 * disk, so writers given descriptors after this never race with one. */
#define LOCAL_QUIESCE_MS 200
static int blocks_quiet(struct ofile *of)
{
    int64_t dl = ddio_now_ms() + LOCAL_QUIESCE_MS;
    while (of->nblk > 0 && cond_wait_ms(&of->blk_cv, &of->mu, dl) != ETIMEDOUT)
        ;
    return of->nblk == 0;
}

int store_local_fds(struct ofile *of, int *write, int *sizefd, int *fds)
{
    int n = 0, rc;
    *sizefd = -1;
    /* a same-host writer would bypass the copies or the parity: reads
     * only (PROTOCOL.md "LOCAL") */
    if (layout_redundant(&of->layout))
        *write = 0;
    pthread_mutex_lock(&of->mu);
    rc = size_page(of);
    /* the first writer: only once no write is halfway through a block */
    if (*write && !__atomic_load_n(&of->local_writers, __ATOMIC_ACQUIRE)) {
        if (blocks_quiet(of))
            __atomic_store_n(&of->local_writers, 1, __ATOMIC_RELEASE);
        else
            *write = 0;         /* a busy file: reads only, this time */
    }
    if (rc == 0 && (*sizefd = reopen(of->sizefd, *write)) < 0)
        rc = *sizefd;
    for (; rc == 0 && n < of->ndisks; n++)
        if ((fds[n] = reopen(of->fds[n], *write)) < 0)
            rc = fds[n];
    pthread_mutex_unlock(&of->mu);
    if (rc) {
        while (n-- > 0)
            if (fds[n] >= 0)
                close(fds[n]);
        if (*sizefd >= 0)
            close(*sizefd);
        *sizefd = -1;
    }
    return rc;
}

/* a mirrored file's copies in the same batch: the sync returns when every
 * copy of what it covers is durable */
int store_sync(struct store *st, struct ofile *of)
{
    int rc;
    uint64_t gens[STORE_VIEWS][DDIO_MAX_ROOTS];
    for (uint32_t c = 0; c < STORE_VIEWS; c++)     /* before the data's sync */
        store_sums_gens(c ? of->copy[c] : of, gens[c]);
    if (!layout_redundant(&of->layout)) {
        rc = store_meta_sync(st, of, of->fds, of->ndisks);
    } else {
        int fds[STORE_VIEWS * DDIO_MAX_ROOTS], n = of->ndisks;
        memcpy(fds, of->fds, sizeof(int) * (size_t)n);
        n += store_copies_fds(of, fds + n);
        rc = store_meta_sync(st, of, fds, n);
    }
    for (uint32_t c = 0; c < STORE_VIEWS && rc == 0; c++)
        rc = store_sums_flush(c ? of->copy[c] : of, gens[c]);
    if (rc == 0 && of->copy[STORE_OVERLAY])   /* its datafile synced above */
        rc = ovl_flush(of->copy[STORE_OVERLAY]->ovl);
    return rc;
}

static void store_sums_gens(struct ofile *of, uint64_t *gens)
{
    for (int d = 0; of && of->sums && d < of->ndisks; d++)
        gens[d] = sums_gen(of->sums[d]);
}

/* the sums of what the sync made durable, made durable after it (sums.h's
 * crash rule): CLEAN only if no write ended after gens were taken */
static int store_sums_flush(struct ofile *of, const uint64_t *gens)
{
    int rc = 0;
    for (int d = 0; of && of->sums && d < of->ndisks && rc == 0; d++)
        rc = sums_flush_since(of->sums[d], of->bfds[d] >= 0 ? of->bfds[d] : of->fds[d],
                              gens[d]);
    return rc;
}

int store_note_cached_write(struct ofile *of, int d, uint64_t off, uint64_t len,
                            struct store_kick *k)
{
    uint64_t bytes;
    pthread_mutex_lock(&of->mu);
    int kick = ddio_wb_note(&of->dirty[d], off, len, &k->lo, &k->hi, &bytes);
    k->fd = of->bfds[d] >= 0 ? of->bfds[d] : of->fds[d];
    pthread_mutex_unlock(&of->mu);
    return kick;
}

void store_kick(const struct store_kick *k)
{
    (void)sync_file_range(k->fd, (off_t)k->lo, (off_t)(k->hi - k->lo), SYNC_FILE_RANGE_WRITE);
}
