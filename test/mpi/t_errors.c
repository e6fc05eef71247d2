/* Server errors reach every rank as the right MPI error class.
 *   t_errors nospace FILE   root on a small file system: writes fail with
 *                           MPI_ERR_NO_SPACE on every rank (independent and
 *                           collective), and the server keeps serving
 *   t_errors readonly FILE  root remounted read-only: create fails with
 *                           MPI_ERR_READ_ONLY
 *   t_errors escape FILE    FILE escapes the storage root: MPI_ERR_ACCESS
 *   t_errors classes FILE   the other MPI-IO error classes where they apply:
 *                           MPI_ERR_FILE, NOT_SAME, AMODE, UNSUPPORTED_DATAREP,
 *                           UNSUPPORTED_OPERATION, NO_SUCH_FILE, FILE_EXISTS,
 *                           BAD_FILE, ACCESS, READ_ONLY, DUP_DATAREP,
 *                           CONVERSION (independent, collective, nonblocking)
 *   t_errors lostserver FILE DIR   a server dies after the first write (the
 *                           harness kills it when DIR/ready appears and
 *                           creates DIR/killed): every later write, blocking,
 *                           collective or nonblocking, fails with MPI_ERR_IO
 *                           on every rank, and the message names the server */
#include "tutil.h"
#include <unistd.h>

#define BIG (4 << 20)

static void expect_class(int err, int want, const char *what)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int n;
    if (err != MPI_SUCCESS)
        MPI_Error_string(err, s, &n);
    T_ASSERT(t_errclass(err) == want, "%s: class %d, want %d (%s)", what, t_errclass(err), want, s);
    if (t_rank == 0)
        printf("%s: got the expected error: %s\n", what, s);
}

