/* Unit tests for the striping math (ddio_layout.c).
 *
 * Every function is compared with a byte-by-byte model: walk the logical
 * bytes 0..N-1 in order, deal each unit-sized run to the next server in
 * round-robin order, and number each server's bytes consecutively. The
 * model never divides, so it shares no formula with the code under test.
 * Offsets near UINT64_MAX are checked against 128-bit arithmetic. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_layout.h"
#include "suite_run.h"

static const uint64_t units[] = { 1, 3, 7, 4096, 3000, 65536 };
#define NUNITS (sizeof(units) / sizeof(units[0]))
#define MAXCOUNT 5

/* ck_assert_* reports every passing check to the runner (a pipe write in
 * fork mode); the per-byte loops below run millions of checks, so they only
 * call into Check when a check fails. */
static struct ddio_stripe cur_L;   /* layout under test, for messages */
#define EQ(a, b) do { uint64_t a_ = (a), b_ = (b); \
        if (a_ != b_) ck_abort_msg("%s == %s failed: %ju != %ju (unit %ju count %u)", \
                                   #a, #b, (uintmax_t)a_, (uintmax_t)b_, \
                                   (uintmax_t)cur_L.unit, cur_L.count); } while (0)
#define TRUE(c) do { if (!(c)) ck_abort_msg("%s failed (unit %ju count %u)", #c, \
                                            (uintmax_t)cur_L.unit, cur_L.count); } while (0)

struct model {
    struct ddio_stripe L;
    uint64_t n;            /* bytes modelled */
    uint32_t *srv;         /* server of logical byte x */
    uint64_t *loc;         /* local offset of logical byte x */
    uint64_t *unit_end;    /* first unit boundary after x */
    uint64_t *logical[MAXCOUNT];  /* logical offset of local byte i of a server */
    uint64_t held[MAXCOUNT];      /* local bytes each server holds in [0, n) */
};

/* Enough bytes for several full rounds of stripes plus a partial one, so
 * every server has full and partial stripes at the end. */
static uint64_t model_size(uint64_t unit, uint32_t count)
{
    uint64_t n = unit * count * 4 + unit / 2 + 5;
    return n < 200 ? 200 : n;
}

static void model_build(struct model *m, uint64_t unit, uint32_t count)
{
    memset(m, 0, sizeof(*m));
    m->L.unit = unit;
    m->L.count = count;
    cur_L = m->L;
    m->n = model_size(unit, count);
    m->srv = malloc(m->n * sizeof(*m->srv));
    m->loc = malloc(m->n * sizeof(*m->loc));
    m->unit_end = malloc(m->n * sizeof(*m->unit_end));
    for (uint32_t s = 0; s < count; s++)
        m->logical[s] = malloc(m->n * sizeof(uint64_t));
    uint32_t cur = 0;
    uint64_t in_unit = 0;
    for (uint64_t x = 0; x < m->n; x++) {
        if (in_unit == unit) {          /* next stripe: next server */
            in_unit = 0;
            cur = cur + 1 == count ? 0 : cur + 1;
        }
        m->srv[x] = cur;
        m->loc[x] = m->held[cur];
        m->logical[cur][m->held[cur]++] = x;
        /* the last byte of a unit: the boundary after it is x + 1
         * (0 = not known yet, filled in below) */
        m->unit_end[x] = ++in_unit == unit ? x + 1 : 0;
    }
    /* every other byte shares the boundary of the next byte; bytes of the
     * model's last, partial unit keep 0 (boundary beyond the model) */
    for (uint64_t x = m->n - 1; x-- > 0;)
        if (!m->unit_end[x])
            m->unit_end[x] = m->unit_end[x + 1];
}

static void model_free(struct model *m)
{
    free(m->srv);
    free(m->loc);
    free(m->unit_end);
    for (uint32_t s = 0; s < m->L.count; s++)
        free(m->logical[s]);
}

static uint64_t rnd_state = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(void)
{
    uint64_t x = rnd_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rnd_state = x;
}

#define FOR_EACH_LAYOUT(m)                                              \
    for (size_t ui_ = 0; ui_ < NUNITS; ui_++)                           \
        for (uint32_t c_ = 1; c_ <= MAXCOUNT; c_++)                     \
            for (int once_ = (model_build(&(m), units[ui_], c_), 1); once_; \
                 once_ = 0, model_free(&(m)))

