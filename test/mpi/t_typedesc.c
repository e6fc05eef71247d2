/* Trees built from datatypes (ad_ddio_type.c) against their type maps.
 *
 * Part 1, fixed cases: file views from every constructor nested two or
 * three deep, subarray (C and Fortran order), darray (BLOCK, CYCLIC(1),
 * CYCLIC(k) also on non-last dimensions, NONE; 1-3 dimensions; C and
 * Fortran order), and memory types with negative displacements, negative
 * strides, non-monotone fields and resized. Each is written with
 * write_all and read back with read_all (the memory stream must come back:
 * MPI_Pack of both buffers), and on ddio: the driver must report
 * ddio_desc_builder / ddio_mem_builder = "type" (the constructor path), or
 * "flat" for the cases that must fall back: a type longer than the tree
 * budget (described from its pieces), and romio_ddio_type_desc=disable
 * (ROMIO's flattened list). (Named types with holes, which ROMIO flattens
 * as one block, are t_prop's: ufs: misplaces them.) A type that falls back
 * without that hint is counted once (get_info's ddio_flat_types grows by
 * one, and not again when the same view is set and used a second time); a
 * case whose types both take the type path leaves the count alone.
 * Part 2, random cases: seeded random nested file and memory types (-s SEED,
 * -n COUNT), written and read back the same way; the type path must be
 * taken for most of them.
 *
 * The program sets romio_ddio_check_desc=enable itself: on ddio: every
 * descriptor and every tree built from a type is compared, piece by piece,
 * with the type map as the driver's check lists it apart from the tree
 * builder (MPI_ERR_INTERN on the first difference). The harness compares
 * the file with the same run on ufs: byte for byte (the types here are
 * ones ROMIO's flattening gets right).
 * usage: t_typedesc [-n NRANDOM] [-s SEED] [-v] FILE */
#include "tmodel.h"
#include <unistd.h>

static MPI_File fh;
static int on_ddio, verbose;
static MPI_Offset region;       /* next free file offset (same on every rank) */
static uint64_t rs;
static int n_type, n_flat, n_mtype, n_mflat;

typedef struct tcase {
    char name[160];
    MPI_Datatype ft, mt;        /* mt MPI_BYTE: contiguous memory */
    int interleave;             /* ranks take turns: resize ft to P extents */
    char want;                  /* 'T' type, 'F' flat, 0 either */
    char mwant;
    const char *hint;           /* extra hint key=value for this case */
} tcase;

static unsigned rnd(unsigned n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return n ? (unsigned) (rs % n) : 0;
}

static MPI_Aint ext_of(MPI_Datatype t)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t, &lb, &ext);
    return ext;
}

static void info_want(const char *key, char want, const char *name, int *nt, int *nf)
{
    MPI_Info got;
    char v[64];
    int flag;
    if (!on_ddio)
        return;
    T_MPI(MPI_File_get_info(fh, &got));
    MPI_Info_get(got, key, sizeof(v) - 1, v, &flag);
    MPI_Info_free(&got);
    T_ASSERT(flag, "%s: %s not reported", name, key);
    *nt += !strcmp(v, "type");
    *nf += !strcmp(v, "flat");
    T_ASSERT(!want || !strcmp(v, want == 'T' ? "type" : "flat"), "%s: %s is %s, want %s", name,
             key, v, want == 'T' ? "type" : "flat");
}

/* get_info's ddio_flat_types (0 on ufs:) */
static long flat_types(void)
{
    MPI_Info got;
    char v[64];
    int flag;
    if (!on_ddio)
        return 0;
    T_MPI(MPI_File_get_info(fh, &got));
    MPI_Info_get(got, "ddio_flat_types", sizeof(v) - 1, v, &flag);
    MPI_Info_free(&got);
    T_ASSERT(flag, "ddio_flat_types not reported");
    return atol(v);
}

/* frees c if it is derived (constructors below take ownership of their
 * children) and returns t */
static MPI_Datatype own(MPI_Datatype t, MPI_Datatype c)
{
    int ni, na, nt, comb;
    MPI_Type_get_envelope(c, &ni, &na, &nt, &comb);
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(&c);
    return t;
}

