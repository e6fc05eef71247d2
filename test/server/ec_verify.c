/* ec_verify K M UNIT PATH ROOT_0 .. ROOT_{K+M-1}: checks, from the
 * servers' roots (one disk each), that every group of an erasure-coded
 * file has the parity of its in-place data (DESIGN.md 6.4: the overlay
 * holds partial writes, so in place and parity always agree). Prints the
 * groups checked and exits 0, or names the first groups that disagree and
 * exits 1. Used by the MPI tests' ec group after a job. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddio_ec.h"

static uint64_t file_size(const char *root, const char *rel)
{
    char fn[4096];
    snprintf(fn, sizeof(fn), "%s/%s", root, rel);
    FILE *f = fopen(fn, "rb");
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n > 0 ? (uint64_t)n : 0;
}

/* len bytes at off of ROOT/rel, zeros past its end (a hole) */
static void read_at(const char *root, const char *rel, uint64_t off, uint8_t *b, size_t len)
{
    char fn[4096];
    memset(b, 0, len);
    snprintf(fn, sizeof(fn), "%s/%s", root, rel);
    FILE *f = fopen(fn, "rb");
    if (!f)
        return;
    if (fseek(f, (long)off, SEEK_SET) == 0)
        (void)!fread(b, 1, len, f);
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: ec_verify K M UNIT PATH ROOT_0 .. ROOT_{K+M-1}\n");
        return 2;
    }
    struct ddio_ec E = {(uint32_t)atoi(argv[1]), (uint32_t)atoi(argv[2])};
    uint64_t U = strtoull(argv[3], NULL, 10);
    const char *path = argv[4];
    uint32_t n = E.k + E.m;
    char err[200], prel[4096];
    if ((uint32_t)(argc - 5) != n || !U) {
        fprintf(stderr, "ec_verify: %u roots wanted\n", n);
        return 2;
    }
    struct ddio_ec_codec *c = ddio_ec_codec_new(&E, err, sizeof(err));
    if (!c) {
        fprintf(stderr, "ec_verify: %s\n", err);
        return 2;
    }
    snprintf(prel, sizeof(prel), ".ddio/parity/%s", path);
    uint64_t units = 0;   /* the file's units: the most any server's data implies */
    for (uint32_t p = 0; p < n; p++) {
        uint64_t local = file_size(argv[5 + p], path);
        uint64_t u = local ? ((local + U - 1) / U - 1) * n + p + 1 : 0;
        units = u > units ? u : units;
    }
    uint64_t groups = (units + E.k - 1) / E.k, bad = 0;
    uint8_t *data = malloc((size_t)(E.k * U)), *want = malloc(U), *have = malloc(U);
    uint8_t *d[DDIO_EC_MAX_K];
    for (uint64_t g = 0; g < groups; g++) {
        for (uint32_t i = 0; i < E.k; i++) {
            uint64_t u = g * E.k + i;
            d[i] = data + i * U;
            read_at(argv[5 + u % n], path, (u / n) * U, d[i], U);
        }
        for (uint32_t j = 0; j < E.m; j++) {
            uint32_t q = ddio_ec_parity_server(&E, g, j);
            ddio_ec_encode(c, U, d, 1, &j, &want);
            read_at(argv[5 + q], prel, ddio_ec_parity_local(&E, q, g) * U, have, U);
            if (memcmp(want, have, U) && bad++ < 5)
                fprintf(stderr, "ec_verify: %s: group %" PRIu64 ": parity %u on server %u "
                        "is not its data's\n", path, g, j, q);
        }
    }
    printf("ec_verify: %s: %" PRIu64 " groups of ec:%u+%u, %" PRIu64 " parity units wrong\n",
           path, groups, E.k, E.m, bad);
    ddio_ec_codec_free(c);
    free(data), free(want), free(have);
    return bad ? 1 : 0;
}
