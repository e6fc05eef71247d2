/* ddio hints and configuration: servers given only by the romio_ddio_servers
 * hint (DDIO_SERVERS is moved into the hint and unset, so ROMIO's hidden
 * shared-pointer file and MPI_File_delete must find the servers too), the
 * values reported by MPI_File_get_info, striping_factor=1, an unknown
 * romio_ddio_* key (ignored), shared-pointer writes, and delete.
 * usage: DDIO_SERVERS=... mpiexec -n N driver_hints ddio:/name  (prints PASS)
 *
 * With "config" after the name: the client configuration file instead. Each
 * rank writes a DDIO_CONFIG file (servers = the DDIO_SERVERS list, which is
 * then unset, as is DDIO_TIMEOUT; timeout = 23; striping_unit = 64K; striping_factor = 1) and
 * opens without hints: the file gets the file's striping and timeout; a
 * second file with striping_unit/striping_factor hints gets the hints'. */
#include <unistd.h>
#include "tutil.h"

static void expect(MPI_Info info, const char *key, const char *want)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
    T_ASSERT(flag, "hint %s missing", key);
    T_ASSERT(!want || !strcmp(v, want), "hint %s = '%s', want '%s'", key, v, want);
}

static int config_mode(const char *name, const char *servers)
{
    MPI_File fh;
    MPI_Info info, used;
    char path[256], name2[1024];
    FILE *f;

    snprintf(path, sizeof(path), "/tmp/ddio-hints-conf.%d", (int) getpid());
    f = fopen(path, "w");
    T_ASSERT(f, "cannot write %s", path);
    fprintf(f, "# client configuration (DDIO_CONFIG)\nservers = %s\ntimeout = 23  # s\n"
            "striping_unit = 64K\nstriping_factor = 1\n", servers);
    fclose(f);
    setenv("DDIO_CONFIG", path, 1);
    unsetenv("DDIO_SERVERS");
    unsetenv("DDIO_TIMEOUT");   /* the variable beats the file */
    unsetenv("DDIO_RECOVER_TIMEOUT");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh));
    T_MPI(MPI_File_get_info(fh, &used));
    expect(used, "striping_unit", "65536");
    expect(used, "striping_factor", "1");
    expect(used, "romio_ddio_timeout", "23");
    expect(used, "romio_ddio_recover_timeout", "23");    /* default: the timeout */
    MPI_Info_free(&used);
    T_MPI(MPI_File_close(&fh));
    /* hints beat the configuration file */
    snprintf(name2, sizeof(name2), "%s.hinted", name);
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "8192");
    MPI_Info_set(info, "striping_factor", "2");
    MPI_Info_set(info, "romio_ddio_timeout", "19");
    MPI_Info_set(info, "romio_ddio_recover_timeout", "5");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, name2, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    T_MPI(MPI_File_get_info(fh, &used));
    expect(used, "striping_unit", "8192");
    expect(used, "striping_factor", "2");
    expect(used, "romio_ddio_timeout", "19");
    expect(used, "romio_ddio_recover_timeout", "5");
    MPI_Info_free(&used);
    T_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        T_MPI(MPI_File_delete(name, MPI_INFO_NULL));
        T_MPI(MPI_File_delete(name2, MPI_INFO_NULL));
    }
    MPI_Info_free(&info);
    unlink(path);
    return t_finish();
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
    if (argc > 2 && !strcmp(argv[2], "config"))
        return config_mode(argv[1], servers);
    unsetenv("DDIO_SERVERS");
    unsetenv("DDIO_CONFIG");
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ddio_servers", servers);
    MPI_Info_set(info, "romio_ddio_timeout", "17");
    MPI_Info_set(info, "romio_ddio_recover_timeout", "0");
    MPI_Info_set(info, "romio_ddio_presort", "disable");
    MPI_Info_set(info, "romio_ddio_collective", "twophase");
    MPI_Info_set(info, "romio_ddio_no_such_hint", "1");
    MPI_Info_set(info, "striping_factor", "1");
    MPI_Info_set(info, "striping_unit", "4096");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    T_MPI(MPI_File_get_info(fh, &used));
    expect(used, "romio_ddio_servers", servers);
    expect(used, "romio_ddio_timeout", "17");
    expect(used, "romio_ddio_recover_timeout", "0");   /* recovery off */
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
    /* another rank's writes are seen after sync-barrier-sync (MPI 4.0
     * §14.6.1; small writes may wait in the writer's client cache) */
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
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