/* what ROMIO calls contiguous (no tree is built for it) */
static int looks_contig(MPI_Datatype t)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Count sz;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_size_x(t, &sz);
    return sz == ext && sz == text && tlb <= 0;
}

static void run_case(tcase * c, int k)
{
    MPI_Datatype ft = c->ft;
    MPI_Aint lb, ext;
    MPI_Count fsz, msz;
    MPI_Info info;
    MPI_Offset disp, reach;
    int mcount;

    MPI_Type_commit(&c->ft);
    MPI_Type_commit(&c->mt);
    MPI_Type_get_extent(c->ft, &lb, &ext);
    MPI_Type_size_x(c->ft, &fsz);
    MPI_Type_size_x(c->mt, &msz);
    T_ASSERT(lb == 0 && ext > 0, "case %d %s: filetype lb %ld extent %ld", k, c->name,
             (long) lb, (long) ext);
    if (c->interleave) {
        MPI_Type_create_resized(c->ft, 0, ext * t_size, &ft);
        MPI_Type_commit(&ft);
    }
    disp = region + (c->interleave ? (MPI_Offset) t_rank * ext : 0);
    /* about 2.5 filetype tiles of data (one of the big one: ufs: is slow on it) */
    mcount = fsz ? (int) (((fsz > 65536 ? 2 : 5) * fsz / 2 + msz - 1) / msz) : 0;
    MPI_Offset tiles = fsz ? ((MPI_Offset) mcount * msz + fsz - 1) / fsz : 0;
    reach = disp + tiles * ext_of(ft);
    MPI_Allreduce(MPI_IN_PLACE, &reach, 1, MPI_OFFSET, MPI_MAX, MPI_COMM_WORLD);
    tm_prefill(fh, region, reach);

    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_ddio_check_desc", "enable");
    MPI_Info_set(info, "romio_ddio_type_desc", "enable");
    if (c->hint) {
        char kv[128], *eq;
        snprintf(kv, sizeof(kv), "%s", c->hint);
        eq = strchr(kv, '=');
        *eq = 0;
        MPI_Info_set(info, kv, eq + 1);
    }
    long flat0 = flat_types();
    T_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", info));

    size_t n;
    unsigned char *b0, *b1, *w = t_type_alloc(c->mt, mcount, 0, &b0, &n), *r = t_type_alloc(c->mt, mcount, 0,
                                                                                &b1, &n);
    for (size_t i = 0; i < n; i++) {
        w[i] = t_byte((uint64_t) k * 977 + (uint64_t) t_rank, i);
        r[i] = (unsigned char) ~w[i];
    }
    T_MPI(MPI_File_write_all(fh, b0, mcount, c->mt, MPI_STATUS_IGNORE));
    if (fsz && !looks_contig(ft))
        info_want("ddio_desc_builder", c->want, c->name, &n_type, &n_flat);
    if (c->mt != MPI_BYTE && mcount && !looks_contig(c->mt))
        info_want("ddio_mem_builder", c->mwant, c->name, &n_mtype, &n_mflat);
    long flat1 = flat_types();
    if (!c->hint && c->want == 'F') {
        T_ASSERT(!on_ddio || flat1 == flat0 + 1, "%s: ddio_flat_types went from %ld to %ld, "
                 "want +1", c->name, flat0, flat1);
        /* the same type again: already counted (and logged) */
        T_MPI(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", info));
        T_MPI(MPI_File_write_all(fh, b0, mcount, c->mt, MPI_STATUS_IGNORE));
        T_ASSERT(flat_types() == flat1, "%s: ddio_flat_types %ld after the same view again, "
                 "want %ld", c->name, flat_types(), flat1);
    } else if (!c->hint && c->want == 'T' && c->mwant == 'T')
        T_ASSERT(flat1 == flat0, "%s: ddio_flat_types went from %ld to %ld on the type path",
                 c->name, flat0, flat1);
    MPI_Info_free(&info);
    T_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    T_MPI(MPI_File_read_all(fh, b1, mcount, c->mt, MPI_STATUS_IGNORE));
    if (mcount) {
        unsigned char *pw = malloc((size_t) (msz * mcount)), *pr = malloc((size_t) (msz * mcount));
        int pos = 0;
        MPI_Pack(b0, mcount, c->mt, pw, (int) (msz * mcount), &pos, MPI_COMM_SELF);
        pos = 0;
        MPI_Pack(b1, mcount, c->mt, pr, (int) (msz * mcount), &pos, MPI_COMM_SELF);
        for (MPI_Count i = 0; i < msz * mcount; i++)
            T_ASSERT(pw[i] == pr[i], "case %d %s: stream byte %lld read back as %u, wrote %u", k,
                     c->name, (long long) i, pr[i], pw[i]);
        free(pw);
        free(pr);
    }
    if (verbose && t_rank == 0)
        printf("  case %d %s: %d x %lld bytes, file [%lld, %lld)\n", k, c->name, mcount,
               (long long) msz, (long long) region, (long long) reach);
    free(w);
    free(r);
    region = (reach + 4095) / 4096 * 4096;
    if (ft != c->ft)
        MPI_Type_free(&ft);
    own(MPI_DATATYPE_NULL, c->ft);
    own(MPI_DATATYPE_NULL, c->mt);
}

/* ---- part 1: fixed cases ---------------------------------------------------------------- */

static MPI_Datatype vec(int n, int bl, int st, MPI_Datatype c)
{
    MPI_Datatype t;
    MPI_Type_vector(n, bl, st, c, &t);
    return t;
}

static MPI_Datatype contig(int n, MPI_Datatype c)
{
    MPI_Datatype t;
    MPI_Type_contiguous(n, c, &t);
    return t;
}

static MPI_Datatype V(int n, int bl, int st, MPI_Datatype c)
{
    return own(vec(n, bl, st, c), c);
}

static MPI_Datatype C(int n, MPI_Datatype c)
{
    return own(contig(n, c), c);
}

static MPI_Datatype HV(int n, int bl, MPI_Aint st, MPI_Datatype c)
{
    MPI_Datatype t;
    MPI_Type_create_hvector(n, bl, st, c, &t);
    return own(t, c);
}

static MPI_Datatype IX(int n, const int *bl, const int *d, MPI_Datatype c)
{
    MPI_Datatype t;
    MPI_Type_indexed(n, bl, d, c, &t);
    return own(t, c);
}

static MPI_Datatype HIX(int n, const int *bl, const MPI_Aint * d, MPI_Datatype c)
{
    MPI_Datatype t;
    MPI_Type_create_hindexed(n, bl, d, c, &t);
    return own(t, c);
}

static MPI_Datatype IB(int n, int bl, const int *d, MPI_Datatype c)
{
    MPI_Datatype t;
    MPI_Type_create_indexed_block(n, bl, d, c, &t);
    return own(t, c);
}

static MPI_Datatype HIB(int n, int bl, const MPI_Aint * d, MPI_Datatype c)
{
    MPI_Datatype t;
    MPI_Type_create_hindexed_block(n, bl, d, c, &t);
    return own(t, c);
}

static MPI_Datatype RS(MPI_Aint lb, MPI_Aint ext, MPI_Datatype c)
{
    MPI_Datatype t;
    MPI_Type_create_resized(c, lb, ext, &t);
    return own(t, c);
}

static MPI_Datatype DUP(MPI_Datatype c)
{
    MPI_Datatype t;
    MPI_Type_dup(c, &t);
    return own(t, c);
}

static MPI_Datatype ST(int n, const int *bl, const MPI_Aint * d, MPI_Datatype * ty)
{
    MPI_Datatype t;
    MPI_Type_create_struct(n, bl, d, ty, &t);
    for (int i = 0; i < n; i++)
        own(MPI_DATATYPE_NULL, ty[i]);
    return t;
}

static MPI_Datatype SUB(int nd, const int *sz, const int *sub, const int *st, int order,
                        MPI_Datatype c)
{
    MPI_Datatype t;
    T_MPI(MPI_Type_create_subarray(nd, sz, sub, st, order, c, &t));
    return own(t, c);
}

/* darray over all ranks: NONE dimensions get 1 process, the others share P */
static MPI_Datatype DA(int nd, const int *g, const int *dist, const int *darg, int order,
                       MPI_Datatype c)
{
    int ps[3] = { 0, 0, 0 };
    MPI_Datatype t;
    for (int i = 0; i < nd; i++)
        if (dist[i] == MPI_DISTRIBUTE_NONE)
            ps[i] = 1;
    MPI_Dims_create(t_size, nd, ps);
    T_MPI(MPI_Type_create_darray(t_size, t_rank, nd, g, dist, darg, ps, order, c, &t));
    return own(t, c);
}

/* memory types: negative displacements, negative strides, fields out of
 * address order, resized (ROMIO-safe placements: see ad_ddio_type.c) */
static MPI_Datatype mem_type(int j)
{
    switch (j % 8) {
    case 0:
        return MPI_BYTE;
    case 1:     /* vector with a trailing hole */
        return RS(0, 80, vec(3, 2, 4, MPI_INT));
    case 2: {   /* struct: negative displacement, fields out of order */
        int bl[3] = { 2, 1, 3 };
        MPI_Aint d[3] = { 64, -32, 8 };
        MPI_Datatype ty[3] = { MPI_DOUBLE, vec(2, 1, 3, MPI_INT), MPI_CHAR };
        return ST(3, bl, d, ty);
    }
    case 3:     /* negative stride */
        return HV(3, 1, -24, contig(2, MPI_INT));
    case 4: {   /* decreasing displacements, one negative */
        int bl[3] = { 1, 2, 1 };
        MPI_Aint d[3] = { 100, 40, -20 };
        return HIX(3, bl, d, vec(2, 1, 2, MPI_SHORT));
    }
    case 5: {   /* resized fields: lb 0 first, a negative lb later */
        int bl[2] = { 2, 1 };
        MPI_Aint d[2] = { 0, 40 };
        MPI_Datatype ty[2] = { RS(0, 8, MPI_INT), RS(-16, 64, vec(2, 1, 3, MPI_INT)) };
        return C(2, ST(2, bl, d, ty));
    }
    case 6: {
        int d[3] = { 0, 5, 12 };
        return IB(3, 2, d, RS(0, 16, MPI_DOUBLE));
    }
    default: {
        MPI_Aint d[2] = { 64, 0 };
        return HIB(2, 1, d, DUP(vec(2, 1, 2, MPI_FLOAT)));
    }
    }
}

#define ADD(nm, t, il, w) do { tcase c_ = { .ft = (t), .interleave = (il), .want = (w), \
    .mwant = 'T' }; snprintf(c_.name, sizeof(c_.name), "%s", nm); \
    c_.mt = mem_type(nc); c[nc++] = c_; } while (0)

