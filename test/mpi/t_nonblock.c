/* Nonblocking MPI-IO: results and overlap.
 *
 *   t_nonblock FILE
 *     Writes FILE and FILE.2 with every nonblocking form (iwrite_at,
 *     iwrite with a strided view and the individual pointer moved at the
 *     call, iwrite_all from a strided memory type, iwrite_at_all, several
 *     requests outstanding on one file and on two files, completed by
 *     MPI_Wait, MPI_Waitall and MPI_Test loops), reads everything back with
 *     the matching iread forms and checks bytes, MPI_Get_count and the file
 *     pointers, and a short read at end of file. The harness compares the
 *     files with the same run on ufs:.
 *
 *   t_nonblock overlap MIB FILE
 *     ddio: on throttled servers. Per case, times the blocking operation
 *     (t_io), then starts the nonblocking one, computes (busy loop) for
 *     t_io, with MPI_Test calls every millisecond or with no MPI call at
 *     all, and waits. Overlap means: the call returns at once (< 25% of
 *     t_io) and compute + wait takes well under the sum (< 80% of 2 t_io).
 *     Cases: iwrite_at_all, iread_at_all, iwrite_at, iread_at, and three
 *     requests outstanding at once on two files. MIB per rank per case. */
#include "tutil.h"
#include <unistd.h>

#define REC 8           /* region B: 8-byte records, cyclic over ranks */
#define CREC 1000       /* region C: 1000-byte records, cyclic over ranks */

static MPI_Offset B;    /* bytes per rank per region */

static void fill(unsigned char *p, uint64_t n, uint64_t seed)
{
    for (uint64_t i = 0; i < n; i++)
        p[i] = t_byte(seed, i);
}

static void check(const unsigned char *p, uint64_t n, uint64_t seed, const char *what)
{
    for (uint64_t i = 0; i < n; i++)
        T_ASSERT(p[i] == t_byte(seed, i), "%s: byte %llu is %d, want %d", what,
                 (unsigned long long) i, p[i], t_byte(seed, i));
}

static void expect_count(MPI_Status * st, MPI_Datatype t, int want, const char *what)
{
    int n = -1;
    MPI_Get_count(st, t, &n);
    T_ASSERT(n == want, "%s: MPI_Get_count %d, want %d", what, n, want);
}

/* wait by MPI_Test, as an application polling between work items */
static void test_loop(MPI_Request * r, MPI_Status * st)
{
    int flag = 0;
    double t0 = MPI_Wtime();
    while (!flag) {
        T_MPI(MPI_Test(r, &flag, st));
        T_ASSERT(MPI_Wtime() - t0 < 120, "MPI_Test never completed");
    }
    T_ASSERT(*r == MPI_REQUEST_NULL, "completed request not freed");
}

/* cyclic records of `rec` bytes: this rank's records of every round */
static MPI_Datatype cyclic_view(int rec)
{
    MPI_Datatype t, r;
    MPI_Type_create_subarray(1, (int[]) {t_size * rec}, (int[]) {rec}, (int[]) {t_rank * rec},
                             MPI_ORDER_C, MPI_BYTE, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint) t_size * rec, &r);
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

/* MPI's sync-barrier-sync: other ranks' writes are visible (ufs: needs it) */
static void settle(MPI_File fh)
{
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
}

