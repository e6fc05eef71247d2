"""Every MPI.File method and behaviour that mpi4py 3.1's own I/O tests
exercise (its test_io.py and test_file.py), written for ddio (issue #25).

mpi4py's own test files cannot be had here (Debian's python3-mpi4py ships
no tests, its source tarball is not served, there is no Python registry:
docs/CONFORMANCE.md), so this is our own program covering the same ground,
on Debian's python3-mpi4py 3.1.4 under Open MPI.

   t_mpi4py_api.py BASE   writes BASE.io, BASE.view and BASE.file:
     .io    every read/write method family on five element types (byte,
            int, double, a contiguous type of 3 ints, a vector type of
            doubles with holes): explicit offsets, individual pointer,
            shared pointer, ordered, their collective and split-collective
            forms and their nonblocking forms, and atomic mode; each
            (family, type) in its own region of the file; each rank writes
            13 elements, reads them back into a buffer one element longer
            (the last, and the vector's holes, must stay untouched), checks
            the status count, and reads the next rank's part too
     .view  file views of every type constructor mpi4py's test uses
            (named, dup, contiguous, vector, hvector, indexed, hindexed,
            indexed_block, hindexed_block, struct, subarray, darray block
            and cyclic), written with Write_ordered / Write_all, read back
            through the view and through a plain view; and the external32
            data representation (big-endian in the file)
     .file  the file-level calls: Get_amode, Get_group, Get_size, Set_size,
            Preallocate, Get_info, Set_info, Get/Set_atomicity, Sync,
            Seek/Get_position and the shared forms (SEEK_SET, CUR, END),
            Get_byte_offset, Get_type_extent, Get_view/Set_view, the error
            handlers, py2f/f2py, and the properties
   and, left removed: BASE.selfN (one per rank, COMM_SELF, Delete), BASE.doc
   (MODE_DELETE_ON_CLOSE with MODE_UNIQUE_OPEN, the nonblocking families),
   and when BASE is a plain path (no "prefix:"), a file made by
   tempfile.mkstemp in TMPDIR and opened as mpi4py's test opens it
   (RDWR|CREATE|DELETE_ON_CLOSE|UNIQUE_OPEN): issue #25's bug was the
   nonblocking calls on such a file under the ddio mount (ENOENT, 2 ranks
   hung). The errors mpi4py's tests expect (missing file, existing file with
   MODE_EXCL, bad amodes, writes to a read-only file, ...) with their error
   classes, and Register_datarep twice (DUP_DATAREP).
   T_MPI4PY_API_ONLY=errors runs the error cases alone (the runner checks
   ROMIO 3.2.1's own classes on ufs: with it).
Every rank checks what it reads; rank 0 reads each whole file and checks
every byte; the runner compares the files with the control's. Exit status 1
on every rank (an allreduce of the failures) when anything differs.

Where the control differs by itself, this program asserts what the io
component in use gives: ROMIO 3.2.1 (ddio's plug-in, Debian's romio321 on
ufs:) or OMPIO (Open MPI's default: the control's), told by OMPI_MCA_io
(mpirun --mca io X and ddio-run --ompi set it)."""
import os
import sys
import tempfile

import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
base = sys.argv[1]
ROMIO = "romio" in os.environ.get("OMPI_MCA_io", "")
ONLY = os.environ.get("T_MPI4PY_API_ONLY", "")
N = 13                                    # elements per rank and case, as mpi4py's
bad = []
counts = {"checks": 0, "errors": 0}


def fail(msg):
    bad.append(msg)


def expect(what, got, want):
    counts["checks"] += 1
    if got != want:
        fail("%s: got %r, want %r" % (what, got, want))


def same(what, got, want):
    counts["checks"] += 1
    got, want = np.asarray(got).ravel(), np.asarray(want).ravel()
    if got.shape != want.shape:
        fail("%s: %d elements, want %d" % (what, got.size, want.size))
    elif not np.array_equal(got, want):
        diff = np.flatnonzero(got != want)
        fail("%s: %d of %d elements differ (first at %d: %r, want %r)"
             % (what, diff.size, want.size, diff[0], got[diff[0]], want[diff[0]]))


def raises(what, cls, fn, *args):
    """fn(*args) must raise MPI.Exception of error class cls"""
    counts["checks"] += 1
    counts["errors"] += 1
    try:
        fn(*args)
    except MPI.Exception as e:
        if e.Get_error_class() != cls:
            fail("%s: error class %d (%s), want %d (%s)" % (what, e.Get_error_class(), e.Get_error_string(),
                                                           cls, MPI.Get_error_string(cls)))
        return
    fail("%s: no error, want %s" % (what, MPI.Get_error_string(cls)))


# --- element types: (name, MPI type, numpy base type, extent in base
# elements, positions of the data within one extent) ----------------------
class Kind:
    def __init__(self, name, mpi, base_t, ext, pos, sentinel, poison):
        self.name, self.mpi, self.base, self.ext, self.pos = name, mpi, base_t, ext, np.array(pos)
        self.sentinel, self.poison = sentinel, poison
        self.nper = len(pos)
        self.itemsize = np.dtype(base_t).itemsize

    def values(self, case, r, n):
        """n elements' data of rank r in case: distinct, never 0, sentinel or poison"""
        i = np.arange(n * self.nper)
        if self.base == np.uint8:
            return ((case * 37 + r * 71 + i * 13) % 250 + 1).astype(np.uint8)
        return (case * 100000 + r * 1000 + i + 1).astype(self.base) * (1.25 if self.base == np.float64 else 1)

    def mem(self, vals, n, fill):
        """n elements laid out by the type map, fill in the holes"""
        buf = np.full(n * self.ext, fill, self.base)
        idx = (np.arange(n)[:, None] * self.ext + self.pos[None, :]).ravel()
        buf[idx] = vals
        return buf


