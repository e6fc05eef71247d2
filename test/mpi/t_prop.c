/* Property test: random nested datatypes as file views and memory types,
 * every byte checked against an independent model.
 *
 * Each case draws (from -s SEED and the case number, the same on every rank)
 * a file type nested up to three deep from vector, hvector, indexed,
 * hindexed, indexed_block, struct, subarray, darray and contiguous, with a
 * resized on top (monotone with lb 0, as MPI requires of a view one writes;
 * nested resized types with lb 0), an etype (MPI_BYTE, the leaf, or an
 * etype larger than the pieces: a contiguous of 2-4 leaves, the file type
 * then built of such etypes while the memory types keep to single leaves),
 * a memory type for the writes (negative displacements, decreasing fields,
 * negative strides, a moved (negative) lb on top, or zero extent with
 * count > 1, i.e. the same bytes sent again) and one for the reads (no
 * overlap). With -z the draws take in the rest of what MPI allows:
 * zero-length blocks and zero counts everywhere (indexed, hindexed, the
 * block forms, struct fields, vectors, contiguous), parts of size 0,
 * nested resized types with a moved (also negative) lower bound, darrays
 * that leave a rank nothing inside another type; a file type drawn that
 * is not a legal view (the model says: a negative displacement,
 * decreasing or overlapping elements, data past its extent) is drawn
 * again. The ranks interleave their tiles (filetype resized to P extents,
 * disp rank * extent) unless the top constructor is a darray. Then, on the
 * same file:
 *   write_all of the first part, write (individual pointer) of the rest,
 *   read_at of the first part, read_at_all of the rest (a third of the
 *   cases call the large-count forms, write_all_c and read_at_all_c; the
 *   counts are chosen so every call moves whole etypes);
 *   seek to a random etype, get_position, get_byte_offset, seek to the end.
 *
 * The reference is the recipe model of tmodel.h: every type is drawn as a
 * recipe, the MPI type is built from it, and the type maps of the view and
 * of both memory types are computed from the recipe by the constructors'
 * definitions (not by MPI's datatype engine, not by ROMIO's flattening).
 * From them each case checks: the stream written (the model's gather of
 * the write buffer, also == MPI_Pack), the whole file image (every rank's
 * stream placed by its view; read back through a byte view: every byte of
 * the case's region) and the file size, the stream read back (the model's
 * gather of the read buffer == the image at the view's bytes) and that
 * the read wrote nothing outside the memory type's bytes, and every
 * position and byte offset the MPI calls return. The positions and a hash
 * of the stream read back also go to FILE.2, so the harness can compare
 * the run with the same one on ufs: (FILE itself too).
 *
 * ROMIO's flattening departs from MPI's type map for some memory types
 * with a non-zero lb in a part (docs/DESIGN.md 9.5); ddio places memory by
 * the type map, so where ROMIO places the memory of such a case (ufs:,
 * ROMIO's two-phase) the program packs the stream itself (mem_by); with
 * romio_ddio_type_desc=disable ddio follows the flattening too, and for
 * those cases the ufs: comparison (of the file, and of the whole read
 * buffer's hash) is the only check. ROMIO misplaces views with zero-length
 * blocks on ufs: (-z, and the fixed cases), so those runs check ddio
 * against the model alone. Each case is first zeroed over what it touches
 * (ROMIO's data sieving and two-phase read past end of file write/return
 * buffer garbage on ufs:).
 * After the random cases, one fixed case (draw_overlap): a read memory type
 * whose ROMIO flattening places pieces on the same bytes (placed by the
 * type map; with the flattening, the later piece in stream order must
 * stay, as on ufs:, whichever server answers first).
 * -f: the fixed recipes (fixed[] below: views ROMIO 4.0.2 misplaces,
 * refuses or aborts on, one of each kind found), then a view that is not
 * monotone on one rank only: set_view must fail on every rank, and the
 * file take the next view (ddio: only).
 * -r RECIPE: one case from a recipe (tmodel.h's grammar) with its options
 *   etype=TYPE disp=N wmem=TYPE rmem=TYPE bytes=N
 * (defaults: the etype MPI_BYTE, contiguous memory of the etype, 2.5
 * tiles), e.g. -r 'indexed(2,[1@0 0@2],INT) etype=INT'.
 * On ddio: no case may grow get_info's ddio_flat_types (every type drawn
 * takes the constructor path); the count is printed at the end.
 * The seed is printed; rerun one case with -s SEED -c CASE (-z as before;
 * -k FIRST: the cases from FIRST on, e.g. after a failing one;
 * -v: the recipes, byte counts, hashes; with T_PROP_DUMP=1 also where the
 * read bytes landed in rank 0's buffer). A failure names the case's recipes
 * (-r reruns the file side).
 * T_PROP_TRACE=1: rank 0 names each case before it runs (what a crash was in).
 * T_PROP_NO_EOF=1: the position at the end of file is not checked (ROMIO's
 * and ddio's: the view's bytes below the end, in etypes rounded up; OMPIO
 * answers otherwise).
 * T_PROP_REFUSED=1: a view the library refuses skips its case (view_refused).
 * T_PROP_NO_DARRAY=1, T_PROP_NO_SUBARRAY=1: no darray / subarray in the
 * file types (a contiguous is drawn instead), said once.
 * Without MPI 4 (Open MPI 4.1 is MPI 3.1) the large-count cases are still
 * drawn (the same cases for a seed) but call the int forms; rank 0 says so.
 * usage: t_prop [-n NCASES] [-s SEED] [-c CASE | -k FIRST] [-z] [-f] [-r RECIPE] [-v] FILE */
#include <stdarg.h>
#include "tmodel.h"
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
#define MAX_DRAWS 40            /* -z: file types drawn per case until one is a view */

static uint64_t rs;
static int verbose, n_romio_map, zl, n_pack_differs;

/* Who places the memory of romio_map cases in this run (same on the ufs:
 * and the ddio: run of a step: both see the step's hints). ROMIO's
 * flattening does on ufs: and for ROMIO's two-phase
 * (romio_ddio_collective=twophase): there the program packs the stream
 * itself (MPI_Pack / MPI_Unpack around contiguous buffers), so the file
 * and the reads hold MPI's type map. ddio places memory by the type map,
 * except with romio_ddio_type_desc=disable (trees from ROMIO's flattened
 * lists): there both runs use the types, and the ufs: comparison (file,
 * whole read buffer) is the only check of those cases. */
static int pack_mem, romio_mem, on_ddio;

static void mem_by(const char *fname)
{
    const char *h = getenv("DDIO_TEST_HINTS");
    romio_mem = h && strstr(h, "romio_ddio_type_desc=disable");
    pack_mem = !romio_mem && (!strncmp(fname, "ufs:", 4) ||
                              (h && strstr(h, "romio_ddio_collective=twophase")));
    on_ddio = !strncmp(fname, "ddio:", 5);
}

static unsigned rnd(unsigned n)
{
    return n ? (unsigned) (t_xorshift(&rs) % n) : 0;
}

