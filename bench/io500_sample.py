#!/usr/bin/env python3
"""io500_sample.py: samples, until killed, what bench/io500.sh's report puts
on each IO500 phase: CPU time of every process under --root-pid grouped by
name (the io500 ranks, ddio-server, ddio-fuse), the whole machine's CPU
(/proc/stat: other users' work shows there), the disk's counters
(/proc/diskstats of --dev) and, with --ddio TOOL, the servers' counters
(`TOOL stats`, summed over the servers). One JSON object per line:
{"t": epoch, "cpu": {name: seconds}, "sys": {name: system seconds}, "machine": [user, nice, system, idle,
iowait, irq, softirq, steal] in seconds, "disk": [reads, read_sectors,
writes, write_sectors, io_ms], "ddio": {counter: sum}}."""
import argparse, json, os, signal, subprocess, sys, time

TCK = os.sysconf("SC_CLK_TCK")


def procs():
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                s = f.read()
        except OSError:
            continue
        r = s.rfind(")")
        comm = s[s.find("(") + 1:r]
        f = s[r + 2:].split()
        # ppid; utime + cutime, stime + cstime (children already reaped)
        out[int(d)] = (comm, int(f[1]), int(f[11]) + int(f[13]), int(f[12]) + int(f[14]))
    return out


def tree_cpu(root):
    ps = procs()
    kids = {}
    for pid, (_, ppid, _, _) in ps.items():
        kids.setdefault(ppid, []).append(pid)
    cpu, sys_, todo = {}, {}, [root]
    while todo:
        p = todo.pop()
        if p in ps:
            comm, _, ut, st = ps[p]
            cpu[comm] = cpu.get(comm, 0.0) + (ut + st) / TCK
            sys_[comm] = sys_.get(comm, 0.0) + st / TCK
        todo.extend(kids.get(p, []))
    return cpu, sys_


def machine():
    with open("/proc/stat") as f:
        v = f.readline().split()[1:9]
    return [int(x) / TCK for x in v]


def disk(dev):
    if not dev:
        return None
    with open("/proc/diskstats") as f:
        for line in f:
            x = line.split()
            if x[2] == dev:
                return [int(x[3]), int(x[5]), int(x[7]), int(x[9]), int(x[12])]
    return None


def ddio_stats(tool):
    try:
        r = subprocess.run([tool, "stats"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    s = {}
    for line in r.stdout.splitlines():
        x = line.split()
        if len(x) == 3:
            try:
                s[x[1]] = s.get(x[1], 0) + int(x[2])
            except ValueError:
                pass
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root-pid", type=int, required=True)
    ap.add_argument("--dev", default="")
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--ddio", default="")
    ap.add_argument("--ddio-every", type=float, default=1.0)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    last_ddio = 0.0
    with open(a.out, "a") as out:
        while True:
            t = time.time()
            cpu, sys_ = tree_cpu(a.root_pid)
            rec = {"t": t, "cpu": cpu, "sys": sys_, "machine": machine(), "disk": disk(a.dev)}
            if a.ddio and (t - last_ddio >= a.ddio_every or stop):
                rec["ddio"] = ddio_stats(a.ddio)
                last_ddio = t
            out.write(json.dumps(rec) + "\n")
            out.flush()
            if stop:
                return
            time.sleep(max(0.0, a.interval - (time.time() - t)))


if __name__ == "__main__":
    sys.exit(main())
