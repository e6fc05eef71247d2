/* romio_ddio_check_desc=enable (a debugging hint): before every transfer
 * described by the file view, walk the descriptor we are about to send and
 * compare it, byte range by byte range, with the pieces ROMIO itself would
 * access: its flattened filetype (ADIOI_Flatlist_node) tiled from disp,
 * starting at the call's position, the way ADIOI_Calc_my_off_len walks it.
 *
 * The reference is derived independently of ad_ddio_view.c (no tree, no
 * view_bytes_before), so a bug in the compression, in the stream start for
 * the individual file pointer or in the walker fails the call with
 * MPI_ERR_INTERN and names the first stream byte that differs, instead of
 * silently moving the wrong bytes. Cost: O(pieces) per call; debug only.
 *
 * ReadContig/WriteContig are not checked: ROMIO hands them an absolute byte
 * offset, which is the descriptor. */
#include "ad_ddio.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ref_iter {
    const ADIOI_Flatlist_node *flat;
    int64_t disp, extent;
    MPI_Count j;                /* current flattened block */
    int64_t tile;               /* current filetype instance */
    int64_t off;                /* next file offset ROMIO accesses */
    int64_t left;               /* bytes left in the current block */
} ref_iter;

/* position at the start of block j of the current tile, skipping empty
 * blocks (the filetype has data, so this ends) */
static void ref_load(ref_iter * r)
{
    while (r->flat->blocklens[r->j] == 0) {
        if (++r->j == r->flat->count) {
            r->j = 0;
            r->tile++;
        }
    }
    r->off = r->disp + r->tile * r->extent + r->flat->indices[r->j];
    r->left = r->flat->blocklens[r->j];
}

static void ref_next_block(ref_iter * r)
{
    if (++r->j == r->flat->count) {
        r->j = 0;
        r->tile++;
    }
    ref_load(r);
}

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* explicit offset: `bytes` view data bytes precede the first one accessed */
static void ref_seek_bytes(ref_iter * r, uint64_t bytes, uint64_t ftsize)
{
    uint64_t within = bytes % ftsize, sum = 0;
    r->tile = (int64_t) (bytes / ftsize);
    for (r->j = 0; r->j < r->flat->count; r->j++) {
        uint64_t bl = (uint64_t) r->flat->blocklens[r->j];
        if (sum + bl > within)
            break;
        sum += bl;
    }
    r->off = r->disp + r->tile * r->extent + r->flat->indices[r->j] + (int64_t) (within - sum);
    r->left = r->flat->blocklens[r->j] - (int64_t) (within - sum);
}

/* individual pointer: the first view byte at or after file offset fp */
static void ref_seek_offset(ref_iter * r, int64_t fp)
{
    const ADIOI_Flatlist_node *fl = r->flat;
    MPI_Count first = 0;
    while (fl->blocklens[first] == 0)
        first++;
    r->tile = floor_div(fp - r->disp - fl->indices[first], r->extent);
    int64_t w = fp - r->disp - r->tile * r->extent;
    for (r->j = first; r->j < fl->count; r->j++) {
        if (fl->blocklens[r->j] == 0 || fl->indices[r->j] + fl->blocklens[r->j] <= w)
            continue;
        int64_t skip = w > fl->indices[r->j] ? w - fl->indices[r->j] : 0;
        r->off = r->disp + r->tile * r->extent + fl->indices[r->j] + skip;
        r->left = fl->blocklens[r->j] - skip;
        return;
    }
    r->j = 0;
    r->tile++;
    ref_load(r);
}

typedef struct cmp_state {
    ref_iter r;
    uint64_t bad_stream;
    int64_t bad_addr, want;
} cmp_state;

static int cmp_piece(void *arg, int64_t addr, uint64_t len, uint64_t stream_off)
{
    cmp_state *c = arg;
    while (len > 0) {
        if (c->r.left == 0)
            ref_next_block(&c->r);
        if (c->r.off != addr) {
            c->bad_stream = stream_off;
            c->bad_addr = addr;
            c->want = c->r.off;
            return 1;
        }
        uint64_t n = len < (uint64_t) c->r.left ? len : (uint64_t) c->r.left;
        c->r.off += (int64_t) n;
        c->r.left -= (int64_t) n;
        addr += (int64_t) n;
        stream_off += n;
        len -= n;
    }
    return 0;
}

