/* Unit tests of erasure-coded groups (common/ddio_ec.c): "ec:K+M" parsed
 * and refused; every group's parity on servers its data does not use, one
 * unit of a group per server; each server's parity datafile compacted in
 * group order and inverted; parity computed one row at a time equal to all
 * rows at once; an update by a delta equal to encoding again; and every
 * combination of up to M lost units of a group given back from K others. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_ec.h"
#include "suite_run.h"

static const struct ddio_ec shapes[] = {{2, 1}, {4, 2}, {3, 2}, {1, 1}, {5, 3}, {16, 4}, {6, 4}};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

START_TEST(t_parse)
{
    struct ddio_ec E;
    char err[160];
    ck_assert_int_eq(ddio_ec_parse("ec:4+2", &E, err, sizeof(err)), 0);
    ck_assert_uint_eq(E.k, 4);
    ck_assert_uint_eq(E.m, 2);
    ck_assert_int_eq(ddio_ec_parse("ec:16+4", &E, err, sizeof(err)), 0);
    const char *bad[] = {"ec:", "ec:4", "ec:4+", "ec:0+1", "ec:4+0", "ec:17+1", "ec:4+5",
                         "ec:4+2x", "mirror", "ec:-1+2", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = 0;
        ck_assert_msg(ddio_ec_parse(bad[i], &E, err, sizeof(err)) == -1, "%s taken", bad[i]);
        ck_assert_msg(err[0] != 0, "%s: no reason", bad[i]);
    }
}
END_TEST

/* each group's K+M units on K+M different servers; held() agrees */
START_TEST(t_placement)
{
    for (size_t s = 0; s < NSHAPES; s++) {
        const struct ddio_ec *E = &shapes[s];
        uint32_t n = E->k + E->m;
        for (uint64_t g = 0; g < 200; g++) {
            uint32_t used = 0;   /* servers of this group */
            for (uint32_t i = 0; i < E->k; i++) {
                uint32_t srv = (uint32_t)((g * E->k + i) % n);
                ck_assert_msg(!(used >> srv & 1u), "ec:%u+%u group %llu: data twice on %u", E->k,
                              E->m, (unsigned long long)g, srv);
                used |= 1u << srv;
                ck_assert_int_eq(ddio_ec_parity_held(E, srv, g), -1);
            }
            for (uint32_t j = 0; j < E->m; j++) {
                uint32_t q = ddio_ec_parity_server(E, g, j);
                ck_assert_uint_lt(q, n);
                ck_assert_msg(!(used >> q & 1u), "ec:%u+%u group %llu: parity %u on a used server",
                              E->k, E->m, (unsigned long long)g, j);
                used |= 1u << q;
                ck_assert_int_eq(ddio_ec_parity_held(E, q, g), (int)j);
            }
            ck_assert_uint_eq(used, (1u << n) - 1);
        }
    }
}
END_TEST

/* a server's parity units are numbered 0, 1, 2, ... in group order, and
 * parity_group() gives the group back; over whole periods every server
 * holds as many as the others when K+M's factors allow it */
START_TEST(t_compacted)
{
    for (size_t s = 0; s < NSHAPES; s++) {
        const struct ddio_ec *E = &shapes[s];
        uint32_t n = E->k + E->m;
        uint64_t total = 0;
        for (uint32_t q = 0; q < n; q++) {
            uint64_t next = 0;
            for (uint64_t g = 0; g < 500; g++) {
                ck_assert_uint_eq(ddio_ec_parity_count(E, q, g), next);
                if (ddio_ec_parity_held(E, q, g) < 0)
                    continue;
                ck_assert_uint_eq(ddio_ec_parity_local(E, q, g), next);
                ck_assert_uint_eq(ddio_ec_parity_group(E, q, next), g);
                next++;
            }
            total += next;
            /* far out: the same arithmetic without a walk */
            uint64_t g = 1000000007ull * n;
            if (ddio_ec_parity_held(E, q, g) >= 0)
                ck_assert_uint_eq(ddio_ec_parity_group(E, q, ddio_ec_parity_local(E, q, g)), g);
        }
        ck_assert_uint_eq(total, 500ull * E->m);
    }
}
END_TEST

