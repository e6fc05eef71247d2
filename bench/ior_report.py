#!/usr/bin/env python3
"""REPORT.md (and ratio plots when matplotlib is there) from a bench/ior.sh
results directory: ddio / ufs: ratios per case with the IOR targets
marked met or not met, ddio's collective against its own independent calls,
ddio cp in and out, and per-call latency.

usage: bench/ior_report.py DIR        (stdlib only; plots need matplotlib)
"""
import csv
import os
import statistics
import sys

DDIO = ["ddio-tcp", "ddio-ucx"]
PHASES = ["write", "read-hot", "read-cold"]
CASES = {
    "sf-ind": "shared file, independent",
    "sf-coll": "shared file, collective",
    "fpp-ind": "file per process, independent",
    "sf-rand": "shared file, independent, random offsets (-z)",
    "sf-nbr": "shared file, independent, reads of rank+1's data (-C)",
}


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def size_name(b):
    b = int(b)
    for unit, n in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= n and b % n == 0:
            return f"{b // n} {unit}"
    return f"{b} B"


def target_for(xfer):
    return 0.9 if int(xfer) >= 1024 else 0.5


def mark(ratio, target):
    if ratio is None:
        return "n/a"
    return f"{ratio:.2f} {'met' if ratio >= target else '**not met**'}"


STAGES = ["open", "io", "sync", "close"]


class Cells:
    """MiB/s of every successful phase, by (method, P, case, xfer, phase), and
    the slowest rank's seconds in each stage of it (open, calls, sync, close)
    where ior-style recorded them."""

    def __init__(self, results):
        self.ok, self.bad, self.stages = {}, {}, {}
        for r in results:
            case = r["case"].rsplit("-t", 1)[0]
            key = (r["method"], int(r["P"]), case, int(r["xfer"]), r["phase"])
            if r["status"] == "ok":
                # from bytes and seconds: the printed MiB/s is rounded
                self.ok.setdefault(key, []).append(float(r["bytes"]) / 1048576 / float(r["seconds"]))
                if r.get("open_s"):
                    self.stages.setdefault(key, []).append(
                        [float(r[s + "_s"]) for s in STAGES] + [float(r["seconds"])])
            else:
                self.bad.setdefault(key, []).append(r["status"])

    def stage_med(self, key):
        """median seconds per stage and of the whole phase, or None"""
        v = self.stages.get(key)
        if not v:
            return None
        return [statistics.median(x[i] for x in v) for i in range(len(STAGES) + 1)]

    def med(self, key):
        v = self.ok.get(key)
        return statistics.median(v) if v else None

    def cell(self, key):
        v = self.ok.get(key)
        fails = self.bad.get(key, [])
        if not v:
            return fails[0] if fails else "missing"
        s = fmt(statistics.median(v))
        if len(v) > 1:
            s += f" ({fmt(min(v))}-{fmt(max(v))})"
        if fails:
            s += f" +{len(fails)} FAIL"
        return s

    def keys(self, i):
        return sorted({k[i] for k in list(self.ok) + list(self.bad)})


def fmt(x):
    return f"{x:.3g}" if x < 10 else f"{x:.0f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def main_tables(cells, out, misses):
    for p in cells.keys(1):
        for phase in PHASES:
            out.append(f"\n### P = {p}, {phase}\n")
            out.append("| case | xfer | ufs MiB/s | ddio-tcp MiB/s | tcp / ufs | ddio-ucx MiB/s | ucx / ufs | target |")
            out.append("|---|---|---|---|---|---|---|---|")
            for case in CASES:
                for x in cells.keys(3):
                    u = (("ufs", p, case, x, phase))
                    if u not in cells.ok and u not in cells.bad:
                        continue
                    line = [case, size_name(x), cells.cell(u)]
                    t = target_for(x)
                    for m in DDIO:
                        k = (m, p, case, x, phase)
                        r = ratio(cells.med(k), cells.med(u))
                        line += [cells.cell(k), mark(r, t)]
                        if r is not None:
                            misses.append((r / t, m, p, case, x, phase, r, t))
                    line.append(f">= {t}")
                    out.append("| " + " | ".join(line) + " |")


