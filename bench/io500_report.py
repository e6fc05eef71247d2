#!/usr/bin/env python3
"""io500_report.py OUT: REPORT.md and phases.csv from a bench/io500.sh
directory. Per phase: io500's figure for ddio and for the local file system
(median over rounds), their ratio, both scores; then per phase and target
where the time went, from the samples io500_sample.py took during the run
(the CPU of the ranks, the servers and the mount daemon, the whole machine,
the disk's busy time, the servers' requests per operation) and IOR's own
open / transfer / close times; and for each phase under 0.9x local the
stage that held it."""
import csv, datetime, glob, json, os, re, statistics as st, sys

PHASES = ["ior-easy-write", "mdtest-easy-write", "ior-hard-write", "mdtest-hard-write", "find",
          "ior-easy-read", "mdtest-easy-stat", "ior-hard-read", "mdtest-hard-stat",
          "mdtest-easy-delete", "mdtest-hard-read", "mdtest-hard-delete", "ior-rnd4K-easy-read"]
UNSCORED = {"ior-rnd4K-easy-read"}
TARGET = 0.9


def parse_result(d):
    """io500's result.txt: per phase its t_start, t_delta, score, INVALID notes; the scores."""
    ph, cur, score = {}, None, {}
    txt = open(os.path.join(d, "result.txt")).read()
    for line in txt.splitlines():
        m = re.match(r"^\[(.+)\]$", line)
        if m:
            cur = m.group(1)
            ph.setdefault(cur, {"invalid": []})
            continue
        if cur is None:
            continue
        m = re.match(r"^; ERROR INVALID (.*)", line)
        if m:
            ph[cur]["invalid"].append(m.group(1).strip())
            continue
        m = re.match(r"^(\S+)\s*=\s*(.*)$", line)
        if m:
            ph[cur][m.group(1)] = m.group(2).strip()
    for k in ("SCORE",):
        pass
    s = open(os.path.join(d, "result_summary.txt")).read()
    m = re.search(r"\[SCORE \] Bandwidth ([\d.]+) GiB/s : IOPS ([\d.]+) kiops : TOTAL ([\d.]+)(.*)", s)
    if m:
        score = {"bw": float(m.group(1)), "md": float(m.group(2)), "total": float(m.group(3)),
                 "invalid": "INVALID" in m.group(4)}
    return ph, score


def epoch(s):
    return datetime.datetime.strptime(s, "%Y-%m-%d %H:%M:%S").timestamp()


def ior_stages(d, phase):
    """IOR's results line: open, wr/rd, close, total seconds, MiB/s."""
    f = os.path.join(d, phase + ".txt")
    if not os.path.exists(f):
        return None
    for line in open(f):
        x = line.split()
        if len(x) >= 11 and x[0] in ("write", "read") and re.match(r"^[\d.]+$", x[1]):
            return {"bw": float(x[1]), "open": float(x[6]), "xfer": float(x[7]), "close": float(x[8]),
                    "total": float(x[9])}
    return None


def ops_of(d, phase, info, nranks):
    """operations of the phase: files find looked at; mdtest's items (per rank) times the ranks"""
    if phase == "find":
        try:
            return int(info.get("total-files", 0))
        except ValueError:
            return None
    f = os.path.join(d, phase + ".csv")
    if phase.startswith("mdtest") and os.path.exists(f):
        for r in csv.DictReader(open(f)):
            if r["rank"] == "all" and r["items"]:
                return int(r["items"]) * nranks
    return None


def load_samples(d):
    f = os.path.join(d, "samples.jsonl")
    if not os.path.exists(f):
        return []
    out = []
    for line in open(f):
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def at(samples, t, key=None, after=False):
    """the last sample at or before t (after: the first at or after t) that has key"""
    c = [s for s in samples if (key is None or s.get(key)) and (s["t"] >= t if after else s["t"] <= t)]
    if not c:
        return None
    return min(c, key=lambda s: s["t"]) if after else max(c, key=lambda s: s["t"])


