/* Collective I/O battery: noncontiguous memory types, views with holes,
 * ranks with zero count, empty views (a darray rank that owns nothing),
 * explicit offsets and the individual file pointer, split and nonblocking
 * collectives, two files open at once with interleaved collectives, reads
 * past end of file (short counts per rank) and, on ddio: only, overlapping
 * collective writes (the higher rank wins: ROMIO's two-phase on ufs: does
 * not promise that).
 *
 * Every rank keeps a model of both files (tmodel.h: MPI_Pack/Unpack is the
 * reference for what views and memory types select) and checks every read
 * against it, gaps of noncontiguous buffers included; the harness also
 * compares the files with the same run on ufs:.
 *
 * usage: t_coll FILE          the battery (FILE and FILE.2)
 *        t_coll -f SIZE FILE  write SIZE bytes collectively, reopen, read them
 *                             back collectively (cyclic view) and verify: the
 *                             harness then checks the servers' last.* counters
 * Hints from DDIO_TEST_HINTS="k=v,k=v". */
#include "tmodel.h"

#define CAP (3 << 20)           /* modelled bytes per file */
#define RA  0                   /* region A: vector view with holes */
#define RB  800000              /* region B: darray, one rank owns nothing */
#define RC  1000000             /* region C: explicit offsets, zero counts */
#define RD  1100000             /* region D: 2-D subarray / struct views */
#define RE  1500000             /* region E: split and nonblocking */

static MPI_Info info;
static int on_ddio;
/* ROMIO's romio_cb_write / romio_cb_read = disable, as the open file reports
 * them: those collectives are each rank's independent call (no order among
 * overlapping writers; a short read moves the pointer by what it read) */
static int indep_w, indep_r;
static const char *fname;

static void set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype et, MPI_Datatype ft)
{
    T_MPI(MPI_File_set_view(fh, disp, et, ft, "native", info));
}

/* write_at_all of count x mt at etype offset off through view (disp, ft),
 * applied to the model */
