// MPI's C++ bindings, built with Debian's mpicxx.mpich and run on the ddio
// MPICH through LD_LIBRARY_PATH alone (libmpichcxx.so.12 -> libmpich.so.12).
// Errors throw (MPI::ERRORS_THROW_EXCEPTIONS, set through libmpich's C++
// hook); each rank writes a block collectively, reads its neighbour's back
// and checks it. The file is compared with the ufs: run. usage: t_cxx FILE
#include <mpi.h>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    MPI::Init(argc, argv);
    const int rank = MPI::COMM_WORLD.Get_rank(), np = MPI::COMM_WORLD.Get_size();
    const int n = 8192;
    int rc = 0;
    if (argc != 2) {
        std::fprintf(stderr, "usage: t_cxx FILE\n");
        MPI::COMM_WORLD.Abort(2);
    }
    MPI::FILE_NULL.Set_errhandler(MPI::ERRORS_THROW_EXCEPTIONS);
    try {
        std::vector<int> w(n), r(n);
        for (int i = 0; i < n; i++)
            w[i] = rank * 100000 + i;
        MPI::File f = MPI::File::Open(MPI::COMM_WORLD, argv[1],
                                      MPI::MODE_CREATE | MPI::MODE_RDWR, MPI::INFO_NULL);
        f.Write_at_all((MPI::Offset) rank * n * sizeof(int), w.data(), n, MPI::INT);
        f.Sync();
        MPI::COMM_WORLD.Barrier();
        f.Sync();
        const int nbr = (rank + 1) % np;
        f.Read_at_all((MPI::Offset) nbr * n * sizeof(int), r.data(), n, MPI::INT);
        for (int i = 0; i < n; i++)
            if (r[i] != nbr * 100000 + i) {
                std::fprintf(stderr, "rank %d: element %d is %d\n", rank, i, r[i]);
                MPI::COMM_WORLD.Abort(1);
            }
        f.Close();
        // an error must arrive as an exception: a file that does not exist
        try {
            MPI::File g = MPI::File::Open(MPI::COMM_WORLD, (std::string(argv[1]) + ".none").c_str(),
                                          MPI::MODE_RDONLY, MPI::INFO_NULL);
            std::fprintf(stderr, "rank %d: opening a missing file did not throw\n", rank);
            rc = 1;
            g.Close();
        } catch (MPI::Exception &e) {
            if (e.Get_error_class() != MPI::ERR_NO_SUCH_FILE) {
                std::fprintf(stderr, "rank %d: missing file: class %d (%s)\n", rank,
                             e.Get_error_class(), e.Get_error_string());
                rc = 1;
            }
        }
    } catch (MPI::Exception &e) {
        std::fprintf(stderr, "rank %d: MPI exception: %s\n", rank, e.Get_error_string());
        MPI::COMM_WORLD.Abort(1);
    }
    if (rank == 0 && !rc)
        std::printf("t_cxx: %d ranks, every value checked, errors thrown\n", np);
    MPI::Finalize();
    return rc;
}
