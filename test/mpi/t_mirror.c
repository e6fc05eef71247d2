/* A mirrored file survives the loss of one server for reads
 * (romio_ddio_redundancy=mirror; run by the mirror group of
 * run-mpi-tests.sh with 3 servers, 4 ranks).
 *
 *   t_mirror DUMP FILE   rank 0 creates FILE with the hint (ignored by
 *                        ufs:); every rank writes its records of a dealt
 *                        view collectively, then a range of its own
 *                        independently (one of them small: the inline
 *                        path); set_size cuts the tail, preallocate and
 *                        sync; then rank 0 runs $DDIO_TEST_KILL (the
 *                        harness SIGKILLs a server and deletes its root),
 *                        and every byte is read back collectively (the
 *                        view) and independently (the whole file, and past
 *                        its end: the count stops at the end; then the
 *                        tail alone), each checked
 *                        against the pattern; rank 0 writes what it read to
 *                        DUMP (a plain file; /dev/null: none), which the
 *                        harness compares with the ufs: run's file.
 *                        $T_MIRROR_MODE: the hint's value (default mirror;
 *                        mirror:3 survives two servers; ec:2+1 erasure
 *                        coded, with $T_MIRROR_CUT=0 since such a file
 *                        cannot be cut short yet; empty: no hint, the
 *                        servers' --redundancy, and get_info must say
 *                        $T_MIRROR_EXPECT).
 *   t_mirror rewrite DUMP FILE  FILE (written by a run above) opened
 *                        read-write with a server out of the membership:
 *                        every byte written again (with $T_MIRROR_SEED,
 *                        another pattern), cut, preallocated, sized and
 *                        synced as above, then read back; the out
 *                        server's part goes to and comes from its copies.
 *   t_mirror reread DUMP FILE  FILE opened read-only (a server out): its
 *                        size, and every byte read back as above.
 *   t_mirror openfails TEXT FILE  FILE opened read-write must fail on
 *                        every rank saying TEXT.
 *   t_mirror errors FILE  the refusals, on every rank: ec:2+1 on 2
 *                        servers (striping_factor 2), an unknown value and
 *                        ec:2+9 (argument errors), mirror:3 on fewer
 *                        than 3 servers (striping_factor 2); a hint on an
 *                        existing file loses to its stored mode
 *                        (get_info says which).
 */
#include "tutil.h"

#include <unistd.h>

#define SEED 43                         /* $T_MIRROR_SEED: another */
#define REC 1000                        /* a record of the dealt view */
#define RECS 1500                       /* per rank */
#define INDEP (300 * 1024)              /* each rank's independent range */
#define CUT 12345                       /* set_size takes this off the end
                                         * ($T_MIRROR_CUT: another) */

static unsigned seed = SEED;
static MPI_Offset cut = CUT;

static MPI_Offset coll_bytes(void)
{
    return (MPI_Offset) REC * RECS * t_size;
}

static MPI_Offset indep_off(int r)
{
    return coll_bytes() + (MPI_Offset) r * (INDEP + 7);
}

static MPI_Offset full_size(void)
{
    return indep_off(t_size) - cut;
}

static void fill(unsigned char *b, MPI_Offset off, MPI_Offset n)
{
    for (MPI_Offset i = 0; i < n; i++)
        b[i] = t_byte(seed, (uint64_t) (off + i));
}

static void check(const unsigned char *b, MPI_Offset off, MPI_Offset n, const char *what)
{
    for (MPI_Offset i = 0; i < n; i++)
        if (b[i] != t_byte(seed, (uint64_t) (off + i)))
            T_FAIL("%s: byte at %lld is %u, wanted %u", what, (long long) (off + i), b[i],
                   t_byte(seed, (uint64_t) (off + i)));
}

/* records of REC bytes dealt round robin to the ranks */
static void dealt_view(MPI_File fh)
{
    MPI_Datatype rec, ft;
    T_MPI(MPI_Type_vector(RECS, REC, REC * t_size, MPI_BYTE, &rec));
    T_MPI(MPI_Type_create_resized(rec, 0, (MPI_Aint) REC * RECS * t_size, &ft));
    T_MPI(MPI_Type_commit(&ft));
    T_MPI(MPI_File_set_view(fh, (MPI_Offset) t_rank * REC, MPI_BYTE, ft, "native",
                            MPI_INFO_NULL));
    MPI_Type_free(&rec);
    MPI_Type_free(&ft);
}

static void reset_view(MPI_File fh)
{
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
}

/* the bytes of rank r's records, in stream order */
static void dealt_fill(unsigned char *b, int check_only, const char *what)
{
    for (int k = 0; k < RECS; k++) {
        MPI_Offset off = ((MPI_Offset) k * t_size + t_rank) * REC;
        if (check_only)
            check(b + (size_t) k * REC, off, REC, what);
        else
            fill(b + (size_t) k * REC, off, REC);
    }
}

