#!/usr/bin/env python3
"""report.py: turn a bench/run-bench.sh results directory into REPORT.md,
summary.csv and PNG bar charts in the style of Kotz (TOCS 1997) Figs 4-7:
one group of bars per access pattern, one bar per method, the storage
ceiling as a horizontal line.

usage: bench/report.py [--log] RESULTS_DIR

Reads RESULTS_DIR/results.csv, ceiling.csv, machine.txt, params.txt.
Every repetition is a row in results.csv; the report uses the median of the
successful repetitions. "ra" (every rank reads the whole file) is reported as
file bytes per second, i.e. the aggregate delivered to the ranks divided by P,
so that it is comparable with the ceiling (Kotz counts it the same way).
Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3 if
another python3 comes first on PATH).
"""
import csv
import glob
import math
import os
import re
import statistics
import sys
from collections import defaultdict

METHODS = ["ddio", "ddio-tcp", "ddio-ucx", "ddio-nosort", "ddio-2ph", "ufs-2ph", "ufs-indep",
           "ompi-ddio", "ompi-ompio", "ompi-romio"]
LABELS = {
    "ddio": "(1) ddio disk-directed",
    "ddio-tcp": "(1t) ddio, TCP transport",
    "ddio-ucx": "(1u) ddio, UCX transport (active messages)",
    "ddio-nosort": "(2) ddio, presort off",
    "ddio-2ph": "(3) ddio servers, ROMIO two-phase",
    "ufs-2ph": "(4) ufs: two-phase (ROMIO default)",
    "ufs-indep": "(5) ufs: independent + data sieving",
    "ompi-ddio": "(O1) Debian's Open MPI, ddio through the plug-in",
    "ompi-ompio": "(O2) Debian's Open MPI, OMPIO on the local file system",
    "ompi-romio": "(O3) Debian's Open MPI, its ROMIO 3.2.1 on ufs:",
}
SHORT = {"ddio": "ddio", "ddio-tcp": "ddio tcp", "ddio-ucx": "ddio ucx", "ddio-nosort": "ddio nosort", "ddio-2ph": "ddio 2ph",
         "ufs-2ph": "ufs 2ph", "ufs-indep": "ufs indep",
         "ompi-ddio": "ompi ddio", "ompi-ompio": "ompi ompio", "ompi-romio": "ompi romio"}
COLORS = {"ddio": "#1b5e20", "ddio-tcp": "#2e7d32", "ddio-ucx": "#ef6c00", "ddio-nosort": "#66bb6a", "ddio-2ph": "#a5d6a7",
          "ufs-2ph": "#1565c0", "ufs-indep": "#90caf9",
          "ompi-ddio": "#6a1b9a", "ompi-ompio": "#c62828", "ompi-romio": "#ef9a9a"}
ROMIO = ["ufs-2ph", "ufs-indep"]
PATTERN_ORDER = ["wn", "wb", "wc", "wnb", "wbb", "wcb", "wbc", "wcc", "wcn",
                 "ra", "rn", "rb", "rc", "rnb", "rnc", "rbn", "rbb", "rbc", "rcn", "rcb", "rcc"]


def read_kv(path):
    d = {}
    if os.path.exists(path):
        for line in open(path):
            if ":" in line:
                k, v = line.split(":", 1)
                d[k.strip()] = v.strip()
    return d


