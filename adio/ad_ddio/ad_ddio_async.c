/* Nonblocking reads and writes (MPI_File_iread/iwrite[_at][_all] and the
 * shared-pointer forms) that progress while the caller computes.
 *
 * The call describes the request exactly as the blocking path does (file
 * view + position -> descriptor, memory type -> tree), moves the file
 * pointer by the request (as ROMIO's own nonblocking entries do) and queues
 * it for the driver's progress thread, which runs the socket transfer loop
 * of the client core (common/ddio_core_xfer.c). The thread never calls MPI, and it has connections and
 * server handles of its own (opened on its first request for a file), so it
 * never shares a byte stream with the main thread. The request is an MPICH
 * generalized request: its poll function (run by MPI_Test and MPI_Wait)
 * completes it once the thread is done.
 *
 * Collectives (iread_all, iwrite_all, _at_all): every rank sends its XFER
 * to every server at once, without the blocking path's first agreement, so
 * the call returns at once. A rank that cannot describe its part takes part
 * with an empty stream (the gate stays whole) and fails the call below; a
 * rank entering more than romio_ddio_timeout after the first makes the
 * servers fail the call on every rank. After the transfer, the poll
 * function runs the blocking path's second agreement as nonblocking
 * collectives (MPI_Iallreduce, then MPI_Ibcast of the first failing rank's
 * message) on a duplicate of the file's communicator, one request at a time
 * in call order: every rank starts them in the same order whatever order it
 * waits in, and they never mix with the blocking collectives on fd->comm.
 *
 * The thread runs requests one at a time in call order, so nonblocking
 * collectives on different files must be started in the same order on every
 * rank (on one file MPI requires it anyway); otherwise they fail after the
 * timeout, they do not hang.
 *
 * Without MPICH's generalized request classes (ROMIO 3.2.1 in Open MPI:
 * ad_ddio_compat.h) the call itself drives its request to the end (the
 * same thread, the same agreement) and returns it completed. */
#include "ad_ddio.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    ST_RUN,                     /* queued or running on the thread */
    ST_AGREE,                   /* collective: waiting for its turn to agree */
    ST_REDUCE,                  /* collective: MPI_Iallreduce in flight */
    ST_BCAST,                   /* collective: MPI_Ibcast of the failure in flight */
    ST_FINISH,                  /* outcome known: complete the request */
    ST_COMPLETE
};

typedef struct job {
    int kind;                   /* JOB_XFER / JOB_CLOSE */
    ADIOI_DDIO_Iop op;
    struct ADIOI_DDIO_Afile *af;
    ADIOI_DDIO_Xfer x;
    int timeout_ms;             /* the file's timeout at the call */
    const char *myname;
    int rank;
    /* written by the thread; read by the main thread once done (aq.mu) */
    int done;
    ADIOI_DDIO_Err xe;
    uint64_t bytes;
    /* main thread only */
    int state;
    ADIOI_DDIO_Err e;           /* the request's outcome */
    MPI_Request greq, mreq;
    int in[2], out[2];
    ADIOI_DDIO_Err first;
    int error_code;
    struct job *qnext;          /* the thread's queue */
    struct job *onext;          /* outstanding requests */
    struct job *cnext;          /* the file's collectives awaiting agreement */
} job;

#define JOB_XFER  0
#define JOB_CLOSE 1

/* Per open file, created by its first nonblocking request. */
typedef struct ADIOI_DDIO_Afile {
    struct ddio_fh sh;          /* layout + the thread's handles (sh.srv), renewed
                                 * when their connection drops */
    char (*addrs)[256];         /* the stripe servers at open: address, id */
    uint8_t (*ids)[DDIO_ID_LEN];
    MPI_Comm comm;              /* agreements; MPI_COMM_NULL before the first collective */
    int pending;                /* requests not yet completed (in.mu) */
    job *chead, *ctail;         /* collectives in call order (pq.mu) */
} ADIOI_DDIO_Afile;

/* the progress thread and its FIFO */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    pthread_t tid;
    int started;
    job *head, *tail;
} aq = {
.mu = PTHREAD_MUTEX_INITIALIZER,.work = PTHREAD_COND_INITIALIZER,.idle =
        PTHREAD_COND_INITIALIZER};

