/* What a file view costs in memory: a view EXTENT bytes long, one of
 *   cyclic     every rank takes every P-th record of R bytes (-r, default 8):
 *              one MPI_Type_vector over the whole extent, the way
 *              applications and Kotz's patterns describe a cyclic
 *              distribution;
 *   darray-bc  a 2-D array of doubles, 8192 columns, rows BLOCK and columns
 *              CYCLIC over a 2-D process grid (MPI_Type_create_darray):
 *              8-byte pieces;
 *   darray-cc  the same block-cyclic, CYCLIC(2) x CYCLIC(2): 16-byte pieces;
 *   vdarray-bc, vdarray-cc  the same type maps built from vector and resized
 *              types: MPICH 4.0.2's dataloop engine commits a darray as a
 *              struct with MPI_LB/MPI_UB, which it flattens (32-48 bytes a
 *              piece in the rank, before any file); these measure the view
 *              on the file system alone, at any extent (-c: first check
 *              the type map against the darray's, with MPI_Pack; with any
 *              view, -c also checks MPI_File_get_view's filetype at the end);
 * then writes and reads back a window of W bytes per rank at the start of
 * the view and another at its end (the file is sparse: what matters is the
 * view, not the data), checks the bytes, seeks to the last record and back,
 * and reports its peak resident set (VmHWM). With -a it instead writes the
 * whole view in collective windows of W bytes per rank, reads it all back
 * the same way and checks every byte, timing both (MB/s over all ranks).
 *
 * ROMIO flattens such a view in set_view: 16 bytes per piece, EXTENT / P / 8
 * pieces per rank for 8-byte ones (2 GiB per rank for a 4 GiB view at
 * P = 4). On ddio: the view is the type's tree, whatever EXTENT is.
 *
 * Prints one line "viewcost EXTENT P peak_kB=MAX base_kB=MAX grew_kB=MAX"
 * (the largest over the ranks; base: before the view was set, the window
 * buffers already touched), with -a followed by "write_s=S write_MBps=B
 * read_s=S read_MBps=B bytes=N". With -m KB the run fails when a rank's peak
 * grew more than KB above its base.
 * usage: t_viewcost -e EXTENT_BYTES [-t cyclic|[v]darray-bc|[v]darray-cc] [-r RECSIZE]
 *                   [-w WINDOW_BYTES] [-a] [-c] [-m KB] FILE */
#include "tutil.h"
#include <unistd.h>

static long vm_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    T_ASSERT(f, "cannot read /proc/self/status");
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, n))
            v = atol(line + n + 1);
    fclose(f);
    return v;
}

/* 8 bytes at a time: the full runs fill and check 16 GiB */
static void fill(double *b, MPI_Offset n, MPI_Offset first)
{
    uint64_t *p = (uint64_t *) b, k = ((uint64_t) t_rank << 40) + (uint64_t) first;
    for (MPI_Offset i = 0; i < n; i++)
        p[i] = (k + (uint64_t) i) * 0x9E3779B97F4A7C15ull;
}

/* write n records at record offset `at` of the view, read them back, compare */
static void window(MPI_File fh, double *w, double *r, MPI_Offset n, MPI_Offset at, int coll)
{
    fill(w, n, at);
    memset(r, 0, (size_t) n * 8);
    if (coll) {
        T_MPI(MPI_File_write_at_all(fh, at, w, (int) n, MPI_DOUBLE, MPI_STATUS_IGNORE));
        T_MPI(MPI_File_read_at_all(fh, at, r, (int) n, MPI_DOUBLE, MPI_STATUS_IGNORE));
    } else {
        T_MPI(MPI_File_seek(fh, at, MPI_SEEK_SET));
        T_MPI(MPI_File_write(fh, w, (int) n, MPI_DOUBLE, MPI_STATUS_IGNORE));
        T_MPI(MPI_File_seek(fh, at, MPI_SEEK_SET));
        T_MPI(MPI_File_read(fh, r, (int) n, MPI_DOUBLE, MPI_STATUS_IGNORE));
    }
    T_ASSERT(!memcmp(w, r, (size_t) n * 8), "window at record %lld: bytes read back differ",
             (long long) at);
}

