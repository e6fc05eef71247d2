"""mpi4py's MPI.File on one MPI-IO name prefix (ddio: or ufs:).

   t_mpi4py.py BASE    writes BASE.sub, BASE.cyc and BASE.nb:
     .sub  a 2-D int32 array, each rank's block through a subarray view
           (Create_subarray on a Compute_dims grid), written and read back
           collectively (Write_all / Read_all)
     .cyc  8-byte records dealt cyclically over the ranks (a resized
           contiguous filetype, displacement rank * 8): the first half
           written independently (Write, the individual pointer), the
           second collectively (Write_at_all), read back with Read_at
     .nb   nonblocking: Iwrite_at of a rank's own range, Iwrite_at_all of a
           strided view, several requests outstanding, Waitall; read back
           with Iread_at / Iread_at_all
   Every rank checks what it reads against the bytes it expects, and rank 0
   reads each whole file and checks every byte; the harness also compares
   the files with the same run on the other prefix (filecmp). Exit status 1
   (on every rank: an allreduce of the failures) when any byte differs."""
import sys

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
base = sys.argv[1]
bad = []


def check(what, got, want):
    if not np.array_equal(np.asarray(got), np.asarray(want)):
        diff = np.flatnonzero(np.asarray(got).ravel() != np.asarray(want).ravel())
        bad.append("%s: %d of %d elements differ (first at %d)"
                   % (what, diff.size, np.asarray(want).size, diff[0] if diff.size else -1))


def pattern(n, seed):
    """n bytes, a function of (seed, position) only"""
    i = np.arange(n, dtype=np.uint64)
    return ((i * 2654435761 + seed * 40503) >> np.uint64(7)).astype(np.uint8)


def whole(name, nbytes):
    """rank 0: every byte of the file, through a default view"""
    f = MPI.File.Open(MPI.COMM_SELF, name, MPI.MODE_RDONLY)
    buf = np.zeros(nbytes, np.uint8)
    f.Read_at(0, buf)
    if f.Get_size() != nbytes:
        bad.append("%s: size %d, want %d" % (name, f.Get_size(), nbytes))
    f.Close()
    return buf


def subarray():
    name = base + ".sub"
    dims = MPI.Compute_dims(size, 2)
    sub = (5, 7)                                  # odd sizes: no aligned rows
    glob = (dims[0] * sub[0], dims[1] * sub[1])
    coords = (rank // dims[1], rank % dims[1])
    starts = (coords[0] * sub[0], coords[1] * sub[1])
    want_glob = np.arange(glob[0] * glob[1], dtype=np.int32).reshape(glob) * 3 + 11
    mine = np.ascontiguousarray(want_glob[starts[0]:starts[0] + sub[0], starts[1]:starts[1] + sub[1]])
    ft = MPI.INT32_T.Create_subarray(glob, sub, starts).Commit()
    f = MPI.File.Open(comm, name, MPI.MODE_CREATE | MPI.MODE_RDWR)
    f.Set_view(0, MPI.INT32_T, ft)
    f.Write_all(mine)
    if f.Get_position() != mine.size:           # in etypes: the individual pointer moved
        bad.append("subarray: position %d after Write_all, want %d" % (f.Get_position(), mine.size))
    f.Sync()
    comm.Barrier()
    f.Sync()
    back = np.zeros_like(mine)
    f.Seek(0)
    f.Read_all(back)
    check("subarray Read_all", back, mine)
    f.Close()
    ft.Free()
    comm.Barrier()
    if rank == 0:
        check("subarray whole file", whole(name, want_glob.nbytes).view(np.int32).reshape(glob), want_glob)


def cyclic():
    name = base + ".cyc"
    rec, nrec = 8, 300                            # per rank, half independent, half collective
    half = nrec // 2
    rec_t = MPI.BYTE.Create_contiguous(rec).Commit()
    ft = rec_t.Create_resized(0, rec * size).Commit()
    data = pattern(nrec * rec, 1000 + rank)
    f = MPI.File.Open(comm, name, MPI.MODE_CREATE | MPI.MODE_RDWR)
    f.Set_view(rank * rec, MPI.BYTE, ft)
    f.Write(data[:half * rec])                     # independent, individual pointer
    f.Write_at_all(half * rec, data[half * rec:])  # collective, explicit offset
    f.Sync()
    comm.Barrier()
    f.Sync()
    back = np.zeros_like(data)
    f.Read_at(0, back)
    check("cyclic Read_at", back, data)
    f.Close()
    ft.Free()
    rec_t.Free()
    comm.Barrier()
    if rank == 0:
        got = whole(name, nrec * rec * size).reshape(nrec, size, rec)
        for r in range(size):
            check("cyclic whole file, rank %d's records" % r, got[:, r, :].ravel(), pattern(nrec * rec, 1000 + r))


def nonblocking():
    name = base + ".nb"
    own = 40000                                   # bytes per rank, region A (contiguous per rank)
    blk, nblk = 1000, 20                          # region B: 1000-byte blocks, cyclic over ranks
    a = pattern(own, 2000 + rank)
    b = pattern(blk * nblk, 3000 + rank)
    regb = own * size
    blk_t = MPI.BYTE.Create_contiguous(blk).Commit()
    ft = blk_t.Create_resized(0, blk * size).Commit()
    f = MPI.File.Open(comm, name, MPI.MODE_CREATE | MPI.MODE_RDWR)
    reqs = [f.Iwrite_at(rank * own, a[:own // 2]),
            f.Iwrite_at(rank * own + own // 2, a[own // 2:])]
    MPI.Request.Waitall(reqs)
    f.Set_view(regb + rank * blk, MPI.BYTE, ft)
    req = f.Iwrite_at_all(0, b)
    req.Wait()
    f.Sync()
    comm.Barrier()
    f.Sync()
    bb = np.zeros_like(b)
    req = f.Iread_at_all(0, bb)
    req.Wait()
    check("nonblocking Iread_at_all (cyclic view)", bb, b)
    f.Set_view(0, MPI.BYTE, MPI.BYTE)
    aa = np.zeros_like(a)
    reqs = [f.Iread_at(rank * own + own // 2, aa[own // 2:]), f.Iread_at(rank * own, aa[:own // 2])]
    MPI.Request.Waitall(reqs)
    check("nonblocking Iread_at", aa, a)
    f.Close()
    ft.Free()
    blk_t.Free()
    comm.Barrier()
    if rank == 0:
        got = whole(name, regb + blk * nblk * size)
        for r in range(size):
            check("nonblocking whole file, region A rank %d" % r, got[r * own:(r + 1) * own], pattern(own, 2000 + r))
            gb = got[regb:].reshape(nblk, size, blk)[:, r, :].ravel()
            check("nonblocking whole file, region B rank %d" % r, gb, pattern(blk * nblk, 3000 + r))


for case in (subarray, cyclic, nonblocking):
    try:
        case()
    except MPI.Exception as e:
        bad.append("%s: MPI error %s" % (case.__name__, e.Get_error_string()))
for b in bad:
    print("t_mpi4py rank %d: %s" % (rank, b), file=sys.stderr, flush=True)
nbad = comm.allreduce(len(bad))
if rank == 0:
    print("t_mpi4py %s: %d ranks, %s" % (base, size, "OK" if nbad == 0 else "%d failures" % nbad), flush=True)
sys.exit(1 if nbad else 0)
