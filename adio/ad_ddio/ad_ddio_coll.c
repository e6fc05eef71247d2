/* Collective reads and writes: the disk-directed path (Kotz's Fig. 2c;
 * docs/DESIGN.md section 5.1). ReadStridedColl, WriteStridedColl and their
 * nonblocking forms; with romio_ddio_collective=twophase they are ROMIO's
 * generic two-phase (over our independent entries), kept as the baseline.
 *
 * Each rank describes its own part of the call exactly as independent I/O
 * does (file view + position + length -> one compact descriptor) and sends
 * it in ONE XFER to EVERY server of the file, even with nothing to move
 * (count 0, zero-size type, empty view): a server runs the collective only
 * once it holds all P descriptors of (group, seq). The servers then stream
 * the union of the blocks in disk order, PUT read data straight into each
 * rank's buffer and GET write data from it (common/ddio_core_xfer.c); no rank ever
 * touches another rank's bytes. Overlapping writers: the higher rank's
 * bytes win (the servers resolve it).
 *
 * Contiguous calls: when every rank's part is one range of the file from
 * contiguous memory and no two ranges overlap (IOR's collective mode), the
 * disk-directed schedule buys nothing (each server already sees whole
 * ranges in order) and costs the gate: each rank sends its own range as
 * independent I/O does (to the servers holding it), and the second
 * agreement below still fails the call everywhere if it failed anywhere.
 * Not in atomic mode. What such a call costs beyond the same bytes moved
 * independently is its two agreements, each a round of messages among
 * the ranks (4 ranks on 2 cores: about 10 us each with the ranks polling,
 * 120-380 us when they nap while servers work): the agreements around a
 * part up to COLL_SMALL_PART therefore poll (bench/small-coll.sh).
 *
 * With ROMIO's romio_cb_read / romio_cb_write = disable a collective is
 * each rank's independent call, without communication, as in ROMIO
 * (coll_indep below).
 *
 * Speculation (romio_ddio_coll_speculate=enable; off by default: the call
 * then has no barrier at entry, which MPI does not promise but ROMIO's
 * collectives, starting with an allgather, give, and programs that read
 * and then write collectively without MPI's sync-barrier-sync rely on it):
 * once a call's parts were all plain ranges (agreed below), the next call
 * under the same view and atomicity goes first and agrees after: each
 * rank sends its own part at once (a range as above, anything else as
 * one XFER of its descriptor, as independent I/O would), then ONE
 * allgather of every rank's outcome, bounds and shape fails the call
 * everywhere if it failed anywhere and says whether the speculation still
 * holds for the next call. Writes whose parts turned out to overlap went
 * in no particular order: the call is then done again through the gate,
 * where the higher rank wins. So a series of IOR-style collective calls
 * costs one small collective each, as ROMIO's (its allgather of offsets),
 * not two. set_view (which bumps view_gen) and a failure end it.
 *
 * Otherwise two small collectives on fd->comm per call:
 *  - before sending, an allgather of "did this rank describe its part" and
 *    of its range when contiguous:
 *    it is the barrier that keeps a late rank from tripping the servers'
 *    gate deadline (the gate waits romio_ddio_timeout from the FIRST
 *    arrival, and MPI lets ranks enter a collective arbitrarily far apart;
 *    after this, they send within microseconds of each other), and it
 *    keeps a rank that could not build its descriptor (out of memory, a
 *    romio_ddio_check_desc mismatch) from leaving the others waiting at the
 *    gate: then nobody sends and everyone fails with that rank's reason;
 *  - after the transfer, an allreduce of "did it fail here", so an error on
 *    one server or one connection fails the call on every rank; the first
 *    failing rank's message is broadcast only when something failed.
 * The per-file sequence number is bumped by every call on every rank
 * (collective calls are made in the same order on all ranks), so it is
 * the same everywhere without communication.
 *
 * DDIO_TIMING=1 in the environment prints, per call and rank, where the
 * time went (describe / first agreement / transfer / second agreement;
 * MPI_File_sync prints its barrier / server sync / broadcast): how the
 * benchmark's per-pattern profile is taken. */