static void cwrite(MPI_File fh, t_model * m, MPI_Offset disp, MPI_Datatype et, MPI_Datatype ft,
                   MPI_Offset off, const void *buf, int count, MPI_Datatype mt)
{
    MPI_Status st;
    MPI_Count got;
    MPI_Offset n;
    int esz;
    set_view(fh, disp, et, ft);
    T_MPI(MPI_File_write_at_all(fh, off, buf, count, mt, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &got);
    unsigned char *s = tm_pack(buf, count, mt, &n);
    T_ASSERT(got == n, "write_at_all wrote %lld of %lld bytes", (long long) got, (long long) n);
    MPI_Type_size(et, &esz);
    tm_write(m, MPI_COMM_WORLD, disp, ft, off * esz, s, n);
    free(s);
}

/* read_at_all into a fresh buffer of count x mt (gaps preset to 0xa5) and
 * compare everything, gaps included, with the model */
static void cread(MPI_File fh, const t_model * m, MPI_Offset disp, MPI_Datatype et,
                  MPI_Datatype ft, MPI_Offset off, int count, MPI_Datatype mt, const char *what)
{
    size_t span = tm_span(count, mt);
    unsigned char *buf = malloc(span), *exp = malloc(span), *s;
    MPI_Status st;
    MPI_Count sz, got;
    int esz;
    long d;
    memset(buf, 0xa5, span);
    memset(exp, 0xa5, span);
    set_view(fh, disp, et, ft);
    T_MPI(MPI_File_read_at_all(fh, off, buf, count, mt, &st));
    MPI_Type_size_x(mt, &sz);
    MPI_Type_size(et, &esz);
    s = malloc((size_t) (sz * count) + 1);
    tm_read(m, disp, ft, off * esz, s, sz * count);
    tm_unpack(s, sz * count, exp, count, mt);
    MPI_Get_elements_x(&st, MPI_BYTE, &got);
    T_ASSERT(got == sz * count, "%s: read %lld of %lld bytes", what, (long long) got,
             (long long) (sz * count));
    T_ASSERT((d = tm_diff(buf, exp, span)) < 0, "%s: byte %ld of the buffer is %u, want %u",
             what, d, buf[d], exp[d]);
    free(buf);
    free(exp);
    free(s);
}

/* ---- A: vector view with holes, noncontiguous memory, file pointer --------------- */

#define AK 150                  /* blocks per rank */
#define AB 40                   /* bytes per block */
#define AS 64                   /* slot per rank per block: 24-byte holes */

static void test_vector(MPI_File fh, t_model * m)
{
    MPI_Datatype v, ft, mt;
    MPI_Offset disp = RA + (MPI_Offset) AS * t_rank, pos;
    int nint = AK * AB / 4;
    MPI_Type_vector(AK, AB, AS * t_size, MPI_BYTE, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint) AK * AS * t_size, &ft);
    MPI_Type_commit(&ft);
    /* 4-byte pieces 12 bytes apart: every file block spans several */
    MPI_Type_create_hvector(nint, 1, 12, MPI_INT, &mt);
    MPI_Type_commit(&mt);
    size_t span = tm_span(1, mt);
    unsigned char *buf = malloc(span);
    tm_fill(buf, span, 10 + t_rank, 0);

    /* individual file pointer: write_all moves it by the request */
    set_view(fh, disp, MPI_BYTE, ft);
    MPI_Status st;
    T_MPI(MPI_File_write_all(fh, buf, 1, mt, &st));
    T_MPI(MPI_File_get_position(fh, &pos));
    T_ASSERT(pos == (MPI_Offset) AK * AB, "position after write_all %lld", (long long) pos);
    MPI_Offset n;
    unsigned char *s = tm_pack(buf, 1, mt, &n);
    tm_write(m, MPI_COMM_WORLD, disp, ft, 0, s, n);
    free(s);

    cread(fh, m, disp, MPI_BYTE, ft, 0, 1, mt, "A: vector view, hvector memory");
    cread(fh, m, disp, MPI_BYTE, ft, 0, AK * AB, MPI_BYTE, "A: vector view, contiguous memory");
    /* the whole region contiguously: the holes read as zeros (the last
     * rank's last hole is past the end of file yet) */
    MPI_Offset all = (MPI_Offset) AK * AS * t_size, per = all / t_size, lo = RA + per * t_rank;
    MPI_Offset rcnt = lo + per <= m->len ? per : m->len - lo;
    cread(fh, m, lo, MPI_BYTE, MPI_BYTE, 0, (int) rcnt, MPI_BYTE,
          "A: region with holes, contiguous");
    /* a second write through the pointer, odd ranks with count 0 */
    set_view(fh, disp, MPI_BYTE, ft);
    T_MPI(MPI_File_seek(fh, 8, MPI_SEEK_SET));
    int cnt = t_rank % 2 ? 0 : 100;
    tm_fill(buf, 100, 20 + t_rank, 0);
    T_MPI(MPI_File_write_all(fh, buf, cnt, MPI_BYTE, &st));
    T_MPI(MPI_File_get_position(fh, &pos));
    T_ASSERT(pos == 8 + cnt, "position after write_all of %d: %lld", cnt, (long long) pos);
    tm_write(m, MPI_COMM_WORLD, disp, ft, 8, buf, cnt);
    cread(fh, m, disp, MPI_BYTE, ft, 0, 1, mt, "A: after zero-count write");
    MPI_Type_free(&v);
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
    free(buf);
}

/* ---- B: darray: the last rank owns nothing (an empty view) ------------------- */

