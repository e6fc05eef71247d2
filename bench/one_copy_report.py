#!/usr/bin/env python3
"""README.md of a bench/one-copy.sh run: per build (label) and case, ddio
through the servers against ufs: measured in the same launch (median and
range over rounds), ddio's MiB/s, and each build against the first one
round by round (a build given twice is the noise).

usage: one_copy_report.py OUT [COMMAND]"""
import csv
import glob
import os
import re
import statistics as st
import sys


def rows(path):
    return list(csv.DictReader(open(path))) if os.path.exists(path) else []


def collect(out):
    """{(label, round): {case: (ddio MiB/s, ufs MiB/s)}}, bad statuses"""
    res, bad = {}, []
    for d in sorted(glob.glob(f"{out}/raw/*-h5")):
        m = re.match(r"(.+)-(\d+)-h5$", os.path.basename(d))
        lab, rnd = m.group(1), int(m.group(2))
        by = {(r["method"], r["phase"]): r for r in rows(f"{d}/results.csv") if r["shape"] == "rows"}
        for ph in ("write", "read"):
            dd, uf = by.get(("ddio-srv", ph)), by.get(("ufs", ph))
            if dd and uf:
                res.setdefault((lab, rnd), {})[f"HDF5 rows {ph}"] = (float(dd["MiB_s"]), float(uf["MiB_s"]))
                bad += [f"{lab} round {rnd} HDF5 {ph} {r['method']}" for r in (dd, uf) if r["status"] != "ok"]
    for d in sorted(glob.glob(f"{out}/raw/*-ior")):
        m = re.match(r"(.+)-(\d+)-ior$", os.path.basename(d))
        lab, rnd = m.group(1), int(m.group(2))
        by = {(r["method"], r["case"], r["phase"]): r for r in rows(f"{d}/results.csv")}
        for (meth, case, ph), r in by.items():
            uf = by.get(("ufs", case, ph))
            if not meth.startswith("ddio-") or not uf or ph == "read-cold":
                continue
            c = re.sub(r"-t(\d+)$", lambda k: " " + (f"{int(k.group(1)) >> 20} MiB" if int(k.group(1)) >= 1 << 20
                                                      else f"{int(k.group(1)) >> 10} KiB"), case)
            res.setdefault((lab, rnd), {})[f"IOR {c} {ph}"] = (float(r["MiB_s"]), float(uf["MiB_s"]))
            bad += [f"{lab} round {rnd} IOR {case} {ph} {x['method']}" for x in (r, uf) if x["status"] != "ok"]
    return res, bad


def med(v):
    return f"{st.median(v):.2f} ({min(v):.2f}-{max(v):.2f})" if v else "-"


def main():
    out = sys.argv[1]
    cmd = sys.argv[2] if len(sys.argv) > 2 else "bench/one-copy.sh ..."
    res, bad = collect(out)
    mt = open(f"{out}/machine.txt").read() if os.path.exists(f"{out}/machine.txt") else ""
    xp = ("TCP" if "transport: tcp" in mt else "UCX") + (", MUNGE (`ddio-run --auth munge`)"
                                                          if "munge: 1" in mt else "")
    labels = []
    for (lab, _) in sorted(res, key=lambda k: k[1]):
        if lab not in labels:
            labels.append(lab)
    order = open(f"{out}/machine.txt").read() if os.path.exists(f"{out}/machine.txt") else ""
    labels.sort(key=lambda l: order.find(f"build {l}:") if f"build {l}:" in order else 99)
    cases = []
    for v in res.values():
        for c in v:
            if c not in cases:
                cases.append(c)
    cases.sort(key=lambda c: (not c.startswith("HDF5"), "write" in c, c))
    rounds = sorted({r for (_, r) in res})
    with open(f"{out}/results.csv", "w") as f:      # what the tables come from
        f.write("build,round,case,ddio_MiB_s,ufs_MiB_s\n")
        for (l, r) in sorted(res, key=lambda k: (k[1], labels.index(k[0]))):
            for c in cases:
                if c in res[(l, r)]:
                    f.write(f"{l},{r},{c},{res[(l, r)][c][0]:.1f},{res[(l, r)][c][1]:.1f}\n")
    o = ["# Hot reads through the servers: one copy", "",
         f"`{cmd}`", "",
         "Every launch: the same-host shortcuts off (`DDIO_LOCAL_READ=0 DDIO_LOCAL_WRITE=0`), "
         f"4 ranks, 2 servers on this host, {xp}; `ufs:` measured in the same launch "
         "(h5-rows.sh and ior.sh each run both). The server builds were swapped by "
         "`bench/ab-swap.sh` launch by launch, in the order given, for every round. "
         f"Rounds: {len(rounds)}. Every read checked by the programs: "
         + ("all ok." if not bad else f"{len(bad)} NOT ok: " + "; ".join(bad[:10])), "",
         "## ddio through the servers / `ufs:` (median over rounds, min-max)", "",
         "| case | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for c in cases:
        cells = [med([res[(l, r)][c][0] / res[(l, r)][c][1] for r in rounds
                      if (l, r) in res and c in res[(l, r)]]) for l in labels]
        o.append(f"| {c} | " + " | ".join(cells) + " |")
    o += ["", "## MiB/s, median over rounds: ddio (ufs beside it)", "",
          "| case | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
    for c in cases:
        cells = []
        for l in labels:
            v = [res[(l, r)][c] for r in rounds if (l, r) in res and c in res[(l, r)]]
            cells.append(f"{st.median([a for a, _ in v]):.0f} ({st.median([b for _, b in v]):.0f})" if v else "-")
        o.append(f"| {c} | " + " | ".join(cells) + " |")
    if len(labels) > 1:
        a = labels[0]
        o += ["", f"## Each build's ddio MiB/s over `{a}`'s in the same round (median, min-max)", "",
              f"A build given twice is the noise. Ratios of ratios (each against its own `ufs:`) in brackets.", "",
              "| case | " + " | ".join(f"{l} / {a}" for l in labels[1:]) + " |",
              "|---|" + "---|" * (len(labels) - 1)]
        for c in cases:
            cells = []
            for l in labels[1:]:
                v = [(res[(l, r)][c][0] / res[(a, r)][c][0],
                      (res[(l, r)][c][0] / res[(l, r)][c][1]) / (res[(a, r)][c][0] / res[(a, r)][c][1]))
                     for r in rounds if (l, r) in res and (a, r) in res and c in res[(l, r)] and c in res[(a, r)]]
                cells.append(f"{med([x for x, _ in v])} [{med([y for _, y in v])}]" if v else "-")
            o.append(f"| {c} | " + " | ".join(cells) + " |")
    if os.path.exists(f"{out}/load.csv"):
        ld = [float(x.split(",")[2]) for x in open(f"{out}/load.csv") if x.count(",") == 2]
        if ld:
            o += ["", f"Load average (1 min) after each launch: {min(ld):.1f}-{max(ld):.1f} "
                  f"(median {st.median(ld):.1f}) on {os.cpu_count()} CPUs: other jobs shared the machine."]
    o += ["", "Every launch's figures: `results.csv` (from `raw/LABEL-ROUND-h5/` and "
          "`raw/LABEL-ROUND-ior/`, not committed); `machine.txt`, `load.csv`.", ""]
    extra = f"{out}/NOTES.md"
    if os.path.exists(extra):
        o.append(open(extra).read())
    open(f"{out}/README.md", "w").write("\n".join(o) + "\n")
    print("\n".join(o))


if __name__ == "__main__":
    main()
