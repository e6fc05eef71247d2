/* ddio-patterns: Kotz's access patterns (TOCS 1997, Table II) as a real
 * MPI-IO workload. A file of fixed-size records, a 1-D vector or a row-major
 * 2-D matrix, is written or read by all ranks in ONE collective call each
 * (or, with -w, in calls of a fixed size), with HPF BLOCK/CYCLIC/NONE
 * distributions expressed as darray file views (the darray's type map,
 * built from vector types: -D for MPI_Type_create_darray) and contiguous
 * memory. Every record's bytes are a function of its global index, so every
 * read checks what it got and every write is checked with a plain
 * read-back; a rank holds its buffer and a few types, nothing per record.
 * Works on any ROMIO file name (ddio:, ufs:, ...).
 *
 * usage: ddio-patterns [-p LIST] [-r RECSIZE] [-m MIB] [-w MIB] [-D] [-i]
 *                      [-H key=val]... [-q] [-C] FILE
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXH 16
struct opts {
    const char *patterns;
    long recsize;
    double mib;
    int independent;        /* use read_at/write_at instead of *_all */
    double window_mib;      /* > 0: calls of at most this many MiB per rank */
    int darray;             /* views from MPI_Type_create_darray itself */
    int quiet, csv;
    int nhints;
    char *hk[MAXH], *hv[MAXH];
    const char *file;
};

static const char *ALL_PATTERNS =
    "wn,wb,wc,wnb,wbb,wcb,wbc,wcc,wcn,ra,rn,rb,rc,rnb,rnc,rbn,rbb,rbc,rcn,rcb,rcc";

static int rank, nprocs;

/* Hydra drops a rank's output still in flight when an abort tears the job
 * down (a multihost run lost the only line saying which server failed): give
 * the launcher a moment to forward the message first. */
static void abort_job(int code)
{
    fflush(stderr);
    usleep(300000);
    MPI_Abort(MPI_COMM_WORLD, code);
}

static void die(const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "ddio-patterns: %s\n", msg);
    abort_job(2);
}

static void check(int err, const char *what)
{
    if (err != MPI_SUCCESS) {
        char s[MPI_MAX_ERROR_STRING];
        int n;
        MPI_Error_string(err, s, &n);
        fprintf(stderr, "ddio-patterns: rank %d: %s: %s\n", rank, what, s);
        abort_job(1);
    }
}

/* The canonical content: 8-byte word w of record g. */
static inline uint64_t word_of(uint64_t g, uint64_t w)
{
    uint64_t x = (g << 20) ^ w ^ 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 29);
}

static void fill_record(unsigned char *dst, uint64_t g, long recsize)
{
    for (long b = 0; b < recsize; b += 8) {
        uint64_t v = word_of(g, (uint64_t) b / 8);
        memcpy(dst + b, &v, (size_t) (recsize - b < 8 ? recsize - b : 8));
    }
}

static int record_ok(const unsigned char *src, uint64_t g, long recsize)
{
    unsigned char tmp[8];
    for (long b = 0; b < recsize; b += 8) {
        uint64_t v = word_of(g, (uint64_t) b / 8);
        size_t n = (size_t) (recsize - b < 8 ? recsize - b : 8);
        memcpy(tmp, &v, n);
        if (memcmp(src + b, tmp, n) != 0)
            return 0;
    }
    return 1;
}

/* ---- distributions --------------------------------------------------------- */
enum dist { D_NONE = 'n', D_BLOCK = 'b', D_CYCLIC = 'c', D_ALL = 'a' };

struct pattern {
    char name[8];
    int write;
    int ndims;              /* 1 or 2 */
    enum dist d[2];
    int psize[2];
};

static int parse_pattern(const char *s, struct pattern *p)
{
    size_t n = strlen(s);
    memset(p, 0, sizeof(*p));
    if (n < 2 || n > 3 || (s[0] != 'r' && s[0] != 'w'))
        return -1;
    snprintf(p->name, sizeof(p->name), "%s", s);
    p->write = s[0] == 'w';
    p->ndims = (int) n - 1;
    for (int i = 0; i < p->ndims; i++) {
        char c = s[i + 1];
        if (c != 'n' && c != 'b' && c != 'c' && !(c == 'a' && n == 2 && !p->write))
            return -1;
        p->d[i] = (enum dist) c;
    }
    if (p->ndims == 1) {
        p->psize[0] = nprocs;
    } else if (p->d[0] == D_NONE) {
        p->psize[0] = 1;
        p->psize[1] = nprocs;
    } else if (p->d[1] == D_NONE) {
        p->psize[0] = nprocs;
        p->psize[1] = 1;
    } else {
        int dims[2] = { 0, 0 };
        MPI_Dims_create(nprocs, 2, dims);
        p->psize[0] = dims[0];
        p->psize[1] = dims[1];
    }
    return 0;
}