KINDS = [
    Kind("byte", MPI.BYTE, np.uint8, 1, [0], 255, 254),
    Kind("int", MPI.INT, np.int32, 1, [0], -1, -7),
    Kind("double", MPI.DOUBLE, np.float64, 1, [0], -1.0, -7.0),
    Kind("contig", MPI.INT.Create_contiguous(3).Commit(), np.int32, 3, [0, 1, 2], -1, -7),
    # 3 blocks of 2 doubles, stride 4: extent 10 doubles, 4 of them holes
    Kind("vector", MPI.DOUBLE.Create_vector(3, 2, 4).Commit(), np.float64, 10, [0, 1, 4, 5, 8, 9], -1.0, -7.0),
]


def whole(name, nbytes):
    """rank 0: every byte of the file, through a default view"""
    f = MPI.File.Open(MPI.COMM_SELF, name, MPI.MODE_RDONLY)
    expect("%s: size" % name, f.Get_size(), nbytes)
    buf = np.zeros(nbytes, np.uint8)
    f.Read_at(0, buf)
    f.Close()
    return buf


def count_ok(what, st, kind, n):
    expect("%s: status count" % what, st.Get_count(kind.mpi), n)


# --- .io: the method families -----------------------------------------------
# Each writes rank's n elements at element offset rank*n of its region (the
# shared-pointer forms in rank order), and reads them back the same way.
def w_at(f, k, buf, n, st):
    f.Write_at(rank * n, [buf, n, k.mpi], st)


def r_at(f, k, buf, n, st):
    f.Read_at(rank * n, [buf, n, k.mpi], st)


def w_pos(f, k, buf, n, st):
    f.Seek(rank * n, MPI.SEEK_SET)
    f.Write([buf, n, k.mpi], st)
    expect("Write: position after", f.Get_position(), rank * n + n)
    f.Seek(-n, MPI.SEEK_CUR)
    expect("Seek SEEK_CUR", f.Get_position(), rank * n)