static void nospace(const char *f)
{
    MPI_File fh;
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    char *b = calloc(BIG, 1);
    int err = MPI_File_write_at(fh, (MPI_Offset) t_rank * BIG, b, BIG, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_NO_SPACE, "independent write on a full disk");
    err = MPI_File_write_at_all(fh, (MPI_Offset) t_rank * BIG, b, BIG, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_NO_SPACE, "collective write on a full disk");
    MPI_Request q;
    err = MPI_File_iwrite_at(fh, (MPI_Offset) t_rank * BIG, b, BIG, MPI_BYTE, &q);
    if (err == MPI_SUCCESS)
        err = MPI_Wait(&q, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_NO_SPACE, "nonblocking write on a full disk");
    err = MPI_File_iwrite_at_all(fh, (MPI_Offset) t_rank * BIG, b, BIG, MPI_BYTE, &q);
    if (err == MPI_SUCCESS)
        err = MPI_Wait(&q, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_NO_SPACE, "nonblocking collective write on a full disk");
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        T_MPI(MPI_File_delete(f, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    /* the server still serves: a small file works */
    char *g = t_name(f, ".small");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, g, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    int v = 42 + t_rank, r = 0;
    T_MPI(MPI_File_write_at_all(fh, t_rank * 4, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_read_at_all(fh, t_rank * 4, &r, 1, MPI_INT, MPI_STATUS_IGNORE));
    T_ASSERT(r == v, "after ENOSPC: read %d, want %d", r, v);
    T_MPI(MPI_File_close(&fh));
    free(g);
    free(b);
}

/* expect_class, and the message names a ddio server (on ddio: only) */
static void expect_server(int err, int want, const char *what, const char *f)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int n;
    expect_class(err, want, what);
    MPI_Error_string(err, s, &n);
#ifdef OPEN_MPI
    /* Open MPI's MPI_Error_string gives only the class: the driver writes
     * its message, which names the server, to stderr, where the harness
     * looks for it (test/ompi/run-ompi-tests.sh errors) */
    (void) f;
#else
    if (!strncmp(f, "ddio:", 5))
        T_ASSERT(strstr(s, "server 127.0.0.1:") != NULL, "%s: message does not name the "
                 "server: %s", what, s);
#endif
}

static int bad_conversion(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                          MPI_Offset position, void *extra_state)
{
    (void) userbuf;
    (void) datatype;
    (void) count;
    (void) filebuf;
    (void) position;
    (void) extra_state;
    return MPI_ERR_CONVERSION;
}

static int extent_fn(MPI_Datatype datatype, MPI_Aint * extent, void *extra_state)
{
    MPI_Aint lb;
    (void) extra_state;
    return MPI_Type_get_extent(datatype, &lb, extent);
}

/* hindexed of n 4-byte blocks at d[] (bytes) */
static MPI_Datatype blocks(int n, const MPI_Aint * d)
{
    int bl[3] = { 4, 4, 4 };
    MPI_Datatype t;
    MPI_Type_create_hindexed(n, bl, d, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* MPI's rules for a view's etype and filetype (MPI 4.0 14.3): displacements
 * non-negative and monotonically nondecreasing, no overlap when writing.
 * ddio checks them on the view's tree (ad_ddio_pos.c), ROMIO on its
 * flattened list: the same classes on both, and positions right after.
 * Open MPI's MPI_File_set_view checks both types itself before any io
 * component sees them (OMPI_CHECK_DATATYPE_FOR_VIEW: ompi_datatype_is_monotonic,
 * which also refuses overlap): a decreasing or overlapping type is
 * MPI_ERR_TYPE there, read-only or not, on ddio: and ufs: alike; a negative
 * displacement passes that check and reaches the driver (MPI_ERR_IO). */
#ifdef OPEN_MPI
#define T_NONMONOTONE MPI_ERR_TYPE
#else
#define T_NONMONOTONE MPI_ERR_IO
#endif
static void view_rules(MPI_File fh, const char *f)
{
    const MPI_Aint neg[2] = { -8, 8 }, dec[2] = { 16, 0 }, ovl[2] = { 0, 2 }, ok[2] = { 0, 8 };
    MPI_Datatype tn = blocks(2, neg), td = blocks(2, dec), to = blocks(2, ovl), tk = blocks(2, ok);
    MPI_Offset pos, byte;
    MPI_File fr;
    int err;

    err = MPI_File_set_view(fh, 0, MPI_BYTE, tn, "native", MPI_INFO_NULL);
    expect_class(err, MPI_ERR_IO, "set_view: a negative displacement in the filetype");
    err = MPI_File_set_view(fh, 0, tn, tn, "native", MPI_INFO_NULL);
    expect_class(err, MPI_ERR_IO, "set_view: a negative displacement in the etype");
    err = MPI_File_set_view(fh, 0, MPI_BYTE, td, "native", MPI_INFO_NULL);
    expect_class(err, T_NONMONOTONE, "set_view: decreasing displacements");
    err = MPI_File_set_view(fh, 0, MPI_BYTE, to, "native", MPI_INFO_NULL);
    expect_class(err, T_NONMONOTONE, "set_view: overlapping filetype on a writable file");
    T_MPI(MPI_File_set_view(fh, 100, MPI_BYTE, tk, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_get_position(fh, &pos));
    T_MPI(MPI_File_get_byte_offset(fh, 5, &byte));
    T_ASSERT(pos == 0 && byte == 109, "view (0,4),(8,4) at 100: position %lld, etype 5 at %lld",
             (long long) pos, (long long) byte);
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    /* overlap is allowed when reading only (not by Open MPI: above) */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_RDONLY, MPI_INFO_NULL, &fr));
    MPI_File_set_errhandler(fr, MPI_ERRORS_RETURN);
#ifdef OPEN_MPI
    err = MPI_File_set_view(fr, 0, MPI_BYTE, to, "native", MPI_INFO_NULL);
    expect_class(err, MPI_ERR_TYPE, "set_view: overlapping filetype, read-only (Open MPI)");
#else
    T_MPI(MPI_File_set_view(fr, 0, MPI_BYTE, to, "native", MPI_INFO_NULL));
#endif
    err = MPI_File_set_view(fr, 0, MPI_BYTE, td, "native", MPI_INFO_NULL);
    expect_class(err, T_NONMONOTONE, "set_view: decreasing displacements, read-only");
    T_MPI(MPI_File_close(&fr));
    MPI_Type_free(&tn);
    MPI_Type_free(&td);
    MPI_Type_free(&to);
    MPI_Type_free(&tk);
}

static void classes(const char *f)
{
    MPI_File fh;
    char *missing = t_name(f, ".missing"), *sub = t_name(f, "/sub"), *seq = t_name(f, ".seq");
    char longname[400];
    int err, v = 1;

    /* a file handle that is not one */
    err = MPI_File_write(MPI_FILE_NULL, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_FILE, "write on MPI_FILE_NULL");
    /* amode */
    err = MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    expect_class(err, MPI_ERR_AMODE, "RDONLY|RDWR");
    err = MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                        &fh);
    expect_class(err, MPI_ERR_AMODE, "RDONLY|CREATE");
    /* ranks disagree on the amode */
    err = MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | (t_rank ? MPI_MODE_RDWR :
                        MPI_MODE_WRONLY), MPI_INFO_NULL, &fh);
    expect_class(err, MPI_ERR_NOT_SAME, "amode differs between ranks");
    /* hints the ranks disagree on at open: the open fails on every rank
     * (ROMIO's ADIO_Open crashed on it once: the driver's SetInfo returned
     * before ROMIO's own hints were set up), creates nothing, and the next
     * open goes on as usual */
    if (!strncmp(f, "ddio:", 5)) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_ddio_redundancy", t_rank ? "mirror" : "none");
        err = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
        expect_class(err, MPI_ERR_NOT_SAME, "romio_ddio_redundancy differs between ranks at open");
        MPI_Info_free(&info);
    }
    /* no such file: open and delete */
    err = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    expect_class(err, MPI_ERR_NO_SUCH_FILE, "open of a missing file");
    if (t_rank == 0) {
        err = MPI_File_delete(missing, MPI_INFO_NULL);
        expect_class(err, MPI_ERR_NO_SUCH_FILE, "delete of a missing file");
    }
    /* the file, then EXCL on it */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    {
        MPI_File fx;
        err = MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fx);
        expect_class(err, MPI_ERR_FILE_EXISTS, "CREATE|EXCL of an existing file");
    }
    view_rules(fh, f);
    /* a data representation nobody registered; a hint the ranks disagree on */
    err = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-rep", MPI_INFO_NULL);
    expect_class(err, MPI_ERR_UNSUPPORTED_DATAREP, "set_view with an unknown datarep");
    if (!strncmp(f, "ddio:", 5)) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_ddio_collective", t_rank ? "ddio" : "twophase");
        err = MPI_File_set_info(fh, info);
