/* MPI-IO features, each leaving deterministic bytes in FILE (the harness
 * compares it with the same run on ufs:) and asserting what it can see:
 *   seek (SET/CUR/END), get_position, get_byte_offset; shared and ordered
 *   pointers (write_shared in rank turns, seek_shared, write_ordered,
 *   read_ordered, read_shared); split collectives (*_all_begin/_end,
 *   _at_all_begin/_end, ordered_begin/_end); set_view with every basic
 *   etype, a contiguous etype and one with a hole, at displacements that
 *   are not multiples of anything; external32 (bytes are big-endian);
 *   atomic mode (concurrent overlapping writes over every server leave
 *   one writer's bytes); MPI_MODE_APPEND, MPI_MODE_SEQUENTIAL,
 *   MPI_MODE_UNIQUE_OPEN, RDONLY/WRONLY enforcement, set_size/preallocate,
 *   get_amode/get_group/get_type_extent, get_info (on ddio: the ddio
 *   hints in force), and every MPI 4 large-count (_c) binding.
 * T_FEATURES_SKIP="PART ..." leaves parts out where the MPI library refuses
 * them (test/ompi leaves out info: Open MPI's get_info): shared (section 1 and
 * every other use of the shared pointer; APPEND's records are then written
 * at the offsets write_ordered gives them), atomic (section 5), info (the
 * ddio hints in get_info); each part left out is printed as "SKIP PART:
 * why". The _c section needs MPI 4 (Open MPI 4.1 is MPI 3.1): without it,
 * it is left out the same way. The control run must leave out the same
 * parts (their bytes are the prefill's then).
 * usage: t_features FILE */
#include "tutil.h"

static const char *fname;
static int is_ddio;
static int skip_shared;

/* is PART listed in T_FEATURES_SKIP? If so, rank 0 says so, with why */
static int skipped(const char *part, const char *why)
{
    const char *l = getenv("T_FEATURES_SKIP");
    size_t n = strlen(part);
    for (const char *p = l ? strstr(l, part) : NULL; p; p = strstr(p + 1, part)) {
        if ((p == l || p[-1] == ' ' || p[-1] == ',') && (p[n] == 0 || p[n] == ' ' || p[n] == ',')) {
            if (t_rank == 0)
                printf("SKIP %s: %s\n", part, why);
            return 1;
        }
    }
    return 0;
}

#define SEC 65536       /* bytes per section per rank */

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = t_byte(seed, i);
}

static void check(const unsigned char *p, size_t n, uint64_t seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        T_ASSERT(p[i] == t_byte(seed, i), "%s: byte %zu is %d, want %d", what, i, p[i],
                 t_byte(seed, i));
}

static MPI_Offset pos(MPI_File fh)
{
    MPI_Offset p;
    T_MPI(MPI_File_get_position(fh, &p));
    return p;
}

/* collective here: no rank moves the shared pointer before all have read it */
static MPI_Offset shpos(MPI_File fh)
{
    MPI_Offset p;
    T_MPI(MPI_File_get_position_shared(fh, &p));
    MPI_Barrier(MPI_COMM_WORLD);
    return p;
}

static void expect_err(int err, int cls, const char *what)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int n;
    if (err != MPI_SUCCESS)
        MPI_Error_string(err, s, &n);
    T_ASSERT(t_errclass(err) == cls, "%s: error class %d, want %d (%s)", what,
             t_errclass(err), cls, s);
}

/* Every byte of the sections first: ROMIO's two-phase and data sieving on
 * ufs: leave garbage in the holes of strided writes to a fresh file. Then
 * sync-barrier-sync, so that no rank's later write races an aggregator. */
static void prefill(MPI_File fh, MPI_Offset len)
{
    MPI_Offset mine = len / t_size;
    unsigned char *p = malloc(mine);
    fill(p, mine, 3);
    T_MPI(MPI_File_write_at_all(fh, t_rank * mine, p, (int) mine, MPI_BYTE,
                                MPI_STATUS_IGNORE));
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    free(p);
}