def summary(misses, out):
    out.append("\n## Targets met, ddio / ufs: in the same run\n")
    out.append("| transport | phase | met | not met | worst case (ratio) |")
    out.append("|---|---|---|---|---|")
    for m in DDIO:
        for phase in PHASES:
            sel = [x for x in misses if x[1] == m and x[5] == phase]
            if not sel:
                continue
            met = sum(1 for x in sel if x[6] >= x[7])
            w = min(sel)
            out.append(f"| {m} | {phase} | {met} | {len(sel) - met} | "
                       f"P={w[2]} {w[3]} {size_name(w[4])}: {w[6]:.2f} (target {w[7]}) |")
    out.append("\nBy call size (all cases, phases and P): cases met / cases measured, "
               "median ratio.\n")
    out.append("| transport | " + " | ".join(size_name(x) for x in sorted({m[4] for m in misses})) + " |")
    out.append("|---|" + "---|" * len({m[4] for m in misses}))
    for m in DDIO:
        cols = []
        for x in sorted({y[4] for y in misses}):
            sel = [y for y in misses if y[1] == m and y[4] == x]
            if not sel:
                cols.append("n/a")
                continue
            met = sum(1 for y in sel if y[6] >= y[7])
            cols.append(f"{met}/{len(sel)}, {statistics.median(y[6] for y in sel):.2f}")
        out.append(f"| {m} | " + " | ".join(cols) + " |")


def ms(s):
    return f"{s * 1e3:.3g}" if s < 0.01 else f"{s * 1e3:.0f}"


