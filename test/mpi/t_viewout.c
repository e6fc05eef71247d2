/* A file view whose data stick out of the filetype's [lb, lb + extent):
 * the view PnetCDF sets under Open MPI. Its filetype is a struct of the
 * header bytes at displacement 0 and a subarray further on; Open MPI keeps
 * the subarray's explicit lower bound ("sticky"), so the struct's lb is the
 * subarray's and the header lies below it. Built here as that struct
 * resized to the subarray's lb and extent, the same type map, lb and
 * extent under both MPIs. MPI asks a filetype's displacements to be
 * monotone, which they are; a call through one tile is well ordered,
 * though the next tile's header lies before this tile's subarray.
 *
 * usage: t_viewout [-x] FILE
 *   every rank: H = 512 / P header bytes at rank * H, then the subarray
 *   (sizes {20,20,10}, subsizes {10,10,10}, starts by rank, MPI_INT) at
 *   512 + 16000 * rank; one tile written collectively, the position, the
 *   tile read back, the file == the model; then one tile again by
 *   write_at and read_at. The file left == the model (and the harness
 *   compares it with ufs:'s).
 *   -x (ddio: only): calls that reach the next tile, whose header lies
 *   before this one's subarray: a collective write where one rank's does
 *   fails on every rank and writes nothing; an independent read of two
 *   tiles fails. A view refused on one rank (decreasing displacements)
 *   fails set_view on every rank and leaves the view before it in force;
 *   the next good view works. */
#include "tutil.h"
#include <unistd.h>

#define HDR 512
#define ARR 16000               /* the subarray's extent: 20 * 20 * 10 ints */
#define NINT 1000               /* its elements: 10 * 10 * 10 */

static int hlen;                /* each rank's header bytes */
static int on_ddio;             /* FILE is a ddio: name */

static void starts_of(int r, int st[3])
{
    st[0] = (r % 2) * 10;
    st[1] = (r / 2 % 2) * 10;
    st[2] = 0;
}

static MPI_Datatype view_type(int r)
{
    int sizes[3] = { 20, 20, 10 }, sub[3] = { 10, 10, 10 }, st[3];
    int bl[2] = { hlen, 1 };
    MPI_Aint disp[2] = { (MPI_Aint) r * hlen, HDR + (MPI_Aint) ARR * r };
    MPI_Datatype arr, types[2], s, t;

    starts_of(r, st);
    MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, MPI_INT, &arr);
    types[0] = MPI_BYTE;
    types[1] = arr;
    MPI_Type_create_struct(2, bl, disp, types, &s);
    /* Open MPI's lb and extent for the struct: the subarray's */
    MPI_Type_create_resized(s, disp[1], ARR, &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&arr);
    MPI_Type_free(&s);
    return t;
}

/* the file offset of stream byte i of rank r's first tile */
static MPI_Offset addr_of(int r, int i)
{
    int st[3], e, a, b, c;
    if (i < hlen)
        return (MPI_Offset) r * hlen + i;
    starts_of(r, st);
    e = (i - hlen) / 4;
    a = e / 100 + st[0];
    b = e / 10 % 10 + st[1];
    c = e % 10 + st[2];
    return HDR + (MPI_Offset) ARR * r + 4 * ((a * 20 + b) * 10 + c) + (i - hlen) % 4;
}

/* every rank's first tile of pattern seed + rank, in the model */
static void model_write(uint64_t seed)
{
    for (int r = 0; r < t_size; r++)     /* (a tile's last byte is its highest) */
        t_file_grow(addr_of(r, hlen + 4 * NINT - 1) + 1);
    for (int r = 0; r < t_size; r++)
        for (int i = 0; i < hlen + 4 * NINT; i++)
            t_file[addr_of(r, i)] = t_byte(seed + r, (uint64_t) i);
}

static void fill(unsigned char *b, int n, uint64_t seed)
{
    for (int i = 0; i < n; i++)
        b[i] = t_byte(seed, (uint64_t) (i % (hlen + 4 * NINT)));
}

/* the whole file against the model, through a plain view */
static void check_file(MPI_File fh, const char *what)
{
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    t_read_model(fh, 0, (int) t_file_size + 100, t_file, t_file_size, what);
}

static void set_view(MPI_File fh, MPI_Datatype ft)
{
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", MPI_INFO_NULL));
}