/* -z: zero (a count, a block length) one time in `in` */
static int zero_or(int v, unsigned in)
{
    return zl && rnd(in) == 0 ? 0 : v;
}

static MPI_Aint ext_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

static void tfree(MPI_Datatype * t)
{
    int ni, na, nt, comb;
    MPI_Type_get_envelope(*t, &ni, &na, &nt, &comb);
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(t);
}

/* lb, extent, true lb of a recipe's type (MPI's: what the draws build on) */
static void r_bounds(const tr_node * r, MPI_Aint * lb, MPI_Aint * ext, MPI_Aint * tlb)
{
    tr_map m;
    MPI_Aint text;
    int adopted = tr_adopted;
    MPI_Datatype t = tr_make1(r, t_rank, t_size, &m);
    MPI_Type_get_extent(t, lb, ext);
    MPI_Type_get_true_extent(t, tlb, &text);
    tr_map_free(&m);
    tfree(&t);
    tr_adopted = adopted;
}

static MPI_Count r_size(const tr_node * r)
{
    tr_map m;
    int64_t n = 0;
    int adopted = tr_adopted;
    MPI_Datatype t = tr_make1(r, t_rank, t_size, &m);
    for (size_t i = 0; i < m.n; i++)
        n += m.l[i];
    tr_map_free(&m);
    tfree(&t);
    tr_adopted = adopted;
    return n;
}

static MPI_Aint r_ext(const tr_node * r)
{
    MPI_Aint lb, ext, tlb;
    r_bounds(r, &lb, &ext, &tlb);
    return ext;
}

/* ---- file types: monotone, lb 0, data in [0, extent) ---------------------------- */

static int leaf;                /* this case's element type (memory types): tr_name_s */
static int big;                 /* the file types' element: the leaf, or contig(big, leaf) */
static int top_darray;          /* the view is a darray: no interleaving */

static tr_node *fleaf(void)
{
    return big ? tr_contig(big, tr_named(leaf)) : tr_named(leaf);
}

/* n increasing displacements, in units, with gaps: disp[i+1] >= disp[i] + bl[i]
 * (-z: some blocks of length 0) */
static void increasing(int n, int *bl, MPI_Aint *d, int maxbl)
{
    MPI_Aint at = 0;            /* lb 0 */
    for (int i = 0; i < n; i++) {
        bl[i] = zero_or(1 + (int) rnd((unsigned) maxbl), 3);
        d[i] = at;
        at += bl[i] + rnd(4);
    }
}

static tr_node *gen_file(int depth, int top);

/* lb 0 at every level: ROMIO's two-phase misplaces some views whose types
 * have a positive lb (ADIOI_Calc_aggregator aborts on ufs:), so the
 * generator keeps to views ufs: handles */
static tr_node *lb0(tr_node * t)
{
    MPI_Aint lb, ext, tlb;
    r_bounds(t, &lb, &ext, &tlb);
    return lb == 0 ? t : tr_resized(0, lb + ext, t);
}

static tr_node *file_child(int depth)
{
    return depth > 0 ? gen_file(depth - 1, 0) : fleaf();
}

static tr_node *gen_file(int depth, int top)
{
    tr_node *c, *t;
    int n = 1 + (int) rnd(4), bl[4];
    MPI_Aint d[4], e;
    unsigned k = depth == 0 ? 0 : 1 + rnd(top ? 9 : 8);

    if (k == 0 || (k == 8 && getenv("T_PROP_NO_DARRAY")) ||
        (k == 7 && getenv("T_PROP_NO_SUBARRAY")))      /* (said in main) */
        return tr_contig(zero_or(n, 6), fleaf());
    if (k == 8) {               /* darray over all ranks, of the file's element */
        int nd = 1 + (int) rnd(2), g[2], dist[2], darg[2], ps[2] = { 0, 0 };
        MPI_Dims_create(t_size, nd, ps);
        for (int i = 0; i < nd; i++) {
            unsigned w = rnd(3);
            dist[i] = w == 0 ? TR_BLOCK : TR_CYCLIC;
            darg[i] = w == 2 ? 1 + (int) rnd(3) : TR_DFLT;
            /* every rank gets data (ROMIO's flattening of an empty darray
             * nested in a struct breaks the view's order); -z: not at the
             * top of a view of a nested one (a rank may get nothing) */
            g[i] = w == 0 ? ps[i] * (1 + (int) rnd(3)) : ps[i] * (w == 2 ? darg[i] : 1)
                + (int) rnd(7);
            if (zl && !top && rnd(3) == 0)
                g[i] = 1 + (int) rnd((unsigned) g[i]);
        }
        top_darray = top;
        return tr_darray((int) rnd(2), nd, g, dist, darg, ps, fleaf());
    }
    if (k == 6) {               /* struct of n different children at increasing offsets */
        tr_node *ty[4];
        MPI_Aint at = 0;
        for (int i = 0; i < n; i++) {
            ty[i] = file_child(depth);
            bl[i] = zero_or(1 + (int) rnd(2), 4);
            d[i] = at;
            at += bl[i] * r_ext(ty[i]) + rnd(3) * 8;
        }
        return tr_struct(n, bl, d, ty);
    }
    c = file_child(depth);
    e = r_ext(c);
    switch (k) {
    case 1:
        bl[0] = 1 + (int) rnd(3);
        t = tr_vector(0, zero_or(n + 1, 6), zero_or(bl[0], 6), bl[0] + rnd(4), c);
        break;
    case 2:
        bl[0] = 1 + (int) rnd(3);
        t = tr_vector(1, zero_or(n + 1, 6), zero_or(bl[0], 6), bl[0] * e + rnd(3) * 4, c);
        break;
    case 3:
        increasing(n, bl, d, 3);
        if (zl && r_size(c) == 0) {
            /* (MPICH 4.0.2 aborts committing MPI_Type_indexed of a type of
             * size 0, dataloop_create_indexed.c:253: the same as hindexed) */
            for (int i = 0; i < n; i++)
                d[i] *= e;
            t = tr_indexed(TR_HINDEXED, n, bl, 0, d, c);
        } else
            t = tr_indexed(TR_INDEXED, n, bl, 0, d, c);
        break;
    case 4:
        increasing(n, bl, d, 3);
        for (MPI_Aint i = 0, pad = 0; i < n; i++) {      /* byte gaps keep the order */
            pad += i > 0 ? (MPI_Aint) rnd(2) * 4 : 0;
            d[i] = d[i] * e + pad;
        }
        t = tr_indexed(TR_HINDEXED, n, bl, 0, d, c);
        break;
    case 5:
        increasing(n, bl, d, 1);
        bl[0] = zero_or(1 + (int) rnd(2), 4);
        for (int i = 0; i < n; i++)
            d[i] = d[i] * (bl[0] ? bl[0] : 1);
        t = tr_indexed(TR_IBLOCK, n, NULL, bl[0], d, c);
        break;
    case 7:{
            int nd = 1 + (int) rnd(3), sz[3], sub[3], st[3];
            for (int i = 0; i < nd; i++) {
                sz[i] = 1 + (int) rnd(6);
                sub[i] = 1 + (int) rnd((unsigned) sz[i]);
                st[i] = (int) rnd((unsigned) (sz[i] - sub[i] + 1));
            }
            t = tr_subarray((int) rnd(2), nd, sz, sub, st, c);
            break;
        }
    default:
        /* -z: the lower bound moved too, either way (the copies of the
         * part then shift; the model keeps only legal views) */
        if (zl && rnd(3) == 0) {
            MPI_Aint lb = ((MPI_Aint) rnd(5) - 2) * 8;
            t = tr_resized(lb, e + (MPI_Aint) rnd(5) * 8 + (lb < 0 ? -lb : 0), c);
        } else
            t = tr_resized(0, e + (MPI_Aint) rnd(5) * 8, c);
        break;
    }
    return t;
}

