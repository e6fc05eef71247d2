/* A model of a whole file, kept identical on every rank, with MPI's own
 * datatype engine (MPI_Pack / MPI_Unpack: MPICH's typerep, not ROMIO's
 * flattening nor the ddio descriptor) as the reference for which bytes a
 * file view and a memory type select:
 *   the stream of count x type at buf   = MPI_Pack(buf, count, type)
 *   stream byte s of view (disp, ft)    = the byte MPI_Unpack(stream, ft)
 *                                         puts at file offset disp + ...
 * Used by t_coll and t_desc. */
#ifndef DDIO_TMODEL_H
#define DDIO_TMODEL_H
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

#endif
