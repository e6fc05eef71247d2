/* Independent I/O battery: contiguous write_at/read_at, and noncontiguous
 * file views (vector, indexed with holes, subarray) with noncontiguous memory
 * types (vector with gaps, subarray with a halo), reads past end of file.
 * Every rank keeps a model of the whole file and checks every read against
 * it; the harness also compares the final file with the same run on ufs:.
 * usage: t_indep FILE   (hints from DDIO_TEST_HINTS="k=v,k=v") */
#include "tutil.h"

#define R 100003            /* contiguous bytes per rank (odd, crosses stripes) */
#define VB 24               /* vector block */
#define VK 999              /* vector blocks per rank */
#define IC 64               /* indexed cell per rank */
#define IK 517              /* indexed cells */
#define SR 37               /* subarray global rows */
#define SC 53               /* subarray global cols */

static unsigned char *model;
static MPI_Offset model_len;

static void model_put(MPI_Offset off, const unsigned char *p, MPI_Offset n)
{
    memcpy(model + off, p, (size_t) n);
    if (off + n > model_len)
        model_len = off + n;
}

/* ---- region A: contiguous ------------------------------------------------- */
static void region_contig(MPI_File fh)
{
    unsigned char *b = malloc(R);
    for (int r = 0; r < t_size; r++) {
        for (int i = 0; i < R; i++)
            b[i] = t_byte(1, (uint64_t) r * R + i);
        if (r == t_rank) {
            MPI_Status st;
            T_MPI(MPI_File_write_at(fh, (MPI_Offset) r * R, b, R, MPI_BYTE, &st));
            int n;
            MPI_Get_count(&st, MPI_BYTE, &n);
            T_ASSERT(n == R, "write_at count %d", n);
        }
        model_put((MPI_Offset) r * R, b, R);
    }
    free(b);
}

/* ---- region B: vector view, vector memory with gaps ----------------------- */
static MPI_Offset region_vector(MPI_File fh, MPI_Offset base, int check_only)
{
    MPI_Datatype ft, ftr, mt;
    MPI_Type_vector(VK, VB, VB * t_size, MPI_BYTE, &ft);
    MPI_Type_create_resized(ft, 0, (MPI_Aint) VK * VB * t_size, &ftr);
    MPI_Type_commit(&ftr);
    MPI_Type_vector(VK, VB, 2 * VB, MPI_BYTE, &mt);   /* gaps in memory */
    MPI_Type_commit(&mt);
    unsigned char *mem = calloc(2 * VB * VK, 1);
    T_MPI(MPI_File_set_view(fh, base + (MPI_Offset) t_rank * VB, MPI_BYTE, ftr, "native",
                            MPI_INFO_NULL));
    MPI_Status st;
    if (!check_only) {
        for (int k = 0; k < VK; k++)
            for (int j = 0; j < VB; j++)
                mem[2 * VB * k + j] = t_byte(2, ((uint64_t) k * t_size + t_rank) * VB + j);
        T_MPI(MPI_File_write(fh, mem, 1, mt, &st));
    } else {
        memset(mem, 0xAB, 2 * VB * VK);
        T_MPI(MPI_File_read_at(fh, 0, mem, 1, mt, &st));
        for (int k = 0; k < VK; k++)
            for (int j = 0; j < VB; j++) {
                T_ASSERT(mem[2 * VB * k + j] == model[base + ((MPI_Offset) k * t_size + t_rank) * VB + j],
                         "vector read mismatch block %d byte %d", k, j);
                T_ASSERT(mem[2 * VB * k + VB + j] == 0xAB, "vector read wrote into a gap");
            }
    }
    int n;
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == VK * VB, "vector count %d", n);
    for (int r = 0; r < t_size && !check_only; r++)
        for (int k = 0; k < VK; k++) {
            unsigned char b[VB];
            for (int j = 0; j < VB; j++)
                b[j] = t_byte(2, ((uint64_t) k * t_size + r) * VB + j);
            model_put(base + ((MPI_Offset) k * t_size + r) * VB, b, VB);
        }
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    MPI_Type_free(&ftr);
    MPI_Type_free(&mt);
    free(mem);
    return base + (MPI_Offset) VK * VB * t_size;
}

