/* ior-style: IOR's standard cases as one MPI program, so they can be run
 * against ddio: and ufs: in the same run without IOR itself (bench/ior.sh).
 *
 * Bandwidth mode (IOR's parameters, IOR's letters where IOR has one):
 *   -b SIZE block per rank per segment   -t SIZE transfer size
 *   -s N segments                        -F file per process
 *   -c collective calls                  -z random offsets (each transfer
 *   -G SEED seed of -z and the data         once, in a per-rank shuffled order)
 *   -C read what rank+1 wrote            -w write phase, -r read phase
 *   -k keep the files (else deleted after the last phase)
 *   -n NAME case name: the file is PATH followed by NAME (PATH.RANK with -F)
 *   -T TAG read phase printed as read-TAG (ior.sh: hot, cold)
 *   -H k=v,... MPI_Info hints for every open
 *   -f PLAN one test per line of PLAN (options as above, on top of the
 *      command line's), so one launch runs a whole matrix
 * Layout as IOR: shared file offset = seg*P*block + rank*block + i*xfer,
 * file per process offset = seg*block + i*xfer. The write time is IOR's
 * with -e: barrier, open, every write, MPI_File_sync, close, barrier (so the
 * bytes are durable inside it); the read time barrier, open, reads, close,
 * barrier. Every 8-byte word holds a function of its file offset and the
 * writer's rank; reads land in a buffer of the rank's whole volume and are
 * checked byte for byte after the timed region. One line per phase:
 *   RESULT,case,phase,P,xfer,block,segments,fpp,coll,random,neighbour,bytes,seconds,MiB_s,status
 *
 * Latency mode (-L): independent MPI_File_write_at / read_at of each size in
 * -l LIST (default 8,4k,64k,1m), -N calls each (after 8 unrecorded warm-up
 * calls) at random size-aligned offsets of a region of -b bytes per rank that
 * was written and synced first (reads are hot: the bytes were just written).
 * Only rank 0 calls while the other ranks wait without spinning (they would
 * take the CPU from the servers); -A makes every rank call at once. With -c
 * every rank calls MPI_File_write_at_all / read_at_all instead (op
 * coll-write, coll-read), and the launch ends with the agreements such a
 * call makes, alone: -N pairs of an MPI_Iallgather of 3 int64 and an
 * MPI_Iallreduce of MPI_2INT (MAXLOC), polled with MPI_Test and
 * sched_yield as the driver's are (op agree, size 0). Each call is timed
 * alone; reads are checked after their timer stops. One line per op and
 * size:
 *   LATENCY,op,size,calls,callers,p50_us,p99_us,mean_us,max_us,status
 * (p50/p99/mean/max over rank 0's calls).
 *
 *   mpich/bin/mpicc -O2 -o bench/bin/ior-style bench/ior-style.c
 *   tools/ddio-run -s 2 -- mpiexec -n 4 bench/bin/ior-style -b 16m -t 1m -w -r -n x ddio:/ior-
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SIZES 8
#define MAX_TOKENS 64

struct cfg {
    long long block, xfer;
    int segments, fpp, coll, random, neighbour, write, read, keep, latency, all_call;
    unsigned long long seed;
    int ncalls, nsizes;
    long long sizes[MAX_SIZES];
    char name[128], tag[32], hints[512], plan[512];
};

static int rank, nprocs;

static void usage_exit(const char *why)
{
    if (rank == 0)
        fprintf(stderr, "ior-style: %s\nusage: ior-style [-b SIZE] [-t SIZE] [-s N] [-F] [-c] "
                "[-z] [-G SEED] [-C] [-w] [-r] [-k] [-n NAME] [-T TAG] [-H k=v,...] "
                "[-f PLAN] [-L [-l SIZES] [-N CALLS] [-A]] PATH\n", why);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

static long long parse_size(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    switch (*end) {
    case 'g': case 'G': v <<= 10; /* fall through */
    case 'm': case 'M': v <<= 10; /* fall through */
    case 'k': case 'K': v <<= 10; end++; break;
    case '\0': break;
    default: usage_exit("bad size");
    }
    if (*end != '\0' || v <= 0)
        usage_exit("bad size");
    return v;
}