/* the view: this rank's filetype, its disp, its doubles (recs) */
typedef struct view {
    MPI_Datatype ft;
    MPI_Offset disp, recs;
    int rec;                    /* cyclic: record bytes; darray: 0 */
} view;

/* One dimension of a darray by hand: this rank's blocks of b elements of
 * `elem`, every p-th block of the dimension's n (p * b must divide n) */
static MPI_Datatype vdim(int n, int b, int p, MPI_Datatype elem)
{
    MPI_Datatype t;
    T_ASSERT(n % (p * b) == 0, "vdarray: %d elements are not whole rounds of %d x %d", n, p, b);
    T_MPI(MPI_Type_vector(n / (p * b), b, p * b, elem, &t));
    return t;
}

/* MPI_Type_create_darray's type map (C order, 2-D, doubles, BLOCK taken as
 * CYCLIC(n/p)): dims g, blocks b, grid ps, this rank at its grid place */
static MPI_Datatype vdarray(const int g[2], const int b[2], const int ps[2])
{
    int c0 = t_rank / ps[1], c1 = t_rank % ps[1];
    MPI_Datatype d1 = vdim(g[1], b[1], ps[1], MPI_DOUBLE), row, d0, placed, t;
    MPI_Aint off = ((MPI_Aint) c0 * b[0] * g[1] + (MPI_Aint) c1 * b[1]) * 8;
    T_MPI(MPI_Type_create_resized(d1, 0, (MPI_Aint) g[1] * 8, &row));
    d0 = vdim(g[0], b[0], ps[0], row);
    T_MPI(MPI_Type_create_hindexed_block(1, 1, &off, d0, &placed));
    T_MPI(MPI_Type_create_resized(placed, 0, (MPI_Aint) g[0] * g[1] * 8, &t));
    MPI_Type_free(&d1);
    MPI_Type_free(&row);
    MPI_Type_free(&d0);
    MPI_Type_free(&placed);
    return t;
}

/* a and b select the same doubles in the same order from `extent` bytes
 * (packed from a buffer where each double holds its index) */
static void same_map(MPI_Datatype a, MPI_Datatype b, long long extent)
{
    MPI_Aint lb[2], ext[2];
    MPI_Count sz[2];
    MPI_Datatype t[2] = { a, b };
    double *src = malloc((size_t) extent), *out[2];
    int pos[2] = { 0, 0 };
    T_ASSERT(src, "out of memory");
    for (long long i = 0; i < extent / 8; i++)
        src[i] = (double) i;
    for (int k = 0; k < 2; k++) {
        T_MPI(MPI_Type_commit(&t[k]));
        MPI_Type_get_extent(t[k], &lb[k], &ext[k]);
        MPI_Type_size_x(t[k], &sz[k]);
        out[k] = malloc((size_t) sz[k] + 1);
        T_ASSERT(out[k], "out of memory");
        T_MPI(MPI_Pack(src, 1, t[k], out[k], (int) sz[k], &pos[k], MPI_COMM_SELF));
    }
    T_ASSERT(lb[0] == lb[1] && ext[0] == ext[1] && sz[0] == sz[1]
             && !memcmp(out[0], out[1], (size_t) sz[0]), "vdarray: not darray's type map");
    free(src);
    free(out[0]);
    free(out[1]);
}