/* ---- memory types: anything MPI allows (writes), no overlap (reads) ------------- */

static int mem_lb;              /* a memory type drawn has a part with lb != 0 */

static tr_node *gen_mem(int depth)
{
    tr_node *c, *t;
    int n = 1 + (int) rnd(3), bl[3];
    MPI_Aint d[3], e, lb, tlb;
    unsigned k = depth == 0 ? 0 : 1 + rnd(4);

    if (k == 4)                 /* (4 is lb_down's, on top only) */
        k = 5;
    if (k == 0) {
        n = 1 + (int) rnd(3);
        return tr_contig(n, tr_named(leaf));
    }
    c = gen_mem(depth - 1);
    e = r_ext(c);
    switch (k) {
    case 1:                     /* negative stride */
#ifdef OPEN_MPI
        /* (not -extent: Open MPI 4.1's engine takes hvector(4, 1, -1, char)
         * for 4 bytes in a row from 0, lb 0, where the type map is 0, -1,
         * -2, -3 with lb -3: MPI_Pack and its io layer both) */
        t = tr_vector(1, n + 1, 1, -(e + 4 + (MPI_Aint) rnd(2) * 4), c);
#else
        t = tr_vector(1, n + 1, 1, -(e + (MPI_Aint) rnd(3) * 4), c);
#endif
        break;
    case 2:                     /* decreasing displacements, some negative */
        for (int i = 0; i < n; i++) {
            bl[i] = zero_or(1, 4);
            d[i] = (MPI_Aint) (n - 1 - i) * (e + 8) - 64;
        }
        t = tr_indexed(TR_HINDEXED, n, bl, 0, d, c);
        break;
    case 3:{                    /* struct: fields out of address order */
            tr_node *ty[3] = { c, tr_named(leaf), NULL };
            MPI_Aint le = tr_named_size(leaf);
            int nf = 2;
            r_bounds(c, &lb, &e, &tlb);
            bl[0] = 1;
            bl[1] = 2;
            d[0] = 2 * le + 8 - tlb;    /* c's data after the leaves' */
            d[1] = 0;
            if (zl && rnd(3) == 0) {    /* -z: a field of block length 0 */
                ty[2] = gen_mem(0);
                bl[2] = 0;
                d[2] = 4096;
                nf = 3;
            }
            t = tr_struct(nf, bl, d, ty);
            break;
        }
    default:
        t = tr_vector(0, n + 1, 1, 2, c);
        break;
    }
    r_bounds(t, &lb, &e, &tlb);
    mem_lb |= lb != 0;
    return t;
}

/* the lower bound moved down (negative), the data inside: only on the
 * outermost memory type, as ROMIO's flattening (hence ufs:) departs from
 * the MPI type map for a resized type with a non-zero lb nested in another
 * (docs/DESIGN.md 9.5) */
static tr_node *lb_down(tr_node * c)
{
    MPI_Aint lb, ext, tlb, down = 8 + (MPI_Aint) rnd(3) * 8;
    r_bounds(c, &lb, &ext, &tlb);
    return tr_resized(lb - down, ext + down + (MPI_Aint) rnd(3) * 8, c);
}

/* resized(t, 0, extent) on top: ROMIO 4.0.2's flattening emits lb/ub
 * markers for the first resized it meets, and (h)indexed replication of a
 * child holding them loses the child's data (ufs: too; t_typedesc), so the
 * first one met is this one; t's data may still lie below 0 */