#include "ad_ddio.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One rank's part of one collective call. */
typedef struct coll_call {
    ADIO_File fd;
    ADIOI_DDIO_File *f;
    uint32_t op;
    int file_ptr_type;
    ADIO_Offset offset;
    struct ddio_desc d;         /* file side */
    int owns_root;
    ADIOI_DDIO_Mem mem;         /* memory side */
    uint64_t len;               /* bytes requested */
    uint64_t bytes;             /* bytes transferred */
    int rank, nprocs;
    ADIOI_DDIO_Err e;
    double t[5];                /* MPI_Wtime at each phase boundary */
} coll_call;

/* spin before napping in the agreements while no server works for us */
#define COLL_SPIN_US 200

/* A plain-range part up to this size (the largest inline write) leaves the
 * servers little to do once this rank has its DONE when the others' parts
 * are as small (IOR's collective mode; if not, the spin gives up after
 * COLL_SPIN_US), so the agreements around it spin as after a part moved
 * here. Napping there cost each agreement its wake-ups: 4 ranks, 2
 * servers on 2 cores, same-host shortcuts off, 16-64 KiB calls at a load
 * of about 3 (DDIO_TIMING medians) 120-380 us per agreement napping,
 * 30-260 us spinning; at load 10 no difference showed. */
#define COLL_SMALL_PART (64 << 10)

/* the agreements' wait: a short spin after a small part or one this rank
 * moved itself */
static void coll_spin(const ADIOI_DDIO_File * f)
{
    ADIOI_DDIO_Nap_spin(f->coll_quick ? COLL_SPIN_US : 0);
}

static void coll_init(coll_call * c, ADIO_File fd, uint32_t op, int file_ptr_type,
                      ADIO_Offset offset)
{
    memset(c, 0, sizeof(*c));
    c->fd = fd;
    c->f = fd->fs_ptr;
    c->op = op;
    c->file_ptr_type = file_ptr_type;
    c->offset = offset;
    MPI_Comm_rank(fd->comm, &c->rank);
    MPI_Comm_size(fd->comm, &c->nprocs);
}

/* The descriptor and memory layout of this rank's part; an empty stream
 * (length 0) when it moves nothing. */
static void coll_describe(coll_call * c, const void *buf, int count, MPI_Datatype datatype)
{
    MPI_Count size, ftsize;
    int rc;

    /* this rank's buffered writes reach the servers before the collective */
    ADIOI_DDIO_Cache_flush(c->fd, c->op == DDIO_X_WRITE, &c->e);
    MPI_Type_size_x(datatype, &size);
    MPI_Type_size_x(c->fd->filetype, &ftsize);
    c->len = (uint64_t) size *(uint64_t) count;
    c->mem.buf = (char *) buf;
    c->mem.contig = 1;
    if (c->len == 0 || ftsize == 0) {
        c->len = 0;
        c->d.extent = 1;        /* root NULL: sent as a 1-byte leaf, length 0 */
        return;
    }
    rc = ADIOI_DDIO_Mem_init(c->fd, &c->mem, buf, count, datatype, &c->e);
    if (!rc)
        rc = ADIOI_DDIO_File_desc(c->fd, c->file_ptr_type, c->offset, c->len, &c->d,
                                  &c->owns_root, &c->e);
    if (rc && !c->e.errnum)     /* (a failed descriptor check has explained itself) */
        ddio_err_set(&c->e, -rc, "ddio: rank %d cannot describe its part of the "
                           "collective (%s)", c->rank, strerror(-rc));
    else if (!rc)
        ADIOI_DDIO_Check_desc(c->fd, c->file_ptr_type, c->offset, &c->d, &c->e);
}

