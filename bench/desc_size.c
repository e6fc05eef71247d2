/* desc_size: how many bytes describe one rank's part of one collective call,
 * for Kotz's patterns (bench/PATTERNS.md) at several file sizes.
 *
 *  (a) ROMIO two-phase: every contiguous piece of the rank's file view is
 *      shipped as an (offset, length) pair of 8 + 8 bytes to the aggregator
 *      owning it (ADIOI_Calc_my_req / ADIOI_Calc_others_req), so a call costs
 *      16 bytes x pieces (plus one extra piece per file-domain boundary a
 *      piece straddles, ignored here). ROMIO also keeps the flattened filetype
 *      (the same pairs) in memory on every rank.
 *  (b) ddio: the rank's flattened view compressed by the shared library
 *      (ddio_node_from_flat), encoded as it goes on the wire
 *      (ddio_desc_encoded_size), sent once to each server.
 *
 * The pieces come from the pattern math (the same views ddio-patterns builds
 * with MPI_Type_create_darray); each rank also builds the darray and checks
 * its size and extent against the math. The piece count is exact at any size;
 * (b) needs the pieces in memory, so it is skipped (reported empty) when a
 * rank has more than -x pieces.
 *
 * With -V MIB (default 64) the piece count is also checked exactly against
 * MPI's own typemap (MPI_Pack of an index-tagged file image) for files up to
 * MIB; a difference shows as status MISMATCH.
 *
 * usage: mpiexec -n P desc_size [-p LIST] [-r LIST] [-m LIST] [-x MAXPIECES] [-V MIB]
 * Output (rank 0), CSV:
 *   pattern,recsize,P,file_MiB,pieces_max,pieces_total,twophase_bytes_max,
 *   twophase_bytes_total,ddio_desc_bytes_max,ddio_desc_bytes_total,status
 * *_max: the largest over ranks (bytes one rank ships per call, per server for
 * ddio); *_total: summed over ranks.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ddio_desc.h"

static int rank, nprocs;
static long verify_max = 64L << 20;   /* -V: check piece counts through MPI_Pack up to this file size */

/* One dimension of a rank's ownership: `count` runs of `len` consecutive
 * indices, the i-th starting at first + i * stride. */
struct runs { long first, stride, count, len; };

static struct runs dim_runs(char d, long n, int p, int c)
{
    struct runs r = { 0, 0, 0, 0 };
    if (d == 'n' || d == 'a' || p == 1) {
        r.count = 1; r.len = n;
    } else if (d == 'b') {
        long b = (n + p - 1) / p, lo = (long) c * b, hi = lo + b < n ? lo + b : n;
        if (hi > lo) { r.first = lo; r.count = 1; r.len = hi - lo; }
    } else {                                    /* cyclic, darg 1 */
        if (c < n) { r.first = c; r.stride = p; r.count = (n - c + p - 1) / p; r.len = 1; }
    }
    return r;
}

struct result { long pieces; long bytes_data; long desc_bytes; int skipped; int bad; };