static tr_node *lb_top(tr_node * c)
{
    MPI_Aint lb, ext, tlb;
    r_bounds(c, &lb, &ext, &tlb);
    if (lb != 0)                /* (moving it would be lb_down's case) */
        return c;
    return tr_resized(0, ext, c);
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

/* get_info's ddio_flat_types: datatypes described from a flattened list
 * (absent, 0, on ufs:) */
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

/* one side of a case: a recipe, its MPI type and its type map's bytes */
typedef struct pside {
    tr_node *r;
    MPI_Datatype t;
    int64_t *pos, size, ext;
} pside;

typedef struct pcase {
    pside f, e, w, rd;          /* file type, etype, write and read memory */
    MPI_Datatype view;          /* f.t, or resized to P extents */
    int64_t vext;               /* the view's extent */
    int wcount, rcount;         /* of w / rd */
    int w1, r1;                 /* the first part's counts (whole etypes) */
    int large;                  /* the collective calls are the _c forms */
    int romio_map;              /* a memory type with a non-zero lb in some part:
                                 * ROMIO's flattening departs from MPI's type map
                                 * for such types (docs/DESIGN.md 9.5), so where it
                                 * places the memory (mem_by below) the stream goes
                                 * packed, or, where ddio follows the flattening
                                 * too, is compared with ufs: only */
    MPI_Offset disp;
    char *text[4];              /* the recipes, for messages */
} pcase;

static const char *const leaves_s[4] = { "CHAR", "SHORT", "INT", "DOUBLE" };

static int leaf_index(const char *s)
{
    for (int i = 0; i < TR_NNAMES; i++)
        if (!strcmp(tr_name_s[i], s))
            return i;
    return 3;
}

/* the MPI type and the model of a side */
static void side_make(pside * s)
{
    tr_map m;
    s->t = tr_make(s->r, t_rank, t_size, &m);
    s->pos = tr_bytes(&m, &s->size);
    s->ext = m.ub - m.lb;
    tr_map_free(&m);
}

static void side_free(pside * s)
{
    tfree(&s->t);
    tr_free(s->r);
    free(s->pos);
    memset(s, 0, sizeof(*s));
}

/* the view from the file type: interleaved unless a darray is on top */
static void make_view(pcase * c, MPI_Offset disp)
{
    if (top_darray) {
        c->view = c->f.t;
        c->vext = c->f.ext;
        c->disp = disp;
    } else {
        MPI_Type_create_resized(c->f.t, 0, c->f.ext * t_size, &c->view);
        MPI_Type_commit(&c->view);
        c->vext = c->f.ext * t_size;
        c->disp = disp + (MPI_Offset) t_rank *c->f.ext;
    }
}

/* the counts of a case: wbytes written as whole etypes, read back with at
 * least as many bytes */
static void counts(pcase * c, MPI_Offset want)
{
    MPI_Count es = c->e.size, uw = es / gcd(c->w.size, es);
    want -= want % es;
    if (want <= 0)              /* a tile of one leaf, less two leaves */
        want = es;
    c->wcount = (int) round_up((want + c->w.size - 1) / c->w.size, uw);
    c->w1 = (int) (c->wcount / 2 / uw * uw);
    MPI_Count ur = es / gcd(c->rd.size, es);
    c->rcount = (int) round_up((c->wcount * c->w.size + c->rd.size - 1) / c->rd.size, ur);
    c->r1 = (int) (c->rcount / 2 / ur * ur);
}

static void texts(pcase * c)
{
    c->text[0] = tr_str(c->f.r);
    c->text[1] = tr_str(c->e.r);
    c->text[2] = tr_str(c->w.r);
    c->text[3] = tr_str(c->rd.r);
}

static int draw(pcase * c, int k, uint64_t seed)
{
    memset(c, 0, sizeof(*c));
    rs = seed * 0x9E3779B97F4A7C15ull + (uint64_t) k * 7919 + 1;
    top_darray = 0;
    leaf = leaf_index(leaves_s[rnd(4)]);
    unsigned ek = rnd(3);       /* etype: MPI_BYTE, the leaf, or bigger */
    big = ek == 2 ? 2 + (int) rnd(3) : 0;
    c->large = rnd(3) == 0;
    int ok = 0;
    for (int tries = 0; !ok && tries < (zl ? MAX_DRAWS : 1); tries++) {
        if (tries) {            /* -z: not a view: drawn again */
            side_free(&c->f);
            top_darray = 0;
        }
        c->f.r = lb0(gen_file(1 + (int) rnd(3), 1));
        tr_map m;
        c->f.t = tr_make(c->f.r, t_rank, t_size, &m);
        c->f.pos = tr_bytes(&m, &c->f.size);
        c->f.ext = m.ub - m.lb;
        ok = c->f.size > 0 && c->f.size <= MAX_FTSIZE && c->f.ext <= MAX_EXTENT &&
            (!zl || !tr_view_ok(&m, c->f.ext));
        tr_map_free(&m);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    }
    if (!ok) {                  /* too big (or a darray leaving a rank nothing) */
        side_free(&c->f);
        return 0;
    }
    c->e.r = ek == 2 ? tr_contig(big, tr_named(leaf)) : tr_named(ek == 1 ? leaf : 0);
    side_make(&c->e);
    make_view(c, 0);
    /* memory: 1 to 3 tiles of data, a multiple of the leaf */
    int64_t lsz = tr_named_size(leaf);
    MPI_Offset want = (MPI_Offset) (c->f.size * (1 + rnd(3))) - (MPI_Offset) rnd(3) * lsz;
    mem_lb = 0;
    if (rnd(5) == 0)            /* zero extent: count copies of the same bytes */
        c->w.r = tr_resized(0, 0, tr_contig(1 + (int) rnd(4), tr_named(leaf)));
    else {
        c->w.r = gen_mem((int) rnd(3));
        if (rnd(4) == 0) {
            c->w.r = lb_down(c->w.r);
            c->romio_map = 1;
        } else
            c->w.r = lb_top(c->w.r);
    }
    side_make(&c->w);
    c->rd.r = gen_mem((int) rnd(3));
    if (rnd(4) == 0) {
        c->rd.r = lb_down(c->rd.r);
        c->romio_map = 1;
    } else
        c->rd.r = lb_top(c->rd.r);
    side_make(&c->rd);
    /* a non-zero lb anywhere in the memory types: ROMIO's placement (ufs:, and
     * ddio's, which follows ROMIO's flattening for such types) is the
     * reference, not MPI_Pack: ROMIO 4.0.2 departs from the type map there */
    MPI_Aint lbw, lbr, e0;
    MPI_Type_get_extent(c->w.t, &lbw, &e0);
    MPI_Type_get_extent(c->rd.t, &lbr, &e0);
    c->romio_map |= lbw != 0 || lbr != 0 || mem_lb;
    if (c->w.size == 0 || c->rd.size == 0) {    /* (-z: memory without data) */
        side_free(&c->f);
        side_free(&c->e);
        side_free(&c->w);
        side_free(&c->rd);
        if (c->view != MPI_DATATYPE_NULL && !top_darray)
            MPI_Type_free(&c->view);
        return 0;
    }
    counts(c, want);
    texts(c);
    return 1;
}

/* A case from a recipe and its options (-r, and -f's fixed[]): 0 if this
 * run cannot take it (a darray for another number of ranks), said on rank 0 */
static int from_recipe(pcase * c, const char *text)
{
    char err[160];
    const char *s = text;
    long disp = 0, bytes = 0;

    memset(c, 0, sizeof(*c));
    top_darray = 0;
    c->f.r = tr_parse(&s, err);
    T_ASSERT(c->f.r, "recipe: %s", err);
    for (;;) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        pside *side = !strncmp(s, "etype=", 6) ? &c->e : !strncmp(s, "wmem=", 5) ? &c->w :
            !strncmp(s, "rmem=", 5) ? &c->rd : NULL;
        if (side) {
            s = strchr(s, '=') + 1;
            side->r = tr_parse(&s, err);
            T_ASSERT(side->r, "recipe: %s", err);
        } else if (!strncmp(s, "disp=", 5))
            disp = strtol(s + 5, (char **) &s, 10);
        else if (!strncmp(s, "bytes=", 6))
            bytes = strtol(s + 6, (char **) &s, 10);
        else
            T_FAIL("recipe: unknown option at \"%s\" (etype= disp= wmem= rmem= bytes=)", s);
    }
    /* a darray on top: its own grid, no interleaving */
    const tr_node *top = c->f.r;
    while (top->kind == TR_RESIZED)
        top = top->ch[0];
    if (top->kind == TR_DARRAY) {
        int p = 1;
        for (int i = 0; i < top->nd; i++)
            p *= top->p[i];
        if (p != t_size) {
            if (t_rank == 0)
                printf("SKIP recipe for %d ranks (this run: %d): %s\n", p, t_size, text);
            tr_free(c->f.r);
            tr_free(c->e.r);
            tr_free(c->w.r);
            tr_free(c->rd.r);
            return 0;
        }
        top_darray = 1;
    }
    if (!c->e.r)
        c->e.r = tr_named(0);
    if (!c->w.r)
        c->w.r = tr_contig(1, tr_named(0));
    if (!c->rd.r)
        c->rd.r = tr_contig(1, tr_named(0));
    side_make(&c->f);
    side_make(&c->e);
    side_make(&c->w);
    side_make(&c->rd);
    T_ASSERT(c->f.size > 0 && c->e.size > 0 && c->f.size % c->e.size == 0 && c->w.size > 0 &&
             c->rd.size > 0, "recipe: the file type's size must be a positive multiple of the "
             "etype's, the memory types must hold data");
    make_view(c, disp);
    counts(c, bytes ? bytes : 2 * c->f.size + c->f.size / 2);
    texts(c);
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
    int one = 1, bl[2] = { 1, 2 };
    MPI_Aint m64 = -64, d[2] = { 80, 0 };
    tr_node *ty[2];

    memset(c, 0, sizeof(*c));
    top_darray = 0;
    c->e.r = tr_named(leaf_index("INT"));
    c->f.r = tr_contig(1024, tr_named(leaf_index("INT")));
    c->w.r = tr_contig(1, tr_named(leaf_index("INT")));
    ty[0] = tr_indexed(TR_HINDEXED, 1, &one, 0, &m64, tr_contig(3, tr_named(leaf_index("INT"))));
    ty[1] = tr_named(leaf_index("INT"));
    c->rd.r = tr_struct(2, bl, d, ty);
    side_make(&c->f);
    side_make(&c->e);
    side_make(&c->w);
    side_make(&c->rd);
    MPI_Type_create_resized(c->f.t, 0, 4096 * t_size, &c->view);
    MPI_Type_commit(&c->view);
    c->vext = 4096 * t_size;
    c->disp = (MPI_Offset) t_rank * 4096;
    c->wcount = 16384;
    c->w1 = 8192;
    c->rcount = 16384 * 4 / 20 + 1;    /* 20 bytes each: 65540 >= 65536 */
    c->r1 = c->rcount / 2;
    c->romio_map = 1;
    texts(c);
}