/* one tile collectively, the position after it, read back */
static void one_tile_coll(MPI_File fh, MPI_Datatype ft, unsigned char *b, unsigned char *r)
{
    int n = hlen + 4 * NINT;
    MPI_Offset pos;

    fill(b, n, 10 + t_rank);
    set_view(fh, ft);
    T_MPI(MPI_File_write_all(fh, b, n, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_get_position(fh, &pos));
    /* ROMIO on ufs: answers a negative position on rank 1 and up, whose
     * last byte lies past the first tile's extent (MPICH 4.0.2, Open MPI's
     * ROMIO 3.2.1): checked where the view is ddio's */
    T_ASSERT(pos == n || !on_ddio, "position after one tile: %lld, want %d", (long long) pos, n);
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    memset(r, 0, (size_t) n);
    T_MPI(MPI_File_read_at_all(fh, 0, r, n, MPI_BYTE, MPI_STATUS_IGNORE));
    T_ASSERT(memcmp(b, r, (size_t) n) == 0, "collective: the tile read back differs");
    model_write(10);
    check_file(fh, "after the collective write");
}

static void one_tile_indep(MPI_File fh, MPI_Datatype ft, unsigned char *b, unsigned char *r)
{
    int n = hlen + 4 * NINT;

    fill(b, n, 20 + t_rank);
    set_view(fh, ft);
    T_MPI(MPI_File_write_at(fh, 0, b, n, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    memset(r, 0, (size_t) n);
    T_MPI(MPI_File_read_at(fh, 0, r, n, MPI_BYTE, MPI_STATUS_IGNORE));
    T_ASSERT(memcmp(b, r, (size_t) n) == 0, "independent: the tile read back differs");
    model_write(20);
    check_file(fh, "after the independent write");
}

/* -x: calls into the next tile fail, collectively where collective */
static void next_tile(MPI_File fh, MPI_Datatype ft, unsigned char *b, unsigned char *r)
{
    int n = hlen + 4 * NINT, err;

    fill(b, 2 * n, 30 + t_rank);
    set_view(fh, ft);
    err = MPI_File_write_at_all(fh, 0, b, t_rank == 1 % t_size ? 2 * n : n, MPI_BYTE,
                                MPI_STATUS_IGNORE);
    T_ASSERT(err != MPI_SUCCESS, "a collective write reaching the next tile on rank %d "
             "succeeded here", 1 % t_size);
    /* (rank 0's subarray ends before its next tile's header: its tiles
     * follow each other, and two of them are read in order) */
    if (t_rank > 0) {
        err = MPI_File_read_at(fh, 0, r, 2 * n, MPI_BYTE, MPI_STATUS_IGNORE);
        T_ASSERT(err != MPI_SUCCESS, "an independent read of two tiles succeeded");
    } else {
        T_MPI(MPI_File_read_at(fh, 0, r, 2 * n, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int i = 0; i < 2 * n; i++) {
            MPI_Offset a = addr_of(0, i % n) + (i < n ? 0 : ARR);
            T_ASSERT(r[i] == t_file[a], "two tiles of rank 0: stream byte %d (at %lld): "
                     "%u, want %u", i, (long long) a, r[i], t_file[a]);
        }
    }
    check_file(fh, "after the refused write (nothing written)");
}

/* -x: rank 1 % P's filetype decreases; set_view fails on every rank */
static void refused_view(MPI_File fh, MPI_Datatype ft)
{
    int bl[2] = { 4, 4 }, err;
    MPI_Aint d[2] = { 8, 0 };
    MPI_Datatype bad;

#ifdef OPEN_MPI
    /* Open MPI's MPI_File_set_view refuses the type on that rank before
     * its io component sees the call (as t_prop's bad_view says) */
    (void) bl, (void) d, (void) err, (void) ft, (void) fh;
    if (t_rank == 0)
        printf("SKIP the view refused on one rank: Open MPI refuses it before ROMIO\n");
    return;
#endif
    MPI_Type_create_hindexed(2, bl, d, MPI_BYTE, &bad);
    MPI_Type_commit(&bad);
    err = MPI_File_set_view(fh, 0, MPI_BYTE, t_rank == 1 % t_size ? bad : ft, "native",
                            MPI_INFO_NULL);
    T_ASSERT(err != MPI_SUCCESS, "set_view with rank %d's decreasing filetype succeeded here",
             1 % t_size);
    MPI_Type_free(&bad);
    /* the view before it (check_file's plain bytes) is still in force on
     * every rank: one tile's worth read from 0 is the file's first bytes */
    int n = hlen + 4 * NINT;
    unsigned char *r = malloc((size_t) n);
    T_ASSERT(r, "out of memory");
    T_MPI(MPI_File_read_at_all(fh, 0, r, n, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++)
        T_ASSERT(r[i] == t_file[i], "after the refused view, byte %d read through the view "
                 "before it: %u, want %u", i, r[i], t_file[i]);
    free(r);
}

int main(int argc, char **argv)
{
    int more = 0;
    MPI_File fh;
    MPI_Datatype ft;

    t_init(&argc, &argv);
    alarm(120);                 /* a refusal that hangs fails the test, not the suite */
    if (argc > 1 && strcmp(argv[1], "-x") == 0) {
        more = 1;
        argc--;
        argv++;
    }
    T_ASSERT(argc == 2 && (!more || t_size > 1), "usage: t_viewout [-x] FILE (-x: 2 ranks "
             "or more, where a rank's tiles overlap)");
    hlen = HDR / t_size;
    on_ddio = strncmp(argv[1], "ddio:", 5) == 0;
    ft = view_type(t_rank);
    unsigned char *b = malloc(2 * (size_t) (hlen + 4 * NINT)), *r = malloc(2 * (size_t) (hlen + 4 * NINT));
    T_ASSERT(b && r, "out of memory");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    one_tile_coll(fh, ft, b, r);
    one_tile_indep(fh, ft, b, r);
    if (more) {
        next_tile(fh, ft, b, r);
        refused_view(fh, ft);
        one_tile_coll(fh, ft, b, r);
    }
    T_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ft);
    free(b);
    free(r);
    return t_finish();
}
