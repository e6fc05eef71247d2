/* Property test: random nested datatypes as file views and memory types.
 *
 * Each case draws (from -s SEED and the case number, the same on every rank)
 * a file type nested up to three deep from vector, hvector, indexed,
 * hindexed, indexed_block, struct, subarray, darray and contiguous, with a
 * resized on top (monotone with lb 0, as MPI requires of a view one writes;
 * nested resized types are t_typedesc's: ROMIO's own flattening loses data
 * there, ufs: too), an etype (MPI_BYTE, the leaf, or an etype larger than
 * the pieces: a contiguous of 2-4 leaves, the file type then built of such
 * etypes while the memory types keep to single leaves), a memory type for the
 * writes (negative displacements, decreasing fields, negative strides, a
 * moved (negative) lb on top, or zero extent with count > 1, i.e. the same
 * bytes sent again) and one for the reads (no overlap). The ranks interleave their
 * tiles (filetype resized to P extents, disp rank * extent) unless the top
 * constructor is a darray. Then, on the same file:
 *   write_all of the first part, write (individual pointer) of the rest,
 *   read_at of the first part, read_at_all of the rest (a third of the
 *   cases call the large-count forms, write_all_c and read_at_all_c; the
 *   counts are chosen so every call moves whole etypes): the stream read
 *   back must equal the stream written (MPI_Pack of both buffers);
 *   seek to a random etype, get_position, get_byte_offset, seek to the end.
 * Every position and byte offset the MPI calls returned, and a hash of the
 * stream read back, go to FILE.2, so the harness's byte comparison with the
 * same run on ufs: checks ROMIO's answers and the reads as well as the data
 * (FILE itself). ROMIO's flattening departs from MPI's type map for some
 * memory types with a non-zero lb in a part (docs/DESIGN.md 9.5); ddio
 * places memory by the type map, so where ROMIO places the memory of such
 * a case (ufs:, ROMIO's two-phase) the program packs the stream itself
 * (mem_by); with romio_ddio_type_desc=disable ddio follows the flattening
 * too, and for those cases the ufs: comparison (of the file, and of the
 * whole read buffer's hash) is the only check. Each case is first zeroed
 * over what it touches (ROMIO's data sieving and two-phase read past end
 * of file write/return buffer garbage on ufs:).
 * After the random cases, one fixed case (draw_overlap): a read memory type
 * whose ROMIO flattening places pieces on the same bytes (placed by the
 * type map; with the flattening, the later piece in stream order must
 * stay, as on ufs:, whichever server answers first).
 * On ddio: no case may grow get_info's ddio_flat_types (every type drawn
 * takes the constructor path); the count is printed at the end.
 * The seed is printed; rerun one case with -s SEED -c CASE (-v: the types,
 * byte counts, hashes; with T_PROP_DUMP=1 also where the read bytes landed
 * in rank 0's buffer, with T_PROP_DIAG=1 whether the file holds the written
 * stream).
 * T_PROP_REFUSED=1: a view the library refuses skips its case (view_refused).
 * T_PROP_NO_DARRAY=1, T_PROP_NO_SUBARRAY=1: no darray / subarray in the
 * file types (ROMIO 3.2.1's expansions of them, which the driver uses to
 * place a view where ROMIO does, misplace some nested ones: ufs: fails the
 * same cases), said once.
 * Without MPI 4 (Open MPI 4.1 is MPI 3.1) the large-count cases are still
 * drawn (the same cases for a seed) but call the int forms; rank 0 says so.
 * usage: t_prop [-n NCASES] [-s SEED] [-c CASE] [-v] FILE */
#include "tmodel.h"
#include <stdarg.h>
#include <unistd.h>

#if MPI_VERSION >= 4
#define LARGE_COUNT 1
#define WRITE_ALL_C MPI_File_write_all_c
#define READ_AT_ALL_C MPI_File_read_at_all_c
#else
#define LARGE_COUNT 0           /* no _c bindings: c->large calls the int forms */
#define WRITE_ALL_C(f, b, n, t, s) MPI_File_write_all(f, b, (int) (n), t, s)
#define READ_AT_ALL_C(f, o, b, n, t, s) MPI_File_read_at_all(f, o, b, (int) (n), t, s)
#endif

#define NREC 9                  /* positions (and a hash of the bytes read) per case */
#define MAX_FTSIZE (24 << 10)   /* data bytes of one file tile */
#define MAX_EXTENT (1 << 20)

static uint64_t rs;
static int verbose, n_romio_map;

/* Who places the memory of romio_map cases in this run (same on the ufs:
 * and the ddio: run of a step: both see the step's hints). ROMIO's
 * flattening does on ufs: and for ROMIO's two-phase
 * (romio_ddio_collective=twophase): there the program packs the stream
 * itself (MPI_Pack / MPI_Unpack around contiguous buffers), so the file
 * and the reads hold MPI's type map. ddio places memory by the type map,
 * except with romio_ddio_type_desc=disable (trees from ROMIO's flattened
 * lists): there both runs use the types, and the ufs: comparison (file,
 * whole read buffer) is the only check of those cases. */
