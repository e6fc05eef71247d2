/* Two models of which bytes a file view and a memory type select.
 *
 * The tm_* functions keep a whole file, identical on every rank, with MPI's
 * own datatype engine (MPI_Pack / MPI_Unpack: MPICH's typerep, not ROMIO's
 * flattening nor the ddio descriptor) as the reference:
 *   the stream of count x type at buf   = MPI_Pack(buf, count, type)
 *   stream byte s of view (disp, ft)    = the byte MPI_Unpack(stream, ft)
 *                                         puts at file offset disp + ...
 * Used by t_coll and t_desc.
 *
 * The tr_* functions (recipes, below) are independent of MPI's engine: a
 * datatype is written as a recipe (text, or a tree the test draws), the
 * MPI type is built from it, and its type map is computed here from the
 * constructors' definitions in the MPI standard. Used by t_prop. */
#ifndef DDIO_TMODEL_H
#define DDIO_TMODEL_H
#include <stdarg.h>
#include <stddef.h>
#include "tutil.h"

typedef struct t_model {
    unsigned char *b;
    MPI_Offset len;             /* file size implied by the writes so far */
    MPI_Offset cap;             /* bytes modelled: every view must fit */
} t_model;

__attribute__((unused)) static void tm_init(t_model * m, MPI_Offset cap)
{
    m->b = calloc(1, (size_t) cap);
    m->len = 0;
    m->cap = cap;
    T_ASSERT(m->b, "model: out of memory");
}

static MPI_Offset tm_ftsize(MPI_Datatype ft)
{
    MPI_Count sz;
    MPI_Type_size_x(ft, &sz);
    return (MPI_Offset) sz;
}

/* the whole tiles of ft covering view bytes [0, end), unpacked from
 * `stream` (tiles * size bytes) into out (cap bytes) at disp */
static void tm_unpack_tiles(MPI_Offset disp, MPI_Datatype ft, MPI_Offset end,
                            const unsigned char *stream, unsigned char *out, MPI_Offset cap)
{
    MPI_Offset fts = tm_ftsize(ft), tiles = (end + fts - 1) / fts;
    MPI_Aint lb, ext;
    int pos = 0;
    MPI_Type_get_extent(ft, &lb, &ext);
    T_ASSERT(disp + lb + tiles * ext <= cap, "model: view reaches %lld > %lld",
             (long long) (disp + lb + tiles * ext), (long long) cap);
    T_ASSERT(tiles * fts < INT32_MAX, "model: view too large");
    MPI_Unpack(stream, (int) (tiles * fts), &pos, out + disp, (int) tiles, ft, MPI_COMM_SELF);
}

/* image of the stream s[0..n), placed from view byte `start`: img gets the
 * bytes, msk 0xff where they land (both cap bytes, zeroed by the caller) */
static void tm_view_image(MPI_Offset disp, MPI_Datatype ft, MPI_Offset start,
                          const unsigned char *s, MPI_Offset n, unsigned char *img,
                          unsigned char *msk, MPI_Offset cap)
{
    MPI_Offset fts = tm_ftsize(ft), end = start + n, tiles = (end + fts - 1) / fts;
    unsigned char *d = calloc(1, (size_t) (tiles * fts + 1));
    unsigned char *o = calloc(1, (size_t) (tiles * fts + 1));
    unsigned char *t = calloc(1, (size_t) cap);
    T_ASSERT(d && o && t, "model: out of memory");
    memcpy(d + start, s, (size_t) n);
    memset(o + start, 0xff, (size_t) n);
    tm_unpack_tiles(disp, ft, end, o, msk, cap);
    tm_unpack_tiles(disp, ft, end, d, t, cap);
    for (MPI_Offset i = 0; i < cap; i++)
        if (msk[i])
            img[i] = t[i];
    free(d);
    free(o);
    free(t);
}

/* collective over comm: every rank wrote its stream s[0..n) at view byte
 * `start` of its view (disp, ft); the writes must not overlap */
__attribute__((unused)) static void tm_write(t_model * m, MPI_Comm comm, MPI_Offset disp,
                                             MPI_Datatype ft, MPI_Offset start,
                                             const unsigned char *s, MPI_Offset n)
{
    unsigned char *img = calloc(1, (size_t) m->cap), *msk = calloc(1, (size_t) m->cap);
    T_ASSERT(img && msk, "model: out of memory");
    if (n > 0)
        tm_view_image(disp, ft, start, s, n, img, msk, m->cap);
    for (MPI_Offset i = 0; i < m->cap; i++)
        msk[i] = msk[i] != 0;
    MPI_Allreduce(MPI_IN_PLACE, img, (int) m->cap, MPI_BYTE, MPI_BOR, comm);
    MPI_Allreduce(MPI_IN_PLACE, msk, (int) m->cap, MPI_UNSIGNED_CHAR, MPI_SUM, comm);
    for (MPI_Offset i = 0; i < m->cap; i++)
        T_ASSERT(msk[i] <= 1, "model: %u ranks write byte %lld (overlapping views)", msk[i],
                 (long long) i);
    for (MPI_Offset i = 0; i < m->cap; i++)
        if (msk[i]) {
            m->b[i] = img[i];
            if (i + 1 > m->len)
                m->len = i + 1;
        }
    free(img);
    free(msk);
}

/* the n bytes a read from view byte `start` returns, ignoring end of file */
__attribute__((unused)) static void tm_read(const t_model * m, MPI_Offset disp, MPI_Datatype ft,
                                            MPI_Offset start, unsigned char *s, MPI_Offset n)
{
    if (n == 0)
        return;
    MPI_Offset fts = tm_ftsize(ft), tiles = (start + n + fts - 1) / fts;
    MPI_Aint lb, ext;
    int pos = 0;
    unsigned char *t = malloc((size_t) (tiles * fts + 1));
    MPI_Type_get_extent(ft, &lb, &ext);
    T_ASSERT(t && disp + lb + tiles * ext <= m->cap, "model: read outside the model");
    MPI_Pack(m->b + disp, (int) tiles, ft, t, (int) (tiles * fts), &pos, MPI_COMM_SELF);
    memcpy(s, t + start, (size_t) n);
    free(t);
}

