/* Byte-range locks under Open MPI's ROMIO 3.2.1, which reaches ddio's
 * server-side locks only through the lock hook scripts/build-ompi-romio.sh
 * adds (ad_ddio_compat.h). t_features' sections 1 and 5 take turns
 * or write once; here the ranks race on purpose, so a lock that does not
 * exclude shows:
 *
 *   t_locks FILE   (hints from DDIO_TEST_HINTS, e.g. a small striping_unit
 *                   so that records and regions span servers)
 *   1. shared: every rank appends K records at once, alternating
 *      MPI_File_write_shared and MPI_File_iwrite_shared (no barrier between
 *      ranks): the shared pointer must end at P*K records, and the records
 *      read back must be each (rank, i) exactly once, whole, each rank's in
 *      its own order. Without the lock two ranks read the same pointer and
 *      overwrite each other's records. Rank 0 then rewrites the region
 *      sorted by (rank, i): deterministic bytes for the control.
 *   2. ordered: three rounds of write_ordered of rank-dependent sizes after
 *      them, read back with read_ordered; the pointer after each round.
 *   3. atomic: set_atomicity(1) (get_atomicity says 1); rank 0 writes the
 *      region (spanning servers) as version 1..V while the other ranks read
 *      it: every read must see one version whole. Then every rank writes
 *      the region at once, V times: each read after a barrier is one
 *      writer's bytes. Back to nonatomic, rank 0 writes deterministic bytes.
 * Exit status 0 and "PASS" only if every check held on every rank. */
#include "tutil.h"

#define K 24            /* records per rank */
#define REC 1000        /* bytes per record: not a divisor of any stripe */
#define V 40            /* versions / rounds of section 3 */
#define REGION (96 * 1024)

static void record(unsigned char *r, int rank, int i)
{
    r[0] = (unsigned char) rank;
    r[1] = (unsigned char) i;
    for (int j = 2; j < REC; j++)
        r[j] = t_byte((uint64_t) (rank * 1000 + i), (uint64_t) j);
}

/* is r a whole record? its (rank, i) in *rank, *i */
static int parse(const unsigned char *r, int *rank, int *i)
{
    unsigned char want[REC];
    *rank = r[0];
    *i = r[1];
    if (*rank >= t_size || *i >= K)
        return 0;
    record(want, *rank, *i);
    return !memcmp(r, want, REC);
}

/* collective: every rank has finished the call before, none moves on before
 * all have read it */
static MPI_Offset shpos(MPI_File fh)
{
    MPI_Offset p;
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_get_position_shared(fh, &p));
    MPI_Barrier(MPI_COMM_WORLD);
    return p;
}