static int fixed_cases(tcase * c)
{
    int nc = 0;
    const int B = MPI_DISTRIBUTE_BLOCK, Y = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE;
    const int D = MPI_DISTRIBUTE_DFLT_DARG, OC = MPI_ORDER_C, OF = MPI_ORDER_FORTRAN;
    int P = t_size;

    ADD("vector(int)", vec(4, 2, 5, MPI_INT), 1, 'T');
    ADD("hvector(contiguous(short))", HV(3, 2, 40, contig(3, MPI_SHORT)), 1, 'T');
    {
        int bl[3] = { 2, 1, 3 }, d[3] = { 0, 4, 9 };
        ADD("indexed(vector(double))", IX(3, bl, d, vec(2, 1, 3, MPI_DOUBLE)), 1, 'T');
    }
    {
        int bl[3] = { 1, 2, 1 }, fb[2] = { 1, 2 };
        MPI_Aint d[3] = { 0, 64, 200 }, fd[2] = { 0, 12 };
        MPI_Datatype ty[2] = { MPI_INT, contig(3, MPI_CHAR) };
        ADD("hindexed(struct{int,contiguous(char)})", HIX(3, bl, d, ST(2, fb, fd, ty)), 1, 'T');
    }
    {
        int d[4] = { 0, 3, 7, 20 };
        ADD("indexed_block(hvector(int))", IB(4, 2, d, HV(2, 1, 12, MPI_INT)), 1, 'T');
    }
    {
        MPI_Aint d[3] = { 0, 100, 300 };
        ADD("hindexed_block(contiguous(vector(short)))",
            HIB(3, 2, d, C(2, vec(3, 1, 2, MPI_SHORT))), 1, 'T');
    }
    {
        int bl[3] = { 1, 2, 1 }, ib[2] = { 2, 1 }, id[2] = { 0, 5 };
        MPI_Aint d[3] = { 0, 48, 160 };
        MPI_Datatype ty[3] = { vec(3, 1, 2, MPI_INT), IX(2, ib, id, MPI_SHORT),
            RS(0, 24, contig(2, MPI_DOUBLE))
        };
        ADD("struct{vector,indexed,resized}", ST(3, bl, d, ty), 1, 'T');
    }
    ADD("resized(dup(vector(double)))", RS(0, 200, DUP(vec(3, 2, 4, MPI_DOUBLE))), 1, 'T');
    {
        int bl[2] = { 3, 1 }, d[2] = { 0, 7 };
        ADD("vector(indexed(hvector(char)))", V(2, 1, 2, IX(2, bl, d, HV(2, 3, 5, MPI_CHAR))), 1,
            'T');
    }
    {
        int sz[3] = { 4, 5, 6 }, sub[3] = { 2, 3, 4 }, st[3] = { 1, 2, 1 };
        ADD("subarray3 C(int)", SUB(3, sz, sub, st, OC, MPI_INT), 1, 'T');
        ADD("subarray3 Fortran(contiguous(short))", SUB(3, sz, sub, st, OF, contig(3, MPI_SHORT)),
            1, 'T');
    }
    {
        int sz[2] = { 6, 7 }, sub[2] = { 3, 4 }, st[2] = { 2, 0 };
        ADD("subarray2 Fortran(vector(int))", SUB(2, sz, sub, st, OF, vec(2, 1, 2, MPI_INT)), 1,
            'T');
        ADD("vector(subarray2 C(double))", V(2, 1, 2, SUB(2, sz, sub, st, OC, MPI_DOUBLE)), 1, 'T');
    }
    {
        int g1[1] = { 8 * P }, b1[1] = { B }, y1[1] = { Y }, d1[1] = { D }, k3[1] = { 3 };
        int g1b[1] = { 7 * P + 2 };
        ADD("darray1 BLOCK(int)", DA(1, g1, b1, d1, OC, MPI_INT), 0, 'T');
        ADD("darray1 CYCLIC(double)", DA(1, g1b, y1, d1, OC, MPI_DOUBLE), 0, 'T');
        ADD("darray1 CYCLIC(3)(contiguous(8 bytes))", DA(1, g1b, y1, k3, OF, contig(8, MPI_BYTE)),
            0, 'T');
    }
    {
        int g[2] = { 2 * P + 1, 3 * P + 2 }, dist[2] = { B, Y }, darg[2] = { D, 2 };
        ADD("darray2 C BLOCK,CYCLIC(2)(int)", DA(2, g, dist, darg, OC, MPI_INT), 0, 'T');
        int dist2[2] = { Y, B }, darg2[2] = { 2, D };
        ADD("darray2 C CYCLIC(2),BLOCK(short) [MPICH's CYCLIC(k) placement]",
            DA(2, g, dist2, darg2, OC, MPI_SHORT), 0, 'T');
        ADD("darray2 Fortran CYCLIC(2),BLOCK(int)", DA(2, g, dist2, darg2, OF, MPI_INT), 0, 'T');
        int dist3[2] = { N, Y }, darg3[2] = { D, D };
        ADD("darray2 Fortran NONE,CYCLIC(double)", DA(2, g, dist3, darg3, OF, MPI_DOUBLE), 0, 'T');
        ADD("darray2 C NONE,CYCLIC(vector(short))", DA(2, g, dist3, darg3, OC,
                                                         vec(2, 1, 2, MPI_SHORT)), 0, 'T');
    }
    {
        int g[3] = { 3, 2 * P, 5 }, dist[3] = { B, Y, Y }, darg[3] = { D, D, 2 };
        ADD("darray3 Fortran BLOCK,CYCLIC,CYCLIC(2)(int)", DA(3, g, dist, darg, OF, MPI_INT), 0,
            'T');
        ADD("darray3 C BLOCK,CYCLIC,CYCLIC(2)(char)", DA(3, g, dist, darg, OC, MPI_CHAR), 0, 'T');
        int dist2[3] = { N, B, N }, darg2[3] = { D, D, D };
        ADD("darray3 C NONE,BLOCK,NONE(double)", DA(3, g, dist2, darg2, OC, MPI_DOUBLE), 0, 'T');
        int g3[3] = { 2 * P + 1, 3, 4 }, dist3[3] = { Y, N, Y }, darg3[3] = { 3, D, D };
        ADD("darray3 C CYCLIC(3),NONE,CYCLIC(int)", DA(3, g3, dist3, darg3, OC, MPI_INT), 0, 'T');
    }
    /* must fall back to a flattened list */
    {
        /* more blocks than the tree budget (DDIO_DESC_MAX_NODES / 4) */
        const int nb = 300000;
        int *bl = malloc(nb * sizeof(int));
        MPI_Aint *d = malloc(nb * sizeof(MPI_Aint));
        for (int i = 0; i < nb; i++) {
            bl[i] = 1 + (i % 7 == 3);
            d[i] = (MPI_Aint) i * 3 + (i % 5 == 1);
        }
        ADD("hindexed of 300000 blocks (over budget)", HIX(nb, bl, d, MPI_CHAR), 1, 'F');
        free(bl);
        free(d);
    }
    {
        int g[2] = { 2 * P + 1, 3 * P + 2 }, dist[2] = { B, Y }, darg[2] = { D, 2 };
        ADD("darray2 with romio_ddio_type_desc=disable", DA(2, g, dist, darg, OC, MPI_INT), 0, 'F');
        c[nc - 1].hint = "romio_ddio_type_desc=disable";
        c[nc - 1].mwant = 'F';
    }
    return nc;
}