/* how many of the view bytes [start, start + n) lie below file offset size */
__attribute__((unused)) static MPI_Offset tm_below(MPI_Offset cap, MPI_Offset disp,
                                                   MPI_Datatype ft, MPI_Offset start,
                                                   MPI_Offset n, MPI_Offset size)
{
    unsigned char *img = calloc(1, (size_t) cap), *msk = calloc(1, (size_t) cap);
    unsigned char *s = calloc(1, (size_t) n + 1);
    MPI_Offset c = 0;
    if (n > 0)
        tm_view_image(disp, ft, start, s, n, img, msk, cap);
    for (MPI_Offset i = 0; i < size && i < cap; i++)
        c += msk[i] != 0;
    free(img);
    free(msk);
    free(s);
    return c;
}

/* bytes spanned by count x t from the buffer start (types with lb >= 0) */
__attribute__((unused)) static size_t tm_span(int count, MPI_Datatype t)
{
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    T_ASSERT(tlb >= 0, "memory type with negative true lb");
    if (count == 0)
        return 1;
    return (size_t) (tlb + (MPI_Aint) (count - 1) * ext + text);
}

/* the stream of count x t at buf (malloc'd), *n its length */
__attribute__((unused)) static unsigned char *tm_pack(const void *buf, int count,
                                                      MPI_Datatype t, MPI_Offset * n)
{
    MPI_Count sz;
    int pos = 0;
    MPI_Type_size_x(t, &sz);
    *n = (MPI_Offset) sz * count;
    unsigned char *s = malloc((size_t) *n + 1);
    T_ASSERT(s, "model: out of memory");
    if (*n)
        MPI_Pack(buf, count, t, s, (int) *n, &pos, MPI_COMM_SELF);
    return s;
}

/* scatter the stream into buf as count x t would lay it out */
__attribute__((unused)) static void tm_unpack(const unsigned char *s, MPI_Offset n, void *buf,
                                              int count, MPI_Datatype t)
{
    int pos = 0;
    if (n)
        MPI_Unpack(s, (int) n, &pos, buf, count, t, MPI_COMM_SELF);
}

/* fill n bytes with the pattern (seed, base + i) */
__attribute__((unused)) static void tm_fill(unsigned char *p, size_t n, uint64_t seed,
                                            uint64_t base)
{
    for (size_t i = 0; i < n; i++)
        p[i] = t_byte(seed, base + i);
}

/* first differing byte of a and b (n bytes), -1 if equal */
__attribute__((unused)) static long tm_diff(const unsigned char *a, const unsigned char *b,
                                            size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return (long) i;
    return -1;
}

/* ufs: only, before writing through views with holes: zeros over [lo, hi).
 * ROMIO's data sieving and two-phase read-modify-write on ufs: write back
 * whatever their buffer held for the holes of a range past the end of file
 * (e.g. 0xff), so holes are not zeros there. ddio leaves real holes, which
 * read as zeros; with this, both files compare equal byte for byte. */
__attribute__((unused)) static void tm_prefill(MPI_File fh, MPI_Offset lo, MPI_Offset hi)
{
    MPI_Offset per = (hi - lo + t_size - 1) / t_size, a = lo + per * t_rank;
    MPI_Offset n = a < hi ? (hi - a < per ? hi - a : per) : 0;
    unsigned char *z = calloc(1, (size_t) n + 1);
    T_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    T_MPI(MPI_File_write_at_all(fh, a, z, (int) n, MPI_BYTE, MPI_STATUS_IGNORE));
    free(z);
}

/* ---- recipes: datatypes as data, their type maps computed here ----------
 *
 * A recipe is a datatype written as text, every constructor's old type
 * last, e.g. (the first of t_prop's fixed cases)
 *   indexed(3,[1@0 0@1 1@3],vector(3,3,4,DOUBLE)) ->resized(0,356)
 *     | darray(C,[g=29 p=4 CYCLIC(3)])
 * Grammar (spaces between tokens are ignored, a block list's entries are
 * separated by spaces or commas):
 *   type   := prim { "->resized(" LB "," EXTENT ")" | "|" array }
 *   array  := "darray(" ORD ",[" ddim { "," ddim } "])"   (this rank's)
 *           | "subarray(" ORD ",[" sdim { sdim } "])"
 *   ddim   := "g=" GSIZE "p=" PSIZE DIST     DIST := BLOCK | BLOCK(k) |
 *                                           CYCLIC | CYCLIC(k) | NONE
 *   sdim   := SIZE ":" SUBSIZE "@" START     ORD := C | F
 *   prim   := NAME | "(" type ")"
 *           | "contig(" N "," type ")"
 *           | "vector(" N "," BL "," STRIDE "," type ")"      (in extents)
 *           | "hvector(" N "," BL "," BYTES "," type ")"
 *           | "indexed(" N ",[" BL "@" DISP ... "]," type ")"  (in extents)
 *           | "hindexed(" N ",[" BL "@" BYTES ... "]," type ")"
 *           | "iblock(" N "," BL ",[" DISP ... "]," type ")"   (in extents)
 *           | "hiblock(" N "," BL ",[" BYTES ... "]," type ")"
 *           | "struct(" N ",[" BL "@" BYTES ":" type ... "])"
 *           | "resized(" LB "," EXTENT "," type ")"
 *   NAME   := BYTE | CHAR | SHORT | INT | FLOAT | DOUBLE | LONG | SHORT_INT |
 *             DOUBLE_INT
 *
 * tr_make() builds the MPI type and, beside it and without asking MPI, the
 * type map: the basic elements (displacement, size) in type-map order, by
 * each constructor's definition in the MPI standard (darray by its
 * cyclic() definition, with the process grid in row-major order). Only
 * the lower bound and extent of a constructor are compared with MPI's,
 * because MPI libraries differ there where the standard leaves room or
 * was reworded (a struct's alignment padding; explicit bounds of a resized
 * part against the bounds of its siblings), and where a library departs
 * from it (MPICH 4.0.2 gives an indexed_block of block length 0 the bounds
 * of its displacements, where the standard says a zero length has no
 * effect on them): the model computes them as the standard and MPICH's
 * code do (a block's bounds from its old type's bounds, a struct's extent
 * rounded up to its largest alignment); where MPI's differ the model takes
 * MPI's and counts it (tr_adopted), so the copies of a part are placed
 * where the library places them, and everything else follows from the
 * constructors alone. */

