/* Descriptors of file views whose types have zero-length blocks and lb/ub
 * markers, compared with the view's type map on every call (hint
 * romio_ddio_check_desc=enable, the driver's list of it made apart from its
 * tree builder: a difference fails the call with MPI_ERR_INTERN), plus a
 * write_all/read_all round trip of the data.
 * ddio: only: ROMIO 4.0.2's ufs: write path loops on some of these types.
 * usage: t_desc0 FILE [expect-intern | expect-intern-mem]
 * With expect-intern (run with DDIO_TEST_DESC_SKEW set, which makes the
 * driver compare a deliberately shifted descriptor, or DDIO_TEST_TREE_SKEW,
 * a shifted type-built tree against the type map), the first collective
 * write must fail on every rank with MPI_ERR_INTERN: the check fires (with
 * DDIO_TEST_TREE_SKEW, a skewed tree, already in set_view, where ddio builds
 * the view's tree). With expect-intern-mem (and DDIO_TEST_TREE_SKEW) a
 * write from a vector memory type through a contiguous view must fail so:
 * the check of memory trees fires. */
#include "tutil.h"

#define NT 7

static MPI_Datatype make_type(int k)
{
    MPI_Datatype t, u, v;
    switch (k) {
    case 0: {   /* indexed with zero-length blocks in the middle */
        int bl[5] = { 3, 0, 2, 0, 5 }, d[5] = { 0, 4, 8, 12, 20 };
        MPI_Type_indexed(5, bl, d, MPI_INT, &t);
        break;
    }
    case 1: {   /* hindexed with zero-length first and last blocks */
        int bl[4] = { 0, 7, 9, 0 };
        MPI_Aint d[4] = { 0, 16, 40, 100 };
        MPI_Type_create_hindexed(4, bl, d, MPI_CHAR, &t);
        break;
    }
    case 2: {   /* struct with a zero-count member, then lb/ub moved out */
        int bl[3] = { 2, 0, 3 };
        MPI_Aint d[3] = { 8, 16, 24 };
        MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR };
        MPI_Type_create_struct(3, bl, d, ty, &u);
        MPI_Type_create_resized(u, 0, 64, &t);
        MPI_Type_free(&u);
        break;
    }
    case 3: {   /* vector of an indexed type with zero-length blocks */
        int bl[3] = { 1, 0, 2 }, d[3] = { 0, 3, 5 };
        MPI_Type_indexed(3, bl, d, MPI_SHORT, &u);
        MPI_Type_create_resized(u, 0, 16, &v);
        MPI_Type_vector(5, 2, 3, v, &t);
        MPI_Type_free(&u);
        MPI_Type_free(&v);
        break;
    }
    case 4: {   /* indexed_block with blocklength 0 next to real data */
        int d0[3] = { 0, 2, 4 }, bl[2] = { 1, 1 };
        MPI_Aint d[2] = { 0, 40 };
        MPI_Type_create_indexed_block(3, 0, d0, MPI_INT, &u);
        MPI_Datatype ty[2] = { u, MPI_LONG };
        MPI_Type_create_struct(2, bl, d, ty, &t);
        MPI_Type_free(&u);
        break;
    }
    case 5: {   /* a hole before the data: resized with a larger extent */
        MPI_Type_contiguous(3, MPI_INT, &u);
        MPI_Type_create_resized(u, 0, 40, &v);
        MPI_Type_create_hvector(4, 1, 56, v, &t);
        MPI_Type_free(&u);
        MPI_Type_free(&v);
        break;
    }
    default: {  /* subarray whose middle dimension has zero-size blocks nearby */
        int gs[2] = { 6, 10 }, ss[2] = { 3, 4 }, st[2] = { 1, 5 };
        MPI_Type_create_subarray(2, gs, ss, st, MPI_ORDER_C, MPI_INT, &t);
        break;
    }
    }
    MPI_Type_commit(&t);
    return t;
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2 || argc == 3, "usage: t_desc0 FILE [expect-intern | expect-intern-mem]");
    int expect_intern = argc == 3 && strcmp(argv[2], "expect-intern") == 0;
    int expect_mem = argc == 3 && strcmp(argv[2], "expect-intern-mem") == 0;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ddio_check_desc", "enable");
    MPI_Info_set(info, "striping_unit", "4096");
    MPI_File fh;
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    if (expect_mem) {
        MPI_Datatype mt;
        int buf[64] = { 0 };
        MPI_Type_vector(8, 2, 4, MPI_INT, &mt);
        MPI_Type_commit(&mt);
        int err = MPI_File_write_at_all(fh, (MPI_Offset) t_rank * 64, buf, 1, mt,
                                        MPI_STATUS_IGNORE);
        T_ASSERT(t_errclass(err) == MPI_ERR_INTERN, "skewed memory tree not caught (class %d)",
                 t_errclass(err));
        MPI_Type_free(&mt);
    }
    for (int k = 0; k < NT && !expect_mem; k++) {
        MPI_Datatype ft = make_type(k);
        MPI_Aint lb, ext;
        int size;
        MPI_Type_get_extent(ft, &lb, &ext);
        MPI_Type_size(ft, &size);
        const int tiles = 37;
        /* each rank its own region: no overlaps, so the round trip is exact */
        MPI_Offset disp = ((MPI_Offset) k * t_size + t_rank) * (tiles + 2) * (ext + 64) + 8;
        /* a ddio file's view tree is built (and, with the check hint,
         * compared with ROMIO's flattening) in set_view: a skewed tree is
         * caught there, a skewed descriptor at the transfer */
        int verr = MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", info);
        if (expect_intern && verr != MPI_SUCCESS) {
            T_ASSERT(t_errclass(verr) == MPI_ERR_INTERN, "skewed tree: set_view class %d",
                     t_errclass(verr));
            MPI_Type_free(&ft);
            break;
        }
        T_MPI(verr);
        int n = tiles * size;
        unsigned char *w = malloc((size_t) n), *r = malloc((size_t) n);
        for (int i = 0; i < n; i++)
            w[i] = t_byte(40 + (uint64_t) k, (uint64_t) t_rank * 100003 + i);
        if (expect_intern) {
            int err = MPI_File_write_at_all(fh, 3, w + 3, n - 3, MPI_BYTE, MPI_STATUS_IGNORE);
            T_ASSERT(t_errclass(err) == MPI_ERR_INTERN, "skewed descriptor not caught (class %d)",
                     t_errclass(err));
            free(w);
            free(r);
            MPI_Type_free(&ft);
            break;
        }
        T_MPI(MPI_File_write_at_all(fh, 3, w + 3, n - 3, MPI_BYTE, MPI_STATUS_IGNORE));
        T_MPI(MPI_File_write_at(fh, 0, w, 3, MPI_BYTE, MPI_STATUS_IGNORE));
        memset(r, 0, (size_t) n);
        T_MPI(MPI_File_read_at_all(fh, 0, r, n, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++)
            T_ASSERT(r[i] == w[i], "type %d: stream byte %d: %u != %u", k, i, r[i], w[i]);
        free(w);
        free(r);
        MPI_Type_free(&ft);
    }
    T_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    return t_finish();
}