static void regions_write(MPI_File fh, MPI_File fh2)
{
    MPI_Offset P = t_size, S = P * (B + 2 * CREC);      /* region stride */
    unsigned char *a = malloc(B), *b = calloc(2 * B, 1), *c = malloc(B), *d = malloc(B),
        *e = malloc(B);
    MPI_Request rq[4];
    MPI_Status st[4];
    MPI_Offset pos;

    /* first every byte of the four regions (ROMIO's data sieving on ufs:
     * would leave garbage in the holes of the strided regions otherwise) */
    unsigned char *pre = malloc(4 * S / P);
    fill(pre, 4 * S / P, 99);
    T_MPI(MPI_File_write_at_all(fh, t_rank * (4 * S / P), pre, (int) (4 * S / P), MPI_BYTE,
                                MPI_STATUS_IGNORE));
    free(pre);
    settle(fh);
    /* A [0, PB): two iwrite_at halves outstanding at once, Waitall */
    fill(a, B, 100 + t_rank);
    T_MPI(MPI_File_iwrite_at(fh, t_rank * B, a, (int) (B / 2), MPI_BYTE, &rq[0]));
    T_MPI(MPI_File_iwrite_at(fh, t_rank * B + B / 2, a + B / 2, (int) (B - B / 2), MPI_BYTE,
                             &rq[1]));
    T_MPI(MPI_Waitall(2, rq, st));
    expect_count(&st[0], MPI_BYTE, (int) (B / 2), "iwrite_at A1");
    expect_count(&st[1], MPI_BYTE, (int) (B - B / 2), "iwrite_at A2");

    /* B from S: iwrite_all, 8-byte cyclic view, from every other 8 bytes */
    MPI_Datatype v8 = cyclic_view(REC), mem;
    MPI_Type_vector((int) (B / REC), REC, 2 * REC, MPI_BYTE, &mem);
    MPI_Type_commit(&mem);
    fill(c, B, 200 + t_rank);
    for (MPI_Offset i = 0; i < B; i++)
        b[(i / REC) * 2 * REC + i % REC] = c[i];
    T_MPI(MPI_File_set_view(fh, S, MPI_BYTE, v8, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_iwrite_all(fh, b, 1, mem, &rq[0]));
    T_MPI(MPI_File_get_position(fh, &pos));
    T_ASSERT(pos == B, "iwrite_all: position %lld right after the call, want %lld",
             (long long) pos, (long long) B);
    T_MPI(MPI_Wait(&rq[0], &st[0]));
    expect_count(&st[0], mem, 1, "iwrite_all B");

    /* C from 2S: two iwrite through the individual pointer, 1000-byte
     * cyclic view: the second continues where the first will end */
    MPI_Datatype v1k = cyclic_view(CREC);
    fill(c, B, 300 + t_rank);
    T_MPI(MPI_File_set_view(fh, 2 * S, MPI_BYTE, v1k, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_iwrite(fh, c, (int) (B / 3), MPI_BYTE, &rq[0]));
    T_MPI(MPI_File_iwrite(fh, c + B / 3, (int) (B - B / 3), MPI_BYTE, &rq[1]));
    test_loop(&rq[1], &st[1]);
    test_loop(&rq[0], &st[0]);
    expect_count(&st[0], MPI_BYTE, (int) (B / 3), "iwrite C1");
    expect_count(&st[1], MPI_BYTE, (int) (B - B / 3), "iwrite C2");
    T_MPI(MPI_File_get_position(fh, &pos));
    T_ASSERT(pos == B, "after two iwrite: position %lld, want %lld", (long long) pos,
             (long long) B);

    /* D from 3S with iwrite_at_all, and FILE.2 with iwrite_at_all and
     * an iwrite_at behind it: three outstanding on two files */
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    fill(d, B, 400 + t_rank);
    fill(e, B, 500 + t_rank);
    T_MPI(MPI_File_iwrite_at_all(fh, 3 * S + t_rank * B, d, (int) B, MPI_BYTE, &rq[0]));
    T_MPI(MPI_File_iwrite_at_all(fh2, t_rank * B, e, (int) B, MPI_BYTE, &rq[1]));
    T_MPI(MPI_File_iwrite_at(fh2, P * B + t_rank * B, d, (int) B, MPI_BYTE, &rq[2]));
    T_MPI(MPI_Waitall(3, rq, st));
    for (int i = 0; i < 3; i++)
        expect_count(&st[i], MPI_BYTE, (int) B, "three outstanding");
    MPI_Type_free(&v8);
    MPI_Type_free(&v1k);
    MPI_Type_free(&mem);
    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
}

static void regions_read(MPI_File fh, MPI_File fh2)
{
    MPI_Offset P = t_size, pos, S = P * (B + 2 * CREC);
    int peer = (t_rank + 1) % t_size;
    unsigned char *a = malloc(B), *b = calloc(2 * B, 1), *c = malloc(B), *d = malloc(B),
        *e = malloc(B);
    MPI_Request rq[3];
    MPI_Status st[3];

    /* A: the next rank's block */
    T_MPI(MPI_File_iread_at(fh, peer * B, a, (int) B, MPI_BYTE, &rq[0]));
    T_MPI(MPI_Wait(&rq[0], &st[0]));
    expect_count(&st[0], MPI_BYTE, (int) B, "iread_at A");
    check(a, B, 100 + peer, "region A");

    /* B: iread_all into every other 8 bytes */
    MPI_Datatype v8 = cyclic_view(REC), mem;
    MPI_Type_vector((int) (B / REC), REC, 2 * REC, MPI_BYTE, &mem);
    MPI_Type_commit(&mem);
    T_MPI(MPI_File_set_view(fh, S, MPI_BYTE, v8, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_iread_all(fh, b, 1, mem, &rq[0]));
    test_loop(&rq[0], &st[0]);
    expect_count(&st[0], mem, 1, "iread_all B");
    for (MPI_Offset i = 0; i < B; i++)
        c[i] = b[(i / REC) * 2 * REC + i % REC];
    check(c, B, 200 + t_rank, "region B");

    /* C: two iread through the individual pointer */
    MPI_Datatype v1k = cyclic_view(CREC);
    T_MPI(MPI_File_set_view(fh, 2 * S, MPI_BYTE, v1k, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_iread(fh, c, (int) (B / 2), MPI_BYTE, &rq[0]));
    T_MPI(MPI_File_iread(fh, c + B / 2, (int) (B - B / 2), MPI_BYTE, &rq[1]));
    T_MPI(MPI_Waitall(2, rq, st));
    check(c, B, 300 + t_rank, "region C");
    T_MPI(MPI_File_get_position(fh, &pos));
    T_ASSERT(pos == B, "after two iread: position %lld, want %lld", (long long) pos,
             (long long) B);

    /* D and FILE.2: three outstanding on two files */
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_iread_at_all(fh, 3 * S + t_rank * B, d, (int) B, MPI_BYTE, &rq[0]));
    T_MPI(MPI_File_iread_at_all(fh2, peer * B, e, (int) B, MPI_BYTE, &rq[1]));
    T_MPI(MPI_File_iread_at(fh2, P * B + peer * B, a, (int) B, MPI_BYTE, &rq[2]));
    T_MPI(MPI_Waitall(3, rq, st));
    check(d, B, 400 + t_rank, "region D");
    check(e, B, 500 + peer, "FILE.2 first half");
    check(a, B, 400 + peer, "FILE.2 second half");

    /* a read across end of file stops short: FILE.2 is 2PB bytes */
    T_MPI(MPI_File_iread_at(fh2, 2 * P * B - 100, a, 200, MPI_BYTE, &rq[0]));
    T_MPI(MPI_Wait(&rq[0], &st[0]));
    expect_count(&st[0], MPI_BYTE, 100, "iread_at across end of file");
    MPI_Type_free(&v8);
    MPI_Type_free(&v1k);
    MPI_Type_free(&mem);
    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
}

static int results(const char *name)
{
    MPI_File fh, fh2;
    char *name2 = t_name(name, ".2");
    MPI_Info info = tm_hints();

    B = 3 * 8 * CREC + 40;      /* several records and stripes, not a multiple of either */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    T_MPI(MPI_File_open(MPI_COMM_WORLD, name2, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh2));
    T_MPI(MPI_File_set_size(fh, 0));
    T_MPI(MPI_File_set_size(fh2, 0));
    regions_write(fh, fh2);
    settle(fh);
    settle(fh2);
    regions_read(fh, fh2);
    T_MPI(MPI_File_close(&fh));
    T_MPI(MPI_File_close(&fh2));
    MPI_Info_free(&info);
    free(name2);
    return t_finish();
}

/* ---- overlap ------------------------------------------------------------------ */

/* busy for `secs` of wall time; poll r with MPI_Test every millisecond */
static void compute(double secs, MPI_Request * r, int nr)
{
    double t0 = MPI_Wtime(), next = t0;
    volatile double x = 1;
    while (MPI_Wtime() - t0 < secs) {
        for (int i = 0; i < 2000; i++)
            x = x * 1.0000001 + 1e-9;
        if (r && MPI_Wtime() >= next) {
            int flag;
            MPI_Status st[3];
            T_MPI(MPI_Testall(nr, r, &flag, st));
            next += 0.001;
        }
    }
}

typedef struct ocase {
    const char *name;
    int nreq;
} ocase;

/* start case k (nonblocking) into r, or run it blocking when r is NULL */
static void run_case(int k, MPI_File fh, MPI_File fh2, unsigned char *buf, MPI_Request * r)
{
    MPI_Offset off = t_rank * B;
    MPI_Status st;
    switch (k) {
        case 0:
            if (r)
                T_MPI(MPI_File_iwrite_at_all(fh, off, buf, (int) B, MPI_BYTE, &r[0]));
            else
                T_MPI(MPI_File_write_at_all(fh, off, buf, (int) B, MPI_BYTE, &st));
            break;
        case 1:
            if (r)
                T_MPI(MPI_File_iread_at_all(fh, off, buf, (int) B, MPI_BYTE, &r[0]));
            else
                T_MPI(MPI_File_read_at_all(fh, off, buf, (int) B, MPI_BYTE, &st));
            break;
        case 2:
            if (r)
                T_MPI(MPI_File_iwrite_at(fh, off, buf, (int) B, MPI_BYTE, &r[0]));
            else
                T_MPI(MPI_File_write_at(fh, off, buf, (int) B, MPI_BYTE, &st));
            break;
        case 3:
            if (r)
                T_MPI(MPI_File_iread_at(fh, off, buf, (int) B, MPI_BYTE, &r[0]));
            else
                T_MPI(MPI_File_read_at(fh, off, buf, (int) B, MPI_BYTE, &st));
            break;
        default:       /* three at once: two collectives on two files, one independent */
            if (r) {
                T_MPI(MPI_File_iwrite_at_all(fh2, off, buf, (int) B / 2, MPI_BYTE, &r[0]));
                T_MPI(MPI_File_iwrite_at_all(fh, off, buf, (int) B / 2, MPI_BYTE, &r[1]));
                T_MPI(MPI_File_iwrite_at(fh2, off + B / 2, buf + B / 2, (int) (B - B / 2),
                                         MPI_BYTE, &r[2]));
            } else {
                T_MPI(MPI_File_write_at_all(fh2, off, buf, (int) B / 2, MPI_BYTE, &st));
                T_MPI(MPI_File_write_at_all(fh, off, buf, (int) B / 2, MPI_BYTE, &st));
                T_MPI(MPI_File_write_at(fh2, off + B / 2, buf + B / 2, (int) (B - B / 2),
                                        MPI_BYTE, &st));
            }
    }
}

static int overlap_case(int k, const ocase * c, MPI_File fh, MPI_File fh2, unsigned char *buf,
                        int with_test)
{
    MPI_Request r[3];
    MPI_Status st[3];
    double t0, t_io, t_call, total;
    int bad;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    run_case(k, fh, fh2, buf, NULL);
    t_io = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &t_io, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    run_case(k, fh, fh2, buf, r);
    t_call = MPI_Wtime() - t0;
    compute(t_io, with_test ? r : NULL, c->nreq);
    T_MPI(MPI_Waitall(c->nreq, r, st));
    total = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &t_call, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    bad = t_call >= 0.25 * t_io || total >= 0.8 * 2 * t_io;
    if (t_rank == 0)
        printf("overlap %-16s %-12s io %.3f s  call %.3f s  compute %.3f s  compute+wait "
               "%.3f s  (%.0f%% of the sum) %s\n", c->name, with_test ? "MPI_Test" : "no-MPI",
               t_io, t_call, t_io, total, 100 * total / (2 * t_io), bad ? "FAIL" : "ok");
    return bad;
}

static int overlap(double mib, const char *name)
{
    static const ocase cases[] = {
        {"iwrite_at_all", 1}, {"iread_at_all", 1}, {"iwrite_at", 1}, {"iread_at", 1},
        {"3-outstanding", 3}
    };
    MPI_File fh, fh2;
    char *name2 = t_name(name, ".2");
    unsigned char *buf, *chk;
    int bad = 0;

    B = (MPI_Offset) (mib * 1048576);
    buf = malloc(B);
    chk = malloc(B);
    fill(buf, B, 7 + t_rank);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh));
    T_MPI(MPI_File_open(MPI_COMM_WORLD, name2, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh2));
    /* A case fails only when 3 tries in a row do not overlap: on a 2-core
     * machine shared with other tests one try can lose the CPU (CI once saw
     * iread_at at 93% of the sum after its blocking run had been slow too);
     * an implementation that does not overlap fails every try. The verdict
     * is agreed (Allreduce), so every rank retries together. */
    for (int k = 0; k < 5; k++)
        for (int with_test = 1; with_test >= 0; with_test--) {
            int b = 1;
            for (int attempt = 0; attempt < 3 && b; attempt++) {
                b = overlap_case(k, &cases[k], fh, fh2, k == 1 || k == 3 ? chk : buf,
                                 with_test);
                if (k == 1 || k == 3) {
                    check(chk, B, 7 + t_rank, cases[k].name);
                    memset(chk, 0, B);
                }
            }
            bad |= b;
        }
    T_MPI(MPI_File_close(&fh));
    T_MPI(MPI_File_close(&fh2));
    free(buf);
    free(chk);
    free(name2);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    T_ASSERT(!bad, "some nonblocking operation did not overlap with computation");
    return t_finish();
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    if (argc == 4 && !strcmp(argv[1], "overlap"))
        return overlap(atof(argv[2]), argv[3]);
    T_ASSERT(argc == 2, "usage: t_nonblock FILE | t_nonblock overlap MIB FILE");
    return results(argv[1]);
}