/* ---- part 2: random cases --------------------------------------------------------------- */

typedef struct tinfo {
    MPI_Aint lb, ext, tlb, tub;
} tinfo;

static tinfo tinfo_of(MPI_Datatype t)
{
    tinfo i;
    MPI_Aint text;
    MPI_Type_get_extent(t, &i.lb, &i.ext);
    MPI_Type_get_true_extent(t, &i.tlb, &text);
    i.tub = i.tlb + text;
    return i;
}

static void note(tcase * c, const char *s)
{
    size_t n = strlen(c->name);
    snprintf(c->name + n, sizeof(c->name) - n, "%s ", s);
}

/* Random type with lb 0 whose data lie in [0, extent) in increasing order
 * (a valid filetype, tileable), nested up to depth; no zero counts (ROMIO's
 * ufs: loops on some), resized with lb 0 only (ROMIO misplaces others). */
static MPI_Datatype rgen(tcase * c, int depth, int file)
{
    static const MPI_Datatype base[] = { MPI_INT, MPI_DOUBLE, MPI_SHORT, MPI_CHAR };
    unsigned k = depth == 0 ? 0 : rnd(file ? 11 : 10);
    if (k == 0) {
        unsigned b = rnd(5);
        note(c, b < 4 ? "base" : "bytes");
        return b < 4 ? base[b] : contig(1 + (int) rnd(6), MPI_BYTE);
    }
    if (k == 8) {       /* struct: field i's data after field i-1's */
        int n = 2 + (int) rnd(2), bl[3];
        MPI_Aint d[3], end = 0;
        MPI_Datatype ty[3];
        note(c, "struct{");
        for (int i = 0; i < n; i++) {
            ty[i] = rgen(c, depth - 1, file);
            tinfo ti = tinfo_of(ty[i]);
            bl[i] = 1 + (int) rnd(2);
            d[i] = i == 0 ? 0 : end + (MPI_Aint) rnd(9);
            /* from the bounds, not the true ub: darray data differ per
             * rank, their bounds (and so every rank's displacements) do not */
            end = d[i] + ti.lb + (MPI_Aint) bl[i] * ti.ext;
        }
        note(c, "}");
        return ST(n, bl, d, ty);
    }
    MPI_Datatype ch = rgen(c, depth - 1, file);
    tinfo ci = tinfo_of(ch);
    int n = 1 + (int) rnd(4), bl = 1 + (int) rnd(3), bls[4], d[4];
    MPI_Aint hd[4], jit = 0;
    for (int i = 0, at = (int) rnd(3); i < n; i++) {
        bls[i] = 1 + (int) rnd(3);
        d[i] = at;
        jit += (MPI_Aint) rnd(5) * (i > 0);     /* growing: blocks stay in order */
        hd[i] = (MPI_Aint) at * ci.ext + jit;
        at += (k == 5 || k == 6 ? bl : bls[i]) + (int) rnd(3);
    }
    switch (k) {
    case 1:
        note(c, "contiguous");
        return C(n, ch);
    case 2:
        note(c, "vector");
        return V(n, bl, bl + (int) rnd(3), ch);
    case 3:
        note(c, "hvector");
        return HV(n, bl, (MPI_Aint) bl * ci.ext + (MPI_Aint) rnd(17), ch);
    case 4:
        note(c, "indexed");
        return IX(n, bls, d, ch);
    case 5:
        note(c, "indexed_block");
        return IB(n, bl, d, ch);
    case 6:
        note(c, "hindexed_block");
        return HIB(n, bl, hd, ch);
    case 7:
        note(c, "hindexed");
        return HIX(n, bls, hd, ch);
    case 9:
        note(c, "resized");
        return RS(0, ci.ext + 8 * (MPI_Aint) rnd(3), ch);
    default:
        if (k == 10 && ci.lb == 0) {
            int nd = 1 + (int) rnd(2), g[2], dist[2], darg[2], ps[2] = { 0, 0 };
            MPI_Dims_create(t_size, nd, ps);
            for (int i = 0; i < nd; i++) {
                unsigned w = rnd(3);
                dist[i] = w == 0 ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
                darg[i] = w == 2 ? 1 + (int) rnd(3) : MPI_DISTRIBUTE_DFLT_DARG;
                int blk = w == 2 ? darg[i] : 1;
                /* every rank gets data */
                g[i] = w == 0 ? ps[i] * (1 + (int) rnd(3)) : ps[i] * blk + (int) rnd(7);
            }
            note(c, nd == 1 ? "darray1" : "darray2");
            return DA(nd, g, dist, darg, rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, ch);
        }
        if (ci.lb != 0)
            return C(1, ch);
        int nd = 2 + (int) rnd(2), sz[3], sub[3], st[3];
        for (int i = 0; i < nd; i++) {
            sz[i] = 2 + (int) rnd(4);
            sub[i] = 1 + (int) rnd((unsigned) sz[i]);
            st[i] = (int) rnd((unsigned) (sz[i] - sub[i] + 1));
        }
        note(c, "subarray");
        return SUB(nd, sz, sub, st, rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, ch);
    }
}