static void write_all(MPI_File fh)
{
    unsigned char *b = malloc((size_t) REC * RECS + INDEP + 7);
    MPI_Status st;
    dealt_view(fh);
    dealt_fill(b, 0, NULL);
    T_MPI(MPI_File_write_all(fh, b, REC * RECS, MPI_BYTE, &st));
    reset_view(fh);
    /* a small range first (the inline XFER), then the rest */
    MPI_Offset off = indep_off(t_rank);
    fill(b, off, INDEP + 7);
    T_MPI(MPI_File_write_at(fh, off, b, 4096, MPI_BYTE, &st));
    T_MPI(MPI_File_write_at(fh, off + 4096, b + 4096, INDEP + 7 - 4096, MPI_BYTE, &st));
    free(b);
}

static void read_all(MPI_File fh, const char *dump)
{
    MPI_Offset size = full_size();
    unsigned char *b = malloc((size_t) size + 8192);
    MPI_Status st;
    int got;

    dealt_view(fh);
    T_MPI(MPI_File_read_all(fh, b, REC * RECS, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    T_ASSERT(got == REC * RECS, "collective read: %d bytes, wanted %d", got, REC * RECS);
    dealt_fill(b, 1, "collective read");
    reset_view(fh);
    /* every byte, and 8 KiB past the end: the count stops at the end */
    memset(b, 0xEE, (size_t) size + 8192);
    T_MPI(MPI_File_read_at(fh, 0, b, (int) size + 8192, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    T_ASSERT(got == (int) size, "independent read: %d bytes, wanted %lld", got,
             (long long) size);
    check(b, 0, size, "independent read");
    /* the tail and past it: a read that may not touch the lost server,
     * whose size the end of file still needs */
    MPI_Offset tail = size - 100 - 7 * t_rank;
    T_MPI(MPI_File_read_at(fh, tail, b + tail, 8192, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &got);
    T_ASSERT(got == (int) (size - tail), "tail read: %d bytes, wanted %lld", got,
             (long long) (size - tail));
    check(b + tail, tail, size - tail, "tail read");
    if (t_rank == 0) {
        FILE *f = fopen(dump, "wb");
        T_ASSERT(f && fwrite(b, 1, (size_t) size, f) == (size_t) size && fclose(f) == 0,
                 "writing %s", dump);
    }
    free(b);
}

static void kill_server(void)
{
    const char *cmd = getenv("DDIO_TEST_KILL");
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0 && cmd && *cmd) {
        int rc = system(cmd);
        T_ASSERT(rc == 0, "DDIO_TEST_KILL (%s): status %d", cmd, rc);
        printf("t_mirror: ran %s\n", cmd);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void info_says(MPI_File fh, const char *want, const char *file)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    if (strncmp(file, "ddio:", 5))
        return;                         /* ufs: knows no such hint */
    T_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, "romio_ddio_redundancy", MPI_MAX_INFO_VAL, v, &flag);
    T_ASSERT(flag && !strcmp(v, want), "romio_ddio_redundancy is %s, wanted %s",
             flag ? v : "(absent)", want);
    MPI_Info_free(&info);
}

static int mirrored(const char *file, const char *dump)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Offset size;
    /* $T_MIRROR_MODE empty: no hint, the servers' --redundancy decides, and
     * get_info must say $T_MIRROR_EXPECT */
    const char *mode = getenv("T_MIRROR_MODE") ? getenv("T_MIRROR_MODE") : "mirror";
    const char *expect = getenv("T_MIRROR_EXPECT") ? getenv("T_MIRROR_EXPECT") : mode;
    MPI_Info_create(&info);
    if (*mode)
        MPI_Info_set(info, "romio_ddio_redundancy", mode);
    MPI_Info_set(info, "striping_unit", "65536");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    info_says(fh, expect, file);
    write_all(fh);
    T_MPI(MPI_File_set_size(fh, full_size()));
    T_MPI(MPI_File_preallocate(fh, full_size()));
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == full_size(), "size %lld, wanted %lld", (long long) size,
             (long long) full_size());
    T_MPI(MPI_File_sync(fh));
    kill_server();
    read_all(fh, dump);
    T_MPI(MPI_File_close(&fh));
    if (t_rank == 0)
        printf("t_mirror: %lld bytes written, read back after the kill: ok\n",
               (long long) full_size());
    return 0;
}

/* an existing FILE, a server out: written again (rewrite) and read back,
 * or read back only (reread) */
static int again(const char *file, const char *dump, int write)
{
    MPI_File fh;
    MPI_Offset size;
    T_MPI(MPI_File_open(MPI_COMM_WORLD, file, write ? MPI_MODE_RDWR : MPI_MODE_RDONLY,
                        MPI_INFO_NULL, &fh));
    if (write) {
        write_all(fh);
        T_MPI(MPI_File_set_size(fh, full_size()));
        T_MPI(MPI_File_preallocate(fh, full_size()));
        T_MPI(MPI_File_sync(fh));
    }
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == full_size(), "size %lld, wanted %lld", (long long) size,
             (long long) full_size());
    read_all(fh, dump);
    T_MPI(MPI_File_close(&fh));
    if (t_rank == 0)
        printf("t_mirror: %s%lld bytes read back (seed %u): ok\n", write ? "written again, "
               : "", (long long) size, seed);
    return 0;
}

/* a writable open of FILE must fail on every rank with a message containing
 * text (checked here, not by an abort: its message can be lost on its way
 * through mpiexec) */
static int open_fails(const char *file, const char *text)
{
    MPI_File fh;
    char s[MPI_MAX_ERROR_STRING];
    int n, all;
    int err = MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    s[0] = 0;
    if (err != MPI_SUCCESS)
        MPI_Error_string(err, s, &n);
    else
        MPI_File_close(&fh);
    int mine = err != MPI_SUCCESS && strstr(s, text) != NULL;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!mine)
        fprintf(stderr, "t_mirror: rank %d: the open %s (\"%s\" does not say \"%s\")\n", t_rank,
                err == MPI_SUCCESS ? "succeeded" : "failed otherwise", s, text);
    if (t_rank == 0 && all)
        printf("t_mirror: the open failed on every rank: %s\n", s);
    return all ? 0 : 1;
}