int ADIOI_DDIO_Check_desc(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
                          const struct ddio_desc *d, ADIOI_DDIO_Err * e)
{
    ADIOI_DDIO_File *f = fd->fs_ptr;
    cmp_state c;
    MPI_Aint lb, extent;
    MPI_Count ftsize;
    int contig;

    if (f->check_desc != ADIOI_HINT_ENABLE || d->length == 0)
        return 0;
    memset(&c, 0, sizeof(c));
    MPI_Type_size_x(fd->filetype, &ftsize);
    MPI_Type_get_extent(fd->filetype, &lb, &extent);
    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    if (contig) {
        /* ROMIO: a contiguous filetype is one piece from disp (+ offset),
         * as long as the request: the descriptor never walks past it */
        c.r.off = file_ptr_type == ADIO_INDIVIDUAL ? fd->fp_ind
            : fd->disp + (ADIO_Offset) fd->etype_size * offset;
        c.r.left = (int64_t) d->length;
    } else {
        c.r.flat = ADIOI_Flatten_and_find(fd->filetype);
        c.r.disp = fd->disp;
        c.r.extent = extent;
        if (file_ptr_type == ADIO_INDIVIDUAL)
            ref_seek_offset(&c.r, fd->fp_ind);
        else
            ref_seek_bytes(&c.r, (uint64_t) offset * (uint64_t) fd->etype_size,
                           (uint64_t) ftsize);
    }
    /* Fault injection for the test that proves this check fires:
     * DDIO_TEST_DESC_SKEW=N compares a descriptor shifted by N bytes. */
    struct ddio_desc dd = *d;
    const char *skew = getenv("DDIO_TEST_DESC_SKEW");
    if (skew)
        dd.disp += atoll(skew);
    if (!ddio_desc_walk_stream(&dd, 0, dd.length, cmp_piece, &c))
        return 0;
    ddio_err_set(e, ADIOI_DDIO_EINTERN, "ddio: romio_ddio_check_desc: stream byte %llu "
                       "of %llu is at file offset %lld in the descriptor, ROMIO's flattened "
                       "view says %lld", (unsigned long long) c.bad_stream,
                       (unsigned long long) d->length, (long long) c.bad_addr,
                       (long long) c.want);
    return -1;
}

/* ---- memory trees: against MPI_Pack, not ROMIO's flattening ---- */

#define MEM_CHECK_MAX (64 << 20)        /* bigger elements are not checked */

/* byte i of the element's buffer under pattern p: together the two tell
 * apart any two addresses less than 64 KiB apart */
static unsigned char fill_byte(int p, int64_t i)
{
    return (unsigned char) (p ? (i >> 8) * 131 + 17 : i);
}

/* the first stream byte where root's gather and MPI_Pack disagree (-1: none) */
static int64_t mem_differs(MPI_Datatype t, const struct ddio_node *root, int64_t base,
                           MPI_Aint tlb, MPI_Aint text, int size, unsigned char *buf,
                           unsigned char *a, unsigned char *b)
{
    struct ddio_desc d = {.disp = base,.extent = text,.root = (struct ddio_node *) root,
        .start = 0,.length = (uint64_t) size
    };
    for (int p = 0; p < 2; p++) {
        int pos = 0;
        for (MPI_Aint i = 0; i < text; i++)
            buf[i] = fill_byte(p, i);
        MPI_Pack(buf - tlb, 1, t, a, size, &pos, MPI_COMM_SELF);
        ddio_desc_gather(&d, buf, tlb, 0, (uint64_t) size, b);
        for (int i = 0; i < size; i++)
            if (a[i] != b[i])
                return i;
    }
    return -1;
}

int ADIOI_DDIO_Check_mem_tree(MPI_Datatype t, const struct ddio_node *root, int64_t base,
                              ADIOI_DDIO_Err * e)
{
    MPI_Aint tlb, text;
    MPI_Count size;
    const char *skew = getenv("DDIO_TEST_TREE_SKEW");   /* as Check_tree's */
    unsigned char *buf, *a, *b;
    int64_t at = -1;

    MPI_Type_get_true_extent(t, &tlb, &text);
    MPI_Type_size_x(t, &size);
    if (text > MEM_CHECK_MAX || size > MEM_CHECK_MAX || size <= 0)
        return 0;
    if (skew)
        base += atoll(skew);
    if (base + root->lo < tlb || base + root->hi > tlb + text || root->size != (uint64_t) size)
        at = 0;                 /* (outside the element: not gathered) */
    buf = malloc((size_t) text + 1);
    a = malloc((size_t) size);
    b = malloc((size_t) size);
    if (!buf || !a || !b)
        ddio_err_set(e, ENOMEM, "ddio: romio_ddio_check_desc: out of memory");
    else if (at < 0)
        at = mem_differs(t, root, base, tlb, text, (int) size, buf, a, b);
    free(buf);
    free(a);
    free(b);
    if (at >= 0 && !e->errnum)
        ddio_err_set(e, ADIOI_DDIO_EINTERN, "ddio: romio_ddio_check_desc: the memory type's "
                     "tree differs from its type map (MPI_Pack) at stream byte %lld of %lld",
                     (long long) at, (long long) size);
    return e->errnum ? -1 : 0;
}
