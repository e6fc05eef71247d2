/* Unit tests of the server's page-cache policy (ioserver/pcache.c): which
 * block I/O goes through the page cache, and the residency check that lets
 * a collective read use it only for data the cache holds. The file lives
 * in the current directory (the build tree, on a disk): on tmpfs a page
 * cannot be dropped, and the eviction cases would mean nothing. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "pcache.h"
#include "suite_run.h"

#define MiB (1024u * 1024u)
#define TMPFS_MAGIC 0x01021994

static char g_path[] = "./check-pcache.XXXXXX";
static int g_fd = -1;

static void setup(void)
{
    g_fd = mkstemp(g_path);
    ck_assert_int_ge(g_fd, 0);
    struct statfs sf;
    ck_assert_int_eq(fstatfs(g_fd, &sf), 0);
    ck_assert_msg(sf.f_type != TMPFS_MAGIC, "run from a directory on a disk, not tmpfs");
    char *b = malloc(MiB);
    ck_assert_ptr_nonnull(b);
    memset(b, 0x5a, MiB);
    ck_assert_int_eq(pwrite(g_fd, b, MiB, 0), (ssize_t)MiB);
    free(b);
}

static void teardown(void)
{
    close(g_fd);
    unlink(g_path);
    strcpy(g_path, "./check-pcache.XXXXXX");
}

/* written back, then dropped from the page cache */
static void drop(void)
{
    ck_assert_int_eq(fdatasync(g_fd), 0);
    ck_assert_int_eq(posix_fadvise(g_fd, 0, 0, POSIX_FADV_DONTNEED), 0);
}

static struct pcache_ask ask(int enabled, int collective, int write, uint64_t len)
{
    return (struct pcache_ask){.enabled = enabled, .twin = 1, .collective = collective,
                               .write = write, .len = len, .block = MiB, .fd = g_fd, .off = 0};
}

START_TEST(t_resident_after_write_and_drop)
{
    ck_assert_int_eq(pcache_resident(g_fd, 0, MiB), 1);        /* just written */
    ck_assert_int_eq(pcache_resident(g_fd, 100, 5000), 1);     /* unaligned range */
    drop();
    ck_assert_int_eq(pcache_resident(g_fd, 0, MiB), 0);
    ck_assert_int_eq(pcache_resident(g_fd, 100, 5000), 0);
    ck_assert_int_eq(pcache_resident(-1, 0, MiB), 0);
    ck_assert_int_eq(pcache_resident(g_fd, 0, 0), 0);
}
END_TEST

/* a read brings its pages back, and only a range wholly cached counts */
START_TEST(t_resident_after_read)
{
    drop();
    ck_assert_int_eq(posix_fadvise(g_fd, 0, 0, POSIX_FADV_RANDOM), 0);   /* no read-ahead */
    char b[8192];
    ck_assert_int_eq(pread(g_fd, b, sizeof b, 4096), (ssize_t)sizeof b);
    ck_assert_int_eq(pcache_resident(g_fd, 4096, 8192), 1);
    ck_assert_int_eq(pcache_resident(g_fd, 4096, 8193), 0);    /* one byte more: a cold page */
    ck_assert_int_eq(pcache_resident(g_fd, 0, MiB), 0);
    ck_assert_int_eq(pcache_resident(g_fd, 768 * 1024, 256 * 1024), 0);
}
END_TEST

START_TEST(t_choose_independent)
{
    struct pcache_ask a = ask(1, 0, 0, MiB);
    ck_assert_int_eq(pcache_choose(&a), 1);      /* a whole block, read */
    a.write = 1;
    ck_assert_int_eq(pcache_choose(&a), 1);      /* and written */
    drop();
    a.write = 0;
    ck_assert_int_eq(pcache_choose(&a), 1);      /* cold or not: it fills the cache */
    a.enabled = 0;
    ck_assert_int_eq(pcache_choose(&a), 0);      /* --page-cache off */
    a.len = 4096;
    ck_assert_int_eq(pcache_choose(&a), 1);      /* a few sectors: cached either way */
    a.twin = 0;
    ck_assert_int_eq(pcache_choose(&a), 0);      /* no twin (a root without O_DIRECT) */
}
END_TEST

START_TEST(t_choose_collective)
{
    struct pcache_ask a = ask(1, 1, 1, MiB);
    ck_assert_int_eq(pcache_choose(&a), 0);      /* collective write: O_DIRECT */
    a.write = 0;
    ck_assert_int_eq(pcache_choose(&a), 1);      /* collective read of hot data */
    a.enabled = 0;
    ck_assert_int_eq(pcache_choose(&a), 0);
    a.enabled = 1;
    drop();
    ck_assert_int_eq(pcache_choose(&a), 0);      /* cold: disk-directed */
    a.len = PCACHE_SMALL_IO;
    ck_assert_int_eq(pcache_choose(&a), 1);      /* 64 KiB of a block: small I/O */
    a.len = PCACHE_SMALL_IO + 4096;
    ck_assert_int_eq(pcache_choose(&a), 0);
    a.block = PCACHE_SMALL_IO;
    a.len = PCACHE_SMALL_IO;
    ck_assert_int_eq(pcache_choose(&a), 0);      /* a whole (small) block is not small I/O */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pcache");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, t_resident_after_write_and_drop);
    tcase_add_test(tc, t_resident_after_read);
    tcase_add_test(tc, t_choose_independent);
    tcase_add_test(tc, t_choose_collective);
    suite_add_tcase(s, tc);
    int failed = check_run(s, 0);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
