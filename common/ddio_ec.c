/* Erasure-coded groups: parity placement and the GF(2^8) arithmetic
 * (ddio_ec.h). ISA-L is loaded with dlopen, as libssl and UCX are, so the
 * MPI library that carries this file needs no new link dependency. */
#include "ddio_ec.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ddio_ec_parse(const char *s, struct ddio_ec *E, char *err, size_t errlen)
{
    unsigned k, m;
    int end = 0;
    if (!s || sscanf(s, "ec:%u+%u%n", &k, &m, &end) != 2 || s[end] != '\0') {
        snprintf(err, errlen, "'%s' is not ec:K+M", s ? s : "");
        return -1;
    }
    if (k < 1 || k > DDIO_EC_MAX_K || m < 1 || m > DDIO_EC_MAX_M) {
        snprintf(err, errlen, "%s: K must be 1..%u and M 1..%u", s, DDIO_EC_MAX_K, DDIO_EC_MAX_M);
        return -1;
    }
    E->k = k;
    E->m = m;
    return 0;
}

static uint32_t width(const struct ddio_ec *E) { return E->k + E->m; }

uint32_t ddio_ec_parity_server(const struct ddio_ec *E, uint64_t g, uint32_t j)
{
    uint32_t n = width(E);
    return (uint32_t)(((g % n) * E->k + E->k + j) % n);
}

int ddio_ec_parity_held(const struct ddio_ec *E, uint32_t q, uint64_t g)
{
    uint32_t n = width(E);
    uint32_t first = (uint32_t)(((g % n) * E->k + E->k) % n);
    uint32_t j = (q % n + n - first) % n;
    return j < E->m ? (int)j : -1;
}

/* The placement repeats every n / gcd(k, n) groups. */
static uint32_t period(const struct ddio_ec *E)
{
    uint32_t a = E->k, b = width(E);
    while (b) {
        uint32_t t = a % b;
        a = b;
        b = t;
    }
    return width(E) / a;
}

static uint64_t held_below(const struct ddio_ec *E, uint32_t q, uint32_t upto)
{
    uint64_t c = 0;
    for (uint32_t g = 0; g < upto; g++)
        c += ddio_ec_parity_held(E, q, g) >= 0;
    return c;
}

uint64_t ddio_ec_parity_count(const struct ddio_ec *E, uint32_t q, uint64_t groups)
{
    uint32_t p = period(E);
    return (groups / p) * held_below(E, q, p) + held_below(E, q, (uint32_t)(groups % p));
}

uint64_t ddio_ec_parity_group(const struct ddio_ec *E, uint32_t q, uint64_t i)
{
    uint32_t p = period(E);
    uint64_t per = held_below(E, q, p);
    if (per == 0)
        return UINT64_MAX;
    uint64_t r = i % per;
    for (uint32_t g = 0; g < p; g++)
        if (ddio_ec_parity_held(E, q, g) >= 0 && r-- == 0)
            return (i / per) * p + g;
    return UINT64_MAX; /* not reached: per counts the matches above */
}

uint64_t ddio_ec_ovl_logical(const struct ddio_ec *E, uint64_t unit, uint32_t me, uint64_t off)
{
    uint32_t n = width(E);
    uint64_t j = off / unit, i = j / n;
    uint32_t c = (uint32_t)(j % n), p = (me % n + n - c) % n;
    uint64_t u = i * n + p;                  /* the logical unit */
    if (c && ddio_ec_parity_held(E, me, u / E->k) < 0)
        return UINT64_MAX;
    return u * unit + off % unit;
}

uint64_t ddio_ec_ovl_local(const struct ddio_ec *E, uint64_t unit, uint32_t me, uint64_t L)
{
    uint32_t n = width(E);
    uint64_t u = L / unit;
    uint32_t p = (uint32_t)(u % n), c = (me % n + n - p) % n;
    if (c && ddio_ec_parity_held(E, me, u / E->k) < 0)
        return UINT64_MAX;
    return ((u / n) * n + c) * unit + L % unit;
}

/* ---- ISA-L ---- */

static struct {
    int ok;
    char why[160];
    void (*gen_cauchy)(unsigned char *a, int m, int k);
    int (*invert)(unsigned char *in, unsigned char *out, int n);
    void (*init_tables)(int k, int rows, unsigned char *a, unsigned char *tbls);
    void (*encode)(int len, int k, int rows, unsigned char *tbls, unsigned char **data,
                   unsigned char **coding);
    void (*update)(int len, int k, int rows, int vec_i, unsigned char *tbls, unsigned char *data,
                   unsigned char **coding);
    unsigned char (*mul)(unsigned char a, unsigned char b);
} isal;

static pthread_once_t isal_once = PTHREAD_ONCE_INIT;

#define SYM(field, name) (*(void **)&isal.field = dlsym(h, name), isal.field != NULL)

static void load_isal(void)
{
    void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(isal.why, sizeof(isal.why), "erasure coding needs ISA-L's libisal.so.2 (Debian: libisal2): %s",
                 dlerror());
        return;
    }
    if (!(SYM(gen_cauchy, "gf_gen_cauchy1_matrix") && SYM(invert, "gf_invert_matrix")
          && SYM(init_tables, "ec_init_tables") && SYM(encode, "ec_encode_data")
          && SYM(update, "ec_encode_data_update") && SYM(mul, "gf_mul"))) {
        snprintf(isal.why, sizeof(isal.why), "libisal.so.2 lacks a function erasure coding needs: %s",
                 dlerror());
        return;
    }
    isal.ok = 1;
}

