/* What a file view costs in memory: every rank takes every P-th 8-byte
 * record of a view EXTENT bytes long (one MPI_Type_vector over the whole
 * extent: the way applications and Kotz's patterns describe a cyclic
 * distribution), then writes and reads back a window of W bytes per rank at
 * the start of the view and another at its end (the file is sparse: what
 * matters is the view, not the data), checks the bytes, seeks to the last
 * record and back, and reports its peak resident set (VmHWM).
 *
 * ROMIO flattens such a view in set_view: 16 bytes per record, EXTENT / P / 8
 * records per rank (2 GiB per rank for a 4 GiB view at P = 4). On ddio: the
 * view is the vector's tree, whatever EXTENT is.
 *
 * Prints one line "viewcost EXTENT P peak_kB=MAX base_kB=MAX" (the largest
 * over the ranks; base: before the view was set). With -m KB the run fails
 * when a rank's peak grew more than KB above its base.
 * usage: t_viewcost -e EXTENT_BYTES [-w WINDOW_BYTES] [-m KB] FILE */
#include "tutil.h"
#include <unistd.h>

static long vm_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t n = strlen(key);
    T_ASSERT(f, "cannot read /proc/self/status");
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, n))
            v = atol(line + n + 1);
    fclose(f);
    return v;
}

static void fill(double *b, MPI_Offset n, MPI_Offset first)
{
    unsigned char *p = (unsigned char *) b;
    for (MPI_Offset i = 0; i < n * 8; i++)
        p[i] = t_byte((uint64_t) t_rank * 131 + (uint64_t) first, (uint64_t) i);
}

/* write n records at record offset `at` of the view, read them back, compare */
static void window(MPI_File fh, double *w, double *r, MPI_Offset n, MPI_Offset at, int coll)
{
    fill(w, n, at);
    memset(r, 0, (size_t) n * 8);
    if (coll) {
        T_MPI(MPI_File_write_at_all(fh, at, w, (int) n, MPI_DOUBLE, MPI_STATUS_IGNORE));
        T_MPI(MPI_File_read_at_all(fh, at, r, (int) n, MPI_DOUBLE, MPI_STATUS_IGNORE));
    } else {
        T_MPI(MPI_File_seek(fh, at, MPI_SEEK_SET));
        T_MPI(MPI_File_write(fh, w, (int) n, MPI_DOUBLE, MPI_STATUS_IGNORE));
        T_MPI(MPI_File_seek(fh, at, MPI_SEEK_SET));
        T_MPI(MPI_File_read(fh, r, (int) n, MPI_DOUBLE, MPI_STATUS_IGNORE));
    }
    T_ASSERT(!memcmp(w, r, (size_t) n * 8), "window at record %lld: bytes read back differ",
             (long long) at);
}

int main(int argc, char **argv)
{
    long long extent = 0, win = 1 << 20, maxkb = -1;
    int opt;
    t_init(&argc, &argv);
    while ((opt = getopt(argc, argv, "e:w:m:")) != -1) {
        if (opt == 'e')
            extent = atoll(optarg);
        else if (opt == 'w')
            win = atoll(optarg);
        else if (opt == 'm')
            maxkb = atoll(optarg);
    }
    T_ASSERT(optind == argc - 1 && extent > 0, "usage: t_viewcost -e EXTENT [-w W] [-m KB] FILE");
    MPI_Offset recs = extent / 8 / t_size;      /* this rank's records in the view */
    MPI_Offset n = win / 8 < recs / 2 ? win / 8 : recs / 2;
    T_ASSERT(n > 0 && recs < INT32_MAX, "extent %lld: out of range at P=%d", extent, t_size);
    double *w = malloc((size_t) n * 8), *r = malloc((size_t) n * 8);
    T_ASSERT(w && r, "out of memory");
    fill(w, n, 0);              /* touch the buffers before the baseline */
    memset(r, 0, (size_t) n * 8);

    MPI_File fh;
    MPI_Datatype ft;
    MPI_Info info = tm_hints();
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[optind], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    MPI_Info_free(&info);
    T_MPI(MPI_File_write_at_all(fh, 0, w, 0, MPI_BYTE, MPI_STATUS_IGNORE));     /* warm up */
    long base = vm_kb("VmHWM:");
    T_MPI(MPI_Type_vector((int) recs, 1, t_size, MPI_DOUBLE, &ft));
    T_MPI(MPI_Type_commit(&ft));
    T_MPI(MPI_File_set_view(fh, (MPI_Offset) t_rank * 8, MPI_DOUBLE, ft, "native",
                            MPI_INFO_NULL));
    window(fh, w, r, n, 0, 1);
    window(fh, w, r, n, recs - n, 1);
    window(fh, w, r, n, recs / 2, 0);
    MPI_Offset pos, byte;
    T_MPI(MPI_File_seek(fh, recs - 1, MPI_SEEK_SET));
    T_MPI(MPI_File_get_position(fh, &pos));
    T_MPI(MPI_File_get_byte_offset(fh, pos, &byte));
    T_ASSERT(pos == recs - 1, "position %lld after seeking to %lld", (long long) pos,
             (long long) (recs - 1));
    T_ASSERT(byte == (MPI_Offset) t_rank * 8 + (recs - 1) * 8 * t_size,
             "byte offset of record %lld: %lld", (long long) pos, (long long) byte);
    long peak = vm_kb("VmHWM:"), grew = peak - base;
    T_MPI(MPI_File_close(&fh));
    MPI_Type_free(&ft);

    long all[2] = { peak, base }, mx[2], grew_max;
    MPI_Reduce(all, mx, 2, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&grew, &grew_max, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (t_rank == 0)
        printf("viewcost %lld %d peak_kB=%ld base_kB=%ld grew_kB=%ld\n", extent, t_size, mx[0],
               mx[1], grew_max);
    T_ASSERT(maxkb < 0 || grew_max <= maxkb, "a rank's peak grew %ld kB with the view (limit %lld)",
             grew_max, maxkb);
    free(w);
    free(r);
    return t_finish();
}
