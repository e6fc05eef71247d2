"""Parallel h5py (Debian's python3-h5py-mpi: HDF5's mpio driver over MPI-IO)
on one MPI-IO name (ddio:... or ufs:...).

   t_h5py.py FILE   creates FILE with three datasets (no timestamps, so the
   bytes depend on the data and the calls only):
     coll   float64 (P*100, 50), each rank's 100 rows written collectively
     indep  int64 (P*64,), each rank's slice written independently
     chunk  int32 (P*40, 30) chunked 16 x 10: each rank writes every P-th
            row (a strided hyperslab crossing chunks) collectively
   then reopens it read-only on every rank and checks every element of the
   three datasets. Exit status 1 on every rank when any element differs;
   the harness compares the file with the same run on the other prefix."""
import sys

import h5py
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
name = sys.argv[1]
bad = []


def want_coll():
    return np.arange(size * 100 * 50, dtype=np.float64).reshape(size * 100, 50) * 0.5 - 7


def want_indep():
    return np.arange(size * 64, dtype=np.int64) * 1000003 - 5


def want_chunk():
    return (np.arange(size * 40 * 30, dtype=np.int32) * 7 + 1).reshape(size * 40, 30)


def write():
    with h5py.File(name, "w", driver="mpio", comm=comm) as f:
        c = f.create_dataset("coll", (size * 100, 50), dtype="f8", track_times=False)
        i = f.create_dataset("indep", (size * 64,), dtype="i8", track_times=False)
        k = f.create_dataset("chunk", (size * 40, 30), dtype="i4", chunks=(16, 10),
                             track_times=False)
        with c.collective:
            c[rank * 100:(rank + 1) * 100, :] = want_coll()[rank * 100:(rank + 1) * 100, :]
        i[rank * 64:(rank + 1) * 64] = want_indep()[rank * 64:(rank + 1) * 64]
        with k.collective:
            k[rank::size, :] = want_chunk()[rank::size, :]


def read():
    with h5py.File(name, "r", driver="mpio", comm=comm) as f:
        for ds, want in (("coll", want_coll()), ("indep", want_indep()), ("chunk", want_chunk())):
            got = f[ds][...]
            if got.shape != want.shape or not np.array_equal(got, want):
                bad.append("%s: %s" % (ds, "shape %s" % (got.shape,) if got.shape != want.shape
                                       else "%d elements differ" % int(np.sum(got != want))))


try:
    write()
    comm.Barrier()
    read()
except Exception as e:          # h5py raises OSError/ValueError from HDF5's errors
    bad.append("%s: %s" % (type(e).__name__, e))
for b in bad:
    print("t_h5py rank %d: %s" % (rank, b), file=sys.stderr, flush=True)
nbad = comm.allreduce(len(bad))
if rank == 0:
    print("t_h5py %s: %d ranks, %s" % (name, size, "OK" if nbad == 0 else "%d failures" % nbad), flush=True)
sys.exit(1 if nbad else 0)