/* ---- section 0: seek and positions ------------------------------------------- */

static void seeks(MPI_File fh, MPI_Offset base)
{
    unsigned char b[300];
    MPI_Offset me = base + (MPI_Offset) t_rank * SEC, size;

    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    fill(b, sizeof(b), 10 + t_rank);
    T_MPI(MPI_File_seek(fh, me, MPI_SEEK_SET));
    T_ASSERT(pos(fh) == me, "SEEK_SET");
    T_MPI(MPI_File_write(fh, b, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_seek(fh, 50, MPI_SEEK_CUR));
    T_ASSERT(pos(fh) == me + 150, "SEEK_CUR");
    T_MPI(MPI_File_write(fh, b + 100, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_seek(fh, -30, MPI_SEEK_CUR));
    T_MPI(MPI_File_write(fh, b + 200, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    T_ASSERT(pos(fh) == me + 320, "after SEEK_CUR back");
    MPI_Barrier(MPI_COMM_WORLD);
    /* SEEK_END: relative to the size (the prefill's) every rank sees */
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size >= base + (MPI_Offset) (t_size - 1) * SEC + 320, "size %lld",
             (long long) size);
    T_MPI(MPI_File_seek(fh, -(MPI_Offset) (t_size - t_rank) * 10, MPI_SEEK_END));
    T_ASSERT(pos(fh) == size - (t_size - t_rank) * 10, "SEEK_END");
}

static void seeks_check(MPI_File fh, MPI_Offset base)
{
    unsigned char b[300], w[300];
    MPI_Offset me = base + (MPI_Offset) t_rank * SEC;
    fill(w, sizeof(w), 10 + t_rank);
    T_MPI(MPI_File_read_at(fh, me, b, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    T_ASSERT(!memcmp(b, w, 100), "seek: first write");
    T_MPI(MPI_File_read_at(fh, me + 150, b, 20, MPI_BYTE, MPI_STATUS_IGNORE));
    T_ASSERT(!memcmp(b, w + 100, 20), "seek: second write");
    T_MPI(MPI_File_read_at(fh, me + 220, b, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    T_ASSERT(!memcmp(b, w + 200, 100), "seek: third write over the second's tail");
}

/* ---- section 1: shared and ordered pointers --------------------------------------- */

static void shared(MPI_File fh, MPI_Offset base)
{
    unsigned char b[200], r[200];
    MPI_Status st;
    int n;

    T_MPI(MPI_File_set_view(fh, base, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    T_ASSERT(shpos(fh) == 0, "seek_shared");
    /* write_shared in rank turns: deterministic bytes */
    fill(b, sizeof(b), 20 + t_rank);
    for (int k = 0; k < t_size; k++) {
        if (k == t_rank)
            T_MPI(MPI_File_write_shared(fh, b, 100, MPI_BYTE, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Offset sp = shpos(fh);
    T_ASSERT(sp == 100 * t_size, "shared pointer after write_shared: %lld", (long long) sp);
    /* write_ordered: rank order, after what write_shared left */
    T_MPI(MPI_File_write_ordered(fh, b + 100, 50 + t_rank, MPI_BYTE, &st));
    MPI_Get_count(&st, MPI_BYTE, &n);
    T_ASSERT(n == 50 + t_rank, "write_ordered count %d", n);
    MPI_Offset end = 100 * t_size + 50 * t_size + t_size * (t_size - 1) / 2;
    T_ASSERT(shpos(fh) == end, "shared pointer after write_ordered");
    /* back to the start: read_ordered of the same sizes the ranks wrote */
    T_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    T_MPI(MPI_File_read_ordered(fh, r, 100, MPI_BYTE, &st));
    check(r, 100, 20 + t_rank, "read_ordered of write_shared turns");
    /* read_shared in turns: the ordered records */
    for (int k = 0; k < t_size; k++) {
        if (k == t_rank) {
            T_MPI(MPI_File_read_shared(fh, r, 50 + t_rank, MPI_BYTE, &st));
            T_ASSERT(!memcmp(r, b + 100, 50 + t_rank), "read_shared of write_ordered");
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    T_ASSERT(shpos(fh) == end, "shared pointer at the end");
    /* the individual pointer did not move */
    T_ASSERT(pos(fh) == 0, "individual pointer moved by shared I/O");
}

/* ---- section 2: split collectives --------------------------------------------------- */

static MPI_Datatype cyclic(MPI_Datatype etype, int n_per_block)
{
    MPI_Datatype t, r;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(etype, &lb, &ext);
    MPI_Type_create_subarray(1, (int[]) {t_size * n_per_block}, (int[]) {n_per_block},
                             (int[]) {t_rank * n_per_block}, MPI_ORDER_C, etype, &t);
    MPI_Type_create_resized(t, 0, (MPI_Aint) t_size * n_per_block * ext, &r);
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

static void split(MPI_File fh, MPI_Offset base)
{
    int w[1000], r[1000];
    MPI_Datatype ft = cyclic(MPI_INT, 3);
    MPI_Status st;
    int n;

    for (int i = 0; i < 1000; i++)
        w[i] = t_rank * 100000 + i;
    T_MPI(MPI_File_set_view(fh, base, MPI_INT, ft, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_write_all_begin(fh, w, 500, MPI_INT));
    T_MPI(MPI_File_write_all_end(fh, w, &st));
    MPI_Get_count(&st, MPI_INT, &n);
    T_ASSERT(n == 500, "write_all_end count %d", n);
    T_MPI(MPI_File_write_at_all_begin(fh, 500, w + 500, 500, MPI_INT));
    T_MPI(MPI_File_write_at_all_end(fh, w + 500, &st));
    T_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    T_MPI(MPI_File_read_all_begin(fh, r, 500, MPI_INT));
    T_MPI(MPI_File_read_all_end(fh, r, &st));
    T_MPI(MPI_File_read_at_all_begin(fh, 500, r + 500, 500, MPI_INT));
    T_MPI(MPI_File_read_at_all_end(fh, r + 500, &st));
    T_ASSERT(!memcmp(r, w, sizeof(w)), "split collectives: read back differs");
    if (skip_shared) {          /* said once, in main */
        MPI_Type_free(&ft);
        return;
    }
    /* ordered split: after the cyclic area */
    T_MPI(MPI_File_set_view(fh, base + (MPI_Offset) t_size * 8000, MPI_INT, MPI_INT, "native",
                            MPI_INFO_NULL));
    T_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    T_MPI(MPI_File_write_ordered_begin(fh, w, 10 + t_rank, MPI_INT));
    T_MPI(MPI_File_write_ordered_end(fh, w, &st));
    T_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    T_MPI(MPI_File_read_ordered_begin(fh, r, 10 + t_rank, MPI_INT));
    T_MPI(MPI_File_read_ordered_end(fh, r, &st));
    T_ASSERT(!memcmp(r, w, (10 + t_rank) * sizeof(int)), "ordered split read back");
    MPI_Type_free(&ft);
}

/* ---- section 3: set_view with many etypes and displacements ------------------------- */

static void views(MPI_File fh, MPI_Offset base)
{
    MPI_Datatype et[6], holed;
    const char *names[6] = { "byte", "short", "int", "double", "3int", "int-hole-int" };
    const MPI_Offset disps[4] = { 0, 1, 4093, 5007 };
    MPI_Offset at = base;
    unsigned char *w = malloc(8192), *r = malloc(8192);

    et[0] = MPI_BYTE;
    et[1] = MPI_SHORT;
    et[2] = MPI_INT;
    et[3] = MPI_DOUBLE;
    MPI_Type_contiguous(3, MPI_INT, &et[4]);
    MPI_Type_commit(&et[4]);
    MPI_Type_vector(2, 1, 2, MPI_INT, &holed);     /* int, hole, int: extent 12 */
    MPI_Type_commit(&holed);
    et[5] = holed;
    for (int e = 0; e < 6; e++)
        for (int d = 0; d < 4; d++) {
            MPI_Aint lb, ext;
            MPI_Offset off;
            MPI_Count sz;
            int n = 37;         /* etypes per rank */
            MPI_Datatype ft = cyclic(et[e], 2);
            MPI_Type_get_extent(et[e], &lb, &ext);
            MPI_Type_size_x(et[e], &sz);
            T_MPI(MPI_File_set_view(fh, at + disps[d], et[e], ft, "native", MPI_INFO_NULL));
            /* etype k of this rank: block k/2, item k%2 */
            T_MPI(MPI_File_get_byte_offset(fh, 5, &off));
            T_ASSERT(off == at + disps[d] + ((5 / 2) * t_size * 2 + t_rank * 2 + 5 % 2) * ext,
                     "get_byte_offset %s disp %lld: %lld", names[e], (long long) disps[d],
                     (long long) off);
            fill(w, n * ext, 1000 + e * 10 + d + t_rank);
            T_MPI(MPI_File_write_all(fh, w, n, et[e], MPI_STATUS_IGNORE));
            T_ASSERT(pos(fh) == n, "%s: position %lld etypes, want %d", names[e],
                     (long long) pos(fh), n);
            memset(r, 0, n * ext);
            T_MPI(MPI_File_read_at(fh, 0, r, n, et[e], MPI_STATUS_IGNORE));
            for (int k = 0; k < n; k++)     /* compare data bytes only (not holes) */
                for (MPI_Aint b = 0; b < ext; b++)
                    if (e != 5 || b < 4 || b >= 8)
                        T_ASSERT(r[k * ext + b] == w[k * ext + b], "%s disp %lld: etype %d "
                                 "byte %ld differs", names[e], (long long) disps[d], k,
                                 (long) b);
            at += disps[d] + (MPI_Offset) (n / 2 + 1) * 2 * t_size * ext + 16;
            MPI_Type_free(&ft);
        }
    MPI_Type_free(&et[4]);
    MPI_Type_free(&holed);
    free(w);
    free(r);
}

/* ---- section 4: external32 ---------------------------------------------------------- */

static void ext32(MPI_File fh, MPI_Offset base)
{
    int v[16], back[16];
    unsigned char raw[64];
    MPI_Aint x;

    for (int i = 0; i < 16; i++)
        v[i] = 0x01020304 + t_rank * 0x100000 + i;
    T_MPI(MPI_File_set_view(fh, base, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    T_MPI(MPI_File_get_type_extent(fh, MPI_INT, &x));
    T_ASSERT(x == 4, "external32 extent of MPI_INT %ld", (long) x);
    T_MPI(MPI_File_write_at_all(fh, t_rank * 16, v, 8, MPI_INT, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_write_at(fh, t_rank * 16 + 8, v + 8, 8, MPI_INT, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_read_at_all(fh, t_rank * 16, back, 16, MPI_INT, MPI_STATUS_IGNORE));
    T_ASSERT(!memcmp(back, v, sizeof(v)), "external32 round trip");
    T_MPI(MPI_File_set_view(fh, base, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_read_at(fh, t_rank * 64, raw, 64, MPI_BYTE, MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; i++) {
        unsigned u = (unsigned) v[i];
        T_ASSERT(raw[4 * i] == (u >> 24) && raw[4 * i + 3] == (u & 0xff),
                 "external32: int %d is not big-endian in the file", i);
    }
}

/* ---- section 5: atomic mode ------------------------------------------------------------ */

/* Every rank writes the whole region at once (strided: 3000-byte pieces
 * every 6000 bytes, so every server is involved, and a contiguous write):
 * with atomicity each piece must come from one writer. */
static void atomic(MPI_File fh, MPI_Offset base)
{
    const int piece = 3000, npieces = 64, len = piece * npieces;
    unsigned char *w = malloc(len), *r = malloc(2 * len);
    MPI_Datatype ft, tmp;
    int flag;

    T_MPI(MPI_File_set_atomicity(fh, 1));
    T_MPI(MPI_File_get_atomicity(fh, &flag));
    T_ASSERT(flag == 1, "get_atomicity");
    MPI_Type_vector(npieces, piece, 2 * piece, MPI_BYTE, &tmp);
    MPI_Type_create_resized(tmp, 0, 2 * piece * npieces, &ft);
    MPI_Type_commit(&ft);
    memset(w, 'A' + t_rank, len);
    for (int round = 0; round < 3; round++) {
        T_MPI(MPI_File_set_view(fh, base, MPI_BYTE, ft, "native", MPI_INFO_NULL));
        MPI_Barrier(MPI_COMM_WORLD);
        T_MPI(MPI_File_write_at(fh, 0, w, len, MPI_BYTE, MPI_STATUS_IGNORE));
        T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
        T_MPI(MPI_File_write_at(fh, base + 2 * len, w, len, MPI_BYTE, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        T_MPI(MPI_File_read_at(fh, base, r, 2 * len, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int k = 0; k < npieces; k++)
            for (int i = 0; i < piece; i++)
                T_ASSERT(r[2 * k * piece + i] == r[0], "atomic strided write: piece %d "
                         "mixes writers ('%c' and '%c')", k, r[0], r[2 * k * piece + i]);
        T_MPI(MPI_File_read_at(fh, base + 2 * len, r, len, MPI_BYTE, MPI_STATUS_IGNORE));
        for (int i = 1; i < len; i++)
            T_ASSERT(r[i] == r[0], "atomic contiguous write mixes writers at %d", i);
    }
    T_MPI(MPI_File_set_atomicity(fh, 0));
    /* deterministic bytes for the comparison with ufs: */
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0) {
        unsigned char *z = malloc(3 * len);
        fill(z, 3 * len, 77);
        T_MPI(MPI_File_write_at(fh, base, z, 3 * len, MPI_BYTE, MPI_STATUS_IGNORE));
        free(z);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&ft);
    MPI_Type_free(&tmp);
    free(w);
    free(r);
}

/* ---- section 6: the MPI 4 large-count (_c) bindings ----------------------------------- */

/* Every _c form once, each rank its own slot of 8 records of 1000 bytes
 * (counts in MPI_Count; MPICH 4.0.2's ROMIO asserts count <= INT_MAX in
 * them, so more than 2 GiB per call goes through a derived type: t_large) */
#if MPI_VERSION >= 4
static void bigcount(MPI_File fh, MPI_Offset base)
{
    const MPI_Count R = 1000;
    unsigned char *w = malloc(8 * R), *r = malloc(8 * R);
    MPI_Offset me = (MPI_Offset) t_rank * 8 * R;
    MPI_Request q[4];
    MPI_Status st, sts[4];
    MPI_Count n, x;

    fill(w, 8 * R, 60 + t_rank);
    T_MPI(MPI_File_set_view(fh, base, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_write_at_c(fh, me, w, R, MPI_BYTE, &st));
    MPI_Get_count_c(&st, MPI_BYTE, &n);
    T_ASSERT(n == R, "write_at_c count %lld", (long long) n);
    T_MPI(MPI_File_write_at_all_c(fh, me + R, w + R, R, MPI_BYTE, &st));
    T_MPI(MPI_File_seek(fh, me + 2 * R, MPI_SEEK_SET));
    T_MPI(MPI_File_write_c(fh, w + 2 * R, R, MPI_BYTE, &st));
    T_MPI(MPI_File_write_all_c(fh, w + 3 * R, R, MPI_BYTE, &st));
    T_MPI(MPI_File_iwrite_at_c(fh, me + 4 * R, w + 4 * R, R, MPI_BYTE, &q[0]));
    T_MPI(MPI_File_iwrite_at_all_c(fh, me + 5 * R, w + 5 * R, R, MPI_BYTE, &q[1]));
    T_MPI(MPI_Waitall(2, q, sts));
    T_MPI(MPI_File_seek(fh, me + 6 * R, MPI_SEEK_SET));
    T_MPI(MPI_File_iwrite_c(fh, w + 6 * R, R, MPI_BYTE, &q[0]));
    T_MPI(MPI_File_iwrite_all_c(fh, w + 7 * R, R, MPI_BYTE, &q[1]));
    T_MPI(MPI_Waitall(2, q, sts));
    T_MPI(MPI_File_write_at_all_begin_c(fh, me, w, R, MPI_BYTE));
    T_MPI(MPI_File_write_at_all_end(fh, w, &st));
    T_MPI(MPI_File_seek(fh, me, MPI_SEEK_SET));
    T_MPI(MPI_File_write_all_begin_c(fh, w, R, MPI_BYTE));
    T_MPI(MPI_File_write_all_end(fh, w, &st));
    /* read each slot back with the matching _c read */
    T_MPI(MPI_File_read_at_c(fh, me, r, R, MPI_BYTE, &st));
    T_MPI(MPI_File_read_at_all_c(fh, me + R, r + R, R, MPI_BYTE, &st));
    T_MPI(MPI_File_seek(fh, me + 2 * R, MPI_SEEK_SET));
    T_MPI(MPI_File_read_c(fh, r + 2 * R, R, MPI_BYTE, &st));
    T_MPI(MPI_File_read_all_c(fh, r + 3 * R, R, MPI_BYTE, &st));
    T_MPI(MPI_File_iread_at_c(fh, me + 4 * R, r + 4 * R, R, MPI_BYTE, &q[0]));
    T_MPI(MPI_File_iread_at_all_c(fh, me + 5 * R, r + 5 * R, R, MPI_BYTE, &q[1]));
    T_MPI(MPI_File_seek(fh, me + 6 * R, MPI_SEEK_SET));
    T_MPI(MPI_File_iread_c(fh, r + 6 * R, R, MPI_BYTE, &q[2]));
    T_MPI(MPI_File_iread_all_c(fh, r + 7 * R, R, MPI_BYTE, &q[3]));
    T_MPI(MPI_Waitall(4, q, sts));
    check(r, 8 * R, 60 + t_rank, "_c reads of _c writes");
    T_MPI(MPI_File_read_at_all_begin_c(fh, me, r, R, MPI_BYTE));
    T_MPI(MPI_File_read_at_all_end(fh, r, &st));
    MPI_Get_count_c(&st, MPI_BYTE, &n);
    T_ASSERT(n == R, "read_at_all_end after _begin_c: count %lld", (long long) n);
    T_MPI(MPI_File_seek(fh, me + R, MPI_SEEK_SET));
    T_MPI(MPI_File_read_all_begin_c(fh, r + R, R, MPI_BYTE));
    T_MPI(MPI_File_read_all_end(fh, r + R, &st));
    check(r, 2 * R, 60 + t_rank, "split _begin_c reads");
    if (skip_shared) {          /* said once, in main */
        free(w);
        free(r);
        return;
    }
    /* shared-pointer _c forms, after the slots */
    T_MPI(MPI_File_set_view(fh, base + (MPI_Offset) t_size * 8 * R, MPI_BYTE, MPI_BYTE,
                            "native", MPI_INFO_NULL));
    T_MPI(MPI_File_write_ordered_c(fh, w, R, MPI_BYTE, &st));
    T_MPI(MPI_File_write_ordered_begin_c(fh, w + R, R, MPI_BYTE));
    T_MPI(MPI_File_write_ordered_end(fh, w + R, &st));
    for (int k = 0; k < t_size; k++) {
        if (k == t_rank) {
            T_MPI(MPI_File_write_shared_c(fh, w + 2 * R, R, MPI_BYTE, &st));
            T_MPI(MPI_File_iwrite_shared_c(fh, w + 3 * R, R, MPI_BYTE, &q[0]));
            T_MPI(MPI_Wait(&q[0], &st));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    T_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    T_MPI(MPI_File_read_ordered_c(fh, r, R, MPI_BYTE, &st));
    T_MPI(MPI_File_read_ordered_begin_c(fh, r + R, R, MPI_BYTE));
    T_MPI(MPI_File_read_ordered_end(fh, r + R, &st));
    for (int k = 0; k < t_size; k++) {
        if (k == t_rank) {
            T_MPI(MPI_File_read_shared_c(fh, r + 2 * R, R, MPI_BYTE, &st));
            T_MPI(MPI_File_iread_shared_c(fh, r + 3 * R, R, MPI_BYTE, &q[0]));
            T_MPI(MPI_Wait(&q[0], &st));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    check(r, 4 * R, 60 + t_rank, "shared and ordered _c");
    T_MPI(MPI_File_get_type_extent_c(fh, MPI_DOUBLE, &x));
    T_ASSERT(x == 8, "get_type_extent_c: %lld", (long long) x);
    free(w);
    free(r);
}
#else
static void bigcount(MPI_File fh, MPI_Offset base)
{
    (void) fh;
    (void) base;
    if (t_rank == 0)
        printf("SKIP bigcount: MPI %d.%d has no large-count (_c) bindings\n", MPI_VERSION,
               MPI_SUBVERSION);
}
#endif

/* ---- other files: modes, sizes, handles ---------------------------------------------- */

static void modes(void)
{
    char *f2 = t_name(fname, ".2"), *fs = t_name(fname, ".seq");
    MPI_File fh;
    unsigned char b[100], r[100];
    int amode, res, err;
    MPI_Offset sz;
    MPI_Group g, wg;

    fill(b, sizeof(b), 90 + t_rank);
    /* FILE.2: set_size, preallocate, APPEND, RDONLY, WRONLY, UNIQUE_OPEN */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f2, MPI_MODE_CREATE | MPI_MODE_RDWR |
                        MPI_MODE_UNIQUE_OPEN, MPI_INFO_NULL, &fh));
    T_MPI(MPI_File_get_amode(fh, &amode));
    T_ASSERT(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN),
             "get_amode %x", amode);
    T_MPI(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &res);
    T_ASSERT(res == MPI_IDENT, "get_group: not the group of the communicator");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    T_MPI(MPI_File_set_size(fh, 12345));
    T_MPI(MPI_File_get_size(fh, &sz));
    T_ASSERT(sz == 12345, "set_size: %lld", (long long) sz);
    T_MPI(MPI_File_preallocate(fh, 20000));
    T_MPI(MPI_File_get_size(fh, &sz));
    T_ASSERT(sz == 20000, "preallocate: %lld", (long long) sz);
    T_MPI(MPI_File_preallocate(fh, 100));  /* never shrinks */
    T_MPI(MPI_File_get_size(fh, &sz));
    T_ASSERT(sz == 20000, "preallocate shrank the file: %lld", (long long) sz);
    T_MPI(MPI_File_set_size(fh, 1000));
    T_MPI(MPI_File_get_size(fh, &sz));
    T_ASSERT(sz == 1000, "set_size shrink: %lld", (long long) sz);
    T_MPI(MPI_File_close(&fh));
    /* APPEND: both pointers start at the end */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f2, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL,
                        &fh));
    sz = skip_shared ? 1000 : shpos(fh);
    T_ASSERT(pos(fh) == 1000 && sz == 1000, "APPEND: pointers %lld %lld", (long long) pos(fh),
             (long long) sz);
    if (skip_shared)            /* where write_ordered puts them */
        T_MPI(MPI_File_write_at_all(fh, 1000 + 100 * t_rank, b, 100, MPI_BYTE,
                                    MPI_STATUS_IGNORE));
    else
        T_MPI(MPI_File_write_ordered(fh, b, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    /* WRONLY: reading is refused */
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    err = MPI_File_read_at(fh, 0, r, 10, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_err(err, MPI_ERR_ACCESS, "read on a WRONLY file");
    T_MPI(MPI_File_close(&fh));
    /* RDONLY: writing is refused, reading sees the appended records */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, f2, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    err = MPI_File_write_at(fh, 0, b, 10, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_err(err, MPI_ERR_READ_ONLY, "write on a RDONLY file");
    err = MPI_File_write_at_all(fh, 0, b, 10, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_err(err, MPI_ERR_READ_ONLY, "write_all on a RDONLY file");
    T_MPI(MPI_File_read_at(fh, 1000 + 100 * t_rank, r, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    check(r, 100, 90 + t_rank, "appended record");
    T_MPI(MPI_File_close(&fh));
    /* SEQUENTIAL: shared-pointer I/O works, seeking is unsupported */
    if (skip_shared) {          /* said once, in main; the file is deleted on close */
        free(f2);
        free(fs);
        return;
    }
    T_MPI(MPI_File_open(MPI_COMM_WORLD, fs, MPI_MODE_CREATE | MPI_MODE_WRONLY |
                        MPI_MODE_SEQUENTIAL | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    T_MPI(MPI_File_write_ordered(fh, b, 100, MPI_BYTE, MPI_STATUS_IGNORE));
    err = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    expect_err(err, MPI_ERR_UNSUPPORTED_OPERATION, "seek on a SEQUENTIAL file");
    err = MPI_File_write_at(fh, 0, b, 10, MPI_BYTE, MPI_STATUS_IGNORE);
    expect_err(err, MPI_ERR_UNSUPPORTED_OPERATION, "write_at on a SEQUENTIAL file");
    T_MPI(MPI_File_close(&fh));
    free(f2);
    free(fs);
}

static void info_check(MPI_File fh)
{
    MPI_Info info;
    char v[MPI_MAX_INFO_VAL + 1];
    int flag;
    const char *want[][2] = {
        {"striping_unit", "8192"}, {"romio_ddio_timeout", "17"},
        {"romio_ddio_presort", "enable"}, {"romio_ddio_type_desc", "enable"},
        {"romio_ddio_collective", "ddio"}
    };

    if (!is_ddio || skipped("info", "MPI_File_get_info does not report the driver's ddio "
                            "hints here"))
        return;
    T_MPI(MPI_File_get_info(fh, &info));
    for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        MPI_Info_get(info, want[i][0], MPI_MAX_INFO_VAL, v, &flag);
        T_ASSERT(flag && !strcmp(v, want[i][1]), "get_info %s: %s, want %s", want[i][0],
                 flag ? v : "(absent)", want[i][1]);
    }
    MPI_Info_get(info, "ddio_desc_builder", MPI_MAX_INFO_VAL, v, &flag);
    T_ASSERT(flag && (!strcmp(v, "type") || !strcmp(v, "flat") || !strcmp(v, "none")),
             "get_info ddio_desc_builder: %s", flag ? v : "(absent)");
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    MPI_File fh;
    MPI_Info info;
    MPI_Offset S = (MPI_Offset) SEC * 16;     /* section stride, > any section */

    t_init(&argc, &argv);
    T_ASSERT(argc == 2, "usage: t_features FILE");
    fname = argv[1];
    is_ddio = !strncmp(fname, "ddio:", 5);
    MPI_Info_create(&info);
    MPI_Info_set(info, "striping_unit", "8192");
    MPI_Info_set(info, "romio_ddio_timeout", "17");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    T_MPI(MPI_File_set_size(fh, 0));
    prefill(fh, 7 * S);
    info_check(fh);
    seeks(fh, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    seeks_check(fh, 0);
    skip_shared = skipped("shared", "shared file pointers are refused here (section 1, the "
                          "ordered split collectives, the _c shared forms, SEQUENTIAL; APPEND "
                          "writes at explicit offsets)");
    if (!skip_shared)
        shared(fh, S);
    split(fh, 2 * S);
    views(fh, 3 * S);
    ext32(fh, 4 * S);
    if (!skipped("atomic", "atomic mode is refused here (section 5)"))
        atomic(fh, 5 * S);
    bigcount(fh, 6 * S);
    T_MPI(MPI_File_close(&fh));
    modes();
    return t_finish();
}