enum { TR_NAMED, TR_CONTIG, TR_VECTOR, TR_HVECTOR, TR_INDEXED, TR_HINDEXED, TR_IBLOCK,
    TR_HIBLOCK, TR_STRUCT, TR_RESIZED, TR_SUBARRAY, TR_DARRAY };
enum { TR_BLOCK, TR_CYCLIC, TR_NONE };
#define TR_DFLT (-1)            /* darray: MPI_DISTRIBUTE_DFLT_DARG */
#define TR_MAXD 3               /* array dimensions */
#define TR_MAX_ELEMS (1 << 22)  /* basic elements in one type map */

typedef struct tr_node {
    int kind, n, bl, named, order, nd;
    MPI_Aint st, lb, ext;       /* (h)vector stride; resized bounds */
    int *bls;                   /* (h)indexed, struct: n block lengths */
    MPI_Aint *ds;               /* displacements: n */
    struct tr_node **ch;        /* old type: 1, or n (struct) */
    int a[TR_MAXD], b[TR_MAXD], c[TR_MAXD], p[TR_MAXD];
    /* subarray: sizes, subsizes, starts; darray: gsizes, distribs, dargs, psizes */
} tr_node;

static const char *const tr_name_s[] = { "BYTE", "CHAR", "SHORT", "INT", "FLOAT", "DOUBLE",
    "LONG", "SHORT_INT", "DOUBLE_INT"
};

/* the pair types: C structs by the standard's definition (MPI 4.0 6.9.4) */
struct tr_short_int {
    short a;
    int b;
};
struct tr_double_int {
    double a;
    int b;
};

#define TR_NNAMES ((int) (sizeof(tr_name_s) / sizeof(tr_name_s[0])))

__attribute__((unused)) static MPI_Datatype tr_named_type(int i)
{
    switch (i) {
    case 0: return MPI_BYTE;
    case 1: return MPI_CHAR;
    case 2: return MPI_SHORT;
    case 3: return MPI_INT;
    case 4: return MPI_FLOAT;
    case 5: return MPI_DOUBLE;
    case 6: return MPI_LONG;
    case 7: return MPI_SHORT_INT;
    default: return MPI_DOUBLE_INT;
    }
}

/* the extent of a named type (the basic ones: their size) */
static int tr_named_size(int i)
{
    static const int sz[] = { 1, 1, (int) sizeof(short), (int) sizeof(int), (int) sizeof(float),
        (int) sizeof(double), (int) sizeof(long), (int) sizeof(struct tr_short_int),
        (int) sizeof(struct tr_double_int)
    };
    return sz[i];
}

static tr_node *tr_new(int kind, int n, tr_node * child)
{
    tr_node *t = calloc(1, sizeof(*t));
    T_ASSERT(t, "recipe: out of memory");
    t->kind = kind;
    t->n = n;
    if (kind != TR_NAMED && kind != TR_STRUCT) {
        t->ch = calloc(1, sizeof(*t->ch));
        T_ASSERT(t->ch, "recipe: out of memory");
        t->ch[0] = child;
    }
    return t;
}

static void tr_alloc_blocks(tr_node * t, int n, int with_bls)
{
    t->ds = calloc((size_t) n + 1, sizeof(*t->ds));
    t->bls = with_bls ? calloc((size_t) n + 1, sizeof(*t->bls)) : NULL;
    T_ASSERT(t->ds && (!with_bls || t->bls), "recipe: out of memory");
}

__attribute__((unused)) static void tr_free(tr_node * t)
{
    if (!t)
        return;
    int nch = t->kind == TR_STRUCT ? t->n : t->kind == TR_NAMED ? 0 : 1;
    for (int i = 0; i < nch; i++)
        tr_free(t->ch[i]);
    free(t->ch);
    free(t->bls);
    free(t->ds);
    free(t);
}

/* constructors of recipes (each takes ownership of its old types) */
__attribute__((unused)) static tr_node *tr_named(int i)
{
    tr_node *t = tr_new(TR_NAMED, 0, NULL);
    t->named = i;
    return t;
}

__attribute__((unused)) static tr_node *tr_contig(int n, tr_node * c)
{
    return tr_new(TR_CONTIG, n, c);
}

/* vector (hv 0: stride in extents) or hvector (hv 1: bytes) */
__attribute__((unused)) static tr_node *tr_vector(int hv, int n, int bl, MPI_Aint st, tr_node * c)
{
    tr_node *t = tr_new(hv ? TR_HVECTOR : TR_VECTOR, n, c);
    t->bl = bl;
    t->st = st;
    return t;
}

/* indexed / hindexed (bls[i] at ds[i]); iblock / hiblock (bl at each ds[i]) */
__attribute__((unused)) static tr_node *tr_indexed(int kind, int n, const int *bls, int bl,
                                                   const MPI_Aint * ds, tr_node * c)
{
    tr_node *t = tr_new(kind, n, c);
    int blockform = kind == TR_IBLOCK || kind == TR_HIBLOCK;
    tr_alloc_blocks(t, n, !blockform);
    t->bl = bl;
    for (int i = 0; i < n; i++) {
        t->ds[i] = ds[i];
        if (!blockform)
            t->bls[i] = bls[i];
    }
    return t;
}