/* server, local, logical, unit_end for every modelled byte */
START_TEST(point_maps)
{
    struct model m;
    FOR_EACH_LAYOUT(m) {
        for (uint64_t x = 0; x < m.n; x++) {
            EQ(ddio_layout_server(&m.L, x), m.srv[x]);
            EQ(ddio_layout_local(&m.L, x), m.loc[x]);
            EQ(ddio_layout_logical(&m.L, m.srv[x], m.loc[x]), x);
            if (m.unit_end[x])
                EQ(ddio_layout_unit_end(&m.L, x), m.unit_end[x]);
        }
        for (uint32_t s = 0; s < m.L.count; s++)
            for (uint64_t i = 0; i < m.held[s]; i++)
                EQ(ddio_layout_logical(&m.L, s, i), m.logical[s][i]);
    }
}
END_TEST

/* local_size(s, N) counts s's bytes in [0, N); logical_end inverts it:
 * the file size is the max over servers, for every N. */
START_TEST(sizes)
{
    struct model m;
    FOR_EACH_LAYOUT(m) {
        uint64_t cnt[MAXCOUNT] = { 0 };
        for (uint64_t size = 0; size <= m.n; size++) {
            uint64_t sum = 0, maxend = 0;
            for (uint32_t s = 0; s < m.L.count; s++) {
                uint64_t ls = ddio_layout_local_size(&m.L, s, size);
                EQ(ls, cnt[s]);
                sum += ls;
                uint64_t end = ddio_layout_logical_end(&m.L, s, ls);
                /* the logical end is one past the server's last byte */
                EQ(end, ls ? m.logical[s][ls - 1] + 1 : 0);
                TRUE(end <= size);
                if (end > maxend)
                    maxend = end;
            }
            EQ(sum, size);
            EQ(maxend, size);
            if (size < m.n)
                cnt[m.srv[size]]++;
        }
        /* servers past the count hold nothing */
        EQ(ddio_layout_local_size(&m.L, m.L.count, m.n), 0);
    }
}
END_TEST

/* The model's answer for local_range: scan for s's first byte at or after
 * off and its last byte before off + len. */
static int model_range(const struct model *m, uint32_t s, uint64_t off, uint64_t len,
                       uint64_t *lo, uint64_t *hi)
{
    /* a server's bytes recur every unit * count bytes, so neither scan
     * needs to look further than that */
    uint64_t end = off + len, first = end, last = end, span = m->L.unit * m->L.count;
    uint64_t fstop = len > span ? off + span : end, bstop = len > span ? end - span : off;
    for (uint64_t x = off; x < fstop; x++)
        if (m->srv[x] == s) {
            first = x;
            break;
        }
    for (uint64_t x = end; x-- > bstop;)
        if (m->srv[x] == s) {
            last = x;
            break;
        }
    if (first == end)
        return 0;
    *lo = m->loc[first];
    *hi = m->loc[last] + 1;
    return 1;
}

/* random ranges, biased to cross many stripes, plus empty and tiny ones */
static void random_range(const struct model *m, uint64_t *off, uint64_t *len)
{
    *off = rnd() % m->n;
    uint64_t room = m->n - *off;
    switch (rnd() % 4) {
    case 0: *len = 0; break;
    case 1: *len = rnd() % (room < 8 ? room + 1 : 9); break;
    case 2: *len = rnd() % (room < m->L.unit * 2 ? room + 1 : m->L.unit * 2 + 1); break;
    default: *len = rnd() % (room + 1); break;
    }
}

START_TEST(local_ranges)
{
    struct model m;
    FOR_EACH_LAYOUT(m) {
        for (int it = 0; it < 300; it++) {
            uint64_t off, len;
            random_range(&m, &off, &len);
            for (uint32_t s = 0; s < m.L.count; s++) {
                uint64_t lo = 7, hi = 7, mlo = 0, mhi = 0;
                int has = ddio_layout_local_range(&m.L, s, off, len, &lo, &hi);
                int mhas = model_range(&m, s, off, len, &mlo, &mhi);
                EQ(has, mhas);
                if (has) {
                    EQ(lo, mlo);
                    EQ(hi, mhi);
                    /* every local byte in [lo, hi) belongs to the range */
                    TRUE(m.logical[s][lo] >= off);
                    TRUE(m.logical[s][hi - 1] < off + len);
                }
            }
        }
    }
}
END_TEST

struct visit {
    const struct model *m;
    uint64_t next;      /* next logical offset expected */
    uint64_t pieces;
    uint64_t stop_at;   /* return 99 on this piece (1-based), 0 = never */
};