/* requests started but not yet seen by progress (never held across MPI) */
static struct {
    pthread_mutex_t mu;
    job *head, *tail;
} in = {
.mu = PTHREAD_MUTEX_INITIALIZER};

/* outstanding requests, advanced by whoever holds pq.mu (MPI calls happen
 * under it, so it is only ever try-locked) */
static struct {
    pthread_mutex_t mu;
    job *head;
} pq = {
.mu = PTHREAD_MUTEX_INITIALIZER};

#if ADIOI_DDIO_HAVE_GREQX
static MPIX_Grequest_class greq_class;
static int greq_class_made;
#endif

static void nap(long ns)
{
    struct timespec t = { 0, ns };
    nanosleep(&t, NULL);
}

/* ---- the progress thread ------------------------------------------------------ */

static void run_job(job * j)
{
    ADIOI_DDIO_Afile *af = j->af;

    memset(&j->xe, 0, sizeof(j->xe));
    if (j->kind == JOB_CLOSE) {
        ddio_fh_close(&af->sh, NULL);
        return;
    }
    af->sh.timeout_ms = j->timeout_ms;
    if (!af->sh.srv && ddio_fh_open_again(&af->sh, ADIOI_DDIO_Pool(ADIOI_DDIO_POOL_ASYNC),
                                          af->addrs, (const uint8_t (*)[DDIO_ID_LEN]) af->ids,
                                          &j->xe))
        return;
    j->x.f = &af->sh;
    ddio_xfer_run(&j->x, j->op.involved, &j->xe);
    j->bytes = j->x.bytes;
}

static void *progress_main(void *arg)
{
    (void) arg;
    pthread_mutex_lock(&aq.mu);
    for (;;) {
        while (!aq.head)
            pthread_cond_wait(&aq.work, &aq.mu);
        job *j = aq.head;
        aq.head = j->qnext;
        if (!aq.head)
            aq.tail = NULL;
        pthread_mutex_unlock(&aq.mu);
        run_job(j);
        pthread_mutex_lock(&aq.mu);
        j->done = 1;    /* j may be freed by the main thread from here on */
        pthread_cond_broadcast(&aq.idle);
    }
    return NULL;
}

/* with every signal blocked: they belong to the application's threads */
static int thread_start(ADIOI_DDIO_Err * e)
{
    sigset_t all, old;
    int rc = 0;

    pthread_mutex_lock(&aq.mu);
    if (!aq.started) {
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        rc = pthread_create(&aq.tid, NULL, progress_main, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!rc) {
            pthread_detach(aq.tid);
            aq.started = 1;
        }
    }
    pthread_mutex_unlock(&aq.mu);
    if (rc)
        ddio_err_set(e, rc, "ddio: cannot start the nonblocking I/O thread: %s",
                           strerror(rc));
    return rc ? -1 : 0;
}

static void enqueue(job * j)
{
    pthread_mutex_lock(&aq.mu);
    if (aq.tail)
        aq.tail->qnext = j;
    else
        aq.head = j;
    aq.tail = j;
    pthread_cond_signal(&aq.work);
    pthread_mutex_unlock(&aq.mu);
}

/* an int written by another thread under mu */
static int read_locked(pthread_mutex_t * mu, const int *v)
{
    pthread_mutex_lock(mu);
    int x = *v;
    pthread_mutex_unlock(mu);
    return x;
}

static int job_done(job * j)
{
    return read_locked(&aq.mu, &j->done);
}

/* ---- completion (main thread) ------------------------------------------------- */

static void finish(job * j)
{
    j->error_code = ADIOI_DDIO_Err_code(j->myname, &j->e);
    if (j->e.errnum)
        j->bytes = 0;
    j->state = ST_COMPLETE;
    pthread_mutex_lock(&in.mu);
    j->af->pending--;
    pthread_mutex_unlock(&in.mu);
#if ADIOI_DDIO_HAVE_GREQX
    MPI_Grequest_complete(j->greq);
#endif
}

