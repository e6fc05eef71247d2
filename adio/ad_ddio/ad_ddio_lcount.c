/* Large counts in ROMIO's MPI-4 `_c` I/O routines (every file system).
 *
 * ROMIO's internals take an int count. scripts/romio-large-count.py makes
 * each MPI_File_*_c routine call MPIOI_Large_count_begin first: a count
 * beyond INT_MAX becomes 1 element of a contiguous type of count elements,
 * the same bytes and typemap. Blocking routines free that type on return
 * (MPIOI_Large_count_end); nonblocking ones may still use it after they
 * return, so it is kept until MPI_File_close of the file, by which time MPI
 * requires their requests to be complete (MPIOI_Large_count_release). */
#include "adio.h"
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

#if MPI_VERSION >= 4     /* MPI-3 ROMIOs (Open MPI's) have no _c routines */
MPI_Datatype MPIOI_Large_count_begin(MPI_File fh, MPI_Count * count,
                                     MPI_Datatype * datatype, int until_close);
void MPIOI_Large_count_end(MPI_Datatype type);
void MPIOI_Large_count_release(MPI_File fh);

struct lc_held {
    MPI_File fh;
    MPI_Datatype type;
    struct lc_held *next;
};

static pthread_mutex_t lc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lc_held *lc_list;

static void lc_hold(MPI_File fh, MPI_Datatype type)
{
    struct lc_held *h = malloc(sizeof(*h));
    if (!h)     /* no memory to remember it: leaked, never freed early */
        return;
    h->fh = fh;
    h->type = type;
    pthread_mutex_lock(&lc_lock);
    h->next = lc_list;
    lc_list = h;
    pthread_mutex_unlock(&lc_lock);
}

MPI_Datatype MPIOI_Large_count_begin(MPI_File fh, MPI_Count * count,
                                     MPI_Datatype * datatype, int until_close)
{
    MPI_Datatype big = MPI_DATATYPE_NULL;

    if (*count <= INT_MAX)
        return MPI_DATATYPE_NULL;
    /* an invalid type is reported by the routine's own check, with count 1 */
    if (*datatype == MPI_DATATYPE_NULL
        || PMPI_Type_contiguous_c(*count, *datatype, &big) != MPI_SUCCESS
        || PMPI_Type_commit(&big) != MPI_SUCCESS) {
        *count = 1;
        return MPI_DATATYPE_NULL;
    }
    *count = 1;
    *datatype = big;
    if (until_close) {
        lc_hold(fh, big);
        return MPI_DATATYPE_NULL;
    }
    return big;
}

void MPIOI_Large_count_end(MPI_Datatype type)
{
    if (type != MPI_DATATYPE_NULL)
        PMPI_Type_free(&type);
}

void MPIOI_Large_count_release(MPI_File fh)
{
    struct lc_held **p, *h, *mine = NULL;

    pthread_mutex_lock(&lc_lock);
    for (p = &lc_list; (h = *p);) {
        if (h->fh == fh) {
            *p = h->next;
            h->next = mine;
            mine = h;
        } else
            p = &h->next;
    }
    pthread_mutex_unlock(&lc_lock);
    while ((h = mine)) {
        mine = h->next;
        PMPI_Type_free(&h->type);
        free(h);
    }
}
#endif
