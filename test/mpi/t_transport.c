/* The transport a file settles on (ddio_transport_in_use) is the expected
 * one, and data written and read back collectively through it is right.
 * usage: t_transport EXPECT HINT FILE
 *   EXPECT: tcp | ucx | error (the open must fail, naming UCX)
 *   HINT:   auto | tcp | ucx for romio_ddio_transport, or - for none */
#include "tutil.h"

#define PER_RANK (256 * 1024)   /* above DDIO_UCX_MIN_STREAM: UCX moves it */

static MPI_Info hint_info(const char *hint)
{
    MPI_Info info = MPI_INFO_NULL;
    if (strcmp(hint, "-") != 0) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "romio_ddio_transport", hint);
    }
    return info;
}

static void check_in_use(MPI_File fh, const char *expect)
{
    MPI_Info got;
    char v[64] = "";
    int flag = 0;
    T_MPI(MPI_File_get_info(fh, &got));
    MPI_Info_get(got, "ddio_transport_in_use", sizeof(v) - 1, v, &flag);
    MPI_Info_free(&got);
    T_ASSERT(flag, "ddio_transport_in_use is not reported");
    T_ASSERT(strcmp(v, expect) == 0, "ddio_transport_in_use is %s, expected %s", v, expect);
}

/* rank r's PER_RANK bytes interleaved in 8 KiB records with the others' */
static void set_view(MPI_File fh)
{
    MPI_Datatype rec, file;
    MPI_Type_contiguous(8192, MPI_BYTE, &rec);
    MPI_Type_vector(PER_RANK / 8192, 1, t_size, rec, &file);
    MPI_Type_commit(&file);
    T_MPI(MPI_File_set_view(fh, (MPI_Offset) t_rank * 8192, MPI_BYTE, file, "native",
                            MPI_INFO_NULL));
    MPI_Type_free(&file);
    MPI_Type_free(&rec);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 4, "usage: t_transport tcp|ucx|error auto|tcp|ucx|- FILE");
    const char *expect = argv[1];
    MPI_Info info = hint_info(argv[2]);
    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, argv[3], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
    if (strcmp(expect, "error") == 0) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        T_ASSERT(rc != MPI_SUCCESS, "the open succeeded; expected it to fail");
        MPI_Error_string(rc, msg, &len);
        T_ASSERT(strstr(msg, "ucx") != NULL, "the open failed without naming UCX: %s", msg);
    } else {
        T_MPI(rc);
        check_in_use(fh, expect);
        unsigned char *b = malloc(PER_RANK), *r = malloc(PER_RANK);
        T_ASSERT(b && r, "out of memory");
        for (int i = 0; i < PER_RANK; i++)
            b[i] = t_byte(29 + t_rank, i);
        set_view(fh);
        T_MPI(MPI_File_write_all(fh, b, PER_RANK, MPI_BYTE, MPI_STATUS_IGNORE));
        memset(r, 0, PER_RANK);
        T_MPI(MPI_File_read_at_all(fh, 0, r, PER_RANK, MPI_BYTE, MPI_STATUS_IGNORE));
        T_ASSERT(memcmp(b, r, PER_RANK) == 0, "read back differs from what was written");
        T_MPI(MPI_File_close(&fh));
        free(b);
        free(r);
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    return t_finish();
}