/* the blocking path's second agreement, as nonblocking collectives */
static void agree(job * j)
{
    ADIOI_DDIO_Afile *af = j->af;
    int flag = 0;

    if (j->state == ST_AGREE) {
        if (af->chead != j)
            return;     /* an earlier collective of this file agrees first */
        j->in[0] = j->e.errnum != 0;
        j->in[1] = j->rank;
        MPI_Iallreduce(j->in, j->out, 1, MPI_2INT, MPI_MAXLOC, af->comm, &j->mreq);
        j->state = ST_REDUCE;
    }
    if (j->state == ST_REDUCE) {
        MPI_Test(&j->mreq, &flag, MPI_STATUS_IGNORE);
        if (!flag)
            return;
        if (!j->out[0])
            j->state = ST_FINISH;
        else {
            j->first = j->e;
            MPI_Ibcast(&j->first, sizeof(j->first), MPI_BYTE, j->out[1], af->comm, &j->mreq);
            j->state = ST_BCAST;
        }
    }
    if (j->state == ST_BCAST) {
        MPI_Test(&j->mreq, &flag, MPI_STATUS_IGNORE);
        if (!flag)
            return;
        if (!j->e.errnum)
            ddio_err_set(&j->e, j->first.errnum, "ddio: collective failed on rank %d: "
                               "%s", j->out[1], j->first.msg);
        j->state = ST_FINISH;
    }
    af->chead = j->cnext;
    if (!af->chead)
        af->ctail = NULL;
}

static void advance(job * j)
{
    if (j->state == ST_RUN) {
        if (!job_done(j))
            return;
        j->e = j->op.e.errnum ? j->op.e : j->xe;
        j->state = j->op.coll ? ST_AGREE : ST_FINISH;
    }
    if (j->state != ST_FINISH)
        agree(j);
    if (j->state == ST_FINISH)
        finish(j);
}

/* new requests join the outstanding list (and their file's collective
 * order) in call order */
static void take_incoming(void)
{
    job **tail = &pq.head;

    pthread_mutex_lock(&in.mu);
    job *n = in.head;
    in.head = in.tail = NULL;
    pthread_mutex_unlock(&in.mu);
    while (*tail)
        tail = &(*tail)->onext;
    *tail = n;
    for (; n; n = n->onext)
        if (n->op.coll) {
            if (n->af->ctail)
                n->af->ctail->cnext = n;
            else
                n->af->chead = n;
            n->af->ctail = n;
        }
}

/* advance every outstanding request; 1 if this thread did it */
static int progress_all(void)
{
    if (pthread_mutex_trylock(&pq.mu))
        return 0;       /* another thread is advancing them */
    take_incoming();
    for (job ** pp = &pq.head; *pp;) {
        job *j = *pp;
        advance(j);
        if (j->state == ST_COMPLETE)
            *pp = j->onext;
        else
            pp = &j->onext;
    }
    pthread_mutex_unlock(&pq.mu);
    return 1;
}

/* ---- the generalized request --------------------------------------------------- */

static void job_free(job * j)
{
    if (j->op.d.root)
        ddio_node_free(j->op.d.root);
    ADIOI_DDIO_Mem_free(&j->op.mem);
    free(j->op.involved);
    free(j);
}

#if ADIOI_DDIO_HAVE_GREQX

static int query_fn(void *state, MPI_Status * status)
{
    job *j = state;
    MPI_Status_set_elements_x(status, MPI_BYTE, (MPI_Count) j->bytes);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return j->error_code;
}

static int free_fn(void *state)
{
    job_free(state);
    return MPI_SUCCESS;
}

static int cancel_fn(void *state, int complete)
{
    (void) state;
    (void) complete;
    return MPI_SUCCESS; /* a transfer under way cannot be taken back */
}

/* MPI_Wait loops on this: a short nap keeps the waiting rank from taking
 * the CPU from the thread and the servers it waits for */
static int poll_fn(void *state, MPI_Status * status)
{
    job *j = state;
    (void) status;
    progress_all();
    if (j->state != ST_COMPLETE)
        nap(20000);
    return MPI_SUCCESS;
}

static int wait_fn(int count, void **states, double timeout, MPI_Status * status)
{
    (void) timeout;
    (void) status;
    for (int i = 0; i < count; i++)
        while (((job *) states[i])->state != ST_COMPLETE) {
            progress_all();
            if (((job *) states[i])->state != ST_COMPLETE)
                nap(20000);
        }
    return MPI_SUCCESS;
}
#endif