/* Every rank learns whether any rank failed; those that did not get the
 * lowest failing rank's message (broadcast only on that path). Returns
 * non-zero when the call failed somewhere. */
static int coll_agree(coll_call * c)
{
    return ADIOI_DDIO_Agree_err(c->fd, &c->e);
}

/* this rank's part as one file range [*lo, *hi) from contiguous memory
 * (an empty part is one too); 0 if it is not */
static int coll_range(coll_call * c, int64_t * lo, int64_t * hi)
{
    *lo = *hi = 0;
    if (c->len == 0)
        return 1;
    if (!c->mem.contig || !c->d.root)
        return 0;
    ddio_desc_bounds(&c->d, lo, hi);
    return (uint64_t) (*hi - *lo) == c->len;
}

static int range_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* this rank's entry in an agreement: {lo, hi, state}, state 2 when it
 * failed, 1 when its part is a plain range [lo, hi) that may go as its own
 * XFER, 0 otherwise ([lo, hi) then its part's bounds, empty if none); plus
 * SPEC_WANTED when its hint asks for speculation (every rank's must: a rank
 * that speculated alone would skip a collective the others make) */
#define SPEC_WANTED 4
static void coll_mine(coll_call * c, int64_t * mine)
{
    int allowed = !c->fd->atomicity && c->f->coll_ranges != ADIOI_HINT_DISABLE;
    mine[0] = mine[1] = 0;
    if (c->e.errnum)
        mine[2] = 2;
    else if (coll_range(c, &mine[0], &mine[1]))
        mine[2] = allowed;
    else {
        mine[2] = 0;
        if (c->len && c->d.root)
            ddio_desc_bounds(&c->d, &mine[0], &mine[1]);
    }
    if (c->f->coll_speculate == ADIOI_HINT_ENABLE)
        mine[2] |= SPEC_WANTED;
}

/* The allgather of every rank's coll_mine: *ranges when every part may go
 * as its own range, *apart when no two parts' bounds overlap (empty parts
 * overlap nothing; sorted by start, a pair of neighbours overlaps if any
 * pair does), *spec when every rank asked for speculation. Returns the
 * lowest failed rank, or -1. */
static int coll_gather(coll_call * c, int *ranges, int *apart, int *spec)
{
    int64_t mine[3], *all = ADIOI_Malloc(sizeof(int64_t) * 3 * (size_t) c->nprocs);
    int failed = -1, n = 0, i;

    coll_mine(c, mine);
    ADIOI_DDIO_Nap_allgather(mine, all, 3, MPI_INT64_T, c->fd->comm);
    *ranges = *apart = *spec = 1;
    for (i = 0; i < c->nprocs; i++) {
        *spec &= (all[3 * i + 2] & SPEC_WANTED) != 0;
        all[3 * i + 2] &= ~SPEC_WANTED;
        if (all[3 * i + 2] == 2 && failed < 0)
            failed = i;
        if (all[3 * i + 2] != 1)
            *ranges = 0;
        if (all[3 * i + 1] > all[3 * i])
            memmove(&all[3 * n++], &all[3 * i], sizeof(int64_t) * 3);
    }
    qsort(all, (size_t) n, sizeof(int64_t) * 3, range_cmp);
    for (i = 1; i < n; i++)
        if (all[3 * i] < all[3 * (i - 1) + 1])
            *apart = 0;
    ADIOI_Free(all);
    return failed;
}

/* The first agreement: everyone's outcome (as coll_agree) and, in the same
 * allgather, whether every part is a range and none overlaps another:
 * *indep; *spec: every rank asked for speculation too. Non-zero when the
 * call failed somewhere. */
static int coll_agree_first(coll_call * c, int *indep, int *spec)
{
    int ranges, apart, failed = coll_gather(c, &ranges, &apart, spec);

    *indep = ranges && apart;
    if (failed < 0)
        return 0;
    ADIOI_DDIO_Adopt_err(c->fd, &c->e, failed);
    return 1;
}

/* a contiguous part, moved as independent I/O would (not through the
 * client cache: a collective is a point others may look after). One
 * participant: no gate; the flag makes the servers count it (and fire their
 * fault points) as the collective it is, and (group, seq) lets a rank that
 * fails cancel every rank's part of the call. */
static void coll_range_transfer(coll_call * c, uint64_t seq)
{
    int64_t lo, hi;
    int local = 1;              /* (an empty part too) */

    coll_range(c, &lo, &hi);
    if (hi > lo)
        ddio_xfer_range_of(&c->f->fh, c->op, DDIO_XF_COLLECTIVE | ADIOI_DDIO_Xfer_flags(c->f),
                           c->f->group, seq, (uint64_t) lo, c->mem.buf, (uint64_t) (hi - lo),
                           &c->bytes, &local, &c->e);
    /* the agreements after it may spin: the servers are not ours to wait
     * for, or have little left to do */
    c->f->coll_quick = local || hi - lo <= COLL_SMALL_PART;
    coll_spin(c->f);
}

/* alone: this rank's part as the call's only participant (speculation) */
static void coll_transfer(coll_call * c, uint64_t seq, int alone)
{
    ADIOI_DDIO_Xfer x = {.f = &c->f->fh,.op = c->op,
        .flags = DDIO_XF_COLLECTIVE | ADIOI_DDIO_Xfer_flags(c->f),
        .group = c->f->group,.seq = seq,
        .nparticipants = alone ? 1 : (uint32_t) c->nprocs,.rank = alone ? 0 : (uint32_t) c->rank,
        .fdesc = &c->d,.mem = &c->mem
    };
    /* NULL: every server of the file, whether it holds our bytes or not
     * (each waits for all participants). A communicator of one has no
     * other participant: only the servers holding its bytes take part, as
     * in independent I/O (a 1-process program's small collective calls
     * would otherwise cost a round trip to every server). */
    char *inv = alone || c->nprocs == 1 ? ddio_xfer_involved(&c->f->fh, &c->d) : NULL;
    ddio_xfer_run(&x, inv, &c->e);
    free(inv);
    c->bytes = x.bytes;
    c->f->coll_quick = 0;
    coll_spin(c->f);
}

static void coll_report_timing(const coll_call * c, uint64_t seq, int spec)
{
    if (!ADIOI_DDIO_Timing_on())
        return;
    fprintf(stderr, "ddio-timing rank %d %s seq %llu bytes %llu describe_ms %.2f agree_ms %.2f "
            "xfer_ms %.2f agree2_ms %.2f%s%s\n", c->rank, c->op == DDIO_X_WRITE ? "write" : "read",
            (unsigned long long) seq, (unsigned long long) c->bytes,
            (c->t[1] - c->t[0]) * 1e3, (c->t[2] - c->t[1]) * 1e3, (c->t[3] - c->t[2]) * 1e3,
            (c->t[4] - c->t[3]) * 1e3, spec ? " speculative" : "", c->e.errnum ? " failed" : "");
}

/* the same on every rank: set by agreed outcomes only */
static int coll_spec_on(const coll_call * c)
{
    return c->f->coll_spec && c->f->coll_spec_gen == c->f->view_gen && !c->fd->atomicity;
}

static void coll_spec_set(coll_call * c, int on)
{
    c->f->coll_spec = on;
    c->f->coll_spec_gen = c->f->view_gen;
}

/* The speculative call (see the top): this rank's part first, then the one
 * agreement; overlapping writes again through the gate. */
static void coll_spec_call(coll_call * c, uint64_t seq)
{
    int64_t lo, hi;
    int ranges, apart, spec, failed;

    c->t[2] = c->t[1];          /* no first agreement */
    if (!c->e.errnum && c->len) {
        if (coll_range(c, &lo, &hi))
            coll_range_transfer(c, seq);
        else
            coll_transfer(c, seq, 1);
    }
    c->t[3] = MPI_Wtime();
    failed = coll_gather(c, &ranges, &apart, &spec);
    if (failed >= 0)
        ADIOI_DDIO_Adopt_err(c->fd, &c->e, failed);
    else if (c->op == DDIO_X_WRITE && !apart) {
        /* the same on every rank: the seq bump too */
        coll_transfer(c, ++c->f->seq, 0);
        coll_agree(c);
    }
    coll_spec_set(c, failed < 0 && ranges && apart && spec);
    c->t[4] = MPI_Wtime();
}

/* The whole call; returns the bytes transferred (0 on error). */
static uint64_t coll_io(ADIO_File fd, uint32_t op, const void *buf, int count,
                        MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                        ADIO_Status * status, int *error_code, const char *myname)
{
    coll_call c;
    uint64_t seq;
    int indep, spec, spec_wanted;

    coll_init(&c, fd, op, file_ptr_type, offset);
    seq = ++c.f->seq;
    spec = coll_spec_on(&c);
    coll_spin(c.f);
    c.t[0] = MPI_Wtime();
    coll_describe(&c, buf, count, datatype);
    c.t[1] = MPI_Wtime();
    if (spec)
        coll_spec_call(&c, seq);
    else if (!coll_agree_first(&c, &indep, &spec_wanted)) {
        c.t[2] = MPI_Wtime();
        if (indep)
            coll_range_transfer(&c, seq);
        else
            coll_transfer(&c, seq, 0);
        c.t[3] = MPI_Wtime();
        coll_spec_set(&c, !coll_agree(&c) && indep && spec_wanted);
        c.t[4] = MPI_Wtime();
    } else {
        coll_spec_set(&c, 0);
        c.t[2] = c.t[3] = c.t[4] = MPI_Wtime();
    }
    ADIOI_DDIO_Nap_spin(0);     /* sync, close, open nap as before */
    coll_report_timing(&c, seq, spec);
    if (!c.e.errnum) {
        /* as ROMIO's collectives: the pointer moves by the request, also
         * when a read stops short at end of file */
        ADIOI_DDIO_Advance_fp(fd, file_ptr_type, &c.d, c.len);
        if (op == DDIO_X_WRITE && c.len)
            ADIOI_DDIO_Set_dirty(fd, 1);
#ifdef HAVE_STATUS_SET_BYTES
        MPIR_Status_set_bytes(status, datatype, (MPI_Count) c.bytes);
#endif
    }
    fd->fp_sys_posn = -1;
    if (c.owns_root && c.d.root)
        ddio_node_free(c.d.root);
    ADIOI_DDIO_Mem_free(&c.mem);
    *error_code = ADIOI_DDIO_Err_code(myname, &c.e);
    return c.e.errnum ? 0 : c.bytes;
}

/* ROMIO's own hints romio_cb_read / romio_cb_write = disable: the call is
 * this rank's independent read or write, with no communication at all, as
 * ROMIO's ADIOI_GEN_{Read,Write}StridedColl make it with them. So there is
 * no agreement (each rank gets its own error), no barrier at entry, and
 * overlapping writes land in no particular order: what a program whose
 * ranks' parts are apart (IOR's collective mode) may ask for, to pay for a
 * collective what the same bytes cost independently. Not in atomic mode,
 * where the call keeps its gate (atomicity is per call across ranks). */
static int coll_indep_hint(ADIO_File fd, uint32_t op)
{
    int h = op == DDIO_X_WRITE ? fd->hints->cb_write : fd->hints->cb_read;
    return h == ADIOI_HINT_DISABLE && !fd->atomicity;
}

/* the offset ADIO_{Read,Write}Contig take, and whether both sides are
 * contiguous (as ROMIO's independent entry points decide) */
static int coll_indep_contig(ADIO_File fd, MPI_Datatype datatype, int file_ptr_type,
                             ADIO_Offset offset, ADIO_Offset * off)
{
    int buf_contig, ft_contig;
    ADIOI_Datatype_iscontig(datatype, &buf_contig);
    ADIOI_Datatype_iscontig(fd->filetype, &ft_contig);
    *off = file_ptr_type == ADIO_EXPLICIT_OFFSET ? fd->disp + fd->etype_size * offset : 0;
    return buf_contig && ft_contig;
}

static void coll_indep(ADIO_File fd, uint32_t op, void *buf, int count, MPI_Datatype datatype,
                       int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                       int *error_code)
{
    ADIO_Offset off;
    if (coll_indep_contig(fd, datatype, file_ptr_type, offset, &off)) {
        if (op == DDIO_X_WRITE)
            ADIO_WriteContig(fd, buf, count, datatype, file_ptr_type, off, status, error_code);
        else
            ADIO_ReadContig(fd, buf, count, datatype, file_ptr_type, off, status, error_code);
    } else if (op == DDIO_X_WRITE)
        ADIO_WriteStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
    else
        ADIO_ReadStrided(fd, buf, count, datatype, file_ptr_type, offset, status, error_code);
}

static void coll_iindep(ADIO_File fd, uint32_t op, void *buf, int count, MPI_Datatype datatype,
                        int file_ptr_type, ADIO_Offset offset, ADIO_Request * request,
                        int *error_code)
{
    ADIO_Offset off;
    if (coll_indep_contig(fd, datatype, file_ptr_type, offset, &off)) {
        if (op == DDIO_X_WRITE)
            ADIO_IwriteContig(fd, buf, count, datatype, file_ptr_type, off, request, error_code);
        else
            ADIO_IreadContig(fd, buf, count, datatype, file_ptr_type, off, request, error_code);
    } else if (op == DDIO_X_WRITE)
        ADIO_IwriteStrided(fd, buf, count, datatype, file_ptr_type, offset, request,
                           error_code);
    else
        ADIO_IreadStrided(fd, buf, count, datatype, file_ptr_type, offset, request, error_code);
}

void ADIOI_DDIO_ReadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status * status,
                                int *error_code)
{
    static char myname[] = "ADIOI_DDIO_READSTRIDEDCOLL";
    if (((ADIOI_DDIO_File *) fd->fs_ptr)->collective == ADIOI_DDIO_COLL_TWOPHASE) {
        ADIOI_DDIO_Flat_view_install(fd);       /* never ROMIO's flattening */
        ADIOI_GEN_ReadStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                  error_code);
        return;
    }
    if (coll_indep_hint(fd, DDIO_X_READ)) {
        coll_indep(fd, DDIO_X_READ, buf, count, datatype, file_ptr_type, offset, status,
                   error_code);
        return;
    }
    coll_io(fd, DDIO_X_READ, buf, count, datatype, file_ptr_type, offset, status, error_code,
            myname);
}

