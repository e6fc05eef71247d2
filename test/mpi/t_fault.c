/* A server dies (or hangs) in one phase of a call: every rank's call must
 * return an MPI error within a bound, and after the server restarts every
 * byte synced before the fault must read back, untouched outside the range
 * the interrupted call was writing. The harness places the fault with the
 * server's deterministic fault points (ddio-run --fault I:POINT:N).
 *
 *   t_fault prep  FILE                  write generation 1 everywhere, sync
 *   t_fault phase FILE PHASE MAXSEC     the call that meets the fault (PHASE:
 *                                       open coll-write coll-read indep-write
 *                                       indep-read sync wb-sync); every rank
 *                                       must fail within MAXSEC seconds
 *   t_fault check FILE                  generation 1 outside [W0, W1), 1 or 2
 *                                       inside it (the interrupted write)
 *
 * Views: 64 KiB chunks dealt round robin to the ranks, so every rank's part
 * of the written range [W0, W1) touches every stripe server. Hints from
 * DDIO_TEST_HINTS (the client cache on: wb-sync writes its part in 4 KiB
 * calls that write-behind gathers, then syncs: the fault meets the sync's
 * flush or its SYNC). */
#include "tutil.h"

#define SIZE ((MPI_Offset) 16 << 20)
#define W0   ((MPI_Offset) 4 << 20)
#define W1   ((MPI_Offset) 12 << 20)
#define CH   (64 << 10)

static unsigned char gen_byte(int gen, MPI_Offset off)
{
    return t_byte((uint64_t) gen * 7 + 1, (uint64_t) off);
}


/* the bytes of generation gen this rank writes in [lo, hi) under the view */
static unsigned char *dealt_data(int gen, MPI_Offset lo, MPI_Offset hi, int *n)
{
    *n = (int) ((hi - lo) / t_size);
    unsigned char *b = malloc((size_t) *n);
    for (int i = 0; i < *n; i++) {
        MPI_Offset off = lo + (MPI_Offset) (i / CH) * CH * t_size + (MPI_Offset) t_rank * CH + i % CH;
        b[i] = gen_byte(gen, off);
    }
    return b;
}