static int pack_mem, romio_mem;

static void mem_by(const char *fname)
{
    const char *h = getenv("DDIO_TEST_HINTS");
    romio_mem = h && strstr(h, "romio_ddio_type_desc=disable");
    pack_mem = !romio_mem && (!strncmp(fname, "ufs:", 4) ||
                              (h && strstr(h, "romio_ddio_collective=twophase")));
}

static unsigned rnd(unsigned n)
{
    return n ? (unsigned) (t_xorshift(&rs) % n) : 0;
}

static MPI_Aint ext_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

static MPI_Count size_of(MPI_Datatype t)
{
    MPI_Count s;
    MPI_Type_size_x(t, &s);
    return s;
}

static void tfree(MPI_Datatype * t)
{
    int ni, na, nt, comb;
    MPI_Type_get_envelope(*t, &ni, &na, &nt, &comb);
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(t);
}

/* a type description for the failure messages */
static char desc[2][2048];
static void say(int which, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int which, const char *fmt, ...)
{
    size_t n = strlen(desc[which]);
    va_list ap;
    va_start(ap, fmt);
    if (n < sizeof(desc[which]) - 1)
        vsnprintf(desc[which] + n, sizeof(desc[which]) - n, fmt, ap);
    va_end(ap);
}

/* ---- file types: monotone, lb 0, data in [0, extent) ---------------------------- */

static MPI_Datatype leaf;       /* this case's element type (memory types) */
static MPI_Datatype fleaf;      /* the file types': the leaf, or the big etype */
static int top_darray;          /* the view is a darray: no interleaving */

/* n increasing displacements, in units, with gaps: disp[i+1] >= disp[i] + bl[i]
 * (no zero-length blocks: t_desc0 has those, on ddio: only, as ROMIO's ufs:
 * mishandles some) */
static void increasing(int n, int *bl, MPI_Aint *d, int maxbl)
{
    MPI_Aint at = 0;            /* lb 0 */
    for (int i = 0; i < n; i++) {
        bl[i] = 1 + (int) rnd((unsigned) maxbl);
        d[i] = at;
        at += bl[i] + rnd(4);
    }
}

static MPI_Datatype gen_file(int depth, int top);

/* lb 0 at every level: ROMIO's two-phase misplaces some views whose types
 * have a positive lb (ADIOI_Calc_aggregator aborts on ufs:), so the
 * generator keeps to views ufs: handles */
static MPI_Datatype lb0(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Datatype r;
    MPI_Type_get_extent(t, &lb, &ext);
    if (lb == 0)
        return t;
    MPI_Type_create_resized(t, 0, lb + ext, &r);
    tfree(&t);
    return r;
}

static MPI_Datatype file_child(int depth)
{
    return depth > 0 ? gen_file(depth - 1, 0) : fleaf;
}

