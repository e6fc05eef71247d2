/* Per-piece cost of the server's per-block copy paths (common/ddio_desc_pack.c)
 * for one rank's part of a cyclic view: scatter (write: stream -> block),
 * coverage bitmap (write: which bytes of the block are written) and gather
 * (read: block -> stream), over NB blocks of 1 MiB. No MPI, no I/O.
 *   bench/desc_copy [P [RECSIZE [NB]]]     (defaults 8 8 256)
 * Prints ns per piece for each path; the coverage count is checked. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddio_desc.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    uint64_t P = argc > 1 ? strtoull(argv[1], NULL, 10) : 8;
    uint64_t rec = argc > 2 ? strtoull(argv[2], NULL, 10) : 8;
    uint64_t nb = argc > 3 ? strtoull(argv[3], NULL, 10) : 256;
    uint64_t row = P * rec, blk = (1u << 20) / row * row;   /* whole rows per block */
    if (!P || !rec || !nb || !blk) {
        fprintf(stderr, "usage: desc_copy [P [RECSIZE [NBLOCKS]]] (P * RECSIZE <= 1 MiB)\n");
        return 2;
    }
    uint64_t per = blk / P, cnt = nb * blk / row;   /* rank 0: one record per row */
    struct ddio_desc d = { .disp = 0, .extent = (int64_t)(row * cnt), .start = 0,
                           .length = cnt * rec,
                           .root = ddio_node_vec(cnt, (int64_t)row, ddio_node_leaf(rec)) };
    uint8_t *buf = calloc(1, blk), *pk = malloc(per);
    uint64_t *bm = calloc(blk / 64 + 1, 8);
    if (!d.root || ddio_node_finish(d.root) || !buf || !pk || !bm) {
        fprintf(stderr, "desc_copy: out of memory\n");
        return 1;
    }
    memset(pk, 1, per);
    double t0 = now();
    for (uint64_t b = 0, s = 0; b < nb; b++, s += per)
        ddio_desc_scatter(&d, buf, (int64_t)(b * blk), s, s + per, pk);
    double ts = now() - t0;
    uint64_t added = 0;
    int ov = 0;
    t0 = now();
    for (uint64_t b = 0, s = 0; b < nb; b++, s += per) {
        memset(bm, 0, (blk / 64 + 1) * 8);
        added += ddio_desc_cover(&d, bm, (int64_t)(b * blk), s, s + per, &ov);
    }
    double tc = now() - t0;
    t0 = now();
    for (uint64_t b = 0, s = 0; b < nb; b++, s += per)
        ddio_desc_gather(&d, buf, (int64_t)(b * blk), s, s + per, pk);
    double tg = now() - t0;
    double pieces = (double)(nb * per / rec);
    printf("P=%lu rec=%lu: ns per piece: scatter %.2f  cover %.2f (with clearing the bitmap)"
           "  gather %.2f\n", (unsigned long)P, (unsigned long)rec, ts * 1e9 / pieces,
           tc * 1e9 / pieces, tg * 1e9 / pieces);
    if (added != nb * per || ov) {
        fprintf(stderr, "desc_copy: coverage counted %lu bytes (want %lu), overlap %d\n",
                (unsigned long)added, (unsigned long)(nb * per), ov);
        return 1;
    }
    ddio_desc_free(&d);
    free(buf);
    free(pk);
    free(bm);
    return 0;
}
