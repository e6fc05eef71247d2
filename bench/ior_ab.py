#!/usr/bin/env python3
"""A/B of two sets of bench/ior.sh runs (two builds, run alternately):
per case, P and phase, the median over runs of ddio / ufs: in the same
run, and of ddio's MiB/s, calls (io) and sync seconds, and its slowest
rank's open and close milliseconds; the geometric mean of the ratios last.

usage: ior_ab.py [--method ddio-tcp] [--phase write] A_DIR... -- B_DIR...
(each DIR an ior.sh output directory holding results.csv)"""
import csv
import math
import statistics as st
import sys


def load(dirs, method, phase):
    out = {}
    for d in dirs:
        rows = list(csv.DictReader(open(f"{d}/results.csv")))
        by = {(r["method"], r["case"], r["phase"], r["P"]): r for r in rows}
        for (m, c, ph, p), r in by.items():
            u = by.get(("ufs", c, ph, p))
            if m != method or (phase and ph != phase) or not u or r["status"] != "ok":
                continue
            out.setdefault((c, ph, int(p)), []).append(
                (float(r["MiB_s"]) / float(u["MiB_s"]), float(r["MiB_s"]),
                 float(r["io_s"]), float(r["sync_s"]),
                 1e3 * float(r["open_s"]), 1e3 * float(r["close_s"])))
    return out


def med(rows, j):
    return st.median(x[j] for x in rows)


def gmean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main(argv):
    method, phase = "ddio-tcp", ""
    while argv and argv[0].startswith("--") and argv[0] != "--":
        if argv[0] == "--method":
            method = argv[1]
        elif argv[0] == "--phase":
            phase = argv[1]
        else:
            sys.exit(__doc__)
        argv = argv[2:]
    if "--" not in argv:
        sys.exit(__doc__)
    i = argv.index("--")
    a, b = load(argv[:i], method, phase), load(argv[i + 1:], method, phase)
    print(f"{method} / ufs: (median over runs; A: {len(argv[:i])} runs, B: {len(argv[i+1:])})\n")
    print("| case | phase | P | A ratio | B ratio | A MiB/s | B MiB/s | A io / sync s | B io / sync s "
          "| A open / close ms | B open / close ms |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    ra, rb = [], []
    for k in sorted(set(a) & set(b)):
        x, y = a[k], b[k]
        ra.append(med(x, 0))
        rb.append(med(y, 0))
        print(f"| {k[0]} | {k[1]} | {k[2]} | {med(x, 0):.2f} | {med(y, 0):.2f} | {med(x, 1):.0f} | "
              f"{med(y, 1):.0f} | {med(x, 2):.3f} / {med(x, 3):.3f} | {med(y, 2):.3f} / {med(y, 3):.3f} | "
              f"{med(x, 4):.2f} / {med(x, 5):.2f} | {med(y, 4):.2f} / {med(y, 5):.2f} |")
    print(f"\ngeometric mean of the ratios: A {gmean(ra):.3f}, B {gmean(rb):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
