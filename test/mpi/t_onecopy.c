/* Hot reads through the servers sent from the page cache's own pages
 * (group `hot`; ioserver/engine_slots.c "one copy"): every byte read is
 * checked against the model after independent writes, after overwrites of
 * cached blocks (whole and partial), in reads not aligned to pages, while
 * another rank overwrites the same blocks in atomic mode (each read must
 * be all old or all new), and after the file shrank and grew again. The
 * file left is compared with ufs: by the runner, which runs it with the
 * same-host shortcuts off. usage: t_onecopy FILE */
#include "tutil.h"

#define MiB (1024 * 1024)
#define CHUNK (4 * MiB)          /* bytes per rank */
#define ROUNDS 24                /* atomic-mode overwrites */
#define SEED_ATOMIC 10           /* their seeds: SEED_ATOMIC + k */

static int64_t g_len;            /* file bytes */
static unsigned char *g_model;   /* what the file holds */

static void model_set(int64_t off, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++)
        g_model[off + i] = t_byte(seed, (uint64_t) (off + i));
}

/* MPI's nonatomic rule: others' writes are visible after sync-barrier-sync */
static void publish(MPI_File fh)
{
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
}

/* bytes [lo, hi) of the file by independent reads of `call` bytes, checked;
 * `len` is the file's size (reads past it are short) */
static void read_range(MPI_File fh, int64_t lo, int64_t hi, int call, int64_t len,
                       const char *what)
{
    unsigned char *b = malloc((size_t) call);
    for (int64_t o = lo; o < hi; o += call) {
        int n = (int) (hi - o < call ? hi - o : call), got;
        MPI_Status st;
        T_MPI(MPI_File_read_at(fh, o, b, n, MPI_BYTE, &st));
        MPI_Get_count(&st, MPI_BYTE, &got);
        int want = o >= len ? 0 : (int) (len - o < n ? len - o : n);
        T_ASSERT(got == want, "%s: read of %d at %lld got %d bytes, expected %d", what, n,
                 (long long) o, got, want);
        for (int i = 0; i < got; i++)
            T_ASSERT(b[i] == g_model[o + i], "%s: byte %lld is %02x, expected %02x", what,
                     (long long) (o + i), b[i], g_model[o + i]);
    }
    free(b);
}