static void parse_sizes(struct cfg *c, char *list)
{
    c->nsizes = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (c->nsizes == MAX_SIZES)
            usage_exit("too many sizes");
        c->sizes[c->nsizes++] = parse_size(tok);
    }
}

static void copy_str(char *dst, size_t n, const char *src)
{
    if (strlen(src) >= n)
        usage_exit("argument too long");
    strcpy(dst, src);
}

/* one option with its argument (or NULL); returns 1 when it took the argument */
static int apply_opt(struct cfg *c, char opt, char *arg)
{
    switch (opt) {
    case 'F': c->fpp = 1; return 0;
    case 'c': c->coll = 1; return 0;
    case 'z': c->random = 1; return 0;
    case 'C': c->neighbour = 1; return 0;
    case 'w': c->write = 1; return 0;
    case 'r': c->read = 1; return 0;
    case 'k': c->keep = 1; return 0;
    case 'L': c->latency = 1; return 0;
    case 'A': c->all_call = 1; return 0;
    default: break;
    }
    if (!arg)
        usage_exit("option needs an argument");
    switch (opt) {
    case 'b': c->block = parse_size(arg); break;
    case 't': c->xfer = parse_size(arg); break;
    case 's': c->segments = atoi(arg); break;
    case 'G': c->seed = strtoull(arg, NULL, 10); break;
    case 'N': c->ncalls = atoi(arg); break;
    case 'l': parse_sizes(c, arg); break;
    case 'n': copy_str(c->name, sizeof c->name, arg); break;
    case 'T': copy_str(c->tag, sizeof c->tag, arg); break;
    case 'H': copy_str(c->hints, sizeof c->hints, arg); break;
    case 'f': copy_str(c->plan, sizeof c->plan, arg); break;
    default: usage_exit("unknown option");
    }
    return 1;
}

/* argv-style options; returns the index of the first operand */
static int parse_opts(struct cfg *c, int argc, char **argv)
{
    int i = 0;
    while (i < argc && argv[i][0] == '-' && argv[i][1] != '\0') {
        char opt = argv[i][1];
        if (argv[i][2] != '\0')
            usage_exit("one option per word");
        i += 1 + apply_opt(c, opt, i + 1 < argc ? argv[i + 1] : NULL);
    }
    return i;
}

static void check_cfg(const struct cfg *c)
{
    if (c->latency)
        return;
    if (c->xfer % 8 || c->block % c->xfer || c->segments < 1)
        usage_exit("the transfer size must be a multiple of 8 and divide the block");
    if (!c->write && !c->read)
        usage_exit("nothing to do: give -w and/or -r");
}

/* ---- data: every 8-byte word is a function of its offset and its writer */

static uint64_t word_at(long long off, int writer, unsigned long long seed)
{
    uint64_t z = (uint64_t)off * 0x9E3779B97F4A7C15ull ^ ((uint64_t)writer << 40) ^ seed;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void fill(char *buf, long long len, long long off, int writer, unsigned long long seed)
{
    for (long long i = 0; i < len; i += 8) {
        uint64_t w = word_at(off + i, writer, seed);
        memcpy(buf + i, &w, 8);
    }
}

static long long count_bad(const char *buf, long long len, long long off, int writer,
                           unsigned long long seed)
{
    long long bad = 0;
    for (long long i = 0; i < len; i += 8) {
        uint64_t w = word_at(off + i, writer, seed);
        bad += memcmp(buf + i, &w, 8) != 0;
    }
    return bad;
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *xalloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, n ? n : 8) != 0)
        usage_exit("out of memory");
    return p;
}

/* ---- bandwidth mode */

struct test {
    const struct cfg *c;
    long long per_seg, vol;       /* transfers per segment, bytes per rank */
    long long *order;             /* this rank's transfer indices, in call order */
    char *buf;
    MPI_Info info;
};

