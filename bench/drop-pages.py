#!/usr/bin/env python3
"""drop-pages.py DIR...: every file under the DIRs made cold: fdatasync (dirty
pages would stay resident), then posix_fadvise(DONTNEED). The benchmarks'
cold reads (bench/ior.sh, bench/first-open.sh) start from it."""
import os
import sys

for top in sys.argv[1:]:
    for d, _, names in os.walk(top):
        for n in names:
            fd = os.open(os.path.join(d, n), os.O_RDONLY)
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
