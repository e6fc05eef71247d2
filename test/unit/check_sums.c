/* Unit tests of the checksum store (ioserver/sums.c): ISA-L's CRC32C
 * against the standard check value, sums kept across a close and reopen
 * (the sidecar), a flipped byte found, the crash rule (a sidecar left
 * DIRTY gives no false error, and still finds a sector that matches
 * neither; a close without durable data leaves it DIRTY), STALE sectors summed from the datafile at a flush, a cut file,
 * a sidecar of another datafile (inode) ignored, a create discarding an
 * old sidecar. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <isa-l/crc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "suite_run.h"
#include "sums.h"

#define SEC SUMS_SECTOR

static char dir[64];
static int rootfd = -1, datafd = -1;

static void setup(void)
{
    strcpy(dir, "/tmp/check_sums.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    rootfd = open(dir, O_PATH | O_DIRECTORY);
    ck_assert_int_ge(rootfd, 0);
    datafd = openat(rootfd, "f", O_RDWR | O_CREAT, 0644);
    ck_assert_int_ge(datafd, 0);
}

static void teardown(void)
{
    close(datafd);
    close(rootfd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* n sectors of data that differ per sector and per seed, also in the datafile */
static uint8_t *data(unsigned n, unsigned seed)
{
    uint8_t *b = malloc((size_t)n * SEC);
    for (size_t i = 0; i < (size_t)n * SEC; i++)
        b[i] = (uint8_t)(i * 31 + seed * 7 + i / SEC);
    ck_assert_int_eq(pwrite(datafd, b, (size_t)n * SEC, 0), (ssize_t)n * SEC);
    return b;
}

static uint64_t ctr(atomic_uint_fast64_t *c)
{
    return (uint64_t)atomic_load(c);
}

START_TEST(t_crc)
{
    /* CRC-32C's check value: crc32_iscsi is the reflected update, without
     * the final inversion */
    ck_assert_uint_eq(~crc32_iscsi((unsigned char *)"123456789", 9, 0xFFFFFFFFu), 0xE3069283u);
    uint8_t b[SEC];
    memset(b, 0, sizeof b);
    memcpy(b, "abc", 3);
    ck_assert_uint_eq(sums_crc(b, 3), sums_crc(b, SEC));   /* the tail counts as zeros */
    b[SEC - 1] = 1;
    ck_assert_uint_ne(sums_crc(b, 3), sums_crc(b, SEC));
}
END_TEST

START_TEST(t_reload_and_flip)
{
    uint8_t *b = data(8, 1);
    struct sums *s = sums_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(sums_begin_write(s), 0);
    sums_set(s, 0, b, 8 * SEC);
    sums_end_write(s);
    ck_assert_int_eq(sums_flush(s, datafd, 1), 0);
    sums_close(s, datafd, 0, 1);

    s = sums_open(rootfd, "f", datafd, 0);
    uint32_t c;
    for (unsigned i = 0; i < 8; i++) {
        ck_assert_int_eq(sums_state(s, i, &c), SUM_OK);
        ck_assert_uint_eq(c, sums_crc(b + i * SEC, SEC));
    }
    ck_assert_int_eq(sums_state(s, 8, NULL), SUM_UNKNOWN);
    uint64_t bad = 0, v0 = ctr(&sums_ctr.verified);
    ck_assert_int_eq(sums_verify(s, 0, b, 8 * SEC, &bad), 0);
    ck_assert_uint_eq(ctr(&sums_ctr.verified) - v0, 8);
    b[5 * SEC + 17] ^= 0x40;                       /* one bit of sector 5 */
    ck_assert_int_eq(sums_verify(s, 0, b, 8 * SEC, &bad), -EILSEQ);
    ck_assert_uint_eq(bad, 5 * SEC);
    /* a read of sectors 6..7 only does not see it */
    ck_assert_int_eq(sums_verify(s, 6 * SEC, b + 6 * SEC, 2 * SEC, &bad), 0);
    sums_close(s, datafd, 0, 1);
    free(b);
}
END_TEST