static MPI_Info make_info(const char *hints)
{
    MPI_Info info;
    MPI_Info_create(&info);
    char copy[512], *save;
    strcpy(copy, hints);
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            usage_exit("hint without =");
        *eq = '\0';
        MPI_Info_set(info, kv, eq + 1);
    }
    return info;
}

static void file_name(char *out, size_t n, const char *path, const struct test *t, int owner)
{
    if (t->c->fpp)
        snprintf(out, n, "%s%s.%05d", path, t->c->name, owner);
    else
        snprintf(out, n, "%s%s", path, t->c->name);
}

/* the file offset of transfer index i of rank r's data */
static long long offset_of(const struct test *t, int r, long long i)
{
    long long seg = i / t->per_seg, in = i % t->per_seg;
    long long seg_bytes = t->c->fpp ? t->c->block : nprocs * t->c->block;
    long long mine = t->c->fpp ? 0 : r * t->c->block;
    return seg * seg_bytes + mine + in * t->c->xfer;
}

static void make_order(struct test *t)
{
    long long n = t->vol / t->c->xfer;
    t->order = xalloc(n * sizeof *t->order);
    for (long long i = 0; i < n; i++)
        t->order[i] = i;
    if (!t->c->random)
        return;
    uint64_t s = t->c->seed * 2654435761ull + (uint64_t)rank + 1;
    for (long long i = n - 1; i > 0; i--) {       /* Fisher-Yates */
        long long j = (long long)(xorshift(&s) % (uint64_t)(i + 1));
        long long x = t->order[i];
        t->order[i] = t->order[j];
        t->order[j] = x;
    }
}

