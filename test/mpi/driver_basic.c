/* Driver-level checks of the ddio ROMIO driver (independent I/O):
 * create/EXCL, contiguous write/read at explicit offsets and through the
 * individual pointer, file size, short reads at end of file, holes read as
 * zeros, set_size (shrink/extend), preallocate, sync, delete + ENOENT.
 * usage: mpiexec -n N driver_basic ddio:/name   (prints PASS) */
#include "tutil.h"

#define CHUNK 100000            /* not a multiple of any stripe unit */

static void check_bytes(const unsigned char *b, uint64_t seed, uint64_t at, size_t n,
                        const char *what)
{
    for (size_t i = 0; i < n; i++)
        T_ASSERT(b[i] == t_byte(seed, at + i), "%s: byte %zu (file %llu) is %u, want %u",
                 what, i, (unsigned long long) (at + i), b[i], t_byte(seed, at + i));
}

static void write_read(const char *name, MPI_Info info)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Offset size, pos;
    unsigned char *buf = malloc(CHUNK), *back = malloc(CHUNK);
    MPI_Offset off = (MPI_Offset) t_rank * CHUNK;
    int n;

    T_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    for (int i = 0; i < CHUNK; i++)
        buf[i] = t_byte(1, off + i);
    T_MPI(MPI_File_write_at(fh, off, buf, CHUNK, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == CHUNK, "write_at count %d", n);
    /* another rank's writes are seen after sync-barrier-sync (MPI 4.0
     * §14.6.1; small writes may wait in the writer's client cache) */
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == (MPI_Offset) t_size * CHUNK, "size %lld", (long long) size);

    /* read the next rank's chunk through the individual pointer */
    MPI_Offset other = (MPI_Offset) ((t_rank + 1) % t_size) * CHUNK;
    T_MPI(MPI_File_seek(fh, other, MPI_SEEK_SET));
    T_MPI(MPI_File_read(fh, back, CHUNK, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == CHUNK, "read count %d", n);
    check_bytes(back, 1, other, CHUNK, "read");
    T_MPI(MPI_File_get_position(fh, &pos));
    T_ASSERT(pos == other + CHUNK, "position %lld", (long long) pos);

    /* short read at end of file */
    T_MPI(MPI_File_read_at(fh, size - 10, back, CHUNK, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == 10, "short read count %d, want 10", n);
    T_MPI(MPI_File_read_at(fh, size + 5, back, 10, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == 0, "read past end count %d", n);
    T_MPI(MPI_File_close(&fh));
    free(buf);
    free(back);
}

/* a hole in the middle reads as zeros, with the full count */
static void holes(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    unsigned char b[64];
    MPI_Offset far = 5 * 1024 * 1024 + 7;
    int n;

    T_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh));
    T_MPI(MPI_File_write_at(fh, far, "x", 1, MPI_BYTE, &st));
    memset(b, 0xAA, sizeof(b));
    T_MPI(MPI_File_read_at(fh, 1000, b, sizeof(b), MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == (int) sizeof(b), "hole read count %d", n);
    for (size_t i = 0; i < sizeof(b); i++)
        T_ASSERT(b[i] == 0, "hole byte %zu = %u", i, b[i]);
    T_MPI(MPI_File_read_at(fh, far - 1, b, 10, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == 2 && b[0] == 0 && b[1] == 'x', "read at end: n=%d b=%u,%u", n, b[0], b[1]);
    T_MPI(MPI_File_close(&fh));
}

static void sizes(const char *name)
{
    MPI_File fh;
    MPI_Offset size;

    T_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    T_MPI(MPI_File_set_size(fh, 12345));
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == 12345, "after shrink: %lld", (long long) size);
    T_MPI(MPI_File_set_size(fh, 3 * 1024 * 1024 + 1));
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == 3 * 1024 * 1024 + 1, "after extend: %lld", (long long) size);
    T_MPI(MPI_File_preallocate(fh, 4 * 1024 * 1024));
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == 4 * 1024 * 1024, "after preallocate: %lld", (long long) size);
    T_MPI(MPI_File_preallocate(fh, 100));
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == 4 * 1024 * 1024, "preallocate shrank: %lld", (long long) size);
    T_MPI(MPI_File_sync(fh));
    T_MPI(MPI_File_close(&fh));
}

static void excl_and_delete(const char *name)
{
    MPI_File fh;
    int err;

    err = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                        MPI_INFO_NULL, &fh);
    T_ASSERT(t_errclass(err) == MPI_ERR_FILE_EXISTS, "EXCL on existing: class %d",
             t_errclass(err));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        T_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    err = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    T_ASSERT(t_errclass(err) == MPI_ERR_NO_SUCH_FILE, "open deleted: class %d",
             t_errclass(err));
    if (t_rank == 0) {
        err = MPI_File_delete(name, MPI_INFO_NULL);
        T_ASSERT(t_errclass(err) == MPI_ERR_NO_SUCH_FILE, "delete twice: class %d",
                 t_errclass(err));
    }
    /* EXCL on a new file succeeds exactly once per collective open */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL |
                        MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    T_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        T_MPI(MPI_File_delete(name, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    T_ASSERT(argc > 1, "usage: driver_basic ddio:/name");
    const char *name = argv[1];
    char *hole = t_name(name, ".hole");
    MPI_Info info;

    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "65536");       /* several stripes per rank */
    write_read(name, info);
    sizes(name);
    excl_and_delete(name);
    if (t_rank == 0) {
        holes(hole);
        T_MPI(MPI_File_delete(hole, MPI_INFO_NULL));
    }
    MPI_Info_free(&info);
    free(hole);
    return t_finish();
}