static void test_darray(MPI_File fh, t_model * m)
{
    /* P-1 elements of 1000 bytes BLOCK over P ranks: rank P-1 gets none
     * (its filetype has size 0); then a 2-D BLOCK x CYCLIC(2) darray with
     * a memory subarray with a halo. (Not CYCLIC(k > 1) on the first
     * dimension: MPICH 4.0.2's own darray type, which MPI_Pack uses for the
     * model, is wrong there; ROMIO flattens its own, correct, darray.) */
    MPI_Datatype el, ft, ft2, mt;
    int n1 = t_size > 1 ? t_size - 1 : 1;
    int g[1] = { n1 }, dist[1] = { MPI_DISTRIBUTE_BLOCK }, darg[1] = { MPI_DISTRIBUTE_DFLT_DARG },
        ps[1] = { t_size };
    MPI_Type_contiguous(1000, MPI_BYTE, &el);
    MPI_Type_commit(&el);
    MPI_Type_create_darray(t_size, t_rank, 1, g, dist, darg, ps, MPI_ORDER_C, el, &ft);
    MPI_Type_commit(&ft);
    MPI_Count fsz;
    MPI_Type_size_x(ft, &fsz);
    int mine = (int) (fsz / 1000);
    unsigned char *buf = malloc(1000 * (size_t) (mine + 1));
    tm_fill(buf, 1000 * (size_t) mine, 30 + t_rank, 0);
    cwrite(fh, m, RB, el, ft, 0, buf, mine, el);
    cread(fh, m, RB, el, ft, 0, mine, el, "B: 1-D darray (empty on the last rank)");
    free(buf);

    int G[2] = { 37, 45 }, D2[2] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC },
        A2[2] = { MPI_DISTRIBUTE_DFLT_DARG, 2 }, P2[2] = { 0, 0 };
    MPI_Dims_create(t_size, 2, P2);
    MPI_Type_create_darray(t_size, t_rank, 2, G, D2, A2, P2, MPI_ORDER_C, MPI_DOUBLE, &ft2);
    MPI_Type_commit(&ft2);
    MPI_Type_size_x(ft2, &fsz);
    int nd = (int) (fsz / 8);
    /* memory: nd doubles as the interior of a (nd + 2) x 3 array, middle column */
    int ms[2] = { nd + 2, 3 }, msub[2] = { nd > 0 ? nd : 1, 1 }, mst[2] = { 1, 1 };
    MPI_Type_create_subarray(2, ms, msub, mst, MPI_ORDER_C, MPI_DOUBLE, &mt);
    MPI_Type_commit(&mt);
    size_t span = tm_span(1, mt);
    unsigned char *b2 = malloc(span);
    tm_fill(b2, span, 40 + t_rank, 0);
    MPI_Offset disp2 = RB + 100000;
    cwrite(fh, m, disp2, MPI_DOUBLE, ft2, 0, b2, nd ? 1 : 0, mt);
    cread(fh, m, disp2, MPI_DOUBLE, ft2, 0, nd ? 1 : 0, mt, "B: 2-D darray, subarray memory");
    cread(fh, m, disp2, MPI_DOUBLE, ft2, 0, nd, MPI_DOUBLE, "B: 2-D darray, contiguous memory");
    MPI_Type_free(&el);
    MPI_Type_free(&ft);
    MPI_Type_free(&ft2);
    MPI_Type_free(&mt);
    free(b2);
}

/* ---- C: contiguous view, explicit offsets, zero counts on some ranks ------------- */

static void test_explicit(MPI_File fh, t_model * m)
{
    const int L = 3001;
    unsigned char *buf = malloc((size_t) L * t_size);
    int wr = t_rank % 2 == 0 || t_rank == t_size - 1;  /* the last writes: no EOF hole */
    tm_fill(buf, L, 50 + t_rank, 0);
    cwrite(fh, m, RC, MPI_BYTE, MPI_BYTE, (MPI_Offset) L * t_rank, buf, wr ? L : 0, MPI_BYTE);
    /* every rank reads everything (overlapping reads), then zero-count reads */
    cread(fh, m, RC, MPI_BYTE, MPI_BYTE, 0, L * t_size, MPI_BYTE, "C: overlapping reads");
    cread(fh, m, RC, MPI_BYTE, MPI_BYTE, (MPI_Offset) L * t_rank, wr ? 0 : L,
          MPI_BYTE, "C: zero-count reads on the writers");
    /* a zero-size datatype with a nonzero count moves nothing */
    MPI_Datatype z;
    MPI_Type_contiguous(0, MPI_BYTE, &z);
    MPI_Type_commit(&z);
    set_view(fh, RC, MPI_BYTE, MPI_BYTE);
    MPI_Status st;
    T_MPI(MPI_File_write_at_all(fh, 0, buf, 5, z, &st));
    T_MPI(MPI_File_read_at_all(fh, 0, buf, 5, z, &st));
    MPI_Type_free(&z);
    free(buf);
}

