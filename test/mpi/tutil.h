/* Small helpers shared by the MPI test programs: fail loudly with the MPI
 * error string and the rank, and a deterministic byte pattern. */
#ifndef DDIO_TUTIL_H
#define DDIO_TUTIL_H
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int t_rank, t_size;

static void t_init(int *argc, char ***argv)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t_size);
}

/* the message in one write: another rank's MPI_Abort may kill this process
 * between two (a test that looks for the message would then miss it); and
 * a moment before the abort: Hydra drops output still in flight when an
 * abort tears the job down (a failed step once showed no message at all) */
#define T_FAIL(...) do { char m_[4096]; \
    int o_ = snprintf(m_, sizeof m_, "FAIL rank %d %s:%d: ", t_rank, __FILE__, __LINE__); \
    o_ += snprintf(m_ + o_, sizeof m_ - (size_t)o_ - 1, __VA_ARGS__); \
    if (o_ > (int)sizeof m_ - 2) o_ = (int)sizeof m_ - 2; \
    m_[o_++] = '\n'; fwrite(m_, 1, (size_t)o_, stderr); usleep(300000); \
    MPI_Abort(MPI_COMM_WORLD, 1); } while (0)

#define T_MPI(call) do { int e_ = (call); if (e_ != MPI_SUCCESS) { \
    char s_[MPI_MAX_ERROR_STRING]; int n_; MPI_Error_string(e_, s_, &n_); \
    T_FAIL("%s: %s", #call, s_); } } while (0)

#define T_ASSERT(cond, ...) do { if (!(cond)) T_FAIL(__VA_ARGS__); } while (0)

/* error class of an MPI call that is expected to fail */
__attribute__((unused)) static int t_errclass(int err)
{
    int c = MPI_SUCCESS;
    if (err != MPI_SUCCESS)
        MPI_Error_class(err, &c);
    return c;
}

/* byte `i` of the deterministic pattern `seed` */
static inline unsigned char t_byte(uint64_t seed, uint64_t i)
{
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (seed << 32 | seed);
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    return (unsigned char) (x >> 56);
}

/* path opened read-write by every rank as a new file (rank 0 deletes
 * whatever was there first) */
__attribute__((unused)) static MPI_File t_open_new(const char *path)
{
    MPI_File fh;
    if (t_rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                        &fh));
    return fh;
}

/* name + suffix, e.g. t_name(base, ".2") */
__attribute__((unused)) static char *t_name(const char *base, const char *suffix)
{
    size_t n = strlen(base) + strlen(suffix) + 1;
    char *s = malloc(n);
    snprintf(s, n, "%s%s", base, suffix);
    return s;
}

__attribute__((unused)) static int t_finish(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("PASS\n");
    MPI_Finalize();
    return 0;
}
/* hints from DDIO_TEST_HINTS="k=v,k=v" */
/* xorshift64: the tests' reproducible random numbers (*s: the state, not 0) */
__attribute__((unused)) static uint64_t t_xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* read len bytes at off and compare count and bytes with a model of the
 * file, model[0, size): short at its end, nothing past it */
__attribute__((unused)) static void t_read_model(MPI_File fh, MPI_Offset off, int len,
                                                 const unsigned char *model, MPI_Offset size,
                                                 const char *what)
{
    unsigned char *buf = malloc(len > 0 ? (size_t)len : 1);
    MPI_Status st;
    int got;
    T_ASSERT(buf, "%s: out of memory", what);
    memset(buf, 0xA5, len > 0 ? (size_t)len : 1);
    T_MPI(MPI_File_read_at(fh, off, buf, len, MPI_BYTE, &st));
    T_MPI(MPI_Get_count(&st, MPI_BYTE, &got));
    MPI_Offset want = off >= size ? 0 : (size - off < len ? size - off : len);
    T_ASSERT(got == want, "%s: read %d at %lld: got %d bytes, want %lld", what, len,
             (long long)off, got, (long long)want);
    for (int i = 0; i < got; i++)
        T_ASSERT(buf[i] == model[off + i], "%s: byte %lld: got %u want %u", what,
                 (long long)(off + i), buf[i], model[off + i]);
    free(buf);
}