#define MAXN (DDIO_EC_MAX_K + DDIO_EC_MAX_M)

struct ddio_ec_codec {
    struct ddio_ec E;
    unsigned char a[MAXN * DDIO_EC_MAX_K];   /* (k+m) x k, identity on top */
};

struct ddio_ec_codec *ddio_ec_codec_new(const struct ddio_ec *E, char *err, size_t errlen)
{
    if (E->k < 1 || E->k > DDIO_EC_MAX_K || E->m < 1 || E->m > DDIO_EC_MAX_M) {
        snprintf(err, errlen, "ec:%u+%u: K must be 1..%u and M 1..%u", E->k, E->m, DDIO_EC_MAX_K,
                 DDIO_EC_MAX_M);
        return NULL;
    }
    pthread_once(&isal_once, load_isal);
    if (!isal.ok) {
        snprintf(err, errlen, "%s", isal.why);
        return NULL;
    }
    struct ddio_ec_codec *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->E = *E;
    isal.gen_cauchy(c->a, (int)width(E), (int)E->k);
    return c;
}

void ddio_ec_codec_free(struct ddio_ec_codec *c) { free(c); }

/* n rows of coefficients, each row k long, into ISA-L's tables, and run
 * them over k sources */
static void run_rows(const struct ddio_ec_codec *c, const unsigned char *coef, uint32_t n,
                     size_t len, uint8_t *const *src, uint8_t **out)
{
    unsigned char tbls[32 * MAXN * DDIO_EC_MAX_K];
    int k = (int)c->E.k;
    isal.init_tables(k, (int)n, (unsigned char *)coef, tbls);
    isal.encode((int)len, k, (int)n, tbls, (unsigned char **)src, out);
}

void ddio_ec_encode(const struct ddio_ec_codec *c, size_t len, uint8_t *const *data, uint32_t n,
                    const uint32_t *rows, uint8_t **out)
{
    unsigned char coef[MAXN * DDIO_EC_MAX_K];
    uint32_t k = c->E.k;
    for (uint32_t r = 0; r < n; r++)
        memcpy(coef + r * k, c->a + (k + rows[r]) * k, k);
    run_rows(c, coef, n, len, data, out);
}

void ddio_ec_update(const struct ddio_ec_codec *c, size_t len, uint32_t i, const uint8_t *delta,
                    uint32_t n, const uint32_t *rows, uint8_t **out)
{
    unsigned char coef[MAXN * DDIO_EC_MAX_K], tbls[32 * MAXN * DDIO_EC_MAX_K];
    uint32_t k = c->E.k;
    for (uint32_t r = 0; r < n; r++)
        memcpy(coef + r * k, c->a + (k + rows[r]) * k, k);
    isal.init_tables((int)k, (int)n, coef, tbls);
    isal.update((int)len, (int)k, (int)n, (int)i, tbls, (unsigned char *)delta, out);
}

/* dst (1 x k) = row (1 x k) times inv (k x k) */
static void row_times(const struct ddio_ec_codec *c, const unsigned char *row,
                      const unsigned char *inv, unsigned char *dst)
{
    uint32_t k = c->E.k;
    for (uint32_t j = 0; j < k; j++) {
        unsigned char s = 0;
        for (uint32_t l = 0; l < k; l++)
            s ^= isal.mul(row[l], inv[l * k + j]);
        dst[j] = s;
    }
}

int ddio_ec_decode(const struct ddio_ec_codec *c, size_t len, const uint32_t *have,
                   uint8_t *const *in, uint32_t n, const uint32_t *want, uint8_t **out, char *err,
                   size_t errlen)
{
    uint32_t k = c->E.k, w = width(&c->E);
    unsigned char b[DDIO_EC_MAX_K * DDIO_EC_MAX_K], inv[DDIO_EC_MAX_K * DDIO_EC_MAX_K];
    unsigned char coef[MAXN * DDIO_EC_MAX_K];
    uint32_t seen = 0;
    for (uint32_t r = 0; r < k; r++) {
        if (have[r] >= w || (seen >> have[r] & 1u)) {
            snprintf(err, errlen, "unit %u given twice or past %u", have[r], w - 1);
            return -1;
        }
        seen |= 1u << have[r];
        memcpy(b + r * k, c->a + have[r] * k, k);
    }
    if (n > MAXN) {
        snprintf(err, errlen, "%u units wanted, at most %u", n, MAXN);
        return -1;
    }
    for (uint32_t r = 0; r < n; r++)
        if (want[r] >= w) {
            snprintf(err, errlen, "unit %u wanted, past %u", want[r], w - 1);
            return -1;
        }
    if (isal.invert(b, inv, (int)k) != 0) {   /* not for a Cauchy matrix's rows */
        snprintf(err, errlen, "the units given do not determine the others");
        return -1;
    }
    for (uint32_t r = 0; r < n; r++)
        row_times(c, c->a + want[r] * k, inv, coef + r * k);
    run_rows(c, coef, n, len, in, out);
    return 0;
}