static void shared_race(MPI_File fh)
{
    unsigned char r[REC];
    MPI_Request req;
    for (int i = 0; i < K; i++) {
        record(r, t_rank, i);
        if (i % 2) {
            T_MPI(MPI_File_iwrite_shared(fh, r, REC, MPI_BYTE, &req));
            T_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            T_MPI(MPI_File_write_shared(fh, r, REC, MPI_BYTE, MPI_STATUS_IGNORE));
        }
    }
    MPI_Offset end = (MPI_Offset) t_size * K * REC, sp = shpos(fh);
    T_ASSERT(sp == end, "shared pointer after the race: %lld, want %lld", (long long) sp,
             (long long) end);
    if (t_rank != 0)
        return;
    /* every (rank, i) once, whole, in each rank's order; then sorted */
    int n = t_size * K, last[256], seen = 0;
    unsigned char *all = malloc((size_t) n * REC), *sorted = malloc((size_t) n * REC);
    T_MPI(MPI_File_read_at(fh, 0, all, n * REC, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int k = 0; k < t_size; k++)
        last[k] = -1;
    for (int s = 0; s < n; s++) {
        int rk, i;
        T_ASSERT(parse(all + (size_t) s * REC, &rk, &i), "slot %d holds no whole record "
                 "(two ranks wrote at one shared pointer)", s);
        T_ASSERT(i > last[rk], "slot %d: rank %d record %d after its record %d", s, rk, i,
                 last[rk]);
        last[rk] = i;
        memcpy(sorted + ((size_t) rk * K + i) * REC, all + (size_t) s * REC, REC);
        seen++;
    }
    for (int k = 0; k < t_size; k++)
        T_ASSERT(last[k] == K - 1, "rank %d's last record is %d", k, last[k]);
    T_ASSERT(seen == n, "%d records of %d", seen, n);
    T_MPI(MPI_File_write_at(fh, 0, sorted, n * REC, MPI_BYTE, MPI_STATUS_IGNORE));
    free(all);
    free(sorted);
}

static void ordered(MPI_File fh)
{
    unsigned char w[REC + 64], r[REC + 64];
    MPI_Offset at = (MPI_Offset) t_size * K * REC;
    MPI_Status st;
    int cnt;

    T_MPI(MPI_File_seek_shared(fh, at, MPI_SEEK_SET));
    for (int round = 0; round < 3; round++) {
        int len = 300 + 97 * t_rank + round;
        for (int j = 0; j < len; j++)
            w[j] = t_byte((uint64_t) (50 + round * 16 + t_rank), (uint64_t) j);
        T_MPI(MPI_File_write_ordered(fh, w, len, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        T_ASSERT(cnt == len, "write_ordered round %d count %d", round, cnt);
        at += (MPI_Offset) t_size * (300 + round) + 97LL * t_size * (t_size - 1) / 2;
        MPI_Offset sp = shpos(fh);
        T_ASSERT(sp == at, "shared pointer after write_ordered round %d: %lld, want %lld",
                 round, (long long) sp, (long long) at);
    }
    T_MPI(MPI_File_seek_shared(fh, (MPI_Offset) t_size * K * REC, MPI_SEEK_SET));
    for (int round = 0; round < 3; round++) {
        int len = 300 + 97 * t_rank + round;
        T_MPI(MPI_File_read_ordered(fh, r, len, MPI_BYTE, &st));
        for (int j = 0; j < len; j++)
            T_ASSERT(r[j] == t_byte((uint64_t) (50 + round * 16 + t_rank), (uint64_t) j),
                     "read_ordered round %d byte %d", round, j);
    }
    MPI_Offset sp = shpos(fh);
    T_ASSERT(sp == at, "shared pointer after read_ordered: %lld", (long long) sp);
}

/* one version whole: every byte equal to the first, a version 0..V */
static void one_version(const unsigned char *r, int n, int hi, const char *what, int round)
{
    for (int j = 1; j < n; j++)
        T_ASSERT(r[j] == r[0], "%s %d: byte %d is %d, byte 0 %d (two writes mixed)", what,
                 round, j, r[j], r[0]);
    T_ASSERT(r[0] <= hi, "%s %d: version %d", what, round, r[0]);
}

static void atomic(MPI_File fh, MPI_Offset base)
{
    unsigned char *w = malloc(REGION), *r = malloc(REGION);
    int flag;

    memset(w, 0, REGION);
    if (t_rank == 0)
        T_MPI(MPI_File_write_at(fh, base, w, REGION, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_set_atomicity(fh, 1));
    T_MPI(MPI_File_get_atomicity(fh, &flag));
    T_ASSERT(flag == 1, "get_atomicity says %d", flag);
    MPI_Barrier(MPI_COMM_WORLD);
    /* one writer, the others read meanwhile */
    for (int v = 1; v <= V; v++) {
        if (t_rank == 0) {
            memset(w, v, REGION);
            T_MPI(MPI_File_write_at(fh, base, w, REGION, MPI_BYTE, MPI_STATUS_IGNORE));
        } else {
            T_MPI(MPI_File_read_at(fh, base, r, REGION, MPI_BYTE, MPI_STATUS_IGNORE));
            one_version(r, REGION, V, "read during write", v);
        }
    }
    /* every rank writes the region at once */
    memset(w, 'A' + t_rank, REGION);
    for (int v = 0; v < V / 4; v++) {
        MPI_Barrier(MPI_COMM_WORLD);
        T_MPI(MPI_File_write_at(fh, base, w, REGION, MPI_BYTE, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        T_MPI(MPI_File_read_at(fh, base, r, REGION, MPI_BYTE, MPI_STATUS_IGNORE));
        one_version(r, REGION, 'A' + t_size - 1, "concurrent writes", v);
    }
    T_MPI(MPI_File_set_atomicity(fh, 0));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        for (int j = 0; j < REGION; j++)
            w[j] = t_byte(99, (uint64_t) j);
        T_MPI(MPI_File_write_at(fh, base, w, REGION, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    free(w);
    free(r);
}

int main(int argc, char **argv)
{
    MPI_File fh;
    MPI_Info info;

    t_init(&argc, &argv);
    if (argc != 2 || t_size > 64)
        T_FAIL("usage: t_locks FILE (at most 64 ranks)");
    info = tm_hints();
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    T_MPI(MPI_File_set_size(fh, 0));
    T_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    shared_race(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    ordered(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    atomic(fh, 256 * 1024);
    T_MPI(MPI_File_close(&fh));
    return t_finish();
}