#ifdef OPEN_MPI
        /* Open MPI's MPI_File_set_info only updates its own copy of the
         * hints (opal_infosubscribe_change_info): no io component, hence
         * no driver, sees them, and nothing can compare them */
        expect_class(err, MPI_SUCCESS, "romio_ddio_collective differs between ranks (Open MPI: "
                     "set_info does not reach the driver)");
#else
        expect_class(err, MPI_ERR_NOT_SAME, "romio_ddio_collective differs between ranks");
#endif
        MPI_Info_free(&info);
    }
    /* a registered representation: registering twice, converting fails */
    err = MPI_Register_datarep("ddio-test-rep", bad_conversion, bad_conversion, extent_fn,
                               NULL);
    /* MPICH 4.0.2's ROMIO registers it (MPI_SUCCESS) or refuses it with a
     * code of its own that MPI_Error_class cannot decode: then DUP_DATAREP
     * and CONVERSION cannot arise, and the test says so */
    if (err != MPI_SUCCESS && t_rank == 0)
        printf("MPI_Register_datarep refused (error code %d): DUP_DATAREP and CONVERSION "
               "not reachable\n", err);
    if (err == MPI_SUCCESS) {
        err = MPI_Register_datarep("ddio-test-rep", bad_conversion, bad_conversion, extent_fn,
                                   NULL);
        expect_class(err, MPI_ERR_DUP_DATAREP, "registering a datarep twice");
        err = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "ddio-test-rep", MPI_INFO_NULL);
        if (err == MPI_SUCCESS) {
            err = MPI_File_write_at(fh, t_rank, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
            expect_class(err, MPI_ERR_CONVERSION, "write through a failing conversion");
        } else
            expect_class(err, MPI_ERR_UNSUPPORTED_DATAREP, "set_view with a user datarep");
        T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    }
    T_MPI(MPI_File_close(&fh));
    /* a read-only file refuses writes of every kind */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    err = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_READ_ONLY, "write_at on RDONLY");
    err = MPI_File_write_at_all(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_READ_ONLY, "write_at_all on RDONLY");
    {
        MPI_Request r;
        err = MPI_File_iwrite_at(fh, 0, &v, 1, MPI_INT, &r);
        expect_class(err, MPI_ERR_READ_ONLY, "iwrite_at on RDONLY");
    }
    T_MPI(MPI_File_close(&fh));
    /* ... and a write-only one reads */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    err = MPI_File_read_at_all(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_ACCESS, "read_at_all on WRONLY");
    T_MPI(MPI_File_close(&fh));
    /* sequential access: no seeking, no explicit offsets */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, seq, MPI_MODE_CREATE | MPI_MODE_WRONLY |
                        MPI_MODE_SEQUENTIAL | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    err = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    expect_class(err, MPI_ERR_UNSUPPORTED_OPERATION, "seek on SEQUENTIAL");
    err = MPI_File_write_at(fh, 0, &v, 1, MPI_INT, MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_UNSUPPORTED_OPERATION, "write_at on SEQUENTIAL");
    T_MPI(MPI_File_close(&fh));
    /* names the storage cannot hold: a file used as a directory, a
     * component longer than NAME_MAX */
    err = MPI_File_open(MPI_COMM_WORLD, sub, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh);
    expect_server(err, MPI_ERR_BAD_FILE, "a file used as a directory", f);
    snprintf(longname, sizeof(longname), "%s.%0300d", f, 7);
    err = MPI_File_open(MPI_COMM_WORLD, longname, MPI_MODE_CREATE | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh);
    expect_class(err, MPI_ERR_BAD_FILE, "a name component longer than NAME_MAX");
    free(missing);
    free(sub);
    free(seq);
}