/* One dimension of a rank's part: the global indices it owns, in order,
 * as closed forms (no list: a 4 GiB file of 8-byte records is 512 Mi of
 * them, and an index per record would cost the rank as much as its data). */
struct dim_part {
    enum dist d;
    long n;                 /* global size */
    int p, c;               /* processes in the dimension, this rank's coordinate */
    long k;                 /* indices owned */
};

static long block_of(const struct dim_part *dp)
{
    return (dp->n + dp->p - 1) / dp->p;
}

static void dim_init(struct dim_part *dp, enum dist d, long n, int p, int c)
{
    dp->d = d;
    dp->n = n;
    dp->p = p;
    dp->c = c;
    if (d == D_NONE || d == D_ALL) {
        dp->k = n;
    } else if (d == D_BLOCK) {
        long b = block_of(dp), lo = (long) c * b, hi = lo + b < n ? lo + b : n;
        dp->k = hi > lo ? hi - lo : 0;
    } else {
        dp->k = c < n ? (n - c + p - 1) / p : 0;
    }
}

/* the i-th global index this rank owns in the dimension */
static long dim_index(const struct dim_part *dp, long i)
{
    if (dp->d == D_BLOCK)
        return (long) dp->c * block_of(dp) + i;
    if (dp->d == D_CYCLIC)
        return dp->c + i * dp->p;
    return i;
}

struct view {
    MPI_Datatype ftype;     /* MPI_DATATYPE_NULL: contiguous whole file */
    long nrec;              /* records this rank accesses */
    int ndims;
    struct dim_part dim[2];
};

/* global index of the i-th record of the rank's view (row-major) */
static long view_gidx(const struct view *v, long i)
{
    if (v->ndims == 1)
        return dim_index(&v->dim[0], i);
    return dim_index(&v->dim[0], i / v->dim[1].k) * v->dim[1].n
        + dim_index(&v->dim[1], i % v->dim[1].k);
}

/* The rank's elements of one dimension over `elem` (extent ext): k of
 * them, from its first one on (a block is contiguous, cyclic every p-th) */
static MPI_Datatype dim_type(const struct dim_part *dp, MPI_Datatype elem)
{
    MPI_Datatype t;
    if (dp->d == D_CYCLIC)
        MPI_Type_vector((int) dp->k, 1, dp->p, elem, &t);
    else
        MPI_Type_contiguous((int) dp->k, elem, &t);
    return t;
}

/* The same type map as MPI_Type_create_darray (lb 0, extent the whole
 * array, this rank's elements in row-major order) from vector, contiguous
 * and resized types. Why not darray itself: MPICH 4.0.2's dataloop engine
 * commits a darray (and a subarray) as a struct with MPI_LB/MPI_UB
 * markers, which it flattens: 32-48 bytes per contiguous piece in every
 * rank (bench/README.md), whatever the file system. */
static MPI_Datatype compact_darray(const struct view *v, MPI_Datatype rec, long recsize)
{
    MPI_Datatype row, inner, placed, t;
    MPI_Aint off = 0, total = recsize;
    inner = dim_type(&v->dim[v->ndims - 1], rec);
    if (v->ndims == 2) {
        const struct dim_part *d1 = &v->dim[1];
        MPI_Type_create_resized(inner, 0, (MPI_Aint) d1->n * recsize, &row);
        MPI_Type_free(&inner);
        inner = dim_type(&v->dim[0], row);
        MPI_Type_free(&row);
        off = (MPI_Aint) dim_index(d1, 0) * recsize;
    }
    for (int i = 0; i < v->ndims; i++)
        total *= v->dim[i].n;
    /* the first owned row (or element); an empty part is placed at 0 */
    off += (MPI_Aint) dim_index(&v->dim[0], 0) * (total / v->dim[0].n);
    if (!v->nrec)
        off = 0;
    MPI_Type_create_hindexed_block(1, 1, &off, inner, &placed);
    MPI_Type_free(&inner);
    MPI_Type_create_resized(placed, 0, total, &t);
    MPI_Type_free(&placed);
    return t;
}

