#!/usr/bin/env python3
"""transport_targets.py: check the transport targets against a run-bench.sh
results directory that ran ddio-ucx and ddio-tcp (its summary.csv, written by
report.py) and write TRANSPORT-TARGETS.md.

usage: bench/transport_targets.py RESULTS_DIR

Targets: ddio-ucx >= 0.85 of the ceiling (geometric mean, each record size);
>= 1.0x the best ROMIO method on every pattern where the device, not the page
cache, is the limit (taken here as: the best ROMIO method itself stays under
the ceiling); never slower than ddio-tcp (ratio of medians). Ratios to the
ceiling and to ROMIO are report.py's (per repetition, then the median).

Where the run has beside.csv (run-bench.sh measures the device right after
every run on the files that run used), the ratio to that measurement is
shown too, and "device-limited" is judged by it: the best ROMIO run did not
beat the device measured beside it. The disk here drifts 2x within minutes,
so a ceiling taken once per repetition can be far from what a run met.
"""
import os
import re
import sys

from report import fnum as f, gmean as geomean
from targets import load_summary


def fmt(v, spec="%.2f"):
    return spec % v if v is not None else "—"


def best_romio(m, col):
    xs = [f(m[r].get(col)) for r in ("ufs-2ph", "ufs-indep") if r in m]
    return max([x for x in xs if x is not None], default=None)


def load_profiles(out):
    """report.py's "where ddio's time goes" tables in REPORT.md as
    {(recsize, method, pattern): {column: float}} (medians over repetitions)."""
    prof, rec, method, cols = {}, None, None, None
    path = os.path.join(out, "REPORT.md")
    if not os.path.exists(path):
        return prof
    for line in open(path):
        m = re.match(r"## (\d+)-byte records", line)
        if m:
            rec, method, cols = int(m.group(1)), None, None
            continue
        m = re.match(r"### Where ddio's time goes \((.+), medians\)", line)
        if m:
            method = m.group(1).replace(" ", "-")
            cols = None
            continue
        if line.startswith("### "):
            method = None
            continue
        if method is None or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "pattern":
            cols = cells
        elif cols and not cells[0].startswith("-"):
            prof[(rec, method, cells[0])] = {c: f(v) for c, v in zip(cols[1:], cells[1:])}
    return prof


def stage(p):
    """Which stage holds a run, from its profile row: the servers' disk or
    net time (summed over blocks), or the ranks' own part of the call."""
    if not p or not p.get("timed ms"):
        return "no profile"
    t, io = p["timed ms"], p.get("server io") or 0.0
    disk, net = p.get("disk") or 0.0, p.get("net") or 0.0
    ranks = t - io
    if ranks > 0.4 * t:
        where = "the ranks (%.0f of %.0f ms outside the servers' pass: describe %.0f, agree " \
                "%.0f, sync %s)" % (ranks, t, p.get("describe") or 0, p.get("agree") or 0,
                                    fmt(p.get("sync"), "%.0f"))
    elif disk >= 1.25 * net:
        where = "disk"
    elif net >= 1.25 * disk:
        where = "net"
    else:
        where = "disk and net"
    return "%s (server pass %.0f of %.0f ms; disk %.0f, net %.0f ms summed)" % (
        where, io, t, disk, net)


def grew(u, t):
    """What the UCX run spent more on than the TCP one, from the two profiles."""
    if not u or not t or not u.get("timed ms") or not t.get("timed ms"):
        return "no profile"
    parts = []
    for col in ("disk", "net", "sync", "agree"):
        a, b = u.get(col), t.get(col)
        if a is not None and b is not None and a > b * 1.1 and a - b > 5:
            parts.append("%s %.0f vs %.0f ms" % (col, a, b))
    return "%s (timed %.0f vs %.0f ms)" % (", ".join(parts) or "no single stage grew",
                                         u["timed ms"], t["timed ms"])


def evaluate(keys, rows):
    """Per pattern: ddio-ucx's MiB/s and ratios, the best ROMIO method's, and
    whether the device (not the page cache) was the limit."""
    out = []
    for key in keys:
        m = rows[key]
        u, t = m.get("ddio-ucx", {}), m.get("ddio-tcp", {})
        e = {"pattern": key[1], "uv": f(u.get("MiB_s")), "tv": f(t.get("MiB_s")),
             "uxc": f(u.get("x_ceiling")), "uxr": f(u.get("x_romio")),
             "uxb": f(u.get("x_beside")), "rxc": best_romio(m, "x_ceiling"),
             "rxb": best_romio(m, "x_beside")}
        judge = e["rxb"] if e["rxb"] is not None else e["rxc"]
        e["judged"] = judge is not None
        e["limited"] = judge is not None and judge < 1.0
        e["ut"] = e["uv"] / e["tv"] if e["uv"] and e["tv"] else None
        e["below"] = e["uxb"] if e["uxb"] is not None else e["uxc"]
        e["under"] = e["below"] is not None and e["below"] < 0.85
        e["behind_romio"] = e["limited"] and e["uxr"] is not None and e["uxr"] < 1.0
        e["behind_tcp"] = e["ut"] is not None and e["ut"] < 1.0
        out.append(e)
    return out


