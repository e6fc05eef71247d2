/* MPI-4 large counts: a count beyond INT_MAX in one call of an `_c` routine.
 * Each rank writes MIB MiB of MPI_BYTE (count = MIB * 2^20 > INT_MAX from
 * 2048 MiB on) with ONE call of the write routine of FAMILY, then reads it
 * back, into the cleared buffer, with ONE call of the matching read routine,
 * and checks every 8-byte word, the status counts and the file size.
 * Families: indep (write_c/read_c after a seek), at, all, at_all, i, i_at,
 * i_all, i_at_all, all_begin, at_all_begin, shared (rank 0 alone, the
 * others count 0), ordered, ordered_begin.
 * usage: t_lcount FAMILY MIB FILE   (hints from DDIO_TEST_HINTS) */
#include "tmodel.h"

#define MB ((MPI_Count) 1 << 20)

static inline uint64_t word(uint64_t i)
{
    uint64_t x = (i + 7) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    return x * 0xBF58476D1CE4E5B9ull;
}

static MPI_Status done(MPI_Request req)
{
    MPI_Status st;
    T_MPI(MPI_Wait(&req, &st));
    return st;
}

/* one call of FAMILY in direction W (1 write, 0 read) at OFF */
static MPI_Status one_call(MPI_File fh, const char *fam, int w, MPI_Offset off, void *buf,
                           MPI_Count n)
{
    MPI_Status st;
    MPI_Request rq;
    if (!strcmp(fam, "indep")) {
        T_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET));
        T_MPI(w ? MPI_File_write_c(fh, buf, n, MPI_BYTE, &st)
                : MPI_File_read_c(fh, buf, n, MPI_BYTE, &st));
    } else if (!strcmp(fam, "at")) {
        T_MPI(w ? MPI_File_write_at_c(fh, off, buf, n, MPI_BYTE, &st)
                : MPI_File_read_at_c(fh, off, buf, n, MPI_BYTE, &st));
    } else if (!strcmp(fam, "all")) {
        T_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET));
        T_MPI(w ? MPI_File_write_all_c(fh, buf, n, MPI_BYTE, &st)
                : MPI_File_read_all_c(fh, buf, n, MPI_BYTE, &st));
    } else if (!strcmp(fam, "at_all")) {
        T_MPI(w ? MPI_File_write_at_all_c(fh, off, buf, n, MPI_BYTE, &st)
                : MPI_File_read_at_all_c(fh, off, buf, n, MPI_BYTE, &st));
    } else if (!strcmp(fam, "i")) {
        T_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET));
        T_MPI(w ? MPI_File_iwrite_c(fh, buf, n, MPI_BYTE, &rq)
                : MPI_File_iread_c(fh, buf, n, MPI_BYTE, &rq));
        st = done(rq);
    } else if (!strcmp(fam, "i_at")) {
        T_MPI(w ? MPI_File_iwrite_at_c(fh, off, buf, n, MPI_BYTE, &rq)
                : MPI_File_iread_at_c(fh, off, buf, n, MPI_BYTE, &rq));
        st = done(rq);
    } else if (!strcmp(fam, "i_all")) {
        T_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET));
        T_MPI(w ? MPI_File_iwrite_all_c(fh, buf, n, MPI_BYTE, &rq)
                : MPI_File_iread_all_c(fh, buf, n, MPI_BYTE, &rq));
        st = done(rq);
    } else if (!strcmp(fam, "i_at_all")) {
        T_MPI(w ? MPI_File_iwrite_at_all_c(fh, off, buf, n, MPI_BYTE, &rq)
                : MPI_File_iread_at_all_c(fh, off, buf, n, MPI_BYTE, &rq));
        st = done(rq);
    } else if (!strcmp(fam, "all_begin")) {
        T_MPI(MPI_File_seek(fh, off, MPI_SEEK_SET));
        T_MPI(w ? MPI_File_write_all_begin_c(fh, buf, n, MPI_BYTE)
                : MPI_File_read_all_begin_c(fh, buf, n, MPI_BYTE));
        T_MPI(w ? MPI_File_write_all_end(fh, buf, &st) : MPI_File_read_all_end(fh, buf, &st));
    } else if (!strcmp(fam, "at_all_begin")) {
        T_MPI(w ? MPI_File_write_at_all_begin_c(fh, off, buf, n, MPI_BYTE)
                : MPI_File_read_at_all_begin_c(fh, off, buf, n, MPI_BYTE));
        T_MPI(w ? MPI_File_write_at_all_end(fh, buf, &st)
                : MPI_File_read_at_all_end(fh, buf, &st));
    } else if (!strcmp(fam, "shared")) {
        /* rank 0 alone moves bytes (the others' count is 0): the order of
         * several ranks on the shared pointer is not defined */
        T_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
        T_MPI(w ? MPI_File_write_shared_c(fh, buf, n, MPI_BYTE, &st)
                : MPI_File_read_shared_c(fh, buf, n, MPI_BYTE, &st));
    } else if (!strcmp(fam, "ordered")) {
        T_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
        T_MPI(w ? MPI_File_write_ordered_c(fh, buf, n, MPI_BYTE, &st)
                : MPI_File_read_ordered_c(fh, buf, n, MPI_BYTE, &st));
    } else if (!strcmp(fam, "ordered_begin")) {
        T_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
        T_MPI(w ? MPI_File_write_ordered_begin_c(fh, buf, n, MPI_BYTE)
                : MPI_File_read_ordered_begin_c(fh, buf, n, MPI_BYTE));
        T_MPI(w ? MPI_File_write_ordered_end(fh, buf, &st)
                : MPI_File_read_ordered_end(fh, buf, &st));
    } else
        T_FAIL("unknown family %s", fam);
    return st;
}

