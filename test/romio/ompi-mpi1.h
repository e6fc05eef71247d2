/* Forced into ROMIO 3.2.1's test programs when they are built for Debian's
 * Open MPI (run-romio-tests.sh --ompi): some of them (noncontig,
 * i_noncontig, ...) still use MPI-1 names that MPI 3.0 removed (MPI_LB,
 * MPI_UB, MPI_Type_struct, ...). Debian's libmpi.so.40 still exports them
 * (Open MPI keeps them for ABI compatibility), but its mpi.h hides them
 * unless Open MPI was configured with --enable-mpi1-compatibility, which
 * Debian's is not: declare them again, so the tests run unmodified. */
#ifndef DDIO_OMPI_MPI1_H
#define DDIO_OMPI_MPI1_H
#define OMPI_OMIT_MPI1_COMPAT_DECLS 0
#include <mpi.h>
extern struct ompi_predefined_datatype_t ompi_mpi_lb, ompi_mpi_ub;
#define MPI_LB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_lb)
#define MPI_UB OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_ub)
#endif
