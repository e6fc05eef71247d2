/* ddio-patterns: Kotz's access patterns (TOCS 1997, Table II) as a real
 * MPI-IO workload. A file of fixed-size records, a 1-D vector or a row-major
 * 2-D matrix, is written or read by all ranks in ONE collective call each,
 * with HPF BLOCK/CYCLIC/NONE distributions expressed as darray file views
 * and contiguous memory. Every record's bytes are a function of its global
 * index, so every read checks what it got and every write is checked with a
 * plain read-back. Works on any ROMIO file name (ddio:, ufs:, ...).
 *
 * usage: ddio-patterns [-p LIST] [-r RECSIZE] [-m MIB] [-i] [-H key=val]...
 *                      [-q] [-C] FILE
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

/* Global indices (0..n-1) owned in one dimension by coordinate c of p. */
static long owned(enum dist d, long n, int p, int c, long *out)
{
    long k = 0;
    if (d == D_NONE || d == D_ALL) {
        for (long i = 0; i < n; i++)
            out[k++] = i;
    } else if (d == D_BLOCK) {
        long b = (n + p - 1) / p;
        for (long i = (long) c * b; i < n && i < (long) (c + 1) * b; i++)
            out[k++] = i;
    } else {
        for (long i = c; i < n; i += p)
            out[k++] = i;
    }
    return k;
}

struct view {
    MPI_Datatype ftype;     /* MPI_DATATYPE_NULL: contiguous whole file */
    long nrec;              /* records this rank accesses */
    long *gidx;             /* their global indices, in view order */
};