static void check_status(const MPI_Status * st, MPI_Count n, const char *what)
{
    MPI_Count got;
    T_MPI(MPI_Get_count_c(st, MPI_BYTE, &got));
    T_ASSERT(got == n, "%s: MPI_Get_count_c says %lld of %lld bytes", what, (long long) got,
             (long long) n);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 4, "usage: t_lcount FAMILY MIB FILE");
    const char *fam = argv[1];
    MPI_Count mib = atol(argv[2]);
    int shared = !strcmp(fam, "shared");
    MPI_Count n = shared && t_rank != 0 ? 0 : mib * MB;
    MPI_Offset off = shared ? 0 : (MPI_Offset) t_rank * mib * MB;
    size_t nw = (size_t) n / 8;
    uint64_t *buf = malloc((size_t) n + 8), first = (uint64_t) off / 8;
    T_ASSERT(buf, "cannot allocate %lld bytes", (long long) n);
    for (size_t i = 0; i < nw; i++)
        buf[i] = word(first + i);

    MPI_Info info = tm_hints();
    MPI_File fh;
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[3], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    double t0 = MPI_Wtime();
    MPI_Status st = one_call(fh, fam, 1, off, buf, n);
    check_status(&st, n, "write");
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    memset(buf, 0, (size_t) n);
    st = one_call(fh, fam, 0, off, buf, n);
    double t2 = MPI_Wtime();
    check_status(&st, n, "read");
    for (size_t i = 0; i < nw; i++)
        T_ASSERT(buf[i] == word(first + i), "word %zu (file offset %lld) is wrong", i,
                 (long long) (off + 8 * (MPI_Offset) i));
    MPI_Offset size;
    T_MPI(MPI_File_get_size(fh, &size));
    MPI_Offset want = shared ? mib * MB : (MPI_Offset) t_size * mib * MB;
    T_ASSERT(size == want, "file size %lld, expected %lld", (long long) size, (long long) want);
    T_MPI(MPI_File_close(&fh));
    if (t_rank == 0)
        printf("rank 0: %s, count %lld: written in %.2f s, read in %.2f s\n", fam,
               (long long) n, t1 - t0, t2 - t1);
    MPI_Info_free(&info);
    free(buf);
    return t_finish();
}
