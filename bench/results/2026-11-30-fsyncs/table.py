import glob,sys,re,statistics as st,collections as C
# table.py OUT: fsb's and create-loop's p50s per variant, each round's range and median
d=sys.argv[1]; F=C.defaultdict(list); L=C.defaultdict(list)
for r in sorted(glob.glob(d+'/raw/*')):
    lab=r.split('/')[-1].rsplit('-',1)[0]
    for line in open(r+'/fsb.txt'):
        m=re.match(r'(.*?)\s+p50\s+(\d+)',line)
        if m: F[m.group(1).strip()].append(float(m.group(2)))
    for who,f in (('ufs:','loop-ufs.txt'),('ddio '+lab,'loop-ddio.txt')):
        for line in open(r+'/'+f):
            m=re.match(r'(\w+) p50 ([\d.]+)',line)
            if m: L[(who,m.group(1))].append(float(m.group(2)))
print("fsb (a new file's sync on the file system, us, p50 per launch: min-max, median)\n")
print("| way | n | p50 min-max | median |\n|---|---|---|---|")
for k,v in F.items(): print(f"| {k} | {len(v)} | {min(v):.0f}-{max(v):.0f} | {st.median(v):.0f} |")
print("\ncreate-loop (us, p50 per launch: min-max, median)\n")
print("| client/server | open | write | sync | close |\n|---|---|---|---|---|")
for who in sorted({k[0] for k in L}):
    cells=[]
    for s in ('open','write','sync','close'):
        v=L[(who,s)]; cells.append(f"{min(v):.0f}-{max(v):.0f}, {st.median(v):.0f}" if v else "")
    print(f"| {who} | "+" | ".join(cells)+" |")