__attribute__((unused)) static tr_node *tr_struct(int n, const int *bls, const MPI_Aint * ds,
                                                  tr_node ** cs)
{
    tr_node *t = tr_new(TR_STRUCT, n, NULL);
    tr_alloc_blocks(t, n, 1);
    t->ch = calloc((size_t) n + 1, sizeof(*t->ch));
    T_ASSERT(t->ch, "recipe: out of memory");
    for (int i = 0; i < n; i++) {
        t->bls[i] = bls[i];
        t->ds[i] = ds[i];
        t->ch[i] = cs[i];
    }
    return t;
}

__attribute__((unused)) static tr_node *tr_resized(MPI_Aint lb, MPI_Aint ext, tr_node * c)
{
    tr_node *t = tr_new(TR_RESIZED, 0, c);
    t->lb = lb;
    t->ext = ext;
    return t;
}

/* order 1: C, 0: Fortran */
__attribute__((unused)) static tr_node *tr_subarray(int order, int nd, const int *sizes,
                                                    const int *subs, const int *starts,
                                                    tr_node * c)
{
    tr_node *t = tr_new(TR_SUBARRAY, 0, c);
    t->order = order;
    t->nd = nd;
    for (int i = 0; i < nd; i++) {
        t->a[i] = sizes[i];
        t->b[i] = subs[i];
        t->c[i] = starts[i];
    }
    return t;
}

/* dist[i]: TR_BLOCK / TR_CYCLIC / TR_NONE; darg[i]: TR_DFLT or k */
__attribute__((unused)) static tr_node *tr_darray(int order, int nd, const int *g,
                                                  const int *dist, const int *darg,
                                                  const int *ps, tr_node * c)
{
    tr_node *t = tr_new(TR_DARRAY, 0, c);
    t->order = order;
    t->nd = nd;
    for (int i = 0; i < nd; i++) {
        t->a[i] = g[i];
        t->b[i] = dist[i];
        t->c[i] = darg[i];
        t->p[i] = ps[i];
    }
    return t;
}

/* ---- text ---- */

typedef struct tr_buf {
    char *s;
    size_t n, cap;
} tr_buf;

static void tr_put(tr_buf * b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tr_put(tr_buf * b, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        T_ASSERT(k >= 0, "recipe: vsnprintf");
        if (b->s && b->n + (size_t) k < b->cap) {
            b->n += (size_t) k;
            return;
        }
        b->cap = 2 * (b->cap + (size_t) k + 64);
        b->s = realloc(b->s, b->cap);
        T_ASSERT(b->s, "recipe: out of memory");
    }
}

static void tr_text(tr_buf * b, const tr_node * t)
{
    static const char *const kn[] = { "", "contig", "vector", "hvector", "indexed", "hindexed",
        "iblock", "hiblock"
    };
    switch (t->kind) {
    case TR_NAMED:
        tr_put(b, "%s", tr_name_s[t->named]);
        return;
    case TR_CONTIG:
        tr_put(b, "contig(%d,", t->n);
        break;
    case TR_VECTOR:
    case TR_HVECTOR:
        tr_put(b, "%s(%d,%d,%ld,", kn[t->kind], t->n, t->bl, (long) t->st);
        break;
    case TR_INDEXED:
    case TR_HINDEXED:
        tr_put(b, "%s(%d,[", kn[t->kind], t->n);
        for (int i = 0; i < t->n; i++)
            tr_put(b, "%s%d@%ld", i ? " " : "", t->bls[i], (long) t->ds[i]);
        tr_put(b, "],");
        break;
    case TR_IBLOCK:
    case TR_HIBLOCK:
        tr_put(b, "%s(%d,%d,[", kn[t->kind], t->n, t->bl);
        for (int i = 0; i < t->n; i++)
            tr_put(b, "%s%ld", i ? " " : "", (long) t->ds[i]);
        tr_put(b, "],");
        break;
    case TR_STRUCT:
        tr_put(b, "struct(%d,[", t->n);
        for (int i = 0; i < t->n; i++) {
            tr_put(b, "%s%d@%ld:", i ? ", " : "", t->bls[i], (long) t->ds[i]);
            tr_text(b, t->ch[i]);
        }
        tr_put(b, "])");
        return;
    case TR_RESIZED:
        tr_text(b, t->ch[0]);
        tr_put(b, " ->resized(%ld,%ld)", (long) t->lb, (long) t->ext);
        return;
    case TR_SUBARRAY:
        tr_text(b, t->ch[0]);
        tr_put(b, " | subarray(%s,[", t->order ? "C" : "F");
        for (int i = 0; i < t->nd; i++)
            tr_put(b, "%s%d:%d@%d", i ? " " : "", t->a[i], t->b[i], t->c[i]);
        tr_put(b, "])");
        return;
    case TR_DARRAY:
        tr_text(b, t->ch[0]);
        tr_put(b, " | darray(%s,[", t->order ? "C" : "F");
        for (int i = 0; i < t->nd; i++) {
            static const char *const dn[] = { "BLOCK", "CYCLIC", "NONE" };
            tr_put(b, "%sg=%d p=%d %s", i ? ", " : "", t->a[i], t->p[i], dn[t->b[i]]);
            if (t->b[i] != TR_NONE && t->c[i] != TR_DFLT)
                tr_put(b, "(%d)", t->c[i]);
        }
        tr_put(b, "])");
        return;
    }
    tr_text(b, t->ch[0]);
    tr_put(b, ")");
}

/* the recipe as text (malloc'd) */
__attribute__((unused)) static char *tr_str(const tr_node * t)
{
    tr_buf b = { 0 };
    tr_text(&b, t);
    return b.s;
}

typedef struct tr_in {
    const char *s;
    char err[160];
} tr_in;

static void tr_ws(tr_in * in)
{
    while (*in->s == ' ' || *in->s == '\t' || *in->s == '\n')
        in->s++;
}