static void wait_for(const char *path)
{
    for (int i = 0; i < 600 && access(path, F_OK); i++)
        usleep(100000);
    T_ASSERT(!access(path, F_OK), "%s never appeared", path);
}

static void lostserver(const char *f, const char *dir)
{
    MPI_File fh;
    char *ready = t_name(dir, "/ready"), *killed = t_name(dir, "/killed");
    int v[4096], err;
    MPI_Request r;
    MPI_Status st;

    memset(v, 1, sizeof(v));
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "4096");        /* every server holds some */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    T_MPI(MPI_File_write_at_all(fh, (MPI_Offset) t_rank * sizeof(v), v, 4096, MPI_INT,
                                MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        fclose(fopen(ready, "w"));
    wait_for(killed);
    MPI_Barrier(MPI_COMM_WORLD);
    err = MPI_File_write_at(fh, (MPI_Offset) t_rank * sizeof(v), v, 4096, MPI_INT,
                            MPI_STATUS_IGNORE);
    /* a write the client cache took fails where it is flushed: the sync */
    if (err == MPI_SUCCESS)
        err = MPI_File_sync(fh);
    expect_server(err, MPI_ERR_IO, "write_at (or its sync) after a server died", f);
    err = MPI_File_write_at_all(fh, (MPI_Offset) t_rank * sizeof(v), v, 4096, MPI_INT,
                                MPI_STATUS_IGNORE);
    expect_class(err, MPI_ERR_IO, "write_at_all after a server died");
    err = MPI_File_iwrite_at_all(fh, (MPI_Offset) t_rank * sizeof(v), v, 4096, MPI_INT, &r);
    if (err == MPI_SUCCESS)
        err = MPI_Wait(&r, &st);
    expect_class(err, MPI_ERR_IO, "iwrite_at_all after a server died");
    err = MPI_File_iread_at(fh, (MPI_Offset) t_rank * sizeof(v), v, 4096, MPI_INT, &r);
    if (err == MPI_SUCCESS)
        err = MPI_Wait(&r, &st);
    expect_class(err, MPI_ERR_IO, "iread_at after a server died");
    MPI_File_close(&fh);
    free(ready);
    free(killed);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);   /* MPI_Wait's errors */
    if (argc == 4 && !strcmp(argv[1], "lostserver")) {
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
        lostserver(argv[2], argv[3]);
        return t_finish();
    }
    T_ASSERT(argc == 3, "usage: t_errors nospace|readonly|escape|classes FILE | "
             "t_errors lostserver FILE DIR");
    MPI_File fh;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    if (strcmp(argv[1], "nospace") == 0) {
        nospace(argv[2]);
    } else if (strcmp(argv[1], "readonly") == 0) {
        int err = MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        expect_class(err, MPI_ERR_READ_ONLY, "create on a read-only root");
    } else if (strcmp(argv[1], "classes") == 0) {
        classes(argv[2]);
    } else if (strcmp(argv[1], "escape") == 0) {
        int err = MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        expect_class(err, MPI_ERR_ACCESS, "a path escaping the storage root");
    } else {
        T_FAIL("unknown mode %s", argv[1]);
    }
    return t_finish();
}