/* ---- D: two files, interleaved collectives ---------------------------------------- */

static void test_two_files(MPI_File f1, t_model * m1, MPI_File f2, t_model * m2)
{
    /* f1: 2-D subarray view (rows split over ranks, 3 of every 4 columns);
     * f2: struct filetype with two irregular blocks per rank */
    const int R = 16, C = 40;
    int gs[2] = { R * t_size, C }, ss[2] = { R, 30 }, st0[2] = { R * t_rank, 5 };
    MPI_Datatype sub, blk[2] = { MPI_BYTE, MPI_BYTE }, str, strr;
    MPI_Type_create_subarray(2, gs, ss, st0, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_commit(&sub);
    int bl[2] = { 77, 1800 };   /* the last block ends the extent: no trailing hole */
    MPI_Aint dp[2] = { 13, 200 };
    MPI_Type_create_struct(2, bl, dp, blk, &str);
    MPI_Type_create_resized(str, 0, 2000, &strr);
    MPI_Type_commit(&strr);
    MPI_Offset d2 = (MPI_Offset) 2000 * 3 * t_rank;   /* 3 tiles per rank */
    size_t n1 = (size_t) R * 30 * 4, n2 = 3 * 1877;
    unsigned char *a = malloc(n1), *b = malloc(n2);
    tm_fill(a, n1, 60 + t_rank, 0);
    tm_fill(b, n2, 70 + t_rank, 0);

    cwrite(f1, m1, RD, MPI_INT, sub, 0, a, (int) (n1 / 4), MPI_INT);
    cwrite(f2, m2, d2, MPI_BYTE, strr, 0, b, (int) n2, MPI_BYTE);
    cread(f1, m1, RD, MPI_INT, sub, 0, (int) (n1 / 4), MPI_INT, "D: file 1 subarray");
    tm_fill(a, n1, 80 + t_rank, 0);
    cwrite(f1, m1, RD, MPI_INT, sub, 0, a, (int) (n1 / 4), MPI_INT);
    cread(f2, m2, d2, MPI_BYTE, strr, 0, (int) n2, MPI_BYTE, "D: file 2 struct");
    cread(f1, m1, RD, MPI_INT, sub, 0, (int) (n1 / 4), MPI_INT, "D: file 1 rewritten");
    /* file 2 read through a view that is NOT the one written with */
    cread(f2, m2, 0, MPI_BYTE, MPI_BYTE, (MPI_Offset) 2000 * 3 * t_rank, 6000, MPI_BYTE,
          "D: file 2 contiguous");
    MPI_Type_free(&sub);
    MPI_Type_free(&str);
    MPI_Type_free(&strr);
    free(a);
    free(b);
}

/* ---- E: split and nonblocking collectives ------------------------------------------ */

static void test_split_nonblocking(MPI_File fh, t_model * m)
{
    const int L = 5000;
    MPI_Datatype v;
    MPI_Type_vector(10, 500, 500 * t_size, MPI_BYTE, &v);
    MPI_Type_commit(&v);
    MPI_Offset disp = RE + 500 * t_rank;
    unsigned char *buf = malloc(L), *got = malloc(L), *exp = malloc(L);
    MPI_Request rq;
    MPI_Status st;
    MPI_Count n;

    tm_fill(buf, L, 90 + t_rank, 0);
    set_view(fh, disp, MPI_BYTE, v);
    T_MPI(MPI_File_iwrite_at_all(fh, 0, buf, L, MPI_BYTE, &rq));
    T_MPI(MPI_Wait(&rq, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &n);
    T_ASSERT(n == L, "iwrite_at_all: %lld bytes", (long long) n);
    tm_write(m, MPI_COMM_WORLD, disp, v, 0, buf, L);

    memset(got, 0, L);
    T_MPI(MPI_File_iread_at_all(fh, 0, got, L, MPI_BYTE, &rq));
    T_MPI(MPI_Wait(&rq, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &n);
    T_ASSERT(n == L, "iread_at_all: %lld bytes", (long long) n);
    tm_read(m, disp, v, 0, exp, L);
    T_ASSERT(tm_diff(got, exp, L) < 0, "iread_at_all data");

    /* split: write_all_begin/end through the individual pointer */
    tm_fill(buf, L, 100 + t_rank, 0);
    T_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    T_MPI(MPI_File_write_all_begin(fh, buf, L, MPI_BYTE));
    T_MPI(MPI_File_write_all_end(fh, buf, &st));
    tm_write(m, MPI_COMM_WORLD, disp, v, 0, buf, L);
    memset(got, 0, L);
    T_MPI(MPI_File_read_at_all_begin(fh, 0, got, L, MPI_BYTE));
    T_MPI(MPI_File_read_at_all_end(fh, got, &st));
    tm_read(m, disp, v, 0, exp, L);
    T_ASSERT(tm_diff(got, exp, L) < 0, "read_at_all_begin/end data");
    MPI_Type_free(&v);
    free(buf);
    free(got);
    free(exp);
}

/* ---- F: end of file: short counts per rank --------------------------------------- */

static void test_eof(MPI_File fh, const t_model * m)
{
    MPI_Offset size, S = m->len;
    T_MPI(MPI_File_get_size(fh, &size));
    T_ASSERT(size == S, "file size %lld, model %lld", (long long) size, (long long) S);
    /* contiguous: rank 0 gets 700 bytes, rank 1 300, the others none */
    const int L = 1000;
    unsigned char *got = malloc(L), *exp = malloc(L);
    MPI_Offset off = S - 700 + 400 * t_rank, want = off < S ? S - off : 0;
    if (want > L)
        want = L;
    MPI_Status st;
    MPI_Count n;
    memset(got, 0xa5, L);
    set_view(fh, 0, MPI_BYTE, MPI_BYTE);
    T_MPI(MPI_File_read_at_all(fh, off, got, L, MPI_BYTE, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &n);
    /* ROMIO's two-phase (ufs:) reports the full request at EOF; ddio reports
     * what was read, as independent reads do */
    if (on_ddio)
        T_ASSERT(n == want, "F: read past EOF at %lld: %lld bytes, want %lld", (long long) off,
                 (long long) n, (long long) want);
    if (want > 0)
        T_ASSERT(tm_diff(got, m->b + off, (size_t) want) < 0, "F: data before EOF");
    if (on_ddio)
        for (int i = (int) want; i < L; i++)
            T_ASSERT(got[i] == 0xa5, "F: byte %d past EOF was written", i);

    /* noncontiguous: 100-byte blocks every 100 * P bytes, the last ones past EOF */
    MPI_Datatype v;
    MPI_Type_vector(40, 100, 100 * t_size, MPI_BYTE, &v);
    MPI_Type_commit(&v);
    MPI_Offset disp = S - 2050 + 100 * t_rank;
    want = tm_below(CAP, disp, v, 0, 4000, S);
    memset(got, 0xa5, L);
    unsigned char *big = malloc(4000), *e2 = malloc(4000);
    set_view(fh, disp, MPI_BYTE, v);
    T_MPI(MPI_File_read_at_all(fh, 0, big, 4000, MPI_BYTE, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &n);
    if (on_ddio)
        T_ASSERT(n == want, "F: strided read past EOF: %lld bytes, want %lld", (long long) n,
                 (long long) want);
    tm_read(m, disp, v, 0, e2, want);
    T_ASSERT(tm_diff(big, e2, (size_t) want) < 0, "F: strided data before EOF");
    /* ddio moves the individual pointer by the request, as ROMIO's two-phase
     * does (ROMIO on ufs: by the bytes read when it falls back to
     * independent I/O, e.g. with one rank) */
    MPI_Offset pos;
    T_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    T_MPI(MPI_File_read_all(fh, big, 4000, MPI_BYTE, &st));
    T_MPI(MPI_File_get_position(fh, &pos));
    T_ASSERT(pos == 4000 || ((!on_ddio || indep_r) && pos == want), "F: position after a short read_all: "
             "%lld", (long long) pos);
    MPI_Type_free(&v);
    free(big);
    free(e2);

    /* the whole file, a slice per rank: holes read as zeros */
    MPI_Offset per = (S + t_size - 1) / t_size, lo = per * t_rank;
    MPI_Offset cnt = lo < S ? (S - lo < per ? S - lo : per) : 0;
    cread(fh, m, 0, MPI_BYTE, MPI_BYTE, lo, (int) cnt, MPI_BYTE, "F: whole file");
    free(got);
    free(exp);
}

/* ---- G: overlapping writers (ddio: only): the higher rank wins --------------------- */

static void test_overlap(void)
{
    char *name = t_name(fname, ".ovl");
    MPI_File fh;
    const int L = 30000, STEP = 10000;
    T_MPI(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    unsigned char *buf = malloc(L);
    tm_fill(buf, L, 200 + t_rank, 0);
    /* rank r writes [r * STEP, r * STEP + L): each byte is covered by up to
     * three ranks; plus an interleaved vector every rank writes in full */
    MPI_Status st;
    /* two calls of plain ranges first: with romio_ddio_coll_speculate the
     * overlapping call then goes speculatively (ad_ddio_coll.c: each rank's
     * range at once, one agreement after), and its writes must be done
     * again through the gate for the higher rank to win */
    unsigned char *pre = malloc(STEP);
    tm_fill(pre, STEP, 150 + t_rank, 0);
    for (int k = 0; k < 2; k++)
        T_MPI(MPI_File_write_at_all(fh, (MPI_Offset) t_rank * STEP, pre, STEP, MPI_BYTE, &st));
    T_MPI(MPI_File_write_at_all(fh, (MPI_Offset) t_rank * STEP, buf, L, MPI_BYTE, &st));
    MPI_Offset size = (MPI_Offset) (t_size - 1) * STEP + L;
    unsigned char *got = malloc((size_t) size);
    T_MPI(MPI_File_read_at_all(fh, 0, got, (int) size, MPI_BYTE, &st));
    for (MPI_Offset i = 0; i < size; i++) {
        int w = (int) (i / STEP);       /* highest rank whose range covers i */
        if (w > t_size - 1)
            w = t_size - 1;
        unsigned char e = t_byte(200 + w, (uint64_t) (i - (MPI_Offset) w * STEP));
        T_ASSERT(got[i] == e, "G: byte %lld is %u, want rank %d's %u", (long long) i, got[i],
                 w, e);
    }
    /* a speculative call whose parts are not ranges (strided memory): each
     * rank's descriptor goes alone; after a call of plain ranges */
    MPI_Datatype mv;
    MPI_Type_vector(STEP / 4, 2, 4, MPI_BYTE, &mv);
    MPI_Type_commit(&mv);
    T_MPI(MPI_File_write_at_all(fh, (MPI_Offset) t_rank * STEP, pre, STEP, MPI_BYTE, &st));
    T_MPI(MPI_File_write_at_all(fh, (MPI_Offset) t_rank * STEP, buf, 1, mv, &st));
    T_MPI(MPI_File_read_at_all(fh, (MPI_Offset) t_rank * STEP, got, STEP, MPI_BYTE, &st));
    for (int i = 0; i < STEP; i++) {
        unsigned char e = i < STEP / 2 ? buf[(i / 2) * 4 + i % 2] : pre[i];
        T_ASSERT(got[i] == e, "G: speculative strided-memory byte %d is %u, want %u", i, got[i], e);
    }
    MPI_Type_free(&mv);
    free(pre);
    /* a strided overlap: every rank writes the same 7-byte blocks every 11
     * bytes (crossing stripe units); the last rank must win everywhere */
    MPI_Datatype v;
    MPI_Type_vector(2000, 7, 11, MPI_BYTE, &v);
    MPI_Type_commit(&v);
    T_MPI(MPI_File_set_view(fh, 3, MPI_BYTE, v, "native", info));
    T_MPI(MPI_File_write_at_all(fh, 0, buf, 14000, MPI_BYTE, &st));
    T_MPI(MPI_File_read_at_all(fh, 0, got, 14000, MPI_BYTE, &st));
    for (int i = 0; i < 14000; i++)
        T_ASSERT(got[i] == t_byte(200 + t_size - 1, (uint64_t) i),
                 "G: strided overlap byte %d: rank %d does not win", i, t_size - 1);
    MPI_Type_free(&v);
    T_MPI(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        T_MPI(MPI_File_delete(name, MPI_INFO_NULL));
    free(buf);
    free(got);
    free(name);
}

/* ---- -f SIZE: a fresh collective read for the block counters -------------------- */

static void fresh_read(MPI_Offset size)
{
    MPI_File fh;
    MPI_Offset per = (size + t_size - 1) / t_size, lo = per * t_rank;
    int cnt = (int) (lo < size ? (size - lo < per ? size - lo : per) : 0);
    unsigned char *buf = malloc((size_t) per + 1), *got = malloc((size_t) size + 1);
    tm_fill(buf, (size_t) cnt, 7, (uint64_t) lo);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    T_MPI(MPI_File_write_at_all(fh, lo, buf, cnt, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_close(&fh));
    /* reopen: a cyclic view of 1000-byte records read with one read_all */
    T_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_RDONLY, info, &fh));
    MPI_Datatype v, ft;
    MPI_Type_vector(1, 1000, 1000 * t_size, MPI_BYTE, &v);
    MPI_Type_create_resized(v, 0, 1000 * t_size, &ft);
    MPI_Type_commit(&ft);
    T_MPI(MPI_File_set_view(fh, 1000 * t_rank, MPI_BYTE, ft, "native", info));
    MPI_Offset mine = 0;
    for (MPI_Offset o = 1000 * t_rank; o < size; o += 1000 * t_size)
        mine += size - o < 1000 ? size - o : 1000;
    MPI_Status st;
    MPI_Count n;
    T_MPI(MPI_File_read_all(fh, got, (int) mine, MPI_BYTE, &st));
    MPI_Get_elements_x(&st, MPI_BYTE, &n);
    T_ASSERT(n == mine, "fresh read: %lld of %lld bytes", (long long) n, (long long) mine);
    MPI_Offset k = 0;
    for (MPI_Offset o = 1000 * t_rank; o < size; o += 1000 * t_size)
        for (MPI_Offset i = o; i < o + 1000 && i < size; i++, k++)
            T_ASSERT(got[k] == t_byte(7, (uint64_t) i), "fresh read: byte %lld", (long long) i);
    MPI_Type_free(&v);
    MPI_Type_free(&ft);
    T_MPI(MPI_File_close(&fh));
    free(buf);
    free(got);
}

static int cb_disabled(MPI_File fh, const char *key)
{
    MPI_Info got;
    char v[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    T_MPI(MPI_File_get_info(fh, &got));
    MPI_Info_get(got, key, MPI_MAX_INFO_VAL, v, &flag);
    MPI_Info_free(&got);
    return flag && !strcmp(v, "disable");
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    info = tm_hints();
    if (argc == 4 && !strcmp(argv[1], "-f")) {
        fname = argv[3];
        fresh_read(atoll(argv[2]));
        MPI_Info_free(&info);
        return t_finish();
    }
    T_ASSERT(argc == 2, "usage: t_coll [-f SIZE] FILE");
    fname = argv[1];
    on_ddio = !strncmp(fname, "ddio:", 5);
    char *name2 = t_name(fname, ".2");
    MPI_File f1, f2;
    t_model m1, m2;
    tm_init(&m1, CAP);
    tm_init(&m2, CAP);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, fname, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &f1));
    T_MPI(MPI_File_open(MPI_COMM_WORLD, name2, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &f2));
    indep_w = cb_disabled(f1, "romio_cb_write");
    indep_r = cb_disabled(f1, "romio_cb_read");
    if (!on_ddio) {             /* see tm_prefill; RE's region has no holes */
        tm_prefill(f1, 0, RE);
        tm_prefill(f2, 0, (MPI_Offset) 6000 * t_size);
    }
    test_vector(f1, &m1);
    test_darray(f1, &m1);
    test_explicit(f1, &m1);
    test_two_files(f1, &m1, f2, &m2);
    test_split_nonblocking(f1, &m1);
    test_eof(f1, &m1);
    T_MPI(MPI_File_close(&f1));
    T_MPI(MPI_File_close(&f2));
    if (on_ddio && !indep_w)
        test_overlap();
    free(name2);
    free(m1.b);
    free(m2.b);
    MPI_Info_free(&info);
    return t_finish();
}
