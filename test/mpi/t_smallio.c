/* Small independent I/O scattered over a few server blocks: the server reads
 * and writes only the 4 KiB sectors around each piece, so this checks the
 * edges of that: pieces of 1-300 bytes at random offsets (inside a sector,
 * across sector and block boundaries, past the end of file leaving holes
 * inside a block, an end of file off a sector boundary), strided pieces
 * through a vector file view, and reads of random ranges (holes read as
 * zeros, reads past the end are short). Every rank keeps the same model of
 * the file (the writes of all ranks follow one seed, one writer per round);
 * the harness compares the final file with the same run on ufs:.
 * usage: t_smallio FILE   (hints from DDIO_TEST_HINTS="k=v,k=v") */
#include "tutil.h"

#define SPAN (3 * 1048576 + 5000)   /* a little over three 1 MiB blocks */
#define ROUNDS 24
#define PIECES 40

static unsigned char model[SPAN + 4096];
static MPI_Offset model_size;

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    return t_xorshift(&rng);
}

static void write_piece(MPI_File fh, int me, int round, int k)
{
    MPI_Offset off = (MPI_Offset)(next() % SPAN);
    int len = 1 + (int)(next() % 300);
    unsigned char buf[300];
    for (int i = 0; i < len; i++)
        buf[i] = t_byte((uint64_t)round * 1000 + (uint64_t)k, (uint64_t)i);
    if (me)
        T_MPI(MPI_File_write_at(fh, off, buf, len, MPI_BYTE, MPI_STATUS_IGNORE));
    memcpy(model + off, buf, (size_t)len);
    if (off + len > model_size)
        model_size = off + len;
}

/* every 7th byte of a 3500-byte window, through a file view */
static void write_strided(MPI_File fh, int me, int round)
{
    MPI_Offset disp = (MPI_Offset)(next() % (SPAN - 3500));
    MPI_Datatype vec;
    T_MPI(MPI_Type_vector(500, 1, 7, MPI_BYTE, &vec));
    T_MPI(MPI_Type_commit(&vec));
    unsigned char buf[500];
    for (int i = 0; i < 500; i++)
        buf[i] = t_byte((uint64_t)round + 77777, (uint64_t)i);
    /* set_view is collective: every rank sets it, one writes */
    T_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, vec, "native", MPI_INFO_NULL));
    if (me)
        T_MPI(MPI_File_write_at(fh, 0, buf, 500, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&vec);
    for (int i = 0; i < 500; i++)
        model[disp + 7 * i] = buf[i];
    if (disp + 7 * 499 + 1 > model_size)
        model_size = disp + 7 * 499 + 1;
}

static void check_reads(MPI_File fh, int round)
{
    char what[32];
    snprintf(what, sizeof(what), "round %d", round);
    for (int k = 0; k < 20; k++) {
        MPI_Offset off = (MPI_Offset)(next() % (SPAN + 2000));
        int len = 1 + (int)(next() % (k % 5 == 0 ? 70000 : 500));
        t_read_model(fh, off, len, model, model_size, what);
    }
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_smallio FILE");
    if (t_rank == 0)
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File fh;
    MPI_Info info = tm_hints();   /* DDIO_TEST_HINTS: striping */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    for (int round = 0; round < ROUNDS; round++) {
        int me = round % t_size == t_rank;   /* one writer per round */
        for (int k = 0; k < PIECES; k++)
            write_piece(fh, me, round, k);
        write_strided(fh, me, round);
        /* MPI's rule for seeing another rank's writes: sync-barrier-sync
         * (the writer's small writes may be held back by the client cache) */
        T_MPI(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        T_MPI(MPI_File_sync(fh));
        check_reads(fh, round);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Offset size;
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == model_size, "size %lld, want %lld", (long long)size, (long long)model_size);
    T_MPI(MPI_File_close(&fh));
    if (t_rank == 0)
        printf("t_smallio: %d rounds of %d pieces, size %lld: ok\n", ROUNDS, PIECES + 1,
               (long long)size);
    MPI_Finalize();
    return 0;
}