static int tr_fail(tr_in * in, const char *what)
{
    if (!in->err[0])
        snprintf(in->err, sizeof(in->err), "%s at \"%.40s\"", what, in->s);
    return -1;
}

static int tr_lit(tr_in * in, const char *lit)
{
    tr_ws(in);
    size_t n = strlen(lit);
    if (strncmp(in->s, lit, n) != 0)
        return -1;
    in->s += n;
    return 0;
}

static int tr_expect(tr_in * in, const char *lit)
{
    return tr_lit(in, lit) ? tr_fail(in, lit[0] == ',' ? "',' expected" : lit[0] == ')' ?
                                     "')' expected" : lit[0] == '[' ? "'[' expected" :
                                     lit[0] == ']' ? "']' expected" : "syntax error") : 0;
}

static int tr_num(tr_in * in, long *v)
{
    char *e;
    tr_ws(in);
    *v = strtol(in->s, &e, 10);
    if (e == in->s)
        return tr_fail(in, "number expected");
    in->s = e;
    return 0;
}

/* a list separator: spaces or one comma; 1 if the list goes on */
static int tr_more(tr_in * in, char close)
{
    tr_ws(in);
    if (*in->s == ',')
        in->s++;
    tr_ws(in);
    return *in->s && *in->s != close;
}

static tr_node *tr_type(tr_in * in);

static tr_node *tr_prim(tr_in * in)
{
    static const char *const kw[] = { "contig(", "vector(", "hvector(", "indexed(",
        "hindexed(", "iblock(", "hiblock(", "struct(", "resized(", "("
    };
    static const int kk[] = { TR_CONTIG, TR_VECTOR, TR_HVECTOR, TR_INDEXED, TR_HINDEXED,
        TR_IBLOCK, TR_HIBLOCK, TR_STRUCT, TR_RESIZED, -1
    };
    long n = 0, bl = 0, st = 0, v;
    int k = -2;
    tr_ws(in);
    for (int i = 0; i < TR_NNAMES; i++) {
        size_t m = strlen(tr_name_s[i]);
        if (!strncmp(in->s, tr_name_s[i], m) && !(in->s[m] >= 'A' && in->s[m] <= 'Z') &&
            in->s[m] != '_') {
            in->s += m;
            return tr_named(i);
        }
    }
    for (int i = 0; i < (int) (sizeof(kw) / sizeof(kw[0])) && k == -2; i++)
        if (!tr_lit(in, kw[i]))
            k = kk[i];
    if (k == -2) {
        tr_fail(in, "a type expected");
        return NULL;
    }
    if (k == -1) {
        tr_node *t = tr_type(in);
        if (t && tr_expect(in, ")")) {
            tr_free(t);
            return NULL;
        }
        return t;
    }
    if (k == TR_RESIZED) {
        long lb, ext;
        if (tr_num(in, &lb) || tr_expect(in, ",") || tr_num(in, &ext) || tr_expect(in, ","))
            return NULL;
        tr_node *c = tr_type(in);
        if (!c || tr_expect(in, ")")) {
            tr_free(c);
            return NULL;
        }
        return tr_resized(lb, ext, c);
    }
    if (tr_num(in, &n) || tr_expect(in, ",") || n < 0 || n > 1 << 20)
        return tr_fail(in, "a count 0..2^20 expected"), NULL;
    if (k == TR_VECTOR || k == TR_HVECTOR) {
        if (tr_num(in, &bl) || tr_expect(in, ",") || tr_num(in, &st) || tr_expect(in, ","))
            return NULL;
    }
    if (k == TR_IBLOCK || k == TR_HIBLOCK)
        if (tr_num(in, &bl) || tr_expect(in, ","))
            return NULL;
    int *bls = calloc((size_t) n + 1, sizeof(int));
    MPI_Aint *ds = calloc((size_t) n + 1, sizeof(MPI_Aint));
    tr_node **cs = calloc((size_t) n + 1, sizeof(tr_node *));
    tr_node *t = NULL;
    int ok = bls && ds && cs;
    if (ok && k >= TR_INDEXED && k <= TR_STRUCT) {
        ok = !tr_expect(in, "[");
        for (long i = 0; ok && i < n; i++) {
            if (k == TR_IBLOCK || k == TR_HIBLOCK)
                ok = !tr_num(in, &v);
            else {
                long b;
                ok = !tr_num(in, &b) && !tr_expect(in, "@") && !tr_num(in, &v);
                bls[i] = (int) b;
            }
            ds[i] = v;
            if (ok && k == TR_STRUCT)
                ok = !tr_expect(in, ":") && (cs[i] = tr_type(in)) != NULL;
            if (ok && i + 1 < n && !tr_more(in, ']'))
                ok = tr_fail(in, "fewer blocks than the count") == 0;
        }
        ok = ok && !tr_expect(in, "]");
        if (ok && k != TR_STRUCT)
            ok = !tr_expect(in, ",");
    }
    tr_node *c = ok && k != TR_STRUCT ? tr_type(in) : NULL;
    ok = ok && (k == TR_STRUCT || c) && !tr_expect(in, ")");
    if (ok) {
        if (k == TR_CONTIG)
            t = tr_contig((int) n, c);
        else if (k == TR_VECTOR || k == TR_HVECTOR)
            t = tr_vector(k == TR_HVECTOR, (int) n, (int) bl, st, c);
        else if (k == TR_STRUCT)
            t = tr_struct((int) n, bls, ds, cs);
        else
            t = tr_indexed(k, (int) n, bls, (int) bl, ds, c);
    } else {
        tr_free(c);
        for (long i = 0; cs && i < n; i++)
            tr_free(cs[i]);
    }
    free(bls);
    free(ds);
    free(cs);
    return t;
}

