/* A server killed mid-call (and not restarted) fails the call on EVERY
 * rank within a bound of the kill, not just on the first one to notice.
 * Each rank moves its part of a MIB MiB file in ONE call: records of REC
 * bytes dealt round robin to the ranks (so every rank's part touches every
 * stripe server), collective or independent, write or read. The harness
 * kills a server and writes the kill's time (ns since the epoch, `date
 * +%s%N`) to KILLFILE; each rank, once its call returned an error, reads
 * it and reports how long after the kill its own error came. Rank 0
 * prints every rank's figure and fails if one is over MAXSEC (or if a
 * call succeeded).
 * usage: t_failfast MODE REC MIB MAXSEC KILLFILE FILE
 *   MODE: coll-write coll-read indep-write indep-read
 *   KILLFILE -: no kill; the call must succeed (writes the file the reads
 *   of later runs need) */
#include "tutil.h"
#include <time.h>

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double) ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double kill_time(const char *killfile, double deadline)
{
    double k = 0;
    while (now_ns() < deadline) {          /* written just after the kill */
        FILE *f = fopen(killfile, "r");
        if (f && fscanf(f, "%lf", &k) == 1 && k > 0) {
            fclose(f);
            return k;
        }
        if (f)
            fclose(f);
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 7, "usage: t_failfast MODE REC MIB MAXSEC KILLFILE FILE");
    const char *mode = argv[1];
    int rec = atoi(argv[2]);
    MPI_Offset total = (MPI_Offset) atol(argv[3]) << 20;
    double maxsec = atof(argv[4]);
    int coll = !strncmp(mode, "coll", 4), wr = strstr(mode, "write") != NULL;
    MPI_Offset nrec = total / rec / t_size;         /* this rank's records */
    size_t bytes = (size_t) (nrec * rec);
    char *buf = malloc(bytes);
    T_ASSERT(buf, "out of memory");
    for (size_t i = 0; i < bytes; i++)
        buf[i] = (char) t_byte(3, i);

    MPI_Datatype rt, ft;
    MPI_Type_contiguous(rec, MPI_BYTE, &rt);
    MPI_Type_create_resized(rt, 0, (MPI_Aint) rec * t_size, &ft);
    MPI_Type_commit(&ft);
    MPI_File fh;
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[6], MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    T_MPI(MPI_File_set_view(fh, (MPI_Offset) t_rank * rec, MPI_BYTE, ft, "native",
                            MPI_INFO_NULL));
    /* DDIO_FF_STARTED=FILE: rank 0 makes FILE once every rank is about to
     * call (a harness that fills large buffers first kills after it) */
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0 && getenv("DDIO_FF_STARTED")) {
        FILE *mf = fopen(getenv("DDIO_FF_STARTED"), "w");
        if (mf)
            fclose(mf);
    }
    MPI_Status st;
    int err;
    if (wr)
        err = coll ? MPI_File_write_all(fh, buf, (int) bytes, MPI_BYTE, &st)
                   : MPI_File_write(fh, buf, (int) bytes, MPI_BYTE, &st);
    else
        err = coll ? MPI_File_read_all(fh, buf, (int) bytes, MPI_BYTE, &st)
                   : MPI_File_read(fh, buf, (int) bytes, MPI_BYTE, &st);
    double failed = now_ns();
    char s[MPI_MAX_ERROR_STRING] = "";
    int n;
    if (err != MPI_SUCCESS)
        MPI_Error_string(err, s, &n);
    if (!strcmp(argv[5], "-")) {
        T_ASSERT(err == MPI_SUCCESS, "%s: %s", mode, s);
        T_MPI(MPI_File_close(&fh));
        return t_finish();
    }
    double k = kill_time(argv[5], failed + 30e9);
    double after = err != MPI_SUCCESS && k > 0 ? (failed - k) / 1e9 : -1;
    double all[1024];
    T_ASSERT(t_size <= 1024, "too many ranks");
    MPI_Gather(&after, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int bad = 0;
    if (t_rank == 0) {
        printf("%s, %d-byte records, %lld MiB:", mode, rec, (long long) (total >> 20));
        for (int r = 0; r < t_size; r++) {
            printf(" rank %d %.2f s", r, all[r]);
            bad |= all[r] < 0 || all[r] > maxsec;
        }
        printf(" after the kill (bound %.1f s)\n", maxsec);
    }
    if (err != MPI_SUCCESS && t_rank == 0)
        printf("rank 0's error: %.300s\n", s);
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    T_ASSERT(!bad, "a rank's call succeeded, or failed more than %.1f s after the kill", maxsec);
    MPI_File_close(&fh);
    MPI_Type_free(&ft);
    MPI_Type_free(&rt);
    free(buf);
    return t_finish();
}