/* 1-D "rn"/"wn": rank 0 gets everything. "ra": everyone gets everything. */
static void make_view(const struct pattern *p, long rows, long cols, MPI_Datatype rec,
                      long recsize, int use_darray, struct view *v)
{
    long nrec_total = rows * cols;
    memset(v, 0, sizeof(*v));
    v->ftype = MPI_DATATYPE_NULL;
    v->ndims = p->ndims;
    if (p->ndims == 1 && (p->d[0] == D_NONE || p->d[0] == D_ALL)) {
        dim_init(&v->dim[0], D_NONE, nrec_total, 1, 0);
        v->nrec = (p->d[0] == D_ALL || rank == 0) ? nrec_total : 0;
        return;
    }
    int gs[2], ds[2], da[2], ps[2], coord[2];
    long n[2] = { nrec_total, 1 };
    if (p->ndims == 2) {
        n[0] = rows;
        n[1] = cols;
    }
    /* row-major process coordinates, as darray uses */
    coord[0] = p->ndims == 1 ? rank : rank / p->psize[1];
    coord[1] = p->ndims == 1 ? 0 : rank % p->psize[1];
    v->nrec = 1;
    for (int i = 0; i < p->ndims; i++) {
        gs[i] = (int) n[i];
        ds[i] = p->d[i] == D_BLOCK ? MPI_DISTRIBUTE_BLOCK
            : p->d[i] == D_CYCLIC ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_NONE;
        da[i] = p->d[i] == D_CYCLIC ? 1 : MPI_DISTRIBUTE_DFLT_DARG;
        ps[i] = p->psize[i];
        dim_init(&v->dim[i], p->d[i], n[i], ps[i], coord[i]);
        v->nrec *= v->dim[i].k;
    }
    if (use_darray)
        check(MPI_Type_create_darray(nprocs, rank, p->ndims, gs, ds, da, ps, MPI_ORDER_C,
                                     rec, &v->ftype), "darray");
    else
        v->ftype = compact_darray(v, rec, recsize);
    check(MPI_Type_commit(&v->ftype), "commit");
}

static MPI_Info make_info(const struct opts *o)
{
    MPI_Info info;
    MPI_Info_create(&info);
    for (int i = 0; i < o->nhints; i++)
        MPI_Info_set(info, o->hk[i], o->hv[i]);
    return info;
}

/* Transfer `bytes` bytes at buf with a single call: count in records when it
 * fits an int, else in a contiguous type of many records. */
static int do_io(MPI_File fh, int write, int indep, void *buf, long nrec, MPI_Datatype rec,
                 MPI_Status *st)
{
    MPI_Datatype t = rec;
    long cnt = nrec, per = 1;
    while (cnt > (1L << 30)) {
        per *= 2;
        cnt = (nrec + per - 1) / per;
    }
    if (per > 1) {
        if (nrec % per != 0)
            die("record count too large and not divisible");
        MPI_Type_contiguous((int) per, rec, &t);
        MPI_Type_commit(&t);
    }
    int err;
    if (indep)
        err = write ? MPI_File_write(fh, buf, (int) cnt, t, st)
                    : MPI_File_read(fh, buf, (int) cnt, t, st);
    else
        err = write ? MPI_File_write_all(fh, buf, (int) cnt, t, st)
                    : MPI_File_read_all(fh, buf, (int) cnt, t, st);
    if (t != rec)
        MPI_Type_free(&t);
    return err;
}