static int visit_fn(void *arg, uint32_t server, uint64_t logical_off,
                    uint64_t local_off, uint64_t len)
{
    struct visit *v = arg;
    const struct model *m = v->m;
    EQ(logical_off, v->next);      /* in order, no gaps */
    TRUE(len > 0);
    for (uint64_t i = 0; i < len; i++) {          /* one server, local run */
        EQ(m->srv[logical_off + i], server);
        EQ(m->loc[logical_off + i], local_off + i);
    }
    /* one piece per unit: it never spans a boundary, and it is maximal
     * (ends at a boundary or at the end of the range, checked by caller) */
    TRUE(len <= m->L.unit);
    v->next = logical_off + len;
    v->pieces++;
    return v->pieces == v->stop_at ? 99 : 0;
}

START_TEST(foreach_covers)
{
    struct model m;
    FOR_EACH_LAYOUT(m) {
        for (int it = 0; it < 200; it++) {
            uint64_t off, len;
            random_range(&m, &off, &len);
            struct visit v = { &m, off, 0, 0 };
            EQ(ddio_layout_foreach(&m.L, off, len, visit_fn, &v), 0);
            EQ(v.next, off + len);
            uint64_t units_touched = len ? (off + len - 1) / m.L.unit - off / m.L.unit + 1 : 0;
            EQ(v.pieces, units_touched);
            /* a non-zero return stops the walk and is passed through */
            if (v.pieces >= 2) {
                struct visit w = { &m, off, 0, 2 };
                EQ(ddio_layout_foreach(&m.L, off, len, visit_fn, &w), 99);
                EQ(w.pieces, 2);
            }
        }
    }
}
END_TEST

/* ddio_layout_one says yes exactly when foreach makes one piece, and then
 * names that piece's server and local offset */
struct first { uint32_t server; uint64_t local; int pieces; };

static int first_fn(void *arg, uint32_t server, uint64_t logical_off, uint64_t local_off,
                    uint64_t len)
{
    struct first *p = arg;
    (void)logical_off;
    (void)len;
    if (p->pieces++ == 0) {
        p->server = server;
        p->local = local_off;
    }
    return 0;
}

START_TEST(one_piece)
{
    struct model m;
    FOR_EACH_LAYOUT(m) {
        for (int it = 0; it < 400; it++) {
            uint64_t off, len, local = 0;
            uint32_t server = 0;
            random_range(&m, &off, &len);
            if (len == 0)
                len = 1;
            if (it % 2)    /* half of them short, so many fit one unit */
                len = 1 + len % (m.L.unit + 1);
            struct first p = { 0, 0, 0 };
            EQ(ddio_layout_foreach(&m.L, off, len, first_fn, &p), 0);
            EQ(ddio_layout_one(&m.L, off, len, &server, &local), p.pieces == 1);
            if (p.pieces == 1) {
                EQ(server, p.server);
                EQ(local, p.local);
            }
        }
    }
}
END_TEST

/* ---- near the top of the offset space -------------------------------------------- */

typedef unsigned __int128 u128;