static void prep(const char *path)
{
    MPI_File fh;
    int n;
    MPI_Info info = tm_hints();
    T_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    t_set_dealt_view(fh, 0, CH);
    unsigned char *b = dealt_data(1, 0, SIZE, &n);
    T_MPI(MPI_File_write_all(fh, b, n, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_sync(fh));
    T_MPI(MPI_File_close(&fh));
    free(b);
}

static void check(const char *path)
{
    MPI_File fh;
    MPI_Offset size, per = SIZE / t_size, at = per * t_rank;
    MPI_Info info = tm_hints();
    T_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    MPI_Info_free(&info);
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == SIZE, "size after restart %lld, want %lld", (long long) size, (long long) SIZE);
    unsigned char *b = malloc((size_t) per);
    T_MPI(MPI_File_read_at_all(fh, at, b, (int) per, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Offset gen2 = 0;
    for (MPI_Offset i = 0; i < per; i++) {
        MPI_Offset off = at + i;
        int inside = off >= W0 && off < W1;
        if (b[i] == gen_byte(1, off))
            continue;
        T_ASSERT(inside && b[i] == gen_byte(2, off),
                 "byte %lld is %u: not generation 1 (%u)%s", (long long) off, b[i],
                 gen_byte(1, off), inside ? " nor 2" : ", outside the interrupted write");
        gen2++;
    }
    MPI_Offset all;
    MPI_Reduce(&gen2, &all, 1, MPI_OFFSET, MPI_SUM, 0, MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("check: every synced byte intact; %lld bytes of the interrupted write landed\n",
               (long long) all);
    T_MPI(MPI_File_close(&fh));
    free(b);
}

/* the call that meets the fault; returns its error code */
static int phase_call(const char *path, const char *phase, MPI_File *fh, double *t)
{
    int n, err;
    int amode = MPI_MODE_RDWR;
    MPI_Info info = tm_hints();
    *t = MPI_Wtime();
    err = MPI_File_open(MPI_COMM_WORLD, path, amode, info, fh);
    MPI_Info_free(&info);
    if (strcmp(phase, "open") == 0 || err != MPI_SUCCESS) {
        if (err != MPI_SUCCESS)
            *fh = MPI_FILE_NULL;
        return err;
    }
    t_set_dealt_view(*fh, W0, CH);
    unsigned char *b = dealt_data(2, W0, W1, &n);
    if (strcmp(phase, "sync") == 0) {
        T_MPI(MPI_File_write_all(*fh, b, n, MPI_BYTE, MPI_STATUS_IGNORE));
        *t = MPI_Wtime();
        err = MPI_File_sync(*fh);
    } else if (strcmp(phase, "wb-sync") == 0) {
        /* a call whose cache flush met the fault may fail first; every
         * rank still calls the (collective) sync */
        *t = MPI_Wtime();
        for (int i = 0; i < n && err == MPI_SUCCESS; i += 4096)
            err = MPI_File_write(*fh, b + i, n - i < 4096 ? n - i : 4096, MPI_BYTE,
                                 MPI_STATUS_IGNORE);
        int serr = MPI_File_sync(*fh);
        if (err == MPI_SUCCESS)
            err = serr;
    } else {
        *t = MPI_Wtime();
        if (strcmp(phase, "coll-write") == 0)
            err = MPI_File_write_all(*fh, b, n, MPI_BYTE, MPI_STATUS_IGNORE);
        else if (strcmp(phase, "coll-read") == 0)
            err = MPI_File_read_all(*fh, b, n, MPI_BYTE, MPI_STATUS_IGNORE);
        else if (strcmp(phase, "indep-write") == 0)
            err = MPI_File_write(*fh, b, n, MPI_BYTE, MPI_STATUS_IGNORE);
        else if (strcmp(phase, "indep-read") == 0)
            err = MPI_File_read(*fh, b, n, MPI_BYTE, MPI_STATUS_IGNORE);
        else
            T_FAIL("unknown phase '%s'", phase);
    }
    free(b);
    return err;
}

static void phase(const char *path, const char *ph, double maxsec)
{
    MPI_File fh;
    double t0;
    int err = phase_call(path, ph, &fh, &t0);
    double dt = MPI_Wtime() - t0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len, cls = t_errclass(err);
    if (err != MPI_SUCCESS)
        MPI_Error_string(err, msg, &len);
    if (fh != MPI_FILE_NULL)
        MPI_File_close(&fh);          /* a dead server fails it too: not checked */
    int failed = err != MPI_SUCCESS, all_failed;
    double worst;
    MPI_Allreduce(&failed, &all_failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    printf("rank %d: %s -> %s after %.2f s: %s\n", t_rank, ph,
           failed ? "error" : "SUCCESS", dt, failed ? msg : "");
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("fault %s: %s on every rank; slowest rank %.2f s (bound %.1f s); error class %d\n",
               ph, all_failed ? "an error" : "NOT an error", worst, maxsec, cls);
    T_ASSERT(failed, "%s succeeded although a server died during it", ph);
    T_ASSERT(all_failed, "%s: not every rank got an error", ph);
    T_ASSERT(worst <= maxsec, "%s: the error took %.2f s, bound %.1f s", ph, worst, maxsec);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc >= 3, "usage: t_fault prep|phase|check FILE [PHASE MAXSEC]");
    T_ASSERT(SIZE % ((MPI_Offset) CH * t_size) == 0 && (W1 - W0) % ((MPI_Offset) CH * t_size) == 0,
             "the rank count must divide 64 chunks");
    if (strcmp(argv[1], "prep") == 0)
        prep(argv[2]);
    else if (strcmp(argv[1], "check") == 0)
        check(argv[2]);
    else if (strcmp(argv[1], "phase") == 0 && argc == 5)
        phase(argv[2], argv[3], atof(argv[4]));
    else
        T_FAIL("usage: t_fault prep|phase|check FILE [PHASE MAXSEC]");
    return t_finish();
}