/* a memory type: a random type, then maybe laid out backwards (negative
 * stride, decreasing displacements, fields out of address order)... */
static MPI_Datatype rmem_layout(tcase * c)
{
    MPI_Datatype x = rgen(c, 2, 0), y;
    tinfo xi = tinfo_of(x), yi;
    MPI_Aint s = xi.ext + 8 * (MPI_Aint) rnd(3);
    switch (rnd(5)) {
    case 0:
        note(c, "| backwards hvector");
        return HV(2 + (int) rnd(2), 1, -s, x);
    case 1: {
        MPI_Aint d[3] = { 2 * s, s, 0 };
        int bl[3] = { 1, 1, 1 };
        note(c, "| decreasing hindexed");
        return HIX(3, bl, d, x);
    }
    case 2: {
        note(c, "| struct out of order");
        y = rgen(c, 1, 0);
        yi = tinfo_of(y);
        int bl[2] = { 1, 1 };
        MPI_Aint d[2] = { yi.tub + (MPI_Aint) rnd(8), 0 };
        MPI_Datatype ty[2] = { x, y };
        return ST(2, bl, d, ty);
    }
    default:
        return x;
    }
}

/* ... under a resized with lb 0: ROMIO 4.0.2's flattening emits lb/ub
 * markers for the first resized it meets, and (h)indexed replication of a
 * child holding them loses the child's data (ufs: too), so that first one
 * is kept on top */