def where(cells, misses, out):
    """each miss put on the stage that holds it: the stage whose time grew
    most against ufs: in the same run (slowest rank per stage, medians)"""
    sel = sorted(x for x in misses if x[6] < x[7])
    rows_ = []
    for _, m, p, case, x, phase, r, t in sel:
        d, u = cells.stage_med((m, p, case, x, phase)), cells.stage_med(("ufs", p, case, x, phase))
        if not d or not u:
            continue
        extra = [d[i] - u[i] for i in range(len(STAGES))]
        i = max(range(len(STAGES)), key=lambda k: extra[k])
        stages = " / ".join(f"{ms(d[k])} vs {ms(u[k])}" for k in range(len(STAGES)))
        rows_.append(f"| {m} | {p} | {case} | {size_name(x)} | {phase} | {r:.2f} | "
                     f"{ms(d[-1])} vs {ms(u[-1])} | {stages} | **{STAGES[i]}** "
                     f"(+{ms(extra[i])} ms) |")
    if not rows_:
        return
    out.append("\n## Where each miss is: the stage that holds it\n")
    out.append("Each case below its target, its phase split into stages, ddio vs `ufs:` in "
               "the same run (ms; the slowest rank's time in each stage, median over "
               "repetitions; stages of different ranks overlap, so they need not add up "
               "to the phase, which includes the barriers' wait). The stage named is the "
               "one whose time grew most over `ufs:`'s.\n")
    out.append("| transport | P | case | xfer | phase | ratio | phase ms | open / calls / "
               "sync / close ms | stage |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    out += rows_


def collective(cells, out):
    out.append("\n## Collective against ddio's own independent calls (target >= 0.9)\n")
    out.append("sf-coll / sf-ind, same transport, same transfer size, the same bytes "
               "(one collective call per transfer: 4096 of 8 B, 1024 of 4 KiB per rank).\n")
    out.append("| P | xfer | phase | ddio-tcp | ddio-ucx | ufs (for reference) |")
    out.append("|---|---|---|---|---|---|")
    for p in cells.keys(1):
        for x in cells.keys(3):
            for phase in PHASES:
                line = [str(p), size_name(x), phase]
                for m in DDIO + ["ufs"]:
                    r = ratio(cells.med((m, p, "sf-coll", x, phase)), cells.med((m, p, "sf-ind", x, phase)))
                    line.append(mark(r, 0.9) if m != "ufs" else ("n/a" if r is None else f"{r:.2f}"))
                out.append("| " + " | ".join(line) + " |")


def copies(cp, out):
    if not cp:
        return
    med = {}
    for (m, op) in sorted({(r["method"], r["op"]) for r in cp}):
        v = [float(r["MiB_s"]) for r in cp if r["method"] == m and r["op"] == op and r["status"] == "ok"]
        med[(m, op)] = (statistics.median(v), min(v), max(v)) if v else None
    mib = cp[0]["MiB"]
    out.append(f"\n## ddio cp of a {mib} MiB file (MiB/s, median (min-max))\n")
    out.append("| method | in (local -> ddio) | out (ddio -> local) | out >= in |")
    out.append("|---|---|---|---|")
    for m in DDIO:
        i, o = med.get((m, "in")), med.get((m, "out"))
        if i is None and o is None:
            continue
        ok = "n/a" if not (i and o) else (f"met ({o[0] / i[0]:.2f}x)" if o[0] >= i[0]
                                          else f"**not met** ({o[0] / i[0]:.2f}x)")
        out.append(f"| {m} | {cpfmt(i)} | {cpfmt(o)} | {ok} |")
    for op in ("cp", "cp+sync"):
        if ("local", op) in med:
            out.append(f"| local `{op}` (same fs) | {cpfmt(med[('local', op)])} | | |")
    out.append("\n`ddio cp` into ddio ends with a sync on the servers; out of ddio it writes "
               "the local file durably too (through the page cache with its writeback "
               "streamed, then fdatasync). "
               "Compare with `cp`, and `cp+sync` = cp then sync FILE.")


def cpfmt(t):
    return "FAIL" if t is None else f"{fmt(t[0])} ({fmt(t[1])}-{fmt(t[2])})"


def latency(lat, out):
    if not lat:
        return
    out.append("\n## Per-call latency (µs, independent `read_at`/`write_at`, median over "
               "repetitions of each repetition's p50 / p99)\n")
    out.append("Random size-aligned offsets in a 64 MiB region per rank, written and "
               "synced first (reads are hot). *one*: rank 0 calls while the other ranks "
               "wait without spinning; *all*: every rank calls at once (rank 0's calls "
               "counted). ufs: is ROMIO's pread/pwrite.\n")
    for mode in ("one", "all"):
        sel = [r for r in lat if r["mode"] == mode]
        if not sel:
            continue
        callers = sel[0]["callers"]
        out.append(f"\n### {mode}: {callers} rank(s) calling, P = "
                   f"{'4' if mode == 'one' else callers}\n")
        out.append("| op | size | ufs p50 / p99 | ddio-tcp p50 / p99 | ddio-ucx p50 / p99 | tcp / ufs p50 | ucx / ufs p50 |")
        out.append("|---|---|---|---|---|---|---|")
        for op in ("write", "read"):
            for size in sorted({int(r["size"]) for r in sel}):
                med = {}
                for m in ["ufs"] + DDIO:
                    v = [r for r in sel if r["method"] == m and r["op"] == op and int(r["size"]) == size
                         and r["status"] == "ok"]
                    med[m] = ((statistics.median(float(r["p50_us"]) for r in v),
                               statistics.median(float(r["p99_us"]) for r in v)) if v else None)
                line = [op, size_name(size)]
                line += [f"{med[m][0]:.1f} / {med[m][1]:.0f}" if med[m] else "FAIL/missing"
                         for m in ["ufs"] + DDIO]
                line += [f"{med[m][0] / med['ufs'][0]:.2g}x" if med[m] and med["ufs"] else "n/a" for m in DDIO]
                out.append("| " + " | ".join(line) + " |")


def notes(d, cells, out):
    drops = rows(os.path.join(d, "drops.csv"))
    launches = rows(os.path.join(d, "launches.csv"))
    failed = [l for l in launches if l["rc"] != "0"]
    out.append("\n## Notes\n")
    if drops:
        res = max(int(r["resident_bytes_after"]) for r in drops)
        out.append(f"- Cold reads: {drops[0]['mode']} before a second launch with fresh servers; "
                   f"at most {res} bytes of the files were still in the page cache after a drop "
                   f"(fincore).")
    out.append(f"- Launches: {len(launches)}, failed or timed out: {len(failed)}"
               + "".join(f"; {l['method']} P={l['P']} rep {l['rep']} {l['launch']} rc={l['rc']}" for l in failed))
    nbad = sum(len(v) for v in cells.bad.values())
    if nbad:
        out.append(f"- {nbad} phases failed (I/O error or verification): see the tables' FAIL marks.")
    spread = [(k, v) for k, v in cells.ok.items() if len(v) > 1 and max(v) > 1.5 * min(v)]
    if spread:
        out.append(f"- {len(spread)} of {len(cells.ok)} cells spread more than 1.5x between "
                   "repetitions (min-max in the tables).")


def plots(d, cells):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    xs = cells.keys(3)
    for p in cells.keys(1):
        fig, axes = plt.subplots(len(PHASES), 1, figsize=(12, 9), sharex=True)
        labels = [f"{c}\n{size_name(x)}" for c in CASES for x in xs]
        for ax, phase in zip(axes, PHASES):
            for j, m in enumerate(DDIO):
                vals = [ratio(cells.med((m, p, c, x, phase)), cells.med(("ufs", p, c, x, phase))) or 0
                        for c in CASES for x in xs]
                ax.bar([i + (j - 0.5) * 0.4 for i in range(len(labels))], vals, 0.4, label=m)
            ax.axhline(0.9, color="red", ls="--", lw=0.8)
            ax.axhline(0.5, color="orange", ls=":", lw=0.8)
            ax.set_yscale("log")
            ax.set_ylabel(f"{phase}\nddio / ufs")
        axes[0].legend()
        axes[0].set_title(f"ddio / ufs: per case and transfer size, P = {p} (targets: 0.9, 8 B: 0.5)")
        axes[-1].set_xticks(range(len(labels)))
        axes[-1].set_xticklabels(labels, fontsize=6, rotation=90)
        fig.tight_layout()
        name = f"ratios-P{p}.png"
        fig.savefig(os.path.join(d, name), dpi=100)
        plt.close(fig)
        made.append(name)
    return made


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    cells = Cells(rows(os.path.join(d, "results.csv")))
    out = ["# IOR-style cases: ddio against ROMIO's ufs: (bench/ior.sh)\n"]
    for name in ("params.txt", "machine.txt"):
        p = os.path.join(d, name)
        if os.path.exists(p):
            out.append("```\n" + open(p).read().rstrip() + "\n```")
    out.append("\nMiB/s: median over repetitions (min-max). Write = open + writes + "
               "MPI_File_sync + close; read = open + reads + close; every byte checked "
               "outside the timed region. Cases: " +
               "; ".join(f"`{k}` {v}" for k, v in CASES.items()) + ". Targets: "
               "ddio / ufs >= 0.9 for calls of 1 KiB and more, >= 0.5 for 8-byte calls.")
    misses = []
    body = []
    main_tables(cells, body, misses)
    summary(misses, out)
    where(cells, misses, out)
    collective(cells, out)
    copies(rows(os.path.join(d, "cp.csv")), out)
    latency(rows(os.path.join(d, "latency.csv")), out)
    out.append("\n## Every case\n")
    out += body
    notes(d, cells, out)
    for name in plots(d, cells):
        out.append(f"\n![{name}]({name})")
    with open(os.path.join(d, "REPORT.md"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
