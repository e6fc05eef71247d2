/* Same-host reads (group `local`; common/ddio_core_local.c): contiguous
 * reads served by the client from the servers' datafiles must answer
 * exactly as the servers would. Every rank writes its region, then reads
 * the whole file in calls of 8 B (a window), 4 KiB and 1 MiB + 13 (across
 * stripes and disks); reads straddling and past the end of file (counts);
 * a hole left by a write far past the end (zeros, full count); bytes
 * another rank overwrote after this rank read them; set_size shrinking
 * (short counts) and growing (zeros); collective reads of plain ranges;
 * collective writes of plain ranges (written here too up to 256 KiB);
 * a read after another process (a second open) extended the file, and
 * one after a read-only second open was closed (its CLOSE's reply unread).
 * The file left is compared with ufs: by the runner. usage: t_local FILE */
#include "tutil.h"

#include <unistd.h>

#define KiB 1024
#define MiB (1024 * 1024)
#define REGION (3 * MiB + 4097)      /* per rank: odd, across stripes */
#define HOLE (5 * MiB)


/* [lo, hi) of the file in calls of `call` bytes, each checked */
static void read_span(MPI_File fh, MPI_Offset lo, MPI_Offset hi, int call, const char *what)
{
    for (MPI_Offset o = lo; o < hi; o += call)
        t_read_model(fh, o, call, t_file, t_file_size, what);
}

static void write_region(MPI_File fh, int rank, uint64_t seed)
{
    MPI_Offset off = (MPI_Offset) rank * REGION;
    for (int r = 0; r < t_size; r++)
        t_file_set((MPI_Offset) r * REGION, REGION, seed);
    T_MPI(MPI_File_write_at(fh, off, t_file + off, REGION, MPI_BYTE, MPI_STATUS_IGNORE));
}

static void reads_everywhere(MPI_File fh, const char *what)
{
    read_span(fh, 0, 64 * KiB, 8, what);
    read_span(fh, 0, t_file_size, 4 * KiB, what);
    read_span(fh, 0, t_file_size, MiB + 13, what);
    t_read_model(fh, t_file_size - 100, 4 * KiB, t_file, t_file_size, what);      /* straddles */
    t_read_model(fh, t_file_size, 4 * KiB, t_file, t_file_size, what);            /* at the end */
    t_read_model(fh, t_file_size + 1000, 8, t_file, t_file_size, what);           /* past it */
}

/* each rank's REGION read collectively as a plain range */
static void coll_read(MPI_File fh, const char *what)
{
    int peer = (t_rank + 1) % t_size;
    MPI_Offset off = (MPI_Offset) peer * REGION;
    unsigned char *b = malloc(REGION);
    MPI_Status st;
    int got;
    T_MPI(MPI_File_read_at_all(fh, off, b, REGION, MPI_BYTE, &st));
    T_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
    T_ASSERT(got == REGION, "%s: got %d of %d bytes", what, got, REGION);
    for (int i = 0; i < REGION; i++)
        T_ASSERT(b[i] == t_file[off + i], "%s: byte %lld: got %u want %u", what,
                 (long long) (off + i), b[i], t_file[off + i]);
    free(b);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2 && t_size >= 2, "usage: mpiexec -n P>=2 t_local FILE");
    MPI_Info info = tm_hints();
    MPI_File fh, solo;
    if (t_rank == 0)
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));

    write_region(fh, t_rank, 1);
    t_sync_barrier_sync(fh);
    reads_everywhere(fh, "after the writes");
    coll_read(fh, "collective read of a range");

    /* a hole: rank 0 writes 4 KiB far past the end */
    MPI_Offset far = t_file_size + HOLE;
    t_file_set(far, 4 * KiB, 2);
    if (t_rank == 0)
        T_MPI(MPI_File_write_at(fh, far, t_file + far, 4 * KiB, MPI_BYTE, MPI_STATUS_IGNORE));
    t_sync_barrier_sync(fh);
    read_span(fh, far - HOLE - 8 * KiB, t_file_size, MiB + 13, "across the hole");

    /* bytes this rank read before, overwritten by another rank */
    int w = t_size - 1;
    t_file_set(0, REGION / 2, 3);
    if (t_rank == w)
        T_MPI(MPI_File_write_at(fh, 0, t_file, REGION / 2, MPI_BYTE, MPI_STATUS_IGNORE));
    t_sync_barrier_sync(fh);
    read_span(fh, 0, REGION, 64 * KiB, "after another rank overwrote them");

    /* collective writes of plain ranges shorter than ddio_stream_min()
     * (at least 16 MiB) are written here too: each rank rewrites its region in
     * calls of 4 KiB, 64 KiB + 3, 256 KiB and 768 KiB + 5 (across stripe
     * units), all ranks together (the runner's check that the servers
     * wrote nothing covers these) */
    int calls[] = {4 * KiB, 64 * KiB + 3, 256 * KiB, 768 * KiB + 5};
    for (int c = 0; c < 4; c++) {
        for (int r = 0; r < t_size; r++)
            t_file_set((MPI_Offset) r * REGION, 4 * calls[c], 5 + (uint64_t) c);
        for (int k = 0; k < 4; k++) {
            MPI_Offset o = (MPI_Offset) t_rank * REGION + (MPI_Offset) k * calls[c];
            T_MPI(MPI_File_write_at_all(fh, o, t_file + o, calls[c], MPI_BYTE,
                                        MPI_STATUS_IGNORE));
            t_read_model(fh, o, calls[c], t_file, t_file_size, "own collective write at once");
        }
    }
    t_sync_barrier_sync(fh);
    read_span(fh, 0, t_file_size, 64 * KiB, "after collective writes of ranges");

    /* shrink: short counts at the new end; grow: zeros past the old one */
    MPI_Offset half = (MPI_Offset) REGION * t_size / 2 + 12345;
    T_MPI(MPI_File_set_size(fh, half));
    t_file_size = half;
    t_sync_barrier_sync(fh);
    reads_everywhere(fh, "after set_size shrank the file");
    T_MPI(MPI_File_set_size(fh, half + 3 * MiB));
    t_file_grow(half + 3 * MiB);
    t_sync_barrier_sync(fh);
    read_span(fh, half - 4 * KiB, t_file_size, MiB + 13, "after set_size grew the file");

    /* another open of the file (its own handles) extends it; the first one
     * sees the new end and bytes */
    MPI_Offset ext = t_file_size;
    t_file_set(ext, 2 * MiB + 7, 4);
    MPI_Barrier(MPI_COMM_WORLD);        /* every rank read the old end */
    T_MPI(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDWR, info, &solo));
    if (t_rank == 0)
        T_MPI(MPI_File_write_at(solo, ext, t_file + ext, 2 * MiB + 7, MPI_BYTE,
                                MPI_STATUS_IGNORE));
    T_MPI(MPI_File_sync(solo));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    read_span(fh, ext - 4 * KiB, t_file_size + 4 * KiB, MiB + 13, "after another open extended it");
    T_MPI(MPI_File_close(&solo));

    /* a read-only open, closed: its CLOSE is posted, the reply left on the
     * connection fh shares; the next read of fh still goes by the
     * datafiles (the reply taken off first; the runner checks that the
     * servers read nothing). The pause lets the reply arrive. */
    T_MPI(MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_RDONLY, info, &solo));
    read_span(solo, 0, 64 * KiB, 4 * KiB, "through a read-only second open");
    T_MPI(MPI_File_close(&solo));
    usleep(20000);
    read_span(fh, 0, 64 * KiB, 4 * KiB, "after a read-only open was closed");

    T_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    free(t_file);
    return t_finish();
}
