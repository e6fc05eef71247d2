/* Ranks write disjoint bytes of the same blocks concurrently, with no
 * synchronisation between writes: byte i of the region belongs to rank
 * i % P. No update may be lost. usage: t_sameblock FILE */
#include "tutil.h"

#define REGION 65536
#define ROUNDS 64

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_sameblock FILE");
    MPI_File fh;
    if (t_rank == 0)
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    /* each round: every rank writes its bytes of one 1 KiB slice, one
     * independent write per run of 1-byte pieces (a strided view) */
    MPI_Datatype ft, ftr;
    MPI_Type_vector(1, 1, t_size, MPI_BYTE, &ft);
    MPI_Type_create_resized(ft, 0, t_size, &ftr);
    MPI_Type_commit(&ftr);
    T_MPI(MPI_File_set_view(fh, t_rank, MPI_BYTE, ftr, "native", MPI_INFO_NULL));
    int per = REGION / t_size;
    unsigned char *b = malloc((size_t) per);
    for (int round = 0; round < ROUNDS; round++) {
        int lo = round * (per / ROUNDS), hi = round == ROUNDS - 1 ? per : lo + per / ROUNDS;
        for (int i = lo; i < hi; i++)
            b[i] = t_byte(21, (uint64_t) i * t_size + t_rank);
        T_MPI(MPI_File_write_at(fh, lo, b + lo, hi - lo, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char *all = malloc(REGION);
    T_MPI(MPI_File_read_at(fh, 0, all, per * t_size, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < per * t_size; i++)
        T_ASSERT(all[i] == t_byte(21, (uint64_t) i), "lost update at byte %d (rank %d's)", i,
                 i % t_size);
    MPI_Type_free(&ftr);
    MPI_Type_free(&ft);
    T_MPI(MPI_File_close(&fh));
    free(b);
    free(all);
    return t_finish();
}
