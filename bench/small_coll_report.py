#!/usr/bin/env python3
"""REPORT.md from a bench/small-coll.sh directory: per build, transport,
same-host mode, call size and phase, what a collective call costs against
the same bytes moved by independent calls (the slowest rank's time in the
calls, io_s, collective over independent, paired within a launch: the
target is <= 1.1), with the median and range over rounds, and the
microseconds per call of each. Usage: bench/small_coll_report.py DIR"""
import csv
import os
import statistics
import sys
from collections import defaultdict


def fmt_range(v, f="%.2f"):
    return (f + " (" + f + "-" + f + ")") % (statistics.median(v), min(v), max(v))


def main(d):
    rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
    runs = defaultdict(dict)    # (build, round, tr, local, xfer, phase) -> case -> row
    bad = []
    for r in rows:
        kind = "coll" if r["case"].startswith("sf-coll") else "ind"
        key = (r["build"], r["round"], r["transport"], r["local"], int(r["xfer"]), r["phase"])
        runs[key][kind] = r
        if r["status"] != "ok":
            bad.append(r)
    cells = defaultdict(lambda: {"ratio": [], "coll_us": [], "ind_us": []})
    for (b, _rnd, tr, loc, x, ph), pair in runs.items():
        if "coll" not in pair or "ind" not in pair:
            continue
        c, i = pair["coll"], pair["ind"]
        if c["status"] != "ok" or i["status"] != "ok":
            continue
        calls = int(c["bytes"]) / int(c["P"]) / x
        cio, iio = float(c["io_s"]), float(i["io_s"])
        cell = cells[(tr, loc, x, ph, b)]
        cell["ratio"].append(cio / iio)
        cell["coll_us"].append(cio / calls * 1e6)
        cell["ind_us"].append(iio / calls * 1e6)
    builds = sorted({k[4] for k in cells}, key=lambda b: (b != "before", b))
    out = ["# Small contiguous collectives against independent calls", "",
           "Cost of a collective call over the same bytes moved by independent "
           "calls: the slowest rank's time in the calls (`io_s`), sf-coll / "
           "sf-ind of the same launch; target <= 1.1. Median (range) over "
           "rounds; per-call microseconds are medians. Parameters: "
           "[params.txt](params.txt).", ""]
    hdr = "| transport | same-host | size | phase |"
    sep = "|---|---|---|---|"
    for b in builds:
        hdr += " %s coll/ind | %s us coll / ind |" % (b, b)
        sep += "---|---|"
    out += [hdr, sep]
    for key in sorted({k[:4] for k in cells}, key=lambda k: (k[0], k[1] != "on", k[2], k[3] != "write")):
        line = "| %s | %s | %s | %s |" % (key[0], key[1], human(key[2]), key[3])
        for b in builds:
            cell = cells.get(key + (b,))
            if not cell or not cell["ratio"]:
                line += " - | - |"
                continue
            line += " %s | %.0f / %.0f |" % (fmt_range(cell["ratio"]),
                                              statistics.median(cell["coll_us"]),
                                              statistics.median(cell["ind_us"]))
        out.append(line)
    out += latency_table(d, builds)
    loads = [float(r["load1"]) for r in rows]
    if loads:
        out += ["", "1-minute load average before the launches: median %.1f, %.1f-%.1f "
                "(2 cores; anything above about 1 is other work sharing them)."
                % (statistics.median(loads), min(loads), max(loads))]
    if bad:
        out += ["", "Phases not ok: " + ", ".join(
            "%s %s r%s %s %s %s" % (r["build"], r["transport"], r["round"], r["local"],
                                    r["case"], r["phase"]) for r in bad)]
    open(os.path.join(d, "REPORT.md"), "w").write("\n".join(out) + "\n")
    print("\n".join(out))


def latency_table(d, builds):
    """per-call p50 (us) of collective and independent calls, every rank
    calling, and of the agreements alone: medians over rounds"""
    path = os.path.join(d, "latency.csv")
    if not os.path.exists(path):
        return []
    cells = defaultdict(list)
    for r in csv.DictReader(open(path)):
        if r["status"] == "ok":
            cells[(r["transport"], r["local"], int(r["size"]), r["op"], r["build"])].append(
                float(r["p50_us"]))
    if not cells:
        return []
    out = ["", "## Per call, every rank calling", "",
           "Median over rounds of each launch's p50 microseconds (ior-style -L: "
           "200 calls per size at random offsets; `agree`: the two agreements "
           "alone, MPI_Iallgather + MPI_Iallreduce polled as the driver polls).", ""]
    hdr, sep = "| transport | same-host | size |", "|---|---|---|"
    for b in builds:
        hdr += " %s coll-write / write | %s coll-read / read | %s agree |" % (b, b, b)
        sep += "---|---|---|"
    out += [hdr, sep]
    for tr, loc, size in sorted({k[:3] for k in cells if k[2] > 0},
                                key=lambda k: (k[0], k[1] != "on", k[2])):
        line = "| %s | %s | %s |" % (tr, loc, human(size))
        for b in builds:
            def med(op):
                v = cells.get((tr, loc, size, op, b))
                return "%.0f" % statistics.median(v) if v else "-"
            ag = cells.get((tr, loc, 0, "agree", b))
            line += " %s / %s | %s / %s | %s |" % (med("coll-write"), med("write"), med("coll-read"),
                                                  med("read"),
                                                  "%.0f" % statistics.median(ag) if ag else "-")
        out.append(line)
    return out


def human(x):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if x >= 1 << shift and x % (1 << shift) == 0:
            return "%d %s" % (x >> shift, unit)
    return "%d B" % x


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