static uint64_t sat(u128 v)
{
    return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

struct top_visit { uint64_t next, pieces; };

static int top_fn(void *arg, uint32_t server, uint64_t logical_off,
                  uint64_t local_off, uint64_t len)
{
    struct top_visit *v = arg;
    TRUE(logical_off == v->next && len > 0);
    (void)server;
    (void)local_off;
    v->next = logical_off + len;
    v->pieces++;
    return 0;
}

START_TEST(overflow_edges)
{
    static const uint64_t tunits[] = { 1, 3, 7, 4096, 3000, 65536, 1ull << 63,
                                       UINT64_MAX / 2 + 7, UINT64_MAX };
    for (size_t ui = 0; ui < sizeof(tunits) / sizeof(tunits[0]); ui++)
        for (uint32_t c = 1; c <= MAXCOUNT; c++) {
            struct ddio_stripe L = { tunits[ui], c };
            cur_L = L;
            u128 u = L.unit;
            for (uint64_t d = 0; d < 64; d++) {
                uint64_t x = UINT64_MAX - d * (d + 1) * 977;   /* spread near the top */
                u128 s = x / u;
                ck_assert_uint_eq(ddio_layout_server(&L, x), (uint32_t)(s % c));
                uint64_t loc = ddio_layout_local(&L, x);
                ck_assert_uint_eq(loc, (uint64_t)((s / c) * u + x % u));
                ck_assert_uint_eq(ddio_layout_logical(&L, (uint32_t)(s % c), loc), x);
                ck_assert_uint_eq(ddio_layout_unit_end(&L, x), sat((s + 1) * u));

                /* large local offsets whose logical image is past the end
                 * saturate; (l / u) * u <= l keeps the reference in 128 bits */
                for (uint32_t sv = 0; sv < c; sv++) {
                    u128 want = ((u128)(x / L.unit) * c + sv) * u + x % L.unit;
                    u128 last = ((u128)((x - 1) / L.unit) * c + sv) * u + (x - 1) % L.unit;
                    ck_assert_uint_eq(ddio_layout_logical(&L, sv, x), sat(want));
                    ck_assert_uint_eq(ddio_layout_logical_end(&L, sv, x), sat(last + 1));
                }

                /* sizes near the top: shares add up and invert */
                uint64_t sum = 0, maxend = 0;
                for (uint32_t sv = 0; sv < c; sv++) {
                    uint64_t ls = ddio_layout_local_size(&L, sv, x);
                    ck_assert_uint_le(ls, x);
                    sum += ls;
                    uint64_t e = ddio_layout_logical_end(&L, sv, ls);
                    if (e > maxend)
                        maxend = e;
                }
                ck_assert_uint_eq(sum, x);
                ck_assert_uint_eq(maxend, x);
            }
            /* ranges ending at the top, and ones that would wrap */
            uint64_t lo, hi;
            struct top_visit v = { UINT64_MAX - 100000, 0 };
            ck_assert_int_eq(ddio_layout_foreach(&L, v.next, 100000, top_fn, &v), 0);
            ck_assert_uint_eq(v.next, UINT64_MAX);
            ck_assert_int_eq(ddio_layout_foreach(&L, UINT64_MAX, 1, top_fn, &v), -EINVAL);
            ck_assert_int_eq(ddio_layout_foreach(&L, 5, UINT64_MAX, top_fn, &v), -EINVAL);
            v.next = UINT64_MAX;
            ck_assert_int_eq(ddio_layout_foreach(&L, UINT64_MAX, 0, top_fn, &v), 0);
            uint64_t total = 0;
            for (uint32_t sv = 0; sv < c; sv++)
                if (ddio_layout_local_range(&L, sv, UINT64_MAX - 5000, UINT64_MAX, &lo, &hi))
                    total += hi - lo;    /* clamped to the representable end */
            ck_assert_uint_eq(total, 5000);
        }
}
END_TEST

/* The header's disk mapping: block k of a server on disk k % D at (k / D) * B. */
START_TEST(disk_mapping)
{
    struct ddio_stripe D = { 4096, 3 };
    for (uint64_t k = 0; k < 30; k++)
        for (uint64_t b = 0; b < 4096; b += 1365) {
            uint64_t off = k * 4096 + b;
            ck_assert_uint_eq(ddio_layout_server(&D, off), k % 3);
            ck_assert_uint_eq(ddio_layout_local(&D, off), (k / 3) * 4096 + b);
        }
    /* one server, one disk: the datafile is the file */
    struct ddio_stripe one = { 1u << 20, 1 };
    for (uint64_t x = 0; x < (5u << 20); x += 77777) {
        ck_assert_uint_eq(ddio_layout_server(&one, x), 0);
        ck_assert_uint_eq(ddio_layout_local(&one, x), x);
        ck_assert_uint_eq(ddio_layout_local_size(&one, 0, x), x);
        ck_assert_uint_eq(ddio_layout_logical_end(&one, 0, x), x);
    }
}
END_TEST

/* Copies: every index's copies sit on distinct servers, each server holds
 * exactly `copies` indices (one per copy number), and held/of/server agree. */
START_TEST(copy_placement)
{
    for (uint32_t n = 1; n <= 9; n++)
        for (uint32_t k = 1; k <= DDIO_MAX_COPIES && k <= n; k++)
            for (uint32_t p = 0; p < n; p++) {
                uint32_t seen = 0;
                for (uint32_t c = 0; c < k; c++) {
                    uint32_t s = ddio_copy_server(n, p, c);
                    ck_assert_uint_lt(s, n);
                    ck_assert_uint_eq(s, (p + c) % n);
                    ck_assert_uint_eq(ddio_copy_of(n, s, c), p);
                    ck_assert_int_eq(ddio_copy_held(n, k, s, p), (int)c);
                    ck_assert(!(seen & (1u << s)));      /* different servers */
                    seen |= 1u << s;
                }
                uint32_t held = 0;
                for (uint32_t s = 0; s < n; s++)
                    held += ddio_copy_held(n, k, s, p) >= 0;
                ck_assert_uint_eq(held, k);
            }
    /* out of range: nothing held */
    ck_assert_int_eq(ddio_copy_held(3, 2, 3, 0), -1);
    ck_assert_int_eq(ddio_copy_held(3, 2, 0, 3), -1);
    ck_assert_int_eq(ddio_copy_held(0, 2, 0, 0), -1);
    /* 3 servers, 2 copies: server 1 holds index 1 and index 0's mirror */
    ck_assert_int_eq(ddio_copy_held(3, 2, 1, 0), 1);
    ck_assert_int_eq(ddio_copy_held(3, 2, 1, 2), -1);
    ck_assert_uint_eq(ddio_copy_of(3, 0, 1), 2);
    /* large counts do not overflow */
    ck_assert_uint_eq(ddio_copy_server(256, 255, 2), 1);
    ck_assert_uint_eq(ddio_copy_of(256, 1, 2), 255);
}
END_TEST

/* A range touches server s through any index s holds a copy of: with one
 * unit in [0, 1 MiB) (index 0), servers 0 and 1 hold it with 2 copies, 0,
 * 1 and 2 with 3, and only 0 without copies. */
START_TEST(copy_touched)
{
    struct ddio_stripe L = {.unit = 1u << 20, .count = 4};
    uint64_t MiB = 1u << 20;
    for (uint32_t s = 0; s < 4; s++) {
        ck_assert_int_eq(ddio_copy_touched(&L, 1, s, 10, 100), s == 0);
        ck_assert_int_eq(ddio_copy_touched(&L, 2, s, 10, 100), s <= 1);
        ck_assert_int_eq(ddio_copy_touched(&L, 3, s, 10, 100), s <= 2);
        /* index 3's unit: its mirror wraps to server 0 */
        ck_assert_int_eq(ddio_copy_touched(&L, 2, s, 3 * MiB, MiB), s == 3 || s == 0);
        ck_assert_int_eq(ddio_copy_touched(&L, 2, s, 0, 0), 0);
        ck_assert_int_eq(ddio_copy_touched(&L, 2, s, 0, 8 * MiB), 1);
    }
    /* exhaustive against the definition on a small layout */
    struct ddio_stripe M = {.unit = 8, .count = 3};
    for (uint64_t off = 0; off < 60; off += 3)
        for (uint64_t len = 0; len < 40; len += 5)
            for (uint32_t s = 0; s < 3; s++) {
                int want = 0;
                for (uint64_t b = off; b < off + len; b++)
                    want |= ddio_copy_held(3, 2, s, ddio_layout_server(&M, b)) >= 0;
                ck_assert_int_eq(ddio_copy_touched(&M, 2, s, off, len), want);
            }
}
END_TEST

START_TEST(redundancy_names)
{
    ck_assert_int_eq(ddio_redundancy_parse("none"), 1);
    ck_assert_int_eq(ddio_redundancy_parse("mirror"), 2);
    ck_assert_int_eq(ddio_redundancy_parse("mirror:2"), 2);
    ck_assert_int_eq(ddio_redundancy_parse("mirror:3"), 3);
    ck_assert_int_eq(ddio_redundancy_parse("ec:4+2"), (int)DDIO_REDUNDANCY_EC_WORD(4, 2));
    ck_assert_str_eq(ddio_redundancy_name(DDIO_REDUNDANCY_EC_WORD(4, 2)), "ec:4+2");
    ck_assert_int_eq(ddio_redundancy_parse("ec:4+9"), DDIO_REDUNDANCY_BAD);
    ck_assert_int_eq(ddio_redundancy_parse("ec:x"), DDIO_REDUNDANCY_BAD);
    ck_assert_int_eq(ddio_redundancy_parse("mirror:4"), DDIO_REDUNDANCY_BAD);
    ck_assert_int_eq(ddio_redundancy_parse("Mirror"), DDIO_REDUNDANCY_BAD);
    ck_assert_int_eq(ddio_redundancy_parse(""), DDIO_REDUNDANCY_BAD);
    for (uint32_t k = 1; k <= DDIO_MAX_COPIES; k++)
        ck_assert_int_eq(ddio_redundancy_parse(ddio_redundancy_name(k)), (int)k);
}
END_TEST

static Suite *layout_suite(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, point_maps);
    tcase_add_test(tc, sizes);
    tcase_add_test(tc, local_ranges);
    tcase_add_test(tc, foreach_covers);
    tcase_add_test(tc, one_piece);
    tcase_add_test(tc, overflow_edges);
    tcase_add_test(tc, disk_mapping);
    tcase_add_test(tc, copy_placement);
    tcase_add_test(tc, copy_touched);
    tcase_add_test(tc, redundancy_names);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int failed = check_run(layout_suite(), 0);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