static view make_view(const char *kind, long long extent, int rec, int check)
{
    view v = {.rec = 0 };
    MPI_Count size;
    if (!strcmp(kind, "cyclic")) {
        long long nrec = extent / rec / t_size;
        T_ASSERT(rec % 8 == 0 && nrec > 0 && nrec < INT32_MAX, "cyclic: record %d, extent %lld",
                 rec, extent);
        T_MPI(MPI_Type_vector((int) nrec, rec / 8, t_size * (rec / 8), MPI_DOUBLE, &v.ft));
        v.disp = (MPI_Offset) t_rank * rec;
        v.rec = rec;
    } else {
        int byhand = kind[0] == 'v', bc = !strcmp(kind + byhand, "darray-bc");
        int ps[2] = { 0, 0 }, g[2] = { 0, 8192 };
        int dist[2] = { bc ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC };
        int darg[2] = { bc ? MPI_DISTRIBUTE_DFLT_DARG : 2, bc ? 1 : 2 };
        T_ASSERT(bc || !strcmp(kind + byhand, "darray-cc"), "unknown view %s", kind);
        g[0] = (int) (extent / 8 / g[1]);
        T_ASSERT(g[0] > 0, "extent %lld: less than a row", extent);
        MPI_Dims_create(t_size, 2, ps);
        if (byhand) {
            int b[2] = { bc ? g[0] / ps[0] : 2, bc ? 1 : 2 };
            v.ft = vdarray(g, b, ps);
            if (check) {    /* before the baseline: it holds a darray and the extent */
                MPI_Datatype d;
                T_MPI(MPI_Type_create_darray(t_size, t_rank, 2, g, dist, darg, ps, MPI_ORDER_C,
                                             MPI_DOUBLE, &d));
                same_map(v.ft, d, extent);
                MPI_Type_free(&d);
            }
        } else {
            T_MPI(MPI_Type_create_darray(t_size, t_rank, 2, g, dist, darg, ps, MPI_ORDER_C,
                                         MPI_DOUBLE, &v.ft));
        }
    }
    T_MPI(MPI_Type_commit(&v.ft));
    MPI_Type_size_x(v.ft, &size);
    v.recs = size / 8;
    return v;
}

/* the absolute byte offset of this rank's double e in the view */
static MPI_Offset byte_of(const view * v, MPI_Offset e)
{
    MPI_Offset per = v->rec / 8;
    return v->disp + e / per * v->rec * t_size + e % per * 8;
}

/* the whole view in collective windows of n doubles, written then read back
 * and checked (ranks with fewer doubles take part with nothing) */
