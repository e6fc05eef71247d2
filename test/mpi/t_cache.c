/* The client cache (write-behind, read-ahead) against MPI-IO's consistency
 * rules (MPI 4.0 §14.6.1), nonatomic mode unless said:
 *  1. a rank reads its own unsynced small writes at once (also over data it
 *     read ahead before writing);
 *  2. rank A writes small pieces, syncs, barrier, rank B syncs and reads
 *     A's bytes; B had read the old bytes ahead before, so its sync must
 *     have dropped them;
 *  3. MPI_File_get_size counts a rank's own unsynced writes past the end;
 *  4. atomic mode: a write is seen by another rank after a barrier alone;
 *  5. the hints are reported by MPI_File_get_info and 0 turns the cache off
 *     (checked by the same steps without the hints: off by default);
 *  6. random small reads and writes, overlapping, against a model; the
 *     final file is compared with the same run on ufs: by the harness.
 * T_CACHE_SKIP="atomic info" leaves parts out where the library cannot do
 * them, each printed as "SKIP PART: why": atomic, step 4 (where atomic mode
 * is refused; the control run must leave it out too, its bytes differ);
 * info, step 5's get_info check (Open MPI's ROMIO 3.2.1 on ddio answers
 * get_info from its copy of the hints the program gave: without hints the
 * driver's defaults are not there).
 * usage: t_cache FILE   (at least 2 ranks; hints from DDIO_TEST_HINTS) */
#include "tutil.h"


#define SPAN (2 * 1048576 + 3000)
static unsigned char model[SPAN + 70000];
static MPI_Offset model_size;

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next(void)
{
    return t_xorshift(&rng);
}

static void model_write(MPI_Offset off, const unsigned char *b, int len)
{
    memcpy(model + off, b, (size_t)len);
    if (off + len > model_size)
        model_size = off + len;
}

static void check_read(MPI_File fh, MPI_Offset off, int len, const char *what)
{
    t_read_model(fh, off, len, model, model_size, what);
}

static void write_small(MPI_File fh, int me, MPI_Offset off, int len, uint64_t seed)
{
    unsigned char b[4096];
    for (int i = 0; i < len; i++)
        b[i] = t_byte(seed, (uint64_t)i);
    if (me)
        T_MPI(MPI_File_write_at(fh, off, b, len, MPI_BYTE, MPI_STATUS_IGNORE));
    model_write(off, b, len);
}

/* 1: own unsynced writes, also over bytes read ahead before */
static void own_writes(MPI_File fh)
{
    if (t_rank == 0) {
        for (int i = 0; i < 64; i++)   /* sequential 8-byte reads: read ahead */
            check_read(fh, 8 * i, 8, "before own writes");
        for (int i = 0; i < 64; i++)   /* over what was read ahead */
            write_small(fh, 1, 8 * i + 3, 5, 100 + (uint64_t)i);
        for (int i = 0; i < 64; i++)
            check_read(fh, 8 * i, 8, "own unsynced writes");
        check_read(fh, 0, 600, "own unsynced writes, one read");
    } else
        for (int i = 0; i < 64; i++)
            write_small(fh, 0, 8 * i + 3, 5, 100 + (uint64_t)i);
}

/* 2: A writes, sync, barrier, sync, B reads (B read the old bytes first) */
static void sync_barrier_sync(MPI_File fh)
{
    MPI_Offset base = 1048576 - 4000;    /* across a block boundary */
    write_small(fh, t_rank == 0, base, 1700, 4321);   /* old bytes, seen by all */
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    for (int i = 0; i < 100; i++)         /* B reads ahead the old bytes */
        if (t_rank == 1)
            check_read(fh, base + 16 * i, 16, "B before A's writes");
    MPI_Barrier(MPI_COMM_WORLD);          /* (A's writes after B's reads) */
    for (int i = 0; i < 100; i++)
        write_small(fh, t_rank == 0, base + 16 * i + 2, 9, 5000 + (uint64_t)i);
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    if (t_rank == 1)
        for (int i = 0; i < 100; i++)
            check_read(fh, base + 16 * i, 16, "B after sync-barrier-sync");
    MPI_Barrier(MPI_COMM_WORLD);          /* (the next steps write more) */
}