def group(comm):
    if comm.startswith("io500"):
        return "ranks"
    if comm.startswith("ddio-server"):
        return "servers"
    if comm.startswith("ddio-fuse"):
        return "mount"
    return "tools"


def window(samples, t0, t1):
    a = at(samples, t0) or (samples[0] if samples else None)
    b = at(samples, t1, after=True) or (samples[-1] if samples else None)
    if not a or b is None or b["t"] <= a["t"]:
        return None
    w = b["t"] - a["t"]
    r = {"wall": w}
    cpu = {}
    for k in set(a["cpu"]) | set(b["cpu"]):
        g = group(k)
        cpu[g] = cpu.get(g, 0.0) + max(0.0, b["cpu"].get(k, 0.0) - a["cpu"].get(k, 0.0))
    r["cpu"] = cpu
    sy = {}
    for k in set(a.get("sys", {})) | set(b.get("sys", {})):
        g = group(k)
        sy[g] = sy.get(g, 0.0) + max(0.0, b.get("sys", {}).get(k, 0.0) - a.get("sys", {}).get(k, 0.0))
    r["sys"] = sy
    ma, mb = a["machine"], b["machine"]
    tot = sum(mb) - sum(ma)
    idle = (mb[3] - ma[3]) + (mb[4] - ma[4])
    r["machine_busy"] = (tot - idle) / w          # cores busy, everything on the machine
    r["iowait"] = (mb[4] - ma[4]) / w
    r["others"] = max(0.0, r["machine_busy"] - sum(cpu.values()) / w)
    if a.get("disk") and b.get("disk"):
        da, db = a["disk"], b["disk"]
        r["disk_read_mib"] = (db[1] - da[1]) * 512 / 2 ** 20
        r["disk_write_mib"] = (db[3] - da[3]) * 512 / 2 ** 20
        r["disk_busy"] = (db[4] - da[4]) / 1000.0 / w
        r["disk_ios"] = (db[0] - da[0]) + (db[2] - da[2])
    withd = [s for s in samples if s.get("ddio")]
    sa = at(samples, t0, "ddio") or (withd[0] if withd else None)
    sb = at(samples, t1, "ddio", after=True) or (withd[-1] if withd else None)
    if sa and sb and sb["t"] > sa["t"]:
        dd = {k: sb["ddio"].get(k, 0) - sa["ddio"].get(k, 0) for k in sb["ddio"]}
        r["ddio"] = dd
        r["ddio_wall"] = sb["t"] - sa["t"]
    return r


def collect(out, nranks):
    runs = {}
    for d in sorted(glob.glob(os.path.join(out, "io500", "*"))):
        if not os.path.exists(os.path.join(d, "result.txt")):
            continue
        name = os.path.basename(d)
        tgt = name.split("-r")[0]
        ph, score = parse_result(d)
        samples = load_samples(d)
        phases = {}
        for p in PHASES:
            if p not in ph or "score" not in ph[p]:
                continue
            info = ph[p]
            # t_start and t_end have whole seconds: the window encloses the phase
            t0 = epoch(info["t_start"]) if "t_start" in info else None
            dt = float(info.get("t_delta", "nan"))
            t1 = epoch(info["t_end"]) + 1 if "t_end" in info else (t0 + dt + 1 if t0 else None)
            phases[p] = {"score": float(info["score"].split()[0]), "time": dt,
                         "invalid": [i for i in info["invalid"]],
                         "ior": ior_stages(d, p) if p.startswith("ior") else None,
                         "ops": ops_of(d, p, info, nranks),
                         "win": window(samples, t0, t1) if t0 and samples else None}
        runs.setdefault(tgt, []).append({"dir": d, "phases": phases, "score": score})
    return runs


def med(v):
    return st.median(v) if v else None


def fmt(v, nd=3):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return ("%." + str(nd) + "f") % v


def rng(v, nd=3):
    if len(v) <= 1:
        return ""
    return " (%s-%s)" % (fmt(min(v), nd), fmt(max(v), nd))