/* Check the whole file with plain contiguous reads, each rank a slice. */
static long verify_file(const struct opts *o, long nrec_total)
{
    MPI_File fh;
    MPI_Info info = make_info(o);
    check(MPI_File_open(MPI_COMM_WORLD, o->file, MPI_MODE_RDONLY, info, &fh), "open (verify)");
    MPI_Info_free(&info);
    long per = (nrec_total + nprocs - 1) / nprocs;
    long lo = (long) rank * per, hi = lo + per < nrec_total ? lo + per : nrec_total;
    long bad = 0, chunk = (4L << 20) / o->recsize + 1;
    unsigned char *buf = malloc((size_t) (chunk * o->recsize));
    for (long r = lo; r < hi; r += chunk) {
        long k = hi - r < chunk ? hi - r : chunk;
        MPI_Status st;
        check(MPI_File_read_at(fh, (MPI_Offset) r * o->recsize, buf, (int) (k * o->recsize),
                               MPI_BYTE, &st), "read_at (verify)");
        int got;
        MPI_Get_count(&st, MPI_BYTE, &got);
        for (long i = 0; i < k; i++)
            if ((long) got < (i + 1) * o->recsize || !record_ok(buf + i * o->recsize, (uint64_t) (r + i), o->recsize))
                bad++;
    }
    free(buf);
    MPI_File_close(&fh);
    long total;
    MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* Records per call: the whole part (Kotz's one call), or at most -w MiB */
static long window_records(const struct opts *o, long nrec)
{
    long w = o->window_mib > 0 ? (long) (o->window_mib * 1048576.0) / o->recsize : 0;
    if (w < 1 || w > nrec)
        w = nrec;
    return w;
}

/* One call of k records (a write's last one with MPI_File_sync), barrier
 * to barrier; returns its seconds and adds the bytes it moved to *moved */
static double timed_call(const struct opts *o, const struct pattern *p, MPI_File fh, void *buf,
                         long k, MPI_Datatype rec, int last, MPI_Count *moved)
{
    MPI_Status st;
    MPI_Count n;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    check(do_io(fh, p->write, o->independent, buf, k, rec, &st), p->write ? "write" : "read");
    if (p->write && last)
        check(MPI_File_sync(fh), "sync");
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_Get_elements_x(&st, MPI_BYTE, &n);
    *moved += n;
    return t;
}

/* The part in calls of at most wrec records, as many calls on every rank
 * (collective); a write fills each window before its call, a read checks
 * it after: neither is timed. Returns the seconds; *bad counts bad records */
static double transfer(const struct opts *o, const struct pattern *p, MPI_File fh,
                       const struct view *v, MPI_Datatype rec, unsigned char *buf, long wrec,
                       long *bad)
{
    long mine = wrec ? (v->nrec + wrec - 1) / wrec : 0, nwin;
    MPI_Count moved = 0;
    double secs = 0;
    MPI_Allreduce(&mine, &nwin, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (nwin < 1)
        nwin = 1;
    for (long w = 0; w < nwin; w++) {
        long first = w * wrec, k = v->nrec - first < wrec ? v->nrec - first : wrec;
        if (k < 0)
            k = 0;
        for (long i = 0; i < k; i++)
            if (p->write)
                fill_record(buf + i * o->recsize, (uint64_t) view_gidx(v, first + i), o->recsize);
        if (!p->write)
            memset(buf, 0xEE, (size_t) (k * o->recsize));
        secs += timed_call(o, p, fh, buf, k, rec, w == nwin - 1, &moved);
        for (long i = 0; i < k && !p->write; i++)
            *bad += !record_ok(buf + i * o->recsize, (uint64_t) view_gidx(v, first + i),
                               o->recsize);
    }
    if (moved != (MPI_Count) v->nrec * o->recsize)
        *bad = v->nrec ? v->nrec : 1;
    return secs;
}

static int run_pattern(const struct opts *o, const struct pattern *p, long rows, long cols)
{
    MPI_Datatype rec;
    MPI_Type_contiguous((int) o->recsize, MPI_BYTE, &rec);
    MPI_Type_commit(&rec);
    struct view v;
    make_view(p, rows, cols, rec, o->recsize, o->darray, &v);
    long wrec = window_records(o, v.nrec);
    unsigned char *buf = malloc(wrec ? (size_t) wrec * (size_t) o->recsize : 1);
    if (!buf)
        die("out of memory");

    MPI_File fh;
    MPI_Info info = make_info(o);
    int amode = p->write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    check(MPI_File_open(MPI_COMM_WORLD, o->file, amode, info, &fh), "open");
    MPI_Info_free(&info);
    if (v.ftype != MPI_DATATYPE_NULL)
        check(MPI_File_set_view(fh, 0, rec, v.ftype, "native", MPI_INFO_NULL), "set_view");
    long bad = 0;
    double secs = transfer(o, p, fh, &v, rec, buf, wrec, &bad);
    check(MPI_File_close(&fh), "close");

    long tbad;
    MPI_Allreduce(&bad, &tbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (p->write && tbad == 0)
        tbad = verify_file(o, rows * cols);

    double total = (double) v.nrec * (double) o->recsize, all;
    MPI_Allreduce(&total, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        double mibs = all / (1 << 20) / secs;
        if (o->csv)
            printf("%s,%ld,%d,%.1f,%.4f,%.2f,%s\n", p->name, o->recsize, nprocs,
                   all / (1 << 20), secs, mibs, tbad ? "FAIL" : "ok");
        else
            printf("%-4s %6ld B  P=%-2d grid %dx%-2d %9.1f MiB %8.3f s %9.1f MiB/s  %s\n",
                   p->name, o->recsize, nprocs, p->psize[0], p->ndims == 2 ? p->psize[1] : 1,
                   all / (1 << 20), secs, mibs, tbad ? "DATA MISMATCH" : "verified");
        fflush(stdout);
    }
    if (v.ftype != MPI_DATATYPE_NULL)
        MPI_Type_free(&v.ftype);
    MPI_Type_free(&rec);
    free(buf);
    return tbad ? 1 : 0;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: ddio-patterns [-p LIST|all] [-r RECSIZE] [-m MIB] [-w MIB] [-D] [-i] "
                "[-H key=val]... [-q] [-C] FILE\n"
                "  -p  comma-separated patterns (default all): %s\n"
                "  -r  record size in bytes (default 8192)\n"
                "  -m  file size in MiB (default 64); rounded to whole records/rows\n"
                "  -w  each rank's part in calls of at most MIB (default: one call);\n"
                "      the time is the calls' sum, each barrier to barrier\n"
                "  -D  file views from MPI_Type_create_darray (default: the same type\n"
                "      map from vector/contiguous/resized; MPICH 4.0.2 flattens a darray)\n"
                "  -i  independent I/O (read/write) instead of collective (*_all)\n"
                "  -H  an MPI_Info hint for every open (repeatable)\n"
                "  -C  CSV output: pattern,recsize,P,MiB,seconds,MiB/s,status\n"
                "Patterns run in the order given; a read needs the file written first\n"
                "(every write pattern leaves the same content).\n",
                ALL_PATTERNS);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    int c;
    memset(o, 0, sizeof(*o));
    o->patterns = ALL_PATTERNS;
    o->recsize = 8192;
    o->mib = 64;
    while ((c = getopt(argc, argv, "p:r:m:w:DiH:qCh")) != -1) {
        switch (c) {
        case 'p': o->patterns = strcmp(optarg, "all") ? optarg : ALL_PATTERNS; break;
        case 'r': o->recsize = atol(optarg); break;
        case 'm': o->mib = atof(optarg); break;
        case 'w': o->window_mib = atof(optarg); break;
        case 'D': o->darray = 1; break;
        case 'i': o->independent = 1; break;
        case 'q': o->quiet = 1; break;
        case 'C': o->csv = 1; break;
        case 'H': {
            char *eq = strchr(optarg, '=');
            if (!eq || o->nhints == MAXH)
                return -1;
            *eq = 0;
            o->hk[o->nhints] = optarg;
            o->hv[o->nhints++] = eq + 1;
            break;
        }
        default: return -1;
        }
    }
    if (optind != argc - 1 || o->recsize <= 0 || o->mib <= 0)
        return -1;
    o->file = argv[optind];
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (parse_args(argc, argv, &o) != 0) {
        usage();
        MPI_Finalize();
        return 2;
    }
    long nrec = (long) (o.mib * 1048576.0 / (double) o.recsize);
    long cols = 1;
    while (cols * cols * 4 <= nrec)
        cols *= 2;
    long rows = nrec / cols;
    if (rows < nprocs)
        die("file too small for this many ranks");
    if (rank == 0 && !o.quiet && !o.csv)
        printf("ddio-patterns: %s, %ld records of %ld B (%ld x %ld), %.1f MiB, %d ranks, %s\n",
               o.file, rows * cols, o.recsize, rows, cols,
               (double) rows * cols * o.recsize / 1048576.0, nprocs,
               o.independent ? "independent I/O" : "collective I/O");
    char *list = strdup(o.patterns), *save = NULL;
    int fails = 0;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        struct pattern p;
        if (parse_pattern(t, &p) != 0) {
            if (rank == 0)
                fprintf(stderr, "ddio-patterns: unknown pattern '%s'\n", t);
            fails++;
            continue;
        }
        fails += run_pattern(&o, &p, rows, cols);
    }
    free(list);
    MPI_Finalize();
    return fails ? 1 : 0;
}
