#!/usr/bin/env python3
"""scaling_report.py: SCALING.md, scaling.csv and plots for a bench/scaling.sh
output directory.

usage: bench/scaling_report.py OUT

OUT/{ranks,servers,sizes}/VALUE/ are bench/run-bench.sh result directories;
OUT/desc.csv comes from bench/desc_size, OUT/mem.csv from the mem sweep.
Throughput is the median of the successful repetitions; `ra` is file MiB/s
(aggregate / P), as in report.py. Needs matplotlib (Agg backend).
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import COLORS, SHORT, METHODS, PATTERN_ORDER, fnum, read_kv  # noqa: E402

import matplotlib  # noqa: E402
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

XLABEL = {"ranks": "MPI ranks (P)", "servers": "ddio servers", "sizes": "file size (MiB)"}


def load_sweep(out, sweep):
    """rows of every point; ceilings per point"""
    rows, ceil = [], {}
    d = os.path.join(out, sweep)
    if not os.path.isdir(d):
        return rows, ceil
    for val in os.listdir(d):
        p = os.path.join(d, val, "results.csv")
        if not os.path.exists(p):
            continue
        for r in csv.DictReader(open(p)):
            r["sweep"], r["value"] = sweep, int(val)
            rows.append(r)
        c = os.path.join(d, val, "ceiling.csv")
        if os.path.exists(c):
            by = defaultdict(list)
            for r in csv.DictReader(open(c)):
                if r["status"] == "ok" and fnum(r["MiB_s"]):
                    by[(r["op"], r["where"])].append(float(r["MiB_s"]))
            for (op, where), v in by.items():
                ceil.setdefault(int(val), {}).setdefault(op, []).append(statistics.median(v))
    return rows, ceil


def median_of(rows):
    vals = []
    for r in rows:
        if r["status"] == "ok" and fnum(r["MiB_s"]) is not None:
            v = float(r["MiB_s"])
            if r["pattern"] == "ra":
                v /= max(1, int(r["P"]))
            vals.append(v)
    return statistics.median(vals) if vals else None


def sweep_section(out, sweep, md, allrows, nproc):
    rows, ceil = load_sweep(out, sweep)
    if not rows:
        return
    allrows += rows
    by = defaultdict(list)
    for r in rows:
        by[(r["method"], r["pattern"], r["value"])].append(r)
    methods = [m for m in METHODS if any(k[0] == m for k in by)]
    pats = [p for p in PATTERN_ORDER if any(k[1] == p for k in by)]
    xs = sorted({k[2] for k in by})
    rec = rows[0]["recsize"]
    md.append("## Throughput vs %s\n" % XLABEL[sweep])
    fixed = {"ranks": "servers %s, file %s MiB" % (rows[0]["servers"], rows[0]["file_MiB"]),
             "servers": "P %s, file %s MiB" % (rows[0]["P"], rows[0]["file_MiB"]),
             "sizes": "P %s, servers %s" % (rows[0]["P"], rows[0]["servers"])}[sweep]
    md.append("%s-byte records, %s. MiB/s (median); FAIL/TIMEOUT where no repetition "
              "succeeded.\n" % (rec, fixed))
    if sweep == "ranks" and any(x > nproc for x in xs):
        md.append("**Points with more ranks than the %d CPUs are oversubscribed**: MPICH's "
                  "nemesis channel busy-polls, so they measure CPU contention as much as "
                  "I/O.\n" % nproc)
    md.append("| method | pattern | " + " | ".join(str(x) for x in xs) + " |")
    md.append("|" + "---|" * (len(xs) + 2))
    for m in methods:
        for p in pats:
            cells = []
            for x in xs:
                rs = by.get((m, p, x))
                if not rs:
                    cells.append("")
                    continue
                v = median_of(rs)
                cells.append("%.1f" % v if v is not None else
                             sorted({r["status"] for r in rs})[0])
            md.append("| %s | %s | %s |" % (SHORT[m], p, " | ".join(cells)))
    if ceil:
        md.append("\nCeiling (O_DIRECT, MiB/s): " + "; ".join(
            "%s=%d: write %s, read %s" % (sweep, x, fmtc(ceil[x].get("write")),
                                          fmtc(ceil[x].get("read"))) for x in sorted(ceil)) + "\n")
    # plot: one panel per pattern, one line per method
    n = len(pats)
    cols = min(n, 3)
    nrows = (n + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.2 * nrows), dpi=100,
                             squeeze=False)
    for i, p in enumerate(pats):
        ax = axes[i // cols][i % cols]
        op = "write" if p.startswith("w") else "read"
        for m in methods:
            pts = [(x, median_of(by[(m, p, x)])) for x in xs if (m, p, x) in by]
            pts = [(x, v) for x, v in pts if v is not None]
            if pts:
                ax.plot([a for a, _ in pts], [b for _, b in pts], marker="o", label=SHORT[m],
                        color=COLORS[m])
        cx = sorted(x for x in ceil if op in ceil[x])
        if cx:
            if len(cx) == 1:
                ax.axhline(max(ceil[cx[0]][op]), color="black", linestyle="--", linewidth=1,
                           label="ceiling")
            else:
                ax.plot(cx, [max(ceil[x][op]) for x in cx], color="black", linestyle="--",
                        linewidth=1, label="ceiling")
        if sweep in ("ranks", "sizes"):
            ax.set_xscale("log", base=2)
        ax.set_xticks(xs)
        ax.set_xticklabels([str(x) for x in xs])
        if sweep == "ranks":
            ax.axvspan(nproc + 0.5, max(xs) * 1.1, color="grey", alpha=0.12)
        ax.set_title(p, fontsize=10)
        ax.set_xlabel(XLABEL[sweep], fontsize=8)
        ax.set_ylabel("MiB/s", fontsize=8)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=6)
    for j in range(n, nrows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle("throughput vs %s (%s-byte records, %s)%s" % (
        XLABEL[sweep], rec, fixed, ", shaded: oversubscribed" if sweep == "ranks" else ""),
        fontsize=10)
    fig.tight_layout()
    png = "scaling-%s.png" % sweep
    fig.savefig(os.path.join(out, png))
    plt.close(fig)
    md.append("\n![throughput vs %s](%s)\n" % (sweep, png))


def fmtc(v):
    return "%.0f" % max(v) if v else "—"


def desc_section(out, md):
    p = os.path.join(out, "desc.csv")
    if not os.path.exists(p):
        return
    rows = [r for r in csv.DictReader(open(p)) if fnum(r.get("P")) and fnum(r.get("recsize"))]
    if not rows:
        return
    md.append("## Bytes describing one rank's part of one call\n")
    md.append("*two-phase*: ROMIO ships 16 bytes (offset, length) per contiguous piece of the "
              "rank's view to the aggregators, every call (largest rank shown). *ddio*: the "
              "encoded distribution descriptor (largest rank), sent once to each server. "
              "Empty ddio cells: more pieces than desc_size keeps in memory (-x).\n")
    Ps = sorted({int(r["P"]) for r in rows})
    recs = sorted({int(r["recsize"]) for r in rows})
    sizes = sorted({float(r["file_MiB"]) for r in rows})
    pats = [q for q in PATTERN_ORDER if any(r["pattern"] == q for r in rows)]
    for P in Ps:
        for rec in recs:
            sub = {(r["pattern"], float(r["file_MiB"])): r for r in rows
                   if int(r["P"]) == P and int(r["recsize"]) == rec}
            md.append("### P = %d, %d-byte records\n" % (P, rec))
            md.append("| pattern | " + " | ".join("%g MiB: two-phase / ddio" % s for s in sizes)
                      + " |")
            md.append("|" + "---|" * (len(sizes) + 1))
            for q in pats:
                cells = []
                for s in sizes:
                    r = sub.get((q, s))
                    if not r:
                        cells.append("")
                        continue
                    cells.append("%s / %s" % (human(r["twophase_bytes_max"]),
                                              human(r["ddio_desc_bytes_max"]) or "n/a") +
                                 ("" if r["status"] in ("ok",) or r["status"].startswith("skipped")
                                  else " " + r["status"]))
                md.append("| %s | %s |" % (q, " | ".join(cells)))
            md.append("")
        # plot: per record size panel, log-log
        fig, axes = plt.subplots(1, len(recs), figsize=(6 * len(recs), 4.2), dpi=100,
                                 squeeze=False)
        for i, rec in enumerate(recs):
            ax = axes[0][i]
            # patterns with identical curves share one line, labelled at its end
            for col, key, lab in (("#1565c0", "twophase_bytes_max", "two-phase (16 B x pieces)"),
                                  ("#1b5e20", "ddio_desc_bytes_max", "ddio descriptor")):
                groups = defaultdict(list)
                for q in pats:
                    pts = tuple(sorted((float(r["file_MiB"]), fnum(r[key])) for r in rows
                                       if int(r["P"]) == P and int(r["recsize"]) == rec
                                       and r["pattern"] == q and fnum(r[key])))
                    if pts:
                        groups[pts].append(q)
                for k, (pts, qs) in enumerate(sorted(groups.items(), key=lambda g: -g[0][-1][1])):
                    ax.plot([a for a, _ in pts], [b for _, b in pts],
                            "-o" if key.startswith("two") else "--s", color=col, markersize=3,
                            label=lab if k == 0 else None)
                    ax.annotate(",".join(qs), (pts[-1][0], pts[-1][1]), xytext=(4, 0),
                                textcoords="offset points", fontsize=6, va="center", color=col)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks(sizes)
            ax.set_xticklabels(["%g" % x for x in sizes])
            ax.set_xlim(min(sizes) / 1.3, max(sizes) * 4)
            ax.set_xlabel("file size (MiB)")
            ax.set_ylabel("bytes per rank per call (largest rank)")
            ax.set_title("P=%d, %d-byte records" % (P, rec), fontsize=9)
            ax.legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        png = "desc-P%d.png" % P
        fig.savefig(os.path.join(out, png))
        plt.close(fig)
        md.append("![descriptor bytes, P=%d](%s)\n" % (P, png))


def human(s):
    v = fnum(s)
    if v is None:
        return ""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if v < 1024 or unit == "GiB":
            return ("%d %s" % (v, unit)) if unit == "B" else ("%.1f %s" % (v, unit))
        v /= 1024.0


def mem_section(out, md):
    p = os.path.join(out, "mem.csv")
    if not os.path.exists(p):
        return
    rows = list(csv.DictReader(open(p)))
    if not rows:
        return
    md.append("## ddio-server peak memory\n")
    md.append("VmHWM (peak resident set) of every server process, read from /proc after the "
              "MPI program finished, one server start per pattern (the `wb` row is the run "
              "that wrote the file).\n")
    md.append("| method | pattern | record | P | servers | file MiB | MiB/s | status | "
              "peak RSS per server (MiB) |")
    md.append("|---|---|---|---|---|---|---|---|---|")
    by = defaultdict(list)
    for r in rows:
        by[(r["method"], r["pattern"], r["recsize"], r["P"], r["servers"], r["file_MiB"],
            r["MiB_s"], r["status"])].append(r)
    for k, rs in by.items():
        peaks = ", ".join("%.1f" % (float(r["VmHWM_kB"]) / 1024) for r in rs if fnum(r["VmHWM_kB"]))
        md.append("| %s |" % " | ".join(list(k) + [peaks or "n/a"]))
    md.append("")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    params = read_kv(os.path.join(out, "params.txt"))
    nproc = int(params.get("nproc", os.cpu_count() or 1))
    md = ["# ddio scaling report\n",
          "Date %s, %s CPUs. Command: `%s`. Raw data: the run-bench directories under "
          "ranks/, servers/, sizes/ (each with machine.txt), desc.csv, mem.csv; all throughput "
          "rows together: scaling.csv.\n" % (params.get("date", "?"), nproc,
                                           params.get("command", "?"))]
    allrows = []
    for sweep in ("ranks", "servers", "sizes"):
        sweep_section(out, sweep, md, allrows, nproc)
    desc_section(out, md)
    mem_section(out, md)
    if allrows:
        keys = ["sweep", "value"] + [k for k in allrows[0] if k not in ("sweep", "value")]
        with open(os.path.join(out, "scaling.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(allrows)
    with open(os.path.join(out, "SCALING.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("wrote %s" % os.path.join(out, "SCALING.md"))


if __name__ == "__main__":
    main()
