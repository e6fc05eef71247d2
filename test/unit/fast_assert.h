/* Assertions for hot loops. Check's ck_assert_* records its location with
 * the runner on every check that passes (_mark_point, I/O to the forked
 * runner); millions of them per test made check_desc take minutes, and
 * its timeout under AddressSanitizer on a loaded host. These evaluate each
 * argument once and call into Check only when the check fails, with the
 * expression and both values in the message. */
#ifndef DDIO_FAST_ASSERT_H
#define DDIO_FAST_ASSERT_H

#include <check.h>
#include <inttypes.h>
#include <stdint.h>

#define FA_INT_EQ(a, b) do { \
        int64_t fa_a = (int64_t)(a), fa_b = (int64_t)(b); \
        if (fa_a != fa_b) \
            ck_abort_msg("%s == %s: %" PRId64 " != %" PRId64, #a, #b, fa_a, fa_b); \
    } while (0)
#define FA_UINT_EQ(a, b) do { \
        uint64_t fa_a = (uint64_t)(a), fa_b = (uint64_t)(b); \
        if (fa_a != fa_b) \
            ck_abort_msg("%s == %s: %" PRIu64 " != %" PRIu64, #a, #b, fa_a, fa_b); \
    } while (0)
#define FA_TRUE(x) do { \
        if (!(x)) \
            ck_abort_msg("%s", #x); \
    } while (0)

#endif