def fnum(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def gmean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def load(outdir):
    """results.csv rows by (rec, method, pattern); ceiling.csv as
    op -> [(where, MiB/s)] and (op, rep) -> best location's MiB/s"""
    runs = defaultdict(list)        # (rec, method, pattern) -> [row]
    for r in csv.DictReader(open(os.path.join(outdir, "results.csv"))):
        runs[(int(r["recsize"]), r["method"], r["pattern"])].append(r)
    ceil = defaultdict(list)        # op -> [(where, MiB/s)]
    ceil_rep = {}                   # (op, rep) -> best location's MiB/s
    cpath = os.path.join(outdir, "ceiling.csv")
    if os.path.exists(cpath):
        for r in csv.DictReader(open(cpath)):
            if r["status"] == "ok" and fnum(r["MiB_s"]):
                v = float(r["MiB_s"])
                ceil[r["op"]].append((r["where"], v))
                key = (r["op"], r["rep"])
                ceil_rep[key] = max(ceil_rep.get(key, 0), v)
    return runs, ceil, ceil_rep


def load_beside(outdir):
    """beside.csv (run-bench.sh: the device measured right after each run on
    the files that run used) as (rec, method, pattern) -> {rep: MiB/s}"""
    out = defaultdict(dict)
    path = os.path.join(outdir, "beside.csv")
    if os.path.exists(path):
        for r in csv.DictReader(open(path)):
            if r["status"] == "ok" and fnum(r["MiB_s"]):
                out[(int(r["recsize"]), r["method"], r["pattern"])][r["rep"]] = float(r["MiB_s"])
    return out


def rep_values(rows):
    """rep -> MiB/s of the ok runs (ra normalised by P)"""
    out = {}
    for r in rows or []:
        if r["status"] == "ok" and fnum(r["MiB_s"]) is not None:
            v = float(r["MiB_s"])
            out[r["rep"]] = v / max(1, int(r["P"])) if r["pattern"] == "ra" else v
    return out


def rep_ratio(num, den):
    """median over the repetitions both have of num[rep] / den[rep]: each
    repetition measured the ceiling and every method within minutes, so the
    ratio is taken inside a repetition, not across the device's drift"""
    xs = [num[k] / den[k] for k in num if den.get(k)]
    return statistics.median(xs) if xs else None


def summarize(rows):
    """median MiB/s of the ok repetitions (ra normalised by P), status, notes"""
    ok = [r for r in rows if r["status"] == "ok" and fnum(r["MiB_s"]) is not None]
    notes = []
    bad = [r["status"] for r in rows if r["status"] != "ok"]
    if bad and len(bad) < len(rows):
        notes.append("%d/%d %s" % (len(bad), len(rows), ",".join(sorted(set(bad)))))
    if any(r["op"] == "read" and r["status"] == "ok" and r["cold"] != "yes" for r in rows):
        notes.append("warm cache")
    if not ok:
        return None, (sorted(set(bad))[0] if bad else "n/a"), notes
    vals = []
    for r in ok:
        v = float(r["MiB_s"])
        if r["pattern"] == "ra":
            v /= max(1, int(r["P"]))
        vals.append(v)
    if len(vals) > 1:
        spread = (max(vals) - min(vals)) / statistics.median(vals) if statistics.median(vals) else 0
        if spread > 0.25:
            notes.append("spread %.0f%%" % (100 * spread))
    return statistics.median(vals), "ok", notes


def profile_of_log(path):
    """One ddio launch's profile: ms per phase (max over ranks; the sync's
    three waits summed) from the DDIO_TIMING lines, and the servers' XFER
    counters (io: max over servers; blocks, nonconsec: sums) from their
    debug log. None when the log has no timing line."""
    ph = defaultdict(float)
    srv = {"io": 0.0, "net": 0.0, "disk": 0.0, "blocks": 0, "nonconsec": 0, "n": 0}
    have = False
    for line in open(path, errors="replace"):
        if line.startswith("ddio-timing "):
            kv = dict(re.findall(r"(\w+_ms) ([0-9.]+)", line))
            if "xfer_ms" in kv:
                have = True
                for k in ("describe_ms", "xfer_ms"):
                    ph[k] = max(ph[k], float(kv[k]))
                ph["agree_ms"] = max(ph["agree_ms"],
                                     float(kv["agree_ms"]) + float(kv["agree2_ms"]))
            elif "sync_ms" in kv:
                ph["sync_ms"] = max(ph["sync_ms"], sum(float(kv[k]) for k in
                                                       ("barrier_ms", "sync_ms", "bcast_ms")))
        elif "DEBUG: xfer " in line and " P=1:" not in line and "status ok" in line:
            m = re.search(r"blocks (\d+) .*nonconsec (\d+) .*io (\d+)us", line)
            if m:
                srv["blocks"] += int(m.group(1))
                srv["nonconsec"] += int(m.group(2))
                srv["io"] = max(srv["io"], int(m.group(3)) / 1000.0)
                srv["n"] += 1
            m = re.search(r"disk (\d+)us net (\d+)us", line)
            if m:
                srv["disk"] = max(srv["disk"], int(m.group(1)) / 1000.0)
                srv["net"] = max(srv["net"], int(m.group(2)) / 1000.0)
    if not have:
        return None
    ph.update({"server_io_ms": srv["io"], "server_disk_ms": srv["disk"],
               "server_net_ms": srv["net"], "blocks": srv["blocks"],
               "nonconsec": srv["nonconsec"]})
    return ph


def profile_table(outdir, rec, pats, runs, method="ddio"):
    """markdown rows: where a ddio method's time goes, medians over repetitions"""
    keys = ["describe_ms", "agree_ms", "xfer_ms", "sync_ms", "server_io_ms", "server_disk_ms",
            "server_net_ms", "blocks", "nonconsec"]
    rows = []
    for p in pats:
        logs = sorted(glob.glob(os.path.join(outdir, "logs", "r%d" % rec, method,
                                             "%s.rep*.log" % p)))
        profs = [x for x in (profile_of_log(f) for f in logs) if x]
        secs = [fnum(r["seconds"]) for r in runs.get((rec, method, p), [])
                if r["status"] == "ok" and fnum(r["seconds"])]
        if not profs:
            continue
        med = {k: statistics.median([x.get(k, 0) for x in profs]) for k in keys}
        call = statistics.median(secs) * 1000 if secs else None
        rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d |" % (
            p, fmt(call), fmt(med["describe_ms"]), fmt(med["agree_ms"]), fmt(med["xfer_ms"]),
            fmt(med["sync_ms"]) if p.startswith("w") else "—", fmt(med["server_io_ms"]),
            fmt(med["server_disk_ms"]), fmt(med["server_net_ms"]), med["blocks"],
            med["nonconsec"]))
    if not rows:
        return []
    return ["\n### Where ddio's time goes (%s, medians)\n" % SHORT[method],
            "Timed region = the collective call (+ `MPI_File_sync` for writes) between two "
            "barriers. Per call, max over ranks (`DDIO_TIMING`): *describe* builds the "
            "descriptor, *agree* the two small agreement collectives, *transfer* the "
            "servers' pass as the rank sees it, *sync* `MPI_File_sync`; *server io*: the "
            "longest server pass; *blocks*/*nonconsec*: summed over servers (nonconsec: "
            "disk requests not starting where the previous one on that disk ended); "
            "*disk* / *net*: the server's disk time and network time summed over its "
            "blocks (they overlap, so each may exceed *server io*; *net* is, for reads, "
            "from a block's data being ready to its hand-over, for writes from a "
            "block's first GET to its last answer), max over servers.\n",
            "| pattern | timed ms | describe | agree | transfer | sync | server io | "
            "disk | net | blocks | nonconsec |",
            "|---|---|---|---|---|---|---|---|---|---|---|"] + rows