static void measure(const char *pat, long recsize, double mib, long maxpieces, struct result *res)
{
    memset(res, 0, sizeof(*res));
    long nrec = (long) (mib * 1048576.0 / (double) recsize);
    long cols = 1;                              /* exactly as ddio-patterns */
    while (cols * cols * 4 <= nrec)
        cols *= 2;
    long rows = nrec / cols;
    int ndims = (int) strlen(pat) - 1;
    char d0 = pat[1], d1 = ndims == 2 ? pat[2] : 0;
    int ps[2] = { nprocs, 1 };
    if (ndims == 2) {
        if (d0 == 'n') { ps[0] = 1; ps[1] = nprocs; }
        else if (d1 == 'n') { ps[0] = nprocs; ps[1] = 1; }
        else { int dims[2] = { 0, 0 }; MPI_Dims_create(nprocs, 2, dims); ps[0] = dims[0]; ps[1] = dims[1]; }
    }
    /* piece list as (start record, records) generated on demand */
    long n0 = ndims == 1 ? rows * cols : rows, n1 = ndims == 2 ? cols : 1;
    struct runs r0, r1 = { 0, 0, 1, 1 };
    int whole = ndims == 1 && (d0 == 'n' || d0 == 'a');
    if (whole) {                                /* default view: rank 0 (rn) or all (ra) */
        r0.first = 0; r0.stride = 0; r0.len = n0;
        r0.count = (d0 == 'a' || rank == 0) ? 1 : 0;
    } else {
        int c0 = ndims == 1 ? rank : rank / ps[1], c1 = ndims == 1 ? 0 : rank % ps[1];
        r0 = dim_runs(d0, n0, ps[0], c0);
        if (ndims == 2)
            r1 = dim_runs(d1, n1, ps[1], c1);
    }
    int full1 = ndims == 1 || (r1.count == 1 && r1.first == 0 && r1.len == n1);
    long k0 = r0.count * r0.len;               /* rows (or 1-D records) owned */
    /* Runs in one dimension never touch (cyclic stride p > 1; block and none
     * give one run), so with whole rows each row run is one piece, else each
     * (row, column run) is, less the joins where a rank owns both the last
     * column of a row and the first of the next (cyclic columns, rank 0, when
     * p divides cols - 1). */
    long pieces;
    if (r0.count == 0 || r1.count == 0)
        pieces = 0;
    else if (full1)
        pieces = r0.count;
    else {
        int joins = r1.first == 0 && r1.first + (r1.count - 1) * r1.stride + r1.len == n1;
        pieces = k0 * r1.count - (joins ? r0.count * (r0.len - 1) : 0);
    }
    res->pieces = pieces;
    res->bytes_data = k0 * (ndims == 2 ? r1.count * r1.len : 1) * recsize;

    /* check against MPI's darray */
    if (!whole) {
        int gs[2] = { (int) n0, (int) n1 }, ds[2], da[2];
        char d[2] = { d0, d1 };
        for (int i = 0; i < ndims; i++) {
            ds[i] = d[i] == 'b' ? MPI_DISTRIBUTE_BLOCK : d[i] == 'c' ? MPI_DISTRIBUTE_CYCLIC
                                                                     : MPI_DISTRIBUTE_NONE;
            da[i] = d[i] == 'c' ? 1 : MPI_DISTRIBUTE_DFLT_DARG;
        }
        MPI_Datatype rec, ft;
        MPI_Type_contiguous((int) recsize, MPI_BYTE, &rec);
        MPI_Type_create_darray(nprocs, rank, ndims, gs, ds, da, ps, MPI_ORDER_C, rec, &ft);
        MPI_Count sz, lb, ext;
        MPI_Type_size_x(ft, &sz);
        MPI_Type_get_extent_x(ft, &lb, &ext);
        if (sz != res->bytes_data || ext != (MPI_Count) nrec / cols * cols * recsize)
            res->bad = 1;
        /* Exact check of the piece count against MPI's own typemap: tag each
         * record of a file-sized buffer with its index, pack through the
         * filetype, count the runs of consecutive indices. */
        if (!res->bad && ext <= verify_max && sz > 0) {
            unsigned char *file = malloc((size_t) ext), *packed = malloc((size_t) sz);
            if (file && packed) {
                /* committed only here: committing a darray with millions of
                 * pieces costs MPICH ~48 bytes of memory per piece */
                MPI_Type_commit(&ft);
                for (long g = 0; g < rows * cols; g++)
                    memcpy(file + g * recsize, &g, recsize < 8 ? (size_t) recsize : 8);
                int pos = 0;
                MPI_Pack(file, 1, ft, packed, (int) sz, &pos, MPI_COMM_SELF);
                long runs = 0, prev = -2;
                for (long i = 0; i < sz / recsize; i++) {
                    long g = 0;
                    memcpy(&g, packed + i * recsize, recsize < 8 ? (size_t) recsize : 8);
                    runs += g != prev + 1;
                    prev = g;
                }
                if (runs != pieces) {
                    res->bad = 1;
                    if (getenv("DESC_SIZE_DEBUG"))
                        fprintf(stderr, "desc_size: rank %d %s r=%ld: %ld runs in MPI's typemap, "
                                "%ld computed\n", rank, pat, recsize, runs, pieces);
                }
            }
            free(file);
            free(packed);
        }
        MPI_Type_free(&ft);
        MPI_Type_free(&rec);
    }
    if (pieces == 0)
        return;
    if (pieces > maxpieces) {
        res->skipped = 1;
        return;
    }
    int64_t *off = malloc(sizeof(int64_t) * (size_t) pieces);
    int64_t *len = malloc(sizeof(int64_t) * (size_t) pieces);
    if (!off || !len) {
        res->skipped = 1;
        free(off);
        free(len);
        return;
    }
    long k = 0;
    if (full1) {
        long per = ndims == 2 ? n1 : 1;
        for (long i = 0; i < r0.count; i++, k++) {
            off[k] = (r0.first + i * r0.stride) * per * recsize;
            len[k] = r0.len * per * recsize;
        }
    } else {
        for (long i = 0; i < r0.count; i++)
            for (long row = r0.first + i * r0.stride; row < r0.first + i * r0.stride + r0.len; row++)
                for (long j = 0; j < r1.count; j++) {
                    int64_t o = (row * n1 + r1.first + j * r1.stride) * recsize;
                    if (k > 0 && off[k - 1] + len[k - 1] == o) {
                        len[k - 1] += r1.len * recsize;
                        continue;
                    }
                    if (k == pieces) {      /* the count above is wrong */
                        res->bad = 1;
                        free(off);
                        free(len);
                        return;
                    }
                    off[k] = o;
                    len[k++] = r1.len * recsize;
                }
    }
    /* as the driver does: offsets relative to the first piece, which goes
     * into the descriptor's disp */
    if (k != pieces)
        res->bad = 1;
    int64_t base = off[0];
    for (long i = 0; i < k; i++)
        off[i] -= base;
    struct ddio_node *root = ddio_node_from_flat((uint64_t) k, off, len);
    free(off);
    free(len);
    if (!root) {
        res->bad = 1;
        return;
    }
    struct ddio_desc desc = { .disp = base, .extent = (int64_t) (rows * cols * recsize),
                              .root = root, .start = 0, .length = (uint64_t) res->bytes_data };
    res->desc_bytes = (long) ddio_desc_encoded_size(&desc);
    ddio_node_free(root);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *pats = "ra,rn,rb,rc,rnb,rnc,rbn,rbb,rbc,rcn,rcb,rcc";
    const char *recs = "8,8192", *mibs = "64,256,1024,4096";
    long maxpieces = 1L << 23;
    int c;
    while ((c = getopt(argc, argv, "p:r:m:x:V:h")) != -1) {
        switch (c) {
        case 'p': pats = optarg; break;
        case 'r': recs = optarg; break;
        case 'm': mibs = optarg; break;
        case 'x': maxpieces = atol(optarg); break;
        case 'V': verify_max = atol(optarg) << 20; break;
        default:
            if (rank == 0)
                fprintf(stderr, "usage: desc_size [-p PATTERNS] [-r RECSIZES] [-m MIB,...] "
                        "[-x MAXPIECES] [-V MIB]\n"
                        "(-V: check piece counts against MPI's typemap up to MIB, default 64)\n"
                        "(read patterns; a write pattern has the same view)\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (rank == 0)
        printf("pattern,recsize,P,file_MiB,pieces_max,pieces_total,twophase_bytes_max,"
               "twophase_bytes_total,ddio_desc_bytes_max,ddio_desc_bytes_total,status\n");
    char *rl = strdup(recs), *s1 = NULL;
    for (char *r = strtok_r(rl, ",", &s1); r; r = strtok_r(NULL, ",", &s1)) {
        char *ml = strdup(mibs), *s2 = NULL;
        for (char *m = strtok_r(ml, ",", &s2); m; m = strtok_r(NULL, ",", &s2)) {
            char *pl = strdup(pats), *s3 = NULL;
            for (char *p = strtok_r(pl, ",", &s3); p; p = strtok_r(NULL, ",", &s3)) {
                char pn[8];
                snprintf(pn, sizeof(pn), "r%s", p + 1);   /* w.. has the view of r.. */
                struct result res;
                measure(pn, atol(r), atof(m), maxpieces, &res);
                long v[4] = { res.pieces, res.desc_bytes, res.skipped, res.bad }, mx[4], sm[4];
                MPI_Allreduce(v, mx, 4, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
                MPI_Allreduce(v, sm, 4, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
                if (rank == 0) {
                    printf("%s,%s,%d,%s,%ld,%ld,%ld,%ld,", p, r, nprocs, m, mx[0], sm[0],
                           16 * mx[0], 16 * sm[0]);
                    if (mx[2])
                        printf(",,skipped(>%ld pieces)\n", maxpieces);
                    else
                        printf("%ld,%ld,%s\n", mx[1], sm[1], mx[3] ? "MISMATCH" : "ok");
                    fflush(stdout);
                }
            }
            free(pl);
        }
        free(ml);
    }
    free(rl);
    MPI_Finalize();
    return 0;
}
