/* Strided independent I/O through the ddio driver: a CYCLIC(B) file view per
 * rank (vector filetype, resized), a noncontiguous memory type, the
 * individual file pointer across calls, explicit offsets in etypes, and a
 * read of the whole file checked byte by byte.
 * usage: mpiexec -n N driver_strided ddio:/name   (prints PASS) */
#include "tutil.h"

#define B 1000          /* block bytes: crosses stripe boundaries at odd places */
#define NB 300          /* blocks per rank */

/* file byte of stream byte s of rank r in a CYCLIC(B) distribution */
static uint64_t file_off(int r, uint64_t s)
{
    return (s / B) * (uint64_t) B * t_size + (uint64_t) r * B + s % B;
}

static void set_view(MPI_File fh)
{
    MPI_Datatype blk, ft;
    MPI_Type_contiguous(B, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint) B * t_size, &ft);
    MPI_Type_commit(&ft);
    T_MPI(MPI_File_set_view(fh, (MPI_Offset) t_rank * B, MPI_BYTE, ft, "native",
                            MPI_INFO_NULL));
    MPI_Type_free(&blk);
    MPI_Type_free(&ft);
}

/* memory: every other 10-byte piece of a 2x-sized buffer */
static MPI_Datatype mem_type(int n)
{
    MPI_Datatype v;
    MPI_Type_vector(n / 10, 10, 20, MPI_BYTE, &v);
    MPI_Type_commit(&v);
    return v;
}

static void write_view(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    int half = NB * B / 2, n;
    unsigned char *buf = malloc(2 * (size_t) half);
    MPI_Datatype mt = mem_type(half);

    T_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh));
    set_view(fh);
    /* two calls through the individual pointer, noncontiguous memory */
    for (int part = 0; part < 2; part++) {
        for (int i = 0; i < half; i++)
            buf[(i / 10) * 20 + i % 10] = t_byte(7, file_off(t_rank, (uint64_t) part * half + i));
        T_MPI(MPI_File_write(fh, buf, 1, mt, &st));
        MPI_Get_count(&st, MPI_BYTE, &n);
        T_ASSERT(n == half, "write count %d", n);
    }
    MPI_Offset pos;
    T_MPI(MPI_File_get_position(fh, &pos));
    T_ASSERT(pos == (MPI_Offset) NB * B, "position %lld", (long long) pos);
    T_MPI(MPI_File_close(&fh));
    MPI_Type_free(&mt);
    free(buf);
}

static void read_view(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    int len = 5 * B + 17, n;
    unsigned char *buf = malloc(len);
    MPI_Offset at = 3 * B + 5;  /* in etypes (bytes) of the view */

    T_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    set_view(fh);
    T_MPI(MPI_File_read_at(fh, at, buf, len, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == len, "read_at count %d", n);
    for (int i = 0; i < len; i++)
        T_ASSERT(buf[i] == t_byte(7, file_off(t_rank, at + i)), "view byte %d", i);
    /* past the end of this rank's data: short count */
    T_MPI(MPI_File_read_at(fh, (MPI_Offset) NB * B - 10, buf, len, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == 10 || t_rank < t_size - 1, "short count %d", n);
    T_MPI(MPI_File_close(&fh));
    free(buf);
}

static void read_all_plain(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    size_t total = (size_t) NB * B * t_size;
    unsigned char *buf = malloc(total);
    int n;

    T_MPI(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    T_MPI(MPI_File_read_at(fh, 0, buf, (int) total, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == (int) total, "whole-file count %d", n);
    for (size_t i = 0; i < total; i++) {
        int r = (int) ((i / B) % t_size);
        uint64_t s = (i / ((uint64_t) B * t_size)) * B + i % B;
        T_ASSERT(buf[i] == t_byte(7, file_off(r, s)), "file byte %zu", i);
    }
    T_MPI(MPI_File_close(&fh));
    free(buf);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc > 1, "usage: driver_strided ddio:/name");
    write_view(argv[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    read_view(argv[1]);
    if (t_rank == 0)
        read_all_plain(argv[1]);
    return t_finish();
}