START_TEST(t_crash_rule)
{
    uint8_t *a = data(4, 1);
    struct sums *s = sums_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(sums_begin_write(s), 0);
    sums_set(s, 0, a, 4 * SEC);
    sums_end_write(s);
    ck_assert_int_eq(sums_flush(s, datafd, 1), 0);  /* CLEAN with a's sums */
    /* new data written, its sums in memory only: the server dies */
    uint8_t *b = data(4, 2);
    ck_assert_int_eq(sums_begin_write(s), 0);
    sums_set(s, 0, b, 4 * SEC);
    sums_close(s, datafd, 1, 1);                      /* gone: nothing flushed */

    s = sums_open(rootfd, "f", datafd, 0);
    ck_assert_int_eq(sums_state(s, 0, NULL), SUM_SUSPECT);
    uint64_t bad = 0, u0 = ctr(&sums_ctr.unknown), v0 = ctr(&sums_ctr.verified);
    /* b is on disk, a's sums in the sidecar: no false error, counted unknown */
    ck_assert_int_eq(sums_verify(s, 0, b, 2 * SEC, &bad), 0);
    ck_assert_uint_eq(ctr(&sums_ctr.unknown) - u0, 2);
    ck_assert_int_eq(sums_state(s, 0, NULL), SUM_UNKNOWN);
    /* a sector the crash did not touch agrees: trusted again */
    ck_assert_int_eq(sums_verify(s, 2 * SEC, a + 2 * SEC, 2 * SEC, &bad), 0);
    ck_assert_uint_eq(ctr(&sums_ctr.verified) - v0, 2);
    ck_assert_int_eq(sums_state(s, 2, NULL), SUM_OK);
    /* and from then on a flip there is corruption again */
    a[3 * SEC] ^= 1;
    ck_assert_int_eq(sums_verify(s, 2 * SEC, a + 2 * SEC, 2 * SEC, &bad), -EILSEQ);
    ck_assert_uint_eq(bad, 3 * SEC);
    sums_close(s, datafd, 0, 1);
    free(a);
    free(b);
}
END_TEST

/* the header says DIRTY durably before a write, CLEAN only after a durable flush */
START_TEST(t_header_states)
{
    struct sums *s = sums_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(sums_begin_write(s), 0);
    int sfd = openat(rootfd, ".ddio/sums/f", O_RDONLY);
    ck_assert_int_ge(sfd, 0);
    uint32_t h[3];
    ck_assert_int_eq(pread(sfd, h, sizeof h, 0), (ssize_t)sizeof h);
    ck_assert_uint_eq(h[0], SUMS_MAGIC);
    ck_assert_uint_eq(h[2], SUMS_DIRTY);
    uint8_t *b = data(1, 3);
    sums_set(s, 0, b, SEC);
    sums_end_write(s);
    ck_assert_int_eq(sums_flush(s, datafd, 0), 0);  /* written, not durable */
    ck_assert_int_eq(pread(sfd, h, sizeof h, 0), (ssize_t)sizeof h);
    ck_assert_uint_eq(h[2], SUMS_DIRTY);
    ck_assert_int_eq(sums_flush(s, datafd, 1), 0);
    ck_assert_int_eq(pread(sfd, h, sizeof h, 0), (ssize_t)sizeof h);
    ck_assert_uint_eq(h[2], SUMS_CLEAN);
    close(sfd);
    sums_close(s, datafd, 0, 1);
    free(b);
}
END_TEST

/* a close whose data the caller could not make durable keeps the sums
 * written but the header DIRTY: reloaded, they are suspect */
START_TEST(t_close_not_durable)
{
    uint8_t *b = data(2, 7);
    struct sums *s = sums_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(sums_begin_write(s), 0);
    sums_set(s, 0, b, 2 * SEC);
    sums_end_write(s);
    ck_assert_int_eq(sums_dirty(s), 1);
    sums_close(s, datafd, 0, 0);
    s = sums_open(rootfd, "f", datafd, 0);
    uint32_t c;
    ck_assert_int_eq(sums_state(s, 1, &c), SUM_SUSPECT);
    ck_assert_uint_eq(c, sums_crc(b + SEC, SEC));
    ck_assert_int_eq(sums_dirty(s), 1);
    sums_close(s, datafd, 0, 1);                  /* now durable: CLEAN */
    s = sums_open(rootfd, "f", datafd, 0);
    ck_assert_int_eq(sums_dirty(s), 0);
    ck_assert_int_eq(sums_state(s, 1, NULL), SUM_SUSPECT);   /* a suspect stays one */
    sums_close(s, datafd, 0, 1);
    free(b);
}
END_TEST