static MPI_Datatype gen_file(int depth, int top)
{
    MPI_Datatype c, t;
    int n = 1 + (int) rnd(4), bl[4], id[4];
    MPI_Aint d[4], e;
    unsigned k = depth == 0 ? 0 : 1 + rnd(top ? 9 : 8);

    if (k == 0) {
        say(0, "contig(%d)", n);
        MPI_Type_contiguous(n, fleaf, &t);
        return t;
    }
    if ((k == 8 && getenv("T_PROP_NO_DARRAY")) || (k == 7 && getenv("T_PROP_NO_SUBARRAY"))) {
        say(0, "contig(%d)[no %s]", n, k == 8 ? "darray" : "subarray");    /* said in main */
        MPI_Type_contiguous(n, fleaf, &t);
        return t;
    }
    if (k == 8) {               /* darray over all ranks, of the leaf */
        int nd = 1 + (int) rnd(2), g[2], dist[2], darg[2], ps[2] = { 0, 0 };
        MPI_Dims_create(t_size, nd, ps);
        for (int i = 0; i < nd; i++) {
            unsigned w = rnd(3);
            dist[i] = w == 0 ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
            darg[i] = w == 2 ? 1 + (int) rnd(3) : MPI_DISTRIBUTE_DFLT_DARG;
            /* every rank gets data (ROMIO's flattening of an empty darray
             * nested in a struct breaks the view's order) */
            g[i] = w == 0 ? ps[i] * (1 + (int) rnd(3)) : ps[i] * (w == 2 ? darg[i] : 1)
                + (int) rnd(7);
        }
        int corder = rnd(2);
        say(0, "darray(%dd %s)", nd, corder ? "C" : "F");
        T_MPI(MPI_Type_create_darray(t_size, t_rank, nd, g, dist, darg, ps,
                                     corder ? MPI_ORDER_C : MPI_ORDER_FORTRAN, fleaf, &t));
        top_darray = top;
        return t;
    }
    say(0, "%s", (const char *[]) {
        "", "vector(", "hvector(", "indexed(", "hindexed(", "indexed_block(", "struct(",
        "subarray(", "", "resized("}[k]);
    if (k == 6) {               /* struct of n different children at increasing offsets */
        MPI_Datatype ty[4];
        MPI_Aint at = 0;
        for (int i = 0; i < n; i++) {
            ty[i] = file_child(depth);
            bl[i] = 1 + (int) rnd(2);
            d[i] = at;
            at += bl[i] * ext_of(ty[i]) + rnd(3) * 8;
            say(0, i + 1 < n ? "," : "");
        }
        MPI_Type_create_struct(n, bl, d, ty, &t);
        for (int i = 0; i < n; i++)
            tfree(&ty[i]);
        say(0, ")");
        return t;
    }
    c = file_child(depth);
    e = ext_of(c);
    switch (k) {
    case 1:
        bl[0] = 1 + (int) rnd(3);
        MPI_Type_vector(n + 1, bl[0], bl[0] + (int) rnd(4), c, &t);
        break;
    case 2:
        bl[0] = 1 + (int) rnd(3);
        MPI_Type_create_hvector(n + 1, bl[0], bl[0] * e + rnd(3) * 4, c, &t);
        break;
    case 3:
        increasing(n, bl, d, 3);
        for (int i = 0; i < n; i++)
            id[i] = (int) d[i];
        MPI_Type_indexed(n, bl, id, c, &t);
        break;
    case 4:
        increasing(n, bl, d, 3);
        for (MPI_Aint i = 0, pad = 0; i < n; i++) {      /* byte gaps keep the order */
            pad += i > 0 ? (MPI_Aint) rnd(2) * 4 : 0;
            d[i] = d[i] * e + pad;
        }
        MPI_Type_create_hindexed(n, bl, d, c, &t);
        break;
    case 5:
        increasing(n, bl, d, 1);
        bl[0] = 1 + (int) rnd(2);
        for (int i = 0; i < n; i++)
            id[i] = (int) d[i] * bl[0];
        MPI_Type_create_indexed_block(n, bl[0], id, c, &t);
        break;
    case 7: {
        int nd = 1 + (int) rnd(3), sz[3], sub[3], st[3];
        for (int i = 0; i < nd; i++) {
            sz[i] = 1 + (int) rnd(6);
            sub[i] = 1 + (int) rnd((unsigned) sz[i]);
            st[i] = (int) rnd((unsigned) (sz[i] - sub[i] + 1));
        }
        T_MPI(MPI_Type_create_subarray(nd, sz, sub, st, rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN,
                                       c, &t));
        break;
    }
    default:
        MPI_Type_create_resized(c, 0, e + (MPI_Aint) rnd(5) * 8, &t);
        break;
    }
    tfree(&c);
    say(0, ")");
    return t;
}

/* ---- memory types: anything MPI allows (writes), no overlap (reads) ------------- */

static int mem_lb;              /* a memory type drawn has a part with lb != 0 */

static MPI_Datatype gen_mem(int depth)
{
    MPI_Datatype c, t;
    int n = 1 + (int) rnd(3), bl[3];
    MPI_Aint d[3], e;
    unsigned k = depth == 0 ? 0 : 1 + rnd(4);

    if (k == 4)                 /* (4 is lb_down's, on top only) */
        k = 5;
    if (k == 0) {
        n = 1 + (int) rnd(3);
        say(1, "contig(%d)", n);
        MPI_Type_contiguous(n, leaf, &t);
        return t;
    }
    c = gen_mem(depth - 1);
    e = ext_of(c);
    switch (k) {
    case 1:                     /* negative stride */
        say(1, "[hvector -stride]");
        MPI_Type_create_hvector(n + 1, 1, -(e + (MPI_Aint) rnd(3) * 4), c, &t);
        break;
    case 2:                     /* decreasing displacements, some negative */
        for (int i = 0; i < n; i++) {
            bl[i] = 1;
            d[i] = (MPI_Aint) (n - 1 - i) * (e + 8) - 64;
        }
        say(1, "[hindexed decreasing, negative]");
        MPI_Type_create_hindexed(n, bl, d, c, &t);
        break;
    case 3: {                   /* struct: fields out of address order */
        MPI_Datatype ty[2] = { c, leaf };
        MPI_Aint le = ext_of(leaf), tlb, text;
        MPI_Type_get_true_extent(c, &tlb, &text);
        bl[0] = 1;
        bl[1] = 2;
        d[0] = 2 * le + 8 - tlb;        /* c's data after the leaves' */
        d[1] = 0;
        say(1, "[struct reversed]");
        MPI_Type_create_struct(2, bl, d, ty, &t);
        break;
    }
    default:
        say(1, "[vector]");
        MPI_Type_vector(n + 1, 1, 2, c, &t);
        break;
    }
    say(1, "(");
    tfree(&c);
    say(1, ")");
    MPI_Type_get_extent(t, &d[0], &e);
    mem_lb |= d[0] != 0;
    return t;
}