static void release(pcase * c)
{
    if (c->view != c->f.t)
        MPI_Type_free(&c->view);
    side_free(&c->f);
    side_free(&c->e);
    side_free(&c->w);
    side_free(&c->rd);
    for (int i = 0; i < 4; i++)
        free(c->text[i]);
}

/* T_MPI with the case's recipes */
#define P_MPI(call) do { int e_ = (call); if (e_ != MPI_SUCCESS) { \
    char s_[MPI_MAX_ERROR_STRING]; int n_; MPI_Error_string(e_, s_, &n_); \
    CHECK(0, "%s: %s", CTX, #call, s_); } } while (0)
#define CHECK(cond, ...) T_ASSERT(cond, "case %d (seed %llu%s): file %s etype=%s disp=%lld " \
                                  "| write %s x %d | read %s x %d: " __VA_ARGS__)
#define CTX k, (unsigned long long) seed, zl ? ", -z" : "", c->text[0], c->text[1], \
    (long long) (c->disp - (top_darray ? 0 : (MPI_Offset) t_rank * c->f.ext)), c->text[2], \
    c->wcount, c->text[3], c->rcount

/* set_view of the case's view. With T_PROP_REFUSED=1 a view the MPI
 * library refuses on any rank (ROMIO 3.2.1 refuses some that MPICH 4.0's
 * ROMIO takes, on ufs: as well: MPI_ERR_TYPE) skips the case on every rank,
 * said by rank 0, its positions left 0: the harness's comparison with the
 * control then shows whether both refused it. */
