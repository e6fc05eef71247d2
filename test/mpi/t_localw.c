/* Same-host writes (group `local`; common/ddio_core_local.c): independent
 * contiguous writes the client does itself into the servers' datafiles must
 * leave exactly what the servers would.
 * - calls of 8 B, 4 KiB and 1 MiB + 13 across stripes and disks, each read
 *   back by its writer at once (no sync: a rank sees its own writes), and
 *   the size it made seen by MPI_File_get_size at once;
 * - a write far past the end: the hole reads as zeros, the size follows;
 * - after sync-barrier-sync every rank reads every byte;
 * - the race a server's read-modify-write would lose: rank 0 writes bytes
 *   [0, CUT) of every 4 KiB sector of a region collectively (with the other
 *   ranks but the last, on a second open of theirs, through a strided view:
 *   the servers' partly covered blocks), while the last rank, through an
 *   open of its own, writes bytes [CUT, 4096) of the same sectors, one
 *   independent call each, at the same time. Disjoint bytes: MPI requires
 *   both to land (nonatomic mode), so no byte of the last rank's may come
 *   back old. (On ufs: the two go one after the other: ROMIO's own
 *   collective write would lose the racer's bytes.)
 * The file left is compared with ufs: by the runner. usage: t_localw FILE */
#include "tutil.h"

#define KiB 1024
#define MiB (1024 * 1024)
#define REGION (2 * MiB + 4097)      /* per rank: odd, across stripes */
#define SECT 4096
#define CUT 1000                     /* the collective's bytes of a sector */
#define RACE_SECTS 768               /* 3 MiB of sectors */
#define ROUNDS 4

static int g_race = 1;          /* 0 on ufs: (below) */

static void check_size(MPI_File fh, MPI_Offset want, const char *what)
{
    MPI_Offset sz;
    T_MPI(MPI_File_get_size(fh, &sz));
    T_ASSERT(sz == want, "%s: size %lld, want %lld", what, (long long) sz, (long long) want);
}

/* The bytes of a rank's region its 8-byte calls cover (the rest in 4 KiB
 * calls: the same bytes either way). All of it with same-host writes on;
 * with them off (DDIO_LOCAL_WRITE=0, the runners' localw-woff) each call
 * is a round trip to a server, and 262144 of them per rank took 48 s of
 * the MPI suite and 24 s of Open MPI's, to show what 64 KiB of them show
 * (the servers' small writes are group indep's and smallio's). */
static MPI_Offset small_bytes(void)
{
    const char *v = getenv("DDIO_LOCAL_WRITE");
    return v && !strcmp(v, "0") ? 64 * KiB : REGION;
}

/* this rank's region written in calls of `call` bytes, each read back at
 * once; every rank's model updated (the same seed everywhere) */
static void write_region(MPI_File fh, int call, uint64_t seed, MPI_Offset base)
{
    for (int r = 0; r < t_size; r++)
        t_file_set(base + (MPI_Offset) r * REGION, REGION, seed);
    MPI_Offset lo = base + (MPI_Offset) t_rank * REGION, hi = lo + REGION;
    MPI_Offset small_end = call == 8 ? lo + small_bytes() : hi;
    for (MPI_Offset o = lo; o < hi; o += call) {
        if (o >= small_end)
            call = 4 * KiB;
        int n = (int) (hi - o < call ? hi - o : call);
        T_MPI(MPI_File_write_at(fh, o, t_file + o, n, MPI_BYTE, MPI_STATUS_IGNORE));
        t_read_model(fh, o, n, t_file, t_file_size, "a rank's own write, read at once");
    }
}

