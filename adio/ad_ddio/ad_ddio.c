/* TEMPORARY bootstrap table so the first MPICH build can start; replaced by the real driver. */
#include "adio.h"
#include "adioi.h"
struct ADIOI_Fns_struct ADIO_DDIO_operations = {
    .fsname = "ddio:",
};