static int view_refused(MPI_File fh, const pcase * c, MPI_Offset region, int k)
{
    int err = MPI_File_set_view(fh, region + c->disp, c->e.t, c->view, "native",
                                MPI_INFO_NULL), bad = err != MPI_SUCCESS;
    const char *r = getenv("T_PROP_REFUSED");
    if (!r || strcmp(r, "1") != 0) {
        if (err != MPI_SUCCESS) {
            char s[MPI_MAX_ERROR_STRING];
            int n;
            MPI_Error_string(err, s, &n);
            T_FAIL("case %d: set_view of file %s etype=%s: %s", k, c->text[0], c->text[1], s);
        }
        return 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (bad && t_rank == 0)
        printf("SKIP case %d: set_view refused by this MPI library (T_PROP_REFUSED=1)\n", k);
    return bad;
}

/* the model of the case's region [region, region + cap): every rank's
 * written stream placed by its view (the same image on every rank) */
static unsigned char *model_image(const pcase * c, MPI_Offset region, MPI_Offset cap,
                                  const unsigned char *sw, int64_t wbytes)
{
    unsigned char *img = calloc(1, (size_t) cap + 1), *msk = calloc(1, (size_t) cap + 1);
    T_ASSERT(img && msk, "model: out of memory");
    for (int64_t v = 0; v < wbytes; v++) {
        int64_t a = c->disp + tr_addr(c->f.pos, c->f.size, c->vext, v);
        T_ASSERT(a >= 0 && a < cap, "model: view byte %lld at %lld, outside [0, %lld)",
                 (long long) v, (long long) a, (long long) cap);
        T_ASSERT(!msk[a], "model: the view writes byte %lld twice", (long long) a);
        img[a] = sw[v];
        msk[a] = 1;
    }
    MPI_Allreduce(MPI_IN_PLACE, img, (int) cap, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, msk, (int) cap, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD);
    for (MPI_Offset i = 0; i < cap; i++)
        T_ASSERT(msk[i] <= 1, "model: %u ranks write byte %lld (overlapping views)", msk[i],
                 (long long) (region + i));
    free(msk);
    (void) region;
    return img;
}

/* view data bytes below file offset `end` (relative to the region) */
static int64_t view_bytes_below(const pcase * c, int64_t end)
{
    int64_t v = 0;
    while (c->disp + tr_addr(c->f.pos, c->f.size, c->vext, v) < end)
        v++;
    return v;
}

/* the case's region of the file, read as bytes, against the model's image,
 * and the file's size (the prefill's end: nothing may be written past it) */
static void check_image(MPI_File fh, const pcase * c, int k, uint64_t seed, MPI_Offset region,
                        MPI_Offset cap, MPI_Offset reach, const unsigned char *img)
{
    MPI_Offset size, per = (cap + t_size - 1) / t_size, lo = per * t_rank;
    MPI_Offset n = lo < cap ? (cap - lo < per ? cap - lo : per) : 0, bad = -1, nbad = 0;
    unsigned char *got = malloc((size_t) n + 1);

    T_ASSERT(got, "out of memory");
    P_MPI(MPI_File_get_size(fh, &size));
    P_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    P_MPI(MPI_File_read_at_all(fh, region + lo, got, (int) n, MPI_BYTE, MPI_STATUS_IGNORE));
    for (MPI_Offset i = 0; i < n; i++)
        if (got[i] != img[lo + i]) {
            nbad++;
            if (bad < 0)
                bad = i;
        }
    char first[128] = "";
    if (bad >= 0)
        snprintf(first, sizeof(first), ", this rank's first at file offset %lld (%u, the "
                 "model says %u)", (long long) (region + lo + bad), got[bad], img[lo + bad]);
    MPI_Allreduce(MPI_IN_PLACE, &nbad, 1, MPI_OFFSET, MPI_SUM, MPI_COMM_WORLD);
    CHECK(nbad == 0 && size == reach, "%lld bytes of the file differ from the model%s; file "
          "size %lld, the model says %lld", CTX, (long long) nbad, first, (long long) size,
          (long long) reach);
    free(got);
}

static void run_case(MPI_File fh, pcase * c, int k, uint64_t seed, MPI_Offset region,
                     MPI_Offset * rec)
{
    MPI_Count es = c->e.size, wsz = c->w.size, rsz = c->rd.size;
    MPI_Count wbytes = wsz * c->wcount, rbytes = rsz * c->rcount;
    size_t nw, nr;
    unsigned char *bw, *br, *pw = t_type_alloc(c->w.t, c->wcount, 1, &bw, &nw);
    unsigned char *pr = t_type_alloc(c->rd.t, c->rcount, 1, &br, &nr);
    for (size_t i = 0; i < nw; i++)
        pw[i] = t_byte(seed * 1000 + (uint64_t) k * 17 + (uint64_t) t_rank, i);
    memset(pr, 0xEE, nr);

    /* zeros first over what the case may touch: ROMIO's data sieving
     * writes back whatever its buffer held for the holes past end of file
     * (ufs:), which no other run reproduces, and its two-phase read fills
     * the buffer past end of file where ddio reads short */
    MPI_Count fsz = c->f.size;
    MPI_Count touched = wbytes > rbytes ? wbytes : rbytes;     /* reads too:
                                                 * no end of file inside the case's reads */
    MPI_Offset reach = region + c->disp + (touched + fsz - 1) / fsz * c->vext + 1;
    MPI_Allreduce(MPI_IN_PLACE, &reach, 1, MPI_OFFSET, MPI_MAX, MPI_COMM_WORLD);
    tm_prefill(fh, region, reach);
    if (view_refused(fh, c, region, k)) {
        free(pw);
        free(pr);
        return;
    }
    P_MPI(MPI_File_get_position(fh, &rec[0]));
    long flat0 = flat_types(fh);
    int w1 = c->w1, packed = c->romio_map && pack_mem;
    int romio_placed = c->romio_map && romio_mem;
    unsigned char *sw = pack(bw, c->wcount, c->w.t, wbytes);
    /* the model's type map of the file type against MPI's engine: noted,
     * not failed (MPICH 4.0.2's own darray departs from the standard for
     * some CYCLIC(k) distributions over two dimensions: MPI_Pack of rank 0's
     * darray(F,[g=2 p=2 BLOCK, g=7 p=2 CYCLIC(3)]) of SHORT gives the bytes
     * at 0 2 4 24, the standard's type map 0 4 8 24); the model is the
     * reference of every check below */
    {
        size_t nf;
        unsigned char *bf, *pf = t_type_alloc(c->f.t, 1, 0, &bf, &nf);
        for (size_t i = 0; i < nf; i++)
            pf[i] = t_byte(seed + 77, i);
        unsigned char *sf = pack(bf, 1, c->f.t, c->f.size);
        for (int64_t s = 0; s < c->f.size; s++)
            if (sf[s] != bf[c->f.pos[s]]) {
                n_pack_differs++;
                printf("NOTE case %d rank %d: MPI_Pack of the file type %s differs from its "
                       "type map at byte %lld (the model: offset %lld)\n", k, t_rank,
                       c->text[0], (long long) s, (long long) c->f.pos[s]);
                break;
            }
        free(sf);
        free(pf);
    }
    /* the model's stream: the write buffer gathered by the type map */
    for (MPI_Count s = 0; s < wbytes; s++) {
        unsigned char m = bw[tr_addr(c->w.pos, c->w.size, c->w.ext, s)];
        CHECK(m == sw[s], "stream byte %lld: MPI_Pack %u, the model's type map %u "
              "(the model or the MPI library is wrong)", CTX, (long long) s, sw[s], m);
    }
    /* packed (mem_by): the same stream from contiguous memory, as bytes */
    MPI_Datatype wt = packed ? MPI_BYTE : c->w.t;
    MPI_Count wn = packed ? w1 * wsz : w1, wrest = packed ? wbytes - wn : c->wcount - w1;
    if (c->large)
        P_MPI(WRITE_ALL_C(fh, packed ? sw : bw, wn, wt, MPI_STATUS_IGNORE));
    else
        P_MPI(MPI_File_write_all(fh, packed ? sw : bw, (int) wn, wt, MPI_STATUS_IGNORE));
    P_MPI(MPI_File_get_position(fh, &rec[1]));
    CHECK(rec[1] * es == w1 * wsz, "position %lld after write_all of %lld bytes", CTX,
          (long long) rec[1], (long long) (w1 * wsz));
    /* the rest continues at the individual pointer: a zero-extent type
     * sends the same bytes again, so the buffer origin does not move */
    MPI_Aint wext = ext_of(c->w.t);
    P_MPI(MPI_File_write(fh, packed ? sw + wn : bw + wext * w1, (int) wrest, wt,
                         MPI_STATUS_IGNORE));
    P_MPI(MPI_File_get_position(fh, &rec[2]));
    P_MPI(MPI_File_get_byte_offset(fh, rec[2], &rec[3]));

    /* MPI's rule before reading what other ranks wrote (a read past this
     * rank's stream meets their bytes): sync-barrier-sync. Without it the
     * bytes read there depended on timing (seen on ddio: seed 768674 case 1
     * at P = 3, a read buffer's hash differing from run to run) */
    P_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    P_MPI(MPI_File_sync(fh));

    /* the model of the file (-z and the fixed cases: also on ufs:, whose
     * ROMIO misplaces some of them) */
    MPI_Offset cap = reach - region;
    unsigned char *img = romio_placed ? NULL : model_image(c, region, cap, sw, wbytes);
    if (img) {                  /* the file first: what was written, and where */
        check_image(fh, c, k, seed, region, cap, reach, img);
        P_MPI(MPI_File_set_view(fh, region + c->disp, c->e.t, c->view, "native",
                                MPI_INFO_NULL));
    }
    MPI_Offset want = region + c->disp + tr_addr(c->f.pos, c->f.size, c->vext, rec[2] * es);
    CHECK(rec[3] == want, "byte offset %lld of etype %lld, the model says %lld", CTX,
          (long long) rec[3], (long long) rec[2], (long long) want);

    /* read back: the first half independently at an explicit offset, the
     * rest collectively */
    int r1 = c->r1;
    MPI_Aint rext = ext_of(c->rd.t);
    MPI_Status st1, st2;
    MPI_Count n1, n2;
    unsigned char *rp = packed ? malloc((size_t) rbytes + 1) : NULL;
    MPI_Datatype rt = packed ? MPI_BYTE : c->rd.t;
    MPI_Count rn = packed ? r1 * rsz : r1, rrest = packed ? rbytes - rn : c->rcount - r1;
    T_ASSERT(!packed || rp, "out of memory");
    P_MPI(MPI_File_read_at(fh, 0, packed ? rp : br, (int) rn, rt, &st1));
    if (c->large)
        P_MPI(READ_AT_ALL_C(fh, (MPI_Offset) (r1 * rsz / es),
                            packed ? rp + rn : br + rext * r1, rrest, rt, &st2));
    else
        P_MPI(MPI_File_read_at_all(fh, (MPI_Offset) (r1 * rsz / es),
                                   packed ? rp + rn : br + rext * r1, (int) rrest, rt, &st2));
    if (packed) {
        int pos = 0;
        MPI_Unpack(rp, (int) rbytes, &pos, br, c->rcount, c->rd.t, MPI_COMM_SELF);
        free(rp);
    }
    MPI_Get_elements_x(&st1, MPI_BYTE, &n1);     /* MPI 3's MPI_Count form */
    MPI_Get_elements_x(&st2, MPI_BYTE, &n2);
    CHECK(n1 == r1 * rsz && n2 == (c->rcount - r1) * rsz, "read %lld + %lld bytes, asked "
          "%lld + %lld", CTX, (long long) n1, (long long) n2, (long long) (r1 * rsz),
          (long long) ((c->rcount - r1) * rsz));
    long flat1 = flat_types(fh);
    CHECK(flat1 == flat0, "ddio_flat_types went from %ld to %ld: a type fell back to "
          "a flattened list", CTX, flat0, flat1);
    if (verbose)
        printf("    rank %d: wrote %lld bytes (%d + %d x %lld), read %lld + %lld (%d + %d x %lld)\n",
               t_rank, (long long) wbytes, w1, c->wcount - w1, (long long) wsz, (long long) n1,
               (long long) n2, r1, c->rcount - r1, (long long) rsz);
    unsigned char *sr = pack(br, c->rcount, c->rd.t, rbytes);
    for (MPI_Count i = 0; i < wbytes && !romio_placed; i++)
        CHECK(sw[i] == sr[i], "stream byte %lld of %lld read back as %u, wrote %u", CTX,
              (long long) i, (long long) wbytes, sr[i], sw[i]);
    if (img) {
        /* every byte read: the model's image at the view's byte, landed at
         * the read type's byte; nothing else of the buffer written */
        unsigned char *touched_b = calloc(1, nr + 1);
        T_ASSERT(touched_b, "out of memory");
        for (MPI_Count s = 0; s < rbytes; s++) {
            int64_t a = c->disp + tr_addr(c->f.pos, c->f.size, c->vext, s);
            int64_t m = tr_addr(c->rd.pos, c->rd.size, c->rd.ext, s);
            unsigned char want_b = a < cap ? img[a] : 0;
            CHECK(br[m] == want_b, "stream byte %lld read as %u at buffer byte %lld, the "
                  "model says %u (file offset %lld)", CTX, (long long) s, br[m], (long long) m,
                  want_b, (long long) (region + a));
            touched_b[br + m - pr] = 1;
        }
        for (size_t i = 0; i < nr; i++)
            CHECK(touched_b[i] || pr[i] == 0xEE, "the read wrote buffer byte %lld, outside "
                  "the read type's bytes", CTX, (long long) ((unsigned char *) pr + i - br));
        free(touched_b);
    }
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
    }
    if (verbose)
        printf("    rank %d: read hash %016llx%s; %u %u %u %u\n", t_rank,
               (unsigned long long) rec[8], romio_placed ? " (ROMIO's placement)" : "",
               sr[0], sr[1], sr[2], sr[3]);
    /* (bytes past the written ones read whatever the other ranks wrote:
     * the harness compares those through the file) */

    /* seeks: a random etype, then the end of file (every rank wrote) */
    MPI_Offset etypes = wbytes / es, to = etypes ? (MPI_Offset) rnd((unsigned) etypes) : 0;
    P_MPI(MPI_File_seek(fh, to, MPI_SEEK_SET));
    P_MPI(MPI_File_get_position(fh, &rec[4]));
    CHECK(rec[4] == to, "position %lld after seeking to %lld", CTX, (long long) rec[4],
          (long long) to);
    P_MPI(MPI_File_get_byte_offset(fh, to, &rec[5]));
    want = region + c->disp + tr_addr(c->f.pos, c->f.size, c->vext, to * es);
    CHECK(rec[5] == want, "byte offset %lld of etype %lld, the model says %lld", CTX,
          (long long) rec[5], (long long) to, (long long) want);
    MPI_Barrier(MPI_COMM_WORLD);
    P_MPI(MPI_File_seek(fh, 0, MPI_SEEK_END));
    P_MPI(MPI_File_get_position(fh, &rec[6]));
    if (rec[6] > 0) {
        P_MPI(MPI_File_seek(fh, -1, MPI_SEEK_CUR));
        P_MPI(MPI_File_get_position(fh, &rec[7]));
    }
    MPI_Offset size;
    P_MPI(MPI_File_get_size(fh, &size));
    want = (view_bytes_below(c, size - region) + es - 1) / es;
    if (getenv("T_PROP_NO_EOF"))        /* (OMPIO: its own end-of-file position) */
        want = rec[6];
    CHECK(rec[6] == want && (rec[6] == 0 || rec[7] == rec[6] - 1), "position %lld at the "
          "end of file (%lld bytes) and %lld before it, the model says %lld", CTX,
          (long long) rec[6], (long long) size, (long long) rec[7], (long long) want);

    free(img);
    free(sw);
    free(sr);
    free(pw);
    free(pr);
}

