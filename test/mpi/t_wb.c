/* Writeback started by same-host writers (group `local`; wb_note in
 * common/ddio_core_local.c). Each rank writes its own 4 MiB region in
 * 64 KiB calls straight into the servers' datafiles, with no sync; then
 * fewer than half of those bytes may still be dirty pages in the datafiles
 * (cachestat(2)): writeback started while the ranks wrote, so
 * MPI_File_sync finds little left. Without it every byte stays dirty until
 * the sync (the kernel's own writeback waits for 10 % of memory or 30 s).
 * Then sync-barrier-sync and every byte read back by every rank; the runner
 * compares the file with ufs:'s.
 * usage: t_wb FILE [SERVER-ROOT NSERVERS] (no root, as on ufs:: no
 * dirty-page check) */
#define _GNU_SOURCE
#include "tutil.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#define KiB 1024
#define MiB (1024 * 1024)
#define REGION (4 * MiB)
#define CALL (64 * KiB)
#define TMPFS_MAGIC 0x01021994

/* dirty pages of the file at path (cachestat(2), Linux 6.5); -1: no
 * cachestat here */
static long dirty_pages(const char *path)
{
    struct { uint64_t off, len; } range = { 0, 0 };     /* the whole file */
    struct { uint64_t cache, dirty, writeback, evicted, recently; } cs = { 0 };
    int fd = open(path, O_RDONLY);
    T_ASSERT(fd >= 0, "open datafile %s: %s", path, strerror(errno));
    long rc = syscall(451, fd, &range, &cs, 0);
    close(fd);
    return rc == 0 ? (long) cs.dirty : -1;
}

static void check_dirty(const char *name, const char *root, int nsrv)
{
    struct statfs sf;
    long dirty = 0, written = (long) t_size * REGION / 4096;
    T_ASSERT(statfs(root, &sf) == 0, "statfs %s: %s", root, strerror(errno));
    if (sf.f_type == TMPFS_MAGIC) {     /* its pages are never written back */
        printf("note: %s is tmpfs: dirty pages not checked\n", root);
        return;
    }
    for (int i = 0; i < nsrv; i++) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/s%d/%s", root, i, name);
        long n = dirty_pages(p);
        if (n < 0) {
            printf("note: no cachestat(2): dirty pages not checked\n");
            return;
        }
        dirty += n;
    }
    printf("dirty pages after %ld written: %ld\n", written, dirty);
    T_ASSERT(2 * dirty < written, "%ld of the %ld pages written are still dirty before "
             "any sync: no writeback was started", dirty, written);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv);
    T_ASSERT(argc == 2 || argc == 4, "usage: t_wb FILE [SERVER-ROOT NSERVERS]");
    MPI_Info info = tm_hints();
    MPI_File fh;
    if (t_rank == 0)
        MPI_File_delete(argv[1], MPI_INFO_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    T_MPI(MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    for (int r = 0; r < t_size; r++)
        t_file_set((MPI_Offset) r * REGION, REGION, 40);
    MPI_Offset lo = (MPI_Offset) t_rank * REGION;
    for (MPI_Offset o = lo; o < lo + REGION; o += CALL)
        T_MPI(MPI_File_write_at(fh, o, t_file + o, CALL, MPI_BYTE, MPI_STATUS_IGNORE));
    MPI_Barrier(MPI_COMM_WORLD);
    if (argc == 4 && t_rank == 0)
        check_dirty(argv[1] + strlen("ddio:/"), argv[2], atoi(argv[3]));
    t_sync_barrier_sync(fh);
    for (MPI_Offset o = 0; o < t_file_size; o += MiB + 13)
        t_read_model(fh, o, MiB + 13, t_file, t_file_size, "every byte after sync-barrier-sync");
    T_MPI(MPI_File_close(&fh));
    MPI_Info_free(&info);
    free(t_file);
    return t_finish();
}