def r_pos(f, k, buf, n, st):
    # as mpi4py's test: shorter reads first, from the same place
    for m in (0, 1, n // 2):
        part = np.full(len(buf), k.sentinel, k.base)
        f.Seek(rank * n, MPI.SEEK_SET)
        s = MPI.Status()
        f.Read([part, m, k.mpi], s)
        expect("Read %d: position after" % m, f.Get_position(), rank * n + m)
        expect("Read %d: status count" % m, s.Get_count(k.mpi), m)
        same("Read %d of %s" % (m, k.name), part,
             k.mem(k.values(CASE[0], rank, m), m, k.sentinel).tolist() + [k.sentinel] * (len(buf) - m * k.ext))
    f.Seek(rank * n, MPI.SEEK_SET)
    f.Read([buf, n, k.mpi], st)
    expect("Read: position after", f.Get_position(), rank * n + n)


def turns(fn):
    """fn() on each rank in rank order: the shared pointer's order fixed"""
    for t in range(size):
        if t == rank:
            fn()
        comm.Barrier()


def w_shared(f, k, buf, n, st):
    f.Seek_shared(0, MPI.SEEK_SET)
    turns(lambda: f.Write_shared([buf, n, k.mpi], st))
    expect("Write_shared: shared position after", f.Get_position_shared(), size * n)


def r_shared(f, k, buf, n, st):
    f.Seek_shared(0, MPI.SEEK_SET)
    expect("Seek_shared: shared position", f.Get_position_shared(), 0)
    comm.Barrier()                        # every rank looked before the pointer moves
    turns(lambda: f.Read_shared([buf, n, k.mpi], st))
    expect("Read_shared: shared position after", f.Get_position_shared(), size * n)


def w_ordered(f, k, buf, n, st):
    f.Seek_shared(0, MPI.SEEK_SET)
    f.Write_ordered([buf, n, k.mpi], st)
    expect("Write_ordered: shared position after", f.Get_position_shared(), size * n)


def r_ordered(f, k, buf, n, st):
    f.Seek_shared(0, MPI.SEEK_SET)
    f.Read_ordered([buf, n, k.mpi], st)
    expect("Read_ordered: shared position after", f.Get_position_shared(), size * n)


def w_at_all(f, k, buf, n, st):
    f.Write_at_all(rank * n, [buf, n, k.mpi], st)


def r_at_all(f, k, buf, n, st):
    f.Read_at_all(rank * n, [buf, n, k.mpi], st)


def w_all(f, k, buf, n, st):
    f.Seek(rank * n, MPI.SEEK_SET)
    f.Write_all([buf, n, k.mpi], st)
    expect("Write_all: position after", f.Get_position(), rank * n + n)


def r_all(f, k, buf, n, st):
    f.Seek(rank * n, MPI.SEEK_SET)
    f.Read_all([buf, n, k.mpi], st)
    expect("Read_all: position after", f.Get_position(), rank * n + n)


def w_at_all_be(f, k, buf, n, st):
    f.Write_at_all_begin(rank * n, [buf, n, k.mpi])
    f.Write_at_all_end([buf, n, k.mpi], st)


def r_at_all_be(f, k, buf, n, st):
    f.Read_at_all_begin(rank * n, [buf, n, k.mpi])
    f.Read_at_all_end([buf, n, k.mpi], st)


def w_all_be(f, k, buf, n, st):
    f.Seek(rank * n, MPI.SEEK_SET)
    f.Write_all_begin([buf, n, k.mpi])
    f.Write_all_end([buf, n, k.mpi], st)
    expect("Write_all_end: position after", f.Get_position(), rank * n + n)


def r_all_be(f, k, buf, n, st):
    f.Seek(rank * n, MPI.SEEK_SET)
    f.Read_all_begin([buf, n, k.mpi])
    f.Read_all_end([buf, n, k.mpi], st)
    expect("Read_all_end: position after", f.Get_position(), rank * n + n)


def w_ordered_be(f, k, buf, n, st):
    f.Seek_shared(0, MPI.SEEK_SET)
    f.Write_ordered_begin([buf, n, k.mpi])
    f.Write_ordered_end([buf, n, k.mpi], st)
    expect("Write_ordered_end: shared position after", f.Get_position_shared(), size * n)


def r_ordered_be(f, k, buf, n, st):
    f.Seek_shared(0, MPI.SEEK_SET)
    f.Read_ordered_begin([buf, n, k.mpi])
    f.Read_ordered_end([buf, n, k.mpi], st)


def w_i_at(f, k, buf, n, st):
    # two requests outstanding, the halves in reverse order
    h = n // 2
    reqs = [f.Iwrite_at(rank * n + h, [buf[h * k.ext:], n - h, k.mpi]), f.Iwrite_at(rank * n, [buf, h, k.mpi])]
    sts = [MPI.Status(), MPI.Status()]
    MPI.Request.Waitall(reqs, sts)
    expect("Iwrite_at halves: counts", [s.Get_count(k.mpi) for s in sts], [n - h, h])
    return True                           # the counts checked


def r_i_at(f, k, buf, n, st):
    h = n // 2
    reqs = [f.Iread_at(rank * n, [buf, h, k.mpi]), f.Iread_at(rank * n + h, [buf[h * k.ext:], n - h, k.mpi])]
    s1, s2 = MPI.Status(), MPI.Status()
    i = MPI.Request.Waitany(reqs, s1)     # Waitany, then Test of the other
    while not reqs[1 - i].Test(s2):
        pass
    expect("Iread_at halves: counts", sorted([s1.Get_count(k.mpi), s2.Get_count(k.mpi)]), sorted([h, n - h]))
    return True


def own_part(what, f, n, st, call):
    """a nonblocking call at this rank's part through the individual pointer"""
    f.Seek(rank * n, MPI.SEEK_SET)
    call().Wait(st)
    expect(what + ": position after", f.Get_position(), rank * n + n)


def in_turns(what, f, n, st, call):
    """a nonblocking call through the shared pointer, the ranks in turn"""
    f.Seek_shared(0, MPI.SEEK_SET)
    turns(lambda: call().Wait(st))
    expect(what + ": shared position after", f.Get_position_shared(), size * n)


def w_i_pos(f, k, buf, n, st):
    own_part("Iwrite", f, n, st, lambda: f.Iwrite([buf, n, k.mpi]))


def r_i_pos(f, k, buf, n, st):
    own_part("Iread", f, n, st, lambda: f.Iread([buf, n, k.mpi]))


def w_i_shared(f, k, buf, n, st):
    in_turns("Iwrite_shared", f, n, st, lambda: f.Iwrite_shared([buf, n, k.mpi]))


def r_i_shared(f, k, buf, n, st):
    in_turns("Iread_shared", f, n, st, lambda: f.Iread_shared([buf, n, k.mpi]))


def w_i_at_all(f, k, buf, n, st):
    f.Iwrite_at_all(rank * n, [buf, n, k.mpi]).Wait(st)


def r_i_at_all(f, k, buf, n, st):
    f.Iread_at_all(rank * n, [buf, n, k.mpi]).Wait(st)


def w_i_all(f, k, buf, n, st):
    own_part("Iwrite_all", f, n, st, lambda: f.Iwrite_all([buf, n, k.mpi]))


def r_i_all(f, k, buf, n, st):
    own_part("Iread_all", f, n, st, lambda: f.Iread_all([buf, n, k.mpi]))


def w_atomic(f, k, buf, n, st):
    f.Set_atomicity(True)
    expect("Get_atomicity after Set_atomicity(True)", f.Get_atomicity(), True)
    f.Write_at(rank * n, [buf, n, k.mpi], st)


def r_atomic(f, k, buf, n, st):
    # atomic mode: visible to the others after the barrier, with no sync
    f.Read_at(rank * n, [buf, n, k.mpi], st)
    f.Set_atomicity(False)
    expect("atomicity property after Set_atomicity(False)", f.atomicity, False)


FAMILIES = [
    ("at", w_at, r_at), ("pos", w_pos, r_pos), ("shared", w_shared, r_shared),
    ("ordered", w_ordered, r_ordered), ("at_all", w_at_all, r_at_all), ("all", w_all, r_all),
    ("at_all_begin_end", w_at_all_be, r_at_all_be), ("all_begin_end", w_all_be, r_all_be),
    ("ordered_begin_end", w_ordered_be, r_ordered_be),
    ("iat", w_i_at, r_i_at), ("ipos", w_i_pos, r_i_pos), ("ishared", w_i_shared, r_i_shared),
    ("iat_all", w_i_at_all, r_i_at_all), ("iall", w_i_all, r_i_all),
    ("atomic", w_atomic, r_atomic),
]
NONBLOCKING = [fam for fam in FAMILIES if fam[0].startswith("i")]
CASE = [0]                                # the running case number (r_pos reads it)


def region_bytes(k, n=N):
    return size * n * k.ext * k.itemsize


def one_case(f, case, fam, k, disp, synced=True):
    """fam's write and read of kind k in the region at byte disp; returns
    this region's expected image (every rank's data, the holes 0)"""
    name, wfn, rfn = fam
    what = "%s/%s" % (name, k.name)
    CASE[0] = case
    n = N
    f.Set_view(disp, k.mpi, k.mpi)
    # set_view resets both pointers (MPI 3.1, 13.3)
    expect("%s: Get_position after Set_view" % what, f.Get_position(), 0)
    expect("%s: Get_position_shared after Set_view" % what, f.Get_position_shared(), 0)
    comm.Barrier()                        # every rank looked before the pointer moves
    wbuf = k.mem(k.values(case, rank, n), n, k.poison)      # poison in the holes: must not reach the file
    st = MPI.Status()
    if not wfn(f, k, wbuf, n, st):
        count_ok(what + " write", st, k, n)
    if synced:
        f.Sync()
        comm.Barrier()
        f.Sync()
    else:
        comm.Barrier()
    rbuf = np.full((n + 1) * k.ext, k.sentinel, k.base)
    st = MPI.Status()
    if not rfn(f, k, rbuf, n, st):
        count_ok(what + " read", st, k, n)
    want = np.concatenate([k.mem(k.values(case, rank, n), n, k.sentinel), np.full(k.ext, k.sentinel, k.base)])
    same("%s: read back (the element after and the holes untouched)" % what, rbuf, want)
    # the next rank's part, written by it
    nxt = (rank + 1) % size
    other = np.full(n * k.ext, k.sentinel, k.base)
    f.Read_at(nxt * n, [other, n, k.mpi])
    same("%s: rank %d's part" % (what, nxt), other, k.mem(k.values(case, nxt, n), n, k.sentinel))
    comm.Barrier()
    return np.concatenate([k.mem(k.values(case, r, n), n, 0) for r in range(size)]).view(np.uint8)


def io_cases(name, families, kinds, amode=MPI.MODE_CREATE | MPI.MODE_RDWR, verify=True):
    f = MPI.File.Open(comm, name, amode)
    expect("%s: Get_amode" % name, f.Get_amode(), amode)
    image, disp, case = [], 0, 0
    for fam in families:
        for k in kinds:
            image.append(one_case(f, case, fam, k, disp, synced=fam[0] != "atomic"))
            disp += region_bytes(k)
            case += 1
    f.Close()
    comm.Barrier()
    want = np.concatenate(image)
    if verify and rank == 0:
        same("%s: the whole file" % name, whole(name, want.size), want)
    return case


# --- .view: file views of each type constructor ----------------------------
def view_types(comb, et):
    """(filetype 1, filetype 2): 1 takes slots 0, 2, 4, 6 of 7, 2 the
    others (as mpi4py's strided view test); etype et"""
    es = et.Get_size()
    i1, i2 = [0, 2, 4, 6], [1, 3, 5]
    if comb == "vector":
        t1 = et.Create_vector(4, 1, 2)
    elif comb == "hvector":
        t1 = et.Create_hvector(4, 1, 2 * es)
    elif comb == "indexed":
        t1 = et.Create_indexed([1] * 4, i1)
    elif comb == "hindexed":
        t1 = et.Create_hindexed([1] * 4, [es * i for i in i1])
    elif comb == "indexed_block":
        t1 = et.Create_indexed_block(1, i1)
    elif comb == "hindexed_block":
        t1 = et.Create_hindexed_block(1, [es * i for i in i1])
    elif comb == "struct":
        t1 = MPI.Datatype.Create_struct([1] * 4, [es * i for i in i1], [et] * 4)
    t1.Commit()
    if comb == "vector":
        b2 = et.Create_indexed([1] * 3, i2)
    elif comb == "hvector":
        b2 = et.Create_hindexed([1] * 3, [es * i for i in i2])
    elif comb == "struct":
        b2 = MPI.Datatype.Create_struct([1] * 3, [es * i for i in i2], [et] * 3)
    elif comb in ("indexed", "indexed_block"):
        b2 = et.Create_indexed_block(1, i2)
    else:
        b2 = et.Create_hindexed_block(1, [es * i for i in i2])
    t2 = b2.Create_resized(0, t1.Get_extent()[1]).Commit()
    b2.Free()
    return t1, t2


def view_values(case, npt):
    """the value of rank r's element j in round i (bytes: modulo 251)"""
    if npt == np.uint8:
        return lambda r, i, j: (case * 10000 + 100 * (r + 1) + 10 * i + j) % 251 + 1
    return lambda r, i, j: case * 10000 + 100 * (r + 1) + 10 * i + j + 1


def view_case(f, case, comb, et, npt, disp):
    """returns the region's expected image (numpy, type npt)"""
    what = "view %s/%s" % (comb, et.Get_name() or "?")
    rounds = 3
    vals = view_values(case, npt)
    if comb in ("vector", "hvector", "indexed", "hindexed", "indexed_block", "hindexed_block", "struct"):
        t1, t2 = view_types(comb, et)
        f.Set_view(disp, et, t1)
        for i in range(rounds):
            f.Write_ordered(np.array([vals(rank, i, j) for j in (0, 2, 4, 6)], npt))
        expect("%s: shared position after" % what, f.Get_position_shared(), rounds * size * 4)
        comm.Barrier()                    # every rank looked before Set_view resets it
        f.Set_view(disp, et, t2)
        expect("%s: shared position after Set_view" % what, f.Get_position_shared(), 0)
        comm.Barrier()
        for i in range(rounds):
            f.Write_ordered(np.array([vals(rank, i, j) for j in (1, 3, 5)], npt))
        f.Sync()
        comm.Barrier()
        f.Sync()
        for t, js in ((t1, (0, 2, 4, 6)), (t2, (1, 3, 5))):
            f.Set_view(disp, et, t)
            for i in range(rounds):
                got = np.zeros(len(js), npt)
                f.Read_ordered(got)
                same("%s: Read_ordered round %d" % (what, i), got, [vals(rank, i, j) for j in js])
        # Get_view of a derived filetype: a datatype of the same layout
        d, e, ft, rep = f.Get_view()
        expect("%s: Get_view disp, rep" % what, (d, rep), (disp, "native"))
        expect("%s: Get_view filetype size, extent" % what, (ft.Get_size(), ft.Get_extent()),
               (t2.Get_size(), t2.Get_extent()))
        if not ft.is_predefined:
            ft.Free()
        t1.Free()
        t2.Free()
        img = np.array([vals(r, i, j) for i in range(rounds) for r in range(size) for j in range(7)], npt)
    else:
        # a block of 7 x 5 elements per rank, each round a new layer
        n = 7 * 5
        if comb == "named":
            t = et
        elif comb == "dup":
            t = et.Dup().Commit()
        elif comb == "subarray":
            t = et.Create_subarray([size * 7, 5], [7, 5], [rank * 7, 0]).Commit()
        elif comb in ("darray_block", "darray_cyclic"):
            dist = MPI.DISTRIBUTE_BLOCK if comb == "darray_block" else MPI.DISTRIBUTE_CYCLIC
            darg = MPI.DISTRIBUTE_DFLT_DARG if comb == "darray_block" else 1
            t = et.Create_darray(size, rank, [size * 7, 5], [dist, MPI.DISTRIBUTE_NONE],
                                 [darg, MPI.DISTRIBUTE_DFLT_DARG], [size, 1]).Commit()
        if comb in ("named", "dup"):
            # an etype view: the ranks' blocks by ordered writes
            f.Set_view(disp, et, t)
            for i in range(rounds):
                f.Write_ordered(np.array([vals(rank, i, j) for j in range(n)], npt))
        else:
            f.Set_view(disp, et, t)
            for i in range(rounds):
                f.Write_all(np.array([vals(rank, i, j) for j in range(n)], npt))
            expect("%s: position after" % what, f.Get_position(), rounds * n)
        f.Sync()
        comm.Barrier()
        f.Sync()
        f.Set_view(disp, et, t)
        for i in range(rounds):
            got = np.zeros(n, npt)
            if comb in ("named", "dup"):
                f.Read_ordered(got)
            else:
                f.Read_all(got)
            same("%s: read back round %d" % (what, i), got, [vals(rank, i, j) for j in range(n)])
        if t != et:
            t.Free()
        # the file in order: rows of 5, the ranks' rows by the layout
        # each round: rows of 5, rank by rank (ordered writes, subarray,
        # darray block) or dealt cyclically (darray cyclic)
        rows = []
        for i in range(rounds):
            for row in range(size * 7):
                r, lr = (row % size, row // size) if comb == "darray_cyclic" else (row // 7, row % 7)
                rows.append([vals(r, i, lr * 5 + c) for c in range(5)])
        img = np.array(rows, npt)
    # a plain view: every element in file order
    f.Set_view(disp, et, et)
    got = np.zeros(img.size, npt)
    f.Read_all(got)
    same("%s: the region through a plain view" % what, got, img)
    comm.Barrier()
    return img


VIEWS = ["named", "dup", "contiguous", "vector", "hvector", "indexed", "hindexed", "indexed_block",
         "hindexed_block", "struct", "subarray", "darray_block", "darray_cyclic"]


def views(name):
    f = MPI.File.Open(comm, name, MPI.MODE_CREATE | MPI.MODE_RDWR)
    image, disp, case = [], 0, 0
    plan = [(c, MPI.INT, np.int32) for c in VIEWS] + \
           [("vector", MPI.DOUBLE, np.float64), ("subarray", MPI.DOUBLE, np.float64),
            ("vector", MPI.BYTE, np.uint8), ("darray_cyclic", MPI.BYTE, np.uint8)]
    for comb, et, npt in plan + [("external32", None, None)]:
        if comb == "contiguous":
            img = contiguous_case(f, case, et, npt, disp)
        elif comb == "external32":
            img = external32_case(f, case, disp)
        else:
            img = view_case(f, case, comb, et, npt, disp)
        img = img.ravel().view(np.uint8)
        image.append(img)
        disp += img.size
        case += 1
    f.Close()
    comm.Barrier()
    want = np.concatenate(image)
    if rank == 0:
        same("%s: the whole file" % name, whole(name, want.size), want)
    return case


def external32_case(f, case, disp):
    """the "external32" data representation: ints then doubles, big-endian
    in the file (read back through the view, and as raw bytes)"""
    what = "view external32"
    n = 6
    ints = np.arange(n, dtype=np.int32) + case * 1000 + rank * 100 - 7
    dbls = (np.arange(n, dtype=np.float64) + rank * 10) * -2.5
    f.Set_view(disp, MPI.INT, MPI.INT, "external32")
    expect("%s: Get_view's datarep" % what, f.Get_view()[3], "external32")
    expect("%s: Get_type_extent(INT, DOUBLE)" % what,
           (f.Get_type_extent(MPI.INT), f.Get_type_extent(MPI.DOUBLE)), (4, 8))
    f.Write_at_all(rank * n, ints)
    f.Set_view(disp + size * n * 4, MPI.DOUBLE, MPI.DOUBLE, "external32")
    f.Write_at_all(rank * n, dbls)
    f.Sync()
    comm.Barrier()
    f.Sync()
    got = np.zeros(n, np.float64)
    f.Read_at_all(rank * n, got)
    same("%s: doubles read back" % what, got, dbls)
    f.Set_view(disp, MPI.INT, MPI.INT, "external32")
    goti = np.zeros(n, np.int32)
    f.Read_at(rank * n, goti)
    same("%s: ints read back" % what, goti, ints)
    img = np.concatenate(
        [(np.arange(n, dtype=np.int32) + case * 1000 + r * 100 - 7).astype(">i4").view(np.uint8)
         for r in range(size)] +
        [((np.arange(n, dtype=np.float64) + r * 10) * -2.5).astype(">f8").view(np.uint8) for r in range(size)])
    f.Set_view(disp, MPI.BYTE, MPI.BYTE, "native")
    raw = np.zeros(img.size, np.uint8)
    f.Read_all(raw)
    same("%s: the region's raw bytes (big-endian)" % what, raw, img)
    comm.Barrier()
    return img


def contiguous_case(f, case, et, npt, disp):
    """a contiguous filetype of 35 elements, each rank's view displaced to
    its own tile of 35 * size: rounds fill the rank's tiles"""
    what = "view contiguous"
    n, rounds = 35, 3
    vals = view_values(case, npt)
    t = et.Create_contiguous(n).Commit()
    tt = t.Create_resized(0, n * size * et.Get_size()).Commit()
    es = et.Get_size()
    f.Set_view(disp + rank * n * es, et, tt)
    for i in range(rounds):
        f.Write_all(np.array([vals(rank, i, j) for j in range(n)], npt))
    expect("%s: position after" % what, f.Get_position(), rounds * n)
    f.Sync()
    comm.Barrier()
    f.Sync()
    f.Seek(0)
    for i in range(rounds):
        got = np.zeros(n, npt)
        f.Read_all(got)
        same("%s: read back round %d" % (what, i), got, [vals(rank, i, j) for j in range(n)])
    tt.Free()
    t.Free()
    img = np.array([vals(r, i, j) for i in range(rounds) for r in range(size) for j in range(n)], npt)
    f.Set_view(disp, et, et)
    got = np.zeros(img.size, npt)
    f.Read_all(got)
    same("%s: the region through a plain view" % what, got, img)
    comm.Barrier()
    return img


# --- .file: the file-level calls (mpi4py's test_file.py) --------------------
def file_calls(name, fcomm):
    """on fcomm (COMM_WORLD or COMM_SELF): returns the file's expected bytes"""
    me = fcomm.Get_rank()
    # a new file: MODE_EXCL must succeed
    if me == 0:
        try:
            MPI.File.Delete(name)
        except MPI.Exception as e:
            expect("Delete before: class", e.Get_error_class(), MPI.ERR_NO_SUCH_FILE)
    fcomm.Barrier()
    amode = MPI.MODE_CREATE | MPI.MODE_EXCL | MPI.MODE_RDWR
    f = MPI.File.Open(fcomm, name, amode, MPI.INFO_NULL)
    expect("Get_amode", f.Get_amode(), amode)
    expect("amode property", f.amode, amode)
    g, cg = f.Get_group(), fcomm.Get_group()
    expect("Get_group == the communicator's", MPI.Group.Compare(g, cg), MPI.IDENT)
    g.Free()
    g = f.group
    expect("group property", MPI.Group.Compare(g, cg), MPI.IDENT)
    g.Free()
    cg.Free()
    # (a barrier after each look: the collective calls that change the
    # size or the shared pointer need not wait for the other ranks' looks)
    expect("Get_size of a new file", f.Get_size(), 0)
    expect("size property", f.size, 0)
    fcomm.Barrier()
    f.Set_size(100)
    expect("Get_size after Set_size(100)", f.Get_size(), 100)
    fcomm.Barrier()
    f.Set_size(37)
    expect("Get_size after Set_size(37) (truncate)", f.size, 37)
    fcomm.Barrier()
    f.Set_size(0)
    expect("Get_size after Set_size(0)", f.Get_size(), 0)
    if ROMIO or fcomm.Get_size() == 1:
        for p, want in ((1, 1), (100, 100), (10, 100), (200, 200)):
            fcomm.Barrier()
            f.Preallocate(p)
            expect("Get_size after Preallocate(%d)" % p, f.Get_size(), want)
    else:
        # OMPIO (the control) on more than one rank: its
        # MPI_File_preallocate lets each rank decide from the file's size,
        # which rank 0 is changing in the same call, whether to return
        # early or to take the call's barrier; the ranks disagree and a
        # later collective hangs (4 ranks: 3 of 3 runs, 2026-11-28). The
        # control preallocates on COMM_SELF only (below) and sets this
        # file's size instead, to the same 200 bytes
        fcomm.Barrier()
        f.Set_size(200)
    # Open MPI 4.1 answers MPI_File_get_info from its own copy of the
    # hints (OMPIO and ROMIO alike: the driver's keys are not there, see
    # docs/CONFORMANCE.md) and keeps none of these: the calls and the Info
    # objects are checked, not their keys
    info = f.Get_info()
    expect("Get_info: an Info", isinstance(info, MPI.Info) and info != MPI.INFO_NULL, True)
    f.Set_info(info)
    info.Free()
    hint = MPI.Info.Create()
    hint.Set("access_style", "read_mostly")
    f.Set_info(hint)
    hint.Free()
    info = f.info
    expect("info property: an Info", isinstance(info, MPI.Info), True)
    info.Free()
    expect("Get_atomicity of a new file", f.Get_atomicity(), False)
    for a in [True, False] * 4:
        f.Set_atomicity(a)
        expect("Get_atomicity after Set_atomicity(%s)" % a, f.Get_atomicity(), a)
    f.Sync()
    # the default view
    d, e, ft, rep = f.Get_view()
    expect("Get_view default", (d, e == MPI.BYTE, ft == MPI.BYTE, rep), (0, True, True, "native"))
    for off in range(10):
        expect("Get_byte_offset(%d), default view" % off, f.Get_byte_offset(off), off)
    # individual and shared pointers on a 200-byte file
    f.Seek(0, MPI.SEEK_END)
    expect("Seek(0, SEEK_END)", f.Get_position(), 200)
    f.Seek(-10, MPI.SEEK_CUR)
    expect("Seek(-10, SEEK_CUR)", f.Get_position(), 190)
    f.Seek(3, MPI.SEEK_SET)
    expect("Seek(3, SEEK_SET)", f.Get_position(), 3)
    fcomm.Barrier()
    f.Seek_shared(0, MPI.SEEK_END)
    expect("Seek_shared(0, SEEK_END)", f.Get_position_shared(), 200)
    fcomm.Barrier()
    f.Seek_shared(-10, MPI.SEEK_CUR)
    expect("Seek_shared(-10, SEEK_CUR)", f.Get_position_shared(), 190)
    fcomm.Barrier()
    f.Seek_shared(0, MPI.SEEK_SET)
    expect("Seek_shared(0, SEEK_SET)", f.Get_position_shared(), 0)
    # type extents in the file (native: the memory extents)
    for k in KINDS:
        expect("Get_type_extent(%s)" % k.name, f.Get_type_extent(k.mpi), k.ext * k.itemsize)
    # Set_view / Get_view of predefined types at many displacements (test_file.py)
    for disp in (0, 1, 7, 64, 99):
        for t in (MPI.SHORT, MPI.INT, MPI.LONG, MPI.FLOAT, MPI.DOUBLE):
            f.Set_view(disp, t, t, "native", MPI.INFO_NULL)
            d, e, ft, rep = f.Get_view()
            expect("Get_view after Set_view(%d, %s)" % (disp, t.Get_name()),
                   (d, e == t, ft == t, rep), (disp, True, True, "native"))
    # Get_byte_offset through a strided view: etype INT, 2 of every 3 ints
    ft = MPI.INT.Create_indexed([1, 1], [0, 2]).Create_resized(0, 12).Commit()
    f.Set_view(5, MPI.INT, ft)
    for off in range(8):
        expect("Get_byte_offset(%d), strided view" % off, f.Get_byte_offset(off), 5 + (off // 2) * 12 + (off % 2) * 8)
    f.Seek(3)
    expect("Get_position in etypes, strided view", f.Get_position(), 3)
    ft.Free()
    f.Set_view(0, MPI.BYTE, MPI.BYTE)
    # error handlers: a file's is FILE_NULL's, ERRORS_RETURN
    eh = f.Get_errhandler()
    expect("Get_errhandler", eh == MPI.ERRORS_RETURN, True)
    eh.Free()
    f.Set_errhandler(MPI.ERRORS_ARE_FATAL)
    eh = f.Get_errhandler()
    expect("Get_errhandler after Set_errhandler(ERRORS_ARE_FATAL)", eh == MPI.ERRORS_ARE_FATAL, True)
    eh.Free()
    f.Set_errhandler(MPI.ERRORS_RETURN)
    f.Call_errhandler(MPI.ERR_OTHER)          # ERRORS_RETURN: returns
    # the Fortran handle
    expect("File.f2py(py2f())", MPI.File.f2py(f.py2f()) == f, True)
    # the contents: each rank 8 bytes at 8*rank, past the preallocated 200
    data = np.arange(8, dtype=np.uint8) + 16 * me + 1
    f.Write_at_all(200 + 8 * me, data)
    f.Sync()
    fcomm.Barrier()
    expect("Get_size after the writes", f.Get_size(), 200 + 8 * fcomm.Get_size())
    f.Close()
    expect("a closed File is FILE_NULL", f == MPI.FILE_NULL, True)
    want = np.zeros(200 + 8 * fcomm.Get_size(), np.uint8)
    for r in range(fcomm.Get_size()):
        want[200 + 8 * r:208 + 8 * r] = np.arange(8, dtype=np.uint8) + 16 * r + 1
    return want


def filelevel(name):
    want = file_calls(name, comm)
    comm.Barrier()
    if rank == 0:
        same("%s: the whole file" % name, whole(name, want.size), want)
    # COMM_SELF: one file per rank, then Delete; opening it again fails
    mine = "%s.self%d" % (name.rsplit(".", 1)[0], rank)
    want = file_calls(mine, MPI.COMM_SELF)
    same("%s: the whole file" % mine, whole(mine, want.size), want)
    MPI.File.Delete(mine, MPI.INFO_NULL)
    raises("Open of a deleted file", MPI.ERR_NO_SUCH_FILE, MPI.File.Open, MPI.COMM_SELF, mine, MPI.MODE_RDONLY)
    FILE_NULL_errhandler()
    return 2                              # files: COMM_WORLD's, COMM_SELF's


def FILE_NULL_errhandler():
    # FILE_NULL's handler: the default of files opened after (test_file.py)
    eh0 = MPI.FILE_NULL.Get_errhandler()
    expect("FILE_NULL's errhandler", eh0 == MPI.ERRORS_RETURN, True)
    MPI.FILE_NULL.Set_errhandler(MPI.ERRORS_ARE_FATAL)
    eh = MPI.FILE_NULL.Get_errhandler()
    expect("FILE_NULL's errhandler after Set_errhandler", eh == MPI.ERRORS_ARE_FATAL, True)
    eh.Free()
    MPI.FILE_NULL.Set_errhandler(eh0)
    eh0.Free()


# --- delete on close, and mpi4py's own way: a mkstemp file in TMPDIR --------
def gone(name):
    """after a DELETE_ON_CLOSE close: no such file, on every rank"""
    raises("%s: Open after a DELETE_ON_CLOSE close" % name, MPI.ERR_NO_SUCH_FILE,
           MPI.File.Open, comm, name, MPI.MODE_RDONLY)


def delete_on_close(name):
    amode = MPI.MODE_RDWR | MPI.MODE_CREATE | MPI.MODE_DELETE_ON_CLOSE | MPI.MODE_UNIQUE_OPEN
    n = io_cases(name, NONBLOCKING + FAMILIES[:1], KINDS[1:3], amode, verify=False)
    comm.Barrier()
    gone(name)
    return n


def tmpdir_file():
    """rank 0 makes the file with tempfile.mkstemp in TMPDIR, every rank
    opens it RDWR|CREATE|DELETE_ON_CLOSE|UNIQUE_OPEN (mpi4py's test_io
    setUp); the nonblocking families and the collective ones on it"""
    fname = None
    if rank == 0:
        fd, fname = tempfile.mkstemp(prefix="mpi4py-")
        os.close(fd)
    fname = comm.bcast(fname, 0)
    amode = MPI.MODE_RDWR | MPI.MODE_CREATE | MPI.MODE_DELETE_ON_CLOSE | MPI.MODE_UNIQUE_OPEN
    fams = NONBLOCKING + [fam for fam in FAMILIES if fam[0] in ("at", "all", "ordered")]
    n = io_cases(fname, fams, KINDS[:3], amode, verify=False)
    comm.Barrier()
    expect("%s: gone after the close (os.path.exists)" % fname, os.path.exists(fname), False)
    gone(fname)
    return n


# --- errors ---------------------------------------------------------------
def error_cases(name, n0):
    missing = name + ".missing"
    raises("Open of a missing file", MPI.ERR_NO_SUCH_FILE, MPI.File.Open, comm, missing, MPI.MODE_RDONLY)
    raises("Delete of a missing file", MPI.ERR_NO_SUCH_FILE, MPI.File.Delete, missing)
    raises("Open RDONLY|CREATE", MPI.ERR_AMODE, MPI.File.Open, comm, name, MPI.MODE_RDONLY | MPI.MODE_CREATE)
    raises("Open RDONLY|RDWR", MPI.ERR_AMODE, MPI.File.Open, comm, name, MPI.MODE_RDONLY | MPI.MODE_RDWR)
    raises("Open RDWR|SEQUENTIAL", MPI.ERR_AMODE, MPI.File.Open, comm, name,
           MPI.MODE_RDWR | MPI.MODE_SEQUENTIAL | MPI.MODE_CREATE)
    # a data representation registered twice: MPI_ERR_DUP_DATAREP (mpi4py's
    # TestDatarep, which it skips on Open MPI as a whole). ROMIO 3.2.1
    # registers it; OMPIO refuses MPI_Register_datarep (MPI_ERR_OTHER)
    extent = lambda t: t.extent            # noqa: E731
    if ROMIO:
        MPI.Register_datarep("ddio-t-dummy", None, None, extent)
        raises("Register_datarep twice", MPI.ERR_DUP_DATAREP, MPI.Register_datarep, "ddio-t-dummy",
               None, None, extent)
    else:
        raises("Register_datarep (OMPIO)", MPI.ERR_OTHER, MPI.Register_datarep, "ddio-t-dummy",
               None, None, extent)
    f = MPI.File.Open(comm, name, MPI.MODE_CREATE | MPI.MODE_WRONLY)
    mine = np.full(4, rank + 1, np.uint8)
    f.Write_at_all(rank * 4, mine)
    b = np.zeros(4, np.uint8)
    raises("Read_at of a WRONLY file", MPI.ERR_ACCESS, f.Read_at, 0, b)
    raises("Iread_at of a WRONLY file", MPI.ERR_ACCESS, f.Iread_at, 0, b)
    if ROMIO:
        # a split collective's end with no begin, and a second begin: ROMIO
        # 3.2.1 answers MPI_ERR_IO; OMPIO (the control) crashes in both
        # (mca_io_ompio_file_read_all_end waits on a NULL request)
        raises("Read_all_end with no begin", MPI.ERR_IO, f.Read_all_end, b)
        f.Seek(rank * 4)
        f.Write_all_begin(mine)
        raises("a second Write_all_begin", MPI.ERR_IO, f.Write_all_begin, b)
        f.Write_all_end(mine)
    raises("Set_view with an unknown datarep", MPI.ERR_UNSUPPORTED_DATAREP, f.Set_view, 0, MPI.BYTE,
           MPI.BYTE, "ddio-no-such-rep")
    if not ROMIO:
        # "internal": ROMIO 3.2.1 takes it as native; OMPIO refuses it
        raises("Set_view with datarep internal (OMPIO)", MPI.ERR_UNSUPPORTED_DATAREP, f.Set_view, 0,
               MPI.BYTE, MPI.BYTE, "internal")
    else:
        f.Set_view(0, MPI.BYTE, MPI.BYTE, "internal")
        expect("Set_view internal: Get_view's datarep (ROMIO: native)", f.Get_view()[3], "native")
    f.Close()
    comm.Barrier()
    raises("Open CREATE|EXCL of an existing file", MPI.ERR_FILE_EXISTS, MPI.File.Open, comm, name,
           MPI.MODE_CREATE | MPI.MODE_EXCL | MPI.MODE_RDWR)
    f = MPI.File.Open(comm, name, MPI.MODE_RDONLY)
    raises("Write_at to a RDONLY file", MPI.ERR_READ_ONLY, f.Write_at, 0, b)
    raises("Iwrite_at to a RDONLY file", MPI.ERR_READ_ONLY, f.Iwrite_at, 0, b)
    if ROMIO or size <= 2:
        # OMPIO (the control) on 4 ranks: its two-phase aggregators' pwritev
        # fails (EBADF, printed) and the call returns success on every rank
        raises("Write_at_all to a RDONLY file", MPI.ERR_READ_ONLY, f.Write_at_all, 0, b)
    raises("Iwrite_all to a RDONLY file", MPI.ERR_READ_ONLY, f.Iwrite_all, b)
    # Set_size of a read-only file: ROMIO 3.2.1 MPI_ERR_READ_ONLY, OMPIO
    # MPI_ERR_OTHER (its fs set_size fails: "error in fs->set_size")
    raises("Set_size of a RDONLY file", MPI.ERR_READ_ONLY if ROMIO else MPI.ERR_OTHER, f.Set_size, 10)
    # a negative position: ROMIO 3.2.1 MPI_ERR_ARG, OMPIO MPI_ERR_OTHER
    raises("Seek to a negative offset", MPI.ERR_ARG if ROMIO else MPI.ERR_OTHER, f.Seek, -5, MPI.SEEK_SET)
    # Preallocate growing a read-only file: OMPIO and ddio refuse it with
    # MPI_ERR_READ_ONLY; ROMIO 3.2.1's MPI layer does not check the amode
    # and its own drivers (ufs:) fail their write-back (EBADF: MPI_ERR_IO).
    # ROMIO 3.2.1 (mpi-io/prealloc.c) calls the driver on rank 0 alone and
    # returns its answer there only: the other ranks succeed
    if ROMIO and rank > 0:
        f.Preallocate(100)
    else:
        raises("Preallocate of a RDONLY file", MPI.ERR_IO if base.startswith("ufs:") else MPI.ERR_READ_ONLY,
               f.Preallocate, 100)
    got = np.zeros(4 * size, np.uint8)
    f.Read_at_all(0, got)
    same("errors: the file written before", got, np.repeat(np.arange(1, size + 1, dtype=np.uint8), 4))
    expect("errors: the file's size (nothing grew it)", f.Get_size(), 4 * size)
    f.Close()
    raises("Get_size of a closed file", MPI.ERR_FILE, f.Get_size)
    comm.Barrier()
    if rank == 0:
        MPI.File.Delete(name)
    comm.Barrier()
    raises("Open of the deleted file", MPI.ERR_NO_SUCH_FILE, MPI.File.Open, comm, name, MPI.MODE_RDONLY)
    return counts["errors"] - n0


def errors(name):
    n0 = counts["errors"]
    return error_cases(name, n0)


plain = ":" not in base.split("/")[0]         # no ddio: / ufs: prefix
sections = [("errors", lambda: errors(base + ".err"))]
if ONLY != "errors":
    sections = [("io", lambda: io_cases(base + ".io", FAMILIES, KINDS)),
                ("view", lambda: views(base + ".view")),
                ("file", lambda: filelevel(base + ".file")),
                ("delete_on_close", lambda: delete_on_close(base + ".doc"))] + \
               ([("tmpdir", tmpdir_file)] if plain else []) + sections
summary = []
for sname, fn in sections:
    n0 = len(bad)
    try:
        n = fn()
    except MPI.Exception as e:
        fail("%s: MPI error %s (class %d)" % (sname, e.Get_error_string(), e.Get_error_class()))
        n = None
    summary.append("%s%s%s" % (sname, "" if n is None else " %d" % n, "" if len(bad) == n0 else " FAILED"))
for b in bad:
    print("t_mpi4py_api rank %d: %s" % (rank, b), file=sys.stderr, flush=True)
nbad = comm.allreduce(len(bad))
nchecks = comm.allreduce(counts["checks"])
if rank == 0:
    print("t_mpi4py_api %s: %d ranks, %s; %d checks, %s" % (
        base, size, "ROMIO 3.2.1" if ROMIO else "OMPIO", nchecks, "OK" if nbad == 0 else "%d failures" % nbad))
    print("  cases: " + ", ".join(summary), flush=True)
sys.exit(1 if nbad else 0)