/* -f: recipes of views ROMIO 4.0.2's flattening gets wrong: on ufs:, and
 * on ddio while it described views as ROMIO flattens them (each failed so
 * there; see the comment of each) */
static const char *const fixed[] = {
    /* issue 42's: zero-length blocks of a derived type under a darray; ROMIO
     * aborted in set_view (free(): invalid pointer in ADIOI_Optimize_flattened),
     * ddio wrote 12972 of its 31116 bytes elsewhere */
    "indexed(3,[1@0 0@1 1@3],vector(3,3,4,DOUBLE)) ->resized(0,356) "
        "| darray(C,[g=29 p=4 CYCLIC(3)]) etype=DOUBLE disp=143",
    /* a legal view refused by set_view ("displacements of filetype must be
     * in a monotonically nondecreasing order"): ROMIO's replication of an
     * indexed child with zero-length blocks goes back */
    "iblock(2,1,[0 4],indexed(4,[3@0 0@5 2@5 1@9],vector(4,3,6,contig(4,SHORT)))) etype=SHORT",
    /* parts of size 0 in a struct under indexed: the bytes went elsewhere
     * without an error (the individual pointer after write_all at 1083
     * etypes where 600 bytes of DOUBLE make 75) */
    "hindexed(2,[2@0 1@1348],indexed(3,[3@0 1@5 1@7],struct(4,[0@0:contig(0,DOUBLE), "
        "2@0:contig(0,DOUBLE), 2@8:contig(0,DOUBLE), 1@24:contig(4,DOUBLE)]))) etype=DOUBLE",
    /* a resized part with a negative lower bound under another resized:
     * ROMIO moves the data by it (320 of 601 bytes written wrong, no error) */
    "contig(4,INT) ->resized(-16,56) ->resized(0,40) etype=INT",
    /* a named type with holes: ROMIO takes MPI_SHORT_INT as 6 bytes in a
     * row (272 of 601 bytes written wrong on ufs:; ddio described it from
     * ROMIO's list: the same bytes) */
    "vector(3,1,2,SHORT_INT)",
};