/* the lower bound moved down (negative), the data inside: only on the
 * outermost memory type, as ROMIO's flattening (hence ufs:) departs from
 * the MPI type map for a resized type with a non-zero lb nested in another
 * (docs/DESIGN.md 9.5) */
static MPI_Datatype lb_down(MPI_Datatype c)
{
    MPI_Aint lb, ext, down = 8 + (MPI_Aint) rnd(3) * 8;
    MPI_Datatype t;
    MPI_Type_get_extent(c, &lb, &ext);
    say(1, " resized(lb %ld)", (long) (lb - down));
    MPI_Type_create_resized(c, lb - down, ext + down + (MPI_Aint) rnd(3) * 8, &t);
    tfree(&c);
    return t;
}

/* resized(t, 0, extent) on top: ROMIO 4.0.2's flattening emits lb/ub
 * markers for the first resized it meets, and (h)indexed replication of a
 * child holding them loses the child's data (ufs: too; t_typedesc), so the
 * first one met is this one; t's data may still lie below 0 */
static MPI_Datatype lb_top(MPI_Datatype c)
{
    MPI_Datatype t;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(c, &lb, &ext);
    if (lb != 0)                /* (moving it would be lb_down's case) */
        return c;
    MPI_Type_create_resized(c, 0, ext, &t);
    tfree(&c);
    return t;
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static unsigned char *pack(const void *b, int count, MPI_Datatype t, MPI_Count bytes)
{
    unsigned char *p = malloc((size_t) bytes + 1);
    int pos = 0;
    T_ASSERT(p, "out of memory");
    MPI_Pack(b, count, t, p, (int) bytes, &pos, MPI_COMM_SELF);
    T_ASSERT(pos == bytes, "pack: %d of %lld bytes", pos, (long long) bytes);
    return p;
}

/* ---- one case ------------------------------------------------------------------- */

static MPI_Count gcd(MPI_Count a, MPI_Count b)
{
    while (b) {
        MPI_Count t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static MPI_Count round_up(MPI_Count v, MPI_Count m)
{
    return (v + m - 1) / m * m;
}

/* get_info's ddio_flat_types: datatypes described from ROMIO's flattened
 * list (absent, 0, on ufs:) */
static long flat_types(MPI_File fh)
{
    MPI_Info got;
    char v[64];
    int flag;
    T_MPI(MPI_File_get_info(fh, &got));
    MPI_Info_get(got, "ddio_flat_types", sizeof(v) - 1, v, &flag);
    MPI_Info_free(&got);
    return flag ? atol(v) : 0;
}

typedef struct pcase {
    MPI_Datatype ft, view, etype, mw, mr;
    int wcount, rcount;         /* of mw / mr */
    int w1, r1;                 /* the first part's counts (whole etypes) */
    int big;                    /* etype: a contiguous of `big` leaves (else 0) */
    int large;                  /* the collective calls are the _c forms */
    int romio_map;              /* a memory type with a non-zero lb in some part:
                                 * ROMIO's flattening departs from MPI's type map
                                 * for such types (docs/DESIGN.md 9.5), so where it
                                 * places the memory (mem_by below) the stream goes
                                 * packed, or, where ddio follows the flattening
                                 * too, is compared with ufs: only */
    MPI_Offset disp;
} pcase;

static const MPI_Datatype leaves[4] = { MPI_CHAR, MPI_SHORT, MPI_INT, MPI_DOUBLE };

static int draw(pcase * c, int k, uint64_t seed)
{
    rs = seed * 0x9E3779B97F4A7C15ull + (uint64_t) k * 7919 + 1;
    desc[0][0] = desc[1][0] = 0;
    top_darray = 0;
    leaf = fleaf = leaves[rnd(4)];
    unsigned ek = rnd(3);       /* etype: MPI_BYTE, the leaf, or bigger */
    c->big = ek == 2 ? 2 + (int) rnd(3) : 0;
    if (c->big) {
        MPI_Type_contiguous(c->big, leaf, &fleaf);
        MPI_Type_commit(&fleaf);
    }
    c->large = rnd(3) == 0;
    c->ft = lb0(gen_file(1 + (int) rnd(3), 1));
    MPI_Type_commit(&c->ft);
    MPI_Count fsz = size_of(c->ft), lsz = size_of(leaf);
    MPI_Aint ext = ext_of(c->ft);
    int ok = fsz > 0 && fsz <= MAX_FTSIZE && ext <= MAX_EXTENT;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!ok) {                  /* too big (or a darray leaving a rank nothing) */
        MPI_Type_free(&c->ft);
        tfree(&fleaf);
        return 0;
    }
    c->etype = ek == 2 ? fleaf : ek == 1 ? leaf : MPI_BYTE;
    if (top_darray) {
        c->view = c->ft;
        c->disp = 0;
    } else {
        MPI_Type_create_resized(c->ft, 0, ext * t_size, &c->view);
        MPI_Type_commit(&c->view);
        c->disp = (MPI_Offset) t_rank * ext;
    }
    /* memory: 1 to 3 tiles of data, a multiple of the leaf */
    MPI_Offset want = (MPI_Offset) (fsz * (1 + rnd(3))) - (MPI_Offset) rnd(3) * lsz;
    c->romio_map = mem_lb = 0;
    if (rnd(5) == 0) {          /* zero extent: count copies of the same bytes */
        MPI_Datatype one;
        int m = 1 + (int) rnd(4);
        MPI_Type_contiguous(m, leaf, &one);
        MPI_Type_create_resized(one, 0, 0, &c->mw);
        MPI_Type_free(&one);
        snprintf(desc[1], sizeof(desc[1]), "resized(contig(%d), 0, 0) [zero extent]", m);
    } else {
        c->mw = gen_mem((int) rnd(3));
        if (rnd(4) == 0) {
            c->mw = lb_down(c->mw);
            c->romio_map = 1;
        } else
            c->mw = lb_top(c->mw);
    }
    MPI_Type_commit(&c->mw);
    /* whole etypes in every call (MPI: else erroneous, and ROMIO refuses) */
    MPI_Count es = size_of(c->etype), uw = es / gcd(size_of(c->mw), es);
    want -= want % es;
    if (want <= 0)              /* a tile of one leaf, less two leaves */
        want = es;
    c->wcount = (int) round_up((want + size_of(c->mw) - 1) / size_of(c->mw), uw);
    c->w1 = (int) (c->wcount / 2 / uw * uw);
    say(1, " x %d; read as ", c->wcount);
    c->mr = gen_mem((int) rnd(3));
    if (rnd(4) == 0) {
        c->mr = lb_down(c->mr);
        c->romio_map = 1;
    } else
        c->mr = lb_top(c->mr);
    MPI_Type_commit(&c->mr);
    /* a non-zero lb anywhere in the memory types: ROMIO's placement (ufs:, and
     * ddio's, which follows ROMIO's flattening for such types) is the
     * reference, not MPI_Pack: ROMIO 4.0.2 departs from the type map there */
    MPI_Aint lbw, lbr, e0;
    MPI_Type_get_extent(c->mw, &lbw, &e0);
    MPI_Type_get_extent(c->mr, &lbr, &e0);
    c->romio_map |= lbw != 0 || lbr != 0 || mem_lb;
    MPI_Count ur = es / gcd(size_of(c->mr), es);
    c->rcount = (int) round_up((c->wcount * size_of(c->mw) + size_of(c->mr) - 1) /
                               size_of(c->mr), ur);
    c->r1 = (int) (c->rcount / 2 / ur * ur);
    if (c->big)
        say(0, " etype contig(%d)", c->big);
    if (c->large)
        say(0, " [_c calls]");
    return 1;
}

/* The last case, fixed: a read memory type ROMIO's flattening lays out
 * with overlapping pieces, where its type map has none: struct {
 * hindexed(1, {1}, {-64}, contig(3, int)) at 80, two ints at 0 }, extent
 * 28. ROMIO takes the contiguous field at its displacement (80, not 16),
 * so element k's field lands on element k+3's ints. ddio places it by the
 * type map; with romio_ddio_type_desc=disable it follows the flattening,
 * and then, as ufs: does, places the stream in order (the later piece
 * stays), whichever server's bytes arrive first (it once placed them as
 * they came: seed 768674 case 1 differed from ufs: in about a third of the
 * runs at P = 3 over 3 servers). 64 KiB per rank in 4 KiB tiles, so many
 * such pairs straddle tiles held by different servers. */
static void draw_overlap(pcase * c)
{
    MPI_Datatype c3, f, ty[2];
    int one = 1, bl[2] = { 1, 2 };
    MPI_Aint m64 = -64, d[2] = { 80, 0 };

    desc[0][0] = desc[1][0] = 0;
    top_darray = c->big = c->large = 0;
    leaf = fleaf = c->etype = MPI_INT;
    MPI_Type_contiguous(1024, MPI_INT, &c->ft);
    MPI_Type_commit(&c->ft);
    MPI_Type_create_resized(c->ft, 0, 4096 * t_size, &c->view);
    MPI_Type_commit(&c->view);
    c->disp = (MPI_Offset) t_rank * 4096;
    MPI_Type_contiguous(1, MPI_INT, &c->mw);
    MPI_Type_commit(&c->mw);
    c->wcount = 16384;
    c->w1 = 8192;
    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_create_hindexed(1, &one, &m64, c3, &f);
    ty[0] = f;
    ty[1] = MPI_INT;
    MPI_Type_create_struct(2, bl, d, ty, &c->mr);
    MPI_Type_commit(&c->mr);
    MPI_Type_free(&c3);
    MPI_Type_free(&f);
    c->rcount = 16384 * 4 / 20 + 1;    /* 20 bytes each: 65540 >= 65536 */
    c->r1 = c->rcount / 2;
    c->romio_map = 1;
    say(0, "contig(1024) int, 4 KiB tiles");
    say(1, "contig(1) int; read as struct(hindexed(-64, contig(3)) at 80, 2 int at 0) "
        "[ROMIO's pieces overlap]");
}

static void release(pcase * c)
{
    if (c->big)
        MPI_Type_free(&c->etype);
    if (c->view != c->ft)
        MPI_Type_free(&c->view);
    MPI_Type_free(&c->ft);
    MPI_Type_free(&c->mw);
    MPI_Type_free(&c->mr);
}

#define CHECK(cond, ...) T_ASSERT(cond, "case %d (seed %llu): %s | memory %s: " __VA_ARGS__)
#define CTX k, (unsigned long long) seed, desc[0], desc[1]

/* write (half collective, half independent), read back (half independent,
 * half collective), compare the streams; positions into rec[] */
/* set_view of the case's view. With T_PROP_REFUSED=1 a view the MPI
 * library refuses on any rank (ROMIO 3.2.1 refuses some that MPICH 4.0's
 * ROMIO takes, on ufs: as well: MPI_ERR_TYPE) skips the case on every rank,
 * said by rank 0, its positions left 0: the harness's comparison with the
 * control then shows whether both refused it. */
static int view_refused(MPI_File fh, const pcase * c, MPI_Offset region, int k)
{
    int err = MPI_File_set_view(fh, region + c->disp, c->etype, c->view, "native",
                                MPI_INFO_NULL), bad = err != MPI_SUCCESS;
    const char *r = getenv("T_PROP_REFUSED");
    if (!r || strcmp(r, "1") != 0) {
        T_MPI(err);
        return 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad && t_rank == 0)
        printf("SKIP case %d: set_view refused by this MPI library (T_PROP_REFUSED=1)\n", k);
    return bad;
}

static void run_case(MPI_File fh, pcase * c, int k, uint64_t seed, MPI_Offset region,
                     MPI_Offset * rec)
{
    MPI_Count es = size_of(c->etype), wsz = size_of(c->mw), rsz = size_of(c->mr);
    MPI_Count wbytes = wsz * c->wcount;
    size_t nw, nr;
    unsigned char *bw, *br, *pw = t_type_alloc(c->mw, c->wcount, 1, &bw, &nw);
    unsigned char *pr = t_type_alloc(c->mr, c->rcount, 1, &br, &nr);
    for (size_t i = 0; i < nw; i++)
        pw[i] = t_byte(seed * 1000 + (uint64_t) k * 17 + (uint64_t) t_rank, i);
    memset(pr, 0xEE, nr);

    /* zeros first over what the case may touch: ROMIO's data sieving
     * writes back whatever its buffer held for the holes past end of file
     * (ufs:), which no other run reproduces, and its two-phase read fills
     * the buffer past end of file where ddio reads short */
    MPI_Count fsz = size_of(c->ft);
    MPI_Count touched = wbytes > rsz * c->rcount ? wbytes : rsz * c->rcount;   /* reads too:
                                                 * no end of file inside the case's reads */
    MPI_Offset reach = region + c->disp + (touched + fsz - 1) / fsz * ext_of(c->view) + 1;
    MPI_Allreduce(MPI_IN_PLACE, &reach, 1, MPI_OFFSET, MPI_MAX, MPI_COMM_WORLD);
    tm_prefill(fh, region, reach);
    if (view_refused(fh, c, region, k)) {
        free(pw);
        free(pr);
        return;
    }
    T_MPI(MPI_File_get_position(fh, &rec[0]));
    long flat0 = flat_types(fh);
    int w1 = c->w1, packed = c->romio_map && pack_mem;
    unsigned char *sw = pack(bw, c->wcount, c->mw, wbytes);
    /* packed (mem_by): the same stream from contiguous memory, as bytes */
    MPI_Datatype wt = packed ? MPI_BYTE : c->mw;
    MPI_Count wn = packed ? w1 * wsz : w1, wrest = packed ? wbytes - wn : c->wcount - w1;
    if (c->large)
        T_MPI(WRITE_ALL_C(fh, packed ? sw : bw, wn, wt, MPI_STATUS_IGNORE));
    else
        T_MPI(MPI_File_write_all(fh, packed ? sw : bw, (int) wn, wt, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_get_position(fh, &rec[1]));
    CHECK(rec[1] * es == w1 * wsz, "position %lld after write_all of %lld bytes", CTX,
          (long long) rec[1], (long long) (w1 * wsz));
    /* the rest continues at the individual pointer: a zero-extent type
     * sends the same bytes again, so the buffer origin does not move */
    MPI_Aint wext = ext_of(c->mw);
    T_MPI(MPI_File_write(fh, packed ? sw + wn : bw + wext * w1, (int) wrest, wt,
                         MPI_STATUS_IGNORE));
    T_MPI(MPI_File_get_position(fh, &rec[2]));
    T_MPI(MPI_File_get_byte_offset(fh, rec[2], &rec[3]));

    /* MPI's rule before reading what other ranks wrote (a read past this
     * rank's stream meets their bytes): sync-barrier-sync. Without it the
     * bytes read there depended on timing (seen on ddio: seed 768674 case 1
     * at P = 3, a read buffer's hash differing from run to run) */
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));

    /* read back: the first half independently at an explicit offset, the
     * rest collectively */
    int r1 = c->r1;
    MPI_Aint rext = ext_of(c->mr);
    MPI_Status st1, st2;
    MPI_Count n1, n2, rbytes = rsz * c->rcount;
    unsigned char *rp = packed ? malloc((size_t) rbytes + 1) : NULL;
    MPI_Datatype rt = packed ? MPI_BYTE : c->mr;
    MPI_Count rn = packed ? r1 * rsz : r1, rrest = packed ? rbytes - rn : c->rcount - r1;
    T_ASSERT(!packed || rp, "out of memory");
    T_MPI(MPI_File_read_at(fh, 0, packed ? rp : br, (int) rn, rt, &st1));
    if (c->large)
        T_MPI(READ_AT_ALL_C(fh, (MPI_Offset) (r1 * rsz / es),
                            packed ? rp + rn : br + rext * r1, rrest, rt, &st2));
    else
        T_MPI(MPI_File_read_at_all(fh, (MPI_Offset) (r1 * rsz / es),
                                   packed ? rp + rn : br + rext * r1, (int) rrest, rt, &st2));
    if (packed) {
        int pos = 0;
        MPI_Unpack(rp, (int) rbytes, &pos, br, c->rcount, c->mr, MPI_COMM_SELF);
        free(rp);
    }
    MPI_Get_elements_x(&st1, MPI_BYTE, &n1);     /* MPI 3's MPI_Count form */
    MPI_Get_elements_x(&st2, MPI_BYTE, &n2);
    CHECK(n1 == r1 * rsz && n2 == (c->rcount - r1) * rsz, "read %lld + %lld bytes, asked "
          "%lld + %lld", CTX, (long long) n1, (long long) n2, (long long) (r1 * rsz),
          (long long) ((c->rcount - r1) * rsz));
    long flat1 = flat_types(fh);
    CHECK(flat1 == flat0, "ddio_flat_types went from %ld to %ld: a type fell back to "
          "ROMIO's flattened list", CTX, flat0, flat1);
    if (verbose)
        printf("    rank %d: wrote %lld bytes (%d + %d x %lld), read %lld + %lld (%d + %d x %lld)\n",
               t_rank, (long long) wbytes, w1, c->wcount - w1, (long long) wsz, (long long) n1,
               (long long) n2, r1,
               c->rcount - r1, (long long) rsz);
    if (getenv("T_PROP_DIAG")) {        /* which side differs from MPI's type map */
        unsigned char *raw = malloc((size_t) wbytes + 1);
        MPI_Datatype bv;
        MPI_Type_contiguous((int) es, MPI_BYTE, &bv);
        MPI_Type_commit(&bv);
        T_MPI(MPI_File_read_at(fh, 0, raw, (int) (wbytes / es), bv, MPI_STATUS_IGNORE));
        MPI_Type_free(&bv);
        for (MPI_Count i = 0; i < wbytes; i++)
            if (raw[i] != sw[i]) {
                printf("DIAG rank %d: file stream byte %lld is %u, written stream %u\n", t_rank,
                       (long long) i, raw[i], sw[i]);
                break;
            }
        free(raw);
    }
    unsigned char *sr = pack(br, c->rcount, c->mr, rsz * c->rcount);
    int romio_placed = c->romio_map && romio_mem;
    for (MPI_Count i = 0; i < wbytes && !romio_placed; i++)
        CHECK(sw[i] == sr[i], "stream byte %lld of %lld read back as %u, wrote %u", CTX,
              (long long) i, (long long) wbytes, sr[i], sw[i]);
    /* what was read, for ufs:: the stream, or where ROMIO's placement
     * departs from the type map on both runs, the whole buffer (margins
     * included) */
    rec[8] = (MPI_Offset) (romio_placed ? fnv(pr, nr) : fnv(sr, (size_t) wbytes));
    n_romio_map += c->romio_map;
    if (verbose && getenv("T_PROP_DUMP") && t_rank == 0) {
        printf("    rank 0 buffer (rel. origin), bytes read:");
        for (size_t i = 0; i < nr; i++)
            if (pr[i] != 0xEE && (i == 0 || pr[i - 1] == 0xEE))
                printf(" [%ld", (long) ((unsigned char *) pr + i - br));
            else if (pr[i] == 0xEE && i > 0 && pr[i - 1] != 0xEE)
                printf(",%ld)", (long) ((unsigned char *) pr + i - br));
        printf("\n");
        MPI_Aint tl, te, l, e;
        MPI_Type_get_true_extent(c->mr, &tl, &te);
        MPI_Type_get_extent(c->mr, &l, &e);
        printf("    type: lb %ld extent %ld true lb %ld true extent %ld count %d\n", (long) l,
               (long) e, (long) tl, (long) te, c->rcount);
    }
    if (verbose) {
        MPI_Count same = 0;
        for (MPI_Count i = 0; i < wbytes; i++)
            same += sw[i] == sr[i];
        printf("    rank %d: read hash %016llx%s, %lld of %lld bytes as MPI_Pack says; %u %u %u %u\n",
               t_rank, (unsigned long long) rec[8], romio_placed ? " (ROMIO's placement)" : "",
               (long long) same, (long long) wbytes, sr[0], sr[1], sr[2], sr[3]);
    }
    /* (bytes past the written ones read whatever the other ranks wrote:
     * the harness compares those through the file) */

    /* seeks: a random etype, then the end of file (every rank wrote) */
    MPI_Offset etypes = wbytes / es, to = etypes ? (MPI_Offset) rnd((unsigned) etypes) : 0;
    T_MPI(MPI_File_seek(fh, to, MPI_SEEK_SET));
    T_MPI(MPI_File_get_position(fh, &rec[4]));
    CHECK(rec[4] == to, "position %lld after seeking to %lld", CTX, (long long) rec[4],
          (long long) to);
    T_MPI(MPI_File_get_byte_offset(fh, to, &rec[5]));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
    T_MPI(MPI_File_get_position(fh, &rec[6]));
    if (rec[6] > 0) {
        T_MPI(MPI_File_seek(fh, -1, MPI_SEEK_CUR));
        T_MPI(MPI_File_get_position(fh, &rec[7]));
    }
    free(sw);
    free(sr);
    free(pw);
    free(pr);
}

int main(int argc, char **argv)
{
    int ncases = 40, only = -1, opt;
    uint64_t seed = 1;
    t_init(&argc, &argv);
    while ((opt = getopt(argc, argv, "n:s:c:v")) != -1) {
        if (opt == 'n')
            ncases = atoi(optarg);
        else if (opt == 's')
            seed = strtoull(optarg, NULL, 0);
        else if (opt == 'c')
            only = atoi(optarg);
        else if (opt == 'v')
            verbose = 1;
    }
    T_ASSERT(optind == argc - 1 && seed, "usage: t_prop [-n N] [-s SEED] [-c CASE] [-v] FILE");
    mem_by(argv[optind]);
    if (t_rank == 0)
        printf("t_prop: seed %llu, %d cases, P=%d (rerun: -s %llu [-c CASE])\n",
               (unsigned long long) seed, ncases, t_size, (unsigned long long) seed);
    if (t_rank == 0 && getenv("T_PROP_NO_SUBARRAY"))
        printf("SKIP subarray file types: T_PROP_NO_SUBARRAY (a contiguous is drawn instead)\n");
    if (t_rank == 0 && getenv("T_PROP_NO_DARRAY"))
        printf("SKIP darray file types: T_PROP_NO_DARRAY (a contiguous is drawn instead)\n");
    if (t_rank == 0 && !LARGE_COUNT)
        printf("SKIP large-count calls: MPI %d.%d has no _c bindings (those cases call the "
               "int forms)\n", MPI_VERSION, MPI_SUBVERSION);

    MPI_File fh, fp;
    MPI_Info info = tm_hints();
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[optind], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Offset *rec = calloc((size_t) (ncases + 1) * NREC, sizeof(MPI_Offset)), region = 0;
    T_ASSERT(rec, "out of memory");
    int ran = 0;
    for (int k = 0; k <= ncases; k++) {       /* case ncases: draw_overlap's */
        pcase c;
        if (only >= 0 && k != only)
            continue;
        if (k == ncases)
            draw_overlap(&c);
        else if (!draw(&c, k, seed))
            continue;
        if (verbose && t_rank == 0)
            printf("  case %d: file %s, etype %s | memory %s\n", k, desc[0],
                   c.etype == MPI_BYTE ? "byte" : c.big ? "big" : "leaf", desc[1]);
        run_case(fh, &c, k, seed, region, rec + (size_t) k * NREC);
        /* the next case starts past everything this one wrote */
        MPI_Offset end;
        T_MPI(MPI_File_get_size(fh, &end));
        region = (end + 4095) / 4096 * 4096;
        release(&c);
        ran++;
    }
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    long flat = flat_types(fh);
    T_MPI(MPI_File_close(&fh));
    /* the positions MPI returned, for the harness to compare with ufs: */
    char *pname = t_name(argv[optind], ".2");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, pname, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fp));
    T_MPI(MPI_File_write_at_all(fp, (MPI_Offset) t_rank * (ncases + 1) * NREC * 8, rec,
                                (ncases + 1) * NREC * 8, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_close(&fp));
    MPI_Info_free(&info);
    if (t_rank == 0)
        printf("t_prop: %d of %d cases ran (%d with a memory lb != 0: %s); "
               "rank 0 described %ld datatypes from ROMIO's flattened list\n", ran, ncases + 1,
               n_romio_map, romio_mem ? "ROMIO's placement, compared with ufs: only" :
               pack_mem ? "packed by the program" : "placed by the type map", flat);
    free(rec);
    free(pname);
    return t_finish();
}
