/* Parked handles (common/ddio_core_park.c): a file closed and opened again
 * by the same process reads what it must, whatever another process did
 * in between. usage: t_park PREFIX (2 ranks or more; opens on COMM_SELF)
 *  - again: rank 0 writes A, closes, opens it read-only, reads it back;
 *    then read-write, writes more, closes, reads all of it back
 *  - deleted: rank 0 closes B; rank 1 deletes it: rank 0's open fails
 *    with MPI_ERR_NO_SUCH_FILE
 *  - replaced: rank 0 closes C; rank 1 deletes it and writes a new C of
 *    other bytes and length: rank 0 reads the new bytes and size
 *  - self: rank 0 closes D, deletes it itself, creates D again: new bytes
 *  - hint: get_info reports romio_ddio_park (T_PARK_WANT, else enable
 *    when DDIO_PARK_MS > 0)
 * The runner counts the servers' OPENs: fewer with parking on than off. */
#include "tutil.h"
#include <stdio.h>
#include <string.h>

#define N 100000

static void name(char *out, size_t n, const char *prefix, const char *what)
{
    snprintf(out, n, "%s-%s", prefix, what);
}

static void put(const char *path, unsigned seed, int len, int amode)
{
    MPI_File fh;
    unsigned char *b = malloc((size_t) len);
    T_ASSERT(b, "out of memory");
    for (int i = 0; i < len; i++)
        b[i] = t_byte(seed, (uint64_t) i);
    T_MPI(MPI_File_open(MPI_COMM_SELF, path, amode, MPI_INFO_NULL, &fh));
    T_MPI(MPI_File_write_at(fh, 0, b, len, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_close(&fh));
    free(b);
}

/* path holds len bytes of seed (the first `len` of them) */
static void check(const char *path, unsigned seed, int len, const char *what)
{
    MPI_File fh;
    MPI_Offset size;
    MPI_Status st;
    int got;
    unsigned char *b = calloc(1, (size_t) len + 1);
    T_ASSERT(b, "out of memory");
    T_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == len, "%s: size %lld, want %d", what, (long long) size, len);
    T_MPI(MPI_File_read_at(fh, 0, b, len + 1, MPI_BYTE, &st));
    T_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
    T_ASSERT(got == len, "%s: read %d bytes, want %d", what, got, len);
    for (int i = 0; i < len; i++)
        T_ASSERT(b[i] == t_byte(seed, (uint64_t) i), "%s: byte %d: %u, want %u", what, i,
                 b[i], t_byte(seed, (uint64_t) i));
    T_MPI(MPI_File_close(&fh));
    free(b);
}

static void hint_reported(const char *path)
{
    MPI_File fh;
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    const char *env = getenv("DDIO_PARK_MS"), *want = getenv("T_PARK_WANT");
    T_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    T_MPI(MPI_File_get_info(fh, &info));
    MPI_Info_get(info, "romio_ddio_park", MPI_MAX_INFO_VAL, v, &flag);
    T_ASSERT(flag, "romio_ddio_park not reported");
    if (!want)
        want = env && atoi(env) > 0 ? "enable" : "disable";
    T_ASSERT(!strcmp(v, want), "romio_ddio_park = %s, want %s", v, want);
    MPI_Info_free(&info);
    T_MPI(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    char a[4096], b[4096], c[4096], d[4096];
    const int cw = MPI_MODE_CREATE | MPI_MODE_WRONLY, crw = MPI_MODE_CREATE | MPI_MODE_RDWR;

    t_init(&argc, &argv);
    T_ASSERT(argc == 2 && t_size >= 2, "usage: t_park PREFIX (2 ranks or more)");
    name(a, sizeof a, argv[1], "A");
    name(b, sizeof b, argv[1], "B");
    name(c, sizeof c, argv[1], "C");
    name(d, sizeof d, argv[1], "D");
    if (t_rank == 0) {
        put(a, 1, N, cw);
        check(a, 1, N, "again");
        check(a, 1, N, "again, twice");
        put(a, 1, N + 5000, crw);       /* read-write after read-only */
        check(a, 1, N + 5000, "again, grown");
        hint_reported(a);
        put(b, 2, N, cw);
        put(c, 3, N, cw);
        check(c, 3, N, "replaced, before");
        put(d, 4, N, cw);
        check(d, 4, N, "self, before");
        T_MPI(MPI_File_delete(d, MPI_INFO_NULL));
        put(d, 5, N / 2, cw);
        check(d, 5, N / 2, "self, after");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 1) {
        T_MPI(MPI_File_delete(b, MPI_INFO_NULL));
        T_MPI(MPI_File_delete(c, MPI_INFO_NULL));
        put(c, 6, N / 3, cw);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        MPI_File fh;
        int err = MPI_File_open(MPI_COMM_SELF, b, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
        T_ASSERT(t_errclass(err) == MPI_ERR_NO_SUCH_FILE,
                 "deleted: opened a file another process deleted (class %d)", t_errclass(err));
        check(c, 6, N / 3, "replaced");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        for (int i = 0; i < 3; i++)
            MPI_File_delete(i == 0 ? a : i == 1 ? c : d, MPI_INFO_NULL);
    return t_finish();
}