/* an open with hint key=value must fail on every rank with class want
 * and a message containing text */
static void refused(const char *file, const char *key, const char *value, const char *factor,
                    int want, const char *text)
{
    MPI_File fh;
    MPI_Info info;
    char s[MPI_MAX_ERROR_STRING];
    int n, err, cls;
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
    if (factor)
        MPI_Info_set(info, "striping_factor", factor);
    err = MPI_File_open(MPI_COMM_WORLD, file, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    MPI_Info_free(&info);
    T_ASSERT(err != MPI_SUCCESS, "%s=%s was accepted", key, value);
    MPI_Error_class(err, &cls);
    MPI_Error_string(err, s, &n);
    T_ASSERT(cls == want, "%s=%s: class %d, wanted %d (%s)", key, value, cls, want, s);
    T_ASSERT(strstr(s, text), "%s=%s: \"%s\" does not say \"%s\"", key, value, s, text);
    if (t_rank == 0)
        printf("t_mirror: %s=%s%s%s refused: %s\n", key, value, factor ? " striping_factor=" : "",
               factor ? factor : "", s);
}

static int errors(const char *file)
{
    MPI_File fh;
    MPI_Info info;
    char *other = t_name(file, ".none");
    refused(file, "romio_ddio_redundancy", "ec:2+1", "2", MPI_ERR_ARG, "ec:2+1 needs 3 servers");
    refused(file, "romio_ddio_redundancy", "ec:2+9", NULL, MPI_ERR_ARG,
            "not none, mirror, mirror:3 or ec:K+M");
    refused(file, "romio_ddio_redundancy", "mirrror", NULL, MPI_ERR_ARG,
            "not none, mirror, mirror:3 or ec:K+M");
    refused(file, "romio_ddio_redundancy", "mirror:3", "2", MPI_ERR_ARG, "3 copies need 3");
    /* created without copies: a later mirror hint does not change it */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh));
    info_says(fh, "none", other);
    T_MPI(MPI_File_close(&fh));
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ddio_redundancy", "mirror");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_RDWR, info, &fh));
    info_says(fh, "none", other);
    T_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    free(other);
    if (t_rank == 0)
        printf("t_mirror: errors: ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    if (getenv("T_MIRROR_SEED"))
        seed = (unsigned) atoi(getenv("T_MIRROR_SEED"));
    if (getenv("T_MIRROR_CUT"))
        cut = atoll(getenv("T_MIRROR_CUT"));
    int rc = 1;
    if (argc == 3 && !strcmp(argv[1], "errors"))
        rc = errors(argv[2]);
    else if (argc == 4 && !strcmp(argv[1], "openfails"))
        rc = open_fails(argv[3], argv[2]);
    else if (argc == 4 && (!strcmp(argv[1], "reread") || !strcmp(argv[1], "rewrite")))
        rc = again(argv[3], argv[2], !strcmp(argv[1], "rewrite"));
    else if (argc == 3)
        rc = mirrored(argv[2], argv[1]);
    else
        T_FAIL("usage: t_mirror DUMP FILE | t_mirror rewrite|reread DUMP FILE | "
               "t_mirror errors FILE | t_mirror openfails TEXT FILE");
    MPI_Finalize();
    return rc;
}
