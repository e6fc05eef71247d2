/* Authentication through the driver.
 *   t_auth FILE ok              open (create), every rank writes its 4 KiB
 *                               block, reads it back, and verifies it
 *   t_auth FILE refused TEXT    the open fails on every rank with
 *                               MPI_ERR_ACCESS and a message holding TEXT
 *                               (on Open MPI, whose MPI_Error_string gives
 *                               only the class, the driver's message is on
 *                               stderr: the harness looks for TEXT there)
 * $T_SECRET_HINT, when set, is passed as the hint romio_ddio_secret_file;
 * the secret otherwise comes from DDIO_SECRET_FILE / DDIO_CONFIG. */
#include "tutil.h"

#define BLK 4096

static MPI_Info hints(void)
{
    const char *h = getenv("T_SECRET_HINT");
    MPI_Info info = MPI_INFO_NULL;
    if (h && *h) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_ddio_secret_file", h);
    }
    return info;
}

static void check_hint_reported(MPI_File fh)
{
    const char *h = getenv("T_SECRET_HINT");
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (!h || !*h)
        return;
    T_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, "romio_ddio_secret_file", MPI_MAX_INFO_VAL, v, &flag);
    T_ASSERT(flag && strcmp(v, h) == 0, "hint romio_ddio_secret_file not reported");
    MPI_Info_free(&info);
}

static void expect_ok(const char *path, MPI_Info info)
{
    MPI_File fh;
    unsigned char out[BLK], in[BLK];
    MPI_Status st;
    int n;
    T_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    check_hint_reported(fh);
    for (int i = 0; i < BLK; i++)
        out[i] = t_byte((uint64_t)t_rank + 11, (uint64_t)i);
    T_MPI(MPI_File_write_at_all(fh, (MPI_Offset)t_rank * BLK, out, BLK, MPI_BYTE, &st));
    memset(in, 0, sizeof(in));
    T_MPI(MPI_File_read_at_all(fh, (MPI_Offset)t_rank * BLK, in, BLK, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == BLK && memcmp(in, out, BLK) == 0, "read back differs (%d bytes)", n);
    T_MPI(MPI_File_close(&fh));
}

static void expect_refused(const char *path, MPI_Info info, const char *text)
{
    MPI_File fh;
    char s[MPI_MAX_ERROR_STRING];
    int n;
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    int err = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    T_ASSERT(err != MPI_SUCCESS, "open succeeded; expected a refusal with '%s'", text);
    MPI_Error_string(err, s, &n);
    T_ASSERT(t_errclass(err) == MPI_ERR_ACCESS, "error class %d, not MPI_ERR_ACCESS: %s",
             t_errclass(err), s);
#ifdef OPEN_MPI
    (void) text;
    if (t_rank == 0)
        printf("refused as expected: %s (the driver's message: stderr)\n", s);
#else
    T_ASSERT(strstr(s, text), "error '%s' lacks '%s'", s, text);
    if (t_rank == 0)
        printf("refused as expected: %s\n", s);
#endif
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc >= 3, "usage: t_auth FILE ok | t_auth FILE refused TEXT");
    MPI_Info info = hints();
    if (strcmp(argv[2], "ok") == 0)
        expect_ok(argv[1], info);
    else if (strcmp(argv[2], "refused") == 0 && argc == 4)
        expect_refused(argv[1], info, argv[3]);
    else
        T_FAIL("unknown mode %s", argv[2]);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return t_finish();
}