/* ---- starting a request (main thread, inside ROMIO's critical section) ---------- */

static void afile_free(ADIOI_DDIO_Afile * af);

static ADIOI_DDIO_Afile *afile_get(ADIO_File fd, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    ADIOI_DDIO_Afile *af = f->async;
    int n = f->fh.nsrv;

    if (af)
        return af;
    if ((af = calloc(1, sizeof(*af)))) {
        af->comm = MPI_COMM_NULL;
        af->addrs = calloc(n, sizeof(*af->addrs));
        af->ids = calloc(n, sizeof(*af->ids));
        /* the namespace path the file was opened by (a plain path on a
         * ddio mount is not the servers' path) */
        af->sh.path = strdup(f->fh.path);
    }
    if (!af || !af->addrs || !af->ids || !af->sh.path) {
        if (af)
            afile_free(af);
        ddio_err_set(e, ENOMEM, "ddio: out of memory");
        return NULL;
    }
    af->sh.amode = f->fh.amode;
    af->sh.nsrv = n;
    af->sh.stripe = f->fh.stripe;
    af->sh.copies = f->fh.copies;
    af->sh.timeout_ms = f->fh.timeout_ms;
    af->sh.recover_ms = f->fh.recover_ms;
    af->sh.declare_out = f->fh.declare_out;
    af->sh.declare_arg = f->fh.declare_arg;
    af->sh.local_read = f->fh.local_read;
    af->sh.local_write = f->fh.local_write;
    af->sh.xport = f->fh.xport;
    af->sh.renew = 1;
    for (int i = 0; i < n; i++) {
        memcpy(af->addrs[i], f->fh.srv[i].conn->addr, sizeof(af->addrs[i]));
        memcpy(af->ids[i], f->fh.srv[i].conn->id, DDIO_ID_LEN);
    }
    f->async = af;
    return af;
}

static job *job_new(ADIO_File fd, ADIOI_DDIO_Iop * op, const char *myname)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    job *j = calloc(1, sizeof(*j));
    int nprocs = 1;

    if (!j)
        return NULL;
    j->kind = JOB_XFER;
    j->op = *op;
    j->myname = myname;
    j->timeout_ms = f->fh.timeout_ms;
    j->x.op = op->op;
    j->x.flags = ADIOI_DDIO_Xfer_flags(f);
    j->x.nparticipants = 1;
    if (op->coll) {
        MPI_Comm_rank(fd->comm, &j->rank);
        MPI_Comm_size(fd->comm, &nprocs);
        j->x.flags |= DDIO_XF_COLLECTIVE;
        j->x.group = f->group;
        j->x.seq = ++f->seq;    /* every rank, in call order */
        j->x.nparticipants = (uint32_t) nprocs;
        j->x.rank = (uint32_t) j->rank;
    }
    j->x.fdesc = &j->op.d;
    j->x.mem = &j->op.mem;
    return j;
}

#if ADIOI_DDIO_HAVE_GREQX
static int greq_make(job * j)
{
    if (!greq_class_made) {
        if (MPIX_Grequest_class_create(query_fn, free_fn, cancel_fn, poll_fn, wait_fn,
                                       &greq_class) != MPI_SUCCESS)
            return -1;
        greq_class_made = 1;
    }
    return MPIX_Grequest_class_allocate(greq_class, j, &j->greq) == MPI_SUCCESS ? 0 : -1;
}

static void hand_back(ADIO_File fd, job * j, MPI_Request * request, int *error_code)
{
    (void) fd;
    *request = j->greq;
    *error_code = MPI_SUCCESS;
}
#else
static int greq_make(job * j)
{
    j->greq = MPI_REQUEST_NULL;
    return 0;
}

/* no poll function to progress it from MPI_Test/MPI_Wait: run it to its
 * end here, then a completed request with its byte count, or the error */