START_TEST(t_stale_recomputed)
{
    uint8_t *b = data(3, 4);
    struct sums *s = sums_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(sums_begin_write(s), 0);
    sums_stale(s, 100, 2 * SEC + 5);              /* sectors 0..2, in part */
    sums_end_write(s);
    uint64_t bad = 0;
    ck_assert_int_eq(sums_state(s, 1, NULL), SUM_STALE);
    ck_assert_int_eq(sums_verify(s, 0, "x", 1, &bad), 0);   /* not checked */
    ck_assert_int_eq(sums_flush(s, datafd, 1), 0);
    uint32_t c;
    for (unsigned i = 0; i < 3; i++) {
        ck_assert_int_eq(sums_state(s, i, &c), SUM_OK);
        ck_assert_uint_eq(c, sums_crc(b + i * SEC, SEC));
    }
    sums_close(s, datafd, 0, 1);
    free(b);
}
END_TEST

/* A sync's flush while a write is in flight (between its DIRTY mark and
 * its sums: another handle's MPI_File_sync) leaves the header DIRTY, so
 * the write's sums are stored at the next flush; a CLEAN then would have
 * dropped them and left the old sums trusted over the new data (a false
 * integrity error, seen as t_local's local-sums/cmp) */
static uint32_t hdr_state(void)
{
    uint32_t h[3] = {0};
    int sfd = openat(rootfd, ".ddio/sums/f", O_RDONLY);
    ck_assert_int_ge(sfd, 0);
    ck_assert_int_eq(pread(sfd, h, sizeof h, 0), (ssize_t)sizeof h);
    close(sfd);
    return h[2];
}

START_TEST(t_clean_waits_for_writes)
{
    uint8_t *a = data(2, 11), *b = data(2, 12);
    struct sums *s = sums_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(sums_begin_write(s), 0);
    sums_set(s, 0, a, 2 * SEC);
    sums_end_write(s);
    ck_assert_int_eq(sums_flush(s, datafd, 1), 0);
    ck_assert_uint_eq(hdr_state(), SUMS_CLEAN);
    ck_assert_int_eq(sums_begin_write(s), 0);       /* a write begins */
    ck_assert_int_eq(sums_flush(s, datafd, 1), 0);  /* a sync meanwhile */
    ck_assert_uint_eq(hdr_state(), SUMS_DIRTY);
    ck_assert_int_eq(pwrite(datafd, b, 2 * SEC, 0), 2 * SEC);
    sums_set(s, 0, b, 2 * SEC);
    sums_end_write(s);
    /* a write that ended after the caller's data sync began: not CLEAN */
    uint64_t gen = sums_gen(s);
    ck_assert_int_eq(sums_begin_write(s), 0);
    sums_set(s, 0, b, 2 * SEC);
    sums_end_write(s);
    ck_assert_int_eq(sums_flush_since(s, datafd, gen), 0);
    ck_assert_uint_eq(hdr_state(), SUMS_DIRTY);
    ck_assert_int_eq(sums_flush_since(s, datafd, sums_gen(s)), 0);
    ck_assert_uint_eq(hdr_state(), SUMS_CLEAN);
    sums_close(s, datafd, 0, 1);
    s = sums_open(rootfd, "f", datafd, 0);
    uint32_t c;
    ck_assert_int_eq(sums_state(s, 1, &c), SUM_OK);
    ck_assert_uint_eq(c, sums_crc(b + SEC, SEC));
    uint64_t bad = 0;
    ck_assert_int_eq(sums_verify(s, 0, b, 2 * SEC, &bad), 0);
    sums_close(s, datafd, 0, 1);
    free(a);
    free(b);
}
END_TEST