/* ---- region C: indexed view with holes, contiguous memory ----------------- */
static int ilen(int r, int k) { return 1 + (k * 7 + r * 3) % (IC - 2); }  /* fits the cell after idisp's shift */
static int idisp(int r, int k) { return k * IC * t_size + r * IC + (k % 3); }

static MPI_Offset region_indexed(MPI_File fh, MPI_Offset base, int check_only)
{
    int *bl = malloc(sizeof(int) * IK), *dp = malloc(sizeof(int) * IK), total = 0;
    for (int k = 0; k < IK; k++) {
        bl[k] = ilen(t_rank, k) - (k % 3 ? 1 : 0);   /* some blocks stay short */
        if (bl[k] == 0)
            bl[k] = 1;
        dp[k] = idisp(t_rank, k);
        total += bl[k];
    }
    bl[5] = 0;  /* a zero-length block */
    total = 0;
    for (int k = 0; k < IK; k++)
        total += bl[k];
    MPI_Datatype ft;
    MPI_Type_indexed(IK, bl, dp, MPI_BYTE, &ft);
    MPI_Type_commit(&ft);
    unsigned char *mem = malloc((size_t) total);
    T_MPI(MPI_File_set_view(fh, base, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    MPI_Status st;
    if (!check_only) {
        int q = 0;
        for (int k = 0; k < IK; k++)
            for (int j = 0; j < bl[k]; j++)
                mem[q++] = t_byte(3, (uint64_t) dp[k] + j);
        T_MPI(MPI_File_write(fh, mem, total, MPI_BYTE, &st));
    } else {
        T_MPI(MPI_File_read_at(fh, 0, mem, total, MPI_BYTE, &st));
        int q = 0;
        for (int k = 0; k < IK; k++)
            for (int j = 0; j < bl[k]; j++, q++)
                T_ASSERT(mem[q] == model[base + dp[k] + j], "indexed mismatch at block %d", k);
    }
    int n;
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == total, "indexed count %d != %d", n, total);
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
    free(mem);
    free(bl);
    free(dp);
    return base + (MPI_Offset) IK * IC * t_size + 8;
}

/* every rank's indexed writes, for the model */
static void model_indexed(MPI_Offset base)
{
    for (int r = 0; r < t_size; r++)
        for (int k = 0; k < IK; k++) {
            int len = ilen(r, k) - (k % 3 ? 1 : 0);
            if (len == 0)
                len = 1;
            if (k == 5)
                continue;
            for (int j = 0; j < len; j++) {
                unsigned char b = t_byte(3, (uint64_t) idisp(r, k) + j);
                model_put(base + idisp(r, k) + j, &b, 1);
            }
        }
}

/* ---- region D: subarray view of doubles, subarray memory with halo --------- */
static void sub_rows(int r, int *r0, int *nr)
{
    int per = (SR + t_size - 1) / t_size;
    *r0 = r * per < SR ? r * per : SR;
    *nr = *r0 + per <= SR ? per : SR - *r0;
}

static MPI_Offset region_subarray(MPI_File fh, MPI_Offset base, int check_only)
{
    int r0, nr;
    sub_rows(t_rank, &r0, &nr);
    const int ncol = 40, c0 = 5;
    MPI_Datatype ft = MPI_DATATYPE_NULL, mt = MPI_DATATYPE_NULL;
    double *mem = calloc((size_t) (nr + 2) * (ncol + 2), sizeof(double));
    MPI_Status st;
    if (nr > 0) {
        int gs[2] = { SR, SC }, ss[2] = { nr, ncol }, st0[2] = { r0, c0 };
        MPI_Type_create_subarray(2, gs, ss, st0, MPI_ORDER_C, MPI_DOUBLE, &ft);
        MPI_Type_commit(&ft);
        int ls[2] = { nr + 2, ncol + 2 }, lst[2] = { 1, 1 };
        MPI_Type_create_subarray(2, ls, ss, lst, MPI_ORDER_C, MPI_DOUBLE, &mt);
        MPI_Type_commit(&mt);
        T_MPI(MPI_File_set_view(fh, base, MPI_DOUBLE, ft, "native", MPI_INFO_NULL));
    }
    for (int i = 0; i < nr; i++)
        for (int j = 0; j < ncol; j++) {
            uint64_t g = (uint64_t) (r0 + i) * SC + c0 + j;
            double v = (double) g * 1.5 + 0.25;
            if (!check_only)
                mem[(i + 1) * (ncol + 2) + j + 1] = v;
        }
    if (nr > 0) {
        if (!check_only) {
            T_MPI(MPI_File_write(fh, mem, 1, mt, &st));
        } else {
            T_MPI(MPI_File_read_at(fh, 0, mem, 1, mt, &st));
            for (int i = 0; i < nr + 2; i++)
                for (int j = 0; j < ncol + 2; j++) {
                    double v = mem[i * (ncol + 2) + j];
                    int inside = i >= 1 && i <= nr && j >= 1 && j <= ncol;
                    double want = inside ? (double) ((uint64_t) (r0 + i - 1) * SC + c0 + j - 1) * 1.5 + 0.25 : 0.0;
                    T_ASSERT(v == want, "subarray mismatch at %d,%d: %g != %g", i, j, v, want);
                }
        }
        int n;
        MPI_Get_count(&st, MPI_DOUBLE, &n);
        T_ASSERT(n == nr * ncol, "subarray count %d", n);
        T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        MPI_Type_free(&ft);
        MPI_Type_free(&mt);
    }
    for (int r = 0; r < t_size && !check_only; r++) {
        int a, b;
        sub_rows(r, &a, &b);
        for (int i = 0; i < b; i++)
            for (int j = 0; j < ncol; j++) {
                uint64_t g = (uint64_t) (a + i) * SC + c0 + j;
                double v = (double) g * 1.5 + 0.25;
                model_put(base + (MPI_Offset) g * 8, (unsigned char *) &v, 8);
            }
    }
    free(mem);
    return base + (MPI_Offset) SR * SC * 8;
}

static void check_whole_file(MPI_File fh)
{
    MPI_Offset size;
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == model_len, "size %lld != model %lld", (long long) size, (long long) model_len);
    unsigned char *b = malloc((size_t) size + 100);
    MPI_Status st;
    T_MPI(MPI_File_read_at(fh, 0, b, (int) size + 100, MPI_BYTE, &st));
    int n;
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == size, "read past EOF: count %d, expected %lld", n, (long long) size);
    for (MPI_Offset i = 0; i < size; i++)
        T_ASSERT(b[i] == model[i], "byte %lld: %d != %d", (long long) i, b[i], model[i]);
    T_MPI(MPI_File_read_at(fh, size + 1000, b, 10, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == 0, "read beyond EOF returned %d bytes", n);
    free(b);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_indep FILE");
    model = calloc(64 << 20, 1);
    MPI_Info info = tm_hints();
    MPI_File fh;
    MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));

    /* Extend first: ROMIO's data-sieving writes on ufs: fill holes beyond EOF
     * with stale buffer bytes, so holes must lie inside the file to compare. */
    T_MPI(MPI_File_set_size(fh, (MPI_Offset) t_size * (R + VK * VB + IK * IC) + 8 + SR * SC * 8));
    region_contig(fh);
    MPI_Offset b = (MPI_Offset) t_size * R;
    MPI_Offset c = region_vector(fh, b, 0);
    MPI_Offset d = region_indexed(fh, c, 0);
    model_indexed(c);
    MPI_Offset e = region_subarray(fh, d, 0);
    model_len = e;
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));

    check_whole_file(fh);
    region_vector(fh, b, 1);
    region_indexed(fh, c, 1);
    region_subarray(fh, d, 1);
    T_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    free(model);
    return t_finish();
}