static void hand_back(ADIO_File fd, job * j, MPI_Request * request, int *error_code)
{
    while (j->state != ST_COMPLETE) {
        progress_all();
        if (j->state != ST_COMPLETE)
            nap(20000);
    }
    *error_code = j->error_code;
    if (*error_code == MPI_SUCCESS)
        MPIO_Completed_request_create(&fd, (MPI_Offset) j->bytes, error_code, request);
    job_free(j);
}
#endif

static void iop_free(ADIOI_DDIO_Iop * op)
{
    if (op->d.root)
        ddio_node_free(op->d.root);
    ADIOI_DDIO_Mem_free(&op->mem);
    free(op->involved);
    memset(op, 0, sizeof(*op));
}

void ADIOI_DDIO_Async_start(ADIO_File fd, ADIOI_DDIO_Iop * op, MPI_Request * request,
                            int *error_code, const char *myname)
{
    ADIOI_DDIO_Err e;
    ADIOI_DDIO_Afile *af;
    job *j = NULL;

    memset(&e, 0, sizeof(e));
    *request = MPI_REQUEST_NULL;
    /* buffered writes go before the request (its bytes may overlap them);
     * a collective's rank that fails here takes part with nothing */
    if (ADIOI_DDIO_Cache_flush(fd, op->op == DDIO_X_WRITE, op->coll && !op->e.errnum ? &op->e : &e)
        && !op->coll) {
        iop_free(op);
        *error_code = ADIOI_DDIO_Err_code(myname, &e);
        return;
    }
    af = thread_start(&e) ? NULL : afile_get(fd, &e);
    /* collective on every rank, at the first nonblocking collective */
    if (op->coll && af && af->comm == MPI_COMM_NULL)
        MPI_Comm_dup(fd->comm, &af->comm);
    if (af && !(j = job_new(fd, op, myname)))
        ddio_err_set(&e, ENOMEM, "ddio: out of memory");
    if (j && greq_make(j)) {
        ddio_err_set(&e, ENOMEM, "ddio: cannot allocate a generalized request");
        free(j);
        j = NULL;
    }
    if (!j) {
        iop_free(op);
        *error_code = ADIOI_DDIO_Err_code(myname, &e);
        return;
    }
    memset(op, 0, sizeof(*op));     /* the job owns it now */
    j->af = af;
    j->state = ST_RUN;
    pthread_mutex_lock(&in.mu);
    af->pending++;
    if (in.tail)
        in.tail->onext = j;
    else
        in.head = j;
    in.tail = j;
    pthread_mutex_unlock(&in.mu);
    enqueue(j);
    hand_back(fd, j, request, error_code);
}

/* ---- close -------------------------------------------------------------------------- */

static int af_pending(ADIOI_DDIO_Afile * af)
{
    return read_locked(&in.mu, &af->pending);
}

static void afile_free(ADIOI_DDIO_Afile * af)
{
    if (af->comm != MPI_COMM_NULL)
        MPI_Comm_free(&af->comm);
    ddio_fh_free(&af->sh);
    free(af->addrs);
    free(af->ids);
    free(af);
}

void ADIOI_DDIO_Async_close(ADIO_File fd, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    ADIOI_DDIO_Afile *af = f ? f->async : NULL;
    job c;
    int64_t deadline;

    if (!af)
        return;
    /* MPI requires every request to be completed before close; one that
     * was not is driven to its end here, within the deadline */
    deadline = ddio_now_ms() + 2 * (int64_t) f->fh.timeout_ms;
    while (af_pending(af) > 0 && ddio_now_ms() < deadline)
        if (!progress_all() || af_pending(af) > 0)
            nap(100000);
    f->async = NULL;
    if (af_pending(af) > 0) {   /* still referenced: keep it */
        ddio_err_set(e, EBUSY, "ddio: %d nonblocking request(s) on the file were "
                           "still pending at close", af_pending(af));
        return;
    }
    /* the thread owns its connections: it closes its own handles */
    memset(&c, 0, sizeof(c));
    c.kind = JOB_CLOSE;
    c.af = af;
    enqueue(&c);
    while (!job_done(&c)) {
        pthread_mutex_lock(&aq.mu);
        if (!c.done)
            pthread_cond_wait(&aq.idle, &aq.mu);
        pthread_mutex_unlock(&aq.mu);
    }
    afile_free(af);
}