static void full(MPI_File fh, double *w, double *r, MPI_Offset n, const view * v,
                 double *ws, double *rs)
{
    MPI_Offset calls = (v->recs + n - 1) / n;
    MPI_Allreduce(MPI_IN_PLACE, &calls, 1, MPI_OFFSET, MPI_MAX, MPI_COMM_WORLD);
    for (int pass = 0; pass < 2; pass++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (MPI_Offset k = 0; k < calls; k++) {
            MPI_Offset at = k * n, m = at >= v->recs ? 0 : v->recs - at < n ? v->recs - at : n;
            if (pass == 0) {
                fill(w, m, at);
                T_MPI(MPI_File_write_at_all(fh, at, w, (int) m, MPI_DOUBLE, MPI_STATUS_IGNORE));
            } else {
                T_MPI(MPI_File_read_at_all(fh, at, r, (int) m, MPI_DOUBLE, MPI_STATUS_IGNORE));
                fill(w, m, at);
                T_ASSERT(!memcmp(w, r, (size_t) m * 8), "doubles [%lld, +%lld) read back differ",
                         (long long) at, (long long) m);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
        *(pass ? rs : ws) = MPI_Wtime() - t0;
    }
}

int main(int argc, char **argv)
{
    long long extent = 0, win = 1 << 20, maxkb = -1;
    int opt, rec = 8, all = 0, check = 0;
    const char *kind = "cyclic";
    t_init(&argc, &argv);
    while ((opt = getopt(argc, argv, "e:w:m:t:r:ac")) != -1) {
        if (opt == 'e')
            extent = atoll(optarg);
        else if (opt == 'w')
            win = atoll(optarg);
        else if (opt == 'm')
            maxkb = atoll(optarg);
        else if (opt == 't')
            kind = optarg;
        else if (opt == 'r')
            rec = atoi(optarg);
        else if (opt == 'a')
            all = 1;
        else if (opt == 'c')
            check = 1;
    }
    T_ASSERT(optind == argc - 1 && extent > 0, "usage: t_viewcost -e EXTENT [-t KIND] [-r REC] "
             "[-w W] [-a] [-m KB] FILE");
    /* the view's type before the baseline: MPI's own type (a darray holds
     * a few small nodes) is not what is measured, the file's view is */
    view v = make_view(kind, extent, rec, check);
    MPI_Offset recs = v.recs, mn;       /* this rank's doubles in the view */
    MPI_Allreduce(&recs, &mn, 1, MPI_OFFSET, MPI_MIN, MPI_COMM_WORLD);
    MPI_Offset n = win / 8 < mn / 2 || all ? win / 8 : mn / 2;
    T_ASSERT(n > 0 && recs < INT32_MAX, "extent %lld: out of range at P=%d", extent, t_size);
    double *w = malloc((size_t) n * 8), *r = malloc((size_t) n * 8);
    T_ASSERT(w && r, "out of memory");
    fill(w, n, 0);              /* touch the buffers before the baseline */
    memset(r, 0, (size_t) n * 8);

    MPI_File fh;
    MPI_Info info = tm_hints();
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[optind], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    T_MPI(MPI_File_write_at_all(fh, 0, w, 0, MPI_BYTE, MPI_STATUS_IGNORE));     /* warm up */
    long base = vm_kb("VmHWM:");
    double ws = 0, rs = 0;
    T_MPI(MPI_File_set_view(fh, v.disp, MPI_DOUBLE, v.ft, "native", MPI_INFO_NULL));
    if (all)
        full(fh, w, r, n, &v, &ws, &rs);
    else {
        /* windows at the view's start and end (every rank's: the shortest
         * rank's end, so the calls stay collective) and its middle */
        window(fh, w, r, n, 0, 1);
        window(fh, w, r, n, mn - n, 1);
        window(fh, w, r, n, recs / 2, 0);
    }
    MPI_Offset pos, byte;
    T_MPI(MPI_File_seek(fh, recs - 1, MPI_SEEK_SET));
    T_MPI(MPI_File_get_position(fh, &pos));
    T_MPI(MPI_File_get_byte_offset(fh, pos, &byte));
    T_ASSERT(pos == recs - 1, "position %lld after seeking to %lld", (long long) pos,
             (long long) (recs - 1));
    T_ASSERT(!v.rec || byte == byte_of(&v, recs - 1), "byte offset of record %lld: %lld, want "
             "%lld", (long long) pos, (long long) byte, (long long) byte_of(&v, recs - 1));
    long peak = vm_kb("VmHWM:"), grew = peak - base;
    if (check) {    /* after the peak: MPI_File_get_view gives the view's type map back */
        MPI_Datatype et, ft;
        MPI_Offset d;
        char rep[MPI_MAX_DATAREP_STRING];
        T_MPI(MPI_File_get_view(fh, &d, &et, &ft, rep));
        T_ASSERT(d == v.disp && et == MPI_DOUBLE, "get_view: disp %lld", (long long) d);
        same_map(ft, v.ft, extent);
        MPI_Type_free(&ft);
    }
    T_MPI(MPI_File_close(&fh));
    MPI_Type_free(&v.ft);

    long pb[2] = { peak, base }, mx[2], grew_max;
    MPI_Reduce(pb, mx, 2, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&grew, &grew_max, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    MPI_Offset bytes = recs * 8;
    MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_OFFSET, MPI_SUM, MPI_COMM_WORLD);
    if (t_rank == 0 && all)
        printf("viewcost %lld %d peak_kB=%ld base_kB=%ld grew_kB=%ld write_s=%.2f "
               "write_MBps=%.1f read_s=%.2f read_MBps=%.1f bytes=%lld\n", extent, t_size, mx[0],
               mx[1], grew_max, ws, bytes / ws / 1e6, rs, bytes / rs / 1e6, (long long) bytes);
    else if (t_rank == 0)
        printf("viewcost %lld %d peak_kB=%ld base_kB=%ld grew_kB=%ld\n", extent, t_size, mx[0],
               mx[1], grew_max);
    T_ASSERT(maxkb < 0 || grew_max <= maxkb, "a rank's peak grew %ld kB with the view (limit %lld)",
             grew_max, maxkb);
    free(w);
    free(r);
    return t_finish();
}
