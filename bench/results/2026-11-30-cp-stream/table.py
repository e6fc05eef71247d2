import sys,collections as C,statistics as st
# table.py results.csv: MiB/s of 300 MiB per transport, variant and direction (median, min-max over rounds); wout's local writes
R=C.defaultdict(list); W=C.defaultdict(list)
for l in open(sys.argv[1]):
    if l.startswith('#'):
        f=l.split(); W[f[4]].append(float(f[-2]));  continue
    tr,r,v,op,s=l.strip().split(','); R[(tr,op,v)].append(300/float(s))
print("| transport | direction | tool | n | MiB/s median (min-max) |\n|---|---|---|---|---|")
for k in sorted(R):
    v=R[k]; print(f"| {k[0]} | {k[1]} | {k[2]} | {len(v)} | {st.median(v):.0f} ({min(v):.0f}-{max(v):.0f}) |")
print("\nwout.c, 300 MiB written locally and fdatasynced, MiB/s:\n\n| way | n | median (min-max) |\n|---|---|---|")
for k,v in W.items(): print(f"| {k} | {len(v)} | {st.median(v):.0f} ({min(v):.0f}-{max(v):.0f}) |")