/* "| darray(...)" / "| subarray(...)" over c (consumed) */
static tr_node *tr_array(tr_in * in, tr_node * c)
{
    int darray = !tr_lit(in, "darray("), nd = 0, a[TR_MAXD], b[TR_MAXD], cc[TR_MAXD],
        p[TR_MAXD], order;
    long v;
    if (!darray && tr_lit(in, "subarray(")) {
        tr_fail(in, "darray( or subarray( expected after '|'");
        return tr_free(c), NULL;
    }
    tr_ws(in);
    if (*in->s != 'C' && *in->s != 'F') {
        tr_fail(in, "C or F expected");
        return tr_free(c), NULL;
    }
    order = *in->s++ == 'C';
    if (tr_expect(in, ",") || tr_expect(in, "["))
        return tr_free(c), NULL;
    do {
        if (nd == TR_MAXD) {
            tr_fail(in, "more than 3 dimensions");
            return tr_free(c), NULL;
        }
        if (darray) {
            if (tr_expect(in, "g=") || tr_num(in, &v))
                return tr_free(c), NULL;
            a[nd] = (int) v;
            if (tr_expect(in, "p=") || tr_num(in, &v))
                return tr_free(c), NULL;
            p[nd] = (int) v;
            cc[nd] = TR_DFLT;
            if (!tr_lit(in, "BLOCK"))
                b[nd] = TR_BLOCK;
            else if (!tr_lit(in, "CYCLIC"))
                b[nd] = TR_CYCLIC;
            else if (!tr_lit(in, "NONE"))
                b[nd] = TR_NONE;
            else {
                tr_fail(in, "BLOCK, CYCLIC or NONE expected");
                return tr_free(c), NULL;
            }
            if (b[nd] != TR_NONE && !tr_lit(in, "(")) {
                if (tr_num(in, &v) || tr_expect(in, ")"))
                    return tr_free(c), NULL;
                cc[nd] = (int) v;
            }
        } else {
            if (tr_num(in, &v))
                return tr_free(c), NULL;
            a[nd] = (int) v;
            if (tr_expect(in, ":") || tr_num(in, &v))
                return tr_free(c), NULL;
            b[nd] = (int) v;
            if (tr_expect(in, "@") || tr_num(in, &v))
                return tr_free(c), NULL;
            cc[nd] = (int) v;
        }
        nd++;
    } while (tr_more(in, ']'));
    if (tr_expect(in, "]") || tr_expect(in, ")"))
        return tr_free(c), NULL;
    return darray ? tr_darray(order, nd, a, b, cc, p, c) : tr_subarray(order, nd, a, b, cc, c);
}

static tr_node *tr_type(tr_in * in)
{
    tr_node *t = tr_prim(in);
    while (t) {
        long lb, ext;
        if (!tr_lit(in, "->")) {
            if (tr_expect(in, "resized(") || tr_num(in, &lb) || tr_expect(in, ",") ||
                tr_num(in, &ext) || tr_expect(in, ")"))
                return tr_free(t), NULL;
            t = tr_resized(lb, ext, t);
        } else if (!tr_lit(in, "|"))
            t = tr_array(in, t);
        else
            break;
    }
    return t;
}

/* a recipe from *s (advanced past it), or NULL with err (160 bytes) set */
__attribute__((unused)) static tr_node *tr_parse(const char **s, char *err)
{
    tr_in in = {.s = *s };
    tr_node *t = tr_type(&in);
    *s = in.s;
    snprintf(err, 160, "%s", t ? "" : in.err[0] ? in.err : "syntax error");
    return t;
}

/* ---- the MPI type and the type map ---- */

typedef struct tr_map {
    int64_t *d;                 /* element displacements, type-map order */
    int32_t *l;                 /* element sizes */
    size_t n, cap;
    int64_t lb, ub;
    int align;                  /* the largest alignment of a basic element */
} tr_map;

static int tr_adopted;          /* bounds taken from MPI (see above) */

__attribute__((unused)) static void tr_map_free(tr_map * m)
{
    free(m->d);
    free(m->l);
    memset(m, 0, sizeof(*m));
}

static void tr_map_push(tr_map * m, int64_t d, int32_t l)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        T_ASSERT(m->cap <= TR_MAX_ELEMS, "model: more than %d elements in a type map",
                 TR_MAX_ELEMS);
        m->d = realloc(m->d, m->cap * sizeof(*m->d));
        m->l = realloc(m->l, m->cap * sizeof(*m->l));
        T_ASSERT(m->d && m->l, "model: out of memory");
    }
    m->d[m->n] = d;
    m->l[m->n++] = l;
}

/* bl copies of c, the j-th at off + j * extent(c), appended to m; the
 * block's bounds folded into (*lo, *hi) (*any: bounds seen) */
static void tr_block(tr_map * m, const tr_map * c, int64_t off, int64_t bl, int64_t *lo,
                     int64_t *hi, int *any)
{
    int64_t ext = c->ub - c->lb;
    if (bl <= 0)
        return;
    for (int64_t j = 0; j < bl; j++)
        for (size_t i = 0; i < c->n; i++)
            tr_map_push(m, off + j * ext + c->d[i], c->l[i]);
    int64_t blo = off + c->lb + (ext < 0 ? (bl - 1) * ext : 0);
    int64_t bhi = off + c->ub + (ext > 0 ? (bl - 1) * ext : 0);
    if (!*any || blo < *lo)
        *lo = blo;
    if (!*any || bhi > *hi)
        *hi = bhi;
    *any = 1;
}

/* this rank's global indices in one darray dimension, ascending; count */
static int tr_dim_indices(int g, int dist, int darg, int psize, int coord, int *out)
{
    int n = 0;
    if (dist == TR_NONE) {
        for (int i = 0; i < g; i++)
            out[n++] = i;
        return n;
    }
    if (dist == TR_BLOCK) {
        int b = darg == TR_DFLT ? (g + psize - 1) / psize : darg;
        for (int i = coord * b; i < (coord + 1) * b && i < g; i++)
            out[n++] = i;
        return n;
    }
    int b = darg == TR_DFLT ? 1 : darg;
    for (int s = coord * b; s < g; s += psize * b)
        for (int i = s; i < s + b && i < g; i++)
            out[n++] = i;
    return n;
}