/* 1-D "rn"/"wn": rank 0 gets everything. "ra": everyone gets everything. */
static void make_view(const struct pattern *p, long rows, long cols, MPI_Datatype rec,
                      struct view *v)
{
    long nrec_total = rows * cols;
    v->ftype = MPI_DATATYPE_NULL;
    if (p->ndims == 1 && (p->d[0] == D_NONE || p->d[0] == D_ALL)) {
        v->nrec = (p->d[0] == D_ALL || rank == 0) ? nrec_total : 0;
        v->gidx = malloc(sizeof(long) * (size_t) (v->nrec ? v->nrec : 1));
        for (long i = 0; i < v->nrec; i++)
            v->gidx[i] = i;
        return;
    }
    int gs[2], ds[2], da[2], ps[2], coord[2];
    long n[2];
    if (p->ndims == 1) {
        n[0] = nrec_total;
    } else {
        n[0] = rows;
        n[1] = cols;
    }
    for (int i = 0; i < p->ndims; i++) {
        gs[i] = (int) n[i];
        ds[i] = p->d[i] == D_BLOCK ? MPI_DISTRIBUTE_BLOCK
            : p->d[i] == D_CYCLIC ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_NONE;
        da[i] = p->d[i] == D_CYCLIC ? 1 : MPI_DISTRIBUTE_DFLT_DARG;
        ps[i] = p->psize[i];
    }
    check(MPI_Type_create_darray(nprocs, rank, p->ndims, gs, ds, da, ps, MPI_ORDER_C,
                                 rec, &v->ftype), "darray");
    check(MPI_Type_commit(&v->ftype), "commit");
    /* row-major process coordinates, as darray uses */
    coord[0] = p->ndims == 1 ? rank : rank / ps[1];
    coord[1] = p->ndims == 1 ? 0 : rank % ps[1];
    long *own0 = malloc(sizeof(long) * (size_t) n[0]);
    long k0 = owned(p->d[0], n[0], ps[0], coord[0], own0);
    if (p->ndims == 1) {
        v->nrec = k0;
        v->gidx = own0;
        return;
    }
    long *own1 = malloc(sizeof(long) * (size_t) n[1]);
    long k1 = owned(p->d[1], n[1], ps[1], coord[1], own1);
    v->nrec = k0 * k1;
    v->gidx = malloc(sizeof(long) * (size_t) (v->nrec ? v->nrec : 1));
    for (long i = 0; i < k0; i++)
        for (long j = 0; j < k1; j++)
            v->gidx[i * k1 + j] = own0[i] * n[1] + own1[j];
    free(own0);
    free(own1);
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

static int run_pattern(const struct opts *o, const struct pattern *p, long rows, long cols)
{
    MPI_Datatype rec;
    MPI_Type_contiguous((int) o->recsize, MPI_BYTE, &rec);
    MPI_Type_commit(&rec);
    struct view v;
    make_view(p, rows, cols, rec, &v);
    size_t bytes = (size_t) v.nrec * (size_t) o->recsize;
    unsigned char *buf = malloc(bytes ? bytes : 1);
    if (!buf)
        die("out of memory");
    if (p->write)
        for (long i = 0; i < v.nrec; i++)
            fill_record(buf + i * o->recsize, (uint64_t) v.gidx[i], o->recsize);
    else
        memset(buf, 0xEE, bytes);

    MPI_File fh;
    MPI_Info info = make_info(o);
    int amode = p->write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    check(MPI_File_open(MPI_COMM_WORLD, o->file, amode, info, &fh), "open");
    MPI_Info_free(&info);
    if (v.ftype != MPI_DATATYPE_NULL)
        check(MPI_File_set_view(fh, 0, rec, v.ftype, "native", MPI_INFO_NULL), "set_view");

    MPI_Status st;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    check(do_io(fh, p->write, o->independent, buf, v.nrec, rec, &st), p->write ? "write" : "read");
    if (p->write)
        check(MPI_File_sync(fh), "sync");
    MPI_Barrier(MPI_COMM_WORLD);
    double t1 = MPI_Wtime();
    MPI_Count moved;
    MPI_Get_elements_x(&st, MPI_BYTE, &moved);
    check(MPI_File_close(&fh), "close");

    long bad = 0;
    if (moved != (MPI_Count) bytes)
        bad = v.nrec ? v.nrec : 1;
    else if (!p->write)
        for (long i = 0; i < v.nrec; i++)
            bad += !record_ok(buf + i * o->recsize, (uint64_t) v.gidx[i], o->recsize);
    long tbad;
    MPI_Allreduce(&bad, &tbad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (p->write && tbad == 0)
        tbad = verify_file(o, rows * cols);

    double total = (double) bytes, all;
    MPI_Allreduce(&total, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        double mibs = all / (1 << 20) / (t1 - t0);
        if (o->csv)
            printf("%s,%ld,%d,%.1f,%.4f,%.2f,%s\n", p->name, o->recsize, nprocs,
                   all / (1 << 20), t1 - t0, mibs, tbad ? "FAIL" : "ok");
        else
            printf("%-4s %6ld B  P=%-2d grid %dx%-2d %9.1f MiB %8.3f s %9.1f MiB/s  %s\n",
                   p->name, o->recsize, nprocs, p->psize[0], p->ndims == 2 ? p->psize[1] : 1,
                   all / (1 << 20), t1 - t0, mibs, tbad ? "DATA MISMATCH" : "verified");
        fflush(stdout);
    }
    if (v.ftype != MPI_DATATYPE_NULL)
        MPI_Type_free(&v.ftype);
    MPI_Type_free(&rec);
    free(buf);
    free(v.gidx);
    return tbad ? 1 : 0;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: ddio-patterns [-p LIST|all] [-r RECSIZE] [-m MIB] [-i] [-H key=val]... "
                "[-q] [-C] FILE\n"
                "  -p  comma-separated patterns (default all): %s\n"
                "  -r  record size in bytes (default 8192)\n"
                "  -m  file size in MiB (default 64); rounded to whole records/rows\n"
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
    while ((c = getopt(argc, argv, "p:r:m:iH:qCh")) != -1) {
        switch (c) {
        case 'p': o->patterns = strcmp(optarg, "all") ? optarg : ALL_PATTERNS; break;
        case 'r': o->recsize = atol(optarg); break;
        case 'm': o->mib = atof(optarg); break;
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