/* 3: the size counts this rank's own writes */
static void own_size(MPI_File fh)
{
    MPI_Offset size, end = SPAN + 1000;
    write_small(fh, t_rank == 0, end - 7, 7, 77);
    if (t_rank == 0) {
        T_MPI(MPI_File_get_size(fh, &size));
        T_ASSERT(size == end, "size after own write %lld, want %lld", (long long)size,
                 (long long)end);
    }
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == end, "size after sync %lld, want %lld", (long long)size, (long long)end);
}

/* 4: atomic mode: no cache, a barrier is enough */
static void atomic_mode(MPI_File fh)
{
    T_MPI(MPI_File_set_atomicity(fh, 1));
    if (t_rank == 1)
        check_read(fh, 4096, 64, "B before atomic write");
    MPI_Barrier(MPI_COMM_WORLD);
    write_small(fh, t_rank == 0, 4096 + 10, 20, 999);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 1)
        check_read(fh, 4096, 64, "B after atomic write and barrier");
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_set_atomicity(fh, 0));
}

/* 5: the hints as MPI_File_get_info reports them */
static void hints(MPI_File fh)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    T_MPI(MPI_File_get_info(fh, &info));
    const char *keys[] = {"romio_ddio_write_behind", "romio_ddio_read_ahead"};
    for (int k = 0; k < 2; k++) {
        T_MPI(MPI_Info_get(info, keys[k], MPI_MAX_INFO_VAL, v, &flag));
        T_ASSERT(flag, "get_info has no %s", keys[k]);
        const char *want = getenv(k ? "T_CACHE_RA" : "T_CACHE_WB");
        if (want)
            T_ASSERT(strcmp(v, want) == 0, "%s = %s, want %s", keys[k], v, want);
    }
    MPI_Info_free(&info);
}

/* 6: random small pieces, one writer per round, conforming synchronisation */
static void random_rounds(MPI_File fh)
{
    for (int round = 0; round < 16; round++) {
        int me = round % t_size == t_rank;
        for (int k = 0; k < 60; k++) {
            MPI_Offset off = (MPI_Offset)(next() % SPAN);
            int len = 1 + (int)(next() % (k % 10 == 0 ? 4096 : 64));
            write_small(fh, me, off, len, (uint64_t)round * 1000 + (uint64_t)k);
            if (me && k % 7 == 0)         /* the writer sees its own at once */
                check_read(fh, off > 10 ? off - 10 : 0, len + 20, "writer mid-round");
        }
        T_MPI(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        T_MPI(MPI_File_sync(fh));
        for (int k = 0; k < 30; k++) {
            MPI_Offset off = (MPI_Offset)(next() % (SPAN + 2000));
            check_read(fh, off, 1 + (int)(next() % (k % 6 == 0 ? 65536 : 100)), "after round");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2 && t_size >= 2, "usage: t_cache FILE (2 or more ranks)");
    if (t_rank == 0)
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    MPI_Info info = tm_hints();
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    const char *skip = getenv("T_CACHE_SKIP");
    if (strncmp(argv[1], "ddio:", 5) == 0) {  /* (ufs: has no such hints) */
        if (skip && strstr(skip, "info")) {
            if (t_rank == 0)
                printf("SKIP info: get_info does not report the driver's hints here "
                       "(T_CACHE_SKIP)\n");
        } else
            hints(fh);
    }
    own_writes(fh);
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    sync_barrier_sync(fh);
    own_size(fh);
    if (skip && strstr(skip, "atomic")) {
        if (t_rank == 0)
            printf("SKIP atomic: atomic mode is refused here (T_CACHE_SKIP)\n");
    } else
        atomic_mode(fh);
    random_rounds(fh);
    T_MPI(MPI_File_close(&fh));
    if (t_rank == 0)
        printf("t_cache: own writes, sync-barrier-sync, size, atomic, random rounds: ok\n");
    MPI_Finalize();
    return 0;
}
