/* ddio hints and configuration: servers given only by the romio_ddio_servers
 * hint (DDIO_SERVERS is moved into the hint and unset, so ROMIO's hidden
 * shared-pointer file and MPI_File_delete must find the servers too), the
 * values reported by MPI_File_get_info, striping_factor=1, an unknown
 * romio_ddio_* key (ignored), shared-pointer writes, and delete.
 * usage: DDIO_SERVERS=... mpiexec -n N driver_hints ddio:/name  (prints PASS) */
#include "tutil.h"

static void expect(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
    T_ASSERT(flag, "hint %s missing", key);
    T_ASSERT(!want || !strcmp(v, want), "hint %s = '%s', want '%s'", key, v, want);
}

int main(int argc, char **argv)
{
    MPI_File fh;
    MPI_Info info, used;
    MPI_Status st;
    MPI_Offset size;
    char *servers = getenv("DDIO_SERVERS");
    int flag;
    char v[MPI_MAX_INFO_VAL + 1];

    t_init(&argc, &argv);
    T_ASSERT(argc > 1 && servers, "usage: DDIO_SERVERS=... driver_hints ddio:/name");
    servers = strdup(servers);
    unsetenv("DDIO_SERVERS");
    unsetenv("DDIO_CONFIG");
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ddio_servers", servers);
    MPI_Info_set(info, "romio_ddio_timeout", "17");
    MPI_Info_set(info, "romio_ddio_presort", "disable");
    MPI_Info_set(info, "romio_ddio_collective", "twophase");
    MPI_Info_set(info, "romio_ddio_no_such_hint", "1");
    MPI_Info_set(info, "striping_factor", "1");
    MPI_Info_set(info, "striping_unit", "4096");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    T_MPI(MPI_File_get_info(fh, &used));
    expect(used, "romio_ddio_servers", servers);
    expect(used, "romio_ddio_timeout", "17");
    expect(used, "romio_ddio_presort", "disable");
    expect(used, "romio_ddio_collective", "twophase");
    expect(used, "striping_factor", "1");
    expect(used, "striping_unit", "4096");
    MPI_Info_get(used, "romio_ddio_no_such_hint", MPI_MAX_INFO_VAL, v, &flag);
    T_ASSERT(!flag, "unknown hint reported");
    MPI_Info_free(&used);

    /* shared file pointer: every rank appends 10 bytes */
    char rec[10];
    memset(rec, 'a' + t_rank, sizeof(rec));
    T_MPI(MPI_File_write_shared(fh, rec, sizeof(rec), MPI_BYTE, &st));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == 10 * t_size, "size after write_shared %lld", (long long) size);
    T_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        T_MPI(MPI_File_delete(argv[1], MPI_INFO_NULL));
    MPI_Info_free(&info);
    free(servers);
    return t_finish();
}