static MPI_Datatype rmem(tcase * c)
{
    MPI_Datatype t = rmem_layout(c);
    return RS(0, ext_of(t), t);
}

static int random_case(tcase * c)
{
    memset(c, 0, sizeof(*c));
    note(c, "file:");
    c->ft = rgen(c, 3, 1);
    note(c, "| mem:");
    c->mt = rnd(4) ? rmem(c) : MPI_BYTE;
    c->interleave = 1;
    tinfo fi = tinfo_of(c->ft), mi = tinfo_of(c->mt);
    MPI_Count fsz, msz;
    MPI_Type_size_x(c->ft, &fsz);
    MPI_Type_size_x(c->mt, &msz);
    long long bad = fi.lb != 0 || fi.ext <= 0 || fi.ext > (24 << 10) || fsz == 0 ||
        msz == 0 || mi.ext > (24 << 10), any, ext[2] = { fi.ext, -fi.ext };
    /* every rank must take the case (darray sizes differ), with the same
     * extent (ranks interleave by it) */
    MPI_Allreduce(MPI_IN_PLACE, ext, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    bad |= ext[0] != -ext[1];
    MPI_Allreduce(&bad, &any, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (any) {
        own(MPI_DATATYPE_NULL, c->ft);
        own(MPI_DATATYPE_NULL, c->mt);
    }
    return !any;
}

int main(int argc, char **argv)
{
    int nrandom = 60, opt, nc;
    uint64_t seed = 20240611;
    tcase *c = calloc(64, sizeof(*c));

    t_init(&argc, &argv);
    while ((opt = getopt(argc, argv, "n:s:v")) != -1) {
        if (opt == 'n')
            nrandom = atoi(optarg);
        else if (opt == 's')
            seed = strtoull(optarg, NULL, 0);
        else if (opt == 'v')
            verbose = 1;
        else
            T_FAIL("usage: t_typedesc [-n NRANDOM] [-s SEED] [-v] FILE");
    }
    T_ASSERT(optind < argc, "usage: t_typedesc [-n NRANDOM] [-s SEED] [-v] FILE");
    on_ddio = !strncmp(argv[optind], "ddio:", 5);
    MPI_Info hints = tm_hints();
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[optind], MPI_MODE_CREATE | MPI_MODE_RDWR, hints,
                        &fh));
    MPI_Info_free(&hints);

    nc = fixed_cases(c);
    for (int k = 0; k < nc; k++)
        run_case(&c[k], k);
    if (t_rank == 0)
        printf("%d fixed cases: file trees %d from types, %d flat; memory %d / %d\n", nc,
               n_type, n_flat, n_mtype, n_mflat);
    if (on_ddio)
        T_ASSERT(n_flat == 2, "%d fixed views took the flat path, want 2", n_flat);

    int ft0 = n_type, ff0 = n_flat, mt0 = n_mtype, mf0 = n_mflat, done = 0;
    rs = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int k = 0; done < nrandom && k < 20 * nrandom; k++) {
        if (!random_case(&c[0]))
            continue;
        if (verbose && t_rank == 0)
            printf("random %d: %s\n", done, c[0].name);
        run_case(&c[0], 1000 + done++);
    }
    int rt = n_type - ft0, rf = n_flat - ff0;
    if (t_rank == 0)
        printf("%d random cases (seed %llu): file trees %d from types, %d flat; memory %d / %d\n",
               done, (unsigned long long) seed, rt, rf, n_mtype - mt0, n_mflat - mf0);
    T_ASSERT(done == nrandom, "only %d random cases generated", done);
    /* most random types are ROMIO-safe: the type path must take them */
    if (on_ddio)
        T_ASSERT(rt >= 3 * (rt + rf) / 4, "only %d of %d random views took the type path", rt,
                 rt + rf);
    T_MPI(MPI_File_close(&fh));
    free(c);
    return t_finish();
}