void ADIOI_DDIO_WriteStridedColl(ADIO_File fd, const void *buf, int count,
                                 MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Status * status, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_WRITESTRIDEDCOLL";
    if (((ADIOI_DDIO_File *) fd->fs_ptr)->collective == ADIOI_DDIO_COLL_TWOPHASE) {
        ADIOI_DDIO_Flat_view_install(fd);       /* never ROMIO's flattening */
        ADIOI_GEN_WriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset, status,
                                   error_code);
        return;
    }
    if (coll_indep_hint(fd, DDIO_X_WRITE)) {
        coll_indep(fd, DDIO_X_WRITE, (void *) buf, count, datatype, file_ptr_type, offset,
                   status, error_code);
        return;
    }
    coll_io(fd, DDIO_X_WRITE, buf, count, datatype, file_ptr_type, offset, status, error_code,
            myname);
}

/* Nonblocking collectives (MPI_File_iread_all, ..._at_all): described here,
 * run by the progress thread, agreed on from MPI_Test/MPI_Wait
 * (ad_ddio_async.c). The pointer moves by the request at the call. */
static void coll_istart(ADIO_File fd, uint32_t op, const void *buf, int count,
                        MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                        ADIO_Request * request, int *error_code, const char *myname)
{
    coll_call c;
    ADIOI_DDIO_Iop iop;

    memset(&iop, 0, sizeof(iop));
    coll_init(&c, fd, op, file_ptr_type, offset);
    coll_describe(&c, buf, count, datatype);
    if (!c.e.errnum && !c.owns_root && c.d.root) {
        c.d.root = ddio_node_clone(c.d.root);   /* the view's tree may change meanwhile */
        c.owns_root = 1;
        if (!c.d.root)
            ddio_err_set(&c.e, ENOMEM, "ddio: out of memory");
    }
    iop.op = op;
    iop.coll = 1;
    if (c.e.errnum) {
        /* take part with nothing, so the servers' gate stays whole; the
         * agreement then fails the call on every rank with this reason */
        if (c.d.root && c.owns_root)
            ddio_node_free(c.d.root);
        ADIOI_DDIO_Mem_free(&c.mem);
        iop.d.extent = 1;
        iop.mem.contig = 1;
        iop.e = c.e;
    } else {
        iop.d = c.d;
        iop.mem = c.mem;
        ADIOI_DDIO_Advance_fp(fd, file_ptr_type, &c.d, c.len);
        if (op == DDIO_X_WRITE && c.len)
            ADIOI_DDIO_Set_dirty(fd, 1);
    }
    fd->fp_sys_posn = -1;
    ADIOI_DDIO_Async_start(fd, &iop, request, error_code, myname);
}