START_TEST(t_truncate)
{
    uint8_t *b = data(3, 5);
    struct sums *s = sums_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(sums_begin_write(s), 0);
    sums_set(s, 0, b, 3 * SEC);
    sums_end_write(s);
    ck_assert_int_eq(sums_flush(s, datafd, 1), 0);
    ck_assert_int_eq(sums_begin_write(s), 0);
    ck_assert_int_eq(ftruncate(datafd, SEC + 10), 0);
    sums_truncate(s, SEC + 10);
    sums_end_write(s);
    ck_assert_int_eq(sums_state(s, 1, NULL), SUM_STALE);
    ck_assert_int_eq(sums_state(s, 2, NULL), SUM_UNKNOWN);
    sums_close(s, datafd, 0, 1);
    s = sums_open(rootfd, "f", datafd, 0);
    uint32_t c;
    ck_assert_int_eq(sums_state(s, 1, &c), SUM_OK);
    memset(b + SEC + 10, 0, SEC - 10);            /* the cut bytes read as zeros */
    ck_assert_uint_eq(c, sums_crc(b + SEC, SEC));
    ck_assert_int_eq(sums_state(s, 2, NULL), SUM_UNKNOWN);
    struct stat sb;
    int sfd = openat(rootfd, ".ddio/sums/f", O_RDONLY);
    ck_assert_int_eq(fstat(sfd, &sb), 0);
    ck_assert_int_eq(sb.st_size, SUMS_HDR + 2 * 8);
    close(sfd);
    sums_close(s, datafd, 0, 1);
    free(b);
}
END_TEST

/* cut, then grown again before a flush (set_size down, preallocate up):
 * the sectors in between lose their old sums on disk too */
START_TEST(t_cut_then_grow)
{
    uint8_t *b = data(4, 8);
    struct sums *s = sums_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(sums_begin_write(s), 0);
    sums_set(s, 0, b, 4 * SEC);
    sums_end_write(s);
    ck_assert_int_eq(sums_flush(s, datafd, 1), 0);
    ck_assert_int_eq(sums_begin_write(s), 0);
    ck_assert_int_eq(ftruncate(datafd, SEC), 0);
    sums_truncate(s, SEC);
    ck_assert_int_eq(ftruncate(datafd, 4 * SEC - 100), 0);   /* zeros from SEC on */
    sums_truncate(s, 4 * SEC - 100);
    sums_end_write(s);
    sums_close(s, datafd, 0, 1);
    s = sums_open(rootfd, "f", datafd, 0);
    ck_assert_int_eq(sums_state(s, 0, NULL), SUM_OK);
    static const uint8_t zero[4 * SEC];
    uint64_t bad = 0;
    for (unsigned i = 1; i < 3; i++)
        ck_assert_int_ne(sums_state(s, i, NULL), SUM_OK);
    ck_assert_int_eq(sums_verify(s, SEC, zero, 3 * SEC, &bad), 0);   /* no false error */
    sums_close(s, datafd, 0, 1);
    free(b);
}
END_TEST

START_TEST(t_foreign_and_fresh)
{
    uint8_t *b = data(2, 6);
    struct sums *s = sums_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(sums_begin_write(s), 0);
    sums_set(s, 0, b, 2 * SEC);
    sums_end_write(s);
    sums_close(s, datafd, 0, 1);
    /* another datafile of the same name (a new inode): the sidecar is not its */
    int other = openat(rootfd, "g", O_RDWR | O_CREAT, 0644);
    ck_assert_int_ge(other, 0);
    ck_assert_int_eq(renameat(rootfd, "g", rootfd, "f"), 0);
    s = sums_open(rootfd, "f", other, 0);
    ck_assert_int_eq(sums_state(s, 0, NULL), SUM_UNKNOWN);
    sums_close(s, other, 0, 1);
    close(other);
    /* the original datafile again, but as a create: the old sidecar is gone */
    s = sums_open(rootfd, "f", datafd, 1);
    ck_assert_int_eq(sums_state(s, 0, NULL), SUM_UNKNOWN);
    sums_close(s, datafd, 0, 1);
    ck_assert_int_ne(faccessat(rootfd, ".ddio/sums/f", F_OK, 0), 0);
    free(b);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("sums");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, t_crc);
    tcase_add_test(tc, t_reload_and_flip);
    tcase_add_test(tc, t_crash_rule);
    tcase_add_test(tc, t_header_states);
    tcase_add_test(tc, t_close_not_durable);
    tcase_add_test(tc, t_stale_recomputed);
    tcase_add_test(tc, t_clean_waits_for_writes);
    tcase_add_test(tc, t_truncate);
    tcase_add_test(tc, t_cut_then_grow);
    tcase_add_test(tc, t_foreign_and_fresh);
    suite_add_tcase(su, tc);
    int failed = check_run(su, 0);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