/* every unit's overlay on its data server and on its group's parity
 * servers, nowhere else; the two mappings invert each other; each
 * server's overlay offsets distinct */
START_TEST(t_overlay_map)
{
    const uint64_t U = 4096;
    for (size_t s = 0; s < NSHAPES; s++) {
        const struct ddio_ec *E = &shapes[s];
        uint32_t n = E->k + E->m;
        for (uint64_t u = 0; u < 300; u++) {
            uint64_t L = u * U + 17, g = u / E->k;
            uint32_t holders = 0;
            for (uint32_t q = 0; q < n; q++) {
                uint64_t o = ddio_ec_ovl_local(E, U, q, L);
                int should = q == u % n || ddio_ec_parity_held(E, q, g) >= 0;
                ck_assert_msg((o != UINT64_MAX) == should, "ec:%u+%u unit %llu server %u", E->k,
                              E->m, (unsigned long long)u, q);
                if (o == UINT64_MAX)
                    continue;
                holders++;
                ck_assert_uint_eq(o % U, 17);
                ck_assert_uint_eq(ddio_ec_ovl_logical(E, U, q, o), L);
            }
            ck_assert_uint_eq(holders, 1 + E->m);
        }
        /* an overlay unit of nobody's group maps to nothing */
        for (uint32_t q = 0; q < n; q++)
            for (uint64_t j = 0; j < 200; j++) {
                uint64_t L = ddio_ec_ovl_logical(E, U, q, j * U);
                if (L != UINT64_MAX)
                    ck_assert_uint_eq(ddio_ec_ovl_local(E, U, q, L), j * U);
            }
    }
}
END_TEST

static uint8_t *random_units(uint32_t count, size_t len, unsigned seed)
{
    uint8_t *b = malloc(count * len);
    srand(seed);
    for (size_t i = 0; i < count * len; i++)
        b[i] = (uint8_t)rand();
    return b;
}

/* all parity rows of `data` into par (m units) */
static void encode_all(const struct ddio_ec_codec *c, const struct ddio_ec *E, size_t len,
                       uint8_t *data, uint8_t *par)
{
    uint8_t *d[DDIO_EC_MAX_K], *p[DDIO_EC_MAX_M];
    uint32_t rows[DDIO_EC_MAX_M];
    for (uint32_t i = 0; i < E->k; i++)
        d[i] = data + i * len;
    for (uint32_t j = 0; j < E->m; j++) {
        p[j] = par + j * len;
        rows[j] = j;
    }
    ddio_ec_encode(c, len, d, E->m, rows, p);
}

START_TEST(t_rows_and_update)
{
    char err[160];
    const size_t len = 4096 + 37;
    for (size_t s = 0; s < NSHAPES; s++) {
        const struct ddio_ec *E = &shapes[s];
        struct ddio_ec_codec *c = ddio_ec_codec_new(E, err, sizeof(err));
        ck_assert_msg(c != NULL, "%s", err);
        uint8_t *data = random_units(E->k, len, 7 + (unsigned)s), *par = malloc(E->m * len);
        encode_all(c, E, len, data, par);
        /* one row at a time, as a parity server computes its own */
        uint8_t *d[DDIO_EC_MAX_K], *one = malloc(len);
        for (uint32_t i = 0; i < E->k; i++)
            d[i] = data + i * len;
        for (uint32_t j = 0; j < E->m; j++) {
            ddio_ec_encode(c, len, d, 1, &j, &one);
            ck_assert_int_eq(memcmp(one, par + j * len, len), 0);
        }
        /* data unit k-1 changed: the delta brings the parity up to date */
        uint8_t *fresh = random_units(1, len, 99), *delta = malloc(len);
        uint32_t i = E->k - 1;
        for (size_t b = 0; b < len; b++)
            delta[b] = data[i * len + b] ^ fresh[b];
        uint8_t *p[DDIO_EC_MAX_M];
        uint32_t rows[DDIO_EC_MAX_M];
        for (uint32_t j = 0; j < E->m; j++) {
            p[j] = par + j * len;
            rows[j] = j;
        }
        ddio_ec_update(c, len, i, delta, E->m, rows, p);
        memcpy(data + i * len, fresh, len);
        uint8_t *again = malloc(E->m * len);
        encode_all(c, E, len, data, again);
        ck_assert_int_eq(memcmp(again, par, E->m * len), 0);
        free(again), free(fresh), free(delta), free(one), free(data), free(par);
        ddio_ec_codec_free(c);
    }
}
END_TEST