def req_per_op(w, ops):
    dd = w.get("ddio") if w else None
    if not dd or not ops:
        return ""
    items = [(k[4:], v / ops) for k, v in dd.items()
             if k.startswith("req.") and k not in ("req.STATS", "req.HELLO", "req.AUTH") and v > 0]
    items.sort(key=lambda x: -x[1])
    return ", ".join("%s %.2f" % (k, v) for k, v in items if v >= 0.01) or "none"


def stage_of(p, lw, dw, lr, dr, nserv, P):
    """the stage that holds ddio's phase p, from the measurements of the two runs"""
    why = []
    if p.startswith("ior") and lr and dr and lr.get("ior") and dr.get("ior"):
        li, di = lr["ior"], dr["ior"]
        grow = {k: di[k] - li[k] for k in ("open", "xfer", "close")}
        k = max(grow, key=grow.get)
        names = {"open": "the open", "xfer": "the transfers", "close": "the close (with -e: the fsync)"}
        why.append("%s: %.2f s against %.2f s local (open %.2f/%.2f, transfers %.2f/%.2f, close %.2f/%.2f s)"
                   % (names[k], di[k], li[k], di["open"], li["open"], di["xfer"], li["xfer"], di["close"], li["close"]))
        if lw and dw:
            def perg(x, i):
                g = i["bw"] * i["total"] / 1024
                return (sum(x["cpu"].values()) - x["cpu"].get("tools", 0)) / g if g else float("nan")
            why.append("CPU per GiB %.2f s against %.2f s local; the ranks had %.2f cores against %.2f local"
                       % (perg(dw, di), perg(lw, li), dw["cpu"].get("ranks", 0) / dw["wall"],
                          lw["cpu"].get("ranks", 0) / lw["wall"]))
    if dw and lr and dr and dr.get("ops") and lr.get("ops"):
        ops = dr["ops"]
        c = dw["cpu"]
        sy = dw.get("sys", {})
        why.append("per op and rank %.2f ms against %.3f ms local; CPU per op (of it in the kernel): the servers "
                   "%.2f ms (%.2f), the mount daemon %.2f ms (%.2f), the ranks %.2f ms (%.2f), local ranks %.3f ms; "
                   "requests per op: %s"
                   % (dr["time"] * P / ops * 1000, lr["time"] * P / lr["ops"] * 1000,
                      c.get("servers", 0) / ops * 1000, sy.get("servers", 0) / ops * 1000,
                      c.get("mount", 0) / ops * 1000, sy.get("mount", 0) / ops * 1000,
                      c.get("ranks", 0) / ops * 1000, sy.get("ranks", 0) / ops * 1000,
                      lw["cpu"].get("ranks", 0) / lr["ops"] * 1000 if lw else float("nan"),
                      req_per_op(dw, ops)))
    if dw:
        c = dw["cpu"]
        w = dw["wall"]
        parts = ["ranks %.2f" % (c.get("ranks", 0) / w), "servers %.2f" % (c.get("servers", 0) / w),
                 "mount daemon %.2f" % (c.get("mount", 0) / w), "others on the machine %.2f" % dw["others"]]
        why.append("cores busy: machine %.2f of 2 (%s)" % (dw["machine_busy"], ", ".join(parts)))
        if "disk_busy" in dw:
            why.append("disk busy %.0f%% (local run: %s)" % (100 * dw["disk_busy"],
                       "%.0f%%" % (100 * lw["disk_busy"]) if lw and "disk_busy" in lw else "-"))
    return "; ".join(why)