/* every byte, then a barrier: the next writes must not meet a reader */
static void read_all(MPI_File fh, const char *what)
{
    for (MPI_Offset o = 0; o < t_file_size; o += MiB + 13)
        t_read_model(fh, o, MiB + 13, t_file, t_file_size, what);
    t_read_model(fh, t_file_size - 10, 4 * KiB, t_file, t_file_size, what);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* sectors [0, RACE_SECTS) at base: bytes [0, CUT) of each are the collective's
 * (seed cs), [CUT, SECT) the racer's (seed rs) */
static void race_model(MPI_Offset base, uint64_t cs, uint64_t rs)
{
    t_file_grow(base + (MPI_Offset) RACE_SECTS * SECT);
    for (int k = 0; k < RACE_SECTS; k++)
        for (int i = 0; i < SECT; i++) {
            MPI_Offset o = base + (MPI_Offset) k * SECT + i;
            t_file[o] = t_byte(i < CUT ? cs : rs, (uint64_t) o);
        }
}

/* the collective half: rank 0 writes the [0, CUT) bytes through a strided
 * view, the others take part with nothing */
static void race_collective(MPI_File fh, MPI_Offset base)
{
    MPI_Datatype vec;
    T_MPI(MPI_Type_vector(RACE_SECTS, CUT, SECT, MPI_BYTE, &vec));
    T_MPI(MPI_Type_commit(&vec));
    T_MPI(MPI_File_set_view(fh, base, MPI_BYTE, vec, "native", MPI_INFO_NULL));
    unsigned char *b = malloc((size_t) RACE_SECTS * CUT);
    int n = 0;
    if (t_rank == 0) {
        for (int k = 0; k < RACE_SECTS; k++)
            memcpy(b + (size_t) k * CUT, t_file + base + (MPI_Offset) k * SECT, CUT);
        n = RACE_SECTS * CUT;
    }
    T_MPI(MPI_File_write_at_all(fh, 0, b, n, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&vec);
    free(b);
}

/* the racer: the [CUT, SECT) bytes, one call per sector, through its own open */
static void race_independent(MPI_File solo, MPI_Offset base)
{
    for (int k = 0; k < RACE_SECTS; k++) {
        MPI_Offset o = base + (MPI_Offset) k * SECT + CUT;
        T_MPI(MPI_File_write_at(solo, o, t_file + o, SECT - CUT, MPI_BYTE, MPI_STATUS_IGNORE));
    }
}

/* the race, ROUNDS times: the last rank writes through `mine` (its own
 * open) while the others' collective goes through theirs (`mine` too, on
 * their communicator); both start after one barrier */
static void race(MPI_File fh, MPI_File mine)
{
    MPI_Offset base = (t_file_size + SECT - 1) / SECT * SECT;
    int racer = t_rank == t_size - 1;
    for (int round = 0; round < ROUNDS; round++) {
        race_model(base, 100 + (uint64_t) round, 200 + (uint64_t) round);
        MPI_Barrier(MPI_COMM_WORLD);
        if (racer)
            race_independent(mine, base);
        if (!g_race)            /* one after the other */
            t_sync_barrier_sync(mine);
        if (!racer)
            race_collective(mine, base);
        T_MPI(MPI_File_sync(mine));
        t_sync_barrier_sync(fh);
        for (MPI_Offset o = base; o < t_file_size; o += MiB)
            t_read_model(fh, o, MiB, t_file, t_file_size, "after the race");
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2 && t_size >= 2, "usage: mpiexec -n P>=2 t_localw FILE");
    /* ROMIO's ufs: collective write reads and writes back the bytes between
     * the view's pieces (data sieving, two-phase), taking no lock the racer
     * takes: it would lose the racer's bytes. The control runs the two
     * writers one after the other (the same bytes result). */
    g_race = strncmp(argv[1], "ufs:", 4) != 0;
    MPI_Info info = tm_hints();
    MPI_File fh, mine;
    if (t_rank == 0)
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));

    int calls[] = { 8, 4 * KiB, MiB + 13 };
    for (int i = 0; i < 3; i++) {
        write_region(fh, calls[i], 10 + (uint64_t) i, 0);
        if (t_rank == t_size - 1)
            check_size(fh, t_file_size, "the last rank's size after its own writes");
        t_sync_barrier_sync(fh);
        check_size(fh, t_file_size, "the size after sync-barrier-sync");
        read_all(fh, "every byte after sync-barrier-sync");
    }

    /* a hole: rank 0 writes 4 KiB 3 MiB past the end */
    MPI_Offset far = t_file_size + 3 * MiB;
    t_file_set(far, 4 * KiB, 20);
    if (t_rank == 0) {
        T_MPI(MPI_File_write_at(fh, far, t_file + far, 4 * KiB, MPI_BYTE, MPI_STATUS_IGNORE));
        check_size(fh, t_file_size, "the size after a write past the end");
        t_read_model(fh, far - 3 * MiB, 3 * MiB + 4 * KiB, t_file, t_file_size, "the hole, at once");
    }
    t_sync_barrier_sync(fh);
    read_all(fh, "across the hole");

    /* the collective's ranks open the file again together, the racer alone */
    MPI_Comm sub;
    T_MPI(MPI_Comm_split(MPI_COMM_WORLD, t_rank == t_size - 1, t_rank, &sub));
    T_MPI(MPI_File_open(sub, argv[1], MPI_MODE_RDWR, info, &mine));
    race(fh, mine);
    T_MPI(MPI_File_close(&mine));
    MPI_Comm_free(&sub);

    T_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    free(t_file);
    return t_finish();
}
