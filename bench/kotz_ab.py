#!/usr/bin/env python3
"""A/B of two builds on Kotz's patterns: bench/run-bench.sh runs made
alternately (bench/ab-swap.sh ... -- bash -c 'bench/run-bench.sh ...
-o DIR/k-$AB_LABEL-$AB_ROUND'), compared round by round. For each method
and direction: B's time over A's in the same round, the geometric mean over
the patterns both ran; and A against itself from one round to the next,
which is the noise the first column must stand out of.

usage: kotz_ab.py [-a A] [-b B] DIR
  DIR holds one run-bench.sh directory per label and round, named
  k-LABEL-ROUND (results.csv in each); A and B are the two labels
  (default: old and new)."""
import argparse
import csv
import glob
import math
import os
import re
import sys


def load(top):
    """{(label, round): {(method, op, pattern, recsize): seconds}}"""
    runs = {}
    for f in glob.glob(os.path.join(top, "k-*", "results.csv")):
        m = re.fullmatch(r"k-(.+)-(\d+)", os.path.basename(os.path.dirname(f)))
        if not m:
            continue
        t = runs.setdefault((m.group(1), int(m.group(2))), {})
        for r in csv.DictReader(open(f)):
            if r["status"] == "ok":
                t[(r["method"], r["op"], r["pattern"], r["recsize"])] = float(r["seconds"])
    return runs


def gmean_ratio(num, den, method, op):
    keys = [k for k in num if k[0] == method and k[1] == op and k in den]
    if not keys:
        return None
    return math.exp(sum(math.log(num[k] / den[k]) for k in keys) / len(keys))


def fmt(x):
    return "—" if x is None else f"{x:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-a", default="old", help="label of the reference build")
    ap.add_argument("-b", default="new", help="label of the build compared")
    ap.add_argument("dir")
    o = ap.parse_args()
    runs = load(o.dir)
    rounds = sorted({r for (lab, r) in runs if lab == o.a} & {r for (lab, r) in runs if lab == o.b})
    if not rounds:
        sys.exit(f"kotz_ab.py: no k-{o.a}-N and k-{o.b}-N directories with the same N under {o.dir}")
    methods = sorted({k[0] for (lab, r), t in runs.items() for k in t})
    print(f"Time {o.b} / {o.a}, geometric mean over the patterns, rounds {rounds[0]}..{rounds[-1]}; "
          f"{o.a} / {o.a} from one round to the next (the noise).\n")
    print(f"| method | op | {o.b} / {o.a}, per round | {o.a} / {o.a} (round i+1 against i) |")
    print("|---|---|---|---|")
    for m in methods:
        for op in ("write", "read"):
            ab = [gmean_ratio(runs[(o.b, r)], runs[(o.a, r)], m, op) for r in rounds]
            if all(x is None for x in ab):
                continue
            aa = [gmean_ratio(runs[(o.a, r2)], runs[(o.a, r1)], m, op)
                  for r1, r2 in zip(rounds, rounds[1:])]
            print(f"| {m} | {op} | {', '.join(map(fmt, ab))} | {', '.join(map(fmt, aa)) or '—'} |")


if __name__ == "__main__":
    main()