def main():
    out = sys.argv[1]
    env = open(os.path.join(out, "env.txt")).read() if os.path.exists(os.path.join(out, "env.txt")) else ""
    m = re.search(r"ranks (\d+)", env)
    P = int(m.group(1)) if m else 4
    runs = collect(out, P)
    up = []
    for f in ("uptime-before.txt", "uptime-after.txt"):
        p = os.path.join(out, f)
        if os.path.exists(p):
            up.append("%s: %s" % (f[7:-4], open(p).read().strip()))
    nserv = 2
    m = re.search(r"servers (\d+)", env)
    if m:
        nserv = int(m.group(1))
    L = []
    w = L.append
    w("# IO500 on ddio and on the local file system\n")
    w("```\n" + env.rstrip() + "\n" + "\n".join(up) + "\n```\n")
    w("**Not submittable: reduced stonewall.** Figures are io500's (GiB/s for ior, kIOPS for the rest), "
      "median over the rounds with the range when there is more than one; ratio = ddio / local, "
      "per round, median. Target: the ior phases >= %.1fx local.\n" % TARGET)
    loc, dd = runs.get("local", []), runs.get("ddio", [])
    rows = []
    w("| phase | local | ddio | ddio / local | target |")
    w("|---|---|---|---|---|")
    for p in PHASES:
        lv = [r["phases"][p]["score"] for r in loc if p in r["phases"]]
        dv = [r["phases"][p]["score"] for r in dd if p in r["phases"]]
        ratios = [b["phases"][p]["score"] / a["phases"][p]["score"]
                  for a, b in zip(loc, dd) if p in a["phases"] and p in b["phases"] and a["phases"][p]["score"] > 0]
        unit = "GiB/s" if p.startswith("ior") else "kIOPS"
        tgt = ">= %.1f" % TARGET if p.startswith("ior") and p not in UNSCORED else ""
        miss = bool(ratios) and med(ratios) < TARGET
        mark = ("**%s**" if miss and tgt else "%s") % (fmt(med(ratios)) if ratios else "-")
        name = p + (" (not scored)" if p in UNSCORED else "")
        w("| %s | %s%s %s | %s%s %s | %s%s | %s |" % (name, fmt(med(lv)), rng(lv), unit, fmt(med(dv)), rng(dv), unit,
                                                mark, rng(ratios), tgt + (" missed" if miss and tgt else (" met" if tgt and ratios else ""))))
        rows.append({"phase": p, "unit": unit, "local": med(lv), "ddio": med(dv),
                     "ratio": med(ratios) if ratios else None})
    for key, label in (("bw", "bandwidth score (GiB/s)"), ("md", "metadata score (kIOPS)"), ("total", "**SCORE**")):
        lv = [r["score"][key] for r in loc if r["score"]]
        dv = [r["score"][key] for r in dd if r["score"]]
        ratios = [b["score"][key] / a["score"][key] for a, b in zip(loc, dd) if a["score"] and b["score"] and a["score"][key]]
        w("| %s | %s%s | %s%s | %s%s | |" % (label, fmt(med(lv)), rng(lv), fmt(med(dv)), rng(dv),
                                          fmt(med(ratios)) if ratios else "-", rng(ratios)))
        rows.append({"phase": "score-" + key, "unit": "", "local": med(lv), "ddio": med(dv),
                     "ratio": med(ratios) if ratios else None})
    inval = sorted({i for r in loc + dd for p in r["phases"].values() for i in p["invalid"]})
    w("\nio500 marks every score `[INVALID]` (stonewall below 300 s). Its notes: " +
      "; ".join("`%s`" % i for i in inval) + ".\n" if inval else "")

    # where the time went, per phase and target (first round)
    w("## Where the time went\n")
    w("Per phase and target (round 1), from samples every 0.5 s: wall seconds; cores busy on the "
      "whole machine (of %d) and by the ranks, the ddio servers, the mount daemon and everything "
      "else on the machine (other users' work); the disk's busy share and MiB moved; ops the phase "
      "did (mdtest items, files find looked at), ms per op per rank; for ddio the servers' requests "
      "per op.\n" % os.cpu_count())
    w("| phase | target | wall s | machine | ranks | servers | mount | others | disk busy | disk MiB w/r | ops | ms/op/rank | requests per op |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in PHASES:
        for tgt, rs in (("local", loc), ("ddio", dd)):
            if not rs or p not in rs[0]["phases"]:
                continue
            ph = rs[0]["phases"][p]
            wi = ph["win"]
            if not wi:
                w("| %s | %s | %.1f | | | | | | | | | | |" % (p, tgt, ph["time"]))
                continue
            c = wi["cpu"]
            ww = wi["wall"]
            ops = ph["ops"]
            msop = (ph["time"] * P / ops * 1000) if ops else None
            w("| %s | %s | %.1f | %.2f | %.2f | %s | %s | %.2f | %s | %s | %s | %s | %s |" % (
                p, tgt, ph["time"], wi["machine_busy"], c.get("ranks", 0) / ww,
                "%.2f" % (c.get("servers", 0) / ww) if tgt == "ddio" else "",
                "%.2f" % (c.get("mount", 0) / ww) if tgt == "ddio" else "",
                wi["others"],
                "%.0f%%" % (100 * wi["disk_busy"]) if "disk_busy" in wi else "-",
                "%.0f/%.0f" % (wi["disk_write_mib"], wi["disk_read_mib"]) if "disk_busy" in wi else "-",
                ops if ops else "", fmt(msop) if msop else "",
                req_per_op(wi, ops) if tgt == "ddio" else ""))
    w("")

    # IOR's stages
    w("## IOR's stages\n")
    w("IOR's own times of each ior phase (seconds, round 1; with `-e` the close of a write holds "
      "its fsync), and for ddio how the bytes moved: through the same-host shortcut (ranks "
      "reading and writing the servers' datafiles) or through the servers.\n")
    w("CPU s/GiB: the CPU seconds of the ranks (+ servers + mount daemon for ddio) per GiB moved; "
      "cores: what the ranks got, and what the rest of the machine (other users' work) took.\n")
    w("| phase | target | MiB/s | GiB | open | transfers | close | total | CPU s/GiB | cores: ranks / others | disk busy | ddio bytes: shortcut / through servers (MiB) |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in PHASES:
        if not p.startswith("ior"):
            continue
        for tgt, rs in (("local", loc), ("ddio", dd)):
            if not rs or p not in rs[0]["phases"] or not rs[0]["phases"][p]["ior"]:
                continue
            i = rs[0]["phases"][p]["ior"]
            wi = rs[0]["phases"][p]["win"] or {}
            by = ""
            if tgt == "ddio" and wi.get("ddio"):
                x = wi["ddio"]
                sc = (x.get("local_write_bytes", 0) + x.get("local_read_bytes", 0)) / 2 ** 20
                sv = (x.get("bytes_written", 0) + x.get("bytes_read", 0)) / 2 ** 20
                by = "%.0f / %.0f" % (sc, sv)
            gib = i["bw"] * i["total"] / 1024
            cpu = sum(wi["cpu"].values()) - wi["cpu"].get("tools", 0) if wi.get("cpu") else None
            w("| %s | %s | %.0f | %.1f | %.3f | %.2f | %.3f | %.2f | %s | %s | %s | %s |" % (
                p, tgt, i["bw"], gib, i["open"], i["xfer"], i["close"], i["total"],
                "%.2f" % (cpu / gib) if cpu is not None and gib else "-",
                "%.2f / %.2f" % (wi["cpu"].get("ranks", 0) / wi["wall"], wi["others"]) if wi.get("cpu") else "-",
                "%.0f%%" % (100 * wi["disk_busy"]) if "disk_busy" in wi else "-", by))
    w("")

    # the misses
    w("## The stage that holds each phase under %.1fx\n" % TARGET)
    w("Measured in the same run (round 1): for the ior phases the IOR stage that grew most against "
      "local, then for every phase the cores and the disk during ddio's phase.\n")
    for r in rows:
        p = r["phase"]
        if p.startswith("score") or r["ratio"] is None or r["ratio"] >= TARGET:
            continue
        lw = loc[0]["phases"].get(p) if loc else None
        dw = dd[0]["phases"].get(p) if dd else None
        w("- **%s** %.3fx: %s" % (p, r["ratio"], stage_of(p, lw and lw["win"], dw and dw["win"], lw, dw, nserv, P)))
    w("")
    open(os.path.join(out, "REPORT.md"), "w").write("\n".join(L) + "\n")
    with open(os.path.join(out, "phases.csv"), "w", newline="") as f:
        cw = csv.DictWriter(f, fieldnames=["phase", "unit", "local", "ddio", "ratio"])
        cw.writeheader()
        for r in rows:
            cw.writerow(r)
    print("\n".join(L))


if __name__ == "__main__":
    main()