def cpu_table(rec, pats, runs, methods):
    """CPU seconds per GiB moved (median over repetitions): the ranks and
    mpiexec (client) and the ddio servers, for every ddio method run"""
    ms = [m for m in methods if m.startswith("ddio")]
    out = ["\n### CPU time per GiB moved (client = ranks + mpiexec; server = ddio servers)\n",
           "| pattern | " + " | ".join("%s client | %s server" % (SHORT[m], SHORT[m]) for m in ms)
           + " |", "|---|" + "---|---|" * len(ms)]
    any_row = False
    for p in pats:
        cells = []
        for m in ms:
            rows = [r for r in runs.get((rec, m, p), []) if r["status"] == "ok"]
            for key in ("client_cpu_s", "server_cpu_s"):
                # 0 is no measurement (a run whose wrapper saw no children)
                v = [fnum(r.get(key)) / (fnum(r["MiB"]) / 1024.0) for r in rows
                     if fnum(r.get(key)) and fnum(r.get("MiB"))]
                cells.append(fmt(statistics.median(v), 2) if v else "—")
                any_row |= bool(v)
        out.append("| %s | %s |" % (p, " | ".join(cells)))
    return out if any_row else []


def mem_table(rec, pats, runs, methods):
    """peak RSS (MiB, largest over the repetitions): the biggest rank and
    the biggest ddio server of each launch, and the calls' window when the
    part ran in windows (results.csv rank_peak_kB, server_peak_kB,
    window_MiB: runs before those columns have none)"""
    out = ["\n### Peak RSS, MiB (rank = the largest rank; server = the largest ddio server; "
           "w = calls of that many MiB per rank)\n",
           "| pattern | " + " | ".join("%s rank | %s server" % (SHORT[m], SHORT[m]) for m in methods)
           + " |", "|---|" + "---|---|" * len(methods)]
    any_row = False
    for p in pats:
        cells = []
        for m in methods:
            rows = [r for r in runs.get((rec, m, p), []) if r["status"] == "ok"]
            rk = [fnum(r.get("rank_peak_kB")) for r in rows if fnum(r.get("rank_peak_kB"))]
            sv = [fnum(r.get("server_peak_kB")) for r in rows if fnum(r.get("server_peak_kB"))]
            win = sorted({r.get("window_MiB") for r in rows if r.get("window_MiB")})
            cells.append((fmt(max(rk) / 1024.0, 0) if rk else "—")
                         + (" (w %s)" % ",".join(win) if win else ""))
            cells.append(fmt(max(sv) / 1024.0, 0) if sv else "—")
            any_row |= bool(rk or sv)
        out.append("| %s | %s |" % (p, " | ".join(cells)))
    return out if any_row else []