/* elements of c at the positions (in the order) of an nd-dimensional
 * selection of an array of `sizes` (idx[k][0..cnt[k]) per dimension,
 * order 1: C, the last dimension fastest) */
static void tr_select(tr_map * m, const tr_map * c, int order, int nd, const int *sizes,
                      int *const *idx, const int *cnt)
{
    int64_t stride[TR_MAXD], ext = c->ub - c->lb, lo = 0, hi = 0;
    int pos[TR_MAXD] = { 0 }, any = 0;
    for (int k = 0; k < nd; k++)
        if (!cnt[k])
            return;
    for (int k = 0; k < nd; k++) {
        int kk = order ? nd - 1 - k : k;        /* fastest first */
        stride[kk] = k == 0 ? 1 : stride[order ? kk + 1 : kk - 1] * sizes[order ? kk + 1 : kk - 1];
    }
    for (;;) {
        int64_t lin = 0;
        for (int k = 0; k < nd; k++)
            lin += (int64_t) idx[k][pos[k]] * stride[k];
        tr_block(m, c, lin * ext, 1, &lo, &hi, &any);
        int k = order ? nd - 1 : 0;     /* the fastest dimension */
        for (;;) {
            if (++pos[k] < cnt[k])
                break;
            pos[k] = 0;
            k += order ? -1 : 1;
            if (k < 0 || k >= nd)
                return;
        }
    }
}

static int tr_align_of(int named)
{
    return named == 7 ? (int) _Alignof(struct tr_short_int) :
        named == 8 ? (int) _Alignof(struct tr_double_int) : tr_named_size(named);
}

/* Build t's MPI type (not committed) and its type map, for rank `rank` of
 * `size` (darray). */
static MPI_Datatype tr_make1(const tr_node * t, int rank, int size, tr_map * m)
{
    MPI_Datatype r = MPI_DATATYPE_NULL, *ct = NULL;
    tr_map *cm = NULL;
    int nch = t->kind == TR_STRUCT ? t->n : t->kind == TR_NAMED ? 0 : 1;
    int64_t lo = 0, hi = 0;
    int any = 0;

    memset(m, 0, sizeof(*m));
    if (t->kind == TR_NAMED) {
        m->lb = 0;
        m->ub = tr_named_size(t->named);
        m->align = tr_align_of(t->named);
        if (t->named == 7) {
            tr_map_push(m, 0, (int32_t) sizeof(short));
            tr_map_push(m, (int64_t) offsetof(struct tr_short_int, b), (int32_t) sizeof(int));
        } else if (t->named == 8) {
            tr_map_push(m, 0, (int32_t) sizeof(double));
            tr_map_push(m, (int64_t) offsetof(struct tr_double_int, b), (int32_t) sizeof(int));
        } else
            tr_map_push(m, 0, (int32_t) m->ub);
        return tr_named_type(t->named);
    }
    ct = calloc((size_t) nch + 1, sizeof(*ct));
    cm = calloc((size_t) nch + 1, sizeof(*cm));
    T_ASSERT(ct && cm, "model: out of memory");
    for (int i = 0; i < nch; i++)
        ct[i] = tr_make1(t->ch[i], rank, size, &cm[i]);
    const tr_map *c = &cm[0];
    int64_t ext = nch ? c->ub - c->lb : 0;
    m->align = nch ? c->align : 1;
    switch (t->kind) {
    case TR_CONTIG:
        T_MPI(MPI_Type_contiguous(t->n, ct[0], &r));
        tr_block(m, c, 0, t->n, &lo, &hi, &any);
        break;
    case TR_VECTOR:
    case TR_HVECTOR:
        if (t->kind == TR_VECTOR)
            T_MPI(MPI_Type_vector(t->n, t->bl, (int) t->st, ct[0], &r));
        else
            T_MPI(MPI_Type_create_hvector(t->n, t->bl, t->st, ct[0], &r));
        for (int i = 0; i < t->n; i++)
            tr_block(m, c, i * (t->kind == TR_VECTOR ? t->st * ext : t->st), t->bl, &lo, &hi,
                     &any);
        break;
    case TR_INDEXED:
    case TR_HINDEXED:
    case TR_IBLOCK:
    case TR_HIBLOCK:{
            int *di = calloc((size_t) t->n + 1, sizeof(int));
            T_ASSERT(di, "model: out of memory");
            for (int i = 0; i < t->n; i++)
                di[i] = (int) t->ds[i];
            if (t->kind == TR_INDEXED)
                T_MPI(MPI_Type_indexed(t->n, t->bls, di, ct[0], &r));
            else if (t->kind == TR_HINDEXED)
                T_MPI(MPI_Type_create_hindexed(t->n, t->bls, t->ds, ct[0], &r));
            else if (t->kind == TR_IBLOCK)
                T_MPI(MPI_Type_create_indexed_block(t->n, t->bl, di, ct[0], &r));
            else
                T_MPI(MPI_Type_create_hindexed_block(t->n, t->bl, t->ds, ct[0], &r));
            free(di);
            int h = t->kind == TR_HINDEXED || t->kind == TR_HIBLOCK;
            for (int i = 0; i < t->n; i++)
                tr_block(m, c, h ? t->ds[i] : t->ds[i] * ext,
                         t->kind == TR_IBLOCK || t->kind == TR_HIBLOCK ? t->bl : t->bls[i], &lo,
                         &hi, &any);
            break;
        }
    case TR_STRUCT:
        T_MPI(MPI_Type_create_struct(t->n, t->bls, t->ds, ct, &r));
        for (int i = 0; i < t->n; i++) {
            tr_block(m, &cm[i], t->ds[i], t->bls[i], &lo, &hi, &any);
            if (cm[i].align > m->align)
                m->align = cm[i].align;
        }
        break;
    case TR_RESIZED:
        T_MPI(MPI_Type_create_resized(ct[0], t->lb, t->ext, &r));
        tr_block(m, c, 0, 1, &lo, &hi, &any);
        lo = t->lb;
        hi = t->lb + t->ext;
        break;
    case TR_SUBARRAY:{
            int *idx[TR_MAXD], cnt[TR_MAXD];
            T_MPI(MPI_Type_create_subarray(t->nd, t->a, t->b, t->c,
                                           t->order ? MPI_ORDER_C : MPI_ORDER_FORTRAN, ct[0], &r));
            for (int k = 0; k < t->nd; k++) {
                idx[k] = calloc((size_t) t->b[k] + 1, sizeof(int));
                T_ASSERT(idx[k], "model: out of memory");
                for (cnt[k] = 0; cnt[k] < t->b[k]; cnt[k]++)
                    idx[k][cnt[k]] = t->c[k] + cnt[k];
            }
            tr_select(m, c, t->order, t->nd, t->a, idx, cnt);
            for (int k = 0; k < t->nd; k++)
                free(idx[k]);
            break;
        }
    case TR_DARRAY:{
            int *idx[TR_MAXD], cnt[TR_MAXD], coord[TR_MAXD], dist[TR_MAXD], darg[TR_MAXD];
            int rest = size, rk = rank;
            for (int k = 0; k < t->nd; k++) {
                dist[k] = t->b[k] == TR_BLOCK ? MPI_DISTRIBUTE_BLOCK : t->b[k] == TR_CYCLIC ?
                    MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_NONE;
                darg[k] = t->c[k] == TR_DFLT ? MPI_DISTRIBUTE_DFLT_DARG : t->c[k];
            }
            T_MPI(MPI_Type_create_darray(size, rank, t->nd, t->a, dist, darg, t->p,
                                         t->order ? MPI_ORDER_C : MPI_ORDER_FORTRAN, ct[0], &r));
            for (int k = 0; k < t->nd; k++) {       /* row-major process grid */
                rest /= t->p[k];
                coord[k] = rk / rest;
                rk %= rest;
                idx[k] = calloc((size_t) t->a[k] + 1, sizeof(int));
                T_ASSERT(idx[k], "model: out of memory");
                cnt[k] = tr_dim_indices(t->a[k], t->b[k], t->c[k], t->p[k], coord[k], idx[k]);
            }
            tr_select(m, c, t->order, t->nd, t->a, idx, cnt);
            for (int k = 0; k < t->nd; k++)
                free(idx[k]);
            break;
        }
    }
    if (t->kind == TR_SUBARRAY || t->kind == TR_DARRAY) {
        int64_t all = 1;
        for (int k = 0; k < t->nd; k++)
            all *= t->a[k];
        lo = 0;
        hi = all * ext;
    } else if (!any && t->kind != TR_RESIZED)
        lo = hi = 0;
    m->lb = lo;
    m->ub = hi;
    if (t->kind == TR_STRUCT && m->align > 1 && (hi - lo) % m->align)
        m->ub += m->align - (hi - lo) % m->align;
    /* the library's bounds where it differs (see above) */
    MPI_Aint mlb, mext;
    MPI_Type_get_extent(r, &mlb, &mext);
    if (mlb != m->lb || mlb + mext != m->ub) {
        tr_adopted++;
        m->lb = mlb;
        m->ub = mlb + mext;
    }
    for (int i = 0; i < nch; i++) {
        int ni, na, nt, comb;
        MPI_Type_get_envelope(ct[i], &ni, &na, &nt, &comb);
        if (comb != MPI_COMBINER_NAMED)
            MPI_Type_free(&ct[i]);
        tr_map_free(&cm[i]);
    }
    free(ct);
    free(cm);
    return r;
}

