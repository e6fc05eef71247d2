/* The server's page cache seen from MPI-IO (group `hot`): independent
 * writes of 1 MiB and 64 KiB, hot re-reads, and coherence between the
 * servers' two paths in both directions (an independent call goes through
 * the page cache, a disk-directed collective through O_DIRECT): a
 * collective read after independent writes, independent reads after a
 * collective write that replaced bytes they had read before, and a
 * collective read of a block half rewritten independently. Every read is
 * checked against the model; the file left is compared with ufs: by the
 * runner. usage: t_hot FILE */
#include "tutil.h"

#define MiB (1024 * 1024)
#define CHUNKS 4                 /* 1 MiB chunks per rank */
#define REC 4096                 /* the collectives' records: rank r has r, r+P, ... */

static int64_t g_len;            /* file bytes */
static unsigned char *g_model;   /* what the file holds */

static void model_set(int64_t off, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i++)
        g_model[off + i] = t_byte(seed, (uint64_t) (off + i));
}

/* every byte of the file, by independent reads of `call` bytes */
static void read_all_indep(MPI_File fh, int call, const char *what)
{
    unsigned char *b = malloc((size_t) g_len);
    for (int64_t o = 0; o < g_len; o += call)
        T_MPI(MPI_File_read_at(fh, o, b + o, call, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int64_t i = 0; i < g_len; i++)
        T_ASSERT(b[i] == g_model[i], "%s: byte %lld is %02x, expected %02x", what,
                 (long long) i, b[i], g_model[i]);
    free(b);
}

/* the view of this rank's records: REC bytes every P * REC */
static MPI_Datatype rec_view(void)
{
    MPI_Datatype v, r;
    MPI_Type_vector(1, REC, REC * t_size, MPI_BYTE, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint) REC * t_size, &r);
    MPI_Type_commit(&r);
    MPI_Type_free(&v);
    return r;
}

/* this rank's records, collectively (op 'r' checks them, 'w' writes seed) */
static void coll_records(MPI_File fh, char op, uint64_t seed, const char *what)
{
    MPI_Datatype ft = rec_view();
    int64_t n = g_len / t_size;
    unsigned char *b = malloc((size_t) n);
    T_MPI(MPI_File_set_view(fh, (MPI_Offset) t_rank * REC, MPI_BYTE, ft, "native",
                            MPI_INFO_NULL));
    for (int64_t k = 0; k < n; k++) {   /* stream byte k is file byte `at` */
        int64_t at = (k / REC * t_size + t_rank) * REC + k % REC;
        if (op == 'w')
            b[k] = t_byte(seed, (uint64_t) at);
    }
    if (op == 'w')
        T_MPI(MPI_File_write_at_all(fh, 0, b, (int) n, MPI_BYTE, MPI_STATUS_IGNORE));
    else
        T_MPI(MPI_File_read_at_all(fh, 0, b, (int) n, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int64_t k = 0; k < n && op == 'r'; k++) {
        int64_t at = (k / REC * t_size + t_rank) * REC + k % REC;
        T_ASSERT(b[k] == g_model[at], "%s: byte %lld is %02x, expected %02x", what,
                 (long long) at, b[k], g_model[at]);
    }
    if (op == 'w')                /* every rank keeps the whole model */
        for (int64_t at = 0; at < g_len; at++)
            g_model[at] = t_byte(seed, (uint64_t) at);
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    free(b);
}

/* MPI's nonatomic rule: others' writes are visible after sync-barrier-sync */
static void publish(MPI_File fh)
{
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_hot FILE");
    g_len = (int64_t) CHUNKS * MiB * t_size;
    g_model = malloc((size_t) g_len);
    MPI_File fh = t_open_new(argv[1]);
    /* 1: independent writes, chunk c by rank c % P: the even chunks as one
     * 1 MiB call, the odd ones as 16 calls of 64 KiB */
    for (int c = t_rank; c < CHUNKS * t_size; c += t_size) {
        int call = c % 2 ? 64 * 1024 : MiB;
        model_set((int64_t) c * MiB, MiB, 1);
        for (int64_t o = (int64_t) c * MiB; o < (int64_t) (c + 1) * MiB; o += call)
            T_MPI(MPI_File_write_at(fh, o, g_model + o, call, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    model_set(0, g_len, 1);
    publish(fh);
    /* 2: hot re-reads, twice, in 1 MiB and 64 KiB calls */
    read_all_indep(fh, MiB, "re-read in 1 MiB calls");
    read_all_indep(fh, 64 * 1024, "re-read in 64 KiB calls");
    /* 3: a collective read of what independent calls wrote */
    coll_records(fh, 'r', 0, "collective read after independent writes");
    MPI_Barrier(MPI_COMM_WORLD);
    /* 4: a collective write over it, then independent reads: the pages the
     * re-reads cached must not be served */
    coll_records(fh, 'w', 2, "collective write");
    publish(fh);
    read_all_indep(fh, MiB, "independent read after a collective write");
    /* 5: a collective write leaves the blocks uncached; rank 0 rewrites
     * half of every second chunk independently (dirty pages, half a block
     * cached), and at once, without a sync, a collective read: the disk
     * path, which must see those dirty pages (ddio's servers make a
     * returned write visible to every later read: DESIGN.md §7) */
    coll_records(fh, 'w', 4, "collective write (uncaching)");
    publish(fh);
    for (int c = 0; c < CHUNKS * t_size; c += 2) {
        model_set((int64_t) c * MiB, MiB / 2, 3);
        if (t_rank == 0)
            T_MPI(MPI_File_write_at(fh, (MPI_Offset) c * MiB, g_model + (int64_t) c * MiB,
                                    MiB / 2, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    coll_records(fh, 'r', 0, "collective read after a half-block independent write");
    publish(fh);
    read_all_indep(fh, MiB, "independent read after the half-block write");
    T_MPI(MPI_File_close(&fh));
    free(g_model);
    return t_finish();
}