static int do_calls(MPI_File fh, struct test *t, int owner, int is_write)
{
    long long n = t->vol / t->c->xfer;
    int count = (int)t->c->xfer, err = MPI_SUCCESS;
    for (long long k = 0; k < n && err == MPI_SUCCESS; k++) {
        long long i = t->order[k];
        MPI_Offset off = offset_of(t, owner, i);
        char *p = t->buf + i * t->c->xfer;
        if (is_write)
            err = t->c->coll ? MPI_File_write_at_all(fh, off, p, count, MPI_BYTE, MPI_STATUS_IGNORE)
                             : MPI_File_write_at(fh, off, p, count, MPI_BYTE, MPI_STATUS_IGNORE);
        else
            err = t->c->coll ? MPI_File_read_at_all(fh, off, p, count, MPI_BYTE, MPI_STATUS_IGNORE)
                             : MPI_File_read_at(fh, off, p, count, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    return err;
}

/* This rank's own seconds in each stage of its last phase (no barrier
 * between stages, so the phase's time is unchanged); the report takes the
 * slowest rank's per stage, so a miss against ufs: can be put on the stage
 * that holds it. */
enum { ST_OPEN, ST_IO, ST_SYNC, ST_CLOSE, NSTAGES };
static double stage_s[NSTAGES];

/* open, calls, (sync), close on the file holding `owner`'s data */
static int phase_io(struct test *t, const char *path, int owner, int is_write)
{
    char name[1024];
    file_name(name, sizeof name, path, t, owner);
    MPI_Comm comm = t->c->fpp ? MPI_COMM_SELF : MPI_COMM_WORLD;
    int amode = is_write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    MPI_File fh;
    double tm[NSTAGES + 1] = {MPI_Wtime()};
    memset(stage_s, 0, sizeof stage_s);
    int err = MPI_File_open(comm, name, amode, t->info, &fh);
    tm[1] = MPI_Wtime();
    stage_s[ST_OPEN] = tm[1] - tm[0];
    if (err != MPI_SUCCESS)
        return err;
    err = do_calls(fh, t, owner, is_write);
    tm[2] = MPI_Wtime();
    if (is_write && err == MPI_SUCCESS)
        err = MPI_File_sync(fh);
    tm[3] = MPI_Wtime();
    int cerr = MPI_File_close(&fh);
    tm[4] = MPI_Wtime();
    for (int s = ST_IO; s < NSTAGES; s++)
        stage_s[s] = tm[s + 1] - tm[s];
    return err != MPI_SUCCESS ? err : cerr;
}

static void print_result(const struct test *t, const char *phase, double secs, const char *status,
                         const double *stages)
{
    const struct cfg *c = t->c;
    double bytes = (double)t->vol * nprocs;
    printf("RESULT,%s,%s,%d,%lld,%lld,%d,%d,%d,%d,%d,%.0f,%.6f,%.6g,%s,%.6f,%.6f,%.6f,%.6f\n",
           c->name, phase, nprocs, c->xfer, c->block, c->segments, c->fpp, c->coll, c->random,
           c->neighbour, bytes, secs, bytes / 1048576.0 / secs, status, stages[ST_OPEN],
           stages[ST_IO], stages[ST_SYNC], stages[ST_CLOSE]);
    fflush(stdout);
}

static void report(const struct test *t, const char *phase, double secs, int err, long long bad)
{
    int lerr = err != MPI_SUCCESS, anyerr;
    long long allbad;
    double slowest[NSTAGES];
    MPI_Allreduce(stage_s, slowest, NSTAGES, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&lerr, &anyerr, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&bad, &allbad, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    char status[MPI_MAX_ERROR_STRING + 32] = "ok";
    if (lerr) {
        int len;
        MPI_Error_string(err, status, &len);
        for (char *p = status; *p; p++)
            if (*p == ',' || *p == '\n')
                *p = ';';
        fprintf(stderr, "ior-style: rank %d: %s %s: %s\n", rank, t->c->name, phase, status);
    }
    if (anyerr)
        snprintf(status, sizeof status, "FAIL(io)");
    else if (allbad)
        snprintf(status, sizeof status, "FAIL(verify:%lld words)", allbad);
    if (rank == 0)
        print_result(t, phase, secs, status, slowest);
}

static double timed(struct test *t, const char *path, int owner, int is_write, int *err)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    *err = phase_io(t, path, owner, is_write);
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static void fill_rank(struct test *t, int r)
{
    for (long long i = 0; i < t->vol / t->c->xfer; i++)
        fill(t->buf + i * t->c->xfer, t->c->xfer, offset_of(t, r, i), r, t->c->seed);
}

static void write_phase(struct test *t, const char *path)
{
    char name[1024];
    file_name(name, sizeof name, path, t, rank);
    if (t->c->fpp || rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);      /* no stale bytes can pass the check */
    fill_rank(t, rank);
    int err;
    double secs = timed(t, path, rank, 1, &err);
    report(t, "write", secs, err, 0);
}

static void read_phase(struct test *t, const char *path)
{
    int owner = t->c->neighbour ? (rank + 1) % nprocs : rank;
    memset(t->buf, 0, t->vol);
    int err;
    double secs = timed(t, path, owner, 0, &err);
    long long bad = 0;
    for (long long i = 0; err == MPI_SUCCESS && i < t->vol / t->c->xfer; i++)
        bad += count_bad(t->buf + i * t->c->xfer, t->c->xfer, offset_of(t, owner, i), owner,
                         t->c->seed);
    char phase[48];
    snprintf(phase, sizeof phase, t->c->tag[0] ? "read-%s" : "read", t->c->tag);
    report(t, phase, secs, err, bad);
}

static void delete_files(const struct test *t, const char *path)
{
    char name[1024];
    file_name(name, sizeof name, path, t, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (t->c->fpp || rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
}

static void run_test(const struct cfg *c, const char *path)
{
    check_cfg(c);
    struct test t = { .c = c, .per_seg = c->block / c->xfer };
    t.vol = c->block * c->segments;
    t.buf = xalloc(t.vol);
    t.info = make_info(c->hints);
    make_order(&t);
    if (c->write)
        write_phase(&t, path);
    if (c->read)
        read_phase(&t, path);
    if (!c->keep)
        delete_files(&t, path);
    MPI_Info_free(&t.info);
    free(t.order);
    free(t.buf);
}

/* ---- latency mode */

/* wait for the other ranks without spinning in MPI progress */
static void quiet_barrier(void)
{
    MPI_Request req;
    int done = 0;
    struct timespec ms = { 0, 1000000 };
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE))
        nanosleep(&ms, NULL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct lat {
    MPI_File fh;
    long long region, base;       /* bytes per rank, this rank's first byte */
    unsigned long long seed;
    char *buf;
    double *us;
    int coll;                     /* -c: every rank, collective calls */
};

/* n calls of `size` bytes at random aligned offsets; returns the MPI error */
static int lat_calls(struct lat *l, long long size, int n, int is_write, long long *bad,
                     uint64_t *rng)
{
    int err = MPI_SUCCESS;
    for (int k = 0; k < n && err == MPI_SUCCESS; k++) {
        long long off = l->base + (long long)(xorshift(rng) % (uint64_t)(l->region / size)) * size;
        if (is_write)
            fill(l->buf, size, off, rank, l->seed);
        double t0 = MPI_Wtime();
        if (l->coll && is_write)
            err = MPI_File_write_at_all(l->fh, off, l->buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE);
        else if (l->coll)
            err = MPI_File_read_at_all(l->fh, off, l->buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE);
        else
            err = is_write ? MPI_File_write_at(l->fh, off, l->buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE)
                           : MPI_File_read_at(l->fh, off, l->buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE);
        l->us[k] = (MPI_Wtime() - t0) * 1e6;
        if (!is_write)
            *bad += count_bad(l->buf, size, off, rank, l->seed);
    }
    return err;
}

static void lat_print(const char *op, long long size, int n, int callers, double *us, int err,
                      long long bad)
{
    double sum = 0;
    qsort(us, n, sizeof *us, cmp_double);
    for (int k = 0; k < n; k++)
        sum += us[k];
    printf("LATENCY,%s,%lld,%d,%d,%.1f,%.1f,%.1f,%.1f,%s\n", op, size, n, callers, us[n / 2],
           us[(int)((n - 1) * 0.99)], sum / n, us[n - 1],
           err != MPI_SUCCESS ? "FAIL(io)" : bad ? "FAIL(verify)" : "ok");
    fflush(stdout);
}

/* the write then the read latency of one size, on the calling ranks */
static int lat_size(struct lat *l, const struct cfg *c, long long size, int calling, int callers)
{
    const char *ops[2] = { l->coll ? "coll-read" : "read", l->coll ? "coll-write" : "write" };
    uint64_t rng = c->seed * 7919 + (uint64_t)size + (uint64_t)rank * 104729 + 1;
    int failed = 0;
    for (int is_write = 1; is_write >= 0; is_write--) {
        long long bad = 0;
        int err = MPI_SUCCESS;
        if (calling) {
            err = lat_calls(l, size, 8, is_write, &bad, &rng);            /* warm-up */
            if (err == MPI_SUCCESS)
                err = lat_calls(l, size, c->ncalls, is_write, &bad, &rng);
        }
        if (rank == 0)
            lat_print(ops[is_write], size, c->ncalls, callers, l->us, err, bad);
        failed |= err != MPI_SUCCESS || bad;
        quiet_barrier();
    }
    return failed;
}

/* one request polled as the driver's agreements poll theirs */
static void poll_yield(MPI_Request *r)
{
    int done = 0;
    for (MPI_Test(r, &done, MPI_STATUS_IGNORE); !done; MPI_Test(r, &done, MPI_STATUS_IGNORE))
        sched_yield();
}

/* -c: n pairs of agreements alone, what a collective call adds to the
 * same bytes moved independently (its barrier at entry and its outcome) */
static void lat_agree(struct lat *l, int n)
{
    int64_t mine[3] = { 0, 0, 1 }, *all = xalloc(sizeof(int64_t) * 3 * (size_t)nprocs);
    int in[2] = { 0, rank }, out[2];
    for (int k = 0; k < n + 8; k++) {
        MPI_Request r;
        double t0 = MPI_Wtime();
        MPI_Iallgather(mine, 3, MPI_INT64_T, all, 3, MPI_INT64_T, MPI_COMM_WORLD, &r);
        poll_yield(&r);
        MPI_Iallreduce(in, out, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD, &r);
        poll_yield(&r);
        if (k >= 8)             /* after 8 warm-up pairs */
            l->us[k - 8] = (MPI_Wtime() - t0) * 1e6;
    }
    if (rank == 0)
        lat_print("agree", 0, n, nprocs, l->us, MPI_SUCCESS, 0);
    free(all);
}

/* every rank writes its region (the data the reads check), synced */
static int lat_prefill(struct lat *l)
{
    const long long chunk = 4 << 20;
    int err = MPI_SUCCESS;
    char *p = xalloc(chunk);
    for (long long o = 0; o < l->region && err == MPI_SUCCESS; o += chunk) {
        long long n = l->region - o < chunk ? l->region - o : chunk;
        fill(p, n, l->base + o, rank, l->seed);
        err = MPI_File_write_at(l->fh, l->base + o, p, (int)n, MPI_BYTE, MPI_STATUS_IGNORE);
    }
    free(p);
    return err != MPI_SUCCESS ? err : MPI_File_sync(l->fh);
}

static int run_latency(const struct cfg *c, const char *path)
{
    long long maxsz = 0;
    for (int i = 0; i < c->nsizes; i++)
        maxsz = c->sizes[i] > maxsz ? c->sizes[i] : maxsz;
    if (c->block < maxsz || c->block % maxsz || maxsz % 8 || c->ncalls < 1)
        usage_exit("latency: -b must be a multiple of the largest size (a multiple of 8), -N >= 1");
    char name[1024];
    snprintf(name, sizeof name, "%s%s", path, c->name);
    struct lat l = { .region = c->block, .base = rank * c->block, .seed = c->seed,
                     .coll = c->coll };
    l.buf = xalloc(maxsz);
    l.us = xalloc(c->ncalls * sizeof *l.us);
    MPI_Info info = make_info(c->hints);
    if (rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    int err = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &l.fh);
    int failed = err != MPI_SUCCESS;
    if (!failed) {
        failed = lat_prefill(&l) != MPI_SUCCESS;
        quiet_barrier();
        int all = c->all_call || c->coll, callers = all ? nprocs : 1;
        for (int i = 0; i < c->nsizes && !failed; i++)
            failed = lat_size(&l, c, c->sizes[i], all || rank == 0, callers);
        if (c->coll && !failed)
            lat_agree(&l, c->ncalls);
        MPI_File_close(&l.fh);
    }
    if (!c->keep && rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Info_free(&info);
    free(l.buf);
    free(l.us);
    return failed;
}

/* ---- plan files: one test per line */

static void run_plan(const struct cfg *base, const char *path)
{
    FILE *f = fopen(base->plan, "r");
    if (!f)
        usage_exit("cannot open the plan file");
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        char *tok[MAX_TOKENS], *save;
        int n = 0;
        for (char *w = strtok_r(line, " \t\n", &save); w && n < MAX_TOKENS; w = strtok_r(NULL, " \t\n", &save))
            tok[n++] = w;
        if (n == 0 || tok[0][0] == '#')
            continue;
        struct cfg c = *base;
        if (parse_opts(&c, n, tok) != n)
            usage_exit("a plan line has an operand");
        run_test(&c, path);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    struct cfg c = { .block = 1 << 20, .xfer = 256 << 10, .segments = 1, .seed = 1,
                     .ncalls = 1000, .nsizes = 4, .sizes = { 8, 4 << 10, 64 << 10, 1 << 20 },
                     .name = "ior-style" };
    int first = 1 + parse_opts(&c, argc - 1, argv + 1);
    if (first != argc - 1)
        usage_exit("give one PATH (a file name prefix: ddio:/x, ufs:/dir/x)");
    int failed = 0;
    if (c.latency)
        failed = run_latency(&c, argv[first]);
    else if (c.plan[0])
        run_plan(&c, argv[first]);
    else
        run_test(&c, argv[first]);
    MPI_Finalize();
    return failed;
}