/* t's MPI type, committed, and its type map */
__attribute__((unused)) static MPI_Datatype tr_make(const tr_node * t, int rank, int size,
                                                    tr_map * m)
{
    MPI_Datatype r = tr_make1(t, rank, size, m);
    int ni, na, nt, comb;
    MPI_Type_get_envelope(r, &ni, &na, &nt, &comb);
    if (comb != MPI_COMBINER_NAMED)
        T_MPI(MPI_Type_commit(&r));
    return r;
}

/* the type map's data bytes: pos[s] is the displacement of data byte s of
 * one instance (malloc'd), *size their count */
__attribute__((unused)) static int64_t *tr_bytes(const tr_map * m, int64_t *size)
{
    int64_t n = 0, k = 0;
    for (size_t i = 0; i < m->n; i++)
        n += m->l[i];
    int64_t *pos = malloc((size_t) n * sizeof(*pos) + 1);
    T_ASSERT(pos, "model: out of memory");
    for (size_t i = 0; i < m->n; i++)
        for (int32_t j = 0; j < m->l[i]; j++)
            pos[k++] = m->d[i] + j;
    *size = n;
    return pos;
}

/* where stream byte s of count x (a type with data bytes pos[0..size) and
 * extent ext) lies, relative to the buffer origin / the view's disp */
__attribute__((unused)) static int64_t tr_addr(const int64_t *pos, int64_t size, int64_t ext,
                                               int64_t s)
{
    return (s / size) * ext + pos[s % size];
}

/* 0 if the type map's elements are where a file view one writes through
 * may have them: displacements >= 0, each element after the previous one
 * ends (MPI: monotonically nondecreasing, and no overlap when writing),
 * all of them below `end`; else a reason */
__attribute__((unused)) static const char *tr_view_ok(const tr_map * m, int64_t end)
{
    for (size_t i = 0; i < m->n; i++) {
        if (m->d[i] < 0)
            return "a negative displacement";
        if (i > 0 && m->d[i] < m->d[i - 1])
            return "displacements decrease";
        if (i > 0 && m->d[i] < m->d[i - 1] + m->l[i - 1])
            return "elements overlap";
        if (m->d[i] + m->l[i] > end)
            return "data past the extent";
    }
    return NULL;
}

#endif
