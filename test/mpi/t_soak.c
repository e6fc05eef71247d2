/* Soak: one MPI job of several running at once against the same servers.
 * `t_soak JOB NJOBS NOPS SEED PREFIX` does NOPS operations, each chosen by
 * a seeded generator (the same on every rank): a collective or independent
 * write of a random distribution (chunk 8 B .. 192 KiB dealt round robin to
 * the ranks, or one contiguous block per rank) into the job's own file
 * (PREFIX.JOB) or into the job's own region of a file every job shares
 * (PREFIX.shared), then a read back of the whole region by a different
 * distribution, collective or independent, every byte compared with what
 * was written. Prints ops, bytes verified, errors and ops/s (rank 0);
 * exits non-zero on any error. */
#include "tutil.h"

#define REGION ((MPI_Offset) 3 << 20)    /* bytes per job and file */

static uint64_t rng;
static uint64_t next(void)
{
    return t_xorshift(&rng);
}

/* rank's part of [lo, lo + REGION) in chunks of ch dealt round robin (ch 0:
 * one contiguous block per rank) */
static int set_view(MPI_File fh, MPI_Offset lo, int ch)
{
    int per = (int) (REGION / t_size);
    if (ch == 0) {
        T_MPI(MPI_File_set_view(fh, lo + (MPI_Offset) t_rank * per, MPI_BYTE, MPI_BYTE, "native",
                                MPI_INFO_NULL));
        return per;
    }
    t_set_dealt_view(fh, lo, ch);
    return per;
}

/* offset (from lo) of the i-th byte of this rank's part */
static MPI_Offset view_off(int ch, MPI_Offset i)
{
    if (ch == 0)
        return (REGION / t_size) * t_rank + i;
    return (i / ch) * (MPI_Offset) ch * t_size + (MPI_Offset) t_rank * ch + i % ch;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 6, "usage: t_soak JOB NJOBS NOPS SEED PREFIX");
    int job = atoi(argv[1]), njobs = atoi(argv[2]), nops = atoi(argv[3]);
    rng = (uint64_t) strtoull(argv[4], NULL, 10) * 0x9E3779B97F4A7C15ull + (uint64_t) job + 1;
    /* every chunk * ranks divides REGION, so the ranks' parts tile it */
    static const int chunks[] = {0, 8, 24, 3072, 4096, 65536, 196608};
    const int nch = (int) (sizeof(chunks) / sizeof(chunks[0]));
    char own[512], shared[512];
    snprintf(own, sizeof(own), "%s.%d", argv[5], job);
    snprintf(shared, sizeof(shared), "%s.shared", argv[5]);
    int per = (int) (REGION / t_size);
    for (int i = 1; i < nch; i++)
        T_ASSERT(REGION % ((MPI_Offset) chunks[i] * t_size) == 0, "%d ranks do not tile the region",
                 t_size);
    unsigned char *w = malloc((size_t) per), *r = malloc((size_t) per);
    uint64_t verified = 0, errors = 0;
    double t0 = MPI_Wtime();
    for (int op = 0; op < nops; op++) {
        int on_shared = (int) (next() % 2);
        int wch = chunks[next() % nch], rch = chunks[next() % nch];
        int wcoll = (int) (next() % 2), rcoll = (int) (next() % 2);
        uint64_t seed = (uint64_t) job << 32 | (uint64_t) op;
        /* unaligned regions: neighbouring jobs share the boundary blocks */
        MPI_Offset lo = on_shared ? (REGION + 4099) * job : 0;
        MPI_File fh;
        T_MPI(MPI_File_open(MPI_COMM_WORLD, on_shared ? shared : own,
                            MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
        set_view(fh, lo, wch);
        for (int i = 0; i < per; i++)
            w[i] = t_byte(seed, (uint64_t) view_off(wch, i));
        if (wcoll)
            T_MPI(MPI_File_write_all(fh, w, per, MPI_BYTE, MPI_STATUS_IGNORE));
        else
            T_MPI(MPI_File_write(fh, w, per, MPI_BYTE, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);        /* every rank's part is written */
        set_view(fh, lo, rch);
        memset(r, 0, (size_t) per);
        if (rcoll)
            T_MPI(MPI_File_read_all(fh, r, per, MPI_BYTE, MPI_STATUS_IGNORE));
        else
            T_MPI(MPI_File_read(fh, r, per, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int i = 0; i < per; i++)
            if (r[i] != t_byte(seed, (uint64_t) view_off(rch, i))) {
                if (errors++ < 5)
                    fprintf(stderr, "rank %d job %d op %d: byte %lld of %s (write chunk %d %s, "
                            "read chunk %d %s) is wrong\n", t_rank, job, op,
                            (long long) (lo + view_off(rch, i)), on_shared ? shared : own, wch,
                            wcoll ? "coll" : "indep", rch, rcoll ? "coll" : "indep");
            }
        verified += (uint64_t) per;
        T_MPI(MPI_File_close(&fh));
    }
    double dt = MPI_Wtime() - t0;
    uint64_t tot[2] = {verified, errors}, all[2];
    MPI_Reduce(tot, all, 2, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("soak job %d of %d: %d ops (write + verified read each) in %.2f s = %.1f ops/s, "
               "%llu bytes verified, %llu errors\n", job, njobs, nops, dt, nops / dt,
               (unsigned long long) all[0], (unsigned long long) all[1]);
    T_ASSERT(errors == 0, "%llu wrong bytes", (unsigned long long) errors);
    free(w);
    free(r);
    return t_finish();
}