def section(rec, keys, rows, prof):
    md = ["## %d-byte records\n" % rec,
          "| pattern | ucx MiB/s | tcp MiB/s | ucx x ceiling | ucx x device beside | "
          "ucx x best ROMIO | best ROMIO x ceiling | best ROMIO x device beside | "
          "device-limited | ucx / tcp |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    ev = evaluate(keys, rows)
    xc, xb, ratios = [e["uxc"] for e in ev], [e["uxb"] for e in ev], [e["ut"] for e in ev]
    behind_romio = ["%s %.2f" % (e["pattern"], e["uxr"]) for e in ev if e["behind_romio"]]
    behind_tcp = ["%s %.2f" % (e["pattern"], e["ut"]) for e in ev if e["behind_tcp"]]
    held = []   # (pattern, what is missed, the stage that holds it)
    for e in ev:
        pat = e["pattern"]
        pu = prof.get((rec, "ddio-ucx", pat))
        if e["under"]:
            held.append((pat, "%.2f of the %s" % (e["below"], "device beside"
                                                  if e["uxb"] is not None else "ceiling"),
                         stage(pu)))
        if e["behind_romio"]:
            held.append((pat, "%.2fx the best ROMIO method" % e["uxr"], stage(pu)))
        if e["behind_tcp"]:
            held.append((pat, "%.2fx ddio-tcp" % e["ut"],
                         "UCX spent more on: " + grew(pu, prof.get((rec, "ddio-tcp", pat)))))
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            pat, fmt(e["uv"], "%.1f"), fmt(e["tv"], "%.1f"), fmt(e["uxc"]), fmt(e["uxb"]),
            fmt(e["uxr"]), fmt(e["rxc"]), fmt(e["rxb"]),
            "yes" if e["limited"] else ("no" if e["judged"] else "—"), fmt(e["ut"])))
    g, gb, gt = geomean(xc), geomean(xb), geomean(ratios)
    romio = any(r in rows[k] for k in keys for r in ("ufs-2ph", "ufs-indep"))
    md += ["",
           "- ceiling (once per repetition): geometric mean %s (target 0.85): **%s**" % (
               fmt(g), "met" if g is not None and g >= 0.85 else "missed")]
    if gb is not None:
        md.append("- the device measured beside each run: geometric mean %s (target 0.85): "
                  "**%s**; below 0.85 on: %s" % (
                      fmt(gb), "met" if gb >= 0.85 else "missed",
                      ", ".join("%s %.2f" % (k[1], x) for k, x in zip(keys, xb)
                                if x is not None and x < 0.85) or "none"))
    md += [
           "- best ROMIO where the device is the limit: " + (
               "behind on %d: %s" % (len(behind_romio), ", ".join(behind_romio) or "none")
               if romio else "not measured (no ROMIO method in this run)"),
           "- ddio-tcp: geometric mean of ucx / tcp %s; slower on %d of the %d patterns both ran: %s" % (
               fmt(gt), len(behind_tcp), len([r for r in ratios if r is not None]), ", ".join(behind_tcp) or "none"),
           ""]
    if held:
        md += ["### What holds each miss (ddio-ucx's profile in REPORT.md)\n",
               "Stage: *disk* or *net* where the servers' pass is most of the timed call and "
               "one of its summed times is at least 1.25x the other (*disk and net* "
               "otherwise), *the ranks* where more than 40 % of the call is outside the "
               "servers' pass. Against ddio-tcp: the stages on which the UCX run spent over "
               "10 % (and 5 ms) more than the TCP run.\n",
               "| pattern | missed | what holds it |", "|---|---|---|"]
        md += ["| %s | %s | %s |" % h for h in held]
        md.append("")
    return md


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    rows, order = load_summary(out)
    prof = load_profiles(out)
    methods = {m for v in rows.values() for m in v}
    if not {"ddio-ucx", "ddio-tcp"} <= methods:
        print("transport targets: no ddio-ucx and ddio-tcp runs here: no TRANSPORT-TARGETS.md")
        return
    md = ["# Transport targets against this run\n",
          "Generated by `bench/transport_targets.py` from `summary.csv` (medians of the "
          "repetitions). Targets: ddio-ucx >= 0.85 of the ceiling (geometric mean); >= 1.0x "
          "the best ROMIO method where the device is the limit (here: where the best ROMIO "
          "method itself stays under the ceiling; above it, the page cache is the limit); "
          "never slower than ddio-tcp. Where the run measured the device beside each run "
          "(`beside.csv`), device-limited means the best ROMIO run did not beat that "
          "measurement; otherwise, the once-per-repetition ceiling. Where a target is "
          "missed, \"what holds each miss\" names the stage from the report's \"where "
          "ddio's time goes\" tables, pattern by pattern.\n"]
    for rec in sorted({k[0] for k in order}):
        md += section(rec, [k for k in order if k[0] == rec], rows, prof)
    path = os.path.join(out, "TRANSPORT-TARGETS.md")
    with open(path, "w") as fh:
        fh.write("\n".join(md))
    print("transport targets: " + path)


if __name__ == "__main__":
    main()