void ADIOI_DDIO_IreadStridedColl(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset,
                                 ADIO_Request * request, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_IREADSTRIDEDCOLL";

    if (((ADIOI_DDIO_File *) fd->fs_ptr)->collective == ADIOI_DDIO_COLL_TWOPHASE) {
        ADIOI_DDIO_Flat_view_install(fd);       /* never ROMIO's flattening */
        ADIOI_DDIO_GEN_IreadStridedColl(fd, buf, count, datatype, file_ptr_type, offset,
                                        request, error_code);
        return;
    }
    if (coll_indep_hint(fd, DDIO_X_READ)) {
        coll_iindep(fd, DDIO_X_READ, buf, count, datatype, file_ptr_type, offset, request,
                    error_code);
        return;
    }
    coll_istart(fd, DDIO_X_READ, buf, count, datatype, file_ptr_type, offset, request,
                error_code, myname);
}

void ADIOI_DDIO_IwriteStridedColl(ADIO_File fd, const void *buf, int count,
                                  MPI_Datatype datatype, int file_ptr_type, ADIO_Offset offset,
                                  ADIO_Request * request, int *error_code)
{
    static char myname[] = "ADIOI_DDIO_IWRITESTRIDEDCOLL";

    if (((ADIOI_DDIO_File *) fd->fs_ptr)->collective == ADIOI_DDIO_COLL_TWOPHASE) {
        ADIOI_DDIO_Flat_view_install(fd);       /* never ROMIO's flattening */
        ADIOI_DDIO_GEN_IwriteStridedColl(fd, buf, count, datatype, file_ptr_type, offset,
                                         request, error_code);
        return;
    }
    if (coll_indep_hint(fd, DDIO_X_WRITE)) {
        coll_iindep(fd, DDIO_X_WRITE, (void *) buf, count, datatype, file_ptr_type, offset,
                    request, error_code);
        return;
    }
    coll_istart(fd, DDIO_X_WRITE, buf, count, datatype, file_ptr_type, offset, request,
                error_code, myname);
}