#define NFIXED ((int) (sizeof(fixed) / sizeof(fixed[0])))

/* -f, last: a filetype that is not monotone on one rank only (the last):
 * set_view fails on every rank (MPI leaves an erroneous view undefined;
 * ddio refuses it collectively, so no rank goes on alone), and the file
 * then takes a good view and moves data through it. ddio: only (ROMIO on
 * ufs: refuses on the one rank; the others would go on into the barrier of
 * their set_view). */
static void bad_view(MPI_File fh, MPI_Offset region)
{
    int bl[2] = { 1, 1 }, err;
    MPI_Aint d[2] = { 8, 0 };
    MPI_Datatype t;
    if (!on_ddio) {
        if (t_rank == 0)
            printf("SKIP the non-monotone view: ddio: only\n");
        return;
    }
#ifdef OPEN_MPI
    /* Open MPI's MPI_File_set_view refuses a non-monotone type itself
     * (MPI_ERR_TYPE) before its io component sees the call: that rank
     * returns alone, whatever the driver does */
    if (t_rank == 0)
        printf("SKIP the non-monotone view: Open MPI refuses it on that rank before ROMIO\n");
    return;
#endif
    if (t_rank == t_size - 1)
        MPI_Type_create_hindexed(2, bl, d, MPI_INT, &t);
    else
        MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    err = MPI_File_set_view(fh, region, MPI_INT, t, "native", MPI_INFO_NULL);
    char s[MPI_MAX_ERROR_STRING] = "";
    int n, cls = t_errclass(err);
    if (err != MPI_SUCCESS)
        MPI_Error_string(err, s, &n);
    T_ASSERT(err != MPI_SUCCESS, "the non-monotone view (the last rank's) was taken on rank %d",
             t_rank);
    T_ASSERT(t_rank != t_size - 1 || strstr(s, "nondecreasing"), "the non-monotone view: "
             "error class %d, \"%s\" (no word of the order)", cls, s);
    if (verbose || t_rank == 0 || t_rank == t_size - 1)
        printf("bad view, rank %d: %s\n", t_rank, s);
    MPI_Type_free(&t);
    int v[2] = { t_rank, -t_rank };
    T_MPI(MPI_File_set_view(fh, region, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_write_at_all(fh, 2 * t_rank, v, 2, MPI_INT, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
    int back[2];
    T_MPI(MPI_File_read_at_all(fh, 2 * t_rank, back, 2, MPI_INT, MPI_STATUS_IGNORE));
    T_ASSERT(back[0] == v[0] && back[1] == v[1], "after the refused view: read %d %d, wrote "
             "%d %d", back[0], back[1], v[0], v[1]);
}

int main(int argc, char **argv)
{
    int ncases = 40, only = -1, first = 0, opt, fixed_cases = 0;
    const char *recipe = NULL;
    uint64_t seed = 1;
    t_init(&argc, &argv);
    while ((opt = getopt(argc, argv, "n:s:c:k:vzfr:")) != -1) {
        if (opt == 'n')
            ncases = atoi(optarg);
        else if (opt == 's')
            seed = strtoull(optarg, NULL, 0);
        else if (opt == 'c')
            only = atoi(optarg);
        else if (opt == 'k')
            first = atoi(optarg);
        else if (opt == 'v')
            verbose = 1;
        else if (opt == 'z')
            zl = 1;
        else if (opt == 'f')
            fixed_cases = 1;
        else if (opt == 'r')
            recipe = optarg;
    }
    T_ASSERT(optind == argc - 1 && seed, "usage: t_prop [-n N] [-s SEED] [-c CASE | -k FIRST] "
             "[-z] [-f] [-r RECIPE] [-v] FILE");
    mem_by(argv[optind]);
    if (recipe || fixed_cases)
        ncases = 0;
    if (t_rank == 0)
        printf("t_prop: seed %llu, %d cases%s, %d fixed recipes, P=%d (rerun: -s %llu%s "
               "[-c CASE])\n", (unsigned long long) seed, ncases,
               zl ? " with zero-length blocks (-z)" : "", fixed_cases ? NFIXED : 0, t_size,
               (unsigned long long) seed, zl ? " -z" : "");
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
    int nall = ncases + 1 + (recipe ? 1 : 0) + (fixed_cases ? NFIXED : 0);
    MPI_Offset *rec = calloc((size_t) nall * NREC, sizeof(MPI_Offset)), region;
    T_ASSERT(rec, "out of memory");
    T_MPI(MPI_File_get_size(fh, &region));      /* (-k: after an earlier run's cases) */
    region = (region + 4095) / 4096 * 4096;
    int ran = 0;
    for (int k = 0; k < nall; k++) {
        /* random cases, draw_overlap's, then -r's or -f's */
        pcase c;
        if ((only >= 0 && k != only) || k < first)
            continue;
        if (k == ncases && (recipe || fixed_cases))
            continue;           /* (draw_overlap's: not with a recipe) */
        if (k > ncases) {
            const char *r = recipe ? recipe : fixed[k - ncases - 1];
            if (!from_recipe(&c, r))
                continue;
        } else if (k == ncases)
            draw_overlap(&c);
        else if (!draw(&c, k, seed))
            continue;
        if ((verbose || getenv("T_PROP_TRACE")) && t_rank == 0) {
            printf("  case %d: file %s etype=%s | write %s x %d | read %s x %d\n", k, c.text[0],
                   c.text[1], c.text[2], c.wcount, c.text[3], c.rcount);
            fflush(stdout);
        }
        run_case(fh, &c, k, seed, region, rec + (size_t) k * NREC);
        /* the next case starts past everything this one wrote */
        MPI_Offset end;
        T_MPI(MPI_File_get_size(fh, &end));
        region = (end + 4095) / 4096 * 4096;
        release(&c);
        ran++;
    }
    if (fixed_cases)
        bad_view(fh, region);
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    long flat = flat_types(fh);
    T_MPI(MPI_File_close(&fh));
    /* the positions MPI returned, for the harness to compare with ufs: */
    char *pname = t_name(argv[optind], ".2");
    T_MPI(MPI_File_open(MPI_COMM_WORLD, pname, MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &fp));
    T_MPI(MPI_File_write_at_all(fp, (MPI_Offset) t_rank * nall * NREC * 8, rec,
                                nall * NREC * 8, MPI_BYTE, MPI_STATUS_IGNORE));
    T_MPI(MPI_File_close(&fp));
    MPI_Info_free(&info);
    if (t_rank == 0)
        printf("t_prop: %d of %d cases ran (%d with a memory lb != 0: %s); "
               "rank 0 described %ld datatypes from a flattened list; the model took %d "
               "bounds from MPI; MPI_Pack of %d file types departed from their type map\n",
               ran, nall, n_romio_map, romio_mem ? "ROMIO's placement, compared with ufs: only" :
               pack_mem ? "packed by the program" : "placed by the type map", flat, tr_adopted,
               n_pack_differs);
    free(rec);
    free(pname);
    return t_finish();
}