/* which seed wrote all n bytes at off in b (-1: none, or a mix) */
static int one_seed(const unsigned char *b, int64_t off, int64_t n, int nseeds,
                    const int *seeds)
{
    for (int s = 0; s < nseeds; s++) {
        int64_t i = 0;
        while (i < n && b[i] == t_byte((uint64_t) seeds[s], (uint64_t) (off + i)))
            i++;
        if (i == n)
            return seeds[s];
    }
    return -1;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_onecopy FILE");
    g_len = (int64_t) CHUNK * t_size;
    g_model = malloc((size_t) g_len);
    MPI_File fh = t_open_new(argv[1]);
    /* 1: each rank writes its chunk in 1 MiB calls (through the page cache) */
    model_set(0, g_len, 1);
    for (int64_t o = (int64_t) t_rank * CHUNK; o < (int64_t) (t_rank + 1) * CHUNK; o += MiB)
        T_MPI(MPI_File_write_at(fh, o, g_model + o, MiB, MPI_BYTE, MPI_STATUS_IGNORE));
    publish(fh);
    /* 2: hot reads of the whole file: 1 MiB and 4 MiB calls, twice */
    read_range(fh, 0, g_len, MiB, g_len, "hot read in 1 MiB calls");
    read_range(fh, 0, g_len, 4 * MiB, g_len, "hot read in 4 MiB calls");
    read_range(fh, 0, g_len, MiB, g_len, "hot read in 1 MiB calls again");
    MPI_Barrier(MPI_COMM_WORLD);
    /* 3: rank r overwrites the next rank's chunk: its first half whole
     * (1 MiB calls), then 256 KiB pieces of its second half every 512 KiB
     * (blocks partly rewritten); the pages the reads above used change */
    int64_t base = (int64_t) ((t_rank + 1) % t_size) * CHUNK;
    for (int r = 0; r < t_size; r++) {
        int64_t b0 = (int64_t) ((r + 1) % t_size) * CHUNK;
        model_set(b0, CHUNK / 2, 2);
        for (int64_t o = b0 + CHUNK / 2; o < b0 + CHUNK; o += 512 * 1024)
            model_set(o, 256 * 1024, 3);
    }
    for (int64_t o = base; o < base + CHUNK / 2; o += MiB)
        T_MPI(MPI_File_write_at(fh, o, g_model + o, MiB, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int64_t o = base + CHUNK / 2; o < base + CHUNK; o += 512 * 1024)
        T_MPI(MPI_File_write_at(fh, o, g_model + o, 256 * 1024, MPI_BYTE, MPI_STATUS_IGNORE));
    publish(fh);
    read_range(fh, 0, g_len, MiB, g_len, "read after overwrites");
    /* reads that start and end inside pages and cross blocks */
    read_range(fh, 4096 + 123, g_len - 77, MiB + 4096 + 77, g_len, "unaligned read");
    MPI_Barrier(MPI_COMM_WORLD);
    /* 4: atomic mode: rank 0 overwrites 2 MiB of chunk 1 ROUNDS times while
     * the other ranks read it: every read is one write's bytes whole */
    int64_t at = (t_size > 1 ? CHUNK : 0) + MiB / 2, n = 2 * MiB;
    int seeds[ROUNDS];
    for (int k = 0; k < ROUNDS; k++)
        seeds[k] = SEED_ATOMIC + k;
    T_MPI(MPI_File_set_atomicity(fh, 1));
    unsigned char *b = malloc((size_t) n);
    int seen_new = 0;
    for (int k = 0; k < ROUNDS; k++) {
        if (t_rank == 0) {
            for (int64_t i = 0; i < n; i++)
                b[i] = t_byte((uint64_t) (SEED_ATOMIC + k), (uint64_t) (at + i));
            T_MPI(MPI_File_write_at(fh, at, b, (int) n, MPI_BYTE, MPI_STATUS_IGNORE));
        } else {
            T_MPI(MPI_File_read_at(fh, at, b, (int) n, MPI_BYTE, MPI_STATUS_IGNORE));
            /* the range held seeds 2 (first half of chunk 1) and 3 before
             * the first atomic write: it is whole only once one landed */
            int s = one_seed(b, at, n, ROUNDS, seeds);
            T_ASSERT(s >= 0 || !seen_new, "atomic read %d of %lld bytes at %lld: neither "
                     "one write's bytes nor the bytes before", k, (long long) n, (long long) at);
            seen_new |= s >= 0;
            if (s < 0)            /* before the first write: the old bytes */
                for (int64_t i = 0; i < n; i++)
                    T_ASSERT(b[i] == g_model[at + i], "atomic read %d: byte %lld is %02x, "
                             "neither old (%02x) nor one write's", k, (long long) (at + i),
                             b[i], g_model[at + i]);
        }
    }
    free(b);
    T_MPI(MPI_File_set_atomicity(fh, 0));
    model_set(at, n, SEED_ATOMIC + ROUNDS - 1);
    publish(fh);
    read_range(fh, 0, g_len, MiB, g_len, "read after the atomic overwrites");
    MPI_Barrier(MPI_COMM_WORLD);
    /* 5: the file shrinks to 3/8 and grows back: reads of the cut part are
     * short, then zeros */
    int64_t cut = g_len / 8 * 3;
    T_MPI(MPI_File_set_size(fh, cut));
    read_range(fh, 0, g_len, MiB, cut, "read after the file shrank");
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_set_size(fh, g_len));
    memset(g_model + cut, 0, (size_t) (g_len - cut));
    read_range(fh, 0, g_len, MiB, g_len, "read after the file grew again");
    T_MPI(MPI_File_close(&fh));
    free(g_model);
    return t_finish();
}
