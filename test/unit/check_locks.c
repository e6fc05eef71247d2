/* Unit tests of the byte-range lock manager (ioserver/locks.c). */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "locks.h"
#include "suite_run.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct lk_mgr M;
static void setup(void) { lk_init(&M); }
static void teardown(void) { lk_destroy(&M); }

START_TEST(t_conflicts)
{
    ck_assert_int_eq(lk_lock(&M, 1, LK_RD, 0, 100, 0, 0, 0), 0);
    ck_assert_int_eq(lk_lock(&M, 2, LK_RD, 50, 150, 0, 0, 0), 0);       /* readers share */
    ck_assert_int_eq(lk_lock(&M, 3, LK_WR, 90, 95, 0, 0, 0), -EAGAIN);
    ck_assert_int_eq(lk_lock(&M, 3, LK_WR, 150, 200, 0, 0, 0), 0);      /* adjacent ok */
    ck_assert_int_eq(lk_lock(&M, 1, LK_WR, 140, 160, 0, 0, 0), -EAGAIN);
    ck_assert_int_eq(lk_lock(&M, 2, LK_RD, 0, 0, 0, 0, 0), -EINVAL);     /* empty */
    ck_assert_int_eq(lk_lock(&M, 2, 7, 0, 10, 0, 0, 0), -EINVAL);
    /* to EOF */
    ck_assert_int_eq(lk_lock(&M, 4, LK_WR, 1000, LK_EOF, 0, 0, 0), 0);
    ck_assert_int_eq(lk_lock(&M, 5, LK_RD, 1u << 30, (1u << 30) + 1, 0, 0, 0), -EAGAIN);
    ck_assert_uint_eq(lk_end_of(10, 0), LK_EOF);
    ck_assert_uint_eq(lk_end_of(10, 5), 15);
    ck_assert_uint_eq(lk_end_of(UINT64_MAX - 1, 5), LK_EOF);
}
END_TEST

START_TEST(t_own_locks_never_conflict)
{
    ck_assert_int_eq(lk_lock(&M, 1, LK_WR, 0, 100, 0, 0, 0), 0);
    ck_assert_int_eq(lk_lock(&M, 1, LK_WR, 50, 150, 0, 0, 0), 0);
    ck_assert_int_eq(lk_lock(&M, 1, LK_RD, 20, 30, 0, 0, 0), 0);       /* downgrade part */
    ck_assert_int_eq(lk_lock(&M, 2, LK_RD, 20, 30, 0, 0, 0), 0);       /* now shareable */
    ck_assert_int_eq(lk_lock(&M, 2, LK_RD, 30, 31, 0, 0, 0), -EAGAIN); /* still WR there */
}
END_TEST

START_TEST(t_split_unlock)
{
    ck_assert_int_eq(lk_lock(&M, 1, LK_WR, 0, 300, 0, 0, 0), 0);
    ck_assert_int_eq(lk_unlock(&M, 1, 100, 200), 0);                /* split in two */
    ck_assert_uint_eq(lk_count(&M), 2);
    ck_assert_int_eq(lk_lock(&M, 2, LK_WR, 100, 200, 0, 0, 0), 0);
    ck_assert_int_eq(lk_lock(&M, 2, LK_WR, 99, 100, 0, 0, 0), -EAGAIN);
    ck_assert_int_eq(lk_lock(&M, 2, LK_WR, 200, 201, 0, 0, 0), -EAGAIN);
    ck_assert_int_eq(lk_unlock(&M, 1, 0, LK_EOF), 0);
    ck_assert_int_eq(lk_lock(&M, 2, LK_WR, 0, 300, 0, 0, 0), 0);
    ck_assert_uint_eq(lk_count(&M), 1);                            /* coalesced */
    /* another owner's unlock does nothing */
    ck_assert_int_eq(lk_unlock(&M, 9, 0, LK_EOF), 0);
    ck_assert(lk_would_conflict(&M, 1, LK_RD, 0, 1));
}
END_TEST

START_TEST(t_timeout)
{
    ck_assert_int_eq(lk_lock(&M, 1, LK_WR, 0, 10, 0, 0, 0), 0);
    int64_t t0 = now_ms();
    ck_assert_int_eq(lk_lock(&M, 2, LK_RD, 5, 6, 1, t0 + 200, 0), -ETIMEDOUT);
    ck_assert_int_ge(now_ms() - t0, 190);
}
END_TEST

/* during a grace only reclaims (not_before 0) are granted: a try fails at
 * once, a wait is granted when the grace ends, or never if a reclaim took
 * the range meanwhile */