/* A model of a file's bytes that grows with the writes, the same on every
 * rank (each rank applies every rank's writes to it): t_local, t_localw */
__attribute__((unused)) static unsigned char *t_file;
__attribute__((unused)) static MPI_Offset t_file_size, t_file_cap;

/* zeros up to `to` (a write past the end leaves a hole) */
__attribute__((unused)) static void t_file_grow(MPI_Offset to)
{
    if (to > t_file_cap) {
        t_file_cap = to * 2;
        t_file = realloc(t_file, (size_t)t_file_cap);
        T_ASSERT(t_file, "out of memory");
    }
    if (to > t_file_size)
        memset(t_file + t_file_size, 0, (size_t)(to - t_file_size));
    t_file_size = to > t_file_size ? to : t_file_size;
}

/* bytes [off, off + n) of pattern `seed` */
__attribute__((unused)) static void t_file_set(MPI_Offset off, MPI_Offset n, uint64_t seed)
{
    t_file_grow(off + n);
    for (MPI_Offset i = 0; i < n; i++)
        t_file[off + i] = t_byte(seed, (uint64_t)(off + i));
}

/* MPI's way to make every rank's writes visible to every rank (nonatomic) */
__attribute__((unused)) static void t_sync_barrier_sync(MPI_File fh)
{
    T_MPI(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_sync(fh));
}

__attribute__((unused)) static MPI_Info tm_hints(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    const char *h = getenv("DDIO_TEST_HINTS");
    if (h && *h) {
        char *s = strdup(h), *save = NULL;
        for (char *kv = strtok_r(s, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(kv, '=');
            if (eq) {
                *eq = 0;
                MPI_Info_set(info, kv, eq + 1);
            }
        }
        free(s);
    }
    return info;
}
/* A buffer for count x t: *base is where the type's origin lies, *n its
 * size. With margin, room on both sides: where ROMIO departs from the type
 * map (a moved lb) it may place bytes outside it; they must land in the
 * buffer (and in a harness's comparison), not in the heap. */
static inline unsigned char *t_type_alloc(MPI_Datatype t, int count, int margin,
                                          unsigned char **base, size_t *n)
{
    MPI_Aint lb, ext, tlb, text, lo, hi;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    lo = tlb + (ext < 0 ? (MPI_Aint) (count - 1) * ext : 0);
    hi = tlb + text + (ext > 0 ? (MPI_Aint) (count - 1) * ext : 0);
    if (lo > 0)
        lo = 0;
    if (margin) {
        MPI_Aint m = 2 * ((lb < 0 ? -lb : lb) + (ext < 0 ? -ext : ext)) + 256;
        lo -= m;
        hi += m;
    }
    *n = (size_t) (hi - lo) + 1;
    unsigned char *p = malloc(*n);
    T_ASSERT(p, "out of memory");
    *base = p - lo;
    return p;
}

/* a view of this rank's chunks of ch bytes dealt round-robin over the
 * ranks, from file offset lo on */
static inline void t_set_dealt_view(MPI_File fh, MPI_Offset lo, int ch)
{
    MPI_Datatype chunk, ft;
    MPI_Type_contiguous(ch, MPI_BYTE, &chunk);
    MPI_Type_create_resized(chunk, 0, (MPI_Aint) ch * t_size, &ft);
    MPI_Type_commit(&ft);
    T_MPI(MPI_File_set_view(fh, lo + (MPI_Offset) t_rank * ch, MPI_BYTE, ft, "native",
                            MPI_INFO_NULL));
    MPI_Type_free(&chunk);
    MPI_Type_free(&ft);
}

#endif
