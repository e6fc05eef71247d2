/* Durability across a server crash: `t_durable write FILE` writes a pattern
 * collectively and independently (the independent half in 4 KiB calls, which
 * a client cache gathers: with write-behind on, MPI_File_sync must send them
 * before the servers' fdatasync), calls MPI_File_sync and exits; the harness
 * then kills every server with SIGKILL and restarts them on the same roots;
 * `t_durable check FILE` reads everything back and compares. Hints from
 * DDIO_TEST_HINTS. */
#include "tutil.h"

#define PER (3 << 20)

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 3, "usage: t_durable write|check FILE");
    int writing = strcmp(argv[1], "write") == 0;
    unsigned char *b = malloc(PER);
    MPI_File fh;
    MPI_Offset at = (MPI_Offset) t_rank * PER;
    if (writing) {
        for (int i = 0; i < PER; i++)
            b[i] = t_byte(31, (uint64_t) at + i);
        MPI_Info info = tm_hints();
        T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fh));
        MPI_Info_free(&info);
        T_MPI(MPI_File_write_at_all(fh, at, b, PER / 2, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int off = PER / 2; off < PER; off += 4096) {
            int n = PER - off < 4096 ? PER - off : 4096;
            T_MPI(MPI_File_write_at(fh, at + off, b + off, n, MPI_BYTE, MPI_STATUS_IGNORE));
        }
        T_MPI(MPI_File_sync(fh));
        T_MPI(MPI_File_close(&fh));
    } else {
        T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[2], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
        MPI_Offset size;
        T_MPI(MPI_File_get_size(fh, &size));
        T_ASSERT(size == (MPI_Offset) t_size * PER, "size after restart %lld", (long long) size);
        T_MPI(MPI_File_read_at_all(fh, at, b, PER, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int i = 0; i < PER; i++)
            T_ASSERT(b[i] == t_byte(31, (uint64_t) at + i), "synced byte %lld lost", (long long) (at + i));
        T_MPI(MPI_File_close(&fh));
    }
    free(b);
    return t_finish();
}
