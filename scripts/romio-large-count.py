#!/usr/bin/env python3
"""Large counts in ROMIO's MPI-4 `_c` I/O routines.

MPICH 4.0.2's ROMIO defines every `MPI_File_*_c` routine as its int-count
twin behind `assert(count <= INT_MAX)`, so a count of 2^31 or more aborts the
program, on every file system. This rewrites those routines, in the ROMIO
tree given, so that such a count becomes one element of a contiguous type of
`count` elements (MPI_Type_contiguous_c): the same bytes, the same typemap,
and ROMIO's int-count internals see count 1. The status still counts bytes,
so MPI_Get_count on the caller's type is right.

The type is freed when the call returns; for the nonblocking routines
(MPI_File_i*) it lives until MPI_File_close of the file (MPI requires every
request on a file to be complete before the file is closed).
adio/ad_ddio/ad_ddio_lcount.c holds the helpers; mpioimpl.h gets their
prototypes and MPI_File_close calls the release.

Idempotent: each patched file's pristine text is kept beside it as
FILE.ddio-orig and the result is regenerated from it, and a file is written
only when its text changes (make then rebuilds only what changed). A ROMIO
without such routines (Open MPI's ROMIO 3.2.1) is left alone.
Usage: romio-large-count.py ROMIO_DIR
"""
import os
import re
import sys

SIG = re.compile(r'^int MPI_File_(\w+)_c\(')
ASSERT = 'assert(count <= INT_MAX);'
RETURN = re.compile(r'\breturn ([^;]+);')
PROTOS = """
/* large counts in the _c routines (ddio: scripts/romio-large-count.py) */
MPI_Datatype MPIOI_Large_count_begin(MPI_File fh, MPI_Count * count,
                                     MPI_Datatype * datatype, int until_close);
void MPIOI_Large_count_end(MPI_Datatype type);
void MPIOI_Large_count_release(MPI_File fh);
"""
GUARD_END = '#endif /* MPIOIMPL_H_INCLUDED */'
CLOSE_AT = '    ROMIO_THREAD_CS_ENTER();\n\n    adio_fh = MPIO_File_resolve(*fh);'


def pristine(path):
    orig = path + '.ddio-orig'
    if os.path.exists(orig):
        with open(orig) as f:
            return f.read()
    with open(path) as f:
        return f.read()


def save(path, text, original):
    with open(path) as f:
        if f.read() == text:
            return False
    orig = path + '.ddio-orig'
    if not os.path.exists(orig):
        with open(orig, 'w') as f:
            f.write(original)
    with open(path, 'w') as f:
        f.write(text)
    return True


def patch_function(lines, name):
    """lines: one _c function, signature to closing brace."""
    until_close = 1 if name.startswith('i') else 0
    out = []
    for line in lines:
        if line.strip() == ASSERT:
            indent = line[:len(line) - len(line.lstrip())]
            call = f'MPIOI_Large_count_begin(fh, &count, &datatype, {until_close});'
            out.append(indent + ('(void) ' if until_close else 'MPI_Datatype ddio_lc_type_ = ')
                       + call + '\n')
            continue
        if not until_close:
            line = RETURN.sub(lambda m: '{ int ddio_lc_rc_ = (%s); MPIOI_Large_count_end('
                              'ddio_lc_type_); return ddio_lc_rc_; }' % m.group(1), line)
        out.append(line)
    return out


def patch_source(text):
    lines = text.splitlines(keepends=True)
    out, i, n = [], 0, 0
    while i < len(lines):
        m = SIG.match(lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].rstrip('\n') != '}':
            j += 1
        body = lines[i:j + 1]
        if any(l.strip() == ASSERT for l in body):
            body = patch_function(body, m.group(1))
            n += 1
        out.extend(body)
        i = j + 1
    return ''.join(out), n


def main():
    romio = sys.argv[1]
    mpiio = os.path.join(romio, 'mpi-io')
    changed, total = [], 0
    for f in sorted(os.listdir(mpiio)):
        if not f.endswith('.c'):
            continue
        path = os.path.join(mpiio, f)
        original = pristine(path)
        text, n = patch_source(original)
        total += n
        if n and save(path, text, original):
            changed.append(f)
    if total == 0:
        return
    hdr = os.path.join(mpiio, 'mpioimpl.h')
    original = pristine(hdr)
    if GUARD_END not in original:
        sys.exit('romio-large-count: mpioimpl.h has no include guard end')
    if save(hdr, original.replace(GUARD_END, PROTOS + '\n' + GUARD_END), original):
        changed.append('mpioimpl.h')
    close = os.path.join(mpiio, 'close.c')
    original = pristine(close)
    if CLOSE_AT not in original:
        sys.exit('romio-large-count: close.c does not look as expected')
    if save(close, original.replace(CLOSE_AT, '    MPIOI_Large_count_release(*fh);\n' + CLOSE_AT, 1),
            original):
        changed.append('close.c')
    for f in changed:
        print(f'overlay: large counts in mpi-io/{f}')


if __name__ == '__main__':
    main()