def ceiling_value(ceil, op):
    """median per location, then the best location (the device's ceiling)"""
    byw = defaultdict(list)
    for where, v in ceil.get(op, []):
        byw[where].append(v)
    meds = {w: statistics.median(v) for w, v in byw.items()}
    return (max(meds.values()) if meds else None), meds


def fmt(v, nd=1):
    return "—" if v is None else ("%.*f" % (nd, v))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    logy = "--log" in sys.argv
    if len(args) != 1:
        sys.exit(__doc__)
    outdir = args[0]
    runs, ceil, ceil_rep = load(outdir)
    beside = load_beside(outdir)
    machine = read_kv(os.path.join(outdir, "machine.txt"))
    params = read_kv(os.path.join(outdir, "params.txt"))
    recs = sorted({k[0] for k in runs})
    methods = [m for m in METHODS if any(k[1] == m for k in runs)]
    pats = [p for p in PATTERN_ORDER if any(k[2] == p for k in runs)]
    cval = {op: ceiling_value(ceil, op) for op in ("read", "write", "write-alloc")}

    summary = []                    # rows for summary.csv
    md = []
    md.append("# ddio benchmark report\n")
    md.append("Run of %s on `%s` (%s, %s CPUs, %s), %s file system on %s; git %s.\n" % (
        machine.get("date", "?"), machine.get("host", "?"), machine.get("cpu", "?"),
        machine.get("nproc", "?"), machine.get("memory", "?"), machine.get("fs", "?"),
        machine.get("device", "?"), machine.get("git commit", "?")[:12] +
        (" (dirty)" if "uncommitted" in machine.get("git commit", "") else "")))
    md.append("P = %s ranks, %s ddio servers, file %s MiB, %s repetition(s) (median shown), "
              "MPICH %s. Command: `%s`.\n" % (
                  params.get("ranks", "?"), params.get("servers", "?"), params.get("file_MiB", "?"),
                  params.get("reps", "?"), machine.get("mpich", "?"), params.get("command", "?")))
    if params.get("resumed"):
        md.append("Repetitions added later (`--from-rep`, their own ceilings; `machine-rep*.txt`): "
                  "`%s`.\n" % params["resumed"])
    if "NOT" in machine.get("drop_caches", ""):
        md.append("**Warning: the page cache could not be dropped; read runs are warm.**\n")
    if machine.get("ddio", "").startswith("unavailable"):
        md.append("**ddio methods: %s.**\n" % machine["ddio"])
    md.append("Machine details: `machine.txt`; every run: `results.csv` and `logs/`; "
              "medians and ratios: `summary.csv`.\n")

    md.append("## Ceiling (O_DIRECT, %s)\n" % params.get("ceiling", "?"))
    md.append("| op | " + " | ".join(sorted({w for op in cval for w in cval[op][1]})) +
              " | used |")
    wheres = sorted({w for op in cval for w in cval[op][1]})
    md.append("|" + "---|" * (len(wheres) + 2))
    for op in ("write-alloc", "write", "read"):
        if not cval[op][1]:
            continue
        md.append("| %s | %s | **%s** |" % (op, " | ".join(fmt(cval[op][1].get(w)) for w in wheres),
                                           fmt(cval[op][0])))
    md.append("\nThe ratio to the ceiling uses the better of the two locations (same device "
              "when both are on one file system). *write-alloc* is the first pass that "
              "creates the file (block allocation included), *write* the overwrite that "
              "follows; ratios use *write*.\n")

    md.append("## Methods\n")
    for m in methods:
        md.append("- **%s** `%s`" % (LABELS[m], m))
    md.append("\nCells: MiB/s (median). *×ceil*: ratio to the ceiling of that direction. "
              "*×ROMIO*: ratio to the better of (4) and (5) for that pattern. Ratios are "
              "taken inside each repetition (its own ceiling, its own ROMIO runs) and the "
              "median over repetitions is shown, so they may differ from the ratio of the "
              "median MiB/s. `ra` is file MiB/s (aggregate / P).\n")

    for rec in recs:
        md.append("## %d-byte records\n" % rec)
        hdr = "| pattern | " + " | ".join(SHORT[m] for m in methods) + " | best ROMIO | notes |"
        tab_abs = [hdr, "|" + "---|" * (len(methods) + 3)]
        tab_ceil = ["| pattern | " + " | ".join(SHORT[m] for m in methods) + " |",
                    "|" + "---|" * (len(methods) + 1)]
        tab_rom = list(tab_ceil)
        tab_bes = list(tab_ceil)
        ratios_ceil = defaultdict(list)
        ratios_rom = defaultdict(list)
        ratios_bes = defaultdict(list)
        for p in pats:
            op = "write" if p.startswith("w") else "read"
            cv = cval[op][0]
            vals, notes = {}, []
            for m in methods:
                rows = runs.get((rec, m, p))
                if not rows:
                    vals[m] = (None, "n/a")
                    continue
                v, st, nt = summarize(rows)
                vals[m] = (v, st)
                notes += ["%s: %s" % (SHORT[m], n) for n in nt]
            rom = [vals[m][0] for m in ROMIO if m in vals and vals[m][0]]
            best = max(rom) if rom else None
            # per repetition: the ceiling and the best ROMIO method of that rep
            reps = {m: rep_values(runs.get((rec, m, p))) for m in methods}
            ceil_r = {k[1]: v for k, v in ceil_rep.items() if k[0] == op}
            best_r = {}
            for m in ROMIO:
                for k, v in reps.get(m, {}).items():
                    best_r[k] = max(best_r.get(k, 0), v)
            cells_abs, cells_c, cells_r, cells_b = [], [], [], []
            for m in methods:
                v, st = vals[m]
                rc = rep_ratio(reps[m], ceil_r) if v else None
                rr = rep_ratio(reps[m], best_r) if v else None
                rb = rep_ratio(reps[m], beside.get((rec, m, p), {})) if v else None
                if rc:
                    ratios_ceil[m].append(rc)
                if rr:
                    ratios_rom[m].append(rr)
                if rb:
                    ratios_bes[m].append(rb)
                cells_b.append(fmt(rb, 2) if rb else (st if v is None else "—"))
                cells_abs.append(fmt(v) if v is not None else st)
                cells_c.append(fmt(rc, 2) if rc else (st if v is None else "—"))
                cells_r.append(fmt(rr, 2) if rr else (st if v is None else "—"))
                summary.append(dict(recsize=rec, pattern=p, op=op, method=m,
                                    MiB_s="" if v is None else "%.2f" % v, status=st,
                                    ceiling="" if cv is None else "%.2f" % cv,
                                    x_ceiling="" if rc is None else "%.3f" % rc,
                                    best_romio="" if best is None else "%.2f" % best,
                                    x_romio="" if rr is None else "%.3f" % rr,
                                    x_beside="" if rb is None else "%.3f" % rb))
            tab_abs.append("| %s | %s | %s | %s |" % (p, " | ".join(cells_abs), fmt(best),
                                                       "; ".join(notes)))
            tab_ceil.append("| %s | %s |" % (p, " | ".join(cells_c)))
            tab_rom.append("| %s | %s |" % (p, " | ".join(cells_r)))
            tab_bes.append("| %s | %s |" % (p, " | ".join(cells_b)))
        tab_ceil.append("| **geomean** | %s |" % " | ".join(
            "**%s**" % fmt(gmean(ratios_ceil[m]), 2) for m in methods))
        tab_rom.append("| **geomean** | %s |" % " | ".join(
            "**%s**" % fmt(gmean(ratios_rom[m]), 2) for m in methods))
        md.append("### MiB/s\n")
        md += tab_abs
        md.append("\n### Ratio to the ceiling (write %s, read %s MiB/s)\n" % (
            fmt(cval["write"][0]), fmt(cval["read"][0])))
        md += tab_ceil
        if any(ratios_bes.values()):
            tab_bes.append("| **geomean** | %s |" % " | ".join(
                "**%s**" % fmt(gmean(ratios_bes[m]), 2) for m in methods))
            md.append("\n### Ratio to the device beside the run\n")
            md.append("The device measured right after each run (`beside.csv`): the ceiling "
                      "tool reads the files the run read, or overwrites scratch files of the "
                      "same sizes, one process per file, all at once; per repetition, then "
                      "the median. The disk here drifts 2x within minutes, which a ceiling "
                      "taken once per repetition does not follow.\n")
            md += tab_bes
        md.append("\n### Ratio to the best ROMIO method (4 or 5)\n")
        md += tab_rom
        for m in methods:
            if m in ("ddio", "ddio-tcp", "ddio-ucx"):
                md += profile_table(outdir, rec, pats, runs, m)
        md += cpu_table(rec, pats, runs, methods)
        md += mem_table(rec, pats, runs, methods)
        md.append("")
        for op in ("write", "read"):
            png = "chart-r%d-%s.png" % (rec, op)
            if plot(outdir, png, rec, op, [p for p in pats if p[0] == op[0]], methods, runs,
                    cval[op][0], params, logy):
                md.append("![%d-byte records, %s](%s)\n" % (rec, op, png))

    with open(os.path.join(outdir, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["recsize", "pattern", "op", "method", "MiB_s", "status",
                                          "ceiling", "x_ceiling", "best_romio", "x_romio",
                                          "x_beside"])
        w.writeheader()
        w.writerows(summary)
    with open(os.path.join(outdir, "REPORT.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("wrote %s" % os.path.join(outdir, "REPORT.md"))


def plot(outdir, png, rec, op, pats, methods, runs, ceiling, params, logy):
    if not pats:
        return False
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(max(6, 1.0 * len(pats) + 2), 4.2), dpi=110)
    n = len(methods)
    width = 0.8 / max(1, n)
    top = ceiling or 0
    for i, m in enumerate(methods):
        xs, ys, fails = [], [], []
        for j, p in enumerate(pats):
            rows = runs.get((rec, m, p))
            x = j - 0.4 + width * (i + 0.5)
            if not rows:
                continue
            v, st, _ = summarize(rows)
            if v is None:
                fails.append(x)
            else:
                xs.append(x)
                ys.append(v)
                top = max(top, v)
        ax.bar(xs, ys, width, label=SHORT[m], color=COLORS[m], edgecolor="black", linewidth=0.4)
        for x in fails:
            ax.text(x, 0, "F", ha="center", va="bottom", color="red", fontsize=8,
                    fontweight="bold")
    if ceiling:
        ax.axhline(ceiling, color="black", linestyle="--", linewidth=1)
        ax.text(len(pats) - 0.5, ceiling, " ceiling %.0f" % ceiling, va="bottom", ha="right",
                fontsize=8)
    ax.set_xticks(range(len(pats)))
    ax.set_xticklabels(pats)
    ax.set_xlim(-0.6, len(pats) - 0.4)
    if logy:
        ax.set_yscale("log")
    else:
        ax.set_ylim(0, top * 1.12 if top else 1)
    ax.set_ylabel("MiB/s")
    ax.set_xlabel("access pattern")
    ax.set_title("%s, %d-byte records, P=%s, %s servers, %s MiB file" % (
        op, rec, params.get("ranks", "?"), params.get("servers", "?"),
        params.get("file_MiB", "?")), fontsize=10)
    from matplotlib.patches import Patch
    handles = [Patch(facecolor=COLORS[m], edgecolor="black", linewidth=0.4, label=SHORT[m])
               for m in methods]
    ax.legend(handles=handles, fontsize=7, ncol=min(5, n), loc="upper center", bbox_to_anchor=(0.5, -0.15),
              frameon=False)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, png))
    plt.close(fig)
    return True


if __name__ == "__main__":
    main()