START_TEST(t_grace)
{
    int64_t t0 = now_ms(), grace = t0 + 300;
    ck_assert_int_eq(lk_lock(&M, 2, LK_WR, 0, 10, 0, 0, grace), -EAGAIN);
    ck_assert_int_eq(lk_lock(&M, 1, LK_WR, 0, 10, 0, 0, 0), 0);        /* a reclaim */
    ck_assert_int_eq(lk_lock(&M, 2, LK_WR, 20, 30, 1, t0 + 5000, grace), 0);
    ck_assert_int_ge(now_ms() - t0, 290);                               /* waited it out */
    ck_assert_int_lt(now_ms() - t0, 2000);
    ck_assert_int_eq(lk_lock(&M, 2, LK_WR, 5, 6, 1, now_ms() + 200, grace), -ETIMEDOUT);
}
END_TEST

struct waiter { uint64_t owner; int rc; };

static void *wait_thread(void *p)
{
    struct waiter *w = p;
    w->rc = lk_lock(&M, w->owner, LK_WR, 0, 10, 1, now_ms() + 5000, 0);
    return NULL;
}

START_TEST(t_wakeup_on_unlock)
{
    ck_assert_int_eq(lk_lock(&M, 1, LK_WR, 0, 10, 0, 0, 0), 0);
    struct waiter w = {2, 99};
    pthread_t t;
    pthread_create(&t, NULL, wait_thread, &w);
    usleep(100000);
    ck_assert_int_eq(w.rc, 99);                         /* still blocked */
    int64_t t0 = now_ms();
    lk_unlock(&M, 1, 0, 10);
    pthread_join(t, NULL);
    ck_assert_int_eq(w.rc, 0);
    ck_assert_int_lt(now_ms() - t0, 1000);
    ck_assert(lk_would_conflict(&M, 1, LK_RD, 0, 10));
}
END_TEST

START_TEST(t_release_owner)
{
    ck_assert_int_eq(lk_lock(&M, 1, LK_WR, 0, 10, 0, 0, 0), 0);
    ck_assert_int_eq(lk_lock(&M, 1, LK_RD, 20, 30, 0, 0, 0), 0);
    struct waiter w = {2, 99};
    pthread_t t;
    pthread_create(&t, NULL, wait_thread, &w);
    usleep(50000);
    lk_release_owner(&M, 1);                            /* the connection dropped */
    pthread_join(t, NULL);
    ck_assert_int_eq(w.rc, 0);
    ck_assert_int_eq(lk_lock(&M, 3, LK_WR, 20, 30, 0, 0, 0), 0);
}
END_TEST

START_TEST(t_cancel_waiter)
{
    ck_assert_int_eq(lk_lock(&M, 1, LK_WR, 0, 10, 0, 0, 0), 0);
    struct waiter w = {2, 99};
    pthread_t t;
    pthread_create(&t, NULL, wait_thread, &w);
    usleep(50000);
    lk_release_owner(&M, 2);                            /* the waiter's connection dropped */
    pthread_join(t, NULL);
    ck_assert_int_eq(w.rc, -ECANCELED);
    ck_assert_uint_eq(lk_count(&M), 1);
}
END_TEST

START_TEST(t_unsorted_after_cut)
{
    /* A [0,100) RD, B [10,20) RD; cutting A's head moves its start past B */
    ck_assert_int_eq(lk_lock(&M, 1, LK_RD, 0, 100, 0, 0, 0), 0);
    ck_assert_int_eq(lk_lock(&M, 2, LK_RD, 10, 20, 0, 0, 0), 0);
    ck_assert_int_eq(lk_unlock(&M, 1, 0, 50), 0);
    ck_assert_int_eq(lk_lock(&M, 3, LK_WR, 15, 16, 0, 0, 0), -EAGAIN);  /* B still seen */
    ck_assert_int_eq(lk_lock(&M, 3, LK_WR, 60, 61, 0, 0, 0), -EAGAIN);  /* A still seen */
    ck_assert_int_eq(lk_lock(&M, 3, LK_WR, 30, 40, 0, 0, 0), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("locks");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, t_conflicts);
    tcase_add_test(tc, t_own_locks_never_conflict);
    tcase_add_test(tc, t_split_unlock);
    tcase_add_test(tc, t_timeout);
    tcase_add_test(tc, t_grace);
    tcase_add_test(tc, t_wakeup_on_unlock);
    tcase_add_test(tc, t_release_owner);
    tcase_add_test(tc, t_cancel_waiter);
    tcase_add_test(tc, t_unsorted_after_cut);
    suite_add_tcase(s, tc);
    int failed = check_run(s, 0);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
