#!/usr/bin/env python3
"""transport_matrix.py: issue 11's benchmark matrix on one page, one row per
results directory and record size, from each directory's summary.csv and
results.csv (report.py must have run there).

usage: bench/transport_matrix.py [-o FILE] RESULTS_DIR...

Columns: the repetitions each method completed (ok rows in results.csv), the
patterns ddio-ucx and ddio-tcp both ran, and ddio-ucx's geometric means over
those patterns: x the ceiling taken once per repetition, x the device
measured beside each run (where the run measured it), x the best ROMIO
method, and ucx / tcp; then how many patterns miss each target
(transport_targets.py's rules, whose TRANSPORT-TARGETS.md in each directory
names the stage that holds every miss).
"""
import csv
import os
import sys
from collections import defaultdict

from report import gmean
from targets import load_summary
from transport_targets import evaluate, fmt

SHORT = {"ddio-ucx": "ucx", "ddio-tcp": "tcp", "ufs-2ph": "2ph", "ufs-indep": "indep"}


def params(out):
    p = {}
    for line in open(os.path.join(out, "params.txt")):
        k, _, v = line.partition(":")
        p.setdefault(k.strip(), v.strip())
    return p


def reps_done(out, rec):
    """method -> number of repetitions with at least one ok run"""
    reps = defaultdict(set)
    for r in csv.DictReader(open(os.path.join(out, "results.csv"))):
        if r["status"] == "ok" and int(r["recsize"]) == rec:
            reps[r["method"]].add(r["rep"])
    return {m: len(v) for m, v in reps.items()}


def row(out, rec, keys, rows):
    ev = [e for e in evaluate(keys, rows) if e["ut"] is not None]
    p = params(out)
    reps = reps_done(out, rec)
    gb = gmean([e["uxb"] for e in ev])
    return "| `%s` | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        os.path.basename(os.path.normpath(out)), p.get("ranks", "?"), p.get("file_MiB", "?"),
        rec, " ".join("%s %d" % (SHORT.get(m, m), reps[m]) for m in SHORT if m in reps),
        len(ev), fmt(gmean([e["uxc"] for e in ev])), fmt(gb),
        fmt(gmean([e["uxr"] for e in ev])), fmt(gmean([e["ut"] for e in ev])),
        "%d / %d" % (sum(e["below"] is not None and e["below"] < 0.85 for e in ev),
                     sum(e["below"] is not None for e in ev)),
        "%d, %d" % (sum(e["behind_romio"] for e in ev), sum(e["behind_tcp"] for e in ev)))


def main():
    args = sys.argv[1:]
    dest = None
    if args[:1] == ["-o"] and len(args) > 1:
        dest, args = args[1], args[2:]
    if not args or any(a.startswith("-") for a in args):
        sys.exit(__doc__)
    md = ["| run | P | MiB | record | repetitions | patterns | ucx x ceiling | "
          "ucx x device beside | ucx x best ROMIO | ucx / tcp | under 0.85 | "
          "behind ROMIO (device-limited), behind TCP |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for out in args:
        rows, order = load_summary(out)
        for rec in sorted({k[0] for k in order}):
            md.append(row(out, rec, [k for k in order if k[0] == rec], rows))
    text = "\n".join(md) + "\n"
    if dest:
        with open(dest, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