/* lose every set of up to m units of k+m, decode them from k survivors */
START_TEST(t_decode_every_loss)
{
    char err[160];
    const size_t len = 1000;
    for (size_t s = 0; s < NSHAPES; s++) {
        const struct ddio_ec *E = &shapes[s];
        uint32_t n = E->k + E->m;
        if (n > 12)   /* 2^20 subsets: the wide shape is covered by the placement tests */
            continue;
        struct ddio_ec_codec *c = ddio_ec_codec_new(E, err, sizeof(err));
        ck_assert_msg(c != NULL, "%s", err);
        uint8_t *all = random_units(n, len, 3 + (unsigned)s);
        encode_all(c, E, len, all, all + E->k * len);
        uint8_t *out = malloc(E->m * len);
        int cases = 0;
        for (uint32_t lost = 1; lost < (1u << n); lost++) {
            if ((uint32_t)__builtin_popcount(lost) > E->m)
                continue;
            uint32_t have[DDIO_EC_MAX_K], want[DDIO_EC_MAX_M], nh = 0, nw = 0;
            uint8_t *in[DDIO_EC_MAX_K], *o[DDIO_EC_MAX_M];
            for (uint32_t u = 0; u < n; u++) {
                if (lost >> u & 1u) {
                    o[nw] = out + nw * len;
                    want[nw++] = u;
                } else if (nh < E->k) {
                    in[nh] = all + u * len;
                    have[nh++] = u;
                }
            }
            memset(out, 0, E->m * len);
            ck_assert_msg(ddio_ec_decode(c, len, have, in, nw, want, o, err, sizeof(err)) == 0,
                          "%s", err);
            for (uint32_t w = 0; w < nw; w++)
                ck_assert_msg(memcmp(o[w], all + want[w] * len, len) == 0,
                              "ec:%u+%u lost %#x: unit %u wrong", E->k, E->m, lost, want[w]);
            cases++;
        }
        ck_assert_int_gt(cases, 0);
        /* a unit given twice is refused, not decoded into garbage */
        uint32_t have[DDIO_EC_MAX_K], want = 0;
        uint8_t *in[DDIO_EC_MAX_K], *o = out;
        for (uint32_t r = 0; r < E->k; r++) {
            have[r] = E->k > 1 && r == 1 ? 0 : r + (E->k > 1 ? 0 : 1);
            in[r] = all + have[r] * len;
        }
        if (E->k > 1)
            ck_assert_int_eq(ddio_ec_decode(c, len, have, in, 1, &want, &o, err, sizeof(err)), -1);
        free(out), free(all);
        ddio_ec_codec_free(c);
    }
}
END_TEST

int main(void)
{
    Suite *su = suite_create("ec");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, t_parse);
    tcase_add_test(tc, t_placement);
    tcase_add_test(tc, t_compacted);
    tcase_add_test(tc, t_overlay_map);
    tcase_add_test(tc, t_rows_and_update);
    tcase_add_test(tc, t_decode_every_loss);
    suite_add_tcase(su, tc);
    int failed = check_run(su, 0);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
